//! Facts the driver reads from the machine for the session: the time, the
//! git branch, the person's home folder, and the `COX_*` variables that are
//! no flag's. The core never
//! reads them itself (it is told), so a test can pin them.
//!
//! Where each `COX_*` variable is read, once:
//! - `COX_PROVIDER`, `COX_MODEL`, `COX_EFFORT`, `COX_PERMISSION_MODE` and
//!   `COX_SCENARIO` by clap, on the flag each stands for (see
//!   [`crate::given`]);
//! - `COX_MANAGED_SETTINGS` ([`managed_settings`]) here: where Claude
//!   Code's managed settings file is, when not in `/etc/claude-code`;
//! - `COX_BUDGET_SESSION_USD`, `COX_BUDGET_MONTHLY_USD` ([`budget_vars`])
//!   and `COX_LOG` ([`cox_log`]) here: the monthly cap and the log filter
//!   have no flag, and the session cap's variable is a layer under
//!   `--max-budget-usd` (it may be 0, the flag may not) that `cox config
//!   show`, which takes no such flag, reports too;
//! - `COX_HOME` by `cox_store::CoxHome::resolve`, the library every command
//!   and test harness opens the record through;
//! - `COX_TUI_EXIT_AFTER_FIRST_FRAME` by the terminal UI (`cox_tui::run`),
//!   the launch benchmark's switch, which no person types.

use std::path::{Path, PathBuf};

pub use cox_store::clock::{now_rfc3339, rfc3339};

/// `COX_BUDGET_SESSION_USD` and `COX_BUDGET_MONTHLY_USD`, named, with their
/// text as set (`None` when unset or not UTF-8): this run's `[budget]`
/// caps, over both config files.
#[must_use]
pub fn budget_vars() -> [(&'static str, Option<String>); 2] {
    ["COX_BUDGET_SESSION_USD", "COX_BUDGET_MONTHLY_USD"].map(|name| (name, var(name)))
}

/// `COX_LOG`, as set (`None` when unset or not UTF-8): the tracing filter
/// of `logs/cox.log.<date>` for this run, over `core.log_level`.
#[must_use]
pub fn cox_log() -> Option<String> {
    var("COX_LOG")
}

/// `COX_MANAGED_SETTINGS`, when set and not empty: the path of Claude
/// Code's managed settings file for an install that keeps it elsewhere (and
/// for tests, which must not write `/etc`).
#[must_use]
pub fn managed_settings() -> Option<PathBuf> {
    var("COX_MANAGED_SETTINGS")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The person's home folder, for `~/` in rules.
#[must_use]
pub fn home_dir() -> Option<PathBuf> {
    // As the file tools resolve paths: a home reached through a link is
    // where the link leads, or `~/.ssh` rules would match nothing there.
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .map(|h| h.canonicalize().unwrap_or(h))
}

/// The checked-out branch of the repository holding `cwd`, read from
/// `.git/HEAD` without starting git. `None` outside a repository or on a
/// detached HEAD.
#[must_use]
pub fn git_branch(cwd: &Path) -> Option<String> {
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        let dot_git = d.join(".git");
        let head = if dot_git.is_dir() {
            std::fs::read_to_string(dot_git.join("HEAD")).ok()
        } else if dot_git.is_file() {
            let pointer = std::fs::read_to_string(&dot_git).ok()?;
            let gitdir = pointer.strip_prefix("gitdir:")?.trim();
            std::fs::read_to_string(d.join(gitdir).join("HEAD")).ok()
        } else {
            None
        };
        if let Some(head) = head {
            return head
                .trim()
                .strip_prefix("ref: refs/heads/")
                .map(str::to_owned);
        }
        dir = d.parent();
    }
    None
}
