//! `cox ext list [--json]` and `cox ext trust [NAME…|--all]`: the
//! extensions a session in this folder picks up, and the trust a project's
//! (or a plugin's) hooks wait for.
//!
//! `list` shows, each with where it comes from, its state and any warning:
//! the instruction files, the skills, the custom commands, the plugins,
//! the agent definitions, the hooks and the MCP servers. Nothing is started or run to list them.
//!
//! `trust` with no name lists the hooks and the project's allow rules that
//! wait for trust; with names (a hook's, a rule as written, `project` for
//! all of the project's, or a plugin's name for all of its hooks) or
//! `--all`, it trusts them as they are now, so a later change to one is
//! pending again.
//!
//! Exit codes: 0 done; 1 with one line on stderr (an unknown name, a
//! config that does not load, `cox.db` that cannot be written).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::config::trust::PendingAllow;
use crate::ext::commands::{Commands, Entry};
use crate::ext::hooks::{self, Places};
use crate::ext::plugins::{self, Found as PluginFound};
use crate::output::printable;

/// `cox ext …`.
#[derive(clap::Subcommand, Debug)]
pub enum ExtCommand {
    /// Every extension a session here picks up: instruction files,
    /// skills, commands, plugins, hooks and MCP servers, with where each
    /// comes from and its state.
    List {
        /// One JSON object instead of the table.
        #[arg(long)]
        json: bool,
        /// A plugin to include, as `--plugin-dir` gives it to a session.
        #[arg(long = "plugin-dir", value_name = "DIR")]
        plugin_dir: Vec<PathBuf>,
    },
    /// With no name: the hooks and allow rules that wait for trust. With
    /// names (a hook's, a rule, `project`, or a plugin's) or --all: trust
    /// them as they are now.
    Trust {
        names: Vec<String>,
        /// Every pending hook and allow rule.
        #[arg(long, conflicts_with = "names")]
        all: bool,
        /// A plugin to include, as `--plugin-dir` gives it to a session.
        #[arg(long = "plugin-dir", value_name = "DIR")]
        plugin_dir: Vec<PathBuf>,
    },
}

/// Runs `cox ext …`; the exit code.
#[must_use]
pub fn run(command: &ExtCommand) -> i32 {
    crate::print_result(match command {
        ExtCommand::List { json, plugin_dir } => list(plugin_dir, *json),
        ExtCommand::Trust {
            names,
            all,
            plugin_dir,
        } => trust(plugin_dir, names, *all),
    })
}

/// What the folder and its home hold.
struct Here {
    home: cox_store::CoxHome,
    home_dir: Option<PathBuf>,
    cwd: PathBuf,
    plugins: plugins::Plugins,
}

impl Here {
    fn read(plugin_dir: &[PathBuf]) -> Result<Here> {
        let home = cox_store::CoxHome::resolve(None)?;
        home.prepare()?;
        let cwd = std::env::current_dir().context("cannot read the current folder")?;
        let cwd = std::fs::canonicalize(&cwd)
            .with_context(|| format!("{}: cannot open the folder", cwd.display()))?;
        let plugins = plugins::discover(home.root(), plugin_dir);
        Ok(Here {
            home_dir: crate::env::home_dir(),
            home,
            cwd,
            plugins,
        })
    }

    fn user_config(&self) -> PathBuf {
        self.home.root().join("config.toml")
    }

    /// The project's allow rules no one trusted as they are now; the
    /// config must load, as a session's would.
    fn pending_allow(&self) -> Result<Vec<PendingAllow>> {
        Ok(crate::config::load_permissions(
            &self.user_config(),
            self.home_dir.as_deref(),
            &self.cwd,
            &crate::config::PermissionFlags::default(),
            crate::config::trust::Trust::Db(&self.home.db_path()),
        )?
        .pending_allow)
    }

    fn hooks(&self) -> hooks::Found {
        let user_config = self.user_config();
        hooks::find(
            &Places {
                user_config: &user_config,
                home_dir: self.home_dir.as_deref(),
                cwd: &self.cwd,
                plugins: &self.plugins.plugins,
                claude: &crate::config::claude::Choice::default(),
            },
            &self.home.db_path(),
        )
    }

