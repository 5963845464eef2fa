//! How a session is wired to what surrounds it: what its commands may
//! reach (the sandbox policy), how its MCP servers connect (and join late,
//! narrowed for a subagent), and the JSON log its run writes.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use cox_core::Session;
use cox_protocol::tool::Workspace;
use cox_sandbox::SandboxPolicy;
use cox_store::CoxHome;

use super::Consent;
use crate::args::RunArgs;
use crate::mcp::ServerState;
use crate::{config, env};

/// What shell commands (and stdio MCP servers) may reach in `workspace`.
/// What `web_fetch` asks before it connects to a host: with `[sandbox]
/// allowed_domains` set, the host must be one of them; a
/// `WebFetch(domain:…)` deny rule refuses it in any case (the permission
/// engine decided the first URL; this holds for each redirect too).
pub(super) fn host_gate(policy: &SandboxPolicy) -> cox_tools::HostGate {
    let network = policy.network.clone();
    let denied = policy.denied_domains.clone();
    std::sync::Arc::new(move |host: &str| {
        // `[::ffff:127.0.0.1]` is 127.0.0.1, as the rules read it.
        let host = cox_permission::canonical_host(host);
        let host = host.as_str();
        if let Some(rule) = denied.iter().find(|p| p.admits(host)) {
            return Err(format!("a WebFetch(domain:{rule}) deny rule covers it"));
        }
        match &network {
            cox_sandbox::Network::Domains(allowed) if !allowed.iter().any(|p| p.admits(host)) => {
                Err("it is not in [sandbox] allowed_domains".to_owned())
            }
            _ => Ok(()),
        }
    })
}

pub(super) fn sandbox_policy(
    permissions: &config::Permissions,
    args: &RunArgs,
    workspace: &Workspace,
    engine: &cox_permission::Engine,
    home: &CoxHome,
) -> SandboxPolicy {
    crate::sandbox::token_folder(home.root());
    crate::sandbox::policy(
        &permissions.sandbox,
        args.sandbox,
        workspace,
        env::home_dir().as_deref(),
        home.root(),
        engine,
    )
}

/// What connecting MCP servers needs, with the bounds `MCP_TIMEOUT` and
/// `MCP_TOOL_TIMEOUT` set (in milliseconds, as Claude Code reads them).
///
/// # Errors
/// A bound that is not a number of milliseconds.
pub(super) fn connect_context(
    home: &CoxHome,
    cwd: &std::path::Path,
    sandbox: &SandboxPolicy,
    workspace: &Workspace,
) -> Result<crate::mcp::ConnectContext> {
    Ok(crate::mcp::ConnectContext {
        home: home.clone(),
        cwd: cwd.to_path_buf(),
        roots: workspace.roots.clone(),
        asks: None,
        sandbox: sandbox.clone(),
        deadline: crate::mcp::millis(
            "MCP_TIMEOUT",
            std::env::var("MCP_TIMEOUT").ok(),
            crate::mcp::DEFAULT_DEADLINE,
        )?,
        call_timeout: crate::mcp::millis(
            "MCP_TOOL_TIMEOUT",
            std::env::var("MCP_TOOL_TIMEOUT").ok(),
            crate::mcp::DEFAULT_CALL_TIMEOUT,
        )?,
    })
}

/// The MCP servers this command line asks for: none with `--no-mcp`; a
/// binary without an MCP client refuses `--mcp-config` and says it starts
/// none of the configured ones.
pub(super) fn mcp_servers(
    args: &RunArgs,
    home: &CoxHome,
    cwd: &std::path::Path,
    plugins: &[crate::ext::plugins::Plugin],
    approvals: &config::claude::McpChoice,
) -> Result<crate::mcp::Loaded> {
    if args.no_mcp {
        return Ok(crate::mcp::Loaded::default());
    }
    let home_dir = env::home_dir();
    let mut loaded = crate::mcp::load(
        &crate::mcp::Sources {
            user_config: &home.root().join("config.toml"),
            home_dir: home_dir.as_deref(),
            project: cwd,
            flags: &args.mcp_config,
            strict: args.strict_mcp_config,
            plugins,
            approvals,
        },
        &|name| std::env::var(name).ok(),
    )?;
    if crate::mcp::installed().is_none() {
        if !args.mcp_config.is_empty() {
            bail!("--mcp-config: this binary has no MCP client; `cox` has one");
        }
        if !loaded.servers.is_empty() {
            let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
            loaded.notices.push(format!(
                "MCP servers {} are configured but not started: this binary has no MCP client \
                 (`cox` has one)",
                names.join(", ")
            ));
            loaded.servers.clear();
        }
    }
    Ok(loaded)
}

