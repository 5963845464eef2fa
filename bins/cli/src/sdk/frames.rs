//! The session's events as Claude Code's stream-json frames, the ones the
//! Claude Agent SDKs parse: `system` (`init` at each turn's start),
//! `assistant` (one Messages API message per model response: thinking,
//! text and tool_use blocks), `user` (each tool's result), `stream_event`
//! (the raw partial-message events, with `--include-partial-messages`) and
//! one `result` per turn.
//!
//! Invariants: every frame carries the fields the SDK's parser requires
//! (`result`: subtype, duration_ms, duration_api_ms, is_error, num_turns,
//! session_id; `assistant`: message.model and a content list; `thinking`:
//! a signature; `stream_event`: uuid, session_id, event); every turn ends
//! with exactly one `result`; no line is longer than [`MAX_LINE`] (a tool
//! result is cut to fit); every string is scrubbed of secrets.

use std::collections::HashMap;
use std::time::Instant;

use cox_protocol::catalog::{Catalog, cost};
use cox_protocol::types::{Event, StopReason, ToolResult, Usage};
use serde_json::{Value, json};

/// The most a frame's line may hold: the SDK refuses a line over 1 MiB.
pub const MAX_LINE: usize = 900 * 1024;
/// The Claude Code release whose frames these follow (the SDK reads it
/// from the init frame).
pub const CLAUDE_CODE_VERSION: &str = "2.1.197";

/// Tool names as Claude Code users know them; cox's where it has none.
fn claude_name(tool: &str) -> String {
    cox_hooks::claude::claude_name(tool).map_or_else(|| tool.to_owned(), str::to_owned)
}

/// A fresh id in the UUID form the SDKs expect.
pub fn uuid() -> String {
    cox_protocol::SessionId::generate().as_uuid()
}

/// What one turn has said so far.
#[derive(Default)]
struct Turn {
    started: Option<Instant>,
    /// When the current model call began (the turn's start, or the last
    /// tool result).
    asking_since: Option<Instant>,
    api_ms: u64,
    rounds: u32,
    usage: Usage,
    cost_usd: f64,
    /// The text of the last model response: the turn's answer.
    answer: String,
    denials: Vec<Value>,
}

/// The frames of one session.
pub struct Frames {
    session_id: String,
    cwd: String,
    model: String,
    tools: Vec<String>,
    mcp_servers: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
    hook_events: bool,
    permission_mode: String,
    partial: bool,
    catalog: Catalog,
    /// The model response being streamed: its blocks so far.
    thinking: String,
    text: String,
    calls: Vec<Value>,
    /// Whether a `message_start` stream event was sent for it, and the
    /// index of the open content block.
    streaming: Option<(u32, &'static str)>,
    blocks: u32,
    turn: Turn,
    /// Calls asked for and not done (a subagent's too, by their tagged
    /// ids): id, Claude's name, cox's name and input, for denials and asks.
    inputs: Vec<(String, String, String, Value)>,
    /// Of those, the file each one that writes one file really writes
    /// (links and `..` resolved), which an ask names.
    written: HashMap<String, String>,
    /// Calls of model responses still streaming (the session's, and its
    /// subagents' by tagged id). One requested again while its response
    /// streams is a second call with the same id; after, it is the same
    /// call with its input rewritten (by a hook or a callback).
    /// Each as (whose response: "" for the session's, the subagent's id
    /// prefix for one of its children's; the id).
    open: Vec<(String, String)>,
    /// Ids two live calls share (a server that reuses ids): which call an
    /// ask is about cannot be told, so none of them is described.
    ambiguous: std::collections::HashSet<String>,
    /// Where each subagent works, by the prefix its call ids are tagged
    /// with (`<child>/`, `<child>/<grandchild>/`).
    cwds: HashMap<String, String>,
    /// The last result was an error (the process exits 1 then).
    pub failed: bool,
    /// `--json-schema`: the answer must be JSON valid against it.
    schema: Option<crate::structured::Schema>,
    /// The prompt asking for a schema-valid answer again, for the driver
    /// to send; while that turn runs, it is the same turn for the frames.
    pub retry: Option<String>,
    retrying: bool,
}

impl Frames {
    #[must_use]
    pub fn new(catalog: Catalog, partial: bool, schema: Option<crate::structured::Schema>) -> Self {
        Self {
            session_id: String::new(),
            cwd: String::new(),
            model: String::new(),
            tools: Vec::new(),
            mcp_servers: std::sync::Arc::default(),
            hook_events: false,
            permission_mode: "default".into(),
            partial,
            catalog,
            thinking: String::new(),
            text: String::new(),
            calls: Vec::new(),
            streaming: None,
            blocks: 0,
            turn: Turn::default(),
            inputs: Vec::new(),
            written: HashMap::new(),
            open: Vec::new(),
            ambiguous: std::collections::HashSet::new(),
            cwds: HashMap::new(),
            failed: false,
            schema,
            retry: None,
            retrying: false,
        }
    }

