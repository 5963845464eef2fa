//! Chat Completions chunks, folded into provider-neutral events.
//!
//! Every event's data is one `chat.completion.chunk` object, and the stream
//! ends with `data: [DONE]`. A chunk's `choices[0].delta` may carry
//! `content` (text), `reasoning_content` or `reasoning` (the reasoning text
//! llama.cpp, vLLM and Ollama expose) and `tool_calls` pieces keyed by
//! `index`: the first piece of a call has its `id` and `function.name`, later
//! ones append to `function.arguments`. `finish_reason` says why the answer
//! stopped; with `stream_options.include_usage` one last chunk with no
//! choices carries `usage`.
//!
//! Tool calls are reported whole, in index order, when the answer finishes;
//! one the output limit cut (`finish_reason: "length"`, arguments not
//! JSON) is reported as cut, and never runs.
//! Usage and `Done` are reported at `[DONE]`; a server that closes the
//! stream after `finish_reason` without `[DONE]` is accepted. Usage maps
//! `prompt_tokens` minus the cached ones to input tokens and
//! `prompt_tokens_details.cached_tokens` to cache reads, so input means the
//! same thing for every provider; these servers report no cache writes.

use std::collections::BTreeMap;

use cox_protocol::CallId;
use cox_protocol::provider::{ModelStop, ProviderError, StreamEvent};
use cox_protocol::types::{Source, Usage};
use serde::Deserialize;
use serde_json::Value;

use crate::fault;
use crate::sse::SseEvent;

/// A tool call being streamed.
#[derive(Debug, Default)]
struct PendingCall {
    id: String,
    name: String,
    arguments: String,
}

/// The state of one response.
#[derive(Debug, Default)]
pub struct ChunkStream {
    calls: BTreeMap<u64, PendingCall>,
    /// The pages the answer cites (a search model's `url_citation`s).
    cited: Vec<Source>,
    usage: Usage,
    stop: Option<ModelStop>,
    done: bool,
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Delta,
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    content: Option<String>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Vec<CallPiece>,
    /// A search model's citations of the text.
    #[serde(default)]
    annotations: Vec<Value>,
}

#[derive(Deserialize)]
struct CallPiece {
    /// Some servers leave it out; then a piece with a new id starts a new
    /// call and one without continues the last.
    index: Option<u64>,
    id: Option<String>,
    function: Option<FunctionPiece>,
}

#[derive(Deserialize)]
struct FunctionPiece {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: u64,
}

fn malformed(what: &str) -> ProviderError {
    ProviderError::Retryable {
        message: format!("openai: malformed stream: {what}"),
        retry_after_ms: None,
    }
}

