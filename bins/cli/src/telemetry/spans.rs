//! The session's event stream as spans and log records, made at the edge.
//!
//! [`Spans`] watches the events a surface receives and turns them into the
//! trace the observability contract describes: `invoke_agent cox` for the
//! session, `invoke_agent cox.turn` for each turn, `chat` for each provider
//! round and `execute_tool` for each tool call, with their attributes, and
//! log records (retries, hooks, notices, checkpoints, compaction) that
//! name the span they belong to. What it makes goes to a [`Sink`]: the
//! local JSON log always, an OTLP exporter when one is on.
//!
//! Invariants:
//! - the core is not involved: everything comes from the events, stamped
//!   with the time the surface received them (they arrive as they happen);
//! - one run of a session is one trace; every span has a parent in it but
//!   the session span. A session's first run takes the session's id as its
//!   trace id (a ULID is 128 bits), so the trace of `cox sessions <id>` is
//!   found by that id; a resumed run starts a trace of its own whose session
//!   span links to the first run's ([`session_root`]), with no lookup;
//! - a `chat` span runs from the last event between two model calls to the
//!   call's `Usage`, as the ledger's `latency_ms` counts it, so the trace
//!   and `cox stats` agree on how long a call took;
//! - a tool span starts when the round that asked for it ended (the call
//!   cannot run before) and ends at its `ToolCallDone`;
//! - prompts, answers, tool arguments and results are kept only with
//!   `capture` on, and then only scrubbed.

use std::collections::HashMap;
use std::time::SystemTime;

use cox_protocol::catalog::{self, Catalog};
use cox_protocol::provider::Tier;
use cox_protocol::types::{Event, NoticeLevel, StopReason, ToolCall, ToolResult};
use serde_json::{Value as Json, json};

pub use super::record::{
    Attrs, LogRecord, Severity, Sink, SpanId, SpanRecord, TraceId, Value, new_span_id, new_trace_id,
};

/// A span begun and not yet ended.
#[derive(Debug)]
struct Open {
    id: SpanId,
    start: SystemTime,
    attrs: Attrs,
}

impl Open {
    fn now(attrs: Attrs, at: SystemTime) -> Open {
        Open {
            id: new_span_id(),
            start: at,
            attrs,
        }
    }
}

/// A call whose `Usage` came: ended, waiting for the next event to say
/// why the model stopped.
#[derive(Debug)]
struct Chat {
    parent: SpanId,
    id: SpanId,
    start: SystemTime,
    end: SystemTime,
    attrs: Attrs,
    asked_tools: bool,
    output: Option<Json>,
}

/// The current turn.
#[derive(Debug)]
struct Turn {
    span: Open,
    calls: u32,
    tier: Option<Tier>,
}

/// The trace and session span of a session's first run: the session's
/// ULID as the trace id, and a span id mixed from its two halves (never 0).
/// A resumed run links to them.
#[must_use]
pub fn session_root(id: cox_protocol::SessionId) -> (TraceId, SpanId) {
    let bits: u128 = id.0.0;
    // Truncation is the point: the two 64-bit halves, mixed.
    #[allow(clippy::cast_possible_truncation)]
    let (high, low) = ((bits >> 64) as u64, bits as u64);
    (bits.max(1), (low ^ high.rotate_left(29)).max(1))
}

/// The translator (see the module doc).
pub struct Spans<S: Sink> {
    sink: S,
    catalog: Catalog,
    capture: bool,
    trace: TraceId,
    session: Option<Open>,
    parent_session: Option<String>,
    earlier: Option<(TraceId, SpanId)>,
    model: String,
    tier: Tier,
    turn: Option<Turn>,
    /// When the current model call began, as far as the events tell.
    between: SystemTime,
    retries: u32,
    requested: Vec<ToolCall>,
    text: String,
    chat: Option<Chat>,
    tools: HashMap<String, (Open, ToolCall)>,
    /// The conversation as this run saw it, kept only with `capture`.
    history: Vec<Json>,
}

impl<S: Sink> Spans<S> {
    /// A translator writing to `sink`; `capture` keeps content (already
    /// decided from `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`).
    #[must_use]
    pub fn new(sink: S, catalog: Catalog, capture: bool) -> Spans<S> {
        Spans {
            sink,
            catalog,
            capture,
            trace: new_trace_id(),
            session: None,
            parent_session: None,
            earlier: None,
            model: String::new(),
            tier: Tier::Code,
            turn: None,
            between: SystemTime::now(),
            retries: 0,
            requested: Vec::new(),
            text: String::new(),
            chat: None,
            tools: HashMap::new(),
            history: Vec::new(),
        }
    }

