//! Claude Code's settings files, as a person who used Claude Code has them:
//! the managed file an administrator installs, `~/.claude/settings.json`,
//! and a project's `.claude/settings.json` and `.claude/settings.local.json`.
//!
//! What they mean to cox:
//! - `permissions.allow`, `ask` and `deny` join the session's rules, each
//!   rule remembering its file; as in Claude Code, a deny anywhere beats an
//!   ask, an ask beats an allow. A project's allow rules wait for the
//!   person's trust, as those of `.cox/config.toml` do: a repository may
//!   narrow what runs, and widen it only with the person's word.
//! - `permissions.defaultMode` sets the mode below the flags (the managed
//!   file's, above them); a project's may only narrow it (default, plan).
//! - `permissions.disableBypassPermissionsMode: "disable"` refuses bypass
//!   mode, from whichever file says it;
//! - `permissions.additionalDirectories` (not a project's) adds workspace
//!   roots, as `--add-dir` does.
//! - `env` (the managed file's, the person's own and `--settings`') is
//!   set for every process cox starts: commands, hooks, MCP servers; a
//!   project's is dropped with a warning;
//! - `enableAllProjectMcpServers`, `enabledMcpjsonServers` and
//!   `disabledMcpjsonServers` (not a project's own) approve the project's
//!   `.mcp.json` servers, or keep them from starting;
//! - `statusLine` (a command, not a project's) is the terminal UI's status
//!   line where cox's `[tui] status_line` sets none;
//! - `model` (not a project's) is the main model where no flag, variable
//!   or `[tiers]` table of cox's own config names one; Claude Code's
//!   aliases (`sonnet`, `opus`, `haiku`) name the tier's model;
//! - `hooks` and `disableAllHooks` are read by the hooks loader.
//! - every other key Claude Code documents is named once in a warning as
//!   not used by cox; a key Claude Code does not know is a warning naming
//!   its file and line.
//!
//! Invariants: a file that is not JSON, a permission list that is not a
//! list of strings, or a managed file that cannot be read is an error
//! naming the file and line, and the session does not start (a deny rule
//! that cannot be read must not be dropped). A missing file is no file.

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use cox_protocol::config::PermissionsConfig;
use cox_protocol::types::PermissionMode;
use serde_json::{Map, Value};

/// Where Claude Code's managed settings live on Linux. `COX_MANAGED_SETTINGS`
/// names another file (an unusual install, or a test).
pub const MANAGED_PATH: &str = "/etc/claude-code/managed-settings.json";

/// Whose file it is, which decides what it may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// An administrator's: highest precedence, its allow rules hold.
    Managed,
    /// The person's own `~/.claude/settings.json`.
    User,
    /// `--settings FILE|JSON`: this run's, as a flag is; its mode comes
    /// after the files' and before `--permission-mode`.
    Flag,
    /// A project's `.claude/settings.json` or `.claude/settings.local.json`:
    /// may deny and ask, not allow, and only narrow the mode.
    Project,
}

/// One Claude Code settings file, read.
#[derive(Debug)]
pub struct Settings {
    pub path: PathBuf,
    pub text: String,
    pub scope: Scope,
    pub permissions: PermissionsConfig,
    /// `permissions.disableBypassPermissionsMode` is `"disable"`.
    pub no_bypass: bool,
    /// `env`: variables for every process cox starts (a project's are
    /// not set: see the module doc).
    pub env: Vec<(String, String)>,
    /// `statusLine.command`: the terminal UI's status line, when cox's
    /// own config sets none (a project's is not used).
    pub status_line: Option<String>,
    /// Which of the project's `.mcp.json` servers the person approves
    /// or turns off (not read from a project's own file).
    pub mcp: McpChoice,
    /// `permissions.additionalDirectories`, as written, each with its
    /// line: more workspace roots (not read from a project's own file).
    pub additional_dirs: Vec<(String, usize)>,
    /// `model`, with its line: the main model where no flag, variable or
    /// `[tiers]` of cox's own config names one (not read from a
    /// project's own file).
    pub model: Option<(String, usize)>,
    pub warnings: Vec<String>,
}

