//! MCP servers: where they are configured, and the edge a binary with an
//! MCP client plugs into.
//!
//! Sources, later ones winning by name: the user's `config.toml`
//! (`[mcp_servers.<name>]`), `~/.claude.json` (its `mcpServers`, then the
//! entry Claude Code keeps there for this project), the project's
//! `.mcp.json`, then each `--mcp-config FILE` in order (`--strict-mcp-config`
//! keeps only those; `--no-mcp` none). The JSON files use Claude Code's
//! format (`type`, `command`, `args`, `env`, `url`, `headers`), and every
//! string of an entry may name variables as `${VAR}` or `${VAR:-default}`.
//!
//! Invariants: a server that cannot be read (an unknown field, a variable
//! that is unset with no default, neither a command nor a URL) is dropped
//! with a notice naming the file and line, never read halfway; a file given
//! with `--mcp-config` that does not parse is an error (the user asked for
//! it by name). This module reads files only: connecting is the
//! [`McpClient`]'s, which a binary with an MCP client supplies, so
//! `cox-headless` has none of its weight.

mod sources;

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

pub use cox_protocol::mcp::{
    Connected, Loaded, McpServer, Origin, OriginKind, ServerReport, ServerState, ToolReport,
    ToolTrust, Transport, tool_name, valid_server_name,
};
use cox_protocol::provider::BoxFuture;

pub use crate::config::McpEntry as Entry;
pub use sources::{Sources, load};

/// The MCP servers of a session as Claude Code's `system/init` lists them
/// (`{"name", "status"}`: connected, failed, pending, needs-auth), filled
/// once they have connected, before the session starts.
/// Each entry may also say `why` (what it serves, or why it is not there),
/// for `/mcp`; [`listed`] leaves that out.
pub type Statuses = std::sync::Arc<std::sync::Mutex<Vec<serde_json::Value>>>;

/// `statuses` as `system/init` lists them: `{"name", "status"}` each.
#[must_use]
pub fn listed(statuses: &Statuses) -> Vec<serde_json::Value> {
    statuses
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
        .map(|e| serde_json::json!({"name": e["name"], "status": e["status"]}))
        .collect()
}

/// What the sandbox leaves a stdio server (see docs/mcp.md), or `None`
/// for one that runs unconfined or over HTTP.
#[must_use]
pub fn confinement(server: &McpServer) -> Option<String> {
    if !server.sandbox || !matches!(server.transport, Transport::Stdio { .. }) {
        return None;
    }
    Some(format!(
        "reads the file system but cox's secret folders; writes only the workspace and, for \
         a package launcher (npx, uvx, pipx, bunx), a cache of cox's own in ~/.cache/cox-mcp; \
         a private /tmp, with its program's or script's folder there read-only; {} (set \
         sandbox = false in its entry to lift all of it)",
        if server.network {
            "the network (network = false cuts it off)"
        } else {
            "no network (network = true, or leave it out, to give it)"
        }
    ))
}

/// What connecting needs from the session.
#[derive(Clone, Debug)]
pub struct ConnectContext {
    /// `COX_HOME`: the trust rows live in its `cox.db`.
    pub home: cox_store::CoxHome,
    /// The session's folder: where stdio servers start.
    pub cwd: PathBuf,
    /// How the session confines commands; stdio servers get the same.
    pub sandbox: cox_sandbox::SandboxPolicy,
    /// How long connecting may take in all, before the first turn
    /// (`MCP_TIMEOUT`, in milliseconds, as Claude Code reads it).
    pub deadline: Duration,
    /// How long one tool call may take (`MCP_TOOL_TIMEOUT`, milliseconds).
    pub call_timeout: Duration,
    /// The workspace's root folders, offered to servers that ask (`roots`).
    pub roots: Vec<PathBuf>,
    /// Where servers' asks for input go: the session's (none outside one).
    pub asks: Option<futures::channel::mpsc::UnboundedSender<cox_protocol::mcp::Elicitation>>,
}

/// The handshakes' bound when `MCP_TIMEOUT` does not set one: 30 s, as in
/// Claude Code, so a launcher fetching its package (`npx -y`) has the time.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(30);

/// How long a session where a person types waits for its MCP servers
/// before its first request: those still connecting then join at a later
/// prompt.
pub const FIRST_WAIT: Duration = Duration::from_millis(1000);

