//! The `Store` trait: where a session's record goes.
//!
//! The rollout (`sessions/<id>.jsonl`) receives every event as it happens,
//! append-only; nothing already written is ever rewritten. The core hands the
//! store the copy that is to be persisted; the store writes it whole or
//! reports an error.

use crate::ids::SessionId;
use crate::types::Event;

/// Facts about a session the store records at its start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionMeta {
    pub id: SessionId,
    pub cwd: String,
    pub provider: String,
    pub model: String,
    /// RFC 3339 UTC.
    pub created_at: String,
}

/// Writing the record failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(pub String);

/// A session's durable record.
pub trait Store: Send + Sync {
    /// Called once, before the first event.
    fn session_started(&self, meta: &SessionMeta) -> Result<(), StoreError>;
    /// Appends one event to the session's rollout.
    fn rollout_append(&self, session: SessionId, event: &Event) -> Result<(), StoreError>;
    /// Called after every finished turn with the count of turns so far.
    fn turn_finished(&self, session: SessionId, turns: u32) -> Result<(), StoreError>;
}

impl<S: Store> Store for std::sync::Arc<S> {
    fn session_started(&self, meta: &SessionMeta) -> Result<(), StoreError> {
        (**self).session_started(meta)
    }
    fn rollout_append(&self, session: SessionId, event: &Event) -> Result<(), StoreError> {
        (**self).rollout_append(session, event)
    }
    fn turn_finished(&self, session: SessionId, turns: u32) -> Result<(), StoreError> {
        (**self).turn_finished(session, turns)
    }
}
