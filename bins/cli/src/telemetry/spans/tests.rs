//! The translator against the hello turn's events: the span tree, its
//! attributes and the content opt-in.

use super::*;
use cox_protocol::types::{PermissionMode, Risk, Usage};
use std::time::Duration;

#[derive(Default)]
struct Kept {
    spans: Vec<SpanRecord>,
    logs: Vec<LogRecord>,
}

impl Sink for Kept {
    fn span(&mut self, span: SpanRecord) {
        self.spans.push(span);
    }
    fn log(&mut self, record: LogRecord) {
        self.logs.push(record);
    }
}

fn call() -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: "write".into(),
        input: json!({"path": "hello.txt", "content": "hi\n"}),
        risk: Risk::Write,
        subject: "hello.txt".into(),
        segments: None,
        writes: Vec::new(),
    }
}

fn usage(input: u64) -> Event {
    Event::Usage {
        provider: "scripted".into(),
        model: "scripted".into(),
        tier: Tier::Code,
        job: Default::default(),
        effort: None,
        usage: Usage {
            input_tokens: input,
            output_tokens: 2,
            ..Usage::default()
        },
    }
}

/// A write, then text: the hello turn's events, 10 ms apart.
fn hello(capture: bool) -> Kept {
    let mut spans = Spans::new(Kept::default(), Catalog::default(), capture);
    let t0 = SystemTime::now();
    let events = [
        Event::SessionStarted {
            session_id: cox_protocol::SessionId::generate(),
            cwd: "/w".into(),
            model: "scripted".into(),
            provider: "scripted".into(),
            tools: vec![],
            permission_mode: PermissionMode::AcceptEdits,
            at: String::new(),
            resumed: false,
            format: 1,
        },
        Event::TurnStarted {
            turn: 1,
            text: "create hello.txt".into(),
        },
        Event::ToolCallRequested { call: call() },
        usage(100),
        Event::ToolCallDone {
            call_id: "c1".into(),
            result: ToolResult::ok("wrote 3 bytes to hello.txt").with_bytes(3),
        },
        Event::TextDelta {
            text: "Created.".into(),
        },
        usage(120),
        Event::TurnDone {
            stop: StopReason::EndTurn,
        },
    ];
    for (i, event) in events.iter().enumerate() {
        spans.event_at(event, t0 + Duration::from_millis(10 * i as u64));
    }
    spans.finish();
    std::mem::take(spans.sink())
}

fn attr<'a>(span: &'a SpanRecord, key: &str) -> Option<&'a Value> {
    span.attrs.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
}

#[test]
fn a_turn_is_a_tree_of_one_trace_with_no_orphan() {
    let kept = hello(false);
    let names: Vec<&str> = kept.spans.iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "chat",
            "execute_tool",
            "chat",
            "invoke_agent cox.turn",
            "invoke_agent cox"
        ]
    );
    let trace = kept.spans[0].trace;
    assert!(kept.spans.iter().all(|s| s.trace == trace));
    let session = &kept.spans[4];
    let turn = &kept.spans[3];
    assert_eq!(session.parent, None);
    assert_eq!(turn.parent, Some(session.id));
    for child in &kept.spans[..3] {
        assert_eq!(child.parent, Some(turn.id), "{}", child.name);
        assert!(child.start >= turn.start && child.end <= turn.end);
    }
    // The first call runs from the turn's start to its usage; the tool
    // from there to its result; the second call from then on.
    let (chat1, tool, chat2) = (&kept.spans[0], &kept.spans[1], &kept.spans[2]);
    assert_eq!(chat1.start, turn.start);
    assert_eq!(tool.start, chat1.end);
    assert_eq!(chat2.start, tool.end);
    assert_eq!(
        attr(chat1, "gen_ai.response.finish_reasons"),
        Some(&Value::Strs(vec!["tool_use".into()]))
    );
    assert_eq!(
        attr(chat2, "gen_ai.response.finish_reasons"),
        Some(&Value::Strs(vec!["end_turn".into()]))
    );
    assert_eq!(
        attr(chat2, "cox.provider.call.ordinal"),
        Some(&Value::Int(2))
    );
    assert_eq!(
        attr(chat1, "gen_ai.usage.input_tokens"),
        Some(&Value::Int(100))
    );
    assert_eq!(attr(chat1, "cox.usage.estimated"), Some(&Value::Bool(true)));
    assert_eq!(attr(chat1, "cox.cost.usd"), Some(&Value::Float(0.0)));
    assert_eq!(attr(tool, "cox.tool.duration_ms"), Some(&Value::Int(10)));
    assert_eq!(attr(tool, "cox.tool.success"), Some(&Value::Bool(true)));
    assert_eq!(
        attr(tool, "cox.tool.risk"),
        Some(&Value::Str("write".into()))
    );
    assert_eq!(
        attr(turn, "cox.turn.stop_reason"),
        Some(&Value::Str("end_turn".into()))
    );
    assert!(kept.spans.iter().all(|s| s.error.is_none()));
    // The tool's record names its span.
    let done = kept.logs.iter().find(|l| l.body == "tool done").unwrap();
    assert_eq!(done.context, Some((tool.trace, tool.id)));
}

