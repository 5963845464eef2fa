//! The `Archive` trait: lossless storage for tool outputs.
//!
//! The core archives every tool output before the model sees anything, and
//! the model may see only a shortened copy, so the full bytes can always be
//! read back by id (`cox expand <id>`, the `expand` tool). How an output is
//! kept (a file for a large one, a database row for a small one) is the
//! adapter's business; ids are fresh ULIDs.

use std::io;
use std::path::PathBuf;

use crate::ids::{CallId, SessionId};
use crate::provider::BoxFuture;

/// Reading or writing the archive failed.
///
/// Ids come from outside (a person, the model), so the variants about an id
/// say it back; the others name the file or folder. The message is the
/// whole line, cause included (the model reads it as a tool result); the
/// cause is also kept as `source()` (see [`crate::error`]).
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The id is not a ULID: no output can have it.
    #[error("archive id `{}` is not a valid id", id.escape_debug())]
    InvalidId { id: String },
    /// Not a whole id, nor the start of one.
    #[error("archive id `{}` is not a valid id, nor the start of one", prefix.escape_debug())]
    InvalidPrefix { prefix: String },
    /// A well-formed id no output has.
    #[error("no archived output with id `{id}`")]
    UnknownId { id: String },
    /// A prefix no output's id starts with.
    #[error("no archived output has an id starting with `{prefix}`")]
    NoMatch { prefix: String },
    /// A prefix several outputs' ids start with.
    #[error(
        "`{prefix}` matches more than one archived output: {}{}",
        matches.join(", "),
        if *more { ", …" } else { "" }
    )]
    Ambiguous {
        prefix: String,
        /// The first few matching ids, in order.
        matches: Vec<String>,
        /// More outputs matched than `matches` lists.
        more: bool,
    },
    /// The output could not be written.
    #[error("cannot archive {bytes} bytes in {}: {source}", dir.display())]
    Write {
        bytes: usize,
        dir: PathBuf,
        source: io::Error,
    },
    /// An output's bytes could not be read.
    #[error("cannot read archived output `{id}` ({}): {source}", path.display())]
    Read {
        id: String,
        path: PathBuf,
        source: io::Error,
    },
    /// The folder could not be searched for ids starting with `prefix`.
    #[error("cannot look for archived outputs `{prefix}…` in {}: {source}", dir.display())]
    List {
        prefix: String,
        dir: PathBuf,
        source: io::Error,
    },
    /// The index names a file that is not there.
    #[error(
        "archived output `{id}` is indexed at {}, but the file is missing",
        path.display()
    )]
    Missing { id: String, path: PathBuf },
    /// The file is not as long as the output was: it was changed after the
    /// fact, and is not passed off as the output.
    #[error(
        "archived output `{id}` at {} has {found} bytes where {archived} were archived",
        path.display()
    )]
    WrongSize {
        id: String,
        path: PathBuf,
        found: usize,
        archived: u64,
    },
    /// The archive's index refused (for cox-store, `cox.db`); its error
    /// names the file and says the cause.
    #[error("{source}")]
    Index {
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Where an output came from, for the archive's index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchiveMeta {
    pub session: SessionId,
    /// The tool call that produced it.
    pub call: Option<CallId>,
}

/// A fresh id per output.
pub trait Archive: Send + Sync {
    /// Stores the bytes whole and returns their id. When this returns, the
    /// bytes can be read back, by this process or another.
    fn put(&self, meta: &ArchiveMeta, bytes: &[u8]) -> Result<String, ArchiveError>;
    /// [`Archive::put`] as the session calls it: it resolves when the bytes
    /// are kept. An archive that writes on a thread of its own does it
    /// there, after the writes handed over before; this default puts inline.
    fn put_async(
        &self,
        meta: ArchiveMeta,
        bytes: Vec<u8>,
    ) -> BoxFuture<'_, Result<String, ArchiveError>> {
        let put = self.put(&meta, &bytes);
        Box::pin(std::future::ready(put))
    }
    /// The bytes stored under `id`.
    fn get(&self, id: &str) -> Result<Vec<u8>, ArchiveError>;
}

impl<A: Archive> Archive for std::sync::Arc<A> {
    fn put(&self, meta: &ArchiveMeta, bytes: &[u8]) -> Result<String, ArchiveError> {
        (**self).put(meta, bytes)
    }
    fn put_async(
        &self,
        meta: ArchiveMeta,
        bytes: Vec<u8>,
    ) -> BoxFuture<'_, Result<String, ArchiveError>> {
        (**self).put_async(meta, bytes)
    }
    fn get(&self, id: &str) -> Result<Vec<u8>, ArchiveError> {
        (**self).get(id)
    }
}
