//! Running one hook: `bash -c <command>` in the session's folder, its
//! input on stdin, its stdout and stderr read, its exit code read as
//! Claude Code reads it.
//!
//! Invariants:
//! - the hook leads a process group of its own; at its time limit, or when
//!   the run is dropped (an interrupt), the whole group is killed, so
//!   nothing it started outlives it by surprise;
//! - the input is written while the output is read, so a hook that prints
//!   before it reads (or never reads) cannot deadlock the run;
//! - at most [`CAPTURE_MAX`] bytes of each stream are kept; the rest is
//!   read and dropped, so a hook that prints without end costs memory only
//!   up to the cap and is stopped by its time limit;
//! - once the hook has exited, its streams are read for at most
//!   [`cox_sandbox::DRAIN_GRACE`] more: a background process that kept
//!   them open cannot hold the session (it is left to run: a hook may
//!   start a server on purpose).

use std::path::Path;
use std::pin::pin;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use cox_protocol::hook::{HookEvent, HookReply, HookStatus};
use cox_sandbox::ProcessGroup;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use crate::config::HookDef;

/// The most of one stream of a hook that is kept, in bytes.
pub const CAPTURE_MAX: usize = 1 << 20;

/// The shell hooks run in: `bash` where there is one, else `sh`.
pub(crate) fn shell() -> &'static str {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("bash").is_file()));
    if on_path { "bash" } else { "sh" }
}

/// How a hook's process starts: a program, its arguments, and variables
/// set on it (a confined hook's are set inside the sandbox instead).
#[derive(Clone, Debug)]
pub(crate) struct Launch {
    pub program: std::ffi::OsString,
    pub args: Vec<std::ffi::OsString>,
    /// The environment it starts from instead of cox's: cox's less its
    /// credentials.
    pub base: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    pub env: Vec<(String, String)>,
}

/// Runs `def` as `launch` says, with `input` on its stdin, in `cwd`.
pub(crate) async fn run_one(def: &HookDef, launch: &Launch, input: &[u8], cwd: &Path) -> HookReply {
    let started = Instant::now();
    let (status, output) = match run(def, launch, input, cwd).await {
        Ok(Finished {
            status,
            stdout,
            stderr,
        }) => read_status(def.event, status, &stdout, &stderr),
        Err(message) => (HookStatus::Failed { message }, Default::default()),
    };
    HookReply {
        hook: def.name.clone(),
        narrow_only: !def.origin.scope.trusted_as_written(),
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        status,
        output,
    }
}

/// What a hook left when it exited.
struct Finished {
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// The status and output of a hook that exited, as Claude Code reads them.
fn read_status(
    event: HookEvent,
    status: ExitStatus,
    stdout: &[u8],
    stderr: &[u8],
) -> (HookStatus, cox_protocol::hook::HookOutput) {
    let said = String::from_utf8_lossy(stderr).trim().to_owned();
    match status.code() {
        Some(0) => match crate::output::parse(event, stdout) {
            Ok(output) => (HookStatus::Success, output),
            Err(message) => (HookStatus::Failed { message }, Default::default()),
        },
        Some(2) => {
            let reason = if said.is_empty() {
                "it exited with code 2 and gave no reason".to_owned()
            } else {
                said
            };
            (HookStatus::Blocked { reason }, Default::default())
        }
        Some(code) => {
            let message = match said.lines().next() {
                Some(line) => format!("exited with code {code}: {line}"),
                None => format!("exited with code {code}"),
            };
            (HookStatus::Error { message }, Default::default())
        }
        None => {
            use std::os::unix::process::ExitStatusExt;
            let signal = status.signal().unwrap_or_default();
            let message = format!("was killed by signal {signal}");
            (HookStatus::Failed { message }, Default::default())
        }
    }
}

/// Spawns the hook and sees it through; `Err` says why there is no exit
/// status to read (it could not start, or ran past its time limit).
async fn run(def: &HookDef, launch: &Launch, input: &[u8], cwd: &Path) -> Result<Finished, String> {
    let mut command = Command::new(&launch.program);
    command
        .args(&launch.args)
        .current_dir(cwd)
        .env_clear()
        .envs(launch.base.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for (name, value) in &launch.env {
        command.env(name, value);
    }
    // SAFETY: close_range is async-signal-safe: no descriptor cox
    // inherited reaches the hook.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(cox_sandbox::close_inherited_on_exec);
    }
    let mut child = command.spawn().map_err(|err| {
        format!(
            "could not start `{}`: {err}",
            std::path::Path::new(&launch.program).display()
        )
    })?;
    let mut group = ProcessGroup::new(child.id().unwrap_or_default());
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err("could not open its standard streams".to_owned());
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    let status = {
        let mut feed = pin!(async move {
            // A hook that does not read its input closes the pipe: fine.
            let _ = stdin.write_all(input).await;
            let _ = stdin.shutdown().await;
        });
        let mut read_out = pin!(capture(stdout, &mut out));
        let mut read_err = pin!(capture(stderr, &mut err));
        let deadline = tokio::time::sleep(def.timeout);
        let mut deadline = pin!(deadline);
        let (mut fed, mut out_done, mut err_done) = (false, false, false);
        let mut status = None;
        loop {
            if status.is_some() && out_done && err_done {
                break;
            }
            tokio::select! {
                () = &mut feed, if !fed => fed = true,
                () = &mut read_out, if !out_done => out_done = true,
                () = &mut read_err, if !err_done => err_done = true,
                exited = child.wait(), if status.is_none() => {
                    let exited = exited.map_err(|err| format!("could not be waited for: {err}"))?;
                    status = Some(exited);
                    // Its streams get a short grace, not its whole limit.
                    let grace = tokio::time::Instant::now() + cox_sandbox::DRAIN_GRACE;
                    if grace < deadline.deadline() {
                        deadline.as_mut().reset(grace);
                    }
                }
                () = &mut deadline => {
                    if status.is_some() {
                        break;
                    }
                    group.kill();
                    let _ = child.wait().await;
                    return Err(format!(
                        "ran past its time limit of {} and was killed",
                        seconds(def.timeout)
                    ));
                }
            }
        }
        status
    };
    // It exited on its own: whatever it left running in the background is
    // its business.
    group.disarm();
    let status = status.ok_or_else(|| "ended without an exit status".to_owned())?;
    Ok(Finished {
        status,
        stdout: out,
        stderr: err,
    })
}

/// Reads `stream` to its end, keeping the first [`CAPTURE_MAX`] bytes.
async fn capture(mut stream: impl AsyncRead + Unpin, into: &mut Vec<u8>) {
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let room = CAPTURE_MAX.saturating_sub(into.len());
                into.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

/// `60s`, `1.5s`.
fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0}s")
    } else {
        format!("{secs}s")
    }
}
