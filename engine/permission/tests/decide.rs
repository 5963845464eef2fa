//! The decision order, the spec's worked examples, compound shell lines,
//! grants, CloudAgent, and project trust.

use std::path::{Path, PathBuf};

use cox_permission::{Engine, Grant, Layer, Origin, Outcome};
use cox_protocol::CallId;
use cox_protocol::config::PermissionsConfig;
use cox_protocol::types::{ApprovalPolicy, PermissionMode, Risk, SandboxMode, Segments, ToolCall};
use serde_json::json;

const HOME: &str = "/home/alice";
const CWD: &str = "/repo";

fn config(allow: &[&str], ask: &[&str], deny: &[&str]) -> PermissionsConfig {
    let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect();
    PermissionsConfig {
        allow: own(allow),
        ask: own(ask),
        deny: own(deny),
        mode: None,
    }
}

fn engine(allow: &[&str], ask: &[&str], deny: &[&str]) -> Engine {
    Engine::compile(
        &config(allow, ask, deny),
        Some(Path::new(HOME)),
        Path::new(CWD),
    )
    .unwrap()
}

/// A shell call whose split is given, as the bash tool would attach it.
fn bash(line: &str, commands: &[&str], opaque: bool, risk: Risk) -> ToolCall {
    ToolCall {
        id: CallId::from("c"),
        name: "bash".into(),
        input: json!({"command": line}),
        risk,
        subject: line.into(),
        segments: Some(Segments {
            commands: commands.iter().map(|c| (*c).to_owned()).collect(),
            opaque: opaque.then(|| "a command substitution $(…)".to_owned()),
            ..Default::default()
        }),
        writes: Vec::new(),
    }
}

fn file(name: &str, path: &str, risk: Risk) -> ToolCall {
    ToolCall {
        id: CallId::from("f"),
        name: name.into(),
        input: json!({"path": path}),
        risk,
        subject: path.into(),
        segments: None,
        writes: Vec::new(),
    }
}

fn decide(engine: &Engine, call: &ToolCall, mode: PermissionMode) -> Outcome {
    engine.decide(
        call,
        mode,
        ApprovalPolicy::OnRequest,
        SandboxMode::WorkspaceWrite,
        &[],
    )
}

fn verdict(engine: &Engine, call: &ToolCall) -> &'static str {
    decide(engine, call, PermissionMode::Default).verdict()
}

#[test]
fn the_specs_example_config() {
    let e = engine(
        &["Bash(cargo test:*)"],
        &["Bash(git commit:*)"],
        &["Read(~/.ssh/**)"],
    );
    let test = bash("cargo test -p x", &["cargo test -p x"], false, Risk::Exec);
    assert_eq!(verdict(&e, &test), "allow");
    let commit = bash("git commit -m x", &["git commit -m x"], false, Risk::Exec);
    assert_eq!(verdict(&e, &commit), "ask");
    let key = file("read", "/home/alice/.ssh/id_ed25519", Risk::ReadOnly);
    let out = decide(&e, &key, PermissionMode::BypassPermissions);
    assert_eq!(out.verdict(), "deny", "deny holds even in bypass");
    assert!(out.reason().contains("Read(~/.ssh"), "{}", out.reason());
}

#[test]
fn the_defaults_deny_secret_folders_for_every_file_tool() {
    let e = engine(&[], &[], &[]);
    for (tool, risk) in [
        ("read", Risk::ReadOnly),
        ("grep", Risk::ReadOnly),
        ("edit", Risk::Write),
        ("write", Risk::Write),
    ] {
        let out = decide(
            &e,
            &file(tool, "/home/alice/.aws/credentials", risk),
            PermissionMode::BypassPermissions,
        );
        assert_eq!(out.verdict(), "deny", "{tool}");
        assert!(out.reason().contains("built in"), "{}", out.reason());
    }
    assert_eq!(
        verdict(&e, &file("read", "/repo/src/lib.rs", Risk::ReadOnly)),
        "allow"
    );
}

#[test]
fn a_deny_rule_matches_any_command_of_a_line() {
    let e = engine(&["Bash(git:*)"], &[], &["Bash(rm:*)"]);
    let cases = [
        bash(
            "git status && rm -rf x",
            &["git status", "rm -rf x"],
            false,
            Risk::Destructive,
        ),
        bash("FOO=1 rm -rf x", &["rm -rf x"], true, Risk::Destructive),
        bash("nohup rm -rf x", &["rm -rf x"], false, Risk::Destructive),
        bash(
            "sh -c 'rm -rf x'",
            &["sh -c 'rm -rf x'", "rm -rf x"],
            true,
            Risk::Destructive,
        ),
        bash("echo $(rm x)", &["echo $(rm x)", "rm x"], true, Risk::Exec),
    ];
    for call in cases {
        let out = decide(&e, &call, PermissionMode::BypassPermissions);
        assert_eq!(out.verdict(), "deny", "{}", call.subject);
    }
}

