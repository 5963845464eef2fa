//! `cox config show [--sources]`: the effective config, and where each key
//! came from.
//!
//! It reads and resolves the session's plan as `cox run` does
//! ([`crate::plan`]), so a file `cox run` refuses is refused here with the
//! same line, and the permission mode, the rules, the sandbox mode, the
//! budget caps and the main model shown are the ones a session here decides
//! with. Each value is listed with the file and line (or the variable, or
//! the flag) it came from: the TOML keys of `$COX_HOME/config.toml` and
//! the project's `.cox/config.toml` (a project's only where it may set
//! them: deny and ask, a narrower mode or sandbox, a lower cap); every rule
//! the plan holds, Claude Code's files' included; their `defaultMode`,
//! `model`, `statusLine` and `env` (names only, never values); then the
//! `COX_*` variables (and the providers' own `*_BASE_URL`) and the flags.
//!
//! Invariant: no key is listed that has no effect. A file's unknown or
//! not-yet-supported names are refused before anything is shown (see
//! `config`); a project's keys that `cox run` drops, and allow rules that
//! wait for the person's trust, are listed under `# ignored`, never as
//! values; the plan's warnings (Claude Code keys cox does not use) follow.

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
    // Read and resolved as `cox run` does (one plan), so what it refuses is
    // refused here too, and the mode and rules are the ones it decides in.
    let run = crate::RunArgs {
        cwd: Some(cwd.clone()),
        permission_mode: args.permission_mode.clone(),
        rules: args.rules.clone(),
        mode: args.mode,
        ..crate::RunArgs::default()
    };
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
    let (inputs, plan) = crate::plan::read_in(&home, &cwd, &run, crate::plan::Consent::Asked)?;
    let permissions = &plan.permissions;
    // Each file's text as the plan read it, to say on which line a value
    // is written.
    let texts = Texts(&inputs);

    let mut keys: BTreeMap<String, Entry> = BTreeMap::new();
    let mut rules: Vec<(String, String, String)> = Vec::new();
    let mut ignored: Vec<String> = Vec::new();
    for (key, value) in defaults() {
        set(&mut keys, key, value, "default");
    }
    if let Some(table) = read_table(&texts, &user_path)? {
        let mut flat = Vec::new();
        flatten("", &Value::Object(toml_to_json(&table)), &mut flat);
        for (key, value) in flat {
            if rule_list(&key).is_none() {
                let source = texts.at(&user_path, &key);
                set(&mut keys, &key, value, &source);
            }
        }
    }
    if let Some(path) = crate::config::project_config(&cwd).filter(|p| *p != user_path)
        && let Some(table) = read_table(&texts, &path)?
    {
        let mut flat = Vec::new();
        flatten("", &Value::Object(toml_to_json(&table)), &mut flat);
        for (key, value) in flat {
            let source = texts.at(&path, &key);
            match key.as_str() {
                // The rules are the plan's, below.
                "permissions.deny" | "permissions.ask" | "permissions.allow" => {}
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
    plan_rules(&plan, &texts, &mut rules, &mut ignored);
    claude_keys(&plan, &texts, &mut keys);
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
    // The effective caps, whatever lowered them.
    for (key, usd) in [
        ("budget.session_usd", plan.budget.session_usd),
        ("budget.monthly_usd", plan.budget.monthly_usd),
    ] {
        if let (Some(entry), Some(usd)) = (keys.get_mut(key), usd) {
            entry.value = json!(usd);
        }
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
    for warning in plan
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

/// The rules the plan decides with, each with the file and line (or the
/// flag) it came from; a project's allow rules that wait for trust under
/// `# ignored`.
fn plan_rules(
    plan: &crate::plan::Plan,
    texts: &Texts<'_>,
    rules: &mut Vec<(String, String, String)>,
    ignored: &mut Vec<String>,
) {
    use cox_permission::Origin;
    for (list, rule) in plan.permissions.engine.rules() {
        let source = match &rule.origin {
            Origin::BuiltIn => continue,
            Origin::Flag => format!("--{list}"),
            Origin::TrustedProject(path) => format!("{}, trusted", texts.rule_at(path, &rule.text)),
            Origin::User(path) | Origin::Project(path) | Origin::Managed(path) => {
                texts.rule_at(path, &rule.text)
            }
            Origin::Command(path) => path.display().to_string(),
        };
        rules.push((list.to_owned(), rule.text.clone(), source));
    }
    for pending in &plan.permissions.pending_allow {
        ignored.push(format!(
            "permissions.allow {:?} (from {}:{}: a project's allow rule waits for your trust: \
             `cox ext trust`)",
            pending.rule,
            pending.file.display(),
            pending.line
        ));
    }
}

/// What Claude Code's settings set besides rules: the mode where it is in
/// force, the main model, the status line, the variables processes get.
fn claude_keys(plan: &crate::plan::Plan, texts: &Texts<'_>, keys: &mut BTreeMap<String, Entry>) {
    let permissions = &plan.permissions;
    for path in texts.files() {
        let source = path.display().to_string();
        if permissions.mode_source.ends_with(&source) && source.ends_with(".json") {
            let at = texts.needle_at(path, "defaultMode");
            set(keys, "permissions.mode", json!(permissions.mode), &at);
        }
    }
    if let Some(model) = &plan.model {
        let key = if plan.preset.tier == cox_protocol::provider::Tier::Think {
            "tiers.think.model"
        } else {
            "tiers.code.model"
        };
        let shown = match crate::providers::alias_tier(&model.model) {
            Some(tier) => format!("{} (the {} tier's model)", model.model, tier.as_str()),
            None => model.model.clone(),
        };
        set(keys, key, json!(shown), &model.source);
    }
    if let Some(command) = &plan.status_line
        && !keys.contains_key("tui.status_line.command")
    {
        set(
            keys,
            "tui.status_line.command",
            json!(command),
            "statusLine of Claude Code's settings",
        );
    }
    for (name, _) in &permissions.sandbox.env.set {
        // The value may be a secret: only that it is set.
        set(
            keys,
            &format!("env.{name}"),
            json!("(set)"),
            "env of Claude Code's settings",
        );
    }
}

/// The settings files as the plan read them, to find the line a value is
/// written on.
struct Texts<'a>(&'a crate::plan::Inputs);

impl Texts<'_> {
    fn text(&self, path: &Path) -> String {
        match self.0.files.get(path) {
            Some(Ok(Some(text))) => text.clone(),
            _ => String::new(),
        }
    }

    /// `path:line` where the dotted `key` is set: its last part, in its
    /// table (`[sandbox]` for `sandbox.mode`) when the file has that header.
    fn at(&self, path: &Path, key: &str) -> String {
        let (table, last) = key.rsplit_once('.').unwrap_or(("", key));
        let last = last.trim_matches('"');
        let text = self.text(path);
        let lines: Vec<&str> = text.lines().collect();
        let header = format!("[{table}]");
        let from = lines
            .iter()
            .position(|l| l.trim() == header)
            .map_or(0, |i| i + 1);
        let line = lines
            .iter()
            .enumerate()
            .skip(from)
            .find(|(_, l)| {
                l.trim_start()
                    .strip_prefix(last)
                    .is_some_and(|rest| rest.trim_start().starts_with('='))
            })
            .map_or(from.max(1), |(i, _)| i + 1);
        format!("{}:{line}", path.display())
    }

    /// `path:line` where `needle` first appears.
    fn needle_at(&self, path: &Path, needle: &str) -> String {
        let line = self
            .text(path)
            .lines()
            .position(|l| l.contains(needle))
            .map_or(1, |i| i + 1);
        format!("{}:{line}", path.display())
    }

    /// `path:line` where `rule` is written, quoted.
    fn rule_at(&self, path: &Path, rule: &str) -> String {
        let text = self.text(path);
        let quoted = [format!("\"{rule}\""), format!("'{rule}'")];
        let line = text
            .lines()
            .position(|l| quoted.iter().any(|q| l.contains(q.as_str())))
            .map_or(1, |i| i + 1);
        format!("{}:{line}", path.display())
    }

    /// The settings files the plan read that exist.
    fn files(&self) -> impl Iterator<Item = &PathBuf> {
        self.0
            .files
            .iter()
            .filter(|(_, text)| matches!(text, Ok(Some(_))))
            .map(|(path, _)| path)
    }
}

fn rule_list(key: &str) -> Option<&'static str> {
    match key {
        "permissions.allow" => Some("allow"),
        "permissions.ask" => Some("ask"),
        "permissions.deny" => Some("deny"),
        _ => None,
    }
}

/// A config file's table, from the text the plan read (which parsed it
/// already).
fn read_table(texts: &Texts<'_>, path: &Path) -> Result<Option<Table>> {
    let text = texts.text(path);
    if text.is_empty() {
        return Ok(None);
    }
    Ok(Some(toml::from_str(&text).map_err(|e| {
        anyhow::anyhow!("{}: {}", path.display(), e.message().replace('\n', " "))
    })?))
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
