//! Claude Code's settings files as cox reads them, tested on texts.

use super::*;

fn parsed(text: &str, scope: Scope) -> Result<Settings> {
    parse(
        Path::new("/p/.claude/settings.json"),
        text.to_owned(),
        scope,
    )
}

#[test]
fn rules_and_mode_are_read_with_their_lists() {
    let s = parsed(
        r#"{
  "permissions": {
"allow": ["Bash(git:*)"],
"ask": ["Bash(npm:*)"],
"deny": ["Read(./.env)", "Read(./secrets/**)"],
"defaultMode": "acceptEdits"
  }
}"#,
        Scope::User,
    )
    .unwrap();
    assert_eq!(s.permissions.allow, ["Bash(git:*)"]);
    assert_eq!(s.permissions.ask, ["Bash(npm:*)"]);
    assert_eq!(s.permissions.deny, ["Read(./.env)", "Read(./secrets/**)"]);
    assert_eq!(s.permissions.mode, Some(PermissionMode::AcceptEdits));
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}

#[test]
fn bad_input_names_the_file_and_line() {
    let cases = [
        (
            "{\n  \"permissions\": {\n    \"deny\": [\"Read(./.env)\",]\n  }\n}",
            ":3: not valid JSON",
        ),
        ("[1]", ":1: a settings file must hold one JSON object"),
        (
            "{\n\"permissions\": {\"deny\": \"Read(./.env)\"}}",
            ":2: `permissions.deny` must be a list",
        ),
        (
            "{\n\n\"permissions\": {\"deny\": [1]}}",
            ":3: `permissions.deny` must be a list",
        ),
        ("{\"permissions\": {\n\"defaultMode\": \"yolo\"}}", ":2: "),
        (
            "{\"permissions\": []}",
            ":1: `permissions` must be an object",
        ),
        (
            "{\"permissions\": {\"disableBypassPermissionsMode\": true}}",
            "can only be \"disable\"",
        ),
    ];
    for (text, said) in cases {
        let err = parsed(text, Scope::Project).unwrap_err().to_string();
        assert!(err.starts_with("/p/.claude/settings.json:"), "{err}");
        assert!(err.contains(said), "{text}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn keys_cox_does_not_use_or_know_are_each_named_once_with_their_line() {
    let s = parsed(
        "{\n  \"$schema\": \"x\",\n  \"cleanupPeriodDays\": 7,\n  \"permisions\": {},\n  \
         \"permissions\": {\"disableAutoMode\": \"disable\", \"alow\": []}\n}",
        Scope::User,
    )
    .unwrap();
    let all = s.warnings.join("\n");
    assert_eq!(s.warnings.len(), 4, "{all}");
    assert!(all.contains(":3: `cleanupPeriodDays` is a Claude Code setting cox does not use"));
    assert!(all.contains(":4: `permisions` is not a Claude Code setting cox knows"));
    assert!(all.contains("`permissions.disableAutoMode` is a Claude Code setting"));
    assert!(all.contains("`permissions.alow` is not a Claude Code setting cox knows"));
}

#[test]
fn env_is_read_from_the_persons_files_and_named_not_set_from_a_projects() {
    let text = r#"{"env": {"A": "1", "N": 2, "B": true}}"#;
    let mine = parsed(text, Scope::User).unwrap();
    assert_eq!(
        mine.env,
        [
            ("A".into(), "1".into()),
            ("N".into(), "2".into()),
            ("B".into(), "true".into())
        ]
    );
    let theirs = parsed(text, Scope::Project).unwrap();
    assert!(theirs.env.is_empty());
    assert!(
        theirs.warnings[0].contains("ignoring `env` (A, N, B)"),
        "{:?}",
        theirs.warnings
    );
    for (bad, said) in [
        (r#"{"env": ["A=1"]}"#, "`env` must be an object"),
        ("{\n\"env\": {\n\"A\": [1]}}", ":3: `env.A` must be text"),
        (r#"{"env": {"A=B": "1"}}"#, "`A=B` is not a variable name"),
    ] {
        let err = parsed(bad, Scope::User).unwrap_err().to_string();
        assert!(err.contains(said), "{bad}: {err}");
    }
}

#[test]
fn a_status_line_command_is_read_and_a_projects_is_not() {
    let text = r#"{"statusLine": {"type": "command", "command": "~/line.sh", "padding": 0}}"#;
    let mine = parsed(text, Scope::User).unwrap();
    assert_eq!(mine.status_line.as_deref(), Some("~/line.sh"));
    assert!(
        mine.warnings[0].contains("`statusLine.padding`"),
        "{:?}",
        mine.warnings
    );
    let theirs = parsed(text, Scope::Project).unwrap();
    assert_eq!(theirs.status_line, None);
    assert!(
        theirs
            .warnings
            .iter()
            .any(|w| w.contains("ignoring the statusLine"))
    );
    for bad in [
        r#"{"statusLine": "x"}"#,
        r#"{"statusLine": {"type": "static", "command": "x"}}"#,
        r#"{"statusLine": {"type": "command"}}"#,
    ] {
        assert!(parsed(bad, Scope::User).is_err(), "{bad}");
    }
}

#[test]
fn mcp_answers_are_read_from_the_persons_files_only() {
    let text = r#"{"enableAllProjectMcpServers": false, "enabledMcpjsonServers": ["a"],
        "disabledMcpjsonServers": ["b"]}"#;
    let mine = parsed(text, Scope::User).unwrap();
    assert_eq!(
        mine.mcp,
        McpChoice {
            all: false,
            enabled: vec!["a".into()],
            disabled: vec!["b".into()]
        }
    );
    let theirs = parsed(text, Scope::Project).unwrap();
    assert_eq!(theirs.mcp, McpChoice::default());
    assert_eq!(theirs.warnings.len(), 3, "{:?}", theirs.warnings);
    for bad in [
        r#"{"enableAllProjectMcpServers": "yes"}"#,
        r#"{"enabledMcpjsonServers": "a"}"#,
    ] {
        assert!(parsed(bad, Scope::User).is_err(), "{bad}");
    }
}

#[test]
fn an_empty_file_is_no_settings_and_a_missing_one_is_none() {
    let s = parsed("  \n", Scope::User).unwrap();
    assert!(s.permissions.deny.is_empty());
    assert!(
        read(Path::new("/nonexistent/settings.json"), Scope::User)
            .unwrap()
            .is_none()
    );
}

#[test]
fn setting_sources_choose_the_files_and_settings_add_one() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let deny = |rule: &str| format!(r#"{{"permissions": {{"deny": ["{rule}"]}}}}"#);
    std::fs::create_dir(home.path().join(".claude")).unwrap();
    std::fs::write(home.path().join(".claude/settings.json"), deny("Bash(u)")).unwrap();
    std::fs::create_dir(project.path().join(".claude")).unwrap();
    std::fs::write(
        project.path().join(".claude/settings.json"),
        deny("Bash(p)"),
    )
    .unwrap();
    std::fs::write(
        project.path().join(".claude/settings.local.json"),
        deny("Bash(l)"),
    )
    .unwrap();
    let denied = |choice: &Choice| -> Vec<String> {
        read_all(
            Path::new("/nonexistent/managed.json"),
            Some(home.path()),
            Some(project.path()),
            choice,
        )
        .unwrap()
        .into_iter()
        .flat_map(|s| s.permissions.deny)
        .collect()
    };
    let table: [(Option<&str>, Option<&str>, &[&str]); 6] = [
        (None, None, &["Bash(u)", "Bash(p)", "Bash(l)"]),
        (
            Some("user,project,local"),
            None,
            &["Bash(u)", "Bash(p)", "Bash(l)"],
        ),
        (Some("project"), None, &["Bash(p)"]),
        (Some(" local , user "), None, &["Bash(u)", "Bash(l)"]),
        (Some(""), None, &[]),
        (
            Some(""),
            Some(r#"{"permissions": {"deny": ["Bash(f)"]}}"#),
            &["Bash(f)"],
        ),
    ];
    for (sources, settings, expected) in table {
        let choice = Choice::from_flags(settings, sources).unwrap();
        assert_eq!(denied(&choice), expected, "{sources:?} {settings:?}");
    }
    let err = Choice::from_flags(None, Some("user,policy"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "--setting-sources: `policy` is not a source (user, project, local)"
    );
    let err = Choice::from_flags(Some("/nonexistent/s.json"), None)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("--settings /nonexistent/s.json: no such file"),
        "{err}"
    );
    let bad = Choice::from_flags(Some("{\n  \"permissions\": 3\n}"), None).unwrap();
    let err = read_all(Path::new("/nonexistent/m.json"), None, None, &bad)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("--settings:2: `permissions` must be an object"),
        "{err}"
    );
}

#[test]
fn the_home_folders_own_settings_are_not_read_twice_as_a_projects() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".claude")).unwrap();
    std::fs::write(
        home.path().join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Bash(rm:*)"]}}"#,
    )
    .unwrap();
    let all = read_all(
        Path::new("/nonexistent/managed.json"),
        Some(home.path()),
        Some(home.path()),
        &Choice::default(),
    )
    .unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].scope, Scope::User);
}
