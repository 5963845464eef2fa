//! `cox.db`: the SQLite database beside the rollouts, holding what is asked
//! of the record across sessions (which sessions exist, what each call
//! cost) without reading every rollout back.
//!
//! Invariants:
//! - the rollout stays the full transcript; this database holds summaries,
//!   the usage ledger and the archive's index (with the small outputs
//!   themselves), and a cost that is not a `usage` row does not exist
//!   (`sessions.cost_usd` is recomputed from those rows);
//! - the schema is versioned in `PRAGMA user_version` and built by the
//!   ordered steps of `schema.rs`, each applied in one transaction; a
//!   database from a newer cox, or a file that is not a database, is refused
//!   before anything is written to it, and never replaced or deleted;
//! - several processes may write at once: the database runs in WAL mode and
//!   waits up to five seconds for a lock rather than failing;
//! - a run costs no fsync unless its commits take the WAL past its
//!   checkpoint size: a new file is built without them, and closing leaves
//!   the WAL for a later checkpoint (see `keep_wal_on_close`);
//! - every error is a single line that starts with the database's path.
//!
//! Times are RFC 3339 UTC strings with milliseconds, so that comparing and
//! cutting them as text (a month is the first 7 characters) is exact.

#[macro_use]
mod rows;
mod archive;
mod checkpoints;
pub use checkpoints::{CheckpointRow, Pruned};
mod ext;
pub use ext::TrustedExtension;
mod mcp;
pub use mcp::TrustedTool;
mod memory;
pub use memory::MemoryRow;
mod presence;
pub use presence::Presence;
mod read;
mod report;
mod schema;

pub(crate) use read::{Picked, ambiguity, pick};
pub use report::{CacheDay, ModelTotals, PeriodTotals, TierJobTotals, Totals};
pub use rows::{ArchiveRow, Kept, SessionRow, UsageRow, project_slug};

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use cox_protocol::store::{SessionState, Spend};
use rusqlite::{Connection, TransactionBehavior, params};

/// The schema version this build writes and understands.
#[allow(clippy::cast_possible_truncation)]
pub const SCHEMA_VERSION: u32 = schema::STEPS.len() as u32;

/// How long a statement waits for another writer's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The WAL is checkpointed by the commit that takes it past this many
/// pages (1 MiB). Every process that opens `cox.db` first reads the whole
/// WAL back (SQLite rebuilds its index then), about 1 ms per MB, so it is
/// kept smaller than SQLite's 1,000 pages; a hello turn adds about 20, so
/// a checkpoint (two fsyncs, and one for the WAL's next header) comes
/// every dozen runs or so.
const WAL_CHECKPOINT_PAGES: u32 = 256;

/// How many ids an ambiguous prefix error lists.
const AMBIGUOUS_SHOWN: usize = 5;

/// The database could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// SQLite refused: the file is not a database, is damaged, is locked
    /// for longer than the busy timeout, a constraint failed, …
    #[error("cox.db at {}: {doing}: {}", path.display(), one_line(.source))]
    Sqlite {
        path: PathBuf,
        doing: String,
        source: rusqlite::Error,
    },
    /// The file was migrated by a newer cox; this one does not know its
    /// tables and leaves it alone.
    #[error(
        "cox.db at {}: schema version {found} was written by a newer cox; this cox supports schema version {supported} and has not changed the file",
        path.display()
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: u32,
    },
    /// A reader found a schema older than this build's; only a writer
    /// migrates (see [`Db::open_for_reading`]).
    #[error(
        "cox.db at {}: schema version {found} is older than the {supported} this cox reads; the file was not changed (the next `cox run` brings it up to date)",
        path.display()
    )]
    Outdated {
        path: PathBuf,
        found: i64,
        supported: u32,
    },
    /// `PRAGMA user_version` holds a number no cox ever writes.
    #[error(
        "cox.db at {}: schema version {found} is not one cox writes; the file was not changed",
        path.display()
    )]
    UnknownVersion { path: PathBuf, found: i64 },
    /// An update named a session the database has no row for.
    #[error("cox.db at {}: no session {id}", path.display())]
    UnknownSession { path: PathBuf, id: String },
    /// An id prefix matched more than one session.
    #[error("cox.db at {}: {}", path.display(), ambiguity(prefix, "session", matches, *more))]
    AmbiguousPrefix {
        path: PathBuf,
        prefix: String,
        /// The first few matching ids, in order.
        matches: Vec<String>,
        /// More sessions matched than `matches` lists.
        more: bool,
    },
}