    /// The session that started this one (a subagent's parent).
    #[must_use]
    pub fn with_parent_session(mut self, parent: Option<String>) -> Self {
        self.parent_session = parent;
        self
    }

    /// This run's trace.
    #[must_use]
    pub fn trace_id(&self) -> TraceId {
        self.trace
    }

    /// The session span, once the session started.
    #[must_use]
    pub fn session_span(&self) -> Option<SpanId> {
        self.session.as_ref().map(|s| s.id)
    }

    /// The innermost span a diagnostic now belongs to: the turn's, else
    /// the session's.
    #[must_use]
    pub fn current(&self) -> Option<(TraceId, SpanId)> {
        self.turn
            .as_ref()
            .map(|t| t.span.id)
            .or(self.session_span())
            .map(|span| (self.trace, span))
    }

    /// The sink, to flush or inspect.
    pub fn sink(&mut self) -> &mut S {
        &mut self.sink
    }

    /// Takes one event, received now.
    pub fn event(&mut self, event: &Event) {
        self.event_at(event, SystemTime::now());
    }

    /// Takes one event, received at `at`.
    pub fn event_at(&mut self, event: &Event, at: SystemTime) {
        if !matches!(event, Event::TurnDone { .. } | Event::Subagent { .. }) {
            self.close_chat(None);
        }
        match event {
            Event::SessionStarted {
                session_id,
                cwd,
                model,
                resumed,
                ..
            } => {
                self.model.clone_from(model);
                if self.session.is_none() {
                    let mut attrs: Attrs = vec![
                        ("gen_ai.operation.name", "invoke_agent".into()),
                        ("gen_ai.agent.name", "cox".into()),
                        ("gen_ai.conversation.id", session_id.to_string().into()),
                        ("cox.session.id", session_id.to_string().into()),
                        ("cox.cwd", cwd.clone().into()),
                    ];
                    if let Some(parent) = &self.parent_session {
                        attrs.push(("cox.session.parent_id", parent.clone().into()));
                    }
                    let root = session_root(*session_id);
                    let id = if *resumed {
                        self.earlier = Some(root);
                        new_span_id()
                    } else {
                        self.trace = root.0;
                        root.1
                    };
                    self.session = Some(Open {
                        id,
                        start: at,
                        attrs,
                    });
                }
                self.between = at;
            }
            Event::TurnStarted { turn, text } => {
                self.close_turn(None, at);
                let session = self
                    .session
                    .as_ref()
                    .map(|s| s.attrs_str("cox.session.id"))
                    .unwrap_or_default();
                let attrs: Attrs = vec![
                    ("cox.turn.id", format!("{session}:{turn}").into()),
                    ("cox.turn", (*turn).into()),
                    ("cox.job", "main".into()),
                ];
                self.turn = Some(Turn {
                    span: Open::now(attrs, at),
                    calls: 0,
                    tier: None,
                });
                if self.capture {
                    self.history.push(message("user", vec![text_part(text)]));
                }
                self.new_round(at);
            }
            Event::TextDelta { text } => {
                if self.capture {
                    self.text.push_str(text);
                }
            }
            Event::ToolCallRequested { call } => self.requested.push(call.clone()),
            Event::Retry {
                attempt,
                of,
                delay_ms,
                reason,
                discarded,
            } => {
                self.retries += 1;
                if *discarded {
                    self.requested.clear();
                    self.text.clear();
                }
                self.log(
                    None,
                    at,
                    Severity::Warn,
                    "provider retry",
                    vec![
                        ("cox.retry.attempt", (*attempt).into()),
                        ("cox.retry.of", (*of).into()),
                        ("cox.retry.delay_ms", (*delay_ms).into()),
                        ("cox.retry.reason", scrub(reason).into()),
                    ],
                );
            }
            Event::Usage {
                provider,
                model,
                tier,
                job,
                usage,
                ..
            } => self.usage(provider, model, *tier, job.as_str(), usage, at),
            Event::ApprovalRequired { call_id, reason } => {
                let span = self.tools.get(call_id.0.as_str()).map(|(open, _)| open.id);
                self.log(
                    span,
                    at,
                    Severity::Info,
                    "approval required",
                    vec![
                        ("gen_ai.tool.call.id", call_id.0.clone().into()),
                        ("cox.reason", scrub(reason).into()),
                    ],
                );
            }
            Event::ToolCallDone { call_id, result } => self.tool_done(&call_id.0, result, at),
            Event::ModeChanged { tier, model, .. } => {
                self.tier = *tier;
                if let Some(model) = model {
                    self.model.clone_from(model);
                }
                self.log(
                    None,
                    at,
                    Severity::Info,
                    "mode changed",
                    vec![("cox.tier", tier.as_str().into())],
                );
            }
            Event::HookRan {
                hook,
                event,
                duration_ms,
                outcome,
                message,
                ..
            } => {
                let mut attrs: Attrs = vec![
                    ("cox.hook.name", scrub(hook).into()),
                    ("cox.hook.event", event.as_str().into()),
                    ("cox.hook.duration_ms", (*duration_ms).into()),
                    ("cox.hook.outcome", outcome.as_str().into()),
                ];
                if let Some(message) = message {
                    attrs.push(("cox.hook.message", scrub(message).into()));
                }
                self.log(None, at, Severity::Info, "hook ran", attrs);
            }
            Event::Compacted {
                dropped,
                before_tokens,
                after_tokens,
                ..
            } => self.log(
                None,
                at,
                Severity::Info,
                "compacted",
                vec![
                    (
                        "cox.compact.turns",
                        u64::try_from(dropped.len()).unwrap_or(0).into(),
                    ),
                    ("cox.compact.before_tokens", (*before_tokens).into()),
                    ("cox.compact.after_tokens", (*after_tokens).into()),
                ],
            ),
            Event::Checkpoint { call_id, files, .. } => self.log(
                None,
                at,
                Severity::Info,
                "checkpoint",
                vec![
                    ("gen_ai.tool.call.id", call_id.0.clone().into()),
                    (
                        "cox.checkpoint.files",
                        u64::try_from(files.len()).unwrap_or(0).into(),
                    ),
                ],
            ),
            Event::Notice { level, text } => {
                let severity = match level {
                    NoticeLevel::Info => Severity::Info,
                    NoticeLevel::Warn | NoticeLevel::Security => Severity::Warn,
                    NoticeLevel::Error => Severity::Error,
                };
                self.log(
                    None,
                    at,
                    severity,
                    "notice",
                    vec![("cox.notice", scrub(text).into())],
                );
            }
            Event::TurnDone { stop } => {
                self.close_chat(Some(*stop));
                if *stop == StopReason::Error && self.requested.is_empty() && self.tools.is_empty()
                {
                    // The call in flight failed: it has a span too.
                    self.failed_chat(at);
                }
                self.close_turn(Some(*stop), at);
            }
            Event::SessionTitled { .. }
            | Event::ThinkingDelta { .. }
            | Event::ToolCallOutput { .. }
            | Event::Commands { .. }
            | Event::Rewound { .. }
            | Event::RewindConflict { .. }
            // A subagent's spans are its own session's, which watches them.
            | Event::Subagent { .. }
            | Event::Attached { .. }
            | Event::UserShell { .. }
            | Event::ServerTool { .. }
            | Event::Citations { .. }
            | Event::Elicitation { .. }
            | Event::Elicited { .. }
            | Event::Plan { .. } => {}
        }
    }

