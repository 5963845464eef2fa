//! cox's MCP client: the configured servers connected, their tools offered
//! to the model as `mcp__<server>__<tool>`, under trust.
//!
//! - [`connect`] starts every server at once (a stdio one inside the
//!   session's sandbox unless its config says `sandbox = false`; an HTTP
//!   one over streamable HTTP) and waits for all of them up to one
//!   deadline. A server that does not answer by then, exits, or serves
//!   something that is not MCP is a notice and an absence.
//! - Each tool's definition (name, description, canonical input schema) is
//!   hashed and checked against the `mcp_trust` rows in `cox.db`
//!   ([`trust`]). A server from the user's own configuration is trusted the
//!   first time it connects; a project's waits for `cox mcp trust`. A tool
//!   that is pending, or whose definition changed, shows the model only a
//!   sentence saying so, is classified as a write whatever its hints say,
//!   and a call to it never reaches the server.
//! - A call's result (text, images, resources, structured content) is
//!   rendered as text for the model ([`render`]); the core archives a big
//!   one like any tool output.
//!
//! Invariants: a server's process dies with its last tool (its whole
//! process group, or its sandbox); nothing a server sends is trusted to
//! pick a tool's risk on its own; no error of a server ends a session.

pub mod auth;
mod client;
pub mod launcher;
mod process;
pub mod prompts;
pub mod render;
mod tool;
pub mod trust;

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use cox_protocol::mcp::{
    Connected, McpServer, ServerReport, ServerState, ToolReport, ToolTrust, Transport,
};
use cox_protocol::tool::Tool;
use cox_sandbox::{OsSandbox, SandboxPolicy};
use cox_store::{CoxHome, Db};
use rmcp::ServiceExt as _;
use rmcp::service::RunningService;

pub use tool::{McpTool, PENDING};
pub use trust::{Definition, TrustState};

/// What connecting needs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where `cox.db` (the trust rows) is.
    pub home: CoxHome,
    /// Where stdio servers start, unless their config says otherwise.
    pub cwd: PathBuf,
    /// How the session confines commands: stdio servers get the same.
    pub sandbox: SandboxPolicy,
    /// How long all the handshakes may take together.
    pub deadline: Duration,
    /// How long one call may take.
    pub call_timeout: Duration,
    /// The workspace's root folders, offered to servers that ask for roots.
    pub roots: Vec<PathBuf>,
    /// Where servers' asks for input go (a session's); none: elicitation
    /// is not offered.
    pub asks: Option<futures::channel::mpsc::UnboundedSender<cox_protocol::mcp::Elicitation>>,
}

/// One live connection, shared by the server's tools; dropping the last
/// one ends the server.
pub(crate) struct Server {
    pub name: String,
    pub service: RunningService<rmcp::RoleClient, client::CoxClient>,
    /// The server's process, for a stdio one: killed (with its group) on
    /// drop, and its last words on stderr for the errors.
    pub process: Option<process::Child>,
    pub call_timeout: Duration,
    /// An HTTP server's login, where a call refused for want of scope
    /// records the scope the next login asks for.
    pub login: Option<auth::TokenFile>,
}

impl Server {
    /// What the server said on stderr last, for an error line.
    pub(crate) fn last_words(&self) -> String {
        self.process
            .as_ref()
            .map(process::Child::last_words)
            .filter(|w| !w.is_empty())
            .map(|w| format!("; it said: {w}"))
            .unwrap_or_default()
    }
}

/// A server connected, with its tool definitions, its prompts and
/// whether it has resources.
struct Live {
    server: Arc<Server>,
    tools: Vec<rmcp::model::Tool>,
    prompts: Vec<rmcp::model::Prompt>,
    resources: bool,
}

/// Connects `servers` at once and builds their tools, once every one has
/// connected or failed. A project's server that is not trusted as it is
/// configured now is not started.
pub async fn connect(servers: Vec<McpServer>, options: Options) -> Connected {
    use futures::StreamExt as _;
    let order: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
    let (mut out, mut each) = connect_each(servers, options);
    while let Some(one) = each.next().await {
        out.tools.extend(one.tools);
        out.notices.extend(one.notices);
        out.states.extend(one.states);
    }
    // The states in the order the servers were given.
    out.states
        .sort_by_key(|(name, _)| order.iter().position(|n| n == name));
    out
}

