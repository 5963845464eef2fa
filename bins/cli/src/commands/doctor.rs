//! `cox doctor`: is this machine ready to run cox, and what would surprise
//! the person using it?
//!
//! Each check is one row, `ok`, `warn` or `fail`, with a one-line detail: the
//! config parses, which API keys are set, `COX_HOME` takes a file, `cox.db`
//! is sound, git is there for checkpoints, the sandbox can start a shell,
//! no price row is stale, and every configured model has a price. A `fail`
//! means `cox run` would not work as it is; a `warn` means it runs, but
//! something (checkpoints, costs, the choice of provider) is not what it
//! seems. Any `fail` makes the exit code 1. The sandbox's rows are
//! [`sandbox`]'s, the price rows [`prices`]'.
//!
//! Invariants:
//! - nothing secret is printed: a key is reported by its variable's name and
//!   its length, never a character of its value, and a configured variable
//!   name that does not look like one (a pasted key) is not echoed either;
//! - the record is left as it was: a missing `cox.db` is not created and an
//!   empty one is not set up, a damaged one is only read, and the
//!   writability probe is a temporary file removed at once. A database from
//!   an older cox is brought up to date on open, as any `cox run` would;
//! - the decisions (which rows are stale, which models lack a price, what a
//!   key row says) are plain functions of their inputs (today's month and
//!   the variables are passed in), tested without touching the machine.

mod prices;
mod sandbox;

#[cfg(test)]
use sandbox::outside_uid;
use sandbox::sandbox;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use cox_protocol::sandbox::{ExecRequest, Sandbox};
use cox_store::{CoxHome, Db, clock};
use serde::Serialize;

use crate::config::{ModelConfig, PermissionFlags, load_models, load_permissions};
use crate::providers::full_catalog;

pub use prices::{stale_prices, unpriced_models};

/// `cox doctor`.
#[derive(Args, Debug, Clone)]
pub struct DoctorArgs {
    /// Print a JSON array of `{status, check, detail}` instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// How a check came out.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

/// One row of the report.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub status: Status,
    pub check: std::borrow::Cow<'static, str>,
    pub detail: String,
}

impl Row {
    fn new(
        status: Status,
        check: impl Into<std::borrow::Cow<'static, str>>,
        detail: impl Into<String>,
    ) -> Self {
        let detail: String = detail.into();
        // One row is one line, whatever an OS or SQLite message holds.
        let detail = detail
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        Self {
            status,
            check: check.into(),
            detail,
        }
    }
}

/// Runs every check, prints the report, and returns the exit code: 1 when
/// a check failed, else 0.
pub fn run(args: &DoctorArgs) -> i32 {
    let rows = checks();
    let text = if args.json {
        serde_json::to_string(&rows).unwrap_or_else(|_| "[]".to_owned())
    } else {
        table(&rows)
    };
    // A closed pipe (`| head`) is not an error worth a panic.
    let _ = writeln!(std::io::stdout().lock(), "{text}");
    i32::from(rows.iter().any(|r| r.status == Status::Fail))
}

/// The variable `name`, when set to something other than blanks.
fn var(name: &str) -> Option<String> {
    std::env::var_os(name)
        .map(|v| v.to_string_lossy().into_owned())
        .filter(|v| !v.trim().is_empty())
}

