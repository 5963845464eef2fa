//! `bash`: runs a command line through the session's [`Sandbox`].
//!
//! The tool decides nothing about safety: the permission engine has already
//! allowed the call, and the sandbox owns the process. What it owns is the
//! shape of the answer: the output the model reads is bounded (head and tail
//! of a long output, with the cut said), and how the command ended is always
//! the last line when it was not a clean exit.
//!
//! Chunks streamed to the surfaces are decoded as UTF-8 without splitting a
//! character across two chunks; the final answer is decoded from the whole
//! output, so neither depends on where the pipe happened to cut.
//!
//! [`Sandbox`]: cox_protocol::Sandbox

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::sandbox::{ExecOutput, ExecRequest};
use cox_protocol::tool::{Classified, OutputSink, Tool, ToolContext, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::common;
use crate::schema::input_schema;
use crate::shells::Shells;

const NAME: &str = "bash";
/// Timeout when the call gives none.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The longest timeout a call may ask for.
pub const MAX_TIMEOUT_MS: u64 = 600_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    command: String,
    /// Max 600000 (default 120000)
    timeout_ms: Option<u64>,
    // Run outside the OS sandbox, which asks the user; the result of a
    // command the sandbox blocked says so (no description: the bytes go
    // with every request, and the hint arrives when it is needed).
    // Read from the raw input by `classify` (the core decides on it); here
    // so the schema offers it and unknown fields stay refused.
    #[allow(dead_code)]
    unsandboxed: Option<bool>,
    /// Return a shell id at once; read it with bash_output
    run_in_background: Option<bool>,
}

/// Runs a shell command in the workspace (in the foreground only: see
/// [`SessionBashTool`] for background shells).
#[derive(Clone, Copy, Debug, Default)]
pub struct BashTool;

/// `bash` with background shells: a call with `run_in_background` starts
/// in the session's [`Shells`] and returns its id at once; every other
/// call is [`BashTool`]'s. Interrupting or ending the session kills the
/// shells.
pub struct SessionBashTool {
    shells: Arc<Shells>,
}

impl SessionBashTool {
    #[must_use]
    pub fn new(shells: Arc<Shells>) -> Self {
        Self { shells }
    }
}

impl Tool for SessionBashTool {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> ToolSpec {
        BashTool.spec()
    }

    fn classify(&self, input: &Value, workspace: &Workspace) -> Classified {
        BashTool.classify(input, workspace)
    }

    fn run<'a>(&'a self, input: Value, cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        if input.get("run_in_background").and_then(Value::as_bool) != Some(true) {
            return BashTool.run(input, cx);
        }
        Box::pin(async move {
            let input: Input = match common::parse(NAME, input) {
                Ok(input) => input,
                Err(result) => return result,
            };
            let timeout = input.timeout_ms.map(|ms| Duration::from_millis(ms.max(1)));
            let id = match self.shells.start(request(input, &cx), timeout) {
                Ok(id) => id,
                Err(why) => return ToolResult::error(why),
            };
            ToolResult::ok(format!(
                "started background shell {id}; read what it prints with bash_output {{\"id\": \"{id}\"}}, \
                 stop it with kill_shell. It runs until it ends, is killed, or the session ends."
            ))
        })
    }

    fn interrupted(&self) {
        self.shells.kill_all();
    }

    fn session_ended(&self) {
        self.shells.kill_all();
    }
}

/// What the sandbox is asked to run for `input`.
fn request(input: Input, cx: &ToolContext<'_>) -> ExecRequest {
    ExecRequest {
        command: input.command,
        cwd: cx.workspace.cwd.clone(),
        timeout: Duration::from_millis(effective_timeout_ms(input.timeout_ms)),
        env: Vec::new(),
        unconfined: cx.unconfined,
        call_id: Some(cx.call_id.as_str().to_owned()),
    }
}

