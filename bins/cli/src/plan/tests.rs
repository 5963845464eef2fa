//! The resolver's precedence rules, as tables: each row is the files (by
//! name), the variables and the flags of one session, and what the plan
//! must say. No session, no disk: `Inputs` is built in memory.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::Parser;
use cox_protocol::types::{PermissionMode, SandboxMode};

use super::*;
use crate::args::HeadlessCli;
use crate::given::Given;

/// Files by path, their texts made for the row.
type Owned = Vec<(&'static str, String)>;
/// Files (or variables) by name, their texts as written.
type Texts = Vec<(&'static str, &'static str)>;
/// A command line after `cox`.
type Argv = Vec<&'static str>;
/// Two switches: traces and logs.
type Pair = Option<(bool, bool)>;
/// The session and monthly caps.
type Caps = [Option<f64>; 2];
/// A model as named, and whether it wins over `[tiers]`.
type Named = Option<(&'static str, bool)>;

const HOME: &str = "/home/alice";
const COX: &str = "/home/alice/.cox/config.toml";
const CLAUDE_USER: &str = "/home/alice/.claude/settings.json";
const MANAGED: &str = "/etc/claude-code/managed-settings.json";
const PROJECT: &str = "/repo";
const PROJECT_COX: &str = "/repo/.cox/config.toml";
const CLAUDE_PROJECT: &str = "/repo/.claude/settings.json";
const CLAUDE_LOCAL: &str = "/repo/.claude/settings.local.json";

/// One session's sources: `files` by path, `vars`, the command line
/// after `cox`.
fn inputs(files: &[(&str, &str)], vars: &[(&str, &str)], argv: &[&str]) -> Inputs {
    let argv = std::iter::once("cox").chain(argv.iter().copied());
    let args = HeadlessCli::try_parse_from(argv.map(OsString::from))
        .map_err(|e| e.to_string())
        .and_then(HeadlessCli::into_run)
        .unwrap_or_else(|e| panic!("the test's flags: {e}"));
    let choice = claude::Choice::from_flags(
        args.sdk.settings.as_deref(),
        args.sdk.setting_sources.as_deref(),
    )
    .unwrap_or_else(|e| panic!("the test's settings flags: {e}"));
    let has = |path: &str| files.iter().any(|(p, _)| *p == path);
    Inputs {
        consent: Consent::Flag,
        places: Places {
            user_config: PathBuf::from(COX),
            home_dir: Some(PathBuf::from(HOME)),
            managed: PathBuf::from(MANAGED),
            settings_from: PathBuf::from(PROJECT),
            cwd: PathBuf::from(PROJECT),
            also: Vec::new(),
            project_config: has(PROJECT_COX).then(|| PathBuf::from(PROJECT_COX)),
        },
        choice,
        files: files
            .iter()
            .map(|(path, text)| (PathBuf::from(path), Ok(Some((*text).to_owned()))))
            .collect::<BTreeMap<_, _>>(),
        vars: vars
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect(),
        trusted: Ok(Vec::new()),
        args,
    }
}

fn plan(files: &[(&str, &str)], vars: &[(&str, &str)], argv: &[&str]) -> Plan {
    resolve(&inputs(files, vars, argv)).unwrap_or_else(|e| panic!("resolve: {e:#}"))
}

fn refused(files: &[(&str, &str)], vars: &[(&str, &str)], argv: &[&str]) -> String {
    match resolve(&inputs(files, vars, argv)) {
        Ok(_) => panic!("resolved, but should not have"),
        Err(err) => format!("{err:#}"),
    }
}

#[test]
fn the_permission_mode_comes_from_the_strongest_source() {
    use PermissionMode::{AcceptEdits, BypassPermissions, Default, Plan as PlanMode};
    let cox_mode = |m: &str| format!("[permissions]\nmode = \"{m}\"\n");
    let claude_mode = |m: &str| format!(r#"{{"permissions": {{"defaultMode": "{m}"}}}}"#);
    let rows: Vec<(&str, Owned, Vec<&str>, PermissionMode, &str)> = vec![
        ("nothing set", vec![], vec![], Default, "the default"),
        (
            "the person's Claude settings",
            vec![(CLAUDE_USER, claude_mode("acceptEdits"))],
            vec![],
            AcceptEdits,
            CLAUDE_USER,
        ),
        (
            "cox's own config over the person's Claude settings",
            vec![
                (CLAUDE_USER, claude_mode("acceptEdits")),
                (COX, cox_mode("plan")),
            ],
            vec![],
            PlanMode,
            COX,
        ),
        (
            "a project narrows",
            vec![
                (COX, cox_mode("acceptEdits")),
                (PROJECT_COX, cox_mode("plan")),
            ],
            vec![],
            PlanMode,
            PROJECT_COX,
        ),
        (
            "a project cannot widen",
            vec![(PROJECT_COX, cox_mode("bypassPermissions"))],
            vec![],
            Default,
            "the default",
        ),
        (
            "a project's Claude settings cannot widen",
            vec![(CLAUDE_PROJECT, claude_mode("acceptEdits"))],
            vec![],
            Default,
            "the default",
        ),
        (
            "--settings over the files",
            vec![(COX, cox_mode("plan"))],
            vec![
                "--settings",
                r#"{"permissions": {"defaultMode": "acceptEdits"}}"#,
            ],
            AcceptEdits,
            "--settings",
        ),
        (
            "the flag over every file",
            vec![(COX, cox_mode("plan"))],
            vec!["--permission-mode", "bypassPermissions"],
            BypassPermissions,
            "--permission-mode",
        ),
        (
            "the managed file over the flag",
            vec![(MANAGED, claude_mode("default"))],
            vec!["--permission-mode", "bypassPermissions"],
            Default,
            MANAGED,
        ),
        (
            "architect's plan over the files",
            vec![(COX, cox_mode("acceptEdits"))],
            vec!["--mode", "architect"],
            PlanMode,
            "--mode architect",
        ),
    ];
    for (what, files, argv, mode, source) in rows {
        let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
        let plan = plan(&files, &[], &argv);
        assert_eq!(plan.permissions.mode, mode, "{what}");
        assert!(
            plan.permissions.mode_source.contains(source),
            "{what}: {}",
            plan.permissions.mode_source
        );
    }
}

#[test]
fn the_mode_variable_sits_between_the_files_and_the_flag() {
    let files = [(COX, "[permissions]\nmode = \"plan\"\n")];
    let mut inputs = inputs(&files, &[], &[]);
    inputs.args.permission_mode = Some(Given::Env("acceptEdits".into()));
    let plan = resolve(&inputs).unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(plan.permissions.mode, PermissionMode::AcceptEdits);
    inputs.args.permission_mode = Some(Given::Env("sideways".into()));
    let err = resolve(&inputs).map(|_| ()).unwrap_err().to_string();
    assert!(err.starts_with("COX_PERMISSION_MODE:"), "{err}");
}

#[test]
fn rules_add_up_and_a_project_allows_only_what_was_trusted() {
    let files = [
        (COX, "[permissions]\nallow = [\"Bash(cargo test:*)\"]\n"),
        (
            CLAUDE_USER,
            r#"{"permissions": {"deny": ["Read(./.env)"]}}"#,
        ),
        (
            PROJECT_COX,
            "[permissions]\nallow = [\"Bash(make:*)\"]\nask = [\"Bash(git push:*)\"]\n",
        ),
        (
            CLAUDE_PROJECT,
            r#"{"permissions": {"allow": ["Read"], "deny": ["Bash(curl:*)"]}}"#,
        ),
        (MANAGED, r#"{"permissions": {"deny": ["WebFetch"]}}"#),
    ];
    let rules = |plan: &Plan| -> Vec<String> {
        plan.permissions
            .engine
            .rules()
            .filter(|(_, r)| !matches!(r.origin, cox_permission::Origin::BuiltIn))
            .map(|(list, r)| format!("{list} {} @ {}", r.text, r.origin))
            .collect()
    };
    let untrusted = plan(&files, &[], &["--deny", "Bash(rm:*)"]);
    let have = rules(&untrusted);
    for want in [
        format!("allow Bash(cargo test:*) @ user config {COX}"),
        format!("deny Read(./.env) @ user config {CLAUDE_USER}"),
        format!("ask Bash(git push:*) @ project config {PROJECT_COX}"),
        format!("deny Bash(curl:*) @ project config {CLAUDE_PROJECT}"),
        format!("deny WebFetch @ managed settings {MANAGED}"),
        "deny Bash(rm:*) @ command line".to_owned(),
    ] {
        assert!(have.contains(&want), "{want} in {have:#?}");
    }
    assert!(!have.iter().any(|r| r.starts_with("allow Bash(make:*)")));
    assert_eq!(untrusted.permissions.pending_allow.len(), 2);
    let warning = untrusted
        .warnings
        .iter()
        .find(|w| w.contains("allow rule(s)"))
        .cloned()
        .unwrap_or_default();
    assert!(
        warning.contains(&format!("`Bash(make:*)` ({PROJECT_COX}:2)")),
        "{warning}"
    );
    assert!(
        warning.contains(&format!("`Read` ({CLAUDE_PROJECT}:1)")),
        "{warning}"
    );

    // Trusted as written: taken, with the trusted origin; the other waits.
    let mut trusted = inputs(&files, &[], &[]);
    trusted.trusted = Ok(vec![config::trust::fingerprint(
        Path::new(PROJECT_COX),
        "Bash(make:*)",
    )]);
    let trusted = resolve(&trusted).unwrap_or_else(|e| panic!("{e:#}"));
    let have = rules(&trusted);
    assert!(
        have.contains(&format!(
            "allow Bash(make:*) @ project config {PROJECT_COX}, trusted"
        )),
        "{have:#?}"
    );
    assert_eq!(trusted.permissions.pending_allow.len(), 1);
    assert_eq!(trusted.permissions.pending_allow[0].rule, "Read");

    // Trust that cannot be read: nothing of the project's is allowed, and
    // that is said.
    let mut unreadable = inputs(&files, &[], &[]);
    unreadable.trusted = Err("database is locked".into());
    let unreadable = resolve(&unreadable).unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(unreadable.permissions.pending_allow.len(), 2);
    assert!(
        unreadable
            .warnings
            .iter()
            .any(|w| w.contains("database is locked")),
        "{:?}",
        unreadable.warnings
    );
}

#[test]
fn setting_sources_choose_which_claude_files_count() {
    let files = [
        (CLAUDE_USER, r#"{"permissions": {"deny": ["Bash(a:*)"]}}"#),
        (
            CLAUDE_PROJECT,
            r#"{"permissions": {"deny": ["Bash(b:*)"]}}"#,
        ),
        (CLAUDE_LOCAL, r#"{"permissions": {"deny": ["Bash(c:*)"]}}"#),
        (MANAGED, r#"{"permissions": {"deny": ["Bash(d:*)"]}}"#),
    ];
    let rows: [(&[&str], &[&str]); 4] = [
        (&[], &["a", "b", "c", "d"]),
        (&["--setting-sources", "user"], &["a", "d"]),
        (&["--setting-sources", "project,local"], &["b", "c", "d"]),
        (&["--setting-sources", ""], &["d"]),
    ];
    for (argv, want) in rows {
        let plan = plan(&files, &[], argv);
        let mut have: Vec<String> = plan
            .permissions
            .engine
            .rules()
            .filter(|(list, _)| *list == "deny")
            .filter_map(|(_, r)| {
                r.text
                    .strip_prefix("Bash(")
                    .and_then(|t| t.strip_suffix(":*)"))
                    .map(str::to_owned)
            })
            .collect();
        have.sort();
        assert_eq!(have, want, "{argv:?}");
    }
}

#[test]
fn the_budget_lowers_through_the_project_then_the_variables_then_the_flag() {
    let user = "[budget]\nsession_usd = 5.0\nmonthly_usd = 100.0\n";
    let rows: Vec<(&str, Texts, Texts, Argv, Caps)> = vec![
        (
            "the user's",
            vec![(COX, user)],
            vec![],
            vec![],
            [Some(5.0), Some(100.0)],
        ),
        (
            "a project lowers",
            vec![(COX, user), (PROJECT_COX, "[budget]\nsession_usd = 2.0\n")],
            vec![],
            vec![],
            [Some(2.0), Some(100.0)],
        ),
        (
            "a project cannot raise",
            vec![(COX, user), (PROJECT_COX, "[budget]\nsession_usd = 9.0\n")],
            vec![],
            vec![],
            [Some(5.0), Some(100.0)],
        ),
        (
            "the variables set this run's",
            vec![(COX, user)],
            vec![
                ("COX_BUDGET_SESSION_USD", "7"),
                ("COX_BUDGET_MONTHLY_USD", "0"),
            ],
            vec![],
            [Some(7.0), Some(0.0)],
        ),
        (
            "the flag over the variable",
            vec![(COX, user)],
            vec![("COX_BUDGET_SESSION_USD", "7")],
            vec!["--max-budget-usd", "1.5"],
            [Some(1.5), Some(100.0)],
        ),
    ];
    for (what, files, vars, argv, [session, monthly]) in rows {
        let plan = plan(&files, &vars, &argv);
        assert_eq!(plan.budget.session_usd, session, "{what}");
        assert_eq!(plan.budget.monthly_usd, monthly, "{what}");
    }
    let err = refused(&[], &[("COX_BUDGET_SESSION_USD", "lots")], &[]);
    assert!(err.contains("COX_BUDGET_SESSION_USD=lots"), "{err}");
}

#[test]
fn a_project_narrows_the_sandbox_and_never_widens_it() {
    let user = "[sandbox]\nmode = \"workspace-write\"\nnetwork = true\n";
    let rows = [
        ("the user's", "", SandboxMode::WorkspaceWrite, true),
        (
            "narrowed",
            "[sandbox]\nmode = \"read-only\"\nnetwork = false\n",
            SandboxMode::ReadOnly,
            false,
        ),
        (
            "not widened",
            "[sandbox]\nmode = \"danger-full-access\"\n",
            SandboxMode::WorkspaceWrite,
            true,
        ),
    ];
    for (what, project, mode, network) in rows {
        let mut files = vec![(COX, user)];
        if !project.is_empty() {
            files.push((PROJECT_COX, project));
        }
        let plan = plan(&files, &[], &[]);
        assert_eq!(plan.permissions.sandbox.mode, mode, "{what}");
        assert_eq!(
            plan.permissions.sandbox.network == cox_sandbox::Network::On,
            network,
            "{what}"
        );
    }
}

#[test]
fn the_main_model_from_claude_settings_has_its_place() {
    let model = |m: &str| format!(r#"{{"model": "{m}"}}"#);
    let tiers = "[tiers.code]\nmodel = \"from-cox\"\n";
    let rows: Vec<(&str, Owned, Argv, Named)> = vec![
        ("none", vec![], vec![], None),
        (
            "the person's own",
            vec![(CLAUDE_USER, model("claude-opus-4-1"))],
            vec![],
            Some(("claude-opus-4-1", false)),
        ),
        (
            "cox's [tiers] over the person's own",
            vec![(CLAUDE_USER, model("opus")), (COX, tiers.to_owned())],
            vec![],
            None,
        ),
        (
            "--settings over [tiers]",
            vec![(COX, tiers.to_owned())],
            vec!["--settings", r#"{"model": "haiku"}"#],
            Some(("haiku", true)),
        ),
        (
            "the managed file over everything but the flag",
            vec![(MANAGED, model("sonnet")), (CLAUDE_USER, model("opus"))],
            vec![],
            Some(("sonnet", true)),
        ),
        (
            "a project's is not used",
            vec![(CLAUDE_PROJECT, model("opus"))],
            vec![],
            None,
        ),
    ];
    for (what, files, argv, want) in rows {
        let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
        let plan = plan(&files, &[], &argv);
        assert_eq!(
            plan.model
                .as_ref()
                .map(|m| (m.model.as_str(), m.over_config)),
            want,
            "{what}"
        );
    }
    let project = plan(&[(CLAUDE_PROJECT, &model("opus"))], &[], &[]);
    assert!(
        project
            .warnings
            .iter()
            .any(|w| w.contains("ignoring the model of a project's settings")),
        "{:?}",
        project.warnings
    );
}

#[test]
fn opentelemetrys_switches_and_the_log_filter_resolve_from_the_variables() {
    let otel_on = [(COX, "[telemetry]\notel = true\n")];
    let rows: Vec<(&str, Texts, Pair)> = vec![
        ("on, both signals", vec![], Some((true, true))),
        (
            "the SDK off",
            vec![("OTEL_SDK_DISABLED", "true")],
            Some((false, false)),
        ),
        (
            "traces off",
            vec![("OTEL_TRACES_EXPORTER", "none")],
            Some((false, true)),
        ),
        (
            "cox's switch off",
            vec![("COX_TELEMETRY_OTEL", "false")],
            None,
        ),
    ];
    for (what, vars, want) in rows {
        let plan = plan(&otel_on, &vars, &[]);
        assert_eq!(
            plan.telemetry.export.map(|s| (s.traces, s.logs)),
            want,
            "{what}"
        );
    }
    let err = refused(&otel_on, &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")], &[]);
    assert!(err.contains("OTEL_EXPORTER_OTLP_PROTOCOL=grpc"), "{err}");
    // Off, a protocol cox does not speak does not matter.
    let plan = plan(&[], &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")], &[]);
    assert!(plan.telemetry.export.is_none());

    let err = refused(&[], &[("COX_LOG", "debug,=x")], &[]);
    assert!(err.contains("COX_LOG"), "{err}");
}

#[test]
fn the_status_line_is_cox_configs_else_the_managed_files_else_the_persons() {
    let line = |c: &str| format!(r#"{{"statusLine": {{"type": "command", "command": "{c}"}}}}"#);
    let rows: Vec<(&str, Owned, Option<&str>)> = vec![
        ("none", vec![], None),
        (
            "the person's",
            vec![(CLAUDE_USER, line("mine"))],
            Some("mine"),
        ),
        (
            "the managed over the person's",
            vec![(CLAUDE_USER, line("mine")), (MANAGED, line("admin"))],
            Some("admin"),
        ),
        (
            "cox's own over both",
            vec![
                (MANAGED, line("admin")),
                (
                    COX,
                    "[tui]\nstatus_line = { command = \"cox\" }\n".to_owned(),
                ),
            ],
            Some("cox"),
        ),
        (
            "a project's is not used",
            vec![(CLAUDE_PROJECT, line("theirs"))],
            None,
        ),
    ];
    for (what, files, want) in rows {
        let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
        assert_eq!(
            plan(&files, &[], &[]).status_line.as_deref(),
            want,
            "{what}"
        );
    }
}

#[test]
fn bad_input_stops_with_its_file_and_line() {
    let rows = [
        (
            CLAUDE_PROJECT,
            "{\n  \"permissions\": {\"deny\": [\"Bash(\"]}\n}\n",
            format!("{CLAUDE_PROJECT}:2"),
        ),
        (
            CLAUDE_USER,
            "{\n  not json\n}\n",
            format!("{CLAUDE_USER}:2"),
        ),
        (
            COX,
            "[permissions]\nmode = \"sideways\"\n",
            format!("{COX}:2"),
        ),
        (PROJECT_COX, "[permision]\n", format!("{PROJECT_COX}:1")),
    ];
    for (path, text, at) in rows {
        let err = refused(&[(path, text)], &[], &[]);
        assert!(err.starts_with(&at), "{path}: {err}");
        assert!(!err.contains('\n'), "{err}");
    }
    // A managed file that cannot be read is an error, never skipped.
    let mut unreadable = inputs(&[], &[], &[]);
    unreadable
        .files
        .insert(PathBuf::from(MANAGED), Err("permission denied".into()));
    let err = resolve(&unreadable).map(|_| ()).unwrap_err().to_string();
    assert!(
        err.starts_with(MANAGED) && err.contains("permission denied"),
        "{err}"
    );
}

#[test]
fn additional_directories_are_joined_and_left_to_check() {
    let files = [(
        CLAUDE_USER,
        r#"{"permissions": {"additionalDirectories": ["~/notes", "../shared"]}}"#,
    )];
    let plan = plan(&files, &[], &[]);
    let dirs: Vec<&Path> = plan
        .additional_dirs
        .iter()
        .map(|(p, _)| p.as_path())
        .collect();
    assert_eq!(
        dirs,
        [Path::new("/home/alice/notes"), Path::new("/repo/../shared")]
    );
    assert!(
        plan.additional_dirs[0]
            .1
            .starts_with(&format!("{CLAUDE_USER}:1:"))
    );
}
