//! The bubblewrap command line for one confined command.
//!
//! The whole file system is bound read-only, then `/dev`, `/proc` and a
//! private `/tmp` are mounted fresh (the new `/proc` read-only whole), then
//! the writable roots are bound read-write; the read-only re-binds and the
//! hidden paths go on top (mounted, as root, by the helper inside the
//! namespaces, [`crate::mounts`], far cheaper than bubblewrap's own binds),
//! so a later mount always narrows an earlier one.
//!
//! Invariant: a command never reaches a writable host setting. Run by root,
//! uid 0 would write `/proc/sys` and the other settings whatever
//! capabilities were dropped; so `/proc` is read-only whole (bubblewrap
//! remounts it, or, run by root, the helper, which also moves the command
//! to an unprivileged uid: [`crate::uid`]), and `/sys` is read-only through
//! the first bind (bubblewrap makes every sub-mount read-only). The command
//! gets its own user, pid, ipc and uts namespaces (and net, unless the
//! network is on), no capabilities, a new session (no terminal to inject
//! into), and dies with cox. Inside, the helper mode of cox applies seccomp
//! and runs it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::helper::{HELPER_ARG, PROXY_SOCKET_INSIDE};
use crate::policy::{Network, SandboxPolicy};

/// The arguments to give bwrap (after its own path).
#[must_use]
pub fn args(
    policy: &SandboxPolicy,
    cwd: &Path,
    helper_spec: &str,
    proxy_socket: Option<&Path>,
    program: &[OsString],
) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::with_capacity(64);
    let mut push = |items: &[&dyn AsRef<std::ffi::OsStr>]| {
        a.extend(items.iter().map(|i| i.as_ref().to_os_string()));
    };
    // Run by root, the helper does what needs the host's user namespace
    // (see `crate::uid`), read-only `/proc` included.
    let root = delegates_mounts();
    push(&[&"--ro-bind", &"/", &"/"]);
    // The fresh /proc whole is read-only: every kernel setting in it
    // (`/proc/sys`, `sysrq-trigger`, `irq`…), whatever this kernel has.
    push(&[&"--dev", &"/dev", &"--proc", &"/proc"]);
    if !root {
        push(&[&"--remount-ro", &"/proc"]);
    }
    push(&[&"--tmpfs", &"/tmp"]);
    let roots_flag = if policy.writes_roots() {
        "--bind"
    } else {
        "--ro-bind"
    };
    for root in &policy.writable_roots {
        push(&[&roots_flag, root, root]);
    }
    // Things under /tmp the command still needs: its cwd, the helper, a
    // server's script.
    let visible = policy.visible.iter().map(PathBuf::as_path);
    for needed in [cwd, policy.helper.as_path()].into_iter().chain(visible) {
        if needed.starts_with("/tmp")
            && !policy.writable_roots.iter().any(|r| needed.starts_with(r))
        {
            push(&[&"--ro-bind-try", &needed, &needed]);
        }
    }
    // As root the read-only and hidden paths are the helper's to mount
    // (see `helper_mounts`), but a hidden folder holding a socket bound
    // back; otherwise bubblewrap mounts them all.
    let delegated = root;
    if !delegated {
        for dir in pinned(policy) {
            push(&[&"--bind", &dir, &dir]);
        }
        if policy.writes_roots() {
            for path in &policy.protected {
                push(&[&"--ro-bind", path, path]);
            }
        }
        for path in &policy.read_only {
            push(&[&"--ro-bind", path, path]);
        }
    }
    for path in &policy.hidden {
        if delegated && !holds_a_socket(policy, path) {
            continue;
        }
        if path.is_dir() {
            push(&[&"--tmpfs", path, &"--remount-ro", path]);
        } else {
            push(&[&"--ro-bind", &"/dev/null", path]);
        }
    }
    for socket in &policy.sockets {
        push(&[&"--bind", socket, socket]);
    }
    if let Some(socket) = proxy_socket {
        push(&[&"--bind", &socket, &PROXY_SOCKET_INSIDE]);
    }
    if !root {
        push(&[&"--unshare-user"]);
    }
    push(&[
        &"--unshare-pid",
        &"--unshare-ipc",
        &"--unshare-uts",
        &"--unshare-cgroup-try",
    ]);
    if policy.network != Network::On {
        push(&[&"--unshare-net"]);
    }
    push(&[&"--cap-drop", &"ALL"]);
    // The helper mounts the rest and leaves uid 0, then gives these up
    // with every other capability before the command runs.
    if root {
        for cap in crate::uid::CAPABILITIES {
            push(&[&"--cap-add", &cap]);
        }
    }
    push(&[
        &"--die-with-parent",
        &"--new-session",
        &"--chdir",
        &cwd,
        &"--",
        &policy.helper,
        &HELPER_ARG,
        &helper_spec,
        &"--",
    ]);
    a.extend(program.iter().cloned());
    a
}

