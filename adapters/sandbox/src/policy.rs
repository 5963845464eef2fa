//! What a confined command may reach: the session's sandbox policy.
//!
//! The policy is data the CLI builds once per session from the mode, the
//! workspace roots, `[sandbox]` and the `Read(...)` deny rules; the
//! mechanisms ([`crate::bwrap`], [`crate::helper`]) turn it into mounts,
//! Landlock rules and a seccomp filter. Invariants:
//! - every path is absolute and exists (the CLI refuses a writable root that
//!   does not; a hidden path that does not exist has nothing to hide);
//! - a read-only re-bind or a hidden path always wins over a writable root
//!   that contains it (they are mounted after the roots);
//! - a protected folder (`.git`, `.cox`, `.claude` of a workspace root) is
//!   read-only whether or not it exists: a missing one is made as an empty
//!   folder, the mount point, before the first confined command
//!   ([`SandboxPolicy::prepare`]); git and cox both pass over an empty
//!   `.git` or `.claude`, and git does not show empty folders;
//! - a domain pattern is a plain host name, optionally behind `*.`; anything
//!   else is refused when parsed, never matched loosely.

use std::fmt;
use std::path::{Path, PathBuf};

use cox_protocol::types::SandboxMode;

/// How far a confined command's network reaches.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Network {
    /// No network at all (loopback of an empty namespace only).
    #[default]
    Off,
    /// The machine's network, unfiltered (`[sandbox] network = true`).
    On,
    /// Only through cox's proxy, to hosts these patterns admit.
    Domains(Vec<DomainPattern>),
}

/// A host pattern of `[sandbox] allowed_domains`: `example.com` admits the
/// host and its subdomains, `*.example.com` only its subdomains.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomainPattern {
    host: String,
    subdomains_only: bool,
}

impl DomainPattern {
    /// Parses one entry, saying what is wrong with a bad one.
    ///
    /// # Errors
    /// An empty entry, a scheme, a path, a port, whitespace, or a `*` other
    /// than a leading `*.`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (subdomains_only, host) = match text.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let bad = |why: &str| Err(format!("`{text}` is not a domain: {why}"));
        if host.is_empty() {
            return bad("it is empty");
        }
        if host.contains("://") {
            return bad("write the host alone, without a scheme");
        }
        if host.contains('/') {
            return bad("write the host alone, without a path");
        }
        if host.contains(':') {
            return bad("write the host alone, without a port");
        }
        if host.contains('*') {
            return bad("a `*` may only start the pattern, as `*.example.com`");
        }
        if host.starts_with('.') || host.ends_with('.') || host.contains("..") {
            return bad("a label is empty");
        }
        if !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_')
        {
            return bad("only letters, digits, `-`, `_` and `.` may appear in a host");
        }
        Ok(Self {
            host: host.to_ascii_lowercase(),
            subdomains_only,
        })
    }

    /// Whether `host` (a name or an address, as a client asked for it) is
    /// admitted. An address matches only a pattern that spells it.
    #[must_use]
    pub fn admits(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let below = host
            .strip_suffix(self.host.as_str())
            .is_some_and(|rest| rest.ends_with('.') && rest.len() > 1);
        below || (!self.subdomains_only && host == self.host)
    }
}

impl fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.subdomains_only {
            f.write_str("*.")?;
        }
        f.write_str(&self.host)
    }
}

/// Everything the mechanisms need to confine one session's commands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxPolicy {
    pub mode: SandboxMode,
    /// Folders a command may write (the workspace roots, `--add-dir`,
    /// `[sandbox] writable_roots`); ignored in `read-only` mode.
    pub writable_roots: Vec<PathBuf>,
    /// Paths inside a writable root that stay read-only (`.git`, the folder
    /// a `gitdir:` file names, `$COX_HOME`).
    pub read_only: Vec<PathBuf>,
    /// Folders inside a writable root kept read-only present or not (a
    /// workspace root's `.git`, `.cox`, `.claude`); see
    /// [`SandboxPolicy::prepare`].
    pub protected: Vec<PathBuf>,
    /// Paths nobody inside may read (secret folders, `Read(...)` denies).
    pub hidden: Vec<PathBuf>,
    /// Sockets bound back after the hidden paths (`[sandbox]
    /// allow_unix_sockets`).
    pub sockets: Vec<PathBuf>,
    /// Protected names that are links, with where each points: a link
    /// cannot be a mount point, so only its target is read-only, and the
    /// link itself is checked after every confined command and put back if
    /// a command replaced it ([`SandboxPolicy::restore_links`]).
    pub links: Vec<(PathBuf, PathBuf)>,
    /// Instruction files and `.mcp.json` at each root: read-only where
    /// they exist (in `read_only`); where one does not exist when a
    /// confined command starts and does when it ends, the command made it,
    /// and it is moved aside ([`SandboxPolicy::absent_files`],
    /// [`SandboxPolicy::remove_made`]).
    pub unmade: Vec<PathBuf>,
    pub network: Network,
    /// Hosts refused even when a pattern admits them (`WebFetch(domain:…)`
    /// deny rules).
    pub denied_domains: Vec<DomainPattern>,
    /// The program whose `__sandbox-exec` mode applies the seccomp filter
    /// (the cox binary itself).
    pub helper: PathBuf,
    /// Which of cox's variables a confined process sees.
    pub env: crate::EnvFilter,
    /// Paths under `/tmp` (which is private inside) that a launched
    /// program needs, bound read-only: an MCP server's script there.
    pub visible: Vec<PathBuf>,
}

