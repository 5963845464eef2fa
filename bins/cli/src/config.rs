//! cox's config files, and the loaders each part of a session reads them
//! with: models and tiers, the terminal UI, hooks and MCP tables, the log
//! filter, and the permissions ([`permissions`], with Claude Code's
//! settings files from [`claude`]).
//!
//! Sources of the permissions, weakest first: built-in rules,
//! `$COX_HOME/config.toml` (the user's own), the project's
//! `.cox/config.toml` (the nearest one between the working folder and its
//! repository root), Claude Code's settings files, then flags. Rules from
//! every source add up; deny wins whatever its source.
//!
//! A project config is written by whoever wrote the repository, so it is
//! trusted less: its `allow` rules wait until the person trusts each as
//! written ([`trust`]; one warning names those waiting) and its `mode` may
//! only narrow (`default`, `plan`), never widen. Its `deny` and `ask` rules
//! apply from the first session.
//!
//! Both files go through one reader, and every name in them must take
//! effect: an unknown table or key (`[permision]`, `[core] modle`, a
//! top-level `model =`) is an error naming the file, the line and the
//! nearest known name, and a table a later release will read
//! (`[tools]`) is refused as not supported
//! by this version, never accepted and ignored (see [`names`]). Known
//! tables a project config may not set are dropped with a warning.
//!
//! Every error names the file and line: a file that is not TOML, an unknown
//! name, a mode, a log filter or an amount that is not one, a rule that does
//! not parse.

pub mod claude;
pub mod log_filter;
mod names;
pub mod once;
mod permissions;
pub mod trust;

pub use permissions::{
    DirChecks, Files, check_dirs, load_permissions, load_permissions_at, managed_settings_path,
    permissions_of,
};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use cox_permission::Engine;
use cox_protocol::catalog::ModelInfo;
use cox_protocol::config::{BudgetConfig, ContextConfig, PermissionsConfig};
use cox_protocol::provider::{Effort, Tier};
use cox_protocol::types::{PermissionMode, SandboxMode};
use serde::Deserialize;

/// Rules and a mode given on the command line.
#[derive(Clone, Debug, Default)]
pub struct PermissionFlags {
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub deny: Vec<String>,
    pub mode: Option<PermissionMode>,
    /// `--setting-sources` and `--settings`.
    pub claude: claude::Choice,
}

/// The effective permissions of a session.
#[derive(Debug)]
pub struct Permissions {
    pub engine: Engine,
    pub mode: PermissionMode,
    /// Where the mode came from, for `check` and the logs.
    pub mode_source: String,
    /// Things a person should know (dropped project rules, an ignored mode).
    pub warnings: Vec<String>,
    /// The project config's `[budget]`, which may only lower the user's.
    pub project_budget: BudgetConfig,
    /// `[sandbox]` of both files (a project's may only narrow it).
    pub sandbox: SandboxSettings,
    /// Which settings file turned `bypassPermissions` off, if one did.
    pub bypass_refused: Option<String>,
    /// A project's allow rules the person has not trusted: not used.
    pub pending_allow: Vec<trust::PendingAllow>,
    /// Folders the files name that must exist (checked where the disk is
    /// read, see [`permissions::check_dirs`]).
    pub dirs: permissions::DirChecks,
}

/// One config file as serde reads it, once [`names::check`] has passed
/// every name in it.
#[derive(Deserialize, Default)]
struct ConfigFile {
    #[serde(default)]
    permissions: PermissionsConfig,
    #[serde(default)]
    core: CoreConfig,
    #[serde(default)]
    tiers: BTreeMap<TierName, TierConfig>,
    #[serde(default)]
    providers: BTreeMap<String, ProviderConfig>,
    #[serde(default)]
    models: BTreeMap<String, ModelInfo>,
    #[serde(default)]
    budget: BudgetConfig,
    #[serde(default)]
    context: ContextConfig,
    #[serde(default)]
    sandbox: SandboxConfig,
    /// `[mcp_servers.<name>]`: read by [`load_mcp_servers`].
    #[serde(default)]
    mcp_servers: BTreeMap<String, McpEntry>,
    #[serde(default)]
    tui: TuiConfig,
    #[serde(default)]
    telemetry: TelemetryConfig,
    #[serde(default)]
    agents: AgentsConfig,
    #[serde(default)]
    tools: ToolsConfig,
    /// `[hooks]`: read by [`load_hooks_table`] (the hooks' reader checks
    /// it, warning per entry).
    #[serde(default)]
    hooks: Option<serde_json::Value>,
}