#[test]
fn an_allow_prefix_covers_a_line_only_when_it_covers_every_command() {
    let e = engine(&["Bash(git:*)", "Bash(npm test:*)"], &[], &[]);
    let both = bash(
        "git status && git diff",
        &["git status", "git diff"],
        false,
        Risk::Exec,
    );
    assert_eq!(verdict(&e, &both), "allow");
    let mixed = bash(
        "git status && npm test",
        &["git status", "npm test"],
        false,
        Risk::Exec,
    );
    let out = decide(&e, &mixed, PermissionMode::Default);
    assert_eq!(
        out.verdict(),
        "allow",
        "different rules may cover different commands"
    );
    assert!(out.reason().contains("Bash(git:*)") && out.reason().contains("Bash(npm test:*)"));
    let rm = bash(
        "git status; rm -rf x",
        &["git status", "rm -rf x"],
        false,
        Risk::Destructive,
    );
    assert_eq!(verdict(&e, &rm), "ask");
    let opaque = bash(
        "git log $(rm x)",
        &["git log $(rm x)", "rm x"],
        true,
        Risk::Exec,
    );
    assert_eq!(
        verdict(&e, &opaque),
        "ask",
        "an opaque line is never allowed by a prefix"
    );
    // A call that arrives without its split is split by the engine.
    let unsplit = ToolCall {
        segments: None,
        ..bash("git status; rm x", &[], false, Risk::Exec)
    };
    assert_eq!(verdict(&e, &unsplit), "ask", "no split: never fail open");
    let unsplit = ToolCall {
        segments: None,
        ..bash("git status && git log", &[], false, Risk::Exec)
    };
    assert_eq!(verdict(&e, &unsplit), "allow");
    let denying = engine(&[], &[], &["Bash(rm:*)"]);
    let unsplit = ToolCall {
        segments: None,
        ..bash("nohup rm -rf x", &[], false, Risk::Exec)
    };
    assert_eq!(
        decide(&denying, &unsplit, PermissionMode::BypassPermissions).verdict(),
        "deny"
    );
}

#[test]
fn bare_and_exact_rules_match_the_whole_line() {
    let e = engine(&["Bash(make && make install)"], &[], &[]);
    let line = bash(
        "make && make install",
        &["make", "make install"],
        false,
        Risk::Exec,
    );
    assert_eq!(verdict(&e, &line), "allow");
    let e = engine(&["Bash"], &[], &[]);
    let opaque = bash("echo $(date)", &["echo $(date)", "date"], true, Risk::Exec);
    assert_eq!(
        verdict(&e, &opaque),
        "allow",
        "a bare Bash rule allows every line"
    );
}

#[test]
fn an_ask_rule_beats_an_allow_rule() {
    let e = engine(&["Bash(git:*)"], &["Bash(git push:*)"], &[]);
    let push = bash(
        "git push origin main",
        &["git push origin main"],
        false,
        Risk::Exec,
    );
    assert_eq!(verdict(&e, &push), "ask");
    let auto = decide(&e, &push, PermissionMode::Auto);
    assert_eq!(auto.verdict(), "ask", "ask rules ask in auto mode too");
}

