//! A session's settings: every source read once, then resolved by one pure
//! function.
//!
//! Two steps, as a search tool separates the arguments it was given from
//! what it will do with them:
//!
//! - [`Inputs::read`] is the only step that touches the machine: the text
//!   of every settings file (`$COX_HOME/config.toml`, the project's
//!   `.cox/config.toml`, Claude Code's managed, user, project and local
//!   files, `--settings`), the `COX_*` and `OTEL_*` variables no flag
//!   stands for, which of the project's allow rules the person trusted,
//!   and the command line itself. Each file is read once (through
//!   [`crate::config::once`], so the loaders of hooks and the TUI that look
//!   again get the same text).
//! - [`resolve`] turns that value into a [`Plan`]: the permission mode and
//!   rules with their origins, the sandbox settings, the models and tiers,
//!   the main model, the preset, the budget, the context settings, the
//!   telemetry switches, the status line, the MCP approvals and the extra
//!   workspace roots. It reads no file, no variable and no clock, so its
//!   precedence rules are tested as a table ([`tests`]).
//!
//! What needs the disk again (a folder a file names must exist, the MCP
//! servers' own files, plugins and hooks, the record) is the wiring of
//! [`crate::session`], from the plan.
//!
//! Precedence, weakest first: built-in defaults; `~/.claude/settings.json`;
//! `$COX_HOME/config.toml`; the project's files (which may only narrow,
//! and allow only with each rule trusted); `--settings`; the variables;
//! the flags; then managed settings where Claude Code puts them above
//! flags (the mode, the model). A deny rule from anywhere wins.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use cox_protocol::config::BudgetConfig;
use cox_protocol::provider::{Effort, Tier};
use cox_protocol::types::PermissionMode;

use crate::args::{self, RunArgs};
use crate::config::{self, claude};
use crate::given;

/// Who agrees to the think tier's price when the config alone asks for
/// architect mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Consent {
    /// Only a flag on this command line counts (`cox run`): a config
    /// asking alone is refused with the flag to pass.
    Flag,
    /// The surface asks the person before the first turn of an architect
    /// stretch (the terminal UI).
    Asked,
}

/// The plan of a session in `cwd` (its settings read there too), for the
/// commands that look without starting one (`cox permissions check`, `cox
/// mcp`): read, resolved, and the folders it names checked.
///
/// # Errors
/// As [`Inputs::read`], [`resolve`], and a folder a file names that is none.
pub fn for_folder(
    home: &cox_store::CoxHome,
    cwd: &Path,
    args: &RunArgs,
    consent: Consent,
) -> Result<Plan> {
    Ok(read_in(home, cwd, args, consent)?.1)
}

/// [`for_folder`], with what was read.
///
/// # Errors
/// As [`for_folder`].
pub fn read_in(
    home: &cox_store::CoxHome,
    cwd: &Path,
    args: &RunArgs,
    consent: Consent,
) -> Result<(Inputs, Plan)> {
    let inputs = Inputs::read(args, consent, home, (cwd, cwd, &[]))?;
    let plan = resolve(&inputs)?;
    config::check_dirs(&plan.permissions.dirs)?;
    Ok((inputs, plan))
}

/// Where a session's settings are read.
#[derive(Clone, Debug)]
pub struct Places {
    /// `$COX_HOME/config.toml`.
    pub user_config: PathBuf,
    /// `$HOME`, for `~/.claude/settings.json` and `~/` in rules.
    pub home_dir: Option<PathBuf>,
    /// Claude Code's managed settings file.
    pub managed: PathBuf,
    /// The folder the project's settings are read in (a subagent's: its
    /// parent's).
    pub settings_from: PathBuf,
    /// The session's folder: relative rules are anchored here.
    pub cwd: PathBuf,
    /// Other checkouts the project's deny and ask rules also hold in.
    pub also: Vec<PathBuf>,
    /// The project's `.cox/config.toml`, when there is one.
    pub project_config: Option<PathBuf>,
}

/// Everything a session's settings are made from, read.
#[derive(Clone, Debug)]
pub struct Inputs {
    pub args: RunArgs,
    pub consent: Consent,
    pub places: Places,
    /// Which Claude Code files count (`--setting-sources`), and the text of
    /// `--settings`.
    pub choice: claude::Choice,
    /// The text of each settings file by path: `Ok(None)` when there is no
    /// such file, `Err` with why it could not be read.
    pub files: BTreeMap<PathBuf, Result<Option<String>, String>>,
    /// The variables that are no flag's: `COX_BUDGET_*`, `COX_LOG`,
    /// `COX_TELEMETRY_OTEL` and every `OTEL_*`.
    pub vars: BTreeMap<String, String>,
    /// The fingerprints of the project's allow rules the person trusted
    /// (or why they could not be read).
    pub trusted: Result<Vec<String>, String>,
}

