//! The turn typestates on their own: results in call order, the round
//! limit, interrupts, failures and edited calls.

use super::*;
use cox_protocol::CallId;
use serde_json::json;

/// What a request's prefix borrows, owned by the test.
struct Parts(SystemParts, ToolSet, Workspace);

impl Parts {
    fn new() -> Self {
        Self(
            SystemParts::default(),
            ToolSet::new(Vec::new(), 40),
            Workspace::single(std::path::PathBuf::from("/w")),
        )
    }

    fn prefix(&self) -> Prefix<'_> {
        Prefix {
            provider: "p",
            model: "m",
            tier: Tier::Code,
            effort: None,
            system: &self.0,
            tools: &self.1,
            workspace: &self.2,
            max_output_tokens: 100,
        }
    }
}

#[test]
fn tool_results_return_in_one_message_in_call_order() {
    let parts = Parts::new();
    let prefix = parts.prefix();
    let mut history = History::new();
    let turn = Turn::begin(1, "go", None, &mut history);
    let (mut streaming, request) = turn.request(&history, &prefix);
    assert_eq!(request.messages.len(), 1);
    for id in ["a", "b"] {
        let ev = streaming.apply(
            StreamEvent::ToolUse {
                id: CallId::from(id),
                name: "read".into(),
                input: json!({}),
            },
            &prefix,
        );
        assert!(matches!(ev, Some(Event::ToolCallRequested { .. })));
    }
    let Next::Tools(running) = streaming.finish(&mut history) else {
        panic!("calls were requested")
    };
    let results = vec![ToolResult::ok("A"), ToolResult::error("B")];
    let next = running
        .record(results, None, &mut history)
        .expect("no limit");
    assert_eq!(next.ctx().rounds, 1);
    let last = history.last().unwrap();
    assert_eq!(last.role, Role::User);
    assert_eq!(
        last.content,
        vec![
            ContentBlock::ToolResult {
                tool_use_id: "a".into(),
                content: "A".into(),
                is_error: false
            },
            ContentBlock::ToolResult {
                tool_use_id: "b".into(),
                content: "B".into(),
                is_error: true
            },
        ]
    );
}

#[test]
fn the_round_limit_ends_the_turn_with_max_turns() {
    let parts = Parts::new();
    let prefix = parts.prefix();
    let mut history = History::new();
    let (mut streaming, _) = Turn::begin(1, "go", Some(1), &mut history).request(&history, &prefix);
    streaming.apply(
        StreamEvent::ToolUse {
            id: "a".into(),
            name: "x".into(),
            input: json!({}),
        },
        &prefix,
    );
    let Next::Tools(running) = streaming.finish(&mut history) else {
        panic!()
    };
    let done = running
        .record(vec![ToolResult::ok("")], None, &mut history)
        .unwrap_err();
    assert_eq!(
        done.into_event(),
        Event::TurnDone {
            stop: StopReason::MaxTurns
        }
    );
}

#[test]
fn an_interrupt_before_any_call_leaves_no_empty_message() {
    let parts = Parts::new();
    let prefix = parts.prefix();
    let mut history = History::new();
    let (streaming, _) = Turn::begin(1, "go", None, &mut history).request(&history, &prefix);
    let (events, done) = streaming.interrupt(&mut history);
    assert!(events.is_empty());
    assert_eq!(done.stop(), StopReason::Interrupted);
    assert_eq!(history.len(), 1, "only the user's prompt");

    let (mut streaming, _) = Turn::begin(2, "again", None, &mut history).request(&history, &prefix);
    streaming.apply(StreamEvent::TextDelta("half".into()), &prefix);
    let _ = streaming.interrupt(&mut history);
    assert_eq!(history.len(), 3, "prompt, prompt, partial answer");
    assert!(history.iter().all(|m| !m.content.is_empty()));
}

#[test]
fn an_interrupted_stream_keeps_its_partial_text_and_answers_its_calls() {
    let parts = Parts::new();
    let prefix = parts.prefix();
    let mut history = History::new();
    let (mut streaming, _) = Turn::begin(1, "go", None, &mut history).request(&history, &prefix);
    streaming.apply(StreamEvent::TextDelta("par".into()), &prefix);
    streaming.apply(
        StreamEvent::ToolUse {
            id: "a".into(),
            name: "x".into(),
            input: json!({}),
        },
        &prefix,
    );
    let (events, done) = streaming.interrupt(&mut history);
    assert_eq!(events.len(), 1);
    assert_eq!(done.stop(), StopReason::Interrupted);
    assert_eq!(
        history.len(),
        3,
        "user, partial assistant, interrupted results"
    );
    assert!(matches!(&history[1].content[0], ContentBlock::Text { text } if text == "par"));
}

#[test]
fn a_failed_stream_answers_its_calls_and_ends_with_error() {
    let parts = Parts::new();
    let prefix = parts.prefix();
    let mut history = History::new();
    let (mut streaming, _) = Turn::begin(1, "go", None, &mut history).request(&history, &prefix);
    assert!(!streaming.is_complete());
    streaming.apply(
        StreamEvent::ToolUse {
            id: "a".into(),
            name: "x".into(),
            input: json!({}),
        },
        &prefix,
    );
    let (events, done) = streaming.abandon(&mut history, StopReason::Error, "not run");
    assert_eq!(
        events,
        vec![Event::ToolCallDone {
            call_id: "a".into(),
            result: ToolResult::error("not run")
        }]
    );
    assert_eq!(done.stop(), StopReason::Error);
    let last = history.last().unwrap();
    assert_eq!(last.role, Role::User, "the tool use has its result");
    assert!(matches!(
        &last.content[0],
        ContentBlock::ToolResult { is_error: true, .. }
    ));
}

#[test]
fn an_edited_call_changes_the_tool_use_in_the_history() {
    let parts = Parts::new();
    let prefix = parts.prefix();
    let mut history = History::new();
    let (mut streaming, _) = Turn::begin(1, "go", None, &mut history).request(&history, &prefix);
    streaming.apply(
        StreamEvent::ToolUse {
            id: "a".into(),
            name: "x".into(),
            input: json!({"p": 1}),
        },
        &prefix,
    );
    streaming.apply(StreamEvent::Done(ModelStop::ToolUse), &prefix);
    assert!(streaming.is_complete());
    let Next::Tools(mut running) = streaming.finish(&mut history) else {
        panic!()
    };
    let mut edited = running.calls()[0].clone();
    edited.input = json!({"p": 2});
    running.replace_call(0, edited, &mut history);
    assert_eq!(running.calls()[0].input, json!({"p": 2}));
    assert!(matches!(
        &history[1].content[0],
        ContentBlock::ToolUse { input, .. } if *input == json!({"p": 2})
    ));
}