impl Tool for BashTool {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Run a bash command in the working directory, in the OS sandbox; \
                          not interactive, with a timeout; a long output is archived. Use \
                          run_in_background for servers and watchers."
                .into(),
            input_schema: input_schema::<Input>(),
        }
    }

    /// The line is split with the real bash parser: the permission engine
    /// judges each command, and the risk is the highest of them. The paths
    /// the commands name are resolved against the workspace (see
    /// `shell_paths`), so path rules reach them. Input without a command
    /// string is one opaque, Exec-rated line.
    fn classify(&self, input: &Value, workspace: &Workspace) -> Classified {
        let Some(command) = common::str_field(input, "command") else {
            return Classified {
                risk: Risk::Exec,
                subject: NAME.to_owned(),
                segments: Some(cox_protocol::types::Segments {
                    commands: vec![NAME.to_owned()],
                    opaque: Some("the input has no command string".to_owned()),
                    ..Default::default()
                }),
                writes: Vec::new(),
            };
        };
        let split = cox_bash::split(command);
        let mut segments = cox_bash::segments(&split);
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        segments.paths = crate::shell_paths::resolve(&split, workspace, home.as_deref());
        segments.unsandboxed = input.get("unsandboxed").and_then(Value::as_bool) == Some(true);
        Classified {
            risk: cox_bash::line_risk(&split),
            subject: command.to_owned(),
            segments: Some(segments),
            writes: Vec::new(),
        }
    }

    fn run<'a>(&'a self, input: Value, cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let input: Input = match common::parse(NAME, input) {
                Ok(input) => input,
                Err(result) => return result,
            };
            if input.run_in_background == Some(true) {
                return ToolResult::error(
                    "background shells are not available here: run the command without \
                     run_in_background",
                );
            }
            let timeout_ms = effective_timeout_ms(input.timeout_ms);
            let request = request(input, &cx);
            let confined = !cx.unconfined
                && matches!(
                    cx.sandbox.confinement(),
                    cox_protocol::sandbox::Confinement::Confined { .. }
                );
            let stream = Utf8Stream::new(cx.output.clone());
            let on_output = |chunk: &[u8]| stream.push(chunk);
            let outcome = cx
                .sandbox
                .exec(request, cx.cancel.clone(), &on_output)
                .await;
            stream.finish();
            match outcome {
                Ok(out) => render(&out, timeout_ms, confined),
                Err(e) => ToolResult::error(e.to_string()),
            }
        })
    }
}

/// The timeout a call gets: its own within bounds, or the default.
fn effective_timeout_ms(asked: Option<u64>) -> u64 {
    asked.unwrap_or(DEFAULT_TIMEOUT_MS).clamp(1, MAX_TIMEOUT_MS)
}

/// Words in a failed command's output that a confinement refusal prints.
const SANDBOX_SIGNS: &[&str] = &[
    "Read-only file system",
    "Operation not permitted",
    "Permission denied",
    "Bad system call",
    "Network is unreachable",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "not in [sandbox] allowed_domains",
];

/// Signal number of a seccomp kill.
const SIGSYS: i32 = 31;

/// What the model is told when a confined command failed the way the
/// sandbox makes commands fail, or `None` when nothing points at it.
fn sandbox_hint(out: &ExecOutput, text: &str) -> Option<&'static str> {
    if text.starts_with("bwrap: ") || text.starts_with("cox sandbox: ") {
        return Some(
            "[sandbox: the OS sandbox could not start this command (the line above says why); \
             it did not run. Call bash again with \"unsandboxed\": true to ask the user to run it \
             outside the sandbox, or tell the user what to fix]",
        );
    }
    let failed = out.exit_code.is_some_and(|c| c != 0) || out.signal == Some(SIGSYS);
    (failed && (out.signal == Some(SIGSYS) || SANDBOX_SIGNS.iter().any(|s| text.contains(s)))).then_some(
        "[sandbox: this command ran inside the OS sandbox (writes only in the workspace roots and \
         a private /tmp, .git read-only, secret folders hidden, network only as configured), and \
         the failure above looks like its refusal. Do not retry it unchanged: find another way, \
         or call bash again with \"unsandboxed\": true, which asks the user to run it outside the \
         sandbox]",
    )
}

