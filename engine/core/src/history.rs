//! The conversation as a fold over the session's events.
//!
//! [`History`] applies one [`Event`] at a time and keeps what the model has
//! been told: the messages, and what the driver needs to shape the next
//! request (where each turn starts, the compaction in force, what each
//! tool result was, the mode switched to, the tool searches answered). The
//! same fold runs live (the driver's emitter applies every event it emits),
//! on resume (over the rollout) and under compaction (which reads its
//! spans), so a resumed session is exactly the live one. A rewind of the
//! conversation is a cut of this fold (`Rewound`: every turn from the one
//! named on is forgotten, and the turn count keeps the rewind's own
//! number, so numbers never repeat); a subagent's conversation will be
//! another instance of it.
//!
//! The rules:
//! - a `TurnStarted` holds the prompt back until the model is asked (or
//!   the turn ends): a turn refused before anything reached the model (a
//!   `TurnDone { denied }` with nothing between) leaves no prompt behind;
//! - text, thinking and requested calls make one assistant message per
//!   model call, closed by its `Usage` (or, for a call cut short, by the
//!   first result or the turn's end); a
//!   `ToolCallRequested` for a call already in that message is a person's
//!   edit and replaces its input;
//! - a `Retry { discarded }` voids the model call in progress;
//! - the results of one assistant message go back in one user message, in
//!   the order the calls were made, whatever order they finished in; a call
//!   with no result when the turn ends is answered [`NOT_FINISHED`].
//!
//! [`History::settle`] does now what the next event would do anyway (the
//! prompt in, the last results in), so a request built from
//! [`History::messages`] carries everything said so far. The fold is pure
//! and never fails: an event it has no use for is skipped.

use std::collections::HashMap;
use std::sync::Arc;

use cox_protocol::CallId;
use cox_protocol::hook::HookEvent;
use cox_protocol::provider::{ContentBlock, Message, Role, Tier};
use cox_protocol::types::{Event, Image, PermissionMode, ServerBlock, StopReason};
use serde_json::Value;

use crate::context::{Compaction, ResultMeta};
use crate::own_tools::OwnTool;

/// What a call that never got a result before its turn ended returns.
pub const NOT_FINISHED: &str = "[not run: the session ended before this call finished]";

/// The permission mode, main tier and model a `mode_changed` left.
pub type Mode = (PermissionMode, Tier, Option<String>);

/// The conversation so far, and what the driver shapes requests with.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    messages: Vec<Arc<Message>>,
    /// The prompt of the turn, until the model is asked.
    prompt: Option<String>,
    /// The images it carries.
    prompt_images: Vec<Image>,
    /// Commands the person ran since the last prompt, as the model reads
    /// them with the next one.
    shells: Vec<String>,
    /// The model call in progress.
    reply: Option<Reply>,
    /// The calls of the last closed assistant message, in order.
    asked: Vec<CallId>,
    /// Their results so far: text, and whether it is an error.
    answered: HashMap<CallId, (String, bool, Vec<Image>)>,
    turns: u32,
    in_turn: bool,
    turn_starts: Vec<(u32, usize)>,
    compaction: Option<Compaction>,
    /// The call each id names: `read /repo/a.rs`.
    calls: HashMap<CallId, String>,
    results: HashMap<CallId, ResultMeta>,
    mode: Option<Mode>,
    /// `tool_search` calls waiting for their result: their queries.
    searching: HashMap<CallId, String>,
    /// The queries of `tool_search` calls that were answered, in order.
    searches: Vec<String>,
    /// What hooks added for the model, not yet in a message: it joins the
    /// next prompt or, within a turn, the next request.
    context: Vec<(HookEvent, String)>,
    /// The plans the model kept (`todo`), with the turn each was set in;
    /// the last is the current one. A rewind of the conversation drops
    /// those of the turns it cuts.
    /// (With the number of messages then: a compaction that reaches past
    /// it has summarised the call that set the plan away.)
    plans: Vec<(u32, usize, Vec<cox_protocol::types::PlanStep>)>,
}

