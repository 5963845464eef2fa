//! One user turn as a typestate: `Turn<Assembling>` → `Turn<Streaming>` →
//! `Turn<RunningTools>` → back to `Turn<Assembling>`, or → `Turn<Done>`.
//!
//! Each transition consumes the turn and returns the next phase, so running
//! tools before the model answered, or streaming after the turn ended, does
//! not compile. The phase types carry what the phase gathered and nothing
//! generic: only the driver in [`crate::session`] knows the provider, store
//! and sandbox, so their bounds stay in one place.
//!
//! This module is pure: it turns stream events into session events; the
//! conversation is written by folding those events ([`crate::history`]),
//! and the driver does all awaiting.
//!
//! A turn that has not streamed has no calls to run:
//!
//! ```compile_fail
//! use cox_core::turn::Turn;
//! let turn = Turn::begin(1, None);
//! let _ = turn.calls(); // only `Turn<RunningTools>` has calls
//! ```
//!
//! and a turn that ended emits its closing event once, then is gone:
//!
//! ```compile_fail
//! use cox_core::turn::Turn;
//! use cox_protocol::types::StopReason;
//! let done = Turn::refused(1, StopReason::Denied);
//! let closing = done.into_event();
//! let again = done.into_event(); // `done` was consumed
//! ```
//!
//! while the same code without the offending line compiles (rustdoc on
//! stable does not check which error a `compile_fail` block fails with, so
//! each is this twin plus one line):
//!
//! ```
//! use cox_core::turn::Turn;
//! use cox_protocol::types::{Event, StopReason};
//! let turn = Turn::begin(1, None);
//! assert_eq!(turn.ctx().number, 1);
//! let done = Turn::refused(1, StopReason::Denied);
//! let closing = done.into_event();
//! assert!(matches!(closing, Event::TurnDone { stop: StopReason::Denied }));
//! ```

use std::collections::BTreeSet;
use std::sync::Arc;

use cox_protocol::provider::{Effort, Message, ModelStop, Request, StreamEvent, SystemParts, Tier};
use cox_protocol::tool::Workspace;
use cox_protocol::types::{Event, StopReason, ToolCall, ToolResult, Usage};

use crate::tool_set::ToolSet;

/// The parts of a request that do not change within a session.
#[derive(Debug)]
pub struct Prefix<'a> {
    pub provider: &'a str,
    pub model: &'a str,
    /// The tier main turns run on.
    pub tier: Tier,
    /// The effort main turns ask for (the router clamps it).
    pub effort: Option<Effort>,
    pub system: &'a SystemParts,
    pub tools: &'a ToolSet,
    pub workspace: &'a Workspace,
    pub max_output_tokens: u32,
}

/// Facts every phase shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TurnCtx {
    /// The user turn's number within the session, from 1.
    pub number: u32,
    /// Model calls made so far in this turn.
    pub rounds: u32,
    /// Stop with `max_turns` after this many rounds that asked for tools.
    pub max_rounds: Option<u32>,
}

/// Ready to build the next request.
#[derive(Debug)]
pub struct Assembling;

/// The model is answering; what it said so far.
#[derive(Debug, Default)]
pub struct Streaming {
    text: String,
    thinking: String,
    calls: Vec<ToolCall>,
    /// Calls the output limit cut off: in the history, never run.
    cut: Vec<ToolCall>,
    usage: Usage,
    stop: Option<ModelStop>,
    /// What a router said serves this call: provider, model, effort.
    served: Option<(String, String, Option<Effort>)>,
}

/// The model asked for these calls, in this order.
#[derive(Debug)]
pub struct RunningTools {
    calls: Vec<ToolCall>,
    /// The calls the output limit cut off, answered [`CUT`] without
    /// running.
    cut: Vec<ToolCall>,
}

/// The turn is over.
#[derive(Debug)]
pub struct Done {
    stop: StopReason,
}

/// A turn in phase `S`.
#[derive(Debug)]
pub struct Turn<S> {
    ctx: TurnCtx,
    phase: S,
}

/// Where a finished model response leads.
#[derive(Debug)]
pub enum Next {
    Tools(Turn<RunningTools>),
    Done(Turn<Done>),
}

impl<S> Turn<S> {
    /// The shared facts.
    #[must_use]
    pub fn ctx(&self) -> TurnCtx {
        self.ctx
    }

    /// Ends the turn now for a reason found outside the phase (an error,
    /// a budget cap, a blocked prompt). Any phase may end this way.
    #[must_use]
    pub fn end(self, stop: StopReason) -> Turn<Done> {
        Turn {
            ctx: self.ctx,
            phase: Done { stop },
        }
    }
}

impl Turn<Done> {
    /// A turn that ends before it starts (a hook blocked the prompt).
    #[must_use]
    pub fn refused(number: u32, stop: StopReason) -> Self {
        Self {
            ctx: TurnCtx {
                number,
                rounds: 0,
                max_rounds: None,
            },
            phase: Done { stop },
        }
    }
}

