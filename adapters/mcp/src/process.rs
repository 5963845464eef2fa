//! A stdio server's process: its pipes, the tail of what it says on
//! stderr, and its end.
//!
//! Invariant: the process runs in a group of its own, and the whole group
//! is killed when the [`Child`] drops (an `npx` server's node is a
//! grandchild that would outlive its parent).

use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::process::{ChildStdin, ChildStdout};

/// How much of stderr is kept, in lines.
const TAIL_LINES: usize = 8;

pub(crate) struct Child {
    child: tokio::process::Child,
    group: Option<i32>,
    tail: Arc<Mutex<VecDeque<String>>>,
}

pub(crate) fn spawn(launch: &cox_sandbox::ServerLaunch, cwd: &Path) -> std::io::Result<Child> {
    let mut command = tokio::process::Command::new(&launch.program);
    command
        .args(&launch.args)
        .current_dir(cwd)
        .env_clear()
        .envs(launch.base.iter().map(|(k, v)| (k, v)))
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    // SAFETY: prctl and close_range are async-signal-safe; prctl only asks
    // the kernel to kill the child if cox dies without dropping it (`exit`
    // on a second Ctrl-C).
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // No descriptor cox inherited reaches the server.
            cox_sandbox::close_inherited_on_exec()
        });
    }
    let mut child = command.spawn()?;
    let group = child.id().and_then(|id| i32::try_from(id).ok());
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    if let Some(stderr) = child.stderr.take() {
        let tail = Arc::clone(&tail);
        tokio::spawn(drain(stderr, tail));
    }
    Ok(Child { child, group, tail })
}

/// Reads stderr to its end whatever it holds (a line of any length, bytes
/// that are not UTF-8), keeping the last lines, each cut at 300
/// characters: a server that floods it neither grows cox nor blocks on a
/// full pipe.
async fn drain(stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<String>>>) {
    use tokio::io::AsyncReadExt as _;
    let mut stderr = stderr;
    let mut buffer = vec![0u8; 8192];
    let mut line: Vec<u8> = Vec::new();
    let keep = |line: &[u8]| {
        let text: String = String::from_utf8_lossy(line).chars().take(300).collect();
        let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(text);
    };
    loop {
        let n = match stderr.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &byte in &buffer[..n] {
            if byte == b'\n' {
                keep(&line);
                line.clear();
            } else if line.len() < 1200 {
                line.push(byte);
            }
        }
    }
    if !line.is_empty() {
        keep(&line);
    }
}

impl Child {
    /// The pipes the protocol speaks on.
    pub(crate) fn pipes(&mut self) -> Result<(ChildStdout, ChildStdin), String> {
        match (self.child.stdout.take(), self.child.stdin.take()) {
            (Some(out), Some(input)) => Ok((out, input)),
            _ => Err("its pipes were already taken".to_owned()),
        }
    }

    /// The last lines it wrote on stderr, joined.
    pub(crate) fn last_words(&self) -> String {
        let tail = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        tail.iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" | ")
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if let Some(group) = self.group {
            // SAFETY: plain system call on the group this child leads.
            #[allow(unsafe_code)]
            unsafe {
                libc::killpg(group, libc::SIGKILL);
            }
        }
        let _ = self.child.start_kill();
    }
}
