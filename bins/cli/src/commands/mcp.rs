//! `cox mcp list|get|add|remove|trust|login|logout`: the MCP servers a session here
//! would start, in the shape Claude Code users know.
//!
//! - `list` connects every server (at once, within `MCP_TIMEOUT`) and
//!   prints one line each: where it is defined and its state (connected
//!   with its tools, pending trust, failed and why).
//! - `get NAME` prints one server whole, with each tool's trust.
//! - `add NAME -- CMD ARGS…` (or `--transport http NAME URL`) writes the
//!   server to the user's `config.toml` (`--scope user`, the default) or
//!   the project's `.mcp.json` (`--scope project`); `remove NAME` takes it
//!   out of the file that defines it.
//! - `trust` lists the tools that wait for trust, with what changed;
//!   `trust NAME` trusts what the server serves now.
//! - `login NAME` runs the OAuth flow for an HTTP server that asks for a
//!   login (the URL printed, the browser opened, the redirect taken on
//!   127.0.0.1); `logout NAME` forgets the token.
//!
//! Exit codes: 0 done, 1 with one line on stderr (a server that cannot be
//! reached is a state in `list`, an error in `trust NAME`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;

use crate::RunArgs;
use crate::mcp::{McpServer, OriginKind, ServerReport, ToolTrust, Transport};
use crate::output::printable;

mod login;
mod secret;

pub use login::login_flow;
use login::{login, logout};

/// `cox mcp …`.
#[derive(clap::Subcommand, Debug)]
pub enum McpCommand {
    /// Every server a session here would start, and its state.
    List,
    /// One server whole: where it is defined, how it runs, its tools.
    Get { name: String },
    /// Add a server: `cox mcp add NAME -- CMD ARGS…`, or
    /// `cox mcp add --transport http NAME URL`.
    Add(AddArgs),
    /// Remove a server from the file that defines it.
    Remove {
        name: String,
        /// Which file: `user` ($COX_HOME/config.toml) or `project`
        /// (.mcp.json); by default the one that defines it.
        #[arg(long, value_enum)]
        scope: Option<Scope>,
    },
    /// With no name: the tools that wait for trust, and what changed.
    /// With a name: trust what that server serves now.
    Trust { name: Option<String> },
    /// Log in to an HTTP server that asks for it (OAuth in the browser).
    Login { name: String },
    /// Forget the login of an HTTP server.
    Logout { name: String },
}

/// Where `add` writes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `$COX_HOME/config.toml`.
    User,
    /// The project's `.mcp.json` (its servers wait for `cox mcp trust`).
    Project,
}

/// The flags of `cox mcp add`.
#[derive(clap::Args, Debug)]
pub struct AddArgs {
    pub name: String,
    /// `stdio` (the default), `http` or `sse`.
    #[arg(long, short = 't', default_value = "stdio")]
    pub transport: String,
    /// A variable for a stdio server, `KEY=VALUE`; repeatable.
    #[arg(long = "env", short = 'e', value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// A header for an HTTP server, `"Name: value"`; repeatable.
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    #[arg(long, short = 's', value_enum, default_value = "user")]
    pub scope: Scope,
    /// An HTTP server's client, registered with its authorization server
    /// out of band.
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,
    /// Ask for that client's secret (or read `MCP_CLIENT_SECRET`) and keep
    /// it beside the server's login, in the OS keyring where there is one.
    #[arg(long, requires = "client_id")]
    pub client_secret: bool,
    /// The loopback port a login's redirect comes back to, for a client
    /// registered with one exact redirect URI.
    #[arg(long, value_name = "PORT")]
    pub callback_port: Option<u16>,
    /// The command and its arguments (after `--`), or the URL.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub target: Vec<String>,
}

/// Runs `cox mcp …`; returns the exit code.
pub fn run(command: &McpCommand, args: &RunArgs) -> i32 {
    crate::print_result(match command {
        McpCommand::List => list(args),
        McpCommand::Get { name } => get(args, name),
        McpCommand::Add(add_args) => add(args, add_args),
        McpCommand::Remove { name, scope } => remove(args, name, *scope),
        McpCommand::Trust { name: None } => pending(args),
        McpCommand::Trust { name: Some(name) } => trust(args, name),
        McpCommand::Login { name } => login(args, name),
        McpCommand::Logout { name } => logout(args, name),
    })
}

