//! The output archive: every tool output, whole, under a fresh ULID.
//!
//! The model may only see a shortened copy of an output, so the archive is
//! the promise that the full bytes can be read back (`cox expand <id>`).
//! [`FileArchive`] keeps one file per output; the archive `cox run` uses is
//! [`CoxStore`](crate::CoxStore)'s (see `archive/index.rs`), which keeps
//! the large outputs the same way and the small ones in `cox.db`.
//! Invariants:
//! - a stored file is complete or absent: it is written under a temporary
//!   name and renamed into place, so a reader never sees half an output;
//! - ids come from outside (a person, the model), so `get` accepts only a
//!   well-formed ULID and builds the path from its canonical spelling: no id
//!   can name a file outside `archive/`.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::PathBuf;

use cox_protocol::Archive;
use cox_protocol::archive::{ArchiveError, ArchiveMeta};
use ulid::Ulid;

use crate::home::CoxHome;

mod index;

pub use index::{ArchiveReader, INLINE_MAX};

/// An [`Archive`] of one file per output in `archive/` under the home.
#[derive(Clone, Debug)]
pub struct FileArchive {
    dir: PathBuf,
}

impl FileArchive {
    /// The archive of `home`, which should have been [`CoxHome::prepare`]d.
    #[must_use]
    pub fn new(home: &CoxHome) -> Self {
        Self {
            dir: home.archive_dir(),
        }
    }

    /// The size of output `id` kept as a file, if it is one.
    #[must_use]
    pub fn size_of(&self, id: &str) -> Option<u64> {
        let id = parse_id(id).ok()?;
        fs::metadata(self.path_of(id)).ok().map(|m| m.len())
    }

    /// Removes output `id` kept as a file: only pruning does this (the
    /// checkpoints of old sessions); a missing file is not an error.
    ///
    /// # Errors
    /// The id is not a ULID, or the file cannot be removed.
    pub fn remove(&self, id: &str) -> Result<(), ArchiveError> {
        let path = self.path_of(parse_id(id)?);
        match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(read_error(id, &path, source)),
        }
    }

    /// The folder the files are in.
    pub(crate) fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// Where the output `id` is, or would be, kept.
    pub(crate) fn path_of(&self, id: Ulid) -> PathBuf {
        self.dir.join(id.to_string())
    }

    /// The ids of the outputs kept as files whose id starts with `prefix`
    /// (upper case); none when the folder does not exist yet.
    pub(crate) fn ids_starting_with(&self, prefix: &str) -> io::Result<Vec<String>> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut ids = Vec::new();
        for entry in entries {
            let name = entry?.file_name();
            if let Some(name) = name.to_str()
                && name.starts_with(prefix)
                && Ulid::from_string(name).is_ok()
            {
                ids.push(name.to_owned());
            }
        }
        Ok(ids)
    }

    /// Writes a new output under a temporary name and renames it into
    /// place, so that `path_of(id)` is complete or absent.
    pub(crate) fn write_new(&self, id: Ulid, bytes: &[u8]) -> io::Result<()> {
        let temp = self.dir.join(format!(".{id}.tmp"));
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .and_then(|mut file| file.write_all(bytes))
            .and_then(|()| fs::rename(&temp, self.path_of(id)));
        if written.is_err() {
            // Best effort: a leftover temporary file is harmless but untidy.
            let _ = fs::remove_file(&temp);
        }
        written
    }
}

impl Archive for FileArchive {
    fn put(&self, _meta: &ArchiveMeta, bytes: &[u8]) -> Result<String, ArchiveError> {
        let id = Ulid::generate();
        self.write_new(id, bytes)
            .map_err(|e| self.write_error(bytes.len(), e))?;
        Ok(id.to_string())
    }

    fn get(&self, id: &str) -> Result<Vec<u8>, ArchiveError> {
        let path = self.path_of(parse_id(id)?);
        fs::read(&path).map_err(|source| match source.kind() {
            io::ErrorKind::NotFound => ArchiveError::UnknownId { id: id.to_owned() },
            _ => read_error(id, &path, source),
        })
    }
}

impl FileArchive {
    fn write_error(&self, bytes: usize, source: io::Error) -> ArchiveError {
        ArchiveError::Write {
            bytes,
            dir: self.dir.clone(),
            source,
        }
    }
}

/// The ULID `id` spells, in either case; anything else is refused, which
/// is what keeps an id from naming a path.
pub(crate) fn parse_id(id: &str) -> Result<Ulid, ArchiveError> {
    Ulid::from_string(id).map_err(|_| ArchiveError::InvalidId { id: id.to_owned() })
}

fn read_error(id: &str, path: &std::path::Path, source: io::Error) -> ArchiveError {
    ArchiveError::Read {
        id: id.to_owned(),
        path: path.to_path_buf(),
        source,
    }
}