    /// `--include-hook-events`: every hook run is a `system` frame of
    /// subtype `hook_response`.
    #[must_use]
    pub fn with_hook_events(mut self, on: bool) -> Self {
        self.hook_events = on;
        self
    }

    /// The SDK's in-process MCP servers and their states, as the init
    /// frame lists them: filled in as the session starts.
    #[must_use]
    pub fn with_servers(mut self, states: std::sync::Arc<std::sync::Mutex<Vec<Value>>>) -> Self {
        self.mcp_servers = states;
        self
    }

    /// The session's id, as the frames give it.
    #[must_use]
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Claude's name, cox's name and the input of call `id` (asked for,
    /// not done yet).
    #[must_use]
    pub fn call(&self, id: &str) -> Option<(&str, &str, &Value)> {
        if self.ambiguous.contains(id) {
            return None;
        }
        self.inputs
            .iter()
            .find(|(call, ..)| call == id)
            .map(|(_, name, tool, input)| (name.as_str(), tool.as_str(), input))
    }

    /// The one file call `id` writes, as it will really be written (links
    /// and `..` resolved); `None` for a call that writes none or several.
    #[must_use]
    pub fn written(&self, id: &str) -> Option<&str> {
        self.written.get(id).map(String::as_str)
    }

    /// Where the subagent whose call `id` is works (its worktree, when it
    /// has one); `None` for the session's own calls.
    #[must_use]
    pub fn cwd_of(&self, id: &str) -> Option<&str> {
        self.cwds
            .iter()
            .filter(|(prefix, _)| id.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, cwd)| cwd.as_str())
    }

    /// Remembers a call (or its rewritten input), returning whether it is
    /// a call of its own.
    fn remember(&mut self, whose: &str, call: &cox_protocol::types::ToolCall) -> bool {
        let id = call.id.as_str();
        match call.writes.as_slice() {
            [file] => self.written.insert(id.to_owned(), file.clone()),
            _ => self.written.remove(id),
        };
        if let Some(known) = self.inputs.iter_mut().find(|(known, ..)| known == id) {
            if self.open.iter().any(|(_, open)| open == id) {
                self.ambiguous.insert(id.to_owned());
                return true;
            }
            known.3 = call.input.clone();
            return false;
        }
        self.open.push((whose.to_owned(), id.to_owned()));
        self.inputs.push((
            call.id.as_str().to_owned(),
            claude_name(&call.name),
            call.name.clone(),
            call.input.clone(),
        ));
        true
    }

    /// A subagent's call (however deep), remembered so its ask can be
    /// put to the SDK; its done call forgotten. `prefix` is how its ids
    /// are tagged (`<child>/`, `<child>/<grandchild>/`).
    fn subagent(&mut self, prefix: &str, event: &Event) {
        match event {
            Event::Subagent {
                session_id, event, ..
            } => self.subagent(&format!("{prefix}{session_id}/"), event),
            Event::ToolCallRequested { call } => {
                self.remember(prefix, call);
            }
            Event::SessionStarted { cwd, .. } => {
                self.cwds.insert(prefix.to_owned(), cwd.clone());
            }
            // That child's response is over.
            Event::Usage { job, .. } if *job == cox_protocol::types::Job::Main => {
                self.open.retain(|(whose, _)| whose != prefix);
            }
            Event::Retry { discarded, .. } if *discarded => self.thrown_away(prefix),
            Event::ToolCallDone { call_id, .. } => {
                self.inputs.retain(|(id, ..)| id != call_id.as_str());
                self.written.remove(call_id.as_str());
            }
            _ => {}
        }
    }

