//! MCP servers as the configuration defines them, and what connecting to
//! them gave a session: plain data shared by the command line (which reads
//! the configuration), the MCP client adapter (which connects) and the
//! surfaces (which show each server's state).
//!
//! Invariant: a server's tools are named `mcp__<server>__<tool>`, so a
//! server name is a plain word ([`valid_server_name`]) that cannot run
//! into the `__` around it.

use std::path::PathBuf;
use std::sync::Arc;

use crate::provider::BoxFuture;
use crate::tool::Tool;
use crate::types::SlashCommand;

/// Why a server name cannot be one, if it cannot: letters, digits, `-`
/// and single `_` only (a `__` would blur where the tool's name starts).
#[must_use]
pub fn valid_server_name(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a server needs a name".into());
    }
    let edge = |c: char| c == '_' || c == '-';
    if name.len() > SERVER_NAME_MAX
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        || name.contains("__")
        || name.starts_with(edge)
        || name.ends_with(edge)
    {
        return Some(format!(
            "the name {name:?} may only hold letters, digits, '-' and single '_' (not first or \
             last), {SERVER_NAME_MAX} at most"
        ));
    }
    None
}

/// `mcp__<server>__<tool>` with every character providers refuse in a tool
/// name as `_` (the MCP client cuts one past 64 and gives it a hash).
#[must_use]
pub fn tool_name(server: &str, tool: &str) -> String {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("mcp__{server}__{clean}")
}

/// The longest server name: its tools' names must fit providers' 64.
pub const SERVER_NAME_MAX: usize = 32;

/// Where a server's definition came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OriginKind {
    /// `$COX_HOME/config.toml`.
    User,
    /// `~/.claude.json`, its `mcpServers`.
    ClaudeUser,
    /// `~/.claude.json`, the entry of this project.
    ClaudeProject,
    /// The project's `.mcp.json`.
    Project,
    /// The project's `.mcp.json`, a server the person's own settings
    /// approve (Claude Code's `enabledMcpjsonServers`, or
    /// `enableAllProjectMcpServers`): trusted as it connects.
    ProjectApproved,
    /// `--mcp-config FILE`.
    Flag,
    /// A plugin's `.mcp.json` (or its manifest's `mcpServers`); the server
    /// is named `plugin_<plugin>_<server>`.
    Plugin,
}

impl OriginKind {
    /// Whether a server from here is trusted when it first connects; a
    /// project's servers were written by whoever wrote the repository, a
    /// plugin's by its author, and wait for `cox mcp trust`.
    #[must_use]
    pub fn trusted_on_first_connect(self) -> bool {
        !matches!(self, OriginKind::Project | OriginKind::Plugin)
    }

    /// How `cox mcp list` names it.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            OriginKind::User => "user",
            OriginKind::ClaudeUser => "~/.claude.json",
            OriginKind::ClaudeProject => "~/.claude.json (project)",
            OriginKind::Project => "project",
            OriginKind::ProjectApproved => "project (approved in your settings)",
            OriginKind::Flag => "--mcp-config",
            OriginKind::Plugin => "plugin",
        }
    }
}

/// Where a server's definition is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub kind: OriginKind,
    pub file: PathBuf,
    /// The line (from 1) its entry starts on.
    pub line: usize,
}

/// How cox talks to a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A process cox starts, speaking JSON-RPC on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Set on top of cox's own environment.
        env: Vec<(String, String)>,
        /// Where it starts; the session's folder when unset.
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP.
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
    /// The older HTTP with server-sent events.
    Sse {
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// One configured server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpServer {
    pub name: String,
    pub origin: Origin,
    pub transport: Transport,
    /// A stdio server runs inside the session's sandbox unless this is
    /// false (`sandbox = false` in its config).
    pub sandbox: bool,
    /// A sandboxed stdio server may reach the network (unless `network =
    /// false`).
    pub network: bool,
    /// An HTTP server's pre-registered OAuth client, for an authorization
    /// server without dynamic client registration (`oauth = { client_id
    /// = …, client_secret = "${VAR}" }`).
    pub oauth: Option<OAuthClient>,
}

/// A client registered with a server's authorization server out of band.
#[derive(Clone, PartialEq, Eq)]
pub struct OAuthClient {
    pub client_id: String,
    /// For a confidential client; never shown (`Debug` says only whether
    /// there is one).
    pub client_secret: Option<String>,
    /// How it gets its tokens.
    pub grant: OAuthGrant,
    /// For the client credentials grant, a private key (PEM) that signs
    /// the client's assertion in place of a secret (`private_key_jwt`);
    /// never shown.
    pub private_key: Option<String>,
    /// The key's algorithm: RS256, RS384, RS512, ES256 or ES384.
    pub signing_algorithm: Option<String>,
    /// For the cross-app grant: the enterprise identity provider and the
    /// person's ID token from it.
    pub idp: Option<IdentityProvider>,
    /// The loopback port a login's redirect comes back to, for an
    /// authorization server that registered one exact redirect URI (any
    /// free port when unset).
    pub callback_port: Option<u16>,
}

/// An enterprise identity provider (cross-app access): the person's ID
/// token from it is exchanged there for an assertion the server's
/// authorization server takes.
#[derive(Clone, PartialEq, Eq)]
pub struct IdentityProvider {
    pub issuer: String,
    pub token_endpoint: String,
    pub client_id: String,
    /// Never shown.
    pub client_secret: Option<String>,
    /// The person's ID token (from a variable); never shown.
    pub id_token: String,
}

