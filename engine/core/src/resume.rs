//! Rebuilding a session's history from its rollout, to resume it.
//!
//! The rollout holds every event a session emitted; the history the model
//! was shown follows from them by the same rules the turn typestates use
//! when they write it:
//! - a `TurnStarted` puts the prompt in, unless the turn was refused before
//!   the model saw anything (a `TurnDone { denied }` with nothing between);
//! - text, thinking and requested calls make one assistant message per model
//!   call, closed by its `Usage` (or by the first result, or the turn's end,
//!   for a call cut short); a `ToolCallRequested` for a call already in that
//!   message is a person's edit and replaces its input;
//! - a `Retry { discarded }` voids the model call in progress;
//! - the results of one assistant message go back in one user message, in
//!   the order the calls were made, whatever order they finished in.
//!
//! A rollout that ends inside a turn (the process was killed) is resumed as
//! far as it goes: the partial answer is kept, and a call that never got a
//! result is answered as not run, so the history stays one the API takes.
//! This module is pure: reading the file is the store's job.

use std::collections::HashMap;

use cox_protocol::provider::Tier;
use cox_protocol::provider::{ContentBlock, Message, Role};
use cox_protocol::types::{Event, PermissionMode, ROLLOUT_FORMAT, StopReason};
use cox_protocol::{CallId, SessionId};
use serde_json::Value;

use crate::context::{Compaction, ResultMeta};
use crate::turn::History;

/// What a call that never finished before the process died returns.
pub const NOT_FINISHED: &str = "[not run: the session ended before this call finished]";

/// A session as its rollout leaves it.
#[derive(Clone, Debug, PartialEq)]
pub struct Resumed {
    pub session_id: SessionId,
    /// The working folder the session ran in.
    pub cwd: String,
    pub history: History,
    /// Turns started so far; the next one is `turns + 1`.
    pub turns: u32,
    /// The rollout ends inside a turn (no `TurnDone`): it was cut short.
    pub unfinished_turn: bool,
    /// Where each turn's messages start in `history`.
    pub turn_starts: Vec<(u32, usize)>,
    /// The last compaction, if the session was compacted.
    pub compaction: Option<Compaction>,
    /// What is known of each tool result (turn, archive, call).
    pub results: HashMap<CallId, ResultMeta>,
    /// The last `mode_changed`: permission mode, main tier, and the model
    /// switched to, if any. A resumed session goes on in them.
    pub mode: Option<(PermissionMode, Tier, Option<String>)>,
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

/// The assistant message of the model call in progress.
#[derive(Default)]
struct Reply {
    thinking: String,
    text: String,
    calls: Vec<(CallId, String, Value)>,
}

impl Reply {
    fn is_empty(&self) -> bool {
        self.thinking.is_empty() && self.text.is_empty() && self.calls.is_empty()
    }
}

#[derive(Default)]
struct Builder {
    history: History,
    /// The prompt of the turn, until the model is asked.
    prompt: Option<String>,
    /// The model call in progress.
    reply: Option<Reply>,
    /// The calls of the last closed assistant message, in order.
    asked: Vec<CallId>,
    /// Their results so far.
    results: HashMap<CallId, (String, bool)>,
    turns: u32,
    in_turn: bool,
    turn_starts: Vec<(u32, usize)>,
    compaction: Option<Compaction>,
    /// The call each id names: `read /repo/a.rs`.
    calls: HashMap<CallId, String>,
    metas: HashMap<CallId, ResultMeta>,
}

impl Builder {
    fn prompt_in(&mut self) {
        if let Some(text) = self.prompt.take() {
            self.turn_starts.push((self.turns, self.history.len()));
            self.history.push(Message::user_text(text));
        }
    }

    /// The model call in progress, starting one (after the previous
    /// round's results) when there is none.
    fn reply(&mut self) -> &mut Reply {
        self.prompt_in();
        if self.reply.is_none() {
            self.results_in();
        }
        self.reply.get_or_insert_with(Reply::default)
    }

    fn close_reply(&mut self) {
        let Some(reply) = self.reply.take() else {
            return;
        };
        if reply.is_empty() {
            return;
        }
        let mut content = Vec::with_capacity(reply.calls.len() + 2);
        if !reply.thinking.is_empty() {
            content.push(ContentBlock::Thinking {
                text: reply.thinking,
            });
        }
        if !reply.text.is_empty() {
            content.push(ContentBlock::Text { text: reply.text });
        }
        self.asked = reply.calls.iter().map(|(id, ..)| id.clone()).collect();
        self.results.clear();
        content.extend(
            reply
                .calls
                .into_iter()
                .map(|(id, name, input)| ContentBlock::ToolUse { id, name, input }),
        );
        self.history.push(Message {
            role: Role::Assistant,
            content,
        });
    }

