//! The archive `cox run` uses: [`CoxStore`] as an [`Archive`], with an
//! index row in `cox.db` for every output.
//!
//! An output of [`INLINE_MAX`] bytes or fewer is kept in its row; a larger
//! one is written to `archive/<ulid>` exactly as [`FileArchive`] writes it
//! (temporary name, then rename), and its row records the path. Either way
//! the row says how many bytes and lines the output has and which session
//! and call it came from.
//!
//! Invariants:
//! - a file is complete before its row exists, so a row never points at a
//!   half-written file; a row that cannot be written takes its file back
//!   with it, so `put` either returns an id that reads back or fails;
//! - ids are stored in their canonical (upper-case) spelling, and a look-up
//!   accepts only a well-formed ULID, in either case;
//! - reading never writes: [`ArchiveReader`] works on a database opened
//!   with [`Db::open_for_reading`], or on none at all;
//! - outputs written before the index (files under `archive/` with no row)
//!   are still found, by their file name.

use std::fs;
use std::io;
use std::path::Path;

use cox_protocol::Archive;
use cox_protocol::archive::{ArchiveError, ArchiveMeta};
use ulid::Ulid;

use super::{FileArchive, parse_id, read_error};
use crate::clock;
use crate::db::{ArchiveRow, Db, DbError, Kept, Picked, pick};
use crate::home::CoxHome;
use crate::ledger::CoxStore;
use crate::lines::line_count;

/// The largest output kept inline in its index row (16 KiB); anything
/// longer becomes a file under `archive/`.
pub const INLINE_MAX: usize = 16 * 1024;

/// The length of a whole id.
const ULID_LEN: usize = 26;

/// Whether `c` can be part of a ULID (Crockford's base 32, upper case).
fn is_crockford(c: char) -> bool {
    c.is_ascii_digit() || (c.is_ascii_uppercase() && !matches!(c, 'I' | 'L' | 'O' | 'U'))
}

/// Reads archived outputs back: by their index row when the database has
/// one, else by their file under `archive/`.
#[derive(Debug)]
pub struct ArchiveReader<'a> {
    db: Option<&'a Db>,
    files: FileArchive,
}

impl<'a> ArchiveReader<'a> {
    /// The reader of `home`'s archive, indexed by `db` (`None` when the
    /// home has no database yet: only files can be found then).
    #[must_use]
    pub fn new(home: &CoxHome, db: Option<&'a Db>) -> Self {
        Self {
            db,
            files: FileArchive::new(home),
        }
    }

    /// The bytes of the output `id`, whole. Errors are one line: the id is
    /// not a ULID, no output has it, or its bytes cannot be read (naming
    /// the path).
    pub fn get(&self, id: &str) -> Result<Vec<u8>, ArchiveError> {
        let ulid = parse_id(id)?;
        let row = match self.db {
            Some(db) => db.archive_entry(&ulid.to_string()).map_err(index_error)?,
            None => None,
        };
        let Some(row) = row else {
            return self.files.get(id);
        };
        match row.kept {
            Kept::Inline(bytes) => Ok(bytes),
            Kept::File(path) => self.read_file(id, ulid, &path, row.bytes),
        }
    }

    /// The whole id `id_or_prefix` names: a whole id as it is (in its
    /// canonical spelling), or the one archived output, indexed or kept as
    /// a file, whose id starts with it (in either case). Errors are one
    /// line: not an id nor the start of one, nothing starts with it, or
    /// several outputs do (the first few are named).
    pub fn resolve(&self, id_or_prefix: &str) -> Result<String, ArchiveError> {
        let prefix = id_or_prefix.trim().to_ascii_uppercase();
        if prefix.len() == ULID_LEN {
            return parse_id(&prefix).map(|ulid| ulid.to_string());
        }
        if prefix.is_empty() || prefix.len() > ULID_LEN || !prefix.chars().all(is_crockford) {
            return Err(ArchiveError::InvalidPrefix {
                prefix: id_or_prefix.to_owned(),
            });
        }
        let mut ids = match self.db {
            Some(db) => db.archive_ids_starting_with(&prefix).map_err(index_error)?,
            None => Vec::new(),
        };
        ids.extend(
            self.files
                .ids_starting_with(&prefix)
                .map_err(|source| ArchiveError::List {
                    prefix: prefix.clone(),
                    dir: self.files.dir().to_path_buf(),
                    source,
                })?,
        );
        ids.sort();
        ids.dedup();
        match pick(&prefix, ids, String::as_str) {
            Picked::One(id) => Ok(id),
            Picked::None => Err(ArchiveError::NoMatch {
                prefix: id_or_prefix.to_owned(),
            }),
            Picked::Several { shown, more } => Err(ArchiveError::Ambiguous {
                prefix: id_or_prefix.to_owned(),
                matches: shown,
                more,
            }),
        }
    }

    /// Reads the file a row names. A home that was moved still has the
    /// file in its own `archive/`, so that is tried when the recorded path
    /// is gone.
    fn read_file(
        &self,
        id: &str,
        ulid: Ulid,
        recorded: &Path,
        len: u64,
    ) -> Result<Vec<u8>, ArchiveError> {
        let here = self.files.path_of(ulid);
        let (path, read) = match fs::read(recorded) {
            Err(e) if e.kind() == io::ErrorKind::NotFound && here != recorded => {
                (here.as_path(), fs::read(&here))
            }
            read => (recorded, read),
        };
        let bytes = read.map_err(|source| match source.kind() {
            io::ErrorKind::NotFound => ArchiveError::Missing {
                id: id.to_owned(),
                path: recorded.to_path_buf(),
            },
            _ => read_error(id, path, source),
        })?;
        if u64::try_from(bytes.len()).ok() != Some(len) {
            return Err(ArchiveError::WrongSize {
                id: id.to_owned(),
                path: path.to_path_buf(),
                found: bytes.len(),
                archived: len,
            });
        }
        Ok(bytes)
    }
}

impl Archive for CoxStore {
    fn put(&self, meta: &ArchiveMeta, bytes: &[u8]) -> Result<String, ArchiveError> {
        let id = Ulid::generate();
        let files = FileArchive::new(self.home());
        let kept = if bytes.len() > INLINE_MAX {
            files
                .write_new(id, bytes)
                .map_err(|e| files.write_error(bytes.len(), e))?;
            Kept::File(files.path_of(id))
        } else {
            Kept::Inline(bytes.to_vec())
        };
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        let row = ArchiveRow {
            id: id.to_string(),
            session_id: Some(meta.session.to_string()),
            call_id: meta.call.as_ref().map(ToString::to_string),
            bytes: count(bytes.len()),
            lines: count(line_count(bytes)),
            kept,
            created_at: clock::now_rfc3339(),
        };
        if let Err(error) = self.db().insert_archive(&row) {
            if let Kept::File(path) = &row.kept {
                // Best effort: without its row the id is never handed out.
                let _ = fs::remove_file(path);
            }
            return Err(index_error(error));
        }
        Ok(row.id)
    }

    fn get(&self, id: &str) -> Result<Vec<u8>, ArchiveError> {
        ArchiveReader::new(self.home(), Some(self.db())).get(id)
    }
}

/// The index refused: its error, which names `cox.db`, is the message.
fn index_error(error: DbError) -> ArchiveError {
    ArchiveError::Index {
        source: Box::new(error),
    }
}
