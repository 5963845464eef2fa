//! One user turn, from its prompt to its `TurnDone`: the prompt hooks, the
//! title alongside the first turn, then rounds (a request streamed, the
//! calls it asked for run) until the model answers without calls or
//! something ends the turn (an interrupt, a failure, a cap, the output
//! limit twice), then compaction when the context is full.

use std::pin::pin;

use cox_protocol::provider::{ProviderError, Request};
use cox_protocol::types::{Event, Image, NoticeLevel, StopReason, Submission};
use cox_protocol::{CancelToken, Provider, Store};
use futures::{Stream, StreamExt};

use super::compaction::{CompactOutcome, can_compact};
use super::hooks::PostStop;
use super::title::Pending;
use super::{Driver, MidTurn};
use crate::turn::{Assembling, Done, Next, Prefix, RunningTools, Streaming, Turn};
use crate::world::World;

/// The text a call gets when the model call that asked for it failed.
const NOT_RUN: &str = "[not run: the model call failed before the response was complete]";

/// How the model stream of one round ended.
enum Streamed {
    Finished,
    Interrupted,
    Failed(ProviderError),
}

/// Where a round leads.
enum Round {
    /// Ask the model again.
    Again(Turn<Assembling>),
    /// Run these calls.
    Tools(Turn<RunningTools>),
    /// The turn is over.
    Over(Turn<Done>),
}

/// What a turn's rounds keep between them.
struct Rounds {
    cancel: CancelToken,
    /// A compaction was already tried for a context-length failure.
    compacted_for_length: bool,
    /// The output limit cut a call off in the last round.
    cut_before: bool,
    /// The output limit of the last request.
    limit: u32,
    /// How many times `Stop` hooks sent the model back to work this turn.
    sent_back: u32,
}

/// The most project notes a turn's volatile block carries.
const NOTES_RECALLED: usize = 5;

/// The most times `Stop` hooks may send the model back within one turn:
/// a hook that always refuses cannot keep a turn running for ever.
const MAX_SENT_BACK: u32 = 8;

