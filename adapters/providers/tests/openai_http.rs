//! The OpenAI-compatible provider against a loopback server that answers
//! with Chat Completions chunks byte for byte: text, reasoning, parallel
//! tool calls streamed in pieces, usage in the last chunk, and the faults
//! and refusals a user must be told about in one line.

mod support;

use cox_protocol::provider::{
    Effort, Message, ModelStop, ProviderError, Request, StreamEvent, SystemParts, Tier, ToolSpec,
};
use cox_protocol::types::Usage;
use cox_protocol::{CancelToken, Provider};
use cox_providers::{OpenAiProvider, RetryPolicy};
use futures::StreamExt;
use serde_json::json;
use support::{Answer, End, openai_hello, openai_sse, serve};

type Item = Result<StreamEvent, ProviderError>;

fn request() -> Request {
    Request {
        model: "qwen3-coder".into(),
        tier: Tier::Code,
        effort: None,
        model_override: None,
        system: SystemParts {
            prompt: "You are cox.".into(),
            instructions: String::new(),
            volatile: "Date: 2026-11-30".into(),
        },
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file.".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
        messages: std::sync::Arc::new(vec![std::sync::Arc::new(Message::user_text(
            "read a and b",
        ))]),
        max_output_tokens: 4000,
    }
}

fn policy(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay_ms: 1,
        idle_timeout_ms: 300,
    }
}

async fn collect(url: &str, key: Option<&str>, retry: RetryPolicy, request: Request) -> Vec<Item> {
    let provider = OpenAiProvider::new(url, key, "qwen3-coder")
        .unwrap()
        .with_retry(retry);
    provider.stream(request, CancelToken::new()).collect().await
}

fn last_error(events: &[Item]) -> String {
    events
        .last()
        .unwrap()
        .clone()
        .expect_err("an error")
        .to_string()
}

const PARALLEL: &[&str] = &[
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"Two files."},"finish_reason":null}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{"content":"Reading both."},"finish_reason":null}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":""}}]},"finish_reason":null}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\": "}}]},"finish_reason":null}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"read","arguments":"{\"path\": \"b\"}"}}]},"finish_reason":null}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a\"}"}}]},"finish_reason":null}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":40,"total_tokens":1240,"prompt_tokens_details":{"cached_tokens":1024}}}"#,
];

#[tokio::test]
async fn parallel_tool_calls_stream_whole_through_http() {
    let server = serve(vec![Answer::sse(openai_sse(PARALLEL))]).await;
    let mut req = request();
    req.effort = Some(Effort::Medium);
    let events: Vec<StreamEvent> = collect(&server.url, Some("sk-test"), policy(1), req)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        events,
        [
            StreamEvent::ThinkingDelta("Two files.".into()),
            StreamEvent::TextDelta("Reading both.".into()),
            StreamEvent::ToolUse {
                id: "call_a".into(),
                name: "read".into(),
                input: json!({"path": "a"})
            },
            StreamEvent::ToolUse {
                id: "call_b".into(),
                name: "read".into(),
                input: json!({"path": "b"})
            },
            StreamEvent::Usage(Usage {
                input_tokens: 176,
                output_tokens: 40,
                cache_read_tokens: 1024,
                cache_write_tokens: 0,
                web_searches: 0,
            }),
            StreamEvent::Done(ModelStop::ToolUse),
        ]
    );
    let received = &server.received()[0];
    assert!(
        received.head.starts_with("POST /chat/completions HTTP/1.1"),
        "{}",
        received.head
    );
    assert!(
        received
            .head
            .to_ascii_lowercase()
            .contains("authorization: bearer sk-test")
    );
    let body: serde_json::Value = serde_json::from_str(&received.body).unwrap();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["max_tokens"], 4000, "a local server gets max_tokens");
    assert_eq!(body["reasoning_effort"], "medium");
    assert_eq!(body["tools"][0]["function"]["name"], "read");
    assert_eq!(body["messages"][0]["role"], "system");
}