/// Keys Claude Code documents that cox does not act on (yet): named in a
/// warning, never dropped without a word.
const NOT_USED: &[&str] = &[
    "apiKeyHelper",
    "attribution",
    "autoCompactEnabled",
    "autoCompactWindow",
    "autoUpdates",
    "autoUpdatesChannel",
    "awsAuthRefresh",
    "awsCredentialExport",
    "alwaysThinkingEnabled",
    "allowManagedHooksOnly",
    "allowManagedPermissionRulesOnly",
    "allowedMcpServers",
    "deniedMcpServers",
    "cleanupPeriodDays",
    "companyAnnouncements",
    "enabledPlugins",
    "extraKnownMarketplaces",
    "strictKnownMarketplaces",
    "effortLevel",
    "fileSuggestion",
    "forceLoginMethod",
    "forceLoginOrgUUID",
    "includeCoAuthoredBy",
    "includeGitInstructions",
    "language",
    "otelHeadersHelper",
    "outputStyle",
    "plansDirectory",
    "respectGitignore",
    "sandbox",
    "showTurnDuration",
    "spinnerTipsEnabled",
    "spinnerVerbs",
    "subagentStatusLine",
    "terminalProgressBarEnabled",
    "theme",
];

/// Keys cox acts on (here or in the hooks loader).
const USED: &[&str] = &[
    "$schema",
    "permissions",
    "hooks",
    "disableAllHooks",
    "env",
    "statusLine",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
    "model",
];

/// Keys of `permissions` cox does not act on (yet).
const PERMISSIONS_NOT_USED: &[&str] = &["disableAutoMode"];

/// Which of these files a run reads (`--setting-sources`), and the
/// settings of `--settings`.
#[derive(Clone, Debug)]
pub struct Choice {
    pub user: bool,
    pub project: bool,
    pub local: bool,
    /// `--settings`: where they came from (the file, or the flag) and
    /// their text.
    pub extra: Option<(PathBuf, String)>,
}

impl Default for Choice {
    /// Every file, nothing more.
    fn default() -> Choice {
        Choice {
            user: true,
            project: true,
            local: true,
            extra: None,
        }
    }
}

impl Choice {
    /// From `--settings FILE|JSON` and `--setting-sources LIST` (a comma
    /// list of `user`, `project` and `local`; empty reads none of them).
    /// The managed file is always read.
    ///
    /// # Errors
    /// A source cox does not know, or a `--settings` file that cannot be
    /// read: one line naming it.
    pub fn from_flags(settings: Option<&str>, sources: Option<&str>) -> Result<Choice> {
        let mut choice = Choice::default();
        if let Some(list) = sources {
            choice.user = false;
            choice.project = false;
            choice.local = false;
            for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                match name {
                    "user" => choice.user = true,
                    "project" => choice.project = true,
                    "local" => choice.local = true,
                    other => {
                        return Err(anyhow!(
                            "--setting-sources: `{other}` is not a source (user, project, local)"
                        ));
                    }
                }
            }
        }
        if let Some(given) = settings {
            choice.extra = Some(if given.trim_start().starts_with('{') {
                (PathBuf::from("--settings"), given.to_owned())
            } else {
                let path = PathBuf::from(given);
                match cox_hooks::config::read_small(&path, cox_hooks::config::SETTINGS_MAX) {
                    Ok(Some(text)) => (path, text),
                    Ok(None) => {
                        return Err(anyhow!(
                            "--settings {given}: no such file (or give the JSON itself)"
                        ));
                    }
                    Err(why) => return Err(anyhow!("--settings {given}: {why}")),
                }
            });
        }
        Ok(choice)
    }
}

