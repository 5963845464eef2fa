//! The `Checkpoints` trait: every write a session makes has a pre-image,
//! and every turn can be undone.
//!
//! The core tells a checkpoint store when a user turn starts (a marker for
//! the rewind's timeline), and brackets every call that can change files:
//! [`Checkpoints::before`] runs before the tool does, with the files the
//! call names ([`Scope::Files`]) or, for a call that names none (a shell
//! command, an MCP tool), the whole workspace ([`Scope::Workspace`]);
//! [`Checkpoints::after`] runs once the tool is done and returns what the
//! call changed. A rewind ([`Checkpoints::rewind`]) writes the earliest
//! pre-images back, itself checkpointed under a turn number of its own.
//!
//! Invariants: a pre-image is on disk before the tool it protects runs, and
//! the rows naming it before `after` returns, so the core says
//! [`crate::types::Event::Checkpoint`] only about what is kept; a store
//! never changes the user's own repository (its index, config, refs,
//! hooks); a failure is a [`CheckpointError`] the core turns into a notice,
//! never a failed call.

use serde::{Deserialize, Serialize};

use crate::ids::{CallId, SessionId};
use crate::provider::BoxFuture;

/// What a call did to one file, as its checkpoint row records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChange {
    /// It existed and was changed: the bytes before are kept.
    Pre,
    /// It did not exist before the call.
    Created,
    /// It existed and is gone: the bytes before are kept.
    Deleted,
}

impl FileChange {
    /// The name the record stores.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            FileChange::Pre => "pre",
            FileChange::Created => "created",
            FileChange::Deleted => "deleted",
        }
    }
}

/// One file a call changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointFile {
    /// Absolute.
    pub path: String,
    pub change: FileChange,
}

/// What a call can touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope<'a> {
    /// Exactly these files (absolute, confined to the workspace).
    Files(&'a [String]),
    /// Anything under the workspace root: snapshot before and after.
    Workspace,
}

/// What a rewind restores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RewindWhat {
    /// The files, as they were before the chosen turn.
    Code,
    /// The conversation, cut before the chosen turn.
    Conversation,
    /// Both.
    Both,
}

impl RewindWhat {
    /// Whether the files are restored.
    #[must_use]
    pub fn code(self) -> bool {
        matches!(self, RewindWhat::Code | RewindWhat::Both)
    }

    /// Whether the conversation is cut.
    #[must_use]
    pub fn conversation(self) -> bool {
        matches!(self, RewindWhat::Conversation | RewindWhat::Both)
    }
}

/// One user turn on the rewind's timeline, newest first in a listing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnCheckpoint {
    pub turn: u32,
    /// The prompt's first line.
    pub prompt: String,
    /// The files the turn changed, each once.
    pub files: Vec<String>,
    /// Files changed whose bytes were too large to keep: a rewind leaves
    /// them as they are, and says so.
    pub unkept: Vec<String>,
}

/// What a rewind of the code did, or would not do.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindReport {
    /// The files written back (or removed, for files the turns created).
    pub restored: Vec<CheckpointFile>,
    /// Files changed since cox last wrote them (a person edited them): with
    /// any, nothing was restored unless the rewind was forced.
    pub conflicts: Vec<String>,
    /// Files whose pre-image was too large to keep, left as they are.
    pub unkept: Vec<String>,
}

/// Checkpointing failed: what was being done and why, in one line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CheckpointError(pub String);

/// Where pre-images are kept.
pub trait Checkpoints: Send + Sync {
    /// A user turn begins: the marker that puts it on the timeline.
    fn turn_started<'a>(
        &'a self,
        session: SessionId,
        turn: u32,
        prompt: &'a str,
    ) -> BoxFuture<'a, Result<(), CheckpointError>>;

    /// Before `call` runs: keep the pre-images of `scope`.
    fn before<'a>(
        &'a self,
        session: SessionId,
        turn: u32,
        call: &'a CallId,
        scope: Scope<'a>,
    ) -> BoxFuture<'a, Result<(), CheckpointError>>;

    /// After `call` ran: record what it changed, and return that.
    fn after<'a>(
        &'a self,
        session: SessionId,
        turn: u32,
        call: &'a CallId,
    ) -> BoxFuture<'a, Result<Vec<CheckpointFile>, CheckpointError>>;

    /// The session's turns with what each changed, newest first.
    fn list(
        &self,
        session: SessionId,
    ) -> BoxFuture<'_, Result<Vec<TurnCheckpoint>, CheckpointError>>;

    /// Writes back the files as they were before turn `to_turn`, checkpointing
    /// each write under `as_turn`. With conflicts and without `force`,
    /// nothing is written and the report names them.
    fn rewind(
        &self,
        session: SessionId,
        to_turn: u32,
        as_turn: u32,
        force: bool,
    ) -> BoxFuture<'_, Result<RewindReport, CheckpointError>>;
}