/// One server as a file writes it: Claude Code's fields, and cox's
/// `sandbox`, `network` and `cwd`.
#[derive(Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct McpEntry {
    /// `stdio`, `http` (also `streamable-http`) or `sse`; when left out,
    /// `stdio` with a `command`, `http` with a `url`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub cwd: Option<String>,
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub sandbox: Option<bool>,
    pub network: Option<bool>,
    /// An HTTP server's pre-registered OAuth client.
    pub oauth: Option<McpOAuth>,
}

/// `oauth` of an HTTP server's entry: a client the authorization server
/// registered out of band (Claude Code's `clientId`, `clientSecret` are
/// read too). A secret belongs in a variable: `"${VAR}"`.
#[derive(Deserialize, Debug, Clone, Default, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct McpOAuth {
    #[serde(alias = "clientId")]
    pub client_id: String,
    #[serde(alias = "clientSecret")]
    pub client_secret: Option<String>,
    /// `authorization_code` (a person logs in; the default) or
    /// `client_credentials` (the id and secret get the token, no person).
    pub grant: Option<String>,
    /// For `client_credentials`: a PEM private key that signs the
    /// client's assertion in place of a secret (`"${VAR}"`).
    pub private_key: Option<String>,
    /// The private key's algorithm (RS256, RS384, RS512, ES256, ES384);
    /// read from a PKCS#1 or SEC1 key when left out.
    pub signing_algorithm: Option<String>,
    /// For `cross_app`: the identity provider's issuer, token endpoint
    /// and cox's client there (id, and secret if it has one), and the
    /// person's ID token from it (`"${VAR}"`).
    pub idp_issuer: Option<String>,
    pub idp_token_endpoint: Option<String>,
    pub idp_client_id: Option<String>,
    pub idp_client_secret: Option<String>,
    pub id_token: Option<String>,
    /// The loopback port a login's redirect comes back to (Claude Code's
    /// `callbackPort`), for a client registered with one redirect URI.
    #[serde(alias = "callbackPort")]
    pub callback_port: Option<u16>,
}

/// `[tools]`: the tools that reach beyond the machine, each on or off.
#[derive(Deserialize, Default, Debug, Clone, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ToolsConfig {
    /// Offer `web_fetch` (on when unset; its calls still ask unless a
    /// `WebFetch(domain:…)` rule allows them).
    pub web_fetch: Option<bool>,
    /// Let the model search the web with its provider's server-side
    /// search, where the model has one (off when unset; a `WebSearch` rule
    /// must allow it too).
    pub web_search: Option<bool>,
}

/// `[agents]`: how far and how wide subagents go (see
/// [`crate::ext::agent_tool`]).
#[derive(Deserialize, Default, Debug, Clone, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct AgentsConfig {
    /// How deep subagents may nest: a session at this depth gets no
    /// `agent` tool (2 when unset; 0 turns subagents off).
    pub max_depth: Option<u32>,
    /// How many agent calls of one message run at once (4 when unset).
    pub parallel: Option<u32>,
}

/// `[telemetry]`: the log's retention and OTLP export (see
/// [`crate::telemetry::export`]).
#[derive(Deserialize, Default, Debug, Clone, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TelemetryConfig {
    /// Export traces and logs over OTLP/HTTP (`COX_TELEMETRY_OTEL` wins).
    pub otel: Option<bool>,
    /// The collector's base URL; `/v1/traces` and `/v1/logs` are appended.
    pub endpoint: Option<String>,
    /// Days a daily log file is kept (14 when unset).
    pub log_days: Option<u32>,
}

/// `[tui]`: the terminal UI's own settings.
#[derive(Deserialize, Default, Debug, Clone, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TuiConfig {
    /// A command whose first line of output is the status line (Claude
    /// Code's `statusLine`).
    pub status_line: Option<StatusLineConfig>,
}

/// `[tui] status_line = { command = "…" }`.
#[derive(Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StatusLineConfig {
    /// Run with `sh -c`, the session's JSON on its stdin.
    pub command: String,
}

/// `[tui]` of the user's config (a project's is ignored with a warning:
/// its command would run whatever a repository says); without a
/// `status_line` there, Claude Code's `statusLine` (the managed file's,
/// else `~/.claude/settings.json`'s).
///
/// # Errors
/// The file does not load, or `status_line.command` is empty.
pub fn load_tui(user_config: &Path) -> Result<TuiConfig> {
    let home = crate::env::home_dir();
    let claude = claude::read_all(
        &managed_settings_path(),
        home.as_deref(),
        None,
        &claude::Choice::default(),
    )?;
    tui_of(read(user_config)?.as_ref(), &claude)
}

