//! The session's sandbox policy, from the flags, `[sandbox]` and the rules.
//!
//! `--sandbox` wins over the config files; the workspace roots (the working
//! folder and each `--add-dir`) and `[sandbox] writable_roots` are the
//! writable roots; the built-in secret folders and every plain path of a
//! `Read(...)` deny rule are hidden; `WebFetch(domain:…)` deny rules bind
//! the domain proxy too. `cox run`, the terminal UI and `cox sandbox` all
//! build their policy here, so a command confined by `cox sandbox` is
//! confined exactly as a session would confine it.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use cox_permission::Engine;
use cox_protocol::tool::Workspace;
use cox_protocol::types::SandboxMode;
use cox_sandbox::{DomainPattern, SandboxPolicy};

use crate::config::SandboxSettings;

/// The policy a session with these settings confines its commands under.
#[must_use]
pub fn policy(
    settings: &SandboxSettings,
    flag: Option<SandboxMode>,
    workspace: &Workspace,
    home_dir: Option<&Path>,
    cox_home: &Path,
    engine: &Engine,
) -> SandboxPolicy {
    let mode = flag.unwrap_or(settings.mode);
    let mut policy = SandboxPolicy::new(mode, helper());
    // A root that holds a read-only one (`--add-dir ~/src` around a
    // worktree session's main checkout), or lies in one, is not written by
    // commands: no mechanism must be trusted to carve the read-only part
    // out of it (Landlock cannot).
    let overlaps = |root: &std::path::PathBuf| {
        workspace
            .read_only
            .iter()
            .any(|ro| ro.starts_with(root) || root.starts_with(ro))
    };
    for root in workspace
        .writable_roots()
        .chain(&settings.writable_roots)
        .filter(|root| !overlaps(root))
    {
        policy.add_writable_root(root);
    }
    // A worktree session's main checkout: read, never written.
    for root in &workspace.read_only {
        policy.add_read_only(root);
    }
    // cox's own record: a command must not rewrite the ledger or rollouts.
    policy.add_read_only(cox_home);
    // What the next session obeys, which a command must neither rewrite
    // nor create: the repository (its hooks run code), project settings
    // (hooks, rules, commands, skills, agents) whether or not they exist
    // yet; and, where they exist, the MCP servers to start and the
    // instruction files. A missing file cannot be kept read-only without
    // leaving a file behind: one a confined command makes is moved aside
    // when it ends; the file tools ask before writing one (see
    // cox_permission::protected).
    if policy.writes_roots() {
        let written: Vec<PathBuf> = workspace
            .writable_roots()
            .filter_map(|root| root.canonicalize().ok())
            .filter(|root| policy.writable_roots.contains(root))
            .collect();
        for root in written {
            for folder in [".cox", ".claude"] {
                policy.add_protected(&root, folder);
            }
            // A `.git` is kept from being made only where no repository
            // holds the root: inside one, an empty `.git` would stop git's
            // and cox's own search for the repository (and its ignore
            // rules) there, and the repository's own `.git` is out of
            // reach anyway (outside the root, or read-only at it).
            if !root.ancestors().any(|dir| dir.join(".git").exists()) {
                policy.add_protected(&root, ".git");
            } else if !root.join(".git").exists() {
                // Inside a repository: a `.git` a command makes here (a
                // `git init` with a configuration of its own, which your
                // next `git status` here would run) is moved aside when
                // the command ends.
                policy.guard_absent(&root.join(".git"));
            }
            // A submodule's `.git` (a file naming its git folder) decides
            // which configuration, and so which programs, git runs there
            // when the person next runs `git status` at the top: kept
            // read-only where it exists (an empty placeholder would break
            // git for a submodule not checked out).
            for path in submodule_paths(&root) {
                policy.add_read_only(&root.join(path).join(".git"));
            }
        }
    }
    for root in workspace
        .roots
        .iter()
        .chain(std::iter::once(&workspace.cwd))
    {
        for file in cox_permission::protected::PROTECTED_FILES {
            policy.add_read_only(&root.join(file));
            if policy.writes_roots() {
                policy.guard_absent(&root.join(file));
                policy.guard_link(&root.join(file));
            }
        }
    }
    if let Some(home) = home_dir {
        policy.hide_home_secrets(home, &cox_permission::SECRET_PATHS);
        // A secret that is a link inside a writable root (`~/.ssh ->
        // dotfiles/ssh`, with the home a root) is hidden where it leads; a
        // command must not point it at a decoy for the next session to
        // hide instead, so the link is put back after each command.
        if policy.writes_roots() {
            for rel in cox_permission::SECRET_PATHS {
                let path = home.join(rel.trim_start_matches("~/"));
                let inside = policy.writable_roots.iter().any(|r| path.starts_with(r));
                if inside && path.is_symlink() {
                    policy.guard_link(&path);
                }
            }
        }
    }
    // cox's own tokens (MCP logins kept in files where no keyring answers)
    // are never readable, nor what cox keeps of every project: checkpoints
    // (copies of the files, hidden ones included), archived outputs, the
    // record and the logs. A session makes the folders before this (see
    // `token_folder`), so what it writes there later is covered too. The
    // transcripts stay readable: hooks are given their path.
    for private in PRIVATE {
        policy.add_hidden(&cox_home.join(private));
    }
    let ssh_agent = std::env::var_os("SSH_AUTH_SOCK").map(PathBuf::from);
    policy.hide_sockets(ssh_agent.as_deref(), &settings.unix_sockets);
    policy.env = settings.env.clone();
    // An agent socket let through is of no use without its variable.
    if ssh_agent
        .and_then(|p| p.canonicalize().ok())
        .is_some_and(|p| policy.sockets.contains(&p))
    {
        policy.env.allow.push("SSH_AUTH_SOCK".to_owned());
    }
    for (list, rule) in engine.rules() {
        if list != "deny" {
            continue;
        }
        // An `Edit(...)` deny rule on one existing folder or file inside a
        // writable root is kept read-only by the sandbox too.
        if rule.path_access() == Some(cox_protocol::types::PathAccess::Write)
            && let Some(path) = rule.path_pattern().and_then(plain_pattern)
            && path.exists()
        {
            policy.add_read_only(&path);
        }
        // A relative path is hidden in every checkout the session reaches
        // (a worktree session's main checkout too).
        for anchor in std::iter::once(&workspace.cwd).chain(&workspace.read_only) {
            if let Some(path) = plain_read_path(&rule.text, home_dir, anchor) {
                policy.add_hidden(&path);
            }
        }
        if let Some(domain) = denied_domain(&rule.text) {
            policy.denied_domains.push(domain);
        }
    }
    policy.network = settings.network.clone();
    policy
}

