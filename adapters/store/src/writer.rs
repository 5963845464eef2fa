//! [`Background`]: the [`CoxStore`] a session writes, with `cox.db` written
//! on a thread of its own, so the async runtime never waits on SQLite.
//!
//! An event's rollout line is appended at once, before the surface hears
//! of the event (an append to an open file: it waits on no lock), so a
//! process killed at any point leaves a rollout holding everything any
//! surface was shown. Everything that goes to `cox.db` (the session's row,
//! a usage row, the title, the turn's booking, an archived output and its
//! index row) becomes a job on one bounded queue, run in order by one
//! writer thread; the caller goes on at once. A usage row is timed, priced
//! and stamped when its event comes, not when the job runs. The queue keeps
//! the order the events came in, and a read made after writes (the spend a
//! budget check asks for) runs after them. A job that fails keeps its error, and the next call
//! returns it: the session learns of a broken record one event late, never
//! not at all. [`Store::flush`] resolves once every job handed over before
//! it has run, which is how the session has a turn's events on disk before
//! the surface hears the turn ended.
//!
//! When another process holds `cox.db`'s write lock, the writer waits (up to
//! the database's busy timeout) and the jobs queue up behind it; only a full
//! queue ([`QUEUE`] jobs) makes the session wait too. Dropping the
//! `Background` runs what is queued, then joins the thread.

use std::sync::mpsc::{self, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use cox_protocol::archive::{ArchiveError, ArchiveMeta};
use cox_protocol::provider::BoxFuture;
use cox_protocol::store::{SessionMeta, SessionState, Spend, StoreError};
use cox_protocol::types::Event;
use cox_protocol::{Archive, SessionId, Store};
use futures::channel::oneshot;

use crate::clock;
use crate::ledger::CoxStore;

/// Jobs waiting at most; past this a write waits for room.
pub const QUEUE: usize = 4096;

type Job = Box<dyn FnOnce(&CoxStore) + Send>;

/// A [`Store`] and [`Archive`] whose database writes run on a writer
/// thread.
pub struct Background {
    inner: Arc<CoxStore>,
    jobs: Option<SyncSender<Job>>,
    /// The first error of a job nobody waited for, until it is returned.
    failed: Arc<Mutex<Option<StoreError>>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Background {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Background").finish_non_exhaustive()
    }
}

impl Background {
    /// Starts the writer thread for `inner`.
    ///
    /// # Errors
    /// The thread could not be started.
    pub fn start(inner: Arc<CoxStore>) -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::sync_channel::<Job>(QUEUE);
        let worker = Arc::clone(&inner);
        let thread = std::thread::Builder::new()
            .name("cox-record".into())
            .spawn(move || {
                for job in queue {
                    job(&worker);
                }
            })?;
        Ok(Self {
            inner,
            jobs: Some(jobs),
            failed: Arc::new(Mutex::new(None)),
            thread: Some(thread),
        })
    }

    /// What the writer wraps, for reads that need no ordering.
    /// Runs `job` on the writer thread, after what is already queued (a
    /// write of the caller's own that must not wait on `cox.db`'s lock).
    pub fn enqueue(&self, job: impl FnOnce(&CoxStore) + Send + 'static) {
        self.send(Box::new(job));
    }

    #[must_use]
    pub fn inner(&self) -> &Arc<CoxStore> {
        &self.inner
    }

    /// Hands `job` to the writer. A writer that is gone runs it here.
    fn send(&self, job: Job) {
        let job = match &self.jobs {
            Some(jobs) => match jobs.send(job) {
                Ok(()) => return,
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        job(&self.inner);
    }

    /// Hands over a write whose error is kept for the next call.
    fn write(&self, write: impl FnOnce(&CoxStore) -> Result<(), StoreError> + Send + 'static) {
        let failed = Arc::clone(&self.failed);
        self.send(Box::new(move |inner| {
            if let Err(err) = write(inner) {
                let mut slot = failed.lock().unwrap_or_else(PoisonError::into_inner);
                slot.get_or_insert(err);
            }
        }));
    }

    /// The error of an earlier write, once.
    fn earlier(&self) -> Result<(), StoreError> {
        let mut slot = self.failed.lock().unwrap_or_else(PoisonError::into_inner);
        slot.take().map_or(Ok(()), Err)
    }

    /// Runs `read` after every job handed over so far, and hands back what
    /// it returned.
    fn after<R: Send + 'static>(
        &self,
        read: impl FnOnce(&CoxStore) -> R + Send + 'static,
    ) -> oneshot::Receiver<R> {
        let (tx, rx) = oneshot::channel();
        self.send(Box::new(move |inner| {
            let _ = tx.send(read(inner));
        }));
        rx
    }
}

/// The writer went away before it answered: it panicked.
fn gone() -> StoreError {
    StoreError::Ledger {
        source: "the record's writer thread stopped".into(),
    }
}

impl Store for Background {
    fn session_started(&self, meta: &SessionMeta) -> Result<(), StoreError> {
        self.earlier()?;
        self.inner.start_now(meta)?;
        let (meta, now) = (meta.clone(), clock::now_rfc3339());
        self.write(move |inner| inner.start_row(&meta, now));
        Ok(())
    }

    fn rollout_append(&self, session: SessionId, event: &Event) -> Result<(), StoreError> {
        self.earlier()?;
        if let Some(booking) = self.inner.append_now(session, event)? {
            self.write(move |inner| inner.book(session, &booking));
        }
        Ok(())
    }

    fn turn_finished(&self, session: SessionId, turns: u32) -> Result<(), StoreError> {
        self.earlier()?;
        let now = clock::now_rfc3339();
        self.write(move |inner| inner.finish_turn(session, turns, &now));
        Ok(())
    }

    fn session_ended(&self, session: SessionId, state: SessionState) -> Result<(), StoreError> {
        self.earlier()?;
        self.inner.end_now(session);
        let now = clock::now_rfc3339();
        self.write(move |inner| inner.end_row(session, state, &now));
        Ok(())
    }

    /// Blocks until the writes before it ran: for callers off the runtime.
    fn spend(&self, session: SessionId) -> Result<Spend, StoreError> {
        futures::executor::block_on(self.spend_async(session))
    }

    fn spend_async(&self, session: SessionId) -> BoxFuture<'_, Result<Spend, StoreError>> {
        let read = self.after(move |inner| inner.spend(session));
        Box::pin(async move { read.await.unwrap_or_else(|_| Err(gone())) })
    }

    fn flush(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        let done = self.after(|_| ());
        Box::pin(async move {
            done.await.map_err(|_| gone())?;
            self.earlier()
        })
    }
}

impl Archive for Background {
    /// Blocks until the bytes are kept: for callers off the runtime.
    fn put(&self, meta: &ArchiveMeta, bytes: &[u8]) -> Result<String, ArchiveError> {
        futures::executor::block_on(self.put_async(meta.clone(), bytes.to_vec()))
    }

    fn put_async(
        &self,
        meta: ArchiveMeta,
        bytes: Vec<u8>,
    ) -> BoxFuture<'_, Result<String, ArchiveError>> {
        let kept = self.after(move |inner| inner.put(&meta, &bytes));
        Box::pin(async move {
            kept.await.unwrap_or_else(|_| {
                Err(ArchiveError::Index {
                    source: "the record's writer thread stopped".into(),
                })
            })
        })
    }

    /// Reads need no ordering: an id is handed out only once it is kept.
    fn get(&self, id: &str) -> Result<Vec<u8>, ArchiveError> {
        self.inner.get(id)
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        // The queue ends; the writer runs what is left, then stops.
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