/// `[tui]` of the user's config `source`, with Claude Code's `statusLine`
/// from `claude` (the managed file's, else the person's own) where it sets
/// no `status_line`.
///
/// # Errors
/// `status_line.command` is empty.
pub fn tui_of(source: Option<&Source>, claude: &[claude::Settings]) -> Result<TuiConfig> {
    let claude_line = || {
        [claude::Scope::Managed, claude::Scope::User]
            .into_iter()
            .find_map(|scope| {
                claude
                    .iter()
                    .filter(|c| c.scope == scope)
                    .find_map(|c| c.status_line.clone())
            })
            .map(|command| StatusLineConfig { command })
    };
    let Some(source) = source else {
        return Ok(TuiConfig {
            status_line: claude_line(),
        });
    };
    if let Some(line) = &source.file.tui.status_line
        && line.command.trim().is_empty()
    {
        return Err(anyhow!(
            "{}: [tui] status_line.command is empty",
            source.path.display()
        ));
    }
    let mut tui = source.file.tui.clone();
    if tui.status_line.is_none() {
        tui.status_line = claude_line();
    }
    Ok(tui)
}

/// `[sandbox]` as written: how far shell commands reach.
#[derive(Deserialize, Default, Debug, Clone, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    /// `read-only`, `workspace-write` or `danger-full-access`.
    pub mode: Option<SandboxMode>,
    /// `true`: the machine's network, unfiltered.
    pub network: Option<bool>,
    /// More folders commands may write (absolute, or under `~/`).
    #[serde(default)]
    pub writable_roots: Vec<String>,
    /// Hosts reachable through cox's proxy (`example.com`, `*.example.org`).
    #[serde(default)]
    pub allowed_domains: Vec<String>,
    /// Variables passed to commands, hooks and MCP servers although their
    /// names look like credentials (`GITHUB_TOKEN`, `NPM_*`).
    #[serde(default)]
    pub env: Vec<String>,
    /// Unix sockets outside the workspace commands may connect to (an ssh
    /// agent, `/run/docker.sock`), as Claude Code's `allowUnixSockets`.
    #[serde(default)]
    pub allow_unix_sockets: Vec<String>,
}

/// The sandbox a session's config files ask for, checked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxSettings {
    pub mode: SandboxMode,
    /// Where the mode came from, for `cox config show`.
    pub mode_source: String,
    pub network: cox_sandbox::Network,
    pub writable_roots: Vec<PathBuf>,
    /// Which of cox's variables processes it starts for the model see.
    pub env: cox_sandbox::EnvFilter,
    /// Sockets outside the workspace left reachable.
    pub unix_sockets: Vec<PathBuf>,
}

/// `[core]`: what a session runs as.
#[derive(Deserialize, Default, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct CoreConfig {
    /// `architect` or `editor`.
    pub mode: Option<ModeName>,
    /// The effort main turns ask for.
    pub effort: Option<Effort>,
    /// The tracing filter of `logs/cox.log.<date>` (`COX_LOG` wins over it).
    pub log_level: Option<String>,
}

/// A mode: a preset over the permission mode and the main tier.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ModeName {
    /// Plan permission mode, main turns on the think tier.
    Architect,
    /// The configured permission mode, main turns on the code tier.
    Editor,
}

/// A tier's name in `[tiers.<name>]`.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum TierName {
    Cheap,
    Code,
    Think,
}

impl TierName {
    /// The protocol's tier.
    #[must_use]
    pub fn tier(self) -> Tier {
        match self {
            TierName::Cheap => Tier::Cheap,
            TierName::Code => Tier::Code,
            TierName::Think => Tier::Think,
        }
    }
}

/// `[tiers.<name>]`: where that tier's calls go.
#[derive(Deserialize, Default, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct TierConfig {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub effort: Option<Effort>,
}

/// `[providers.<name>]`: how to reach a provider.
#[derive(Deserialize, Default, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// The API's base URL (the provider's `*_BASE_URL` variable wins).
    pub base_url: Option<String>,
    /// The variable that holds the key, instead of the provider's usual one.
    pub api_key_env: Option<String>,
    /// Attempts per call, the first included (default 4).
    pub max_attempts: Option<u32>,
    /// The first wait between attempts, doubling after (default 1000 ms).
    pub retry_base_ms: Option<u64>,
    /// Give up on a response silent for this long (default 300000 ms).
    pub idle_timeout_ms: Option<u64>,
}

