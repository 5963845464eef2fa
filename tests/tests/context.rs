//! Context economy, each mechanism through a real session and the real
//! tools, with golden event logs: a big output archived and shown as head
//! and tail, a repeated read answered `unchanged since`, old results sent as
//! pointers, compaction on request, after a full turn and on a
//! context-length error, and deferred tools found with `tool_search`. The
//! scenarios' `request_contains` / `request_lacks` expectations check the
//! bytes actually sent; every run also checks the invariants of
//! tests/golden.rs, including that a resume rebuilds the same history and
//! compaction.

use std::sync::Arc;

use cox_protocol::Archive;
use cox_protocol::config::ContextConfig;
use cox_protocol::types::{Event, StopReason, Submission};
use cox_tests::named_tool::NamedTool;
use cox_tests::{Options, Run, assert_golden, assert_golden_requests, run};

fn check(name: &str, run: &Run) {
    check_invariants(run);
    assert_golden(name, run);
}

fn check_invariants(run: &Run) {
    cox_tests::assert_nothing_after_turn_done(&run.events);
    let rollout = cox_store::read_rollout(&run.rollout_path()).expect("rollout reads back");
    assert_eq!(rollout.events, run.events);
    let resumed = cox_core::rebuild(&rollout.events).expect("resumes");
    pretty_assertions::assert_eq!(resumed.history.messages(), run.end.history.messages());
    assert_eq!(resumed.history.compaction(), run.end.history.compaction());
}

fn stops(run: &Run) -> Vec<StopReason> {
    run.events
        .iter()
        .filter_map(|e| match e {
            Event::TurnDone { stop } => Some(*stop),
            _ => None,
        })
        .collect()
}

fn no_scenario_failure(run: &Run) {
    for event in &run.events {
        if let Event::Notice { text, .. } = event {
            assert!(!text.contains("scenario"), "{text}");
        }
    }
}

#[test]
fn a_big_output_is_archived_whole_and_shown_as_head_and_tail() {
    let run = run(
        "big_output",
        Options {
            mode: cox_protocol::types::PermissionMode::BypassPermissions,
            ..Options::default()
        },
    );
    no_scenario_failure(&run);
    assert_eq!(stops(&run), [StopReason::EndTurn]);
    let (visible, id) = run
        .events
        .iter()
        .find_map(|e| match e {
            Event::ToolCallDone { result, .. } => {
                Some((result.visible.clone(), result.archive.clone().unwrap()))
            }
            _ => None,
        })
        .unwrap();
    assert!(visible.len() <= 4 * 1024, "{} bytes", visible.len());
    assert!(
        visible.contains(&format!("expand #{id} lines 41–")),
        "{visible}"
    );
    let seq: String = (1..=200_000).map(|i| format!("{i}\n")).collect();
    let archive = cox_store::FileArchive::new(&cox_store::CoxHome::at(run.home.path()));
    assert_eq!(archive.get(&id).unwrap(), seq.as_bytes(), "every byte kept");
    // The output streams in chunks whose cuts depend on timing: check the
    // invariants on every event, then compare the rest with the golden log.
    let mut run = run;
    check_invariants(&run);
    run.events
        .retain(|e| !matches!(e, Event::ToolCallOutput { .. }));
    assert_golden("big_output", &run);
    assert_golden_requests("big_output", &run);
}

fn notes() -> Vec<(String, String)> {
    vec![("notes.txt".into(), "alpha\nbeta\n".into())]
}

#[test]
fn a_repeated_read_is_unchanged_until_the_file_changes() {
    let run = run(
        "dedup",
        Options {
            files: notes(),
            ..Options::default()
        },
    );
    no_scenario_failure(&run);
    assert_eq!(stops(&run), [StopReason::EndTurn]);
    let visible: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallDone { result, .. } => Some(result.visible.clone()),
            _ => None,
        })
        .collect();
    assert!(visible[1].starts_with("unchanged since #"));
    assert!(
        visible[3].contains("gamma"),
        "the read after the edit is whole"
    );
    check("dedup", &run);
    assert_golden_requests("dedup", &run);
}

