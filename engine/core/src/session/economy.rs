//! What the session sends and spends, between the turn loop's steps: the
//! permission mode and model in force, the shape of each request (the
//! compaction summary, microcompaction pointers, tools found by
//! `tool_search`), what the model gets of each tool result (archived first,
//! then head and tail, or `unchanged since`), compaction on the cheap tier,
//! and the `[budget]` check before a call.
//!
//! Split from the driver by responsibility; it shares the driver's private
//! types (`World`, `State`, the emitters, the inbox) as a child module.

use super::*;

/// The permission mode and main tier in force.
pub(super) fn current_mode<P, S, A, X>(
    world: &World<P, S, A, X>,
    state: &State,
) -> (PermissionMode, Tier) {
    state
        .mode
        .unwrap_or((world.config.permission_mode, world.config.tier))
}

/// Applies a `SetMode` and says so.
pub(super) fn set_mode<P, S: Store, A, X, F: FnMut(&Event)>(
    world: &World<P, S, A, X>,
    state: &mut State,
    out: &mut Emitter<'_, S, F>,
    permission_mode: Option<PermissionMode>,
    tier: Option<Tier>,
    model: Option<String>,
) {
    let (mode, main) = current_mode(world, state);
    let next = (permission_mode.unwrap_or(mode), tier.unwrap_or(main));
    state.mode = Some(next);
    if let Some(model) = model.filter(|m| !m.trim().is_empty()) {
        state.model = Some(model.trim().to_owned());
    }
    out.emit(Event::ModeChanged {
        permission_mode: next.0,
        tier: next.1,
        model: state.model.clone(),
    });
}

/// What the model is sent of the history: the summary in place of the
/// compacted turns, and pointers in place of old tool results. Says so once
/// when a found tool changed the tool block (and so the cached prefix).
pub(super) fn shape_request<P, S: Store, A, X, F: FnMut(&Event)>(
    world: &World<P, S, A, X>,
    state: &mut State,
    out: &mut TurnOut<'_, '_, S, F>,
    request: &mut Request,
) {
    request.model_override.clone_from(&state.model);
    if let Some(compaction) = &state.compaction {
        request.messages = compaction.apply(&state.history);
    }
    let after = world.config.context.microcompact_after_turns;
    if after > 0 {
        context::microcompact(&mut request.messages, &state.results, state.turns, after);
    }
    let found = world.tools.found_count();
    if found != state.tools_found {
        state.tools_found = found;
        out.notice(
            NoticeLevel::Info,
            format!(
                "tool_search found {found} of the {} deferred tools: their schemas are sent from now on, \
                 so the tool block changed and the prompt cache starts again once",
                world.tools.deferred().len()
            ),
        );
    }
}

/// A tool's result as the model gets it. The output is archived first,
/// whole; a big one is shown as head and tail around a marker, and a
/// read-only call repeating an earlier one with the same output within the
/// dedup window is answered `unchanged since #<id>`. A result of a call
/// that never ran (refused, unknown) is kept as it is.
pub(super) fn shape_result<P, S, A: Archive, X>(
    world: &World<P, S, A, X>,
    state: &mut State,
    call: &cox_protocol::types::ToolCall,
    mut result: ToolResult,
    notices: &mut Vec<String>,
) -> ToolResult {
    state.results.insert(
        call.id.clone(),
        ResultMeta {
            turn: state.turns,
            archive: None,
            what: format!("{} {}", call.name, call.subject),
        },
    );
    if result.denied || call.name == "expand" {
        return result;
    }
    let meta = ArchiveMeta {
        session: world.config.id,
        call: Some(call.id.clone()),
    };
    let id = match world.archive.put(&meta, result.visible.as_bytes()) {
        Ok(id) => id,
        Err(err) => {
            // Lossless beats small: the model gets the whole output.
            notices.push(format!("the output of {} was not archived: {err}", call.id));
            return result;
        }
    };
    if let Some(info) = state.results.get_mut(&call.id) {
        info.archive = Some(id.clone());
    }
    let window = world.config.context.dedup_window_turns;
    if call.risk == Risk::ReadOnly && result.ok && window > 0 {
        let input = call.input.to_string();
        let earlier = state.seen.check(
            &call.name,
            &input,
            &result.visible,
            state.turns,
            window,
            &id,
        );
        // Only point back at an output the model is still sent whole: not
        // one already shown as a pointer, nor one summarised away.
        let after = world.config.context.microcompact_after_turns;
        let first_kept = state.compaction.as_ref().and_then(|c| {
            state
                .turn_starts
                .iter()
                .find(|(_, index)| *index >= c.until)
                .map(|(turn, _)| *turn)
        });
        if let Some((earlier, turn)) = earlier
            && (after == 0 || state.turns.saturating_sub(turn) < after)
            && first_kept.is_none_or(|first| turn >= first)
        {
            if let Some(info) = state.results.get_mut(&call.id) {
                info.archive = Some(earlier.clone());
            }
            result.visible = context::unchanged(&earlier);
            result.archive = Some(earlier);
            return result;
        }
    }
    result.visible = context::view(&result.visible, &id);
    result.archive = Some(id);
    result
}

