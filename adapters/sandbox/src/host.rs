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
    /// Variables to set on top of the host's environment. The program is
    /// `env -i` with cox's filtered environment and the request's
    /// variables, so none of the host's own variables reaches the command
    /// either: this list is empty unless a host needs one of its own.
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
        filter: &crate::EnvFilter,
    ) -> Option<Self> {
        if launch.lifeline.is_some() {
            return None;
        }
        let text = |s: &std::ffi::OsString| s.clone().into_string().ok();
        // `env -i NAME=VALUE… PROGRAM ARGS…`: the host's environment is
        // replaced by the one cox would have given the command.
        let mut args = vec!["-i".to_owned()];
        for (name, value) in filter.child_env() {
            args.push(format!("{}={}", text(&name)?, text(&value)?));
        }
        for (name, value) in &request.env {
            args.push(format!("{name}={value}"));
        }
        args.push(text(&launch.program)?);
        for arg in &launch.args {
            args.push(text(arg)?);
        }
        Some(Self {
            program: "env".to_owned(),
            args,
            cwd: request.cwd.clone(),
            env: Vec::new(),
            timeout: request.timeout,
            call_id: request.call_id.clone(),
        })
    }
}