    /// Ends what is open (the session last): the run is over.
    pub fn finish(&mut self) {
        let at = SystemTime::now();
        self.close_chat(None);
        self.close_turn(None, at);
        if let Some(session) = self.session.take() {
            let links = self.earlier.into_iter().collect();
            self.emit(session, None, "invoke_agent cox", at, None, links);
        }
    }

    fn new_round(&mut self, at: SystemTime) {
        self.between = at;
        self.retries = 0;
        self.requested.clear();
        self.text.clear();
    }

    fn parent(&self) -> Option<SpanId> {
        self.turn
            .as_ref()
            .map(|t| t.span.id)
            .or(self.session_span())
    }

    fn log(
        &mut self,
        span: Option<SpanId>,
        at: SystemTime,
        severity: Severity,
        body: &'static str,
        attrs: Attrs,
    ) {
        let Some(span) = span.or(self.parent()) else {
            return;
        };
        self.sink.log(LogRecord {
            context: Some((self.trace, span)),
            at,
            severity,
            body: body.into(),
            attrs,
        });
    }

    fn usage(
        &mut self,
        provider: &str,
        model: &str,
        tier: Tier,
        job: &str,
        usage: &cox_protocol::types::Usage,
        at: SystemTime,
    ) {
        let Some(parent) = self.parent() else { return };
        let ordinal = match &mut self.turn {
            Some(turn) => {
                turn.calls += 1;
                if job == "main" {
                    turn.tier = Some(tier);
                }
                turn.calls
            }
            None => 1,
        };
        let cost = catalog::cost(self.catalog.get(model), usage);
        let requested_model = if job == "main" && !self.model.is_empty() {
            self.model.clone()
        } else {
            model.to_owned()
        };
        let attrs: Attrs = vec![
            ("gen_ai.operation.name", "chat".into()),
            ("gen_ai.provider.name", provider.into()),
            ("gen_ai.request.model", requested_model.into()),
            ("gen_ai.response.model", model.into()),
            ("gen_ai.usage.input_tokens", usage.input_tokens.into()),
            ("gen_ai.usage.output_tokens", usage.output_tokens.into()),
            (
                "cox.usage.cache_read_tokens",
                usage.cache_read_tokens.into(),
            ),
            (
                "cox.usage.cache_write_tokens",
                usage.cache_write_tokens.into(),
            ),
            ("cox.usage.estimated", cost.estimated.into()),
            ("cox.cost.usd", cost.usd.into()),
            ("cox.provider.call.ordinal", ordinal.into()),
            ("cox.retry.count", self.retries.into()),
            ("cox.job", job.into()),
            ("cox.tier", tier.as_str().into()),
        ];
        let output = self.capture.then(|| {
            let mut parts = Vec::new();
            if !self.text.is_empty() {
                parts.push(text_part(&self.text));
            }
            for call in &self.requested {
                parts.push(json!({
                    "type": "tool_call", "id": call.id.0, "name": call.name, "arguments": call.input,
                }));
            }
            message("assistant", parts)
        });
        self.chat = Some(Chat {
            parent,
            id: new_span_id(),
            start: self.between,
            end: at,
            attrs,
            asked_tools: !self.requested.is_empty(),
            output,
        });
        // The calls of this round run from now on.
        for call in std::mem::take(&mut self.requested) {
            self.tools
                .insert(call.id.0.clone(), (Open::now(tool_attrs(&call), at), call));
        }
        self.text.clear();
        self.retries = 0;
        self.between = at;
    }

