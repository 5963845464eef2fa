//! Cassettes: a real session's provider exchanges, written as a scenario.
//!
//! [`Recorder`] wraps the session's provider. Each call that completes is
//! appended to the cassette as one `[[turn]]` of the scripted provider's
//! scenario format: the text, thinking, tool calls (with their ids), stop
//! reason and usage the model sent, and an `expect` table drawn from the
//! request (the prompt it answered, or whether the tool results it saw
//! succeeded). Replaying the file with the scripted provider runs the same
//! session offline, and fails at the first call whose request differs in
//! those ways, so a user can turn a real session into a regression test.
//!
//! A call that fails for good is recorded as an `error` turn. A call cut off
//! by an interrupt is left out (with a comment), since nothing whole came
//! back. Each turn is written and flushed when its call ends, so a crash
//! keeps every finished exchange.
//!
//! The file is the scripted provider's own type, [`ScenarioFile`],
//! serialised by the toml crate: the header is a file that sets only
//! `model`, and each exchange is a file of one `[[turn]]`, appended. TOML
//! adds each `[[turn]]` to the one array, so the whole is the scenario of
//! every exchange, and it parses with the scenario parser because it is that
//! parser's type. Tool input TOML cannot hold (a `null`) goes as
//! `input_json` ([`ToolCallSpec::with_input`]). Comments (the header, the
//! model that served a turn) are written between the serialised parts.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cox_protocol::provider::{ContentBlock, ModelStop, ProviderError, Request, Role, StreamEvent};
use cox_protocol::types::Usage;
use cox_protocol::{CancelToken, Provider};
use cox_scripted::{Expect, ScenarioFile, ToolCallSpec, Turn, UsageSpec};
use futures::future::Either;
use futures::{Stream, StreamExt};
use serde_json::Value;

/// Where exchanges are written.
#[derive(Debug)]
struct Tape {
    file: std::fs::File,
    path: PathBuf,
    /// Exchanges written so far.
    written: u32,
    /// The first write error; later exchanges are not attempted.
    failed: Option<String>,
}

/// A provider that records what passes through it (or, built with
/// [`Recorder::passthrough`], only passes it through).
#[derive(Debug)]
pub struct Recorder<P> {
    inner: P,
    tape: Option<Arc<Mutex<Tape>>>,
}

impl<P: Provider> Recorder<P> {
    /// Forwards every call unchanged.
    #[must_use]
    pub fn passthrough(inner: P) -> Self {
        Self { inner, tape: None }
    }

    /// Records every call to a new cassette at `path` (replacing a file
    /// there).
    ///
    /// # Errors
    /// The file cannot be created: one line naming it.
    pub fn recording(inner: P, path: &Path) -> Result<Self, String> {
        let mut file = std::fs::File::create(path)
            .map_err(|e| format!("cannot create the cassette {}: {e}", path.display()))?;
        let header = header(path, inner.name(), inner.model())
            .map_err(|e| format!("cannot write the cassette {}: {e}", path.display()))?;
        file.write_all(header.as_bytes())
            .map_err(|e| format!("cannot write the cassette {}: {e}", path.display()))?;
        Ok(Self {
            inner,
            tape: Some(Arc::new(Mutex::new(Tape {
                file,
                path: path.to_owned(),
                written: 0,
                failed: None,
            }))),
        })
    }

    /// The first error writing the cassette, if any.
    #[must_use]
    pub fn error(&self) -> Option<String> {
        let tape = self.tape.as_ref()?.lock().ok()?;
        tape.failed.clone()
    }

    /// Exchanges written so far.
    #[must_use]
    pub fn written(&self) -> u32 {
        self.tape
            .as_ref()
            .and_then(|t| t.lock().ok().map(|t| t.written))
            .unwrap_or(0)
    }
}

