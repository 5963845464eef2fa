//! Project memory: short notes kept across sessions of one project (by a
//! person's `/memory add`, or the model's `memory` tool), of which the ones
//! that bear on a turn reach the model in the volatile part of the system
//! prompt (`system[3]`), so the cached prefix never changes because of
//! them. `AGENTS.md` and `CLAUDE.md` stay the instruction files; notes are
//! what was learnt along the way.

use crate::provider::BoxFuture;

/// One kept note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub id: i64,
    pub text: String,
}

/// Where a session's project notes are kept.
pub trait Memory: Send + Sync {
    /// The notes most relevant to `prompt`, best first, at most `limit`.
    /// Never fails: a memory that cannot be read recalls nothing.
    fn recall<'a>(&'a self, prompt: &'a str, limit: usize) -> BoxFuture<'a, Vec<Note>>;
}
