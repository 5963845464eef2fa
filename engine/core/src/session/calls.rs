//! Running one assistant message's tool calls: each is decided in order
//! (rules, modes, grants, a person's approval, `PreToolUse` hooks), then
//! they run — a stretch of read-only calls at once, anything else alone —
//! and their results come back in the order the model asked, each shaped
//! for the model as it lands. Each call runs with the session's path rules
//! (`ToolContext::rules`), less the ask rules its approval answered, so a
//! search checks every file it opens, not only its root.
//!
//! The session's own tools (`expand`, `tool_search`) are run here, by the
//! driver, with the session's archive and state; the others through their
//! `Tool`. Every call gets exactly one `ToolCallDone`, in call order: the
//! conversation takes the results from those events.
//!
//! A call of a tool that [`nests`](cox_protocol::tool::Tool::nests) (the
//! `agent` tool) runs alongside the others like it and the read-only
//! calls; the events of the session it runs are said as
//! [`Event::Subagent`] with their call ids made the parent's own
//! (`<child>/<id>`, see [`crate::subagent_ids`]), and an `Approve` naming a
//! call that session asks about is passed down to it, as the child's id.

use std::sync::Arc;

use cox_protocol::hook::{HookDecision, HookEvent};
use cox_protocol::provider::BoxFuture;
use cox_protocol::sandbox::{Confinement, Sandbox as _};
use cox_protocol::tool::{Nested, OutputSink, PathRules, ToolContext};
use cox_protocol::types::{
    ApprovalPolicy, Decision, Event, NoticeLevel, PermissionMode, Risk, SandboxMode, StopReason,
    Submission, ToolCall, ToolResult,
};
use cox_protocol::{CallId, CancelToken};
use futures::channel::mpsc;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, Stream, StreamExt};
use serde_json::Value;

use super::checkpoints::{Kept, bracket};
use super::hooks::{PostStop, Verdict, tool_fields};
use super::{Driver, MidTurn};
use crate::own_tools::{self, OwnTool};
use crate::permission::{CallRules, Engine, Grant, Outcome};
use crate::subagent_ids::{self, tagged, untag};
use crate::tool_set::Entry;
use crate::turn::{INTERRUPTED, RunningTools, Turn};
use crate::world::World;

