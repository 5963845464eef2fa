//! The fold on its own: what each event does to the conversation.

use super::*;
use cox_protocol::types::{Risk, ToolCall, ToolResult, Usage};
use serde_json::json;

fn turn(n: u32, text: &str) -> Event {
    Event::TurnStarted {
        turn: n,
        text: text.into(),
    }
}

fn call(id: &str, name: &str, input: Value) -> Event {
    Event::ToolCallRequested {
        call: ToolCall {
            id: id.into(),
            name: name.into(),
            input,
            risk: Risk::ReadOnly,
            subject: "s".into(),
            segments: None,
            writes: Vec::new(),
        },
    }
}

fn usage() -> Event {
    Event::Usage {
        provider: "p".into(),
        model: "m".into(),
        tier: Tier::Code,
        job: Default::default(),
        effort: None,
        usage: Usage::default(),
    }
}

fn result(id: &str, ok: bool, text: &str) -> Event {
    Event::ToolCallDone {
        call_id: id.into(),
        result: if ok {
            ToolResult::ok(text)
        } else {
            ToolResult::error(text)
        },
    }
}

fn fold(events: &[Event]) -> History {
    let mut history = History::new();
    for event in events {
        history.apply(event);
    }
    history
}

#[test]
fn settling_early_changes_nothing_the_events_would_not() {
    let events = [
        turn(1, "read"),
        call("a", "read", json!({"path": "x"})),
        usage(),
        result("a", true, "X"),
        Event::TextDelta {
            text: "done".into(),
        },
        usage(),
        Event::TurnDone {
            stop: StopReason::EndTurn,
        },
    ];
    let whole = fold(&events);
    // The driver settles before each request: after the prompt, and after
    // the results.
    let mut live = History::new();
    for (i, event) in events.iter().enumerate() {
        live.apply(event);
        if i == 0 || i == 3 {
            live.settle();
            live.settle();
        }
    }
    assert_eq!(live, whole);
    assert_eq!(whole.messages().len(), 4, "prompt, call, result, answer");
    assert_eq!(whole.turn_starts(), &[(1, 0)]);
}

#[test]
fn a_prompt_a_hook_refused_leaves_nothing_and_a_denied_call_keeps_its_turn() {
    let refused = fold(&[
        turn(1, "secret"),
        Event::TurnDone {
            stop: StopReason::Denied,
        },
    ]);
    assert!(refused.messages().is_empty());
    assert_eq!(refused.turns(), 1);
    let denied = fold(&[
        turn(1, "rm"),
        call("a", "bash", json!({"command": "rm -rf x"})),
        usage(),
        result("a", false, "the user denied this call"),
        Event::TurnDone {
            stop: StopReason::Denied,
        },
    ]);
    assert_eq!(denied.messages().len(), 3, "prompt, call, its result");
}

#[test]
fn answered_tool_searches_are_kept_for_a_resume_to_run_again() {
    let history = fold(&[
        turn(1, "find"),
        call("a", "tool_search", json!({"query": "weather"})),
        call("b", "tool_search", json!({"query": "denied"})),
        usage(),
        result("a", true, "These tools can be called now:\n"),
        result("b", false, "denied"),
        Event::TurnDone {
            stop: StopReason::EndTurn,
        },
    ]);
    assert_eq!(history.searches(), ["weather"]);
}

#[test]
fn results_are_pointed_at_by_turn_and_archive() {
    let mut done = ToolResult::ok("X");
    done.archive = Some("01ARCH".into());
    let history = fold(&[
        turn(3, "read"),
        call("a", "read", json!({"path": "x"})),
        usage(),
        Event::ToolCallDone {
            call_id: "a".into(),
            result: done,
        },
    ]);
    let meta = &history.results()[&CallId::from("a")];
    assert_eq!(meta.turn, 3);
    assert_eq!(meta.archive.as_deref(), Some("01ARCH"));
    assert_eq!(meta.what, "read s");
}

#[test]
fn a_compaction_names_the_first_kept_turn() {
    let mut events = Vec::new();
    for n in 1..=3 {
        events.push(turn(n, &format!("p{n}")));
        events.push(Event::TextDelta {
            text: format!("a{n}"),
        });
        events.push(usage());
        events.push(Event::TurnDone {
            stop: StopReason::EndTurn,
        });
    }
    events.push(Event::Compacted {
        summary: "s".into(),
        dropped: vec![1, 2],
        before_tokens: 0,
        after_tokens: 0,
    });
    let history = fold(&events);
    let compaction = history.compaction().expect("compacted");
    assert_eq!(compaction.until, 4, "turn 3 starts at message 4");
    assert_eq!(
        history.messages().len(),
        6,
        "the conversation is kept whole"
    );
}

fn text(t: &str) -> Event {
    Event::TextDelta { text: t.into() }
}

