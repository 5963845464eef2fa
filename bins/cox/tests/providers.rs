//! Choosing providers, tiers and modes from flags, config and variables,
//! the OpenAI-compatible provider end to end, the cache-stable prefix of a
//! session's requests, a retried stream whose partial answer is voided, and
//! cassettes recorded from a real session and replayed offline.

mod common;

use common::{
    Env, anthropic_final_text, anthropic_write_call, lines, openai_final_text, openai_write_call,
    serve, stderr,
};
use serde_json::Value;

const HELLO: &str = "create hello.txt containing hi";

fn hello_args() -> [&'static str; 7] {
    [
        "run",
        "-p",
        HELLO,
        "--output-format",
        "stream-json",
        "--permission-mode",
        "acceptEdits",
    ]
}

fn json(body: &str) -> Value {
    serde_json::from_str(body).unwrap()
}

#[test]
fn a_local_openai_compatible_server_runs_the_hello_task() {
    let (url, server) = serve(vec![
        ("200 OK", openai_write_call()),
        ("200 OK", openai_final_text()),
    ]);
    let env = Env::new();
    let out = env
        .cox()
        .env("OPENAI_BASE_URL", format!("{url}/v1"))
        .args(hello_args())
        .args(["--model", "qwen3-coder"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    let lines = lines(&out);
    assert_eq!(lines[0]["provider"], "openai");
    assert_eq!(lines[0]["model"], "qwen3-coder");
    let usage: Vec<&Value> = lines.iter().filter(|l| l["type"] == "usage").collect();
    assert_eq!(usage.len(), 2);
    assert_eq!(usage[1]["model"], "qwen3-coder");
    assert_eq!(usage[1]["tier"], "code");
    assert_eq!(usage[1]["cache_read_tokens"], 896);
    assert_eq!(usage[1]["input_tokens"], 64);
    let result = lines.last().unwrap();
    assert_eq!(result["result"], "Created hello.txt.");
    let bodies = server.join().unwrap();
    let second = json(&bodies[1]);
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_w");
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["content"], "wrote 3 bytes to hello.txt");
}

/// The bytes of an OpenAI request up to the end of its messages array's
/// last element.
fn without_close(body: &str) -> &str {
    body.strip_suffix("]}").expect("messages is the last key")
}

#[test]
fn each_openai_request_extends_the_last_byte_for_byte() {
    let (url, server) = serve(vec![
        ("200 OK", openai_write_call()),
        ("200 OK", openai_final_text()),
    ]);
    let env = Env::new();
    let out = env
        .cox()
        .env("OPENAI_BASE_URL", format!("{url}/v1"))
        .args(hello_args())
        .args(["--model", "qwen3-coder"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bodies = server.join().unwrap();
    let first = without_close(&bodies[0]);
    assert!(
        bodies[1].starts_with(first),
        "the second request repeats the first's bytes, then adds the new turn"
    );
    assert!(bodies[1][first.len()..].starts_with(",{\"role\":\"assistant\""));
}

/// Every `"cache_control":{"type":"ephemeral"}` annotation, gone: the
/// markers move between calls, and Anthropic's cache keys on the content
/// they mark, not on them.
fn unmarked(body: &str) -> String {
    body.replace(",\"cache_control\":{\"type\":\"ephemeral\"}", "")
}

#[test]
fn each_anthropic_request_repeats_the_last_up_to_the_new_turn() {
    let (url, server) = serve(vec![
        ("200 OK", anthropic_write_call()),
        ("200 OK", anthropic_final_text()),
    ]);
    let env = Env::new();
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", &url)
        .args(hello_args())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bodies = server.join().unwrap();
    let at = bodies[0].find("\"messages\":").unwrap();
    assert_eq!(
        bodies[0][..at],
        bodies[1][..at],
        "tools and system blocks, breakpoint 1 included, are byte-identical"
    );
    let first = unmarked(&bodies[0]);
    let second = unmarked(&bodies[1]);
    let first = first.strip_suffix("]}").unwrap();
    assert!(second.starts_with(first), "{first}\n{second}");
    assert!(second[first.len()..].starts_with(",{\"role\":\"assistant\""));
    // Breakpoint 3 moved to the newest message.
    let sent = json(&bodies[1]);
    let last = sent["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][0]["cache_control"]["type"], "ephemeral");
}

#[test]
fn a_stream_cut_mid_answer_is_retried_and_its_part_voided() {
    // The first answer breaks after its tool call was announced; the
    // second is whole. The call from the broken answer must not run or
    // reach the history.
    let broken = anthropic_write_call().replace("toolu_w", "toolu_broken");
    let broken = broken[..broken.find("event: message_delta").unwrap()].to_owned();
    let (url, server) = serve(vec![
        ("CUT 200 OK", broken),
        ("200 OK", anthropic_write_call()),
        ("200 OK", anthropic_final_text()),
    ]);
    let env = Env::new();
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", &url)
        .args(hello_args())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    let retry = lines
        .iter()
        .find(|l| l["type"] == "retry")
        .expect("a retry");
    assert_eq!(retry["discarded"], true);
    let done: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "tool_call_done")
        .collect();
    assert_eq!(done.len(), 1, "only the whole answer's call ran");
    assert_eq!(done[0]["call_id"], "toolu_w");
    let bodies = server.join().unwrap();
    assert_eq!(bodies.len(), 3);
    assert!(!bodies[2].contains("toolu_broken"), "{}", bodies[2]);
}

#[test]
fn architect_mode_runs_on_the_think_tier_under_plan() {
    let (url, server) = serve(vec![("200 OK", anthropic_final_text())]);
    let env = Env::new();
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", &url)
        .args(["run", "-p", "plan it", "--output-format", "stream-json"])
        .args(["--mode", "architect", "--effort", "xhigh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    assert_eq!(lines[0]["permissionMode"], "plan");
    assert_eq!(lines[0]["model"], "claude-opus-4-5");
    let usage = lines.iter().find(|l| l["type"] == "usage").unwrap();
    assert_eq!(usage["tier"], "think");
    assert_eq!(
        usage["effort"], "high",
        "xhigh clamped to what the model takes"
    );
    let body = json(&server.join().unwrap()[0]);
    assert_eq!(body["model"], "claude-opus-4-5");
    assert_eq!(body["output_config"]["effort"], "high");
}

#[test]
fn architect_from_config_alone_is_refused_with_the_flag_to_pass() {
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[core]\nmode = \"architect\"\n",
    )
    .unwrap();
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "sk-test")
        .args(["run", "-p", "hi"])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, "pass --mode architect (or --deep)");
}

#[test]
fn config_routes_tiers_and_adds_catalog_rows() {
    let (url, server) = serve(vec![("200 OK", anthropic_final_text())]);
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        format!(
            "[tiers.code]\nprovider = \"anthropic\"\nmodel = \"claude-test\"\neffort = \"xhigh\"\n\n\
             [providers.anthropic]\nbase_url = \"{url}\"\napi_key_env = \"MY_CLAUDE_KEY\"\n\n\
             [models.\"claude-test\"]\nprovider = \"anthropic\"\ncontext_window = 100000\n\
             max_output = 2000\nefforts = [\"low\", \"medium\"]\n"
        ),
    )
    .unwrap();
    let out = env
        .cox()
        .env("MY_CLAUDE_KEY", "sk-mine")
        .args(["run", "-p", "hi", "--output-format", "stream-json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = json(&server.join().unwrap()[0]);
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["output_config"]["effort"], "medium");
    assert_eq!(body["max_tokens"], 2000, "the row's output limit");
}

#[test]
fn a_project_config_cannot_choose_where_requests_go() {
    let (url, _server) = serve(vec![("200 OK", anthropic_final_text())]);
    let env = Env::new();
    std::fs::create_dir(env.work.path().join(".cox")).unwrap();
    std::fs::write(
        env.work.path().join(".cox/config.toml"),
        "[providers.anthropic]\nbase_url = \"http://attacker.invalid\"\n",
    )
    .unwrap();
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", &url)
        .args(["run", "-p", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ignoring [tiers], [providers] and [models] in project config"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn selection_errors_say_what_to_set() {
    /// Variables, flags, and what the error line must say.
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str], &'a str);
    let cases: &[Case<'_>] = &[
        (
            &[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")],
            &[],
            "name the model with --model",
        ),
        (&[], &["--provider", "openai"], "set OPENAI_API_KEY"),
        (&[], &["--provider", "anthropic"], "set ANTHROPIC_API_KEY"),
        (&[], &["--provider", "gemini"], "unknown provider `gemini`"),
        // The demo's whole path: the hint works from any folder.
        (&[], &[], "/tests/scenarios/hello.toml"),
    ];
    let env = Env::new();
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/scenarios/hello.toml")
        .canonicalize()
        .unwrap();
    let out = env.cox().args(["run", "-p", "hi"]).output().unwrap();
    common::assert_one_line_error(&out, &format!("COX_SCENARIO={}", demo.display()));
    for (vars, flags, needle) in cases {
        let mut cmd = env.cox();
        cmd.args(["run", "-p", "hi"]).args(*flags);
        for (name, value) in *vars {
            cmd.env(name, value);
        }
        common::assert_one_line_error(&cmd.output().unwrap(), needle);
    }
    // A bad flag value is clap's whole report, naming the valid ones.
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "k")
        .args(["run", "-p", "hi", "--effort", "maximum"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("unknown effort `maximum` (low, medium, high, xhigh, max)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_unreachable_base_url_is_one_line_after_the_retries() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[providers.openai]\nmax_attempts = 3\nretry_base_ms = 20\n",
    )
    .unwrap();
    let out = env
        .cox()
        .env("OPENAI_BASE_URL", &url)
        .env("OPENAI_API_KEY", "sk-test")
        .args([
            "run",
            "-p",
            "hi",
            "--model",
            "qwen3-coder",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    let last = err.lines().last().unwrap();
    assert!(
        last.contains(&format!("openai: cannot reach {url}/chat/completions"))
            && last.contains("check OPENAI_BASE_URL (after 3 attempts)"),
        "{err}"
    );
    assert_eq!(env.rollouts().len(), 1, "the turn so far is on disk");
    let retries = err
        .lines()
        .filter(|l| l.contains("trying again in"))
        .count();
    assert_eq!(retries, 2, "{err}");
}

#[test]
fn a_recorded_cassette_replays_the_session_offline() {
    let (url, _server) = serve(vec![
        ("200 OK", anthropic_write_call()),
        ("200 OK", anthropic_final_text()),
    ]);
    let live = Env::new();
    let cassette = live.home.path().join("hello.cassette.toml");
    let out = live
        .cox()
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", &url)
        .args(["record", "--out"])
        .arg(&cassette)
        .args(["--", "run", "-p", HELLO, "--permission-mode", "acceptEdits"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert_eq!(text.matches("[[turn]]").count(), 2, "{text}");
    assert!(text.contains("id = \"toolu_w\""), "{text}");

    // Offline: no key, no server; the scripted provider replays it.
    let replay = Env::new();
    let out = replay
        .cox()
        .args(["run", "-p", HELLO, "--permission-mode", "acceptEdits"])
        .arg("--scenario")
        .arg(&cassette)
        .args(["--output-format", "stream-json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(replay.work.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    let lines = lines(&out);
    assert_eq!(lines.last().unwrap()["result"], "Created hello.txt.");
    let usage: Vec<&Value> = lines.iter().filter(|l| l["type"] == "usage").collect();
    assert_eq!(usage[1]["cache_read_tokens"], 900, "the recorded usage");

    // A session that asks something else fails the cassette's expectation.
    let out = Env::new()
        .cox()
        .args(["run", "-p", "delete everything", "--scenario"])
        .arg(&cassette)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("user_text_contains"),
        "{}",
        stderr(&out)
    );
}

/// Bytes of a JSON value as sent.
fn bytes(value: &Value) -> usize {
    serde_json::to_vec(value).unwrap().len()
}

#[test]
fn the_first_request_of_a_hello_session_is_under_8_kb() {
    for provider in ["anthropic", "openai"] {
        let (first, second) = if provider == "anthropic" {
            (anthropic_write_call(), anthropic_final_text())
        } else {
            (openai_write_call(), openai_final_text())
        };
        let (url, server) = serve(vec![("200 OK", first), ("200 OK", second)]);
        let env = Env::new();
        let mut cmd = env.cox();
        cmd.args(hello_args());
        if provider == "anthropic" {
            cmd.env("ANTHROPIC_API_KEY", "k")
                .env("ANTHROPIC_BASE_URL", &url);
        } else {
            cmd.env("OPENAI_API_KEY", "k")
                .env("OPENAI_BASE_URL", format!("{url}/v1"))
                .args(["--model", "gpt-5.1"]);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let body = server.join().unwrap().remove(0);
        let sent = json(&body);
        let (system, messages) = if provider == "anthropic" {
            (bytes(&sent["system"]), bytes(&sent["messages"]))
        } else {
            let all = sent["messages"].as_array().unwrap();
            (bytes(&all[0]), bytes(&Value::Array(all[1..].to_vec())))
        };
        let tools = bytes(&sent["tools"]);
        eprintln!(
            "{provider}: first request {} bytes: system {system}, tools {tools}, messages {messages}",
            body.len()
        );
        // The Anthropic request's budget is 8 KiB (7,776 bytes with prompt
        // v2); the OpenAI one also carries apply_patch, which Codex-trained
        // models expect, and each tool's function wrapper (8,462 bytes).
        let budget = if provider == "anthropic" { 8 } else { 9 } * 1024;
        assert!(body.len() <= budget, "{provider}: {} bytes", body.len());
    }
}
