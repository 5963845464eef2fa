//! `cox mcp login|logout NAME`, and the same login for the terminal UI's
//! `/mcp login`: the OAuth flow of an HTTP server that asks for one (the
//! URL shown, the browser opened, the redirect taken on 127.0.0.1), and
//! forgetting its token.
//!
//! Invariant: only a server of this folder's configuration that speaks
//! HTTP logs in; the URL is the one line the person must see, and nothing
//! of the token is printed.

use anyhow::{Result, anyhow, bail};

use super::{client, runtime, transport_line};
use crate::RunArgs;
use crate::mcp::{McpServer, Transport};
use crate::output::printable;

/// The server called `name` here, which must be an HTTP one.
fn http_server(args: &RunArgs, name: &str) -> Result<(McpServer, crate::mcp::ConnectContext)> {
    let (loaded, cx) = crate::session::mcp_outside_a_session(args)?;
    let Some(server) = loaded.servers.into_iter().find(|s| s.name == name) else {
        bail!("no MCP server is called {name:?} here (cox mcp list shows them)");
    };
    if !matches!(server.transport, Transport::Http { .. }) {
        bail!(
            "MCP server '{name}' is not an HTTP server ({}); only HTTP servers log in",
            printable(&transport_line(&server))
        );
    }
    Ok((server, cx))
}

/// Opens `url` in the browser `$BROWSER` names (a command, the URL
/// appended), else `xdg-open`; why none opened, if none did.
fn open_browser(url: &str) -> Result<(), String> {
    let browser = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty());
    let words: Vec<String> = match &browser {
        Some(b) => b.split_whitespace().map(str::to_owned).collect(),
        None => vec!["xdg-open".to_owned()],
    };
    std::process::Command::new(&words[0])
        .args(&words[1..])
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
        .map_err(|e| {
            format!(
                "no browser opened ({}: {e}); open the URL yourself",
                words[0]
            )
        })
}

pub(super) fn login(args: &RunArgs, name: &str) -> Result<String> {
    let lines = |line: &str| eprintln!("cox: {line}");
    runtime()?
        .block_on(login_flow(args.clone(), name.to_owned(), Box::new(lines)))
        .map_err(|why| anyhow!(why))
}

/// The flow of `cox mcp login <name>`, for the terminal UI's `/mcp login`
/// too: the URL to open and a browser that would not open are given to
/// `say`, line by line; the answer is the line to say once logged in.
///
/// # Errors
/// The server is not an HTTP server of the configuration, or the login
/// failed: one line saying why.
pub fn login_flow(
    args: RunArgs,
    name: String,
    say: Box<dyn Fn(&str) + Send + Sync>,
) -> cox_protocol::provider::BoxFuture<'static, Result<String, String>> {
    Box::pin(async move {
        let client = client().map_err(|e| e.to_string())?;
        let (server, cx) = http_server(&args, &name).map_err(|e| crate::error_chain(&e))?;
        let show = |url: &str| {
            say(&format!("to log in to MCP server '{name}', open: {url}"));
            if let Err(why) = open_browser(url) {
                say(&why);
            }
        };
        let issuer = client
            .login(server, cx, &show)
            .await
            .map_err(|why| format!("MCP server '{name}': the login failed: {why}"))?;
        Ok(format!(
            "logged in to MCP server '{name}' (token from {})",
            printable(&issuer)
        ))
    })
}

pub(super) fn logout(args: &RunArgs, name: &str) -> Result<String> {
    let client = client()?;
    let (server, cx) = http_server(args, name)?;
    let had = client
        .logout(cx.home.root(), &server)
        .map_err(|why| anyhow!("MCP server '{name}': {why}"))?;
    Ok(if had {
        format!("forgot the login of MCP server '{name}'")
    } else {
        format!("MCP server '{name}' had no login to forget")
    })
}
