//! The `presence` table: where each session works and which process runs
//! it (see schema version 6).
//!
//! Rows are written when a session starts or is resumed (one per session,
//! replaced) and never deleted: whether a session is live is its process's
//! business ([`Presence::pid`]), which the reader checks; a gone process's
//! row only says where the session worked.

use rusqlite::params;

use super::{Db, DbError};

/// Where a session works.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Presence {
    pub session_id: String,
    /// The process that runs (or ran) it.
    pub pid: u32,
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
                 (session_id, pid, project, cwd, worktree, branch, started_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    row.session_id,
                    row.pid,
                    row.project,
                    row.cwd,
                    row.worktree,
                    row.branch,
                    row.started_at
                ],
            )
            .map(drop)
            .map_err(self.fail("cannot record where the session works".to_owned()))
    }

    /// Every row of `project`, newest first.
    pub fn presence_in(&self, project: &str) -> Result<Vec<Presence>, DbError> {
        self.query_presence(
            "SELECT session_id, pid, project, cwd, worktree, branch, started_at FROM presence \
             WHERE project = ?1 ORDER BY started_at DESC",
            Some(project),
        )
    }

    /// Every row whose session worked in a worktree.
    pub fn worktree_sessions(&self) -> Result<Vec<Presence>, DbError> {
        self.query_presence(
            "SELECT session_id, pid, project, cwd, worktree, branch, started_at FROM presence \
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