/// The managed file, the person's own, the project's and `--settings`, in
/// that order; those that exist and `choice` takes.
///
/// # Errors
/// A file that exists but does not read or parse (see the module's
/// invariants).
pub fn read_all(
    managed: &Path,
    home: Option<&Path>,
    project: Option<&Path>,
    choice: &Choice,
) -> Result<Vec<Settings>> {
    read_all_with(&|path: &Path| text(path), managed, home, project, choice)
}

/// The paths [`read_all`] reads, with the scope of each (`--settings`
/// comes with its text).
#[must_use]
pub fn paths(
    managed: &Path,
    home: Option<&Path>,
    project: Option<&Path>,
    choice: &Choice,
) -> Vec<(PathBuf, Scope)> {
    let mut out = vec![(managed.to_path_buf(), Scope::Managed)];
    if let Some(home) = home.filter(|_| choice.user) {
        out.push((home.join(".claude/settings.json"), Scope::User));
    }
    // In the home folder itself, `.claude/settings.json` is the person's
    // own, read above: not a project's too.
    if let Some(project) = project.filter(|p| Some(*p) != home) {
        for (name, taken) in [
            ("settings.json", choice.project),
            ("settings.local.json", choice.local),
        ] {
            if taken {
                out.push((project.join(".claude").join(name), Scope::Project));
            }
        }
    }
    out
}

/// [`read_all`] with each file's text from `texts` (`Ok(None)`: no such
/// file; `Err`: why it cannot be read).
///
/// # Errors
/// As [`read_all`].
pub fn read_all_with(
    texts: &dyn Fn(&Path) -> Result<Option<String>, String>,
    managed: &Path,
    home: Option<&Path>,
    project: Option<&Path>,
    choice: &Choice,
) -> Result<Vec<Settings>> {
    let mut out = Vec::new();
    for (path, scope) in paths(managed, home, project, choice) {
        match texts(&path) {
            Ok(Some(text)) => out.push(parse(&path, text, scope)?),
            Ok(None) => {}
            Err(why) => return Err(anyhow!("{}: {why}", path.display())),
        }
    }
    if let Some((path, text)) = &choice.extra {
        out.push(parse(path, text.clone(), Scope::Flag)?);
    }
    Ok(out)
}

/// One file; `None` when it does not exist.
///
/// # Errors
/// It exists but cannot be read (or is not a regular file, or is over a
/// MiB), is not JSON, or holds a permission list
/// that is not a list of strings or a mode cox does not know.
pub fn read(path: &Path, scope: Scope) -> Result<Option<Settings>> {
    // Only a regular file of at most a MiB: a link to `/dev/zero` or a
    // fifo stops the start at once rather than holding it.
    match text(path) {
        Ok(Some(text)) => parse(path, text, scope).map(Some),
        Ok(None) => Ok(None),
        Err(why) => Err(anyhow!("{}: {why}", path.display())),
    }
}

/// The text of a settings file (a regular file of at most a MiB), read
/// once while a session is set up ([`super::once`]): what the permissions
/// and the hooks are made from is the same text.
///
/// # Errors
/// It is not a regular file, is too large, or cannot be read: why.
pub fn text(path: &Path) -> Result<Option<String>, String> {
    super::once::read(path, |path| {
        cox_hooks::config::read_small(path, cox_hooks::config::SETTINGS_MAX)
    })
}