/// Starts connecting `servers` at once: what is known now (the servers not
/// started and why, the expander every server's prompts join, the channel
/// of later changes), and each server's tools, notices and state as it
/// connects or fails, in the order they do. A tool whose name an earlier
/// server's tool took is left out, with a notice.
pub fn connect_each(
    servers: Vec<McpServer>,
    options: Options,
) -> (Connected, futures::stream::BoxStream<'static, Connected>) {
    use futures::StreamExt as _;
    let mut out = Connected::default();
    if servers.is_empty() {
        return (out, futures::stream::empty().boxed());
    }
    let configured = servers.iter().map(|s| s.name.clone()).collect();
    let expander = Arc::new(prompts::McpExpander::new(configured));
    out.expander = Some(Arc::clone(&expander) as Arc<dyn cox_protocol::mcp::Expander>);
    let db = match Db::open(&options.home.db_path()) {
        Ok(db) => db,
        Err(e) => {
            for server in &servers {
                out.notices.push(format!(
                    "MCP server '{}' is not started: its trust cannot be read: {e}",
                    server.name
                ));
                out.states
                    .push((server.name.clone(), ServerState::Failed(e.to_string())));
            }
            return (out, futures::stream::empty().boxed());
        }
    };
    let mut startable = Vec::new();
    for server in servers {
        match trust::may_start(&db, &server) {
            Ok(true) => startable.push(server),
            Ok(false) => {
                out.notices.push(format!(
                    "MCP server '{}' ({}:{}) is not started until you trust it: run cox mcp \
                     trust {}",
                    server.name,
                    server.origin.file.display(),
                    server.origin.line,
                    server.name
                ));
                out.states
                    .push((server.name.clone(), ServerState::NotTrusted));
            }
            Err(e) => {
                out.notices.push(format!(
                    "MCP server '{}' is not started: its trust cannot be read: {e}",
                    server.name
                ));
                out.states
                    .push((server.name.clone(), ServerState::Failed(e)));
            }
        }
    }
    // Each server's later tool and prompt changes come here, for the
    // session.
    let (changed, changes) = futures::channel::mpsc::unbounded();
    out.changes = Some(changes);
    let roots: Arc<[PathBuf]> = options.roots.clone().into();
    let db = Arc::new(std::sync::Mutex::new(db));
    let names = Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let each: futures::stream::FuturesUnordered<_> = startable
        .into_iter()
        .map(|server| {
            let handler = client::CoxClient {
                roots: Arc::clone(&roots),
                asks: options.asks.clone(),
                changes: Some(Arc::new(client::Changes {
                    config: server.clone(),
                    home: options.home.clone(),
                    phase: std::sync::Mutex::default(),
                    to: changed.clone(),
                    known: std::sync::Mutex::default(),
                    expander: std::sync::OnceLock::new(),
                })),
            };
            handler.serving(&expander);
            let (options, db, names, expander) = (
                options.clone(),
                Arc::clone(&db),
                Arc::clone(&names),
                Arc::clone(&expander),
            );
            async move {
                let result = started(&server, &options, handler).await;
                joined(&server, result, (&db, &names), &expander)
            }
        })
        .collect();
    (out, each.boxed())
}

/// What one server's connection brings: its tools (those whose names no
/// earlier server's took), its notices and its state; its prompts join
/// `expander`.
fn joined(
    server: &McpServer,
    result: Result<Live, String>,
    (db, names): (
        &std::sync::Mutex<Db>,
        &std::sync::Mutex<std::collections::BTreeSet<String>>,
    ),
    expander: &prompts::McpExpander,
) -> Connected {
    let mut out = Connected::default();
    let live = match result {
        Ok(live) => live,
        Err(why) => {
            out.notices.push(format!(
                "MCP server '{}' is not available: {why}",
                server.name
            ));
            let state = if why.starts_with(NEEDS_LOGIN) {
                ServerState::NeedsLogin
            } else {
                ServerState::Failed(why)
            };
            out.states.push((server.name.clone(), state));
            return out;
        }
    };
    expander.connected(&live.server, live.prompts, live.resources);
    let (tools, notices, pending) = {
        let db = db.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        tool::build(&db, server, &live.server, live.tools)
    };
    out.notices.extend(notices);
    let mut names = names
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut kept = 0;
    for tool in tools {
        if names.insert(tool.name().to_owned()) {
            kept += 1;
            out.tools.push(Arc::new(tool) as Arc<dyn Tool>);
        } else {
            out.notices.push(format!(
                "MCP server '{}': tool {} is left out: another server's tool has that name",
                server.name,
                tool.name()
            ));
        }
    }
    out.states.push((
        server.name.clone(),
        ServerState::Connected {
            tools: kept,
            pending,
        },
    ));
    out
}

