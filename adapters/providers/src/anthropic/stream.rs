//! Anthropic's stream events, folded into provider-neutral ones.
//!
//! A response is `message_start`, then for each content block a
//! `content_block_start`, its `content_block_delta`s and a
//! `content_block_stop`, then `message_delta` (the stop reason and the
//! output tokens so far) and `message_stop`; `ping`s may come anywhere, and
//! an `error` event ends the stream.
//!
//! Text and thinking deltas pass through as they come. A tool call's input
//! arrives as `input_json_delta` pieces; they are joined per block and
//! parsed when the block stops, so the core sees each call once, whole, in
//! the order the blocks started. A block whose input is not JSON is cut
//! by the output limit when the message stops with `max_tokens` (it
//! becomes a `ToolUseCut`, which never runs) and malformed otherwise; a
//! block with no input at all waits for the stop reason too, since the
//! limit may have cut it right after its name (when it is the last). Usage is reported once, when the message
//! stops: each count from the last event that carried it (`message_start`
//! or a `message_delta`).
//!
//! The server's own web search comes as a `server_tool_use` block (its
//! input streamed like a tool call's) and a `web_search_tool_result` block
//! (whole at its start); each becomes a `Server` step, carrying the block
//! as it came so the next request can return it. A text block's
//! `citations_delta`s are gathered and said, once, as `Citations` when the
//! block stops. The searches a call ran are counted in its usage.

use std::collections::BTreeMap;

use cox_protocol::CallId;
use cox_protocol::provider::{ModelStop, ProviderError, StreamEvent};
use cox_protocol::types::{ServerBlock, ServerStep, Source, Usage};
use serde::Deserialize;
use serde_json::Value;

use crate::fault;
use crate::sse::SseEvent;

/// A tool call being streamed.
#[derive(Debug)]
struct PendingTool {
    id: String,
    name: String,
    json: String,
}

/// The state of one response.
#[derive(Debug, Default)]
pub struct MessageStream {
    tools: BTreeMap<u64, PendingTool>,
    /// The server's own tool calls being streamed (its web search).
    servers: BTreeMap<u64, PendingTool>,
    /// The pages each open text block cites so far.
    citing: BTreeMap<u64, Vec<Source>>,
    /// Tool blocks that stopped with input that is not JSON: cut by the
    /// output limit if `message_delta` says `max_tokens`, else malformed.
    broken: Vec<PendingTool>,
    /// Tool blocks that stopped with no input at all: a call that takes
    /// none, or, if it is the last block and the message stops with
    /// `max_tokens`, one cut right after its name. Judged then.
    empty: Vec<(u64, PendingTool)>,
    /// The index of the last tool block that started.
    last_tool: Option<u64>,
    usage: Usage,
    stop: Option<ModelStop>,
    done: bool,
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    index: u64,
    message: Option<MessageStart>,
    content_block: Option<Value>,
    delta: Option<Value>,
    usage: Option<WireUsage>,
    error: Option<WireError>,
}

#[derive(Deserialize)]
struct MessageStart {
    usage: Option<WireUsage>,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    server_tool_use: Option<ServerUse>,
}

#[derive(Deserialize, Default)]
struct ServerUse {
    web_search_requests: Option<u64>,
}

#[derive(Deserialize)]
struct WireError {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    message: String,
    /// A gateway's relay of the upstream's status (`"429"`, `529`).
    #[serde(default)]
    code: Value,
}

/// Data that is not Anthropic's format: a proxy or a network fault more
/// often than a bug, so worth another try.
fn malformed(what: &str) -> ProviderError {
    ProviderError::Retryable {
        message: format!("anthropic: malformed stream: {what}"),
        retry_after_ms: None,
    }
}

