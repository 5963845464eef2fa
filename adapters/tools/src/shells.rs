//! Background shells: `bash` with `run_in_background`, `bash_output` and
//! `kill_shell`.
//!
//! A background shell is a command the sandbox runs on a task of its own
//! while the session goes on (a dev server, a watcher, a long build). The
//! permission engine decided it exactly as a foreground `bash` call: the
//! flag changes when the answer comes, never what may run. Its output is
//! kept in memory until the model reads it with `bash_output`, which
//! returns what was printed since the last read.
//!
//! Invariants:
//! - every shell runs through the [`Sandbox`] it was registered with, under
//!   the same confinement as a foreground command (or unconfined only when
//!   the call was approved so);
//! - the unread output of a shell is bounded ([`UNREAD_MAX`]): the oldest
//!   bytes go first, and the next read says how many were lost;
//! - shells stop when the session ends ([`Shells::kill_all`], also on drop)
//!   and when the person interrupts, never at a plain end of a turn;
//! - a read never splits a UTF-8 character: an incomplete one waits for
//!   the rest while the shell runs.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use cox_protocol::cancel::CancelToken;
use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::sandbox::{ExecRequest, Sandbox};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::bash::incomplete_tail;
use crate::common;
use crate::schema::input_schema;

/// Unread output kept per shell; past it the oldest bytes are dropped.
pub const UNREAD_MAX: usize = 1 << 20;
/// How long a background shell may run when its call names no timeout.
const NO_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);
/// The most shells running at once in one session.
pub const MAX_RUNNING: usize = 16;
/// How long `kill_shell` waits for a killed shell to be gone.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// How a background shell ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Exited(i32),
    Signalled(i32),
    TimedOut,
    /// `kill_shell`, an interrupt or the end of the session.
    Killed,
    /// The sandbox could not run it.
    Failed,
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ended::Exited(code) => write!(f, "exited with code {code}"),
            Ended::Signalled(signal) => write!(f, "was ended by signal {signal}"),
            Ended::TimedOut => f.write_str("timed out"),
            Ended::Killed => f.write_str("was killed"),
            Ended::Failed => f.write_str("could not start"),
        }
    }
}

/// One shell as `/shells` lists it.
#[derive(Clone, Debug)]
pub struct ShellInfo {
    pub id: String,
    pub command: String,
    /// `None` while it runs.
    pub ended: Option<Ended>,
    pub running_for: Duration,
    /// Bytes it printed in all.
    pub printed: u64,
    /// Bytes not read yet.
    pub unread: usize,
}

/// What a shell printed and has not been read.
#[derive(Debug, Default)]
struct Output {
    unread: Vec<u8>,
    /// Unread bytes dropped to keep `unread` within [`UNREAD_MAX`].
    dropped: u64,
    printed: u64,
    ended: Option<Ended>,
    /// Why the sandbox could not run it.
    error: Option<String>,
}

impl Output {
    fn push(&mut self, chunk: &[u8]) {
        self.printed += chunk.len() as u64;
        self.unread.extend_from_slice(chunk);
        if self.unread.len() > UNREAD_MAX {
            let cut = self.unread.len() - UNREAD_MAX;
            self.unread.drain(..cut);
            self.dropped += cut as u64;
        }
    }
}

struct Shell {
    command: String,
    started: Instant,
    cancel: CancelToken,
    output: Arc<Mutex<Output>>,
    done: Arc<tokio::sync::Notify>,
}

/// The background shells of one session.
pub struct Shells {
    sandbox: Arc<dyn Sandbox>,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next: u32,
    shells: BTreeMap<u32, Shell>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `bash_1` → 1.
fn number(id: &str) -> Option<u32> {
    id.trim().strip_prefix("bash_")?.parse().ok()
}

impl Shells {
    /// Shells that run through `sandbox`.
    #[must_use]
    pub fn new(sandbox: Arc<dyn Sandbox>) -> Arc<Self> {
        Arc::new(Self {
            sandbox,
            inner: Mutex::new(Inner::default()),
        })
    }

    /// Starts `request` on a task of its own and returns its id at once.
    /// Must be called on a Tokio runtime.
    ///
    /// # Errors
    /// [`MAX_RUNNING`] shells already run.
    pub fn start(
        &self,
        mut request: ExecRequest,
        timeout: Option<Duration>,
    ) -> Result<String, String> {
        request.timeout = timeout.unwrap_or(NO_TIMEOUT);
        let output = Arc::new(Mutex::new(Output::default()));
        let done = Arc::new(tokio::sync::Notify::new());
        let cancel = CancelToken::new();
        let mut inner = lock(&self.inner);
        let running = inner
            .shells
            .values()
            .filter(|s| lock(&s.output).ended.is_none())
            .count();
        if running >= MAX_RUNNING {
            return Err(format!(
                "{running} background shells are running, the most a session may have: stop one \
                 with kill_shell first"
            ));
        }
        inner.next += 1;
        let n = inner.next;
        inner.shells.insert(
            n,
            Shell {
                command: request.command.clone(),
                started: Instant::now(),
                cancel: cancel.clone(),
                output: Arc::clone(&output),
                done: Arc::clone(&done),
            },
        );
        drop(inner);
        let sandbox = Arc::clone(&self.sandbox);
        tokio::spawn(async move {
            let sink = Arc::clone(&output);
            let on_output = move |chunk: &[u8]| lock(&sink).push(chunk);
            let result = sandbox.exec(request, cancel, &on_output).await;
            let mut out = lock(&output);
            out.ended = Some(match result {
                Ok(run) if run.cancelled => Ended::Killed,
                Ok(run) if run.timed_out => Ended::TimedOut,
                Ok(run) => match (run.exit_code, run.signal) {
                    (Some(code), _) => Ended::Exited(code),
                    (None, Some(signal)) => Ended::Signalled(signal),
                    (None, None) => Ended::Killed,
                },
                Err(err) => {
                    out.error = Some(err.to_string());
                    Ended::Failed
                }
            });
            drop(out);
            done.notify_waiters();
        });
        Ok(format!("bash_{n}"))
    }