impl ProviderConfig {
    /// The retry policy these settings ask for.
    #[must_use]
    pub fn retry(&self) -> cox_providers::RetryPolicy {
        let default = cox_providers::RetryPolicy::default();
        cox_providers::RetryPolicy {
            max_attempts: self.max_attempts.unwrap_or(default.max_attempts).max(1),
            base_delay_ms: self.retry_base_ms.unwrap_or(default.base_delay_ms),
            idle_timeout_ms: self
                .idle_timeout_ms
                .unwrap_or(default.idle_timeout_ms)
                .max(1),
        }
    }
}

/// What the user's config says about models and providers. Only the
/// user's own config may say it: a repository's config could otherwise send
/// the user's key to a server of its choosing.
#[derive(Debug, Clone, Default)]
pub struct ModelConfig {
    /// The file it came from, for error lines.
    pub path: Option<PathBuf>,
    pub core: CoreConfig,
    pub tiers: BTreeMap<TierName, TierConfig>,
    pub providers: BTreeMap<String, ProviderConfig>,
    pub models: Vec<ModelInfo>,
    /// `[budget]` of the user's config (a project config may only lower
    /// it, see [`Permissions::budget`]).
    pub budget: BudgetConfig,
    /// `[context]`: dedup, microcompaction, compaction, tool deferral.
    pub context: ContextConfig,
    /// `[telemetry]`: the log's retention and OTLP export.
    pub telemetry: TelemetryConfig,
    /// `[agents]`: subagents' depth and width.
    pub agents: AgentsConfig,
    /// `[tools]`: web_fetch and web_search on or off.
    pub tools: ToolsConfig,
}

/// Reads the model and provider tables of the user's config.
///
/// # Errors
/// The file cannot be read or parsed: one line naming it.
pub fn load_models(user_config: &Path) -> Result<ModelConfig> {
    models_of(read(user_config)?)
}

/// What the user's config `source` says about models and providers.
///
/// # Errors
/// A value that cannot be one: its file and line.
pub fn models_of(source: Option<Source>) -> Result<ModelConfig> {
    let Some(source) = source else {
        return Ok(ModelConfig::default());
    };
    for (key, value) in [
        ("session_usd", source.file.budget.session_usd),
        ("monthly_usd", source.file.budget.monthly_usd),
    ] {
        if let Some(usd) = value
            && !(usd.is_finite() && usd >= 0.0)
        {
            let line = source
                .text
                .lines()
                .position(|l| l.trim_start().starts_with(key))
                .map_or(1, |i| i + 1);
            return Err(anyhow!(
                "{}:{line}: [budget] {key} must be an amount in US dollars, 0 or more",
                source.path.display()
            ));
        }
    }
    let line_of_key = |key: &str| {
        source
            .text
            .lines()
            .position(|l| l.contains(key))
            .map_or(1, |i| i + 1)
    };
    for (id, row) in &source.file.models {
        let prices = row
            .prices
            .map(|p| [p.input, p.output, p.cache_read, p.cache_write]);
        let bad_price = prices.is_some_and(|p| p.iter().any(|v| !(v.is_finite() && *v >= 0.0)));
        let what = if row.context_window == 0 {
            Some("context_window must be more than 0")
        } else if row.max_output == 0 {
            Some("max_output must be more than 0")
        } else if bad_price {
            Some("prices must be amounts in US dollars, 0 or more")
        } else {
            None
        };
        if let Some(what) = what {
            return Err(anyhow!(
                "{}:{}: [models.\"{id}\"] {what}",
                source.path.display(),
                line_of_key(id)
            ));
        }
    }
    if let Some(filter) = &source.file.core.log_level
        && let Err(why) = log_filter::check(filter)
    {
        return Err(anyhow!(
            "{}:{}: [core] log_level: {why}",
            source.path.display(),
            line_of_key("log_level")
        ));
    }
    if let Some(endpoint) = &source.file.telemetry.endpoint
        && let Err(why) = check_endpoint(endpoint)
    {
        return Err(anyhow!(
            "{}:{}: [telemetry] endpoint `{endpoint}`: {why}",
            source.path.display(),
            line_of_key("endpoint")
        ));
    }
    if source.file.telemetry.log_days == Some(0) {
        return Err(anyhow!(
            "{}:{}: [telemetry] log_days must be 1 or more (the day's own file is always kept)",
            source.path.display(),
            line_of_key("log_days")
        ));
    }
    if source.file.agents.parallel == Some(0) {
        return Err(anyhow!(
            "{}:{}: [agents] parallel must be 1 or more (set max_depth = 0 to turn subagents off)",
            source.path.display(),
            line_of_key("parallel")
        ));
    }
    let at = source.file.context.compact_at;
    if !(at.is_finite() && at > 0.0) {
        return Err(anyhow!(
            "{}:{}: [context] compact_at must be a share of the window above 0 (0.75 is 75 %)",
            source.path.display(),
            line_of_key("compact_at")
        ));
    }
    let file = source.file;
    Ok(ModelConfig {
        path: Some(source.path),
        core: file.core,
        tiers: file.tiers,
        providers: file.providers,
        budget: file.budget,
        context: file.context,
        telemetry: file.telemetry,
        agents: file.agents,
        tools: file.tools,
        models: file
            .models
            .into_iter()
            .map(|(id, row)| ModelInfo { id, ..row })
            .collect(),
    })
}