/// The variables [`Inputs::read`] keeps besides every `OTEL_*`.
const VARS: [&str; 4] = [
    "COX_BUDGET_SESSION_USD",
    "COX_BUDGET_MONTHLY_USD",
    "COX_LOG",
    crate::telemetry::export::OTEL_VAR,
];

impl Inputs {
    /// Reads every source of a session with `args` whose settings are read
    /// in `settings_from` and whose rules anchor at `cwd` (and `also`).
    ///
    /// # Errors
    /// A `--settings` file or `--setting-sources` list that cannot be used.
    pub fn read(
        args: &RunArgs,
        consent: Consent,
        cox_home: &cox_store::CoxHome,
        (settings_from, cwd, also): (&Path, &Path, &[PathBuf]),
    ) -> Result<Inputs> {
        let choice = claude::Choice::from_flags(
            args.sdk.settings.as_deref(),
            args.sdk.setting_sources.as_deref(),
        )?;
        let user_config = cox_home.root().join("config.toml");
        let places = Places {
            project_config: config::project_config(settings_from).filter(|p| *p != user_config),
            user_config,
            home_dir: crate::env::home_dir(),
            managed: config::managed_settings_path(),
            settings_from: settings_from.to_path_buf(),
            cwd: cwd.to_path_buf(),
            also: also.to_vec(),
        };
        let mut files = BTreeMap::new();
        for path in [Some(&places.user_config), places.project_config.as_ref()]
            .into_iter()
            .flatten()
        {
            files.insert(path.clone(), config::text(path));
        }
        let claude_paths = claude::paths(
            &places.managed,
            places.home_dir.as_deref(),
            Some(settings_from),
            &choice,
        );
        for (path, _) in &claude_paths {
            files.insert(path.clone(), claude::text(path));
        }
        // The trust rows are read only where a project file may allow (a
        // rough look: the resolver decides what the rules are).
        let project_files = places.project_config.iter().chain(
            claude_paths
                .iter()
                .filter(|(_, scope)| *scope == claude::Scope::Project)
                .map(|(path, _)| path),
        );
        let may_allow = project_files
            .filter_map(|path| files.get(path))
            .any(|text| matches!(text, Ok(Some(text)) if text.contains("allow")));
        let trusted = if may_allow {
            config::trust::Trust::Db(&cox_home.db_path())
                .hashes(&config::trust::scope(settings_from))
        } else {
            Ok(Vec::new())
        };
        let vars = std::env::vars()
            .filter(|(name, _)| name.starts_with("OTEL_") || VARS.contains(&name.as_str()))
            .collect();
        Ok(Inputs {
            args: args.clone(),
            consent,
            places,
            choice,
            files,
            vars,
            trusted,
        })
    }

    /// The variable `name`, when set.
    #[must_use]
    pub fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }

    /// The text read at `path`.
    fn text(&self, path: &Path) -> Result<Option<String>, String> {
        self.files.get(path).cloned().unwrap_or(Ok(None))
    }
}

/// The telemetry a session runs with.
#[derive(Debug)]
pub struct Telemetry {
    /// OTLP export is on (`COX_TELEMETRY_OTEL`, else `[telemetry] otel`),
    /// and the signals OpenTelemetry's own variables leave on.
    pub export: Option<crate::telemetry::export::Signals>,
    /// `[telemetry] endpoint`.
    pub endpoint: Option<String>,
    /// The log file's filter (`COX_LOG`, else `core.log_level`, else info).
    pub log_filter: tracing_subscriber::EnvFilter,
    /// `[telemetry] log_days`.
    pub log_days: Option<u32>,
}

/// What main turns run as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    pub tier: Tier,
    /// Architect: the permission mode is plan, whatever the files say.
    pub plan: bool,
    pub effort: Option<Effort>,
}

/// The main model a settings file names, where no flag or variable does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsModel {
    /// As written: a model, or Claude Code's alias (`sonnet`, `opus`,
    /// `haiku`).
    pub model: String,
    /// The file and line it is written on.
    pub source: String,
    /// It wins over `[tiers]` of cox's own config (the managed file's and
    /// `--settings`'); `~/.claude/settings.json`'s does not.
    pub over_config: bool,
}