impl std::fmt::Debug for IdentityProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityProvider")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// How a pre-registered client gets its tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OAuthGrant {
    /// A person logs in in a browser (`cox mcp login`).
    #[default]
    AuthorizationCode,
    /// The client's own id and secret are exchanged for a token, with no
    /// person: as the server connects, whenever there is no token or it
    /// expired (a machine's account).
    ClientCredentials,
    /// Cross-app access (enterprise-managed): the person's ID token from
    /// their identity provider is exchanged there for an assertion, and
    /// that at the server's authorization server for a token, as the
    /// server connects, with no browser.
    CrossApp,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<hidden>"),
            )
            .field("grant", &self.grant)
            .field(
                "private_key",
                &self.private_key.as_ref().map(|_| "<hidden>"),
            )
            .field("signing_algorithm", &self.signing_algorithm)
            .field("idp", &self.idp)
            .field("callback_port", &self.callback_port)
            .finish()
    }
}

/// The servers the sources define, and what was wrong with the ones they
/// could not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Loaded {
    pub servers: Vec<McpServer>,
    pub notices: Vec<String>,
}

/// What a server came to, for `cox mcp list` and the logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerState {
    /// Connected; its tools, and how many wait for trust.
    Connected { tools: usize, pending: usize },
    /// It did not connect: why.
    Failed(String),
    /// A project's server, not started until `cox mcp trust <name>`.
    NotTrusted,
    /// It needs a login first (`cox mcp login <name>`).
    NeedsLogin,
}

/// What a prompt brings with it: a server's prompt typed as
/// `/mcp__<server>__<prompt> args`, a resource named as `@<server>:<uri>`
/// (the MCP client's), a custom command or a skill typed as `/<name> args`
/// (the command line's). The core asks each before every turn, so every
/// surface gets the same expansion.
pub trait Expander: Send + Sync {
    /// The servers' prompts, as slash commands.
    fn commands(&self) -> Vec<SlashCommand>;

    /// `text` with what it names brought in: `Ok(None)` when it names
    /// nothing of the servers', else the text the model is to see and a
    /// line for each thing worth saying (a resource cut short, a server
    /// that is not connected).
    ///
    /// # Errors
    /// A prompt or resource it names cannot be had (an unknown prompt, a
    /// missing argument, a server's error): one line saying which and why.
    fn expand<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Option<Expanded>, String>>;
}

/// A prompt as [`Expander::expand`] gave it back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expanded {
    pub text: String,
    pub notices: Vec<String>,
    /// The turn runs on this model (a command's `model`).
    pub model: Option<String>,
    /// Permission rules allowed for this turn (the `allowed-tools` of the
    /// person's own command), and the file that says so.
    pub allowed_tools: Vec<String>,
    pub command_file: Option<PathBuf>,
    /// Images it brought in (a file named as `@shot.png`), within the
    /// providers' limits.
    pub images: Vec<crate::types::Image>,
}

/// The servers a session connected to.
#[derive(Default)]
pub struct Connected {
    /// Every server's tools, named `mcp__<server>__<tool>`; they keep their
    /// connections open for as long as they live.
    pub tools: Vec<Arc<dyn Tool>>,
    /// One line for each server that is absent, and why.
    pub notices: Vec<String>,
    /// Each server's state, in the order of the servers given.
    pub states: Vec<(String, ServerState)>,
    /// The connected servers' prompts and resources, when one has any.
    pub expander: Option<Arc<dyn Expander>>,
    /// A server's tools and prompts as it changes them later
    /// (`notifications/tools/list_changed`, `…/prompts/list_changed`), for
    /// as long as it is connected.
    pub changes: Option<futures::channel::mpsc::UnboundedReceiver<ServerChanged>>,
}

/// An MCP server asks the person for input (`elicitation/create`, a
/// form): the session says it and sends the answer back on `reply` (a
/// reply dropped unanswered is a cancel).
pub struct Elicitation {
    pub server: String,
    pub message: String,
    pub schema: serde_json::Value,
    pub reply: futures::channel::oneshot::Sender<crate::types::ElicitAnswer>,
}

impl std::fmt::Debug for Elicitation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Elicitation")
            .field("server", &self.server)
            .field("message", &self.message)
            .finish_non_exhaustive()
    }
}

/// A connected server said its tools or its prompts changed: what it has
/// now, and what is worth saying.
pub struct ServerChanged {
    pub server: String,
    pub change: Change,
    pub notices: Vec<String>,
}

/// What a server changed.
pub enum Change {
    /// All its tools now, each through trust again (a changed definition
    /// waits for it).
    Tools(Vec<Arc<dyn Tool>>),
    /// Its prompts: the commands that name them now (the expander already
    /// offers them).
    Prompts(Vec<String>),
    /// Nothing the session offers (a listing that failed): only notices.
    Nothing,
}

impl std::fmt::Debug for Connected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connected")
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .field("notices", &self.notices)
            .field("states", &self.states)
            .field(
                "commands",
                &self.expander.as_ref().map(|e| e.commands().len()),
            )
            .finish()
    }
}

/// One tool as a server lists it, and where its trust stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolReport {
    /// The server's own name for it.
    pub name: String,
    pub description: String,
    pub input_schema: serde_json::Value,
    pub trust: ToolTrust,
}

/// Where a tool's trust stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolTrust {
    Trusted,
    /// Never trusted.
    Pending,
    /// Trusted once with this definition; the server's differs now.
    Changed {
        description: String,
        input_schema: serde_json::Value,
    },
}

/// One server looked at: its tools, or why it could not be reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerReport {
    pub name: String,
    /// The protocol revision it speaks, once connected.
    pub protocol: Option<String>,
    /// A project's server that was not started: it waits for trust.
    pub not_started: bool,
    pub outcome: Result<Vec<ToolReport>, String>,
}
