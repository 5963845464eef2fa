//! The `Sandbox` trait: where shell commands run.
//!
//! The default adapter spawns a process in its own process group with a
//! timeout; stronger adapters (namespaces, seccomp) can confine it further.
//! Whatever the adapter, a cancelled or timed-out command leaves no process
//! of its group behind.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use crate::cancel::CancelToken;
use crate::provider::BoxFuture;

/// One command line to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecRequest {
    /// Run by `bash -c`.
    pub command: String,
    pub cwd: PathBuf,
    pub timeout: Duration,
    /// Extra variables, set on top of the inherited environment.
    pub env: Vec<(String, String)>,
}

/// How a command ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExecOutput {
    /// stdout and stderr, interleaved in the order they arrived. A sandbox
    /// may bound what it keeps: then this is the head and the tail, and
    /// `dropped_bytes` says how much was cut between them.
    pub output: Vec<u8>,
    /// Bytes of output cut from the middle because it passed the sandbox's
    /// limit; 0 when `output` is whole.
    pub dropped_bytes: u64,
    /// `None` when a signal ended it.
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
}

/// The command could not be run at all (a command that ran and failed is
/// an [`ExecOutput`] with its exit code, not this).
///
/// The message is the whole line, cause included (the model reads it as a
/// tool result); the cause is also kept as `source()` (see
/// [`crate::error`]).
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The pipe the output comes through could not be made.
    #[error("could not run the command: creating the output pipe: {source}")]
    Pipe { source: io::Error },
    /// The program (the shell, or the sandbox wrapping it) could not be
    /// started in `cwd`.
    #[error("could not run the command: {program} in {}: {source}", cwd.display())]
    Spawn {
        program: String,
        cwd: PathBuf,
        source: io::Error,
    },
    /// The program was gone before it could be given a process group.
    #[error("could not run the command: {program} exited before it started")]
    Vanished { program: String },
    /// Waiting for the program to end failed.
    #[error("could not run the command: waiting for {program}: {source}")]
    Wait { program: String, source: io::Error },
}

/// Somewhere to run shell commands.
pub trait Sandbox: Send + Sync {
    /// A short name for `cox doctor` and the logs.
    fn name(&self) -> &str;
    /// Runs the command to its end, its timeout, or `cancel`. Output chunks
    /// are passed to `on_output` as they arrive.
    fn exec<'a>(
        &'a self,
        request: ExecRequest,
        cancel: CancelToken,
        on_output: &'a (dyn Fn(&[u8]) + Send + Sync),
    ) -> BoxFuture<'a, Result<ExecOutput, SandboxError>>;
}
