//! Rendering the event stream for `cox run`, and the run's result.
//!
//! `stream-json` frames the stream the way Claude Code does: a
//! `{"type":"system","subtype":"init",…}` line first, every other event as
//! its own JSON line, and a `{"type":"result",…}` line last. `json` prints
//! only that result object; `text` prints only the model's final answer.
//! Every line is flushed as it is written, so a pipe sees events live.
//!
//! The exit code is derived from the events alone: 4 interrupted, 3 budget,
//! 1 error or max turns, 2 when a call was denied, else 0.
//!
//! Everything printed is scrubbed of secrets ([`cox_core::redact::scrub`]):
//! every string of every JSON line (tool-call input and thinking included:
//! the model needs those unscrubbed, a terminal or a log does not), the
//! `text` answer, and the notices and retries on stderr. The JSON path
//! stays cheap: a line is walked string by string only when its serialised
//! form holds the start of a secret shape.

use std::borrow::Cow;
use std::io::Write;
use std::time::Instant;

use cox_core::redact::{may_hold_secret, scrub};
use cox_protocol::SessionId;
use cox_protocol::catalog::{Catalog, cost};
use cox_protocol::types::{Event, NoticeLevel, StopReason, ToolResult, Usage};
use serde_json::{Value, json};

use crate::args::OutputFormat;

/// A denied call, as the result line lists it.
#[derive(Debug, Clone)]
struct Denial {
    tool_name: String,
    tool_use_id: String,
    tool_input: Value,
}

/// Watches the events of one run and prints them.
pub struct Renderer<W: Write> {
    out: W,
    format: OutputFormat,
    started: Instant,
    session_id: Option<SessionId>,
    /// Text of the model's current round; the final one is the answer.
    round_text: String,
    after_tools: bool,
    rounds: u32,
    usage: Usage,
    stop: Option<StopReason>,
    denials: Vec<Denial>,
    /// Calls requested and not yet done: id, tool, subject, input.
    pending_calls: Vec<(String, String, String, Value)>,
    /// Prices for `total_cost_usd`.
    catalog: Catalog,
    cost_usd: f64,
    /// Models a call ran on that have no price row.
    unpriced: Vec<String>,
    /// `--verbose`: in text format, every finished call gets a line.
    verbose: bool,
    /// Standard output is a terminal: the answer in text format is shown
    /// as the TUI shows it, with no escape sequence or bidi control.
    terminal: bool,
    last_error: Option<String>,
    write_failed: bool,
    /// The MCP servers and their states, for `system/init`.
    mcp_servers: crate::mcp::Statuses,
    /// Reused for every line, so printing allocates nothing per event.
    buf: Vec<u8>,
    /// `--json-schema`: the answer's JSON, or why it never validated.
    structured: Option<Result<Value, String>>,
}

impl<W: Write> Renderer<W> {
    /// A renderer writing to `out`.
    pub fn new(out: W, format: OutputFormat, started: Instant) -> Self {
        Self {
            out,
            format,
            started,
            session_id: None,
            round_text: String::new(),
            after_tools: false,
            rounds: 0,
            usage: Usage::default(),
            stop: None,
            denials: Vec::new(),
            pending_calls: Vec::new(),
            catalog: Catalog::default(),
            cost_usd: 0.0,
            unpriced: Vec::new(),
            verbose: false,
            terminal: false,
            last_error: None,
            write_failed: false,
            mcp_servers: crate::mcp::Statuses::default(),
            buf: Vec::with_capacity(256),
            structured: None,
        }
    }

    /// The model's answer so far: the text of its last round.
    #[must_use]
    pub fn answer(&self) -> &str {
        &self.round_text
    }

    /// `--json-schema`: the answer's JSON (the result's
    /// `structured_output`), or why it never validated (an error result).
    pub fn structured(&mut self, outcome: Result<Value, String>) {
        self.structured = Some(outcome);
    }

