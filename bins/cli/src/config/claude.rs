//! Claude Code's settings files, as a person who used Claude Code has them:
//! the managed file an administrator installs, `~/.claude/settings.json`,
//! and a project's `.claude/settings.json` and `.claude/settings.local.json`.
//!
//! What they mean to cox:
//! - `permissions.allow`, `ask` and `deny` join the session's rules, each
//!   rule remembering its file; as in Claude Code, a deny anywhere beats an
//!   ask, an ask beats an allow. A project's allow rules are dropped (named
//!   in a warning), as they are from `.cox/config.toml`: a repository may
//!   narrow what runs, never widen it.
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
    "model",
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
    let mut out = Vec::new();
    out.extend(read(managed, Scope::Managed)?);
    if let Some(home) = home.filter(|_| choice.user) {
        out.extend(read(&home.join(".claude/settings.json"), Scope::User)?);
    }
    // In the home folder itself, `.claude/settings.json` is the person's
    // own, read above: not a project's too.
    if let Some(project) = project.filter(|p| Some(*p) != home) {
        for (name, taken) in [
            ("settings.json", choice.project),
            ("settings.local.json", choice.local),
        ] {
            if taken {
                out.extend(read(&project.join(".claude").join(name), Scope::Project)?);
            }
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
mod tests {
    use super::*;

    fn parsed(text: &str, scope: Scope) -> Result<Settings> {
        parse(
            Path::new("/p/.claude/settings.json"),
            text.to_owned(),
            scope,
        )
    }

    #[test]
    fn rules_and_mode_are_read_with_their_lists() {
        let s = parsed(
            r#"{
  "permissions": {
    "allow": ["Bash(git:*)"],
    "ask": ["Bash(npm:*)"],
    "deny": ["Read(./.env)", "Read(./secrets/**)"],
    "defaultMode": "acceptEdits"
  }
}"#,
            Scope::User,
        )
        .unwrap();
        assert_eq!(s.permissions.allow, ["Bash(git:*)"]);
        assert_eq!(s.permissions.ask, ["Bash(npm:*)"]);
        assert_eq!(s.permissions.deny, ["Read(./.env)", "Read(./secrets/**)"]);
        assert_eq!(s.permissions.mode, Some(PermissionMode::AcceptEdits));
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }

    #[test]
    fn bad_input_names_the_file_and_line() {
        let cases = [
            (
                "{\n  \"permissions\": {\n    \"deny\": [\"Read(./.env)\",]\n  }\n}",
                ":3: not valid JSON",
            ),
            ("[1]", ":1: a settings file must hold one JSON object"),
            (
                "{\n\"permissions\": {\"deny\": \"Read(./.env)\"}}",
                ":2: `permissions.deny` must be a list",
            ),
            (
                "{\n\n\"permissions\": {\"deny\": [1]}}",
                ":3: `permissions.deny` must be a list",
            ),
            ("{\"permissions\": {\n\"defaultMode\": \"yolo\"}}", ":2: "),
            (
                "{\"permissions\": []}",
                ":1: `permissions` must be an object",
            ),
            (
                "{\"permissions\": {\"disableBypassPermissionsMode\": true}}",
                "can only be \"disable\"",
            ),
        ];
        for (text, said) in cases {
            let err = parsed(text, Scope::Project).unwrap_err().to_string();
            assert!(err.starts_with("/p/.claude/settings.json:"), "{err}");
            assert!(err.contains(said), "{text}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }

    #[test]
    fn keys_cox_does_not_use_or_know_are_each_named_once_with_their_line() {
        let s = parsed(
            "{\n  \"$schema\": \"x\",\n  \"cleanupPeriodDays\": 7,\n  \"permisions\": {},\n  \
             \"permissions\": {\"disableAutoMode\": \"disable\", \"alow\": []}\n}",
            Scope::User,
        )
        .unwrap();
        let all = s.warnings.join("\n");
        assert_eq!(s.warnings.len(), 4, "{all}");
        assert!(all.contains(":3: `cleanupPeriodDays` is a Claude Code setting cox does not use"));
        assert!(all.contains(":4: `permisions` is not a Claude Code setting cox knows"));
        assert!(all.contains("`permissions.disableAutoMode` is a Claude Code setting"));
        assert!(all.contains("`permissions.alow` is not a Claude Code setting cox knows"));
    }

    #[test]
    fn env_is_read_from_the_persons_files_and_named_not_set_from_a_projects() {
        let text = r#"{"env": {"A": "1", "N": 2, "B": true}}"#;
        let mine = parsed(text, Scope::User).unwrap();
        assert_eq!(
            mine.env,
            [
                ("A".into(), "1".into()),
                ("N".into(), "2".into()),
                ("B".into(), "true".into())
            ]
        );
        let theirs = parsed(text, Scope::Project).unwrap();
        assert!(theirs.env.is_empty());
        assert!(
            theirs.warnings[0].contains("ignoring `env` (A, N, B)"),
            "{:?}",
            theirs.warnings
        );
        for (bad, said) in [
            (r#"{"env": ["A=1"]}"#, "`env` must be an object"),
            ("{\n\"env\": {\n\"A\": [1]}}", ":3: `env.A` must be text"),
            (r#"{"env": {"A=B": "1"}}"#, "`A=B` is not a variable name"),
        ] {
            let err = parsed(bad, Scope::User).unwrap_err().to_string();
            assert!(err.contains(said), "{bad}: {err}");
        }
    }

    #[test]
    fn a_status_line_command_is_read_and_a_projects_is_not() {
        let text = r#"{"statusLine": {"type": "command", "command": "~/line.sh", "padding": 0}}"#;
        let mine = parsed(text, Scope::User).unwrap();
        assert_eq!(mine.status_line.as_deref(), Some("~/line.sh"));
        assert!(
            mine.warnings[0].contains("`statusLine.padding`"),
            "{:?}",
            mine.warnings
        );
        let theirs = parsed(text, Scope::Project).unwrap();
        assert_eq!(theirs.status_line, None);
        assert!(
            theirs
                .warnings
                .iter()
                .any(|w| w.contains("ignoring the statusLine"))
        );
        for bad in [
            r#"{"statusLine": "x"}"#,
            r#"{"statusLine": {"type": "static", "command": "x"}}"#,
            r#"{"statusLine": {"type": "command"}}"#,
        ] {
            assert!(parsed(bad, Scope::User).is_err(), "{bad}");
        }
    }

    #[test]
    fn mcp_answers_are_read_from_the_persons_files_only() {
        let text = r#"{"enableAllProjectMcpServers": false, "enabledMcpjsonServers": ["a"],
            "disabledMcpjsonServers": ["b"]}"#;
        let mine = parsed(text, Scope::User).unwrap();
        assert_eq!(
            mine.mcp,
            McpChoice {
                all: false,
                enabled: vec!["a".into()],
                disabled: vec!["b".into()]
            }
        );
        let theirs = parsed(text, Scope::Project).unwrap();
        assert_eq!(theirs.mcp, McpChoice::default());
        assert_eq!(theirs.warnings.len(), 3, "{:?}", theirs.warnings);
        for bad in [
            r#"{"enableAllProjectMcpServers": "yes"}"#,
            r#"{"enabledMcpjsonServers": "a"}"#,
        ] {
            assert!(parsed(bad, Scope::User).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_empty_file_is_no_settings_and_a_missing_one_is_none() {
        let s = parsed("  \n", Scope::User).unwrap();
        assert!(s.permissions.deny.is_empty());
        assert!(
            read(Path::new("/nonexistent/settings.json"), Scope::User)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn setting_sources_choose_the_files_and_settings_add_one() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let deny = |rule: &str| format!(r#"{{"permissions": {{"deny": ["{rule}"]}}}}"#);
        std::fs::create_dir(home.path().join(".claude")).unwrap();
        std::fs::write(home.path().join(".claude/settings.json"), deny("Bash(u)")).unwrap();
        std::fs::create_dir(project.path().join(".claude")).unwrap();
        std::fs::write(
            project.path().join(".claude/settings.json"),
            deny("Bash(p)"),
        )
        .unwrap();
        std::fs::write(
            project.path().join(".claude/settings.local.json"),
            deny("Bash(l)"),
        )
        .unwrap();
        let denied = |choice: &Choice| -> Vec<String> {
            read_all(
                Path::new("/nonexistent/managed.json"),
                Some(home.path()),
                Some(project.path()),
                choice,
            )
            .unwrap()
            .into_iter()
            .flat_map(|s| s.permissions.deny)
            .collect()
        };
        let table: [(Option<&str>, Option<&str>, &[&str]); 6] = [
            (None, None, &["Bash(u)", "Bash(p)", "Bash(l)"]),
            (
                Some("user,project,local"),
                None,
                &["Bash(u)", "Bash(p)", "Bash(l)"],
            ),
            (Some("project"), None, &["Bash(p)"]),
            (Some(" local , user "), None, &["Bash(u)", "Bash(l)"]),
            (Some(""), None, &[]),
            (
                Some(""),
                Some(r#"{"permissions": {"deny": ["Bash(f)"]}}"#),
                &["Bash(f)"],
            ),
        ];
        for (sources, settings, expected) in table {
            let choice = Choice::from_flags(settings, sources).unwrap();
            assert_eq!(denied(&choice), expected, "{sources:?} {settings:?}");
        }
        let err = Choice::from_flags(None, Some("user,policy"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "--setting-sources: `policy` is not a source (user, project, local)"
        );
        let err = Choice::from_flags(Some("/nonexistent/s.json"), None)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--settings /nonexistent/s.json: no such file"),
            "{err}"
        );
        let bad = Choice::from_flags(Some("{\n  \"permissions\": 3\n}"), None).unwrap();
        let err = read_all(Path::new("/nonexistent/m.json"), None, None, &bad)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--settings:2: `permissions` must be an object"),
            "{err}"
        );
    }

    #[test]
    fn the_home_folders_own_settings_are_not_read_twice_as_a_projects() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".claude")).unwrap();
        std::fs::write(
            home.path().join(".claude/settings.json"),
            r#"{"permissions": {"deny": ["Bash(rm:*)"]}}"#,
        )
        .unwrap();
        let all = read_all(
            Path::new("/nonexistent/managed.json"),
            Some(home.path()),
            Some(home.path()),
            &Choice::default(),
        )
        .unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].scope, Scope::User);
    }
}
