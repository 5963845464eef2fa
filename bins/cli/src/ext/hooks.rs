//! The hooks a session here has, and which of them may run.
//!
//! Sources, in the order their hooks run: the person's own
//! `~/.claude/settings.json` and the `[hooks]` of `$COX_HOME/config.toml`;
//! the project's `.claude/settings.json`, `.claude/settings.local.json`
//! and the `[hooks]` of its `.cox/config.toml`; then each plugin's. The
//! person's own run as written. A project's and a plugin's were written by
//! someone else and would run code the moment a session opens, so each
//! runs only once trusted as it is now (`cox ext trust`, or the terminal
//! UI's question); until then it is pending, and a changed hook is pending
//! again. `disableAllHooks: true` in the person's own settings, or
//! `--no-hooks`, runs none; in a project's, none of the project's.

use std::path::{Path, PathBuf};

use anyhow::Result;
use cox_hooks::{HookDef, Loader, Scope};
use cox_store::{Db, TrustedExtension};

use super::plugins::{Part, Plugin};

/// What `kind` trust rows of hooks use.
const KIND: &str = "hook";

/// Where hooks are looked for.
#[derive(Clone, Copy, Debug)]
pub struct Places<'a> {
    /// `$COX_HOME/config.toml`.
    pub user_config: &'a Path,
    /// `$HOME`, for `~/.claude/settings.json`.
    pub home_dir: Option<&'a Path>,
    /// The session's folder (canonical).
    pub cwd: &'a Path,
    pub plugins: &'a [Plugin],
    /// Which Claude Code settings files are read (`--setting-sources`),
    /// and `--settings`.
    pub claude: &'a crate::config::claude::Choice,
}

/// Every hook found, where it stands, and what was wrong with the rest.
#[derive(Debug, Default)]
pub struct Found {
    /// Hooks that run.
    pub trusted: Vec<HookDef>,
    /// A project's or plugin's hooks no one trusted as they are now.
    pub pending: Vec<HookDef>,
    pub warnings: Vec<String>,
}

impl Found {
    /// Every hook, trusted first.
    pub fn all(&self) -> impl Iterator<Item = &HookDef> {
        self.trusted.iter().chain(&self.pending)
    }
}

/// Reads every source of `places`.
#[must_use]
pub fn read(places: &Places<'_>) -> cox_hooks::Loaded {
    let mut loader = Loader::new();
    if let Some(home) = places.home_dir.filter(|_| places.claude.user) {
        settings(
            &mut loader,
            &home.join(".claude/settings.json"),
            &Scope::User,
        );
    }
    match crate::config::load_hooks_table(places.user_config) {
        Ok(Some((path, text, value))) => {
            loader.hooks_value(&value, &text, &path, &Scope::User, &[])
        }
        Ok(None) => {}
        // The config itself failing is said where the session loads it.
        Err(_) => {}
    }
    // In the home folder itself, `.claude/settings.json` is the person's
    // own, read above: not a project's too.
    if places.home_dir != Some(places.cwd) {
        let project = places.cwd.join(".claude");
        if places.claude.project {
            settings(&mut loader, &project.join("settings.json"), &Scope::Project);
        }
        if places.claude.local {
            settings(
                &mut loader,
                &project.join("settings.local.json"),
                &Scope::Project,
            );
        }
    }
    // `--settings`: the person's own, for this run.
    if let Some((path, text)) = &places.claude.extra {
        loader.settings_text(text, path, &Scope::User, &[]);
    }
    if let Some(path) = crate::config::project_config(places.cwd)
        && path != places.user_config
        && let Ok(Some((path, text, value))) = crate::config::load_hooks_table(&path)
    {
        loader.hooks_value(&value, &text, &path, &Scope::Project, &[]);
    }
    for plugin in places.plugins {
        let scope = Scope::Plugin(plugin.name.clone());
        let env = [(
            "CLAUDE_PLUGIN_ROOT".to_owned(),
            plugin.root.display().to_string(),
        )];
        match &plugin.hooks {
            Some(Part::File(path)) => loader.settings_file(path, &scope, &env),
            Some(Part::Inline(value)) => {
                // The manifest's `hooks` is the hooks object itself.
                loader.hooks_value(value, &plugin.manifest_text, &plugin.manifest, &scope, &env);
            }
            None => {}
        }
    }
    loader.finish()
}

