//! Reading the `[permissions]` of the config files, with their origins.
//!
//! Sources, weakest first: built-in rules, `$COX_HOME/config.toml` (the
//! user's own), the project's `.cox/config.toml` (the nearest one between
//! the working folder and its repository root), then flags. Rules from every
//! source add up; deny wins whatever its source.
//!
//! A project config is written by whoever wrote the repository, so it is
//! trusted less: its `allow` rules are dropped (with a warning naming each)
//! and its `mode` may only narrow (`default`, `plan`), never widen. Its
//! `deny` and `ask` rules apply.
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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use cox_permission::{Engine, Layer, Origin};
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
    mcp_servers: BTreeMap<String, crate::mcp::Entry>,
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
/// its command would run whatever a repository says).
///
/// # Errors
/// The file does not load, or `status_line.command` is empty.
pub fn load_tui(user_config: &Path) -> Result<TuiConfig> {
    let Some(source) = read(user_config)? else {
        return Ok(TuiConfig::default());
    };
    if let Some(line) = &source.file.tui.status_line
        && line.command.trim().is_empty()
    {
        return Err(anyhow!(
            "{}: [tui] status_line.command is empty",
            source.path.display()
        ));
    }
    Ok(source.file.tui)
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
    let Some(source) = read(user_config)? else {
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
pub type McpEntries = (PathBuf, String, BTreeMap<String, crate::mcp::Entry>);

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

/// A config file read from disk.
struct Source {
    path: PathBuf,
    text: String,
    permissions: PermissionsConfig,
    file: ConfigFile,
    /// The top-level tables it has, for the warning on a project's.
    tables: Vec<String>,
}

/// Loads and compiles the permissions for a session in `cwd`.
///
/// # Errors
/// A config that cannot be read or parsed, or a rule that does not parse:
/// one line naming the file and line.
pub fn load_permissions(
    user_config: &Path,
    home_dir: Option<&Path>,
    cwd: &Path,
    flags: &PermissionFlags,
) -> Result<Permissions> {
    load_permissions_at(user_config, home_dir, (cwd, cwd, &[]), flags)
}

/// [`load_permissions`] with the project's config read from `settings`,
/// relative rules anchored at `cwd`, and their deny and ask rules also at
/// each folder of `also` (a subagent in a worktree of its own: its
/// parent's rules, about its own checkout's paths and its parent's).
///
/// # Errors
/// As [`load_permissions`].
pub fn load_permissions_at(
    user_config: &Path,
    home_dir: Option<&Path>,
    (settings, cwd, also): (&Path, &Path, &[PathBuf]),
    flags: &PermissionFlags,
) -> Result<Permissions> {
    let user = read(user_config)?;
    let project = project_config(settings)
        .filter(|p| p.as_path() != user_config)
        .map(|p| read(&p))
        .transpose()?
        .flatten();
    let claude = claude::read_all(
        &managed_settings_path(),
        home_dir,
        Some(settings),
        &flags.claude,
    )?;
    let flag_config = PermissionsConfig {
        allow: flags.allow.clone(),
        ask: flags.ask.clone(),
        deny: flags.deny.clone(),
        mode: flags.mode,
    };
    let claude_origin = |c: &claude::Settings| match c.scope {
        claude::Scope::Managed => Origin::Managed(c.path.clone()),
        claude::Scope::User | claude::Scope::Flag => Origin::User(c.path.clone()),
        claude::Scope::Project => Origin::Project(c.path.clone()),
    };
    let mut layers = Vec::new();
    for c in claude
        .iter()
        .filter(|c| matches!(c.scope, claude::Scope::Managed | claude::Scope::User))
    {
        layers.push(Layer {
            origin: claude_origin(c),
            config: &c.permissions,
        });
    }
    if let Some(user) = &user {
        layers.push(Layer {
            origin: Origin::User(user.path.clone()),
            config: &user.permissions,
        });
    }
    if let Some(project) = &project {
        layers.push(Layer {
            origin: Origin::Project(project.path.clone()),
            config: &project.permissions,
        });
    }
    for c in claude
        .iter()
        .filter(|c| matches!(c.scope, claude::Scope::Project | claude::Scope::Flag))
    {
        layers.push(Layer {
            origin: claude_origin(c),
            config: &c.permissions,
        });
    }
    layers.push(Layer {
        origin: Origin::Flag,
        config: &flag_config,
    });
    let engine = Engine::compile_layers_at(&layers, home_dir, cwd, also).map_err(|err| {
        let text_of = |path: &Path| {
            [&user, &project]
                .into_iter()
                .flatten()
                .find(|s| s.path == path)
                .map(|s| s.text.as_str())
                .or_else(|| {
                    claude
                        .iter()
                        .find(|c| c.path == path)
                        .map(|c| c.text.as_str())
                })
        };
        match &err.origin {
            Origin::User(path) | Origin::Project(path) | Origin::Managed(path) => {
                let line = text_of(path).map_or(1, |text| line_of(text, &err.source.rule));
                anyhow!("{}:{line}: {}", path.display(), err.source)
            }
            Origin::BuiltIn | Origin::Flag | Origin::Command(_) => anyhow!("{err}"),
        }
    })?;

    let mut warnings: Vec<String> = claude
        .iter()
        .flat_map(|c| c.warnings.iter().cloned())
        .collect();
    for rule in engine.ignored() {
        warnings.push(format!(
            "ignoring allow rule `{}` from the {}: a project config cannot allow; \
             put it in your own config to trust it",
            rule.text, rule.origin
        ));
    }
    if let Some(project) = &project {
        let f = &project.file;
        if !f.tiers.is_empty() || !f.providers.is_empty() || !f.models.is_empty() {
            warnings.push(format!(
                "ignoring [tiers], [providers] and [models] in project config {}: only your own \
                 config chooses where requests (and your keys) go",
                project.path.display()
            ));
        }
        let own: Vec<String> = ["core", "context", "tui", "telemetry", "agents", "tools"]
            .into_iter()
            .filter(|t| project.tables.iter().any(|have| have == t))
            .map(|t| format!("[{t}]"))
            .collect();
        if !own.is_empty() {
            warnings.push(format!(
                "ignoring {} in project config {}: only your own config sets them",
                own.join(" and "),
                project.path.display()
            ));
        }
        if !f.mcp_servers.is_empty() {
            warnings.push(format!(
                "ignoring [mcp_servers] in project config {}: a project's MCP servers go in its \
                 .mcp.json, where they wait for `cox mcp trust`",
                project.path.display()
            ));
        }
    }
    let (mut mode, mut mode_source) = (PermissionMode::Default, "the default".to_owned());
    if let Some(user_mode) = user.as_ref().and_then(|u| u.permissions.mode) {
        mode = user_mode;
        mode_source = format!("user config {}", user_config.display());
    }
    if let Some(project) = &project
        && let Some(project_mode) = project.permissions.mode
    {
        if matches!(project_mode, PermissionMode::Default | PermissionMode::Plan) {
            mode = project_mode;
            mode_source = format!("project config {}", project.path.display());
        } else {
            warnings.push(format!(
                "ignoring mode `{project_mode}` from project config {}: a project config can \
                 only narrow the mode (default, plan)",
                project.path.display()
            ));
        }
    }
    for c in &claude {
        let Some(file_mode) = c.permissions.mode else {
            continue;
        };
        let source = match c.scope {
            claude::Scope::Managed => continue,
            claude::Scope::User if user.as_ref().is_some_and(|u| u.permissions.mode.is_some()) => {
                // cox's own config is the more specific of the person's two.
                continue;
            }
            claude::Scope::User => format!("user settings {}", c.path.display()),
            claude::Scope::Project
                if !matches!(file_mode, PermissionMode::Default | PermissionMode::Plan) =>
            {
                warnings.push(format!(
                    "ignoring defaultMode `{file_mode}` from project settings {}: a project's \
                     settings can only narrow the mode (default, plan)",
                    c.path.display()
                ));
                continue;
            }
            claude::Scope::Project => format!("project settings {}", c.path.display()),
            claude::Scope::Flag => format!("settings {}", c.path.display()),
        };
        mode = file_mode;
        mode_source = source;
    }
    if let Some(flag_mode) = flags.mode {
        mode = flag_mode;
        mode_source = "--permission-mode".to_owned();
    }
    // An administrator's mode is above every flag, as in Claude Code.
    if let Some(managed) = claude.iter().find(|c| c.scope == claude::Scope::Managed)
        && let Some(managed_mode) = managed.permissions.mode
    {
        mode = managed_mode;
        mode_source = format!("managed settings {}", managed.path.display());
    }
    if mode == PermissionMode::BypassPermissions
        && let Some(refusing) = claude.iter().find(|c| c.no_bypass)
    {
        return Err(anyhow!(
            "{}:{}: bypassPermissions mode (asked by {mode_source}) is disabled here \
             (permissions.disableBypassPermissionsMode)",
            refusing.path.display(),
            line_of(&refusing.text, "disableBypassPermissionsMode")
        ));
    }
    let project_budget = project.as_ref().map(|p| p.file.budget).unwrap_or_default();
    if let Some(project) = &project {
        for (key, value) in [
            ("session_usd", project_budget.session_usd),
            ("monthly_usd", project_budget.monthly_usd),
        ] {
            if value.is_some_and(|usd| !(usd.is_finite() && usd >= 0.0)) {
                return Err(anyhow!(
                    "{}: [budget] {key} must be an amount in US dollars, 0 or more",
                    project.path.display()
                ));
            }
        }
    }
    let mut sandbox = sandbox_settings(user.as_ref(), project.as_ref(), home_dir, &mut warnings)?;
    // Claude Code's `env`: the person's, then this run's, then the
    // administrator's, a later one winning a name.
    for scope in [
        claude::Scope::User,
        claude::Scope::Flag,
        claude::Scope::Managed,
    ] {
        for c in claude.iter().filter(|c| c.scope == scope) {
            for (name, value) in &c.env {
                sandbox.env.set.retain(|(n, _)| n != name);
                sandbox.env.set.push((name.clone(), value.clone()));
            }
        }
    }
    let bypass_refused = claude.iter().find(|c| c.no_bypass).map(|c| {
        format!(
            "permissions.disableBypassPermissionsMode in {}",
            c.path.display()
        )
    });
    Ok(Permissions {
        engine,
        mode,
        mode_source,
        warnings,
        project_budget,
        sandbox,
        bypass_refused,
    })
}

/// How far a mode lets commands reach, to compare two.
fn reach(mode: SandboxMode) -> u8 {
    match mode {
        SandboxMode::ReadOnly => 0,
        SandboxMode::WorkspaceWrite => 1,
        SandboxMode::DangerFullAccess => 2,
    }
}

/// `[sandbox]` of the user's config, narrowed by the project's: a project
/// may lower the mode and turn the network off; what would widen the reach
/// (a wider mode, network, writable roots, domains) is dropped with a
/// warning. Roots that do not exist and malformed domains are errors naming
/// the file and line.
fn sandbox_settings(
    user: Option<&Source>,
    project: Option<&Source>,
    home_dir: Option<&Path>,
    warnings: &mut Vec<String>,
) -> Result<SandboxSettings> {
    let mut out = SandboxSettings {
        mode_source: "the default".into(),
        ..SandboxSettings::default()
    };
    for source in [user, project].into_iter().flatten() {
        check_sandbox(source, home_dir)?;
    }
    if let Some(user) = user {
        let cfg = &user.file.sandbox;
        if let Some(mode) = cfg.mode {
            out.mode = mode;
            out.mode_source = format!("user config {}", user.path.display());
        }
        if cfg.network == Some(true) && !cfg.allowed_domains.is_empty() {
            let line = line_of(&user.text, "allowed_domains");
            return Err(anyhow!(
                "{}:{line}: [sandbox] sets both network = true (every host) and allowed_domains \
                 (only those hosts): keep one",
                user.path.display()
            ));
        }
        if cfg.network == Some(true) {
            out.network = cox_sandbox::Network::On;
        } else if !cfg.allowed_domains.is_empty() {
            out.network = cox_sandbox::Network::Domains(
                cfg.allowed_domains
                    .iter()
                    .filter_map(|d| cox_sandbox::DomainPattern::parse(d).ok())
                    .collect(),
            );
        }
        out.writable_roots = cfg
            .writable_roots
            .iter()
            .filter_map(|r| expand_root(r, home_dir))
            .collect();
        out.env.allow.clone_from(&cfg.env);
        out.unix_sockets = cfg
            .allow_unix_sockets
            .iter()
            .filter_map(|r| expand_root(r, home_dir))
            .collect();
        // A provider key kept in a variable of any name is never passed.
        out.env.deny = user
            .file
            .providers
            .values()
            .filter_map(|p| p.api_key_env.clone())
            .collect();
    }
    if let Some(project) = project {
        let cfg = &project.file.sandbox;
        let at = project.path.display();
        if let Some(mode) = cfg.mode {
            if reach(mode) <= reach(out.mode) {
                out.mode = mode;
                out.mode_source = format!("project config {at}");
            } else {
                warnings.push(format!(
                    "ignoring [sandbox] mode `{}` from project config {at}: a project config can \
                     only narrow the sandbox (now {})",
                    sandbox_mode_name(mode),
                    sandbox_mode_name(out.mode)
                ));
            }
        }
        match cfg.network {
            Some(false) => out.network = cox_sandbox::Network::Off,
            Some(true) => warnings.push(format!(
                "ignoring [sandbox] network = true from project config {at}: only your own config \
                 opens the network"
            )),
            None => {}
        }
        for (key, set) in [
            ("writable_roots", !cfg.writable_roots.is_empty()),
            ("allowed_domains", !cfg.allowed_domains.is_empty()),
            ("env", !cfg.env.is_empty()),
            ("allow_unix_sockets", !cfg.allow_unix_sockets.is_empty()),
        ] {
            if set {
                warnings.push(format!(
                    "ignoring [sandbox] {key} from project config {at}: only your own config \
                     widens the sandbox"
                ));
            }
        }
    }
    Ok(out)
}

/// Refuses a `[sandbox]` entry that cannot take effect.
fn check_sandbox(source: &Source, home_dir: Option<&Path>) -> Result<()> {
    let cfg = &source.file.sandbox;
    for root in &cfg.writable_roots {
        let line = line_of(&source.text, root);
        let Some(path) = expand_root(root, home_dir) else {
            return Err(anyhow!(
                "{}:{line}: [sandbox] writable_roots: `{root}` must be an absolute path (or start with ~/)",
                source.path.display()
            ));
        };
        if !path.is_dir() {
            return Err(anyhow!(
                "{}:{line}: [sandbox] writable_roots: `{root}` is not a folder that exists",
                source.path.display()
            ));
        }
    }
    for name in &cfg.env {
        if !cox_sandbox::env::valid_pattern(name) {
            let line = line_of(&source.text, name);
            return Err(anyhow!(
                "{}:{line}: [sandbox] env: `{name}` is not a variable name (letters, digits and _, \
                 optionally ending in *)",
                source.path.display()
            ));
        }
    }
    for socket in &cfg.allow_unix_sockets {
        if expand_root(socket, home_dir).is_none() {
            let line = line_of(&source.text, socket);
            return Err(anyhow!(
                "{}:{line}: [sandbox] allow_unix_sockets: `{socket}` must be an absolute path (or start with ~/)",
                source.path.display()
            ));
        }
    }
    for domain in &cfg.allowed_domains {
        if let Err(why) = cox_sandbox::DomainPattern::parse(domain) {
            let line = line_of(&source.text, domain);
            return Err(anyhow!(
                "{}:{line}: [sandbox] allowed_domains: {why}",
                source.path.display()
            ));
        }
    }
    Ok(())
}

/// An absolute root, or one under `~/`; `None` for a relative one.
fn expand_root(root: &str, home_dir: Option<&Path>) -> Option<PathBuf> {
    if let Some(rest) = root.strip_prefix("~/") {
        return home_dir.map(|h| h.join(rest));
    }
    let path = PathBuf::from(root);
    path.is_absolute().then_some(path)
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
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(anyhow!("{}: cannot read: {err}", path.display())),
    };
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
        let message = err.message().lines().collect::<Vec<_>>().join(" ");
        anyhow!("{}:{line}: {message}", path.display())
    })?;
    tracing::debug!(path = %path.display(), ?tables, "config read");
    let permissions = file.permissions.clone();
    Ok(Some(Source {
        path: path.to_owned(),
        text,
        permissions,
        file,
        tables,
    }))
}

/// Claude Code's managed settings file: `COX_MANAGED_SETTINGS` when set
/// (an unusual install, or a test), else where Claude Code keeps it.
fn managed_settings_path() -> PathBuf {
    crate::env::managed_settings().unwrap_or_else(|| PathBuf::from(claude::MANAGED_PATH))
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