#[test]
fn session_grants_are_per_command_and_exact_for_opaque_lines() {
    let e = engine(&[], &[], &[]);
    let approved = bash(
        "git status && npm test",
        &["git status", "npm test"],
        false,
        Risk::Exec,
    );
    let grants = Grant::for_call(&approved);
    assert_eq!(
        grants,
        [
            Grant::Command("git status".into()),
            Grant::Command("npm test".into())
        ]
    );
    let go = |call: &ToolCall| {
        e.decide(
            call,
            PermissionMode::Default,
            ApprovalPolicy::OnRequest,
            SandboxMode::WorkspaceWrite,
            &grants,
        )
        .verdict()
    };
    assert_eq!(
        go(&bash("npm test", &["npm test"], false, Risk::Exec)),
        "allow"
    );
    assert_eq!(
        go(&bash(
            "npm test; rm -rf ~",
            &["npm test", "rm -rf ~"],
            false,
            Risk::Destructive
        )),
        "ask"
    );

    let opaque = bash("echo $(date)", &["echo $(date)", "date"], true, Risk::Exec);
    let grants = Grant::for_call(&opaque);
    assert_eq!(grants, [Grant::Line("echo $(date)".into())]);
    let go = |call: &ToolCall| {
        e.decide(
            call,
            PermissionMode::Default,
            ApprovalPolicy::OnRequest,
            SandboxMode::WorkspaceWrite,
            &grants,
        )
        .verdict()
    };
    assert_eq!(go(&opaque), "allow");
    assert_eq!(
        go(&bash(
            "echo  $(date)",
            &["echo $(date)", "date"],
            true,
            Risk::Exec
        )),
        "allow"
    );
    assert_eq!(
        go(&bash(
            "echo $(whoami)",
            &["echo $(whoami)", "whoami"],
            true,
            Risk::Exec
        )),
        "ask"
    );
    assert_eq!(
        go(&bash("date", &["date"], false, Risk::Exec)),
        "ask",
        "an opaque grant is only its line"
    );
}

#[test]
fn modes_order_after_deny_and_before_rules() {
    let e = engine(&["Write"], &[], &[]);
    let write = file("write", "/repo/a.txt", Risk::Write);
    assert_eq!(
        decide(&e, &write, PermissionMode::Plan).verdict(),
        "deny",
        "plan beats allow"
    );
    assert_eq!(
        decide(&e, &write, PermissionMode::Default).verdict(),
        "allow"
    );
    let e = engine(&[], &[], &[]);
    assert_eq!(
        decide(&e, &write, PermissionMode::AcceptEdits).verdict(),
        "allow"
    );
    assert_eq!(decide(&e, &write, PermissionMode::Default).verdict(), "ask");
    let run = bash("make", &["make"], false, Risk::Exec);
    assert_eq!(
        decide(&e, &run, PermissionMode::AcceptEdits).verdict(),
        "ask"
    );
    assert_eq!(decide(&e, &run, PermissionMode::Auto).verdict(), "allow");
    let rm = bash("rm -rf build", &["rm -rf build"], false, Risk::Destructive);
    assert_eq!(decide(&e, &rm, PermissionMode::Auto).verdict(), "ask");
    let ls = bash("ls", &["ls"], false, Risk::ReadOnly);
    assert_eq!(decide(&e, &ls, PermissionMode::Plan).verdict(), "allow");
    let never = e.decide(
        &run,
        PermissionMode::Default,
        ApprovalPolicy::Never,
        SandboxMode::WorkspaceWrite,
        &[],
    );
    assert_eq!(never.verdict(), "deny");
    assert!(never.reason().contains("approval policy: never"));
    let sandboxed = e.decide(
        &write,
        PermissionMode::AcceptEdits,
        ApprovalPolicy::OnRequest,
        SandboxMode::ReadOnly,
        &[],
    );
    assert_eq!(
        sandboxed.verdict(),
        "ask",
        "a read-only sandbox does not auto-allow edits"
    );
}

#[test]
fn cloud_agent_asks_in_every_mode_unless_the_user_allows_that_repository() {
    let call = ToolCall {
        id: CallId::from("g"),
        name: "cloud_agent".into(),
        input: json!({"repo": "Acme/Widgets"}),
        risk: Risk::Destructive,
        subject: "Acme/Widgets".into(),
        segments: None,
        writes: Vec::new(),
    };
    let none = engine(&[], &[], &[]);
    for mode in [
        PermissionMode::Default,
        PermissionMode::Auto,
        PermissionMode::BypassPermissions,
    ] {
        assert_eq!(decide(&none, &call, mode).verdict(), "ask", "{mode}");
    }
    assert_eq!(decide(&none, &call, PermissionMode::Plan).verdict(), "deny");
    let grants = Grant::for_call(&call);
    let granted = none.decide(
        &call,
        PermissionMode::Default,
        ApprovalPolicy::OnRequest,
        SandboxMode::WorkspaceWrite,
        &grants,
    );
    assert_eq!(granted.verdict(), "ask", "a session grant does not lift it");
    let bare = engine(&["CloudAgent"], &[], &[]);
    assert_eq!(
        decide(&bare, &call, PermissionMode::Default).verdict(),
        "ask"
    );
    let exact = engine(&["CloudAgent(acme/widgets)"], &[], &[]);
    assert_eq!(
        decide(&exact, &call, PermissionMode::BypassPermissions).verdict(),
        "allow"
    );
    assert_eq!(
        decide(&exact, &call, PermissionMode::Plan).verdict(),
        "deny"
    );
    let denied = engine(&["CloudAgent(acme/widgets)"], &[], &["CloudAgent"]);
    assert_eq!(
        decide(&denied, &call, PermissionMode::Default).verdict(),
        "deny"
    );
    let project = config(&["CloudAgent(acme/widgets)"], &[], &[]);
    let layers = [Layer {
        origin: Origin::Project(PathBuf::from("/repo/.cox/config.toml")),
        config: &project,
    }];
    let e = Engine::compile_layers(&layers, Some(Path::new(HOME)), Path::new(CWD)).unwrap();
    assert_eq!(
        decide(&e, &call, PermissionMode::Default).verdict(),
        "ask",
        "a project cannot allow it"
    );
}