    /// Emits the ended call, now that the next event says why it stopped.
    fn close_chat(&mut self, stop: Option<StopReason>) {
        let Some(mut chat) = self.chat.take() else {
            return;
        };
        let reason = if chat.asked_tools {
            "tool_use"
        } else {
            stop.map_or("end_turn", StopReason::as_str)
        };
        chat.attrs.push((
            "gen_ai.response.finish_reasons",
            Value::Strs(vec![reason.to_owned()]),
        ));
        if self.capture {
            let input = Json::Array(self.history.clone());
            chat.attrs
                .push(("gen_ai.input.messages", scrub(&input.to_string()).into()));
            if let Some(mut output) = chat.output.take() {
                output["finish_reason"] = reason.into();
                chat.attrs.push((
                    "gen_ai.output.messages",
                    scrub(&Json::Array(vec![output.clone()]).to_string()).into(),
                ));
                if let Some(obj) = output.as_object_mut() {
                    obj.remove("finish_reason");
                }
                self.history.push(output);
            }
        }
        let open = Open {
            id: chat.id,
            start: chat.start,
            attrs: chat.attrs,
        };
        self.emit(open, Some(chat.parent), "chat", chat.end, None, Vec::new());
    }

    /// A call that failed before its `Usage`: a `chat` span in error.
    fn failed_chat(&mut self, at: SystemTime) {
        let Some(parent) = self.parent() else { return };
        let attrs: Attrs = vec![
            ("gen_ai.operation.name", "chat".into()),
            ("gen_ai.request.model", self.model.clone().into()),
            ("cox.retry.count", self.retries.into()),
        ];
        let open = Open {
            id: new_span_id(),
            start: self.between,
            attrs,
        };
        self.emit(
            open,
            Some(parent),
            "chat",
            at,
            Some("provider_error".to_owned()),
            Vec::new(),
        );
    }