/// Reads `text` (the file at `path`).
///
/// # Errors
/// As [`read`].
pub fn parse(path: &Path, text: String, scope: Scope) -> Result<Settings> {
    let at = |needle: &str| format!("{}:{}", path.display(), line_of(&text, needle));
    let value: Value = if text.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        serde_json::from_str(&text).map_err(|err| {
            anyhow!(
                "{}:{}: not valid JSON: {}",
                path.display(),
                err.line().max(1),
                strip_position(&err.to_string())
            )
        })?
    };
    let Value::Object(object) = value else {
        return Err(anyhow!(
            "{}:1: a settings file must hold one JSON object",
            path.display()
        ));
    };
    let mut settings = Settings {
        path: path.to_owned(),
        text: String::new(),
        scope,
        permissions: PermissionsConfig::default(),
        no_bypass: false,
        env: Vec::new(),
        status_line: None,
        mcp: McpChoice::default(),
        additional_dirs: Vec::new(),
        model: None,
        warnings: Vec::new(),
    };
    for (key, value) in &object {
        let key = key.as_str();
        if NOT_USED.contains(&key) {
            settings.warnings.push(format!(
                "{}: `{key}` is a Claude Code setting cox does not use; it has no effect here",
                at(&format!("\"{key}\""))
            ));
        } else if !USED.contains(&key) {
            settings.warnings.push(format!(
                "{}: `{key}` is not a Claude Code setting cox knows; ignored",
                at(&format!("\"{key}\""))
            ));
        } else if key == "permissions" {
            read_permissions(value, &mut settings, &at)?;
        } else if key == "env" {
            read_env(value, &mut settings, &at)?;
        } else if key == "statusLine" {
            read_status_line(value, &mut settings, &at)?;
        } else if MCP_KEYS.contains(&key) {
            read_mcp_choice(key, value, &mut settings, &at)?;
        } else if key == "model" {
            read_model(value, &mut settings, &text)?;
        }
    }
    settings.text = text;
    Ok(settings)
}

fn read_permissions(
    value: &Value,
    settings: &mut Settings,
    at: &dyn Fn(&str) -> String,
) -> Result<()> {
    let Value::Object(permissions) = value else {
        return Err(anyhow!(
            "{}: `permissions` must be an object",
            at("\"permissions\"")
        ));
    };
    for (key, value) in permissions {
        let where_ = at(&format!("\"{key}\""));
        match key.as_str() {
            "allow" | "ask" | "deny" => {
                let list = strings(value).ok_or_else(|| {
                    anyhow!("{where_}: `permissions.{key}` must be a list of rule strings")
                })?;
                let slot = match key.as_str() {
                    "allow" => &mut settings.permissions.allow,
                    "ask" => &mut settings.permissions.ask,
                    _ => &mut settings.permissions.deny,
                };
                slot.extend(list);
            }
            "defaultMode" => {
                let name = value.as_str().ok_or_else(|| {
                    anyhow!("{where_}: `permissions.defaultMode` must be a mode name")
                })?;
                let mode: PermissionMode = name
                    .parse()
                    .map_err(|e: cox_protocol::config::UnknownMode| anyhow!("{where_}: {e}"))?;
                settings.permissions.mode = Some(mode);
            }
            "additionalDirectories" => {
                let dirs = strings(value).ok_or_else(|| {
                    anyhow!(
                        "{where_}: `permissions.additionalDirectories` must be a list of folders"
                    )
                })?;
                if settings.scope == Scope::Project {
                    settings.warnings.push(format!(
                        "{where_}: ignoring `permissions.additionalDirectories` of a project's \
                         settings: a repository cannot widen what a session may reach; give \
                         --add-dir, or set it in ~/.claude/settings.json"
                    ));
                } else {
                    let line = |dir: &str| at(&format!("\"{dir}\""));
                    settings.additional_dirs = dirs
                        .into_iter()
                        .map(|dir| {
                            let at = line(&dir);
                            let line = at.rsplit(':').next().and_then(|l| l.parse().ok());
                            (dir, line.unwrap_or(1))
                        })
                        .collect();
                }
            }
            "disableBypassPermissionsMode" => match value.as_str() {
                Some("disable") => settings.no_bypass = true,
                _ => {
                    return Err(anyhow!(
                        "{where_}: `permissions.disableBypassPermissionsMode` can only be \"disable\""
                    ));
                }
            },
            other if PERMISSIONS_NOT_USED.contains(&other) => settings.warnings.push(format!(
                "{where_}: `permissions.{other}` is a Claude Code setting cox does not use; \
                 it has no effect here"
            )),
            other => settings.warnings.push(format!(
                "{where_}: `permissions.{other}` is not a Claude Code setting cox knows; ignored"
            )),
        }
    }
    Ok(())
}

