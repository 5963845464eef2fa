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

pub use cox_protocol::mcp::{
    Connected, Loaded, McpServer, Origin, OriginKind, ServerState, Transport, valid_server_name,
};
use cox_protocol::provider::BoxFuture;

pub use sources::{Entry, Sources, load};

/// What connecting needs from the session.
#[derive(Clone, Debug)]
pub struct ConnectContext {
    /// `COX_HOME`: the trust rows live in its `cox.db`.
    pub home: cox_store::CoxHome,
    /// The session's folder: where stdio servers start.
    pub cwd: PathBuf,
    /// How the session confines commands; stdio servers get the same.
    pub sandbox: cox_sandbox::SandboxPolicy,
    /// How long connecting may take in all, before the first turn.
    pub deadline: std::time::Duration,
}

/// Connects servers: the `cox` binary's MCP client. Every server connects
/// at once; one that is slow, broken or crashing is a notice and an
/// absence, never an error of the session.
pub trait McpClient: Send + Sync {
    fn connect<'a>(
        &'a self,
        servers: Vec<McpServer>,
        cx: ConnectContext,
    ) -> BoxFuture<'a, Connected>;
}
