//! The config as `cox run` layers it (`cox config show --sources`), the
//! `[budget]` caps that stop a turn, and several cox processes writing one
//! `cox.db` at once.

mod common;

use common::{Env, lines, scenario, stderr};
use std::process::Command;

#[test]
fn config_show_names_the_source_of_every_key() {
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[permissions]\nallow = [\"Bash(git:*)\"]\nmode = \"acceptEdits\"\n\n[budget]\nsession_usd = 5.0\n\n[tiers.code]\nmodel = \"claude-opus-4-5\"\n",
    )
    .unwrap();
    std::fs::create_dir(env.work.path().join(".cox")).unwrap();
    std::fs::write(
        env.work.path().join(".cox/config.toml"),
        "[permissions]\ndeny = [\"Bash(rm:*)\"]\n\n[budget]\nsession_usd = 2.0\n\n[tiers.code]\nmodel = \"evil\"\n",
    )
    .unwrap();
    let out = env
        .cox()
        .env("COX_EFFORT", "high")
        .args([
            "config",
            "show",
            "--sources",
            "--json",
            "--deny",
            "Read(/x)",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let user = env.home.path().join("config.toml").display().to_string();
    let project = std::fs::canonicalize(env.work.path())
        .unwrap()
        .join(".cox/config.toml")
        .display()
        .to_string();
    let at = |key: &str| (shown[key]["value"].clone(), shown[key]["source"].clone());
    assert_eq!(
        at("permissions.mode"),
        ("acceptEdits".into(), format!("{user}:3").into())
    );
    assert_eq!(
        at("budget.session_usd"),
        (2.0.into(), format!("{project}:5").into()),
        "a project may lower a cap"
    );
    assert_eq!(at("core.effort"), ("high".into(), "COX_EFFORT".into()));
    assert_eq!(
        at("tiers.code.model"),
        ("claude-opus-4-5".into(), format!("{user}:9").into())
    );
    assert_eq!(at("core.mode"), ("editor".into(), "default".into()));
    let deny = shown["permissions.deny"].as_array().unwrap();
    assert_eq!(deny[0]["source"], format!("{project}:2"));
    assert_eq!(
        deny[1],
        serde_json::json!({"value": "Read(/x)", "source": "--deny"})
    );
    assert!(
        shown["ignored"][0]
            .as_str()
            .unwrap()
            .starts_with("tiers.code.model"),
        "{}",
        shown["ignored"]
    );

    // A flag beats them all.
    let out = env
        .cox()
        .args(["config", "show", "--sources", "--model", "m2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("tiers.code.model"))
        .unwrap();
    assert!(
        line.contains("= m2") && line.ends_with("# --model"),
        "{line}"
    );
}

#[test]
fn a_broken_config_is_one_line_naming_the_file() {
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[budget]\nsession_usd = \"lots\"\n",
    )
    .unwrap();
    let out = env.cox().args(["config", "show"]).output().unwrap();
    common::assert_one_line_error(&out, "config.toml:2");
    std::fs::write(
        env.home.path().join("config.toml"),
        "[budget]\nmonthly_usd = -1\n",
    )
    .unwrap();
    let out = env.cox().args(["run", "-p", "hi"]).output().unwrap();
    common::assert_one_line_error(&out, "config.toml:2: [budget] monthly_usd must be");
}

#[test]
fn a_session_budget_stops_the_turn_before_the_call_that_would_cross_it() {
    let env = Env::new();
    std::fs::write(env.work.path().join("notes.txt"), "alpha\n").unwrap();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[budget]\nsession_usd = 5.0\n",
    )
    .unwrap();
    let out = env.run("budget", &["--output-format", "stream-json"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "budget is exit 3: {}",
        stderr(&out)
    );
    let lines = lines(&out);
    let usage = lines.iter().filter(|l| l["type"] == "usage").count();
    assert_eq!(usage, 1, "$3 spent, the next call would reach $6 > $5");
    let notice = lines
        .iter()
        .find(|l| l["type"] == "notice" && l["text"].as_str().unwrap().contains("budget"))
        .expect("a notice naming the cap");
    let text = notice["text"].as_str().unwrap();
    assert!(
        text.contains("session budget is $5.00") && text.contains("$3.0000 is spent"),
        "{text}"
    );
    assert_eq!(
        lines.iter().find(|l| l["type"] == "turn_done").unwrap()["stop"],
        "budget"
    );
    // A month cap counts every session of the month.
    std::fs::write(
        env.home.path().join("config.toml"),
        "[budget]\nmonthly_usd = 4.0\n",
    )
    .unwrap();
    let out = env.run("budget", &["--output-format", "stream-json"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let second = common::lines(&out);
    assert_eq!(
        second.iter().filter(|l| l["type"] == "usage").count(),
        1,
        "$3 spent this month before; a session's first call has no cost to go by, \
         so it runs ($6), and the month cap stops the next"
    );
    let notice = second.iter().find(|l| l["type"] == "notice").unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        notice.contains("monthly budget is $4.00") && notice.contains("$6.0000 is spent"),
        "{notice}"
    );
}

#[test]
fn several_processes_write_one_ledger_without_losing_a_row() {
    let env = Env::new();
    let children: Vec<_> = (0..6)
        .map(|_| {
            env.cox()
                .env("COX_PROVIDER", "scripted")
                .env("COX_SCENARIO", scenario("hello"))
                .args([
                    "run",
                    "-p",
                    "create hello.txt",
                    "--permission-mode",
                    "acceptEdits",
                ])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let db = cox_store::Db::open(&env.home.path().join("cox.db")).unwrap();
    let sessions = db.sessions().unwrap();
    assert_eq!(sessions.len(), 6);
    for session in &sessions {
        assert_eq!(session.turns, 1);
        assert_eq!(session.state.as_str(), "closed");
        let usage = db.usage_of(&session.id).unwrap();
        assert_eq!(usage.len(), 2, "two model calls in the hello session");
        assert!(
            usage
                .iter()
                .all(|u| u.turn == 1 && u.estimated && u.cost_usd == 0.0)
        );
    }
}

#[test]
fn a_corrupt_database_stops_cox_run_in_one_line_and_is_kept() {
    let env = Env::new();
    let db = env.home.path().join("cox.db");
    std::fs::write(&db, b"this is not a database, it is a shopping list").unwrap();
    let out = env.run("hello", &["--permission-mode", "acceptEdits"]);
    common::assert_one_line_error(&out, "cox.db at ");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        b"this is not a database, it is a shopping list"
    );
}

#[test]
fn cox_resume_of_an_unknown_session_is_one_line_before_the_screen_opens() {
    let out = Env::new()
        .cox()
        .args(["--resume", "01JABC"])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, "no session 01JABC");
}

#[test]
fn broken_rows_and_urls_are_one_line_before_anything_starts() {
    let cases: &[(&str, &str)] = &[
        (
            "[models.m]\nprovider = \"openai\"\ncontext_window = 100\nmax_output = 10\nprices = { input = nan, output = 1.0, cache_read = 0.0, cache_write = 0.0 }\n",
            "[models.\"m\"] prices must be",
        ),
        (
            "[models.m]\nprovider = \"openai\"\ncontext_window = 0\nmax_output = 10\n",
            "[models.\"m\"] context_window must be more than 0",
        ),
        (
            "[context]\ncompact_at = -1.0\n",
            "[context] compact_at must be",
        ),
        (
            "[providers.openai]\nbase_url = \"localhost:8080/v1\"\n",
            "is not an http:// or https:// URL",
        ),
    ];
    for (config, needle) in cases {
        let env = Env::new();
        std::fs::write(env.home.path().join("config.toml"), config).unwrap();
        let out = env
            .cox()
            .env("OPENAI_API_KEY", "k")
            .args(["run", "-p", "hi", "--provider", "openai", "--model", "m"])
            .output()
            .unwrap();
        common::assert_one_line_error(&out, needle);
        assert!(env.rollouts().is_empty(), "nothing started: {config}");
    }
}

#[test]
fn a_project_budget_that_is_not_an_amount_is_refused() {
    let env = Env::new();
    std::fs::create_dir(env.work.path().join(".cox")).unwrap();
    std::fs::write(
        env.work.path().join(".cox/config.toml"),
        "[budget]\nsession_usd = nan\n",
    )
    .unwrap();
    let out = env.run("hello", &[]);
    common::assert_one_line_error(&out, "[budget] session_usd must be an amount");
}

#[test]
fn the_provider_flag_beats_the_configs_code_tier() {
    let (url, server) = common::serve(vec![("200 OK", common::openai_final_text())]);
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[tiers.code]\nprovider = \"anthropic\"\n",
    )
    .unwrap();
    let out = env
        .cox()
        .env("OPENAI_BASE_URL", format!("{url}/v1"))
        .args([
            "run",
            "-p",
            "hi",
            "--provider",
            "openai",
            "--model",
            "qwen3-coder",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body: serde_json::Value = serde_json::from_str(&server.join().unwrap()[0]).unwrap();
    assert_eq!(body["model"], "qwen3-coder");
}

#[test]
fn config_show_reads_the_permission_mode_variable_and_refuses_garbage() {
    let env = Env::new();
    let out = env
        .cox()
        .env("COX_PERMISSION_MODE", "plan")
        .args(["config", "show", "--sources"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("permissions.mode"))
        .unwrap();
    assert!(
        line.contains("= plan") && line.ends_with("# COX_PERMISSION_MODE"),
        "{line}"
    );
    let out = env
        .cox()
        .env("COX_EFFORT", "garbage")
        .args(["config", "show"])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, "COX_EFFORT=garbage: unknown effort");
}

/// Claude Code's settings files are shown with the rest: each rule with
/// its file, a project's allow rule as ignored, and the keys cox does not
/// use named.
#[test]
fn config_show_lists_claude_codes_settings_files() {
    let env = Env::new();
    env.claude_settings(&serde_json::json!({
        "permissions": {"deny": ["Read(./.env)"], "defaultMode": "acceptEdits"},
        "cleanupPeriodDays": 7,
        "model": "opus",
        "env": {"SHOWN_NOT_ITS_VALUE": "hunter2"}
    }));
    let project = env.work.path().join(".claude/settings.json");
    std::fs::create_dir_all(project.parent().unwrap()).unwrap();
    std::fs::write(
        &project,
        r#"{"permissions": {"allow": ["Bash"], "ask": ["Bash(git push:*)"]}}"#,
    )
    .unwrap();
    let out = env
        .cox()
        .args(["config", "show", "--sources", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let user = env
        .home
        .path()
        .join(".claude/settings.json")
        .display()
        .to_string();
    let project = std::fs::canonicalize(env.work.path())
        .unwrap()
        .join(".claude/settings.json")
        .display()
        .to_string();
    assert_eq!(
        shown["permissions.deny"],
        serde_json::json!([{"value": "Read(./.env)", "source": format!("{user}:1")}])
    );
    assert_eq!(
        shown["permissions.ask"],
        serde_json::json!([{"value": "Bash(git push:*)", "source": format!("{project}:1")}])
    );
    assert_eq!(shown["permissions.mode"]["value"], "acceptEdits");
    assert_eq!(shown["permissions.mode"]["source"], format!("{user}:1"));
    // The main model and the variables are shown as the plan has them; a
    // variable's value never is.
    assert_eq!(
        shown["tiers.code.model"]["value"],
        "opus (the think tier's model)"
    );
    assert_eq!(shown["tiers.code.model"]["source"], format!("{user}:1"));
    assert_eq!(shown["env.SHOWN_NOT_ITS_VALUE"]["value"], "(set)");
    assert!(!shown.to_string().contains("hunter2"));
    let ignored = shown["ignored"].to_string();
    assert!(
        ignored.contains("permissions.allow \\\"Bash\\\""),
        "{ignored}"
    );
    let text = env
        .cox()
        .args(["config", "show", "--sources"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("`cleanupPeriodDays` is a Claude Code setting cox does not use"),
        "{text}"
    );
}

/// One `cox run` reads each file it is set up from once: cox's config
/// files, Claude Code's settings files, the MCP sources (counted from the
/// system calls, with strace).
#[test]
fn one_run_reads_each_settings_file_once() {
    let strace = ["/usr/bin/strace", "/bin/strace"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    let Some(strace) = strace else {
        assert!(std::env::var_os("CI").is_none(), "CI must have strace");
        eprintln!("skipped: strace is not installed");
        return;
    };
    let env = Env::new();
    std::fs::write(env.home.path().join("config.toml"), "[core]\n").unwrap();
    env.claude_settings(&serde_json::json!({"permissions": {"deny": ["Read(./secrets/**)"]}}));
    let work = env.work.path();
    std::fs::create_dir_all(work.join(".cox")).unwrap();
    std::fs::create_dir_all(work.join(".claude")).unwrap();
    std::fs::create_dir_all(work.join(".git")).unwrap();
    std::fs::write(
        work.join(".cox/config.toml"),
        "[permissions]\ndeny = [\"Bash(rm:*)\"]\n",
    )
    .unwrap();
    std::fs::write(
        work.join(".claude/settings.json"),
        r#"{"permissions": {"ask": ["Bash(git push:*)"]}}"#,
    )
    .unwrap();
    std::fs::write(work.join(".claude/settings.local.json"), "{}").unwrap();
    std::fs::write(work.join(".mcp.json"), r#"{"mcpServers": {}}"#).unwrap();
    std::fs::write(
        env.home.path().join(".claude.json"),
        r#"{"mcpServers": {}}"#,
    )
    .unwrap();
    let flag_config = env.home.path().join("flag-mcp.json");
    std::fs::write(&flag_config, r#"{"mcpServers": {}}"#).unwrap();
    let trace = env.home.path().join("trace.txt");
    let cox = env.cox();
    let out = Command::new(strace)
        .args(["-f", "-e", "trace=open,openat,openat2", "-o"])
        .arg(&trace)
        .arg(cox.get_program())
        .args(["run", "-p", "hi", "--mcp-config"])
        .arg(&flag_config)
        .envs(cox.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario("read_env"))
        .current_dir(work)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let trace = std::fs::read_to_string(&trace).unwrap();
    let home = env.home.path();
    let work = std::fs::canonicalize(work).unwrap();
    for file in [
        home.join("config.toml"),
        home.join(".claude/settings.json"),
        work.join(".cox/config.toml"),
        work.join(".claude/settings.json"),
        work.join(".claude/settings.local.json"),
        work.join(".mcp.json"),
        home.join(".claude.json"),
        flag_config.clone(),
    ] {
        let opened = trace
            .lines()
            .filter(|l| l.contains(&format!("\"{}\"", file.display())) && !l.contains("ENOENT"))
            .count();
        assert!(opened <= 1, "{} opened {opened} times", file.display());
    }
}