    /// `whose` response was thrown away (a retry): its calls are requested
    /// anew, or never.
    fn thrown_away(&mut self, whose: &str) {
        let dropped: Vec<String> = self
            .open
            .iter()
            .filter(|(w, _)| w == whose)
            .map(|(_, id)| id.clone())
            .collect();
        self.inputs.retain(|(id, ..)| !dropped.contains(id));
        self.written.retain(|id, _| !dropped.contains(id));
        self.open.retain(|(w, _)| w != whose);
    }

    fn init(&self) -> Value {
        json!({
            "type": "system", "subtype": "init", "uuid": uuid(),
            "session_id": self.session_id, "cwd": self.cwd, "model": self.model,
            "tools": self.tools,
            "mcp_servers": crate::mcp::listed(&self.mcp_servers),
            "permissionMode": self.permission_mode,
            "slash_commands": [], "apiKeySource": "none", "output_style": "default",
            "skills": [], "plugins": [],
            "claude_code_version": CLAUDE_CODE_VERSION,
            "cox_version": env!("CARGO_PKG_VERSION"),
        })
    }

    fn stream_event(&self, event: Value) -> Value {
        json!({
            "type": "stream_event", "uuid": uuid(), "session_id": self.session_id,
            "event": event, "parent_tool_use_id": null,
        })
    }

    /// The partial events that open a block of `kind`, closing the one
    /// before (with `--include-partial-messages`).
    fn open_block(&mut self, kind: &'static str, out: &mut Vec<Value>) {
        if !self.partial {
            return;
        }
        match self.streaming {
            Some((_, open)) if open == kind => return,
            Some((index, _)) => {
                out.push(self.stream_event(json!({"type": "content_block_stop", "index": index})));
            }
            None => out.push(self.stream_event(json!({
                "type": "message_start",
                "message": {"id": format!("msg_{}", ulid::Ulid::generate()), "type": "message",
                            "role": "assistant", "model": self.model, "content": [],
                            "stop_reason": null, "usage": {"input_tokens": 0, "output_tokens": 0}},
            }))),
        }
        let index = self.blocks;
        self.blocks += 1;
        let block = match kind {
            "thinking" => json!({"type": "thinking", "thinking": "", "signature": ""}),
            _ => json!({"type": "text", "text": ""}),
        };
        out.push(self.stream_event(json!({
            "type": "content_block_start", "index": index, "content_block": block,
        })));
        self.streaming = Some((index, kind));
    }

