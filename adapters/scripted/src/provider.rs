//! The provider that replays a scenario, one turn per call.
//!
//! Invariants:
//! - each `stream()` call consumes exactly one turn, at the moment it is
//!   called, whatever happens to the stream afterwards; the cursor is atomic
//!   so the provider can be shared by reference;
//! - a turn's expectations are checked before anything is streamed, so a
//!   failed expectation is the stream's first and only item;
//! - the stream owns everything it yields (`Send + 'static`) and, once the
//!   cancellation token fires, yields nothing more: no `Done`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use cox_protocol::provider::{ModelStop, ProviderError, Request, StreamEvent};
use cox_protocol::types::Usage;
use cox_protocol::{CallId, CancelToken, Provider};
use futures::Stream;
use serde_json::Value;

use crate::scenario::{Scenario, Turn};

/// What a scripted stream yields.
type Item = Result<StreamEvent, ProviderError>;

/// A [`Provider`] that answers each call with the scenario's next turn.
///
/// Usage a turn does not script is estimated: input tokens are the byte
/// length of the request serialised as JSON divided by 4, output tokens are
/// the characters of the turn's `text` divided by 4; cache counts are 0.
#[derive(Debug)]
pub struct ScriptedProvider {
    scenario: Scenario,
    /// How many times `stream` has been called.
    calls: AtomicUsize,
    /// Every request received, when asked to keep them.
    requests: Option<std::sync::Arc<std::sync::Mutex<Vec<Request>>>>,
}

impl ScriptedProvider {
    /// A provider at the scenario's first turn.
    #[must_use]
    pub fn new(scenario: Scenario) -> Self {
        Self {
            scenario,
            calls: AtomicUsize::new(0),
            requests: None,
        }
    }

    /// The same provider, keeping every request it receives in `log` (for
    /// tests of the exact bytes a session sends).
    #[must_use]
    pub fn with_request_log(mut self, log: std::sync::Arc<std::sync::Mutex<Vec<Request>>>) -> Self {
        self.requests = Some(log);
        self
    }

    /// The scenario being replayed.
    #[must_use]
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// How many scripted turns have been consumed (never more than the
    /// scenario has, even if the model was called more often).
    #[must_use]
    pub fn turns_used(&self) -> usize {
        self.calls
            .load(Ordering::SeqCst)
            .min(self.scenario.turns.len())
    }

    /// Everything turn `number` (1-based) streams in answer to `request`.
    fn play(&self, turn: &Turn, number: usize, request: &Request) -> Vec<Item> {
        if let Err(failed) = turn.expect.check(request) {
            let origin = self.scenario.origin();
            return vec![Err(ProviderError::Scenario(format!(
                "scenario {origin} turn {number}: {failed}"
            )))];
        }
        if let Some(error) = &turn.error {
            let text = error.get_ref().clone();
            let kind = turn.error_kind.as_ref().map(|k| k.get_ref().as_str());
            return vec![Err(if kind == Some("context_length") {
                ProviderError::ContextLength(text)
            } else {
                ProviderError::Failed(text)
            })];
        }

        let chunk = turn.chunk_chars.as_ref().map(|c| *c.get_ref());
        let mut events = Vec::new();
        if let Some(thinking) = &turn.thinking {
            events.extend(
                pieces(thinking, chunk)
                    .into_iter()
                    .map(StreamEvent::ThinkingDelta),
            );
        }
        let text = turn.text.as_deref().unwrap_or("");
        events.extend(pieces(text, chunk).into_iter().map(StreamEvent::TextDelta));
        for (index, call) in turn.tool_call.iter().enumerate() {
            let id = call
                .id
                .clone()
                .unwrap_or_else(|| format!("toolu_{number}_{}", index + 1));
            let name = call.name.get_ref().clone();
            events.push(if call.cut.as_ref().is_some_and(|c| *c.get_ref()) {
                StreamEvent::ToolUseCut {
                    id: CallId(id),
                    name,
                }
            } else {
                StreamEvent::ToolUse {
                    id: CallId(id),
                    name,
                    input: Value::Object(call.input.clone()),
                }
            });
        }
        let scripted = turn.usage.unwrap_or_default();
        events.push(StreamEvent::Usage(Usage {
            input_tokens: scripted
                .input_tokens
                .unwrap_or_else(|| estimate_input(request)),
            output_tokens: scripted
                .output_tokens
                .unwrap_or((text.chars().count() / 4) as u64),
            cache_read_tokens: scripted.cache_read_tokens.unwrap_or(0),
            cache_write_tokens: scripted.cache_write_tokens.unwrap_or(0),
            web_searches: 0,
        }));
        let stop = turn.stop.unwrap_or(if turn.tool_call.is_empty() {
            ModelStop::EndTurn
        } else {
            ModelStop::ToolUse
        });
        events.push(StreamEvent::Done(stop));
        events.into_iter().map(Ok).collect()
    }
}

