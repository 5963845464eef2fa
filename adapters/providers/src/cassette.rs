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
//! keeps every finished exchange. The file is TOML; every string is written
//! as a basic string (a JSON string literal is one), and tool input as an
//! inline table, or as `input_json` when it holds a `null`, which TOML
//! cannot.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cox_protocol::provider::{ContentBlock, ModelStop, ProviderError, Request, Role, StreamEvent};
use cox_protocol::types::Usage;
use cox_protocol::{CancelToken, Provider};
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
        let header = format!(
            "# A cassette: the provider exchanges of a recorded cox session, one\n\
             # turn per model call. Replay it offline with\n\
             #   cox run --scenario {} -p \"<the same prompt>\"\n\
             # Recorded from provider {} (model {}).\n\n\
             model = {}\n",
            path.display(),
            inner.name(),
            inner.model(),
            string(inner.model())
        );
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
                            write(&tape, &exchange.render());
                        }
                        Some((item, (inner, exchange, tape, end)))
                    }
                    None => {
                        if !exchange.finished {
                            write(
                                &tape,
                                "\n# a call cut off before it finished: not recorded\n",
                            );
                        }
                        None
                    }
                }
            },
        ))
    }
}

fn write(tape: &Mutex<Tape>, text: &str) {
    let Ok(mut tape) = tape.lock() else { return };
    if tape.failed.is_some() {
        return;
    }
    let result = tape
        .file
        .write_all(text.as_bytes())
        .and_then(|()| tape.file.flush());
    match result {
        Ok(()) => {
            if text.contains("[[turn]]") {
                tape.written += 1;
            }
        }
        Err(e) => {
            tape.failed = Some(format!(
                "cannot write the cassette {}: {e}",
                tape.path.display()
            ))
        }
    }
}

/// What the request shows that a replay should see again.
#[derive(Debug, Default)]
struct Expect {
    user_text: Option<String>,
    tool_result_ok: Option<bool>,
}

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
            user_text: None,
            tool_result_ok: uniform.then_some(first),
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
        user_text: (!line.is_empty()).then_some(line),
        tool_result_ok: None,
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

    /// The `[[turn]]` table.
    fn render(&self) -> String {
        let mut out = String::from("\n[[turn]]\n");
        if let Some(model) = &self.model {
            let _ = writeln!(out, "# served by {model}");
        }
        if let Some(error) = &self.error {
            let _ = writeln!(out, "error = {}", string(error));
            if self.too_long {
                out.push_str("error_kind = \"context_length\"\n");
            }
        } else {
            if !self.thinking.is_empty() {
                let _ = writeln!(out, "thinking = {}", string(&self.thinking));
            }
            if !self.text.is_empty() {
                let _ = writeln!(out, "text = {}", string(&self.text));
            }
            let stop = match self.stop {
                Some(ModelStop::ToolUse) => "tool_use",
                Some(ModelStop::MaxTokens) => "max_tokens",
                _ => "end_turn",
            };
            let _ = writeln!(out, "stop = \"{stop}\"");
            if let Some(u) = &self.usage {
                let _ = writeln!(
                    out,
                    "usage = {{ input_tokens = {}, output_tokens = {}, cache_read_tokens = {}, cache_write_tokens = {} }}",
                    u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens
                );
            }
        }
        if self.expect.user_text.is_some() || self.expect.tool_result_ok.is_some() {
            out.push_str("[turn.expect]\n");
            if let Some(text) = &self.expect.user_text {
                let _ = writeln!(out, "user_text_contains = {}", string(text));
            }
            if let Some(ok) = self.expect.tool_result_ok {
                let _ = writeln!(out, "tool_result_ok = {ok}");
            }
        }
        if self.error.is_none() {
            for (id, name, input) in &self.calls {
                out.push_str("[[turn.tool_call]]\n");
                let _ = writeln!(out, "id = {}", string(id));
                let _ = writeln!(out, "name = {}", string(name));
                let Some(input) = input else {
                    out.push_str("cut = true\n");
                    continue;
                };
                match inline(input) {
                    Some(table) => {
                        let _ = writeln!(out, "input = {table}");
                    }
                    None => {
                        let _ = writeln!(out, "input_json = {}", string(&input.to_string()));
                    }
                }
            }
        }
        out
    }
}

/// A TOML string, quoted and escaped by the toml crate.
fn string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

/// A JSON value as a TOML inline value, written by the toml crate (which
/// escapes what TOML strings cannot hold, U+007F among them); `None` when
/// TOML cannot hold it (a `null`, an integer past `i64`).
fn inline(value: &Value) -> Option<String> {
    if has_null(value) {
        return None;
    }
    toml::Value::try_from(value).ok().map(|v| v.to_string())
}

fn has_null(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.iter().any(has_null),
        Value::Object(map) => map.values().any(has_null),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_becomes_toml_inline_or_input_json() {
        let v = json!({"path": "a \"b\"\n", "n": 3, "xs": [1.5, true], "o": {}});
        let text = format!("x = {}", inline(&v).unwrap());
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        let back = serde_json::to_value(&parsed["x"]).unwrap();
        assert_eq!(back, v);
        assert_eq!(inline(&json!({"a": null})), None);
        assert_eq!(inline(&json!({"a": [1, null]})), None);
        assert_eq!(inline(&json!({"big": u64::MAX})), None);
    }

    #[test]
    fn control_characters_round_trip() {
        let text = "a\u{7f}b\u{1}c\td\u{2028}e";
        let line = format!("x = {}", string(text));
        let parsed: toml::Table = toml::from_str(&line).unwrap();
        assert_eq!(parsed["x"].as_str(), Some(text));
        let v = json!({"content": text});
        let line = format!("x = {}", inline(&v).unwrap());
        let parsed: toml::Table = toml::from_str(&line).unwrap();
        assert_eq!(serde_json::to_value(&parsed["x"]).unwrap(), v);
    }
}
