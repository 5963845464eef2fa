//! The Anthropic provider against a loopback server that answers with
//! Anthropic's wire format byte for byte: a streamed response in small
//! chunked pieces, and every fault the provider must survive or name.

mod support;

use cox_protocol::provider::{
    Effort, Message, ProviderError, Request, StreamEvent, SystemParts, Tier,
};
use cox_protocol::{CancelToken, Provider};
use cox_providers::{AnthropicProvider, RetryPolicy};
use futures::StreamExt;
use support::{Answer, End, anthropic_hello, serve};

const FIXTURE: &str = include_str!("fixtures/parallel_tools.sse");

type Item = Result<StreamEvent, ProviderError>;

fn request() -> Request {
    Request {
        model: "claude-sonnet-5".into(),
        tier: Tier::Code,
        effort: None,
        model_override: None,
        system: SystemParts {
            prompt: "You are cox.".into(),
            ..SystemParts::default()
        },
        tools: Vec::new(),
        messages: std::sync::Arc::new(vec![std::sync::Arc::new(Message::user_text(
            "read two files",
        ))]),
        max_output_tokens: 1000,
    }
}

fn policy(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay_ms: 1,
        idle_timeout_ms: 300,
    }
}

async fn collect(url: &str, retry: RetryPolicy) -> Vec<Item> {
    collect_request(url, retry, request()).await
}

async fn collect_request(url: &str, retry: RetryPolicy, request: Request) -> Vec<Item> {
    let provider = AnthropicProvider::new(url, "sk-test-key", "claude-sonnet-5")
        .unwrap()
        .with_retry(retry);
    provider.stream(request, CancelToken::new()).collect().await
}

fn text(events: &[Item]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Ok(StreamEvent::TextDelta(t)) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn retries(events: &[Item]) -> Vec<(u32, bool, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Ok(StreamEvent::Retrying {
                attempt,
                discarded,
                reason,
                ..
            }) => Some((*attempt, *discarded, reason.clone())),
            _ => None,
        })
        .collect()
}

fn last_error(events: &[Item]) -> String {
    events
        .last()
        .unwrap()
        .clone()
        .expect_err("the stream ends in an error")
        .to_string()
}

const OVERLOADED: &str =
    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

#[tokio::test]
async fn a_streamed_response_arrives_whole_through_http() {
    let server = serve(vec![Answer::sse(FIXTURE)]).await;
    let mut req = request();
    req.effort = Some(Effort::High);
    let events = collect_request(&server.url, policy(1), req).await;
    let events: Vec<StreamEvent> = events.into_iter().map(Result::unwrap).collect();
    let received = &server.received()[0];
    assert!(received.head.starts_with("POST /v1/messages HTTP/1.1"));
    let head = received.head.to_ascii_lowercase();
    assert!(head.contains("x-api-key: sk-test-key"));
    assert!(head.contains("anthropic-version: 2023-06-01"));
    let body: serde_json::Value = serde_json::from_str(&received.body).unwrap();
    assert_eq!(body["stream"], true);
    assert_eq!(body["model"], "claude-sonnet-5");
    assert_eq!(body["output_config"]["effort"], "high");
    let calls = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolUse { .. }))
        .count();
    assert_eq!(calls, 3);
    assert!(matches!(events.last(), Some(StreamEvent::Done(_))));
}

#[tokio::test]
async fn an_overload_is_retried_after_the_wait_the_server_asks() {
    let server = serve(vec![
        Answer::error("529 Site Overloaded", OVERLOADED).header("retry-after", "0"),
        Answer::sse(FIXTURE),
    ])
    .await;
    let retry = RetryPolicy {
        base_delay_ms: 5_000,
        ..policy(3)
    };
    let events = collect(&server.url, retry).await;
    let Ok(StreamEvent::Retrying {
        attempt,
        of,
        delay_ms,
        reason,
        discarded,
    }) = events[0].clone()
    else {
        panic!("{:?}", events[0])
    };
    assert_eq!(
        (attempt, of, delay_ms, discarded),
        (2, 3, 0, false),
        "retry-after 0 beats the 5 s backoff"
    );
    assert_eq!(reason, "anthropic: overloaded_error: Overloaded (HTTP 529)");
    assert!(matches!(events.last(), Some(Ok(StreamEvent::Done(_)))));
    assert!(events.iter().all(Result::is_ok));
}