impl<W, I, F> Driver<'_, W, I, F>
where
    W: World,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    /// Decides, then runs, the calls of one assistant message, their results
    /// said in call order; a stop reason ends the turn when set.
    pub(super) async fn run_tools(
        &mut self,
        running: &mut Turn<RunningTools>,
        cancel: &CancelToken,
    ) -> Option<StopReason> {
        let fixed = self.fixed;
        let count = running.calls().len();
        let mut results: Vec<Option<ToolResult>> = vec![None; count];
        let mut asked = vec![Asked::Nobody; count];
        let mut unconfined = vec![false; count];
        // The mode each call was decided under (see the run below).
        let mut decided_in = vec![PermissionMode::Default; count];
        let mut kept: Vec<Option<Kept>> = (0..count).map(|_| None).collect();
        let turn = self.out.history.turns();
        let engine = Arc::clone(self.engine());
        let mut stop = None;
        // A `PostToolUse` hook's `continue: false`.
        let mut hook_stop: Option<String> = None;

        // Decide every call first, in order; people answer approvals one by one.
        #[allow(clippy::needless_range_loop)] // `decide_call` reads `running` by index
        for index in 0..count {
            if stop.is_some() {
                results[index] = Some(ToolResult::denied(
                    "not run: the user denied an earlier call of this message",
                ));
                continue;
            }
            decided_in[index] = self.current_mode().0;
            match self.decide_call(running, index).await {
                Decided::Run(how, outside) => {
                    let granted = self.unconfinable(&running.calls()[index]);
                    (asked[index], unconfined[index]) = (how, outside || granted);
                }
                Decided::Result(result) => results[index] = Some(result),
                Decided::Stop(result) => {
                    results[index] = Some(result);
                    stop = Some(StopReason::Denied);
                }
                Decided::Interrupted => {
                    cancel.cancel();
                    stop = Some(StopReason::Interrupted);
                    break;
                }
            }
        }

        // Run: a stretch of read-only and nesting calls at once, anything
        // else alone, in order, with the tools the turn started with.
        let tools = fixed.tools();
        let calls = running.calls();
        // What each call was decided on, for the tools to hold it to.
        let decided: Vec<Vec<String>> = calls
            .iter()
            .map(|call| {
                std::iter::once(call.subject.clone())
                    .chain(call.writes.iter().cloned())
                    .collect()
            })
            .collect();
        let together = |slot: usize| {
            calls[slot].risk == Risk::ReadOnly
                || matches!(tools.get(&calls[slot].name), Some(Entry::Tool(t)) if t.nests())
        };
        let mut emitted = 0;
        let mut index = 0;
        while index < count && stop != Some(StopReason::Interrupted) {
            if results[index].is_some() {
                index += 1;
                continue;
            }
            let mut end = index + 1;
            if together(index) {
                while end < count && results[end].is_none() && together(end) {
                    end += 1;
                }
            }
            let (tx, mut rx) = mpsc::unbounded();
            let (up, mut nested_rx) = mpsc::unbounded();
            // Where each nesting call's answers go, by slot; and which slot
            // each of their children's asks came from.
            let mut down: Vec<Option<mpsc::UnboundedSender<(CallId, Decision)>>> =
                (0..count).map(|_| None).collect();
            let mut asks_of: std::collections::HashMap<CallId, (usize, cox_protocol::SessionId)> =
                std::collections::HashMap::new();
            // A call's subagent runs in the narrower of the mode its call
            // was decided under and the mode as its stretch starts: a mode
            // widened later in the message (an approval's "bypass")
            // reaches no call decided before it, a narrowed one (plan)
            // reaches every stretch that has not started.
            let (now, _) = self.current_mode();
            let group = FuturesUnordered::new();
            for slot in index..end {
                let call = &calls[slot];
                let run: BoxFuture<'_, (ToolResult, Kept)> = match tools.get(&call.name) {
                    None => continue,
                    Some(Entry::Own(own)) => Box::pin(std::future::ready((
                        self.run_own(*own, call),
                        Kept::Nothing,
                    ))),
                    Some(Entry::Tool(tool)) => {
                        let nested = if tool.nests() {
                            let (answers, answered) = mpsc::unbounded();
                            down[slot] = Some(answers);
                            Nested::new(call.id.clone(), up.clone(), answered)
                        } else {
                            Nested::none()
                        };
                        let cx = ToolContext {
                            call_id: &call.id,
                            workspace: &fixed.config.workspace,
                            cancel: cancel.child_token(),
                            sandbox: fixed.world.sandbox(),
                            output: OutputSink::new(call.id.clone(), tx.clone()),
                            rules: asked[slot].rules(&engine, &call.subject),
                            unconfined: unconfined[slot],
                            files: fixed.files.as_deref(),
                            permission_mode: decided_in[slot].narrower(now),
                            nested,
                            decided: &decided[slot],
                        };
                        Box::pin(bracket(
                            fixed.checkpoints.clone(),
                            fixed.config.id,
                            turn,
                            (call, &fixed.config.workspace),
                            tool.run(call.input.clone(), cx),
                        ))
                    }
                };
                group.push(async move { (slot, run.await) });
            }
            let mut group = group;
            drop(tx);
            drop(up);
            // MCP servers ask for input while their calls run.
            let mut asks = self.take_asks();
            let slot_of = |call_id: &CallId| calls.iter().position(|c| &c.id == call_id);
            // Results land in their slots as they come; an interrupt keeps the
            // ones already finished (a write that happened is reported as done).
            let mut interrupted = false;
            while !group.is_empty() {
                tokio::select! {
                    biased;
                    sub = self.inbox.next_live() => {
                        // An answer to a subagent's ask goes down to it.
                        if let Submission::Approve { call_id, decision } = &sub
                            && let Some((slot, child)) = asks_of.remove(call_id)
                            && let (Some(answers), Some(own)) = (down[slot].as_ref(), untag(call_id, &child))
                        {
                            let _ = answers.unbounded_send((own, decision.clone()));
                            continue;
                        }
                        if let MidTurn::Interrupt = self.mid_turn(sub, None) {
                            cancel.cancel();
                            interrupted = true;
                            break;
                        }
                    }
                    Some((call_id, chunk)) = rx.next() => self.out.emit(Event::ToolCallOutput { call_id, chunk }),
                    ask = super::elicit::next_ask(&mut asks) => self.elicit(ask),
                    Some((call_id, session_id, event)) = nested_rx.next() => {
                        let event = tagged(event, &session_id);
                        if let Some(asked) = subagent_ids::asked(&event)
                            && let Some(slot) = slot_of(&call_id)
                        {
                            asks_of.insert(asked.clone(), (slot, session_id));
                        }
                        self.out.emit(Event::Subagent { call_id, session_id, event: Box::new(event) });
                    }
                    Some((slot, (result, done))) = group.next() => {
                        kept[slot] = Some(done);
                        let mut notices = Vec::new();
                        let mut shaped = self.shape_result(&calls[slot], result, &mut notices).await;
                        for text in notices {
                            self.out.notice(NoticeLevel::Warn, text);
                        }
                        let after = self.post_tool_hooks(&calls[slot], &mut shaped).await;
                        results[slot] = Some(shaped);
                        match after {
                            None => {}
                            Some(PostStop::Hook(line)) => hook_stop = hook_stop.or(Some(line)),
                            Some(PostStop::Interrupted) => {
                                cancel.cancel();
                                interrupted = true;
                                break;
                            }
                        }
                    }
                }
            }
            // Dropping the unfinished futures kills what they started.
            drop(group);
            self.put_back_asks(asks);
            while let Ok((call_id, chunk)) = rx.try_recv() {
                self.out.emit(Event::ToolCallOutput { call_id, chunk });
            }
            while let Ok((call_id, session_id, event)) = nested_rx.try_recv() {
                self.out.emit(Event::Subagent {
                    call_id,
                    session_id,
                    event: Box::new(tagged(event, &session_id)),
                });
            }
            if interrupted {
                stop = Some(StopReason::Interrupted);
                break;
            }
            if let Some(line) = hook_stop.take() {
                // `continue: false` after a call: the calls not yet run
                // are not, and the turn ends after this message.
                self.out.notice(NoticeLevel::Warn, line.clone());
                for result in results.iter_mut().skip(end).filter(|r| r.is_none()) {
                    *result = Some(ToolResult::denied(format!("not run: {line}")));
                }
                stop = Some(StopReason::Denied);
            }
            for call in &calls[emitted..end] {
                let result = results[emitted]
                    .clone()
                    .unwrap_or_else(|| ToolResult::error(INTERRUPTED));
                self.out.emit(Event::ToolCallDone {
                    call_id: call.id.clone(),
                    result,
                });
                if let Some(done) = kept[emitted].take() {
                    self.say_kept(call, done);
                }
                emitted += 1;
            }
            index = end;
        }
        for (call, result) in calls.iter().zip(results).skip(emitted) {
            self.out.emit(Event::ToolCallDone {
                call_id: call.id.clone(),
                result: result.unwrap_or_else(|| ToolResult::error(INTERRUPTED)),
            });
        }
        stop
    }

    /// Runs one of the session's own tools.
    fn run_own(&mut self, own: OwnTool, call: &ToolCall) -> ToolResult {
        let fixed = self.fixed;
        match own {
            OwnTool::Expand => own_tools::expand(fixed.world.archive(), &call.input),
            OwnTool::ToolSearch => {
                let query = call.input["query"].as_str().unwrap_or_default();
                let tools = fixed.tools();
                let hits = own_tools::search(tools.deferred(), query);
                if let Some(hits) = &hits {
                    self.state
                        .found
                        .extend(hits.iter().map(|spec| spec.name.clone()));
                }
                own_tools::search_result(query, hits.as_deref())
            }
            OwnTool::Todo => match own_tools::plan(&call.input) {
                Ok(steps) => {
                    let result = own_tools::plan_result(&steps);
                    self.out.emit(Event::Plan { steps });
                    result
                }
                Err(result) => result,
            },
        }
    }

    /// Decides one call: rules, modes and grants (the engine), then the
    /// `PreToolUse` hooks, then, where it would ask, the
    /// `PermissionRequest` hooks and a person.
    ///
    /// An input a hook or a person changes is a new call: classified and
    /// decided again, and the `PreToolUse` hooks see it again (so one
    /// hook's rewrite cannot slip past another's guard). A
    /// `PermissionRequest` allow answers for the call's new input too. The
    /// hooks may change it [`MAX_REWRITES`] times; then the call is refused.
    async fn decide_call(&mut self, running: &mut Turn<RunningTools>, index: usize) -> Decided {
        let fixed = self.fixed;
        let cfg = &fixed.config;
        let mut rewrites = 0;
        // A `PermissionRequest` hook allowed the call (as a person would):
        // which hook, for which input.
        let mut answered: Option<(String, Value)> = None;
        loop {
            let call = &running.calls()[index];
            if fixed.tools().get(&call.name).is_none() {
                if let Some((prefix, why)) = fixed.unavailable(&call.name) {
                    let server = prefix
                        .strip_prefix("mcp__")
                        .and_then(|p| p.strip_suffix("__"))
                        .unwrap_or(&prefix);
                    return Decided::Result(ToolResult::error(format!(
                        "`{}` is unavailable: its MCP server '{server}' is not connected ({why})",
                        call.name
                    )));
                }
                let tools = fixed.tools();
                let known: Vec<&str> = tools.names().collect();
                return Decided::Result(ToolResult::error(format!(
                    "unknown tool `{}`; the tools are: {}",
                    call.name,
                    known.join(", ")
                )));
            }
            let mode = self.current_mode().0;
            // Asked as if someone could answer: whether nobody can is
            // decided below, after the hooks had their say.
            let outcome = self.engine().decide(
                call,
                mode,
                ApprovalPolicy::OnRequest,
                cfg.sandbox_mode,
                &self.state.grants,
            );
            if let Outcome::Deny { reason } = outcome {
                return Decided::Result(ToolResult::denied(reason));
            }
            let Some(pre) = self.pre_tool_hooks(call).await else {
                return Decided::Interrupted;
            };
            if let Some((hook, reason)) = pre.denied() {
                return Decided::Result(ToolResult::denied(format!(
                    "hook {hook} blocked this call: {reason}"
                )));
            }
            if let Some(line) = pre.stopped() {
                self.out.notice(NoticeLevel::Warn, line.clone());
                return Decided::Stop(ToolResult::denied(format!("not run: {line}")));
            }
            if let Some((hook, input)) = pre.updated_input.clone()
                && input != call.input
            {
                if let Some(refused) = self.rewrite(running, index, &hook, input, &mut rewrites) {
                    return refused;
                }
                continue;
            }
            // A hook's allow runs the call as one a person approved.
            let by_hook = matches!(
                (&outcome, &pre.decision),
                (Outcome::Ask { .. }, Some((HookDecision::Allow, ..)))
            );
            let outcome = match (outcome, pre.decision.clone()) {
                (Outcome::Allow { .. }, Some((HookDecision::Ask, hook, reason))) => Outcome::Ask {
                    reason: match reason {
                        Some(reason) => format!("hook {hook} asks: {reason}"),
                        None => format!("hook {hook} asks"),
                    },
                },
                (Outcome::Ask { reason }, Some((HookDecision::Allow, hook, _))) => {
                    self.hook_allows(call, mode, &hook, reason, Lift::RiskOnly)
                }
                (outcome, _) => outcome,
            };
            let outside = self.unconfined_reason(call);
            let reason = match (outcome, &outside) {
                (Outcome::Deny { reason }, _) => {
                    return Decided::Result(ToolResult::denied(reason));
                }
                (Outcome::Allow { .. }, None) => {
                    let how = if mode == PermissionMode::BypassPermissions {
                        Asked::Bypassed
                    } else if by_hook {
                        Asked::Approved
                    } else {
                        Asked::Nobody
                    };
                    return Decided::Run(how, false);
                }
                // Running outside the sandbox is always a person's call, in
                // every mode; a session nobody can answer refuses it.
                (_, Some(why)) if cfg.approval == ApprovalPolicy::Never => {
                    return Decided::Result(ToolResult::denied(format!(
                        "not run: {why}, which needs a person's approval, and this session cannot ask"
                    )));
                }
                (Outcome::Allow { .. }, Some(why)) => why.clone(),
                (Outcome::Ask { reason }, Some(why)) => format!("{reason}; {why}"),
                (Outcome::Ask { reason }, None) => reason,
            };
            let outside = outside.is_some();
            // A person would be asked: `PermissionRequest` hooks may answer
            // first (never for a call that would leave the sandbox), once,
            // and only for the input they answered.
            let mut reason = reason;
            let allowed_by = match &answered {
                _ if outside => None,
                Some((hook, input)) if *input == call.input => Some(hook.clone()),
                Some(_) => None,
                None => match self.permission_hooks(call).await {
                    Answered::Nobody => None,
                    Answered::Allow(hook, Some(input)) if input != call.input => {
                        answered = Some((hook.clone(), input.clone()));
                        if let Some(refused) =
                            self.rewrite(running, index, &hook, input, &mut rewrites)
                        {
                            return refused;
                        }
                        continue;
                    }
                    Answered::Allow(hook, _) => Some(hook),
                    Answered::Deny(reason) => return Decided::Result(ToolResult::denied(reason)),
                    Answered::Stop(reason) => return Decided::Stop(ToolResult::denied(reason)),
                    Answered::Interrupted => return Decided::Interrupted,
                },
            };
            if let Some(hook) = allowed_by {
                // It answers as a person would, but not for a line cox
                // cannot follow, nor past a deny rule.
                match self.hook_allows(call, mode, &hook, reason, Lift::AsAPerson) {
                    Outcome::Allow { .. } => return Decided::Run(Asked::Approved, false),
                    Outcome::Deny { reason } => return Decided::Result(ToolResult::denied(reason)),
                    Outcome::Ask { reason: why } => reason = why,
                }
            }
            if cfg.approval == ApprovalPolicy::Never {
                return Decided::Result(ToolResult::denied(format!(
                    "{reason}, and this session cannot ask (approval policy: never); the call was \
                     not run"
                )));
            }
            let call_id = call.id.clone();
            let tool = call.name.clone();
            self.out.emit(Event::ApprovalRequired {
                call_id: call_id.clone(),
                reason,
            });
            let decision = match self.wait_for_answer(&call_id, &tool).await {
                Ok(decision) => decision,
                Err(decided) => return decided,
            };
            match decision {
                Decision::Allow => return Decided::Run(Asked::Approved, outside),
                Decision::AllowForSession => {
                    let call = &running.calls()[index];
                    // The command is granted; leaving a sandbox that works
                    // is not: each call that asks to is put to a person
                    // again. Where nothing can be confined, commands run
                    // unconfined from now on.
                    self.state.grants.extend(Grant::for_call(call));
                    self.state.unconfinable_granted |= outside
                        && matches!(
                            self.fixed.world.sandbox().confinement(),
                            Confinement::Unavailable { .. }
                        );
                    return Decided::Run(Asked::Approved, outside);
                }
                Decision::Deny {
                    reason: Some(reason),
                } => {
                    return Decided::Result(ToolResult::denied(format!(
                        "the user denied this call: {reason}"
                    )));
                }
                Decision::Deny { reason: None } => {
                    return Decided::Stop(ToolResult::denied("the user denied this call"));
                }
                // A person's edit is a new call, decided again from the
                // start; it does not count against the hooks' rewrites.
                Decision::Edit { input } => self.replace_input(running, index, input),
            }
        }
    }

    /// A hook changed the input of call `index`: the call takes it (said
    /// in a notice), unless the hooks have done so too often, when the
    /// refusal is returned.
    fn rewrite(
        &mut self,
        running: &mut Turn<RunningTools>,
        index: usize,
        hook: &str,
        input: Value,
        rewrites: &mut u32,
    ) -> Option<Decided> {
        *rewrites += 1;
        if *rewrites > MAX_REWRITES {
            return Some(Decided::Result(ToolResult::denied(format!(
                "not run: its hooks changed its input {MAX_REWRITES} times and kept changing it"
            ))));
        }
        let name = running.calls()[index].name.clone();
        self.out.notice(
            NoticeLevel::Info,
            format!("hook {hook} changed the input of this {name} call"),
        );
        self.replace_input(running, index, input);
        None
    }

    /// The rules calls are decided by: the session's, with what a command
    /// allowed for this turn.
    fn engine(&self) -> &Arc<Engine> {
        self.state
            .turn_engine
            .as_ref()
            .unwrap_or(&self.fixed.engine)
    }

    /// Waits for a person's answer to the approval of `call_id`, while the
    /// `Notification` hooks tell them one waits; `Err` when the turn must
    /// end instead (an interrupt, a shutdown, the input closed).
    async fn wait_for_answer(&mut self, call_id: &CallId, tool: &str) -> Result<Decision, Decided> {
        let fixed = self.fixed;
        let hooks = fixed
            .hooks
            .as_deref()
            .filter(|h| h.wants(HookEvent::Notification));
        let call = self
            .hook_call(HookEvent::Notification)
            .target("permission_prompt")
            .field(
                "message",
                format!("cox needs your permission to use {tool}"),
            )
            .field("notification_type", "permission_prompt");
        let mut notifying = match hooks {
            Some(hooks) => hooks.run(&call),
            None => Box::pin(futures::future::pending()),
        }
        .fuse();
        let mut told = Vec::new();
        let answer = loop {
            let sub = tokio::select! {
                replies = &mut notifying => {
                    told = replies;
                    continue;
                }
                sub = self.inbox.next_or_closed() => sub,
            };
            let Some(sub) = sub else {
                break Err(Decided::Result(ToolResult::denied(
                    "not run: the session's input closed before anyone answered the approval request",
                )));
            };
            if sub == Submission::Shutdown {
                // Nobody will answer: end the turn, then the session.
                self.inbox.queue.push_back(sub);
                break Err(Decided::Interrupted);
            }
            match self.mid_turn(sub, Some(call_id)) {
                MidTurn::Interrupt => break Err(Decided::Interrupted),
                MidTurn::Approve(decision) => break Ok(decision),
                MidTurn::Ignored => {}
            }
        };
        drop(notifying);
        for reply in &told {
            self.say_hook(HookEvent::Notification, reply, None);
        }
        answer
    }

    /// A call the engine would ask about that a hook allowed. It runs
    /// unasked only when all of these hold, each of which only narrows:
    /// - it is not in plan mode;
    /// - it is not a shell line the split cannot vouch for (`$(…)`, `eval`,
    ///   a parse error, a command named only at run time);
    /// - `bypassPermissions` would run it (no deny rule, no command name
    ///   only known at run time under a deny rule, no path the engine
    ///   cannot check, not a cloud agent);
    /// - for a `PreToolUse` allow ([`Lift::RiskOnly`]), decided as a
    ///   read-only call in the mode in force it is allowed: it answers the
    ///   risk's question only, as Claude Code's allow skips its prompt but
    ///   not its ask rules. A `PermissionRequest` allow answers for a
    ///   person ([`Lift::AsAPerson`]), who may answer an ask rule.
    fn hook_allows(
        &self,
        call: &ToolCall,
        mode: PermissionMode,
        hook: &str,
        asked: String,
        lift: Lift,
    ) -> Outcome {
        let cannot_lift = |why: &str| Outcome::Ask {
            reason: format!("{why} (hook {hook} allowed it, which cannot lift that)"),
        };
        if mode == PermissionMode::Plan {
            return cannot_lift(&asked);
        }
        if let Some(split) = &call.segments
            && (split.opaque.is_some() || split.dynamic || !split.scan.is_empty())
        {
            let why = split
                .opaque
                .clone()
                .unwrap_or_else(|| "cox cannot follow every command of this line".into());
            return cannot_lift(&format!("{asked}; {why}"));
        }
        let cfg = &self.fixed.config;
        let decide = |call: &ToolCall, mode| {
            self.engine().decide(
                call,
                mode,
                ApprovalPolicy::OnRequest,
                cfg.sandbox_mode,
                &self.state.grants,
            )
        };
        let mut outcomes = vec![decide(call, PermissionMode::BypassPermissions)];
        if lift == Lift::RiskOnly {
            let as_read = ToolCall {
                risk: Risk::ReadOnly,
                ..call.clone()
            };
            outcomes.push(decide(&as_read, mode));
        }
        for outcome in outcomes {
            match outcome {
                Outcome::Allow { .. } => {}
                Outcome::Ask { reason } => return cannot_lift(&reason),
                deny @ Outcome::Deny { .. } => return deny,
            }
        }
        Outcome::Allow {
            reason: format!("allowed by hook {hook}"),
        }
    }

    /// Replaces the input of call `index` (a person's edit, a hook's
    /// `updatedInput`): classified again, and said again, so the
    /// conversation holds the input that runs.
    fn replace_input(&mut self, running: &mut Turn<RunningTools>, index: usize, input: Value) {
        let fixed = self.fixed;
        let call = &running.calls()[index];
        let edited = fixed.tools().classify(
            call.id.clone(),
            call.name.clone(),
            input,
            &fixed.config.workspace,
        );
        self.out.emit(Event::ToolCallRequested {
            call: edited.clone(),
        });
        running.replace_call(index, edited);
    }

    /// Whether `call` runs unconfined because nothing can be confined here
    /// and a person allowed that for the session.
    fn unconfinable(&self, call: &ToolCall) -> bool {
        self.state.unconfinable_granted
            && call.segments.is_some()
            && self.fixed.config.sandbox_mode != SandboxMode::DangerFullAccess
            && matches!(
                self.fixed.world.sandbox().confinement(),
                Confinement::Unavailable { .. }
            )
    }

    /// Why `call` would run outside the OS sandbox, when it would and no
    /// person has allowed that for the session: it asks to (bash's
    /// `unsandboxed`), or the sandbox cannot confine anything here. Never in
    /// `danger-full-access`, where nothing is confined to begin with.
    fn unconfined_reason(&self, call: &ToolCall) -> Option<String> {
        let fixed = self.fixed;
        let segments = call.segments.as_ref()?;
        if fixed.config.sandbox_mode == SandboxMode::DangerFullAccess {
            return None;
        }
        if let Confinement::Unavailable { why } = fixed.world.sandbox().confinement() {
            if self.state.unconfinable_granted {
                return None;
            }
            return Some(format!(
                "it would run outside the OS sandbox, which cannot confine commands here ({why})"
            ));
        }
        segments
            .unsandboxed
            .then(|| "it asks to run outside the OS sandbox".to_owned())
    }

    /// The `PreToolUse` hooks' verdict on `call`; `None` when an
    /// interrupt came first.
    async fn pre_tool_hooks(&mut self, call: &ToolCall) -> Option<Verdict> {
        if self.hooks_for(HookEvent::PreToolUse).is_none() {
            return Some(Verdict::default());
        }
        let hook_call = tool_fields(&self.hook_call(HookEvent::PreToolUse), call);
        let replies = self.run_hooks(hook_call, false).await?;
        Some(Verdict::of(&replies))
    }

    /// The `PermissionRequest` hooks' answer for a call a person would be
    /// asked about.
    async fn permission_hooks(&mut self, call: &ToolCall) -> Answered {
        if self.hooks_for(HookEvent::PermissionRequest).is_none() {
            return Answered::Nobody;
        }
        let hook_call = tool_fields(&self.hook_call(HookEvent::PermissionRequest), call);
        let Some(replies) = self.run_hooks(hook_call, false).await else {
            return Answered::Interrupted;
        };
        let verdict = Verdict::of(&replies);
        if let Some((hook, reason)) = verdict.denied() {
            let line = format!("hook {hook} denied this call: {reason}");
            return if verdict.interrupt {
                Answered::Stop(line)
            } else {
                Answered::Deny(line)
            };
        }
        if let Some(line) = verdict.stopped() {
            self.out.notice(NoticeLevel::Warn, line.clone());
            return Answered::Stop(format!("not run: {line}"));
        }
        match verdict.decision {
            Some((HookDecision::Allow, hook, _)) => {
                Answered::Allow(hook, verdict.updated_input.map(|(_, input)| input))
            }
            _ => Answered::Nobody,
        }
    }
}

