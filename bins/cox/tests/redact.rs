//! `cox run` prints nothing secret-shaped, in any output format: the
//! `secrets` scenario cats a file of made-up credentials (one per shape)
//! and the model quotes a key back. Neither stdout, stderr nor the rollout
//! may hold one of them; «redacted» stands in their place.

mod common;

use std::process::Output;

use common::{Env, lines, stderr};

/// The secret parts of `tests/scenarios/secrets.env`.
const SECRETS: [&str; 5] = [
    "sk-proj-EXAMPLEexample0123456789",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_EXAMPLEexampleEXAMPLEexample012345",
    "EXAMPLEtoken.0123456789",
    "b3BlbnNzaC1rZXktdjEAAAAAEXAMPLEnotakey",
];

fn run_secrets(format: &str) -> (Env, Output) {
    let env = Env::new();
    let fixture = common::scenario("secrets").with_extension("env");
    std::fs::copy(fixture, env.work.path().join("config.env")).unwrap();
    let out = env.run("secrets", &["--output-format", format]);
    (env, out)
}

fn assert_nothing_secret(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{what} printed {secret}:\n{text}");
    }
}

fn assert_clean(env: &Env, format: &str, out: &Output) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{format}: {}", stderr(out));
    assert_nothing_secret(&format!("{format} stdout"), &stdout);
    assert_nothing_secret(&format!("{format} stderr"), &stderr(out));
    assert!(stdout.contains("«redacted»"), "{format}: {stdout}");
    let rollouts = env.rollouts();
    assert_eq!(rollouts.len(), 1);
    assert_nothing_secret(
        "the rollout",
        &std::fs::read_to_string(&rollouts[0]).unwrap(),
    );
}

#[test]
fn text_output_never_prints_a_secret() {
    let (env, out) = run_secrets("text");
    assert_clean(&env, "text", &out);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "config.env sets OPENAI_API_KEY=«redacted» in plain text; rotate it.\n"
    );
    // The Security notice is a warning on stderr.
    assert!(stderr(&out).contains("cox: warning: "), "{}", stderr(&out));
}

#[test]
fn json_output_never_prints_a_secret() {
    let (env, out) = run_secrets("json");
    assert_clean(&env, "json", &out);
    let result = &lines(&out)[0];
    assert_eq!(
        result["result"],
        "config.env sets OPENAI_API_KEY=«redacted» in plain text; rotate it."
    );
}

#[test]
fn stream_json_output_never_prints_a_secret() {
    let (env, out) = run_secrets("stream-json");
    assert_clean(&env, "stream-json", &out);
    let events = lines(&out);
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let done = kinds.iter().position(|k| *k == "tool_call_done").unwrap();
    assert_eq!(kinds[done + 1], "notice");
    assert_eq!(events[done + 1]["level"], "security");
    let visible = events[done]["result"]["visible"].as_str().unwrap();
    assert!(
        visible.contains("Authorization: Bearer «redacted»"),
        "{visible}"
    );
    assert!(visible.contains("LOG_LEVEL=debug"), "the rest is kept");
}
