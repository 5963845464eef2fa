//! Redaction through the real session, tools and store: a tool prints
//! secret-shaped strings and the model quotes one back
//! (`tests/scenarios/secrets.toml`).
//!
//! The surface (the session itself) sees the original; the rollout on disk
//! receives the text deltas, tool output and tool results scrubbed, and a
//! `Security` notice follows the scrubbed tool result in both. Two golden
//! logs keep both sides for review: `secrets.jsonl` (what the surface saw)
//! and `secrets_rollout.jsonl` (what the rollout holds).

use cox_core::redact::{REDACTED, rollout_copy};
use cox_protocol::types::{Event, NoticeLevel, StopReason};
use cox_tests::{Options, assert_golden, assert_nothing_after_turn_done, run};

/// The secret parts of `tests/scenarios/secrets.env`, made-up credentials
/// one per shape (the word `Bearer` stays).
const SECRETS: [&str; 5] = [
    "sk-proj-EXAMPLEexample0123456789",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_EXAMPLEexampleEXAMPLEexample012345",
    "EXAMPLEtoken.0123456789",
    "b3BlbnNzaC1rZXktdjEAAAAAEXAMPLEnotakey",
];

fn config_env() -> String {
    std::fs::read_to_string(cox_tests::scenarios_dir().join("secrets.env")).expect("secrets.env")
}

fn has_secret(text: &str) -> bool {
    SECRETS.iter().any(|s| text.contains(s))
}

/// The text of the three kinds the rollout scrubs, one string per event.
fn scrubbed_texts(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TextDelta { text } => Some(text.as_str()),
            Event::ToolCallOutput { chunk, .. } => Some(chunk.as_str()),
            Event::ToolCallDone { result, .. } => Some(result.visible.as_str()),
            _ => None,
        })
        .collect()
}

fn security_notice_follows_the_result(events: &[Event]) {
    let done = events
        .iter()
        .position(|e| matches!(e, Event::ToolCallDone { .. }))
        .expect("the call finished");
    assert!(
        matches!(
            &events[done + 1],
            Event::Notice { level: NoticeLevel::Security, text } if text.contains(REDACTED)
        ),
        "a Security notice right behind the result, not {:?}",
        events[done + 1]
    );
    let notices = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::Notice {
                    level: NoticeLevel::Security,
                    ..
                }
            )
        })
        .count();
    assert_eq!(notices, 1, "one notice, for the tool result only");
}

#[test]
fn the_rollout_holds_secrets_redacted_while_the_surface_sees_them() {
    let mut run = run(
        "secrets",
        Options {
            files: vec![("config.env".into(), config_env())],
            ..Options::default()
        },
    );
    assert_nothing_after_turn_done(&run.events);
    assert!(matches!(
        run.events.last(),
        Some(Event::TurnDone {
            stop: StopReason::EndTurn
        })
    ));

    // The surface: every secret, as the tool printed it and the model said it.
    let surface = scrubbed_texts(&run.events).join("");
    for secret in SECRETS {
        assert!(surface.contains(secret), "the surface saw {secret}");
    }
    assert!(
        run.events.iter().any(
            |e| matches!(e, Event::ToolCallOutput { chunk, .. } if chunk.contains(SECRETS[1]))
        ),
        "the tool's output carried the secrets"
    );
    assert!(
        run.events
            .iter()
            .any(|e| matches!(e, Event::TextDelta { text } if text.contains(SECRETS[0]))),
        "the model's text carried the key"
    );
    security_notice_follows_the_result(&run.events);

    // The rollout: the same events, with those three kinds scrubbed.
    let rollout = cox_store::read_rollout(&run.rollout_path()).expect("rollout reads back");
    assert!(!rollout.truncated_tail);
    let expected: Vec<Event> = run
        .events
        .iter()
        .map(|e| rollout_copy(e).unwrap_or_else(|| e.clone()))
        .collect();
    pretty_assertions::assert_eq!(rollout.events, expected);
    for text in scrubbed_texts(&rollout.events) {
        assert!(!has_secret(text), "{text:?} reached the rollout");
    }
    let on_disk = std::fs::read_to_string(run.rollout_path()).unwrap();
    assert!(!has_secret(&on_disk), "no secret in the rollout file");
    assert_eq!(
        on_disk.matches(REDACTED).count(),
        // five in the output chunk, five in the result, one in the text,
        // and the notice names the placeholder
        12,
        "{on_disk}"
    );
    assert!(on_disk.contains("Bearer «redacted»"));
    assert!(on_disk.contains("LOG_LEVEL=debug"), "the rest is kept");
    security_notice_follows_the_result(&rollout.events);

    // The model read the original (the scenario's expectation held, and
    // the history says so); a resume rebuilds from the scrubbed copy: a
    // known hole, written down in docs/redaction.md.
    let history = serde_json::to_string(run.end.history.messages()).unwrap();
    assert!(SECRETS.iter().all(|s| history.contains(s)));
    let resumed = cox_core::rebuild(&rollout.events).expect("the rollout resumes");
    let resumed = serde_json::to_string(resumed.history.messages()).unwrap();
    assert!(!has_secret(&resumed));
    assert!(resumed.contains(REDACTED));

    assert_golden("secrets", &run);
    run.events = rollout.events;
    assert_golden("secrets_rollout", &run);
}