#[test]
fn cloud_agent_allow_needs_the_repository_spelt_plainly_and_deny_takes_any_spelling() {
    let call = |subject: &str| ToolCall {
        id: CallId::from("g"),
        name: "cloud_agent".into(),
        input: json!({"repo": subject}),
        risk: Risk::Destructive,
        subject: subject.into(),
        segments: None,
        writes: Vec::new(),
    };
    let exact = engine(&["CloudAgent(acme/widgets)"], &[], &[]);
    let denied = engine(&[], &[], &["CloudAgent(acme/widgets)"]);
    for spelt in [
        "acme/widgets ",
        " acme/widgets",
        "acme/widgets\n",
        "acme/widgets\t",
        "acme/ widgets",
        "acme/widgets/",
    ] {
        for mode in [PermissionMode::Default, PermissionMode::BypassPermissions] {
            assert_eq!(
                decide(&exact, &call(spelt), mode).verdict(),
                "ask",
                "{spelt:?} in {mode}"
            );
        }
        if spelt.trim() == "acme/widgets" {
            assert_eq!(
                decide(&denied, &call(spelt), PermissionMode::BypassPermissions).verdict(),
                "deny",
                "{spelt:?}"
            );
        }
    }
    assert_eq!(
        decide(&exact, &call("ACME/widgets"), PermissionMode::Default).verdict(),
        "allow"
    );
}

#[test]
fn a_file_tools_write_to_settings_or_instructions_asks_in_every_mode() {
    let call = |name: &str, path: &str| ToolCall {
        id: CallId::from("w"),
        name: name.into(),
        input: json!({"path": path}),
        risk: Risk::Write,
        subject: path.into(),
        segments: None,
        writes: vec![path.into()],
    };
    let none = engine(&[], &[], &[]);
    let broad = engine(&["Edit", "Write", "Edit(**)"], &[], &[]);
    for path in [
        "/repo/.claude/settings.json",
        "/repo/.claude/hooks/guard.sh",
        "/repo/.cox/config.toml",
        "/repo/.mcp.json",
        "/repo/AGENTS.md",
        "/repo/sub/CLAUDE.md",
        "/repo/CLAUDE.local.md",
    ] {
        for tool in ["write", "edit", "apply_patch", "notebook_edit"] {
            for mode in [
                PermissionMode::Default,
                PermissionMode::AcceptEdits,
                PermissionMode::Auto,
                PermissionMode::BypassPermissions,
            ] {
                for engine in [&none, &broad] {
                    let outcome = decide(engine, &call(tool, path), mode);
                    assert_eq!(
                        outcome.verdict(),
                        "ask",
                        "{tool} {path} in {mode}: {outcome:?}"
                    );
                }
            }
            assert_eq!(
                decide(&none, &call(tool, path), PermissionMode::Plan).verdict(),
                "deny"
            );
        }
    }
    // As the model wrote it: a link named .claude resolved elsewhere.
    let mut linked = call("write", "/repo/cfg/settings.json");
    linked.input = json!({"path": ".claude/settings.json"});
    assert_eq!(
        decide(&none, &linked, PermissionMode::BypassPermissions).verdict(),
        "ask"
    );
    // The person's own rule naming the path lifts it; a project's does not.
    let own = engine(&["Edit(/repo/AGENTS.md)"], &[], &[]);
    assert_eq!(
        decide(
            &own,
            &call("edit", "/repo/AGENTS.md"),
            PermissionMode::Default
        )
        .verdict(),
        "allow"
    );
    let project = config(&["Edit(/repo/AGENTS.md)"], &[], &[]);
    let layers = [Layer {
        origin: Origin::Project(PathBuf::from("/repo/.cox/config.toml")),
        config: &project,
    }];
    let e = Engine::compile_layers(&layers, Some(Path::new(HOME)), Path::new(CWD)).unwrap();
    assert_eq!(
        decide(
            &e,
            &call("edit", "/repo/AGENTS.md"),
            PermissionMode::BypassPermissions
        )
        .verdict(),
        "ask"
    );
    // A deny still denies; reads and ordinary files are untouched.
    let deny = engine(&[], &[], &["Edit(/repo/.claude/**)"]);
    assert_eq!(
        decide(
            &deny,
            &call("write", "/repo/.claude/x"),
            PermissionMode::BypassPermissions
        )
        .verdict(),
        "deny"
    );
    let mut read = call("read", "/repo/AGENTS.md");
    read.risk = Risk::ReadOnly;
    read.writes.clear();
    assert_eq!(
        decide(&none, &read, PermissionMode::Default).verdict(),
        "allow"
    );
    assert_eq!(
        decide(
            &none,
            &call("write", "/repo/src/a.rs"),
            PermissionMode::AcceptEdits
        )
        .verdict(),
        "allow"
    );
}