/// What under `$COX_HOME` no command reads: MCP login tokens (kept in
/// files where no keyring answers), checkpoints, archived outputs, the
/// logs, and the record.
const PRIVATE: [&str; 7] = [
    "mcp-auth",
    "checkpoints",
    "archive",
    "logs",
    "cox.db",
    "cox.db-wal",
    "cox.db-shm",
];

/// Makes `$COX_HOME`'s private folders (owner only) when `$COX_HOME`
/// exists and they do not, so the sandbox can hide them before the
/// session first writes there. A session calls this before building its
/// policy; `cox doctor` does not.
pub fn token_folder(cox_home: &Path) {
    if !cox_home.is_dir() {
        return;
    }
    for folder in ["mcp-auth", "checkpoints", "archive", "logs"] {
        let path = cox_home.join(folder);
        if !path.exists() {
            let _ = std::fs::DirBuilder::new().mode(0o700).create(&path);
        }
    }
}

/// The domain a `WebFetch(domain:…)` deny rule names, spelt as the engine
/// reads it (any case of the tool's name, spaces around the host).
fn denied_domain(text: &str) -> Option<DomainPattern> {
    let (tool, body) = text.trim().split_once('(')?;
    let tool: String = tool
        .trim()
        .chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    if tool != "webfetch" {
        return None;
    }
    let host = body
        .strip_suffix(')')?
        .trim()
        .strip_prefix("domain:")?
        .trim();
    let wild = host.starts_with("*.");
    let host = cox_permission::canonical_host(host.trim_start_matches("*."));
    DomainPattern::parse(&if wild { format!("*.{host}") } else { host }).ok()
}

/// The `path = …` entries of a repository's `.gitmodules`, relative and
/// without `..` (anything else is skipped).
fn submodule_paths(root: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(root.join(".gitmodules")) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key.trim() == "path").then(|| PathBuf::from(value.trim()))
        })
        .filter(|p| {
            p.is_relative()
                && p.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
        })
        .collect()
}

