//! The `Archive` trait: lossless storage for large tool outputs.
//!
//! The core archives an output before the model sees a shortened copy, so
//! the full bytes can always be read back by id (`cox expand <id>`).

/// Reading or writing the archive failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ArchiveError(pub String);

/// Content-addressed by a fresh id per output.
pub trait Archive: Send + Sync {
    /// Stores the bytes and returns their id.
    fn put(&self, bytes: &[u8]) -> Result<String, ArchiveError>;
    /// The bytes stored under `id`.
    fn get(&self, id: &str) -> Result<Vec<u8>, ArchiveError>;
}