    /// `path` with `~` for the home.
    fn shown(&self, path: &Path) -> String {
        match self
            .home_dir
            .as_deref()
            .and_then(|h| path.strip_prefix(h).ok())
        {
            Some(rest) => format!("~/{}", rest.display()),
            None => path.display().to_string(),
        }
    }
}

fn list(plugin_dir: &[PathBuf], as_json: bool) -> Result<String> {
    let here = Here::read(plugin_dir)?;
    // The config must load, as a session's would.
    crate::config::load_models(&here.user_config())?;
    let mut warnings: Vec<String> = here.plugins.warnings.clone();
    let instructions = crate::instructions::gather_with(
        here.home.root(),
        here.home_dir.as_deref(),
        &here.cwd,
        &crate::ext::plugins::Plugin::skill_dirs(&here.plugins.plugins),
    );
    warnings.extend(instructions.warnings.iter().cloned());
    let base = crate::instructions::repo_root(&here.cwd).unwrap_or_else(|| here.cwd.clone());
    let catalog = crate::providers::full_catalog(&crate::config::load_models(&here.user_config())?);
    let models: Vec<String> = catalog.models().iter().map(|m| m.id.clone()).collect();
    let commands = Commands::find(
        &crate::ext::commands::Places {
            cox_home: here.home.root(),
            home_dir: here.home_dir.as_deref(),
            base: &base,
            plugins: &here.plugins.plugins,
            models: &models,
        },
        &instructions.skills,
    );
    warnings.extend(commands.warnings.iter().cloned());
    let found = here.hooks();
    warnings.extend(found.warnings.iter().cloned());
    let mcp = mcp_rows(&here, &mut warnings);
    let (agents, agent_warnings) = crate::ext::agents::find(
        &base,
        here.home.root(),
        here.home_dir.as_deref(),
        &here.plugins.plugins,
    );
    warnings.extend(agent_warnings);
    let agent_rows: Vec<Value> = agents
        .iter()
        .map(|a| {
            json!({
                "name": a.name,
                "description": a.description,
                "source": here.shown(&a.file),
                "state": "available to the agent tool as subagent_type",
            })
        })
        .collect();

    let files: Vec<Value> = instructions
        .files
        .iter()
        .map(|label| json!({"name": label}))
        .collect();
    let mut skills = Vec::new();
    let mut custom = Vec::new();
    for entry in commands.entries() {
        match entry {
            Entry::Skill(skill) => skills.push(json!({
                "name": skill.name,
                "description": skill.description,
                "source": here.shown(&skill.file),
            })),
            Entry::Command(command) => custom.push(json!({
                "name": format!("/{}", command.name),
                "description": command.description,
                "source": here.shown(&command.file),
                "owner": command.owner.label(),
                "model": command.model,
                "allowed_tools": command.allowed_tools,
            })),
        }
    }
    // Skills a command of the same name hides are still skills the tool loads.
    for skill in &instructions.skills {
        if !skills.iter().any(|s| s["name"] == json!(skill.name)) {
            skills.push(json!({
                "name": skill.name,
                "description": skill.description,
                "source": here.shown(&skill.file),
            }));
        }
    }
    let plugin_rows: Vec<Value> = here
        .plugins
        .plugins
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "version": p.version,
                "description": p.description,
                "source": here.shown(&p.root),
                "from": match p.found { PluginFound::Home => "$COX_HOME/plugins", PluginFound::Flag => "--plugin-dir" },
            })
        })
        .collect();
    let hook_rows: Vec<Value> = found
        .trusted
        .iter()
        .map(|d| (d, "trusted"))
        .chain(found.pending.iter().map(|d| (d, "pending")))
        .map(|(def, state)| {
            json!({
                "name": def.name,
                "event": def.event.as_str(),
                "matcher": def.matcher_text,
                "command": def.command,
                "timeout_s": def.timeout.as_secs_f64(),
                "source": hooks::place(def, here.home_dir.as_deref()),
                "scope": def.origin.scope.label(),
                "state": state,
            })
        })
        .collect();
    let report = json!({
        "cwd": here.cwd.display().to_string(),
        "instruction_files": files,
        "skills": skills,
        "commands": custom,
        "plugins": plugin_rows,
        "agents": agent_rows,
        "hooks": hook_rows,
        "mcp_servers": mcp,
        "warnings": warnings,
    });
    if as_json {
        return Ok(serde_json::to_string_pretty(&report)?);
    }
    Ok(table(&report))
}