#[test]
fn content_is_kept_only_when_asked_for() {
    const CONTENT: [&str; 4] = [
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    ];
    let plain = hello(false);
    for span in &plain.spans {
        for key in CONTENT {
            assert!(attr(span, key).is_none(), "{key} on {}", span.name);
        }
    }
    let kept = hello(true);
    let chat2 = &kept.spans[2];
    let Some(Value::Str(input)) = attr(chat2, "gen_ai.input.messages") else {
        panic!("no input messages")
    };
    let input: Json = serde_json::from_str(input).unwrap();
    let roles: Vec<&str> = input
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    let Some(Value::Str(output)) = attr(chat2, "gen_ai.output.messages") else {
        panic!("no output messages")
    };
    assert!(output.contains("Created."), "{output}");
    let tool = &kept.spans[1];
    assert!(attr(tool, "gen_ai.tool.call.arguments").is_some());
    assert!(attr(tool, "gen_ai.tool.call.result").is_some());
}

/// One run of `id` that only starts and ends.
fn one_run(id: cox_protocol::SessionId, resumed: bool) -> Kept {
    let mut spans = Spans::new(Kept::default(), Catalog::default(), false);
    spans.event(&Event::SessionStarted {
        session_id: id,
        cwd: "/w".into(),
        model: "scripted".into(),
        provider: "scripted".into(),
        tools: vec![],
        permission_mode: PermissionMode::Default,
        at: String::new(),
        resumed,
        format: 1,
    });
    spans.finish();
    std::mem::take(spans.sink())
}

#[test]
fn a_session_is_found_by_its_id_and_a_resumed_run_links_to_its_first() {
    let id = cox_protocol::SessionId::generate();
    let first = one_run(id, false);
    let session = &first.spans[0];
    assert_eq!(
        session.trace, id.0.0,
        "the first run's trace is the session id"
    );
    assert!(session.links.is_empty());
    let again = one_run(id, true);
    let resumed = &again.spans[0];
    assert_ne!(resumed.trace, session.trace);
    assert_ne!(resumed.id, session.id);
    assert_eq!(resumed.links, vec![(session.trace, session.id)]);
    assert_ne!(session_root(id).1, 0);
}

#[test]
fn a_session_another_started_names_its_parent() {
    let mut spans = Spans::new(Kept::default(), Catalog::default(), false)
        .with_parent_session(Some("01PARENT".into()));
    spans.event(&Event::SessionStarted {
        session_id: cox_protocol::SessionId::generate(),
        cwd: "/w".into(),
        model: "scripted".into(),
        provider: "scripted".into(),
        tools: vec![],
        permission_mode: PermissionMode::Default,
        at: String::new(),
        resumed: false,
        format: 1,
    });
    spans.finish();
    let session = &spans.sink().spans[0];
    assert_eq!(
        attr(session, "cox.session.parent_id"),
        Some(&Value::Str("01PARENT".into()))
    );
    let alone = one_run(cox_protocol::SessionId::generate(), false);
    assert!(attr(&alone.spans[0], "cox.session.parent_id").is_none());
}