#[test]
fn old_results_are_sent_as_pointers() {
    let long: String = (1..=40)
        .map(|i| format!("line {i} of the long file\n"))
        .collect();
    let run = run(
        "microcompact",
        Options {
            files: vec![("long.txt".into(), long)],
            prompt: "prompt one".into(),
            more_prompts: vec!["prompt two".into(), "prompt three".into()],
            context: ContextConfig {
                microcompact_after_turns: 2,
                ..ContextConfig::default()
            },
            ..Options::default()
        },
    );
    no_scenario_failure(&run);
    assert_eq!(stops(&run), [StopReason::EndTurn; 3]);
    check("microcompact", &run);
    assert_golden_requests("microcompact", &run);
}

fn three_prompts() -> Options {
    Options {
        prompt: "prompt one".into(),
        more_prompts: vec!["prompt two".into(), "prompt three".into()],
        ..Options::default()
    }
}

#[test]
fn compact_summarises_all_but_the_last_two_turns() {
    let run = run(
        "compact",
        Options {
            then: vec![
                Submission::Compact {
                    focus: Some("the answers".into()),
                },
                Submission::UserTurn {
                    text: "prompt four".into(),
                    images: Vec::new(),
                },
            ],
            ..three_prompts()
        },
    );
    no_scenario_failure(&run);
    let compacted = run
        .events
        .iter()
        .find_map(|e| match e {
            Event::Compacted {
                dropped, summary, ..
            } => Some((dropped.clone(), summary.clone())),
            _ => None,
        })
        .expect("a compacted event");
    assert_eq!(compacted.0, [1]);
    assert!(compacted.1.starts_with("SUMMARY:"));
    assert!(run.events.iter().any(|e| matches!(
        e,
        Event::Usage {
            job: cox_protocol::types::Job::Compact,
            tier: cox_protocol::provider::Tier::Cheap,
            ..
        }
    )));
    assert_eq!(
        run.end.history.messages().len(),
        8,
        "the history keeps every turn"
    );
    check("compact", &run);
    assert_golden_requests("compact", &run);
}

#[test]
fn a_context_length_error_compacts_and_retries_once() {
    let run = run("context_length", three_prompts());
    no_scenario_failure(&run);
    assert_eq!(stops(&run), [StopReason::EndTurn; 3]);
    assert!(
        run.events
            .iter()
            .any(|e| matches!(e, Event::Compacted { .. }))
    );
    check("context_length", &run);
}

#[test]
fn a_turn_that_fills_the_window_is_followed_by_compaction() {
    let run = run(
        "auto_compact",
        Options {
            then: vec![Submission::UserTurn {
                text: "prompt four".into(),
                images: Vec::new(),
            }],
            context_window: Some(200_000),
            ..three_prompts()
        },
    );
    no_scenario_failure(&run);
    let at = run
        .events
        .iter()
        .position(|e| matches!(e, Event::Compacted { .. }))
        .expect("compacted");
    assert!(
        matches!(run.events[at + 1], Event::TurnDone { .. }),
        "inside turn 3, right before its end"
    );
    check("auto_compact", &run);
}

fn sky_tools() -> Vec<Arc<dyn cox_protocol::Tool>> {
    ["forecast", "radar", "tides"]
        .into_iter()
        .map(|t| {
            Arc::new(NamedTool {
                name: format!("mcp__sky__{t}"),
                description: match t {
                    "forecast" => "The weather forecast for a city.".into(),
                    other => format!("Sky {other} data."),
                },
            }) as Arc<dyn cox_protocol::Tool>
        })
        .collect()
}

#[test]
fn deferred_tools_are_found_with_tool_search() {
    let run = run(
        "tool_search",
        Options {
            extra_tools: sky_tools(),
            context: ContextConfig {
                max_tools: 6,
                ..ContextConfig::default()
            },
            ..Options::default()
        },
    );
    no_scenario_failure(&run);
    assert_eq!(stops(&run), [StopReason::EndTurn]);
    assert!(run.events.iter().any(|e| matches!(
        e,
        Event::Notice { text, .. } if text.contains("prompt cache starts again")
    )));
    check("tool_search", &run);
}