impl<W, I, F> Driver<'_, W, I, F>
where
    W: World,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    /// Runs one user turn to its `TurnDone`. Submissions that arrive
    /// meanwhile and cannot act on the turn (including `Shutdown`) wait in
    /// the inbox, in order. The session's first prompt starts its title,
    /// which is written while the turn runs and said at its end.
    pub(super) async fn run_turn(&mut self, text: String, images: Vec<Image>) {
        let fixed = self.fixed;
        let number = self.out.history.turns() + 1;
        // What a command set for the last turn ends with it.
        self.state.turn_model = None;
        self.state.turn_engine = None;
        self.state.turn_notes = Vec::new();
        // A prompt that waited while an interrupt cut the start hooks
        // short was interrupted too; then hooks: a prompt a hook refuses
        // goes no further (its text is recorded, never sent).
        let interrupted = std::mem::take(&mut self.state.start_interrupted);
        let refused = if interrupted {
            Err(StopReason::Interrupted)
        } else {
            self.prompt_hooks(&text).await
        };
        if let Err(stop) = refused {
            self.out.emit(Event::TurnStarted { turn: number, text });
            self.out.done(Turn::refused(number, stop)).await;
            return;
        }
        // What the prompt names of the MCP servers' (a prompt, resources)
        // is brought in before the turn starts, so the rollout holds what
        // the model saw.
        // One that cannot be is refused as a hook's block is: its text (as
        // the hooks left it) is recorded, never sent.
        let hooked = text.clone();
        let mut images = images;
        let text = match self.expand(text, &mut images).await {
            Ok(text) => text,
            Err(why) => {
                self.out.emit(Event::TurnStarted {
                    turn: number,
                    text: hooked,
                });
                self.out.notice(NoticeLevel::Error, why);
                self.out
                    .done(Turn::refused(number, StopReason::Denied))
                    .await;
                return;
            }
        };
        self.out.emit(Event::TurnStarted {
            turn: number,
            text: text.clone(),
        });
        if !images.is_empty() {
            self.out.emit(Event::Attached { images });
        }
        self.state.turn_notes = match &fixed.memory {
            Some(memory) => memory.recall(&text, NOTES_RECALLED).await,
            None => Vec::new(),
        };
        self.mark_turn(number, &text).await;
        let mut title = match self.state.titled {
            false => Some(Pending::begin(fixed, &text).await),
            true => None,
        };
        self.state.titled = true;
        let done = match title.as_mut() {
            Some(pending) => pending.alongside(self.rounds(number)).await,
            None => self.rounds(number).await,
        };
        if let Some(pending) = title {
            // Before the turn is booked, so the session's cost includes it.
            let grace = (done.stop() != StopReason::Interrupted)
                .then_some(fixed.title_grace.as_ref())
                .flatten();
            let events = pending.finish(grace).await;
            self.out.emit_all(events);
        }
        if let Err(err) = fixed.world.store().turn_finished(fixed.config.id, number) {
            self.out.notice(
                NoticeLevel::Error,
                format!("the session record was not updated: {err}"),
            );
        }
        self.out.done(done).await;
    }

    /// The model rounds and tool calls of turn `number`, and a compaction
    /// it calls for: everything up to its booking and its `TurnDone`.
    async fn rounds(&mut self, number: u32) -> Turn<Done> {
        let fixed = self.fixed;
        let cfg = &fixed.config;
        let provider = fixed.world.provider();
        // The notes recalled for this turn ride in the volatile block,
        // after what is cached; so does the plan once a compaction has
        // summarised away the call that set it (before that the model sees
        // that call, and the system prompt stays as cached).
        let with_notes;
        let plan = self
            .out
            .history
            .plan_out_of_sight()
            .and_then(crate::own_tools::plan_section);
        let system = if self.state.turn_notes.is_empty() && plan.is_none() {
            &cfg.system
        } else {
            let mut system = cfg.system.clone();
            if !self.state.turn_notes.is_empty() {
                system
                    .volatile
                    .push_str(&crate::prompt::memory_section(&self.state.turn_notes));
            }
            if let Some(plan) = plan {
                system.volatile.push_str(&plan);
            }
            with_notes = system;
            &with_notes
        };
        // The tools of this turn: those that joined since the last one
        // first (a server that connected late), then one snapshot for all
        // its rounds.
        self.join_waiting();
        let tools = fixed.tools();
        let prefix = Prefix {
            provider: provider.name(),
            model: provider.model(),
            tier: self.current_mode().1,
            effort: cfg.effort,
            system,
            tools: &tools,
            workspace: &cfg.workspace,
            max_output_tokens: cfg.max_output_tokens,
        };
        let mut rounds = Rounds {
            cancel: CancelToken::new(),
            compacted_for_length: false,
            cut_before: false,
            limit: cfg.max_output_tokens,
            sent_back: 0,
        };
        let mut turn = Turn::begin(number, cfg.max_turns);
        let done = loop {
            let over = fixed
                .over_budget(|level, text| self.out.notice(level, text))
                .await;
            if let Some(over) = over {
                self.out.notice(NoticeLevel::Warn, over);
                break turn.stop(StopReason::Budget);
            }
            let (mut streaming, request) = self.next_request(turn, &prefix);
            rounds.limit = request.max_output_tokens;
            let streamed = self
                .stream_round(&mut streaming, request, &prefix, &rounds.cancel)
                .await;
            let running = match self.after_stream(streaming, streamed, &mut rounds).await {
                Round::Again(next) => {
                    turn = next;
                    continue;
                }
                Round::Over(done) => match self.at_the_end(done, &mut rounds).await {
                    Ok(next) => {
                        turn = next;
                        continue;
                    }
                    Err(done) => break done,
                },
                Round::Tools(running) => running,
            };
            let mut running = match self.cut_calls(running, &mut rounds) {
                Ok(running) => running,
                Err(done) => break done,
            };
            let stop = self.run_tools(&mut running, &rounds.cancel).await;
            match running.record(stop) {
                Ok(next) => turn = next,
                Err(done) => break done,
            }
        };
        self.end_of_rounds(&done, rounds.limit).await;
        done
    }

    /// The model ended the turn: `Stop` hooks may send it back to work
    /// (the reason they gave is what it reads next), a bounded number of
    /// times.
    async fn at_the_end(
        &mut self,
        done: Turn<Done>,
        rounds: &mut Rounds,
    ) -> Result<Turn<Assembling>, Turn<Done>> {
        if done.stop() != StopReason::EndTurn {
            return Err(done);
        }
        if rounds.sent_back >= MAX_SENT_BACK {
            self.out.notice(
                NoticeLevel::Warn,
                format!(
                    "Stop hooks sent the model back to work {MAX_SENT_BACK} times this turn; \
                     the turn ends here"
                ),
            );
            return Err(done);
        }
        match self.stop_hooks(rounds.sent_back > 0).await {
            Ok(None) => Err(done),
            Ok(Some(_)) => {
                rounds.sent_back += 1;
                done.reopen()
            }
            Err(PostStop::Hook(line)) => {
                self.out.notice(NoticeLevel::Warn, line);
                Err(done)
            }
            Err(PostStop::Interrupted) => Err(done.end(StopReason::Interrupted)),
        }
    }

    /// Streams one model call into `streaming`, emitting what it becomes,
    /// until it completes, fails or is interrupted.
    async fn stream_round(
        &mut self,
        streaming: &mut Turn<Streaming>,
        request: Request,
        prefix: &Prefix<'_>,
        cancel: &CancelToken,
    ) -> Streamed {
        let provider = self.fixed.world.provider();
        let mut stream = pin!(provider.stream(request, cancel.clone()));
        loop {
            tokio::select! {
                biased;
                sub = self.inbox.next_live() => {
                    if let MidTurn::Interrupt = self.mid_turn(sub, None) {
                        cancel.cancel();
                        return Streamed::Interrupted;
                    }
                }
                item = stream.next() => match item {
                    Some(Ok(event)) => {
                        if let Some(event) = streaming.apply(event, prefix) {
                            if let Event::Usage { usage, .. } = &event {
                                self.state.last_context = usage.input_tokens
                                    + usage.cache_read_tokens
                                    + usage.cache_write_tokens;
                            }
                            self.out.emit(event);
                        }
                        if streaming.is_complete() {
                            return Streamed::Finished;
                        }
                    }
                    Some(Err(err)) => return Streamed::Failed(err),
                    None => return Streamed::Failed(ProviderError::Failed(
                        "the model's stream ended before the response was complete".into(),
                    )),
                },
            }
        }
    }

    /// What a round's stream leads to: its calls, the end of the turn, or
    /// (over the context window, once) a compaction and the same call again.
    async fn after_stream(
        &mut self,
        streaming: Turn<Streaming>,
        streamed: Streamed,
        rounds: &mut Rounds,
    ) -> Round {
        let why = match streamed {
            Streamed::Finished => {
                return match streaming.finish() {
                    Next::Done(done) => Round::Over(done),
                    Next::Tools(running) => Round::Tools(running),
                };
            }
            Streamed::Interrupted => {
                let (events, done) = streaming.interrupt();
                self.out.emit_all(events);
                return Round::Over(done);
            }
            Streamed::Failed(ProviderError::ContextLength(why))
                if !rounds.compacted_for_length && streaming.is_empty() =>
            {
                rounds.compacted_for_length = true;
                match self.compact_for_length(&why).await {
                    Ok(()) => return Round::Again(streaming.restart()),
                    Err(said) => said,
                }
            }
            Streamed::Failed(err) => format!("the model call failed: {err}"),
        };
        self.out.notice(NoticeLevel::Error, why);
        let (events, done) = streaming.abandon(StopReason::Error, NOT_RUN);
        self.out.emit_all(events);
        Round::Over(done)
    }

    /// Over the window: summarises the earlier turns so the call can be
    /// made once more; else the error to say.
    async fn compact_for_length(&mut self, why: &str) -> Result<(), String> {
        let keep = self.fixed.config.context.keep_turns.max(1);
        if can_compact(&self.out.history, keep) {
            self.out.notice(
                NoticeLevel::Warn,
                format!("{why}; compacting the earlier turns and trying again"),
            );
            if self.compact(None, keep, false).await == CompactOutcome::Done {
                return Ok(());
            }
            return Err(format!("the model call failed: {why}"));
        }
        let nothing = if self.out.history.turn_starts().len() <= 1 {
            "this first prompt alone is over the model's context window, and there is nothing \
             earlier to compact"
                .to_owned()
        } else {
            format!(
                "nothing to compact: the earlier turns are within the last {keep} kept whole \
                 ([context] keep_turns) or already summarised"
            )
        };
        Err(format!("the model call failed: {why}; {nothing}"))
    }

    /// Calls the output limit cut off are answered without running; a
    /// second round in a row with one ends the turn.
    fn cut_calls(
        &mut self,
        running: Turn<RunningTools>,
        rounds: &mut Rounds,
    ) -> Result<Turn<RunningTools>, Turn<Done>> {
        let was_cut = !running.cut().is_empty();
        if was_cut {
            let names: Vec<String> = running
                .cut()
                .iter()
                .map(|c| format!("`{}`", c.name))
                .collect();
            let names = names.join(", ");
            if rounds.cut_before {
                // Twice in a row: the notice after the loop says it stopped.
                let why = "[not run: the answer was cut off at the output limit again]";
                let (events, done) = running.abandon_all(StopReason::MaxTokens, why);
                self.out.emit_all(events);
                return Err(done);
            }
            let limit = rounds.limit;
            self.out.notice(
                NoticeLevel::Warn,
                format!(
                    "the model's call to {names} was cut off at the output limit ({limit} tokens) \
                     and did not run; the model is asked to make smaller calls"
                ),
            );
            self.out.emit_all(running.cut_events());
        }
        rounds.cut_before = was_cut;
        Ok(running)
    }

    /// What is said when the rounds end, and the compaction a full context
    /// calls for.
    async fn end_of_rounds(&mut self, done: &Turn<Done>, limit: u32) {
        let cfg = &self.fixed.config;
        if done.stop() == StopReason::MaxTurns {
            let rounds = done.ctx().rounds;
            self.out.notice(
                NoticeLevel::Warn,
                format!(
                    "stopped after {rounds} model round{}: the --max-turns limit was reached",
                    if rounds == 1 { "" } else { "s" }
                ),
            );
        }
        if done.stop() == StopReason::MaxTokens {
            self.out.notice(
                NoticeLevel::Warn,
                format!(
                    "the model's answer was cut off at the output limit ({limit} tokens); the \
                     turn stops here"
                ),
            );
        }
        if let Some(window) = cfg.context_window.filter(|w| *w > 0)
            && self.state.last_context as f64 >= cfg.context.compact_at * window as f64
            && !matches!(done.stop(), StopReason::Interrupted | StopReason::Budget)
        {
            self.compact(None, cfg.context.keep_turns.max(1), false)
                .await;
        }
    }

    /// `text` with what it names brought in: a command or a skill, an MCP
    /// prompt or resources, files (each notice of that said; the images
    /// named join `images`), or why they cannot be. A command's `model` and `allowed-tools` hold for this turn. What
    /// a server sent is scrubbed of secret-shaped strings, as a tool's
    /// output is for the record; the person's own words are kept as typed.
    async fn expand(&mut self, text: String, images: &mut Vec<Image>) -> Result<String, String> {
        let fixed = self.fixed;
        let mut text = text;
        for expander in &fixed.expanders {
            let Some(expanded) = expander.expand(&text).await? else {
                continue;
            };
            for line in expanded.notices {
                self.out.notice(NoticeLevel::Warn, line);
            }
            if expanded.model.is_some() {
                self.state.turn_model = expanded.model;
            }
            images.extend(expanded.images);
            if !expanded.allowed_tools.is_empty() {
                let file = expanded.command_file.unwrap_or_default();
                let origin = crate::permission::Origin::Command(file);
                let base = self.state.turn_engine.as_ref().unwrap_or(&fixed.engine);
                match base.with_allowed(&expanded.allowed_tools, &origin) {
                    Ok(engine) => self.state.turn_engine = Some(std::sync::Arc::new(engine)),
                    Err(err) => self.out.notice(
                        NoticeLevel::Warn,
                        format!("{err}; this turn runs without the command's allowed tools"),
                    ),
                }
            }
            let (typed, sent) = match expanded.text.strip_prefix(text.as_str()) {
                Some(rest) => (text.as_str(), rest),
                None => ("", expanded.text.as_str()),
            };
            text = match crate::redact::scrub(sent) {
                std::borrow::Cow::Borrowed(_) => expanded.text,
                std::borrow::Cow::Owned(clean) => {
                    self.out.notice(
                        NoticeLevel::Security,
                        "what was brought in for this prompt held a secret-shaped string; it \
                         was redacted"
                            .to_owned(),
                    );
                    format!("{typed}{clean}")
                }
            };
        }
        Ok(text)
    }
}