/// `env`: names to string values. A project's are dropped with one
/// warning naming them: set with every command, hook and server, a
/// repository's variables (`NODE_OPTIONS`, `GIT_SSH_COMMAND`, `LD_PRELOAD`)
/// would run its code on the person's machine.
fn read_env(value: &Value, settings: &mut Settings, at: &dyn Fn(&str) -> String) -> Result<()> {
    let Value::Object(vars) = value else {
        return Err(anyhow!(
            "{}: `env` must be an object of names to text",
            at("\"env\"")
        ));
    };
    let mut env = Vec::new();
    for (name, value) in vars {
        let valid_name = !name.is_empty()
            && !name.contains('=')
            && !name.contains('\0')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        let text = match value {
            Value::String(text) if !text.contains('\0') => text.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => {
                return Err(anyhow!(
                    "{}: `env.{name}` must be text",
                    at(&format!("\"{name}\""))
                ));
            }
        };
        if !valid_name {
            return Err(anyhow!(
                "{}: `{name}` is not a variable name",
                at(&format!("\"{name}\""))
            ));
        }
        env.push((name.clone(), text));
    }
    if settings.scope == Scope::Project {
        if !env.is_empty() {
            let names: Vec<&str> = env.iter().map(|(n, _)| n.as_str()).collect();
            settings.warnings.push(format!(
                "{}: ignoring `env` ({}) of a project's settings: a repository's variables \
                 would reach every command, hook and server; set them in ~/.claude/settings.json",
                at("\"env\""),
                names.join(", ")
            ));
        }
    } else {
        settings.env = env;
    }
    Ok(())
}

/// `statusLine`: `{"type": "command", "command": "…"}` (`padding` is
/// named as not used). A project's is not run: its command would run
/// whatever a repository says.
fn read_status_line(
    value: &Value,
    settings: &mut Settings,
    at: &dyn Fn(&str) -> String,
) -> Result<()> {
    let where_ = at("\"statusLine\"");
    let Value::Object(line) = value else {
        return Err(anyhow!("{where_}: `statusLine` must be an object"));
    };
    match line.get("type").and_then(Value::as_str) {
        Some("command") | None => {}
        Some(other) => {
            return Err(anyhow!(
                "{where_}: statusLine type `{other}` is not one cox runs (command)"
            ));
        }
    }
    let command = line
        .get("command")
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| anyhow!("{where_}: `statusLine.command` must be a command"))?;
    for key in line
        .keys()
        .filter(|k| !matches!(k.as_str(), "type" | "command"))
    {
        settings.warnings.push(format!(
            "{where_}: `statusLine.{key}` is a Claude Code setting cox does not use; it has no \
             effect here"
        ));
    }
    if settings.scope == Scope::Project {
        settings.warnings.push(format!(
            "{where_}: ignoring the statusLine of a project's settings: its command would run \
             whatever a repository says; set it in ~/.claude/settings.json"
        ));
    } else {
        settings.status_line = Some(command.to_owned());
    }
    Ok(())
}

/// `model`: a model id or one of Claude Code's aliases. A project's own
/// file cannot choose what the person pays for: named in a warning.
fn read_model(value: &Value, settings: &mut Settings, text: &str) -> Result<()> {
    let line = line_of(text, "\"model\"");
    let where_ = format!("{}:{line}", settings.path.display());
    let model = value
        .as_str()
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .ok_or_else(|| anyhow!("{where_}: `model` must be a model's name"))?;
    if settings.scope == Scope::Project {
        settings.warnings.push(format!(
            "{where_}: ignoring the model of a project's settings: only your own settings choose \
             the model you pay for (set it in ~/.claude/settings.json or pass --model)"
        ));
    } else {
        settings.model = Some((model.to_owned(), line));
    }
    Ok(())
}