    /// Prices the run's usage with `catalog` for `total_cost_usd`.
    #[must_use]
    pub fn with_catalog(mut self, catalog: Catalog) -> Self {
        self.catalog = catalog;
        self
    }

    /// `--verbose`: in text format, a line on stderr for every finished
    /// call, not only the refused and failed ones.
    #[must_use]
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// The session's MCP servers and their states, for `system/init`.
    #[must_use]
    pub fn with_servers(mut self, servers: crate::mcp::Statuses) -> Self {
        self.mcp_servers = servers;
        self
    }

    /// Whether standard output is a terminal (see the field).
    #[must_use]
    pub fn terminal(mut self, terminal: bool) -> Self {
        self.terminal = terminal;
        self
    }

    /// Takes one event: records what the result needs, prints what the
    /// format shows.
    pub fn event(&mut self, event: &Event) {
        match event {
            Event::SessionStarted {
                session_id,
                cwd,
                model,
                provider,
                tools,
                permission_mode,
                ..
            } => {
                self.session_id = Some(*session_id);
                if self.format == OutputFormat::StreamJson {
                    let init = json!({
                        "type": "system",
                        "subtype": "init",
                        "session_id": session_id,
                        "cwd": cwd,
                        "model": model,
                        "provider": provider,
                        "tools": tools,
                        "mcp_servers": crate::mcp::listed(&self.mcp_servers),
                        "permissionMode": permission_mode,
                    });
                    self.line(&init);
                }
                return;
            }
            // The answer is the last turn's (a schema's second chance is
            // a turn of its own).
            Event::TurnStarted { .. } => {
                self.round_text.clear();
                self.after_tools = false;
            }
            Event::TextDelta { text } => {
                if self.after_tools {
                    self.round_text.clear();
                    self.after_tools = false;
                }
                self.round_text.push_str(text);
            }
            Event::ToolCallRequested { call } => {
                self.after_tools = true;
                self.pending_calls.push((
                    call.id.0.clone(),
                    call.name.clone(),
                    call.subject.clone(),
                    call.input.clone(),
                ));
            }
            Event::ToolCallDone { call_id, result } => {
                let index = self
                    .pending_calls
                    .iter()
                    .position(|(id, ..)| id == &call_id.0);
                let (id, name, subject, input) = match index {
                    Some(i) => self.pending_calls.swap_remove(i),
                    None => (call_id.0.clone(), String::new(), String::new(), Value::Null),
                };
                if self.format == OutputFormat::Text && (self.verbose || !result.ok) {
                    eprintln!("{}", printable(&call_line(&name, &subject, result)));
                }
                if result.denied {
                    self.denials.push(Denial {
                        tool_name: name,
                        tool_use_id: id,
                        tool_input: input,
                    });
                }
            }
            Event::Usage {
                usage, model, job, ..
            } => {
                // A turn is a main call; compaction and the title are
                // counted in the usage and the cost, not in the turns.
                if *job == cox_protocol::types::Job::Main {
                    self.rounds += 1;
                }
                self.usage.add(usage);
                let cost = cost(self.catalog.get(model), usage);
                self.cost_usd += cost.usd;
                if cost.estimated && !self.unpriced.contains(model) {
                    self.unpriced.push(model.clone());
                }
            }
            // A subagent's calls count in the run's usage and cost (its
            // ledger rows stay under its own session).
            Event::Subagent { event, .. } => {
                // Its own subagents' calls too, however deep.
                let mut event = &**event;
                while let Event::Subagent { event: inner, .. } = event {
                    event = inner;
                }
                if let Event::Usage { usage, model, .. } = event {
                    self.usage.add(usage);
                    let cost = cost(self.catalog.get(model), usage);
                    self.cost_usd += cost.usd;
                    if cost.estimated && !self.unpriced.contains(model) {
                        self.unpriced.push(model.clone());
                    }
                }
            }
            Event::Notice { level, text } => {
                if *level == NoticeLevel::Error {
                    self.last_error = Some(text.clone());
                }
                if self.format != OutputFormat::StreamJson
                    && matches!(
                        level,
                        NoticeLevel::Error | NoticeLevel::Warn | NoticeLevel::Security
                    )
                {
                    let tag = if *level == NoticeLevel::Error {
                        "error"
                    } else {
                        "warning"
                    };
                    eprintln!("cox: {tag}: {}", printable(text));
                }
            }
            Event::Retry {
                attempt,
                of,
                delay_ms,
                reason,
                discarded,
            } => {
                if *discarded {
                    self.round_text.clear();
                }
                if self.format != OutputFormat::StreamJson {
                    let void = if *discarded {
                        "; the partial answer is discarded"
                    } else {
                        ""
                    };
                    eprintln!(
                        "cox: warning: {}{void}; trying again in {:.1} s (attempt {attempt} of {of})",
                        printable(reason),
                        *delay_ms as f64 / 1000.0
                    );
                }
            }
            Event::TurnDone { stop } => self.stop = Some(*stop),
            // Text format with --verbose: a line per hook run (its
            // failures are warnings already).
            Event::HookRan {
                hook,
                event,
                duration_ms,
                outcome,
                message,
                ..
            } if self.format == OutputFormat::Text && self.verbose => {
                let said = message
                    .as_deref()
                    .map(|m| format!(": {}", m.lines().next().unwrap_or_default()))
                    .unwrap_or_default();
                eprintln!(
                    "{}",
                    printable(&format!(
                        "cox: hook {hook} ({event}) {} in {duration_ms} ms{said}",
                        outcome.as_str()
                    ))
                );
            }
            _ => {}
        }
        if self.format == OutputFormat::StreamJson {
            self.line(event);
        }
    }

