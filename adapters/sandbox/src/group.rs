//! Ownership of a command's process group, so nothing of it outlives the call.
//!
//! A command runs as the leader of a fresh process group, and everything it
//! starts (pipelines, subshells, `&` jobs) inherits that group. Killing the
//! group, not just the leader, is the only way to take all of them down.
//!
//! Invariants:
//! - while a [`ProcessGroup`] is armed, dropping it sends SIGKILL to the
//!   whole group; this is what makes dropping an exec future safe;
//! - the group id is never 0 or 1 (`killpg(0)` would hit our own group, and
//!   pid 1 is init), so a bogus id can never kill anything of ours;
//! - the owner kills the group before reaping the leader's status where it
//!   can; after reaping, the kernel keeps the id reserved while any member is
//!   alive, so a late kill can only miss, not hit a stranger, unless the
//!   whole group is gone and the id was reused in between.

/// A process group we started and must leave empty (the hooks adapter
/// holds its hooks' groups with it too).
pub struct ProcessGroup {
    pgid: Option<libc::pid_t>,
}

impl ProcessGroup {
    /// Takes charge of the group led by `leader` (its pid is the group id).
    pub fn new(leader: u32) -> Self {
        let pgid = libc::pid_t::try_from(leader).ok().filter(|&id| id > 1);
        Self { pgid }
    }

    /// Sends SIGKILL to every process in the group.
    pub fn kill(&self) {
        if let Some(pgid) = self.pgid {
            kill_group(pgid);
        }
    }

    /// The group is known to be empty: dropping must not signal it again.
    pub fn disarm(&mut self) {
        self.pgid = None;
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// SIGKILL to the group `pgid`; errors (the group is already gone) are moot.
fn kill_group(pgid: libc::pid_t) {
    debug_assert!(pgid > 1);
    #[allow(unsafe_code)]
    // SAFETY: killpg takes two integers and touches no memory of ours; the
    // caller guarantees pgid > 1, so it never addresses our own group (0).
    let _ = unsafe { libc::killpg(pgid, libc::SIGKILL) };
}
