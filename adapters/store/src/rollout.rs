//! The rollout: a session's events, one JSON object per line, append-only.
//!
//! The rollout is the record a session is resumed, audited and replayed
//! from, so it must survive the process dying at any moment:
//! - every event is written with a single `write_all` of its line and the
//!   newline, on a file opened for appending, with no user-space buffer: when
//!   `rollout_append` returns the bytes are in the OS, and a SIGKILL loses
//!   nothing already appended. (There is no fsync per line: surviving a power
//!   cut is not worth a disk flush per streamed delta.)
//! - nothing already written is rewritten; a rollout is created once and
//!   refuses to be created again;
//! - a reader tolerates exactly one kind of damage, the kind a killed writer
//!   leaves: a last line cut short. Anything else is reported with its line.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use cox_protocol::store::{SessionMeta, StoreError};
use cox_protocol::types::Event;
use cox_protocol::{SessionId, Store};

use crate::home::CoxHome;

/// A [`Store`] writing each session to `sessions/<id>.jsonl` under the home.
///
/// Rollouts stay open for appending for the life of the store. The store
/// can be shared between threads; appends to different sessions are
/// serialised, which costs nothing next to the model's pace.
#[derive(Debug)]
pub struct JsonlStore {
    home: CoxHome,
    open: Mutex<HashMap<SessionId, File>>,
}

impl JsonlStore {
    /// A store over `home`, which should have been [`CoxHome::prepare`]d.
    #[must_use]
    pub fn new(home: CoxHome) -> Self {
        Self {
            home,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// The home this store writes under.
    #[must_use]
    pub fn home(&self) -> &CoxHome {
        &self.home
    }

    fn open_files(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, File>> {
        // A panic while holding the lock cannot leave a half-written map
        // entry, and a line is written whole or not at all by the OS call.
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Store for JsonlStore {
    fn session_started(&self, meta: &SessionMeta) -> Result<(), StoreError> {
        let path = self.home.rollout_path(meta.id);
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| {
                let what = if e.kind() == io::ErrorKind::AlreadyExists {
                    "it already exists".to_owned()
                } else {
                    e.to_string()
                };
                StoreError(format!("cannot create rollout {}: {what}", path.display()))
            })?;
        self.open_files().insert(meta.id, file);
        Ok(())
    }

    fn rollout_append(&self, session: SessionId, event: &Event) -> Result<(), StoreError> {
        let path = self.home.rollout_path(session);
        let mut line = serde_json::to_string(event).map_err(|e| {
            StoreError(format!(
                "cannot serialise a {} event for {}: {e}",
                event.kind(),
                path.display()
            ))
        })?;
        line.push('\n');
        let mut files = self.open_files();
        let file = match files.entry(session) {
            Entry::Occupied(open) => open.into_mut(),
            Entry::Vacant(slot) => {
                // A session resumed by a later process: its rollout exists,
                // so keep appending to it (never create one here).
                let file = OpenOptions::new().append(true).open(&path).map_err(|e| {
                    StoreError(format!(
                        "cannot open rollout {} of session {session}: {e}",
                        path.display()
                    ))
                })?;
                slot.insert(file)
            }
        };
        file.write_all(line.as_bytes())
            .map_err(|e| StoreError(format!("cannot append to rollout {}: {e}", path.display())))
    }

    /// Does nothing yet: the rollout already holds every turn. A later
    /// change records per-session summaries (turn counts, usage) in SQLite
    /// here, for listing and resuming sessions without reading rollouts.
    fn turn_finished(&self, _session: SessionId, _turns: u32) -> Result<(), StoreError> {
        Ok(())
    }
}

/// A rollout read back from disk.
#[derive(Clone, Debug, PartialEq)]
pub struct Rollout {
    /// Every complete event, in the order it was appended.
    pub events: Vec<Event>,
    /// The file ended in a partial line (a writer died mid-append); it was
    /// left out of `events`.
    pub truncated_tail: bool,
}

/// A rollout could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum RolloutError {
    #[error("rollout {}: cannot read: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    /// A line other than a cut-short last one is not an event.
    #[error("rollout {}:{line}: {message}", path.display())]
    BadLine {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// Reads every event of the rollout at `path`.
///
/// A last line with no newline that is not valid JSON is what a killed
/// writer leaves; it is skipped and reported in [`Rollout::truncated_tail`].
/// A last line with no newline that *is* a valid event is kept.
pub fn read_rollout(path: &Path) -> Result<Rollout, RolloutError> {
    let bytes = std::fs::read(path).map_err(|source| RolloutError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut events = Vec::new();
    let mut truncated_tail = false;
    let mut rest = bytes.as_slice();
    let mut number = 0;
    while !rest.is_empty() {
        number += 1;
        let (line, complete) = match rest.iter().position(|&b| b == b'\n') {
            Some(end) => {
                let line = &rest[..end];
                rest = &rest[end + 1..];
                (line, true)
            }
            None => (std::mem::take(&mut rest), false),
        };
        match serde_json::from_slice::<Event>(line) {
            Ok(event) => events.push(event),
            Err(_) if !complete && serde_json::from_slice::<serde_json::Value>(line).is_err() => {
                truncated_tail = true;
            }
            Err(e) => {
                let message = if line.is_empty() {
                    "empty line".to_owned()
                } else {
                    e.to_string()
                };
                return Err(RolloutError::BadLine {
                    path: path.to_path_buf(),
                    line: number,
                    message,
                });
            }
        }
    }
    Ok(Rollout {
        events,
        truncated_tail,
    })
}
