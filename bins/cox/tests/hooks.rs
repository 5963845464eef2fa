//! Hooks through the real binary: Claude Code's settings files as they
//! are, what each hook point is given and may do, hostile hooks, the trust
//! a project's hooks wait for, and `--no-hooks`.
//!
//! Each test writes its scenario (the scripted model's replies) and its
//! settings into temporary folders; hooks are real shell commands that
//! log what they read into files the test then reads.

mod common;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use common::ext::{run, scenario, write_json};
use common::{Env, lines, stderr};
use serde_json::{Value, json};

/// The person's own Claude Code settings (trusted as written).
fn user_settings(env: &Env, value: &Value) {
    write_json(&env.home.path().join(".claude/settings.json"), value);
}

/// The project's `.claude/settings.json` (pending until trusted).
fn project_settings(env: &Env, value: &Value) {
    write_json(&env.work.path().join(".claude/settings.json"), value);
}

fn hook(event: &str, matcher: &str, command: &str) -> Value {
    json!({"hooks": {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}})
}

/// The `hook_ran` events of a run.
fn hook_runs(out: &Output) -> Vec<Value> {
    lines(out)
        .into_iter()
        .filter(|l| l["type"] == "hook_ran")
        .collect()
}

/// Each line of a log file as JSON.
fn logged(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

const WRITE_THEN_DONE: &str = r#"
[[turn]]
[[turn.tool_call]]
name = "write"
input = { path = "hello.txt", content = "hi\n" }

[[turn]]
text = "Done."
"#;

#[test]
fn a_claude_code_settings_file_copied_as_it_is_runs_at_every_point() {
    let env = Env::new();
    let log = env.home.path().join("hooks.log");
    let append = format!("cat >> {}; echo >> {}", log.display(), log.display());
    // A settings file as Claude Code users have it: permissions (which
    // cox does not read from here) beside hooks for every point.
    let mut hooks = serde_json::Map::new();
    for event in [
        "PreToolUse",
        "PostToolUse",
        "UserPromptSubmit",
        "Stop",
        "SessionStart",
        "SessionEnd",
    ] {
        let matcher = if event.ends_with("ToolUse") {
            "Bash|Write"
        } else {
            ""
        };
        hooks.insert(
            event.into(),
            json!([{"matcher": matcher, "hooks": [{"type": "command", "command": append, "timeout": 30}]}]),
        );
    }
    user_settings(
        &env,
        &json!({"permissions": {"allow": ["Bash(npm test)"]}, "hooks": hooks}),
    );
    let path = scenario(env.home.path(), WRITE_THEN_DONE);
    let out = run(
        &env,
        &path,
        "create hello.txt",
        &["--permission-mode", "acceptEdits"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    let seen = logged(&log);
    let events: Vec<&str> = seen
        .iter()
        .map(|e| e["hook_event_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        events,
        [
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "Stop",
            "SessionEnd"
        ]
    );
    let cwd = std::fs::canonicalize(env.work.path()).unwrap();
    for event in &seen {
        assert_eq!(event["cwd"], cwd.display().to_string(), "{event}");
        assert_eq!(event["permission_mode"], "acceptEdits", "{event}");
        assert!(event["session_id"].as_str().unwrap().len() == 26, "{event}");
        let transcript = event["transcript_path"].as_str().unwrap();
        assert!(Path::new(transcript).exists(), "{transcript}");
    }
    assert_eq!(seen[0]["source"], "startup");
    assert_eq!(seen[1]["prompt"], "create hello.txt");
    assert_eq!(seen[2]["tool_name"], "Write");
    assert_eq!(
        seen[2]["tool_input"]["file_path"],
        cwd.join("hello.txt").display().to_string()
    );
    assert_eq!(seen[3]["tool_response"]["success"], true);
    assert_eq!(
        seen[3]["tool_response"]["filePath"],
        cwd.join("hello.txt").display().to_string()
    );
    assert_eq!(seen[4]["stop_hook_active"], false);
    assert_eq!(seen[4]["last_assistant_message"], "Done.");
    assert_eq!(seen[5]["reason"], "prompt_input_exit");
    // Every run is an event of the stream, with its hook, point and time.
    let runs = hook_runs(&out);
    assert_eq!(runs.len(), 6);
    for run in &runs {
        assert_eq!(run["outcome"], "ok", "{run}");
        assert!(run["duration_ms"].is_u64(), "{run}");
        assert!(run["hook"].as_str().unwrap().starts_with("user:"), "{run}");
    }
}

#[test]
fn exit_2_on_pre_tool_use_blocks_with_its_reason_for_the_model() {
    let env = Env::new();
    user_settings(
        &env,
        &hook(
            "PreToolUse",
            "Write",
            "echo 'writes are frozen until Monday' >&2; exit 2",
        ),
    );
    let path = scenario(
        env.home.path(),
        r#"
[[turn]]
[[turn.tool_call]]
name = "write"
input = { path = "hello.txt", content = "hi\n" }

[[turn]]
text = "I could not write it."
[turn.expect]
tool_result_contains = "writes are frozen until Monday"
tool_result_ok = false
"#,
    );
    let out = run(
        &env,
        &path,
        "create hello.txt",
        &["--permission-mode", "acceptEdits"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!env.work.path().join("hello.txt").exists());
    let runs = hook_runs(&out);
    assert_eq!(runs[0]["outcome"], "blocked");
    assert_eq!(runs[0]["message"], "writes are frozen until Monday");
}

/// A guard on a name holds when that name is a link: a call through a
/// link is shown as written (as Claude Code shows it) and as the file it
/// reaches, and a refusal of either refuses it; a rewrite both agree on
/// is kept.
#[test]
fn a_call_through_a_link_is_judged_by_both_names() {
    let env = Env::new();
    let work = env.work.path().canonicalize().unwrap();
    std::fs::create_dir(work.join("config")).unwrap();
    std::fs::write(work.join("config/local.conf"), "KEY=1\n").unwrap();
    std::os::unix::fs::symlink("config/local.conf", work.join(".env")).unwrap();
    std::fs::write(work.join("real.txt"), "old\n").unwrap();
    std::os::unix::fs::symlink("real.txt", work.join("alias.txt")).unwrap();
    // Refuses anything named .env; rewrites any other write's content.
    let guard = r#"input=$(cat); case "$input" in *'/.env"'*) echo 'no .env' >&2; exit 2;; esac; case "$input" in *'"tool_name":"Write"'*) printf '%s' "$input" | python3 -c 'import json,sys; i=json.load(sys.stdin)["tool_input"]; i["content"]="rewritten\n"; print(json.dumps({"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":i}}))';; esac; exit 0"#;
    user_settings(&env, &hook("PreToolUse", "", guard));
    let path = scenario(
        env.home.path(),
        r#"
[[turn]]
[[turn.tool_call]]
name = "read"
input = { path = ".env" }
[[turn.tool_call]]
name = "write"
input = { path = ".env", content = "KEY=pwned\n" }
[[turn.tool_call]]
name = "write"
input = { path = "alias.txt", content = "as the model wrote it\n" }

[[turn]]
text = "done"
"#,
    );
    let out = run(
        &env,
        &path,
        "change it",
        &["--permission-mode", "acceptEdits"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let done: Vec<Value> = lines(&out)
        .into_iter()
        .filter(|l| l["type"] == "tool_call_done")
        .collect();
    assert_eq!(done.len(), 3, "{done:?}");
    assert_eq!(
        done[0]["result"]["ok"], false,
        "the read of .env: {}",
        done[0]
    );
    assert_eq!(
        std::fs::read_to_string(work.join("config/local.conf")).unwrap(),
        "KEY=1\n"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("real.txt")).unwrap(),
        "rewritten\n",
        "the rewrite both runs agreed on was taken"
    );
}

/// A guard on a file sees the file a read really reads: a link to it is
/// shown as the file itself.
#[test]
fn a_hook_is_shown_the_file_a_read_really_reads() {
    let env = Env::new();
    let work = env.work.path().canonicalize().unwrap();
    std::fs::write(work.join("private.txt"), "do not read\n").unwrap();
    std::os::unix::fs::symlink("private.txt", work.join("public.txt")).unwrap();
    let guard = format!(
        "grep -q '\"file_path\":\"{}\"' && {{ echo 'private' >&2; exit 2; }}; exit 0",
        work.join("private.txt").display()
    );
    user_settings(&env, &hook("PreToolUse", "Read", &guard));
    let path = scenario(
        env.home.path(),
        r#"
[[turn]]
[[turn.tool_call]]
name = "read"
input = { path = "public.txt" }

[[turn]]
text = "It was refused."
[turn.expect]
tool_result_contains = "private"
tool_result_ok = false
"#,
    );
    let out = run(&env, &path, "read it", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let runs = hook_runs(&out);
    assert_eq!(runs[0]["outcome"], "blocked", "{runs:?}");
}

/// A guard on a file sees the file that would really change: a link to
/// it, or a path through `..`, is shown as the file itself (to a
/// PreToolUse hook, and in a PostToolUse's `filePath`).
#[test]
fn a_hook_is_shown_the_file_a_write_really_changes() {
    let env = Env::new();
    let work = env.work.path().canonicalize().unwrap();
    std::fs::write(work.join("protected.txt"), "secret\n").unwrap();
    std::fs::create_dir(work.join("sub")).unwrap();
    std::os::unix::fs::symlink("protected.txt", work.join("link.txt")).unwrap();
    let guard = format!(
        "grep -q '\"file_path\":\"{}\"' && {{ echo 'protected' >&2; exit 2; }}; exit 0",
        work.join("protected.txt").display()
    );
    user_settings(&env, &hook("PreToolUse", "Write", &guard));
    let path = scenario(
        env.home.path(),
        r#"
[[turn]]
[[turn.tool_call]]
name = "write"
input = { path = "link.txt", content = "through the link\n" }
[[turn.tool_call]]
name = "write"
input = { path = "sub/../protected.txt", content = "through dot-dot\n" }

[[turn]]
text = "Both were refused."
"#,
    );
    let out = run(
        &env,
        &path,
        "change it",
        &["--permission-mode", "acceptEdits"],
    );
    // 2: a hook refused a call, as a headless run says it.
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let runs = hook_runs(&out);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs.iter().all(|r| r["outcome"] == "blocked"), "{runs:?}");
    assert_eq!(
        std::fs::read_to_string(work.join("protected.txt")).unwrap(),
        "secret\n"
    );
}

const ALLOW: &str = r#"printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ok by policy"}}'"#;

/// A hook's allow answers the risk's question, never a rule or a mode.
#[test]
fn a_hooks_allow_lifts_a_risk_ask_but_never_a_rule_or_plan_mode() {
    // Headless, default mode: a write asks, nobody can answer, so it would
    // be denied; the hook's allow lets it run.
    let env = Env::new();
    user_settings(&env, &hook("PreToolUse", "Write", ALLOW));
    let path = scenario(env.home.path(), WRITE_THEN_DONE);
    let out = run(&env, &path, "create hello.txt", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(env.work.path().join("hello.txt").exists());

    for (flags, says) in [
        (vec!["--deny", "Write"], "denied by rule Write"),
        (vec!["--ask", "Write(hello.txt)"], "rule Write(hello.txt)"),
        (vec!["--permission-mode", "plan"], "plan mode refuses"),
    ] {
        let env = Env::new();
        user_settings(&env, &hook("PreToolUse", "Write", ALLOW));
        let path = scenario(
            env.home.path(),
            &format!("{WRITE_THEN_DONE}[turn.expect]\ntool_result_contains = \"{says}\"\n"),
        );
        let out = run(&env, &path, "create hello.txt", &flags);
        assert!(!env.work.path().join("hello.txt").exists(), "{flags:?}");
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {}", stderr(&out));
    }
}

#[test]
fn an_updated_input_is_decided_again_and_cannot_escape_the_workspace() {
    let env = Env::new();
    let outside = env.home.path().join("outside.txt");
    let rewrite = format!(
        r#"printf '{{"hookSpecificOutput":{{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{{"file_path":"{}","content":"owned"}}}}}}'"#,
        outside.display()
    );
    user_settings(&env, &hook("PreToolUse", "Write", &rewrite));
    let path = scenario(
        env.home.path(),
        r#"
[[turn]]
[[turn.tool_call]]
name = "write"
input = { path = "hello.txt", content = "hi\n" }

[[turn]]
text = "Done."
[turn.expect]
tool_result_ok = false
"#,
    );
    // Even in acceptEdits mode, which writes in the workspace unasked.
    let out = run(
        &env,
        &path,
        "create hello.txt",
        &["--permission-mode", "acceptEdits"],
    );
    assert!(
        !outside.exists(),
        "the hook moved the write out of the workspace"
    );
    assert!(!env.work.path().join("hello.txt").exists());
    let text = String::from_utf8_lossy(&out.stdout);
    // The conversation holds the input the hook gave, decided afresh.
    assert!(
        text.contains("changed the input of this write call"),
        "{text}"
    );
}

#[test]
fn hostile_hooks_are_warnings_and_absences_never_a_hang_or_a_deny() {
    let env = Env::new();
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": "sleep 30", "timeout": 1},
        {"type": "command", "command": "kill -9 $$"},
        {"type": "command", "command": "head -c 3000 /dev/urandom"},
        {"type": "command", "command": "printf '{\"decision\": '"},
        {"type": "command", "command": "exit 7"},
        {"type": "command", "command": "/no/such/hook"}
    ]}]}});
    user_settings(&env, &settings);
    let path = scenario(env.home.path(), WRITE_THEN_DONE);
    let started = Instant::now();
    let out = run(
        &env,
        &path,
        "create hello.txt",
        &["--permission-mode", "acceptEdits"],
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(env.work.path().join("hello.txt").exists());
    let runs = hook_runs(&out);
    assert_eq!(runs.len(), 6);
    let outcomes: Vec<&str> = runs
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        ["failed", "failed", "failed", "failed", "warning", "warning"],
        "{runs:?}"
    );
    assert!(
        runs[0]["message"]
            .as_str()
            .unwrap()
            .contains("time limit of 1s")
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("did not work and was skipped"), "{text}");
}

#[test]
fn a_projects_hooks_wait_for_trust_and_a_changed_one_waits_again() {
    let env = Env::new();
    // Inside the workspace: a project's hooks run in the sandbox.
    let marker = env.work.path().join("ran");
    project_settings(
        &env,
        &hook(
            "UserPromptSubmit",
            "",
            &format!("echo one >> {}", marker.display()),
        ),
    );
    let path = scenario(env.home.path(), "[[turn]]\ntext = \"hi\"\n");
    // Headless: skipped, with one warning naming the command to run.
    let out = run(&env, &path, "hello", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!marker.exists(), "an untrusted project hook ran");
    let err = stderr(&out);
    assert_eq!(err.matches("not trusted").count(), 1, "{err}");
    assert!(
        err.contains("cox ext trust --all") && err.contains("project:UserPromptSubmit:1"),
        "{err}"
    );

    // Listed as pending, trusted, then it runs.
    let listed = env.cox().args(["ext", "list", "--json"]).output().unwrap();
    let report: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(report["hooks"][0]["state"], "pending", "{report}");
    let trusted = env
        .cox()
        .args(["ext", "trust", "project"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&trusted.stdout).contains("trusted as they are now: 1 hook(s)"),
        "{}",
        stderr(&trusted)
    );
    let out = run(&env, &path, "hello", &[]);
    assert!(!stderr(&out).contains("not trusted"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "one\n");

    // Its command changes: pending again, and it does not run.
    project_settings(
        &env,
        &hook(
            "UserPromptSubmit",
            "",
            &format!("echo two >> {}", marker.display()),
        ),
    );
    let out = run(&env, &path, "hello", &[]);
    assert!(stderr(&out).contains("not trusted"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "one\n");
}

#[test]
fn a_project_cannot_switch_off_the_persons_own_hooks_and_no_hooks_runs_none() {
    let env = Env::new();
    let marker = env.home.path().join("guard");
    user_settings(
        &env,
        &hook(
            "UserPromptSubmit",
            "",
            &format!("echo guard >> {}", marker.display()),
        ),
    );
    project_settings(&env, &json!({"disableAllHooks": true}));
    let path = scenario(env.home.path(), "[[turn]]\ntext = \"hi\"\n");
    let out = run(&env, &path, "hello", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "guard\n");
    // --no-hooks, before or after `run`: none runs.
    for flags in [["--no-hooks", "run"], ["run", "--no-hooks"]] {
        let out = env
            .cox()
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", &path)
            .args(flags)
            .args(["-p", "hello"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "guard\n");
}

#[test]
fn a_prompt_hooks_context_reaches_the_model_and_exit_2_refuses_the_prompt() {
    let env = Env::new();
    user_settings(
        &env,
        &hook(
            "UserPromptSubmit",
            "",
            "echo 'the release branch is frozen'",
        ),
    );
    let path = scenario(
        env.home.path(),
        "[[turn]]\ntext = \"noted\"\n[turn.expect]\nuser_text_contains = \"the release branch is frozen\"\n",
    );
    let out = run(&env, &path, "ship it", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let env = Env::new();
    user_settings(
        &env,
        &hook(
            "UserPromptSubmit",
            "",
            "echo 'no secrets in prompts' >&2; exit 2",
        ),
    );
    // A model call would fail the run (exit 1), not refuse it (exit 2).
    let path = scenario(
        env.home.path(),
        "[[turn]]\nerror = \"the model was called\"\n",
    );
    let out = run(&env, &path, "my key is hunter2", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("blocked the prompt: no secrets in prompts"),
        "{text}"
    );
    assert!(
        !text.contains("\"type\":\"usage\""),
        "the model was called: {text}"
    );
}

#[test]
fn a_stop_hook_sends_the_model_back_with_its_reason_a_bounded_number_of_times() {
    // Blocks the first end only (a marker file), as a test gate would.
    let env = Env::new();
    let marker = env.home.path().join("once");
    let command = format!(
        "if [ -e {m} ]; then exit 0; fi; touch {m}; echo 'run the tests first' >&2; exit 2",
        m = marker.display()
    );
    user_settings(&env, &hook("Stop", "", &command));
    let path = scenario(
        env.home.path(),
        r#"
[[turn]]
text = "Done."

[[turn]]
text = "Ran them; all pass."
[turn.expect]
user_text_contains = "run the tests first"
"#,
    );
    let out = run(&env, &path, "fix it", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let runs = hook_runs(&out);
    assert_eq!(runs[0]["outcome"], "blocked");
    assert!(
        runs[0]["context"]
            .as_str()
            .unwrap()
            .contains("run the tests first")
    );

    // A hook that always refuses: the turn ends after eight sends back.
    let env = Env::new();
    user_settings(&env, &hook("Stop", "", "echo again >&2; exit 2"));
    let turns = "[[turn]]\ntext = \"Done.\"\n".repeat(9);
    let path = scenario(env.home.path(), &turns);
    let out = run(&env, &path, "fix it", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(hook_runs(&out).len(), 8);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("sent the model back to work 8 times"),
        "{text}"
    );
}

#[test]
fn a_permission_request_hook_answers_for_a_person_where_none_can() {
    let allow = r#"printf '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'"#;
    let env = Env::new();
    user_settings(&env, &hook("PermissionRequest", "Write", allow));
    let path = scenario(env.home.path(), WRITE_THEN_DONE);
    let out = run(&env, &path, "create hello.txt", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(env.work.path().join("hello.txt").exists());

    let deny = r#"printf '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not on Fridays"}}}'"#;
    let env = Env::new();
    user_settings(&env, &hook("PermissionRequest", "Write", deny));
    let path = scenario(
        env.home.path(),
        &format!("{WRITE_THEN_DONE}[turn.expect]\ntool_result_contains = \"not on Fridays\"\n"),
    );
    let out = run(&env, &path, "create hello.txt", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!env.work.path().join("hello.txt").exists());
}

#[test]
fn post_tool_use_adds_what_it_says_to_the_result_the_model_reads() {
    let env = Env::new();
    let says = r#"printf '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"formatted with prettier"}}'"#;
    user_settings(&env, &hook("PostToolUse", "Edit|Write", says));
    let path = scenario(
        env.home.path(),
        r#"
[[turn]]
[[turn.tool_call]]
name = "write"
input = { path = "hello.txt", content = "hi\n" }

[[turn]]
text = "Done."
[turn.expect]
tool_result_contains = "formatted with prettier"
"#,
    );
    let out = run(
        &env,
        &path,
        "create hello.txt",
        &["--permission-mode", "acceptEdits"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn malformed_hook_settings_are_warnings_naming_the_line_and_the_rest_loads() {
    let env = Env::new();
    let marker = env.home.path().join("ran");
    let good = format!("echo ok >> {}", marker.display());
    std::fs::create_dir_all(env.home.path().join(".claude")).unwrap();
    std::fs::write(
        env.home.path().join(".claude/settings.json"),
        format!(
            "{{\"hooks\": {{\n  \"UserPromptSubmitt\": [],\n  \"UserPromptSubmit\": [\n    \
             {{\"hooks\": [{{\"type\": \"command\", \"command\": \"{good}\"}}]}}\n  ]\n}}}}\n"
        ),
    )
    .unwrap();
    // And cox's own [hooks] with an entry that is not one.
    std::fs::write(
        env.home.path().join("config.toml"),
        "[[hooks.Stop]]\nmatcher = 3\nhooks = []\n",
    )
    .unwrap();
    let path = scenario(env.home.path(), "[[turn]]\ntext = \"hi\"\n");
    let out = run(&env, &path, "hello", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("settings.json:2: unknown hook event `UserPromptSubmitt`, did you mean UserPromptSubmit?"),
        "{err}"
    );
    assert!(
        err.contains("config.toml:2: the matcher of an entry of Stop must be a string"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "ok\n");
}

#[test]
fn text_output_with_verbose_says_each_hook_run() {
    let env = Env::new();
    user_settings(
        &env,
        &hook("PreToolUse", "Write", "echo 'frozen' >&2; exit 2"),
    );
    let path = scenario(env.home.path(), WRITE_THEN_DONE);
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &path)
        .args([
            "run",
            "-p",
            "create hello.txt",
            "--verbose",
            "--permission-mode",
            "acceptEdits",
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(
        err.contains("cox: hook user:PreToolUse:1 (PreToolUse) blocked in")
            && err.contains("ms: frozen"),
        "{err}"
    );
}

/// Hooks, the person's own (unconfined) and a project's (confined), start
/// without cox's credentials; `[sandbox] env` lets one through to both.
#[test]
fn hooks_run_without_cox_credentials_unless_the_config_names_them() {
    let env = Env::new();
    let outside = env.home.path().join("user-hook-env.txt");
    project_settings(
        &env,
        &hook(
            "UserPromptSubmit",
            "",
            "env | cut -d= -f1 > $CLAUDE_PROJECT_DIR/project-hook-env.txt",
        ),
    );
    user_settings(
        &env,
        &hook(
            "UserPromptSubmit",
            "",
            &format!("env | cut -d= -f1 > {}", outside.display()),
        ),
    );
    let out = env.cox().args(["ext", "trust", "--all"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let path = scenario(env.home.path(), "[[turn]]\ntext = \"hi\"\n");
    let go = |env: &Env| {
        let out = env
            .cox()
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", &path)
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            .env("GITHUB_TOKEN", "ghp_test")
            .env("KEEP_ME", "1")
            .args(["run", "-p", "hello"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let project =
            std::fs::read_to_string(env.work.path().join("project-hook-env.txt")).unwrap();
        let user = std::fs::read_to_string(&outside).unwrap();
        (project, user)
    };
    let (project, user) = go(&env);
    for seen in [&project, &user] {
        assert!(seen.lines().any(|l| l == "KEEP_ME"), "{seen}");
        assert!(!seen.lines().any(|l| l == "ANTHROPIC_API_KEY"), "{seen}");
        assert!(!seen.lines().any(|l| l == "GITHUB_TOKEN"), "{seen}");
    }
    std::fs::write(
        env.home.path().join("config.toml"),
        "[sandbox]\nenv = [\"GITHUB_TOKEN\"]\n",
    )
    .unwrap();
    let (project, user) = go(&env);
    for seen in [&project, &user] {
        assert!(seen.lines().any(|l| l == "GITHUB_TOKEN"), "{seen}");
        assert!(!seen.lines().any(|l| l == "ANTHROPIC_API_KEY"), "{seen}");
    }
}

/// A project's hook runs where MCP servers run too (the sandbox's launch of
/// a long-lived process): as root it still cannot write a host kernel
/// setting, not even the value already there.
#[test]
fn a_projects_hook_cannot_write_host_kernel_settings() {
    if !Path::new("/usr/bin/bwrap").exists() {
        eprintln!("skipped: no bwrap");
        return;
    }
    let env = Env::new();
    let script = "for f in /proc/sys/kernel/printk_ratelimit /proc/sys/vm/swappiness /proc/irq/default_smp_affinity; do \
         v=$(cat $f) && if printf '%s\\n' \"$v\" > $f; then echo WROTE $f; else echo refused $f; fi; \
         done > $CLAUDE_PROJECT_DIR/probe.txt 2>&1";
    project_settings(&env, &hook("UserPromptSubmit", "", script));
    let out = env.cox().args(["ext", "trust", "--all"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let path = scenario(env.home.path(), "[[turn]]\ntext = \"hi\"\n");
    let out = run(&env, &path, "hello", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let probe = std::fs::read_to_string(env.work.path().join("probe.txt")).unwrap();
    assert!(!probe.contains("WROTE"), "{probe}");
    assert!(
        probe.contains("refused /proc/sys/kernel/printk_ratelimit"),
        "{probe}"
    );
}

/// A project's hooks run inside the session's sandbox, the person's own
/// outside it, as Claude Code runs them.
#[test]
fn a_projects_hooks_run_in_the_sandbox_and_the_persons_own_outside() {
    let env = Env::new();
    let outside = env.home.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    project_settings(
        &env,
        &hook(
            "UserPromptSubmit",
            "",
            &format!(
                "touch {}/from-project; touch $CLAUDE_PROJECT_DIR/inside",
                outside.display()
            ),
        ),
    );
    user_settings(
        &env,
        &hook(
            "UserPromptSubmit",
            "",
            &format!("touch {}/from-user", outside.display()),
        ),
    );
    let out = env.cox().args(["ext", "trust", "--all"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let path = scenario(env.home.path(), "[[turn]]\ntext = \"hi\"\n");
    let out = run(&env, &path, "hello", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(outside.join("from-user").exists());
    assert!(
        !outside.join("from-project").exists(),
        "a project's hook wrote outside the workspace"
    );
    assert!(
        env.work.path().join("inside").exists(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
