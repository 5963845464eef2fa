//! Property tests of the engine's promises, over generated rule sets,
//! modes, policies, grants and calls.

use std::path::Path;

use cox_permission::{Engine, Grant};
use cox_protocol::CallId;
use cox_protocol::config::PermissionsConfig;
use cox_protocol::types::{ApprovalPolicy, PermissionMode, Risk, SandboxMode, Segments, ToolCall};
use proptest::prelude::*;
use serde_json::json;

const COMMANDS: [&str; 10] = [
    "git status",
    "git push origin main --force",
    "git push",
    "rm -rf build",
    "rm x",
    "npm test",
    "cargo test -p core",
    "ls -la",
    "make install",
    "curl https://example.com",
];

const RULES: [&str; 16] = [
    "Bash",
    "Bash(git:*)",
    "Bash(git push:*)",
    "Bash(git push --force:*)",
    "Bash(rm:*)",
    "Bash(npm test)",
    "Bash(cargo test:*)",
    "Bash(ls *)",
    "Bash(make install)",
    "Bash(curl:*)",
    "Read",
    "Read(/repo/**)",
    "Edit(/repo/src/**)",
    "Write",
    "Read(~/.ssh/**)",
    "mcp__gh",
];

fn modes() -> impl Strategy<Value = PermissionMode> {
    prop::sample::select(PermissionMode::ALL.to_vec())
}

fn rules() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(
        prop::sample::select(RULES.to_vec()).prop_map(str::to_owned),
        0..5,
    )
}

fn risk() -> impl Strategy<Value = Risk> {
    prop::sample::select(vec![
        Risk::ReadOnly,
        Risk::Write,
        Risk::Exec,
        Risk::Destructive,
    ])
}

/// A shell call from 1–4 known commands, or a file or MCP call.
fn calls() -> impl Strategy<Value = ToolCall> {
    let shell = (
        prop::collection::vec(prop::sample::select(COMMANDS.to_vec()), 1..5),
        any::<bool>(),
        risk(),
    )
        .prop_map(|(commands, opaque, risk)| {
            let line = commands.join(" && ");
            ToolCall {
                id: CallId::from("c"),
                name: "bash".into(),
                input: json!({"command": line}),
                risk,
                subject: line,
                segments: Some(Segments {
                    commands: commands.iter().map(|c| (*c).to_owned()).collect(),
                    opaque: opaque.then(|| "opaque".to_owned()),
                    ..Default::default()
                }),
                writes: Vec::new(),
            }
        });
    let other = (
        prop::sample::select(vec!["read", "edit", "write", "grep", "mcp__gh__x"]),
        prop::sample::select(vec![
            "/repo/src/a.rs",
            "/repo/README.md",
            "/home/alice/.ssh/id",
            "/etc/passwd",
        ]),
        risk(),
    )
        .prop_map(|(name, path, risk)| ToolCall {
            id: CallId::from("f"),
            name: name.into(),
            input: json!({"path": path}),
            risk,
            subject: path.into(),
            segments: None,
            writes: Vec::new(),
        });
    prop_oneof![shell, other]
}

fn compile(allow: &[String], ask: &[String], deny: &[String]) -> Engine {
    let config = PermissionsConfig {
        allow: allow.to_vec(),
        ask: ask.to_vec(),
        deny: deny.to_vec(),
        mode: None,
    };
    Engine::compile(&config, Some(Path::new("/home/alice")), Path::new("/repo")).unwrap()
}

proptest! {
    /// Adding a deny rule never turns a Deny into anything else, and
    /// anything it changes, it changes into a Deny.
    #[test]
    fn deny_is_monotonic(
        allow in rules(), ask in rules(), deny in rules(), extra in prop::sample::select(RULES.to_vec()),
        call in calls(), mode in modes(), never in any::<bool>(), granted in any::<bool>(),
    ) {
        let policy = if never { ApprovalPolicy::Never } else { ApprovalPolicy::OnRequest };
        let grants = if granted { Grant::for_call(&call) } else { Vec::new() };
        let before = compile(&allow, &ask, &deny)
            .decide(&call, mode, policy, SandboxMode::WorkspaceWrite, &grants);
        let mut more = deny.clone();
        more.push(extra.to_owned());
        let after = compile(&allow, &ask, &more)
            .decide(&call, mode, policy, SandboxMode::WorkspaceWrite, &grants);
        if before.verdict() == "deny" {
            prop_assert_eq!(after.verdict(), "deny");
        }
        if after.verdict() != before.verdict() {
            prop_assert_eq!(after.verdict(), "deny");
        }
    }

    /// When rules or grants allow a shell line in a mode that would
    /// otherwise ask, every command is covered by a rule or a grant, and
    /// the line is not opaque (unless a bare or exact whole-line rule, or
    /// the exact-line grant, allowed it).
    #[test]
    fn an_allowed_line_has_every_command_covered(
        allow in rules(), call in calls(), use_grants in any::<bool>(),
        granted in prop::collection::vec(prop::sample::select(COMMANDS.to_vec()), 0..4),
    ) {
        prop_assume!(call.name == "bash" && call.risk != Risk::ReadOnly);
        let grants: Vec<Grant> = if use_grants {
            granted.iter().map(|c| Grant::Command((*c).to_owned())).collect()
        } else {
            Vec::new()
        };
        let engine = compile(&allow, &[], &[]);
        let out = engine.decide(&call, PermissionMode::Default, ApprovalPolicy::OnRequest,
                                SandboxMode::WorkspaceWrite, &grants);
        if out.verdict() == "allow" {
            let split = call.segments.as_ref().unwrap();
            let whole_line = allow.iter().any(|r| r == "Bash" || *r == format!("Bash({})", call.subject));
            if !whole_line {
                prop_assert!(split.opaque.is_none(), "an opaque line was allowed: {}", out.reason());
                for command in &split.commands {
                    let by_rule = allow.iter().any(|rule| covers(rule, command));
                    let by_grant = grants.contains(&Grant::Command(command.clone()));
                    prop_assert!(by_rule || by_grant, "{command} is not covered ({})", out.reason());
                }
            }
        }
    }
}

/// An independent, naive reading of a Bash allow rule against one command.
fn covers(rule: &str, command: &str) -> bool {
    let Some(body) = rule.strip_prefix("Bash(").and_then(|r| r.strip_suffix(')')) else {
        return rule == "Bash";
    };
    if let Some(prefix) = body.strip_suffix(":*").or_else(|| body.strip_suffix(" *")) {
        return command == prefix || command.starts_with(&format!("{prefix} "));
    }
    command == body
}