#[test]
fn a_project_configs_allow_rules_are_dropped_and_its_deny_rules_kept() {
    let project = config(&["Bash(curl:*)"], &["Bash(make:*)"], &["Bash(git push:*)"]);
    let user = config(&["Bash(git:*)"], &[], &[]);
    let layers = [
        Layer {
            origin: Origin::User(PathBuf::from("/home/alice/.cox/config.toml")),
            config: &user,
        },
        Layer {
            origin: Origin::Project(PathBuf::from("/repo/.cox/config.toml")),
            config: &project,
        },
    ];
    let e = Engine::compile_layers(&layers, Some(Path::new(HOME)), Path::new(CWD)).unwrap();
    assert_eq!(e.ignored().len(), 1);
    assert_eq!(e.ignored()[0].text, "Bash(curl:*)");
    let curl = bash("curl x", &["curl x"], false, Risk::Exec);
    assert_eq!(verdict(&e, &curl), "ask");
    let push = bash("git push", &["git push"], false, Risk::Exec);
    let out = decide(&e, &push, PermissionMode::Default);
    assert_eq!(out.verdict(), "deny");
    assert!(
        out.reason()
            .contains("project config /repo/.cox/config.toml"),
        "{}",
        out.reason()
    );
    assert_eq!(
        verdict(&e, &bash("make", &["make"], false, Risk::Exec)),
        "ask"
    );
    assert_eq!(
        verdict(&e, &bash("git log", &["git log"], false, Risk::Exec)),
        "allow"
    );
}

#[test]
fn mcp_rules_cover_a_server_or_one_tool() {
    let call = |name: &str| ToolCall {
        id: CallId::from("m"),
        name: name.into(),
        input: json!({}),
        risk: Risk::Write,
        subject: name.into(),
        segments: None,
        writes: Vec::new(),
    };
    let e = engine(&["mcp__github"], &[], &["mcp__github__delete_repo"]);
    assert_eq!(verdict(&e, &call("mcp__github__create_issue")), "allow");
    assert_eq!(verdict(&e, &call("mcp__github__delete_repo")), "deny");
    assert_eq!(verdict(&e, &call("mcp__gitlab__create_issue")), "ask");
}

#[test]
fn a_bad_rule_names_its_list_and_layer() {
    let bad = config(&[], &[], &["Bash(rm:*"]);
    let layers = [Layer {
        origin: Origin::User(PathBuf::from("/h/.cox/config.toml")),
        config: &bad,
    }];
    let err = Engine::compile_layers(&layers, None, Path::new(CWD)).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("Bash(rm:*") && text.contains("deny") && text.contains("/h/.cox/config.toml"),
        "{text}"
    );
}

#[test]
fn explain_gives_each_command_its_own_verdict() {
    let e = engine(&["Bash(git:*)"], &["Bash(npm:*)"], &["Bash(rm:*)"]);
    let call = bash(
        "git status && npm i && rm x && make",
        &["git status", "npm i", "rm x", "make"],
        false,
        Risk::Destructive,
    );
    let rows: Vec<(String, &str)> = e
        .explain(&call)
        .into_iter()
        .map(|(c, v, _)| (c, v))
        .collect();
    assert_eq!(
        rows,
        [
            ("git status".to_owned(), "allow"),
            ("npm i".to_owned(), "ask"),
            ("rm x".to_owned(), "deny"),
            ("make".to_owned(), "none"),
        ]
    );
}

