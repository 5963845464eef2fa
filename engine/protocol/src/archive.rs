//! The `Archive` trait: lossless storage for tool outputs.
//!
//! The core archives every tool output before the model sees anything, and
//! the model may see only a shortened copy, so the full bytes can always be
//! read back by id (`cox expand <id>`, the `expand` tool). How an output is
//! kept (a file for a large one, a database row for a small one) is the
//! adapter's business; ids are fresh ULIDs.

use crate::ids::{CallId, SessionId};

/// Reading or writing the archive failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ArchiveError(pub String);

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
    /// The bytes stored under `id`.
    fn get(&self, id: &str) -> Result<Vec<u8>, ArchiveError>;
}

impl<A: Archive> Archive for std::sync::Arc<A> {
    fn put(&self, meta: &ArchiveMeta, bytes: &[u8]) -> Result<String, ArchiveError> {
        (**self).put(meta, bytes)
    }
    fn get(&self, id: &str) -> Result<Vec<u8>, ArchiveError> {
        (**self).get(id)
    }
}
