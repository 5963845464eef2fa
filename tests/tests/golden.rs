//! Golden event logs: each bundled scenario replayed through the real
//! session and tools, compared line by line with `tests/golden/*.jsonl`.
//! Every run also checks the invariants that hold for all sessions:
//! nothing follows a `TurnDone`, the rollout on disk holds exactly the
//! events the surface saw, and resuming from that rollout rebuilds exactly
//! the history the session ended with.

use std::sync::Arc;

use cox_protocol::types::{ApprovalPolicy, Event, PermissionMode, StopReason, Submission};
use cox_tests::slow_tool::SlowEcho;
use cox_tests::{Options, Run, assert_golden, assert_nothing_after_turn_done, run};

fn notes() -> Vec<(String, String)> {
    vec![("notes.txt".into(), "alpha\nbeta\n".into())]
}

pub fn check(name: &str, run: &Run) {
    assert_nothing_after_turn_done(&run.events);
    let rollout = cox_store::read_rollout(&run.rollout_path()).expect("rollout reads back");
    assert!(!rollout.truncated_tail);
    assert_eq!(
        rollout.events, run.events,
        "the rollout holds every event, in order"
    );
    let resumed = cox_core::rebuild(&rollout.events).expect("the rollout resumes");
    pretty_assertions::assert_eq!(
        resumed.history,
        run.end.history,
        "resuming from the rollout folds the conversation the session had: messages, turns, \
         compaction, result pointers, mode and tool searches alike"
    );
    assert!(!resumed.unfinished_turn);
    assert_golden(name, run);
}

fn stop_of(run: &Run) -> StopReason {
    match run.events.last() {
        Some(Event::TurnDone { stop }) => *stop,
        other => panic!("the last event is {other:?}, not turn_done"),
    }
}

