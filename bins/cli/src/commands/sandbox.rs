//! `cox sandbox [--mode M] -- PROGRAM ARGS…`: one command, confined exactly
//! as a session in this folder would confine a bash call, for people to see
//! what their setup allows.
//!
//! The policy comes from the same place a session's does
//! ([`crate::sandbox::policy`]): the config files, `--mode` (as
//! `--sandbox`), `--add-dir`. Output goes to stdout as it comes; the exit
//! code is the command's. Where nothing can confine the command, it is not
//! run: the error names what is missing (there is no one to approve an
//! unconfined run here).

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use clap::Args;
use cox_protocol::sandbox::{Confinement, ExecRequest, Sandbox};
use cox_protocol::tool::Workspace;
use cox_protocol::types::SandboxMode;

use crate::config::{PermissionFlags, load_permissions};

#[derive(Args, Debug)]
pub struct SandboxArgs {
    /// read-only, workspace-write or danger-full-access (default: the
    /// config's, else workspace-write).
    #[arg(long, value_name = "MODE", value_parser = crate::args::parse_sandbox_mode)]
    pub mode: Option<SandboxMode>,
    /// The folder to run in, as the session's working folder.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Another writable root, as a session's `--add-dir`; repeatable.
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dir: Vec<PathBuf>,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// Runs the command; returns its exit code (1 when it could not run).
pub fn run(args: &SandboxArgs) -> i32 {
    match execute(args) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("cox: error: {}", crate::one_line(&err));
            1
        }
    }
}

fn execute(args: &SandboxArgs) -> Result<i32> {
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    let cwd = std::fs::canonicalize(&cwd)
        .with_context(|| format!("--cwd {}: cannot open the folder", cwd.display()))?;
    let mut roots = vec![cwd.clone()];
    for dir in &args.add_dir {
        let root = std::fs::canonicalize(dir)
            .with_context(|| format!("--add-dir {}: cannot open the folder", dir.display()))?;
        roots.push(root);
    }
    let home = cox_store::CoxHome::resolve(None)?;
    let home_dir = crate::env::home_dir();
    let permissions = load_permissions(
        &home.root().join("config.toml"),
        home_dir.as_deref(),
        &cwd,
        &PermissionFlags::default(),
        crate::config::trust::Trust::Db(&home.db_path()),
    )?;
    for warning in &permissions.warnings {
        eprintln!("cox: warning: {warning}");
    }
    let workspace = Workspace {
        cwd: cwd.clone(),
        roots,
        read_only: Vec::new(),
    };
    let policy = crate::sandbox::policy(
        &permissions.sandbox,
        args.mode,
        &workspace,
        home_dir.as_deref(),
        home.root(),
        &permissions.engine,
    );
    let sandbox = cox_sandbox::OsSandbox::new(policy);
    if let Confinement::Unavailable { why } = sandbox.confinement() {
        return Err(anyhow!(
            "not run: the sandbox cannot confine commands here: {why}"
        ));
    }
    let request = ExecRequest {
        command: shell_line(&args.command),
        cwd,
        timeout: Duration::from_secs(24 * 3600),
        env: Vec::new(),
        unconfined: false,
        call_id: None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let print = |chunk: &[u8]| {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(chunk);
        let _ = out.flush();
    };
    let out = runtime.block_on(sandbox.exec(request, cox_protocol::CancelToken::new(), &print))?;
    for note in &out.notes {
        eprintln!("cox sandbox: {note}");
    }
    Ok(match (out.exit_code, out.signal) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    })
}

/// The words as one bash line, each quoted so bash sees it unchanged.
fn shell_line(words: &[OsString]) -> String {
    words
        .iter()
        .map(|w| {
            let w = w.to_string_lossy();
            format!("'{}'", w.replace('\'', r"'\''"))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_for_bash() {
        let line = shell_line(&["echo".into(), "it's $HOME".into()]);
        assert_eq!(line, r"'echo' 'it'\''s $HOME'");
    }
}