/// A Claude Code settings file's hooks, from the text the permissions
/// were made from (read once while the session is set up).
fn settings(loader: &mut Loader, path: &Path, scope: &Scope) {
    match crate::config::claude::text(path) {
        Ok(Some(text)) => loader.settings_text(&text, path, scope, &[]),
        Ok(None) => {}
        Err(why) => loader.warn(format!("{}: {why}; its hooks are left out", path.display())),
    }
}

/// The trust scope of a hook: the project's folder, or the plugin.
#[must_use]
pub fn scope_of(def: &HookDef, cwd: &Path, plugins: &[Plugin]) -> String {
    match &def.origin.scope {
        Scope::Plugin(name) => plugins
            .iter()
            .find(|p| &p.name == name)
            .map_or_else(|| format!("plugin:{name}"), Plugin::trust_scope),
        Scope::Project | Scope::User => format!("project:{}", cwd.display()),
    }
}

/// The hooks of `places`, each trusted or pending as `db` says (a `db`
/// that cannot be opened leaves every project and plugin hook pending).
#[must_use]
pub fn find(places: &Places<'_>, db_path: &Path) -> Found {
    let mut loaded = read(places);
    cox_hooks::pins::pin_all(&mut loaded.defs, places.cwd);
    let mut found = Found {
        warnings: loaded.warnings,
        ..Found::default()
    };
    let needs_trust = loaded
        .defs
        .iter()
        .any(|d| !d.origin.scope.trusted_as_written());
    let db = if needs_trust {
        match Db::open(db_path) {
            Ok(db) => Some(db),
            Err(err) => {
                found.warnings.push(format!(
                    "cannot read which hooks are trusted ({err}); the project's and plugins' \
                     hooks do not run"
                ));
                None
            }
        }
    } else {
        None
    };
    let mut trusted_in: Vec<(String, Vec<String>)> = Vec::new();
    for def in loaded.defs {
        if def.origin.scope.trusted_as_written() {
            found.trusted.push(def);
            continue;
        }
        let scope = scope_of(&def, places.cwd, places.plugins);
        let hashes = match trusted_in.iter().find(|(s, _)| *s == scope) {
            Some((_, hashes)) => hashes,
            None => {
                let hashes = db
                    .as_ref()
                    .and_then(|db| db.trusted_extensions(&scope, KIND).ok())
                    .unwrap_or_default();
                trusted_in.push((scope.clone(), hashes));
                &trusted_in[trusted_in.len() - 1].1
            }
        };
        if hashes.contains(&def.fingerprint()) {
            found.trusted.push(def);
        } else {
            found.pending.push(def);
        }
    }
    found
}

/// Records `defs` as trusted in `db`, as they are now.
///
/// # Errors
/// `cox.db` cannot be written.
pub fn trust(db: &Db, defs: &[&HookDef], places: &Places<'_>, now: &str) -> Result<()> {
    let rows: Vec<TrustedExtension> = defs
        .iter()
        .map(|def| TrustedExtension {
            scope: scope_of(def, places.cwd, places.plugins),
            kind: KIND.to_owned(),
            hash: def.fingerprint(),
            label: def.name.clone(),
            trusted_at: now.to_owned(),
        })
        .collect();
    db.trust_extensions(&rows)?;
    Ok(())
}

/// One line about pending hooks for a run that cannot ask: which, and the
/// command that trusts them.
#[must_use]
pub fn pending_line(pending: &[HookDef]) -> Option<String> {
    if pending.is_empty() {
        return None;
    }
    let names: Vec<&str> = pending.iter().map(|d| d.name.as_str()).collect();
    Some(format!(
        "{} hook(s) of this project or its plugins are not trusted and do not run ({}): review \
         them with `cox ext list`, then run `cox ext trust --all` (or `cox ext trust NAME`)",
        pending.len(),
        names.join(", ")
    ))
}

/// A hook's place, for lists: its file and line, with `~` for the home.
#[must_use]
pub fn place(def: &HookDef, home_dir: Option<&Path>) -> String {
    let file: PathBuf = match home_dir.and_then(|h| def.origin.file.strip_prefix(h).ok()) {
        Some(rest) => Path::new("~").join(rest),
        None => def.origin.file.clone(),
    };
    format!("{}:{}", file.display(), def.origin.line)
}

