//! Reading server definitions from every source, with their lines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Entry, Loaded, McpServer, Origin, OriginKind, Transport};

/// The most of a project's or a plugin's server file that is read.
const FILE_MAX: u64 = 1 << 20;

/// A server's name, and the server or why it is not one.
type Named = (String, Result<McpServer, String>);

/// Where to look.
#[derive(Clone, Debug)]
pub struct Sources<'a> {
    /// `$COX_HOME/config.toml`.
    pub user_config: &'a Path,
    /// The user's home, for `~/.claude.json`; `None` reads none.
    pub home_dir: Option<&'a Path>,
    /// The session's folder: its `.mcp.json`, and the key of its entry in
    /// `~/.claude.json`.
    pub project: &'a Path,
    /// `--mcp-config`, each a file or a JSON text, in order.
    pub flags: &'a [String],
    /// `--strict-mcp-config`: only the flags' servers.
    pub strict: bool,
    /// The plugins found: each one's servers, as `plugin_<plugin>_<server>`.
    pub plugins: &'a [crate::ext::plugins::Plugin],
    /// The person's answer about the project's `.mcp.json` servers (their
    /// Claude Code settings' `enabledMcpjsonServers` and the like).
    pub approvals: &'a crate::config::claude::McpChoice,
}

/// The servers every source defines, later sources winning by name.
///
/// # Errors
/// The user's config does not load, or a `--mcp-config` file cannot be
/// read or is not a server file: one line naming it.
pub fn load(sources: &Sources<'_>, var: &dyn Fn(&str) -> Option<String>) -> Result<Loaded> {
    let mut found: BTreeMap<String, Result<McpServer, String>> = BTreeMap::new();
    let mut notices = Vec::new();
    let mut take = |parsed: Vec<Named>| {
        for (name, server) in parsed {
            found.insert(name, server);
        }
    };
    if !sources.strict {
        if let Some((path, text, entries)) = crate::config::load_mcp_servers(sources.user_config)? {
            take(
                entries
                    .into_iter()
                    .map(|(name, entry)| {
                        let line = toml_line(&text, &name);
                        let origin = Origin {
                            kind: OriginKind::User,
                            file: path.clone(),
                            line,
                        };
                        let server = resolve(&name, &entry, origin, var);
                        (name, server)
                    })
                    .collect(),
            );
        }
        if let Some(home) = sources.home_dir {
            let path = home.join(".claude.json");
            match claude_json(&path, sources.project, var) {
                Ok(parsed) => take(parsed),
                Err(why) => notices.push(why),
            }
        }
        // The repository's file: a regular one, of a sane size.
        let path = sources.project.join(".mcp.json");
        match cox_hooks::config::read_small(&path, FILE_MAX) {
            Ok(Some(text)) => match server_file(&text, &path, OriginKind::Project, var) {
                Ok(parsed) => take(parsed),
                Err(why) => notices.push(format!("{why}; its MCP servers are not started")),
            },
            Ok(None) => {}
            Err(why) => notices.push(format!(
                "{}: {why}; its MCP servers are not started",
                path.display()
            )),
        }
        for plugin in sources.plugins {
            match plugin_servers(plugin, var) {
                Ok(parsed) => take(parsed),
                Err(why) => notices.push(format!("{why}; its MCP servers are not started")),
            }
        }
    }
    for flag in sources.flags {
        let (text, path) = if flag.trim_start().starts_with('{') {
            (flag.clone(), PathBuf::from("--mcp-config"))
        } else {
            let path = PathBuf::from(flag);
            // Read once: the SDK's check for in-process servers read it too.
            let text = crate::config::once::read(&path, |path| {
                std::fs::read_to_string(path)
                    .map(Some)
                    .map_err(|e| anyhow!("--mcp-config {}: cannot read: {e}", path.display()))
            })?
            .unwrap_or_default();
            (text, path)
        };
        take(server_file(&text, &path, OriginKind::Flag, var).map_err(|why| anyhow!(why))?);
    }
    let mut servers = Vec::new();
    for (_, server) in found {
        match server {
            Ok(server) => servers.push(server),
            Err(why) => notices.push(why),
        }
    }
    approve(&mut servers, sources.approvals, &mut notices);
    Ok(Loaded { servers, notices })
}

/// The person's answer about the project's servers: one their settings
/// turn off is not started; one they approve is trusted as it connects.
fn approve(
    servers: &mut Vec<McpServer>,
    approvals: &crate::config::claude::McpChoice,
    notices: &mut Vec<String>,
) {
    servers.retain(|server| {
        let off =
            server.origin.kind == OriginKind::Project && approvals.disabled.contains(&server.name);
        if off {
            notices.push(format!(
                "MCP server '{}' is not started: your settings' disabledMcpjsonServers names it",
                server.name
            ));
        }
        !off
    });
    for server in servers.iter_mut() {
        if server.origin.kind == OriginKind::Project
            && (approvals.all || approvals.enabled.contains(&server.name))
        {
            server.origin.kind = OriginKind::ProjectApproved;
        }
    }
}