    /// True once stdout could not be written (a closed pipe): the run
    /// should stop, since nobody reads it.
    pub fn output_closed(&self) -> bool {
        self.write_failed
    }

    /// The exit code the events so far call for.
    pub fn exit_code(&self) -> i32 {
        if matches!(self.structured, Some(Err(_))) {
            return 1;
        }
        match self.stop {
            Some(StopReason::Interrupted) => 4,
            Some(StopReason::Budget) => 3,
            Some(StopReason::Error | StopReason::MaxTurns | StopReason::MaxTokens) | None => 1,
            Some(StopReason::Denied) => 2,
            Some(StopReason::EndTurn) if !self.denials.is_empty() => 2,
            Some(StopReason::EndTurn) => 0,
        }
    }

    /// Prints what comes after the last event (the result, or the answer)
    /// and returns the exit code.
    pub fn finish(mut self) -> i32 {
        let code = self.exit_code();
        match self.format {
            OutputFormat::Text => {
                if !self.round_text.is_empty() {
                    // Scrubbed whole, so a secret split across deltas
                    // is caught here too.
                    let text = std::mem::take(&mut self.round_text);
                    let text = scrub(&text);
                    // On a terminal, what the model wrote cannot restyle
                    // it or reorder what is shown; a pipe gets the bytes.
                    if self.terminal {
                        self.write_text(&cox_core::sanitize::sanitize(&text));
                    } else {
                        self.write_text(&text);
                    }
                }
            }
            OutputFormat::Json | OutputFormat::StreamJson => {
                let result = self.result(code);
                self.line(&result);
            }
        }
        if self.write_failed { 1 } else { code }
    }

