//! The command line's parsing, tested without a session.

use super::*;

fn cli(argv: &[&str]) -> Result<RunArgs, String> {
    let argv = std::iter::once("cox").chain(argv.iter().copied());
    match HeadlessCli::try_parse_from(argv.map(OsString::from)) {
        Ok(cli) => cli.into_run(),
        Err(err) => Err(err.to_string()),
    }
}

/// Every session flag, with a value unlike its default.
const EVERY_FLAG: &[&str] = &[
    "-p",
    "hi",
    "--output-format",
    "stream-json",
    "--cwd",
    "/tmp",
    "--add-dir",
    "/srv",
    "--permission-mode",
    "bypassPermissions",
    "--dangerously-skip-permissions",
    "--allow",
    "Read",
    "--ask",
    "Edit",
    "--deny",
    "Bash(rm:*)",
    "--allowedTools",
    "Bash(git diff:*),Write",
    "--disallowedTools",
    "WebFetch",
    "--approve",
    "never",
    "--max-turns",
    "3",
    "--max-budget-usd",
    "0.5",
    "--append-system-prompt",
    "be brief",
    "--verbose",
    "--provider",
    "scripted",
    "--model",
    "m",
    "--effort",
    "high",
    "--deep",
    "-r",
    "abc",
    "--record",
    "/tmp/c.toml",
    "--scenario",
    "/tmp/s.toml",
    "--no-hooks",
    "--plugin-dir",
    "/opt/plugin",
];

#[test]
fn every_flag_means_the_same_before_or_after_run() {
    let after: Vec<&str> = std::iter::once("run")
        .chain(EVERY_FLAG.iter().copied())
        .collect();
    let mut before: Vec<&str> = EVERY_FLAG.to_vec();
    before.push("run");
    let top = cli(EVERY_FLAG).expect("flags alone");
    let after = cli(&after).expect("flags after run");
    let before = cli(&before).expect("flags before run");
    assert_eq!(top, after);
    assert_eq!(before, after);
    // Nothing left at its default: a field the merge forgot would be.
    assert_ne!(after.output_format, None);
    assert!(after.verbose && after.deep && after.dangerously_skip_permissions);
    assert!(after.no_hooks);
    assert_eq!(after.plugin_dir, [PathBuf::from("/opt/plugin")]);
    assert_eq!(after.max_budget_usd, Some(0.5));
    assert_eq!(after.add_dir, vec![PathBuf::from("/srv")]);
}

#[test]
fn a_flag_split_around_run_merges_and_lists_add_up() {
    let args = cli(&[
        "--model", "a", "--allow", "Read", "run", "-p", "x", "--allow", "Edit",
    ])
    .expect("valid");
    assert_eq!(args.model, Some(Given::Flag("a".into())));
    assert_eq!(args.prompt.as_deref(), Some("x"));
    assert_eq!(args.rules.allow, ["Read", "Edit"]);
}

#[test]
fn a_flag_given_twice_with_different_values_is_refused() {
    let err = cli(&["--model", "a", "run", "-p", "x", "--model", "b"]).unwrap_err();
    assert!(err.contains("--model is given twice"), "{err}");
    assert!(cli(&["--model", "a", "run", "-p", "x", "--model", "a"]).is_ok());
    let err = cli(&["-c", "run", "-p", "x", "--resume", "abc"]).unwrap_err();
    assert!(err.contains("--resume and --continue"), "{err}");
}

#[test]
fn a_variable_yields_to_a_typed_flag_on_either_side_of_run() {
    let env = |model: &str| RunArgs {
        model: Some(Given::Env(model.into())),
        permission_mode: Some(Given::Env("plan".into())),
        ..RunArgs::default()
    };
    let typed = |model: &str| RunArgs {
        model: Some(Given::Flag(model.into())),
        ..env("from-env")
    };
    // `COX_MODEL=e cox run --model b` and `COX_MODEL=e cox --model b run`.
    let after = typed("b").merge(env("e")).expect("not given twice");
    let before = env("e").merge(typed("b")).expect("not given twice");
    assert_eq!(after.model, Some(Given::Flag("b".into())));
    assert_eq!(before.model, Some(Given::Flag("b".into())));
    let neither = env("e").merge(env("e")).expect("valid");
    assert_eq!(neither.model, Some(Given::Env("e".into())));
    // A variable is not a typed mode: the flags ask for none.
    assert_eq!(neither.mode_flag(), Ok(None));
    let err = typed("a").merge(typed("b")).unwrap_err();
    assert!(
        err.starts_with("--model is given twice, as \"b\" before"),
        "{err}"
    );
}

#[test]
fn prompt_without_a_value_means_stdin() {
    assert_eq!(cli(&["-p"]).unwrap().prompt.as_deref(), Some("-"));
    assert_eq!(cli(&["-p", "-"]).unwrap().prompt.as_deref(), Some("-"));
    assert_eq!(
        cli(&["--print", "--model", "m"]).unwrap().prompt.as_deref(),
        Some("-")
    );
    assert_eq!(
        cli(&["run", "--print", "hi"]).unwrap().prompt.as_deref(),
        Some("hi")
    );
}

#[test]
fn allowed_tools_split_outside_parentheses() {
    assert_eq!(
        split_rules("Bash(git diff:*), Edit  Read,Write(src/**)"),
        ["Bash(git diff:*)", "Edit", "Read", "Write(src/**)"]
    );
    assert_eq!(
        split_rules("Bash(npm run test:*)"),
        ["Bash(npm run test:*)"]
    );
    assert_eq!(split_rules(" , "), Vec::<String>::new());
    // Unbalanced: kept whole for the rule parser to refuse.
    assert_eq!(split_rules("Bash(git diff"), ["Bash(git diff"]);
    let flags = RuleFlags {
        allowed_tools: vec!["Read Edit".into()],
        disallowed_tools: vec!["Bash(rm:*),WebFetch".into()],
        ..RuleFlags::default()
    }
    .with_mode(None);
    assert_eq!(flags.allow, ["Read", "Edit"]);
    assert_eq!(flags.deny, ["Bash(rm:*)", "WebFetch"]);
}

#[test]
fn skip_permissions_is_bypass_and_conflicts_with_another_mode() {
    let args = cli(&["-p", "x", "--dangerously-skip-permissions"]).unwrap();
    assert_eq!(
        args.mode_flag(),
        Ok(Some(PermissionMode::BypassPermissions))
    );
    let args = cli(&[
        "-p",
        "x",
        "--dangerously-skip-permissions",
        "--permission-mode",
        "plan",
    ])
    .unwrap();
    assert!(args.mode_flag().is_err());
}

#[test]
fn run_flags_parse() {
    let run = cli(&[
        "run",
        "-p",
        "hi",
        "--output-format",
        "stream-json",
        "--permission-mode",
        "acceptEdits",
        "--max-turns",
        "3",
    ])
    .expect("valid flags");
    assert_eq!(run.prompt.as_deref(), Some("hi"));
    assert_eq!(run.output_format, Some(OutputFormat::StreamJson));
    assert_eq!(
        run.permission_mode,
        Some(Given::Flag(PermissionMode::AcceptEdits))
    );
    assert_eq!(run.max_turns, Some(3));
    assert!(cli(&["run", "-p", "x", "--max-budget-usd", "-1"]).is_err());
    let run = cli(&[
        "--no-hooks",
        "--plugin-dir",
        "a",
        "run",
        "-p",
        "x",
        "--plugin-dir",
        "b",
    ])
    .unwrap();
    assert!(run.no_hooks);
    assert_eq!(run.plugin_dir, [PathBuf::from("a"), PathBuf::from("b")]);
}