fn one_line(error: &rusqlite::Error) -> String {
    error.to_string().replace(['\r', '\n'], " ")
}

/// An open `cox.db`. Shareable between threads; statements run one at a
/// time per handle, and other handles or processes wait on SQLite's locks.
#[derive(Debug)]
pub struct Db {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl Db {
    /// Opens the database at `path`, creating the file when it is missing
    /// and bringing its schema up to [`SCHEMA_VERSION`].
    pub fn open(path: &Path) -> Result<Db, DbError> {
        let fail = |doing: &str| {
            let doing = doing.to_owned();
            move |source| DbError::Sqlite {
                path: path.to_path_buf(),
                doing,
                source,
            }
        };
        let mut conn = Connection::open(path).map_err(fail("cannot open"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(fail("cannot set the busy timeout"))?;
        // Read before any setting that writes to the file: a database this
        // build cannot understand, or a file that is not one, stays as it is.
        let found = user_version(&conn).map_err(fail("cannot read the schema version"))?;
        check_version(path, found)?;
        let tables = conn
            .query_row("SELECT COUNT(*) FROM sqlite_schema", [], |row| {
                row.get::<_, i64>(0)
            })
            .map_err(fail("cannot read the schema"))?;
        // A new, empty file holds nothing to lose: it is built without
        // fsyncs (six of them otherwise, a few ms each on a real disk).
        // Every step is still atomic if the process dies (the switch to
        // WAL goes through SQLite's journal, the schema through the WAL in
        // one transaction); only a power cut in the seconds after creation
        // could damage the file, and then it is refused in one line like
        // any damaged file, having held no record yet. Nothing is written
        // under this setting but the switch and the schema: when another
        // process built the file meanwhile, both are no-ops here. Once
        // built, commits are NORMAL like any other.
        let fresh = found == 0 && tables == 0;
        let sync = if fresh { "OFF" } else { "NORMAL" };
        conn.pragma_update(None, "synchronous", sync)
            .map_err(fail("cannot set synchronous"))?;
        enter_wal(&conn).map_err(fail("cannot switch to WAL"))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(fail("cannot turn on foreign keys"))?;
        keep_wal_on_close(&conn).map_err(fail("cannot configure the checkpoint"))?;
        conn.pragma_update(None, "wal_autocheckpoint", WAL_CHECKPOINT_PAGES)
            .map_err(fail("cannot configure the checkpoint"))?;
        conn.set_prepared_statement_cache_capacity(32);
        if found != i64::from(SCHEMA_VERSION) {
            migrate(&mut conn, path)?;
        }
        if fresh {
            conn.pragma_update(None, "synchronous", "NORMAL")
                .map_err(fail("cannot set synchronous"))?;
        }
        Ok(Db {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    /// The file this handle is open on.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version the file holds.
    pub fn schema_version(&self) -> Result<i64, DbError> {
        user_version(&self.conn()).map_err(self.fail("cannot read the schema version"))
    }

    /// SQLite's own check of the whole file: `ok` when healthy, otherwise
    /// one problem per line.
    pub fn integrity_check(&self) -> Result<String, DbError> {
        let conn = self.conn();
        let lines = conn
            .prepare("PRAGMA integrity_check")
            .and_then(|mut stmt| {
                stmt.query_map([], |row| row.get::<_, String>(0))?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(self.fail("cannot check integrity"))?;
        Ok(lines.join("\n"))
    }

    /// Records a new session. Fails if its id is already recorded.
    pub fn start_session(&self, row: &SessionRow) -> Result<(), DbError> {
        self.write_session(row, "")
            .map_err(self.fail(format!("cannot record session {}", row.id)))
    }

    /// Records a session being resumed: marks an existing row open again
    /// and moves its `updated_at`, keeping its start, turns and cost; a
    /// session with no row yet (one older than the database) is inserted
    /// as given.
    pub fn resume_session(&self, row: &SessionRow) -> Result<(), DbError> {
        self.write_session(
            row,
            " ON CONFLICT (id) DO UPDATE SET state = 'open', updated_at = excluded.updated_at",
        )
        .map_err(self.fail(format!("cannot record resumed session {}", row.id)))
    }

    fn write_session(&self, row: &SessionRow, on_conflict: &str) -> rusqlite::Result<()> {
        let sql = format!(
            concat!(
                "INSERT INTO sessions (",
                session_columns!(),
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14){}"
            ),
            on_conflict
        );
        self.conn().prepare_cached(&sql)?.execute(params![
            row.id,
            row.created_at,
            row.updated_at,
            row.cwd,
            row.project_slug,
            row.title,
            row.parent_id,
            row.rollout_path,
            row.turns,
            row.cost_usd,
            row.state.as_str(),
            row.provider,
            row.model,
            row.forked,
        ])?;
        Ok(())
    }

    /// After a finished turn: the turn count, the time, and the session's
    /// cost summed afresh from its usage rows.
    pub fn finish_turn(&self, id: &str, turns: u32, updated_at: &str) -> Result<(), DbError> {
        let changed = self
            .conn()
            .prepare_cached(
                "UPDATE sessions SET turns = ?2, updated_at = ?3, cost_usd = \
                 (SELECT COALESCE(SUM(cost_usd), 0) FROM usage WHERE session_id = ?1) \
                 WHERE id = ?1",
            )
            .and_then(|mut stmt| stmt.execute(params![id, turns, updated_at]))
            .map_err(self.fail(format!("cannot finish a turn of session {id}")))?;
        self.expect_one(changed, id)
    }

    /// Sets the session's title.
    pub fn set_title(&self, id: &str, title: &str) -> Result<(), DbError> {
        let changed = self
            .conn()
            .prepare_cached("UPDATE sessions SET title = ?2 WHERE id = ?1")
            .and_then(|mut stmt| stmt.execute(params![id, title]))
            .map_err(self.fail(format!("cannot set the title of session {id}")))?;
        self.expect_one(changed, id)
    }

    /// Records how the session ended (or that it is open again).
    pub fn set_state(
        &self,
        id: &str,
        state: SessionState,
        updated_at: &str,
    ) -> Result<(), DbError> {
        let changed = self
            .conn()
            .prepare_cached("UPDATE sessions SET state = ?2, updated_at = ?3 WHERE id = ?1")
            .and_then(|mut stmt| stmt.execute(params![id, state.as_str(), updated_at]))
            .map_err(self.fail(format!("cannot set the state of session {id}")))?;
        self.expect_one(changed, id)
    }

    fn expect_one(&self, changed: usize, id: &str) -> Result<(), DbError> {
        if changed == 0 {
            return Err(DbError::UnknownSession {
                path: self.path.clone(),
                id: id.to_owned(),
            });
        }
        Ok(())
    }

    /// Books one provider call; returns the row's id. The session must
    /// have been started.
    pub fn insert_usage(&self, row: &UsageRow) -> Result<i64, DbError> {
        let conn = self.conn();
        conn.prepare_cached(
            "INSERT INTO usage (session_id, turn, job, tier, provider, model, effort, \
             input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, \
             context_tokens, estimated, cost_usd, latency_ms, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                row.session_id,
                row.turn,
                row.job,
                row.tier,
                row.provider,
                row.model,
                row.effort,
                row.input_tokens,
                row.output_tokens,
                row.cache_read_tokens,
                row.cache_write_tokens,
                row.context_tokens,
                row.estimated,
                row.cost_usd,
                row.latency_ms,
                row.created_at,
            ])
        })
        .map_err(self.fail(format!(
            "cannot book a usage row for session {}",
            row.session_id
        )))?;
        Ok(conn.last_insert_rowid())
    }

    /// What the ledger holds: the calls of the session's whole tree (the
    /// session a person started and every subagent under it, however deep:
    /// one budget covers them all; a fork starts a tree of its own), every call whose `created_at` starts
    /// with `month_prefix` (`2026-11`), and the session's own last call.
    /// Zeros when there are no rows.
    pub fn spend(&self, session_id: &str, month_prefix: &str) -> Result<Spend, DbError> {
        self.conn()
            .prepare_cached(
                "WITH RECURSIVE up(id, parent) AS ( \
                   SELECT ?1, (SELECT CASE WHEN forked THEN NULL ELSE parent_id END \
                               FROM sessions WHERE id = ?1) \
                   UNION SELECT s.id, CASE WHEN s.forked THEN NULL ELSE s.parent_id END \
                   FROM sessions s JOIN up ON s.id = up.parent \
                 ), root(id) AS (SELECT id FROM up WHERE parent IS NULL LIMIT 1), \
                 tree(id) AS ( \
                   SELECT COALESCE((SELECT id FROM root), ?1) \
                   UNION SELECT s.id FROM sessions s JOIN tree ON s.parent_id = tree.id \
                   AND NOT s.forked \
                 ) \
                 SELECT \
                 (SELECT COALESCE(SUM(cost_usd), 0) FROM usage \
                  WHERE session_id IN (SELECT id FROM tree)), \
                 (SELECT COALESCE(SUM(cost_usd), 0) FROM usage \
                  WHERE created_at >= ?2 AND created_at < ?3), \
                 COALESCE((SELECT cost_usd FROM usage WHERE session_id = ?1 \
                  ORDER BY id DESC LIMIT 1), 0)",
            )
            .and_then(|mut stmt| {
                stmt.query_row(
                    params![session_id, month_prefix, prefix_end(month_prefix)],
                    |row| {
                        Ok(Spend {
                            session_usd: row.get(0)?,
                            month_usd: row.get(1)?,
                            last_call_usd: row.get(2)?,
                        })
                    },
                )
            })
            .map_err(self.fail(format!("cannot read the spend of session {session_id}")))
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        // Every statement is atomic in SQLite, so a panic while holding the
        // lock cannot leave the connection half way through a write.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn fail<D: Into<String>>(&self, doing: D) -> impl FnOnce(rusqlite::Error) -> DbError + use<D> {
        let path = self.path.clone();
        let doing = doing.into();
        move |source| DbError::Sqlite {
            path,
            doing,
            source,
        }
    }
}

/// The smallest string greater than every string starting with `prefix`,
/// for a range scan an index can serve (`LIKE` cannot use a binary index).
fn prefix_end(prefix: &str) -> String {
    format!("{prefix}\u{10FFFF}")
}

/// Switches the file to WAL (a no-op when it already is). SQLite answers
/// "busy" at once, without waiting on the busy timeout, when another
/// connection holds the file while this one asks for the switch (two
/// processes opening a fresh file together), so the wait is done here.
fn enter_wal(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0))
        {
            Ok(_) => return Ok(()),
            Err(e)
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Closing the handle leaves the WAL as it is instead of checkpointing it
/// into the main file. The checkpoint on close costs two fsyncs at the end
/// of every process, and the next process then restarts the WAL, syncing
/// its header (and the folder) before its first commit: four fsyncs per
/// run, each a few ms on a real disk. Without it the WAL is checkpointed
/// by whichever commit takes it past [`WAL_CHECKPOINT_PAGES`].
/// What a commit guarantees is unchanged (WAL with `synchronous=NORMAL`):
/// atomic and consistent always, durable once the OS writes it out or the
/// next checkpoint syncs it, so a power cut may lose the last seconds of
/// usage rows but never damages the file. The `-wal` and `-shm` files stay
/// beside `cox.db`; copy it with `sqlite3 cox.db .backup`, or with them.
pub(super) fn keep_wal_on_close(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
        true,
    )
    .map(|_| ())
}

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

fn check_version(path: &Path, found: i64) -> Result<(), DbError> {
    if found < 0 {
        return Err(DbError::UnknownVersion {
            path: path.to_path_buf(),
            found,
        });
    }
    if found > i64::from(SCHEMA_VERSION) {
        return Err(DbError::TooNew {
            path: path.to_path_buf(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// Applies the steps the file lacks, all in one transaction that holds the
/// write lock from the start, so two processes opening a fresh file at once
/// migrate it once.
fn migrate(conn: &mut Connection, path: &Path) -> Result<(), DbError> {
    let fail = |source| DbError::Sqlite {
        path: path.to_path_buf(),
        doing: "cannot migrate the schema".to_owned(),
        source,
    };
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(fail)?;
    // Another process may have migrated between the first look and the lock.
    let found = user_version(&tx).map_err(fail)?;
    check_version(path, found)?;
    let done = usize::try_from(found).unwrap_or(usize::MAX);
    for step in schema::STEPS.iter().skip(done) {
        tx.execute_batch(step).map_err(fail)?;
    }
    if done < schema::STEPS.len() {
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)
            .map_err(fail)?;
    }
    tx.commit().map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_range_holds_exactly_the_strings_that_start_with_it() {
        let end = prefix_end("2026-11");
        for inside in ["2026-11", "2026-11-30T05:36:27.123Z", "2026-11~"] {
            assert!(inside >= "2026-11" && inside < end.as_str(), "{inside}");
        }
        for outside in [
            "2026-10-31T23:59:59.999Z",
            "2026-12-01T00:00:00.000Z",
            "2026-1",
        ] {
            assert!(
                !(outside >= "2026-11" && outside < end.as_str()),
                "{outside}"
            );
        }
    }
}