#[test]
fn write_then_done() {
    let run = run("hello", Options::default());
    assert_eq!(stop_of(&run), StopReason::EndTurn);
    assert_eq!(
        std::fs::read_to_string(run.workdir.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    check("write_then_done", &run);
    cox_tests::assert_golden_requests("write_then_done", &run);
}

#[test]
fn read_then_edit() {
    let run = run(
        "read_then_edit",
        Options {
            files: notes(),
            ..Options::default()
        },
    );
    assert_eq!(stop_of(&run), StopReason::EndTurn);
    let notes = std::fs::read_to_string(run.workdir.path().join("notes.txt")).unwrap();
    assert_eq!(notes, "alpha\ngamma\n");
    check("read_then_edit", &run);
}

#[test]
fn parallel_reads_return_in_emission_order() {
    let slow = SlowEcho::default();
    let finished = Arc::clone(&slow.finished);
    let run = run(
        "parallel_reads",
        Options {
            extra_tools: vec![Arc::new(slow)],
            ..Options::default()
        },
    );
    // They finished out of order, so they really ran at the same time…
    assert_eq!(*finished.lock().unwrap(), ["second", "third", "first"]);
    // …and the scenario's expectation (results joined in call order) held.
    assert_eq!(stop_of(&run), StopReason::EndTurn);
    check("parallel_reads", &run);
}

#[test]
fn a_failing_tool_is_a_result_the_model_reads() {
    let run = run(
        "failing_tool",
        Options {
            files: notes(),
            ..Options::default()
        },
    );
    assert_eq!(stop_of(&run), StopReason::EndTurn);
    check("failing_tool", &run);
}

#[test]
fn interrupt_mid_stream_keeps_the_partial_text() {
    let trigger = Box::new(|events: &[Event]| {
        let deltas = events
            .iter()
            .filter(|e| matches!(e, Event::TextDelta { .. }))
            .count();
        (deltas == 3 && matches!(events.last(), Some(Event::TextDelta { .. })))
            .then_some(Submission::Interrupt)
    });
    let run = run(
        "slow",
        Options {
            trigger: Some(trigger),
            ..Options::default()
        },
    );
    assert_eq!(stop_of(&run), StopReason::Interrupted);
    let deltas = run
        .events
        .iter()
        .filter(|e| matches!(e, Event::TextDelta { .. }))
        .count();
    assert_eq!(deltas, 3, "no delta after the interrupt");
    check("interrupt_mid_stream", &run);
}

fn process_gone(pid: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
    // Gone, or a zombie waiting for a reaper that is not ours.
    stat.map_or(true, |s| {
        s.rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'))
    })
}

#[test]
fn interrupt_mid_tool_kills_the_command_and_its_children() {
    let trigger = Box::new(|events: &[Event]| match events.last() {
        Some(Event::ToolCallOutput { chunk, .. }) if chunk.contains("started") => {
            Some(Submission::Interrupt)
        }
        _ => None,
    });
    let options = Options {
        mode: PermissionMode::Auto,
        trigger: Some(trigger),
        ..Options::default()
    };
    let run = run("interrupt_tool", options);
    assert_eq!(stop_of(&run), StopReason::Interrupted);
    let dir = run.workdir.path();
    let sleep_pid = std::fs::read_to_string(dir.join("sleep.pid")).expect("sleep pid");
    let shell_pid = std::fs::read_to_string(dir.join("shell.pid")).expect("shell pid");
    for _ in 0..250 {
        if process_gone(&sleep_pid) && process_gone(&shell_pid) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        process_gone(&shell_pid),
        "the shell {shell_pid} is still running"
    );
    assert!(
        process_gone(&sleep_pid),
        "the background sleep {sleep_pid} is still running"
    );
    check("interrupt_mid_tool", &run);
}

#[test]
fn max_turns_stops_a_model_that_keeps_calling_tools() {
    let options = Options {
        files: notes(),
        max_turns: Some(2),
        ..Options::default()
    };
    let run = run("max_turns", options);
    assert_eq!(stop_of(&run), StopReason::MaxTurns);
    let reads = run
        .events
        .iter()
        .filter(|e| matches!(e, Event::ToolCallDone { .. }))
        .count();
    assert_eq!(reads, 2);
    check("max_turns", &run);
    // One round: said in the singular.
    let options = Options {
        files: notes(),
        max_turns: Some(1),
        ..Options::default()
    };
    let one = cox_tests::run("max_turns", options);
    let said: Vec<&str> = one
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Notice { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        said.contains(&"stopped after 1 model round: the --max-turns limit was reached"),
        "{said:?}"
    );
}

#[test]
fn a_call_cut_at_the_output_limit_is_told_and_never_runs() {
    let options = Options {
        files: notes(),
        mode: PermissionMode::AcceptEdits,
        ..Options::default()
    };
    let run = run("output_limit", options);
    assert_eq!(stop_of(&run), StopReason::EndTurn);
    assert_eq!(
        std::fs::read_to_string(run.workdir.path().join("out.txt")).unwrap(),
        "part one\n"
    );
    let results: Vec<bool> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallDone { result, .. } => Some(result.ok),
            _ => None,
        })
        .collect();
    assert_eq!(results, [false, true, true], "cut, read, write");
    check("output_limit", &run);
}

#[test]
fn a_cut_call_keeps_its_place_among_the_calls() {
    let options = Options {
        files: notes(),
        ..Options::default()
    };
    let run = run("output_limit_first", options);
    assert_eq!(stop_of(&run), StopReason::EndTurn);
    let reply = &run.end.history.messages()[1];
    let ids: Vec<&str> = reply
        .content
        .iter()
        .filter_map(|b| match b {
            cox_protocol::provider::ContentBlock::ToolUse { id, .. } => Some(id.0.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["toolu_1_1", "toolu_1_2"], "the order they arrived in");
    check("output_limit_first", &run);
}

#[test]
fn a_second_cut_in_a_row_stops_at_the_output_limit() {
    let run = run("output_limit_twice", Options::default());
    assert_eq!(stop_of(&run), StopReason::MaxTokens);
    check("output_limit_twice", &run);
}

#[test]
fn a_call_that_would_ask_is_denied_when_nobody_can_answer() {
    let options = Options {
        mode: PermissionMode::Default,
        approval: ApprovalPolicy::Never,
        ..Options::default()
    };
    let run = run("denied", options);
    assert!(
        !run.workdir.path().join("hello.txt").exists(),
        "the denied write did not run"
    );
    assert!(
        run.events.iter().any(
            |e| matches!(e, Event::ToolCallDone { result, .. } if result.denied && !result.ok)
        )
    );
    assert_eq!(stop_of(&run), StopReason::EndTurn);
    check("denied", &run);
}

#[test]
fn a_path_escape_is_refused() {
    let run = run("path_escape", Options::default());
    assert_eq!(stop_of(&run), StopReason::EndTurn);
    check("path_escape", &run);
}

#[test]
fn a_tool_input_that_fails_its_schema_is_an_error_the_model_sees() {
    let run = run("bad_input", Options::default());
    assert!(!run.workdir.path().join("hello.txt").exists());
    assert_eq!(stop_of(&run), StopReason::EndTurn);
    check("bad_input", &run);
}

#[test]
fn turns_queued_during_a_turn_run_in_order_and_keep_the_history() {
    let options = Options {
        more_prompts: vec!["and now the second".into()],
        ..Options::default()
    };
    let run = run("two_turns", options);
    let turns: Vec<u32> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::TurnStarted { turn, .. } => Some(*turn),
            _ => None,
        })
        .collect();
    assert_eq!(turns, [1, 2]);
    assert_eq!(stop_of(&run), StopReason::EndTurn);
    check("two_turns", &run);
}

