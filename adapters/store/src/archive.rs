//! The output archive: every large tool output, whole, under a fresh ULID.
//!
//! The model may only see a shortened copy of an output, so the archive is
//! the promise that the full bytes can be read back (`cox expand <id>`).
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

    fn write_new(&self, id: Ulid, bytes: &[u8]) -> io::Result<()> {
        let temp = self.dir.join(format!(".{id}.tmp"));
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .and_then(|mut file| file.write_all(bytes))
            .and_then(|()| fs::rename(&temp, self.dir.join(id.to_string())));
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
        self.write_new(id, bytes).map_err(|e| {
            ArchiveError(format!(
                "cannot archive {} bytes in {}: {e}",
                bytes.len(),
                self.dir.display()
            ))
        })?;
        Ok(id.to_string())
    }

    fn get(&self, id: &str) -> Result<Vec<u8>, ArchiveError> {
        let Ok(ulid) = Ulid::from_string(id) else {
            return Err(ArchiveError(format!(
                "archive id `{}` is not a valid id",
                id.escape_debug()
            )));
        };
        let path = self.dir.join(ulid.to_string());
        fs::read(&path).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => ArchiveError(format!("no archived output with id `{id}`")),
            _ => ArchiveError(format!(
                "cannot read archived output `{id}` ({}): {e}",
                path.display()
            )),
        })
    }
}