fn client() -> Result<&'static dyn crate::mcp::McpClient> {
    crate::mcp::installed().ok_or_else(|| anyhow!("this binary has no MCP client; `cox` has one"))
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

fn transport_line(server: &McpServer) -> String {
    match &server.transport {
        Transport::Stdio { command, args, .. } => {
            let mut line = std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            if !server.sandbox {
                line.push_str(" (unsandboxed)");
            } else if server.network {
                line.push_str(" (sandboxed, network)");
            } else {
                line.push_str(" (sandboxed, no network)");
            }
            format!("stdio: {line}")
        }
        Transport::Http { url, .. } => format!("http: {url}"),
        Transport::Sse { url, .. } => format!("sse: {url}"),
    }
}

/// `text` cut to `max` characters, with `…` when it was longer (`get`
/// shows it whole).
fn shortened(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max).collect();
    cut.push('…');
    cut
}

fn origin_line(server: &McpServer) -> String {
    format!(
        "{} ({}:{})",
        server.origin.kind.label(),
        server.origin.file.display(),
        server.origin.line
    )
}

fn state_line(report: &ServerReport) -> String {
    match &report.outcome {
        Err(why) if report.not_started => format!("pending trust (not started): {why}"),
        Err(why) => match why.strip_prefix("it needs a login: ") {
            Some(how) => format!("needs login: {how}"),
            None => format!("failed: {why}"),
        },
        Ok(tools) => {
            let waiting = tools
                .iter()
                .filter(|t| t.trust != ToolTrust::Trusted)
                .count();
            if waiting == 0 {
                format!("connected · {} tools", tools.len())
            } else {
                format!(
                    "connected · {} tools, {waiting} pending trust: run cox mcp trust {}",
                    tools.len(),
                    report.name
                )
            }
        }
    }
}

/// The servers, and their reports.
fn look(
    args: &RunArgs,
    only: Option<&str>,
) -> Result<(Vec<McpServer>, Vec<ServerReport>, Vec<String>)> {
    let client = client()?;
    let (loaded, cx) = crate::session::mcp_outside_a_session(args)?;
    let mut servers = loaded.servers;
    if let Some(name) = only {
        servers.retain(|s| s.name == name);
        if servers.is_empty() {
            bail!("no MCP server is called {name:?} here (cox mcp list shows them)");
        }
    }
    let reports = runtime()?.block_on(client.inspect(servers.clone(), cx));
    Ok((servers, reports, loaded.notices))
}

fn list(args: &RunArgs) -> Result<String> {
    let (servers, reports, notices) = look(args, None)?;
    let mut out = String::new();
    for notice in &notices {
        let _ = writeln!(out, "warning: {notice}");
    }
    if servers.is_empty() {
        out.push_str("no MCP servers (cox mcp add NAME -- CMD ARGS… adds one)");
        return Ok(out);
    }
    for (server, report) in servers.iter().zip(&reports) {
        let _ = writeln!(
            out,
            "{}  {}  {}  {}",
            server.name,
            printable(&shortened(&transport_line(server), 100)),
            printable(&origin_line(server)),
            printable(&state_line(report))
        );
    }
    Ok(out.trim_end().to_owned())
}

fn get(args: &RunArgs, name: &str) -> Result<String> {
    let (servers, reports, _) = look(args, Some(name))?;
    let (server, report) = (&servers[0], &reports[0]);
    let mut out = String::new();
    let _ = writeln!(out, "{}", server.name);
    let _ = writeln!(out, "  defined in: {}", printable(&origin_line(server)));
    let _ = writeln!(out, "  runs as: {}", printable(&transport_line(server)));
    if let Some(confined) = crate::mcp::confinement(server) {
        let _ = writeln!(out, "  confined: {confined}");
    }
    let _ = writeln!(out, "  state: {}", printable(&state_line(report)));
    if let Some(protocol) = &report.protocol {
        let _ = writeln!(out, "  protocol: {}", printable(protocol));
    }
    if let Ok(tools) = &report.outcome {
        for tool in tools {
            let trust = match tool.trust {
                ToolTrust::Trusted => "trusted",
                ToolTrust::Pending => "pending trust",
                ToolTrust::Changed { .. } => "changed since trusted",
            };
            let _ = writeln!(
                out,
                "  {}  {trust}  {}",
                printable(&crate::mcp::tool_name(&server.name, &tool.name)),
                printable(tool.description.lines().next().unwrap_or_default())
            );
        }
    }
    Ok(out.trim_end().to_owned())
}

