//! The client secret `cox mcp add --client-secret` takes: from
//! `MCP_CLIENT_SECRET` (as Claude Code reads it), else asked on the
//! terminal without echo; kept by the MCP client beside the server's login
//! (the OS keyring where one answers, else a 0600 file), never in a
//! config file.
//!
//! Invariants: the secret is never printed; with neither the variable nor
//! a terminal to ask on, `add` fails before writing anything.

use std::io::IsTerminal as _;

use anyhow::{Result, anyhow, bail};

/// The secret: `MCP_CLIENT_SECRET`, else asked on the terminal.
///
/// # Errors
/// Neither is there, or the answer is empty.
pub(super) fn read() -> Result<String> {
    if let Some(secret) = std::env::var("MCP_CLIENT_SECRET")
        .ok()
        .filter(|s| !s.is_empty())
    {
        return Ok(secret);
    }
    if !std::io::stdin().is_terminal() {
        bail!(
            "--client-secret: set MCP_CLIENT_SECRET, or run cox mcp add in a terminal to be asked \
             for it"
        );
    }
    eprint!("client secret (not shown): ");
    // No echo while it is typed (stty, on the terminal itself).
    let quiet = |flag: &str| {
        std::process::Command::new("stty")
            .arg(flag)
            .stdin(std::process::Stdio::inherit())
            .status()
            .is_ok_and(|s| s.success())
    };
    let hidden = quiet("-echo");
    let mut line = String::new();
    let read = std::io::stdin().read_line(&mut line);
    if hidden {
        quiet("echo");
    }
    eprintln!();
    read.map_err(|e| anyhow!("--client-secret: cannot read it: {e}"))?;
    let secret = line.trim_end_matches(['\r', '\n']).to_owned();
    if secret.is_empty() {
        bail!("--client-secret: no secret was given");
    }
    Ok(secret)
}

/// Keeps `secret` for server `name` at `url` (bound to it, as a login
/// is); what to add to the line saying the server was added.
///
/// # Errors
/// It cannot be kept.
pub(super) fn keep(
    home: &cox_store::CoxHome,
    (name, url): (&str, &str),
    secret: Option<&str>,
) -> Result<String> {
    let Some(secret) = secret else {
        return Ok(String::new());
    };
    let client = super::client()?;
    let place = client
        .keep_client_secret(home.root(), name, url, secret)
        .map_err(|why| anyhow!("MCP server '{name}': its client secret cannot be kept: {why}"))?;
    Ok(format!(", its client secret in {place}"))
}