/// The MCP servers of this folder, from the files only (none is started):
/// each with where it is defined and whether it may start.
fn mcp_rows(here: &Here, warnings: &mut Vec<String>) -> Vec<Value> {
    let loaded = crate::mcp::load(
        &crate::mcp::Sources {
            user_config: &here.user_config(),
            home_dir: here.home_dir.as_deref(),
            project: &here.cwd,
            flags: &[],
            strict: false,
            plugins: &here.plugins.plugins,
            approvals: &crate::config::claude::mcp_choice(
                here.home_dir.as_deref(),
                &here.cwd,
                &crate::config::claude::Choice::default(),
            ),
        },
        &|name| std::env::var(name).ok(),
    );
    let loaded = match loaded {
        Ok(loaded) => loaded,
        Err(err) => {
            warnings.push(crate::one_line(&err));
            return Vec::new();
        }
    };
    warnings.extend(loaded.notices.iter().cloned());
    let client = crate::mcp::installed();
    loaded
        .servers
        .iter()
        .map(|server| {
            let state = match client {
                None => "not started: this binary has no MCP client".to_owned(),
                Some(_) if server.origin.kind.trusted_on_first_connect() => "trusted".to_owned(),
                Some(client) => match client.may_start(here.home.root(), server) {
                    Ok(true) => "trusted to start".to_owned(),
                    Ok(false) => format!("pending: cox mcp trust {}", server.name),
                    Err(why) => format!("unknown ({why})"),
                },
            };
            json!({
                "name": server.name,
                "source": format!("{}:{}", here.shown(&server.origin.file), server.origin.line),
                "origin": server.origin.kind.label(),
                "state": state,
            })
        })
        .collect()
}

/// The report as sections of aligned lines.
fn table(report: &Value) -> String {
    let mut out = String::new();
    let text = |v: &Value| printable(v.as_str().unwrap_or_default());
    let section = |out: &mut String, title: &str, rows: Vec<String>| {
        let _ = writeln!(out, "{title} ({})", rows.len());
        if rows.is_empty() {
            let _ = writeln!(out, "  none");
        }
        for row in rows {
            let _ = writeln!(out, "  {row}");
        }
        out.push('\n');
    };
    let rows = |key: &str, f: &dyn Fn(&Value) -> String| -> Vec<String> {
        report[key]
            .as_array()
            .map(|a| a.iter().map(f).collect())
            .unwrap_or_default()
    };
    section(
        &mut out,
        "instruction files",
        rows("instruction_files", &|v| text(&v["name"])),
    );
    section(
        &mut out,
        "skills",
        rows("skills", &|v| {
            format!("{}  {}", text(&v["name"]), text(&v["source"]))
        }),
    );
    section(
        &mut out,
        "commands",
        rows("commands", &|v| {
            format!(
                "{}  {} ({})",
                text(&v["name"]),
                text(&v["source"]),
                text(&v["owner"])
            )
        }),
    );
    section(
        &mut out,
        "plugins",
        rows("plugins", &|v| {
            format!(
                "{} {}  {} ({})",
                text(&v["name"]),
                text(&v["version"]),
                text(&v["source"]),
                text(&v["from"])
            )
        }),
    );
    section(
        &mut out,
        "agents",
        rows("agents", &|v| {
            format!(
                "{}  {}  ({})",
                text(&v["name"]),
                text(&v["source"]),
                text(&v["state"])
            )
        }),
    );
    section(
        &mut out,
        "hooks",
        rows("hooks", &|v| {
            let matcher = v["matcher"]
                .as_str()
                .filter(|m| !m.is_empty())
                .map(|m| format!(" [{}]", printable(m)))
                .unwrap_or_default();
            let state = if v["state"] == json!("pending") {
                format!("pending: cox ext trust {}", text(&v["name"]))
            } else {
                text(&v["state"])
            };
            format!(
                "{}  {}{matcher}  {}  {}  {state}",
                text(&v["name"]),
                text(&v["event"]),
                text(&v["command"]),
                text(&v["source"]),
            )
        }),
    );
    section(
        &mut out,
        "mcp servers",
        rows("mcp_servers", &|v| {
            format!(
                "{}  {} ({})  {}",
                text(&v["name"]),
                text(&v["source"]),
                text(&v["origin"]),
                text(&v["state"])
            )
        }),
    );
    let warnings = rows("warnings", &|v| text(v));
    if !warnings.is_empty() {
        section(&mut out, "warnings", warnings);
    }
    out.trim_end().to_owned()
}

