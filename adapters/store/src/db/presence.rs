//! The `presence` table: where each session works and which process runs
//! it (see schema version 6).
//!
//! Rows are written when a session starts or is resumed (one per session,
//! replaced) and never deleted; when the session ends its `pid` becomes 0.
//! A row is live while its pid is not 0 and that process runs with the
//! start time recorded (a reused pid is another process), which the reader
//! checks; a row that is not live only says where the session worked.

use rusqlite::params;

use super::{Db, DbError};

/// Where a session works.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Presence {
    pub session_id: String,
    /// The process that runs (or ran) it; 0 once it ended.
    pub pid: u32,
    /// When that process started (clock ticks since boot); 0: unknown.
    pub pid_start: u64,
    /// Its project: the main checkout, or its folder outside a repository.
    pub project: String,
    pub cwd: String,
    /// The worktree it works in, if any.
    pub worktree: Option<String>,
    pub branch: Option<String>,
    pub started_at: String,
}

impl Db {
    /// Records where `row`'s session works (replacing an earlier row).
    pub fn record_presence(&self, row: &Presence) -> Result<(), DbError> {
        self.conn()
            .execute(
                "INSERT OR REPLACE INTO presence \
                 (session_id, pid, project, cwd, worktree, branch, started_at, pid_start) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    row.session_id,
                    row.pid,
                    row.project,
                    row.cwd,
                    row.worktree,
                    row.branch,
                    row.started_at,
                    i64::try_from(row.pid_start).unwrap_or(0)
                ],
            )
            .map(drop)
            .map_err(self.fail("cannot record where the session works".to_owned()))
    }

    /// `session`, run by this process, ended: its row stays (where it
    /// worked) with no process. A row another process wrote since (the
    /// session resumed elsewhere) is not touched.
    pub fn presence_ended(&self, session: &str) -> Result<(), DbError> {
        self.conn()
            .execute(
                "UPDATE presence SET pid = 0 WHERE session_id = ?1 AND pid = ?2",
                params![session, std::process::id()],
            )
            .map(drop)
            .map_err(self.fail("cannot record that the session ended".to_owned()))
    }

    /// Every row of `project`, newest first.
    pub fn presence_in(&self, project: &str) -> Result<Vec<Presence>, DbError> {
        self.query_presence(
            "SELECT session_id, pid, project, cwd, worktree, branch, started_at, pid_start FROM presence \
             WHERE project = ?1 ORDER BY started_at DESC",
            Some(project),
        )
    }

    /// Every row whose session worked in a worktree.
    pub fn worktree_sessions(&self) -> Result<Vec<Presence>, DbError> {
        self.query_presence(
            "SELECT session_id, pid, project, cwd, worktree, branch, started_at, pid_start FROM presence \
             WHERE worktree IS NOT NULL",
            None,
        )
    }

    fn query_presence(&self, sql: &str, project: Option<&str>) -> Result<Vec<Presence>, DbError> {
        let conn = self.conn();
        let read = |row: &rusqlite::Row<'_>| {
            Ok(Presence {
                session_id: row.get(0)?,
                pid: row.get(1)?,
                project: row.get(2)?,
                cwd: row.get(3)?,
                worktree: row.get(4)?,
                branch: row.get(5)?,
                started_at: row.get(6)?,
                pid_start: u64::try_from(row.get::<_, i64>(7)?).unwrap_or(0),
            })
        };
        conn.prepare_cached(sql)
            .and_then(|mut stmt| match project {
                Some(project) => stmt.query_map(params![project], read)?.collect(),
                None => stmt.query_map([], read)?.collect(),
            })
            .map_err(self.fail("cannot read where sessions work".to_owned()))
    }
}
