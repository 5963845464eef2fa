//! The real `cox` binary, end to end: flags, output formats, exit codes, the
//! rollout, and the one-line errors for bad input. Every run gets its own
//! temporary COX_HOME and work folder.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Command;

use common::{Env, assert_one_line_error, lines, scenario, stderr};
use serde_json::Value;

#[test]
fn hello_in_stream_json_frames_init_events_and_result() {
    let env = Env::new();
    let out = env.run(
        "hello",
        &[
            "--output-format",
            "stream-json",
            "--permission-mode",
            "acceptEdits",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    let lines = lines(&out);
    let first = &lines[0];
    assert_eq!(
        (first["type"].as_str(), first["subtype"].as_str()),
        (Some("system"), Some("init"))
    );
    assert_eq!(first["permissionMode"], "acceptEdits");
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        tools,
        [
            "agent",
            "apply_patch",
            "bash",
            "bash_output",
            "edit",
            "expand",
            "glob",
            "grep",
            "kill_shell",
            "memory",
            "notebook_edit",
            "read",
            "todo",
            "web_fetch",
            "write"
        ]
    );
    let kinds: Vec<&str> = lines[1..lines.len() - 1]
        .iter()
        .filter_map(|l| l["type"].as_str())
        .collect();
    assert_eq!(kinds.first(), Some(&"turn_started"));
    for kind in [
        "tool_call_requested",
        "tool_call_done",
        "text_delta",
        "usage",
    ] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    assert_eq!(kinds.last(), Some(&"turn_done"));
    let done = lines
        .iter()
        .find(|l| l["type"] == "tool_call_done")
        .unwrap();
    assert_eq!(done["result"]["ok"], true);
    assert_eq!(done["result"]["bytes"], 3);
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["exit_code"], 0);
    assert_eq!(result["stop"], "end_turn");
    assert_eq!(result["result"], "Created hello.txt.");
    assert_eq!(result["num_turns"], 2);
    assert_eq!(result["session_id"], first["session_id"]);

    // The rollout holds the same events, session_started first.
    let rollouts = env.rollouts();
    assert_eq!(rollouts.len(), 1);
    let text = std::fs::read_to_string(&rollouts[0]).unwrap();
    let rolled: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rolled[0]["type"], "session_started");
    assert_eq!(&rolled[1..], &lines[1..lines.len() - 1]);
    let log = env.log();
    assert!(!log.is_empty(), "today's log file is written");
    assert!(
        log.lines()
            .all(|l| serde_json::from_str::<Value>(l).is_ok()),
        "JSON log lines"
    );
    assert!(log.contains("session start"));
}