/// The `[hooks]` of a config file: its path, its text (for the lines) and
/// the table, or `None` when the file or the table is absent.
///
/// # Errors
/// The file cannot be read or parsed: one line naming it.
pub fn load_hooks_table(path: &Path) -> Result<Option<(PathBuf, String, serde_json::Value)>> {
    Ok(read(path)?.and_then(|source| {
        let hooks = source.file.hooks?;
        Some((source.path, source.text, hooks))
    }))
}

/// A config's path, its text and its `[mcp_servers]`.
pub type McpEntries = (PathBuf, String, BTreeMap<String, McpEntry>);

/// The `[mcp_servers]` of the user's config: its path, its text (for the
/// lines) and the entries, or `None` when there is no config.
///
/// # Errors
/// The file cannot be read or parsed: one line naming it.
pub fn load_mcp_servers(user_config: &Path) -> Result<Option<McpEntries>> {
    Ok(read(user_config)?.map(|source| (source.path, source.text, source.file.mcp_servers)))
}

/// Whether `endpoint` can be a collector's base URL: `http://` or
/// `https://`, a host, no query.
fn check_endpoint(endpoint: &str) -> std::result::Result<(), &'static str> {
    let rest = endpoint
        .strip_prefix("http://")
        .or_else(|| endpoint.strip_prefix("https://"))
        .ok_or("expected an http:// or https:// URL")?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty() || host.starts_with(':') || host.contains(char::is_whitespace) {
        return Err("the URL has no host");
    }
    if rest.contains(['?', '#']) {
        return Err("a base URL takes no query or fragment (cox appends /v1/traces and /v1/logs)");
    }
    Ok(())
}

/// The filter of the log file: `COX_LOG`, else the user's
/// `core.log_level`, else `info`.
///
/// # Errors
/// The user's config does not load, or `COX_LOG` is not a filter.
pub fn log_filter_for(user_config: &Path) -> Result<tracing_subscriber::EnvFilter> {
    let configured = load_models(user_config)?.core.log_level;
    let cox_log = crate::env::cox_log().filter(|v| !v.is_empty());
    log_filter::choose(configured.as_deref(), cox_log.as_deref())
}

/// A config file, read.
pub struct Source {
    path: PathBuf,
    text: String,
    permissions: PermissionsConfig,
    file: ConfigFile,
    /// The top-level tables it has, for the warning on a project's.
    tables: Vec<String>,
}

/// A sandbox mode as the config and `--sandbox` spell it.
#[must_use]
pub fn sandbox_mode_name(mode: SandboxMode) -> &'static str {
    match mode {
        SandboxMode::ReadOnly => "read-only",
        SandboxMode::WorkspaceWrite => "workspace-write",
        SandboxMode::DangerFullAccess => "danger-full-access",
    }
}

/// Reads one config file; `None` when it does not exist.
fn read(path: &Path) -> Result<Option<Source>> {
    text(path)
        .map_err(|why| anyhow!("{}: {why}", path.display()))?
        .map(|text| Source::parse(path, text))
        .transpose()
}

/// The text of a config file (`None`: there is none), read once while a
/// session is set up ([`once`]).
///
/// # Errors
/// It exists but cannot be read: why.
pub fn text(path: &Path) -> std::result::Result<Option<String>, String> {
    once::read(path, |path| match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(format!("cannot read: {err}")),
    })
}

