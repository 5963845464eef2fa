//! The permissions a session runs under, from every file that has a say:
//! `$COX_HOME/config.toml`, the project's `.cox/config.toml`, Claude
//! Code's settings files ([`super::claude`]) and the flags; with the
//! `[sandbox]` settings of both config files (a project's may only narrow
//! them) and Claude Code's `env`.
//!
//! Invariants: rules from every source add up, a deny anywhere winning; a
//! project may deny and ask, allow only with each rule trusted by the
//! person ([`super::trust`]), and only narrow the mode; every
//! file's fault is one line naming the file and line, and nothing starts.

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use cox_permission::{Engine, Layer, Origin};
use cox_protocol::config::PermissionsConfig;
use cox_protocol::types::{PermissionMode, SandboxMode};

use super::trust::{PendingAllow, Trust};
use super::{
    PermissionFlags, Permissions, SandboxSettings, Source, claude, line_of, project_config, read,
    sandbox_mode_name,
};

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
    trust: Trust<'_>,
) -> Result<Permissions> {
    load_permissions_at(user_config, home_dir, (cwd, cwd, &[]), flags, trust)
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
    trust: Trust<'_>,
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
    let files = Files {
        user: user.as_ref(),
        project: project.as_ref(),
        claude: &claude,
    };
    let trusted = if files.project_allows() {
        trust.hashes(&super::trust::scope(settings))
    } else {
        Ok(Vec::new())
    };
    let permissions = permissions_of(&files, home_dir, (cwd, also), flags, &trusted)?;
    check_dirs(&permissions.dirs)?;
    Ok(permissions)
}

/// The files the permissions are made from, read.
#[derive(Clone, Copy)]
pub struct Files<'a> {
    /// `$COX_HOME/config.toml`.
    pub user: Option<&'a Source>,
    /// The project's `.cox/config.toml`.
    pub project: Option<&'a Source>,
    /// Claude Code's settings files, in [`claude::read_all`]'s order.
    pub claude: &'a [claude::Settings],
}

impl Files<'_> {
    /// Whether a project file has an allow rule (whose trust must be read).
    #[must_use]
    pub fn project_allows(&self) -> bool {
        self.project
            .is_some_and(|p| !p.permissions.allow.is_empty())
            || self
                .claude
                .iter()
                .any(|c| c.scope == claude::Scope::Project && !c.permissions.allow.is_empty())
    }
}

/// Folders the config names that must exist: each with the line to stop
/// on when it does not.
pub type DirChecks = Vec<(PathBuf, String)>;

/// Stops on the first folder of `checks` that is not one.
///
/// # Errors
/// That folder's line.
pub fn check_dirs(checks: &DirChecks) -> Result<()> {
    match checks.iter().find(|(path, _)| !path.is_dir()) {
        Some((_, line)) => Err(anyhow!("{line}")),
        None => Ok(()),
    }
}

