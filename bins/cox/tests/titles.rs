//! Sessions get a title after their first turn, as the real binary writes
//! it: the cheap tier's few words when the provider has a cheap model of
//! its own (a loopback server speaking Anthropic's wire format here), else
//! the first line of the prompt; `cox sessions` lists it and the ledger
//! books its call as job `title`.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::thread;

use common::{Env, TITLE_REQUEST, anthropic_final_text, anthropic_sse, lines, serve, stderr};
use serde_json::Value;

const PROMPT: &str = "  the login form does not submit  \nsee src/login.ts for the handler";

/// The cheap model's answer: a title in two deltas.
fn title_answer() -> String {
    anthropic_sse(&[
        r#"{"type":"message_start","message":{"id":"t1","type":"message","role":"assistant","content":[],"model":"claude-haiku-4-5","usage":{"input_tokens":64,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Fix the "}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"login form"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":6}}"#,
        r#"{"type":"message_stop"}"#,
    ])
}

/// A loopback Anthropic server answering every connection on its own
/// thread (the title call and the turn's call run at once): a title
/// request gets [`title_answer`], any other the final text. Every socket
/// has `TCP_NODELAY`, so no response waits on a delayed ACK. Returns the
/// URL and the bodies received, in arrival order.
fn serve_with_titles() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&bodies);
    thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(socket) = socket else { return };
            let seen = Arc::clone(&seen);
            thread::spawn(move || {
                socket.set_nodelay(true).unwrap();
                let mut reader = BufReader::new(socket);
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap();
                    }
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                let body = String::from_utf8(body).unwrap();
                let answer = if body.contains(TITLE_REQUEST) {
                    title_answer()
                } else {
                    anthropic_final_text()
                };
                seen.lock().unwrap().push(body);
                let mut socket = reader.into_inner();
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    answer.len()
                );
                let _ = socket.write_all(head.as_bytes());
                let _ = socket.write_all(answer.as_bytes());
            });
        }
    });
    (url, bodies)
}

/// `cox` in the test's home, with `HOME` in a temporary folder too.
fn cox(env: &Env, home: &tempfile::TempDir) -> std::process::Command {
    let mut cmd = env.cox();
    cmd.env("HOME", home.path());
    cmd
}

fn ok(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn titled(lines: &[Value]) -> Vec<&str> {
    lines
        .iter()
        .filter(|l| l["type"] == "session_titled")
        .map(|l| l["title"].as_str().unwrap())
        .collect()
}

#[test]
fn the_cheap_model_titles_the_session_and_its_call_is_booked_as_job_title() {
    let (url, bodies) = serve_with_titles();
    let env = Env::new();
    let home = tempfile::tempdir().unwrap();
    let out = cox(&env, &home)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", &url)
        .args(["run", "-p", PROMPT, "--output-format", "stream-json"])
        .output()
        .unwrap();
    let lines = lines(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(titled(&lines), ["Fix the login form"]);
    let usage = lines
        .iter()
        .find(|l| l["type"] == "usage" && l["job"] == "title")
        .expect("the title call's usage");
    assert_eq!(usage["tier"], "cheap");
    assert_eq!(usage["model"], "claude-haiku-4-5");
    assert_eq!(lines.last().unwrap()["result"], "Created hello.txt.");

    // One title call and one turn call; the title call is small.
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    let title: Value = bodies
        .iter()
        .find(|b| b.contains(TITLE_REQUEST))
        .map(|b| serde_json::from_str(b).unwrap())
        .expect("a title request");
    assert_eq!(title["model"], "claude-haiku-4-5");
    assert!(title["max_tokens"].as_u64().unwrap() <= 64, "{title}");
    assert!(
        title["tools"].as_array().is_none_or(Vec::is_empty),
        "{title}"
    );
    assert!(
        title["messages"]
            .to_string()
            .contains("the login form does not submit")
    );

    let id = lines[0]["session_id"].as_str().unwrap().to_owned();
    let list = ok(&cox(&env, &home).arg("sessions").output().unwrap());
    let row = list.lines().find(|l| l.starts_with(&id)).unwrap();
    assert!(row.contains("Fix the login form"), "{list}");
    let json: Value = serde_json::from_str(&ok(&cox(&env, &home)
        .args(["sessions", "--json"])
        .output()
        .unwrap()))
    .unwrap();
    assert_eq!(json[0]["title"], "Fix the login form");

    // The ledger: the title call is its own row, job `title` on the cheap tier.
    let csv = ok(&cox(&env, &home)
        .args(["stats", "--session", &id, "--csv"])
        .output()
        .unwrap());
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let jobs: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| (r[column("job")], r[column("tier")], r[column("model")]))
        .collect();
    assert!(
        jobs.contains(&("title", "cheap", "claude-haiku-4-5")),
        "{csv}"
    );
    assert!(jobs.contains(&("main", "code", "claude-sonnet-5")), "{csv}");
    // The session's cost counts the title call: it was booked before the
    // turn was.
    let spent: f64 = rows
        .iter()
        .map(|r| r[column("cost_usd")].parse::<f64>().unwrap())
        .sum();
    let title_cost: f64 = rows
        .iter()
        .find(|r| r[column("job")] == "title")
        .map(|r| r[column("cost_usd")].parse().unwrap())
        .unwrap();
    assert!(title_cost > 0.0, "{csv}");
    let cost = json[0]["cost_usd"].as_f64().unwrap();
    assert!((cost - spent).abs() < 2e-6, "{cost} against {spent}: {csv}");
}

#[test]
fn a_refused_title_call_leaves_the_first_line_of_the_prompt() {
    // `serve` refuses title requests with a 400.
    let (url, server) = serve(vec![("200 OK", anthropic_final_text())]);
    let env = Env::new();
    let home = tempfile::tempdir().unwrap();
    let out = cox(&env, &home)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", &url)
        .args(["run", "-p", PROMPT, "--output-format", "stream-json"])
        .output()
        .unwrap();
    let lines = lines(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(titled(&lines), ["the login form does not submit"]);
    assert!(!lines.iter().any(|l| l["job"] == "title"), "nothing booked");
    assert_eq!(server.join().unwrap().len(), 1, "the turn's one call");
}

#[test]
fn the_scripted_provider_titles_with_the_first_line_and_a_resume_keeps_it() {
    let env = Env::new();
    let home = tempfile::tempdir().unwrap();
    let scripted = |prompt: &str, extra: &[&str]| {
        cox(&env, &home)
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", common::scenario("hello"))
            .args(["run", "-p", prompt, "--output-format", "stream-json"])
            .args(["--permission-mode", "acceptEdits"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = scripted("\n  make   hello.txt\n\nwith hi in it", &[]);
    let lines = lines(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(titled(&lines), ["make hello.txt"]);
    let done = lines.iter().position(|l| l["type"] == "turn_done").unwrap();
    assert_eq!(
        lines[done - 1]["type"],
        "session_titled",
        "at the end of the turn"
    );
    let id = lines[0]["session_id"].as_str().unwrap().to_owned();

    std::fs::remove_file(env.work.path().join("hello.txt")).unwrap();
    let again = scripted("something else entirely", &["--resume", &id]);
    assert!(titled(&common::lines(&again)).is_empty(), "no second title");
    let detail = ok(&cox(&env, &home).args(["sessions", &id]).output().unwrap());
    assert!(detail.contains("title     make hello.txt\n"), "{detail}");
}
