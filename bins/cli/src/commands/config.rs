//! `cox config show [--sources]`: the effective config, and where each key
//! came from.
//!
//! The layers, weakest first: built-in defaults, `$COX_HOME/config.toml`
//! (the user's), the project's `.cox/config.toml`, Claude Code's settings
//! files (the managed one, `~/.claude/settings.json`, the project's
//! `.claude/settings(.local).json`: their rules, and their `defaultMode`
//! where it is in force), `COX_*` variables (and the providers' own
//! `*_BASE_URL`), then flags. A later layer replaces a
//! key; permission rules add up instead, each keeping its own source.
//!
//! The rules here are the ones `cox run` applies when it loads the config,
//! restated for display: a project config may deny and ask, narrow the mode
//! to `default` or `plan`, lower a `[budget]` cap, narrow `[sandbox] mode` and
//! turn its network off, and nothing else (its
//! other keys are listed as ignored). The values are read with the same
//! loaders `cox run` uses, so a file that `cox run` refuses is refused here
//! with the same line.
//!
//! Invariant: no key is listed that has no effect. A file's unknown or
//! not-yet-supported names are refused before anything is shown (see
//! `config`), and a project's keys that `cox run` drops are listed under
//! `# ignored`, never as values.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use clap::builder::StringValueParser;
use cox_protocol::types::PermissionMode;
use serde_json::{Value, json};
use toml::Table;

use crate::args::RuleFlags;
use crate::config::ModeName;
use crate::given::{self, FlagOrEnv, Given};

/// `cox config show`.
#[derive(Args, Debug, Clone)]
pub struct ShowArgs {
    /// After each key, the file, variable or flag it came from.
    #[arg(long)]
    pub sources: bool,
    /// One JSON object: key → {value, source}.
    #[arg(long)]
    pub json: bool,
    /// The folder whose project config counts (default: the current one).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// As with `cox run`: these flags are the last layer.
    #[arg(
        long,
        value_name = "NAME",
        env = "COX_PROVIDER",
        hide_env = true,
        value_parser = FlagOrEnv(StringValueParser::new())
    )]
    pub provider: Option<Given<String>>,
    #[arg(
        long,
        value_name = "MODEL",
        env = "COX_MODEL",
        hide_env = true,
        value_parser = FlagOrEnv(StringValueParser::new())
    )]
    pub model: Option<Given<String>>,
    #[arg(
        long,
        value_name = "EFFORT",
        env = "COX_EFFORT",
        hide_env = true,
        value_parser = FlagOrEnv(StringValueParser::new())
    )]
    pub effort: Option<Given<String>>,
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<ModeName>,
    #[arg(
        long,
        value_name = "MODE",
        env = "COX_PERMISSION_MODE",
        hide_env = true,
        value_parser = FlagOrEnv(crate::args::parse_mode)
    )]
    pub permission_mode: Option<Given<PermissionMode>>,
    #[command(flatten)]
    pub rules: RuleFlags,
}

/// One key's effective value.
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    value: Value,
    source: String,
}

/// Runs the command; returns the exit code.
pub fn run(args: &ShowArgs) -> i32 {
    crate::print_result(show(args))
}

