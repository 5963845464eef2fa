//! Running one assistant message's tool calls: each is decided in order
//! (rules, modes, grants, a person's approval, `PreToolUse` hooks), then
//! they run — a stretch of read-only calls at once, anything else alone —
//! and their results come back in the order the model asked, each shaped
//! for the model as it lands. Each call runs with the session's path rules
//! (`ToolContext::rules`), less the ask rules its approval answered, so a
//! search checks every file it opens, not only its root.
//!
//! Split from the driver by responsibility; it shares the driver's private
//! types as a child module.

use cox_protocol::tool::PathRules;

use super::*;
use crate::permission::CallRules;

/// Decides, then runs, the calls of one assistant message. Results come back
/// in call order; the second value ends the turn when set.
pub(super) async fn run_tools<P, S, A, X, I, F>(
    world: &World<P, S, A, X>,
    state: &mut State,
    out: &mut TurnOut<'_, '_, S, F>,
    inbox: &mut Inbox<I>,
    running: &mut Turn<crate::turn::RunningTools>,
    cancel: &CancelToken,
) -> (Vec<ToolResult>, Option<StopReason>)
where
    P: Provider,
    S: Store,
    A: Archive,
    X: Sandbox + 'static,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    let count = running.calls().len();
    let mut results: Vec<Option<ToolResult>> = vec![None; count];
    let mut asked = vec![Asked::Nobody; count];
    let mut stop = None;

    // Decide every call first, in order; people answer approvals one by one.
    #[allow(clippy::needless_range_loop)] // `decide_call` reads `running` by index
    for index in 0..count {
        if stop.is_some() {
            results[index] = Some(ToolResult::denied(
                "not run: the user denied an earlier call of this message",
            ));
            continue;
        }
        match decide_call(world, state, out, inbox, running, index).await {
            Decided::Run(how) => asked[index] = how,
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

    // Run: a stretch of read-only calls at once, anything else alone, in order.
    let calls = running.calls();
    let mut emitted = 0;
    let mut index = 0;
    while index < count && stop != Some(StopReason::Interrupted) {
        if results[index].is_some() {
            index += 1;
            continue;
        }
        let mut end = index + 1;
        if calls[index].risk == Risk::ReadOnly {
            while end < count && results[end].is_none() && calls[end].risk == Risk::ReadOnly {
                end += 1;
            }
        }
        let (tx, mut rx) = mpsc::unbounded();
        let mut group: FuturesUnordered<_> = (index..end)
            .filter_map(|slot| {
                let call = &calls[slot];
                let tool = world.tools.get(&call.name)?;
                let cx = ToolContext {
                    call_id: &call.id,
                    workspace: &world.config.workspace,
                    cancel: cancel.child_token(),
                    sandbox: &world.sandbox,
                    output: OutputSink::new(call.id.clone(), tx.clone()),
                    rules: asked[slot].rules(&world.engine, &call.subject),
                };
                let run = tool.run(call.input.clone(), cx);
                Some(async move { (slot, run.await) })
            })
            .collect();
        drop(tx);
        // Results land in their slots as they come; an interrupt keeps the
        // ones already finished (a write that happened is reported as done).
        let mut interrupted = false;
        while !group.is_empty() {
            tokio::select! {
                biased;
                sub = inbox.next_live() => {
                    if let MidTurn::Interrupt = mid_turn(sub, inbox, out, None) {
                        cancel.cancel();
                        interrupted = true;
                        break;
                    }
                }
                Some((call_id, chunk)) = rx.next() => out.emit(Event::ToolCallOutput { call_id, chunk }),
                Some((slot, result)) = group.next() => {
                    let mut notices = Vec::new();
                    let shaped = shape_result(world, state, &calls[slot], result, &mut notices);
                    for text in notices {
                        out.notice(NoticeLevel::Warn, text);
                    }
                    results[slot] = Some(shaped);
                }
            }
        }
        // Dropping the unfinished futures kills what they started.
        drop(group);
        while let Ok((call_id, chunk)) = rx.try_recv() {
            out.emit(Event::ToolCallOutput { call_id, chunk });
        }
        if interrupted {
            stop = Some(StopReason::Interrupted);
            break;
        }
        for call in &calls[emitted..end] {
            let result = results[emitted]
                .clone()
                .unwrap_or_else(|| ToolResult::error(INTERRUPTED));
            out.emit(Event::ToolCallDone {
                call_id: call.id.clone(),
                result,
            });
            emitted += 1;
        }
        index = end;
    }
    let results: Vec<ToolResult> = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| ToolResult::error(INTERRUPTED)))
        .collect();
    for (call, result) in calls.iter().zip(&results).skip(emitted) {
        out.emit(Event::ToolCallDone {
            call_id: call.id.clone(),
            result: result.clone(),
        });
    }
    (results, stop)
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
    /// Allowed: it runs.
    Run(Asked),
    /// Not run; this is its result.
    Result(ToolResult),
    /// Not run, and the turn stops after this message.
    Stop(ToolResult),
    /// An `Interrupt` arrived while a person was being asked.
    Interrupted,
}