/// What a hook's allow may answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lift {
    /// A `PreToolUse` allow: the risk's question only.
    RiskOnly,
    /// A `PermissionRequest` allow: what a person would be asked.
    AsAPerson,
}

/// How many times the hooks may change one call's input.
const MAX_REWRITES: u32 = 4;

/// What the `PermissionRequest` hooks answered.
enum Answered {
    /// None answered: a person is asked.
    Nobody,
    /// Allowed by this hook, with the input to run instead (decided
    /// again) when given.
    Allow(String, Option<Value>),
    Deny(String),
    /// Denied, and the turn stops after this message.
    Stop(String),
    /// An interrupt came while they ran.
    Interrupted,
}

/// Whose answer let a call run, for the path rules it runs under: the
/// ask rules a person answered, or bypass mode skipped, do not stop the
/// paths it opens.
#[derive(Clone, Copy, Debug)]
enum Asked {
    /// Allowed without asking: every rule holds.
    Nobody,
    /// A person approved it: ask rules covering its own subject were
    /// answered.
    Approved,
    /// Allowed by `bypassPermissions`: ask rules do not apply.
    Bypassed,
}

impl Asked {
    /// The rules a call with `subject` runs under; deny rules always hold.
    fn rules(self, engine: &Arc<Engine>, subject: &str) -> Arc<dyn PathRules> {
        let engine = Arc::clone(engine);
        match self {
            Asked::Nobody => engine,
            Asked::Approved => Arc::new(CallRules::approved(engine, subject)),
            Asked::Bypassed => Arc::new(CallRules::bypassed(engine)),
        }
    }
}

/// What deciding one call led to.
enum Decided {
    /// Allowed: it runs; outside the OS sandbox when the flag is set (a
    /// person approved that).
    Run(Asked, bool),
    /// Not run; this is its result.
    Result(ToolResult),
    /// Not run, and the turn stops after this message.
    Stop(ToolResult),
    /// An `Interrupt` arrived while a person was being asked.
    Interrupted,
}
