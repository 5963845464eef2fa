//! [`Background`]: a record written on a thread of its own, so the async
//! runtime never waits on SQLite or the disk.
//!
//! Every write the session hands over (a rollout line, a ledger row, an
//! archived output) becomes a job on one bounded queue, run in order by one
//! writer thread; the caller goes on at once. The queue keeps the order the
//! events were emitted in, so the rollout stays append-only and in event
//! order, and a read made after writes (the spend a budget check asks for)
//! runs after them. A job that fails keeps its error, and the next call
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

/// Jobs waiting at most; past this a write waits for room.
pub const QUEUE: usize = 4096;

type Job<T> = Box<dyn FnOnce(&T) + Send>;

/// A [`Store`] and [`Archive`] whose writes run on a writer thread.
pub struct Background<T: Send + Sync + 'static> {
    inner: Arc<T>,
    jobs: Option<SyncSender<Job<T>>>,
    /// The first error of a job nobody waited for, until it is returned.
    failed: Arc<Mutex<Option<StoreError>>>,
    thread: Option<JoinHandle<()>>,
}

impl<T: Send + Sync + 'static> std::fmt::Debug for Background<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Background").finish_non_exhaustive()
    }
}

impl<T: Store + Archive + 'static> Background<T> {
    /// Starts the writer thread for `inner`.
    ///
    /// # Errors
    /// The thread could not be started.
    pub fn start(inner: Arc<T>) -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::sync_channel::<Job<T>>(QUEUE);
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
    #[must_use]
    pub fn inner(&self) -> &Arc<T> {
        &self.inner
    }

    /// Hands `job` to the writer. A writer that is gone runs it here.
    fn send(&self, job: Job<T>) {
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
    fn write(&self, write: impl FnOnce(&T) -> Result<(), StoreError> + Send + 'static) {
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
        read: impl FnOnce(&T) -> R + Send + 'static,
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

impl<T: Store + Archive + 'static> Store for Background<T> {
    fn session_started(&self, meta: &SessionMeta) -> Result<(), StoreError> {
        self.earlier()?;
        let meta = meta.clone();
        self.write(move |inner| inner.session_started(&meta));
        Ok(())
    }

    fn rollout_append(&self, session: SessionId, event: &Event) -> Result<(), StoreError> {
        self.earlier()?;
        let event = event.clone();
        self.write(move |inner| inner.rollout_append(session, &event));
        Ok(())
    }

    fn turn_finished(&self, session: SessionId, turns: u32) -> Result<(), StoreError> {
        self.earlier()?;
        self.write(move |inner| inner.turn_finished(session, turns));
        Ok(())
    }

    fn session_ended(&self, session: SessionId, state: SessionState) -> Result<(), StoreError> {
        self.earlier()?;
        self.write(move |inner| inner.session_ended(session, state));
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

impl<T: Store + Archive + 'static> Archive for Background<T> {
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

impl<T: Send + Sync + 'static> Drop for Background<T> {
    fn drop(&mut self) {
        // The queue ends; the writer runs what is left, then stops.
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