impl SandboxPolicy {
    /// A policy for `mode` with nothing writable, hidden or reachable yet.
    #[must_use]
    pub fn new(mode: SandboxMode, helper: PathBuf) -> Self {
        Self {
            mode,
            writable_roots: Vec::new(),
            read_only: Vec::new(),
            protected: Vec::new(),
            hidden: Vec::new(),
            sockets: Vec::new(),
            links: Vec::new(),
            unmade: Vec::new(),
            network: Network::Off,
            denied_domains: Vec::new(),
            helper,
            env: crate::EnvFilter::default(),
            visible: Vec::new(),
        }
    }

    /// Adds a writable root and the read-only re-binds it needs: its `.git`
    /// (a folder, or a `gitdir:` file with the folder it names and that
    /// folder's `commondir`).
    pub fn add_writable_root(&mut self, root: &Path) {
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        for protected in git_paths(&root) {
            self.add_read_only(&protected);
        }
        if !self.writable_roots.contains(&root) {
            self.writable_roots.push(root);
        }
    }

    /// Keeps `path` read-only even inside a writable root. Paths that do not
    /// exist are left out: there is nothing to protect or to bind.
    pub fn add_read_only(&mut self, path: &Path) {
        if let Some(path) = resolved(path)
            && !self.read_only.contains(&path)
        {
            self.read_only.push(path);
        }
    }

    /// Keeps `name` inside `root` read-only whether it exists or not (a
    /// command must not create `.claude/settings.json` for the next session
    /// to load). An existing one that is a link is protected where it
    /// points, as [`SandboxPolicy::add_read_only`] does.
    pub fn add_protected(&mut self, root: &Path, name: &str) {
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let path = root.join(name);
        if path
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
        {
            self.add_read_only(&path);
            self.guard_link(&path);
            return;
        }
        if !self.protected.contains(&path) {
            self.protected.push(path);
        }
    }

    /// Remembers where `path` points when it is a link (a protected name:
    /// `.claude -> config/claude`, `AGENTS.md -> CLAUDE.md`), so that a
    /// command replacing it is undone.
    pub fn guard_link(&mut self, path: &Path) {
        if let Ok(target) = std::fs::read_link(path)
            && !self.links.iter().any(|(p, _)| p == path)
        {
            self.links.push((path.to_path_buf(), target));
        }
    }

    /// Keeps a command from making `path` (an instruction file the next
    /// session would load) where it does not exist: see
    /// [`SandboxPolicy::remove_made`].
    pub fn guard_absent(&mut self, path: &Path) {
        if !self.unmade.iter().any(|p| p == path) {
            self.unmade.push(path.to_path_buf());
        }
    }

    /// The policy with every guarded instruction file that exists now and
    /// is not read-only yet (made during the session: by you, or by the
    /// file tools after asking) read-only too; `None` when there is none.
    #[must_use]
    pub fn with_present_files(&self) -> Option<SandboxPolicy> {
        if !self.writes_roots() {
            return None;
        }
        let fresh: Vec<&PathBuf> = self
            .unmade
            .iter()
            .filter(|p| {
                p.symlink_metadata()
                    .is_ok_and(|m| !m.file_type().is_symlink())
                    && !self.read_only.contains(p)
            })
            .collect();
        if fresh.is_empty() {
            return None;
        }
        let mut policy = self.clone();
        for path in fresh {
            policy.add_read_only(path);
        }
        Some(policy)
    }

    /// Which guarded names do not exist now (before a confined command).
    #[must_use]
    pub fn absent_files(&self) -> Vec<PathBuf> {
        self.unmade
            .iter()
            .filter(|p| p.symlink_metadata().is_err())
            .cloned()
            .collect()
    }

