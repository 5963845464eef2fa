//! Rebuilding a session from its rollout, to resume it.
//!
//! The rollout holds every event a session emitted; the conversation the
//! model was shown follows from them by the one fold the live session uses
//! ([`History`]), so nothing here interprets events itself: this module
//! checks the rollout's start and format, folds it, and closes a turn the
//! process died inside. Reading the file is the store's job.

use cox_protocol::SessionId;
use cox_protocol::types::{Event, ROLLOUT_FORMAT};

use crate::history::History;
pub use crate::history::NOT_FINISHED;

/// A session as its rollout leaves it.
#[derive(Clone, Debug, PartialEq)]
pub struct Resumed {
    pub session_id: SessionId,
    /// The working folder the session ran in.
    pub cwd: String,
    /// The conversation, folded from every event.
    pub history: History,
    /// The rollout ends inside a turn (no `TurnDone`): it was cut short.
    pub unfinished_turn: bool,
}

impl Resumed {
    /// Turns started so far; the next one is `turns() + 1`.
    #[must_use]
    pub fn turns(&self) -> u32 {
        self.history.turns()
    }
}

/// The rollout cannot be resumed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResumeError {
    #[error("the rollout has no session_started event")]
    NoStart,
    #[error(
        "the rollout was written by a newer cox (format {found}; this cox reads format {ROLLOUT_FORMAT}): update cox to resume it"
    )]
    Newer { found: u32 },
}

/// Rebuilds the session as it was after the last event of `events`.
///
/// # Errors
/// The rollout does not start with a session, or was written by a newer
/// cox.
pub fn rebuild(events: &[Event]) -> Result<Resumed, ResumeError> {
    let Some(Event::SessionStarted {
        session_id, cwd, ..
    }) = events
        .iter()
        .find(|e| matches!(e, Event::SessionStarted { .. }))
    else {
        return Err(ResumeError::NoStart);
    };
    let mut history = History::new();
    for event in events {
        if let Event::SessionStarted { format, .. } = event
            && *format > ROLLOUT_FORMAT
        {
            return Err(ResumeError::Newer { found: *format });
        }
        history.apply(event);
    }
    let unfinished_turn = history.close_unfinished();
    Ok(Resumed {
        session_id: *session_id,
        cwd: cwd.clone(),
        history,
        unfinished_turn,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cox_protocol::provider::{ContentBlock, Message, Role, Tier};
    use cox_protocol::types::StopReason;
    use cox_protocol::types::{PermissionMode, Risk, ToolCall, ToolResult, Usage};
    use serde_json::json;

    fn start(format: u32) -> Event {
        Event::SessionStarted {
            session_id: SessionId::generate(),
            cwd: "/repo".into(),
            model: "m".into(),
            provider: "p".into(),
            tools: vec![],
            permission_mode: PermissionMode::Default,
            at: "2026-11-30T00:00:00.000Z".into(),
            resumed: false,
            format,
        }
    }

    fn call(id: &str, path: &str) -> Event {
        Event::ToolCallRequested {
            call: ToolCall {
                id: id.into(),
                name: "read".into(),
                input: json!({"path": path}),
                risk: Risk::ReadOnly,
                subject: path.into(),
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

    fn text(t: &str) -> Event {
        Event::TextDelta { text: t.into() }
    }

    fn turn(n: u32, t: &str) -> Event {
        Event::TurnStarted {
            turn: n,
            text: t.into(),
        }
    }

    fn done(stop: StopReason) -> Event {
        Event::TurnDone { stop }
    }

    #[test]
    fn a_discarded_attempt_leaves_nothing_behind() {
        let events = vec![
            start(1),
            turn(1, "hi"),
            text("Hel"),
            call("broken", "a"),
            Event::Retry {
                attempt: 2,
                of: 4,
                delay_ms: 10,
                reason: "cut".into(),
                discarded: true,
            },
            text("Hello."),
            usage(),
            done(StopReason::EndTurn),
        ];
        let r = rebuild(&events).unwrap();
        let messages: Vec<Message> = r.history.messages().iter().map(|m| (**m).clone()).collect();
        assert_eq!(
            messages,
            vec![
                Message::user_text("hi"),
                Message {
                    role: Role::Assistant,
                    content: vec![ContentBlock::Text {
                        text: "Hello.".into()
                    }]
                }
            ]
        );
        assert_eq!(r.turns(), 1);
    }

    #[test]
    fn a_refused_prompt_never_reached_the_model() {
        let events = vec![
            start(1),
            turn(1, "secret"),
            Event::Notice {
                level: cox_protocol::types::NoticeLevel::Warn,
                text: "hook blocked".into(),
            },
            done(StopReason::Denied),
            turn(2, "ok"),
            text("Fine."),
            usage(),
            done(StopReason::EndTurn),
        ];
        let r = rebuild(&events).unwrap();
        assert_eq!(*r.history.messages()[0], Message::user_text("ok"));
        assert_eq!(r.history.messages().len(), 2);
        assert_eq!(r.turns(), 2);
    }

    #[test]
    fn a_crash_mid_tools_leaves_a_history_the_api_takes() {
        let events = vec![
            start(1),
            turn(1, "read both"),
            call("c1", "a"),
            call("c2", "b"),
            usage(),
            Event::ToolCallDone {
                call_id: "c2".into(),
                result: ToolResult::ok("B"),
            },
        ];
        let r = rebuild(&events).unwrap();
        assert!(r.unfinished_turn);
        let Some(Message { role, content }) = r.history.messages().last().map(|m| &**m) else {
            panic!()
        };
        assert_eq!(*role, Role::User);
        assert_eq!(
            *content,
            vec![
                ContentBlock::ToolResult {
                    tool_use_id: "c1".into(),
                    content: NOT_FINISHED.into(),
                    is_error: true
                },
                ContentBlock::ToolResult {
                    tool_use_id: "c2".into(),
                    content: "B".into(),
                    is_error: false
                },
            ],
            "in call order, the missing one answered as not run"
        );
    }

    #[test]
    fn the_last_mode_change_is_resumed() {
        let events = vec![
            start(1),
            Event::ModeChanged {
                permission_mode: PermissionMode::Plan,
                tier: Tier::Think,
                model: Some("m2".into()),
            },
            turn(1, "hi"),
            usage(),
            done(StopReason::EndTurn),
        ];
        let r = rebuild(&events).unwrap();
        assert_eq!(
            r.history.mode(),
            Some(&(PermissionMode::Plan, Tier::Think, Some("m2".into())))
        );
    }

    #[test]
    fn a_newer_rollout_and_a_headless_one_are_refused() {
        assert_eq!(
            rebuild(&[start(2)]).unwrap_err(),
            ResumeError::Newer { found: 2 }
        );
        assert_eq!(rebuild(&[turn(1, "x")]).unwrap_err(), ResumeError::NoStart);
    }
}
