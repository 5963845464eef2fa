//! The HTTP client a provider gets from its base URL: plain HTTP holds no
//! root certificates and never follows a redirect to `https://`; headers
//! that cannot be sent are named without their value.

mod support;

use cox_protocol::provider::{Message, ProviderError, Request, StreamEvent, SystemParts, Tier};
use cox_protocol::{CancelToken, Provider};
use cox_providers::http::Client;
use cox_providers::{AnthropicProvider, OpenAiProvider, RetryPolicy};
use futures::StreamExt;
use support::{Answer, anthropic_hello, serve};

type Item = Result<StreamEvent, ProviderError>;

fn request() -> Request {
    Request {
        model: "claude-sonnet-5".into(),
        tier: Tier::Code,
        effort: None,
        model_override: None,
        system: SystemParts::default(),
        tools: Vec::new(),
        messages: std::sync::Arc::new(vec![std::sync::Arc::new(Message::user_text("hi"))]),
        max_output_tokens: 100,
    }
}

fn quick() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 3,
        base_delay_ms: 1,
        idle_timeout_ms: 2_000,
    }
}

async fn run(provider: &AnthropicProvider) -> Vec<Item> {
    provider
        .stream(request(), CancelToken::new())
        .collect()
        .await
}

fn error(events: &[Item]) -> String {
    match events.last() {
        Some(Err(ProviderError::Failed(message))) => message.clone(),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn the_scheme_of_the_base_url_picks_the_client() {
    let plain = Client::for_base_url("anthropic", "http://127.0.0.1:9").unwrap();
    assert!(!plain.is_tls());
    let tls = Client::for_base_url("anthropic", "https://api.anthropic.com").unwrap();
    assert!(tls.is_tls());
    let upper = Client::for_base_url("anthropic", "HTTPS://api.anthropic.com").unwrap();
    assert!(upper.is_tls());
}

#[tokio::test]
async fn a_plain_redirect_is_followed() {
    let second = serve(vec![Answer::sse(anthropic_hello())]).await;
    let first = serve(vec![
        Answer::error("307 Temporary Redirect", "")
            .header("location", &format!("{}/v1/messages", second.url)),
    ])
    .await;
    let provider = AnthropicProvider::new(&first.url, "k", "claude-sonnet-5")
        .unwrap()
        .with_retry(quick());
    let events = run(&provider).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Ok(StreamEvent::Done { .. }))),
        "{events:?}"
    );
    assert_eq!(second.received().len(), 1);
}

#[tokio::test]
async fn a_redirect_to_https_is_refused_in_one_line_without_retrying() {
    let server = serve(vec![
        Answer::error("307 Temporary Redirect", "")
            .header("location", "https://127.0.0.1:9/v1/messages"),
        Answer::error("307 Temporary Redirect", "")
            .header("location", "https://127.0.0.1:9/v1/messages"),
    ])
    .await;
    let provider = AnthropicProvider::new(&server.url, "k", "claude-sonnet-5")
        .unwrap()
        .with_retry(quick());
    let events = run(&provider).await;
    let line = error(&events);
    assert!(
        line.contains("redirected to https://127.0.0.1:9/v1/messages"),
        "{line}"
    );
    assert!(line.starts_with("anthropic: "), "{line}");
    assert!(!line.contains('\n'), "{line}");
    assert_eq!(server.received().len(), 1, "not retried");
}

#[tokio::test]
async fn a_key_that_cannot_be_a_header_is_named_never_shown() {
    let server = serve(vec![Answer::sse(anthropic_hello())]).await;
    let provider = AnthropicProvider::new(&server.url, "sk-secret\nvalue", "claude-sonnet-5")
        .unwrap()
        .with_retry(quick());
    let line = error(&run(&provider).await);
    assert!(line.contains("x-api-key header cannot be sent"), "{line}");
    assert!(line.contains("ANTHROPIC_API_KEY"), "{line}");
    assert!(!line.contains("sk-secret"), "{line}");
    assert!(server.received().is_empty());

    let provider = OpenAiProvider::new(&server.url, Some("sk-other\rsecret"), "m").unwrap();
    let events: Vec<Item> = provider
        .stream(request(), CancelToken::new())
        .collect()
        .await;
    let line = error(&events);
    assert!(
        line.contains("authorization header cannot be sent"),
        "{line}"
    );
    assert!(!line.contains("sk-other"), "{line}");
}

#[tokio::test]
async fn a_base_url_that_is_no_url_fails_at_once() {
    let provider = AnthropicProvider::new("http://[oops", "k", "claude-sonnet-5")
        .unwrap()
        .with_retry(quick());
    let line = error(&run(&provider).await);
    assert!(line.contains("is not a URL"), "{line}");
    assert!(line.contains("ANTHROPIC_BASE_URL"), "{line}");
}
