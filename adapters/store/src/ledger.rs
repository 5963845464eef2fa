//! [`CoxStore`]: the store cox runs with, the JSONL rollout plus `cox.db`.
//!
//! Every event goes to the rollout first, exactly as [`JsonlStore`] writes
//! it. The database gets a `sessions` row when a session starts (or is
//! resumed), a `usage` row for every [`Event::Usage`], the title of
//! [`Event::SessionTitled`], the turn count and recomputed cost after each
//! turn, and the state when the session ends.
//!
//! Invariants:
//! - a usage row is in the database before `rollout_append` returns for its
//!   event, so a budget check made right after sees it;
//! - the call is booked against the turn of the last [`Event::TurnStarted`]
//!   this store was handed for the session (0 if none yet);
//! - prices come from the [`Catalog`] given at open; a model without a
//!   price row is booked at 0 and marked estimated, never skipped.
//!
//! `latency_ms` is the call's wall time as far as a store can see it: the
//! time from the last event that came *between* model calls (the turn
//! starting, a tool call finishing, the previous call's usage, …) to the
//! usage event that ends the call. The streamed parts of the answer (text,
//! thinking, requested tool calls), retries and notices do not restart that
//! clock, so the figure covers the whole call including its streaming and
//! any retries, and excludes time the store was not told about before the
//! call began.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use cox_protocol::catalog::{self, Catalog};
use cox_protocol::store::{SessionMeta, SessionState, Spend, StoreError};
use cox_protocol::types::Event;
use cox_protocol::{SessionId, Store};

use crate::clock;
use crate::db::{Db, DbError, SessionRow, UsageRow, project_slug};
use crate::home::CoxHome;
use crate::rollout::JsonlStore;

/// A [`Store`] writing each session's rollout and its rows in `cox.db`;
/// also the [`Archive`](cox_protocol::Archive) of tool outputs (see
/// `archive/index.rs`).
#[derive(Debug)]
pub struct CoxStore {
    rollout: JsonlStore,
    db: Db,
    catalog: Catalog,
    live: Mutex<HashMap<SessionId, Watch>>,
}

/// What the store remembers between events of one session.
#[derive(Debug)]
struct Watch {
    /// The turn of the last `TurnStarted`.
    turn: u32,
    /// When the current model call began, as far as the store can tell.
    call_began: Instant,
}

impl CoxStore {
    /// The store over `home` (which should have been
    /// [`CoxHome::prepare`]d), with its database at `cox.db` in the home,
    /// pricing calls from `catalog`.
    pub fn open(home: &CoxHome, catalog: Catalog) -> Result<CoxStore, DbError> {
        let db = Db::open(&home.db_path())?;
        Ok(CoxStore {
            rollout: JsonlStore::new(home.clone()),
            db,
            catalog,
            live: Mutex::new(HashMap::new()),
        })
    }

    /// The database, for reading the record back.
    #[must_use]
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The home this store writes under.
    #[must_use]
    pub fn home(&self) -> &CoxHome {
        self.rollout.home()
    }

    fn live(&self) -> MutexGuard<'_, HashMap<SessionId, Watch>> {
        // Entries are plain values replaced whole; a panic elsewhere while
        // the lock was held cannot leave one half-updated.
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Notes `event` for the session; returns the turn and the milliseconds
    /// since the current call began, both as they were before the event.
    fn observe(&self, session: SessionId, event: &Event) -> (u32, u64) {
        let now = Instant::now();
        let mut live = self.live();
        let watch = live.entry(session).or_insert(Watch {
            turn: 0,
            call_began: now,
        });
        let before = (
            watch.turn,
            u64::try_from(now.duration_since(watch.call_began).as_millis()).unwrap_or(u64::MAX),
        );
        if let Event::TurnStarted { turn, .. } = event {
            watch.turn = *turn;
        }
        if between_calls(event) {
            watch.call_began = now;
        }
        before
    }
}

/// Whether `event` can only come between two model calls, so the next
/// call's clock starts at it. The parts of a streamed answer, and the
/// retries and notices that may come in the middle of one, cannot.
fn between_calls(event: &Event) -> bool {
    match event {
        Event::SessionStarted { .. }
        | Event::TurnStarted { .. }
        | Event::ApprovalRequired { .. }
        | Event::Elicitation { .. }
        | Event::Elicited { .. }
        | Event::ToolCallOutput { .. }
        | Event::ToolCallDone { .. }
        | Event::Usage { .. }
        | Event::Compacted { .. }
        | Event::ModeChanged { .. }
        | Event::SessionTitled { .. }
        | Event::TurnDone { .. }
        | Event::Checkpoint { .. }
        | Event::Rewound { .. }
        | Event::RewindConflict { .. }
        | Event::HookRan { .. }
        // A subagent runs while this session runs its call.
        | Event::Subagent { .. }
        | Event::Attached { .. }
        | Event::UserShell { .. }
        | Event::Plan { .. } => true,
        Event::TextDelta { .. }
        | Event::ThinkingDelta { .. }
        | Event::ServerTool { .. }
        | Event::Citations { .. }
        | Event::ToolCallRequested { .. }
        | Event::Retry { .. }
        | Event::Notice { .. }
        | Event::Commands { .. } => false,
    }
}

fn store_error(error: DbError) -> StoreError {
    StoreError::Ledger {
        source: Box::new(error),
    }
}

