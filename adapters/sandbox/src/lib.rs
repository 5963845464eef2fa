//! Where cox runs shell commands: [`OsSandbox`] confines them with the OS
//! (bubblewrap, Landlock, seccomp; see [`os`]), [`ProcessSandbox`] only
//! supervises them.
//!
//! Both spawn through [`run`], which guarantees that a command ends when
//! the call ends. Whatever way the
//! call ends (the command exits, its timeout passes, the turn is cancelled,
//! or the future running it is dropped), the command's whole process group
//! is killed, so no `&` job or pipeline member is left behind.
//!
//! Invariants:
//! - the command starts from cox's environment less its credentials
//!   ([`EnvFilter`]), with the request's own variables on top, and with no
//!   descriptor of cox's past the standard three (and its lifeline);
//! - stdin is `/dev/null`: nobody can answer a prompt, so a command must not
//!   wait for one;
//! - stdout and stderr are one pipe, so the buffer holds their bytes in the
//!   exact order they were written, and each chunk reaches `on_output`
//!   before the next read;
//! - once the leader has exited or been killed, reading stops at EOF or after
//!   [`DRAIN_GRACE`], whichever is first, so a process that left the group
//!   (`setsid`) while holding the pipe cannot hang the call;
//! - the leader is always reaped: by `wait` on the normal paths, by tokio's
//!   orphan reaper (`kill_on_drop`) when the future is dropped.

#[allow(unsafe_code)]
mod bwrap;
pub mod env;
mod group;
pub mod host;
// The helper and Landlock set process attributes through libc before exec.
#[allow(unsafe_code)]
pub mod helper;
#[allow(unsafe_code)]
mod landlock;
#[allow(unsafe_code)]
mod mounts;
pub mod os;
pub mod policy;
pub mod probe;
mod proxy;
mod seccomp;
#[allow(unsafe_code)]
pub mod uid;

pub use env::EnvFilter;
pub use group::ProcessGroup;
pub use host::{CommandHost, Handoff};
pub use os::{OsSandbox, ServerLaunch, ServerReach};
pub use policy::{DomainPattern, Network, SandboxPolicy};

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use cox_protocol::CancelToken;
use cox_protocol::provider::BoxFuture;
use cox_protocol::sandbox::{Confinement, ExecOutput, ExecRequest, Sandbox, SandboxError};
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::process::Command;
use tokio::time::Instant;

/// How long output is still read after the group was killed or the leader
/// exited. Data already in the pipe arrives at once; this only bounds the
/// wait on writers that escaped the group.
pub const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// Size of one read from the pipe, and so the largest `on_output` chunk.
const CHUNK: usize = 8 * 1024;

/// The shell every command line is given to (`bash -c`).
const SHELL: &str = "bash";

/// Output kept at each end of a command's output. A command that prints
/// more (`yes`, a runaway log) keeps its first and last `KEEP_EACH_END`
/// bytes, so memory stays bounded however long it runs; only the head is
/// streamed to `on_output`.
pub const KEEP_EACH_END: usize = 8 * 1024 * 1024;

/// The head and tail of an output, with a count of what fell between.
#[derive(Default)]
struct Kept {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    dropped: u64,
}

impl Kept {
    /// Keeps `bytes`; returns the part that went to the head (to stream).
    fn push<'b>(&mut self, bytes: &'b [u8]) -> &'b [u8] {
        let room = KEEP_EACH_END
            .saturating_sub(self.head.len())
            .min(bytes.len());
        let (to_head, rest) = bytes.split_at(room);
        self.head.extend_from_slice(to_head);
        self.tail.extend(rest);
        let over = self.tail.len().saturating_sub(KEEP_EACH_END);
        if over > 0 {
            self.tail.drain(..over);
            self.dropped += over as u64;
        }
        to_head
    }

    fn into_output(self) -> (Vec<u8>, u64) {
        let mut output = self.head;
        output.extend(self.tail);
        (output, self.dropped)
    }
}

/// Runs commands as the current user, each in a process group of its own.
#[derive(Clone, Debug, Default)]
pub struct ProcessSandbox {
    env: EnvFilter,
}