    /// Moves aside each of `absent` (names that did not exist before the
    /// command) that exists now, as `NAME.cox-planted-…`, so that no later
    /// session loads what a command wrote there; one sentence each.
    #[must_use]
    pub fn remove_made(&self, absent: &[PathBuf]) -> Vec<String> {
        let mut notes = Vec::new();
        for path in absent {
            if path.symlink_metadata().is_err() {
                continue;
            }
            let aside = planted_name(path);
            notes.push(match std::fs::rename(path, &aside) {
                Ok(()) => format!(
                    "a command made {}, which the next session would load as instructions or \
                     MCP servers; cox moved it to {} (write it with the file tools, which ask)",
                    path.display(),
                    aside.display()
                ),
                Err(e) => format!(
                    "a command made {} and cox could not move it aside: {e}",
                    path.display()
                ),
            });
        }
        notes
    }

    /// Puts back every guarded link a command replaced or removed: what
    /// stands in its place is moved aside (`NAME.cox-planted-SECONDS`, so
    /// nothing is lost) and the link made again. Answers one sentence per
    /// link put back (or that could not be), for the call's notes.
    #[must_use]
    pub fn restore_links(&self) -> Vec<String> {
        let mut notes = Vec::new();
        for (path, target) in &self.links {
            if std::fs::read_link(path).is_ok_and(|now| now == *target) {
                continue;
            }
            let mut aside = None;
            if path.symlink_metadata().is_ok() {
                let moved = planted_name(path);
                if let Err(e) = std::fs::rename(path, &moved) {
                    notes.push(format!(
                        "a command replaced the protected link {} and cox could not move it aside: {e}",
                        path.display()
                    ));
                    continue;
                }
                aside = Some(moved);
            }
            let restored = std::os::unix::fs::symlink(target, path);
            notes.push(match (restored, aside) {
                (Ok(()), Some(aside)) => format!(
                    "a command replaced the protected link {} (-> {}); cox put the link back and \
                     moved what was made in its place to {}",
                    path.display(),
                    target.display(),
                    aside.display()
                ),
                (Ok(()), None) => format!(
                    "a command removed the protected link {} (-> {}); cox put it back",
                    path.display(),
                    target.display()
                ),
                (Err(e), _) => format!(
                    "a command replaced the protected link {} and cox could not put it back: {e}",
                    path.display()
                ),
            });
        }
        notes
    }

    /// Makes every missing protected folder as an empty folder, so that it
    /// can be mounted read-only. Called before each confined launch: a
    /// folder removed since (by a command a person let run unconfined) is
    /// made again. Nothing to do in `read-only` mode, where no root is
    /// writable.
    ///
    /// # Errors
    /// A protected folder that neither exists nor can be made: the launch
    /// must not go ahead without it.
    pub fn prepare(&self) -> Result<(), String> {
        if !self.writes_roots() {
            return Ok(());
        }
        for path in &self.protected {
            if path.symlink_metadata().is_ok() {
                continue;
            }
            match std::fs::create_dir(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(format!(
                        "cannot make {} (kept read-only for commands): {e}",
                        path.display()
                    ));
                }
            }
        }
        Ok(())
    }

    /// Hides `path` (a folder becomes an empty tmpfs, a file `/dev/null`).
    /// A path that does not exist is left out.
    pub fn add_hidden(&mut self, path: &Path) {
        if let Some(path) = resolved(path)
            && !self.hidden.contains(&path)
        {
            self.hidden.push(path);
        }
    }

    /// Hides each of `paths` spelt `~/…` under `home` (the permission
    /// engine's built-in secret paths: keys, cloud and git credentials,
    /// Claude Code's account file).
    pub fn hide_home_secrets(&mut self, home: &Path, paths: &[&str]) {
        for rel in paths {
            self.add_hidden(&home.join(rel.trim_start_matches("~/")));
        }
    }

    /// Hides the Unix sockets outside the writable roots that hand out
    /// credentials or control the machine (an ssh agent, the session bus, a
    /// container engine), but those in `allowed` (`[sandbox]
    /// allow_unix_sockets`), which stay reachable even inside a hidden
    /// folder. `ssh_agent` is `$SSH_AUTH_SOCK`.
    pub fn hide_sockets(&mut self, ssh_agent: Option<&Path>, allowed: &[PathBuf]) {
        let mut candidates: Vec<PathBuf> = [
            "/run/user",
            "/run/docker.sock",
            "/var/run/docker.sock",
            "/run/containerd",
            "/run/podman",
            "/run/dbus",
            "/var/run/dbus",
            "/run/snapd.socket",
            "/run/systemd/private",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        candidates.extend(ssh_agent.map(Path::to_path_buf));
        for path in candidates {
            // Never a folder that holds a writable root (a workspace under
            // /run/user would vanish).
            if self
                .writable_roots
                .iter()
                .any(|root| root.starts_with(&path) || path.starts_with(root))
            {
                continue;
            }
            self.add_hidden(&path);
        }
        for socket in allowed {
            if let Ok(socket) = socket.canonicalize()
                && !self.sockets.contains(&socket)
            {
                self.hidden.retain(|h| *h != socket);
                self.sockets.push(socket);
            }
        }
    }

    /// Whether the writable roots apply (every mode but `read-only`).
    #[must_use]
    pub fn writes_roots(&self) -> bool {
        self.mode != SandboxMode::ReadOnly
    }

    /// Whether a connection to `host` may pass the proxy.
    #[must_use]
    pub fn admits_host(&self, host: &str) -> bool {
        let Network::Domains(allowed) = &self.network else {
            return false;
        };
        allowed.iter().any(|p| p.admits(host))
            && !self.denied_domains.iter().any(|p| p.admits(host))
    }
}