/// Lines of `before` and `after` that differ, as `-`/`+` lines.
fn diff(what: &str, before: &str, after: &str, out: &mut String) {
    if before == after {
        return;
    }
    let _ = writeln!(out, "    {what}:");
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    for line in &old {
        if !new.contains(line) {
            let _ = writeln!(out, "    - {}", printable(line));
        }
    }
    for line in &new {
        if !old.contains(line) {
            let _ = writeln!(out, "    + {}", printable(line));
        }
    }
}

fn pretty(schema: &Value) -> String {
    serde_json::to_string_pretty(schema).unwrap_or_default()
}

fn pending(args: &RunArgs) -> Result<String> {
    let (servers, reports, _) = look(args, None)?;
    let mut out = String::new();
    for report in &reports {
        let Ok(tools) = &report.outcome else {
            let _ = writeln!(out, "{}: {}", report.name, printable(&state_line(report)));
            if report.not_started
                && let Some(server) = servers.iter().find(|s| s.name == report.name)
            {
                let _ = writeln!(
                    out,
                    "    it would run: {} (defined in {})",
                    printable(&transport_line(server)),
                    printable(&origin_line(server))
                );
            }
            continue;
        };
        for tool in tools {
            match &tool.trust {
                ToolTrust::Trusted => {}
                ToolTrust::Pending => {
                    let _ = writeln!(
                        out,
                        "{}: {} is pending: {}",
                        report.name,
                        printable(&tool.name),
                        printable(tool.description.lines().next().unwrap_or_default())
                    );
                }
                ToolTrust::Changed {
                    description,
                    input_schema,
                } => {
                    let _ = writeln!(
                        out,
                        "{}: {} changed since it was trusted:",
                        report.name,
                        printable(&tool.name)
                    );
                    diff("description", description, &tool.description, &mut out);
                    diff(
                        "input schema",
                        &pretty(input_schema),
                        &pretty(&tool.input_schema),
                        &mut out,
                    );
                }
            }
        }
    }
    if out.is_empty() {
        return Ok("every MCP tool here is trusted".to_owned());
    }
    let names: Vec<&str> = reports
        .iter()
        .filter(|r| {
            r.not_started
                || r.outcome
                    .as_ref()
                    .is_ok_and(|tools| tools.iter().any(|t| t.trust != ToolTrust::Trusted))
        })
        .map(|r| r.name.as_str())
        .collect();
    for name in names {
        let _ = writeln!(out, "trust it with: cox mcp trust {name}");
    }
    Ok(out.trim_end().to_owned())
}

fn trust(args: &RunArgs, name: &str) -> Result<String> {
    let trusted = runtime()?.block_on(trust_flow(args.clone(), name.to_owned()));
    trusted.map_err(|why| anyhow!(why))
}

/// Trusts MCP server `name` of the configuration `args` reads as it runs
/// now (`cox mcp trust`, the terminal UI's `/mcp trust`): what to say, the
/// tools it serves one per line, or why not in one line.
///
/// # Errors
/// No such server here, or it could not be reached or its trust written.
pub fn trust_flow(
    args: RunArgs,
    name: String,
) -> cox_protocol::provider::BoxFuture<'static, Result<String, String>> {
    Box::pin(async move {
        let client = client().map_err(|e| e.to_string())?;
        let (loaded, cx) =
            crate::session::mcp_outside_a_session(&args).map_err(|e| crate::error_chain(&e))?;
        let Some(server) = loaded.servers.into_iter().find(|s| s.name == name) else {
            return Err(format!(
                "no MCP server is called {name:?} here (cox mcp list shows them)"
            ));
        };
        let what = printable(&transport_line(&server));
        let trusted = client
            .trust(server, cx)
            .await
            .map_err(|why| format!("MCP server '{name}' could not be trusted: {why}"))?;
        let mut out = format!(
            "trusted MCP server '{name}' as it runs now ({what}), and the {} tools it serves:",
            trusted.len()
        );
        for tool in &trusted {
            let _ = write!(
                out,
                "\n  {}  {}",
                printable(&tool.name),
                printable(tool.description.lines().next().unwrap_or_default())
            );
        }
        Ok(out)
    })
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

