//! Compaction: every turn but the last few summarised on the cheap tier;
//! from then on requests carry the summary instead of those turns'
//! messages. The conversation is kept whole (append-only): the
//! `Compacted` event says which turns the summary stands for, and the fold
//! turns that into the compaction in force, live and on resume alike. A
//! `[budget]` cap already reached stops it, like any call.
//!
//! [`SideReply`] folds the stream of a cheap-tier call (this summary, the
//! session's title) into its text and the events that book it.

use std::pin::pin;
use std::sync::Arc;

use cox_protocol::provider::{Message, Request, StreamEvent, SystemParts, Tier};
use cox_protocol::types::{Event, Job, NoticeLevel, Submission};
use cox_protocol::{CancelToken, Provider};
use futures::{Stream, StreamExt};

use super::Driver;
use crate::context::{self, Compaction};
use crate::history::History;
use crate::world::World;

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
/// first kept turn, and the conversation from `since` to `until`; `None`
/// when there is nothing before the turns to keep (or it is summarised
/// already).
fn span(history: &History, keep: u32) -> Option<(u32, usize, usize)> {
    let keep = usize::try_from(keep.max(1)).unwrap_or(usize::MAX);
    let starts = history.turn_starts();
    if starts.len() <= keep {
        return None;
    }
    let (first_kept, until) = starts[starts.len() - keep];
    let since = history.compaction().map_or(0, |c| c.until);
    (until > since).then_some((first_kept, until, since))
}

/// Whether a compaction with this `keep` would have anything to summarise.
pub(super) fn can_compact(history: &History, keep: u32) -> bool {
    span(history, keep).is_some()
}

/// A call on the cheap tier: `instructions` as the system prompt, `text`
/// as the one message, no tools.
pub(super) fn side_request(
    provider: &impl Provider,
    instructions: &str,
    text: String,
    max_output_tokens: u32,
) -> Request {
    Request {
        model: provider.model().to_owned(),
        tier: Tier::Cheap,
        effort: None,
        model_override: None,
        system: SystemParts {
            prompt: instructions.to_owned(),
            instructions: String::new(),
            volatile: String::new(),
        },
        tools: Vec::new(),
        messages: Arc::new(vec![Arc::new(Message::user_text(text))]),
        max_output_tokens,
    }
}

/// The text of a cheap-tier call as it streams, and who served it.
pub(super) struct SideReply {
    pub(super) text: String,
    served: (String, String, Option<cox_protocol::provider::Effort>),
    job: Job,
}

impl SideReply {
    pub(super) fn new(provider: &impl Provider, job: Job) -> Self {
        Self {
            text: String::new(),
            served: (
                provider.name().to_owned(),
                provider.model().to_owned(),
                None,
            ),
            job,
        }
    }

    /// Folds one stream event in: the `Usage` and `Retry` events it makes,
    /// if any; `Err(())` at the end of the answer.
    pub(super) fn apply(&mut self, event: StreamEvent) -> Result<Option<Event>, ()> {
        Ok(match event {
            StreamEvent::TextDelta(text) => {
                self.text.push_str(&text);
                None
            }
            StreamEvent::Routed {
                provider,
                model,
                effort,
            } => {
                self.served = (provider, model, effort);
                None
            }
            StreamEvent::Usage(usage) => Some(Event::Usage {
                provider: self.served.0.clone(),
                model: self.served.1.clone(),
                tier: Tier::Cheap,
                job: self.job,
                effort: self.served.2,
                usage,
            }),
            StreamEvent::Retrying {
                attempt,
                of,
                delay_ms,
                reason,
                discarded,
            } => {
                if discarded {
                    self.text.clear();
                }
                Some(Event::Retry {
                    attempt,
                    of,
                    delay_ms,
                    reason,
                    discarded,
                })
            }
            StreamEvent::Done(_) => return Err(()),
            StreamEvent::ThinkingDelta(_)
            | StreamEvent::ToolUse { .. }
            | StreamEvent::ToolUseCut { .. }
            | StreamEvent::Server(_)
            | StreamEvent::Citations(_) => None,
        })
    }
}