/// A session's settings, resolved.
#[derive(Debug)]
pub struct Plan {
    pub permissions: config::Permissions,
    /// `[core]`, `[tiers]`, `[providers]`, `[models]`, `[context]`,
    /// `[agents]`, `[tools]` of the user's config.
    pub models: config::ModelConfig,
    pub preset: Preset,
    pub budget: BudgetConfig,
    pub telemetry: Telemetry,
    /// The terminal UI's status line command.
    pub status_line: Option<String>,
    /// Which of the project's `.mcp.json` servers the person's settings
    /// approve or turn off.
    pub mcp: claude::McpChoice,
    /// `permissions.additionalDirectories`: each folder as written (joined
    /// to the home or the session's folder), and the line to stop on when
    /// it is none.
    pub additional_dirs: Vec<(PathBuf, String)>,
    /// The main model Claude Code's settings name.
    pub model: Option<SettingsModel>,
    /// What a person should know, each said once.
    pub warnings: Vec<String>,
}

/// Resolves `inputs` into the session's plan. Pure: it reads no file, no
/// variable and no clock.
///
/// # Errors
/// A file that does not parse or a value that cannot be one (its file and
/// line), a variable or flag that cannot be used: one line.
pub fn resolve(inputs: &Inputs) -> Result<Plan> {
    let places = &inputs.places;
    let args = &inputs.args;
    let source = |path: &Path| -> Result<Option<config::Source>> {
        inputs
            .text(path)
            .map_err(|why| anyhow!("{}: {why}", path.display()))?
            .map(|text| config::Source::parse(path, text))
            .transpose()
    };
    let user = source(&places.user_config)?;
    let project = match &places.project_config {
        Some(path) => source(path)?,
        None => None,
    };
    let claude = claude::read_all_with(
        &|path: &Path| inputs.text(path),
        &places.managed,
        places.home_dir.as_deref(),
        Some(&places.settings_from),
        &inputs.choice,
    )?;
    let files = config::Files {
        user: user.as_ref(),
        project: project.as_ref(),
        claude: &claude,
    };
    let mut flags = args.rules.with_mode(permission_mode(args)?);
    flags.claude = inputs.choice.clone();
    let mut permissions = config::permissions_of(
        &files,
        places.home_dir.as_deref(),
        (&places.cwd, &places.also),
        &flags,
        &inputs.trusted,
    )?;
    let tui = config::tui_of(user.as_ref(), &claude)?;
    let models = config::models_of(user)?;
    let preset = preset(args, &models, inputs.consent)?;
    if preset.plan {
        let architect = if args.deep {
            "--deep"
        } else if args.mode.is_some() {
            "--mode architect"
        } else {
            "core.mode = architect"
        };
        if let Some(asked) = args.mode_flag().map_err(anyhow::Error::msg)?
            && asked != PermissionMode::Plan
        {
            bail!(
                "{architect} decides in plan mode, but the command line asks for {asked}: give one"
            );
        }
        permissions.mode = PermissionMode::Plan;
        permissions.mode_source = architect.into();
    }
    let budget = budget(
        &models,
        permissions.project_budget,
        args.max_budget_usd,
        &|name| inputs.var(name),
    )?;
    let telemetry = telemetry(&models, &|name| inputs.var(name), args.debug.as_deref())?;
    let mut mcp = claude::McpChoice::default();
    let mut additional_dirs = Vec::new();
    for file in claude.iter().filter(|c| c.scope != claude::Scope::Project) {
        mcp.merge(&file.mcp);
        for (dir, line) in &file.additional_dirs {
            let written = match (dir.strip_prefix("~/"), &places.home_dir) {
                (Some(rest), Some(home)) => home.join(rest),
                _ => places.cwd.join(dir),
            };
            additional_dirs.push((
                written,
                format!(
                    "{}:{line}: permissions.additionalDirectories: {dir} is not a folder",
                    file.path.display()
                ),
            ));
        }
    }
    let model = settings_model(&claude, &models, preset.tier);
    let mut warnings = std::mem::take(&mut permissions.warnings);
    warnings.dedup();
    Ok(Plan {
        permissions,
        preset,
        budget,
        telemetry,
        status_line: tui.status_line.map(|s| s.command),
        mcp,
        additional_dirs,
        model,
        models,
        warnings,
    })
}

/// The permission mode the command line asks for (`--permission-mode`,
/// `--dangerously-skip-permissions`), else `COX_PERMISSION_MODE`; `None`
/// leaves it to the files.
///
/// # Errors
/// A mode cox does not know.
pub fn permission_mode(args: &RunArgs) -> Result<Option<PermissionMode>> {
    if let Some(mode) = args.mode_flag().map_err(anyhow::Error::msg)? {
        return Ok(Some(mode));
    }
    given::env(args.permission_mode.as_ref())
        .map(|name| args::parse_mode(name).map_err(|e| anyhow!("COX_PERMISSION_MODE: {e}")))
        .transpose()
}