/// The folder or file a rule's absolute pattern names when it has no
/// wildcard (a trailing `/**` or `/*` covers the folder itself).
fn plain_pattern(pattern: &str) -> Option<PathBuf> {
    let path = pattern
        .strip_suffix("/**")
        .or_else(|| pattern.strip_suffix("/*"))
        .unwrap_or(pattern);
    // A backslash escapes in a glob: the engine and the file system would
    // read the path differently, so it is no plain path.
    (path.starts_with('/') && !path.contains(['*', '?', '[', '{', '\\']))
        .then(|| PathBuf::from(path))
}

/// The part of a pattern before its first wildcard, cut back to a whole
/// folder: every path the pattern matches lies below it.
fn literal_folder(pattern: &str) -> PathBuf {
    match pattern.find(['*', '?', '[', '{']) {
        None => PathBuf::from(pattern),
        Some(at) => {
            let head = &pattern[..at];
            PathBuf::from(head.rfind('/').map_or("/", |slash| &head[..slash.max(1)]))
        }
    }
}

/// Whether the OS sandbox under `policy` enforces deny `rule` by itself on
/// every confined command, so a line whose paths cox cannot follow may run
/// confined under it:
/// - a `Read` rule on one folder or file that is hidden (or that does not
///   exist: there is nothing of the person's to read);
/// - an `Edit` rule whose paths all lie outside every writable root (the
///   whole file system is read-only there; the private `/tmp` under
///   bubblewrap counts), or on one existing folder or file bound read-only
///   inside a root (bubblewrap only: Landlock cannot carve one out).
///
/// Everything else (a pattern such as `**/*.pem`, a path inside a root
/// that does not exist yet, any rule but a path rule) is not enforced.
#[must_use]
pub fn enforces(
    policy: &SandboxPolicy,
    mechanism: &cox_sandbox::probe::Mechanism,
    rule: &cox_permission::Rule,
) -> bool {
    use cox_protocol::types::PathAccess;
    use cox_sandbox::probe::Mechanism;
    let bwrap = match mechanism {
        Mechanism::Unavailable { .. } => return false,
        Mechanism::Bubblewrap { .. } => true,
        Mechanism::Landlock { .. } => false,
    };
    if policy.mode == SandboxMode::DangerFullAccess {
        return false;
    }
    let (Some(access), Some(pattern)) = (rule.path_access(), rule.path_pattern()) else {
        return false;
    };
    let canonical = |p: &Path| p.canonicalize().ok();
    let plain = plain_pattern(pattern);
    match access {
        // Under Landlock a hidden file inside a writable root can be
        // renamed out from under its rule: not enforced there.
        PathAccess::Read => plain.is_some_and(|path| match canonical(&path) {
            None => bwrap,
            Some(real) => {
                let in_root = policy.writable_roots.iter().any(|r| real.starts_with(r));
                (bwrap || !in_root) && policy.hidden.iter().any(|h| real.starts_with(h))
            }
        }),
        PathAccess::Write => {
            let folder = literal_folder(pattern);
            let folder = canonical(&folder).unwrap_or(folder);
            let in_root = policy.writes_roots()
                && policy
                    .writable_roots
                    .iter()
                    .any(|root| folder.starts_with(root) || root.starts_with(&folder));
            // Landlock leaves /tmp and /dev/shm writable (bubblewrap makes
            // them private).
            let in_tmp = ["/tmp", "/dev/shm"]
                .iter()
                .any(|t| folder.starts_with(t) || Path::new(t).starts_with(&folder));
            if !in_root {
                return bwrap || !in_tmp;
            }
            // A link can be replaced whatever its target's mount: a rule on
            // a link inside a root is not enforced.
            let link = plain.as_deref().is_some_and(|p| {
                p.symlink_metadata()
                    .is_ok_and(|m| m.file_type().is_symlink())
            });
            bwrap
                && !link
                && plain.and_then(|p| canonical(&p)).is_some_and(|real| {
                    policy
                        .read_only
                        .iter()
                        .chain(&policy.protected)
                        .chain(&policy.hidden)
                        .any(|ro| real.starts_with(ro))
                })
        }
    }
}

