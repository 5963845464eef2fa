//! The session's hook points, and what the hooks' replies mean.
//!
//! The adapter runs the hooks and parses their answers; this module says
//! each run on the event stream (`HookRan`, and a warning for one that did
//! not work) and reads the replies of one point together ([`Verdict`]):
//! a refusal from any hook wins over an ask, an ask over an allow, and
//! `continue: false` from any hook ends the turn.
//!
//! What a hook may do is bounded here, not in the adapter: a hook can
//! refuse a call, a prompt or the end of a turn, make a call ask, and let a
//! call that would ask only because of its risk run — a deny rule, an ask
//! rule, the plan mode and a line the engine cannot vouch for still hold,
//! as Claude Code's rules hold over its hooks' allow (see `calls.rs`).
//! Context a hook adds reaches the model through the `HookRan` event's
//! `context`, which the conversation's fold puts in the next message, so a
//! resume rebuilds it exactly. What a hook says to the model is cut at
//! [`SAID_MAX`]; what it says to the person is scrubbed of secret-shaped
//! text before it becomes a notice.
//!
//! A session with no hooks for a point builds no payload and awaits
//! nothing there ([`Hooks::wants`]).

use cox_protocol::hook::{
    HookAgent, HookCall, HookDecision, HookEvent, HookOutcome, HookReply, HookStatus, Hooks,
};
use cox_protocol::types::{Event, NoticeLevel, StopReason, Submission, ToolCall, ToolResult};
use futures::Stream;
use serde_json::{Value, json};

use super::{Driver, EndReason, MidTurn};
use crate::world::World;

/// The most a hook's printed output the event carries, in bytes.
const OUTPUT_SHOWN: usize = 2048;

/// The most of what a hook says (a reason, context) that is kept, in
/// bytes: what reaches the model is bounded like a tool's output.
const SAID_MAX: usize = 10 * 1024;

/// `text` cut to [`SAID_MAX`] bytes, saying so.
fn bounded(text: &str) -> String {
    if text.len() <= SAID_MAX {
        return text.to_owned();
    }
    let mut end = SAID_MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[cox: cut here: the hook said {} more bytes]",
        &text[..end],
        text.len() - end
    )
}

/// The replies of one hook point, read together.
#[derive(Debug, Default)]
pub(super) struct Verdict {
    /// The strictest decision and the hook that made it, with its reason.
    pub decision: Option<(HookDecision, String, Option<String>)>,
    /// The first `updatedInput` of a hook that did not refuse.
    pub updated_input: Option<(String, Value)>,
    /// `continue: false`: the hook and its `stopReason`.
    pub stop: Option<(String, Option<String>)>,
    /// A `PermissionRequest` denial asked to stop the turn.
    pub interrupt: bool,
    /// What the hooks added for the model, in order.
    pub context: Vec<String>,
}

impl Verdict {
    /// Reads the replies of one point together.
    pub(super) fn of(replies: &[HookReply]) -> Self {
        let mut verdict = Verdict::default();
        for reply in replies {
            let out = &reply.output;
            let decision = match &reply.status {
                HookStatus::Blocked { reason } => Some((
                    HookDecision::Deny,
                    Some(bounded(reason)).filter(|r| !r.is_empty()),
                )),
                // A project's or a plugin's hook may refuse or ask, not
                // allow (as a project's config may not).
                HookStatus::Success
                    if reply.narrow_only && out.decision == Some(HookDecision::Allow) =>
                {
                    None
                }
                HookStatus::Success => out
                    .decision
                    .map(|d| (d, out.reason.as_deref().map(bounded))),
                HookStatus::Error { .. } | HookStatus::Failed { .. } => None,
            };
            if let Some((decision, reason)) = decision {
                let stricter = verdict
                    .decision
                    .as_ref()
                    .is_none_or(|(held, ..)| rank(decision) > rank(*held));
                if stricter {
                    verdict.decision = Some((decision, reply.hook.clone(), reason));
                }
                if decision == HookDecision::Deny && out.interrupt {
                    verdict.interrupt = true;
                }
            }
            if reply.status == HookStatus::Success {
                if let Some(input) = &out.updated_input
                    && verdict.updated_input.is_none()
                    && out.decision != Some(HookDecision::Deny)
                {
                    verdict.updated_input = Some((reply.hook.clone(), input.clone()));
                }
                if !out.proceed && verdict.stop.is_none() {
                    verdict.stop = Some((reply.hook.clone(), out.stop_reason.clone()));
                }
                if let Some(context) = out.context.as_ref().filter(|c| !c.trim().is_empty()) {
                    verdict.context.push(bounded(context));
                }
            }
        }
        verdict
    }