    /// The frames `event` becomes.
    pub fn event(&mut self, event: &Event) -> Vec<Value> {
        let mut out = Vec::new();
        match event {
            Event::SessionStarted {
                session_id,
                cwd,
                model,
                tools,
                permission_mode,
                ..
            } => {
                // As the SDKs spell ids: a UUID (`--resume` takes either).
                self.session_id = session_id.as_uuid();
                self.cwd.clone_from(cwd);
                self.model.clone_from(model);
                self.tools = tools.iter().map(|t| claude_name(t)).collect();
                self.permission_mode = permission_mode.to_string();
            }
            Event::ModeChanged {
                permission_mode,
                model,
                ..
            } => {
                // The next init frame says what the session now is.
                self.permission_mode = permission_mode.to_string();
                if let Some(model) = model {
                    self.model.clone_from(model);
                }
            }
            Event::Subagent {
                session_id, event, ..
            } => self.subagent(&format!("{session_id}/"), event),
            // The schema's second chance is the same turn to the SDK.
            Event::TurnStarted { .. } if self.retrying => {
                self.turn.asking_since = Some(Instant::now());
            }
            Event::TurnStarted { .. } => {
                let now = Instant::now();
                self.turn = Turn {
                    started: Some(now),
                    asking_since: Some(now),
                    ..Turn::default()
                };
                out.push(self.init());
            }
            Event::TextDelta { text } => {
                self.open_block("text", &mut out);
                self.text.push_str(text);
                if self.partial
                    && let Some((index, _)) = self.streaming
                {
                    out.push(self.stream_event(json!({
                        "type": "content_block_delta", "index": index,
                        "delta": {"type": "text_delta", "text": text},
                    })));
                }
            }
            Event::ThinkingDelta { text } => {
                self.open_block("thinking", &mut out);
                self.thinking.push_str(text);
                if self.partial
                    && let Some((index, _)) = self.streaming
                {
                    out.push(self.stream_event(json!({
                        "type": "content_block_delta", "index": index,
                        "delta": {"type": "thinking_delta", "thinking": text},
                    })));
                }
            }
            Event::ToolCallRequested { call } => {
                // A call requested again once its response is over is its
                // input rewritten (a hook's or a callback's): the same
                // call, not a new block.
                let fresh = self.remember("", call);
                if fresh {
                    self.calls.push(json!({
                        "type": "tool_use", "id": call.id.as_str(),
                        "name": claude_name(&call.name), "input": call.input,
                    }));
                }
            }
            Event::Usage {
                model, usage, job, ..
            } if *job == cox_protocol::types::Job::Main => {
                self.turn.usage.add(usage);
                self.turn.cost_usd += cost(self.catalog.get(model), usage).usd;
                self.turn.rounds += 1;
                // The response is over: its calls may now be rewritten.
                self.open.retain(|(whose, _)| !whose.is_empty());
                if let Some(since) = self.turn.asking_since.take() {
                    self.turn.api_ms += u64::try_from(since.elapsed().as_millis()).unwrap_or(0);
                }
                self.model.clone_from(model);
                out.extend(self.close_message(model, usage));
            }
            Event::Usage { model, usage, .. } => {
                // A title or a summary: its cost is the turn's, nothing else.
                self.turn.cost_usd += cost(self.catalog.get(model), usage).usd;
            }
            Event::ToolCallDone { call_id, result } => {
                self.turn.asking_since = Some(Instant::now());
                self.written.remove(call_id.as_str());
                let input = self
                    .inputs
                    .iter()
                    .position(|(id, ..)| id == call_id.as_str())
                    .map(|at| self.inputs.remove(at));
                if result.denied
                    && let Some((id, name, _, input)) = &input
                {
                    self.turn.denials.push(json!({
                        "tool_name": name, "tool_use_id": id, "tool_input": input,
                    }));
                }
                out.push(self.tool_result(call_id.as_str(), result));
            }
            Event::TurnDone { stop } => {
                // What an interrupted response left is not the next one's.
                self.text.clear();
                self.thinking.clear();
                self.calls.clear();
                self.streaming = None;
                self.blocks = 0;
                self.ambiguous.clear();
                self.open.clear();
                out.extend(self.result(*stop));
            }
            Event::HookRan {
                hook,
                event,
                duration_ms,
                outcome,
                message,
                output,
                ..
            } if self.hook_events => out.push(json!({
                "type": "system", "subtype": "hook_response", "uuid": uuid(),
                "session_id": self.session_id, "hook_name": hook, "hook_event": event,
                "outcome": outcome, "duration_ms": duration_ms,
                "message": message, "output": output,
            })),
            Event::Notice { level, text } => out.push(json!({
                "type": "system", "subtype": "notice", "uuid": uuid(),
                "session_id": self.session_id, "level": level, "text": text,
            })),
            Event::Retry { discarded, .. } if *discarded => {
                self.text.clear();
                self.thinking.clear();
                self.calls.clear();
                self.thrown_away("");
            }
            _ => {}
        }
        out
    }