/// The MCP answers of the person's own files (the managed one, theirs,
/// `--settings`) for a session in `project`; none where a file does not
/// read (the permissions stop the session on it first).
#[must_use]
pub fn mcp_choice(home: Option<&Path>, project: &Path, choice: &Choice) -> McpChoice {
    let managed = crate::env::managed_settings().unwrap_or_else(|| PathBuf::from(MANAGED_PATH));
    let mut out = McpChoice::default();
    for file in read_all(&managed, home, Some(project), choice).unwrap_or_default() {
        out.merge(&file.mcp);
    }
    out
}

/// More workspace roots from the person's own files (the managed one,
/// theirs, `--settings`): each folder resolved (`~/` is the home, a
/// relative one the session's folder's).
///
/// # Errors
/// A folder that does not exist: its file and line.
pub fn additional_dirs(home: Option<&Path>, cwd: &Path, choice: &Choice) -> Result<Vec<PathBuf>> {
    let managed = crate::env::managed_settings().unwrap_or_else(|| PathBuf::from(MANAGED_PATH));
    let mut out = Vec::new();
    for file in read_all(&managed, home, Some(cwd), choice)? {
        for (dir, line) in &file.additional_dirs {
            let written = match (dir.strip_prefix("~/"), home) {
                (Some(rest), Some(home)) => home.join(rest),
                _ => cwd.join(dir),
            };
            let root = std::fs::canonicalize(&written)
                .ok()
                .filter(|p| p.is_dir())
                .ok_or_else(|| {
                    anyhow!(
                        "{}:{line}: permissions.additionalDirectories: {dir} is not a folder",
                        file.path.display()
                    )
                })?;
            if !out.contains(&root) {
                out.push(root);
            }
        }
    }
    Ok(out)
}

/// The keys of [`McpChoice`].
const MCP_KEYS: [&str; 3] = [
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
];

/// The person's answer about a project's `.mcp.json` servers: Claude
/// Code's `enableAllProjectMcpServers`, `enabledMcpjsonServers` and
/// `disabledMcpjsonServers`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpChoice {
    pub all: bool,
    pub enabled: Vec<String>,
    pub disabled: Vec<String>,
}

impl McpChoice {
    /// `later` on top of this one: lists add up, `all` holds if either.
    pub fn merge(&mut self, later: &McpChoice) {
        self.all |= later.all;
        self.enabled.extend(later.enabled.iter().cloned());
        self.disabled.extend(later.disabled.iter().cloned());
    }
}

/// One of the three MCP keys. A project's own settings cannot approve its
/// servers (that would run its code the moment a session opens): named in
/// a warning and not used.
fn read_mcp_choice(
    key: &str,
    value: &Value,
    settings: &mut Settings,
    at: &dyn Fn(&str) -> String,
) -> Result<()> {
    let where_ = at(&format!("\"{key}\""));
    if settings.scope == Scope::Project {
        settings.warnings.push(format!(
            "{where_}: ignoring `{key}` of a project's settings: a repository cannot approve its \
             own MCP servers; approve them with `cox mcp trust` or in ~/.claude/settings.json"
        ));
        return Ok(());
    }
    match key {
        "enableAllProjectMcpServers" => {
            settings.mcp.all = value
                .as_bool()
                .ok_or_else(|| anyhow!("{where_}: `{key}` must be true or false"))?;
        }
        "enabledMcpjsonServers" | "disabledMcpjsonServers" => {
            let names = strings(value)
                .ok_or_else(|| anyhow!("{where_}: `{key}` must be a list of server names"))?;
            if key == "enabledMcpjsonServers" {
                settings.mcp.enabled = names;
            } else {
                settings.mcp.disabled = names;
            }
        }
        _ => {}
    }
    Ok(())
}

fn strings(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// serde_json's message without its trailing "at line L column C".
fn strip_position(message: &str) -> &str {
    message
        .rfind(" at line ")
        .map_or(message, |i| &message[..i])
}

/// The line (from 1) where `needle` first appears, or 1.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map_or(1, |i| i + 1)
}

#[cfg(test)]
mod tests;