impl<W, I, F> Driver<'_, W, I, F>
where
    W: World,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    /// Summarises every turn but the last `keep` (at least one).
    pub(super) async fn compact(
        &mut self,
        focus: Option<&str>,
        keep: u32,
        manual: bool,
    ) -> CompactOutcome {
        let fixed = self.fixed;
        self.out.history.settle();
        if span(&self.out.history, keep).is_none() {
            return CompactOutcome::Nothing;
        }
        if let Some(why) = self.pre_compact_hooks(manual, focus).await {
            self.out
                .notice(NoticeLevel::Warn, format!("not compacting: {why}"));
            return CompactOutcome::Failed;
        }
        let Some((first_kept, until, since)) = span(&self.out.history, keep) else {
            return CompactOutcome::Nothing;
        };
        let over = fixed
            .over_budget(|level, text| self.out.notice(level, text))
            .await;
        if let Some(over) = over {
            self.out
                .notice(NoticeLevel::Warn, format!("not compacting: {over}"));
            return CompactOutcome::Failed;
        }
        let history = &self.out.history;
        let dropped: Vec<u32> = history
            .turn_starts()
            .iter()
            .filter(|(turn, index)| *turn < first_kept && *index >= since)
            .map(|(turn, _)| *turn)
            .collect();
        let mut earlier: Vec<Arc<Message>> = Vec::new();
        if let Some(previous) = history.compaction() {
            earlier.push(Arc::new(Message::user_text(format!(
                "[Summary of what came before]\n{}",
                previous.summary
            ))));
        }
        earlier.extend_from_slice(&history.messages()[since..until]);
        let provider = fixed.world.provider();
        let request = side_request(
            provider,
            context::SUMMARY_PROMPT,
            context::transcript(&earlier, focus),
            2_000,
        );
        let cancel = CancelToken::new();
        let mut stream = pin!(provider.stream(request, cancel.clone()));
        let mut reply = SideReply::new(provider, Job::Compact);
        loop {
            // An interrupt stops the summary; anything else waits its turn.
            let item = tokio::select! {
                biased;
                sub = self.inbox.next_live() => {
                    if sub == Submission::Interrupt {
                        cancel.cancel();
                        self.out.notice(
                            NoticeLevel::Info,
                            "compaction interrupted; the history was kept whole".into(),
                        );
                        return CompactOutcome::Failed;
                    }
                    self.inbox.queue.push_back(sub);
                    continue;
                }
                item = stream.next() => item,
            };
            let Some(item) = item else { break };
            match item.map(|event| reply.apply(event)) {
                Ok(Ok(Some(event))) => self.out.emit(event),
                Ok(Ok(None)) => {}
                Ok(Err(())) => break,
                Err(err) => {
                    self.out
                        .notice(NoticeLevel::Warn, format!("compaction failed: {err}"));
                    return CompactOutcome::Failed;
                }
            }
        }
        let summary = reply.text.trim().to_owned();
        if summary.is_empty() {
            self.out.notice(
                NoticeLevel::Warn,
                "compaction failed: the summary came back empty".into(),
            );
            return CompactOutcome::Failed;
        }
        let compaction = Compaction { until, summary };
        let after_bytes: usize = compaction
            .apply(self.out.history.messages())
            .iter()
            .map(|m| serde_json::to_string(m).map_or(0, |t| t.len()))
            .sum::<usize>()
            + fixed.config.system.prompt.len()
            + fixed.config.system.instructions.len();
        // The fold takes the compaction from this event.
        self.out.emit(Event::Compacted {
            summary: compaction.summary,
            dropped,
            before_tokens: self.state.last_context,
            after_tokens: (after_bytes / 4) as u64,
        });
        CompactOutcome::Done
    }
}
