//! Replaying a scenario through the `Provider` trait, as the core sees it.

use std::time::{Duration, Instant};

use cox_protocol::provider::{
    ContentBlock, Message, ModelStop, ProviderError, Request, Role, StreamEvent, SystemParts,
    ToolSpec,
};
use cox_protocol::types::Usage;
use cox_protocol::{CallId, CancelToken, Provider};
use cox_scripted::{Scenario, ScriptedProvider};
use futures::StreamExt;
use serde_json::json;

type Item = Result<StreamEvent, ProviderError>;

fn provider(text: &str) -> ScriptedProvider {
    ScriptedProvider::new(Scenario::parse(text, "tests/s.toml").unwrap())
}

fn request(messages: Vec<Message>) -> Request {
    let tool = |name: &str| ToolSpec {
        name: name.into(),
        description: format!("the {name} tool"),
        input_schema: json!({"type": "object"}),
    };
    Request {
        model: "scripted".into(),
        system: SystemParts::default(),
        tools: vec![tool("read"), tool("write")],
        messages: std::sync::Arc::new(messages.into_iter().map(std::sync::Arc::new).collect()),
        max_output_tokens: 1000,
        tier: cox_protocol::provider::Tier::Code,
        effort: None,
        model_override: None,
    }
}

fn tool_results(results: &[(&str, bool)]) -> Message {
    let content = results
        .iter()
        .enumerate()
        .map(|(i, (content, is_error))| ContentBlock::ToolResult {
            tool_use_id: CallId(format!("toolu_{i}")),
            content: (*content).into(),
            is_error: *is_error,
        })
        .collect();
    Message {
        role: Role::User,
        content,
    }
}

async fn collect(provider: &ScriptedProvider, request: Request) -> Vec<Item> {
    provider.stream(request, CancelToken::new()).collect().await
}

