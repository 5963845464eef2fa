//! Both providers on bytes the LiteLLM proxy (1.108.7) wrote, served over
//! loopback HTTP in small pieces: a text answer, a tool call before and
//! after text with usage at the end (cache reads included), a rate limit
//! in the middle of a stream, at its first event and before it, and a tool
//! call cut at the output limit. `fixtures/litellm/` holds them as
//! captured; `chat_*` came from `/v1/chat/completions`, `messages_*` from
//! `/v1/messages`, both in front of a scripted upstream.

mod support;

use cox_protocol::provider::{
    Message, ModelStop, ProviderError, Request, StreamEvent, SystemParts, Tier,
};
use cox_protocol::types::Usage;
use cox_protocol::{CancelToken, Provider};
use cox_providers::{AnthropicProvider, OpenAiProvider, RetryPolicy};
use futures::StreamExt;
use serde_json::json;
use support::{Answer, serve};

type Item = Result<StreamEvent, ProviderError>;

#[derive(Clone, Copy)]
enum Format {
    Chat,
    Messages,
}

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/litellm/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn request() -> Request {
    Request {
        model: "cox-case".into(),
        tier: Tier::Code,
        effort: None,
        model_override: None,
        system: SystemParts::default(),
        tools: Vec::new(),
        messages: std::sync::Arc::new(vec![std::sync::Arc::new(Message::user_text("go"))]),
        max_output_tokens: 4000,
    }
}

/// Streams one request against `answers` with `attempts` tries.
async fn run(format: Format, answers: Vec<Answer>, attempts: u32) -> Vec<Item> {
    let server = serve(answers).await;
    let retry = RetryPolicy {
        max_attempts: attempts,
        base_delay_ms: 1,
        idle_timeout_ms: 2_000,
    };
    let cancel = CancelToken::new();
    match format {
        Format::Chat => {
            let provider = OpenAiProvider::new(&server.url, Some("sk-test"), "cox-case")
                .unwrap()
                .with_retry(retry);
            provider.stream(request(), cancel).collect().await
        }
        Format::Messages => {
            let provider = AnthropicProvider::new(&server.url, "sk-test", "cox-case")
                .unwrap()
                .with_retry(retry);
            provider.stream(request(), cancel).collect().await
        }
    }
}

async fn whole(format: Format, name: &str) -> Vec<StreamEvent> {
    run(format, vec![Answer::sse(fixture(name))], 1)
        .await
        .into_iter()
        .map(|item| item.unwrap_or_else(|e| panic!("{name}: {e}")))
        .collect()
}

fn usage(input: u64, output: u64, cache_read: u64) -> StreamEvent {
    StreamEvent::Usage(Usage {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: cache_read,
        cache_write_tokens: 0,
        web_searches: 0,
    })
}

fn read_call() -> StreamEvent {
    StreamEvent::ToolUse {
        id: "call_1".into(),
        name: "read_file".into(),
        input: json!({"path": "src/main.rs"}),
    }
}

#[tokio::test]
async fn text_answers_carry_the_usage_of_the_last_event() {
    for (format, name) in [
        (Format::Chat, "chat_text.sse"),
        (Format::Messages, "messages_text.sse"),
    ] {
        let events = whole(format, name).await;
        let text: String = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "Hello, world.", "{name}");
        // Messages: zeros in message_start, the counts in message_delta.
        assert_eq!(
            events[events.len() - 2..],
            [usage(11, 7, 0), StreamEvent::Done(ModelStop::EndTurn)],
            "{name}"
        );
    }
}

#[tokio::test]
async fn a_tool_call_and_text_in_either_order() {
    let text = |t: &str| StreamEvent::TextDelta(t.into());
    let done = StreamEvent::Done(ModelStop::ToolUse);
    // Chat calls are reported whole when the answer finishes; Messages
    // calls when their block stops.
    let cases = [
        (
            Format::Chat,
            "chat_tool_text.sse",
            vec![
                text("I will read it."),
                read_call(),
                usage(11, 7, 0),
                done.clone(),
            ],
        ),
        (
            Format::Chat,
            "chat_text_tool.sse",
            vec![
                text("Let me look."),
                read_call(),
                usage(11, 7, 0),
                done.clone(),
            ],
        ),
        (
            Format::Chat,
            "chat_tool_text_cached.sse",
            vec![
                text("I will read it."),
                read_call(),
                usage(7, 7, 4),
                done.clone(),
            ],
        ),
        (
            Format::Messages,
            "messages_tool_text.sse",
            vec![
                read_call(),
                text("I will read it."),
                usage(11, 7, 0),
                done.clone(),
            ],
        ),
        (
            Format::Messages,
            "messages_text_tool.sse",
            vec![
                text("Let me look."),
                read_call(),
                usage(11, 7, 0),
                done.clone(),
            ],
        ),
        (
            Format::Messages,
            "messages_tool_text_cached.sse",
            vec![
                read_call(),
                text("I will read it."),
                usage(7, 7, 4),
                done.clone(),
            ],
        ),
    ];
    for (format, name, expected) in cases {
        assert_eq!(whole(format, name).await, expected, "{name}");
    }
}