/// What the database must do for an event, decided when the event came.
#[derive(Debug)]
pub(crate) enum Booking {
    Title(String),
    Usage(Box<UsageRow>),
}

impl CoxStore {
    /// The part of a session's start that is quick: its rollout created (or
    /// reopened) and its clock started. Its row is [`Self::start_row`].
    pub(crate) fn start_now(&self, meta: &SessionMeta) -> Result<(), StoreError> {
        self.rollout.session_started(meta)?;
        self.live().insert(
            meta.id,
            Watch {
                turn: 0,
                call_began: Instant::now(),
            },
        );
        Ok(())
    }

    /// The session's row in `cox.db`; `now` is when it started.
    pub(crate) fn start_row(&self, meta: &SessionMeta, now: String) -> Result<(), StoreError> {
        let row = SessionRow {
            id: meta.id.to_string(),
            created_at: meta.created_at.clone(),
            updated_at: if meta.resumed {
                now
            } else {
                meta.created_at.clone()
            },
            cwd: meta.cwd.clone(),
            project_slug: project_slug(&meta.cwd),
            title: None,
            parent_id: meta.parent_id.map(|id| id.to_string()),
            rollout_path: self.home().rollout_path(meta.id).display().to_string(),
            turns: 0,
            cost_usd: 0.0,
            state: SessionState::Open,
            provider: Some(meta.provider.clone()),
            model: Some(meta.model.clone()),
            forked: false,
        };
        if meta.resumed {
            self.db.resume_session(&row)
        } else {
            self.db.start_session(&row)
        }
        .map_err(store_error)
    }

    /// The quick part of an event: its rollout line, and what the database
    /// must book for it (timed and priced now, as the event comes).
    pub(crate) fn append_now(
        &self,
        session: SessionId,
        event: &Event,
    ) -> Result<Option<Booking>, StoreError> {
        self.rollout.rollout_append(session, event)?;
        let (turn, latency_ms) = self.observe(session, event);
        if let Event::SessionTitled { title } = event {
            return Ok(Some(Booking::Title(title.clone())));
        }
        let Event::Usage {
            provider,
            model,
            tier,
            job,
            effort,
            usage,
        } = event
        else {
            return Ok(None);
        };
        let cost = catalog::cost(self.catalog.get(model), usage);
        Ok(Some(Booking::Usage(Box::new(UsageRow {
            id: 0,
            session_id: session.to_string(),
            turn,
            job: job.as_str().to_owned(),
            tier: tier.as_str().to_owned(),
            provider: provider.clone(),
            model: model.clone(),
            effort: effort.map(|e| e.as_str().to_owned()),
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_read_tokens: usage.cache_read_tokens,
            cache_write_tokens: usage.cache_write_tokens,
            context_tokens: usage
                .input_tokens
                .saturating_add(usage.cache_read_tokens)
                .saturating_add(usage.cache_write_tokens),
            estimated: cost.estimated,
            cost_usd: cost.usd,
            latency_ms,
            created_at: clock::now_rfc3339(),
        }))))
    }

    /// Books what [`Self::append_now`] decided.
    pub(crate) fn book(&self, session: SessionId, booking: &Booking) -> Result<(), StoreError> {
        match booking {
            Booking::Title(title) => self.db.set_title(&session.to_string(), title),
            Booking::Usage(row) => self.db.insert_usage(row).map(|_| ()),
        }
        .map_err(store_error)
    }

    /// The turn count and cost after a turn, as of `now`.
    pub(crate) fn finish_turn(
        &self,
        session: SessionId,
        turns: u32,
        now: &str,
    ) -> Result<(), StoreError> {
        self.db
            .finish_turn(&session.to_string(), turns, now)
            .map_err(store_error)
    }

    /// The session's clock stops; its row's state is [`Self::end_row`].
    pub(crate) fn end_now(&self, session: SessionId) {
        self.live().remove(&session);
    }

    /// The session's final state, as of `now`.
    pub(crate) fn end_row(
        &self,
        session: SessionId,
        state: SessionState,
        now: &str,
    ) -> Result<(), StoreError> {
        self.db
            .set_state(&session.to_string(), state, now)
            .map_err(store_error)?;
        // The session is over: its presence is no longer live, whatever
        // its process goes on doing (`cox acp` runs many).
        self.db
            .presence_ended(&session.to_string())
            .map_err(store_error)
    }
}

impl Store for CoxStore {
    fn session_started(&self, meta: &SessionMeta) -> Result<(), StoreError> {
        self.start_now(meta)?;
        self.start_row(meta, clock::now_rfc3339())
    }

    fn rollout_append(&self, session: SessionId, event: &Event) -> Result<(), StoreError> {
        match self.append_now(session, event)? {
            Some(booking) => self.book(session, &booking),
            None => Ok(()),
        }
    }

    fn turn_finished(&self, session: SessionId, turns: u32) -> Result<(), StoreError> {
        self.finish_turn(session, turns, &clock::now_rfc3339())
    }

    fn session_ended(&self, session: SessionId, state: SessionState) -> Result<(), StoreError> {
        self.end_now(session);
        self.end_row(session, state, &clock::now_rfc3339())
    }

    fn spend(&self, session: SessionId) -> Result<Spend, StoreError> {
        let now = clock::now_rfc3339();
        self.db
            .spend(&session.to_string(), clock::month_of(&now))
            .map_err(store_error)
    }
}