impl Turn<Assembling> {
    /// Starts turn `number` (its `TurnStarted` puts the prompt in).
    #[must_use]
    pub fn begin(number: u32, max_rounds: Option<u32>) -> Self {
        Self {
            ctx: TurnCtx {
                number,
                rounds: 0,
                max_rounds,
            },
            phase: Assembling,
        }
    }

    /// Ends the turn before the next model call (a budget cap, for one).
    #[must_use]
    pub fn stop(self, stop: StopReason) -> Turn<Done> {
        Turn {
            ctx: self.ctx,
            phase: Done { stop },
        }
    }

    /// Builds the provider-neutral request: stable parts first, then the
    /// conversation; the tools are the set less the deferred ones not in
    /// `found`.
    #[must_use]
    pub fn request(
        self,
        messages: Arc<Vec<Arc<Message>>>,
        prefix: &Prefix<'_>,
        found: &BTreeSet<String>,
    ) -> (Turn<Streaming>, Request) {
        let request = Request {
            model: prefix.model.to_owned(),
            tier: prefix.tier,
            effort: prefix.effort,
            model_override: None,
            system: prefix.system.clone(),
            tools: prefix.tools.specs(found),
            messages,
            max_output_tokens: prefix.max_output_tokens,
        };
        let ctx = TurnCtx {
            rounds: self.ctx.rounds + 1,
            ..self.ctx
        };
        (
            Turn {
                ctx,
                phase: Streaming::default(),
            },
            request,
        )
    }
}

impl Turn<Streaming> {
    /// Folds one stream event in and returns the session event it becomes.
    pub fn apply(&mut self, event: StreamEvent, prefix: &Prefix<'_>) -> Option<Event> {
        let phase = &mut self.phase;
        match event {
            StreamEvent::TextDelta(text) => {
                phase.text.push_str(&text);
                Some(Event::TextDelta { text })
            }
            StreamEvent::ThinkingDelta(text) => {
                phase.thinking.push_str(&text);
                Some(Event::ThinkingDelta { text })
            }
            StreamEvent::ToolUse { id, name, input } => {
                let call = prefix.tools.classify(id, name, input, prefix.workspace);
                phase.calls.push(call.clone());
                Some(Event::ToolCallRequested { call })
            }
            StreamEvent::ToolUseCut { id, name } => {
                // Its input never arrived whole: the history holds it with
                // none, and it is answered without running.
                let input = serde_json::Value::Object(serde_json::Map::new());
                let call = prefix.tools.classify(id, name, input, prefix.workspace);
                phase.cut.push(call.clone());
                Some(Event::ToolCallRequested { call })
            }
            StreamEvent::Usage(usage) => {
                phase.usage.add(&usage);
                let (provider, model, effort) = phase.served.clone().unwrap_or_else(|| {
                    (
                        prefix.provider.to_owned(),
                        prefix.model.to_owned(),
                        prefix.effort,
                    )
                });
                Some(Event::Usage {
                    provider,
                    model,
                    tier: prefix.tier,
                    job: cox_protocol::types::Job::Main,
                    effort,
                    usage,
                })
            }
            StreamEvent::Routed {
                provider,
                model,
                effort,
            } => {
                phase.served = Some((provider, model, effort));
                None
            }
            StreamEvent::Server(block) => Some(Event::ServerTool { block }),
            StreamEvent::Citations(sources) => Some(Event::Citations { sources }),
            StreamEvent::Done(stop) => {
                phase.stop = Some(stop);
                None
            }
            StreamEvent::Retrying {
                attempt,
                of,
                delay_ms,
                reason,
                discarded,
            } => {
                if discarded {
                    // The answer starts again: nothing the broken attempt
                    // said joins the history, and none of its calls run.
                    phase.text.clear();
                    phase.thinking.clear();
                    phase.calls.clear();
                    phase.cut.clear();
                    phase.stop = None;
                }
                Some(Event::Retry {
                    attempt,
                    of,
                    delay_ms,
                    reason,
                    discarded,
                })
            }
        }
    }