impl From<Scenario> for ScriptedProvider {
    fn from(scenario: Scenario) -> Self {
        Self::new(scenario)
    }
}

impl Provider for ScriptedProvider {
    fn name(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        self.scenario.model()
    }

    fn stream(
        &self,
        request: Request,
        cancel: CancelToken,
    ) -> impl Stream<Item = Item> + Send + 'static {
        let number = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(log) = &self.requests
            && let Ok(mut log) = log.lock()
        {
            log.push(request.clone());
        }
        let (items, delay) = match self.scenario.turns.get(number - 1) {
            Some(turn) => (
                self.play(turn, number, &request),
                Duration::from_millis(turn.delay_ms),
            ),
            None => {
                let message = format!(
                    "scenario {} has no turn {number}: the model was called {number} times but the scenario scripts only {}",
                    self.scenario.origin(),
                    self.scenario.turns.len()
                );
                (vec![Err(ProviderError::Scenario(message))], Duration::ZERO)
            }
        };
        replay(items.into(), delay, cancel)
    }
}

/// Yields `items` in order, sleeping `delay` before each, until `cancel`.
fn replay(
    items: VecDeque<Item>,
    delay: Duration,
    cancel: CancelToken,
) -> impl Stream<Item = Item> + Send + 'static {
    futures::stream::unfold((items, cancel), move |(mut items, cancel)| async move {
        if cancel.is_cancelled() {
            return None;
        }
        let item = items.pop_front()?;
        if !delay.is_zero() {
            tokio::select! {
                biased;
                () = cancel.cancelled() => return None,
                () = tokio::time::sleep(delay) => {}
            }
        }
        Some((item, (items, cancel)))
    })
}

/// A rough token count for a request: its JSON size in bytes over 4.
fn estimate_input(request: &Request) -> u64 {
    let bytes = serde_json::to_string(request).map_or(0, |json| json.len());
    (bytes / 4) as u64
}

/// Splits `text` into stream deltas: `chunk` characters each, or by default
/// one word plus the whitespace after it (leading whitespace joins the first
/// word). The pieces always concatenate back to `text`.
pub(crate) fn pieces(text: &str, chunk: Option<usize>) -> Vec<String> {
    if let Some(size) = chunk {
        let chars: Vec<char> = text.chars().collect();
        return chars
            .chunks(size.max(1))
            .map(|c| c.iter().collect())
            .collect();
    }
    let mut out = Vec::new();
    let mut current = String::new();
    let mut has_word = false;
    let mut after_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            after_space = true;
        } else {
            if after_space && has_word {
                out.push(std::mem::take(&mut current));
            }
            after_space = false;
            has_word = true;
        }
        current.push(c);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_pieces_keep_their_following_whitespace() {
        assert_eq!(
            pieces("Created hello.txt.", None),
            ["Created ", "hello.txt."]
        );
        assert_eq!(pieces("  a b\n\nc ", None), ["  a ", "b\n\n", "c "]);
        assert!(pieces("", None).is_empty());
    }

    #[test]
    fn chunked_pieces_count_characters_not_bytes() {
        assert_eq!(pieces("héllo wörld", Some(4)), ["héll", "o wö", "rld"]);
    }

    #[test]
    fn pieces_concatenate_back_to_the_text() {
        for text in [
            "",
            " ",
            "one",
            "  lead and trail  ",
            "tabs\tand\nnew lines\r\n",
            "ünïcode ✓ ok",
        ] {
            for chunk in [None, Some(1), Some(3), Some(100)] {
                assert_eq!(pieces(text, chunk).concat(), text, "{text:?} {chunk:?}");
            }
        }
    }
}