#[tokio::test]
async fn a_local_server_without_a_key_gets_no_authorization_header() {
    let server = serve(vec![Answer::sse(openai_hello())]).await;
    let url = format!("{}/v1", server.url);
    let events = collect(&url, None, policy(1), request()).await;
    assert!(matches!(
        events.last(),
        Some(Ok(StreamEvent::Done(ModelStop::EndTurn)))
    ));
    let received = &server.received()[0];
    assert!(received.head.starts_with("POST /v1/chat/completions "));
    assert!(!received.head.to_ascii_lowercase().contains("authorization"));
}

#[tokio::test]
async fn a_server_that_ends_without_done_after_finishing_is_accepted() {
    let mut body = openai_hello();
    body.truncate(body.find("data: [DONE]").unwrap());
    let server = serve(vec![Answer::sse(body)]).await;
    let events = collect(&server.url, None, policy(1), request()).await;
    assert!(matches!(events.last(), Some(Ok(StreamEvent::Done(_)))));
}

#[tokio::test]
async fn a_wrong_key_names_the_variable() {
    let body = r#"{"error":{"message":"Incorrect API key provided: sk-wrong.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#;
    let server = serve(vec![Answer::error("401 Unauthorized", body)]).await;
    let err = last_error(&collect(&server.url, Some("sk-wrong"), policy(3), request()).await);
    assert_eq!(
        err,
        "openai: invalid_api_key: Incorrect API key provided: sk-wrong. (HTTP 401); check OPENAI_API_KEY"
    );
}

#[tokio::test]
async fn an_unknown_model_names_the_flag() {
    // Ollama's shape: the error is a bare string.
    let body = r#"{"error":"model \"qwen3-nope\" not found, try pulling it first"}"#;
    let server = serve(vec![Answer::error("404 Not Found", body)]).await;
    let err = last_error(&collect(&server.url, None, policy(3), request()).await);
    assert!(
        err.starts_with(
            "openai: model \"qwen3-nope\" not found, try pulling it first (HTTP 404); check the model name"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_prompt_over_the_window_is_its_own_kind() {
    let body = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
    let server = serve(vec![Answer::error("400 Bad Request", body)]).await;
    let events = collect(&server.url, None, policy(3), request()).await;
    assert!(
        matches!(&events[0], Err(ProviderError::ContextLength(m)) if m.contains("maximum context length")),
        "{events:?}"
    );
}

#[tokio::test]
async fn rate_limits_and_cut_streams_are_tried_again() {
    let limited = r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#;
    let hello = openai_hello();
    let cut = hello.find("lo.").unwrap() - 70;
    let server = serve(vec![
        Answer::error("429 Too Many Requests", limited).header("retry-after", "0.01"),
        Answer::sse(hello.clone()).end(End::CutAt(cut)),
        Answer::sse(hello.clone()).end(End::StallAt(0)),
        Answer::sse(hello),
    ])
    .await;
    let events = collect(&server.url, None, policy(4), request()).await;
    let retries: Vec<(u64, bool)> = events
        .iter()
        .filter_map(|e| match e {
            Ok(StreamEvent::Retrying {
                delay_ms,
                discarded,
                ..
            }) => Some((*delay_ms, *discarded)),
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), 3);
    assert_eq!(retries[0], (10, false), "retry-after in seconds");
    assert!(retries[1].1, "the cut came after text was streamed");
    assert!(!retries[2].1, "the stall came before anything");
    assert!(matches!(events.last(), Some(Ok(StreamEvent::Done(_)))));
}

#[tokio::test]
async fn an_error_chunk_in_the_stream_is_named() {
    let body = "data: {\"error\":{\"message\":\"the model crashed\",\"type\":\"invalid_request_error\"}}\n\n";
    let server = serve(vec![Answer::sse(body)]).await;
    let err = last_error(&collect(&server.url, None, policy(3), request()).await);
    assert_eq!(err, "openai: invalid_request_error: the model crashed");
}