/// Whether hidden folder `path` holds a socket the policy binds back
/// (bubblewrap must hide it first, then bind the socket over it).
fn holds_a_socket(policy: &SandboxPolicy, path: &Path) -> bool {
    path.is_dir() && policy.sockets.iter().any(|s| s.starts_with(path))
}

/// Whether the helper mounts the read-only and hidden paths: when cox runs
/// as root, where bubblewrap leaves the helper `CAP_SYS_ADMIN` in the
/// sandbox's own user namespace. Run by another user, bubblewrap hands a
/// requested capability over in a user namespace nested in the one that
/// owns the mounts, where it cannot mount, so bubblewrap mounts them
/// itself (about 0.3 ms a path rather than 13 µs).
#[must_use]
pub fn delegates_mounts() -> bool {
    // SAFETY: geteuid has no preconditions.
    #[allow(unsafe_code)]
    let euid = unsafe { libc::geteuid() };
    euid == 0
}

/// The folders between a writable root and each path kept read-only or
/// hidden inside it, parents first: each is bound onto itself, still
/// writable, so that it is a mount point, which no command can rename
/// (renaming `conf` would carry a read-only `conf/prod.yaml` away and let a
/// fresh one be written in its place).
#[must_use]
pub fn pinned(policy: &SandboxPolicy) -> Vec<PathBuf> {
    if !policy.writes_roots() {
        return Vec::new();
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for path in policy
        .protected
        .iter()
        .chain(&policy.read_only)
        .chain(&policy.hidden)
    {
        let Some(root) = policy.writable_roots.iter().find(|r| path.starts_with(r)) else {
            continue;
        };
        for dir in path.ancestors().skip(1) {
            if dir == root.as_path() || !dir.starts_with(root) {
                break;
            }
            if !out.iter().any(|d| d == dir) {
                out.push(dir.to_path_buf());
            }
        }
    }
    out.sort_by_key(|d| d.components().count());
    out
}

/// What the helper mounts inside the namespaces (nothing unless
/// [`delegates_mounts`]): every read-only path (the protected ones first,
/// when the roots are writable), then every hidden path but those
/// bubblewrap mounts itself.
#[must_use]
pub fn helper_mounts(policy: &SandboxPolicy) -> (Vec<PathBuf>, Vec<PathBuf>, Vec<PathBuf>) {
    if !delegates_mounts() {
        return (Vec::new(), Vec::new(), Vec::new());
    }
    let mut read_only: Vec<PathBuf> = Vec::new();
    if policy.writes_roots() {
        read_only.extend(policy.protected.iter().cloned());
    }
    read_only.extend(policy.read_only.iter().cloned());
    let hidden = policy
        .hidden
        .iter()
        .filter(|h| !holds_a_socket(policy, h))
        .cloned()
        .collect();
    (pinned(policy), read_only, hidden)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cox_protocol::types::SandboxMode;
    use std::path::PathBuf;

    fn joined(args: &[OsString]) -> String {
        args.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn later_mounts_narrow_earlier_ones() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join(".git")).unwrap();
        let secret = tempfile::tempdir().unwrap();
        let mut policy =
            SandboxPolicy::new(SandboxMode::WorkspaceWrite, PathBuf::from("/usr/bin/cox"));
        policy.add_writable_root(ws.path());
        policy.add_hidden(secret.path());
        let line = joined(&args(&policy, ws.path(), "{}", None, &["true".into()]));
        let root = ws.path().canonicalize().unwrap();
        assert!(
            line.contains(&format!("--bind {0} {0}", root.display())),
            "{line}"
        );
        if !delegates_mounts() {
            assert!(
                line.starts_with(
                    "--ro-bind / / --dev /dev --proc /proc --remount-ro /proc --tmpfs /tmp"
                ),
                "{line}"
            );
            assert!(line.contains("--unshare-user"), "{line}");
            assert!(line.contains(".git"), "{line}");
            return;
        }
        // As root /proc is the helper's to make read-only, once it has
        // written the maps of the command's user namespace through it.
        assert!(
            line.starts_with("--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp"),
            "{line}"
        );
        assert!(!line.contains("--unshare-user"), "{line}");
        // As root the read-only and hidden paths are the helper's to mount,
        // in that order, with the capabilities to do it and to leave uid 0.
        let (pins, read_only, hidden) = helper_mounts(&policy);
        assert!(pins.is_empty(), "{pins:?}");
        assert_eq!(read_only, [root.join(".git")]);
        assert_eq!(hidden, [secret.path().canonicalize().unwrap()]);
        assert!(!line.contains(".git"), "{line}");
        assert!(line.contains(
            "--unshare-net --cap-drop ALL --cap-add CAP_SYS_ADMIN --cap-add CAP_SETUID \
             --cap-add CAP_SETGID --cap-add CAP_SETFCAP --cap-add CAP_CHOWN \
             --cap-add CAP_DAC_READ_SEARCH --die-with-parent --new-session"
        ));
        assert!(
            line.ends_with("/usr/bin/cox __sandbox-exec {} -- true"),
            "{line}"
        );
    }

    #[test]
    fn a_hidden_folder_holding_an_allowed_socket_is_hidden_by_bwrap_first() {
        let ws = tempfile::tempdir().unwrap();
        let run = tempfile::tempdir().unwrap();
        let socket = run.path().join("agent.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let mut policy =
            SandboxPolicy::new(SandboxMode::WorkspaceWrite, PathBuf::from("/usr/bin/cox"));
        policy.add_writable_root(ws.path());
        policy.add_hidden(run.path());
        policy.hide_sockets(None, std::slice::from_ref(&socket));
        let line = joined(&args(&policy, ws.path(), "{}", None, &["true".into()]));
        let run = run.path().canonicalize().unwrap();
        let hide = line.find(&format!("--tmpfs {}", run.display())).unwrap();
        let bind = line
            .find(&format!("--bind {0}/agent.sock", run.display()))
            .unwrap();
        assert!(hide < bind, "{line}");
        assert!(!helper_mounts(&policy).2.contains(&run));
        assert!(delegates_mounts() || line.matches("--tmpfs").count() > 1);
    }

    #[test]
    fn read_only_mode_binds_the_roots_read_only_and_network_on_shares_it() {
        let ws = tempfile::tempdir().unwrap();
        let mut policy = SandboxPolicy::new(SandboxMode::ReadOnly, PathBuf::from("/usr/bin/cox"));
        policy.add_writable_root(ws.path());
        policy.network = Network::On;
        let line = joined(&args(&policy, ws.path(), "{}", None, &["true".into()]));
        let root = ws.path().canonicalize().unwrap();
        assert!(line.contains(&format!("--ro-bind {0} {0}", root.display())));
        assert!(!line.contains("--unshare-net"));
    }
}