#[tokio::test]
async fn the_last_attempt_says_how_many_there_were() {
    let limited = r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#;
    let answer = Answer::error("429 Too Many Requests", limited);
    let server = serve(vec![answer.clone(), answer.clone(), answer]).await;
    let events = collect(&server.url, policy(3)).await;
    assert_eq!(retries(&events).len(), 2);
    assert_eq!(
        last_error(&events),
        "anthropic: rate_limit_error: slow down (HTTP 429) (after 3 attempts)"
    );
}

#[tokio::test]
async fn server_errors_are_retried() {
    let server = serve(vec![
        Answer::error("500 Internal Server Error", "upstream failed"),
        Answer::error("503 Service Unavailable", ""),
        Answer::sse(anthropic_hello()),
    ])
    .await;
    let events = collect(&server.url, policy(4)).await;
    let reasons: Vec<String> = retries(&events).into_iter().map(|r| r.2).collect();
    assert_eq!(
        reasons,
        [
            "anthropic: upstream failed (HTTP 500)",
            "anthropic: Service Unavailable (HTTP 503)"
        ]
    );
    assert_eq!(text(&events), "Hello.");
}

#[tokio::test]
async fn a_bad_request_is_not_retried() {
    let bad = r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}"#;
    let server = serve(vec![Answer::error("400 Bad Request", bad)]).await;
    let events = collect(&server.url, policy(4)).await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        last_error(&events),
        "anthropic: invalid_request_error: max_tokens: too large (HTTP 400)"
    );
}

#[tokio::test]
async fn a_wrong_key_names_the_variable() {
    let body =
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
    let server = serve(vec![Answer::error("401 Unauthorized", body)]).await;
    let events = collect(&server.url, policy(4)).await;
    assert_eq!(
        last_error(&events),
        "anthropic: authentication_error: invalid x-api-key (HTTP 401); check ANTHROPIC_API_KEY"
    );
}

#[tokio::test]
async fn an_unknown_model_names_the_flag() {
    let body =
        r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}"#;
    let server = serve(vec![Answer::error("404 Not Found", body)]).await;
    let err = last_error(&collect(&server.url, policy(4)).await);
    assert!(
        err.starts_with("anthropic: not_found_error: model: claude-nope (HTTP 404); check the model name (--model"),
        "{err}"
    );
}

