//! A tape is written from recorded exchanges, parsed by the scenario parser
//! and replayed by the scripted provider; folding the replayed streams back
//! into exchanges must give the same scripted turns. Strings TOML escapes
//! (U+007F, other control characters) and tool input TOML cannot hold (a
//! `null`, an integer past `i64`) are the cases a hand-written writer got
//! wrong.

use super::*;
use cox_protocol::CallId;
use cox_protocol::provider::{Message, SystemParts, Tier};
use cox_scripted::{Scenario, ScriptedProvider};
use serde_json::json;

type Item = Result<StreamEvent, ProviderError>;

/// A request whose last message is `last`.
fn request(last: Message) -> Request {
    Request {
        model: "claude-sonnet-5".into(),
        system: SystemParts {
            prompt: "You are cox.".into(),
            instructions: String::new(),
            volatile: String::new(),
        },
        tools: Vec::new(),
        messages: std::sync::Arc::new(vec![std::sync::Arc::new(last)]),
        max_output_tokens: 8000,
        tier: Tier::Code,
        effort: None,
        model_override: None,
    }
}

fn results(ok: bool) -> Request {
    request(Message {
        role: Role::User,
        content: vec![ContentBlock::ToolResult {
            tool_use_id: CallId("toolu_1".into()),
            content: "done".into(),
            is_error: !ok,
        }],
    })
}

fn usage(input_tokens: u64) -> Item {
    Ok(StreamEvent::Usage(Usage {
        input_tokens,
        output_tokens: 7,
        cache_read_tokens: 900,
        cache_write_tokens: 0,
        web_searches: 0,
    }))
}

fn call(id: &str, input: Value) -> Item {
    Ok(StreamEvent::ToolUse {
        id: CallId(id.into()),
        name: "write".into(),
        input,
    })
}

/// `items`, answering `request`, folded into one exchange.
fn record(request: &Request, items: &[Item]) -> Exchange {
    let mut exchange = Exchange::new(expectation(request));
    for item in items {
        if exchange.see(item) {
            break;
        }
    }
    assert!(exchange.finished, "the exchange ends");
    exchange
}

/// The cassette these exchanges make.
fn tape(exchanges: &[Exchange]) -> String {
    let mut text = header(Path::new("t.cassette.toml"), "anthropic", "claude-sonnet-5").unwrap();
    for exchange in exchanges {
        text.push_str(&exchange.render().unwrap());
    }
    text
}

/// Records each call (a request and what answered it), writes the tape,
/// replays it with the scripted provider for the same requests, and checks
/// each replayed call folds into the turn that was recorded. The tape.
fn round_trip(calls: &[(Request, Vec<Item>)]) -> String {
    let recorded: Vec<Exchange> = calls.iter().map(|(r, items)| record(r, items)).collect();
    let text = tape(&recorded);
    let scenario = Scenario::parse(&text, "tape").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(scenario.model(), "claude-sonnet-5");
    assert_eq!(scenario.turn_count(), calls.len(), "{text}");
    let parsed: ScenarioFile = toml::from_str(&text).unwrap();
    let provider = ScriptedProvider::new(scenario);
    for (index, ((request, _), recorded)) in calls.iter().zip(&recorded).enumerate() {
        let stream = provider.stream(request.clone(), CancelToken::new());
        let items: Vec<Item> = futures::executor::block_on(stream.collect());
        let replayed = record(request, &items);
        assert_eq!(
            replayed.turn(),
            recorded.turn(),
            "call {}\n{text}",
            index + 1
        );
        if !text.contains("input_json") {
            assert_eq!(parsed.turn[index], recorded.turn(), "{text}");
        }
    }
    text
}

#[test]
fn a_tape_replays_each_recorded_call() {
    let text = round_trip(&[
        (
            request(Message::user_text("create hello.txt\nsecond line")),
            vec![
                Ok(StreamEvent::Routed {
                    provider: "anthropic".into(),
                    model: "claude-haiku-5".into(),
                    effort: None,
                }),
                Ok(StreamEvent::ThinkingDelta("I will write it.".into())),
                Ok(StreamEvent::TextDelta("Writing ".into())),
                Ok(StreamEvent::TextDelta("it.".into())),
                call(
                    "toolu_w",
                    json!({"path": "hello.txt", "content": "hi\n", "n": 3, "xs": [1.5, true], "o": {"k": []}}),
                ),
                usage(10),
                Ok(StreamEvent::Done(ModelStop::ToolUse)),
            ],
        ),
        (
            results(true),
            vec![
                Ok(StreamEvent::TextDelta(
                    "Created it.\r\nQuotes: ''' \"\"\" \\ and a tab\t.".into(),
                )),
                usage(20),
                Ok(StreamEvent::Done(ModelStop::EndTurn)),
            ],
        ),
        (
            results(false),
            vec![
                Ok(StreamEvent::ToolUseCut {
                    id: CallId("toolu_c".into()),
                    name: "write".into(),
                }),
                usage(30),
                Ok(StreamEvent::Done(ModelStop::MaxTokens)),
            ],
        ),
        (
            request(Message::user_text("again")),
            vec![Err(ProviderError::Failed("overloaded".into()))],
        ),
        (
            request(Message::user_text("and again")),
            vec![Err(ProviderError::ContextLength(
                "prompt is too long".into(),
            ))],
        ),
    ]);
    assert_eq!(text.matches("[[turn]]").count(), 5, "{text}");
    assert!(
        text.contains("\n# served by claude-haiku-5\n[[turn]]\n"),
        "{text}"
    );
    assert!(text.contains("id = \"toolu_w\""), "{text}");
    assert!(text.contains("cut = true"), "{text}");
    assert!(text.contains("error_kind = \"context_length\""), "{text}");
    assert!(
        text.contains("user_text_contains = \"create hello.txt\""),
        "{text}"
    );
}

#[test]
fn control_characters_round_trip() {
    let text = "a\u{7f}b\u{1}c\td\u{2028}e";
    round_trip(&[
        (
            request(Message::user_text(text)),
            vec![
                Ok(StreamEvent::ThinkingDelta(text.into())),
                Ok(StreamEvent::TextDelta(text.into())),
                call("toolu_1", json!({ "content": text, text: [text] })),
                usage(1),
                Ok(StreamEvent::Done(ModelStop::ToolUse)),
            ],
        ),
        (results(true), vec![Err(ProviderError::Failed(text.into()))]),
    ]);
}

#[test]
fn input_toml_cannot_hold_goes_as_input_json() {
    let prompt = || request(Message::user_text("go"));
    let done = || Ok(StreamEvent::Done(ModelStop::ToolUse));
    for input in [
        json!({"a": null}),
        json!({"a": [1, null]}),
        json!({"big": u64::MAX}),
    ] {
        let text = round_trip(&[(prompt(), vec![call("toolu_1", input), usage(1), done()])]);
        assert!(text.contains("input_json = "), "{text}");
    }
    let text = round_trip(&[(
        prompt(),
        vec![call("toolu_1", json!({"a": 1})), usage(1), done()],
    )]);
    assert!(!text.contains("input_json"), "{text}");
}