#[test]
fn a_resumed_session_still_has_the_tools_it_found() {
    let context = ContextConfig {
        max_tools: 6,
        ..ContextConfig::default()
    };
    let first = run(
        "tool_search",
        Options {
            extra_tools: sky_tools(),
            context,
            ..Options::default()
        },
    );
    no_scenario_failure(&first);
    let rollout = cox_store::read_rollout(&first.rollout_path()).expect("rollout reads back");
    let resumed = cox_core::rebuild(&rollout.events).expect("the rollout resumes");
    assert_eq!(resumed.history.searches(), ["weather forecast"]);
    let again = run(
        "tool_search_resumed",
        Options {
            extra_tools: sky_tools(),
            context,
            resume: Some((resumed, first.rollout_path())),
            ..Options::default()
        },
    );
    // The scenario expects the found tool in the first request after the
    // resume, and no tool_search.
    no_scenario_failure(&again);
    assert_eq!(stops(&again), [StopReason::EndTurn]);
    assert!(
        !again.events.iter().any(|e| matches!(
            e,
            Event::Notice { text, .. } if text.contains("prompt cache starts again")
        )),
        "the tool block is the one the session had: no change to say"
    );
}

#[test]
fn compacting_with_keep_turns_zero_keeps_the_last_turn() {
    let run = run(
        "compact_keep_one",
        Options {
            context: ContextConfig {
                keep_turns: 0,
                ..ContextConfig::default()
            },
            then: vec![
                Submission::Compact { focus: None },
                Submission::UserTurn {
                    text: "prompt four".into(),
                    images: Vec::new(),
                },
            ],
            ..three_prompts()
        },
    );
    no_scenario_failure(&run);
    assert!(
        run.events
            .iter()
            .any(|e| matches!(e, Event::Compacted { dropped, .. } if dropped == &[1, 2]))
    );
    check_invariants(&run);
}

#[test]
fn a_re_read_after_its_pointer_is_sent_whole() {
    let long: String = (1..=40)
        .map(|i| format!("line {i} of the long file\n"))
        .collect();
    let run = run(
        "dedup_after_pointer",
        Options {
            files: vec![("long.txt".into(), long)],
            prompt: "prompt one".into(),
            more_prompts: vec!["prompt two".into(), "prompt three".into()],
            context: ContextConfig {
                microcompact_after_turns: 2,
                ..ContextConfig::default()
            },
            ..Options::default()
        },
    );
    no_scenario_failure(&run);
    check_invariants(&run);
}

#[test]
fn call_ids_reused_across_rounds_stay_separate_calls() {
    let run = run(
        "reused_ids",
        Options {
            files: vec![
                ("notes.txt".into(), "alpha\n".into()),
                ("other.txt".into(), "omega\n".into()),
            ],
            ..Options::default()
        },
    );
    no_scenario_failure(&run);
    assert_eq!(run.end.history.messages().len(), 6);
    check_invariants(&run);
}

