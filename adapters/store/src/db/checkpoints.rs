//! The `checkpoints` table: a marker row per user turn (and per rewind),
//! and a row per file a call changed, naming where its pre-image is kept.
//!
//! Rows are added as a call starts (its pre-images) and finished as it
//! ends (`post`, the file's state after); rows of a file the call left as
//! it was are removed then. Nothing else changes a row, and only pruning
//! removes the rows of old, closed sessions.

use rusqlite::params;

use super::{Db, DbError};

/// One row, as written and as read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointRow {
    pub id: i64,
    pub session_id: String,
    pub turn: u32,
    pub call_id: Option<String>,
    /// `marker`, `pre`, `created` or `deleted`.
    pub kind: String,
    /// Absolute; `None` for a marker.
    pub path: Option<String>,
    /// Where the pre-image's bytes are in the archive.
    pub archive_id: Option<String>,
    /// The file's mode before the call, type bits included.
    pub mode: Option<u32>,
    /// The bytes were kept (false past the size limit).
    pub kept: bool,
    /// The file after the call: a SHA-256, `-` when gone, `None` while
    /// not known.
    pub post: Option<String>,
    /// A marker's prompt (its first line).
    pub prompt: Option<String>,
    pub created_at: String,
}

impl Db {
    /// Adds a row; its `id` is ignored and the new one returned.
    pub fn insert_checkpoint(&self, row: &CheckpointRow) -> Result<i64, DbError> {
        let conn = self.conn();
        conn.prepare_cached(
            "INSERT INTO checkpoints (session_id, turn, call_id, kind, path, archive_id, mode, \
             kept, post, prompt, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                row.session_id,
                row.turn,
                row.call_id,
                row.kind,
                row.path,
                row.archive_id,
                row.mode,
                row.kept,
                row.post,
                row.prompt,
                row.created_at,
            ])
        })
        .map_err(self.fail(format!(
            "cannot record a checkpoint of session {}",
            row.session_id
        )))?;
        Ok(conn.last_insert_rowid())
    }

    /// Records a file's state after its call.
    pub fn finish_checkpoint(&self, id: i64, post: &str) -> Result<(), DbError> {
        self.conn()
            .prepare_cached("UPDATE checkpoints SET post = ?2 WHERE id = ?1")
            .and_then(|mut stmt| stmt.execute(params![id, post]))
            .map_err(self.fail(format!("cannot finish checkpoint row {id}")))?;
        Ok(())
    }

    /// Removes a row whose call left its file as it was.
    pub fn drop_checkpoint(&self, id: i64) -> Result<(), DbError> {
        self.conn()
            .prepare_cached("DELETE FROM checkpoints WHERE id = ?1")
            .and_then(|mut stmt| stmt.execute(params![id]))
            .map_err(self.fail(format!("cannot remove checkpoint row {id}")))?;
        Ok(())
    }

    /// Every row of a session, oldest first.
    pub fn checkpoints_of(&self, session_id: &str) -> Result<Vec<CheckpointRow>, DbError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT id, session_id, turn, call_id, kind, path, archive_id, mode, kept, post, \
                 prompt, created_at FROM checkpoints WHERE session_id = ?1 ORDER BY id",
            )
            .map_err(self.fail(format!(
                "cannot read the checkpoints of session {session_id}"
            )))?;
        let rows = stmt
            .query_map(params![session_id], |r| {
                Ok(CheckpointRow {
                    id: r.get(0)?,
                    session_id: r.get(1)?,
                    turn: r.get(2)?,
                    call_id: r.get(3)?,
                    kind: r.get(4)?,
                    path: r.get(5)?,
                    archive_id: r.get(6)?,
                    mode: r.get(7)?,
                    kept: r.get(8)?,
                    post: r.get(9)?,
                    prompt: r.get(10)?,
                    created_at: r.get(11)?,
                })
            })
            .and_then(Iterator::collect)
            .map_err(self.fail(format!(
                "cannot read the checkpoints of session {session_id}"
            )))?;
        Ok(rows)
    }
}

/// What `cox checkpoints prune` removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Rows removed.
    pub rows: u64,
    /// The archive ids of the pre-images those rows named.
    pub archive_ids: Vec<String>,
}

impl Db {
    /// How many checkpoint rows there are, and the archive ids they name.
    pub fn checkpoint_archive_ids(&self) -> Result<(u64, Vec<String>), DbError> {
        let conn = self.conn();
        let fail = self.fail("cannot read the checkpoints");
        let count: u64 = conn
            .query_row("SELECT count(*) FROM checkpoints", [], |r| r.get(0))
            .map_err(self.fail("cannot read the checkpoints"))?;
        let mut stmt = conn
            .prepare("SELECT archive_id FROM checkpoints WHERE archive_id IS NOT NULL")
            .map_err(self.fail("cannot read the checkpoints"))?;
        let ids = stmt
            .query_map([], |r| r.get(0))
            .and_then(Iterator::collect)
            .map_err(fail)?;
        Ok((count, ids))
    }

    /// Removes the checkpoint rows older than `before` (RFC 3339) of every
    /// session that is not open, in one transaction; returns what went.
    pub fn prune_checkpoints(&self, before: &str) -> Result<Pruned, DbError> {
        let mut conn = self.conn();
        let fail = |doing: &str| self.fail(doing.to_owned());
        let tx = conn
            .transaction()
            .map_err(fail("cannot start pruning the checkpoints"))?;
        let selection = "FROM checkpoints WHERE created_at < ?1 AND session_id IN \
                         (SELECT id FROM sessions WHERE state != 'open')";
        let archive_ids: Vec<String> = {
            let mut stmt = tx
                .prepare(&format!(
                    "SELECT archive_id {selection} AND archive_id IS NOT NULL"
                ))
                .map_err(fail("cannot read the checkpoints to prune"))?;
            stmt.query_map(params![before], |r| r.get(0))
                .and_then(Iterator::collect)
                .map_err(fail("cannot read the checkpoints to prune"))?
        };
        let rows = tx
            .execute(&format!("DELETE {selection}"), params![before])
            .map_err(fail("cannot prune the checkpoints"))?;
        tx.commit().map_err(fail("cannot prune the checkpoints"))?;
        Ok(Pruned {
            rows: rows as u64,
            archive_ids,
        })
    }
}
