//! The status line's command (`[tui] status_line = { command = "…" }`,
//! Claude Code's `statusLine`): run with `sh -c`, the session's JSON on
//! its stdin; its first line of stdout, sanitised, is the status line.
//!
//! Invariants: it runs again only when what it is given changed, at most
//! every [`EVERY`]; one run may take [`BOUND`], then it is killed; a
//! command that fails (cannot start, exits non-zero, prints nothing, times
//! out) leaves the built-in line, said once per session in a warning.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// The shortest time between two runs.
pub const EVERY: Duration = Duration::from_millis(300);

/// The longest one run may take.
pub const BOUND: Duration = Duration::from_secs(2);

/// The most of its output read.
const OUTPUT_MAX: u64 = 64 * 1024;

/// Runs `command` with `input` on its stdin: its first line of stdout,
/// sanitised, or why there is none.
///
/// # Errors
/// It cannot start, fails, prints nothing, or takes longer than [`BOUND`].
pub async fn run(command: &str, input: &str) -> Result<String, String> {
    match tokio::time::timeout(BOUND, once(command, input)).await {
        Ok(result) => result,
        Err(_) => Err(format!("it took longer than {} s", BOUND.as_secs())),
    }
}

async fn once(command: &str, input: &str) -> Result<String, String> {
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("it cannot start: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A command that does not read its input is fine.
        let _ = stdin.write_all(input.as_bytes()).await;
    }
    let mut out = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        stdout
            .take(OUTPUT_MAX)
            .read_to_end(&mut out)
            .await
            .map_err(|e| format!("its output cannot be read: {e}"))?;
    }
    let status = child
        .wait()
        .await
        .map_err(|e| format!("it cannot be waited for: {e}"))?;
    if !status.success() {
        return Err(format!("it exited with {status}"));
    }
    let text = String::from_utf8_lossy(&out);
    let first = text.lines().next().unwrap_or_default().trim_end();
    if first.trim().is_empty() {
        return Err("it printed nothing".into());
    }
    Ok(crate::sanitize::sanitize(first).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn its_first_line_is_the_status_line_and_it_reads_the_session() {
        let line = block_on(run(
            "read -r j; echo \"[$j]\"; echo second",
            "{\"model\":1}\n",
        ));
        assert_eq!(line, Ok("[{\"model\":1}]".into()));
        // Escapes are taken out before it is drawn.
        let line = block_on(run("printf 'a\\033[31mb\\n'", ""));
        assert_eq!(line, Ok("ab".into()));
    }

    #[test]
    fn a_failing_command_says_why() {
        assert_eq!(
            block_on(run("exit 3", "")),
            Err("it exited with exit status: 3".into())
        );
        assert_eq!(block_on(run("true", "")), Err("it printed nothing".into()));
        assert_eq!(
            block_on(run("sleep 5", "")),
            Err("it took longer than 2 s".into())
        );
    }
}