    /// What shell `id` printed since the last read, the lines matching
    /// `filter` only when one is given (the others are dropped), and how
    /// it stands.
    ///
    /// # Errors
    /// No such shell: a text naming the shells there are.
    pub fn read(&self, id: &str, filter: Option<&regex::Regex>) -> Result<String, String> {
        let inner = lock(&self.inner);
        let Some(shell) = number(id).and_then(|n| inner.shells.get(&n)) else {
            return Err(self.unknown(id, &inner));
        };
        let mut out = lock(&shell.output);
        // Bytes of a character still coming wait for the rest.
        let keep = match out.ended {
            Some(_) => 0,
            None => incomplete_tail(&out.unread),
        };
        let take = out.unread.len() - keep;
        let bytes: Vec<u8> = out.unread.drain(..take).collect();
        let dropped = std::mem::take(&mut out.dropped);
        let text = String::from_utf8_lossy(&bytes);
        let mut answer = String::new();
        if dropped > 0 {
            answer.push_str(&format!(
                "[{dropped} bytes printed before what follows were not kept: read more often]\n"
            ));
        }
        match filter {
            Some(re) => {
                for line in text.lines().filter(|l| re.is_match(l)) {
                    answer.push_str(line);
                    answer.push('\n');
                }
            }
            None => answer.push_str(&text),
        }
        if !answer.is_empty() && !answer.ends_with('\n') {
            answer.push('\n');
        }
        if bytes.is_empty() && dropped == 0 {
            answer.push_str("[no new output]\n");
        }
        let id = format!("bash_{}", number(id).unwrap_or_default());
        match (out.ended, &out.error) {
            (Some(Ended::Failed), Some(why)) => {
                answer.push_str(&format!("[{id} could not start: {why}]"));
            }
            (Some(ended), _) => answer.push_str(&format!("[{id} {ended}]")),
            (None, _) => answer.push_str(&format!(
                "[{id} is still running ({} s)]",
                shell.started.elapsed().as_secs()
            )),
        }
        Ok(answer)
    }

    /// Kills shell `id` and waits (a few seconds at most) for it to be gone.
    ///
    /// # Errors
    /// No such shell, or it had already ended.
    pub async fn kill(&self, id: &str) -> Result<String, String> {
        let (cancel, done, output) = {
            let inner = lock(&self.inner);
            let Some(shell) = number(id).and_then(|n| inner.shells.get(&n)) else {
                return Err(self.unknown(id, &inner));
            };
            (
                shell.cancel.clone(),
                Arc::clone(&shell.done),
                Arc::clone(&shell.output),
            )
        };
        let id = id.trim();
        if let Some(ended) = lock(&output).ended {
            return Err(format!("{id} had already ended: it {ended}"));
        }
        let waiting = done.notified();
        cancel.cancel();
        if lock(&output).ended.is_none() {
            let _ = tokio::time::timeout(KILL_WAIT, waiting).await;
        }
        Ok(match lock(&output).ended {
            Some(_) => format!("killed {id}"),
            None => format!("asked {id} to stop; it has not ended yet"),
        })
    }

    /// Kills every shell still running (the session ended, or the person
    /// interrupted it). Returns how many were running.
    pub fn kill_all(&self) -> usize {
        let inner = lock(&self.inner);
        let mut killed = 0;
        for shell in inner.shells.values() {
            if lock(&shell.output).ended.is_none() {
                killed += 1;
            }
            shell.cancel.cancel();
        }
        killed
    }

    /// Stops shell `id` without waiting for it to be gone (a person's
    /// `/shells kill`).
    ///
    /// # Errors
    /// No such shell, or it had already ended.
    pub fn stop(&self, id: &str) -> Result<String, String> {
        let inner = lock(&self.inner);
        let Some(shell) = number(id).and_then(|n| inner.shells.get(&n)) else {
            return Err(self.unknown(id, &inner));
        };
        let id = id.trim();
        if let Some(ended) = lock(&shell.output).ended {
            return Err(format!("{id} had already ended: it {ended}"));
        }
        shell.cancel.cancel();
        Ok(format!("stopping {id}"))
    }

