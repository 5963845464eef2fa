//! The real binary against servers that behave like gateways (LiteLLM,
//! OpenRouter) and like providers at their limits: usage that arrives in
//! `message_delta`, in-stream errors named by a numeric code, answers cut
//! at the output limit, multi-line error bodies, a first prompt over the
//! window, and the text of a discarded attempt. Each over loopback HTTP,
//! both wire formats where the case exists in both.

mod common;

use common::{Env, PAUSE, anthropic_final_text, anthropic_sse, lines, openai_sse, serve, stderr};
use serde_json::Value;

const HELLO: &str = "create hello.txt containing hi";

/// Retries without the real backoff, so a retried case takes milliseconds.
fn fast_retries(env: &Env) {
    std::fs::write(
        env.home.path().join("config.toml"),
        "[providers.anthropic]\nretry_base_ms = 1\n\n[providers.openai]\nretry_base_ms = 1\n",
    )
    .unwrap();
}

fn anthropic(env: &Env, url: &str) -> std::process::Output {
    env.cox()
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", url)
        .args(["run", "-p", HELLO, "--output-format", "stream-json"])
        .args(["--permission-mode", "acceptEdits"])
        .output()
        .unwrap()
}

fn openai(env: &Env, url: &str) -> std::process::Output {
    env.cox()
        .env("OPENAI_BASE_URL", format!("{url}/v1"))
        .args(["run", "-p", HELLO, "--output-format", "stream-json"])
        .args(["--permission-mode", "acceptEdits", "--model", "qwen3-coder"])
        .output()
        .unwrap()
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

fn notices(lines: &[Value]) -> Vec<String> {
    of_type(lines, "notice")
        .iter()
        .map(|n| n["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn result(lines: &[Value]) -> &Value {
    lines
        .last()
        .filter(|l| l["type"] == "result")
        .expect("a result line")
}

/// A gateway's Anthropic stream: zeros in `message_start`, the real counts
/// in `message_delta`.
fn gateway_text(text: &str, input: u64, cache_read: u64) -> String {
    let start = r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-5","usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}"#;
    let delta = format!(
        r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"{text}"}}}}"#
    );
    let end = format!(
        r#"{{"type":"message_delta","delta":{{"stop_reason":"end_turn"}},"usage":{{"input_tokens":{input},"output_tokens":7,"cache_read_input_tokens":{cache_read},"cache_creation_input_tokens":0}}}}"#
    );
    anthropic_sse(&[
        start,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        &delta,
        r#"{"type":"content_block_stop","index":0}"#,
        &end,
        r#"{"type":"message_stop"}"#,
    ])
}

#[test]
fn usage_in_message_delta_is_booked_and_costed() {
    let (url, server) = serve(vec![("200 OK", gateway_text("Hello.", 1200, 800))]);
    let env = Env::new();
    let out = anthropic(&env, &url);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    server.join().unwrap();
    let lines = lines(&out);
    let usage = of_type(&lines, "usage");
    assert_eq!(usage.len(), 1);
    assert_eq!(usage[0]["input_tokens"], 1200);
    assert_eq!(usage[0]["cache_read_tokens"], 800);
    assert_eq!(usage[0]["output_tokens"], 7);
    let result = result(&lines);
    assert_eq!(result["usage"]["input_tokens"], 1200);
    // 1,200 × $3 + 800 × $0.30 + 7 × $15 per million tokens.
    let cost = result["total_cost_usd"].as_f64().unwrap();
    let expected = (1200.0 * 3.0 + 800.0 * 0.30 + 7.0 * 15.0) / 1e6;
    assert!((cost - expected).abs() < 1e-9, "{cost} against {expected}");
}

/// OpenAI chunks of a text answer, cut before `[DONE]` by an error chunk
/// of a gateway: its own type, the upstream's status as the code.
fn openai_partial_then_error(code: &str, kind: &str) -> String {
    let mut body = String::new();
    body.push_str(r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{"role":"assistant","content":"Half an ans"},"finish_reason":null}]}"#);
    body.push_str("\n\n");
    body.push_str(PAUSE);
    body.push_str(&format!(
        r#"data: {{"error": {{"message": "litellm.RateLimitError: upstream said\nslow down", "type": "{kind}", "param": null, "code": "{code}"}}}}"#
    ));
    body.push_str("\n\n");
    body
}

fn openai_text(text: &str) -> String {
    openai_sse(&[
        &format!(
            r#"{{"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{{"index":0,"delta":{{"role":"assistant","content":"{text}"}},"finish_reason":null}}]}}"#
        ),
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":3,"total_tokens":53}}"#,
    ])
}