    /// The last assistant message's results, in call order; a call with
    /// none is answered as not run.
    fn results_in(&mut self) {
        if self.asked.is_empty() {
            return;
        }
        let content = std::mem::take(&mut self.asked)
            .into_iter()
            .map(|id| {
                let (content, is_error) = self
                    .results
                    .remove(&id)
                    .unwrap_or_else(|| (NOT_FINISHED.to_owned(), true));
                ContentBlock::ToolResult {
                    tool_use_id: id,
                    content,
                    is_error,
                }
            })
            .collect();
        self.results.clear();
        self.history.push(Message {
            role: Role::User,
            content,
        });
    }

    /// A person edited a call that was already asked for: the history holds
    /// the input that ran.
    fn edit(&mut self, id: &CallId, input: &Value) -> bool {
        if let Some(reply) = &mut self.reply
            && let Some(call) = reply.calls.iter_mut().find(|(c, ..)| c == id)
        {
            call.2.clone_from(input);
            return true;
        }
        // An edit comes while its call waits for approval: asked, with no
        // result yet. A finished call's id seen again (servers that reuse
        // ids across rounds) is a new call.
        if !self.asked.contains(id) || self.results.contains_key(id) {
            return false;
        }
        if let Some(message) = self
            .history
            .iter_mut()
            .rev()
            .find(|m| m.role == Role::Assistant)
        {
            for block in &mut message.content {
                if let ContentBlock::ToolUse {
                    id: c, input: i, ..
                } = block
                    && c == id
                {
                    i.clone_from(input);
                }
            }
        }
        true
    }

    fn end_turn(&mut self, stop: StopReason) {
        let refused = stop == StopReason::Denied && self.prompt.is_some();
        if refused {
            self.prompt = None;
        } else {
            self.prompt_in();
            self.close_reply();
            self.results_in();
        }
        self.in_turn = false;
    }
}

/// Rebuilds the history the session had after the last event of `events`.
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
    let mut b = Builder::default();
    let mut mode = None;
    for event in events {
        match event {
            Event::SessionStarted { format, .. } => {
                if *format > ROLLOUT_FORMAT {
                    return Err(ResumeError::Newer { found: *format });
                }
            }
            Event::TurnStarted { turn, text } => {
                if b.in_turn {
                    // The previous turn never finished (a crash).
                    b.end_turn(StopReason::Error);
                }
                b.turns = *turn;
                b.in_turn = true;
                b.prompt = Some(text.clone());
            }
            Event::TextDelta { text } => b.reply().text.push_str(text),
            Event::ThinkingDelta { text } => b.reply().thinking.push_str(text),
            Event::ToolCallRequested { call } => {
                b.calls
                    .insert(call.id.clone(), format!("{} {}", call.name, call.subject));
                if !b.edit(&call.id, &call.input) {
                    b.reply()
                        .calls
                        .push((call.id.clone(), call.name.clone(), call.input.clone()));
                }
            }
            Event::Usage { .. } => {
                b.prompt_in();
                b.close_reply();
            }
            Event::Retry { discarded, .. } => {
                if *discarded {
                    b.reply = None;
                }
            }
            Event::ToolCallDone { call_id, result } => {
                b.close_reply();
                let what = b.calls.get(call_id).cloned().unwrap_or_default();
                b.metas.insert(
                    call_id.clone(),
                    ResultMeta {
                        turn: b.turns,
                        archive: result.archive.clone(),
                        what,
                    },
                );
                b.results
                    .insert(call_id.clone(), (result.visible.clone(), !result.ok));
            }
            Event::TurnDone { stop } => b.end_turn(*stop),
            Event::Compacted {
                summary, dropped, ..
            } => {
                let last = dropped.iter().copied().max().unwrap_or(0);
                let until = b
                    .turn_starts
                    .iter()
                    .find(|(turn, _)| *turn > last)
                    .map_or(b.history.len(), |(_, index)| *index);
                b.compaction = Some(Compaction {
                    until,
                    summary: summary.clone(),
                });
            }
            Event::ModeChanged {
                permission_mode,
                tier,
                model,
            } => mode = Some((*permission_mode, *tier, model.clone())),
            Event::ApprovalRequired { .. }
            | Event::ToolCallOutput { .. }
            | Event::SessionTitled { .. }
            | Event::Notice { .. } => {}
        }
    }
    let unfinished_turn = b.in_turn;
    if unfinished_turn {
        b.end_turn(StopReason::Error);
    }
    Ok(Resumed {
        session_id: *session_id,
        cwd: cwd.clone(),
        history: b.history,
        turns: b.turns,
        unfinished_turn,
        turn_starts: b.turn_starts,
        compaction: b.compaction,
        results: b.metas,
        mode,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cox_protocol::provider::Tier;
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
        assert_eq!(
            r.history,
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
        assert_eq!(r.turns, 1);
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
        assert_eq!(r.history[0], Message::user_text("ok"));
        assert_eq!(r.history.len(), 2);
        assert_eq!(r.turns, 2);
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
        let Some(Message { role, content }) = r.history.last() else {
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
            r.mode,
            Some((PermissionMode::Plan, Tier::Think, Some("m2".into())))
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