fn show(args: &ShowArgs) -> Result<String> {
    let home = cox_store::CoxHome::resolve(None)?;
    let user_path = home.root().join("config.toml");
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    let cwd = std::fs::canonicalize(&cwd)
        .with_context(|| format!("--cwd {}: cannot open the folder", cwd.display()))?;
    // Load as `cox run` does, so what it refuses is refused here too.
    // The same variables `cox run` reads, refused the same way.
    // The mode from the flags or COX_PERMISSION_MODE, as `cox run` reads it.
    let asked_mode = crate::session::permission_mode(&crate::RunArgs {
        permission_mode: args.permission_mode.clone(),
        ..crate::RunArgs::default()
    })?;
    let effort = match &args.effort {
        Some(Given::Flag(value)) => Some(("--effort", value.as_str())),
        Some(variable) => variable.env().map(|value| ("COX_EFFORT", value)),
        None => None,
    };
    if let Some((name, value)) = effort.filter(|(_, value)| !value.is_empty())
        && cox_protocol::provider::Effort::parse(value).is_none()
    {
        anyhow::bail!("{name}={value}: unknown effort (low, medium, high, xhigh)");
    }
    if let Some(filter) = crate::env::cox_log()
        && !filter.is_empty()
        && let Err(why) = crate::config::log_filter::check(&filter)
    {
        anyhow::bail!("COX_LOG={filter}: {why}");
    }
    let permissions = crate::config::load_permissions(
        &user_path,
        crate::env::home_dir().as_deref(),
        &cwd,
        &args.rules.with_mode(asked_mode),
        crate::config::trust::Trust::Db(&home.db_path()),
    )?;
    crate::config::load_models(&user_path)?;

    let mut keys: BTreeMap<String, Entry> = BTreeMap::new();
    let mut rules: Vec<(String, String, String)> = Vec::new();
    let mut ignored: Vec<String> = Vec::new();
    for (key, value) in defaults() {
        set(&mut keys, key, value, "default");
    }
    if let Some(table) = read_table(&user_path)? {
        let source = user_path.display().to_string();
        let mut flat = Vec::new();
        flatten("", &Value::Object(toml_to_json(&table)), &mut flat);
        for (key, value) in flat {
            if let Some(list) = rule_list(&key) {
                for rule in value.as_array().into_iter().flatten() {
                    rules.push((list.into(), text(rule), source.clone()));
                }
            } else {
                set(&mut keys, &key, value, &source);
            }
        }
    }
    if let Some(path) = crate::config::project_config(&cwd).filter(|p| *p != user_path)
        && let Some(table) = read_table(&path)?
    {
        let source = path.display().to_string();
        let mut flat = Vec::new();
        flatten("", &Value::Object(toml_to_json(&table)), &mut flat);
        for (key, value) in flat {
            match key.as_str() {
                "permissions.deny" | "permissions.ask" => {
                    let list = rule_list(&key).unwrap_or_default();
                    for rule in value.as_array().into_iter().flatten() {
                        rules.push((list.into(), text(rule), source.clone()));
                    }
                }
                "permissions.allow" => {
                    for rule in value.as_array().into_iter().flatten() {
                        project_allow(&permissions, &path, &text(rule), &mut rules, &mut ignored);
                    }
                }
                "permissions.mode" if matches!(value.as_str(), Some("default" | "plan")) => {
                    set(&mut keys, &key, value, &source);
                }
                // A project may narrow the sandbox, never widen it.
                "sandbox.mode"
                    if permissions
                        .sandbox
                        .mode_source
                        .starts_with("project config") =>
                {
                    set(&mut keys, &key, value, &source);
                }
                "sandbox.network" if value == json!(false) => set(&mut keys, &key, value, &source),
                "budget.session_usd" | "budget.monthly_usd" => {
                    let lower = match (
                        keys.get(&key).and_then(|e| e.value.as_f64()),
                        value.as_f64(),
                    ) {
                        (Some(mine), Some(theirs)) => theirs < mine,
                        _ => true,
                    };
                    if lower {
                        set(&mut keys, &key, value, &source);
                    }
                }
                _ => ignored.push(format!(
                    "{key} (from {source}: a project config cannot set it)"
                )),
            }
        }
    }
    claude_settings(&cwd, &permissions, &mut keys, &mut rules, &mut ignored)?;
    for (var, key, value) in variables(args) {
        if let Some(value) = value
            && !value.trim().is_empty()
        {
            let key = key.replace("<main>", main_tier(args));
            let value = match key.as_str() {
                "budget.session_usd" | "budget.monthly_usd" => value
                    .trim()
                    .parse::<f64>()
                    .map_or(json!(value), |v| json!(v)),
                _ => json!(value),
            };
            set(&mut keys, &key, value, var);
        }
    }
    let main = main_tier(args);
    let flags: [(&str, Option<String>, String); 5] = [
        (
            "--provider",
            given::flag(args.provider.as_ref()).cloned(),
            "tiers.code.provider".into(),
        ),
        (
            "--model",
            given::flag(args.model.as_ref()).cloned(),
            format!("tiers.{main}.model"),
        ),
        (
            "--effort",
            given::flag(args.effort.as_ref()).cloned(),
            "core.effort".into(),
        ),
        (
            "--mode",
            args.mode.map(|m| format!("{m:?}").to_ascii_lowercase()),
            "core.mode".into(),
        ),
        (
            "--permission-mode",
            given::flag(args.permission_mode.as_ref()).map(ToString::to_string),
            "permissions.mode".into(),
        ),
    ];
    for (flag, value, key) in flags {
        if let Some(value) = value {
            set(&mut keys, &key, json!(value), flag);
        }
    }
    // --allowedTools and --disallowedTools count as --allow and --deny.
    let flag_rules = args.rules.with_mode(None);
    for (list, flag_rules) in [
        ("allow", &flag_rules.allow),
        ("ask", &flag_rules.ask),
        ("deny", &flag_rules.deny),
    ] {
        for rule in flag_rules {
            rules.push((list.into(), rule.clone(), format!("--{list}")));
        }
    }
    // What `cox run` would actually decide in, with its own explanation;
    // architect decides in plan mode, whatever else says.
    if let Some(entry) = keys.get_mut("permissions.mode") {
        if args.mode == Some(ModeName::Architect) {
            entry.value = json!(PermissionMode::Plan.to_string());
            entry.source = "--mode".into();
        } else {
            entry.value = json!(permissions.mode.to_string());
        }
    }

    if let Some(entry) = keys.get_mut("sandbox.mode") {
        entry.value = json!(crate::config::sandbox_mode_name(permissions.sandbox.mode));
    }

    if args.json {
        let mut out = serde_json::Map::new();
        for (key, entry) in &keys {
            out.insert(
                key.clone(),
                json!({"value": entry.value, "source": entry.source}),
            );
        }
        for list in ["allow", "ask", "deny"] {
            let items: Vec<Value> = rules
                .iter()
                .filter(|(l, ..)| l == list)
                .map(|(_, rule, source)| json!({"value": rule, "source": source}))
                .collect();
            out.insert(format!("permissions.{list}"), Value::Array(items));
        }
        out.insert("ignored".into(), json!(ignored));
        return Ok(serde_json::to_string_pretty(&Value::Object(out))?);
    }
    let mut lines = Vec::new();
    let width = keys.keys().map(String::len).max().unwrap_or(0).max(17);
    for (key, entry) in &keys {
        let value = text(&entry.value);
        if args.sources {
            lines.push(format!("{key:width$} = {value:<28} # {}", entry.source));
        } else {
            lines.push(format!("{key:width$} = {value}"));
        }
    }
    for list in ["allow", "ask", "deny"] {
        for (_, rule, source) in rules.iter().filter(|(l, ..)| l == list) {
            let key = format!("permissions.{list}");
            let value = format!("{rule:?}");
            if args.sources {
                lines.push(format!("{key:width$} + {value:<28} # {source}"));
            } else {
                lines.push(format!("{key:width$} + {value}"));
            }
        }
    }
    for note in &ignored {
        lines.push(format!("# ignored: {note}"));
    }
    // Dropped project tables are listed above, key by key; say the rest.
    for warning in permissions
        .warnings
        .iter()
        .filter(|w| !w.starts_with("ignoring ["))
    {
        lines.push(format!("# {warning}"));
    }
    Ok(lines.join("\n"))
}

