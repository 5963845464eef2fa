//! The `Store` trait: where a session's record goes.
//!
//! The rollout (`sessions/<id>.jsonl`) receives every event as it happens,
//! append-only; nothing already written is ever rewritten. The core hands the
//! store the copy that is to be persisted; the store writes it whole or
//! reports an error.
//!
//! A store may also keep a ledger: every [`Event::Usage`] it is handed is
//! one provider call, booked against the turn of the last
//! [`Event::TurnStarted`] it saw for that session. [`Store::spend`] reports
//! what the ledger holds, so the core can stop a turn before a budget cap is
//! crossed without knowing any prices.
//!
//! A failure is a [`StoreError`]: which operation on which file, with the
//! I/O, serialisation or database error that caused it kept as its source.

use std::io;
use std::path::PathBuf;

use crate::ids::SessionId;
use crate::provider::BoxFuture;
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
    /// The session that spawned this one (subagents).
    pub parent_id: Option<SessionId>,
    /// The session existed before: reopen its record and keep appending to
    /// its rollout instead of creating them.
    pub resumed: bool,
}

/// How a session's record says it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionState {
    /// Running, or stopped without saying so (a crash looks the same).
    Open,
    /// Ended normally.
    Closed,
    /// Ended because its record or its driver failed.
    Error,
}

impl SessionState {
    /// The name the database stores.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            SessionState::Open => "open",
            SessionState::Closed => "closed",
            SessionState::Error => "error",
        }
    }
}

/// What the ledger says has been spent, in US dollars.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spend {
    /// This session, every call so far.
    pub session_usd: f64,
    /// Every session this calendar month (UTC).
    pub month_usd: f64,
    /// The session's last call: a fair guess at what the next one costs.
    pub last_call_usd: f64,
}

/// Writing the record failed: what was being done, to which file, and why.
///
/// The message is the whole line, cause included (the core quotes it in
/// notices); the cause is also kept as `source()` (see [`crate::error`]).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A new session's rollout is already there: ids are fresh, so someone
    /// else wrote it, and it is not touched.
    #[error("cannot create rollout {}: it already exists", path.display())]
    RolloutExists { path: PathBuf },
    /// A new session's rollout could not be created.
    #[error("cannot create rollout {}: {source}", path.display())]
    CreateRollout { path: PathBuf, source: io::Error },
    /// A resumed session's rollout could not be opened for appending, or
    /// the line a killed writer cut short could not be ended.
    #[error(
        "cannot reopen rollout {} to resume session {session}: {source}",
        path.display()
    )]
    ReopenRollout {
        path: PathBuf,
        session: SessionId,
        source: io::Error,
    },
    /// The rollout of a session this store did not start (a later process
    /// appending to it) could not be opened.
    #[error("cannot open rollout {} of session {session}: {source}", path.display())]
    OpenRollout {
        path: PathBuf,
        session: SessionId,
        source: io::Error,
    },
    /// An event could not be turned into its rollout line.
    #[error("cannot serialise a {kind} event for {}: {source}", path.display())]
    Serialise {
        /// The event's `type`.
        kind: &'static str,
        path: PathBuf,
        source: serde_json::Error,
    },
    /// The line could not be appended.
    #[error("cannot append to rollout {}: {source}", path.display())]
    Append { path: PathBuf, source: io::Error },
    /// The store's ledger or session index refused (for cox-store, `cox.db`);
    /// its error names the file and says the cause.
    #[error("{source}")]
    Ledger {
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// A session's durable record.
pub trait Store: Send + Sync {
    /// Called once, before the first event.
    fn session_started(&self, meta: &SessionMeta) -> Result<(), StoreError>;
    /// Appends one event to the session's rollout.
    fn rollout_append(&self, session: SessionId, event: &Event) -> Result<(), StoreError>;
    /// Called after every finished turn with the count of turns so far.
    fn turn_finished(&self, session: SessionId, turns: u32) -> Result<(), StoreError>;
    /// Called once when the session ends.
    fn session_ended(&self, _session: SessionId, _state: SessionState) -> Result<(), StoreError> {
        Ok(())
    }
    /// What the ledger holds for the session and the month; zero for a
    /// store without one. It may wait on the disk: the session asks
    /// [`Store::spend_async`].
    fn spend(&self, _session: SessionId) -> Result<Spend, StoreError> {
        Ok(Spend::default())
    }
    /// [`Store::spend`] as the session asks it, after every write handed
    /// over before it. A store that writes on a thread of its own answers
    /// from there; this default answers inline.
    fn spend_async(&self, session: SessionId) -> BoxFuture<'_, Result<Spend, StoreError>> {
        let spend = self.spend(session);
        Box::pin(std::future::ready(spend))
    }
    /// Resolves once every write handed over so far is on disk, with the
    /// error of one that failed and was not said yet. A store that writes
    /// inline is always flushed.
    fn flush(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(std::future::ready(Ok(())))
    }
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
    fn session_ended(&self, session: SessionId, state: SessionState) -> Result<(), StoreError> {
        (**self).session_ended(session, state)
    }
    fn spend(&self, session: SessionId) -> Result<Spend, StoreError> {
        (**self).spend(session)
    }
    fn spend_async(&self, session: SessionId) -> BoxFuture<'_, Result<Spend, StoreError>> {
        (**self).spend_async(session)
    }
    fn flush(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        (**self).flush()
    }
}