    fn tool_done(&mut self, call_id: &str, result: &ToolResult, at: SystemTime) {
        let (mut open, call) = match self.tools.remove(call_id) {
            Some(found) => found,
            None => {
                // Refused before its round's usage came (or never asked
                // for in a round this run saw): it starts and ends now.
                let Some(pos) = self.requested.iter().position(|c| c.id.0 == call_id) else {
                    return;
                };
                let call = self.requested.remove(pos);
                (Open::now(tool_attrs(&call), at), call)
            }
        };
        let ms = at
            .duration_since(open.start)
            .unwrap_or_default()
            .as_millis();
        open.attrs.push((
            "cox.tool.duration_ms",
            u64::try_from(ms).unwrap_or(u64::MAX).into(),
        ));
        open.attrs.push((
            "cox.tool.output_bytes",
            u64::try_from(result.visible.len())
                .unwrap_or(u64::MAX)
                .into(),
        ));
        open.attrs.push(("cox.tool.success", result.ok.into()));
        if let Some(archive) = &result.archive {
            open.attrs.push(("cox.archive.id", archive.clone().into()));
        }
        if let Some(server) = call
            .name
            .strip_prefix("mcp__")
            .and_then(|n| n.split("__").next())
        {
            open.attrs
                .push(("cox.mcp.server", server.to_owned().into()));
        }
        if self.capture {
            open.attrs.push((
                "gen_ai.tool.call.arguments",
                scrub(&call.input.to_string()).into(),
            ));
            open.attrs
                .push(("gen_ai.tool.call.result", scrub(&result.visible).into()));
            self.history.push(message(
                "tool",
                vec![json!({"type": "tool_call_response", "id": call.id.0, "response": result.visible})],
            ));
        }
        let error = if result.denied {
            Some("denied".to_owned())
        } else if result.ok {
            None
        } else {
            Some("tool_error".to_owned())
        };
        let parent = self.parent();
        let id = open.id;
        self.emit(open, parent, "execute_tool", at, error, Vec::new());
        self.log(
            Some(id),
            at,
            if result.ok {
                Severity::Info
            } else {
                Severity::Warn
            },
            "tool done",
            vec![
                ("gen_ai.tool.call.id", call_id.to_owned().into()),
                ("cox.tool.success", result.ok.into()),
            ],
        );
        if self.tools.is_empty() {
            // The next model call begins once the round's calls are done.
            self.new_round(at);
        }
    }

    fn close_turn(&mut self, stop: Option<StopReason>, at: SystemTime) {
        // Calls still open when their turn ends were cut short.
        let open: Vec<String> = self.tools.keys().cloned().collect();
        for id in open {
            if let Some((span, _)) = self.tools.remove(&id) {
                let parent = self.parent();
                self.emit(
                    span,
                    parent,
                    "execute_tool",
                    at,
                    Some("cancelled".to_owned()),
                    Vec::new(),
                );
            }
        }
        let Some(mut turn) = self.turn.take() else {
            return;
        };
        turn.span
            .attrs
            .push(("cox.tier", turn.tier.unwrap_or(self.tier).as_str().into()));
        let error = match stop {
            Some(stop) => {
                turn.span
                    .attrs
                    .push(("cox.turn.stop_reason", stop.as_str().into()));
                (stop == StopReason::Error).then(|| "error".to_owned())
            }
            None => None,
        };
        let parent = self.session_span();
        self.emit(
            turn.span,
            parent,
            "invoke_agent cox.turn",
            at,
            error,
            Vec::new(),
        );
        self.new_round(at);
    }

    fn emit(
        &mut self,
        open: Open,
        parent: Option<SpanId>,
        name: &'static str,
        end: SystemTime,
        error: Option<String>,
        links: Vec<(TraceId, SpanId)>,
    ) {
        let mut attrs = open.attrs;
        if let Some(error) = &error {
            attrs.push(("error.type", error.clone().into()));
        }
        self.sink.span(SpanRecord {
            trace: self.trace,
            id: open.id,
            parent,
            name,
            start: open.start,
            end: end.max(open.start),
            attrs,
            error,
            links,
        });
    }
}

impl Open {
    fn attrs_str(&self, key: &str) -> String {
        self.attrs
            .iter()
            .find_map(|(k, v)| match v {
                Value::Str(s) if *k == key => Some(s.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }
}

/// What a tool span says from its start.
fn tool_attrs(call: &ToolCall) -> Attrs {
    vec![
        ("gen_ai.operation.name", "execute_tool".into()),
        ("gen_ai.tool.name", call.name.clone().into()),
        ("gen_ai.tool.call.id", call.id.0.clone().into()),
        ("cox.tool.subject", scrub(&call.subject).into()),
        ("cox.tool.risk", call.risk.as_str().into()),
    ]
}

fn scrub(text: &str) -> String {
    cox_core::redact::scrub(text).into_owned()
}

fn text_part(text: &str) -> Json {
    json!({"type": "text", "content": text})
}

fn message(role: &str, parts: Vec<Json>) -> Json {
    json!({"role": role, "parts": parts})
}

#[cfg(test)]
mod tests;