/// Today's date in UTC, as the log's file names spell it.
fn utc_day() -> String {
    let out = Command::new("date").args(["-u", "+%F"]).output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[test]
fn the_log_is_a_file_a_day_and_files_past_the_retention_go() {
    let env = Env::new();
    let logs = env.home.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let month_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(30 * 86_400);
    let week_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7 * 86_400);
    for (name, when) in [
        ("cox.log.2026-10-01", month_ago),
        ("cox.log", month_ago),
        ("cox.log.2026-11-28", week_ago),
        ("other.txt", month_ago),
    ] {
        std::fs::File::create(logs.join(name))
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
    let out = env.run("hello", &["--permission-mode", "acceptEdits"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!logs.join("cox.log.2026-10-01").exists());
    assert!(!logs.join("cox.log").exists());
    assert!(logs.join("cox.log.2026-11-28").exists());
    assert!(logs.join("other.txt").exists());
    let today = std::fs::read_to_string(logs.join(format!("cox.log.{}", utc_day()))).unwrap();
    assert!(today.contains("session start"), "{today}");
}

#[test]
fn the_log_holds_the_sessions_spans_as_one_tree() {
    let env = Env::new();
    let out = env.run("hello", &["--permission-mode", "acceptEdits"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<Value> = env
        .log()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let spans: Vec<&Value> = lines.iter().filter(|l| l.get("span").is_some()).collect();
    let names: Vec<&str> = spans.iter().map(|s| s["span"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "chat",
            "execute_tool",
            "chat",
            "invoke_agent cox.turn",
            "invoke_agent cox"
        ]
    );
    let trace = &spans[0]["trace_id"];
    assert_eq!(trace.as_str().unwrap().len(), 32);
    assert!(spans.iter().all(|s| &s["trace_id"] == trace));
    let (turn, session) = (spans[3], spans[4]);
    assert!(session["parent_span_id"].is_null());
    assert_eq!(turn["parent_span_id"], session["span_id"]);
    for child in &spans[..3] {
        assert_eq!(child["parent_span_id"], turn["span_id"], "{child}");
    }
    assert_eq!(spans[1]["attributes"]["gen_ai.tool.name"], "write");
    assert_eq!(
        spans[2]["attributes"]["gen_ai.response.finish_reasons"][0],
        "end_turn"
    );
    // The diagnostics of the turn name it.
    let tool_call = lines
        .iter()
        .find(|l| l["fields"]["message"] == "tool call")
        .unwrap();
    assert_eq!(tool_call["span_id"], turn["span_id"]);
    // Nothing of the conversation without the opt-in.
    let text = env.log();
    assert!(!text.contains("gen_ai.input.messages"), "{text}");
}

#[test]
fn a_log_that_cannot_be_opened_is_one_warning_and_the_run_goes_on() {
    let env = Env::new();
    // A folder where today's file would be: opening it fails, even as root.
    std::fs::create_dir_all(env.home.path().join(format!("logs/cox.log.{}", utc_day()))).unwrap();
    let out = env.run("hello", &["--permission-mode", "acceptEdits"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("cannot open the log"))
        .collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].starts_with("cox: warning: cannot open the log "),
        "{err}"
    );
    assert!(warnings[0].ends_with("this run keeps no log"), "{err}");
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
}

#[test]
fn text_prints_the_answer_and_json_prints_one_result() {
    let env = Env::new();
    let out = env.run("hello", &["--permission-mode", "acceptEdits"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Created hello.txt.\n");

    let env = Env::new();
    let out = env.run(
        "hello",
        &[
            "--output-format",
            "json",
            "--permission-mode",
            "acceptEdits",
        ],
    );
    let lines = lines(&out);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["type"], "result");
    assert_eq!(lines[0]["is_error"], false);
}

#[test]
fn a_denied_call_exits_two() {
    let env = Env::new();
    let out = env.run("denied", &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let result = &lines(&out)[0];
    assert_eq!(result["permission_denials"][0]["tool_name"], "write");
    assert!(!env.work.path().join("hello.txt").exists());
}

#[test]
fn max_turns_exits_one_with_its_subtype() {
    let env = Env::new();
    std::fs::write(env.work.path().join("notes.txt"), "a\nb\n").unwrap();
    let out = env.run(
        "max_turns",
        &["--output-format", "json", "--max-turns", "2"],
    );
    assert_eq!(out.status.code(), Some(1));
    let result = &lines(&out)[0];
    assert_eq!(result["subtype"], "error_max_turns");
    assert_eq!(result["stop"], "max_turns");
}

#[test]
fn ctrl_c_interrupts_the_turn_and_exits_four() {
    let env = Env::new();
    let mut child = env.spawn_slow();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut seen = Vec::new();
    let mut line = String::new();
    while reader.read_line(&mut line).unwrap() > 0 {
        let value: Value = serde_json::from_str(&line).unwrap();
        line.clear();
        if value["type"] == "text_delta" && !seen.iter().any(|v: &Value| v["type"] == "text_delta")
        {
            let pid = child.id().to_string();
            assert!(
                Command::new("kill")
                    .args(["-INT", &pid])
                    .status()
                    .unwrap()
                    .success()
            );
        }
        seen.push(value);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(4));
    let kinds: Vec<&str> = seen.iter().filter_map(|v| v["type"].as_str()).collect();
    assert_eq!(&kinds[kinds.len() - 2..], ["turn_done", "result"]);
    assert_eq!(seen[seen.len() - 2]["stop"], "interrupted");
    // slow.toml streams 32 words, one every 200 ms: an interrupted turn
    // stops long before the last.
    let deltas = kinds.iter().filter(|k| **k == "text_delta").count();
    assert!(deltas < 32, "the stream stopped early ({deltas} deltas)");
}

#[test]
fn a_failed_expectation_is_an_error_and_the_rollout_keeps_what_came_before() {
    let env = Env::new();
    // hello's second turn expects "wrote 3 bytes"; under plan mode the write is refused.
    let out = env.run(
        "hello",
        &[
            "--output-format",
            "stream-json",
            "--permission-mode",
            "plan",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let lines = lines(&out);
    let result = lines.last().unwrap();
    assert_eq!(result["stop"], "error");
    assert!(
        result["error"].as_str().unwrap().contains("turn 2"),
        "{result}"
    );
    let rolled = std::fs::read_to_string(&env.rollouts()[0]).unwrap();
    let kinds: Vec<String> = rolled
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "session_started",
            "turn_started",
            "tool_call_requested",
            "usage",
            "tool_call_done",
            "notice",
            "session_titled",
            "turn_done"
        ]
    );
}

#[test]
fn bad_input_is_one_line_and_exit_one() {
    let env = Env::new();
    // A usage error is clap's whole report, with its hints, and exit 1.
    let usage = |args: &[&str], needles: &[&str]| {
        let out = env.cox().args(args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{err}");
        for needle in needles {
            assert!(
                err.contains(needle),
                "{args:?}: {err:?} should mention {needle:?}"
            );
        }
        assert!(!err.contains("panicked"), "{err}");
    };
    usage(
        &["run", "-p", "x", "--frobnicate"],
        &["--frobnicate", "Usage:"],
    );
    usage(
        &["run", "-p", "x", "--output-format", "yaml"],
        &["yaml", "possible values: text, json, stream-json"],
    );
    usage(
        &["run", "--promt", "x"],
        &["similar argument exists: '--prompt'"],
    );
    usage(&["run", "-p", "x", "--permission-mode", "yolo"], &["yolo"]);
    // A one-word near miss of a command is not sent as a task.
    let out = env.cox().args(["sesions"]).output().unwrap();
    assert_one_line_error(
        &out,
        "\"sesions\" is not a command; did you mean `cox sessions`?",
    );
    usage(&["run", "-p", "x", "--max-turns"], &["--max-turns <N>"]);

    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .args(["run", "-p", ""])
        .output()
        .unwrap();
    assert_one_line_error(&out, "prompt is empty");

    let out = env.cox().args(["run", "-p", "x"]).output().unwrap();
    assert_one_line_error(&out, "COX_PROVIDER=scripted");

    let missing = env.work.path().join("nope.toml");
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &missing)
        .args(["run", "-p", "x"])
        .output()
        .unwrap();
    assert_one_line_error(&out, "nope.toml");

    let broken = env.work.path().join("broken.toml");
    std::fs::write(
        &broken,
        "[[turn]]\ntext = \"ok\"\n\n[[turn]]\ntxt = \"typo\"\n",
    )
    .unwrap();
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &broken)
        .args(["run", "-p", "x"])
        .output()
        .unwrap();
    assert_one_line_error(&out, "broken.toml:5:");

    let file = env.work.path().join("plain-file");
    std::fs::write(&file, "").unwrap();
    let out = env
        .cox()
        .env("COX_HOME", file.join("home"))
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario("hello"))
        .args(["run", "-p", "x"])
        .output()
        .unwrap();
    assert_one_line_error(&out, "not writable");

    let out = env
        .cox()
        .args(["run", "-p", "x", "--cwd", "/definitely/not/here"])
        .output()
        .unwrap();
    assert_one_line_error(&out, "/definitely/not/here");
}

#[test]
fn version_prints_the_name_and_version() {
    let out = Env::new().cox().arg("--version").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("cox {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn a_closed_stdout_stops_the_turn() {
    let env = Env::new();
    let mut child = env.spawn_slow();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("text_delta") {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "the stream ended early"
        );
    }
    drop(reader); // like `| head`: nobody reads any more
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(1),
        "the result line could not be written"
    );
    let rolled = std::fs::read_to_string(&env.rollouts()[0]).unwrap();
    let deltas = rolled
        .lines()
        .filter(|l| l.contains("\"text_delta\""))
        .count();
    assert!(
        deltas < 32,
        "the turn stopped before the end ({deltas} of 32 deltas)"
    );
    assert!(
        rolled.lines().last().unwrap().contains("\"interrupted\""),
        "{rolled}"
    );
}

/// `cox run --output-format text` on a terminal (a real pseudo-terminal,
/// through `script`) shows the model's answer without its escape sequences
/// and bidi controls; piped, the bytes are kept, and json keeps them too.
#[test]
fn text_output_on_a_terminal_is_sanitised_and_piped_it_is_byte_exact() {
    if !std::path::Path::new("/usr/bin/script").exists() {
        eprintln!("skipped: no script(1) for a pseudo-terminal");
        return;
    }
    let env = Env::new();
    let scenario = env.home.path().join("hostile.toml");
    std::fs::write(
        &scenario,
        "[[turn]]\ntext = \"plain \\u001b[31mred\\u001b]0;owned\\u0007 \\u202eevil\\u202c end\"\n",
    )
    .unwrap();
    let cox = env!("CARGO_BIN_EXE_cox");
    let line = format!(
        "{cox} run -p hi --cwd {} --output-format text",
        env.work.path().display()
    );
    let tty = std::process::Command::new("/usr/bin/script")
        .args(["-qec", &line, "/dev/null"])
        .envs(env.cox().get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&tty.stdout);
    assert!(shown.contains("plain red evil end"), "{shown:?}");
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{202e}'),
        "{shown:?}"
    );
    let piped = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "hi", "--output-format", "text"])
        .output()
        .unwrap();
    let bytes = String::from_utf8_lossy(&piped.stdout);
    assert!(
        bytes.contains("\u{1b}[31mred") && bytes.contains('\u{202e}'),
        "{bytes:?}"
    );
}