/// The MCP servers a session in the current folder (or `--cwd`) would
/// start, and what connecting to them needs: for `cox mcp`, which looks
/// at them outside a session.
///
/// # Errors
/// The folder, a config file or a `--mcp-config` does not load.
pub(crate) fn mcp_outside_a_session(
    args: &RunArgs,
) -> Result<(crate::mcp::Loaded, crate::mcp::ConnectContext)> {
    let home = CoxHome::resolve(None)?;
    home.prepare()?;
    let here = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    let cwd = std::fs::canonicalize(&here)
        .with_context(|| format!("{}: cannot open the folder", here.display()))?;
    let plan = crate::plan::for_folder(&home, &cwd, args, Consent::Flag)?;
    let workspace = Workspace::single(cwd.clone());
    let sandbox = sandbox_policy(
        &plan.permissions,
        args,
        &workspace,
        &plan.permissions.engine,
        &home,
    );
    let plugins = crate::ext::plugins::discover(home.root(), &args.plugin_dir).plugins;
    let loaded = mcp_servers(args, &home, &cwd, &plugins, &plan.mcp)?;
    Ok((loaded, connect_context(&home, &cwd, &sandbox, &workspace)?))
}

/// `session` with the MCP servers of `loaded` connecting as its run starts
/// (their tools join it before the first request), and every notice about
/// them said then. Where a person types (`late`), the first request waits
/// at most [`crate::mcp::FIRST_WAIT`]: servers still connecting then join
/// at a later turn, with a notice.
pub(super) fn with_mcp<W: cox_core::World>(
    session: Session<W>,
    loaded: crate::mcp::Loaded,
    cx: crate::mcp::ConnectContext,
    (only, expand): (Option<Vec<String>>, bool),
    statuses: crate::mcp::Statuses,
    late: bool,
) -> Session<W> {
    let crate::mcp::Loaded { servers, notices } = loaded;
    if servers.is_empty() && notices.is_empty() {
        return session;
    }
    let client = crate::mcp::installed();
    // What joins later: servers still connecting (where a person types),
    // and a server's changed tools (anywhere).
    let (updates, joined) = futures::channel::mpsc::unbounded();
    let session = session.with_tool_updates(joined);
    // A main session's servers may ask the person for input (a subagent's
    // are not offered it: its surface is its parent's).
    let mut cx = cx;
    let session = if expand {
        let (asks, asked) = futures::channel::mpsc::unbounded();
        cx.asks = Some(asks);
        session.with_elicitations(asked)
    } else {
        session
    };
    session.with_late_tools(Box::pin(async move {
        let mut first = cox_core::LateTools {
            tools: Vec::new(),
            notices,
            ..Default::default()
        };
        let Some(client) = client.filter(|_| !servers.is_empty()) else {
            return first;
        };
        if !late {
            let connected = client.connect(servers, cx).await;
            absorb(
                &mut first,
                connected,
                (&only, expand),
                (&statuses, &updates),
            );
            return first;
        }
        // Each server as it connects: those within FIRST_WAIT join the
        // first request, each later one the request after it arrives.
        let mut waiting: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
        statuses
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend(waiting.iter().map(|name| {
                serde_json::json!({"name": name, "status": "connecting", "why": "still connecting"})
            }));
        let (known, mut each) = client.connect_each(servers, cx);
        let prompts = known.expander.clone().filter(|_| expand);
        let arrived = |one: &crate::mcp::Connected, waiting: &mut Vec<String>| {
            waiting.retain(|name| !one.states.iter().any(|(n, _)| n == name));
        };
        // The servers not started are known at once.
        arrived(&known, &mut waiting);
        absorb(&mut first, known, (&only, expand), (&statuses, &updates));
        let deadline = tokio::time::sleep(crate::mcp::FIRST_WAIT);
        tokio::pin!(deadline);
        loop {
            use futures::StreamExt as _;
            tokio::select! {
                one = each.next() => match one {
                    Some(one) => {
                        arrived(&one, &mut waiting);
                        absorb(&mut first, one, (&only, expand), (&statuses, &updates));
                    }
                    None => return first,
                },
                () = &mut deadline => break,
            }
        }
        first.notices.push(format!(
            "MCP servers {} are still connecting: each one's tools join at your next prompt \
             after it connects",
            waiting.join(", ")
        ));
        tokio::spawn(async move {
            use futures::StreamExt as _;
            while let Some(one) = each.next().await {
                let server = one
                    .states
                    .first()
                    .map(|(n, _)| n.clone())
                    .unwrap_or_default();
                let mut update = cox_core::LateTools::default();
                absorb(&mut update, one, (&only, expand), (&statuses, &updates));
                // Its prompts are commands from now on.
                let theirs: Vec<String> = prompts
                    .iter()
                    .flat_map(|p| p.commands())
                    .map(|c| c.name)
                    .filter(|c| c.starts_with(&format!("mcp__{server}__")))
                    .collect();
                if !theirs.is_empty() {
                    update.commands_changed = Some(format!(
                        "MCP server '{server}' connected: its prompts are commands now (/{})",
                        theirs.join(", /")
                    ));
                }
                if updates.unbounded_send(update).is_err() {
                    return;
                }
            }
        });
        first
    }))
}