/// What a compaction came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CompactOutcome {
    Done,
    /// There were no turns before the ones to keep.
    Nothing,
    /// The summary could not be had (the reason was said).
    Failed,
}

/// What compacting all but the last `keep` turns would summarise: the
/// first kept turn, and the history from `since` to `until`; `None` when
/// there is nothing before the turns to keep (or it is summarised
/// already).
fn span(state: &State, keep: u32) -> Option<(u32, usize, usize)> {
    let keep = usize::try_from(keep.max(1)).unwrap_or(usize::MAX);
    let starts = &state.turn_starts;
    if starts.len() <= keep {
        return None;
    }
    let (first_kept, until) = starts[starts.len() - keep];
    let since = state.compaction.as_ref().map_or(0, |c| c.until);
    (until > since).then_some((first_kept, until, since))
}

/// Whether [`compact`] with this `keep` would have anything to summarise.
pub(super) fn can_compact(state: &State, keep: u32) -> bool {
    span(state, keep).is_some()
}

/// Summarises every turn but the last `keep` (at least one) on the cheap
/// tier; from then on requests carry the summary instead of those turns'
/// messages. The history is kept whole (append-only): only what is sent
/// changes. A `[budget]` cap already reached stops it, like any call.
pub(super) async fn compact<P, S, A, X, I, F>(
    world: &World<P, S, A, X>,
    state: &mut State,
    out: &mut Emitter<'_, S, F>,
    inbox: &mut Inbox<I>,
    focus: Option<&str>,
    keep: u32,
) -> CompactOutcome
where
    P: Provider,
    S: Store,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    let Some((first_kept, until, since)) = span(state, keep) else {
        return CompactOutcome::Nothing;
    };
    if let Some(over) = budget_reached(world, |level, text| out.notice(level, text)) {
        out.notice(NoticeLevel::Warn, format!("not compacting: {over}"));
        return CompactOutcome::Failed;
    }
    let dropped: Vec<u32> = state
        .turn_starts
        .iter()
        .filter(|(turn, index)| *turn < first_kept && *index >= since)
        .map(|(turn, _)| *turn)
        .collect();
    let mut earlier: Vec<Message> = Vec::new();
    if let Some(previous) = &state.compaction {
        earlier.push(Message::user_text(format!(
            "[Summary of what came before]\n{}",
            previous.summary
        )));
    }
    earlier.extend_from_slice(&state.history[since..until]);
    let request = Request {
        model: world.provider.model().to_owned(),
        tier: Tier::Cheap,
        effort: None,
        model_override: None,
        system: SystemParts {
            prompt: context::SUMMARY_PROMPT.to_owned(),
            instructions: String::new(),
            volatile: String::new(),
        },
        tools: Vec::new(),
        messages: vec![Message::user_text(context::transcript(&earlier, focus))],
        max_output_tokens: 2_000,
    };
    let cancel = CancelToken::new();
    let mut stream = pin!(world.provider.stream(request, cancel.clone()));
    let mut summary = String::new();
    let mut served = (
        world.provider.name().to_owned(),
        world.provider.model().to_owned(),
        None,
    );
    loop {
        // An interrupt stops the summary; anything else waits its turn.
        let item = tokio::select! {
            biased;
            sub = inbox.next_live() => {
                if sub == Submission::Interrupt {
                    cancel.cancel();
                    out.notice(
                        NoticeLevel::Info,
                        "compaction interrupted; the history was kept whole".into(),
                    );
                    return CompactOutcome::Failed;
                }
                inbox.queue.push_back(sub);
                continue;
            }
            item = stream.next() => item,
        };
        let Some(item) = item else { break };
        match item {
            Ok(StreamEvent::TextDelta(text)) => summary.push_str(&text),
            Ok(StreamEvent::Routed {
                provider,
                model,
                effort,
            }) => served = (provider, model, effort),
            Ok(StreamEvent::Usage(usage)) => out.emit(Event::Usage {
                provider: served.0.clone(),
                model: served.1.clone(),
                tier: Tier::Cheap,
                job: Job::Compact,
                effort: served.2,
                usage,
            }),
            Ok(StreamEvent::Retrying {
                attempt,
                of,
                delay_ms,
                reason,
                discarded,
            }) => {
                if discarded {
                    summary.clear();
                }
                out.emit(Event::Retry {
                    attempt,
                    of,
                    delay_ms,
                    reason,
                    discarded,
                });
            }
            Ok(StreamEvent::Done(_)) => break,
            Ok(_) => {}
            Err(err) => {
                out.notice(NoticeLevel::Warn, format!("compaction failed: {err}"));
                return CompactOutcome::Failed;
            }
        }
    }
    let summary = summary.trim().to_owned();
    if summary.is_empty() {
        out.notice(
            NoticeLevel::Warn,
            "compaction failed: the summary came back empty".into(),
        );
        return CompactOutcome::Failed;
    }
    let compaction = Compaction { until, summary };
    let after_bytes: usize = compaction
        .apply(&state.history)
        .iter()
        .map(|m| serde_json::to_string(m).map_or(0, |t| t.len()))
        .sum::<usize>()
        + world.config.system.prompt.len()
        + world.config.system.instructions.len();
    out.emit(Event::Compacted {
        summary: compaction.summary.clone(),
        dropped,
        before_tokens: state.last_context,
        after_tokens: (after_bytes / 4) as u64,
    });
    state.compaction = Some(compaction);
    CompactOutcome::Done
}