fn pairs(items: &[String], sep: char, what: &str) -> Result<Vec<(String, String)>> {
    items
        .iter()
        .map(|item| {
            let (key, value) = item
                .split_once(sep)
                .ok_or_else(|| anyhow!("{what} {item:?}: write it as KEY{sep}VALUE"))?;
            let key = key.trim();
            if key.is_empty() {
                bail!("{what} {item:?}: the name is empty");
            }
            Ok((key.to_owned(), value.trim_start().to_owned()))
        })
        .collect()
}

fn add(args: &RunArgs, add: &AddArgs) -> Result<String> {
    if let Some(bad) = crate::mcp::valid_server_name(&add.name) {
        bail!("cox mcp add: {bad}");
    }
    let env = pairs(&add.env, '=', "--env")?;
    let headers = pairs(&add.headers, ':', "--header")?;
    let kind = add.transport.as_str();
    let (command, rest) = add
        .target
        .split_first()
        .ok_or_else(|| anyhow!("cox mcp add: give the command (after --) or the URL"))?;
    match kind {
        "stdio" if !headers.is_empty() => bail!("--header is for http and sse servers"),
        "http" | "sse" if !env.is_empty() => bail!("--env is for stdio servers"),
        "http" | "sse" if !rest.is_empty() => {
            bail!(
                "an {kind} server takes one URL, not {}",
                add.target.join(" ")
            )
        }
        "stdio" | "http" | "sse" => {}
        other => bail!("--transport {other}: give stdio, http or sse"),
    }
    if kind == "stdio" && (add.client_id.is_some() || add.callback_port.is_some()) {
        bail!("--client-id and --callback-port are for http and sse servers");
    }
    // Asked before anything is written, so a refused answer leaves nothing.
    let secret = if add.client_secret {
        Some(secret::read()?)
    } else {
        None
    };
    let (loaded, cx) = crate::session::mcp_outside_a_session(args)?;
    if let Some(there) = loaded.servers.iter().find(|s| s.name == add.name) {
        bail!(
            "MCP server '{}' is already defined in {}; cox mcp remove {} first",
            add.name,
            origin_line(there),
            add.name
        );
    }
    match add.scope {
        Scope::User => {
            let path = cx.home.root().join("config.toml");
            let mut text = std::fs::read_to_string(&path).unwrap_or_default();
            if toml_defines(&text, &add.name) {
                bail!(
                    "{} already defines MCP server '{}'; cox mcp remove {} first",
                    path.display(),
                    add.name,
                    add.name
                );
            }
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            if !text.is_empty() {
                text.push('\n');
            }
            let _ = writeln!(text, "[mcp_servers.{}]", add.name);
            if kind == "stdio" {
                let _ = writeln!(text, "command = {}", toml_string(command));
                let listed: Vec<String> = rest.iter().map(|a| toml_string(a)).collect();
                let _ = writeln!(text, "args = [{}]", listed.join(", "));
                if !env.is_empty() {
                    let inline: Vec<String> = env
                        .iter()
                        .map(|(k, v)| format!("{} = {}", toml_string(k), toml_string(v)))
                        .collect();
                    let _ = writeln!(text, "env = {{ {} }}", inline.join(", "));
                }
            } else {
                let _ = writeln!(text, "type = {}", toml_string(kind));
                let _ = writeln!(text, "url = {}", toml_string(command));
                if !headers.is_empty() {
                    let inline: Vec<String> = headers
                        .iter()
                        .map(|(k, v)| format!("{} = {}", toml_string(k), toml_string(v)))
                        .collect();
                    let _ = writeln!(text, "headers = {{ {} }}", inline.join(", "));
                }
                let mut oauth = Vec::new();
                if let Some(id) = &add.client_id {
                    oauth.push(format!("client_id = {}", toml_string(id)));
                }
                if let Some(port) = add.callback_port {
                    oauth.push(format!("callback_port = {port}"));
                }
                if !oauth.is_empty() {
                    let _ = writeln!(text, "oauth = {{ {} }}", oauth.join(", "));
                }
            }
            write_checked(&path, &text, || {
                crate::config::load_mcp_servers(&path).map(drop)
            })?;
            let kept = secret::keep(&cx.home, (&add.name, command), secret.as_deref())?;
            Ok(format!(
                "added MCP server '{}' to {}{kept}",
                add.name,
                path.display()
            ))
        }
        Scope::Project => {
            let path = cx.cwd.join(".mcp.json");
            let mut file = read_json(&path)?;
            let mut entry = serde_json::Map::new();
            if kind == "stdio" {
                entry.insert("type".into(), "stdio".into());
                entry.insert("command".into(), command.clone().into());
                entry.insert("args".into(), rest.to_vec().into());
                if !env.is_empty() {
                    entry.insert(
                        "env".into(),
                        Value::Object(env.into_iter().map(|(k, v)| (k, v.into())).collect()),
                    );
                }
            } else {
                entry.insert("type".into(), kind.into());
                entry.insert("url".into(), command.clone().into());
                if !headers.is_empty() {
                    entry.insert(
                        "headers".into(),
                        Value::Object(headers.into_iter().map(|(k, v)| (k, v.into())).collect()),
                    );
                }
                let mut oauth = serde_json::Map::new();
                if let Some(id) = &add.client_id {
                    oauth.insert("clientId".into(), id.clone().into());
                }
                if let Some(port) = add.callback_port {
                    oauth.insert("callbackPort".into(), port.into());
                }
                if !oauth.is_empty() {
                    entry.insert("oauth".into(), Value::Object(oauth));
                }
            }
            let servers = servers_of(&mut file, &path)?;
            if servers.contains_key(&add.name) {
                bail!(
                    "{} already defines MCP server '{}'; cox mcp remove {} first",
                    path.display(),
                    add.name,
                    add.name
                );
            }
            servers.insert(add.name.clone(), Value::Object(entry));
            write_json(&path, &file)?;
            let kept = secret::keep(&cx.home, (&add.name, command), secret.as_deref())?;
            Ok(format!(
                "added MCP server '{}' to {}{kept}; it waits for `cox mcp trust {}`",
                add.name,
                path.display(),
                add.name
            ))
        }
    }
}

