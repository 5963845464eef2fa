//! What a command line and the config files make of a session's
//! settings: its permission mode, its permissions and budget, and the
//! preset (architect or editor) its main turns run on.

use std::path::PathBuf;

use anyhow::{Result, bail};
use cox_protocol::config::BudgetConfig;
use cox_protocol::provider::{Effort, Tier};
use cox_protocol::types::PermissionMode;
use cox_store::CoxHome;

use crate::args::{self, RunArgs};
use crate::given;
use crate::{config, env};

/// The mode the run is in, and the effort main turns ask for.
pub(super) struct Preset {
    pub(super) tier: Tier,
    /// Architect: the permission mode is plan, whatever the config says.
    pub(super) plan: bool,
    pub(super) effort: Option<Effort>,
}

/// The permission mode the command line asks for (`--permission-mode`,
/// `--dangerously-skip-permissions`), else `COX_PERMISSION_MODE`; `None`
/// leaves it to the config files.
pub(crate) fn permission_mode(args: &RunArgs) -> Result<Option<PermissionMode>> {
    if let Some(mode) = args.mode_flag().map_err(anyhow::Error::msg)? {
        return Ok(Some(mode));
    }
    given::env(args.permission_mode.as_ref())
        .map(|name| args::parse_mode(name).map_err(|e| anyhow::anyhow!("COX_PERMISSION_MODE: {e}")))
        .transpose()
}

/// Which Claude Code settings files the run reads, and `--settings`.
///
/// # Errors
/// A bad `--setting-sources` or an unreadable `--settings` file.
pub(crate) fn claude_choice(args: &RunArgs) -> Result<config::claude::Choice> {
    config::claude::Choice::from_flags(
        args.sdk.settings.as_deref(),
        args.sdk.setting_sources.as_deref(),
    )
}

/// The permissions a session with these flags runs under, in `cwd`: the
/// config files, the rules on the command line, the mode from the flags,
/// `COX_PERMISSION_MODE` or the files, and architect's plan mode over all
/// of them. `cox run`, the terminal UI and `cox permissions check` all
/// come through here, so they cannot disagree.
///
/// # Errors
/// A config file that does not load, a bad mode, or architect asked for by
/// the config alone.
pub fn session_permissions(
    home: &CoxHome,
    cwd: &std::path::Path,
    args: &RunArgs,
    consent: Consent,
) -> Result<(config::Permissions, config::ModelConfig)> {
    session_permissions_at(home, (cwd, cwd, &[]), args, consent)
}

/// [`session_permissions`] with the project's settings read from
/// `settings` and relative rules anchored at `cwd`.
pub(super) fn session_permissions_at(
    home: &CoxHome,
    (settings, cwd, also): (&std::path::Path, &std::path::Path, &[PathBuf]),
    args: &RunArgs,
    consent: Consent,
) -> Result<(config::Permissions, config::ModelConfig)> {
    let mut flags = args.rules.with_mode(permission_mode(args)?);
    flags.claude = claude_choice(args)?;
    let mut permissions = config::load_permissions_at(
        &home.root().join("config.toml"),
        env::home_dir().as_deref(),
        (settings, cwd, also),
        &flags,
        config::trust::Trust::Db(&home.db_path()),
    )?;
    let models = config::load_models(&home.root().join("config.toml"))?;
    if preset(args, &models, consent)?.plan {
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
    Ok((permissions, models))
}

/// The `[budget]` caps: the user's config, lowered (never raised or
/// removed) by the project's, then `COX_BUDGET_SESSION_USD` and
/// `COX_BUDGET_MONTHLY_USD` for this run, then `--max-budget-usd`.
pub(super) fn budget(
    models: &config::ModelConfig,
    project: BudgetConfig,
    flag: Option<f64>,
) -> Result<BudgetConfig> {
    let lower = |mine: Option<f64>, theirs: Option<f64>| match (mine, theirs) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let mut caps = models.budget;
    caps.session_usd = lower(caps.session_usd, project.session_usd);
    caps.monthly_usd = lower(caps.monthly_usd, project.monthly_usd);
    // Variables come after both files, as every layer does.
    let [session, monthly] = env::budget_vars();
    for ((name, text), slot) in [
        (session, &mut caps.session_usd),
        (monthly, &mut caps.monthly_usd),
    ] {
        if let Some(text) = text.filter(|v| !v.is_empty()) {
            let usd: f64 = text
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| anyhow::anyhow!("{name}={text}: not an amount in US dollars"))?;
            *slot = Some(usd);
        }
    }
    // The flag is this run's own, over every file and variable.
    if let Some(usd) = flag {
        caps.session_usd = Some(usd);
    }
    Ok(caps)
}

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

/// Works out the mode. Architect's think tier costs more, so in `cox run`
/// only the flag counts as consent; where the surface asks the person
/// ([`Consent::Asked`]), the config may choose it.
pub(super) fn preset(
    args: &RunArgs,
    models: &config::ModelConfig,
    consent: Consent,
) -> Result<Preset> {
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
                anyhow::anyhow!("COX_EFFORT={name}: unknown effort (low, medium, high, xhigh)")
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
