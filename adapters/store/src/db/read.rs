//! Look-ups for the CLI: opening the file only to read it, the sessions,
//! one session by id or prefix, the latest one in a folder, a session's
//! usage rows, and the archived outputs whose id starts with a prefix.
//!
//! An id may be shortened to a prefix no other id shares ([`pick`]): `cox
//! sessions`, `cox run --resume` and `cox expand` all resolve it the same
//! way, and say the same when it is ambiguous ([`ambiguity`]; the
//! archive's `ArchiveError::Ambiguous`, a protocol type, has the same
//! words).
//!
//! Each is served by an index (`sessions(created_at)`, the primary key as a
//! range for a prefix, `sessions(cwd, created_at)`, `usage(session_id)`).

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OpenFlags, params};

use super::rows::{session_row, usage_row};
use super::{
    AMBIGUOUS_SHOWN, BUSY_TIMEOUT, Db, DbError, SCHEMA_VERSION, SessionRow, UsageRow,
    check_version, keep_wal_on_close, prefix_end, user_version,
};

impl Db {
    /// Opens an existing database to read it, for commands that report on
    /// the record and must leave it as they found it: a missing file is an
    /// error (never created), an older schema is refused rather than
    /// migrated, and the handle is `query_only`, so no statement through it
    /// can write.
    ///
    /// The connection is read-write at the file level all the same, like
    /// a writer's, and like a writer's it leaves the WAL as it is when it
    /// closes: reading never checkpoints, so `cox.db` is left byte for byte
    /// as it was, and no file appears or goes.
    pub fn open_for_reading(path: &Path) -> Result<Db, DbError> {
        let fail = |doing: &'static str| {
            move |source| DbError::Sqlite {
                path: path.to_path_buf(),
                doing: doing.to_owned(),
                source,
            }
        };
        // The defaults, less SQLITE_OPEN_CREATE.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(fail("cannot open"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(fail("cannot set the busy timeout"))?;
        conn.pragma_update(None, "query_only", true)
            .map_err(fail("cannot make the handle read-only"))?;
        keep_wal_on_close(&conn).map_err(fail("cannot configure the checkpoint"))?;
        let found = user_version(&conn).map_err(fail("cannot read the schema version"))?;
        check_version(path, found)?;
        if found < i64::from(SCHEMA_VERSION) {
            return Err(DbError::Outdated {
                path: path.to_path_buf(),
                found,
                supported: SCHEMA_VERSION,
            });
        }
        conn.query_row("SELECT COUNT(*) FROM sqlite_schema", [], |row| {
            row.get::<_, i64>(0)
        })
        .map_err(fail("cannot read the schema"))?;
        conn.set_prepared_statement_cache_capacity(32);
        Ok(Db {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    /// Every session, newest first.
    pub fn sessions(&self) -> Result<Vec<SessionRow>, DbError> {
        self.query_sessions(
            concat!(
                "SELECT ",
                session_columns!(),
                " FROM sessions ORDER BY created_at DESC, id DESC"
            ),
            &[],
        )
        .map_err(self.fail("cannot list sessions"))
    }

    /// The session whose id is, or starts with, `id_or_prefix` (ULIDs are
    /// case-insensitive, so the prefix is upper-cased first). `None` when
    /// nothing matches; an error naming them when several do.
    pub fn session(&self, id_or_prefix: &str) -> Result<Option<SessionRow>, DbError> {
        let prefix = id_or_prefix.trim().to_ascii_uppercase();
        if prefix.is_empty() {
            return Ok(None);
        }
        let end = prefix_end(&prefix);
        let found = self
            .query_sessions(
                concat!(
                    "SELECT ",
                    session_columns!(),
                    " FROM sessions WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT 6"
                ),
                &[&prefix, &end],
            )
            .map_err(self.fail(format!("cannot look up session `{id_or_prefix}`")))?;
        match pick(&prefix, found, |row| &row.id) {
            Picked::None => Ok(None),
            Picked::One(row) => Ok(Some(row)),
            Picked::Several { shown, more } => Err(DbError::AmbiguousPrefix {
                path: self.path.clone(),
                prefix: id_or_prefix.to_owned(),
                matches: shown,
                more,
            }),
        }
    }

    /// The ids of archived outputs that start with `prefix` (upper case),
    /// in order: a few more than an ambiguity lists, at most.
    pub fn archive_ids_starting_with(&self, prefix: &str) -> Result<Vec<String>, DbError> {
        self.conn()
            .prepare_cached("SELECT id FROM archive WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT 6")
            .and_then(|mut stmt| {
                stmt.query_map(params![prefix, prefix_end(prefix)], |row| row.get(0))?
                    .collect::<Result<Vec<String>, _>>()
            })
            .map_err(self.fail(format!("cannot look up archived outputs `{prefix}…`")))
    }

    /// The newest session started in exactly `cwd`.
    pub fn latest_session_in(&self, cwd: &str) -> Result<Option<SessionRow>, DbError> {
        let mut found = self
            .query_sessions(
                concat!(
                    "SELECT ",
                    session_columns!(),
                    " FROM sessions WHERE cwd = ?1 ORDER BY created_at DESC, id DESC LIMIT 1"
                ),
                &[&cwd],
            )
            .map_err(self.fail(format!("cannot find the latest session in {cwd}")))?;
        Ok(found.pop())
    }

    /// The session's usage rows, in the order they were booked.
    pub fn usage_of(&self, session_id: &str) -> Result<Vec<UsageRow>, DbError> {
        self.conn()
            .prepare_cached(concat!(
                "SELECT ",
                usage_columns!(),
                " FROM usage WHERE session_id = ?1 ORDER BY id"
            ))
            .and_then(|mut stmt| {
                stmt.query_map([session_id], usage_row)?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(self.fail(format!("cannot read the usage of session {session_id}")))
    }

    fn query_sessions(
        &self,
        sql: &str,
        args: &[&dyn rusqlite::ToSql],
    ) -> rusqlite::Result<Vec<SessionRow>> {
        self.conn()
            .prepare_cached(sql)?
            .query_map(args, session_row)?
            .collect()
    }
}

/// What an id prefix names among the ids that start with it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Picked<T> {
    /// Nothing starts with it.
    None,
    /// One thing does, or one has exactly this id.
    One(T),
    /// Several do: the first few ids, in order, and whether more did.
    Several { shown: Vec<String>, more: bool },
}

/// Sorts out what `prefix` (already upper case) names among `found`, the
/// things whose id starts with it, in id order: a whole id wins over the
/// longer ones it is a prefix of.
pub(crate) fn pick<T>(prefix: &str, mut found: Vec<T>, id: impl Fn(&T) -> &str) -> Picked<T> {
    if let Some(exact) = found.iter().position(|item| id(item) == prefix) {
        return Picked::One(found.swap_remove(exact));
    }
    match found.len() {
        0 => Picked::None,
        1 => found.pop().map_or(Picked::None, Picked::One),
        n => Picked::Several {
            shown: found
                .iter()
                .take(AMBIGUOUS_SHOWN)
                .map(|item| id(item).to_owned())
                .collect(),
            more: n > AMBIGUOUS_SHOWN,
        },
    }
}

/// How an ambiguous prefix is said: "`01KB` matches more than one
/// session: 01KB…, 01KB…, …".
#[must_use]
pub(crate) fn ambiguity(prefix: &str, what: &str, shown: &[String], more: bool) -> String {
    format!(
        "`{prefix}` matches more than one {what}: {}{}",
        shown.join(", "),
        if more { ", …" } else { "" }
    )
}