/// The hooks a session with these flags would find waiting for trust in
/// its folder, and what trusting them needs: the terminal UI asks about
/// them before it starts the session.
#[derive(Debug)]
pub struct Pending {
    /// The session's folder.
    pub cwd: PathBuf,
    pub hooks: Vec<HookDef>,
    /// The project's allow rules that wait for trust too.
    pub allow: Vec<crate::config::trust::PendingAllow>,
    home: cox_store::CoxHome,
    home_dir: Option<PathBuf>,
    plugins: Vec<Plugin>,
}

impl Pending {
    /// The pending hooks of a session with `args`; `None` when none wait
    /// (or hooks are off, or the folder cannot be read: the session says
    /// why when it starts).
    #[must_use]
    pub fn find(args: &crate::RunArgs) -> Option<Pending> {
        if args.no_hooks {
            return None;
        }
        let home = cox_store::CoxHome::resolve(None).ok()?;
        let here = match &args.cwd {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().ok()?,
        };
        let cwd = std::fs::canonicalize(here).ok()?;
        let plugins = super::plugins::discover(home.root(), &args.plugin_dir).plugins;
        let home_dir = crate::env::home_dir();
        let user_config = home.root().join("config.toml");
        let claude = crate::config::claude::Choice::from_flags(
            args.sdk.settings.as_deref(),
            args.sdk.setting_sources.as_deref(),
        )
        .unwrap_or_default();
        let found = find(
            &Places {
                user_config: &user_config,
                home_dir: home_dir.as_deref(),
                cwd: &cwd,
                plugins: &plugins,
                claude: &claude,
            },
            &home.db_path(),
        );
        // A config that does not load: the session says why when it starts.
        let allow = crate::config::load_permissions(
            &user_config,
            home_dir.as_deref(),
            &cwd,
            &crate::config::PermissionFlags {
                claude: claude.clone(),
                ..crate::config::PermissionFlags::default()
            },
            crate::config::trust::Trust::Db(&home.db_path()),
        )
        .map(|p| p.pending_allow)
        .unwrap_or_default();
        (!found.pending.is_empty() || !allow.is_empty()).then_some(Pending {
            cwd,
            hooks: found.pending,
            allow,
            home,
            home_dir,
            plugins,
        })
    }

    /// Each hook as two lines: its name and event (and matcher), then its
    /// command and where it is written.
    #[must_use]
    pub fn lines(&self) -> Vec<(String, String)> {
        self.hooks
            .iter()
            .map(|def| {
                let matcher = def
                    .matcher_text
                    .as_deref()
                    .filter(|m| !m.is_empty())
                    .map(|m| format!(" (matcher {m})"))
                    .unwrap_or_default();
                (
                    format!("{}{matcher}", def.name),
                    format!(
                        "{}   ({})",
                        def.command,
                        place(def, self.home_dir.as_deref())
                    ),
                )
            })
            .chain(self.allow.iter().map(|rule| {
                (
                    format!("allow rule {}", rule.rule),
                    format!(
                        "lets the model do this unasked   ({}:{})",
                        rule.file.display(),
                        rule.line
                    ),
                )
            }))
            .collect()
    }

    /// Trusts every one of them as it is now.
    ///
    /// # Errors
    /// `cox.db` cannot be opened or written.
    pub fn trust(&self) -> Result<()> {
        // Asked before any session has made the home (a first launch).
        self.home.prepare()?;
        let db = Db::open(&self.home.db_path())?;
        let user_config = self.home.root().join("config.toml");
        let places = Places {
            user_config: &user_config,
            home_dir: self.home_dir.as_deref(),
            cwd: &self.cwd,
            plugins: &self.plugins,
            claude: &crate::config::claude::Choice::default(),
        };
        let defs: Vec<&HookDef> = self.hooks.iter().collect();
        let now = crate::env::now_rfc3339();
        trust(&db, &defs, &places, &now)?;
        let rules: Vec<&crate::config::trust::PendingAllow> = self.allow.iter().collect();
        crate::config::trust::trust(&db, &self.cwd, &rules, &now)?;
        Ok(())
    }
}