/// Looks at `servers` (all at once, within the deadline): each one's
/// tools and where their trust stands, as `cox mcp list` and `cox mcp
/// trust` show them. A server trusted on first connect with no rows yet is
/// recorded, as a session would.
pub async fn inspect(servers: Vec<McpServer>, options: Options) -> Vec<ServerReport> {
    let db = match Db::open(&options.home.db_path()) {
        Ok(db) => db,
        Err(e) => {
            return servers
                .iter()
                .map(|s| ServerReport {
                    name: s.name.clone(),
                    protocol: None,
                    not_started: false,
                    outcome: Err(format!("its trust cannot be read: {e}")),
                })
                .collect();
        }
    };
    let looks = servers.iter().map(|server| {
        let options = &options;
        let db = &db;
        async move {
            let mut protocol = None;
            match trust::may_start(db, server) {
                Ok(true) => {}
                Ok(false) => {
                    return ServerReport {
                        name: server.name.clone(),
                        protocol,
                        not_started: true,
                        outcome: Err(format!(
                            "not started until you trust it: cox mcp trust {}",
                            server.name
                        )),
                    };
                }
                Err(e) => {
                    return ServerReport {
                        name: server.name.clone(),
                        protocol,
                        not_started: false,
                        outcome: Err(format!("its trust cannot be read: {e}")),
                    };
                }
            }
            let outcome =
                match started(server, options, client::CoxClient::offering(&options.roots)).await {
                    Err(why) => Err(why),
                    Ok(live) => {
                        protocol = live
                            .server
                            .service
                            .peer()
                            .peer_info()
                            .map(|info| info.protocol_version.to_string());
                        let (usable, _) = tool::usable(server, live.tools);
                        let definitions: Vec<Definition> =
                            usable.iter().map(|u| Definition::of(&u.tool)).collect();
                        trust::check(db, server, &definitions).map(|states| {
                            definitions
                                .into_iter()
                                .zip(states)
                                .map(|(d, state)| ToolReport {
                                    trust: match state {
                                        TrustState::Trusted { .. } => ToolTrust::Trusted,
                                        TrustState::Pending
                                        | TrustState::Changed { trusted: None } => {
                                            ToolTrust::Pending
                                        }
                                        TrustState::Changed { trusted: Some(old) } => {
                                            ToolTrust::Changed {
                                                description: old.description,
                                                input_schema: old.input_schema,
                                            }
                                        }
                                    },
                                    name: d.name,
                                    description: d.description,
                                    input_schema: d.input_schema,
                                })
                                .collect()
                        })
                    }
                };
            ServerReport {
                name: server.name.clone(),
                protocol,
                not_started: false,
                outcome,
            }
        }
    });
    futures::future::join_all(looks).await
}

/// Trusts what `server` serves now, as it is configured now: every tool's
/// current definition replaces the stored ones, and a project's server may
/// start from then on. Returns the definitions trusted, to be shown.
///
/// # Errors
/// The server could not be reached, or `cox.db` written.
pub async fn trust_server(
    server: &McpServer,
    options: &Options,
) -> Result<Vec<Definition>, String> {
    let live = started(server, options, client::CoxClient::offering(&options.roots)).await?;
    let (usable, _) = tool::usable(server, live.tools);
    let definitions: Vec<Definition> = usable.iter().map(|u| Definition::of(&u.tool)).collect();
    let db = Db::open(&options.home.db_path()).map_err(|e| e.to_string())?;
    trust::trust(&db, server, &definitions)?;
    Ok(definitions)
}

/// [`start`] within the deadline.
async fn started(
    server: &McpServer,
    options: &Options,
    handler: client::CoxClient,
) -> Result<Live, String> {
    match tokio::time::timeout(options.deadline, start(server, options, handler)).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "it did not answer within {} ms (MCP_TIMEOUT sets the bound)",
            options.deadline.as_millis()
        )),
    }
}

