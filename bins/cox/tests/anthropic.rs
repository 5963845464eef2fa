//! `cox run` against a loopback server that speaks Anthropic's Messages
//! streaming format: the hello task end to end over real HTTP, and a
//! provider error as one line with exit 1.

mod common;

use common::{
    Env, anthropic_final_text as final_text, anthropic_write_call as write_call, lines, serve,
    stderr,
};

#[test]
fn the_hello_task_runs_against_the_anthropic_wire_format() {
    let (url, server) = serve(vec![("200 OK", write_call()), ("200 OK", final_text())]);
    let env = Env::new();
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", &url)
        .args([
            "run",
            "-p",
            "create hello.txt containing hi",
            "--output-format",
            "stream-json",
        ])
        .args(["--permission-mode", "acceptEdits"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    let lines = lines(&out);
    assert_eq!(lines[0]["model"], "claude-sonnet-5");
    assert_eq!(lines[0]["provider"], "anthropic");
    let result = lines.last().unwrap();
    assert_eq!(result["result"], "Created hello.txt.");
    assert_eq!(result["usage"]["cache_read_input_tokens"], 900);
    assert_eq!(result["usage"]["output_tokens"], 35);
    let bodies = server.join().unwrap();
    let second: serde_json::Value = serde_json::from_str(&bodies[1]).unwrap();
    let last = second["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"][0]["type"], "tool_result");
    assert_eq!(last["content"][0]["tool_use_id"], "toolu_w");
    assert_eq!(last["content"][0]["content"], "wrote 3 bytes to hello.txt");
}

#[test]
fn a_provider_error_is_one_line_and_exit_one() {
    let body =
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
    let (url, _server) = serve(vec![("401 Unauthorized", body.to_owned())]);
    let env = Env::new();
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "sk-wrong")
        .env("ANTHROPIC_BASE_URL", &url)
        .args(["run", "-p", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("authentication_error: invalid x-api-key (HTTP 401)"),
        "{err}"
    );
    assert_eq!(env.rollouts().len(), 1, "the turn so far is on disk");
}

#[test]
fn no_key_and_no_scenario_says_what_to_set() {
    let out = Env::new().cox().args(["run", "-p", "hi"]).output().unwrap();
    common::assert_one_line_error(&out, "set ANTHROPIC_API_KEY");
}

#[test]
fn an_overloaded_api_is_retried_with_a_retry_event() {
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let (url, server) = serve(vec![
        ("529 Site Overloaded", overloaded.to_owned()),
        ("200 OK", write_call()),
        ("200 OK", final_text()),
    ]);
    let env = Env::new();
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", &url)
        .args([
            "run",
            "-p",
            "create hello.txt",
            "--output-format",
            "stream-json",
        ])
        .args(["--permission-mode", "acceptEdits"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    let retry = lines
        .iter()
        .find(|l| l["type"] == "retry")
        .expect("a retry event");
    assert_eq!(
        retry["reason"],
        "anthropic: overloaded_error: Overloaded (HTTP 529)"
    );
    assert_eq!(
        (retry["attempt"].as_u64(), retry["of"].as_u64()),
        (Some(2), Some(4))
    );
    assert_eq!(retry["discarded"], false);
    assert_eq!(server.join().unwrap().len(), 3);
}
