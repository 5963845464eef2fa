//! The bubblewrap command line for one confined command.
//!
//! The whole file system is bound read-only, then `/dev`, `/proc` and a
//! private `/tmp` are mounted fresh, then every kernel setting under the
//! fresh `/proc` is bound read-only again ([`proc_settings`]), then the
//! writable roots are bound read-write, then the read-only re-binds and the
//! hidden paths go on top, so a later mount always narrows an earlier one.
//!
//! Invariant: a command never reaches a writable host setting. Run by root,
//! bubblewrap maps the command's uid 0 to root outside, and the kernel lets
//! that uid write `/proc/sys` and the other settings whatever capabilities
//! were dropped; only a read-only mount stops it. `/sys` is read-only
//! through the first bind (bubblewrap makes every sub-mount read-only). The command gets its own
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
    push(&[&"--dev", &"/dev", &"--proc", &"/proc"]);
    for setting in proc_settings() {
        push(&[&"--ro-bind-try", setting, setting]);
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
    // Things under /tmp the command still needs: its cwd, the helper.
    for needed in [cwd, policy.helper.as_path()] {
        if needed.starts_with("/tmp")
            && !policy.writable_roots.iter().any(|r| needed.starts_with(r))
        {
            push(&[&"--ro-bind-try", &needed, &needed]);
        }
    }
    if policy.writes_roots() {
        for path in &policy.protected {
            push(&[&"--ro-bind", path, path]);
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
    for socket in &policy.sockets {
        push(&[&"--bind", socket, socket]);
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

/// The entries of `/proc` that change the kernel rather than one process:
/// everything at its top level but the process folders (`1`, `self`,
/// `thread-self`) and the links into them (`mounts`, `net`) that is a
/// folder (`sys`, `irq`, `bus`, `fs`, `pressure`, `driver`, …) or a file
/// anyone may write (`sysrq-trigger`, `mtrr`). Listed once per process from
/// this machine's `/proc`, with the well-known ones always in (a kernel
/// that lacks one is skipped by `--ro-bind-try`).
#[must_use]
pub fn proc_settings() -> &'static [std::path::PathBuf] {
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;
    static LIST: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    LIST.get_or_init(|| {
        let mut names: Vec<String> = ["sys", "sysrq-trigger", "irq", "bus", "fs"]
            .map(String::from)
            .to_vec();
        if let Ok(entries) = std::fs::read_dir("/proc") {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.bytes().all(|b| b.is_ascii_digit())
                    || name == "self"
                    || name == "thread-self"
                {
                    continue;
                }
                let Ok(meta) = entry.path().symlink_metadata() else {
                    continue;
                };
                let settable =
                    meta.is_dir() || (meta.is_file() && meta.permissions().mode() & 0o222 != 0);
                if settable && !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names.sort();
        names
            .into_iter()
            .map(|n| PathBuf::from("/proc").join(n))
            .collect()
    })
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
        assert!(line.starts_with("--ro-bind / / --dev /dev --proc /proc --ro-bind-try /proc/"));
        assert!(line.contains("--ro-bind-try /proc/sys /proc/sys"), "{line}");
        assert!(
            line.contains("--ro-bind-try /proc/sysrq-trigger /proc/sysrq-trigger"),
            "{line}"
        );
        let tmp = line.find("--tmpfs /tmp").unwrap();
        assert!(
            line.find("/proc/sys").unwrap() < tmp && tmp < bind,
            "{line}"
        );
        assert!(bind < git && git < hide, "{line}");
        assert!(line.contains("--unshare-net --cap-drop ALL --die-with-parent --new-session"));
        assert!(
            line.ends_with("/usr/bin/cox __sandbox-exec {} -- true"),
            "{line}"
        );
    }

    #[test]
    fn the_kernel_settings_in_proc_are_listed_and_the_processes_are_not() {
        let list = proc_settings();
        let has = |name: &str| {
            list.iter()
                .any(|p| p == Path::new("/proc").join(name).as_path())
        };
        for name in ["sys", "sysrq-trigger", "irq", "bus", "fs"] {
            assert!(has(name), "{name}: {list:?}");
        }
        assert!(!has("self") && !has("thread-self") && !has("1"), "{list:?}");
        assert!(
            !has("mounts") && !has("net"),
            "links into a process: {list:?}"
        );
        assert!(!has("cpuinfo"), "a read-only file needs no bind: {list:?}");
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