impl<P: Provider> Provider for Recorder<P> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    /// While recording, no: the cassette is replayed by the scripted
    /// provider, which asks for no side call, so none may be on the tape.
    fn has_cheap_tier(&self) -> bool {
        self.tape.is_none() && self.inner.has_cheap_tier()
    }

    fn tier_model(&self, tier: cox_protocol::provider::Tier) -> Option<&str> {
        self.inner.tier_model(tier)
    }

    fn stream(
        &self,
        request: Request,
        cancel: CancelToken,
    ) -> impl Stream<Item = Result<StreamEvent, ProviderError>> + Send + 'static {
        let Some(tape) = self.tape.clone() else {
            return Either::Left(self.inner.stream(request, cancel));
        };
        let expect = expectation(&request);
        let inner = self.inner.stream(request, cancel);
        let state = (Box::pin(inner), Exchange::new(expect), tape, false);
        Either::Right(futures::stream::unfold(
            state,
            |(mut inner, mut exchange, tape, ended)| async move {
                if ended {
                    return None;
                }
                match inner.next().await {
                    Some(item) => {
                        let end = exchange.see(&item);
                        if end {
                            match exchange.render() {
                                Ok(text) => write(&tape, &text, true),
                                Err(e) => fail(&tape, &e),
                            }
                        }
                        Some((item, (inner, exchange, tape, end)))
                    }
                    None => {
                        if !exchange.finished {
                            write(
                                &tape,
                                "\n# a call cut off before it finished: not recorded\n",
                                false,
                            );
                        }
                        None
                    }
                }
            },
        ))
    }
}

/// What a cassette at `path` starts with: comments saying what it is and
/// how to replay it, then a scenario file that sets only `model`.
fn header(path: &Path, provider: &str, model: &str) -> Result<String, toml::ser::Error> {
    let file = ScenarioFile {
        model: Some(model.to_owned()),
        turn: Vec::new(),
        agent: Vec::new(),
    };
    Ok(format!(
        "# A cassette: the provider exchanges of a recorded cox session, one\n\
         # turn per model call. Replay it offline with\n\
         #   cox run --scenario {} -p \"<the same prompt>\"\n\
         # Recorded from provider {provider} (model {model}).\n\n\
         {}",
        path.display(),
        file.to_toml()?
    ))
}

/// Appends `text` and flushes; `exchange` when it is one recorded turn.
fn write(tape: &Mutex<Tape>, text: &str, exchange: bool) {
    let Ok(mut tape) = tape.lock() else { return };
    if tape.failed.is_some() {
        return;
    }
    let result = tape
        .file
        .write_all(text.as_bytes())
        .and_then(|()| tape.file.flush());
    match result {
        Ok(()) => tape.written += u32::from(exchange),
        Err(e) => tape.fail(&e),
    }
}

/// Records that an exchange could not be written; later ones are not tried.
fn fail(tape: &Mutex<Tape>, error: &dyn std::fmt::Display) {
    if let Ok(mut tape) = tape.lock() {
        tape.fail(error);
    }
}

impl Tape {
    fn fail(&mut self, error: &dyn std::fmt::Display) {
        if self.failed.is_none() {
            self.failed = Some(format!(
                "cannot write the cassette {}: {error}",
                self.path.display()
            ));
        }
    }
}

/// What the request shows that a replay should see again: the prompt it
/// answers, or whether the tool results it carries succeeded.
fn expectation(request: &Request) -> Expect {
    let Some(last) = request.messages.last() else {
        return Expect::default();
    };
    if last.role != Role::User {
        return Expect::default();
    }
    let results: Vec<bool> = last
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult { is_error, .. } => Some(!is_error),
            _ => None,
        })
        .collect();
    if !results.is_empty() {
        let first = results[0];
        let uniform = results.iter().all(|ok| *ok == first);
        return Expect {
            tool_result_ok: uniform.then_some(first),
            ..Expect::default()
        };
    }
    let text: String = last
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    // The first line is enough to recognise the prompt and survives
    // trailing whitespace a person may not retype.
    let line = text.lines().next().unwrap_or_default().trim();
    let line: String = line.chars().take(200).collect();
    Expect {
        user_text_contains: (!line.is_empty()).then_some(line),
        ..Expect::default()
    }
}