/// Starts one server and lists its tools; `handler` answers what the
/// server sends later (its tools changing).
async fn start(
    server: &McpServer,
    options: &Options,
    handler: client::CoxClient,
) -> Result<Live, String> {
    let (service, process) = match &server.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut argv: Vec<OsString> = vec![command.into()];
            argv.extend(args.iter().map(OsString::from));
            let cwd = cwd.clone().unwrap_or_else(|| options.cwd.clone());
            let launch = if server.sandbox {
                let home = std::env::var_os("HOME").map(PathBuf::from);
                let (reach, cache_vars) =
                    launcher::reach(&argv, home.as_deref(), server.network, env);
                let env: Vec<(String, String)> = env.iter().cloned().chain(cache_vars).collect();
                OsSandbox::new(options.sandbox.clone())
                    .server_launch(&argv, &cwd, &env, &reach)
                    .map_err(|e| format!("{e} (or set sandbox = false for this server)"))?
            } else {
                cox_sandbox::ServerLaunch::unconfined(&argv, env, &options.sandbox.env)
                    .ok_or_else(|| format!("no program to start for {command}"))?
            };
            let mut child = process::spawn(&launch, &cwd)
                .map_err(|e| format!("cannot start {command}: {e}"))?;
            let (stdout, stdin) = child.pipes()?;
            match handler.clone().serve((stdout, stdin)).await {
                Ok(service) => (service, Some(child)),
                Err(e) => {
                    // Give its stderr a moment to say why it left.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    let words = child.last_words();
                    let hint = hint(&words, server);
                    let words = if words.is_empty() {
                        String::new()
                    } else {
                        format!("; it said: {words}")
                    };
                    return Err(format!("the handshake failed: {e}{words}{hint}"));
                }
            }
        }
        Transport::Http { url, headers } => {
            let mut map = HashMap::new();
            for (key, value) in headers {
                let name = reqwest::header::HeaderName::from_bytes(key.as_bytes())
                    .map_err(|_| format!("header {key:?} is not a header name"))?;
                let value = reqwest::header::HeaderValue::from_str(value)
                    .map_err(|_| format!("the value of header {key} is not a header value"))?;
                map.insert(name, value);
            }
            let config =
                rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                    url.as_str(),
                )
                .custom_headers(map);
            // The stateless 2026-07-28 revision where the server has it
            // (`server/discover`), else the handshake it knows.
            let auto = rmcp::ClientLifecycleMode::Auto {
                preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
                legacy_version: None,
            };
            // A machine's client (and cross-app access) gets its token
            // itself, with no browser, whenever it has none or it expired.
            if let Some(client) = server
                .oauth
                .as_ref()
                .filter(|c| c.grant != cox_protocol::mcp::OAuthGrant::AuthorizationCode)
            {
                let file = auth::TokenFile::new(options.home.root(), &server.name, url);
                let status = tokio::task::spawn_blocking(move || file.status())
                    .await
                    .map_err(|e| format!("reading the login failed: {e}"))?;
                if !matches!(status, auth::Status::Ok { .. }) {
                    auth::client_credentials_apart(
                        options.home.root().to_path_buf(),
                        server.name.clone(),
                        (url.clone(), headers.clone()),
                        client.clone(),
                    )
                    .await?;
                }
            }
            let authorized = auth::authorized(
                options.home.root(),
                &server.name,
                url,
                server.oauth.as_ref(),
            )
            .await?;
            let serve = |lifecycle: rmcp::ClientLifecycleMode| {
                let (authorized, config) = (authorized.clone(), config.clone());
                let handler = handler.clone();
                async move {
                    match authorized {
                        Some(http) => {
                            let transport =
                                rmcp::transport::StreamableHttpClientTransport::with_client(
                                    http, config,
                                );
                            rmcp::ClientServiceExt::serve_with_lifecycle(
                                handler, transport, lifecycle,
                            )
                            .await
                        }
                        None => {
                            let transport =
                                rmcp::transport::StreamableHttpClientTransport::from_config(config);
                            rmcp::ClientServiceExt::serve_with_lifecycle(
                                handler, transport, lifecycle,
                            )
                            .await
                        }
                    }
                }
            };
            let served = match serve(auto).await {
                // A server that answers discovery with something that is
                // not a discovery result (`{}`, an error of its own) is
                // asked the older handshake, on a fresh connection.
                Err(e) if !auth::wants_login(&e) => {
                    tracing::debug!(server = %server.name, error = %e, "no discovery; initialize");
                    serve(rmcp::ClientLifecycleMode::Initialize).await
                }
                other => other,
            };
            let service = served.map_err(|e| {
                if auth::wants_login(&e) {
                    format!("{NEEDS_LOGIN}: run cox mcp login {}", server.name)
                } else {
                    format!("the handshake with {url} failed: {}", plain(&e.to_string()))
                }
            })?;
            (service, None)
        }
        Transport::Sse { url, .. } => {
            return Err(format!(
                "{url} is an HTTP+SSE server, an older transport this build's MCP crate has no \
                 client for; ask for its streamable HTTP endpoint (type \"http\")"
            ));
        }
    };
    let login = match &server.transport {
        Transport::Http { url, .. } => {
            Some(auth::TokenFile::new(options.home.root(), &server.name, url))
        }
        _ => None,
    };
    let server = Arc::new(Server {
        name: server.name.clone(),
        service,
        process,
        call_timeout: options.call_timeout,
        login,
    });
    let list = || async {
        server
            .service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| format!("listing its tools failed: {e}{}", server.last_words()))
    };
    let mut tools = list().await?;
    handler.listed(&tools);
    // A change said while connecting (some servers add tools as they
    // start) is taken now, before the session sees any: the first request
    // has the tools the server ends up with, and no notice is needed.
    if handler.published(&server) {
        tools = list().await?;
        handler.listed(&tools);
    }
    let offers = server
        .service
        .peer()
        .peer_info()
        .map(|info| {
            (
                info.capabilities.prompts.is_some(),
                info.capabilities.resources.is_some(),
            )
        })
        .unwrap_or_default();
    let prompts = if offers.0 {
        server
            .service
            .peer()
            .list_all_prompts()
            .await
            .map_err(|e| format!("listing its prompts failed: {e}{}", server.last_words()))?
    } else {
        Vec::new()
    };
    Ok(Live {
        server,
        tools,
        prompts,
        resources: offers.1,
    })
}

