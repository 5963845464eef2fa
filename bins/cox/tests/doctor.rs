//! `cox doctor` through the real binary: a healthy home, a damaged
//! `cox.db`, an unwritable home, unpriced and stale models, a broken config,
//! and the JSON shape. Every test runs in a temporary COX_HOME.

mod common;

use std::process::Output;

use common::{Env, stderr};
use serde_json::Value;

fn doctor(env: &Env, extra: &[&str]) -> Output {
    env.cox().arg("doctor").args(extra).output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The report as JSON rows.
fn rows(env: &Env) -> (Output, Vec<Value>) {
    let out = doctor(env, &["--json"]);
    let rows: Vec<Value> =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    (out, rows)
}

/// The row of `check`.
fn row<'a>(rows: &'a [Value], check: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["check"] == check)
        .unwrap_or_else(|| panic!("no {check} row in {rows:?}"))
}

fn write_config(env: &Env, text: &str) {
    std::fs::write(env.home.path().join("config.toml"), text).unwrap();
}

#[test]
fn a_healthy_empty_home_passes_and_never_prints_a_key() {
    let env = Env::new();
    let secret = "sk-ant-api03-ZZdoctorNEVERprintsTHISzz";
    let out = env
        .cox()
        .arg("doctor")
        .env("ANTHROPIC_API_KEY", secret)
        .output()
        .unwrap();
    let (text, err) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{text}{err}");
    assert!(
        !text.contains(secret) && !err.contains(secret),
        "{text}{err}"
    );
    assert!(!text.contains("ZZdoctor"), "no part of it either: {text}");
    assert!(
        text.contains(&format!(
            "ANTHROPIC_API_KEY set ({} characters); OPENAI_API_KEY not set",
            secret.len()
        )),
        "{text}"
    );
    for line in text.lines() {
        assert!(
            ["ok    ", "warn  "].iter().any(|s| line.starts_with(s)),
            "{line}"
        );
    }
    assert!(text.contains("not created yet"), "{text}");
    assert!(
        !env.home.path().join("cox.db").exists(),
        "doctor does not create the database"
    );
    let left: Vec<_> = std::fs::read_dir(env.home.path()).unwrap().collect();
    assert!(left.is_empty(), "the probe file is removed: {left:?}");
}