#[test]
fn approvals_allow_deny_with_a_reason_and_edit() {
    use cox_protocol::types::Decision;
    let mut asked = Vec::new();
    let trigger = Box::new(move |events: &[Event]| {
        let Some(Event::ApprovalRequired { call_id, .. }) = events.last() else {
            return None;
        };
        asked.push(call_id.clone());
        let again = asked.iter().filter(|id| *id == call_id).count() > 1;
        let decision = match (call_id.as_str(), again) {
            ("toolu_1_1", _) => Decision::Allow,
            ("toolu_2_1", _) => Decision::Deny {
                reason: Some("not b".into()),
            },
            ("toolu_3_1", false) => Decision::Edit {
                input: serde_json::json!({"path": "c2.txt", "content": "3"}),
            },
            _ => Decision::AllowForSession,
        };
        Some(Submission::Approve {
            call_id: call_id.clone(),
            decision,
        })
    });
    let options = Options {
        mode: PermissionMode::Default,
        approval: ApprovalPolicy::OnRequest,
        trigger: Some(trigger),
        ..Options::default()
    };
    let run = run("approvals", options);
    let dir = run.workdir.path();
    assert!(dir.join("a.txt").exists());
    assert!(!dir.join("b.txt").exists());
    assert!(!dir.join("c.txt").exists());
    assert_eq!(std::fs::read_to_string(dir.join("c2.txt")).unwrap(), "3");
    assert_eq!(stop_of(&run), StopReason::EndTurn);
    check("approvals", &run);
}

#[test]
fn a_denial_without_a_reason_ends_the_turn() {
    use cox_protocol::types::Decision;
    let trigger = Box::new(|events: &[Event]| match events.last() {
        Some(Event::ApprovalRequired { call_id, .. }) => Some(Submission::Approve {
            call_id: call_id.clone(),
            decision: Decision::Deny { reason: None },
        }),
        _ => None,
    });
    let options = Options {
        mode: PermissionMode::Default,
        approval: ApprovalPolicy::OnRequest,
        trigger: Some(trigger),
        ..Options::default()
    };
    let run = run("hello", options);
    assert_eq!(stop_of(&run), StopReason::Denied);
    assert!(!run.workdir.path().join("hello.txt").exists());
    assert_nothing_after_turn_done(&run.events);
}

#[test]
fn a_session_grant_on_a_compound_line_covers_each_command_alone() {
    use cox_protocol::types::Decision;
    let trigger = Box::new(|events: &[Event]| {
        let Some(Event::ApprovalRequired { call_id, .. }) = events.last() else {
            return None;
        };
        let decision = match call_id.as_str() {
            "toolu_1_1" => Decision::AllowForSession,
            _ => Decision::Deny {
                reason: Some("not c".into()),
            },
        };
        Some(Submission::Approve {
            call_id: call_id.clone(),
            decision,
        })
    });
    let options = Options {
        mode: PermissionMode::Default,
        approval: ApprovalPolicy::OnRequest,
        trigger: Some(trigger),
        ..Options::default()
    };
    let run = run("grants", options);
    let asked: Vec<&str> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ApprovalRequired { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        asked,
        ["toolu_1_1", "toolu_3_1"],
        "touch b alone did not ask"
    );
    assert!(!run.workdir.path().join("c").exists());
    assert_eq!(stop_of(&run), StopReason::EndTurn);
    check("grants", &run);
}