fn read_json(path: &Path) -> Result<Value> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            serde_json::from_str(&text).map_err(|e| anyhow!("{}:{}: {e}", path.display(), e.line()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(serde_json::json!({"mcpServers": {}}))
        }
        Err(e) => Err(anyhow!("{}: cannot read: {e}", path.display())),
    }
}

fn servers_of<'a>(
    file: &'a mut Value,
    path: &Path,
) -> Result<&'a mut serde_json::Map<String, Value>> {
    let Some(object) = file.as_object_mut() else {
        bail!("{}: not a JSON object", path.display());
    };
    object
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(serde_json::Map::new()))
        .as_object_mut()
        .ok_or_else(|| anyhow!("{}: mcpServers is not an object", path.display()))
}

fn write_json(path: &Path, file: &Value) -> Result<()> {
    let text = serde_json::to_string_pretty(file)? + "\n";
    atomic_write(path, &text)
}

/// Writes `text` through a temporary file beside `path` and a rename, so
/// a crash leaves the old file or the new one, never half of one.
fn atomic_write(path: &Path, text: &str) -> Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = path.with_file_name(format!(".{name}.cox-{}", std::process::id()));
    std::fs::write(&temp, text)
        .and_then(|()| {
            if let Ok(meta) = std::fs::metadata(path) {
                std::fs::set_permissions(&temp, meta.permissions())?;
            }
            std::fs::rename(&temp, path)
        })
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&temp);
        })
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Whether a config text defines `[mcp_servers.<name>]` in any spelling
/// this command knows, loaded or not.
fn toml_defines(text: &str, name: &str) -> bool {
    let dotted = [
        format!("mcp_servers.{name}"),
        format!("mcp_servers.\"{name}\""),
    ];
    text.lines().any(|l| {
        let l = l.trim_start();
        dotted.iter().any(|d| {
            l.strip_prefix('[')
                .and_then(|rest| rest.strip_prefix(d.as_str()))
                .is_some_and(|rest| rest.starts_with(']') || rest.starts_with('.'))
                || l.strip_prefix(d.as_str())
                    .is_some_and(|rest| rest.trim_start().starts_with('=') || rest.starts_with('.'))
        })
    })
}

