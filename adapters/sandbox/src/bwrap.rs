//! The bubblewrap command line for one confined command.
//!
//! The whole file system is bound read-only, then `/dev`, `/proc` and a
//! private `/tmp` are mounted fresh, then the writable roots are bound
//! read-write, then the read-only re-binds and the hidden paths go on top,
//! so a later mount always narrows an earlier one. The command gets its own
//! user, pid, ipc and uts namespaces (and net, unless the network is on),
//! no capabilities, a new session (no terminal to inject into), and dies
//! with cox. Inside, the helper mode of cox applies seccomp and runs it.

use std::ffi::OsString;
use std::path::Path;

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
    push(&[&"--ro-bind", &"/", &"/"]);
    push(&[&"--dev", &"/dev", &"--proc", &"/proc", &"--tmpfs", &"/tmp"]);
    let roots_flag = if policy.writes_roots() {
        "--bind"
    } else {
        "--ro-bind"
    };
    for root in &policy.writable_roots {
        push(&[&roots_flag, root, root]);
    }
    // Things under /tmp the command still needs: its cwd, the helper.
    for needed in [cwd, policy.helper.as_path()] {
        if needed.starts_with("/tmp")
            && !policy.writable_roots.iter().any(|r| needed.starts_with(r))
        {
            push(&[&"--ro-bind-try", &needed, &needed]);
        }
    }
    for path in &policy.read_only {
        push(&[&"--ro-bind", path, path]);
    }
    for path in &policy.hidden {
        if path.is_dir() {
            push(&[&"--tmpfs", path, &"--remount-ro", path]);
        } else {
            push(&[&"--ro-bind", &"/dev/null", path]);
        }
    }
    if let Some(socket) = proxy_socket {
        push(&[&"--bind", &socket, &PROXY_SOCKET_INSIDE]);
    }
    push(&[
        &"--unshare-user",
        &"--unshare-pid",
        &"--unshare-ipc",
        &"--unshare-uts",
        &"--unshare-cgroup-try",
    ]);
    if policy.network != Network::On {
        push(&[&"--unshare-net"]);
    }
    push(&[
        &"--cap-drop",
        &"ALL",
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
        let bind = line.find(&format!("--bind {} ", root.display())).unwrap();
        let git = line
            .find(&format!("--ro-bind {0}/.git {0}/.git", root.display()))
            .unwrap();
        let hide = line
            .find(&format!(
                "--tmpfs {}",
                secret.path().canonicalize().unwrap().display()
            ))
            .unwrap();
        assert!(line.starts_with("--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp"));
        assert!(bind < git && git < hide, "{line}");
        assert!(line.contains("--unshare-net --cap-drop ALL --die-with-parent --new-session"));
        assert!(
            line.ends_with("/usr/bin/cox __sandbox-exec {} -- true"),
            "{line}"
        );
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
