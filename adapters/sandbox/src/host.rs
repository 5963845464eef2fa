//! Commands another process starts for cox: an editor's terminal (ACP's
//! `terminal/*`), so the person sees each command run where they work.
//!
//! The sandbox still decides how a command runs. What is handed over is the
//! whole launch, the confinement's own program and arguments included
//! (bubblewrap around the seccomp helper around `bash -c`), so the other
//! side starts exactly what cox would have started, and a confined command
//! stays confined. Invariants:
//! - a launch that needs something only this process holds (the Landlock
//!   helper's lifeline pipe) or that is not text (a non-UTF-8 path in its
//!   arguments) is never handed over: cox runs it itself;
//! - the host ends the command on the request's timeout and on `cancel`,
//!   as [`crate::run`] does, and reports how it ended.

use std::path::PathBuf;
use std::time::Duration;

use cox_protocol::CancelToken;
use cox_protocol::provider::BoxFuture;
use cox_protocol::sandbox::{ExecOutput, SandboxError};

use crate::Launch;

/// The most output a host is asked to keep (the end of it, when more
/// came): what cox keeps at each end of a command it runs itself.
pub const HANDOFF_OUTPUT_LIMIT: u64 = crate::KEEP_EACH_END as u64;

/// One command for a host to start, as the sandbox built it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handoff {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// Variables to set on top of the host's environment.
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
    /// The tool call the command runs for, when known.
    pub call_id: Option<String>,
}

/// Somewhere other than this process that starts commands.
pub trait CommandHost: Send + Sync {
    /// Starts the command, waits for its end, its timeout or `cancel`
    /// (killing it on either), and answers its output and how it ended.
    fn run(
        &self,
        handoff: Handoff,
        cancel: CancelToken,
    ) -> BoxFuture<'_, Result<ExecOutput, SandboxError>>;
}

impl Handoff {
    /// The handoff of `launch`, or `None` when it must run here.
    pub(crate) fn of(
        launch: &Launch,
        request: &cox_protocol::sandbox::ExecRequest,
    ) -> Option<Self> {
        if launch.lifeline.is_some() {
            return None;
        }
        let text = |s: &std::ffi::OsString| s.clone().into_string().ok();
        Some(Self {
            program: text(&launch.program)?,
            args: launch.args.iter().map(text).collect::<Option<_>>()?,
            cwd: request.cwd.clone(),
            env: request.env.clone(),
            timeout: request.timeout,
            call_id: request.call_id.clone(),
        })
    }
}