/// The permissions `files` and `flags` make, relative rules anchored at
/// `cwd` (and, for deny and ask rules, at each of `also`), a project's
/// allow rules taken where `trusted` holds their fingerprint (or why the
/// trust could not be read). Reads nothing: the folders it names are in
/// [`Permissions::dirs`], to check.
///
/// # Errors
/// A rule that does not parse, a mode a file may not set, a value that
/// cannot be one: its file and line.
pub fn permissions_of(
    files: &Files<'_>,
    home_dir: Option<&Path>,
    (cwd, also): (&Path, &[PathBuf]),
    flags: &PermissionFlags,
    trusted: &std::result::Result<Vec<String>, String>,
) -> Result<Permissions> {
    let Files {
        user,
        project,
        claude,
    } = *files;
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
    // A project file's allow rules: those the person trusted as written
    // go in a layer of their own; the rest wait (and are said, once).
    let mut warnings: Vec<String> = Vec::new();
    let project_files: Vec<(&Path, &str, &PermissionsConfig)> = project
        .iter()
        .map(|p| (p.path.as_path(), p.text.as_str(), &p.permissions))
        .chain(
            claude
                .iter()
                .filter(|c| c.scope == claude::Scope::Project)
                .map(|c| (c.path.as_path(), c.text.as_str(), &c.permissions)),
        )
        .collect();
    let trusted_hashes: &[String] = match trusted {
        Ok(hashes) => hashes,
        Err(why) => {
            if files.project_allows() {
                warnings.push(format!(
                    "cannot read which of this project's allow rules you trusted ({why}): none \
                     of them is used"
                ));
            }
            &[]
        }
    };
    let mut pending_allow = Vec::new();
    let mut trusted_layers: Vec<(PathBuf, PermissionsConfig)> = Vec::new();
    for (path, text, permissions) in &project_files {
        let mut trusted = PermissionsConfig::default();
        for rule in &permissions.allow {
            if trusted_hashes.contains(&super::trust::fingerprint(path, rule)) {
                trusted.allow.push(rule.clone());
            } else {
                pending_allow.push(PendingAllow {
                    file: path.to_path_buf(),
                    line: line_of(text, rule),
                    rule: rule.clone(),
                });
            }
        }
        if !trusted.allow.is_empty() {
            trusted_layers.push((path.to_path_buf(), trusted));
        }
    }
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
    for (path, config) in &trusted_layers {
        layers.push(Layer {
            origin: Origin::TrustedProject(path.clone()),
            config,
        });
    }
    layers.push(Layer {
        origin: Origin::Flag,
        config: &flag_config,
    });
    let engine = Engine::compile_layers_at(&layers, home_dir, cwd, also).map_err(|err| {
        let text_of = |path: &Path| {
            [user, project]
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
            Origin::User(path)
            | Origin::Project(path)
            | Origin::TrustedProject(path)
            | Origin::Managed(path) => {
                let line = text_of(path).map_or(1, |text| line_of(text, &err.source.rule));
                anyhow!("{}:{line}: {}", path.display(), err.source)
            }
            Origin::BuiltIn | Origin::Flag | Origin::Command(_) => anyhow!("{err}"),
        }
    })?;

    warnings.splice(0..0, claude.iter().flat_map(|c| c.warnings.iter().cloned()));
    warnings.extend(super::trust::pending_line(&pending_allow));
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
        mode_source = format!(
            "user config {}",
            user.map_or_else(String::new, |u| u.path.display().to_string())
        );
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
    for c in claude {
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
    let mut dirs = DirChecks::new();
    let mut sandbox = sandbox_settings(user, project, home_dir, &mut warnings, &mut dirs)?;
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
        pending_allow,
        dirs,
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
    dirs: &mut DirChecks,
) -> Result<SandboxSettings> {
    let mut out = SandboxSettings {
        mode_source: "the default".into(),
        ..SandboxSettings::default()
    };
    for source in [user, project].into_iter().flatten() {
        check_sandbox(source, home_dir, dirs)?;
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
fn check_sandbox(source: &Source, home_dir: Option<&Path>, dirs: &mut DirChecks) -> Result<()> {
    let cfg = &source.file.sandbox;
    for root in &cfg.writable_roots {
        let line = line_of(&source.text, root);
        let Some(path) = expand_root(root, home_dir) else {
            return Err(anyhow!(
                "{}:{line}: [sandbox] writable_roots: `{root}` must be an absolute path (or start with ~/)",
                source.path.display()
            ));
        };
        dirs.push((
            path,
            format!(
                "{}:{line}: [sandbox] writable_roots: `{root}` is not a folder that exists",
                source.path.display()
            ),
        ));
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

/// Claude Code's managed settings file: `COX_MANAGED_SETTINGS` when set
/// (an unusual install, or a test), else where Claude Code keeps it.
pub fn managed_settings_path() -> PathBuf {
    crate::env::managed_settings().unwrap_or_else(|| PathBuf::from(claude::MANAGED_PATH))
}