/// A tool call's bound when `MCP_TOOL_TIMEOUT` does not set one.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(600);

/// A bound in milliseconds from `variable`, else `default`.
///
/// # Errors
/// The variable is set to something that is not a whole number of
/// milliseconds above 0.
pub fn millis(
    variable: &str,
    value: Option<String>,
    default: Duration,
) -> anyhow::Result<Duration> {
    match value.filter(|v| !v.trim().is_empty()) {
        None => Ok(default),
        Some(text) => match text.trim().parse::<u64>() {
            Ok(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
            _ => Err(anyhow::anyhow!(
                "{variable}={text:?} is not a number of milliseconds above 0"
            )),
        },
    }
}

static CLIENT: OnceLock<&'static dyn McpClient> = OnceLock::new();

/// Makes `client` the MCP client of this process (the `cox` binary does,
/// before anything runs); a binary that installs none starts no server.
pub fn install(client: &'static dyn McpClient) {
    let _ = CLIENT.set(client);
}

/// The installed MCP client, if this binary has one.
#[must_use]
pub fn installed() -> Option<&'static dyn McpClient> {
    CLIENT.get().copied()
}

/// Connects servers: the `cox` binary's MCP client. Every server connects
/// at once; one that is slow, broken or crashing is a notice and an
/// absence, never an error of the session.
pub trait McpClient: Send + Sync {
    /// Connects every server for a session: their tools, and a notice for
    /// each that is absent.
    fn connect<'a>(
        &'a self,
        servers: Vec<McpServer>,
        cx: ConnectContext,
    ) -> BoxFuture<'a, Connected>;

    /// Starts connecting every server for a session: what is known at once
    /// (the servers not started, the prompts every server joins, later
    /// changes), then each server's tools and state as it connects.
    fn connect_each(
        &self,
        servers: Vec<McpServer>,
        cx: ConnectContext,
    ) -> (Connected, futures::stream::BoxStream<'static, Connected>);

    /// Looks at every server: its tools and their trust (`cox mcp list`,
    /// `cox mcp trust`).
    fn inspect<'a>(
        &'a self,
        servers: Vec<McpServer>,
        cx: ConnectContext,
    ) -> BoxFuture<'a, Vec<ServerReport>>;

    /// Trusts what `server` serves now, as it is configured now: the tools
    /// trusted, to be shown.
    fn trust<'a>(
        &'a self,
        server: McpServer,
        cx: ConnectContext,
    ) -> BoxFuture<'a, Result<Vec<ToolReport>, String>>;

    /// Logs in to the HTTP server `server` (the OAuth authorization code
    /// flow): `show` is given the URL to open. Returns who issued the
    /// token.
    fn login<'a>(
        &'a self,
        server: McpServer,
        cx: ConnectContext,
        show: &'a (dyn Fn(&str) + Sync),
    ) -> BoxFuture<'a, Result<String, String>>;

    /// Where the login of HTTP server `server` stands: `none`, `ok
    /// (expires in 3h)`, `expired`.
    fn login_status(&self, home: &std::path::Path, server: &McpServer) -> String;

    /// Forgets the login of HTTP server `server`; whether there was one.
    ///
    /// # Errors
    /// Its token cannot be removed.
    fn logout(&self, home: &std::path::Path, server: &McpServer) -> Result<bool, String>;

    /// Where logins are kept, for `cox doctor`.
    fn login_store(&self, home: &std::path::Path) -> String;

    /// Keeps server `name`'s pre-registered client secret beside its
    /// login (`cox mcp add --client-secret`), bound to the server's `url`;
    /// where it went.
    ///
    /// # Errors
    /// It cannot be written.
    fn keep_client_secret(
        &self,
        home: &std::path::Path,
        name: &str,
        url: &str,
        secret: &str,
    ) -> Result<String, String>;

    /// Forgets server `name`'s kept client secret; whether there was one.
    ///
    /// # Errors
    /// It exists and cannot be removed.
    fn forget_client_secret(&self, home: &std::path::Path, name: &str) -> Result<bool, String>;

    /// Whether `server` may be started: a project's or a plugin's only once
    /// trusted as it is configured now (`cox ext list`).
    ///
    /// # Errors
    /// `cox.db` cannot be read.
    fn may_start(&self, home: &std::path::Path, server: &McpServer) -> Result<bool, String>;
}