/// The variables, the key each sets (`<main>`: the tier main turns run
/// on) and its text: those that stand for a flag as clap read them (none
/// when the flag was typed, which sets the key anyway), the others as
/// `cox run` reads them.
fn variables(args: &ShowArgs) -> Vec<(&'static str, &'static str, Option<String>)> {
    let variable = |given: Option<&str>| given.map(str::to_owned);
    let [(session_name, session_usd), (monthly_name, monthly_usd)] = crate::env::budget_vars();
    vec![
        (
            "COX_PROVIDER",
            "tiers.code.provider",
            variable(given::env(args.provider.as_ref())),
        ),
        (
            "COX_MODEL",
            "tiers.<main>.model",
            variable(given::env(args.model.as_ref())),
        ),
        (
            "COX_EFFORT",
            "core.effort",
            variable(given::env(args.effort.as_ref())),
        ),
        (
            "COX_PERMISSION_MODE",
            "permissions.mode",
            variable(given::env(args.permission_mode.as_ref())),
        ),
        (session_name, "budget.session_usd", session_usd),
        (monthly_name, "budget.monthly_usd", monthly_usd),
        ("COX_LOG", "core.log_level", crate::env::cox_log()),
        (
            crate::telemetry::export::OTEL_VAR,
            "telemetry.otel",
            std::env::var(crate::telemetry::export::OTEL_VAR).ok(),
        ),
        (
            "ANTHROPIC_BASE_URL",
            "providers.anthropic.base_url",
            std::env::var("ANTHROPIC_BASE_URL").ok(),
        ),
        (
            "OPENAI_BASE_URL",
            "providers.openai.base_url",
            std::env::var("OPENAI_BASE_URL").ok(),
        ),
    ]
}

fn main_tier(args: &ShowArgs) -> &'static str {
    if args.mode == Some(ModeName::Architect) {
        "think"
    } else {
        "code"
    }
}