/// Tells `engine` which of its deny rules the sandbox of `policy` enforces
/// (see [`enforces`]), on the mechanism this machine has.
pub fn enforce(engine: &mut cox_permission::Engine, policy: &SandboxPolicy) {
    let mechanism = &cox_sandbox::probe::probe().mechanism;
    if matches!(mechanism, cox_sandbox::probe::Mechanism::Unavailable { .. }) {
        return;
    }
    engine.enforce_in_sandbox(|rule| enforces(policy, mechanism, rule));
}

/// The `__sandbox-exec` mode, when this process was started for it: every
/// binary that runs sessions calls this first thing in `main`.
pub fn run_helper_if_asked() {
    cox_sandbox::helper::run_if_asked();
}

/// The program that runs the `__sandbox-exec` helper: `cox-sandbox-exec`
/// beside this binary, or this binary itself.
#[must_use]
pub fn helper() -> PathBuf {
    cox_sandbox::helper::program()
}

/// The path a `Read(...)` deny rule names when it is one folder or file
/// (a trailing `/**` or `/*` covers the folder; any other pattern is left
/// to the permission engine, which still applies it to every file tool).
fn plain_read_path(rule: &str, home: Option<&Path>, cwd: &Path) -> Option<PathBuf> {
    let inner = rule.strip_prefix("Read(")?.strip_suffix(')')?;
    let inner = inner
        .strip_suffix("/**")
        .or_else(|| inner.strip_suffix("/*"))
        .unwrap_or(inner);
    if inner.is_empty() || inner.contains(['*', '?', '[', '{']) {
        return None;
    }
    let path = if let Some(rest) = inner.strip_prefix("//") {
        PathBuf::from("/").join(rest)
    } else if let Some(rest) = inner.strip_prefix("~/") {
        home?.join(rest)
    } else if inner.starts_with('/') {
        PathBuf::from(inner)
    } else {
        cwd.join(inner.strip_prefix("./").unwrap_or(inner))
    };
    Some(path)
}

/// One line for `cox config show`, `cox doctor` and the status line: the
/// mode, and how it is enforced.
#[must_use]
pub fn describe(
    policy: &SandboxPolicy,
    confinement: &cox_protocol::sandbox::Confinement,
) -> String {
    use cox_protocol::sandbox::Confinement;
    let mode = crate::config::sandbox_mode_name(policy.mode);
    let network = match &policy.network {
        cox_sandbox::Network::Off => "no network".to_owned(),
        cox_sandbox::Network::On => "network on".to_owned(),
        cox_sandbox::Network::Domains(list) => format!(
            "network via proxy to {}",
            list.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    match confinement {
        Confinement::Off => format!("{mode} (commands run unconfined)"),
        Confinement::Confined { mechanism } => format!("{mode} via {mechanism}, {network}"),
        Confinement::Unavailable { why } => {
            format!("{mode}, but nothing can confine commands here: {why}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_read_denies_become_paths_and_patterns_do_not() {
        let home = Path::new("/home/u");
        let cwd = Path::new("/w");
        let p = |r: &str| plain_read_path(r, Some(home), cwd);
        assert_eq!(p("Read(~/.kube/**)"), Some(PathBuf::from("/home/u/.kube")));
        assert_eq!(p("Read(//etc/shadow)"), Some(PathBuf::from("/etc/shadow")));
        assert_eq!(p("Read(./secrets/*)"), Some(PathBuf::from("/w/secrets")));
        assert_eq!(p("Read(.env)"), Some(PathBuf::from("/w/.env")));
        assert_eq!(p("Read(**/*.pem)"), None);
        assert_eq!(p("Read(src/*.key)"), None);
        assert_eq!(p("Bash(cat:*)"), None);
    }

    #[test]
    fn deny_rules_name_domains_however_they_are_spelt() {
        let d = |t: &str| denied_domain(t).map(|p| p.to_string());
        assert_eq!(d("WebFetch(domain:evil.com)").as_deref(), Some("evil.com"));
        assert_eq!(
            d("webfetch( domain: Evil.COM. )").as_deref(),
            Some("evil.com")
        );
        assert_eq!(
            d("Web_Fetch(domain:*.evil.com)").as_deref(),
            Some("*.evil.com")
        );
        assert_eq!(
            d("WebFetch(domain:[::ffff:7f00:1])").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(d("Bash(domain:evil.com)"), None);
        assert_eq!(d("WebFetch(evil.com)"), None);
    }
}