/// Works out the preset. Architect's think tier costs more, so in `cox run`
/// only the flag counts as consent; where the surface asks the person
/// ([`Consent::Asked`]), the config may choose it.
fn preset(args: &RunArgs, models: &config::ModelConfig, consent: Consent) -> Result<Preset> {
    let flag = if args.deep {
        Some(config::ModeName::Architect)
    } else {
        args.mode
    };
    let architect = match (flag, models.core.mode) {
        (Some(mode), _) => mode == config::ModeName::Architect,
        (None, Some(config::ModeName::Architect)) if consent == Consent::Asked => true,
        (None, Some(config::ModeName::Architect)) => {
            let from = models
                .path
                .as_ref()
                .map_or_else(String::new, |p| format!(" in {}", p.display()));
            bail!(
                "core.mode = architect{from} runs main turns on the think tier, which costs more: \
                 pass --mode architect (or --deep) to agree to it for this run, or --mode editor"
            );
        }
        (None, _) => false,
    };
    let effort = match given::flag(args.effort.as_ref()) {
        Some(effort) => Some(*effort),
        None => match given::env(args.effort.as_ref()) {
            Some(name) => Some(Effort::parse(name).ok_or_else(|| {
                anyhow!("COX_EFFORT={name}: unknown effort (low, medium, high, xhigh)")
            })?),
            None => models.core.effort,
        },
    };
    Ok(Preset {
        tier: if architect { Tier::Think } else { Tier::Code },
        plan: architect,
        effort,
    })
}

/// The `[budget]` caps: the user's config, lowered (never raised or
/// removed) by the project's, then `COX_BUDGET_SESSION_USD` and
/// `COX_BUDGET_MONTHLY_USD` for this run, then `--max-budget-usd`.
fn budget(
    models: &config::ModelConfig,
    project: BudgetConfig,
    flag: Option<f64>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<BudgetConfig> {
    let lower = |mine: Option<f64>, theirs: Option<f64>| match (mine, theirs) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let mut caps = models.budget;
    caps.session_usd = lower(caps.session_usd, project.session_usd);
    caps.monthly_usd = lower(caps.monthly_usd, project.monthly_usd);
    // Variables come after both files, as every layer does.
    for (name, slot) in [
        ("COX_BUDGET_SESSION_USD", &mut caps.session_usd),
        ("COX_BUDGET_MONTHLY_USD", &mut caps.monthly_usd),
    ] {
        if let Some(text) = var(name).filter(|v| !v.is_empty()) {
            let usd: f64 = text
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| anyhow!("{name}={text}: not an amount in US dollars"))?;
            *slot = Some(usd);
        }
    }
    // The flag is this run's own, over every file and variable.
    if let Some(usd) = flag {
        caps.session_usd = Some(usd);
    }
    Ok(caps)
}

/// The log filter and OTLP export the config and the variables ask for.
fn telemetry(
    models: &config::ModelConfig,
    var: &dyn Fn(&str) -> Option<String>,
    debug: Option<&str>,
) -> Result<Telemetry> {
    let export = if crate::telemetry::export::wanted_from(var, models.telemetry.otel)? {
        Some(crate::telemetry::export::signals(var)?)
    } else {
        None
    };
    // `-d/--debug [filter]` over COX_LOG, for this run.
    let cox_log = debug
        .map(str::to_owned)
        .or_else(|| var("COX_LOG"))
        .filter(|v| !v.is_empty());
    Ok(Telemetry {
        export,
        endpoint: models.telemetry.endpoint.clone(),
        log_filter: config::log_filter::choose(
            models.core.log_level.as_deref(),
            cox_log.as_deref(),
        )?,
        log_days: models.telemetry.log_days,
    })
}

/// The main model Claude Code's settings name: the managed file's, else
/// `--settings`', both over cox's `[tiers]`; else the person's own, where
/// cox's config names no model for the main tier.
fn settings_model(
    claude: &[claude::Settings],
    models: &config::ModelConfig,
    main: Tier,
) -> Option<SettingsModel> {
    let named = |scope: claude::Scope| {
        claude.iter().filter(|c| c.scope == scope).find_map(|c| {
            c.model
                .as_ref()
                .map(|(model, line)| (model.clone(), format!("{}:{line}", c.path.display())))
        })
    };
    if let Some((model, source)) =
        named(claude::Scope::Managed).or_else(|| named(claude::Scope::Flag))
    {
        return Some(SettingsModel {
            model,
            source,
            over_config: true,
        });
    }
    let configured = models
        .tiers
        .get(&config::TierName::from_tier(main))
        .is_some_and(|t| t.model.is_some());
    named(claude::Scope::User)
        .filter(|_| !configured)
        .map(|(model, source)| SettingsModel {
            model,
            source,
            over_config: false,
        })
}

#[cfg(test)]
mod tests;