#[test]
fn a_database_cox_wrote_is_checked_and_reports_its_schema() {
    let env = Env::new();
    let run = env.run("hello", &["--permission-mode", "acceptEdits"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert!(env.home.path().join("cox.db").exists());
    let (out, rows) = rows(&env);
    assert_eq!(out.status.code(), Some(0), "{rows:?}");
    let db = row(&rows, "cox.db");
    assert_eq!(db["status"], "ok", "{db}");
    assert!(
        db["detail"].as_str().unwrap().contains("schema version"),
        "{db}"
    );
}

#[test]
fn a_corrupt_database_fails_and_is_left_as_it_was() {
    let env = Env::new();
    let path = env.home.path().join("cox.db");
    let garbage = "this is not a database, it is cox.db written over by mistake\n".repeat(80);
    std::fs::write(&path, &garbage).unwrap();
    let (out, rows) = rows(&env);
    assert_eq!(out.status.code(), Some(1));
    let db = row(&rows, "cox.db");
    assert_eq!(db["status"], "fail", "{db}");
    let detail = db["detail"].as_str().unwrap();
    assert!(detail.starts_with("cox.db at "), "{detail}");
    assert!(!detail.contains('\n'), "{detail}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), garbage);
}

#[test]
fn a_home_under_a_regular_file_fails() {
    let env = Env::new();
    let file = env.work.path().join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let home = file.join("home");
    let out = env
        .cox()
        .args(["doctor", "--json"])
        .env("COX_HOME", &home)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let home_row = row(&rows, "cox home");
    assert_eq!(home_row["status"], "fail", "{home_row}");
    let detail = home_row["detail"].as_str().unwrap();
    assert!(detail.contains(&*home.to_string_lossy()), "{detail}");
    assert!(detail.contains("os error"), "{detail}");
}

#[test]
fn a_tier_model_with_no_catalog_row_warns() {
    let env = Env::new();
    write_config(&env, "[tiers.code]\nmodel = \"mystery-model-9\"\n");
    let (out, rows) = rows(&env);
    assert_eq!(out.status.code(), Some(0), "a warning is not a failure");
    let prices = row(&rows, "model prices");
    assert_eq!(prices["status"], "warn", "{prices}");
    let detail = prices["detail"].as_str().unwrap();
    assert!(
        detail.contains("mystery-model-9 ([tiers.code]) has no catalog row"),
        "{detail}"
    );
    assert!(
        detail.contains("costs will be recorded as 0, estimated"),
        "{detail}"
    );
}

#[test]
fn a_stale_models_row_warns() {
    let env = Env::new();
    write_config(
        &env,
        r#"[models."old-model"]
provider = "openai"
context_window = 8192
max_output = 1024
prices_as_of = "2020-01"
prices = { input = 1.0, output = 2.0, cache_read = 0.1, cache_write = 0.0 }
"#,
    );
    let (out, rows) = rows(&env);
    assert_eq!(out.status.code(), Some(0));
    let dates = row(&rows, "price dates");
    assert_eq!(dates["status"], "warn", "{dates}");
    let detail = dates["detail"].as_str().unwrap();
    assert!(
        detail.contains("old-model (2020-01, your [models])"),
        "{detail}"
    );
    assert!(detail.contains("price row"), "{detail}");
}

#[test]
fn a_broken_config_fails_naming_file_and_line() {
    let env = Env::new();
    write_config(&env, "[tiers.code]\nmodel = \"a\"\nprovider = = \"x\"\n");
    let out = doctor(&env, &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("fail  config"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("config.toml:3:"), "{line}");
}

#[test]
fn a_path_without_bash_or_git_fails_the_sandbox_and_warns_about_git() {
    let env = Env::new();
    let out = env
        .cox()
        .args(["doctor", "--json"])
        .env("PATH", env.work.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(row(&rows, "sandbox")["status"], "fail", "{rows:?}");
    let git = row(&rows, "git");
    assert_eq!(git["status"], "warn", "{git}");
    assert!(
        git["detail"]
            .as_str()
            .unwrap()
            .contains("checkpoints need git"),
        "{git}"
    );
}

#[test]
fn the_checkpoint_store_says_its_size() {
    let env = Env::new();
    let (_, rows) = rows(&env);
    let row = rows.iter().find(|r| r["check"] == "checkpoints").unwrap();
    assert_eq!(row["status"], "ok", "{row}");
    let detail = row["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("0 B in 0 snapshot repositories, 0 B in 0 pre-images (0 rows)"),
        "{detail}"
    );
}

#[test]
fn json_is_an_array_of_status_check_detail() {
    let env = Env::new();
    let (out, rows) = rows(&env);
    assert_eq!(out.status.code(), Some(0), "{rows:?}");
    let checks: Vec<&str> = rows.iter().map(|r| r["check"].as_str().unwrap()).collect();
    assert_eq!(
        checks,
        [
            "config",
            "api keys",
            "cox home",
            "cox.db",
            "git",
            "checkpoints",
            "sandbox",
            "host settings",
            "landlock",
            "user namespaces",
            "sandbox proxy",
            "mcp servers",
            "hooks",
            "telemetry",
            "web search",
            "price dates",
            "model prices"
        ]
    );
    for r in &rows {
        let object = r.as_object().unwrap();
        let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["check", "detail", "status"], "{r}");
        assert!(
            ["ok", "warn", "fail"].contains(&r["status"].as_str().unwrap()),
            "{r}"
        );
        assert!(r["detail"].is_string(), "{r}");
    }
    assert_eq!(row(&rows, "api keys")["status"], "warn", "no key is set");
}

#[test]
fn the_mcp_servers_row_names_each_server_and_a_broken_entry() {
    let env = Env::new();
    let (_, before) = rows(&env);
    assert_eq!(row(&before, "mcp servers")["detail"], "none configured");
    std::fs::write(
        env.home.path().join("config.toml"),
        "[mcp_servers.mine]\ncommand = \"node\"\nnetwork = false\n",
    )
    .unwrap();
    std::fs::write(
        env.work.path().join(".mcp.json"),
        "{\"mcpServers\": {\"theirs\": {\"command\": \"x\"},\n \"bad\": {\"argz\": 1}}}",
    )
    .unwrap();
    let (_, after) = rows(&env);
    let mcp = row(&after, "mcp servers");
    assert_eq!(mcp["status"], "warn", "{mcp}");
    let detail = mcp["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("2: mine (user), theirs (project); ") && detail.contains(".mcp.json:2:"),
        "{detail}"
    );
    // What the sandbox leaves them is said.
    let sandbox = row(&after, "mcp sandbox");
    let said = sandbox["detail"].as_str().unwrap();
    assert!(
        said.contains("writes only the workspace") && said.contains("no network for mine"),
        "{said}"
    );
}

#[test]
fn the_hooks_row_counts_what_runs_and_warns_about_what_waits() {
    let env = Env::new();
    let (_, before) = rows(&env);
    assert_eq!(row(&before, "hooks")["detail"], "0 run, 0 wait for trust");
    std::fs::create_dir_all(env.work.path().join(".claude")).unwrap();
    std::fs::write(
        env.work.path().join(".claude/settings.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
    )
    .unwrap();
    let (_, after) = rows(&env);
    let hooks = row(&after, "hooks");
    assert_eq!(hooks["status"], "warn", "{hooks}");
    assert!(
        hooks["detail"]
            .as_str()
            .unwrap()
            .contains("1 wait for trust"),
        "{hooks}"
    );
}