    /// The assistant frame of the response that just ended.
    fn close_message(&mut self, model: &str, usage: &Usage) -> Vec<Value> {
        let mut out = Vec::new();
        if self.partial && self.streaming.is_some() {
            if let Some((index, _)) = self.streaming.take() {
                out.push(self.stream_event(json!({"type": "content_block_stop", "index": index})));
            }
            out.push(self.stream_event(json!({"type": "message_stop"})));
        }
        self.blocks = 0;
        let mut content = Vec::new();
        if !self.thinking.is_empty() {
            content.push(json!({
                "type": "thinking", "thinking": std::mem::take(&mut self.thinking), "signature": "",
            }));
        }
        let text = std::mem::take(&mut self.text);
        if !text.is_empty() {
            content.push(json!({"type": "text", "text": text}));
        }
        self.turn.answer = text;
        let calls = std::mem::take(&mut self.calls);
        let stop = if calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        };
        content.extend(calls);
        if content.is_empty() {
            return out;
        }
        out.push(json!({
            "type": "assistant",
            "message": {
                "id": format!("msg_{}", ulid::Ulid::generate()), "type": "message", "role": "assistant",
                "model": model, "content": content, "stop_reason": stop, "stop_sequence": null,
                "usage": wire_usage(usage),
            },
            "parent_tool_use_id": null, "session_id": self.session_id, "uuid": uuid(),
        }));
        out
    }

    fn tool_result(&self, id: &str, result: &ToolResult) -> Value {
        let mut content = result.visible.clone();
        if content.len() > MAX_LINE / 2 {
            let mut cut = MAX_LINE / 2;
            while !content.is_char_boundary(cut) {
                cut -= 1;
            }
            content.truncate(cut);
            content.push_str("\n[cut here for the frame; the model read the whole result]");
        }
        json!({
            "type": "user",
            "message": {"role": "user", "content": [{
                "type": "tool_result", "tool_use_id": id, "content": content,
                "is_error": !result.ok,
            }]},
            "parent_tool_use_id": null, "session_id": self.session_id, "uuid": uuid(),
        })
    }

    /// The turn's one `result` frame; none when its answer is asked for
    /// again (the schema's second chance).
    fn result(&mut self, stop: StopReason) -> Option<Value> {
        let mut structured = None;
        let mut subtype = match stop {
            StopReason::EndTurn => "success",
            StopReason::MaxTurns => "error_max_turns",
            StopReason::Budget => "error_max_budget_usd",
            _ => "error_during_execution",
        };
        let mut problem = None;
        if let (Some(schema), "success") = (&self.schema, subtype) {
            match schema.check(&self.turn.answer) {
                Ok(value) => structured = Some(value),
                Err(why) if !self.retrying => {
                    self.retrying = true;
                    self.retry = Some(crate::structured::Schema::again(&why));
                    return None;
                }
                Err(why) => {
                    subtype = "error_max_structured_output_retries";
                    problem = Some(why);
                }
            }
        }
        self.retrying = false;
        let turn = std::mem::take(&mut self.turn);
        let is_error = subtype != "success";
        self.failed = is_error;
        let duration = turn.started.map_or(0, |s| s.elapsed().as_millis());
        let mut frame = json!({
            "type": "result", "subtype": subtype, "is_error": is_error,
            "duration_ms": u64::try_from(duration).unwrap_or(u64::MAX),
            "duration_api_ms": turn.api_ms, "num_turns": turn.rounds,
            "result": turn.answer, "session_id": self.session_id,
            "total_cost_usd": turn.cost_usd, "usage": wire_usage(&turn.usage),
            "permission_denials": turn.denials, "stop_reason": stop.as_str(),
            "uuid": uuid(),
        });
        if let Some(value) = structured {
            frame["structured_output"] = value;
        }
        if is_error {
            frame["errors"] = json!([problem.map_or_else(
                || format!("the turn ended: {}", stop.as_str()),
                |why| format!("the answer did not validate against the schema, twice: {why}")
            )]);
        }
        Some(frame)
    }
}

/// Usage as the Messages API spells it.
fn wire_usage(usage: &Usage) -> Value {
    json!({
        "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "server_tool_use": {"web_search_requests": usage.web_searches},
    })
}