/// The assistant message of the model call in progress.
#[derive(Clone, Debug, Default, PartialEq)]
struct Reply {
    thinking: String,
    /// The provider's own tool's steps (its web search), in order.
    server: Vec<ServerBlock>,
    text: String,
    calls: Vec<(CallId, String, Value)>,
}

impl Reply {
    fn is_empty(&self) -> bool {
        self.thinking.is_empty()
            && self.server.is_empty()
            && self.text.is_empty()
            && self.calls.is_empty()
    }
}

impl History {
    /// An empty conversation.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Folds one event in.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::TurnStarted { turn, text } => {
                if self.in_turn {
                    // The previous turn never finished (a crash).
                    self.end_turn(StopReason::Error);
                }
                self.turns = *turn;
                self.in_turn = true;
                self.prompt = Some(text.clone());
                self.prompt_images.clear();
            }
            Event::TextDelta { text } => self.reply().text.push_str(text),
            Event::ServerTool { block } => self.reply().server.push(block.clone()),
            Event::ThinkingDelta { text } => self.reply().thinking.push_str(text),
            Event::ToolCallRequested { call } => {
                self.calls
                    .insert(call.id.clone(), format!("{} {}", call.name, call.subject));
                if OwnTool::named(&call.name) == Some(OwnTool::ToolSearch) {
                    let query = call.input["query"].as_str().unwrap_or_default();
                    self.searching.insert(call.id.clone(), query.to_owned());
                }
                if !self.edit(&call.id, &call.input) {
                    self.reply().calls.push((
                        call.id.clone(),
                        call.name.clone(),
                        call.input.clone(),
                    ));
                }
            }
            Event::Usage { .. } => {
                self.prompt_in();
                self.close_reply();
            }
            Event::Retry { discarded, .. } => {
                if *discarded {
                    self.reply = None;
                }
            }
            Event::ToolCallDone { call_id, result } => {
                self.close_reply();
                let what = self.calls.get(call_id).cloned().unwrap_or_default();
                self.results.insert(
                    call_id.clone(),
                    ResultMeta {
                        turn: self.turns,
                        archive: result.archive.clone(),
                        what,
                    },
                );
                if let Some(query) = self.searching.remove(call_id)
                    && result.ok
                {
                    self.searches.push(query);
                }
                self.answered.insert(
                    call_id.clone(),
                    (result.visible.clone(), !result.ok, result.images.clone()),
                );
            }
            Event::TurnDone { stop } => self.end_turn(*stop),
            Event::Compacted {
                summary, dropped, ..
            } => {
                let last = dropped.iter().copied().max().unwrap_or(0);
                let until = self
                    .turn_starts
                    .iter()
                    .find(|(turn, _)| *turn > last)
                    .map_or(self.messages.len(), |(_, index)| *index);
                self.compaction = Some(Compaction {
                    until,
                    summary: summary.clone(),
                });
            }
            Event::ModeChanged {
                permission_mode,
                tier,
                model,
            } => self.mode = Some((*permission_mode, *tier, model.clone())),
            Event::Rewound {
                to_turn,
                turn,
                what,
                ..
            } => {
                self.turns = self.turns.max(*turn);
                if what.conversation() {
                    self.cut(*to_turn);
                }
            }
            Event::HookRan {
                event,
                context: Some(text),
                ..
            } => self.context.push((*event, text.clone())),
            Event::SessionStarted { .. }
            | Event::HookRan { .. }
            | Event::ApprovalRequired { .. }
            | Event::ToolCallOutput { .. }
            | Event::SessionTitled { .. }
            | Event::Notice { .. }
            | Event::Commands { .. }
            | Event::Checkpoint { .. }
            | Event::RewindConflict { .. }
            // What a server asked the person is not the model's.
            | Event::Elicitation { .. }
            | Event::Elicited { .. }
            // A subagent's events are its own session's, not this one's.
            | Event::Subagent { .. }
            // The text they cite is in the conversation already.
            | Event::Citations { .. } => {}
            Event::Plan { steps } => {
                self.plans
                    .push((self.turns, self.messages.len(), steps.clone()));
            }
            Event::UserShell { command, result } => {
                self.shells
                    .push(crate::session::shell_context(command, result));
            }
            Event::Attached { images } => {
                if self.prompt.is_some() {
                    self.prompt_images.extend(images.iter().cloned());
                }
            }
        }
    }

    /// Forgets every turn from `to_turn` on: the conversation is as it was
    /// before that turn started. A compaction that summarised any of those
    /// turns goes too (its summary tells of them), so the earlier turns are
    /// sent whole again until the next one.
    fn cut(&mut self, to_turn: u32) {
        self.settle();
        let at = self
            .turn_starts
            .iter()
            .find(|(turn, _)| *turn >= to_turn)
            .map_or(self.messages.len(), |(_, index)| *index);
        self.messages.truncate(at);
        self.turn_starts.retain(|(turn, _)| *turn < to_turn);
        self.plans.retain(|(turn, ..)| *turn < to_turn);
        if self.compaction.as_ref().is_some_and(|c| c.until > at) {
            self.compaction = None;
        }
        self.asked.clear();
        self.answered.clear();
    }

    /// The model's current plan (empty when it keeps none).
    #[must_use]
    pub fn plan(&self) -> &[cox_protocol::types::PlanStep] {
        self.plans
            .last()
            .map_or(&[], |(_, _, steps)| steps.as_slice())
    }

    /// The current plan when the model no longer sees the call that set
    /// it (a compaction summarised it away): it is then reminded of it.
    #[must_use]
    pub fn plan_out_of_sight(&self) -> Option<&[cox_protocol::types::PlanStep]> {
        let (_, at, steps) = self.plans.last()?;
        self.compaction
            .as_ref()
            .is_some_and(|c| c.until > *at)
            .then_some(steps.as_slice())
    }

    /// Puts in now what the next model call would: the held-back prompt,
    /// the reply in progress, the last message's results.
    pub fn settle(&mut self) {
        self.prompt_in();
        self.close_reply();
        self.results_in();
        if self.in_turn {
            self.context_in();
        }
    }

    /// Ends a turn the events left open (the process died inside it): the
    /// partial answer stays and a call with no result is answered as not
    /// run, so the history is one the API takes. Whether a turn was open.
    pub fn close_unfinished(&mut self) -> bool {
        let open = self.in_turn;
        if open {
            self.end_turn(StopReason::Error);
        }
        open
    }

    /// What the model has been told, in order; each message is shared
    /// with the requests that carry it.
    #[must_use]
    pub fn messages(&self) -> &[Arc<Message>] {
        &self.messages
    }

    /// Turns started so far; the next one is `turns() + 1`.
    #[must_use]
    pub fn turns(&self) -> u32 {
        self.turns
    }

    /// Where each turn's messages start in [`Self::messages`].
    #[must_use]
    pub fn turn_starts(&self) -> &[(u32, usize)] {
        &self.turn_starts
    }

    /// The summary standing in for the earliest turns, once compacted.
    #[must_use]
    pub fn compaction(&self) -> Option<&Compaction> {
        self.compaction.as_ref()
    }

    /// What is known of each tool result (turn, archive, call).
    #[must_use]
    pub fn results(&self) -> &HashMap<CallId, ResultMeta> {
        &self.results
    }

    /// The last `mode_changed`, if any.
    #[must_use]
    pub fn mode(&self) -> Option<&Mode> {
        self.mode.as_ref()
    }

    /// Forgets the model switched to (a resume that cannot reach it goes on
    /// with the configured one).
    pub fn forget_model(&mut self) {
        if let Some((_, _, model)) = &mut self.mode {
            *model = None;
        }
    }

    /// Forgets the last `mode_changed` altogether.
    pub fn forget_mode(&mut self) {
        self.mode = None;
    }

    /// The text of the last assistant message, if it said any.
    #[must_use]
    pub fn last_answer(&self) -> Option<String> {
        let last = self
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)?;
        let text: Vec<&str> = last
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        (!text.is_empty()).then(|| text.join("\n"))
    }

    /// The queries of the `tool_search` calls answered so far, in order.
    #[must_use]
    pub fn searches(&self) -> &[String] {
        &self.searches
    }

    fn prompt_in(&mut self) {
        if let Some(text) = self.prompt.take() {
            self.turn_starts.push((self.turns, self.messages.len()));
            let mut message = Message::user_text(text);
            message.content.extend(
                std::mem::take(&mut self.prompt_images)
                    .into_iter()
                    .map(ContentBlock::Image),
            );
            message.content.extend(self.context_blocks());
            message.content.extend(
                std::mem::take(&mut self.shells)
                    .into_iter()
                    .map(|text| ContentBlock::Text { text }),
            );
            self.messages.push(Arc::new(message));
        }
    }

    /// What hooks added, as text blocks, taken out of the pending list.
    fn context_blocks(&mut self) -> impl Iterator<Item = ContentBlock> + use<> {
        std::mem::take(&mut self.context)
            .into_iter()
            .map(|(event, text)| ContentBlock::Text {
                text: format!("[context from a {event} hook]\n{text}"),
            })
    }

    /// Hooks' context within a turn (a `Stop` hook's reason to go on):
    /// with the last user message (a call's results) when that is the
    /// last one, else as a user message of its own.
    fn context_in(&mut self) {
        if self.context.is_empty() {
            return;
        }
        let blocks: Vec<ContentBlock> = self.context_blocks().collect();
        match self.messages.last_mut() {
            Some(last) if last.role == Role::User => Arc::make_mut(last).content.extend(blocks),
            _ => self.messages.push(Arc::new(Message {
                role: Role::User,
                content: blocks,
            })),
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
        // A search and its results before the text that came of them.
        content.extend(reply.server.into_iter().map(ContentBlock::Server));
        if !reply.text.is_empty() {
            content.push(ContentBlock::Text { text: reply.text });
        }
        self.asked = reply.calls.iter().map(|(id, ..)| id.clone()).collect();
        self.answered.clear();
        content.extend(
            reply
                .calls
                .into_iter()
                .map(|(id, name, input)| ContentBlock::ToolUse { id, name, input }),
        );
        self.messages.push(Arc::new(Message {
            role: Role::Assistant,
            content,
        }));
    }

    /// The last assistant message's results, in call order; a call with
    /// none is answered as not run.
    fn results_in(&mut self) {
        if self.asked.is_empty() {
            return;
        }
        let content = std::mem::take(&mut self.asked)
            .into_iter()
            .flat_map(|id| {
                let (content, is_error, images) = self
                    .answered
                    .remove(&id)
                    .unwrap_or_else(|| (NOT_FINISHED.to_owned(), true, Vec::new()));
                // A result's images follow it.
                std::iter::once(ContentBlock::ToolResult {
                    tool_use_id: id,
                    content,
                    is_error,
                })
                .chain(images.into_iter().map(ContentBlock::Image))
            })
            .collect();
        self.answered.clear();
        self.messages.push(Arc::new(Message {
            role: Role::User,
            content,
        }));
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
        if !self.asked.contains(id) || self.answered.contains_key(id) {
            return false;
        }
        if let Some(message) = self
            .messages
            .iter_mut()
            .rev()
            .find(|m| m.role == Role::Assistant)
        {
            // A request may still hold the message as it was: it keeps that.
            for block in &mut Arc::make_mut(message).content {
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
            self.prompt_images.clear();
        } else {
            // A prompt still held takes its context with it.
            self.prompt_in();
        }
        // Context from within the turn dies with it (a `Stop` hook's
        // reason the turn did not act on); a session start's waits for the
        // next prompt.
        self.context
            .retain(|(event, _)| *event == HookEvent::SessionStart);
        if !refused {
            self.settle();
        }
        self.in_turn = false;
    }
}

#[cfg(test)]
mod tests;
