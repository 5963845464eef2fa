//! The turn typestates on their own, with the conversation folded from
//! the events they make (as the driver does): results in call order, the
//! round limit, interrupts, failures and edited calls.

use std::collections::BTreeSet;

use super::*;
use crate::history::History;
use cox_protocol::CallId;
use cox_protocol::provider::{ContentBlock, Role};
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

/// The conversation, fed the events a driver would emit.
#[derive(Default)]
struct Live {
    history: History,
}

impl Live {
    /// Turn `number` starts with `text` and makes its first request.
    fn start(
        &mut self,
        number: u32,
        text: &str,
        max: Option<u32>,
        prefix: &Prefix<'_>,
    ) -> (Turn<Streaming>, Request) {
        self.history.apply(&Event::TurnStarted {
            turn: number,
            text: text.into(),
        });
        self.history.settle();
        Turn::begin(number, max).request(
            std::sync::Arc::new(self.history.messages().to_vec()),
            prefix,
            &BTreeSet::new(),
        )
    }

    /// Streams `event` in, folding what it becomes.
    fn stream(&mut self, turn: &mut Turn<Streaming>, event: StreamEvent, prefix: &Prefix<'_>) {
        if let Some(event) = turn.apply(event, prefix) {
            self.history.apply(&event);
        }
    }

    fn fold(&mut self, events: &[Event]) {
        for event in events {
            self.history.apply(event);
        }
    }

    fn end(&mut self, done: Turn<Done>) {
        self.history.apply(&done.into_event());
    }

    fn messages(&self) -> &[std::sync::Arc<cox_protocol::provider::Message>] {
        self.history.messages()
    }
}

fn call(id: &str, input: serde_json::Value) -> StreamEvent {
    StreamEvent::ToolUse {
        id: CallId::from(id),
        name: "read".into(),
        input,
    }
}

fn done_with(id: &str, result: ToolResult) -> Event {
    Event::ToolCallDone {
        call_id: id.into(),
        result,
    }
}

#[test]
fn tool_results_return_in_one_message_in_call_order() {
    let parts = Parts::new();
    let prefix = parts.prefix();
    let mut live = Live::default();
    let (mut streaming, request) = live.start(1, "go", None, &prefix);
    assert_eq!(request.messages.len(), 1);
    for id in ["a", "b"] {
        let ev = streaming.apply(call(id, json!({})), &prefix);
        assert!(matches!(ev, Some(Event::ToolCallRequested { .. })));
        live.fold(&ev.into_iter().collect::<Vec<_>>());
    }
    let Next::Tools(running) = streaming.finish() else {
        panic!("calls were requested")
    };
    // They finish in the other order.
    live.fold(&[
        done_with("b", ToolResult::error("B")),
        done_with("a", ToolResult::ok("A")),
    ]);
    let next = running.record(None).expect("no limit");
    assert_eq!(next.ctx().rounds, 1);
    live.history.settle();
    let last = live.messages().last().unwrap();
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
    let mut live = Live::default();
    let (mut streaming, _) = live.start(1, "go", Some(1), &prefix);
    live.stream(&mut streaming, call("a", json!({})), &prefix);
    let Next::Tools(running) = streaming.finish() else {
        panic!()
    };
    let done = running.record(None).unwrap_err();
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
    let mut live = Live::default();
    let (streaming, _) = live.start(1, "go", None, &prefix);
    let (events, done) = streaming.interrupt();
    assert!(events.is_empty());
    assert_eq!(done.stop(), StopReason::Interrupted);
    live.end(done);
    assert_eq!(live.messages().len(), 1, "only the user's prompt");

    let (mut streaming, _) = live.start(2, "again", None, &prefix);
    live.stream(
        &mut streaming,
        StreamEvent::TextDelta("half".into()),
        &prefix,
    );
    let (events, done) = streaming.interrupt();
    live.fold(&events);
    live.end(done);
    assert_eq!(live.messages().len(), 3, "prompt, prompt, partial answer");
    assert!(live.messages().iter().all(|m| !m.content.is_empty()));
}

#[test]
fn an_interrupted_stream_keeps_its_partial_text_and_answers_its_calls() {
    let parts = Parts::new();
    let prefix = parts.prefix();
    let mut live = Live::default();
    let (mut streaming, _) = live.start(1, "go", None, &prefix);
    live.stream(
        &mut streaming,
        StreamEvent::TextDelta("par".into()),
        &prefix,
    );
    live.stream(&mut streaming, call("a", json!({})), &prefix);
    let (events, done) = streaming.interrupt();
    assert_eq!(events.len(), 1);
    assert_eq!(done.stop(), StopReason::Interrupted);
    live.fold(&events);
    live.end(done);
    assert_eq!(
        live.messages().len(),
        3,
        "user, partial assistant, interrupted results"
    );
    assert!(matches!(&live.messages()[1].content[0], ContentBlock::Text { text } if text == "par"));
}

#[test]
fn a_failed_stream_answers_its_calls_and_ends_with_error() {
    let parts = Parts::new();
    let prefix = parts.prefix();
    let mut live = Live::default();
    let (mut streaming, _) = live.start(1, "go", None, &prefix);
    assert!(!streaming.is_complete());
    live.stream(&mut streaming, call("a", json!({})), &prefix);
    let (events, done) = streaming.abandon(StopReason::Error, "not run");
    assert_eq!(events, vec![done_with("a", ToolResult::error("not run"))]);
    assert_eq!(done.stop(), StopReason::Error);
    live.fold(&events);
    live.end(done);
    let last = live.messages().last().unwrap();
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
    let mut live = Live::default();
    let (mut streaming, _) = live.start(1, "go", None, &prefix);
    live.stream(&mut streaming, call("a", json!({"p": 1})), &prefix);
    live.stream(
        &mut streaming,
        StreamEvent::Usage(Usage::default()),
        &prefix,
    );
    streaming.apply(StreamEvent::Done(ModelStop::ToolUse), &prefix);
    assert!(streaming.is_complete());
    let Next::Tools(mut running) = streaming.finish() else {
        panic!()
    };
    let mut edited = running.calls()[0].clone();
    edited.input = json!({"p": 2});
    // The driver says the edit, then replaces the call it runs.
    live.fold(&[Event::ToolCallRequested {
        call: edited.clone(),
    }]);
    running.replace_call(0, edited);
    assert_eq!(running.calls()[0].input, json!({"p": 2}));
    assert!(matches!(
        &live.messages()[1].content[0],
        ContentBlock::ToolUse { input, .. } if *input == json!({"p": 2})
    ));
}