impl ChunkStream {
    /// A response that has not started.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Folds one SSE event in; returns what it became.
    ///
    /// # Errors
    /// An error object in the stream, or data that is not a chunk.
    pub fn push(&mut self, event: &SseEvent) -> Result<Vec<StreamEvent>, ProviderError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(self.complete());
        }
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let chunk: Chunk =
            serde_json::from_str(data).map_err(|e| malformed(&format!("a chunk: {e}")))?;
        if let Some(error) = chunk.error {
            return Err(classify_error(&error));
        }
        let mut out = Vec::new();
        if let Some(usage) = chunk.usage {
            let cached = usage.prompt_tokens_details.map_or(0, |d| d.cached_tokens);
            self.usage = Usage {
                input_tokens: usage.prompt_tokens.saturating_sub(cached),
                output_tokens: usage.completion_tokens,
                cache_read_tokens: cached,
                cache_write_tokens: 0,
                web_searches: 0,
            };
        }
        for choice in chunk.choices {
            let delta = choice.delta;
            if let Some(text) = delta.reasoning_content.or(delta.reasoning)
                && !text.is_empty()
            {
                out.push(StreamEvent::ThinkingDelta(text));
            }
            if let Some(text) = delta.content
                && !text.is_empty()
            {
                out.push(StreamEvent::TextDelta(text));
            }
            for note in &delta.annotations {
                let citation = &note["url_citation"];
                if let Some(url) = citation["url"].as_str()
                    && !self.cited.iter().any(|s| s.url == url)
                {
                    self.cited.push(Source {
                        url: url.to_owned(),
                        title: citation["title"].as_str().unwrap_or_default().to_owned(),
                    });
                }
            }
            for piece in delta.tool_calls {
                let index = piece.index.unwrap_or_else(|| {
                    let last = self.calls.iter().next_back();
                    match (last, &piece.id) {
                        (None, _) => 0,
                        (Some((i, call)), Some(id)) if !id.is_empty() && call.id != *id => i + 1,
                        (Some((i, _)), _) => *i,
                    }
                });
                let call = self.calls.entry(index).or_default();
                if let Some(id) = piece.id.filter(|id| !id.is_empty()) {
                    call.id = id;
                }
                if let Some(function) = piece.function {
                    if let Some(name) = function.name.filter(|n| !n.is_empty()) {
                        call.name = name;
                    }
                    if let Some(arguments) = function.arguments {
                        call.arguments.push_str(&arguments);
                    }
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.stop = Some(match reason.as_str() {
                    "tool_calls" | "function_call" => ModelStop::ToolUse,
                    "length" => ModelStop::MaxTokens,
                    _ => ModelStop::EndTurn,
                });
                if !self.cited.is_empty() {
                    out.push(StreamEvent::Citations(std::mem::take(&mut self.cited)));
                }
                out.extend(self.take_calls()?);
            }
        }
        Ok(out)
    }

    /// The assembled calls, in index order. After `finish_reason:
    /// "length"` a call whose arguments are not JSON, or the last call if
    /// it has none at all, was cut by the output limit and becomes a
    /// `ToolUseCut`; otherwise it is malformed.
    fn take_calls(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        let cut_by_limit = self.stop == Some(ModelStop::MaxTokens);
        let last = self.calls.keys().next_back().copied();
        let mut out = Vec::new();
        for (index, call) in std::mem::take(&mut self.calls) {
            if call.name.is_empty() {
                return Err(malformed(&format!("tool call {index} has no name")));
            }
            // `None`: cut by the output limit, never to run.
            let input = if call.arguments.trim().is_empty() {
                // The last call may have been cut right after its name.
                (!(cut_by_limit && Some(index) == last))
                    .then(|| Value::Object(serde_json::Map::new()))
            } else {
                match serde_json::from_str(&call.arguments) {
                    Ok(input) => Some(input),
                    Err(_) if cut_by_limit => None,
                    Err(e) => {
                        return Err(malformed(&format!(
                            "tool call {} arguments are not JSON: {e}",
                            call.name
                        )));
                    }
                }
            };
            let id = if call.id.is_empty() {
                CallId::new()
            } else {
                CallId(call.id)
            };
            out.push(match input {
                Some(input) => StreamEvent::ToolUse {
                    id,
                    name: call.name,
                    input,
                },
                None => StreamEvent::ToolUseCut {
                    id,
                    name: call.name,
                },
            });
        }
        Ok(out)
    }

    fn complete(&mut self) -> Vec<StreamEvent> {
        if self.done {
            return Vec::new();
        }
        self.done = true;
        let mut out = self.take_calls().unwrap_or_default();
        let stop = self.stop.unwrap_or(if out.is_empty() {
            ModelStop::EndTurn
        } else {
            ModelStop::ToolUse
        });
        out.push(StreamEvent::Usage(self.usage));
        out.push(StreamEvent::Done(stop));
        out
    }
}