/// The answer the model reads for a finished command.
fn render(out: &ExecOutput, timeout_ms: u64, confined: bool) -> ToolResult {
    // The whole output (the sandbox already bounds what it keeps): the core
    // archives it and shows the model head and tail of a big one.
    let mut visible = String::from_utf8_lossy(&out.output).into_owned();
    if out.dropped_bytes > 0 {
        if !visible.ends_with('\n') {
            visible.push('\n');
        }
        let total = out.output.len() as u64 + out.dropped_bytes;
        visible.push_str(&format!(
            "[the command printed {total} bytes; {} bytes from the middle were not kept]\n",
            out.dropped_bytes
        ));
    }
    let status = if out.timed_out {
        Some(format!("[timed out after {timeout_ms} ms]"))
    } else if out.cancelled {
        Some("[cancelled]".to_owned())
    } else if let Some(signal) = out.signal {
        Some(format!("[killed by signal {signal}]"))
    } else {
        out.exit_code
            .filter(|&code| code != 0)
            .map(|code| format!("[exit code {code}]"))
    };
    if let Some(status) = status {
        if !visible.is_empty() && !visible.ends_with('\n') {
            visible.push('\n');
        }
        visible.push_str(&status);
    } else if visible.is_empty() {
        visible.push_str("(no output)");
    }
    let hint = confined.then(|| sandbox_hint(out, &visible)).flatten();
    for line in out
        .notes
        .iter()
        .map(|n| format!("[sandbox: {n}]"))
        .chain(hint.map(str::to_owned))
    {
        if !visible.ends_with('\n') {
            visible.push('\n');
        }
        visible.push_str(&line);
    }
    let ok = out.exit_code == Some(0) && !out.timed_out && !out.cancelled;
    let result = if ok {
        ToolResult::ok(visible)
    } else {
        ToolResult::error(visible)
    };
    let mut result = result.with_bytes(out.output.len() as u64 + out.dropped_bytes);
    result.notices.clone_from(&out.notes);
    result
}

/// Forwards output chunks as text, holding back an incomplete UTF-8
/// sequence at a chunk's end until the next chunk completes it.
struct Utf8Stream {
    sink: OutputSink,
    pending: Mutex<Vec<u8>>,
}

impl Utf8Stream {
    fn new(sink: OutputSink) -> Self {
        Self {
            sink,
            pending: Mutex::new(Vec::new()),
        }
    }

    fn push(&self, chunk: &[u8]) {
        let mut pending = self
            .pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        pending.extend_from_slice(chunk);
        let keep = incomplete_tail(&pending);
        let ready = pending.len() - keep;
        if ready > 0 {
            self.sink
                .send(String::from_utf8_lossy(&pending[..ready]).into_owned());
            pending.drain(..ready);
        }
    }

    /// Sends whatever is still held back, however incomplete.
    fn finish(&self) {
        let mut pending = self
            .pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !pending.is_empty() {
            self.sink
                .send(String::from_utf8_lossy(&pending).into_owned());
            pending.clear();
        }
    }
}

/// How many bytes at the end of `bytes` start a UTF-8 character that is not
/// complete yet (0 to 3).
pub(crate) fn incomplete_tail(bytes: &[u8]) -> usize {
    // A character is at most 4 bytes, so its lead byte is among the last 3
    // when it is still incomplete.
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        if byte & 0b1100_0000 == 0b1000_0000 {
            continue; // a continuation byte: look further back
        }
        let needed = match byte {
            b if b & 0b1110_0000 == 0b1100_0000 => 2,
            b if b & 0b1111_0000 == 0b1110_0000 => 3,
            b if b & 0b1111_1000 == 0b1111_0000 => 4,
            _ => 1,
        };
        return if needed > back { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_default_and_clamp() {
        assert_eq!(effective_timeout_ms(None), 120_000);
        assert_eq!(effective_timeout_ms(Some(5_000)), 5_000);
        assert_eq!(effective_timeout_ms(Some(10_000_000)), 600_000);
        assert_eq!(effective_timeout_ms(Some(0)), 1);
    }

    #[test]
    fn an_incomplete_character_at_the_end_is_held_back() {
        let snow = "☃".as_bytes(); // 3 bytes
        assert_eq!(incomplete_tail(b"abc"), 0);
        assert_eq!(incomplete_tail(&snow[..1]), 1);
        assert_eq!(incomplete_tail(&snow[..2]), 2);
        assert_eq!(incomplete_tail(snow), 0);
        assert_eq!(
            incomplete_tail(&[b'a', 0xff]),
            0,
            "invalid bytes are not held back"
        );
    }

    #[test]
    fn chunks_split_inside_a_character_stream_whole_characters() {
        let (tx, mut rx) = futures::channel::mpsc::unbounded();
        let stream = Utf8Stream::new(OutputSink::new("c".into(), tx));
        let bytes = "a☃b".as_bytes();
        stream.push(&bytes[..2]);
        stream.push(&bytes[2..4]);
        stream.push(&bytes[4..]);
        stream.finish();
        drop(stream);
        let mut chunks = Vec::new();
        while let Ok((_, chunk)) = rx.try_recv() {
            chunks.push(chunk);
        }
        assert_eq!(chunks, ["a", "☃", "b"]);
    }
}
