//! What a new user types in the first hour, over the real binary: session
//! flags before the subcommand, Claude Code's flags, prompts on stdin, and
//! headless output that says what happened.

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use common::{Env, lines, scenario, stderr};
use serde_json::Value;

/// `cox` with a temporary HOME too (COX_HOME is the Env's), stdin empty.
fn cox(env: &Env) -> Command {
    let mut cmd = env.cox();
    cmd.env("HOME", env.home.path()).stdin(Stdio::null());
    cmd
}

fn scripted(env: &Env, name: &str) -> Command {
    let mut cmd = cox(env);
    cmd.env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario(name));
    cmd
}

/// A write of hello.txt, then an answer whatever the write came to.
const WRITE_THEN_TEXT: &str = "[[turn]]\n[[turn.tool_call]]\nname = \"write\"\n\
    input = { path = \"hello.txt\", content = \"hi\\n\" }\n\n[[turn]]\ntext = \"done\"\n";

/// A scenario written for one test.
fn own_scenario(env: &Env, text: &str) -> std::path::PathBuf {
    let path = env.home.path().join("own-scenario.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn init(out: &Output) -> Value {
    lines(out)
        .into_iter()
        .find(|l| l["type"] == "system" && l["subtype"] == "init")
        .unwrap_or_else(|| panic!("no init line: {}", stderr(out)))
}

fn result(out: &Output) -> Value {
    lines(out)
        .into_iter()
        .find(|l| l["type"] == "result")
        .unwrap_or_else(|| panic!("no result line: {}", stderr(out)))
}

#[test]
fn session_flags_before_run_take_effect() {
    let env = Env::new();
    // Without a mode the write asks, and headless that is a denial.
    let out = scripted(&env, "denied")
        .args(["run", "-p", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = scripted(&env, "hello")
        .args(["--permission-mode", "acceptEdits", "run", "-p", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(env.work.path().join("hello.txt").exists());

    // --cwd, --model, --provider and --scenario before `run`.
    let elsewhere = tempfile::tempdir().unwrap();
    let out = cox(&env)
        .arg("--cwd")
        .arg(elsewhere.path())
        .args(["--provider", "scripted", "--model", "claude-haiku-4-5"])
        .arg("--scenario")
        .arg(scenario("hello"))
        .args(["--permission-mode", "acceptEdits"])
        .args(["run", "-p", "x", "--output-format", "stream-json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(elsewhere.path().join("hello.txt").exists());
    let first = init(&out);
    assert_eq!(first["provider"], "scripted");
    assert_eq!(first["model"], "claude-haiku-4-5");
    assert_eq!(first["permissionMode"], "acceptEdits");

    // --mode before `run`: architect is plan.
    let out = scripted(&env, "hello")
        .args(["--mode", "architect", "run", "-p", "x"])
        .args(["--output-format", "stream-json"])
        .output()
        .unwrap();
    assert_eq!(init(&out)["permissionMode"], "plan");

    // -c before `run` picks up the newest session of the folder.
    let first = result(
        &scripted(&env, "hello")
            .args(["run", "-p", "one", "--output-format", "json"])
            .args(["--permission-mode", "acceptEdits"])
            .output()
            .unwrap(),
    )["session_id"]
        .clone();
    let out = scripted(&env, "hello")
        .args(["-c", "run", "-p", "again", "--output-format", "json"])
        .output()
        .unwrap();
    assert_eq!(result(&out)["session_id"], first, "{}", stderr(&out));
}

#[test]
fn a_flag_given_on_both_sides_must_agree_and_strays_are_refused() {
    let env = Env::new();
    let out = scripted(&env, "hello")
        .args(["--model", "a", "run", "-p", "x", "--model", "b"])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, "--model is given twice");

    let out = cox(&env)
        .args(["--model", "a", "sessions"])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, "--model is a session flag");
    let out = cox(&env)
        .args(["--permission-mode", "plan", "doctor"])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, "not cox doctor");

    // The terminal UI refuses a headless-only flag before it opens.
    let out = cox(&env)
        .args(["--output-format", "json"])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, "--output-format is for headless runs");

    // --no-mcp with --mcp-config asks for two opposite things.
    let out = scripted(&env, "hello")
        .args(["run", "-p", "x", "--no-mcp", "--mcp-config", "{}"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--no-mcp"), "{}", stderr(&out));
}

/// The `COX_*` variable of a flag is read by clap on that flag, but it is
/// not a flag the person typed: it never trips the refusals above, a typed
/// flag beats it on either side of `run`, and a bad one fails only the
/// commands that read it.
#[test]
fn a_flag_s_variable_is_not_a_typed_flag() {
    let env = Env::new();
    let out = cox(&env)
        .env("COX_MODEL", "from-env")
        .env("COX_PERMISSION_MODE", "bogus")
        .env("COX_EFFORT", "bogus")
        .args(["sessions"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");

    let model = |args: &[&str]| {
        let out = scripted(&env, "hello")
            .env("COX_MODEL", "from-env")
            .args(args)
            .args(["--output-format", "stream-json"])
            .output()
            .unwrap();
        init(&out)["model"].as_str().unwrap().to_owned()
    };
    assert_eq!(model(&["run", "-p", "x"]), "from-env");
    assert_eq!(model(&["run", "-p", "x", "--model", "typed"]), "typed");
    assert_eq!(model(&["--model", "typed", "run", "-p", "x"]), "typed");
    assert_eq!(model(&["-p", "x", "--model", "typed"]), "typed");

    let out = scripted(&env, "hello")
        .env("COX_PERMISSION_MODE", "bogus")
        .args(["run", "-p", "x"])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, "COX_PERMISSION_MODE: unknown permission mode `bogus`");

    // `cox config show --sources` names the variable, or the flag typed
    // over it.
    let shown = |args: &[&str]| {
        let out = cox(&env)
            .env("COX_MODEL", "from-env")
            .env("COX_PERMISSION_MODE", "plan")
            .args(["config", "show", "--sources"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("tiers.code.model") || l.starts_with("permissions.mode"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        shown(&[]),
        [
            "permissions.mode = plan # COX_PERMISSION_MODE",
            "tiers.code.model = from-env # COX_MODEL"
        ]
    );
    assert_eq!(
        shown(&["--model", "typed", "--permission-mode", "acceptEdits"]),
        [
            "permissions.mode = acceptEdits # --permission-mode",
            "tiers.code.model = typed # --model"
        ]
    );
}

/// A resumed session goes on in the model and mode it was switched to
/// unless the command line names others: a variable does not.
#[test]
fn a_variable_does_not_undo_a_resumed_session_s_switch() {
    let env = Env::new();
    let id = switched_session(
        &env,
        r#"{"type":"mode_changed","permission_mode":"plan","tier":"code","model":"switched"}"#,
    );
    let resumed = |flags: &[&str]| {
        let out = scripted(&env, "hello")
            .env("COX_MODEL", "from-env")
            .env("COX_PERMISSION_MODE", "acceptEdits")
            .args(["-p", "again", "-r", &id, "--output-format", "stream-json"])
            .args(flags)
            .output()
            .unwrap();
        let init = init(&out);
        (init["model"].clone(), init["permissionMode"].clone())
    };
    assert_eq!(resumed(&[]), ("switched".into(), "plan".into()));
    assert_eq!(
        resumed(&["--model", "typed", "--permission-mode", "acceptEdits"]),
        ("typed".into(), "acceptEdits".into())
    );
}

#[test]
fn claude_code_flags_mean_what_they_mean_there() {
    let env = Env::new();
    // `cox -p` and `--print` are `cox run -p`.
    let out = scripted(&env, "hello")
        .args(["-p", "x", "--permission-mode", "acceptEdits"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Created hello.txt.\n");
    std::fs::remove_file(env.work.path().join("hello.txt")).unwrap();

    // --allowedTools, comma- or space-separated.
    let out = scripted(&env, "hello")
        .args(["--print", "x", "--allowedTools", "Read,Write Edit"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::remove_file(env.work.path().join("hello.txt")).unwrap();

    // --disallowedTools wins even over --dangerously-skip-permissions.
    let out = scripted(&env, "hello")
        .args(["run", "-p", "x", "--dangerously-skip-permissions"])
        .args(["--output-format", "stream-json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(init(&out)["permissionMode"], "bypassPermissions");
    let out = cox(&env)
        .env("COX_PROVIDER", "scripted")
        .arg("--scenario")
        .arg(own_scenario(&env, WRITE_THEN_TEXT))
        .args(["run", "-p", "x", "--dangerously-skip-permissions"])
        .args(["--disallowedTools", "Bash(rm:*) Write"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));

    // -r is --resume.
    let id = result(
        &scripted(&env, "hello")
            .args(["-p", "one", "--output-format", "json"])
            .args(["--permission-mode", "acceptEdits"])
            .output()
            .unwrap(),
    )["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = scripted(&env, "hello")
        .args(["-p", "again", "-r", &id[..22], "--output-format", "json"])
        .output()
        .unwrap();
    assert_eq!(result(&out)["session_id"], id.as_str(), "{}", stderr(&out));

    // --append-system-prompt reaches the request.
    let appended = own_scenario(
        &env,
        "[[turn]]\ntext = \"ok\"\n[turn.expect]\nrequest_contains = [\"Always answer in French.\"]\n",
    );
    let out = cox(&env)
        .env("COX_PROVIDER", "scripted")
        .arg("--scenario")
        .arg(&appended)
        .args([
            "-p",
            "x",
            "--append-system-prompt",
            "Always answer in French.",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // --max-budget-usd caps the session: each call of budget.toml costs $3.
    std::fs::write(env.work.path().join("notes.txt"), "alpha\n").unwrap();
    let out = scripted(&env, "budget")
        .args([
            "-p",
            "x",
            "--max-budget-usd",
            "5",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(result(&out)["subtype"], "error_budget");

    // --verbose: in text format every finished call gets a line on stderr.
    let out = scripted(&env, "hello")
        .args(["-p", "x", "--permission-mode", "acceptEdits", "--verbose"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.lines()
            .any(|l| l.starts_with("cox: done: write ") && l.ends_with("hello.txt")),
        "{err}"
    );
}

#[test]
fn add_dir_makes_another_folder_part_of_the_workspace() {
    let env = Env::new();
    let other = tempfile::tempdir().unwrap();
    let other = std::fs::canonicalize(other.path()).unwrap();
    let target = other.join("peer.txt");
    let path = own_scenario(
        &env,
        &format!(
            "[[turn]]\n[[turn.tool_call]]\nname = \"write\"\ninput = {{ path = \"{}\", content = \"x\\n\" }}\n\n[[turn]]\ntext = \"done\"\n",
            target.display()
        ),
    );
    let run = |extra: &[&str]| {
        cox(&env)
            .env("COX_PROVIDER", "scripted")
            .arg("--scenario")
            .arg(&path)
            .args(["-p", "x", "--permission-mode", "acceptEdits"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert!(
        stderr(&out).contains("is outside the workspace"),
        "{}",
        stderr(&out)
    );
    assert!(!target.exists());
    let out = run(&["--add-dir", other.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "x\n");

    let out = run(&["--add-dir", "/definitely/not/here"]);
    common::assert_one_line_error(&out, "--add-dir /definitely/not/here");
}

fn piped(env: &Env, scenario_text: &str, args: &[&str], stdin: &[u8]) -> Output {
    let path = own_scenario(env, scenario_text);
    let mut child = cox(env)
        .env("COX_PROVIDER", "scripted")
        .arg("--scenario")
        .arg(&path)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn expects_user_text(needle: &str) -> String {
    format!("[[turn]]\ntext = \"ok\"\n[turn.expect]\nuser_text_contains = \"{needle}\"\n")
}

#[test]
fn prompts_come_from_stdin() {
    let env = Env::new();
    // `-p -` reads the whole prompt.
    let out = piped(
        &env,
        &expects_user_text("the task from a pipe"),
        &["run", "-p", "-"],
        b"the task from a pipe\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // `-p` alone too, as `claude -p` does.
    let out = piped(&env, &expects_user_text("alone"), &["-p"], b"alone\n");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // Piped text goes with the prompt: the prompt, then the text.
    let out = piped(
        &env,
        &expects_user_text("summarise\\n\\nline one\\nline two"),
        &["run", "-p", "summarise"],
        b"line one\nline two\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // Several MB go through.
    let mut big = "word ".repeat(1_000_000).into_bytes();
    big.extend_from_slice(b"THE-END-MARKER\n");
    let out = piped(
        &env,
        &expects_user_text("THE-END-MARKER"),
        &["-p", "-"],
        &big,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // An empty stdin with `-p -` is an error, not an empty turn.
    let out = piped(&env, &expects_user_text("x"), &["-p", "-"], b"");
    common::assert_one_line_error(&out, "stdin was empty");
}

#[test]
fn a_terminal_on_stdin_is_never_read() {
    let env = Env::new();
    // Python's pty module gives the child a terminal on stdin; nothing is
    // ever typed into it, so a read would hang until the timeout kills it.
    let script = r#"
import os, pty, subprocess, sys
master, slave = pty.openpty()
r = subprocess.run(sys.argv[1:], stdin=slave, capture_output=True, timeout=20)
sys.stdout.write(r.stdout.decode())
sys.stderr.write(r.stderr.decode())
sys.exit(r.returncode)
"#;
    let bin = env!("CARGO_BIN_EXE_cox");
    let run = |args: &[&str]| {
        let mut cmd = Command::new("python3");
        cmd.args(["-c", script, bin])
            .args(args)
            .env("COX_HOME", env.home.path())
            .env("HOME", env.home.path())
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", scenario("hello"))
            .current_dir(env.work.path());
        cmd.output().unwrap()
    };
    let out = run(&["-p", "-"]);
    common::assert_one_line_error(&out, "stdin is a terminal");
    // With a prompt, the terminal is left alone and the run goes on.
    let out = run(&["-p", "x", "--permission-mode", "acceptEdits"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_silent_open_stdin_is_waited_on_briefly_then_left() {
    let env = Env::new();
    let mut child = scripted(&env, "hello")
        .args(["-p", "x", "--permission-mode", "acceptEdits"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Hold the pipe open and write nothing.
    let held = child.stdin.take();
    let out = child.wait_with_output().unwrap();
    drop(held);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing arrived on stdin"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn text_output_names_every_refusal_and_failure_on_stderr() {
    let env = Env::new();
    let out = scripted(&env, "denied").args(["-p", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    let denied: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("cox: denied: "))
        .collect();
    assert_eq!(denied.len(), 1, "{err}");
    assert!(denied[0].starts_with("cox: denied: write "), "{err}");
    assert!(denied[0].contains("hello.txt: "), "{err}");

    std::fs::write(env.work.path().join("notes.txt"), "alpha\n").unwrap();
    let out = scripted(&env, "failing_tool")
        .args(["-p", "x", "--permission-mode", "acceptEdits"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("cox: failed: edit ") && l.contains("notes.txt: "))
            .count(),
        1,
        "{err}"
    );

    let out = scripted(&env, "path_escape")
        .args(["-p", "x"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("cox: failed: read") || l.starts_with("cox: denied: read"))
            .count(),
        1,
        "{err}"
    );
    // stdout still holds only the answer.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "That file is outside the workspace.\n"
    );
}

#[test]
fn the_json_result_carries_the_cost_and_the_denials() {
    let env = Env::new();
    let out = scripted(&env, "priced")
        .args([
            "-p",
            "x",
            "--permission-mode",
            "acceptEdits",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = result(&out);
    let cost = result["total_cost_usd"].as_f64().expect("a number");
    assert!(
        (cost - 0.012_555).abs() < 1e-9,
        "priced.toml costs $0.012555: {cost}"
    );
    assert!(result.get("unpriced_models").is_none());
    assert_eq!(result["permission_denials"], serde_json::json!([]));

    let out = scripted(&env, "denied")
        .args(["-p", "x", "--output-format", "json"])
        .output()
        .unwrap();
    let result = common::lines(&out).pop().unwrap();
    let denials = result["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1);
    assert_eq!(denials[0]["tool_name"], "write");
    assert_eq!(denials[0]["tool_input"]["path"], "hello.txt");
    assert!(result["total_cost_usd"].is_number());
}

/// Variables, the user's config, and flags.
type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a [&'a str]);

#[test]
fn permissions_check_resolves_the_mode_as_run_does() {
    let env = Env::new();
    let project = env.work.path().join(".cox");
    let cases: &[Case<'_>] = &[
        (&[], "", &[]),
        (&[("COX_PERMISSION_MODE", "acceptEdits")], "", &[]),
        (&[], "[permissions]\nmode = \"auto\"\n", &[]),
        (
            &[("COX_PERMISSION_MODE", "plan")],
            "[permissions]\nmode = \"auto\"\n",
            &[],
        ),
        (
            &[("COX_PERMISSION_MODE", "plan")],
            "",
            &["--permission-mode", "acceptEdits"],
        ),
        (&[], "", &["--dangerously-skip-permissions"]),
        (
            &[("COX_PERMISSION_MODE", "auto")],
            "",
            &["--mode", "architect"],
        ),
    ];
    for (vars, config, flags) in cases {
        std::fs::write(env.home.path().join("config.toml"), config).unwrap();
        let _ = std::fs::remove_dir_all(&project);
        let mut run = scripted(&env, "hello");
        let mut check = cox(&env);
        for (k, v) in *vars {
            run.env(k, v);
            check.env(k, v);
        }
        let out = run
            .args(["run", "-p", "x", "--output-format", "stream-json"])
            .args(*flags)
            .output()
            .unwrap();
        let ran = init(&out)["permissionMode"].clone();
        let out = check
            .args([
                "permissions",
                "check",
                "--tool",
                "read",
                "--input",
                "{\"path\": \"a\"}",
            ])
            .args(["--json"])
            .args(*flags)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let checked: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            checked["mode"], ran,
            "{vars:?} {config:?} {flags:?}: check says {checked}, run ran in {ran}"
        );
        // `cox config show` says the same, where it takes the flags.
        if flags.first() != Some(&"--dangerously-skip-permissions") {
            let mut show = cox(&env);
            for (k, v) in *vars {
                show.env(k, v);
            }
            let out = show
                .args(["config", "show", "--json"])
                .args(*flags)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(
                shown["permissions.mode"]["value"], ran,
                "{vars:?} {config:?} {flags:?}: config show says {shown}"
            );
        }
    }
}

/// A finished session whose rollout ends with `mode_changed`, a switch made
/// before it ended; its id.
fn switched_session(env: &Env, mode_changed: &str) -> String {
    let first = scripted(env, "two_turns")
        .args(["-p", "first", "--output-format", "json"])
        .output()
        .unwrap();
    let id = result(&first)["session_id"].as_str().unwrap().to_owned();
    let rollout = env.home.path().join("sessions").join(format!("{id}.jsonl"));
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&rollout)
        .unwrap();
    writeln!(file, "{mode_changed}").unwrap();
    id
}

#[test]
fn skip_permissions_wins_over_a_resumed_session_s_mode() {
    let env = Env::new();
    // The session was switched to plan mode before it ended.
    let id = switched_session(
        &env,
        r#"{"type":"mode_changed","permission_mode":"plan","tier":"code"}"#,
    );
    let out = scripted(&env, "hello")
        .args(["-p", "again", "-r", &id, "--dangerously-skip-permissions"])
        .args(["--output-format", "stream-json"])
        .output()
        .unwrap();
    assert_eq!(init(&out)["permissionMode"], "bypassPermissions");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn contradictions_and_misreadings_are_refused() {
    let env = Env::new();
    for (args, needle) in [
        (
            &[
                "-p",
                "x",
                "--mode",
                "architect",
                "--dangerously-skip-permissions",
            ][..],
            "--mode architect decides in plan mode",
        ),
        (
            &["-p", "x", "--deep", "--permission-mode", "acceptEdits"][..],
            "--deep decides in plan mode",
        ),
        (&["-pc"][..], "-pc reads as the prompt \"c\""),
        (
            &[
                "record",
                "--out",
                "/tmp/a.toml",
                "--",
                "-p",
                "x",
                "--record",
                "/tmp/b.toml",
            ][..],
            "already names the cassette",
        ),
    ] {
        let out = scripted(&env, "hello").args(args).output().unwrap();
        common::assert_one_line_error(&out, needle);
    }
    let out = scripted(&env, "hello")
        .args(["-p", "x", "--model", ""])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the value is empty"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_bad_flag_never_waits_on_stdin_and_stdin_has_a_cap() {
    let env = Env::new();
    let mut child = scripted(&env, "hello")
        .args(["-p", "x", "--cwd", "/definitely/not/here"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let held = child.stdin.take();
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    drop(held);
    common::assert_one_line_error(&out, "/definitely/not/here");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "the error came before any wait on stdin"
    );
    // An endless stdin stops at the cap with one line.
    let out = scripted(&env, "hello")
        .args(["-p", "x"])
        .stdin(std::fs::File::open("/dev/zero").unwrap())
        .output()
        .unwrap();
    common::assert_one_line_error(&out, "stdin holds more than 64 MiB");
}