/// Why the next model call may not be made, when a `[budget]` cap would be
/// crossed by it: the spend so far plus the last call's cost (the best guess
/// at the next one's) reaches the cap.
pub(super) fn over_budget<P, S: Store, A, X, F: FnMut(&Event)>(
    world: &World<P, S, A, X>,
    out: &mut TurnOut<'_, '_, S, F>,
) -> Option<String> {
    budget_reached(world, |level, text| out.notice(level, text))
}

/// The budget check itself; `say` reports a ledger that cannot be read.
pub(super) fn budget_reached<P, S: Store, A, X>(
    world: &World<P, S, A, X>,
    mut say: impl FnMut(NoticeLevel, String),
) -> Option<String> {
    let caps = world.config.budget;
    if caps.session_usd.is_none() && caps.monthly_usd.is_none() {
        return None;
    }
    let spend = match world.store.spend(world.config.id) {
        Ok(spend) => spend,
        Err(err) => {
            say(
                NoticeLevel::Warn,
                format!("the spend so far cannot be read, so [budget] is not enforced: {err}"),
            );
            return None;
        }
    };
    let next = spend.last_call_usd;
    let check = |cap: Option<f64>, spent: f64, what: &str| {
        let cap = cap?;
        (spent + next >= cap).then(|| {
            format!(
                "stopping before the next model call: the {what} budget is ${cap:.2} and ${spent:.4} is spent \
                 (the last call cost ${next:.4}); raise [budget] {} to go on",
                if what == "session" { "session_usd" } else { "monthly_usd" }
            )
        })
    };
    check(caps.session_usd, spend.session_usd, "session")
        .or_else(|| check(caps.monthly_usd, spend.month_usd, "monthly"))
}