/// Writes `text` to `path`, then checks it still loads; puts the old
/// text back when it does not.
fn write_checked(path: &PathBuf, text: &str, check: impl Fn() -> Result<()>) -> Result<()> {
    let old = std::fs::read_to_string(path).ok();
    atomic_write(path, text)?;
    if let Err(err) = check() {
        match old {
            Some(old) => atomic_write(path, &old),
            None => std::fs::remove_file(path)
                .with_context(|| format!("cannot restore {}", path.display())),
        }?;
        return Err(err.context(format!("{} was left as it was", path.display())));
    }
    Ok(())
}

/// `text` without the tables of `[mcp_servers.<name>]` (its own, and each
/// `[mcp_servers.<name>.…]` wherever it is), the comments just above the
/// next table kept with it, the line ends as they were; `None` when it has
/// no such table.
fn without_server(text: &str, name: &str) -> Option<String> {
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let lines: Vec<&str> = text.lines().collect();
    let mine = |line: &str| {
        let l = line.trim();
        [
            format!("[mcp_servers.{name}"),
            format!("[mcp_servers.\"{name}\""),
        ]
        .iter()
        .any(|head| {
            l.strip_prefix(head.as_str())
                .is_some_and(|rest| rest.starts_with(']') || rest.starts_with('.'))
        })
    };
    let header = |line: &str| line.trim_start().starts_with('[');
    if !lines.iter().any(|l| mine(l)) {
        return None;
    }
    let mut kept: Vec<&str> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        if !mine(lines[i]) {
            kept.push(lines[i]);
            i += 1;
            continue;
        }
        let mut end = i + 1;
        while end < lines.len() && !header(lines[end]) {
            end += 1;
        }
        // Comments right above the next table are that table's.
        let mut cut = end;
        while cut > i + 1 && lines[cut - 1].trim_start().starts_with('#') {
            cut -= 1;
        }
        while kept.last().is_some_and(|l| l.trim().is_empty()) {
            kept.pop();
        }
        let rest = &lines[cut..end];
        if !kept.is_empty() && (end < lines.len() || !rest.is_empty()) {
            kept.push("");
        }
        kept.extend_from_slice(rest);
        i = end;
    }
    let mut new = kept.join(newline);
    if !new.is_empty() {
        new.push_str(newline);
    }
    Some(new)
}

fn remove(args: &RunArgs, name: &str, scope: Option<Scope>) -> Result<String> {
    let (loaded, cx) = crate::session::mcp_outside_a_session(args)?;
    let defined = loaded.servers.iter().find(|s| s.name == name);
    let scope = match (scope, defined.map(|s| s.origin.kind)) {
        (Some(scope), _) => scope,
        (None, Some(OriginKind::User)) => Scope::User,
        (None, Some(OriginKind::Project | OriginKind::ProjectApproved)) => Scope::Project,
        (None, Some(_)) => bail!(
            "MCP server '{name}' is defined in {}, which cox does not edit",
            defined.map(origin_line).unwrap_or_default()
        ),
        (None, None) => bail!("no MCP server is called {name:?} here (cox mcp list shows them)"),
    };
    // A client secret kept for it goes with it.
    if let Ok(client) = client()
        && let Err(why) = client.forget_client_secret(cx.home.root(), name)
    {
        bail!("MCP server '{name}': its client secret cannot be forgotten: {why}");
    }
    match scope {
        Scope::Project => {
            let path = cx.cwd.join(".mcp.json");
            let mut file = read_json(&path)?;
            if servers_of(&mut file, &path)?.shift_remove(name).is_none() {
                bail!("{} defines no MCP server '{name}'", path.display());
            }
            write_json(&path, &file)?;
            Ok(format!(
                "removed MCP server '{name}' from {}",
                path.display()
            ))
        }
        Scope::User => {
            let path = cx.home.root().join("config.toml");
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let Some(new) = without_server(&text, name) else {
                bail!(
                    "{} does not define [mcp_servers.{name}] as a table of its own; remove it by hand",
                    path.display()
                );
            };
            write_checked(&path, &new, || {
                crate::config::load_mcp_servers(&path).map(drop)
            })?;
            Ok(format!(
                "removed MCP server '{name}' from {}",
                path.display()
            ))
        }
    }
}

#[cfg(test)]
mod tests;