#[tokio::test]
async fn a_prompt_over_the_window_is_its_own_kind() {
    let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
    let server = serve(vec![Answer::error("400 Bad Request", body)]).await;
    let events = collect(&server.url, policy(4)).await;
    assert!(
        matches!(&events[0], Err(ProviderError::ContextLength(m)) if m.contains("prompt is too long")),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_page_that_is_not_an_event_stream_names_the_base_url() {
    let page = Answer::sse("<html>login</html>").header("content-type", "text/html");
    let server = serve(vec![page]).await;
    let err = last_error(&collect(&server.url, policy(4)).await);
    assert!(
        err.contains("answered with text/html, not an event stream; check ANTHROPIC_BASE_URL"),
        "{err}"
    );
}

#[tokio::test]
async fn an_unreachable_base_url_says_so() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let err = last_error(&collect(&url, policy(1)).await);
    assert!(
        err.starts_with(&format!("anthropic: cannot reach {url}/v1/messages: ")),
        "{err}"
    );
    assert!(err.ends_with("check ANTHROPIC_BASE_URL"), "{err}");
    let events = collect(&url, policy(2)).await;
    assert_eq!(retries(&events).len(), 1);
    assert!(last_error(&events).ends_with("(after 2 attempts)"));
}

#[tokio::test]
async fn a_stream_cut_before_any_text_is_tried_again() {
    let hello = anthropic_hello();
    let start = hello.find("event: content_block_start").unwrap();
    let server = serve(vec![
        Answer::sse(hello.clone()).end(End::CutAt(start)),
        Answer::sse(hello),
    ])
    .await;
    let events = collect(&server.url, policy(2)).await;
    let retries = retries(&events);
    assert_eq!(retries.len(), 1);
    assert!(!retries[0].1, "nothing was streamed, nothing is discarded");
    assert!(
        retries[0].2.starts_with("anthropic: the stream broke: "),
        "{}",
        retries[0].2
    );
    assert_eq!(text(&events), "Hello.");
}

#[tokio::test]
async fn a_stream_cut_mid_answer_is_tried_again_and_the_part_discarded() {
    let hello = anthropic_hello();
    let after_hel = hello.find("lo.").unwrap() - 60;
    let server = serve(vec![
        Answer::sse(hello.clone()).end(End::CutAt(after_hel)),
        Answer::sse(hello),
    ])
    .await;
    let events = collect(&server.url, policy(2)).await;
    let retries = retries(&events);
    assert_eq!(retries.len(), 1);
    assert!(retries[0].1, "the streamed \"Hel\" is void");
    assert_eq!(
        text(&events),
        "HelHello.",
        "the broken part, then the whole answer"
    );
    assert!(matches!(events.last(), Some(Ok(StreamEvent::Done(_)))));
}

#[tokio::test]
async fn a_cut_on_the_last_attempt_is_one_error() {
    let server = serve(vec![
        Answer::sse(FIXTURE).end(End::CutAt(FIXTURE.len() / 2)),
    ])
    .await;
    let events = collect(&server.url, policy(1)).await;
    let err = last_error(&events);
    assert!(err.starts_with("anthropic: the stream broke: "), "{err}");
    assert!(!events.iter().any(|e| matches!(e, Ok(StreamEvent::Done(_)))));
}

#[tokio::test]
async fn an_idle_stream_is_given_up_on_and_tried_again() {
    let hello = anthropic_hello();
    let after_hel = hello.find("lo.").unwrap() - 60;
    let server = serve(vec![
        Answer::sse(hello.clone()).end(End::StallAt(after_hel)),
        Answer::sse(hello),
    ])
    .await;
    let events = collect(&server.url, policy(2)).await;
    let retries = retries(&events);
    assert_eq!(retries.len(), 1);
    assert_eq!(retries[0].2, "anthropic: the stream sent nothing for 0.3 s");
    assert!(retries[0].1);
    assert!(matches!(events.last(), Some(Ok(StreamEvent::Done(_)))));
}

#[tokio::test]
async fn malformed_events_are_tried_again_then_named() {
    let garbage = "event: message_start\ndata: {\"type\": \"message_st\n\n";
    let server = serve(vec![
        Answer::sse(garbage),
        Answer::sse(anthropic_hello()),
        Answer::sse(garbage),
    ])
    .await;
    let events = collect(&server.url, policy(2)).await;
    assert_eq!(retries(&events).len(), 1);
    assert_eq!(text(&events), "Hello.");
    let events = collect(&server.url, policy(1)).await;
    let err = last_error(&events);
    assert!(
        err.starts_with("anthropic: malformed stream: message_start event:"),
        "{err}"
    );
}

#[tokio::test]
async fn an_overloaded_error_event_mid_stream_is_tried_again() {
    let broken = support::anthropic_sse(&[
        r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-5","usage":{"input_tokens":10,"output_tokens":1}}}"#,
        r#"{"type":"ping"}"#,
        OVERLOADED,
    ]);
    let server = serve(vec![Answer::sse(broken), Answer::sse(anthropic_hello())]).await;
    let events = collect(&server.url, policy(2)).await;
    let retries = retries(&events);
    assert_eq!(retries[0].2, "anthropic: overloaded_error: Overloaded");
    assert_eq!(text(&events), "Hello.");
}

#[tokio::test]
async fn cancelling_ends_the_stream_without_done() {
    let hello = anthropic_hello();
    let after_hel = hello.find("lo.").unwrap() - 60;
    let server = serve(vec![
        Answer::sse(hello.clone()).end(End::StallAt(after_hel)),
    ])
    .await;
    let provider = AnthropicProvider::new(&server.url, "k", "claude-sonnet-5")
        .unwrap()
        .with_retry(RetryPolicy {
            idle_timeout_ms: 60_000,
            ..policy(1)
        });
    let cancel = CancelToken::new();
    let mut stream = std::pin::pin!(provider.stream(request(), cancel.clone()));
    let first = stream.next().await;
    assert!(
        matches!(first, Some(Ok(StreamEvent::TextDelta(_)))),
        "{first:?}"
    );
    cancel.cancel();
    let rest: Vec<Item> = stream.collect().await;
    assert!(
        rest.iter().all(|e| !matches!(e, Ok(StreamEvent::Done(_)))),
        "{rest:?}"
    );
}

#[tokio::test]
async fn a_connection_dropped_before_any_answer_is_tried_again() {
    let server = serve(vec![
        Answer::sse("").end(End::Hangup),
        Answer::sse(anthropic_hello()),
    ])
    .await;
    let events = collect(&server.url, policy(2)).await;
    let retries = retries(&events);
    assert_eq!(retries.len(), 1);
    assert!(
        retries[0].2.starts_with(&format!(
            "anthropic: the request to {}/v1/messages failed: ",
            server.url
        )),
        "{}",
        retries[0].2
    );
    assert_eq!(text(&events), "Hello.");
    assert_eq!(server.received().len(), 2);
}