    /// One line per shell, oldest first, for a person: its id, how it
    /// stands, what it printed and its command.
    #[must_use]
    pub fn lines(&self) -> Vec<String> {
        self.list()
            .into_iter()
            .map(|s| {
                let state = match s.ended {
                    None => format!("running {} s", s.running_for.as_secs()),
                    Some(ended) => ended.to_string(),
                };
                let command: String = s.command.chars().take(80).collect();
                format!(
                    "{}  {state} · {} bytes printed, {} unread · {command}",
                    s.id, s.printed, s.unread
                )
            })
            .collect()
    }

    /// Every shell of the session, oldest first.
    #[must_use]
    pub fn list(&self) -> Vec<ShellInfo> {
        lock(&self.inner)
            .shells
            .iter()
            .map(|(n, shell)| {
                let out = lock(&shell.output);
                ShellInfo {
                    id: format!("bash_{n}"),
                    command: shell.command.clone(),
                    ended: out.ended,
                    running_for: shell.started.elapsed(),
                    printed: out.printed,
                    unread: out.unread.len(),
                }
            })
            .collect()
    }

    fn unknown(&self, id: &str, inner: &Inner) -> String {
        let known: Vec<String> = inner.shells.keys().map(|n| format!("bash_{n}")).collect();
        if known.is_empty() {
            format!("no background shell {id}: none was started in this session")
        } else {
            format!(
                "no background shell {id}; this session's are {}",
                known.join(", ")
            )
        }
    }
}

impl std::fmt::Debug for Shells {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shells")
            .field("sandbox", &self.sandbox.name())
            .field("shells", &lock(&self.inner).shells.len())
            .finish()
    }
}

impl Drop for Shells {
    fn drop(&mut self) {
        self.kill_all();
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct OutputInput {
    id: String,
    /// Regex: only matching lines
    filter: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct KillInput {
    id: String,
}

/// `bash_output`: what a background shell printed since the last read.
pub struct BashOutputTool {
    shells: Arc<Shells>,
}

impl BashOutputTool {
    #[must_use]
    pub fn new(shells: Arc<Shells>) -> Self {
        Self { shells }
    }
}

const OUTPUT: &str = "bash_output";
const KILL: &str = "kill_shell";

/// Both tools only touch what the session's own shells printed or run.
fn classify_id(name: &str, input: &Value) -> Classified {
    Classified {
        risk: Risk::ReadOnly,
        subject: common::str_field(input, "id").unwrap_or(name).to_owned(),
        segments: None,
        writes: Vec::new(),
    }
}

impl Tool for BashOutputTool {
    fn name(&self) -> &str {
        OUTPUT
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: OUTPUT.into(),
            description: "A background shell's new output since the last read, and its state."
                .into(),
            input_schema: input_schema::<OutputInput>(),
        }
    }

    fn classify(&self, input: &Value, _: &Workspace) -> Classified {
        classify_id(OUTPUT, input)
    }

    fn run<'a>(&'a self, input: Value, _cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let input: OutputInput = match common::parse(OUTPUT, input) {
                Ok(input) => input,
                Err(result) => return result,
            };
            let filter = match input.filter.as_deref().map(regex::Regex::new) {
                None => None,
                Some(Ok(re)) => Some(re),
                Some(Err(err)) => {
                    return ToolResult::error(format!("filter is not a valid regex: {err}"));
                }
            };
            match self.shells.read(&input.id, filter.as_ref()) {
                Ok(text) => ToolResult::ok(text),
                Err(why) => ToolResult::error(why),
            }
        })
    }
}

/// `kill_shell`: stops a background shell.
pub struct KillShellTool {
    shells: Arc<Shells>,
}

impl KillShellTool {
    #[must_use]
    pub fn new(shells: Arc<Shells>) -> Self {
        Self { shells }
    }
}

impl Tool for KillShellTool {
    fn name(&self) -> &str {
        KILL
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: KILL.into(),
            description: "Stop a background shell.".into(),
            input_schema: input_schema::<KillInput>(),
        }
    }

    fn classify(&self, input: &Value, _: &Workspace) -> Classified {
        classify_id(KILL, input)
    }

    fn run<'a>(&'a self, input: Value, _cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let input: KillInput = match common::parse(KILL, input) {
                Ok(input) => input,
                Err(result) => return result,
            };
            match self.shells.kill(&input.id).await {
                Ok(text) => ToolResult::ok(text),
                Err(why) => ToolResult::error(why),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unread_output_is_bounded_and_the_loss_counted() {
        let mut out = Output::default();
        out.push(&vec![b'a'; UNREAD_MAX]);
        out.push(b"tail");
        assert_eq!(out.unread.len(), UNREAD_MAX);
        assert_eq!(out.dropped, 4);
        assert!(out.unread.ends_with(b"tail"));
        assert_eq!(out.printed, UNREAD_MAX as u64 + 4);
    }

    #[test]
    fn ids_are_read_leniently_but_only_as_ids() {
        assert_eq!(number("bash_3"), Some(3));
        assert_eq!(number(" bash_3 "), Some(3));
        assert_eq!(number("3"), None);
        assert_eq!(number("bash_x"), None);
    }
}
