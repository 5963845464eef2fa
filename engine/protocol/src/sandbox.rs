//! The `Sandbox` trait: where shell commands run, and how far they reach.
//!
//! An adapter runs each command confined by the OS (namespaces, seccomp,
//! Landlock) as the session's sandbox mode asks, or says it cannot
//! ([`Confinement::Unavailable`]). Invariants every adapter keeps:
//! - a confined request never runs unconfined: when confinement is not
//!   possible the answer is [`SandboxError::Unavailable`], never a quiet
//!   downgrade; only a request with `unconfined` set (which the core sets
//!   after a person said yes) runs outside it;
//! - a cancelled or timed-out command leaves no process behind.

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
    /// Run outside the sandbox. Only the core sets it, and only for a call a
    /// person approved running unconfined.
    pub unconfined: bool,
    /// The tool call this command runs for, when there is one: a sandbox
    /// that hands commands to a surface (an editor's terminal) attaches
    /// the run to it.
    pub call_id: Option<String>,
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
    /// What the sandbox has to say about this run (a refused connection, a
    /// limit of the mechanism), one line each, for the model and the user.
    pub notes: Vec<String>,
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
    /// The sandbox cannot confine commands on this machine, and the request
    /// was not approved to run unconfined.
    #[error(
        "not run: the sandbox cannot confine commands here ({why}); \
         the command runs only unsandboxed, which a person must approve"
    )]
    Unavailable { why: String },
}

/// How an adapter confines the commands it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Confinement {
    /// Every command is confined; `mechanism` says how, for `cox doctor`
    /// and the status line ("bubblewrap", "landlock").
    Confined { mechanism: String },
    /// Commands run with the user's own rights: the session chose
    /// `danger-full-access`, or this adapter confines nothing by design.
    Off,
    /// Confinement was asked for and is not possible here; `why` names what
    /// is missing. Commands then run only when approved unconfined.
    Unavailable { why: String },
}

/// Somewhere to run shell commands.
pub trait Sandbox: Send + Sync {
    /// A short name for `cox doctor` and the logs.
    fn name(&self) -> &str;
    /// How commands are confined. May probe the machine the first time
    /// (once per adapter); later calls answer from the cached result.
    fn confinement(&self) -> Confinement;
    /// Runs the command to its end, its timeout, or `cancel`. Output chunks
    /// are passed to `on_output` as they arrive.
    fn exec<'a>(
        &'a self,
        request: ExecRequest,
        cancel: CancelToken,
        on_output: &'a (dyn Fn(&[u8]) + Send + Sync),
    ) -> BoxFuture<'a, Result<ExecOutput, SandboxError>>;
    /// A file tool wrote `path` (absolute) for the person, once the call
    /// was decided: a file a command making it would have had moved aside
    /// (an instruction file) is theirs now. Nothing by default.
    fn wrote(&self, _path: &std::path::Path) {}
}
