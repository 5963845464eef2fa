//! The provider against a loopback HTTP server that answers with
//! Anthropic's wire format byte for byte: a streamed response cut into
//! small chunked pieces, an overloaded error, a stream cut mid-message.

use cox_anthropic::AnthropicProvider;
use cox_anthropic::provider::RetryPolicy;
use cox_protocol::provider::{Message, ProviderError, Request, StreamEvent, SystemParts};
use cox_protocol::{CancelToken, Provider};
use futures::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const FIXTURE: &str = include_str!("fixtures/parallel_tools.sse");

/// Serves one connection: reads the request, then writes `head` and the
/// `body` in chunked pieces of `piece` bytes (unless `cut` ends it early).
async fn serve_once(
    status: &'static str,
    body: String,
    piece: usize,
    cut: bool,
) -> (String, tokio::task::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = socket.read(&mut buf).await.unwrap();
            request.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&request);
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap())
                    })
                    .unwrap_or(0);
                if request.len() >= end + 4 + length {
                    break;
                }
            }
        }
        let kind = if status.starts_with("200") {
            "text/event-stream"
        } else {
            "application/json"
        };
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        );
        socket.write_all(head.as_bytes()).await.unwrap();
        let bytes = body.as_bytes();
        let limit = if cut { bytes.len() / 2 } else { bytes.len() };
        for chunk in bytes[..limit].chunks(piece) {
            socket
                .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
                .await
                .unwrap();
            socket.write_all(chunk).await.unwrap();
            socket.write_all(b"\r\n").await.unwrap();
            socket.flush().await.unwrap();
        }
        if !cut {
            socket.write_all(b"0\r\n\r\n").await.unwrap();
        }
        socket.shutdown().await.ok();
        String::from_utf8_lossy(&request).into_owned()
    });
    (url, task)
}

fn request() -> Request {
    Request {
        model: "claude-sonnet-5".into(),
        system: SystemParts {
            prompt: "You are cox.".into(),
            ..SystemParts::default()
        },
        tools: Vec::new(),
        messages: vec![Message::user_text("read two files")],
        max_output_tokens: 1000,
    }
}

async fn collect(url: &str) -> Vec<Result<StreamEvent, ProviderError>> {
    collect_with(
        url,
        RetryPolicy {
            max_attempts: 1,
            base_delay_ms: 1,
        },
    )
    .await
}

async fn collect_with(url: &str, retry: RetryPolicy) -> Vec<Result<StreamEvent, ProviderError>> {
    let provider = AnthropicProvider::new(url, "sk-test-key", "claude-sonnet-5")
        .unwrap()
        .with_retry(retry);
    provider
        .stream(request(), CancelToken::new())
        .collect()
        .await
}

/// Serves one connection per answer, in order: (status line, extra headers, body).
async fn serve_each(answers: Vec<(&'static str, &'static str, String)>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        for (status, headers, body) in answers {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            while !String::from_utf8_lossy(&seen).contains("\r\n\r\n") {
                let n = socket.read(&mut buf).await.unwrap();
                seen.extend_from_slice(&buf[..n]);
            }
            let head = format!(
                "HTTP/1.1 {status}\r\n{headers}content-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            socket.write_all(head.as_bytes()).await.unwrap();
            socket.write_all(body.as_bytes()).await.unwrap();
            socket.shutdown().await.ok();
        }
    });
    url
}

const OVERLOADED: &str =
    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

#[tokio::test]
async fn an_overload_is_retried_after_the_wait_the_server_asks() {
    let url = serve_each(vec![
        (
            "529 Site Overloaded",
            "retry-after: 0\r\ncontent-type: application/json\r\n",
            OVERLOADED.to_owned(),
        ),
        (
            "200 OK",
            "content-type: text/event-stream\r\n",
            FIXTURE.to_owned(),
        ),
    ])
    .await;
    let events = collect_with(
        &url,
        RetryPolicy {
            max_attempts: 3,
            base_delay_ms: 5_000,
        },
    )
    .await;
    let first = events[0].clone().unwrap();
    let StreamEvent::Retrying {
        attempt,
        of,
        delay_ms,
        reason,
    } = first
    else {
        panic!("{first:?}")
    };
    assert_eq!(
        (attempt, of, delay_ms),
        (2, 3, 0),
        "retry-after 0 beats the 5 s backoff"
    );
    assert_eq!(reason, "anthropic: overloaded_error: Overloaded (HTTP 529)");
    assert!(matches!(events.last(), Some(Ok(StreamEvent::Done(_)))));
    assert_eq!(events.iter().filter(|e| e.is_err()).count(), 0);
}