    /// The refusal, when a hook refused: `(hook, reason)`.
    pub(super) fn denied(&self) -> Option<(&str, String)> {
        match &self.decision {
            Some((HookDecision::Deny, hook, reason)) => Some((
                hook,
                reason
                    .clone()
                    .unwrap_or_else(|| "no reason given".to_owned()),
            )),
            _ => None,
        }
    }

    /// The `continue: false` of a hook, said as one line.
    pub(super) fn stopped(&self) -> Option<String> {
        self.stop.as_ref().map(|(hook, why)| match why {
            Some(why) => format!(
                "hook {hook} stopped the turn: {}",
                crate::redact::scrub(&head(why, OUTPUT_SHOWN))
            ),
            None => format!("hook {hook} stopped the turn"),
        })
    }
}

/// Why a turn stops at a hook point.
#[derive(Debug)]
pub(super) enum PostStop {
    /// A hook said `continue: false`; the line says which and why.
    Hook(String),
    /// An `Interrupt` came while the hooks ran.
    Interrupted,
}

/// Deny over ask over allow.
fn rank(decision: HookDecision) -> u8 {
    match decision {
        HookDecision::Allow => 0,
        HookDecision::Ask => 1,
        HookDecision::Deny => 2,
    }
}

/// How a reply is said on the stream.
fn outcome(reply: &HookReply) -> HookOutcome {
    match &reply.status {
        HookStatus::Success if reply.output.decision == Some(HookDecision::Deny) => {
            HookOutcome::Blocked
        }
        HookStatus::Success => HookOutcome::Ok,
        HookStatus::Blocked { .. } => HookOutcome::Blocked,
        HookStatus::Error { .. } => HookOutcome::Warning,
        HookStatus::Failed { .. } => HookOutcome::Failed,
    }
}

/// What a successful reply adds for the model.
fn kept_context(reply: &HookReply) -> Option<String> {
    (reply.status == HookStatus::Success)
        .then(|| reply.output.context.as_deref().map(bounded))
        .flatten()
        .filter(|c| !c.trim().is_empty())
}

