//! The `archive` table: one index row per archived tool output, saying
//! where its bytes are (inline in the row, or a file under `archive/`) and
//! how big it is. Rows are only ever added; a look-up is by the primary key.

use rusqlite::{OptionalExtension, params};

use super::rows::{ArchiveRow, Kept, archive_row};
use super::{Db, DbError};

impl Db {
    /// Records an archived output. Fails if its id is already recorded.
    pub fn insert_archive(&self, row: &ArchiveRow) -> Result<(), DbError> {
        let (path, inline) = match &row.kept {
            Kept::Inline(bytes) => (None, Some(bytes.as_slice())),
            Kept::File(path) => (Some(path.display().to_string()), None),
        };
        self.conn()
            .prepare_cached(concat!(
                "INSERT INTO archive (",
                archive_columns!(),
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
            ))
            .and_then(|mut stmt| {
                stmt.execute(params![
                    row.id,
                    row.session_id,
                    row.call_id,
                    row.bytes,
                    row.lines,
                    path,
                    inline,
                    row.created_at,
                ])
            })
            .map_err(self.fail(format!("cannot index archived output {}", row.id)))?;
        Ok(())
    }

    /// The row of the output whose id is exactly `id` (ids are stored
    /// upper case), if there is one.
    pub fn archive_entry(&self, id: &str) -> Result<Option<ArchiveRow>, DbError> {
        self.conn()
            .prepare_cached(concat!(
                "SELECT ",
                archive_columns!(),
                " FROM archive WHERE id = ?1"
            ))
            .and_then(|mut stmt| stmt.query_row([id], archive_row).optional())
            .map_err(self.fail(format!("cannot look up archived output {id}")))
    }
}