#[tokio::test]
async fn a_call_cut_at_the_output_limit_is_reported_cut() {
    for (format, name) in [
        (Format::Chat, "chat_length_in_tool.sse"),
        (Format::Messages, "messages_length_in_tool.sse"),
    ] {
        assert_eq!(
            whole(format, name).await,
            [
                StreamEvent::TextDelta("Writing.".into()),
                StreamEvent::ToolUseCut {
                    id: "call_1".into(),
                    name: "write_file".into()
                },
                usage(11, 7, 0),
                StreamEvent::Done(ModelStop::MaxTokens),
            ],
            "{name}"
        );
    }
}

/// The one retry a rate-limited first attempt leads to, after which the
/// text answer streams whole.
async fn retried(format: Format, first: Answer, then: &str) -> (StreamEvent, Vec<StreamEvent>) {
    let events: Vec<StreamEvent> = run(format, vec![first, Answer::sse(fixture(then))], 2)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let at = events
        .iter()
        .position(|e| matches!(e, StreamEvent::Retrying { .. }))
        .expect("a retry");
    let before = &events[..at];
    let retry = events[at].clone();
    if let StreamEvent::Retrying { discarded, .. } = &retry {
        let streamed = before.iter().any(|e| {
            matches!(
                e,
                StreamEvent::TextDelta(_) | StreamEvent::ToolUseCut { .. }
            )
        });
        assert_eq!(*discarded, streamed, "discarded says whether text went out");
    }
    (retry, events[at + 1..].to_vec())
}

fn reason(retry: &StreamEvent) -> &str {
    match retry {
        StreamEvent::Retrying { reason, .. } => reason,
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_rate_limit_mid_stream_is_retried() {
    let (retry, after) = retried(
        Format::Chat,
        Answer::sse(fixture("chat_rate_limit_mid.sse")),
        "chat_text.sse",
    )
    .await;
    assert_eq!(
        reason(&retry),
        "openai: 429: litellm.RateLimitError: scripted upstream rate limit"
    );
    assert_eq!(after.last(), Some(&StreamEvent::Done(ModelStop::EndTurn)));

    for first in [
        "messages_rate_limit_mid.sse",
        "messages_rate_limit_start.sse",
    ] {
        let (retry, after) = retried(
            Format::Messages,
            Answer::sse(fixture(first)),
            "messages_text.sse",
        )
        .await;
        assert_eq!(
            reason(&retry),
            "anthropic: rate_limit_error: litellm.RateLimitError: scripted upstream rate limit",
            "{first}"
        );
        assert_eq!(after.last(), Some(&StreamEvent::Done(ModelStop::EndTurn)));
    }
}

#[tokio::test]
async fn a_rate_limit_before_the_stream_is_one_line_with_the_status_once() {
    let tail = "LiteLLM: model group 'cox-rate_limit_call' failed with the error above. No \
                fallback was attempted. (HTTP 429)";
    let (retry, _) = retried(
        Format::Chat,
        Answer::error(
            "429 Too Many Requests",
            fixture("chat_rate_limit_call.json"),
        ),
        "chat_text.sse",
    )
    .await;
    assert_eq!(
        reason(&retry),
        format!("openai: litellm.RateLimitError: scripted upstream rate limit {tail}")
    );
    let (retry, _) = retried(
        Format::Messages,
        Answer::error(
            "429 Too Many Requests",
            fixture("messages_rate_limit_call.json"),
        ),
        "messages_text.sse",
    )
    .await;
    assert_eq!(
        reason(&retry),
        format!(
            "anthropic: rate_limit_error: litellm.RateLimitError: scripted upstream rate limit \
             {tail}"
        )
    );
}

#[tokio::test]
async fn the_last_rate_limit_is_a_one_line_error() {
    let items = run(
        Format::Chat,
        vec![
            Answer::sse(fixture("chat_rate_limit_mid.sse")),
            Answer::sse(fixture("chat_rate_limit_mid.sse")),
        ],
        2,
    )
    .await;
    let Some(Err(ProviderError::Failed(message))) = items.last() else {
        panic!("{items:?}")
    };
    assert_eq!(
        message,
        "openai: 429: litellm.RateLimitError: scripted upstream rate limit (after 2 attempts)"
    );
}

#[tokio::test]
async fn an_attempt_that_only_cut_a_call_is_discarded_when_it_breaks() {
    // The cut call goes out at finish_reason; the stream then fails before
    // its usage and [DONE]. Served slowly, so the call is out first.
    // LiteLLM's own chunks of that case, without its text.
    let cut = fixture("chat_length_in_tool.sse");
    let chunks: Vec<&str> = cut
        .split("\n\n")
        .filter(|c| c.contains("tool_calls") || c.contains("\"length\""))
        .collect();
    assert_eq!(chunks.len(), 3, "{cut}");
    let mut body = chunks.join("\n\n") + "\n\n";
    let after = body.len();
    body.push_str(
        "data: {\"error\": {\"message\": \"gone\", \"type\": \"None\", \"code\": \"503\"}}\n\n",
    );
    let mut first = Answer::sse(body);
    first.pause_at = Some(after);
    let (retry, after) = retried(Format::Chat, first, "chat_text.sse").await;
    assert_eq!(reason(&retry), "openai: 503: gone");
    let StreamEvent::Retrying { discarded, .. } = retry else {
        unreachable!()
    };
    assert!(discarded, "the cut call went out, so the attempt is void");
    assert!(
        !after
            .iter()
            .any(|e| matches!(e, StreamEvent::ToolUseCut { .. })),
        "the next attempt is whole"
    );
}