/// A plugin's servers, named `plugin_<plugin>_<server>` (as Claude Code
/// names them), with `${CLAUDE_PLUGIN_ROOT}` standing for its folder.
fn plugin_servers(
    plugin: &crate::ext::plugins::Plugin,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Named>, String> {
    use crate::ext::plugins::Part;
    let root = plugin.root.display().to_string();
    let var = |name: &str| match name {
        "CLAUDE_PLUGIN_ROOT" => Some(root.clone()),
        _ => var(name),
    };
    let parsed = match &plugin.mcp {
        None => return Ok(Vec::new()),
        Some(Part::File(path)) => {
            let text = cox_hooks::config::read_small(path, FILE_MAX)
                .map_err(|why| format!("{}: {why}", path.display()))?
                .unwrap_or_default();
            server_file(&text, path, OriginKind::Plugin, &var)?
        }
        Some(Part::Inline(value)) => {
            let text = serde_json::json!({ "mcpServers": value }).to_string();
            server_file(&text, &plugin.manifest, OriginKind::Plugin, &var)?
                .into_iter()
                .map(|(name, server)| {
                    let line =
                        cox_hooks::config::line_of(&plugin.manifest_text, &format!("\"{name}\""));
                    let server = server.map(|mut s| {
                        s.origin.line = line;
                        s
                    });
                    (name, server)
                })
                .collect()
        }
    };
    Ok(parsed
        .into_iter()
        .map(|(name, server)| {
            let full = format!("plugin_{}_{name}", plugin.name);
            let server = server.and_then(|mut server| {
                if let Some(why) = cox_protocol::mcp::valid_server_name(&full) {
                    return Err(format!(
                        "{}:{}: plugin {}'s MCP server '{name}': {why}; not started",
                        server.origin.file.display(),
                        server.origin.line,
                        plugin.name
                    ));
                }
                server.name.clone_from(&full);
                Ok(server)
            });
            (full, server)
        })
        .collect())
}

/// The line of `[mcp_servers.<name>]` in a TOML text (1 when not found).
fn toml_line(text: &str, name: &str) -> usize {
    let heads = [
        format!("[mcp_servers.{name}]"),
        format!("[mcp_servers.\"{name}\"]"),
    ];
    let dotted = format!("mcp_servers.{name}");
    text.lines()
        .position(|l| heads.iter().any(|h| l.trim() == h))
        .or_else(|| {
            text.lines()
                .position(|l| l.trim_start().starts_with(&format!("[{dotted}.")))
        })
        .or_else(|| {
            text.lines().position(|l| {
                let l = l.trim_start();
                l.starts_with(&dotted)
                    || l.starts_with(&format!("{name} "))
                    || l.starts_with(&format!("{name}="))
            })
        })
        .map_or(1, |i| i + 1)
}

/// The line (from 1) of a byte offset.
fn line_at(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// Where `inner` starts in `outer`, when it is a slice of it.
fn offset_in(outer: &str, inner: &str) -> usize {
    (inner.as_ptr() as usize)
        .checked_sub(outer.as_ptr() as usize)
        .filter(|o| *o <= outer.len())
        .unwrap_or(0)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerFile<'a> {
    #[serde(borrow, rename = "mcpServers", default)]
    servers: BTreeMap<String, &'a RawValue>,
}

/// A `.mcp.json` (or a `--mcp-config`): `{"mcpServers": {…}}`.
fn server_file(
    text: &str,
    path: &Path,
    kind: OriginKind,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Named>, String> {
    let file: ServerFile<'_> = serde_json::from_str(text).map_err(|e| {
        format!(
            "{}:{}: {}",
            path.display(),
            e.line(),
            first_line(&e.to_string())
        )
    })?;
    Ok(entries(text, path, kind, &file.servers, var))
}

/// Each raw entry read as a server, with its line.
fn entries(
    text: &str,
    path: &Path,
    kind: OriginKind,
    raw: &BTreeMap<String, &RawValue>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Vec<Named> {
    raw.iter()
        .map(|(name, value)| {
            let line = line_at(text, offset_in(text, value.get()));
            let origin = Origin {
                kind,
                file: path.to_path_buf(),
                line,
            };
            let server = match serde_json::from_str::<Entry>(value.get()) {
                Ok(entry) => resolve(name, &entry, origin, var),
                Err(e) => Err(format!(
                    "{}:{}: MCP server '{name}': {}; not started",
                    path.display(),
                    line + e.line() - 1,
                    first_line(&e.to_string())
                )),
            };
            (name.clone(), server)
        })
        .collect()
}

#[derive(Deserialize)]
struct ClaudeJson<'a> {
    #[serde(borrow, rename = "mcpServers", default)]
    servers: BTreeMap<String, &'a RawValue>,
    #[serde(borrow, default)]
    projects: BTreeMap<String, ClaudeProject<'a>>,
}

#[derive(Deserialize)]
struct ClaudeProject<'a> {
    #[serde(borrow, rename = "mcpServers", default)]
    servers: BTreeMap<String, &'a RawValue>,
}

