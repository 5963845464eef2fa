//! `cox run` against a loopback server that speaks Anthropic's Messages
//! streaming format: the hello task end to end over real HTTP, and a
//! provider error as one line with exit 1.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::thread;

use common::{Env, lines, stderr};

fn sse(events: &[&str]) -> String {
    events
        .iter()
        .map(|data| {
            let kind: serde_json::Value = serde_json::from_str(data).unwrap();
            format!(
                "event: {}\ndata: {data}\n\n",
                kind["type"].as_str().unwrap()
            )
        })
        .collect()
}

fn write_call() -> String {
    sse(&[
        r#"{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-5","usage":{"input_tokens":900,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_w","name":"write","input":{}}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"hello.txt\", "}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"content\": \"hi\\n\"}"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}"#,
        r#"{"type":"message_stop"}"#,
    ])
}

fn final_text() -> String {
    sse(&[
        r#"{"type":"message_start","message":{"id":"m2","type":"message","role":"assistant","content":[],"model":"claude-sonnet-5","usage":{"input_tokens":960,"cache_read_input_tokens":900,"output_tokens":1}}}"#,
        r#"{"type":"ping"}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Created "}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello.txt."}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}"#,
        r#"{"type":"message_stop"}"#,
    ])
}

/// Answers one request per body, in order; returns the requests' bodies.
fn serve(responses: Vec<(&'static str, String)>) -> (String, thread::JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = thread::spawn(move || {
        let mut bodies = Vec::new();
        for (status, body) in responses {
            let (socket, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(socket);
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut request = vec![0; length];
            reader.read_exact(&mut request).unwrap();
            bodies.push(String::from_utf8(request).unwrap());
            let mut socket = reader.into_inner();
            // An overloaded answer asks to be retried at once.
            let retry = if status.starts_with("529") {
                "retry-after: 0\r\n"
            } else {
                ""
            };
            let head = format!(
                "HTTP/1.1 {status}\r\n{retry}content-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            socket.write_all(head.as_bytes()).unwrap();
            socket.write_all(body.as_bytes()).unwrap();
        }
        bodies
    });
    (url, handle)
}

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