/// The task as Claude Code's scripts pass it: after `-p` and its flags
/// (`cox -p --output-format json "task"`), or to `cox run "task"`; with
/// both `-p "…"` and a task, one error naming both; a server command takes
/// none.
#[test]
fn a_positional_task_runs_headless_after_p_and_its_flags() {
    let env = Env::new();
    let run = |args: &[&str]| {
        env.cox()
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", scenario("hello"))
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let out = run(&[
        "-p",
        "--output-format",
        "json",
        "--permission-mode",
        "acceptEdits",
        "create hello.txt containing hi",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["result"], "Created hello.txt.", "{result}");
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    std::fs::remove_file(env.work.path().join("hello.txt")).unwrap();
    let out = run(&[
        "run",
        "--permission-mode",
        "acceptEdits",
        "create hello.txt containing hi",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(env.work.path().join("hello.txt").exists());
    assert_one_line_error(
        &run(&["-p", "one", "two"]),
        "two prompts: -p \"one\" and \"two\"",
    );
    assert_one_line_error(&run(&["acp", "task"]), "cox acp does not take a task");
}

/// `-p … --output-format stream-json --verbose`, as Claude Code's scripts
/// call it: Claude Code's frames (`system/init`, `assistant`, `user`,
/// `result`), with the partial messages when asked; without `--verbose`
/// the stream stays cox's own events, and a frames-only flag says to add
/// `--verbose`.
#[test]
fn verbose_stream_json_prints_claude_codes_frames_for_a_script() {
    let env = Env::new();
    let run = |extra: &[&str]| {
        env.cox()
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", scenario("hello"))
            .args(["-p", "create hello.txt containing hi", "--output-format"])
            .args(["stream-json", "--permission-mode", "acceptEdits"])
            .args(extra)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let out = run(&["--verbose", "--include-partial-messages"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let frames = lines(&out);
    let kinds: Vec<&str> = frames.iter().filter_map(|f| f["type"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"system"), "{kinds:?}");
    assert_eq!(frames[0]["subtype"], "init");
    assert_eq!(kinds.last(), Some(&"result"), "{kinds:?}");
    for kind in ["assistant", "user", "stream_event"] {
        assert!(kinds.contains(&kind), "{kind}: {kinds:?}");
    }
    assert!(!kinds.contains(&"turn_started"), "{kinds:?}");
    let result = frames.last().unwrap();
    assert_eq!(result["result"], "Created hello.txt.", "{result}");
    assert_eq!(result["is_error"], false, "{result}");
    let tool_result = frames
        .iter()
        .find(|f| f["type"] == "user")
        .map(|f| f["message"]["content"][0]["type"].clone());
    assert_eq!(tool_result, Some(Value::from("tool_result")));
    // cox's own stream without --verbose.
    std::fs::remove_file(env.work.path().join("hello.txt")).unwrap();
    let out = run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let kinds: Vec<String> = lines(&out)
        .iter()
        .filter_map(|f| f["type"].as_str().map(str::to_owned))
        .collect();
    assert!(kinds.iter().any(|k| k == "turn_started"), "{kinds:?}");
    assert!(!kinds.iter().any(|k| k == "assistant"), "{kinds:?}");
    assert_one_line_error(
        &run(&["--include-partial-messages"]),
        "--include-partial-messages goes with Claude Code's frames: add --verbose",
    );
}

/// Claude Code's flags: those cox has mean the same (`-v`, `-n/--name`,
/// `--effort max`); those it lacks are refused by name with what to use
/// instead, never taken for a near miss of another flag; `--help` lists
/// none of them.
#[test]
fn claude_codes_flags_work_or_are_refused_by_name() {
    let env = Env::new();
    let out = env.cox().arg("-v").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("cox {}\n", env!("CARGO_PKG_VERSION"))
    );
    for (flags, needle) in [
        (
            &["--ide"][..],
            "--ide is Claude Code's and not supported by cox: editors reach cox over ACP",
        ),
        (&["-p", "x", "--chrome"][..], "--chrome is Claude Code's"),
        (
            &["-p", "x", "--thinking=adaptive"][..],
            "--thinking is Claude Code's",
        ),
        (
            &["run", "-p", "x", "--from-pr", "12"][..],
            "--from-pr is Claude Code's",
        ),
        (
            &["-p", "x", "--await-initialize"][..],
            "mcpServersDelivery: 'argv'",
        ),
    ] {
        assert_one_line_error(&env.cox().args(flags).output().unwrap(), needle);
    }
    let help = env.cox().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for hidden in ["--betas", "--fallback-model", "--thinking", "--task-budget"] {
        assert!(!help.contains(hidden), "{hidden} in --help");
    }
    assert!(help.contains("-n, --name <NAME>"), "{help}");
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario("hello"))
        .args([
            "-p",
            "create hello.txt containing hi",
            "-n",
            "named by hand",
        ])
        .args(["--effort", "max", "--permission-mode", "acceptEdits"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let listed = env.cox().args(["sessions", "--json"]).output().unwrap();
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed[0]["title"], "named by hand", "{listed}");
}

/// `--agents JSON` (Claude Code's flag) defines subagents for the run, the
/// model is told of them; bad JSON is one line. `-d/--debug [filter]` sets
/// the log's filter for the run (here `warn`: no info lines).
#[test]
fn agents_and_debug_flags_take_effect() {
    let env = Env::new();
    let told = env.work.path().join("told.toml");
    std::fs::write(
        &told,
        "[[turn]]\ntext = \"ok\"\n[turn.expect]\nrequest_contains = [\"Reviews diffs for risky changes\"]\n",
    )
    .unwrap();
    let agents = r#"{"reviewer": {"description": "Reviews diffs for risky changes", "prompt": "You review."}}"#;
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &told)
        .args(["-p", "review", "--agents", agents, "-d", "warn"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let logs = std::fs::read_dir(env.home.path().join("logs")).unwrap();
    let text: String = logs
        .filter_map(Result::ok)
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(!text.contains("\"level\":\"INFO\""), "{text}");
    // Without it, the same run logs at info.
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &told)
        .args(["-p", "review", "--agents", agents])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text: String = std::fs::read_dir(env.home.path().join("logs"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(text.contains("\"level\":\"INFO\""), "{text}");
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &told)
        .args(["-p", "review", "--agents", "{nope"])
        .output()
        .unwrap();
    assert_one_line_error(&out, "--agents: not JSON");
}