    fn result(&self, code: i32) -> Value {
        let stop = self.stop.map_or("error", StopReason::as_str);
        let subtype = match self.stop {
            Some(StopReason::EndTurn) => "success",
            Some(StopReason::MaxTurns) => "error_max_turns",
            Some(StopReason::MaxTokens) => "error_max_tokens",
            Some(StopReason::Interrupted) => "interrupted",
            Some(StopReason::Budget) => "error_budget",
            Some(StopReason::Denied) => "denied",
            Some(StopReason::Error) | None => "error_during_execution",
        };
        let denials: Vec<Value> = self
            .denials
            .iter()
            .map(|d| json!({"tool_name": d.tool_name, "tool_use_id": d.tool_use_id, "tool_input": d.tool_input}))
            .collect();
        let usage = json!({
            "input_tokens": self.usage.input_tokens,
            "output_tokens": self.usage.output_tokens,
            "cache_creation_input_tokens": self.usage.cache_write_tokens,
            "cache_read_input_tokens": self.usage.cache_read_tokens,
        });
        let mut result = json!({
            "type": "result",
            "subtype": subtype,
            "is_error": subtype != "success",
            "stop": stop,
            "exit_code": code,
            "result": self.round_text,
            "num_turns": self.rounds,
            "duration_ms": u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "session_id": self.session_id,
            "usage": usage,
            "total_cost_usd": self.cost_usd,
            "permission_denials": denials,
        });
        if !self.unpriced.is_empty() {
            // The total leaves these out: say so rather than look exact.
            result["unpriced_models"] = json!(self.unpriced);
        }
        if let Some(error) = &self.last_error {
            result["error"] = Value::String(error.clone());
        }
        match &self.structured {
            Some(Ok(value)) => result["structured_output"] = value.clone(),
            Some(Err(why)) => {
                result["subtype"] = json!("error_max_structured_output_retries");
                result["is_error"] = json!(true);
                result["error"] = json!(format!(
                    "the answer did not validate against the schema, twice: {why}"
                ));
            }
            None => {}
        }
        result
    }

    fn line(&mut self, value: &impl serde::Serialize) {
        if self.write_failed {
            return;
        }
        self.buf.clear();
        if let Err(err) = serde_json::to_writer(&mut self.buf, value) {
            eprintln!("cox: error: an event could not be printed: {err}");
            return;
        }
        if may_hold_secret(&self.buf) {
            let scrubbed = serde_json::to_value(value).and_then(|mut value| {
                scrub_strings(&mut value);
                self.buf.clear();
                serde_json::to_writer(&mut self.buf, &value)
            });
            if let Err(err) = scrubbed {
                eprintln!("cox: error: an event could not be printed: {err}");
                return;
            }
        }
        self.buf.push(b'\n');
        if self
            .out
            .write_all(&self.buf)
            .and_then(|()| self.out.flush())
            .is_err()
        {
            self.write_failed = true;
        }
    }

    fn write_text(&mut self, text: &str) {
        let ends = text.ends_with('\n');
        let ok = self.out.write_all(text.as_bytes()).is_ok()
            && (ends || self.out.write_all(b"\n").is_ok())
            && self.out.flush().is_ok();
        self.write_failed |= !ok;
    }
}