/// How to lift the confinement a failed stdio server's last words point
/// at, if they point at one.
fn hint(words: &str, server: &McpServer) -> String {
    let lower = words.to_ascii_lowercase();
    let offline = [
        "enotfound",
        "eai_again",
        "getaddrinfo",
        "could not resolve",
        "network is unreachable",
        "temporary failure in name resolution",
        "failed to fetch",
    ];
    if server.sandbox && !server.network && offline.iter().any(|w| lower.contains(w)) {
        return format!(
            " (no network in the sandbox: set network = true for {}, or leave network out)",
            server.name
        );
    }
    if server.sandbox && (lower.contains("docker daemon") || lower.contains("docker.sock")) {
        return format!(
            " (the docker socket is outside the sandbox, since it gives root on the host: name \
             it in [sandbox] allow_unix_sockets, or set sandbox = false for {})",
            server.name
        );
    }
    if server.sandbox
        && lower.contains("/tmp/")
        && (lower.contains("enoent") || lower.contains("no such file"))
    {
        return format!(
            " (the sandbox's /tmp is private: only the folder of {}'s program or script is there; \
             keep its data elsewhere, or set sandbox = false for it)",
            server.name
        );
    }
    if server.sandbox
        && (lower.contains("eacces")
            || lower.contains("read-only file system")
            || lower.contains("permission denied"))
    {
        return format!(
            " (the sandbox lets a server write only the workspace and its launcher's cache: set \
             sandbox = false for {} if it must write elsewhere)",
            server.name
        );
    }
    String::new()
}

/// How a failure begins when the server wants a login first.
pub const NEEDS_LOGIN: &str = "it needs a login";

/// An rmcp error without the transport's type names it carries
/// (`Transport [rmcp::transport::worker::…] error: …`).
fn plain(text: &str) -> String {
    match text.split_once("] error: ") {
        Some((_, rest)) => rest.to_owned(),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cox_protocol::mcp::{Origin, OriginKind};

    fn server(network: bool) -> McpServer {
        McpServer {
            name: "s".into(),
            origin: Origin {
                kind: OriginKind::User,
                file: "f".into(),
                line: 1,
            },
            transport: Transport::Stdio {
                command: "node".into(),
                args: Vec::new(),
                env: Vec::new(),
                cwd: None,
            },
            sandbox: true,
            network,
            oauth: None,
        }
    }

    #[test]
    fn a_failure_that_points_at_the_sandbox_says_what_to_change() {
        let offline = hint(
            "npm error code ENOTFOUND registry.npmjs.org",
            &server(false),
        );
        assert!(offline.contains("set network = true for s"), "{offline}");
        assert_eq!(hint("npm error code ENOTFOUND", &server(true)), "");
        let tmp = hint(
            "Error: ENOENT: no such file or directory, open '/tmp/data/x'",
            &server(true),
        );
        assert!(tmp.contains("the sandbox's /tmp is private"), "{tmp}");
        let write = hint(
            "EACCES: permission denied, mkdir '/home/a/.cache/x'",
            &server(true),
        );
        assert!(write.contains("set sandbox = false for s"), "{write}");
        assert_eq!(hint("TypeError: x is not a function", &server(true)), "");
        let docker = hint(
            "docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the \
             docker daemon running?",
            &server(true),
        );
        assert!(docker.contains("[sandbox] allow_unix_sockets"), "{docker}");
        let denied = hint(
            "permission denied while trying to connect to the docker API at unix:///var/run/docker.sock",
            &server(true),
        );
        assert!(denied.contains("docker socket"), "{denied}");
    }
}