/// The first `max` bytes of `text`, cut at a character boundary.
fn head(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// The fields of a tool event: which call, and its input.
pub(super) fn tool_fields(call: &HookCall, tool: &ToolCall) -> HookCall {
    let mut call = call.clone();
    call.files.clone_from(&tool.writes);
    call.subject = Some(tool.subject.clone());
    call.target(tool.name.clone())
        .field("tool_name", tool.name.clone())
        .field("tool_input", tool.input.clone())
        .field("tool_use_id", tool.id.to_string())
}

/// A finished call's result as a hook reads it.
pub(super) fn tool_response(result: &ToolResult) -> Value {
    let mut response = json!({
        "success": result.ok,
        "output": result.visible,
    });
    if let Some(archive) = &result.archive {
        response["archive"] = json!(archive);
    }
    response
}

impl<W, I, F> Driver<'_, W, I, F>
where
    W: World,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    /// The hooks, when one is configured for `event`.
    pub(super) fn hooks_for(&self, event: HookEvent) -> Option<&dyn Hooks> {
        let hooks = self.fixed.hooks.as_deref()?;
        hooks.wants(event).then_some(hooks)
    }

    /// A call for `event` in the mode in force.
    pub(super) fn hook_call(&self, event: HookEvent) -> HookCall {
        let mut call = HookCall::new(event, self.current_mode().0);
        let config = &self.fixed.config;
        if config.parent.is_some() {
            let agent_type = config.agent_type.as_deref().unwrap_or("general-purpose");
            call.agent = Some(HookAgent {
                id: config.id.to_string(),
                agent_type: agent_type.to_owned(),
                cwd: config.workspace.cwd.display().to_string(),
            });
            if matches!(event, HookEvent::SubagentStart | HookEvent::SubagentStop) {
                call.target = Some(agent_type.to_owned());
            }
        }
        call
    }

    /// This session is a subagent's.
    fn is_subagent(&self) -> bool {
        self.fixed.config.parent.is_some()
    }

    /// Runs the hooks of `call` and says each run; `context` of the
    /// replies is said only where `keeps_context` (the fold puts it in the
    /// next message). The replies, for the point to read; `None` when an
    /// `Interrupt` came first (the hooks still running are killed).
    pub(super) async fn run_hooks(
        &mut self,
        call: HookCall,
        keeps_context: bool,
    ) -> Option<Vec<HookReply>> {
        let replies = self.hook_replies(&call).await?;
        for reply in &replies {
            let context = keeps_context.then(|| kept_context(reply)).flatten();
            self.say_hook(call.event, reply, context);
        }
        Some(replies)
    }

    /// The replies of the hooks of `call`, unsaid; `None` when an
    /// `Interrupt` came first. Other submissions wait their turn.
    async fn hook_replies(&mut self, call: &HookCall) -> Option<Vec<HookReply>> {
        let fixed = self.fixed;
        let Some(hooks) = fixed.hooks.as_deref().filter(|h| h.wants(call.event)) else {
            return Some(Vec::new());
        };
        let mut running = std::pin::pin!(hooks.run(call));
        loop {
            tokio::select! {
                biased;
                replies = &mut running => return Some(replies),
                sub = self.inbox.next_live() => {
                    if let MidTurn::Interrupt = self.mid_turn(sub, None) {
                        return None;
                    }
                }
            }
        }
    }

    /// One `HookRan` for `reply` (with `context` for the model), and a
    /// warning when it did not work or had a line for the person.
    pub(super) fn say_hook(
        &mut self,
        event: HookEvent,
        reply: &HookReply,
        context: Option<String>,
    ) {
        let out = &reply.output;
        let message = match &reply.status {
            HookStatus::Blocked { reason } => Some(reason.clone()),
            HookStatus::Error { message } | HookStatus::Failed { message } => Some(message.clone()),
            HookStatus::Success
                if reply.narrow_only && out.decision == Some(HookDecision::Allow) =>
            {
                Some(
                    "its allow was not taken: a project's or a plugin's hooks may refuse or ask, \
                     not allow"
                        .to_owned(),
                )
            }
            HookStatus::Success => out.reason.clone().or_else(|| out.system_message.clone()),
        }
        .filter(|m| !m.is_empty())
        .map(|m| head(&m, OUTPUT_SHOWN));
        let output = (!out.suppress_output && !out.stdout.trim().is_empty())
            .then(|| head(out.stdout.trim_end(), OUTPUT_SHOWN));
        self.out.emit(Event::HookRan {
            hook: reply.hook.clone(),
            event,
            duration_ms: reply.duration_ms,
            outcome: outcome(reply),
            message,
            context,
            output,
        });
        // What a hook says for the person is scrubbed of secret-shaped
        // text and bounded before it becomes a notice (notices go to the
        // rollout as they are).
        let said = |text: &str| crate::redact::scrub(&head(text, OUTPUT_SHOWN)).into_owned();
        let name = &reply.hook;
        match &reply.status {
            HookStatus::Failed { message } => self.out.notice(
                NoticeLevel::Warn,
                format!(
                    "hook {name} ({event}) did not work and was skipped: {}",
                    said(message)
                ),
            ),
            HookStatus::Error { message } => self.out.notice(
                NoticeLevel::Warn,
                format!("hook {name} ({event}) failed: {}", said(message)),
            ),
            HookStatus::Success | HookStatus::Blocked { .. } => {}
        }
        if reply.status == HookStatus::Success
            && let Some(line) = &out.system_message
        {
            self.out
                .notice(NoticeLevel::Warn, format!("hook {name}: {}", said(line)));
        }
    }

    /// `SessionStart` (`SubagentStart` in a subagent): its context joins
    /// the first prompt of this run.
    pub(super) async fn session_start_hooks(&mut self) {
        let call = if self.is_subagent() {
            if self.hooks_for(HookEvent::SubagentStart).is_none() {
                return;
            }
            self.hook_call(HookEvent::SubagentStart)
        } else {
            if self.hooks_for(HookEvent::SessionStart).is_none() {
                return;
            }
            let source = if self.state.resumed {
                "resume"
            } else {
                "startup"
            };
            self.hook_call(HookEvent::SessionStart)
                .target(source)
                .field("source", source)
        };
        // An interrupt here cuts the hooks short, and ends the turn of a
        // prompt that was already waiting (it came before the interrupt).
        if self.run_hooks(call, true).await.is_none() {
            self.state.start_interrupted = self
                .inbox
                .queue
                .iter()
                .any(|s| matches!(s, Submission::UserTurn { .. }));
        }
    }

    /// `SessionEnd`, before the record is closed.
    pub(super) async fn session_end_hooks(&mut self, why: EndReason) {
        if self.is_subagent() || self.hooks_for(HookEvent::SessionEnd).is_none() {
            return;
        }
        let reason = match why {
            EndReason::Shutdown => "prompt_input_exit",
            EndReason::InputClosed => "other",
        };
        let call = self
            .hook_call(HookEvent::SessionEnd)
            .target(reason)
            .field("reason", reason);
        let _ = self.run_hooks(call, false).await;
    }

    /// `UserPromptSubmit`: `Err` with the turn's stop when a hook refused
    /// the prompt (said in a notice) or an interrupt came; the hooks'
    /// context joins the prompt.
    pub(super) async fn prompt_hooks(&mut self, text: &str) -> Result<(), StopReason> {
        if self.is_subagent() || self.hooks_for(HookEvent::UserPromptSubmit).is_none() {
            return Ok(());
        }
        let call = self
            .hook_call(HookEvent::UserPromptSubmit)
            .field("prompt", text);
        let replies = self
            .run_hooks(call, true)
            .await
            .ok_or(StopReason::Interrupted)?;
        let verdict = Verdict::of(&replies);
        if let Some((hook, reason)) = verdict.denied() {
            let reason = crate::redact::scrub(&reason);
            let line = format!("hook {hook} blocked the prompt: {reason}");
            self.out.notice(NoticeLevel::Warn, line);
            return Err(StopReason::Denied);
        }
        if let Some(line) = verdict.stopped() {
            self.out.notice(NoticeLevel::Warn, line);
            return Err(StopReason::Denied);
        }
        Ok(())
    }

    /// `PreCompact`, before a compaction; `manual` for `/compact`. Why
    /// not to compact, when a hook refused it (exit 2, `decision: block`)
    /// or an interrupt came.
    pub(super) async fn pre_compact_hooks(
        &mut self,
        manual: bool,
        focus: Option<&str>,
    ) -> Option<String> {
        self.hooks_for(HookEvent::PreCompact)?;
        let trigger = if manual { "manual" } else { "auto" };
        let call = self
            .hook_call(HookEvent::PreCompact)
            .target(trigger)
            .field("trigger", trigger)
            .field("custom_instructions", focus.unwrap_or_default());
        let Some(replies) = self.run_hooks(call, false).await else {
            return Some("interrupted while its PreCompact hooks ran".to_owned());
        };
        Verdict::of(&replies)
            .denied()
            .map(|(hook, reason)| format!("hook {hook} refused it: {reason}"))
    }

    /// `PostToolUse` (or `PostToolUseFailure`) on a finished call: what a
    /// hook says for the model is added to the result it reads. `Some`
    /// when the turn is to stop after this message.
    pub(super) async fn post_tool_hooks(
        &mut self,
        call: &ToolCall,
        result: &mut ToolResult,
    ) -> Option<PostStop> {
        let event = if result.ok {
            HookEvent::PostToolUse
        } else {
            HookEvent::PostToolUseFailure
        };
        self.hooks_for(event)?;
        let mut hook_call = tool_fields(&self.hook_call(event), call);
        if result.ok {
            hook_call = hook_call.field("tool_response", tool_response(result));
        } else {
            hook_call = hook_call
                .field("error", result.visible.clone())
                .field("is_interrupt", false);
        }
        let Some(replies) = self.run_hooks(hook_call, false).await else {
            return Some(PostStop::Interrupted);
        };
        let verdict = Verdict::of(&replies);
        let mut added = Vec::new();
        if let Some((hook, reason)) = verdict.denied() {
            added.push(format!("[{event} hook {hook}] {reason}"));
        }
        added.extend(
            verdict
                .context
                .iter()
                .map(|text| format!("[{event} hook context] {text}")),
        );
        if !added.is_empty() {
            result.visible = format!("{}\n\n{}", result.visible, added.join("\n"));
        }
        verdict.stopped().map(PostStop::Hook)
    }

    /// `Stop` (or `SubagentStop`) as the model ends its turn: the reason a
    /// hook refused that with, which the model reads as it goes on.
    /// `Err` says the turn ends here all the same: a hook stopped it
    /// outright (`continue: false`, with its line) or an interrupt came.
    pub(super) async fn stop_hooks(&mut self, active: bool) -> Result<Option<String>, PostStop> {
        let event = if self.fixed.config.parent.is_some() {
            HookEvent::SubagentStop
        } else {
            HookEvent::Stop
        };
        if self.hooks_for(event).is_none() {
            return Ok(None);
        }
        let said = self.out.history.last_answer().unwrap_or_default();
        let call = self
            .hook_call(event)
            .field("stop_hook_active", active)
            .field("last_assistant_message", said);
        let Some(replies) = self.hook_replies(&call).await else {
            return Err(PostStop::Interrupted);
        };
        let verdict = Verdict::of(&replies);
        // The reason the turn goes on is said once, by the hook that gave it.
        let refusal = match (&verdict.stop, verdict.denied()) {
            (None, Some((hook, reason))) => Some((hook.to_owned(), reason)),
            _ => None,
        };
        for reply in &replies {
            // The model reads why it must go on, from the hook that said it.
            let context = refusal
                .as_ref()
                .filter(|(hook, _)| *hook == reply.hook)
                .map(|(_, reason)| format!("the {event} hook did not let the turn end: {reason}"));
            self.say_hook(event, reply, context);
        }
        if let Some(line) = verdict.stopped() {
            return Err(PostStop::Hook(line));
        }
        Ok(refusal.map(|(_, reason)| reason))
    }
}