async fn decide_call<P, S, A, X, I, F>(
    world: &World<P, S, A, X>,
    state: &mut State,
    out: &mut TurnOut<'_, '_, S, F>,
    inbox: &mut Inbox<I>,
    running: &mut Turn<crate::turn::RunningTools>,
    index: usize,
) -> Decided
where
    S: Store,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    let cfg = &world.config;
    loop {
        let call = &running.calls()[index];
        if world.tools.get(&call.name).is_none() {
            let known: Vec<&str> = world.tools.names().collect();
            return Decided::Result(ToolResult::error(format!(
                "unknown tool `{}`; the tools are: {}",
                call.name,
                known.join(", ")
            )));
        }
        let mode = current_mode(world, state).0;
        let outcome =
            world
                .engine
                .decide(call, mode, cfg.approval, cfg.sandbox_mode, &state.grants);
        let reason = match outcome {
            Outcome::Allow { .. } => {
                let how = if mode == PermissionMode::BypassPermissions {
                    Asked::Bypassed
                } else {
                    Asked::Nobody
                };
                return pre_tool_hooks(world, out, call, how).await;
            }
            Outcome::Deny { reason } => return Decided::Result(ToolResult::denied(reason)),
            Outcome::Ask { reason } => reason,
        };
        let call_id = call.id.clone();
        out.emit(Event::ApprovalRequired {
            call_id: call_id.clone(),
            reason,
        });
        let decision = loop {
            let Some(sub) = inbox.next_or_closed().await else {
                return Decided::Result(ToolResult::denied(
                    "not run: the session's input closed before anyone answered the approval request",
                ));
            };
            if sub == Submission::Shutdown {
                // Nobody will answer: end the turn, then the session.
                inbox.queue.push_back(sub);
                return Decided::Interrupted;
            }
            match mid_turn(sub, inbox, out, Some(&call_id)) {
                MidTurn::Interrupt => return Decided::Interrupted,
                MidTurn::Approve(decision) => break decision,
                MidTurn::Ignored => {}
            }
        };
        match decision {
            Decision::Allow => return pre_tool_hooks(world, out, call, Asked::Approved).await,
            Decision::AllowForSession => {
                state.grants.extend(Grant::for_call(call));
                return pre_tool_hooks(world, out, call, Asked::Approved).await;
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
            Decision::Edit { input } => {
                let edited =
                    world
                        .tools
                        .classify(call_id, call.name.clone(), input, &cfg.workspace);
                out.emit(Event::ToolCallRequested {
                    call: edited.clone(),
                });
                running.replace_call(index, edited, &mut state.history);
            }
        }
    }
}

/// Runs the `PreToolUse` hooks on an allowed call.
async fn pre_tool_hooks<P, S: Store, A, X, F: FnMut(&Event)>(
    world: &World<P, S, A, X>,
    out: &mut TurnOut<'_, '_, S, F>,
    call: &cox_protocol::types::ToolCall,
    how: Asked,
) -> Decided {
    if world.hooks.is_empty() {
        return Decided::Run(how);
    }
    let payload = serde_json::json!({
        "hook_event_name": "PreToolUse",
        "tool_name": call.name,
        "tool_input": call.input,
        "call_id": call.id,
    });
    for hook in &world.hooks {
        match hook.run(HookPoint::PreToolUse, &payload).await {
            HookVerdict::Continue | HookVerdict::Rewrite { .. } => {}
            HookVerdict::Block { reason } => {
                return Decided::Result(ToolResult::denied(format!(
                    "hook {} blocked this call: {reason}",
                    hook.name()
                )));
            }
            HookVerdict::Failed { message } => out.notice(
                NoticeLevel::Warn,
                format!("hook {} failed and was skipped: {message}", hook.name()),
            ),
        }
    }
    Decided::Run(how)
}