fn checks() -> Vec<Row> {
    let today = clock::now_rfc3339();
    let resolved = CoxHome::resolve(None).ok();
    let (config_row, models, home_row, db_row) = match CoxHome::resolve(None) {
        Ok(home) => {
            let (config_row, models) = config(&home);
            (
                config_row,
                models,
                home_writable(&home),
                database(&home.db_path()),
            )
        }
        Err(err) => (
            Row::new(Status::Warn, "config", format!("not read: {err}")),
            ModelConfig::default(),
            Row::new(Status::Fail, "cox home", err.to_string()),
            Row::new(Status::Fail, "cox.db", err.to_string()),
        ),
    };
    let catalog = full_catalog(&models);
    let local_openai = crate::providers::is_local_openai(&models);
    let unread = config_row.status == Status::Fail;
    let mut dates = stale_prices(&catalog, &models, clock::month_of(&today));
    let prices = if unread {
        dates
            .detail
            .push_str(" (shipped rows only: the config was not read)");
        Row::new(
            Status::Warn,
            "model prices",
            "not checked: the config was not read",
        )
    } else {
        unpriced_models(&models, &catalog, &var, local_openai)
    };
    let mut rows = vec![config_row, api_keys(&models, &var), home_row, db_row, git()];
    if let Some(home) = resolved.as_ref() {
        rows.push(match crate::commands::checkpoints::store_size(home) {
            Ok(size) => Row::new(Status::Ok, "checkpoints", size),
            Err(err) => Row::new(Status::Warn, "checkpoints", crate::one_line(&err)),
        });
    }
    rows.extend(sandbox(resolved.as_ref()));
    if let Some(home) = resolved.as_ref() {
        rows.extend(mcp_servers(home));
        rows.push(hooks(home));
        rows.push(telemetry(home, &models, &var));
    }
    rows.push(web_search(&models, &catalog));
    rows.extend([dates, prices]);
    rows
}

/// Whether the provider's own web search is on, and for which models.
fn web_search(models: &ModelConfig, catalog: &cox_protocol::catalog::Catalog) -> Row {
    if models.tools.web_search != Some(true) {
        return Row::new(
            Status::Ok,
            "web search",
            "off ([tools] web_search = true and a WebSearch allow rule turn it on)",
        );
    }
    let code = models
        .tiers
        .get(&crate::config::TierName::Code)
        .and_then(|t| t.model.clone());
    match code {
        Some(model) if catalog.get(&model).is_some_and(|m| m.web_search) => Row::new(
            Status::Ok,
            "web search",
            format!("on for {model}, where a WebSearch allow rule lets it run"),
        ),
        Some(model) => Row::new(
            Status::Warn,
            "web search",
            format!(
                "on in [tools], but {model} has no server-side web search: off for it \
                 (`[models.\"{model}\"] web_search = true` if it does)"
            ),
        ),
        None => {
            let able: Vec<String> = catalog
                .models()
                .iter()
                .filter(|m| m.web_search)
                .map(|m| m.id.clone())
                .collect();
            Row::new(
                Status::Ok,
                "web search",
                format!(
                    "on for the models that have it ({}), where a WebSearch allow rule lets it run",
                    able.join(", ")
                ),
            )
        }
    }
}

/// The log and OTLP export as a session here would have them: where the
/// log goes and for how long, and whether export is on and where it sends
/// (header names only: their values are often keys).
fn telemetry(home: &CoxHome, models: &ModelConfig, var: &dyn Fn(&str) -> Option<String>) -> Row {
    use crate::telemetry::export;
    const NAME: &str = "telemetry";
    let days = models
        .telemetry
        .log_days
        .map_or(crate::log_file::KEEP_DAYS, u64::from);
    let log = format!("log in {} (kept {days} days)", home.logs_dir().display());
    let on = match export::wanted(models.telemetry.otel) {
        Ok(on) => on,
        Err(err) => return Row::new(Status::Fail, NAME, format!("{err}; {log}")),
    };
    if !on {
        return Row::new(Status::Ok, NAME, format!("OTLP export off; {log}"));
    }
    if !export::available() {
        return Row::new(
            Status::Fail,
            NAME,
            "OTLP export is on but this binary was built without the `otel` cargo feature",
        );
    }
    let to = export::endpoints(models.telemetry.endpoint.as_deref(), var);
    let service = var("OTEL_SERVICE_NAME").unwrap_or_else(|| "cox".to_owned());
    let headers = var("OTEL_EXPORTER_OTLP_HEADERS");
    let names: Vec<&str> = headers
        .as_deref()
        .unwrap_or_default()
        .split(',')
        .filter_map(|entry| entry.split_once('=').map(|(key, _)| key.trim()))
        .filter(|key| !key.is_empty())
        .collect();
    let mut detail = format!(
        "OTLP export on: traces to {}, logs to {}, service {service}",
        to.traces, to.logs
    );
    if !names.is_empty() {
        detail.push_str(&format!(", headers {}", names.join(", ")));
    }
    if std::env::var(crate::telemetry::CAPTURE_VAR)
        .is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"))
    {
        detail.push_str(", with message content");
    }
    detail.push_str(&format!("; {log}"));
    match export::header_warnings(headers.as_deref()).first() {
        Some(warning) => Row::new(Status::Warn, NAME, format!("{warning}; {detail}")),
        None => Row::new(Status::Ok, NAME, detail),
    }
}

