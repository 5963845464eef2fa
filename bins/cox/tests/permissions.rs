//! Permissions through the real binary: rules from flags and config files,
//! the project-trust rule, config errors with file and line, and
//! `cox permissions check`.

mod common;

use common::{Env, assert_one_line_error, lines, stderr};
use serde_json::Value;

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn tool_result(out: &std::process::Output) -> Value {
    lines(out)
        .into_iter()
        .find(|l| l["type"] == "tool_call_done")
        .expect("a tool call finished")["result"]
        .clone()
}

#[test]
fn a_deny_flag_refuses_a_compound_line_even_in_bypass_mode() {
    let env = Env::new();
    write(&env.work.path().join("victim.txt"), "keep me");
    let out = env.run(
        "rm_line",
        &[
            "--output-format",
            "stream-json",
            "--permission-mode",
            "bypassPermissions",
            "--deny",
            "Bash(rm:*)",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        env.work.path().join("victim.txt").exists(),
        "the rm did not run"
    );
    let result = tool_result(&out);
    assert_eq!(result["denied"], true);
    assert!(
        result["visible"].as_str().unwrap().contains("Bash(rm:*)"),
        "{result}"
    );
    let requested = lines(&out)
        .into_iter()
        .find(|l| l["type"] == "tool_call_requested")
        .unwrap();
    assert_eq!(
        requested["call"]["segments"]["commands"][1],
        "rm victim.txt"
    );
}

#[test]
fn an_allow_rule_covering_every_command_runs_the_line() {
    let env = Env::new();
    write(&env.work.path().join("victim.txt"), "x");
    let out = env.run(
        "rm_line",
        &[
            "--output-format",
            "json",
            "--allow",
            "Bash(echo:*)",
            "--allow",
            "Bash(rm:*)",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!env.work.path().join("victim.txt").exists());
    // One command uncovered: the line asks, so headless it is denied.
    let env = Env::new();
    write(&env.work.path().join("victim.txt"), "x");
    let out = env.run(
        "rm_line",
        &["--output-format", "json", "--allow", "Bash(echo:*)"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(env.work.path().join("victim.txt").exists());
}

#[test]
fn a_project_config_denies_but_cannot_allow() {
    let env = Env::new();
    write(&env.work.path().join("victim.txt"), "x");
    write(
        &env.work.path().join(".cox/config.toml"),
        "[permissions]\nallow = [\"Bash\"]\nmode = \"bypassPermissions\"\n",
    );
    let out = env.run("rm_line", &["--output-format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "the project's allow and mode were ignored"
    );
    let err = stderr(&out);
    assert!(
        err.contains("ignoring 1 allow rule(s) of this project until you trust them"),
        "{err}"
    );
    assert!(err.contains("`Bash` ("), "{err}");
    assert!(err.contains("ignoring mode `bypassPermissions`"), "{err}");
    assert!(env.work.path().join("victim.txt").exists());

    let env = Env::new();
    write(&env.work.path().join("victim.txt"), "x");
    write(
        &env.work.path().join(".cox/config.toml"),
        "[permissions]\ndeny = [\"Bash(rm:*)\"]\n",
    );
    let out = env.run(
        "rm_line",
        &[
            "--output-format",
            "json",
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        env.work.path().join("victim.txt").exists(),
        "the project's deny held"
    );
}

#[test]
fn the_users_config_rules_and_mode_apply() {
    let env = Env::new();
    write(&env.work.path().join("victim.txt"), "x");
    write(
        &env.home.path().join("config.toml"),
        "[permissions]\nmode = \"auto\"\n",
    );
    let out = env.run("rm_line", &["--output-format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "auto mode runs commands: {}",
        stderr(&out)
    );
    assert!(!env.work.path().join("victim.txt").exists());
}

#[test]
fn config_errors_name_the_file_and_line() {
    let env = Env::new();
    let config = env.home.path().join("config.toml");
    write(
        &config,
        "[permissions]\nallow = [\n  \"Bash(git:*)\",\n  \"Bash(rm:*\",\n]\n",
    );
    let out = env.run("hello", &[]);
    assert_one_line_error(&out, "config.toml:4: invalid permission rule `Bash(rm:*`");

    write(&config, "[permissions]\nmode = \"yolo\"\n");
    let out = env.run("hello", &[]);
    assert_one_line_error(&out, "config.toml:2:");
    assert!(stderr(&out).contains("yolo"));

    write(&config, "[permissions\nallow = []\n");
    let out = env.run("hello", &[]);
    assert_one_line_error(&out, "config.toml:1:");

    // A value of the wrong type: the key with its table, in plain words.
    write(&config, "[budget]\nsession_usd = \"ten\"\n");
    let out = env.run("hello", &[]);
    assert_one_line_error(
        &out,
        "config.toml:2: `budget.session_usd`: invalid type: string \"ten\", expected a number",
    );
    write(&config, "[context]\nkeep_turns = -1\n");
    let out = env.run("hello", &[]);
    assert_one_line_error(&out, "`context.keep_turns`:");
    assert!(stderr(&out).contains("whole number"), "{}", stderr(&out));

    write(&config, "[permissions]\nallowed = []\n");
    let out = env.run("hello", &[]);
    assert_one_line_error(&out, "config.toml:2:");
    assert!(stderr(&out).contains("allowed"));

    std::fs::remove_file(&config).unwrap();
    let out = env
        .cox()
        .args(["run", "-p", "x", "--deny", "Bash("])
        .output()
        .unwrap();
    assert_one_line_error(&out, "invalid permission rule `Bash(`");
}

#[test]
fn check_explains_a_compound_line_command_by_command() {
    let env = Env::new();
    let out = env
        .cox()
        .args([
            "permissions",
            "check",
            "--tool",
            "bash",
            "--input",
            r#"{"command": "git status && nohup rm -rf build && make"}"#,
            "--allow",
            "Bash(git:*)",
            "--deny",
            "Bash(rm:*)",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["decision"], "deny");
    assert!(value["reason"].as_str().unwrap().contains("Bash(rm:*)"));
    let rows: Vec<(String, String)> = value["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["command"].as_str().unwrap().to_owned(),
                c["verdict"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("git status".to_owned(), "allow".to_owned()),
            ("rm -rf build".to_owned(), "deny".to_owned()),
            ("make".to_owned(), "none".to_owned()),
        ]
    );

    let out = env
        .cox()
        .args([
            "permissions",
            "check",
            "--tool",
            "read",
            "--input",
            r#"{"path": "src/lib.rs"}"#,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("decision: allow"), "{text}");
    assert!(
        text.contains("read-only calls run without asking"),
        "{text}"
    );

    let out = env
        .cox()
        .args(["permissions", "check", "--tool", "bash", "--input", "{nope"])
        .output()
        .unwrap();
    assert_one_line_error(&out, "--input is not JSON");
}

/// The write tool in bypass mode: a file that tells the next session what
/// to run (`.claude/settings.json`, a hook's script, `.mcp.json`, an
/// instruction file) asks, so headless it is refused; an ordinary file is
/// written.
#[test]
fn bypass_mode_still_asks_before_the_file_tools_write_settings_or_instructions() {
    for path in [
        ".claude/settings.json",
        ".claude/hooks/guard.sh",
        ".cox/config.toml",
        ".mcp.json",
        "AGENTS.md",
        "docs/CLAUDE.md",
    ] {
        let env = Env::new();
        let out = plant(&env, path);
        assert_eq!(out.status.code(), Some(2), "{path}: {}", stderr(&out));
        assert!(!env.work.path().join(path).exists(), "{path}");
        let result = tool_result(&out);
        assert_eq!(result["denied"], true, "{path}: {result}");
        assert!(
            result["visible"]
                .as_str()
                .unwrap()
                .contains("asks in every mode"),
            "{path}: {result}"
        );
    }
    let env = Env::new();
    let out = env.run(
        "hello",
        &[
            "--output-format",
            "json",
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(env.work.path().join("hello.txt").exists());
}

/// Calls of one turn are all decided before the first runs: a link an
/// earlier call makes must not carry a later file tool past its decision
/// (a protected name, a deny rule). The later call is refused, saying the
/// path leads elsewhere now.
#[test]
fn a_link_made_earlier_in_the_turn_does_not_carry_a_file_tool_past_its_decision() {
    let env = Env::new();
    write(&env.work.path().join(".env"), "SECRET=hunter2\n");
    let scenario = env.home.path().join("links.toml");
    write(
        &scenario,
        r#"[[turn]]
[[turn.tool_call]]
name = "bash"
input = { command = "mkdir -p .claude && ln -s .claude/settings.json s.json && ln -s $(echo .env) k" }
[[turn.tool_call]]
name = "write"
input = { path = "s.json", content = "{\"hooks\":{}}" }
[[turn.tool_call]]
name = "read"
input = { path = "k" }

[[turn]]
text = "done"
"#,
    );
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "go", "--output-format", "stream-json"])
        .args([
            "--permission-mode",
            "bypassPermissions",
            "--deny",
            "Read(./.env)",
        ])
        .output()
        .unwrap();
    let results: Vec<Value> = lines(&out)
        .into_iter()
        .filter(|l| l["type"] == "tool_call_done")
        .map(|l| l["result"].clone())
        .collect();
    assert_eq!(results.len(), 3, "{}", stderr(&out));
    for result in &results[1..] {
        assert_eq!(result["ok"], false, "{result}");
        assert!(
            result["visible"]
                .as_str()
                .unwrap()
                .contains("a link was made or moved since"),
            "{result}"
        );
    }
    assert!(!String::from_utf8_lossy(&out.stdout).contains("hunter2"));
    let planted = env.work.path().join(".claude/settings.json");
    assert!(!planted.exists(), "the write went through the link");
}

/// Where a protected name that is a link leads is protected for the file
/// tools too, and a git folder by another name (`--separate-git-dir`) is
/// refused like `.git`.
#[test]
fn a_protected_links_target_and_a_separate_git_folder_are_not_written() {
    let env = Env::new();
    let w = env.work.path();
    std::fs::create_dir_all(w.join("config/claude")).unwrap();
    std::os::unix::fs::symlink("config/claude", w.join(".claude")).unwrap();
    let git = std::process::Command::new("git")
        .args(["init", "-q", "--separate-git-dir=gd", "."])
        .current_dir(w)
        .output()
        .unwrap();
    assert!(git.status.success());
    for path in [
        "config/claude/settings.json",
        "gd/hooks/pre-commit",
        "gd/config",
    ] {
        let before = std::fs::read(w.join(path)).ok();
        let out = plant(&env, path);
        let result = tool_result(&out);
        assert_eq!(result["ok"], false, "{path}: {result}");
        assert_eq!(std::fs::read(w.join(path)).ok(), before, "{path}");
    }
}

/// `cox run` in bypass mode, stream-json, of a scenario whose first turn
/// calls `write` on `path`, then says done.
fn plant(env: &Env, path: &str) -> std::process::Output {
    let scenario = env.home.path().join("plant.toml");
    write(
        &scenario,
        &format!(
            "[[turn]]\n[[turn.tool_call]]\nname = \"write\"\ninput = {{ path = \"{path}\", content = \"planted\" }}\n\n[[turn]]\ntext = \"done\"\n"
        ),
    );
    env.cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "plant", "--output-format", "stream-json"])
        .args(["--permission-mode", "bypassPermissions"])
        .output()
        .unwrap()
}

fn read_result(env: &Env, extra: &[&str]) -> (Option<i32>, Value, String) {
    let mut args = vec!["--output-format", "stream-json"];
    args.extend_from_slice(extra);
    let out = env.run("read_env", &args);
    let result = tool_result(&out);
    (out.status.code(), result, stderr(&out))
}

/// Claude Code's settings files count: a deny or ask rule from the
/// managed file, the person's own or the project's holds (the project's
/// before anyone trusts it), whatever the mode.
#[test]
fn claude_code_settings_deny_rules_hold_from_every_scope() {
    let deny = r#"{"permissions": {"deny": ["Read(./.env)"]}}"#;
    for file in [
        "managed",
        "user",
        ".claude/settings.json",
        ".claude/settings.local.json",
    ] {
        let env = Env::new();
        write(&env.work.path().join(".env"), "SECRET=1\n");
        let path = match file {
            "managed" => env.managed_settings(),
            "user" => env.home.path().join(".claude/settings.json"),
            project => env.work.path().join(project),
        };
        write(&path, deny);
        let (_, result, err) = read_result(&env, &["--permission-mode", "bypassPermissions"]);
        assert_eq!(result["denied"], true, "{file}: {result} {err}");
        assert!(!result.to_string().contains("SECRET=1"), "{file}: {result}");
        assert!(
            result["visible"].as_str().unwrap().contains("Read(./.env)"),
            "{file}: {result}"
        );
    }
    // And without the rule the read goes through: the scenario is sound.
    let env = Env::new();
    write(&env.work.path().join(".env"), "SECRET=1\n");
    let (_, result, err) = read_result(&env, &["--permission-mode", "bypassPermissions"]);
    assert!(result.to_string().contains("SECRET=1"), "{result} {err}");
}

/// A project's allow rules take effect once the person trusts each as it
/// is written (`cox ext trust --all`); a changed rule waits again, and the
/// project's deny rules hold over its trusted allows.
#[test]
fn a_project_allow_rule_counts_once_trusted_and_waits_again_when_changed() {
    let env = Env::new();
    write(&env.work.path().join("victim.txt"), "x");
    let config = env.work.path().join(".cox/config.toml");
    write(
        &config,
        "[permissions]\nallow = [\"Bash(echo:*)\", \"Bash(rm:*)\"]\n",
    );
    // Untrusted: the line asks, so headless it is denied.
    let out = env.run("rm_line", &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(env.work.path().join("victim.txt").exists());
    let err = stderr(&out);
    assert!(err.contains("ignoring 2 allow rule(s)"), "{err}");
    assert!(err.contains("`Bash(rm:*)` ("), "{err}");
    assert!(err.contains("config.toml:2)"), "{err}");

    // `cox ext trust` lists them; `--all` trusts them.
    let list = env.cox().args(["ext", "trust"]).output().unwrap();
    let listed = String::from_utf8_lossy(&list.stdout).to_string();
    assert!(
        listed.contains("2 allow rule(s) wait for trust"),
        "{listed}"
    );
    assert!(listed.contains("allow Bash(rm:*)"), "{listed}");
    let trusted = env.cox().args(["ext", "trust", "--all"]).output().unwrap();
    assert_eq!(trusted.status.code(), Some(0), "{}", stderr(&trusted));
    let out = env.run("rm_line", &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!env.work.path().join("victim.txt").exists());
    assert!(!stderr(&out).contains("allow rule(s)"), "{}", stderr(&out));

    // A rule changed after the trust waits again.
    write(&env.work.path().join("victim.txt"), "x");
    write(
        &config,
        "[permissions]\nallow = [\"Bash(echo:*)\", \"Bash(rm *)\"]\n",
    );
    let out = env.run("rm_line", &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(env.work.path().join("victim.txt").exists());
    assert!(
        stderr(&out).contains("ignoring 1 allow rule(s)"),
        "{}",
        stderr(&out)
    );

    // A trusted allow never lifts a deny, the project's own included.
    write(
        &config,
        "[permissions]\nallow = [\"Bash(echo:*)\", \"Bash(rm:*)\"]\ndeny = [\"Bash(rm:*)\"]\n",
    );
    let out = env.run("rm_line", &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(env.work.path().join("victim.txt").exists());

    // The same trust holds for a Claude Code project file.
    let env = Env::new();
    write(&env.work.path().join("victim.txt"), "x");
    write(
        &env.work.path().join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Bash(echo:*)", "Bash(rm:*)"]}}"#,
    );
    let out = env.run("rm_line", &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let trusted = env
        .cox()
        .args(["ext", "trust", "project"])
        .output()
        .unwrap();
    assert_eq!(trusted.status.code(), Some(0), "{}", stderr(&trusted));
    let out = env.run("rm_line", &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!env.work.path().join("victim.txt").exists());
}

#[test]
fn a_projects_claude_settings_cannot_allow_or_widen_the_mode() {
    let env = Env::new();
    write(&env.work.path().join(".env"), "SECRET=1\n");
    write(
        &env.work.path().join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Read"], "defaultMode": "bypassPermissions"}}"#,
    );
    let (code, result, err) = read_result(&env, &[]);
    // The read tool reads without asking in the default mode; the point
    // is the warnings, and that bypass did not come from the project.
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("`Read` ("), "{err}");
    assert!(err.contains(".claude/settings.json:1)"), "{err}");
    assert!(
        err.contains("ignoring defaultMode `bypassPermissions`"),
        "{err}"
    );
    assert!(result.to_string().contains("SECRET=1"), "{result}");
}

#[test]
fn managed_settings_set_the_mode_over_flags_and_can_forbid_bypass() {
    let env = Env::new();
    write(&env.work.path().join("victim.txt"), "x");
    write(
        &env.managed_settings(),
        r#"{"permissions": {"defaultMode": "default"}}"#,
    );
    let out = env.run(
        "rm_line",
        &["--output-format", "json", "--permission-mode", "auto"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(env.work.path().join("victim.txt").exists());

    write(
        &env.home.path().join(".claude/settings.json"),
        "{\n  \"permissions\": {\n    \"disableBypassPermissionsMode\": \"disable\"\n  }\n}\n",
    );
    std::fs::remove_file(env.managed_settings()).unwrap();
    let out = env.run("rm_line", &["--dangerously-skip-permissions"]);
    assert_one_line_error(&out, "settings.json:3: bypassPermissions mode");
    assert!(env.work.path().join("victim.txt").exists());
}

#[test]
fn a_broken_claude_settings_file_stops_the_session_naming_file_and_line() {
    let env = Env::new();
    let settings = env.work.path().join(".claude/settings.json");
    write(
        &settings,
        "{\n  \"permissions\": {\n    \"deny\": [\"Read(./.env)\",]\n  }\n}\n",
    );
    let out = env.run("hello", &[]);
    assert_one_line_error(&out, ".claude/settings.json:3: not valid JSON");

    write(
        &settings,
        "{\n  \"permissions\": {\n    \"deny\": [\"Read(./.env\"]\n  }\n}\n",
    );
    let out = env.run("hello", &[]);
    assert_one_line_error(
        &out,
        ".claude/settings.json:3: invalid permission rule `Read(./.env`",
    );

    std::fs::remove_file(&settings).unwrap();
    std::fs::create_dir_all(env.managed_settings()).unwrap();
    let out = env.run("hello", &[]);
    assert_one_line_error(&out, "managed-settings.json: not a regular file");
}

#[test]
fn settings_cox_does_not_use_are_named_not_dropped() {
    let env = Env::new();
    write(&env.work.path().join(".env"), "SECRET=1\n");
    env.claude_settings(&serde_json::json!({"cleanupPeriodDays": 7, "colour": "blue"}));
    let (code, _, err) = read_result(&env, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("`cleanupPeriodDays` is a Claude Code setting cox does not use"),
        "{err}"
    );
    assert!(
        err.contains("`colour` is not a Claude Code setting cox knows"),
        "{err}"
    );
}

/// `--settings` adds a settings file (or its JSON) for the run, and
/// `--setting-sources` chooses which of the person's and the project's are
/// read, as the Agent SDKs pass them.
#[test]
fn settings_and_setting_sources_work_as_claude_codes() {
    let env = Env::new();
    write(&env.work.path().join(".env"), "SECRET=1\n");
    let deny = r#"{"permissions": {"deny": ["Read(./.env)"]}}"#;
    let (_, result, err) = read_result(&env, &["--settings", deny]);
    assert_eq!(result["denied"], true, "{result} {err}");

    let file = env.home.path().join("run-settings.json");
    write(&file, deny);
    let (_, result, err) = read_result(&env, &["--settings", file.to_str().unwrap()]);
    assert_eq!(result["denied"], true, "{result} {err}");

    // The project's deny is read by default, and not when the run leaves
    // the project's settings out.
    write(&env.work.path().join(".claude/settings.json"), deny);
    let (_, result, _) = read_result(&env, &[]);
    assert_eq!(result["denied"], true, "{result}");
    let (_, result, err) = read_result(&env, &["--setting-sources", "user,local"]);
    assert!(result.to_string().contains("SECRET=1"), "{result} {err}");

    let out = env.run("read_env", &["--setting-sources", "user,policy"]);
    assert_one_line_error(&out, "--setting-sources: `policy` is not a source");
    let out = env.run("read_env", &["--settings", "/nonexistent/s.json"]);
    assert_one_line_error(&out, "--settings /nonexistent/s.json: no such file");
}

/// `cox permissions check --json` of one call in `mode`.
fn check_json(env: &Env, tool: &str, input: &str, mode: &str) -> Value {
    let check = env
        .cox()
        .args([
            "permissions",
            "check",
            "--json",
            "--tool",
            tool,
            "--input",
            input,
        ])
        .args(["--permission-mode", mode])
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(0), "{tool}: {}", stderr(&check));
    serde_json::from_slice(&check.stdout).unwrap()
}

/// `cox permissions check` classifies every tool as a run does: the risk
/// the run reports for each call of `every_tool` is the check's for the
/// same call, in auto mode too (where the risk decides).
#[test]
fn the_check_classifies_every_tool_as_a_run_does() {
    let env = Env::new();
    write(&env.work.path().join("a.txt"), "a\n");
    let out = env.run("every_tool", &["--output-format", "stream-json"]);
    let requested: Vec<Value> = lines(&out)
        .into_iter()
        .filter(|l| l["type"] == "tool_call_requested")
        .map(|l| l["call"].clone())
        .collect();
    assert!(requested.len() >= 18, "{}", stderr(&out));
    for call in &requested {
        let name = call["name"].as_str().unwrap();
        let input = call["input"].to_string();
        for mode in ["default", "auto"] {
            let checked = check_json(&env, name, &input, mode);
            assert_eq!(checked["risk"], call["risk"], "{name} {input}: {checked}");
            assert_eq!(
                checked["subject"], call["subject"],
                "{name} {input}: {checked}"
            );
        }
    }
    // The two the check used to get wrong, decided: a worktree subagent is
    // destructive (auto asks, headless: denied), a fetch runs code's way.
    let agent = requested
        .iter()
        .find(|c| c["input"]["isolation"] == "worktree")
        .unwrap();
    assert_eq!(agent["risk"], "destructive");
    let checked = check_json(&env, "agent", &agent["input"].to_string(), "auto");
    assert_ne!(checked["decision"], "allow", "{checked}");
    let fetch = requested.iter().find(|c| c["name"] == "web_fetch").unwrap();
    assert_eq!(fetch["risk"], "exec");
}

/// `permissions.additionalDirectories` in the person's own settings works
/// as `--add-dir`; in a project's it is named and not used; a folder that
/// does not exist stops the session naming the file and line.
#[test]
fn additional_directories_from_the_persons_settings_are_workspace_roots() {
    let env = Env::new();
    let extra = tempfile::tempdir().unwrap();
    let target = extra.path().join("out.txt");
    let scenario = env.home.path().join("write_extra.toml");
    write(
        &scenario,
        &format!(
            "[[turn]]\n[[turn.tool_call]]\nname = \"write\"\ninput = {{ path = {:?}, content = \"x\\n\" }}\n\n[[turn]]\ntext = \"done\"\n",
            target.display().to_string()
        ),
    );
    let run = || {
        env.cox()
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", &scenario)
            .args(["run", "-p", "go", "--permission-mode", "acceptEdits"])
            .output()
            .unwrap()
    };
    let dirs = serde_json::json!({"permissions": {"additionalDirectories": [extra.path()]}});
    // A project's is not used.
    write(
        &env.work.path().join(".claude/settings.json"),
        &dirs.to_string(),
    );
    let out = run();
    assert!(!target.exists(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ignoring `permissions.additionalDirectories`"),
        "{}",
        stderr(&out)
    );
    // The person's own is a root.
    env.claude_settings(&dirs);
    let out = run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "x\n");
    // A folder that is not there.
    env.claude_settings(&serde_json::json!({
        "permissions": {"additionalDirectories": ["/nonexistent/dir"]}
    }));
    let out = run();
    assert_one_line_error(
        &out,
        ".claude/settings.json:1: permissions.additionalDirectories",
    );
}
