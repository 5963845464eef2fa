//! Presence: which live sessions work on a project, and where.
//!
//! Every session records where it works (`presence` in `cox.db`: its
//! process, its folder, its worktree) when it starts. From the others of its
//! project whose process still runs, a starting session learns two things:
//! a session already working in the same worktree is a warning (it starts
//! anyway: a worktree is a place, not a lock), and the model is told where
//! each other session works (system[3]), so two sessions do not edit the
//! same files unknowingly.
//!
//! Invariant: a row whose process is gone is never "live"; a row of this
//! very process (a subagent's parent) is not "another session".

use std::path::Path;

use cox_store::{Db, Presence};

use crate::worktree;

/// The project `cwd` belongs to: its repository's main checkout, else the
/// folder itself.
#[must_use]
pub fn project_of(cwd: &Path) -> String {
    worktree::checkouts(cwd)
        .map_or_else(|| cwd.to_path_buf(), |(_, main)| main)
        .display()
        .to_string()
}

/// The other live sessions of `project` (not `me`, not run by this
/// process), newest first.
#[must_use]
pub fn others(db: &Db, project: &str, me: &str) -> Vec<Presence> {
    let own = std::process::id();
    db.presence_in(project)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.session_id != me && p.pid != own && live(p))
        .collect()
}

/// Whether `row`'s session runs now: it has not ended, its process runs,
/// and that process is the one that started it (not a reused pid).
#[must_use]
pub fn live(row: &Presence) -> bool {
    row.pid != 0
        && worktree::alive(row.pid)
        && (row.pid_start == 0 || worktree::process_start(row.pid) == Some(row.pid_start))
}

/// The warning for a session starting in `worktree` when another live one
/// works there.
#[must_use]
pub fn shared_worktree(others: &[Presence], worktree: &str) -> Vec<String> {
    others
        .iter()
        .filter(|p| p.worktree.as_deref() == Some(worktree))
        .map(|p| {
            format!(
                "session {} (pid {}) is already working in worktree {worktree}",
                p.session_id, p.pid
            )
        })
        .collect()
}

/// What the model is told of the other live sessions (system[3]); `None`
/// when there are none.
#[must_use]
pub fn told(others: &[Presence]) -> Option<String> {
    if others.is_empty() {
        return None;
    }
    let mut out = String::from(
        "Other cox sessions are working on this project now (do not change their files):\n",
    );
    for p in others {
        let place = match (&p.worktree, &p.branch) {
            (Some(wt), Some(branch)) => format!("in worktree {wt} (branch {branch})"),
            (Some(wt), None) => format!("in worktree {wt}"),
            (None, _) => format!("in {} (no worktree)", p.cwd),
        };
        out.push_str(&format!("- session {} {place}\n", p.session_id));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, worktree: Option<&str>) -> Presence {
        Presence {
            session_id: id.into(),
            pid: 7,
            project: "/repo".into(),
            cwd: worktree.unwrap_or("/repo").into(),
            worktree: worktree.map(str::to_owned),
            branch: worktree.map(|_| "t42".into()),
            started_at: String::new(),
            pid_start: 0,
        }
    }

    #[test]
    fn the_model_is_told_where_each_other_session_works() {
        assert_eq!(told(&[]), None);
        let text = told(&[row("A", Some("/w/repo-t42")), row("B", None)]).unwrap();
        assert!(
            text.contains("- session A in worktree /w/repo-t42 (branch t42)"),
            "{text}"
        );
        assert!(
            text.contains("- session B in /repo (no worktree)"),
            "{text}"
        );
    }

    #[test]
    fn a_row_is_live_only_while_its_own_process_runs() {
        let own = std::process::id();
        let start = worktree::process_start(own).unwrap();
        let mut row = row("A", None);
        row.pid = own;
        row.pid_start = start;
        assert!(live(&row));
        row.pid_start = start + 1;
        assert!(!live(&row), "a reused pid is another process");
        row.pid = 0;
        assert!(!live(&row), "an ended session");
    }

    #[test]
    fn only_a_session_in_the_same_worktree_is_warned_about() {
        let others = [row("A", Some("/w/repo-t42")), row("B", Some("/w/repo-t7"))];
        let warned = shared_worktree(&others, "/w/repo-t42");
        assert_eq!(
            warned,
            ["session A (pid 7) is already working in worktree /w/repo-t42"]
        );
    }
}