impl ProcessSandbox {
    /// A sandbox that drops credentials from the environment and nothing
    /// else.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// This sandbox, passing what `env` lets through.
    #[must_use]
    pub fn with_env(env: EnvFilter) -> Self {
        Self { env }
    }
}

impl Sandbox for ProcessSandbox {
    fn name(&self) -> &str {
        "process"
    }

    fn confinement(&self) -> Confinement {
        Confinement::Off
    }

    fn exec<'a>(
        &'a self,
        request: ExecRequest,
        cancel: CancelToken,
        on_output: &'a (dyn Fn(&[u8]) + Send + Sync),
    ) -> BoxFuture<'a, Result<ExecOutput, SandboxError>> {
        Box::pin(run(
            Launch::shell(&request.command),
            &self.env,
            request,
            cancel,
            on_output,
        ))
    }
}

/// The program that runs a request: bash itself, or a sandbox around it.
pub(crate) struct Launch {
    pub program: OsString,
    pub args: Vec<OsString>,
    /// The read end of a lifeline pipe the program inherits (its number is
    /// in the arguments); the write end is held until the call ends, and
    /// closing it asks the program to end its whole tree.
    pub lifeline: Option<(OwnedFd, OwnedFd)>,
}

impl Launch {
    /// `bash -c LINE`, unconfined.
    pub fn shell(line: &str) -> Self {
        Self {
            program: SHELL.into(),
            args: vec!["-c".into(), line.into()],
            lifeline: None,
        }
    }

    /// The words of `bash -c LINE`, for a wrapper to run.
    pub fn shell_words(line: &str) -> Vec<OsString> {
        vec![SHELL.into(), "-c".into(), line.into()]
    }
}