    /// Nothing of an answer has arrived yet (no text, thinking or call).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.phase.text.is_empty()
            && self.phase.thinking.is_empty()
            && self.phase.calls.is_empty()
            && self.phase.cut.is_empty()
    }

    /// The call is to be made again (after compaction): back to building
    /// the request, with nothing of this attempt kept.
    #[must_use]
    pub fn restart(self) -> Turn<Assembling> {
        // The failed call does not count against --max-turns.
        let ctx = TurnCtx {
            rounds: self.ctx.rounds.saturating_sub(1),
            ..self.ctx
        };
        Turn {
            ctx,
            phase: Assembling,
        }
    }

    /// Whether the provider said the response is complete.
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.phase.stop.is_some()
    }

    /// The response is complete: its calls (if any) are next. An answer
    /// with no call that stopped at the output limit ends the turn with
    /// [`StopReason::MaxTokens`].
    #[must_use]
    pub fn finish(self) -> Next {
        let at_limit = self.phase.stop == Some(ModelStop::MaxTokens);
        let running = self.into_reply();
        if !running.phase.calls.is_empty() || !running.phase.cut.is_empty() {
            Next::Tools(running)
        } else if at_limit {
            Next::Done(running.end(StopReason::MaxTokens))
        } else {
            Next::Done(running.end(StopReason::EndTurn))
        }
    }

    /// The calls of what the model said (maybe none) are what is left to
    /// answer.
    fn into_reply(self) -> Turn<RunningTools> {
        let Streaming { calls, cut, .. } = self.phase;
        let running = RunningTools { calls, cut };
        Turn {
            ctx: self.ctx,
            phase: running,
        }
    }

    /// The stream was interrupted: every call the partial answer asked for
    /// is answered as not run, and the turn ends.
    #[must_use]
    pub fn interrupt(self) -> (Vec<Event>, Turn<Done>) {
        self.abandon(StopReason::Interrupted, INTERRUPTED)
    }

    /// The stream ended early (interrupted, or the provider failed): every
    /// call the partial answer asked for is answered `why`, and the turn
    /// ends with `stop`. The conversation stays valid: every tool use has
    /// its result.
    #[must_use]
    pub fn abandon(self, stop: StopReason, why: &str) -> (Vec<Event>, Turn<Done>) {
        self.into_reply().abandon_all(stop, why)
    }
}

/// The text a call that never finished returns to the model.
pub const INTERRUPTED: &str = "[interrupted by the user before this call finished]";

/// What a call the output limit cut off returns to the model.
pub const CUT: &str = "[not run: this call was cut off at the output limit before its input was \
                       complete. Make smaller calls: split large content across several calls.]";

impl Turn<RunningTools> {
    /// The calls to run, in the order the model asked for them.
    #[must_use]
    pub fn calls(&self) -> &[ToolCall] {
        &self.phase.calls
    }

    /// The calls the output limit cut off: answered, never run.
    #[must_use]
    pub fn cut(&self) -> &[ToolCall] {
        &self.phase.cut
    }

    /// The result event of each cut call ([`CUT`]), for the surfaces; the
    /// conversation gets the same results from these events.
    #[must_use]
    pub fn cut_events(&self) -> Vec<Event> {
        self.phase
            .cut
            .iter()
            .map(|c| Event::ToolCallDone {
                call_id: c.id.clone(),
                result: ToolResult::error(CUT),
            })
            .collect()
    }

    /// Replaces a call after a person edited its input, re-classified (its
    /// `ToolCallRequested` again tells the conversation the input that
    /// runs).
    pub fn replace_call(&mut self, index: usize, call: ToolCall) {
        if let Some(slot) = self.phase.calls.get_mut(index) {
            *slot = call;
        }
    }

    /// The calls are answered (their `ToolCallDone` events carry the
    /// results). Then the model is asked again, unless the round limit is
    /// reached or `stop` says the turn must end here.
    pub fn record(self, stop: Option<StopReason>) -> Result<Turn<Assembling>, Turn<Done>> {
        if let Some(stop) = stop {
            return Err(Turn {
                ctx: self.ctx,
                phase: Done { stop },
            });
        }
        match self.ctx.max_rounds {
            Some(max) if self.ctx.rounds >= max => Err(Turn {
                ctx: self.ctx,
                phase: Done {
                    stop: StopReason::MaxTurns,
                },
            }),
            _ => Ok(Turn {
                ctx: self.ctx,
                phase: Assembling,
            }),
        }
    }

    /// Every call is answered `why` (a cut one [`CUT`]); the turn ends
    /// with `stop`.
    #[must_use]
    pub fn abandon_all(self, stop: StopReason, why: &str) -> (Vec<Event>, Turn<Done>) {
        let mut events: Vec<Event> = self
            .phase
            .calls
            .iter()
            .map(|c| Event::ToolCallDone {
                call_id: c.id.clone(),
                result: ToolResult::error(why),
            })
            .collect();
        events.extend(self.cut_events());
        let done = match self.record(Some(stop)) {
            Ok(next) => next.end(stop),
            Err(done) => done,
        };
        (events, done)
    }
}

impl Turn<Done> {
    /// A turn the model ended on its own goes on after all (a `Stop` hook
    /// refused its end): back to building a request, unless the round
    /// limit is reached or it ended another way (then it stays done).
    pub fn reopen(self) -> Result<Turn<Assembling>, Turn<Done>> {
        let spent = self
            .ctx
            .max_rounds
            .is_some_and(|max| self.ctx.rounds >= max);
        if self.phase.stop != StopReason::EndTurn || spent {
            return Err(self);
        }
        Ok(Turn {
            ctx: self.ctx,
            phase: Assembling,
        })
    }

    /// Why the turn ended.
    #[must_use]
    pub fn stop(&self) -> StopReason {
        self.phase.stop
    }

    /// The closing event. Consumes the turn: nothing of it can follow.
    #[must_use]
    pub fn into_event(self) -> Event {
        Event::TurnDone {
            stop: self.phase.stop,
        }
    }
}

#[cfg(test)]
mod tests;