#[test]
fn extra_anchors_carry_relative_deny_and_ask_rules_but_never_allow_rules() {
    let user = config(&["Edit(docs/**)"], &["Edit(Cargo.toml)"], &["Read(.env)"]);
    let layers = [Layer {
        origin: Origin::User(PathBuf::from("/home/alice/.cox/config.toml")),
        config: &user,
    }];
    let also = [PathBuf::from("/main")];
    let e =
        Engine::compile_layers_at(&layers, Some(Path::new(HOME)), Path::new(CWD), &also).unwrap();
    let read = |path: &str| file("read", path, Risk::ReadOnly);
    let edit = |path: &str| file("edit", path, Risk::Write);
    assert_eq!(verdict(&e, &read("/repo/.env")), "deny");
    assert_eq!(verdict(&e, &read("/main/.env")), "deny", "the extra anchor");
    assert_eq!(verdict(&e, &edit("/main/Cargo.toml")), "ask");
    assert_eq!(verdict(&e, &edit("/repo/docs/a.md")), "allow");
    assert_eq!(
        verdict(&e, &edit("/main/docs/a.md")),
        "ask",
        "an allow rule does not follow"
    );
}

fn fetch(url: &str) -> ToolCall {
    ToolCall {
        id: CallId::from("w"),
        name: "web_fetch".into(),
        input: json!({"url": url}),
        risk: Risk::Exec,
        subject: url.into(),
        segments: None,
        writes: Vec::new(),
    }
}

#[test]
fn web_fetch_asks_for_an_unknown_host_and_rules_and_grants_decide_by_host() {
    let decide = |e: &Engine, call: &ToolCall, mode, policy, grants: &[Grant]| {
        e.decide(call, mode, policy, SandboxMode::WorkspaceWrite, grants)
    };
    let e = engine(
        &["WebFetch(domain:docs.rs)"],
        &[],
        &["WebFetch(domain:evil.io)"],
    );
    let on = ApprovalPolicy::OnRequest;
    let default = PermissionMode::Default;
    // An allow rule covers the host and those below it.
    for url in [
        "https://docs.rs/serde",
        "https://www.docs.rs/x",
        "https://DOCS.rs./y",
    ] {
        assert!(
            matches!(
                decide(&e, &fetch(url), default, on, &[]),
                Outcome::Allow { .. }
            ),
            "{url}"
        );
    }
    // Anything else asks, and cannot where nobody answers.
    let unknown = fetch("https://example.com/");
    assert!(matches!(
        decide(&e, &unknown, default, on, &[]),
        Outcome::Ask { .. }
    ));
    assert!(matches!(
        decide(&e, &unknown, default, ApprovalPolicy::Never, &[]),
        Outcome::Deny { .. }
    ));
    // Plan mode never leaves the machine.
    assert!(matches!(
        decide(&e, &unknown, PermissionMode::Plan, on, &[]),
        Outcome::Deny { .. }
    ));
    // A deny rule holds however the host is spelt, and over bypass.
    for url in [
        "https://evil.io/",
        "https://api.evil.io./x",
        "http://user@EVIL.io:8080/",
        "http://evil.io\\@docs.rs/",
    ] {
        assert!(
            matches!(
                decide(&e, &fetch(url), PermissionMode::BypassPermissions, on, &[]),
                Outcome::Deny { .. }
            ),
            "{url}"
        );
    }
    // "Allow for this session" grants the host, not the web.
    let grants = Grant::for_call(&fetch("https://example.com/page?q=1"));
    assert_eq!(grants, [Grant::Domain("example.com".into())]);
    for (url, allowed) in [
        ("https://example.com/other", true),
        ("https://cdn.example.com/x.js", true),
        ("https://example.com.evil.net/", false),
        ("https://badexample.com/", false),
    ] {
        assert_eq!(
            matches!(
                decide(&e, &fetch(url), default, on, &grants),
                Outcome::Allow { .. }
            ),
            allowed,
            "{url}"
        );
    }
    // A domain grant is no grant for another tool on the same text.
    assert!(matches!(
        decide(
            &e,
            &file("mcp__web__fetch", "https://example.com/other", Risk::Exec),
            default,
            on,
            &grants
        ),
        Outcome::Ask { .. }
    ));
}
