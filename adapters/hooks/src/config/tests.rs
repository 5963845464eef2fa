//! Hooks read from settings texts and files, tested without running one.

use super::*;

#[test]
fn a_projects_disable_all_hooks_turns_off_only_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user.json");
    let project = dir.path().join("project.json");
    std::fs::write(
        &user,
        r#"{"hooks": {"Stop": [{"hooks": [{"command": "guard"}]}]}}"#,
    )
    .unwrap();
    std::fs::write(
        &project,
        r#"{"disableAllHooks": true, "hooks": {"Stop": [{"hooks": [{"command": "p"}]}]}}"#,
    )
    .unwrap();
    let mut loader = Loader::new();
    loader.settings_file(&user, &Scope::User, &[]);
    loader.settings_file(&project, &Scope::Project, &[]);
    let loaded = loader.finish();
    let commands: Vec<&str> = loaded.defs.iter().map(|d| d.command.as_str()).collect();
    assert_eq!(commands, ["guard"]);
    assert!(
        loaded.warnings[0].contains("the project hooks are off"),
        "{:?}",
        loaded.warnings
    );
    // The person's own switch turns everything off.
    std::fs::write(&user, r#"{"disableAllHooks": true}"#).unwrap();
    std::fs::write(
        &project,
        r#"{"hooks": {"Stop": [{"hooks": [{"command": "p"}]}]}}"#,
    )
    .unwrap();
    let mut loader = Loader::new();
    loader.settings_file(&user, &Scope::User, &[]);
    loader.settings_file(&project, &Scope::Project, &[]);
    let loaded = loader.finish();
    assert!(loaded.defs.is_empty());
    assert!(
        loaded.warnings[0].contains("every hook is off"),
        "{:?}",
        loaded.warnings
    );
}

fn load(text: &str) -> Loaded {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(&path, text).unwrap();
    let mut loader = Loader::new();
    loader.settings_file(&path, &Scope::Project, &[]);
    loader.finish()
}

#[test]
fn a_claude_code_settings_file_loads_as_it_is() {
    let loaded = load(
        r#"{
  "permissions": {"allow": ["Bash(npm test)"]},
  "hooks": {
"PreToolUse": [
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]},
  {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "npx prettier --write"}]}
],
"Stop": [{"hooks": [{"type": "command", "command": "./check.sh"}]}]
  }
}"#,
    );
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let names: Vec<&str> = loaded.defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "project:PreToolUse:1",
            "project:PreToolUse:2",
            "project:Stop:1"
        ]
    );
    assert_eq!(loaded.defs[0].timeout, Duration::from_secs(5));
    assert_eq!(loaded.defs[0].origin.line, 5);
    assert_eq!(loaded.defs[1].timeout, DEFAULT_TIMEOUT);
}

#[test]
fn bad_entries_are_warnings_naming_the_line_and_the_rest_loads() {
    let loaded = load(
        r#"{"hooks": {
  "PreToolUs": [{"hooks": [{"type": "command", "command": "a"}]}],
  "PostToolUse": [
{"matcher": "Bash(", "hooks": [{"type": "command", "command": "b"}]},
{"hooks": [{"type": "prompt", "prompt": "is it done?"}]},
{"hooks": [{"type": "command"}]},
{"hooks": [{"type": "command", "command": "c", "timeout": -1}]},
{"hooks": [{"type": "command", "command": "d"}]}
  ]
}}"#,
    );
    let all = loaded.warnings.join("\n");
    assert!(
        all.contains(":2: unknown hook event `PreToolUs`, did you mean PreToolUse?"),
        "{all}"
    );
    assert!(all.contains(":4: matcher `Bash(`"), "{all}");
    assert!(all.contains("type `prompt` are not run"), "{all}");
    assert!(all.contains("has no command"), "{all}");
    assert!(all.contains(":7: a hook's timeout"), "{all}");
    let commands: Vec<&str> = loaded.defs.iter().map(|d| d.command.as_str()).collect();
    assert_eq!(commands, ["c", "d"]);
}

#[test]
fn keys_written_with_escapes_and_other_scripts_never_break_the_lines() {
    let loaded = load(
        r#"{"hooks": {"Stop": [{"\u00e9": 1}, {"hooks": [{"command": "echo é"}]}],
 "SessionEnd": [{"hooks": [{"command": "echo 終わり"}]}]}}"#,
    );
    assert_eq!(loaded.defs.len(), 2);
    assert!(
        loaded.warnings[0].contains("unknown key `é`"),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn a_toml_table_s_events_get_their_own_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    let text = "[[hooks.Stop]]\nhooks = [{ command = \"a\" }]\n\n[[hooks.PreToolUse]]\nmatcher = \"Bash(\"\nhooks = []\n";
    std::fs::write(&path, text).unwrap();
    // As cox's config reader hands it over: events in another order.
    let value = serde_json::json!({
        "PreToolUse": [{"hooks": [], "matcher": "Bash("}],
        "Stop": [{"hooks": [{"command": "a"}]}]
    });
    let mut loader = Loader::new();
    loader.hooks_value(&value, text, &path, &Scope::User, &[]);
    let loaded = loader.finish();
    assert!(
        loaded.warnings[0].contains("config.toml:5: matcher `Bash(`"),
        "{:?}",
        loaded.warnings
    );
    assert_eq!(loaded.defs[0].origin.line, 2);
}

#[test]
fn a_file_that_is_not_json_is_one_warning() {
    let loaded = load("{\n  \"hooks\": {\n    \"Stop\": [,]\n}");
    assert!(loaded.defs.is_empty());
    assert_eq!(loaded.warnings.len(), 1);
    assert!(
        loaded.warnings[0].contains(":3: not valid JSON"),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn a_changed_command_is_a_new_fingerprint_and_a_timeout_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    let fingerprint = |text: &str| {
        std::fs::write(&path, text).unwrap();
        let mut loader = Loader::new();
        loader.settings_file(&path, &Scope::Project, &[]);
        loader.finish().defs[0].fingerprint()
    };
    let one = fingerprint(r#"{"hooks": {"Stop": [{"hooks": [{"command": "one"}]}]}}"#);
    let two = fingerprint(r#"{"hooks": {"Stop": [{"hooks": [{"command": "two"}]}]}}"#);
    let slower =
        fingerprint(r#"{"hooks": {"Stop": [{"hooks": [{"command": "one", "timeout": 9}]}]}}"#);
    let moved = fingerprint(r#"{"hooks": {"SessionEnd": [{"hooks": [{"command": "one"}]}]}}"#);
    assert_ne!(one, two);
    assert_ne!(one, moved);
    assert_eq!(one, slower);
}