/// The hooks a session here would have: how many run, how many wait for
/// trust (a warning naming `cox ext trust`), and the first thing wrong with
/// a settings file.
fn hooks(home: &CoxHome) -> Row {
    let Ok(cwd) = std::env::current_dir().and_then(std::fs::canonicalize) else {
        return Row::new(Status::Warn, "hooks", "not read: no current folder");
    };
    let home_dir = crate::env::home_dir();
    let plugins = crate::ext::plugins::discover(home.root(), &[]).plugins;
    let found = crate::ext::hooks::find(
        &crate::ext::hooks::Places {
            user_config: &home.root().join("config.toml"),
            home_dir: home_dir.as_deref(),
            cwd: &cwd,
            plugins: &plugins,
            claude: &crate::config::claude::Choice::default(),
        },
        &home.db_path(),
    );
    let (runs, waits) = (found.trusted.len(), found.pending.len());
    let counted = format!("{runs} run, {waits} wait for trust");
    if waits > 0 {
        return Row::new(
            Status::Warn,
            "hooks",
            format!("{counted}: review them with `cox ext list`, then `cox ext trust`"),
        );
    }
    match found.warnings.first() {
        Some(first) => Row::new(
            Status::Warn,
            "hooks",
            crate::output::printable(&format!("{counted}; {first}")),
        ),
        None => Row::new(Status::Ok, "hooks", counted),
    }
}

/// The MCP servers a session here would start, by name and source, read
/// from the files only (`cox mcp list` connects them); a warning for an
/// entry that does not load, or for servers this binary cannot start.
fn mcp_servers(home: &CoxHome) -> Vec<Row> {
    let Ok(cwd) = std::env::current_dir() else {
        return vec![Row::new(
            Status::Warn,
            "mcp servers",
            "not read: no current folder",
        )];
    };
    let home_dir = crate::env::home_dir();
    let plugins = crate::ext::plugins::discover(home.root(), &[]).plugins;
    let loaded = crate::mcp::load(
        &crate::mcp::Sources {
            user_config: &home.root().join("config.toml"),
            home_dir: home_dir.as_deref(),
            project: &cwd,
            flags: &[],
            strict: false,
            plugins: &plugins,
            approvals: &crate::config::claude::mcp_choice(
                home_dir.as_deref(),
                &cwd,
                &crate::config::claude::Choice::default(),
            ),
        },
        &|name| std::env::var(name).ok(),
    );
    let loaded = match loaded {
        Ok(loaded) => loaded,
        Err(err) => {
            return vec![Row::new(Status::Warn, "mcp servers", crate::one_line(&err))];
        }
    };
    let names: Vec<String> = loaded
        .servers
        .iter()
        .map(|s| format!("{} ({})", s.name, s.origin.kind.label()))
        .collect();
    let listed = if names.is_empty() {
        "none configured".to_owned()
    } else {
        format!("{}: {}", names.len(), names.join(", "))
    };
    let client = crate::mcp::installed();
    let first = if let Some(first) = loaded.notices.first() {
        Row::new(Status::Warn, "mcp servers", format!("{listed}; {first}"))
    } else if !loaded.servers.is_empty() && client.is_none() {
        Row::new(
            Status::Warn,
            "mcp servers",
            format!("{listed}; this binary has no MCP client (`cox` has one)"),
        )
    } else {
        Row::new(Status::Ok, "mcp servers", crate::output::printable(&listed))
    };
    let mut rows = vec![first];
    // What the sandbox leaves the stdio servers, said once.
    let stdio: Vec<&crate::mcp::McpServer> = loaded
        .servers
        .iter()
        .filter(|s| matches!(s.transport, crate::mcp::Transport::Stdio { .. }))
        .collect();
    if let Some(example) = stdio.iter().find(|s| s.sandbox) {
        let free: Vec<&str> = stdio
            .iter()
            .filter(|s| !s.sandbox)
            .map(|s| s.name.as_str())
            .collect();
        let offline: Vec<&str> = stdio
            .iter()
            .filter(|s| s.sandbox && !s.network)
            .map(|s| s.name.as_str())
            .collect();
        let mut line = crate::mcp::confinement(example)
            .unwrap_or_default()
            .replace("the network (network = false cuts it off)", "the network");
        line = format!("sandboxed stdio servers: {line}");
        if !offline.is_empty() {
            line.push_str(&format!("; no network for {}", offline.join(", ")));
        }
        if !free.is_empty() {
            line.push_str(&format!(
                "; unsandboxed (sandbox = false): {}",
                free.join(", ")
            ));
        }
        rows.push(Row::new(
            Status::Ok,
            "mcp sandbox",
            crate::output::printable(&line),
        ));
    }
    // One row per HTTP server: where its login stands.
    let http: Vec<&crate::mcp::McpServer> = loaded
        .servers
        .iter()
        .filter(|s| matches!(s.transport, crate::mcp::Transport::Http { .. }))
        .collect();
    if let Some(client) = client {
        if !http.is_empty() {
            rows.push(Row::new(
                Status::Ok,
                "mcp logins",
                client.login_store(home.root()),
            ));
        }
        for server in http {
            let status = client.login_status(home.root(), server);
            let level = if status.starts_with("expired") && !status.contains("refreshed") {
                Status::Warn
            } else {
                Status::Ok
            };
            rows.push(Row::new(
                level,
                format!("mcp auth {}", server.name),
                crate::output::printable(&status),
            ));
        }
    }
    rows
}