impl crate::http::Wire for ChunkStream {
    fn push(&mut self, event: &SseEvent) -> Result<Vec<StreamEvent>, ProviderError> {
        ChunkStream::push(self, event)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn end(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        if self.stop.is_some() {
            return Ok(self.complete());
        }
        Err(ProviderError::Retryable {
            message: "openai: the stream ended before the answer finished".to_owned(),
            retry_after_ms: None,
        })
    }

    fn unreported_usage(&self) -> Option<Usage> {
        (!self.done && self.usage != Usage::default()).then_some(self.usage)
    }
}

/// Whether an error message says the prompt is over the context window, in
/// the words OpenAI, vLLM, llama.cpp and Ollama use.
#[must_use]
pub fn is_context_length(code: &str, message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    code == "context_length_exceeded"
        || code == "exceed_context_size_error"
        || lower.contains("maximum context length")
        || lower.contains("context length")
        || lower.contains("context size")
        || lower.contains("context window")
}

/// An error object (in the stream or a failed response's body) as a
/// provider error: transient by its type or its code (a gateway's
/// `{"type":"throttling_error","code":"429"}` as much as OpenAI's
/// `rate_limit_exceeded`), see [`crate::fault`].
#[must_use]
pub fn classify_error(error: &Value) -> ProviderError {
    let (message, too_long) = describe(error);
    if too_long {
        return ProviderError::ContextLength(format!("openai: {message}"));
    }
    let line = format!("openai: {message}");
    let kind = error["type"].as_str().unwrap_or_default();
    if fault::is_transient(kind, &fault::code_text(&error["code"])) {
        ProviderError::Retryable {
            message: line,
            retry_after_ms: None,
        }
    } else {
        ProviderError::Failed(line)
    }
}

/// `{"message":…, "type":…, "code":…}` (or a bare string) as one line, its
/// code (or else its type) first, and whether it says the prompt was too
/// long.
pub(crate) fn describe(error: &Value) -> (String, bool) {
    if let Some(text) = error.as_str() {
        return (fault::one_line(text), is_context_length("", text));
    }
    let message = fault::one_line(error["message"].as_str().unwrap_or("no message"));
    let code = fault::code_text(&error["code"]);
    let kind = error["type"].as_str().unwrap_or_default();
    let label = if fault::present(&code) {
        code.as_str()
    } else if fault::present(kind) {
        kind
    } else {
        ""
    };
    let line = if label.is_empty() {
        message.clone()
    } else {
        format!("{label}: {message}")
    };
    (
        line,
        is_context_length(&code, &message) || is_context_length(kind, &message),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn data(value: &Value) -> SseEvent {
        SseEvent {
            event: String::new(),
            data: value.to_string(),
        }
    }

    #[test]
    fn parallel_calls_assemble_in_index_order() {
        let mut s = ChunkStream::new();
        let chunks = [
            json!({"choices":[{"delta":{"role":"assistant","content":"Reading."}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"read","arguments":""}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read","arguments":"{\"pa"}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"path\":\"b\"}"}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a\"}"}}]}}]}),
            json!({"choices":[{"delta":{},"finish_reason":"tool_calls"}]}),
            json!({"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":30,"prompt_tokens_details":{"cached_tokens":100}}}),
        ];
        let mut out = Vec::new();
        for c in &chunks {
            out.extend(s.push(&data(c)).unwrap());
        }
        out.extend(
            s.push(&SseEvent {
                event: String::new(),
                data: "[DONE]".into(),
            })
            .unwrap(),
        );
        assert_eq!(
            out,
            [
                StreamEvent::TextDelta("Reading.".into()),
                StreamEvent::ToolUse {
                    id: CallId("c1".into()),
                    name: "read".into(),
                    input: json!({"path": "a"})
                },
                StreamEvent::ToolUse {
                    id: CallId("c2".into()),
                    name: "read".into(),
                    input: json!({"path": "b"})
                },
                StreamEvent::Usage(Usage {
                    input_tokens: 20,
                    output_tokens: 30,
                    cache_read_tokens: 100,
                    cache_write_tokens: 0,
                    web_searches: 0,
                }),
                StreamEvent::Done(ModelStop::ToolUse),
            ]
        );
    }

    #[test]
    fn calls_without_an_index_are_told_apart_by_id() {
        let mut s = ChunkStream::new();
        for c in [
            json!({"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"read","arguments":"{\"path\":"}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"\"x\"}"}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"read","arguments":"{\"path\":\"y\"}"}}]}}]}),
        ] {
            s.push(&data(&c)).unwrap();
        }
        let out = s
            .push(&data(
                &json!({"choices":[{"delta":{},"finish_reason":"tool_calls"}]}),
            ))
            .unwrap();
        assert_eq!(out.len(), 2);
        assert!(
            matches!(&out[1], StreamEvent::ToolUse { id, input, .. } if id.0 == "b" && input["path"] == "y")
        );
    }

    #[test]
    fn reasoning_and_errors() {
        let mut s = ChunkStream::new();
        let out = s
            .push(&data(
                &json!({"choices":[{"delta":{"reasoning_content":"hmm"}}]}),
            ))
            .unwrap();
        assert_eq!(out, [StreamEvent::ThinkingDelta("hmm".into())]);
        let err = s
            .push(&data(&json!({"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}})))
            .unwrap_err();
        assert!(matches!(err, ProviderError::ContextLength(_)), "{err:?}");
        let err = s
            .push(&SseEvent {
                event: String::new(),
                data: "<html>".into(),
            })
            .unwrap_err();
        assert!(matches!(err, ProviderError::Retryable { .. }));
    }

    #[test]
    fn after_length_the_last_call_without_arguments_was_cut() {
        let mut s = ChunkStream::new();
        s.push(&data(&json!({"choices":[{"delta":{"tool_calls":[
            {"index":0,"id":"a","function":{"name":"glob","arguments":""}},
            {"index":1,"id":"b","function":{"name":"bash","arguments":""}}
        ]}}]})))
        .unwrap();
        let out = s
            .push(&data(
                &json!({"choices":[{"delta":{},"finish_reason":"length"}]}),
            ))
            .unwrap();
        assert_eq!(
            out,
            [
                StreamEvent::ToolUse {
                    id: CallId("a".into()),
                    name: "glob".into(),
                    input: json!({})
                },
                StreamEvent::ToolUseCut {
                    id: CallId("b".into()),
                    name: "bash".into()
                },
            ]
        );
    }

    #[test]
    fn a_stream_without_done_after_finish_is_complete() {
        use crate::http::Wire;
        let mut s = ChunkStream::new();
        s.push(&data(
            &json!({"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}]}),
        ))
        .unwrap();
        let out = s.end().unwrap();
        assert_eq!(out.last(), Some(&StreamEvent::Done(ModelStop::EndTurn)));
        let mut cut = ChunkStream::new();
        cut.push(&data(&json!({"choices":[{"delta":{"content":"h"}}]})))
            .unwrap();
        assert!(cut.end().is_err());
    }
}