/// Spawns the command, with what `env` lets through of cox's environment
/// and the request's variables on top, and supervises it to its end.
pub(crate) async fn run(
    launch: Launch,
    env: &EnvFilter,
    request: ExecRequest,
    cancel: CancelToken,
    on_output: &(dyn Fn(&[u8]) + Send + Sync),
) -> Result<ExecOutput, SandboxError> {
    let program_name = launch.program.to_string_lossy().into_owned();
    let pipe_failed = |source| SandboxError::Pipe { source };
    let wait_failed = |source| SandboxError::Wait {
        program: program_name.clone(),
        source,
    };
    // One pipe behind both stdout and stderr: the kernel then keeps the
    // order of the writes, which two pipes read side by side cannot.
    let (reader, writer) = io::pipe().map_err(pipe_failed)?;
    let writer_too = writer.try_clone().map_err(pipe_failed)?;
    let mut pipe = Some(pipe::Receiver::from_owned_fd(OwnedFd::from(reader)).map_err(pipe_failed)?);
    // The `Command` is a temporary: it drops our copies of the write end as
    // soon as the child has them, so EOF comes when the group is gone.
    let (inherited, mut lifeline) = match launch.lifeline {
        Some((read, write)) => (Some(read), Some(write)),
        None => (None, None),
    };
    let mut command = Command::new(&launch.program);
    let lifeline_fd = inherited.as_ref().map(AsRawFd::as_raw_fd);
    #[allow(unsafe_code)]
    // SAFETY: only async-signal-safe calls (close_range, fcntl).
    unsafe {
        command.pre_exec(move || {
            close_inherited_on_exec()?;
            // The lifeline is the one descriptor past the standard three
            // the program inherits.
            if let Some(fd) = lifeline_fd {
                let flags = libc::fcntl(fd, libc::F_GETFD);
                if flags == -1 || libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) == -1 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let mut child = command
        .args(&launch.args)
        .current_dir(&request.cwd)
        .env_clear()
        .envs(env.child_env())
        .envs(request.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(writer_too)
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| SandboxError::Spawn {
            program: program_name.clone(),
            cwd: request.cwd.clone(),
            source,
        })?;
    drop(command);
    drop(inherited);
    let leader = child.id().ok_or_else(|| SandboxError::Vanished {
        program: program_name.clone(),
    })?;
    // Declared after `child`, so it is dropped first: the group is killed
    // while the leader is not yet reaped and the group id is still ours.
    let mut group = ProcessGroup::new(leader);

    let mut buf = vec![0u8; CHUNK];
    let mut result = ExecOutput::default();
    let mut kept = Kept::default();
    let mut status: Option<ExitStatus> = None;
    // Set once the group has been killed: from then on only draining is left.
    let mut stopping = false;
    let deadline = tokio::time::sleep(request.timeout);
    tokio::pin!(deadline);

    while status.is_none() || pipe.is_some() {
        tokio::select! {
            read = read_some(pipe.as_mut(), &mut buf) => match read {
                Ok(n) if n > 0 => {
                    let streamed = kept.push(&buf[..n]);
                    if !streamed.is_empty() {
                        on_output(streamed);
                    }
                }
                // EOF: every writer is gone. A read error ends reading too.
                _ => pipe = None,
            },
            waited = child.wait(), if status.is_none() => {
                status = Some(waited.map_err(wait_failed)?);
                if !stopping {
                    // Anything still running is an `&` job holding the pipe.
                    lifeline = None;
                    group.kill();
                    stopping = true;
                    deadline.as_mut().reset(Instant::now() + DRAIN_GRACE);
                }
            }
            () = &mut deadline => {
                if stopping {
                    // Something outside the group still holds the pipe, or
                    // a supervisor did not end its tree in time.
                    group.kill();
                    pipe = None;
                    if status.is_none() {
                        // The leader got SIGKILL; this returns promptly.
                        status = Some(child.wait().await.map_err(wait_failed)?);
                    }
                } else {
                    result.timed_out = true;
                    stop(&mut lifeline, &group);
                    stopping = true;
                    deadline.as_mut().reset(Instant::now() + DRAIN_GRACE);
                }
            }
            () = cancel.cancelled(), if !stopping => {
                result.cancelled = true;
                stop(&mut lifeline, &group);
                stopping = true;
                deadline.as_mut().reset(Instant::now() + DRAIN_GRACE);
            }
        }
    }

    group.disarm();
    (result.output, result.dropped_bytes) = kept.into_output();
    if let Some(status) = status {
        result.exit_code = status.code();
        result.signal = status.signal();
    }
    Ok(result)
}

/// Marks every descriptor past the standard three close-on-exec, so none
/// that cox itself inherited (from an editor, a script, a terminal) reaches
/// a program it starts: a descriptor open on a hidden file would read it
/// past every mount. Meant for `pre_exec`: it makes one system call.
///
/// # Errors
/// The kernel refused (`close_range` needs Linux 5.11).
#[allow(unsafe_code)]
pub fn close_inherited_on_exec() -> io::Result<()> {
    // SAFETY: close_range with integer arguments only.
    let done = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Ends a running command: a supervisor is asked (its lifeline closes) so
/// it can end the processes that left the group; anything else is killed.
fn stop(lifeline: &mut Option<OwnedFd>, group: &ProcessGroup) {
    if lifeline.take().is_none() {
        group.kill();
    }
}

/// One read from the pipe, or never, once it is closed.
async fn read_some(pipe: Option<&mut pipe::Receiver>, buf: &mut [u8]) -> io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_output_is_the_head_and_the_tail_of_a_long_one() {
        let mut kept = Kept::default();
        let chunk = vec![b'a'; KEEP_EACH_END];
        assert_eq!(kept.push(&chunk).len(), KEEP_EACH_END, "the head streams");
        assert!(
            kept.push(b"bbbb").is_empty(),
            "past the head nothing streams"
        );
        assert!(kept.push(&vec![b'c'; KEEP_EACH_END]).is_empty());
        let (output, dropped) = kept.into_output();
        assert_eq!(dropped, 4);
        assert_eq!(output.len(), 2 * KEEP_EACH_END);
        assert!(output[..KEEP_EACH_END].iter().all(|b| *b == b'a'));
        assert!(output[KEEP_EACH_END..].iter().all(|b| *b == b'c'));
    }

    #[test]
    fn short_output_is_kept_whole() {
        let mut kept = Kept::default();
        assert_eq!(kept.push(b"hello "), b"hello ");
        kept.push(b"world");
        assert_eq!(kept.into_output(), (b"hello world".to_vec(), 0));
    }
}