/// `~/.claude.json`: its servers, then this project's. A missing file is
/// none; one that does not parse is one notice.
fn claude_json(
    path: &Path,
    project: &Path,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Named>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: cannot read: {e}", path.display())),
    };
    // Claude Code keeps much else there (its history, often megabytes):
    // a file that names no servers is not parsed at all.
    if !text.contains("\"mcpServers\"") {
        return Ok(Vec::new());
    }
    let file: ClaudeJson<'_> = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}:{}: {}; its MCP servers are not started",
            path.display(),
            e.line(),
            first_line(&e.to_string())
        )
    })?;
    let mut out = entries(&text, path, OriginKind::ClaudeUser, &file.servers, var);
    let key = project.display().to_string();
    if let Some(entry) = file.projects.get(&key) {
        out.extend(entries(
            &text,
            path,
            OriginKind::ClaudeProject,
            &entry.servers,
            var,
        ));
    }
    Ok(out)
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// An entry as a server: its transport checked, its variables expanded.
///
/// # Errors
/// One line naming the file, the line and what is wrong.
pub(crate) fn resolve(
    name: &str,
    entry: &Entry,
    origin: Origin,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<McpServer, String> {
    let fail = |why: String| {
        format!(
            "{}:{}: MCP server '{name}': {why}; not started",
            origin.file.display(),
            origin.line
        )
    };
    if let Some(bad) = super::valid_server_name(name) {
        return Err(fail(bad));
    }
    let x = |s: &str| expand(s, var).map_err(fail);
    let pairs = |map: &BTreeMap<String, String>| -> Result<Vec<(String, String)>, String> {
        map.iter()
            .map(|(k, v)| Ok((k.clone(), expand(v, var).map_err(fail)?)))
            .collect()
    };
    let kind = match (entry.kind.as_deref(), &entry.command, &entry.url) {
        (Some("stdio"), _, _) | (None, Some(_), _) => "stdio",
        (Some("http" | "streamable-http" | "streamableHttp"), _, _) | (None, None, Some(_)) => {
            "http"
        }
        (Some("sse"), _, _) => "sse",
        (Some(other), _, _) => {
            return Err(fail(format!(
                "type \"{other}\" is not one of stdio, http, sse"
            )));
        }
        (None, None, None) => return Err(fail("it has neither a command nor a url".into())),
    };
    let transport = if kind == "stdio" {
        let Some(command) = &entry.command else {
            return Err(fail("a stdio server needs a command".into()));
        };
        if entry.url.is_some() || !entry.headers.is_empty() {
            return Err(fail("a stdio server has no url or headers".into()));
        }
        Transport::Stdio {
            command: x(command)?,
            args: entry.args.iter().map(|a| x(a)).collect::<Result<_, _>>()?,
            env: pairs(&entry.env)?,
            cwd: entry.cwd.as_deref().map(x).transpose()?.map(PathBuf::from),
        }
    } else {
        let Some(url) = &entry.url else {
            return Err(fail(format!("an {kind} server needs a url")));
        };
        if entry.command.is_some()
            || !entry.args.is_empty()
            || !entry.env.is_empty()
            || entry.cwd.is_some()
        {
            return Err(fail(format!(
                "an {kind} server has no command, args, env or cwd"
            )));
        }
        if entry.sandbox.is_some() || entry.network.is_some() {
            return Err(fail(
                "sandbox and network are for stdio servers (cox starts those)".into(),
            ));
        }
        let url = x(url)?;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(fail(format!("url {url:?} is not an http(s) URL")));
        }
        let headers = pairs(&entry.headers)?;
        if kind == "sse" {
            Transport::Sse { url, headers }
        } else {
            Transport::Http { url, headers }
        }
    };
    if entry.oauth.is_some() && kind == "stdio" {
        return Err(fail("oauth is for an http server".into()));
    }
    let oauth = match &entry.oauth {
        Some(o) => {
            let grant = match o.grant.as_deref() {
                None | Some("authorization_code") => {
                    cox_protocol::mcp::OAuthGrant::AuthorizationCode
                }
                Some("client_credentials") => cox_protocol::mcp::OAuthGrant::ClientCredentials,
                Some("cross_app") => cox_protocol::mcp::OAuthGrant::CrossApp,
                Some(other) => {
                    return Err(fail(format!(
                        "oauth.grant {other:?} is not one cox knows: authorization_code, \
                         client_credentials or cross_app"
                    )));
                }
            };
            let client_secret = o.client_secret.as_deref().map(x).transpose()?;
            let private_key = o.private_key.as_deref().map(x).transpose()?;
            let machine = grant == cox_protocol::mcp::OAuthGrant::ClientCredentials;
            if !machine && private_key.is_some() {
                return Err(fail(
                    "oauth.private_key is for grant = \"client_credentials\"".into(),
                ));
            }
            let signing_algorithm = match (&private_key, o.signing_algorithm.as_deref()) {
                (None, Some(_)) => {
                    return Err(fail(
                        "oauth.signing_algorithm goes with a private_key".into(),
                    ));
                }
                (None, None) => None,
                (Some(_), Some(a))
                    if ["RS256", "RS384", "RS512", "ES256", "ES384"].contains(&a) =>
                {
                    Some(a.to_owned())
                }
                (Some(_), Some(a)) => {
                    return Err(fail(format!(
                        "oauth.signing_algorithm {a:?} is not one cox knows: RS256, RS384, \
                         RS512, ES256 or ES384"
                    )));
                }
                (Some(key), None) if key.contains("BEGIN RSA PRIVATE KEY") => Some("RS256".into()),
                (Some(key), None) if key.contains("BEGIN EC PRIVATE KEY") => Some("ES256".into()),
                (Some(_), None) => {
                    return Err(fail(
                        "oauth.signing_algorithm is needed for this private_key (its PEM does \
                         not say its kind): RS256, RS384, RS512, ES256 or ES384"
                            .into(),
                    ));
                }
            };
            let idp = identity_provider(o, grant).map_err(fail)?;
            let idp = match idp {
                Some(idp) => Some(cox_protocol::mcp::IdentityProvider {
                    issuer: x(&idp.issuer)?,
                    token_endpoint: x(&idp.token_endpoint)?,
                    client_id: x(&idp.client_id)?,
                    client_secret: idp.client_secret.as_deref().map(x).transpose()?,
                    id_token: x(&idp.id_token)?,
                }),
                None => None,
            };
            Some(cox_protocol::mcp::OAuthClient {
                client_id: x(&o.client_id)?,
                client_secret,
                grant,
                private_key,
                signing_algorithm,
                idp,
                callback_port: o.callback_port,
            })
        }
        None => None,
    };
    let sandbox = entry.sandbox.unwrap_or(true);
    if !sandbox && entry.network.is_some() {
        return Err(fail(
            "network is for a sandboxed server; with sandbox = false it has the network anyway"
                .into(),
        ));
    }
    Ok(McpServer {
        name: name.to_owned(),
        origin,
        transport,
        sandbox,
        // A server the person configured reaches the network (a launcher
        // its registry, a server its API) unless its entry says false; its
        // file system stays confined.
        network: entry.network.unwrap_or(sandbox),
        oauth,
    })
}