#[test]
fn an_in_stream_error_named_by_its_code_is_retried_and_its_text_voided() {
    for (code, kind) in [("429", "throttling_error"), ("500", "None"), ("529", "")] {
        let (url, server) = serve(vec![
            ("200 OK", openai_partial_then_error(code, kind)),
            ("200 OK", openai_text("The whole answer.")),
        ]);
        let env = Env::new();
        fast_retries(&env);
        let out = openai(&env, &url);
        assert_eq!(out.status.code(), Some(0), "{code}: {}", stderr(&out));
        assert_eq!(server.join().unwrap().len(), 2, "{code}: tried again");
        let lines = lines(&out);
        let retry = of_type(&lines, "retry");
        assert_eq!(retry.len(), 1, "{code}");
        assert_eq!(retry[0]["discarded"], true, "{code}");
        let reason = retry[0]["reason"].as_str().unwrap();
        assert!(!reason.contains('\n'), "{reason:?}");
        assert!(reason.contains("upstream said slow down"), "{reason}");
        assert_eq!(result(&lines)["result"], "The whole answer.", "{code}");
    }
}

#[test]
fn an_anthropic_error_event_named_by_its_code_is_retried() {
    let partial = anthropic_sse(&[
        r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-5","usage":{"input_tokens":0,"output_tokens":0}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Half an ans"}}"#,
    ]) + PAUSE
        + &anthropic_sse(&[
            r#"{"type":"error","error":{"type":"throttling_error","message":"upstream\nsaid slow down","code":"429"}}"#,
        ]);
    let (url, server) = serve(vec![
        ("200 OK", partial),
        ("200 OK", gateway_text("The whole answer.", 40, 0)),
    ]);
    let env = Env::new();
    fast_retries(&env);
    let out = anthropic(&env, &url);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(server.join().unwrap().len(), 2);
    let lines = lines(&out);
    let retry = of_type(&lines, "retry");
    assert_eq!(retry.len(), 1);
    assert_eq!(retry[0]["discarded"], true);
    assert_eq!(
        retry[0]["reason"],
        "anthropic: throttling_error: upstream said slow down"
    );
    assert_eq!(result(&lines)["result"], "The whole answer.");
}

#[test]
fn a_broken_attempts_reported_usage_is_booked() {
    // Anthropic counts the prompt in message_start; the attempt then breaks.
    let partial = anthropic_sse(&[
        r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-5","usage":{"input_tokens":500,"output_tokens":1}}}"#,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    ]);
    let (url, server) = serve(vec![
        ("200 OK", partial),
        ("200 OK", anthropic_final_text()),
    ]);
    let env = Env::new();
    fast_retries(&env);
    let out = anthropic(&env, &url);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    server.join().unwrap();
    let lines = lines(&out);
    let usage = of_type(&lines, "usage");
    assert_eq!(usage.len(), 2, "both calls booked: {usage:?}");
    assert_eq!(usage[0]["input_tokens"], 500);
    assert_eq!(result(&lines)["usage"]["input_tokens"], 500 + 960);
    assert_eq!(result(&lines)["result"], "Created hello.txt.");
}

/// An Anthropic answer whose `write` call the output limit cuts off.
fn anthropic_cut_write() -> String {
    anthropic_sse(&[
        r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-5","usage":{"input_tokens":900,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Writing it."}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_cut","name":"write","input":{}}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"hello.txt\", \"content\": \"hi hi hi"}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":64000}}"#,
        r#"{"type":"message_stop"}"#,
    ])
}

/// The same in Chat Completions chunks, `finish_reason: "length"`.
fn openai_cut_write() -> String {
    openai_sse(&[
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{"role":"assistant","content":"Writing it."},"finish_reason":null}]}"#,
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_cut","type":"function","function":{"name":"write","arguments":"{\"path\": \"hello.txt\", \"content\": \"hi hi"}}]},"finish_reason":null}]}"#,
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[],"usage":{"prompt_tokens":900,"completion_tokens":4096,"total_tokens":4996}}"#,
    ])
}

/// What a cut call must look like on every surface and in the next request.
fn assert_cut_call_told(lines: &[Value], bodies: &[String], id: &str, env: &Env) {
    assert!(
        !env.work.path().join("hello.txt").exists(),
        "the cut call never ran"
    );
    let done = of_type(lines, "tool_call_done");
    assert_eq!(done.len(), 1);
    assert_eq!(done[0]["call_id"], id);
    assert_eq!(done[0]["result"]["ok"], false);
    let told = done[0]["result"]["visible"].as_str().unwrap();
    assert!(told.contains("cut off at the output limit"), "{told}");
    let notices = notices(lines);
    assert!(
        notices
            .iter()
            .any(|n| n.contains("`write` was cut off at the output limit")
                && n.contains("did not run")),
        "{notices:?}"
    );
    assert!(
        bodies[1].contains(id) && bodies[1].contains("cut off at the output limit"),
        "the next request tells the model: {}",
        bodies[1]
    );
    assert_eq!(of_type(lines, "usage").len(), 2, "both calls booked");
    assert_eq!(of_type(lines, "retry").len(), 0, "not retried unchanged");
}