fn done() -> Event {
    Event::TurnDone {
        stop: StopReason::EndTurn,
    }
}

fn rewound(to_turn: u32, turn: u32, what: cox_protocol::checkpoint::RewindWhat) -> Event {
    Event::Rewound {
        to_turn,
        turn,
        what,
        files: Vec::new(),
        unkept: Vec::new(),
    }
}

#[test]
fn a_conversation_rewind_cuts_before_its_turn_and_numbers_go_on() {
    use cox_protocol::checkpoint::RewindWhat;
    let mut events = Vec::new();
    for (n, prompt) in [(1, "one"), (2, "two"), (3, "three")] {
        events.extend([
            turn(n, prompt),
            text(&format!("answer {n}")),
            usage(),
            done(),
        ]);
    }
    let whole = fold(&events);
    events.push(rewound(2, 4, RewindWhat::Both));
    let cut = fold(&events);
    assert_eq!(cut.turns(), 4, "the rewind took turn 4");
    assert_eq!(cut.messages().len(), 2, "turn 1's prompt and answer stay");
    assert_eq!(cut.messages(), &whole.messages()[..2]);
    assert_eq!(cut.turn_starts(), &[(1, 0)]);

    // The code alone leaves the conversation whole, and still counts.
    let mut code = events[..events.len() - 1].to_vec();
    code.push(rewound(2, 4, RewindWhat::Code));
    let kept = fold(&code);
    assert_eq!(kept.messages(), whole.messages());
    assert_eq!(kept.turns(), 4);

    // A compaction that summarised a cut turn goes with it.
    let mut compacted = events[..events.len() - 1].to_vec();
    compacted.push(Event::Compacted {
        summary: "s".into(),
        dropped: vec![1, 2],
        before_tokens: 10,
        after_tokens: 1,
    });
    compacted.push(rewound(2, 4, RewindWhat::Conversation));
    let after = fold(&compacted);
    assert!(after.compaction().is_none());
    assert_eq!(after.messages().len(), 2);
    // One that summarised only earlier turns stays.
    let mut early = events[..events.len() - 1].to_vec();
    early.push(Event::Compacted {
        summary: "s".into(),
        dropped: vec![1],
        before_tokens: 10,
        after_tokens: 1,
    });
    early.push(rewound(3, 4, RewindWhat::Conversation));
    assert!(fold(&early).compaction().is_some());
}

#[test]
fn the_plan_comes_back_to_the_model_once_a_compaction_hides_its_call_and_a_rewind_drops_it() {
    use cox_protocol::checkpoint::RewindWhat;
    use cox_protocol::types::{PlanStep, StepStatus};
    let plan = Event::Plan {
        steps: vec![PlanStep {
            content: "parse".into(),
            status: StepStatus::InProgress,
        }],
    };
    let mut events = vec![turn(1, "p1"), plan, text("a1"), usage(), done()];
    for n in 2..=3 {
        events.extend([turn(n, &format!("p{n}")), text("a"), usage(), done()]);
    }
    let history = fold(&events);
    assert_eq!(history.plan().len(), 1);
    assert!(
        history.plan_out_of_sight().is_none(),
        "the model still sees the call"
    );
    events.push(Event::Compacted {
        summary: "s".into(),
        dropped: vec![1, 2],
        before_tokens: 0,
        after_tokens: 0,
    });
    let history = fold(&events);
    assert_eq!(history.plan_out_of_sight().map(<[_]>::len), Some(1));
    events.push(rewound(1, 4, RewindWhat::Conversation));
    let history = fold(&events);
    assert!(history.plan().is_empty(), "the turn that set it was cut");
}

#[test]
fn a_prompts_images_join_its_message_and_a_refused_prompt_takes_them_away() {
    let image = Image {
        media_type: "image/png".into(),
        data: "AAAA".into(),
    };
    let mut history = History::new();
    history.apply(&turn(1, "what is this"));
    history.apply(&Event::Attached {
        images: vec![image.clone()],
    });
    history.apply(&usage());
    let first = &history.messages()[0];
    assert_eq!(
        first.content,
        vec![
            ContentBlock::Text {
                text: "what is this".into()
            },
            ContentBlock::Image(image.clone()),
        ]
    );
    history.apply(&Event::TurnDone {
        stop: StopReason::EndTurn,
    });
    // A prompt refused before the model was asked leaves nothing, images
    // included, for the next one.
    history.apply(&turn(2, "and this"));
    history.apply(&Event::Attached {
        images: vec![image],
    });
    history.apply(&Event::TurnDone {
        stop: StopReason::Denied,
    });
    history.apply(&turn(3, "plain"));
    history.apply(&usage());
    let last = history.messages().last().unwrap();
    assert_eq!(
        last.content,
        vec![ContentBlock::Text {
            text: "plain".into()
        }]
    );
}