/// `${VAR}` and `${VAR:-default}` in `text`, from `var`; any other `$` is
/// kept as it is.
///
/// # Errors
/// A variable that is unset with no default, or a `${` never closed.
pub(crate) fn expand(text: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("{text:?} has a ${{ that is never closed"));
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        match (
            var(name).filter(|v| !v.is_empty() || default.is_none()),
            default,
        ) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(format!("${{{name}}} is not set and has no default"));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The identity provider of a cross-app `oauth` entry, as written (its
/// variables not expanded yet); its keys belong to that grant only.
fn identity_provider(
    o: &crate::config::McpOAuth,
    grant: cox_protocol::mcp::OAuthGrant,
) -> Result<Option<cox_protocol::mcp::IdentityProvider>, String> {
    let given = [
        ("idp_issuer", &o.idp_issuer),
        ("idp_token_endpoint", &o.idp_token_endpoint),
        ("idp_client_id", &o.idp_client_id),
        ("idp_client_secret", &o.idp_client_secret),
        ("id_token", &o.id_token),
    ];
    if grant != cox_protocol::mcp::OAuthGrant::CrossApp {
        return match given.iter().find(|(_, v)| v.is_some()) {
            Some((key, _)) => Err(format!("oauth.{key} is for grant = \"cross_app\"")),
            None => Ok(None),
        };
    }
    let need = |(key, value): (&str, &Option<String>)| {
        value
            .clone()
            .ok_or_else(|| format!("oauth.grant cross_app needs oauth.{key}"))
    };
    Ok(Some(cox_protocol::mcp::IdentityProvider {
        issuer: need(given[0])?,
        token_endpoint: need(given[1])?,
        client_id: need(given[2])?,
        client_secret: o.idp_client_secret.clone(),
        id_token: need(given[4])?,
    }))
}

#[cfg(test)]
mod tests;