fn the_error(items: &[Item]) -> ProviderError {
    match items {
        [Err(error)] => error.clone(),
        other => panic!("expected one error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_turn_streams_thinking_text_tools_usage_then_done() {
    let scenario = r#"
model = "scripted-model"
[[turn]]
thinking = "Let me write it."
text = "Writing the file now."
usage = { input_tokens = 10, output_tokens = 5 }
[[turn.tool_call]]
name = "write"
input = { path = "hello.txt", content = "hi\n", mode = { append = false, lines = [1, 2] } }
[[turn.tool_call]]
name = "read"
id = "toolu_custom"
"#;
    let provider = provider(scenario);
    assert_eq!(provider.name(), "scripted");
    assert_eq!(provider.model(), "scripted-model");
    let items = collect(&provider, request(vec![Message::user_text("hello")])).await;
    let events: Vec<StreamEvent> = items.into_iter().map(Result::unwrap).collect();
    assert_eq!(
        events,
        vec![
            StreamEvent::ThinkingDelta("Let ".into()),
            StreamEvent::ThinkingDelta("me ".into()),
            StreamEvent::ThinkingDelta("write ".into()),
            StreamEvent::ThinkingDelta("it.".into()),
            StreamEvent::TextDelta("Writing ".into()),
            StreamEvent::TextDelta("the ".into()),
            StreamEvent::TextDelta("file ".into()),
            StreamEvent::TextDelta("now.".into()),
            StreamEvent::ToolUse {
                id: CallId::from("toolu_1_1"),
                name: "write".into(),
                input: json!({"path": "hello.txt", "content": "hi\n",
                              "mode": {"append": false, "lines": [1, 2]}}),
            },
            StreamEvent::ToolUse {
                id: CallId::from("toolu_custom"),
                name: "read".into(),
                input: json!({})
            },
            StreamEvent::Usage(Usage {
                input_tokens: 10,
                output_tokens: 5,
                ..Usage::default()
            }),
            StreamEvent::Done(ModelStop::ToolUse),
        ]
    );
    assert_eq!(provider.turns_used(), 1);
}

#[tokio::test]
async fn deltas_concatenate_back_to_the_text_and_defaults_apply() {
    let text = "  A longer answer,\twith tabs\nand new lines ✓ and trailing space ";
    let scenario = format!(
        "[[turn]]\ntext = {text:?}\n[[turn]]\ntext = {text:?}\nchunk_chars = 5\nstop = \"max_tokens\"\n[[turn]]\ntool_call = [{{ name = \"read\" }}, {{ name = \"write\" }}]\n"
    );
    let provider = provider(&scenario);
    let request = request(vec![Message::user_text("x".repeat(4000))]);
    let expected_input = (serde_json::to_string(&request).unwrap().len() / 4) as u64;

    for (chunk, stop) in [(None, ModelStop::EndTurn), (Some(5), ModelStop::MaxTokens)] {
        let events: Vec<StreamEvent> = collect(&provider, request.clone())
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
        let deltas: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(deltas.concat(), text);
        match chunk {
            None => {
                for delta in &deltas[1..] {
                    assert!(
                        !delta.starts_with(char::is_whitespace),
                        "{delta:?} starts a word"
                    );
                }
                assert!(
                    deltas.iter().all(|d| d.split_whitespace().count() == 1),
                    "{deltas:?}"
                );
            }
            Some(size) => assert!(
                deltas.iter().all(|d| d.chars().count() <= size),
                "{deltas:?}"
            ),
        }
        let usage = Usage {
            input_tokens: expected_input,
            output_tokens: (text.chars().count() / 4) as u64,
            ..Usage::default()
        };
        assert_eq!(
            &events[events.len() - 2..],
            [StreamEvent::Usage(usage), StreamEvent::Done(stop)]
        );
    }

    let events: Vec<StreamEvent> = collect(&provider, request.clone())
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let ids: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolUse { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["toolu_3_1", "toolu_3_2"]);
    assert_eq!(events.last(), Some(&StreamEvent::Done(ModelStop::ToolUse)));
}

#[tokio::test]
async fn met_expectations_let_the_turn_play() {
    let scenario = r#"
[[turn]]
text = "done"
[turn.expect]
tool_result_contains = "wrote 3 bytes"
user_text_contains = "bytes"
tool_result_ok = true
tools_include = ["read", "write"]
"#;
    let provider = provider(scenario);
    let asked = Message::user_text("write 3 bytes to hello.txt");
    let called = Message {
        role: Role::Assistant,
        content: vec![ContentBlock::ToolUse {
            id: "toolu_0".into(),
            name: "write".into(),
            input: json!({}),
        }],
    };
    let results = tool_results(&[
        ("listed 2 files", false),
        ("wrote 3 bytes to hello.txt", false),
    ]);
    let messages = vec![asked, called, results];
    let items = collect(&provider, request(messages)).await;
    assert_eq!(
        items.last(),
        Some(&Ok(StreamEvent::Done(ModelStop::EndTurn)))
    );
}

#[tokio::test]
async fn failed_expectations_name_the_file_turn_expectation_and_actual() {
    let scenario = r#"
[[turn]]
text = "first"
[[turn]]
text = "second"
[turn.expect]
tool_result_contains = "wrote 3 bytes"
"#;
    let provider = provider(scenario);
    collect(&provider, request(vec![Message::user_text("hi")])).await;
    let long = format!("error: permission denied\n{}", "x".repeat(400));
    let error = the_error(&collect(&provider, request(vec![tool_results(&[(&long, true)])])).await);
    let ProviderError::Scenario(message) = error else {
        panic!("{error:?}")
    };
    assert!(
        message.starts_with(
            "scenario tests/s.toml turn 2: expected tool_result_contains \"wrote 3 bytes\", but the tool results were \"error: permission denied\\nxxx"
        ),
        "{message}"
    );
    assert!(message.ends_with("\"…"), "{message}");
    assert!(!message.contains('\n'));
    assert!(message.len() < 320, "{} chars: {message}", message.len());
}

#[tokio::test]
async fn each_kind_of_expectation_reports_what_was_there() {
    let cases = [
        (
            "user_text_contains = \"hello\"",
            vec![Message::user_text("goodbye")],
            "expected user_text_contains \"hello\", but the last user text was \"goodbye\"",
        ),
        (
            "user_text_contains = \"hello\"",
            vec![tool_results(&[("hello", false)])],
            "expected user_text_contains \"hello\", but the request has no user text",
        ),
        (
            "tool_result_ok = true",
            vec![tool_results(&[("fine", false), ("no such file", true)])],
            "expected tool_result_ok = true, but a tool result has is_error = true: \"no such file\"",
        ),
        (
            "tool_result_ok = false",
            vec![Message::user_text("hi")],
            "expected tool_result_ok = false, but the last message has no tool results",
        ),
        (
            "tool_result_contains = \"x\"",
            vec![Message::user_text("hi")],
            "expected tool_result_contains \"x\", but the last message has no tool results",
        ),
        (
            "tools_include = [\"read\", \"bash\"]",
            vec![Message::user_text("hi")],
            "expected tools_include [\"read\", \"bash\"], but the request lacks [\"bash\"] (it offers [\"read\", \"write\"])",
        ),
    ];
    for (expect, messages, wanted) in cases {
        let provider = provider(&format!(
            "[[turn]]\ntext = \"a\"\n[turn.expect]\n{expect}\n"
        ));
        let error = the_error(&collect(&provider, request(messages)).await);
        assert_eq!(
            error,
            ProviderError::Scenario(format!("scenario tests/s.toml turn 1: {wanted}"))
        );
    }
}

#[tokio::test]
async fn running_out_of_turns_is_a_scenario_error() {
    let provider = provider("[[turn]]\ntext = \"only\"\n");
    assert_eq!(provider.turns_used(), 0);
    collect(&provider, request(vec![])).await;
    assert_eq!(provider.turns_used(), 1);
    let error = the_error(&collect(&provider, request(vec![])).await);
    assert_eq!(
        error,
        ProviderError::Scenario(
            "scenario tests/s.toml has no turn 2: the model was called 2 times but the scenario scripts only 1".into()
        )
    );
    assert_eq!(provider.turns_used(), 1);
}

#[tokio::test]
async fn an_error_turn_fails_the_call_and_the_next_turn_goes_on() {
    let provider = provider("[[turn]]\nerror = \"overloaded\"\n[[turn]]\ntext = \"retried\"\n");
    let error = the_error(&collect(&provider, request(vec![])).await);
    assert_eq!(error, ProviderError::Failed("overloaded".into()));
    assert_eq!(error.to_string(), "overloaded");
    let items = collect(&provider, request(vec![])).await;
    assert_eq!(
        items.first(),
        Some(&Ok(StreamEvent::TextDelta("retried".into())))
    );
}

#[tokio::test]
async fn cancelling_ends_a_delayed_stream_promptly_without_done() {
    // Each word comes 3 s after the last: a stream that ignored the cancel
    // would take at least 3 s more, far past the bound below.
    let provider = provider("[[turn]]\ndelay_ms = 3000\ntext = \"one two three four five six\"\n");
    let cancel = CancelToken::new();
    let mut stream = Box::pin(provider.stream(request(vec![]), cancel.clone()));

    let started = Instant::now();
    assert_eq!(
        stream.next().await,
        Some(Ok(StreamEvent::TextDelta("one ".into())))
    );
    assert!(started.elapsed() >= Duration::from_millis(3000));

    let canceller = tokio::spawn({
        let cancel = cancel.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            cancel.cancel();
        }
    });
    let waiting = Instant::now();
    let rest: Vec<Item> = stream.collect().await;
    canceller.await.unwrap();
    assert!(rest.is_empty(), "nothing after cancel: {rest:?}");
    assert!(
        waiting.elapsed() < Duration::from_millis(2500),
        "took {:?}",
        waiting.elapsed()
    );
}

#[tokio::test]
async fn a_stream_cancelled_before_it_starts_yields_nothing() {
    let provider = provider("[[turn]]\ntext = \"never seen\"\n");
    let cancel = CancelToken::new();
    cancel.cancel();
    let items: Vec<Item> = provider.stream(request(vec![]), cancel).collect().await;
    assert!(items.is_empty(), "{items:?}");
    assert_eq!(provider.turns_used(), 1, "the call still consumed its turn");
}

#[tokio::test]
async fn the_stream_outlives_the_provider_and_crosses_threads() {
    let provider = provider("[[turn]]\ntext = \"owned data\"\n");
    let stream = provider.stream(request(vec![]), CancelToken::new());
    drop(provider);
    let items: Vec<Item> = tokio::spawn(stream.collect::<Vec<_>>()).await.unwrap();
    assert_eq!(items.len(), 4);
}

#[tokio::test]
async fn the_bundled_hello_scenario_writes_then_confirms() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scenarios/hello.toml");
    let provider = ScriptedProvider::new(Scenario::load(&path).unwrap());
    let first = collect(
        &provider,
        request(vec![Message::user_text("create hello.txt")]),
    )
    .await;
    assert_eq!(
        first[0],
        Ok(StreamEvent::ToolUse {
            id: CallId::from("toolu_1_1"),
            name: "write".into(),
            input: json!({"path": "hello.txt", "content": "hi\n"}),
        })
    );
    assert_eq!(
        first.last(),
        Some(&Ok(StreamEvent::Done(ModelStop::ToolUse)))
    );
    let second = collect(
        &provider,
        request(vec![tool_results(&[("wrote 3 bytes to hello.txt", false)])]),
    )
    .await;
    let text: String = second
        .iter()
        .filter_map(|e| match e {
            Ok(StreamEvent::TextDelta(t)) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Created hello.txt.");
    assert_eq!(
        second.last(),
        Some(&Ok(StreamEvent::Done(ModelStop::EndTurn)))
    );
}

#[tokio::test]
async fn input_json_is_replayed_as_written_nulls_included() {
    let provider = provider(
        "[[turn]]\n[[turn.tool_call]]\nname = \"read\"\ninput_json = '{\"path\": \"a\", \"limit\": null}'\n",
    );
    let items = collect(&provider, request(vec![Message::user_text("hi")])).await;
    let call = items
        .into_iter()
        .find_map(|i| match i {
            Ok(StreamEvent::ToolUse { input, .. }) => Some(input),
            _ => None,
        })
        .unwrap();
    assert_eq!(call, json!({"path": "a", "limit": null}));
}

#[tokio::test]
async fn a_cut_call_streams_as_cut() {
    let p = provider(
        "[[turn]]\ntext = \"Writing.\"\nstop = \"max_tokens\"\n[[turn.tool_call]]\nname = \"write\"\nid = \"toolu_cut\"\ncut = true\n",
    );
    let items = collect(&p, request(vec![Message::user_text("go")])).await;
    let events: Vec<StreamEvent> = items.into_iter().map(Result::unwrap).collect();
    assert!(events.contains(&StreamEvent::ToolUseCut {
        id: CallId::from("toolu_cut"),
        name: "write".into()
    }));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::ToolUse { .. }))
    );
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done(ModelStop::MaxTokens))
    );
}
