//! Which confinement this machine offers, found once per process.
//!
//! bubblewrap is tried first, with a real run that unshares the user, pid
//! and net namespaces (a bwrap that is installed but cannot start, as where
//! user namespaces are disabled, is not a mechanism); then Landlock, by the
//! kernel's ABI version. The answer is cached: the probe costs one bwrap
//! run, once.
//!
//! `COX_SANDBOX_LANDLOCK=off` makes the probe treat Landlock as missing,
//! so a person can see what cox does on a kernel without it; it can only
//! remove a mechanism, never add one.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The mechanism confined commands run under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// bubblewrap namespaces and mounts, then the seccomp helper.
    Bubblewrap { bwrap: PathBuf },
    /// No bwrap: Landlock rules and the seccomp helper.
    Landlock { abi: i64 },
    /// Nothing can confine a command here; `why` says what is missing and
    /// how to get it.
    Unavailable { why: String },
}

/// What the probe found, for the sandbox and for `cox doctor`.
#[derive(Clone, Debug)]
pub struct Probe {
    pub mechanism: Mechanism,
    /// The kernel's Landlock ABI (0: none, or turned off).
    pub landlock_abi: i64,
    /// Where bwrap was found, and why it could not be used if it could not.
    pub bwrap: Option<PathBuf>,
    pub bwrap_failure: Option<String>,
    /// How long the probe took.
    pub took: Duration,
}

impl Probe {
    /// Whether user namespaces work (bwrap started with them).
    #[must_use]
    pub fn user_namespaces(&self) -> bool {
        matches!(self.mechanism, Mechanism::Bubblewrap { .. })
    }
}

/// The machine's probe, run on the first call.
pub fn probe() -> &'static Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    PROBE.get_or_init(run_probe)
}

fn run_probe() -> Probe {
    let started = Instant::now();
    let landlock_abi = if std::env::var("COX_SANDBOX_LANDLOCK").as_deref() == Ok("off") {
        0
    } else {
        crate::landlock::kernel_abi()
    };
    let bwrap = find_in_path("bwrap");
    let bwrap_failure = bwrap.as_deref().and_then(try_bwrap);
    let mechanism = match (&bwrap, &bwrap_failure) {
        (Some(path), None) => Mechanism::Bubblewrap { bwrap: path.clone() },
        _ if landlock_abi > 0 => Mechanism::Landlock { abi: landlock_abi },
        (None, _) => Mechanism::Unavailable {
            why: "bubblewrap (bwrap) is not installed and the kernel offers no Landlock; \
                  install it (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap)"
                .into(),
        },
        (Some(_), Some(failure)) => Mechanism::Unavailable {
            why: format!(
                "bwrap cannot start ({failure}) and the kernel offers no Landlock; \
                 enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)"
            ),
        },
    };
    Probe {
        mechanism,
        landlock_abi,
        bwrap,
        bwrap_failure,
        took: started.elapsed(),
    }
}

/// `None` when bwrap starts with the namespaces the sandbox uses; else the
/// first line it printed.
fn try_bwrap(bwrap: &Path) -> Option<String> {
    let out = Command::new(bwrap)
        .args([
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--unshare-user",
            "--unshare-pid",
            "--unshare-net",
            "--cap-drop",
            "ALL",
            "--",
            "true",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match out {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("it exited with an error")
                .trim()
                .to_owned(),
        ),
        Err(e) => Some(e.to_string()),
    }
}

/// The first executable `name` on `PATH`.
#[must_use]
pub fn find_in_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}