/// `text` as it may reach a terminal: secrets scrubbed, and control and
/// bidirectional-override characters written as `\u{..}` escapes, so what a
/// model or a file said can neither restyle the terminal nor hide text.
#[must_use]
pub fn printable(text: &str) -> String {
    let clean = scrub(text);
    let hostile =
        |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !clean.contains(hostile) {
        return clean.into_owned();
    }
    let mut out = String::with_capacity(clean.len() + 8);
    for c in clean.chars() {
        if hostile(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// The stderr line for a finished call in text format: refused, failed, or
/// (with `--verbose`) done.
fn call_line(name: &str, subject: &str, result: &ToolResult) -> String {
    let what = if subject.is_empty() || subject == name {
        name.to_owned()
    } else {
        format!("{name} {}", first_line(subject, 120))
    };
    if result.ok {
        return format!("cox: done: {what}");
    }
    let tag = if result.denied { "denied" } else { "failed" };
    // A command's status line ends its output; anything else leads with
    // what went wrong.
    let last = result
        .visible
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with('['));
    let why = last.unwrap_or_else(|| result.visible.lines().next().unwrap_or_default());
    format!("cox: {tag}: {what}: {}", first_line(why, 200))
}

/// The first line of `text`, cut to `max` characters.
fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

/// Scrubs every string in `value`, object keys included.
pub(crate) fn scrub_strings(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let Cow::Owned(clean) = scrub(text) {
                *text = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(scrub_strings),
        Value::Object(map) => {
            if map.keys().any(|k| matches!(scrub(k), Cow::Owned(_))) {
                *map = std::mem::take(map)
                    .into_iter()
                    .map(|(k, v)| (scrub(&k).into_owned(), v))
                    .collect();
            }
            map.values_mut().for_each(scrub_strings);
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cox_protocol::types::{Risk, ToolCall, ToolResult};

    fn run(events: &[Event], format: OutputFormat) -> (String, i32) {
        let mut buf = Vec::new();
        let mut r = Renderer::new(&mut buf, format, Instant::now());
        events.iter().for_each(|e| r.event(e));
        let code = r.finish();
        (String::from_utf8(buf).unwrap(), code)
    }

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "write".into(),
            input: json!({"path": "a"}),
            risk: Risk::Write,
            subject: "a".into(),
            segments: None,
            writes: Vec::new(),
        }
    }

    #[test]
    fn text_prints_the_last_rounds_answer_only() {
        let events = [
            Event::TextDelta {
                text: "Let me write it. ".into(),
            },
            Event::ToolCallRequested { call: call("c1") },
            Event::ToolCallDone {
                call_id: "c1".into(),
                result: ToolResult::ok("wrote"),
            },
            Event::TextDelta {
                text: "Done".into(),
            },
            Event::TextDelta { text: ".".into() },
            Event::TurnDone {
                stop: StopReason::EndTurn,
            },
        ];
        assert_eq!(run(&events, OutputFormat::Text), ("Done.\n".into(), 0));
    }

    #[test]
    fn on_a_terminal_the_answer_loses_escapes_and_bidi_controls_and_a_pipe_keeps_them() {
        let hostile = "red \u{1b}[31mtext\u{1b}]0;title\u{7} \u{202e}evil\u{202c} end";
        let events = [
            Event::TextDelta {
                text: hostile.into(),
            },
            Event::TurnDone {
                stop: StopReason::EndTurn,
            },
        ];
        let shown = |terminal: bool| {
            let mut buf = Vec::new();
            let mut r =
                Renderer::new(&mut buf, OutputFormat::Text, Instant::now()).terminal(terminal);
            events.iter().for_each(|e| r.event(e));
            r.finish();
            String::from_utf8(buf).unwrap()
        };
        let on_terminal = shown(true);
        assert_eq!(on_terminal, "red text evil end\n");
        assert_eq!(
            shown(false),
            format!("{hostile}\n"),
            "a pipe gets the bytes"
        );
    }

    #[test]
    fn a_denied_call_makes_exit_two_and_is_listed() {
        let events = [
            Event::ToolCallRequested { call: call("c1") },
            Event::ToolCallDone {
                call_id: "c1".into(),
                result: ToolResult::denied("no"),
            },
            Event::TurnDone {
                stop: StopReason::EndTurn,
            },
        ];
        let (out, code) = run(&events, OutputFormat::Json);
        assert_eq!(code, 2);
        let result: Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(result["permission_denials"][0]["tool_use_id"], "c1");
        assert_eq!(result["exit_code"], 2);
        assert_eq!(result["is_error"], false, "the run itself succeeded");
    }

    #[test]
    fn nothing_secret_shaped_is_printed_in_any_format() {
        let key = "sk-ant-api03-EXAMPLEexample-0123456789";
        let mut asked = call("c1");
        asked.input = json!({"path": "a", "content": key, key: 1});
        let events = [
            Event::ThinkingDelta {
                text: format!("the key is {key}"),
            },
            Event::ToolCallRequested { call: asked },
            Event::ToolCallOutput {
                call_id: "c1".into(),
                chunk: format!("Bearer {key}\n"),
            },
            Event::ToolCallDone {
                call_id: "c1".into(),
                result: ToolResult::denied(format!("no: {key}")),
            },
            Event::TextDelta {
                text: format!("Use {key}"),
            },
            Event::Notice {
                level: NoticeLevel::Error,
                text: format!("failed near {key}"),
            },
            Event::TurnDone {
                stop: StopReason::EndTurn,
            },
        ];
        for format in [
            OutputFormat::Text,
            OutputFormat::Json,
            OutputFormat::StreamJson,
        ] {
            let (out, _) = run(&events, format);
            assert!(!out.contains(key), "{format:?}: {out}");
            assert!(out.contains("«redacted»"), "{format:?}: {out}");
        }
        let (out, _) = run(&events, OutputFormat::Json);
        let result: Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(result["result"], "Use «redacted»");
        assert_eq!(result["error"], "failed near «redacted»");
        assert_eq!(
            result["permission_denials"][0]["tool_input"],
            json!({"path": "a", "content": "«redacted»", "«redacted»": 1})
        );
    }

    #[test]
    fn turns_count_main_calls_and_the_cost_counts_every_call() {
        use cox_protocol::catalog::{ModelInfo, Prices};
        use cox_protocol::provider::Tier;
        use cox_protocol::types::Job;
        let usage = |job, model: &str| Event::Usage {
            provider: "p".into(),
            model: model.into(),
            tier: Tier::Code,
            job,
            effort: None,
            usage: Usage {
                input_tokens: 1_000_000,
                ..Usage::default()
            },
        };
        let priced = ModelInfo {
            id: "m".into(),
            prices: Some(Prices {
                input: 2.0,
                output: 0.0,
                cache_read: 0.0,
                cache_write: 0.0,
                web_search: 0.0,
            }),
            provider: "p".into(),
            context_window: 200_000,
            max_output: 8_000,
            prices_as_of: None,
            efforts: Vec::new(),
            web_search: false,
        };
        // A grandchild's call counts in the cost, not in the turns.
        let child = cox_protocol::SessionId::generate();
        let nested = |event: Event| Event::Subagent {
            call_id: "a".into(),
            session_id: child,
            event: Box::new(event),
        };
        let events = [
            usage(Job::Main, "m"),
            usage(Job::Compact, "m"),
            usage(Job::Title, "free"),
            nested(nested(usage(Job::Main, "m"))),
            Event::TurnDone {
                stop: StopReason::EndTurn,
            },
        ];
        let mut buf = Vec::new();
        let mut r = Renderer::new(&mut buf, OutputFormat::Json, Instant::now())
            .with_catalog(Catalog::new(vec![priced]));
        events.iter().for_each(|e| r.event(e));
        r.finish();
        let result: Value = serde_json::from_slice(&buf).unwrap();
        assert_eq!(result["num_turns"], 1);
        assert_eq!(result["usage"]["input_tokens"], 4_000_000);
        assert_eq!(result["total_cost_usd"], 6.0);
        assert_eq!(result["unpriced_models"], json!(["free"]));
    }

    #[test]
    fn stderr_lines_carry_no_terminal_controls() {
        let line = printable("echo \u{1b}]0;PWNED\u{7}\u{1b}[31mred\rOVER \u{202e}txt.exe");
        assert!(!line.chars().any(char::is_control), "{line}");
        assert!(!line.contains('\u{202e}'), "{line}");
        assert!(line.contains("\\u{1b}]0;PWNED\\u{7}"), "{line}");
        assert_eq!(printable("plain text"), "plain text");
    }

    #[test]
    fn exit_codes_follow_the_stop_reason() {
        for (stop, code) in [
            (StopReason::EndTurn, 0),
            (StopReason::Error, 1),
            (StopReason::MaxTurns, 1),
            (StopReason::Denied, 2),
            (StopReason::Budget, 3),
            (StopReason::Interrupted, 4),
        ] {
            assert_eq!(
                run(&[Event::TurnDone { stop }], OutputFormat::Text).1,
                code,
                "{stop:?}"
            );
        }
        assert_eq!(
            run(&[], OutputFormat::Text).1,
            1,
            "no turn_done is an error"
        );
    }
}