fn trust(plugin_dir: &[PathBuf], names: &[String], all: bool) -> Result<String> {
    let here = Here::read(plugin_dir)?;
    let found = here.hooks();
    let rules = here.pending_allow()?;
    if names.is_empty() && !all {
        if found.pending.is_empty() && rules.is_empty() {
            return Ok("nothing waits for trust here".to_owned());
        }
        let mut out = String::new();
        if !found.pending.is_empty() {
            let _ = writeln!(out, "{} hook(s) wait for trust:", found.pending.len());
        }
        for def in &found.pending {
            let _ = writeln!(
                out,
                "  {}  {}  {}  ({})",
                def.name,
                def.event,
                printable(&def.command),
                hooks::place(def, here.home_dir.as_deref())
            );
        }
        if !rules.is_empty() {
            let _ = writeln!(out, "{} allow rule(s) wait for trust:", rules.len());
        }
        for rule in &rules {
            let _ = writeln!(
                out,
                "  allow {}  ({}:{})",
                printable(&rule.rule),
                here.shown(&rule.file),
                rule.line
            );
        }
        out.push_str(
            "trust them with `cox ext trust --all`, or some with `cox ext trust NAME` (a hook's \
             name, a rule as written, `project`, or a plugin's name)",
        );
        return Ok(out);
    }
    let (chosen, chosen_rules): (Vec<&cox_hooks::HookDef>, Vec<&PendingAllow>) = if all {
        (found.pending.iter().collect(), rules.iter().collect())
    } else {
        let mut chosen = Vec::new();
        let mut chosen_rules = Vec::new();
        for name in names {
            let matching: Vec<&cox_hooks::HookDef> = found
                .all()
                .filter(|d| d.name == *name || d.origin.scope.label() == name)
                .collect();
            let matching_rules: Vec<&PendingAllow> = rules
                .iter()
                .filter(|r| r.rule == *name || name == "project")
                .collect();
            if matching.is_empty() && matching_rules.is_empty() {
                let known: Vec<&str> = found
                    .all()
                    .map(|d| d.name.as_str())
                    .chain(rules.iter().map(|r| r.rule.as_str()))
                    .collect();
                bail!(
                    "no hook, allow rule or plugin here is called {name:?} (waiting or known: {})",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                );
            }
            chosen.extend(
                matching
                    .into_iter()
                    .filter(|d| !d.origin.scope.trusted_as_written()),
            );
            chosen_rules.extend(matching_rules);
        }
        (chosen, chosen_rules)
    };
    if chosen.is_empty() && chosen_rules.is_empty() {
        return Ok("nothing to trust: those hooks are your own, trusted as written".to_owned());
    }
    let db = cox_store::Db::open(&here.home.db_path())?;
    let user_config = here.user_config();
    let now = crate::env::now_rfc3339();
    let mut said = Vec::new();
    if !chosen.is_empty() {
        hooks::trust(
            &db,
            &chosen,
            &Places {
                user_config: &user_config,
                home_dir: here.home_dir.as_deref(),
                cwd: &here.cwd,
                plugins: &here.plugins.plugins,
                claude: &crate::config::claude::Choice::default(),
            },
            &now,
        )?;
        let names: Vec<&str> = chosen.iter().map(|d| d.name.as_str()).collect();
        said.push(format!("{} hook(s): {}", chosen.len(), names.join(", ")));
    }
    if !chosen_rules.is_empty() {
        crate::config::trust::trust(&db, &here.cwd, &chosen_rules, &now)?;
        let rules: Vec<&str> = chosen_rules.iter().map(|r| r.rule.as_str()).collect();
        said.push(format!(
            "{} allow rule(s): {}",
            chosen_rules.len(),
            rules.join(", ")
        ));
    }
    Ok(format!("trusted as they are now: {}", said.join("; ")))
}