/// The built-in defaults worth showing.
fn defaults() -> Vec<(&'static str, Value)> {
    let retry = cox_providers::RetryPolicy::default();
    vec![
        ("core.mode", json!("editor")),
        ("core.log_level", json!("info")),
        ("permissions.mode", json!("default")),
        ("sandbox.mode", json!("workspace-write")),
        ("telemetry.otel", json!(false)),
        ("telemetry.log_days", json!(crate::log_file::KEEP_DAYS)),
        (
            "tiers.cheap.model",
            json!("claude-haiku-4-5 (anthropic), gpt-5-mini (openai)"),
        ),
        (
            "tiers.code.model",
            json!("claude-sonnet-5 (anthropic), gpt-5.1 (openai)"),
        ),
        (
            "tiers.think.model",
            json!("claude-opus-4-5 (anthropic), gpt-5.1 (openai)"),
        ),
        (
            "providers.anthropic.base_url",
            json!(cox_providers::anthropic::DEFAULT_BASE_URL),
        ),
        (
            "providers.openai.base_url",
            json!(cox_providers::openai::DEFAULT_BASE_URL),
        ),
        ("providers.*.max_attempts", json!(retry.max_attempts)),
        ("providers.*.retry_base_ms", json!(retry.base_delay_ms)),
        ("providers.*.idle_timeout_ms", json!(retry.idle_timeout_ms)),
    ]
}

fn set(keys: &mut BTreeMap<String, Entry>, key: &str, value: Value, source: &str) {
    keys.insert(
        key.to_owned(),
        Entry {
            value,
            source: source.to_owned(),
        },
    );
}

/// A project file's allow rule: in force once trusted, else under
/// `# ignored` with what it waits for.
fn project_allow(
    permissions: &crate::config::Permissions,
    file: &Path,
    rule: &str,
    rules: &mut Vec<(String, String, String)>,
    ignored: &mut Vec<String>,
) {
    let source = file.display().to_string();
    if permissions
        .pending_allow
        .iter()
        .any(|p| p.file == file && p.rule == rule)
    {
        ignored.push(format!(
            "permissions.allow {rule:?} (from {source}: a project's allow rule waits for your \
             trust: `cox ext trust`)"
        ));
    } else {
        rules.push((
            "allow".into(),
            rule.to_owned(),
            format!("{source}, trusted"),
        ));
    }
}

/// Claude Code's settings files, in the order `cox run` reads them: their
/// rules (a project's allow rules under `# ignored` until trusted, as
/// `cox run` leaves them), their `defaultMode` where it is the one in force, and the keys
/// cox does not use, each named.
fn claude_settings(
    cwd: &Path,
    permissions: &crate::config::Permissions,
    keys: &mut BTreeMap<String, Entry>,
    rules: &mut Vec<(String, String, String)>,
    ignored: &mut Vec<String>,
) -> Result<()> {
    use crate::config::claude::{self, Scope};
    let managed =
        crate::env::managed_settings().unwrap_or_else(|| PathBuf::from(claude::MANAGED_PATH));
    let home = crate::env::home_dir();
    let files = claude::read_all(
        &managed,
        home.as_deref(),
        Some(cwd),
        &claude::Choice::default(),
    )?;
    for file in &files {
        let source = file.path.display().to_string();
        for (list, texts) in [
            ("allow", &file.permissions.allow),
            ("ask", &file.permissions.ask),
            ("deny", &file.permissions.deny),
        ] {
            for rule in texts {
                if list == "allow" && file.scope == Scope::Project {
                    project_allow(permissions, &file.path, rule, rules, ignored);
                } else {
                    rules.push((list.into(), rule.clone(), source.clone()));
                }
            }
        }
        if permissions.mode_source.ends_with(&source) {
            set(keys, "permissions.mode", json!(permissions.mode), &source);
        }
    }
    Ok(())
}

fn rule_list(key: &str) -> Option<&'static str> {
    match key {
        "permissions.allow" => Some("allow"),
        "permissions.ask" => Some("ask"),
        "permissions.deny" => Some("deny"),
        _ => None,
    }
}

fn read_table(path: &Path) -> Result<Option<Table>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(toml::from_str(&text).map_err(|e| {
            anyhow::anyhow!("{}: {}", path.display(), e.message().replace('\n', " "))
        })?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow::anyhow!("{}: cannot read: {e}", path.display())),
    }
}

fn toml_to_json(table: &Table) -> serde_json::Map<String, Value> {
    serde_json::to_value(table)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
}

/// Dotted keys for nested tables; arrays and scalars are leaves. A model
/// row (`models."id"`) stays one key, its table the value.
fn flatten(prefix: &str, value: &Value, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(map) if prefix.split('.').count() < 3 || prefix.is_empty() => {
            if prefix.starts_with("models.") {
                out.push((prefix.to_owned(), value.clone()));
                return;
            }
            for (key, inner) in map {
                let key = if prefix.is_empty() {
                    key.clone()
                } else if key.contains('.') {
                    format!("{prefix}.\"{key}\"")
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&key, inner, out);
            }
        }
        _ => out.push((prefix.to_owned(), value.clone())),
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