/// The git state of `root` to keep read-only: its `.git` folder, or for a
/// worktree or submodule the `.git` file, the folder it points to, and that
/// folder's common dir.
fn git_paths(root: &Path) -> Vec<PathBuf> {
    let dot_git = root.join(".git");
    let mut out = Vec::new();
    let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
        return out;
    };
    out.push(dot_git.clone());
    if meta.is_file()
        && let Ok(text) = std::fs::read_to_string(&dot_git)
        && let Some(target) = text.lines().find_map(|l| l.strip_prefix("gitdir:"))
    {
        let target = root.join(target.trim());
        if let Ok(common) = std::fs::read_to_string(target.join("commondir")) {
            out.push(target.join(common.trim()));
        }
        out.push(target);
    }
    out
}

/// Where something a command planted at `path` is moved: nanoseconds and
/// the process, a name a command cannot have taken beforehand to make the
/// move fail.
fn planted_name(path: &Path) -> PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".cox-planted-{stamp}-{}", std::process::id()));
    PathBuf::from(name)
}

/// `path` with its links resolved, or `None` when nothing is there. A path
/// that cannot be looked up for another reason (a folder above it a
/// command made unreadable, in an earlier call) stays as it is: it is
/// still covered, and a mount that cannot be made on it stops the launch,
/// where leaving it out would uncover it.
fn resolved(path: &Path) -> Option<PathBuf> {
    match path.canonicalize() {
        Ok(path) => Some(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(_) if path.is_absolute() => Some(path.to_path_buf()),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_domain_admits_itself_and_its_subdomains_only() {
        let p = DomainPattern::parse("Example.com").unwrap();
        assert!(p.admits("example.com"));
        assert!(p.admits("api.example.com"));
        assert!(p.admits("API.Example.COM."));
        assert!(!p.admits("badexample.com"));
        assert!(!p.admits("example.com.evil.net"));
        assert!(!p.admits("com"));
        let sub = DomainPattern::parse("*.example.org").unwrap();
        assert!(!sub.admits("example.org"));
        assert!(sub.admits("a.b.example.org"));
        assert_eq!(sub.to_string(), "*.example.org");
    }

    #[test]
    fn malformed_domains_are_refused_with_the_reason() {
        for (bad, why) in [
            ("", "empty"),
            ("*.", "empty"),
            ("https://example.com", "scheme"),
            ("example.com/path", "path"),
            ("example.com:443", "port"),
            ("ex*ample.com", "`*`"),
            ("*example.com", "`*`"),
            ("exa mple.com", "letters"),
            ("example..com", "label"),
        ] {
            let err = DomainPattern::parse(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn a_denied_domain_wins_over_an_allowed_one() {
        let mut policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, PathBuf::from("/x"));
        policy.network = Network::Domains(vec![DomainPattern::parse("example.com").unwrap()]);
        policy.denied_domains = vec![DomainPattern::parse("secret.example.com").unwrap()];
        assert!(policy.admits_host("www.example.com"));
        assert!(!policy.admits_host("secret.example.com"));
        assert!(!policy.admits_host("x.secret.example.com"));
        assert!(!policy.admits_host("127.0.0.1"));
        policy.network = Network::On;
        assert!(!policy.admits_host("www.example.com"), "no proxy, no hosts");
    }

    #[test]
    fn a_worktree_protects_its_gitdir_and_the_common_dir() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("main");
        let git = main.join(".git");
        std::fs::create_dir_all(git.join("worktrees/wt")).unwrap();
        std::fs::write(git.join("worktrees/wt/commondir"), "../..\n").unwrap();
        let wt = dir.path().join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", git.join("worktrees/wt").display()),
        )
        .unwrap();
        let mut policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, PathBuf::from("/x"));
        policy.add_writable_root(&wt);
        let canon = |p: &Path| p.canonicalize().unwrap();
        assert!(policy.read_only.contains(&canon(&wt.join(".git"))));
        assert!(policy.read_only.contains(&canon(&git.join("worktrees/wt"))));
        assert!(
            policy.read_only.contains(&canon(&git)),
            "{:?}",
            policy.read_only
        );
    }
}