impl Source {
    /// Reads `text`, the config file at `path`.
    ///
    /// # Errors
    /// A name no table or key has, or what is not TOML: its line.
    pub fn parse(path: &Path, text: String) -> Result<Source> {
        // Names first: serde would read a misspelt table as "not set".
        let mut tables = Vec::new();
        if let Ok(doc) = toml::de::DeTable::parse(&text) {
            if let Some(refusal) = names::check(doc.get_ref()) {
                let line = line_at(&text, refusal.at);
                return Err(anyhow!("{}:{line}: {}", path.display(), refusal.message));
            }
            tables = doc
                .get_ref()
                .keys()
                .map(|k| k.get_ref().to_string())
                .collect();
        }
        let file: ConfigFile = toml::from_str(&text).map_err(|err| {
            let line = err.span().map_or(1, |span| line_at(&text, span.start));
            let message = plain_types(&err.message().lines().collect::<Vec<_>>().join(" "));
            match key_at(&text, line) {
                Some(key) => anyhow!("{}:{line}: `{key}`: {message}", path.display()),
                None => anyhow!("{}:{line}: {message}", path.display()),
            }
        })?;
        tracing::debug!(path = %path.display(), ?tables, "config read");
        let permissions = file.permissions.clone();
        Ok(Source {
            path: path.to_owned(),
            text,
            permissions,
            file,
            tables,
        })
    }
}

/// The key written on line `line` of `text` (`key = value`), with the
/// table it is in (`budget.session_usd`); `None` for a line that sets
/// none.
fn key_at(text: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let here = lines.get(line.checked_sub(1)?)?;
    let (key, _) = here.split_once('=')?;
    let key = key.trim().trim_matches('"');
    if key.is_empty() || key.starts_with('[') || key.starts_with('#') {
        return None;
    }
    let table = lines[..line - 1]
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| l.starts_with('['))
        .map(|l| {
            l.trim_start_matches('[')
                .trim_end_matches(']')
                .trim_matches(['[', ']'])
        })
        .map(str::trim);
    Some(match table {
        Some(table) if !table.is_empty() => format!("{table}.{key}"),
        _ => key.to_owned(),
    })
}

/// serde's type words as a person reads them (`expected f64`: `expected a
/// number`).
fn plain_types(message: &str) -> String {
    let mut out = message.to_owned();
    for (rust, plain) in [
        ("expected f64", "expected a number"),
        ("expected f32", "expected a number"),
        ("expected u8", "expected a whole number, 0 or more"),
        ("expected u16", "expected a whole number, 0 or more"),
        ("expected u32", "expected a whole number, 0 or more"),
        ("expected u64", "expected a whole number, 0 or more"),
        ("expected usize", "expected a whole number, 0 or more"),
        ("expected i32", "expected a whole number"),
        ("expected i64", "expected a whole number"),
        ("expected a sequence", "expected a list"),
        ("expected a map", "expected a table"),
    ] {
        out = out.replace(rust, plain);
    }
    out
}

/// The line (from 1) of a byte offset.
fn line_at(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text.as_bytes()[..offset]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The line (from 1) where `rule` is written in `text`.
fn line_of(text: &str, rule: &str) -> usize {
    let quoted = [format!("\"{rule}\""), format!("'{rule}'")];
    text.lines()
        .position(|l| quoted.iter().any(|q| l.contains(q.as_str())))
        .or_else(|| text.lines().position(|l| l.contains(rule)))
        .map_or(1, |i| i + 1)
}

/// The nearest `.cox/config.toml` from `cwd` up to its repository root;
/// outside a repository, only `cwd` itself is looked at.
pub fn project_config(cwd: &Path) -> Option<PathBuf> {
    let root = cwd.ancestors().find(|d| d.join(".git").exists());
    let stop = root.unwrap_or(cwd);
    for dir in cwd.ancestors() {
        let candidate = dir.join(".cox").join("config.toml");
        if candidate.is_file() {
            return Some(candidate);
        }
        if dir == stop {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_found_on_their_line() {
        let text = "[permissions]\nallow = [\n  \"Bash(git:*)\",\n  'Bash(rm'\n]\n";
        assert_eq!(line_of(text, "Bash(git:*)"), 3);
        assert_eq!(line_of(text, "Bash(rm"), 4);
    }
}