#[test]
fn a_prompt_hooks_context_is_what_the_first_message_carries_and_a_resume_rebuilds() {
    // A real command: its plain stdout is context for the model.
    let run = run(
        "compact",
        Options {
            hooks: Some(serde_json::json!({"hooks": {"UserPromptSubmit": [
                {"hooks": [{"type": "command", "command": "echo 'the branch is main'"}]}
            ]}})),
            prompt: "prompt one".into(),
            ..Options::default()
        },
    );
    assert!(
        run.events
            .iter()
            .any(|e| matches!(e, Event::TurnStarted { text, .. } if text == "prompt one"))
    );
    let first = &run.end.history.messages()[0];
    let texts: Vec<&str> = first
        .content
        .iter()
        .filter_map(|b| match b {
            cox_protocol::provider::ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts[0], "prompt one");
    assert!(
        texts[1].contains("UserPromptSubmit hook") && texts[1].contains("the branch is main"),
        "{texts:?}"
    );
    // The request the model got carried it.
    let sent = serde_json::to_string(&run.requests[0].messages).unwrap();
    assert!(sent.contains("the branch is main"), "{sent}");
    check_invariants(&run);
}

#[test]
fn expand_reads_one_enormous_line_piece_by_piece() {
    let home = tempfile::tempdir().unwrap();
    let home = cox_store::CoxHome::at(home.path());
    home.prepare().unwrap();
    let archive = cox_store::FileArchive::new(&home);
    let line = "x".repeat(100_000);
    let meta = cox_protocol::archive::ArchiveMeta {
        session: cox_protocol::SessionId::generate(),
        call: None,
    };
    let id = archive.put(&meta, line.as_bytes()).unwrap();
    let mut got = String::new();
    let mut offset = 0u64;
    for _ in 0..3 {
        let input = serde_json::json!({"id": id, "offset": offset});
        let result = cox_core::own_tools::expand(&archive, &input);
        assert!(result.ok, "{}", result.visible);
        let (piece, rest) = match result.visible.split_once("\n[… ") {
            Some((piece, rest)) => (piece.to_owned(), Some(rest.to_owned())),
            None => (result.visible.clone(), None),
        };
        got.push_str(&piece);
        match rest {
            Some(rest) => {
                let next: u64 = rest
                    .rsplit("offset ")
                    .next()
                    .and_then(|t| {
                        t.trim_end_matches(|c: char| !c.is_ascii_digit())
                            .parse()
                            .ok()
                    })
                    .unwrap();
                assert!(next > offset);
                offset = next;
            }
            None => break,
        }
    }
    assert_eq!(got, line, "every byte, in 64 KiB pieces");
}

#[test]
fn an_interrupt_stops_a_compaction_and_keeps_the_history() {
    let mut done_turns = 0;
    let run = run(
        "compact_slow",
        Options {
            then: vec![Submission::Compact { focus: None }],
            trigger: Some(Box::new(move |events: &[Event]| {
                if matches!(events.last(), Some(Event::TurnDone { .. })) {
                    done_turns += 1;
                    if done_turns == 3 {
                        return Some(Submission::Interrupt);
                    }
                }
                None
            })),
            ..three_prompts()
        },
    );
    assert!(
        !run.events
            .iter()
            .any(|e| matches!(e, Event::Compacted { .. }))
    );
    assert!(run.events.iter().any(
        |e| matches!(e, Event::Notice { text, .. } if text.contains("compaction interrupted"))
    ));
    assert!(run.end.history.compaction().is_none());
    check_invariants(&run);
}

/// A tool that joins after the session started (an MCP server that
/// connected late) is offered from the next turn on, with a notice that
/// the tool block changed; the turn that was running keeps its tools.
#[test]
fn a_tool_that_joins_late_is_offered_from_the_next_turn() {
    let (tx, rx) = futures::channel::mpsc::unbounded();
    let mut sent = false;
    let run = run(
        "two_turns",
        Options {
            more_prompts: vec!["and now the second".into()],
            tool_updates: Some(rx),
            trigger: Some(Box::new(move |events: &[Event]| {
                let done = events
                    .iter()
                    .filter(|e| matches!(e, Event::TurnDone { .. }))
                    .count();
                if done == 1 && !sent {
                    sent = true;
                    let _ = tx.unbounded_send(cox_core::LateTools {
                        tools: vec![Arc::new(NamedTool {
                            name: "mcp__late__probe".into(),
                            description: "Joined after the start.".into(),
                        })],
                        notices: vec!["MCP server 'late' connected after the first prompt".into()],
                        ..cox_core::LateTools::default()
                    });
                }
                None
            })),
            ..Options::default()
        },
    );
    cox_tests::assert_nothing_after_turn_done(&run.events);
    assert_eq!(run.requests.len(), 2, "two turns, one request each");
    let offered = |i: usize| -> Vec<String> {
        run.requests[i]
            .tools
            .iter()
            .map(|t| t.name.clone())
            .collect()
    };
    assert!(!offered(0).contains(&"mcp__late__probe".to_owned()));
    assert!(
        offered(1).contains(&"mcp__late__probe".to_owned()),
        "{:?}",
        offered(1)
    );
    let said: Vec<&str> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Notice { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        said.iter()
            .any(|t| t.contains("1 tool(s) joined: mcp__late__probe")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|t| t.contains("connected after the first prompt")),
        "{said:?}"
    );
}
