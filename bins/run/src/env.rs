//! Facts the driver reads from the machine for the session: the time and
//! the git branch. The core never reads them itself (it is told), so a test
//! can pin them.

use std::path::Path;

pub use cox_store::clock::{now_rfc3339, rfc3339};

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