impl MessageStream {
    /// A response that has not started.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `message_stop` arrived.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Folds one SSE event in; returns what it became.
    ///
    /// # Errors
    /// An `error` event (overloaded, rate limited, …), or data that is not
    /// Anthropic's format. A context-length error is its own kind.
    pub fn push(&mut self, event: &SseEvent) -> Result<Vec<StreamEvent>, ProviderError> {
        let envelope: Envelope = serde_json::from_str(&event.data)
            .map_err(|e| malformed(&format!("{} event: {e}", event.event)))?;
        let mut out = Vec::new();
        match envelope.kind.as_str() {
            "ping" => {}
            "message_start" => {
                if let Some(usage) = envelope.message.and_then(|m| m.usage) {
                    self.take_usage(&usage);
                }
            }
            "content_block_start" => {
                let block = envelope.content_block.unwrap_or(Value::Null);
                match block["type"].as_str() {
                    Some("server_tool_use") => {
                        let id = block["id"].as_str().unwrap_or_default().to_owned();
                        let name = block["name"].as_str().unwrap_or_default().to_owned();
                        let json = match &block["input"] {
                            Value::Object(map) if !map.is_empty() => block["input"].to_string(),
                            _ => String::new(),
                        };
                        self.servers
                            .insert(envelope.index, PendingTool { id, name, json });
                    }
                    Some("web_search_tool_result") => out.push(StreamEvent::Server(found(block))),
                    Some("tool_use") => {
                        let id = block["id"].as_str().unwrap_or_default().to_owned();
                        let name = block["name"].as_str().unwrap_or_default().to_owned();
                        if id.is_empty() || name.is_empty() {
                            return Err(malformed("a tool_use block without id or name"));
                        }
                        // Some servers send the whole input here instead.
                        let json = match &block["input"] {
                            Value::Object(map) if !map.is_empty() => block["input"].to_string(),
                            _ => String::new(),
                        };
                        self.tools
                            .insert(envelope.index, PendingTool { id, name, json });
                        self.last_tool = Some(envelope.index);
                    }
                    Some("text") => {
                        if let Some(text) = block["text"].as_str().filter(|t| !t.is_empty()) {
                            out.push(StreamEvent::TextDelta(text.to_owned()));
                        }
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = envelope.delta.unwrap_or(Value::Null);
                match delta["type"].as_str() {
                    Some("text_delta") => {
                        let text = delta["text"].as_str().unwrap_or_default();
                        out.push(StreamEvent::TextDelta(text.to_owned()));
                    }
                    Some("thinking_delta") => {
                        let text = delta["thinking"].as_str().unwrap_or_default();
                        out.push(StreamEvent::ThinkingDelta(text.to_owned()));
                    }
                    Some("citations_delta") => {
                        let citation = &delta["citation"];
                        if let Some(url) = citation["url"].as_str() {
                            let cited = self.citing.entry(envelope.index).or_default();
                            if !cited.iter().any(|s| s.url == url) {
                                cited.push(Source {
                                    url: url.to_owned(),
                                    title: citation["title"]
                                        .as_str()
                                        .unwrap_or_default()
                                        .to_owned(),
                                });
                            }
                        }
                    }
                    Some("input_json_delta") if self.servers.contains_key(&envelope.index) => {
                        if let Some(server) = self.servers.get_mut(&envelope.index) {
                            server
                                .json
                                .push_str(delta["partial_json"].as_str().unwrap_or_default());
                        }
                    }
                    Some("input_json_delta") => {
                        let Some(tool) = self.tools.get_mut(&envelope.index) else {
                            return Err(malformed(
                                "input_json_delta for a block that is not a tool_use",
                            ));
                        };
                        tool.json
                            .push_str(delta["partial_json"].as_str().unwrap_or_default());
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(sources) = self.citing.remove(&envelope.index) {
                    out.push(StreamEvent::Citations(sources));
                }
                if let Some(server) = self.servers.remove(&envelope.index) {
                    out.push(StreamEvent::Server(searched(server)));
                }
                if let Some(tool) = self.tools.remove(&envelope.index) {
                    if tool.json.trim().is_empty() {
                        self.empty.push((envelope.index, tool));
                    } else {
                        match serde_json::from_str(&tool.json) {
                            Ok(input) => out.push(StreamEvent::ToolUse {
                                id: CallId(tool.id),
                                name: tool.name,
                                input,
                            }),
                            // Judged when the stop reason is known.
                            Err(_) => self.broken.push(tool),
                        }
                    }
                }
            }
            "message_delta" => {
                if let Some(usage) = &envelope.usage {
                    self.take_usage(usage);
                }
                let reason = envelope
                    .delta
                    .as_ref()
                    .and_then(|d| d["stop_reason"].as_str());
                if let Some(reason) = reason {
                    self.stop = Some(match reason {
                        "tool_use" => ModelStop::ToolUse,
                        "max_tokens" => ModelStop::MaxTokens,
                        _ => ModelStop::EndTurn,
                    });
                }
                if self.stop.is_some() {
                    out.extend(self.judge_empty());
                }
                if self.stop == Some(ModelStop::MaxTokens) {
                    // Blocks the limit cut: stopped with partial input, or
                    // never stopped at all.
                    let open = std::mem::take(&mut self.tools).into_values();
                    for tool in std::mem::take(&mut self.broken).into_iter().chain(open) {
                        out.push(StreamEvent::ToolUseCut {
                            id: CallId(tool.id),
                            name: tool.name,
                        });
                    }
                }
            }
            "message_stop" => {
                out.extend(self.judge_empty());
                if let Some(tool) = self.broken.first() {
                    return Err(malformed(&format!(
                        "tool_use {} input is not JSON",
                        tool.name
                    )));
                }
                self.done = true;
                out.push(StreamEvent::Usage(self.usage));
                out.push(StreamEvent::Done(self.stop.unwrap_or(ModelStop::EndTurn)));
            }
            "error" => {
                let error = envelope
                    .error
                    .ok_or_else(|| malformed("an error event without error"))?;
                let code = fault::code_text(&error.code);
                return Err(classify_error(&error.kind, &code, &error.message));
            }
            _ => {}
        }
        Ok(out)
    }

    /// The tool blocks without input, once the stop reason is known: cut if
    /// the limit stopped the message right after the last of them, else
    /// calls with no arguments.
    fn judge_empty(&mut self) -> Vec<StreamEvent> {
        let at_limit = self.stop == Some(ModelStop::MaxTokens);
        let last = self.last_tool;
        std::mem::take(&mut self.empty)
            .into_iter()
            .map(|(index, tool)| {
                if at_limit && Some(index) == last {
                    StreamEvent::ToolUseCut {
                        id: CallId(tool.id),
                        name: tool.name,
                    }
                } else {
                    StreamEvent::ToolUse {
                        id: CallId(tool.id),
                        name: tool.name,
                        input: Value::Object(serde_json::Map::new()),
                    }
                }
            })
            .collect()
    }

    /// Every count the event carries replaces the one so far: a gateway
    /// sends zeros in `message_start` and the real counts in
    /// `message_delta`, and Anthropic's own `message_delta` counts are
    /// cumulative, so the later one is always the better one.
    fn take_usage(&mut self, usage: &WireUsage) {
        let fields = [
            (usage.input_tokens, &mut self.usage.input_tokens),
            (usage.output_tokens, &mut self.usage.output_tokens),
            (
                usage.cache_creation_input_tokens,
                &mut self.usage.cache_write_tokens,
            ),
            (
                usage.cache_read_input_tokens,
                &mut self.usage.cache_read_tokens,
            ),
        ];
        for (count, slot) in fields {
            if let Some(count) = count {
                *slot = count;
            }
        }
        if let Some(searches) = usage
            .server_tool_use
            .as_ref()
            .and_then(|s| s.web_search_requests)
        {
            self.usage.web_searches = searches;
        }
    }
}

/// A `server_tool_use` block, whole: the search the model ran.
fn searched(server: PendingTool) -> ServerBlock {
    let input: Value = serde_json::from_str(&server.json)
        .unwrap_or_else(|_| Value::Object(serde_json::Map::new()));
    let query = input["query"].as_str().unwrap_or_default().to_owned();
    ServerBlock {
        provider: "anthropic".to_owned(),
        step: ServerStep::Searched {
            id: server.id.clone(),
            query,
        },
        raw: serde_json::json!({
            "type": "server_tool_use", "id": server.id, "name": server.name, "input": input,
        }),
    }
}

/// A `web_search_tool_result` block: the pages found, or the error.
fn found(block: Value) -> ServerBlock {
    let id = block["tool_use_id"].as_str().unwrap_or_default().to_owned();
    let content = &block["content"];
    let (results, error) = match content.as_array() {
        Some(results) => (
            results
                .iter()
                .filter_map(|r| {
                    Some(Source {
                        url: r["url"].as_str()?.to_owned(),
                        title: r["title"].as_str().unwrap_or_default().to_owned(),
                    })
                })
                .collect(),
            None,
        ),
        None => (
            Vec::new(),
            Some(
                content["error_code"]
                    .as_str()
                    .unwrap_or("an error the server did not name")
                    .to_owned(),
            ),
        ),
    };
    ServerBlock {
        provider: "anthropic".to_owned(),
        step: ServerStep::Found { id, results, error },
        raw: block,
    }
}

impl crate::http::Wire for MessageStream {
    fn push(&mut self, event: &SseEvent) -> Result<Vec<StreamEvent>, ProviderError> {
        MessageStream::push(self, event)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn end(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        Err(ProviderError::Retryable {
            message: "anthropic: the stream ended before message_stop".to_owned(),
            retry_after_ms: None,
        })
    }

    fn unreported_usage(&self) -> Option<Usage> {
        (!self.done && self.usage != Usage::default()).then_some(self.usage)
    }
}

/// Whether an Anthropic error says the prompt is over the context window.
#[must_use]
pub fn is_context_length(kind: &str, message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    kind == "invalid_request_error"
        && (lower.contains("prompt is too long") || lower.contains("context window"))
}

/// An Anthropic error (in the stream or a failed response's body) as a
/// provider error: a prompt over the context window is its own kind, so
/// compaction can react to it; an overload, a rate limit or an internal
/// error, by its type or by the status a gateway puts in `code`, is worth
/// another try ([`crate::fault`]).
#[must_use]
pub fn classify_error(kind: &str, code: &str, message: &str) -> ProviderError {
    let message = fault::one_line(message);
    if is_context_length(kind, &message) {
        return ProviderError::ContextLength(format!("anthropic: {message}"));
    }
    let label = if fault::present(kind) {
        kind
    } else if fault::present(code) {
        code
    } else {
        ""
    };
    let line = if label.is_empty() {
        format!("anthropic: {message}")
    } else {
        format!("anthropic: {label}: {message}")
    };
    if fault::is_transient(kind, code) {
        ProviderError::Retryable {
            message: line,
            retry_after_ms: None,
        }
    } else {
        ProviderError::Failed(line)
    }
}