#[test]
fn a_call_cut_at_the_output_limit_is_told_to_the_model_not_retried() {
    let (url, server) = serve(vec![
        ("200 OK", anthropic_cut_write()),
        ("200 OK", anthropic_final_text()),
    ]);
    let env = Env::new();
    let out = anthropic(&env, &url);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bodies = server.join().unwrap();
    assert_eq!(bodies.len(), 2);
    let lines = lines(&out);
    assert_cut_call_told(&lines, &bodies, "toolu_cut", &env);
    // The history holds the call with no input, and the text before it.
    let sent: Value = serde_json::from_str(&bodies[1]).unwrap();
    let reply = &sent["messages"][1];
    assert_eq!(reply["role"], "assistant");
    assert_eq!(reply["content"][0]["text"], "Writing it.");
    assert_eq!(reply["content"][1]["id"], "toolu_cut");
    assert_eq!(reply["content"][1]["input"], serde_json::json!({}));
    assert_eq!(result(&lines)["stop"], "end_turn");

    let (url, server) = serve(vec![
        ("200 OK", openai_cut_write()),
        ("200 OK", openai_text("Done in parts.")),
    ]);
    let env = Env::new();
    let out = openai(&env, &url);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bodies = server.join().unwrap();
    assert_eq!(bodies.len(), 2);
    assert_cut_call_told(&common::lines(&out), &bodies, "call_cut", &env);
}

#[test]
fn a_second_cut_in_a_row_stops_the_turn_at_the_limit() {
    let (url, server) = serve(vec![
        ("200 OK", openai_cut_write()),
        (
            "200 OK",
            openai_cut_write().replace("call_cut", "call_cut2"),
        ),
    ]);
    let env = Env::new();
    let out = openai(&env, &url);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(server.join().unwrap().len(), 2);
    let lines = lines(&out);
    let result = result(&lines);
    assert_eq!(result["stop"], "max_tokens");
    assert_eq!(result["subtype"], "error_max_tokens");
    assert_eq!(of_type(&lines, "usage").len(), 2);
    let notices = notices(&lines);
    assert!(
        notices
            .last()
            .is_some_and(|n| n.contains("cut off at the output limit") && n.contains("stops here")),
        "{notices:?}"
    );
}

#[test]
fn a_text_answer_at_the_output_limit_is_a_stop_of_its_own() {
    let anthropic_cut = anthropic_sse(&[
        r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-5","usage":{"input_tokens":90,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"A very long ans"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":64000}}"#,
        r#"{"type":"message_stop"}"#,
    ]);
    let openai_cut = openai_sse(&[
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{"role":"assistant","content":"A very long ans"},"finish_reason":"length"}]}"#,
    ]);
    for (anthropic_format, body) in [(true, anthropic_cut), (false, openai_cut)] {
        let (url, server) = serve(vec![("200 OK", body)]);
        let env = Env::new();
        let out = if anthropic_format {
            anthropic(&env, &url)
        } else {
            openai(&env, &url)
        };
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        server.join().unwrap();
        let lines = lines(&out);
        let done = of_type(&lines, "turn_done");
        assert_eq!(done[0]["stop"], "max_tokens");
        let result = result(&lines);
        assert_eq!(result["stop"], "max_tokens");
        assert_eq!(result["result"], "A very long ans");
        let notices = notices(&lines);
        assert!(
            notices
                .iter()
                .any(|n| n.contains("answer was cut off at the output limit")),
            "{notices:?}"
        );
    }
}

#[test]
fn provider_errors_are_one_line_without_the_status_twice() {
    let body = r#"{"error": {"message": "litellm.BadRequestError: the upstream\n  refused:\n\tbad  request", "type": "invalid_request_error", "param": null, "code": "400"}}"#;
    let (url, server) = serve(vec![("400 Bad Request", body.to_owned())]);
    let env = Env::new();
    let out = env
        .cox()
        .env("OPENAI_BASE_URL", format!("{url}/v1"))
        .args(["run", "-p", HELLO, "--model", "qwen3-coder"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    server.join().unwrap();
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.contains("model call failed"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.ends_with(
            "openai: litellm.BadRequestError: the upstream refused: bad request (HTTP 400)"
        ),
        "{line}"
    );
}

#[test]
fn a_first_prompt_over_the_window_says_there_is_nothing_to_compact() {
    let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
    let (url, server) = serve(vec![("400 Bad Request", body.to_owned())]);
    let env = Env::new();
    let out = anthropic(&env, &url);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(server.join().unwrap().len(), 1, "one call, no compaction");
    let notices = notices(&lines(&out));
    assert!(
        notices.iter().all(|n| !n.contains("compacting")),
        "no compaction announced: {notices:?}"
    );
    assert!(
        notices
            .iter()
            .any(|n| n.contains("prompt is too long") && n.contains("nothing earlier to compact")),
        "{notices:?}"
    );
}