/// What `connected` brings into `late` (beside what earlier servers
/// brought): its tools (a subagent's narrowed to `only`), its notices, why the servers that did not connect are not
/// there, its prompts where `expand`; and each server's state in
/// `statuses`.
fn absorb(
    late: &mut cox_core::LateTools,
    mut connected: crate::mcp::Connected,
    (only, expand): (&Option<Vec<String>>, bool),
    (statuses, updates): (
        &crate::mcp::Statuses,
        &futures::channel::mpsc::UnboundedSender<cox_core::LateTools>,
    ),
) {
    // A server's tools changing later reach the session as updates, each
    // replacing that server's tools (a subagent's still narrowed).
    if let Some(mut changes) = connected.changes.take() {
        let (updates, only) = (updates.clone(), only.clone());
        tokio::spawn(async move {
            use futures::StreamExt as _;
            while let Some(changed) = changes.next().await {
                let server = changed.server;
                let mut update = cox_core::LateTools {
                    notices: changed.notices,
                    ..cox_core::LateTools::default()
                };
                match changed.change {
                    cox_protocol::mcp::Change::Tools(mut tools) => {
                        if let Some(names) = &only {
                            tools.retain(|t| names.iter().any(|n| n == t.name()));
                        }
                        update.tools = tools;
                        update.replacing = Some(format!("mcp__{server}__"));
                    }
                    // A subagent does not expand prompts: nothing to say.
                    cox_protocol::mcp::Change::Prompts(_) if !expand => {}
                    cox_protocol::mcp::Change::Prompts(names) => {
                        update.commands_changed = Some(format!(
                            "MCP server '{server}' changed its prompts (now {}{})",
                            names.len(),
                            if names.is_empty() {
                                String::new()
                            } else {
                                format!(": /{}", names.join(", /"))
                            }
                        ));
                    }
                    cox_protocol::mcp::Change::Nothing => {}
                }
                if updates.unbounded_send(update).is_err() {
                    return;
                }
            }
        });
    }
    let mut shown = Vec::new();
    for (name, state) in &connected.states {
        tracing::info!(server = %name, ?state, "mcp server");
        let (status, why) = match state {
            ServerState::Connected { .. } => ("connected", None),
            ServerState::Failed(why) => ("failed", Some(why.clone())),
            ServerState::NotTrusted => (
                "pending",
                Some(format!(
                    "not started until you trust it: cox mcp trust {name}"
                )),
            ),
            ServerState::NeedsLogin => (
                "needs-auth",
                Some(format!("it needs a login: cox mcp login {name}")),
            ),
        };
        let mut entry = serde_json::json!({"name": name, "status": status});
        if let ServerState::Connected { tools, pending } = state {
            entry["why"] = match pending {
                0 => format!("{tools} tool(s)"),
                _ => format!("{tools} tool(s), {pending} waiting for trust: cox mcp trust {name}"),
            }
            .into();
        }
        if let Some(why) = why {
            entry["why"] = why.clone().into();
            late.unavailable.push((format!("mcp__{name}__"), why));
        }
        shown.push(entry);
    }
    // In place of a server's earlier state (`connecting`), beside any a
    // surface adds (the Agent SDK's own servers).
    let mut listed = statuses
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for entry in shown {
        match listed.iter_mut().find(|e| e["name"] == entry["name"]) {
            Some(earlier) => *earlier = entry,
            None => listed.push(entry),
        }
    }
    drop(listed);
    let mut tools = connected.tools;
    // A subagent's definition may narrow its tools.
    if let Some(names) = only {
        tools.retain(|t| names.iter().any(|n| n == t.name()));
    }
    late.tools.extend(tools);
    if let Some(expander) = connected.expander.filter(|_| expand) {
        late.expander = Some(expander);
    }
    late.notices.extend(connected.notices);
}

/// JSON lines to today's `logs/cox.log.<date>` through `filter` (see
/// [`config::log_filter_for`]), after the files past the retention are
/// removed (see [`crate::log_file`]). A log that cannot be opened or
/// cleaned is said in one line on stderr, and the run goes on.
pub(super) fn init_log(
    dir: PathBuf,
    filter: tracing_subscriber::EnvFilter,
    keep_days: Option<u32>,
) {
    if let Err(why) = crate::log_file::prune(
        &dir,
        keep_days.map_or(crate::log_file::KEEP_DAYS, u64::from),
        std::time::SystemTime::now(),
    ) {
        eprintln!("cox: warning: {why}");
    }
    let path = crate::log_file::today(&dir, &crate::env::now_rfc3339());
    let file = match std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        Ok(file) => file,
        Err(err) => {
            eprintln!(
                "cox: warning: cannot open the log {}: {err}; this run keeps no log",
                path.display()
            );
            return;
        }
    };
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let layer = crate::telemetry::log::JsonLayer::new(file, crate::telemetry::current());
    let _ = tracing_subscriber::registry()
        .with(layer.with_filter(filter))
        .try_init();
}
