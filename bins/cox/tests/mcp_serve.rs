//! `cox mcp serve` driven by the official MCP Python SDK (PyPI `mcp`,
//! `tests/mcp_serve/client.py`): the tools listed with valid input
//! schemas; `cox` runs a session with progress notifications for its text
//! and tool calls, `cox-reply` continues it; a bad cwd and an unknown
//! session are tool errors; an ask is denied with its reason.
//!
//! `COX_TEST_MCP_PYTHON` names a Python with the SDK (`.ci/run` installs
//! it outside the repository). Without it the test says so and does
//! nothing, unless `CI` is set: there it fails.

mod common;

use std::path::Path;

use common::{Env, scenario, stderr};

fn python() -> Option<String> {
    let found = std::env::var("COX_TEST_MCP_PYTHON")
        .ok()
        .filter(|v| !v.is_empty());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this test: set COX_TEST_MCP_PYTHON"
        );
        eprintln!("skipped: set COX_TEST_MCP_PYTHON to a Python with the mcp package to run it");
    }
    found
}

fn client(python: &str, case: &str, scenario_name: &str) -> (Env, std::process::Output) {
    let env = Env::new();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp_serve/client.py");
    let work = env.work.path().canonicalize().unwrap();
    let cox = env.cox();
    let mut command = std::process::Command::new(python);
    command
        .envs(cox.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario(scenario_name))
        .current_dir(&work)
        .arg(script)
        .args([case, env!("CARGO_BIN_EXE_cox")])
        .arg(&work);
    for (key, value) in cox.get_envs() {
        if value.is_none() {
            command.env_remove(key);
        }
    }
    let out = command.output().unwrap();
    (env, out)
}

/// The client passed every check of `case`.
fn assert_ok(out: &std::process::Output, case: &str) {
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(out));
    assert_eq!(text.trim(), format!("ok {case}"));
}

#[test]
fn an_mcp_client_runs_and_continues_a_session_through_cox_mcp_serve() {
    let Some(python) = python() else {
        return;
    };
    let (env, out) = client(&python, "session", "serve_two_turns");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    assert_eq!(text.trim(), "ok session");
    assert_eq!(
        env.rollouts().len(),
        1,
        "cox-reply went on in the same session"
    );

    let (env, out) = client(&python, "denied", "serve_denied");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    assert!(!env.work.path().join("hello.txt").exists());
}

#[test]
fn an_ask_goes_to_the_caller_as_an_elicitation() {
    let Some(python) = python() else {
        return;
    };
    let (env, out) = client(&python, "allowed", "hello");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    let (env, out) = client(&python, "declined", "serve_declined");
    assert_ok(&out, "declined");
    assert!(!env.work.path().join("hello.txt").exists());
}

#[test]
fn on_the_stateless_revision_an_ask_comes_back_input_required_and_the_retry_answers_it() {
    let Some(python) = python() else {
        return;
    };
    let (env, out) = client(&python, "stateless_allowed", "hello");
    assert_ok(&out, "stateless_allowed");
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    let (env, out) = client(&python, "stateless_declined", "serve_declined");
    assert_ok(&out, "stateless_declined");
    assert!(!env.work.path().join("hello.txt").exists());
}

#[test]
fn flags_a_call_sets_are_refused() {
    let env = Env::new();
    for (flags, needle) in [
        (
            &["mcp", "serve", "-p", "x"][..],
            "cox mcp serve does not take -p",
        ),
        (
            &["mcp", "serve", "--output-format", "json"][..],
            "cox mcp serve does not take --output-format",
        ),
    ] {
        let out = env.cox().args(flags).output().unwrap();
        common::assert_one_line_error(&out, needle);
    }
}