/// One call as it streams.
#[derive(Debug)]
struct Exchange {
    expect: Expect,
    model: Option<String>,
    text: String,
    thinking: String,
    /// id, name, input; `None` for a call the output limit cut off.
    calls: Vec<(String, String, Option<Value>)>,
    usage: Option<Usage>,
    stop: Option<ModelStop>,
    error: Option<String>,
    /// The error was the prompt being over the window.
    too_long: bool,
    finished: bool,
}

impl Exchange {
    fn new(expect: Expect) -> Self {
        Self {
            expect,
            model: None,
            text: String::new(),
            thinking: String::new(),
            calls: Vec::new(),
            usage: None,
            stop: None,
            error: None,
            too_long: false,
            finished: false,
        }
    }

    /// Folds one item in; true when the call is over.
    fn see(&mut self, item: &Result<StreamEvent, ProviderError>) -> bool {
        match item {
            Ok(StreamEvent::TextDelta(t)) => self.text.push_str(t),
            Ok(StreamEvent::ThinkingDelta(t)) => self.thinking.push_str(t),
            Ok(StreamEvent::ToolUse { id, name, input }) => {
                self.calls
                    .push((id.0.clone(), name.clone(), Some(input.clone())));
            }
            Ok(StreamEvent::ToolUseCut { id, name }) => {
                self.calls.push((id.0.clone(), name.clone(), None));
            }
            Ok(StreamEvent::Usage(u)) => {
                let total = self.usage.get_or_insert_with(Usage::default);
                total.add(u);
            }
            Ok(StreamEvent::Routed { model, .. }) => self.model = Some(model.clone()),
            // A provider's own search is not replayed: the scripted model
            // answers with the text that came of it.
            Ok(StreamEvent::Server(_) | StreamEvent::Citations(_)) => {}
            Ok(StreamEvent::Retrying { discarded, .. }) => {
                if *discarded {
                    self.text.clear();
                    self.thinking.clear();
                    self.calls.clear();
                }
            }
            Ok(StreamEvent::Done(stop)) => {
                self.stop = Some(*stop);
                self.finished = true;
                return true;
            }
            Err(err) => {
                self.error = Some(match err {
                    ProviderError::ContextLength(message) => {
                        self.too_long = true;
                        message.clone()
                    }
                    other => other.to_string(),
                });
                self.finished = true;
                return true;
            }
        }
        false
    }

    /// The exchange as it goes on the tape: a comment naming the model
    /// that served it, if one did, then a file of this one `[[turn]]`.
    fn render(&self) -> Result<String, toml::ser::Error> {
        let served = match &self.model {
            Some(model) => format!("\n# served by {model}\n"),
            None => "\n".to_owned(),
        };
        let file = ScenarioFile {
            model: None,
            turn: vec![self.turn()],
            agent: Vec::new(),
        };
        Ok(served + &file.to_toml()?)
    }

    /// The scripted turn that replays this exchange.
    fn turn(&self) -> Turn {
        let expect = self.expect.clone();
        if let Some(error) = &self.error {
            return Turn {
                expect,
                ..Turn::failed(error.clone(), self.too_long)
            };
        }
        let stop = self.stop.unwrap_or(ModelStop::EndTurn);
        let tool_call = self
            .calls
            .iter()
            .map(|(id, name, input)| match input {
                Some(input) => ToolCallSpec::with_input(id.clone(), name.clone(), input),
                None => ToolCallSpec::cut_off(id.clone(), name.clone()),
            })
            .collect();
        Turn {
            text: (!self.text.is_empty()).then(|| self.text.clone()),
            thinking: (!self.thinking.is_empty()).then(|| self.thinking.clone()),
            stop: Some(stop),
            usage: self.usage.as_ref().map(|u| UsageSpec {
                input_tokens: Some(u.input_tokens),
                output_tokens: Some(u.output_tokens),
                cache_read_tokens: Some(u.cache_read_tokens),
                cache_write_tokens: Some(u.cache_write_tokens),
            }),
            expect,
            tool_call,
            ..Turn::default()
        }
    }
}

#[cfg(test)]
mod tests;