#[tokio::test]
async fn the_last_attempt_says_how_many_there_were() {
    let limited = r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#;
    let answer = (
        "429 Too Many Requests",
        "content-type: application/json\r\n",
        limited.to_owned(),
    );
    let url = serve_each(vec![answer.clone(), answer.clone(), answer]).await;
    let events = collect_with(
        &url,
        RetryPolicy {
            max_attempts: 3,
            base_delay_ms: 1,
        },
    )
    .await;
    let retries = events
        .iter()
        .filter(|e| matches!(e, Ok(StreamEvent::Retrying { .. })))
        .count();
    assert_eq!(retries, 2);
    let err = events.last().unwrap().clone().unwrap_err().to_string();
    assert_eq!(
        err,
        "anthropic: rate_limit_error: slow down (HTTP 429) (after 3 attempts)"
    );
}

#[tokio::test]
async fn a_bad_request_is_not_retried() {
    let bad = r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}"#;
    let url = serve_each(vec![("400 Bad Request", "", bad.to_owned())]).await;
    let events = collect_with(
        &url,
        RetryPolicy {
            max_attempts: 4,
            base_delay_ms: 1,
        },
    )
    .await;
    assert_eq!(events.len(), 1);
    assert!(
        events[0]
            .clone()
            .unwrap_err()
            .to_string()
            .contains("(HTTP 400)")
    );
}

#[tokio::test]
async fn a_streamed_response_arrives_whole_through_http() {
    let (url, server) = serve_once("200 OK", FIXTURE.to_owned(), 5, false).await;
    let events: Vec<StreamEvent> = collect(&url)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let request = server.await.unwrap();
    assert!(
        request.starts_with("POST /v1/messages HTTP/1.1"),
        "{request}"
    );
    let lower = request.to_ascii_lowercase();
    assert!(lower.contains("x-api-key: sk-test-key"));
    assert!(lower.contains("anthropic-version: 2023-06-01"));
    assert!(
        request.contains("\"stream\":true") && request.contains("\"model\":\"claude-sonnet-5\"")
    );
    let calls = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolUse { .. }))
        .count();
    assert_eq!(calls, 3);
    assert!(matches!(events.last(), Some(StreamEvent::Done(_))));
}

#[tokio::test]
async fn an_overloaded_answer_is_one_error_naming_it() {
    let body = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let (url, _server) = serve_once("529 Site Overloaded", body.to_owned(), 64, false).await;
    let events = collect(&url).await;
    assert_eq!(events.len(), 1);
    let err = events[0].clone().unwrap_err().to_string();
    assert_eq!(err, "anthropic: overloaded_error: Overloaded (HTTP 529)");
}

#[tokio::test]
async fn a_stream_cut_mid_message_ends_in_an_error() {
    let (url, _server) = serve_once("200 OK", FIXTURE.to_owned(), 64, true).await;
    let events = collect(&url).await;
    let last = events.last().unwrap().clone().unwrap_err().to_string();
    assert!(last.starts_with("anthropic: the stream"), "{last}");
    assert!(!events.iter().any(|e| matches!(e, Ok(StreamEvent::Done(_)))));
}

#[tokio::test]
async fn an_unreachable_base_url_says_so() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let events = collect(&url).await;
    let err = events[0].clone().unwrap_err().to_string();
    assert!(err.starts_with("anthropic: cannot reach the API"), "{err}");
    let events = collect_with(
        &url,
        RetryPolicy {
            max_attempts: 2,
            base_delay_ms: 1,
        },
    )
    .await;
    assert!(matches!(
        events[0],
        Ok(StreamEvent::Retrying {
            attempt: 2,
            of: 2,
            ..
        })
    ));
    let err = events[1].clone().unwrap_err().to_string();
    assert!(err.ends_with("(after 2 attempts)"), "{err}");
}
