//! The session's title: asked of the cheap tier alongside the first turn
//! when the provider has one, else the first prompt's first line; said once,
//! at the end of the first turn (just before its `TurnDone`), and kept in
//! the rollout.

use std::time::{Duration, Instant};

use cox_protocol::provider::Tier;
use cox_protocol::types::{Event, Job};
use cox_tests::{Options, Run, assert_nothing_after_turn_done, run};

const PROMPT: &str = "  the login form does not submit  \nsee src/login.ts";

fn titles(run: &Run) -> Vec<&str> {
    run.events
        .iter()
        .filter_map(|e| match e {
            Event::SessionTitled { title } => Some(title.as_str()),
            _ => None,
        })
        .collect()
}

fn title_calls(run: &Run) -> usize {
    run.events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::Usage {
                    job: Job::Title,
                    ..
                }
            )
        })
        .count()
}

/// What every run here must hold: the order of events, and a rollout that
/// has them all and still resumes.
fn check(run: &Run) {
    assert_nothing_after_turn_done(&run.events);
    let rollout = cox_store::read_rollout(&run.rollout_path()).expect("rollout");
    assert_eq!(rollout.events, run.events);
    let resumed = cox_core::rebuild(&rollout.events).expect("resumes");
    assert_eq!(resumed.history.messages(), run.end.history.messages());
}

#[test]
fn the_cheap_tier_writes_the_title_alongside_the_first_turn() {
    let run = run(
        "title",
        Options {
            prompt: PROMPT.into(),
            more_prompts: vec!["and the signup form?".into()],
            cheap_tier: true,
            ..Options::default()
        },
    );
    check(&run);
    let title = &run.requests[0];
    assert_eq!(title.tier, Tier::Cheap);
    assert_eq!(title.system.prompt, cox_core::session::TITLE_PROMPT);
    assert!(title.tools.is_empty() && title.max_output_tokens <= 64);
    assert_eq!(run.requests[1].tier, Tier::Code, "then the turn's own call");
    assert_eq!(
        run.requests.len(),
        3,
        "and the second turn's: no second title"
    );
    assert!(
        !run.events.iter().any(|e| matches!(e, Event::Notice { .. })),
        "{:?}",
        run.events
    );
    assert_eq!(titles(&run), ["Fix the login form"], "once, cleaned");
    // Said at the end of the first turn, its call's usage first, booked as
    // `title`; the turn's `TurnDone` follows.
    let done = run
        .events
        .iter()
        .position(|e| matches!(e, Event::TurnDone { .. }))
        .unwrap();
    assert!(matches!(
        &run.events[done - 2],
        Event::Usage {
            job: Job::Title,
            tier: Tier::Cheap,
            ..
        }
    ));
    assert!(matches!(&run.events[done - 1], Event::SessionTitled { .. }));
}

#[test]
fn without_a_cheap_tier_the_title_is_the_first_line_and_no_call_is_made() {
    let run = run(
        "hello",
        Options {
            prompt: PROMPT.into(),
            ..Options::default()
        },
    );
    check(&run);
    assert_eq!(run.requests.len(), 2, "only the turn's calls");
    assert_eq!(titles(&run), ["the login form does not submit"]);
    assert_eq!(title_calls(&run), 0);
}

#[test]
fn a_title_slower_than_the_session_gives_way_to_the_first_line() {
    let started = Instant::now();
    let run = run(
        "title_slow",
        Options {
            prompt: PROMPT.into(),
            cheap_tier: true,
            ..Options::default()
        },
    );
    check(&run);
    assert_eq!(titles(&run), ["the login form does not submit"]);
    assert_eq!(title_calls(&run), 0, "the call was given up");
    assert!(
        started.elapsed() < Duration::from_millis(1_500),
        "the session did not wait for it: {:?}",
        started.elapsed()
    );
}

#[test]
fn the_grace_lets_a_slow_title_land_at_the_end_of_the_turn() {
    let run = run(
        "title_slow",
        Options {
            prompt: PROMPT.into(),
            cheap_tier: true,
            title_grace: Some(Duration::from_secs(30)),
            ..Options::default()
        },
    );
    check(&run);
    assert_eq!(titles(&run), ["Slow title"]);
    assert_eq!(title_calls(&run), 1);
}

#[test]
fn a_prompt_a_hook_blocked_is_not_sent_for_a_title() {
    let run = run(
        "title",
        Options {
            prompt: PROMPT.into(),
            cheap_tier: true,
            // A real command that refuses every prompt (exit 2).
            hooks: Some(serde_json::json!({"hooks": {"UserPromptSubmit": [
                {"hooks": [{"type": "command", "command": "echo 'holds a secret' >&2; exit 2"}]}
            ]}})),
            ..Options::default()
        },
    );
    check(&run);
    assert!(run.requests.is_empty(), "{:?}", run.requests);
    assert!(titles(&run).is_empty());
}