/// The rows as an aligned table.
#[must_use]
pub fn table(rows: &[Row]) -> String {
    let width = rows.iter().map(|r| r.check.len()).max().unwrap_or(0);
    rows.iter()
        .map(|r| {
            format!(
                "{:<4}  {:<width$}  {}",
                r.status.as_str(),
                r.check,
                r.detail
            )
            .trim_end()
            .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The user's config and the project's, read as `cox run` reads them.
fn config(home: &CoxHome) -> (Row, ModelConfig) {
    const NAME: &str = "config";
    let path = home.root().join("config.toml");
    let cwd = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .unwrap_or_else(|_| PathBuf::from("."));
    let models = match load_models(&path) {
        Ok(models) => models,
        Err(err) => {
            let detail = crate::one_line(&err);
            return (Row::new(Status::Fail, NAME, detail), ModelConfig::default());
        }
    };
    let flags = PermissionFlags::default();
    let trust = crate::config::trust::Trust::Db(&home.db_path());
    let row = match load_permissions(
        &path,
        crate::env::home_dir().as_deref(),
        &cwd,
        &flags,
        trust,
    ) {
        Err(err) => Row::new(Status::Fail, NAME, crate::one_line(&err)),
        Ok(perms) if !perms.warnings.is_empty() => {
            Row::new(Status::Warn, NAME, perms.warnings.join("; "))
        }
        Ok(_) if path.exists() => Row::new(Status::Ok, NAME, format!("{} parses", path.display())),
        Ok(_) => Row::new(
            Status::Ok,
            NAME,
            format!("no {} (the defaults apply)", path.display()),
        ),
    };
    (row, models)
}

/// Whether `name` could be an environment variable's name: a key pasted in
/// its place (`sk-ant-…`) has dashes, and must not be printed.
fn is_var_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Which key variables are set, by name and length only.
pub fn api_keys(models: &ModelConfig, vars: &dyn Fn(&str) -> Option<String>) -> Row {
    const NAME: &str = "api keys";
    let mut names: Vec<(String, Option<&str>)> = vec![
        ("ANTHROPIC_API_KEY".to_owned(), None),
        ("OPENAI_API_KEY".to_owned(), None),
    ];
    let mut odd = Vec::new();
    for (provider, settings) in &models.providers {
        let Some(name) = &settings.api_key_env else {
            continue;
        };
        if !is_var_name(name) {
            odd.push(format!(
                "[providers.{provider}] api_key_env is not a variable name (a key pasted in its \
                 place? it is not shown)"
            ));
        } else if !names.iter().any(|(n, _)| n == name) {
            names.push((name.clone(), Some(provider)));
        }
    }
    let mut parts = Vec::new();
    let mut any = false;
    for (name, provider) in &names {
        let label = match provider {
            Some(p) => format!("{name} (for {p})"),
            None => name.clone(),
        };
        match vars(name) {
            Some(value) => {
                any = true;
                parts.push(format!(
                    "{label} set ({} characters)",
                    value.chars().count()
                ));
            }
            None => parts.push(format!("{label} not set")),
        }
    }
    let base = vars("OPENAI_BASE_URL").is_some();
    if base {
        parts.push("OPENAI_BASE_URL set".to_owned());
    }
    let mut status = if odd.is_empty() {
        Status::Ok
    } else {
        Status::Warn
    };
    parts.extend(odd);
    if !any && !base {
        status = Status::Warn;
        parts.push(
            "cox run needs one of them (or OPENAI_BASE_URL for a local server); the \
             scripted demo needs none"
                .to_owned(),
        );
    }
    Row::new(status, NAME, parts.join("; "))
}

/// A temporary file is created in the home (or, when it does not exist yet,
/// in the folder it would be created in) and removed.
fn home_writable(home: &CoxHome) -> Row {
    const NAME: &str = "cox home";
    let root = home.root();
    let dir = if root.exists() {
        root
    } else {
        root.ancestors().find(|d| d.exists()).unwrap_or(root)
    };
    let probe = dir.join(format!(
        ".doctor-probe-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
    ));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .and_then(|_| std::fs::remove_file(&probe));
    match written {
        Err(err) => Row::new(
            Status::Fail,
            NAME,
            format!(
                "COX_HOME {}: cannot write in {}: {err}",
                root.display(),
                dir.display()
            ),
        ),
        Ok(()) if dir == root => {
            Row::new(Status::Ok, NAME, format!("{} is writable", root.display()))
        }
        Ok(()) => Row::new(
            Status::Ok,
            NAME,
            format!(
                "{} does not exist yet; cox can create it in {}",
                root.display(),
                dir.display()
            ),
        ),
    }
}

/// Opens an existing `cox.db` and asks SQLite to check it.
fn database(path: &Path) -> Row {
    const NAME: &str = "cox.db";
    // Checked first: opening would create the file.
    let Ok(meta) = std::fs::metadata(path) else {
        return Row::new(
            Status::Ok,
            NAME,
            format!("not created yet ({})", path.display()),
        );
    };
    if meta.is_file() && meta.len() == 0 {
        return Row::new(
            Status::Ok,
            NAME,
            format!("{} is empty; the next run sets it up", path.display()),
        );
    }
    let db = match Db::open(path) {
        Ok(db) => db,
        Err(err) => return Row::new(Status::Fail, NAME, err.to_string()),
    };
    match db.integrity_check() {
        Ok(report) if report == "ok" => match db.schema_version() {
            Ok(version) => Row::new(
                Status::Ok,
                NAME,
                format!("{}: schema version {version}, integrity ok", path.display()),
            ),
            Err(err) => Row::new(Status::Fail, NAME, err.to_string()),
        },
        Ok(report) => {
            let problems: Vec<&str> = report.lines().take(3).collect();
            Row::new(
                Status::Fail,
                NAME,
                format!(
                    "{}: integrity check failed: {}",
                    path.display(),
                    problems.join("; ")
                ),
            )
        }
        Err(err) => Row::new(Status::Fail, NAME, err.to_string()),
    }
}

/// Checkpoints need git; cox runs without them.
fn git() -> Row {
    const NAME: &str = "git";
    const WITHOUT: &str = "checkpoints need git; cox runs without them";
    match std::process::Command::new("git").arg("--version").output() {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            Row::new(
                Status::Ok,
                NAME,
                text.lines().next().unwrap_or("git").trim(),
            )
        }
        Ok(out) => Row::new(
            Status::Warn,
            NAME,
            format!("`git --version` failed ({}): {WITHOUT}", out.status),
        ),
        Err(err) => Row::new(
            Status::Warn,
            NAME,
            format!("git not found on PATH ({err}): {WITHOUT}"),
        ),
    }
}

#[cfg(test)]
mod tests;
