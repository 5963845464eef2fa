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
//!   refuses to be created again (a resumed session reopens it for
//!   appending);
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
    /// Creates the rollout of a new session, refusing one that exists; for
    /// a resumed session, opens the existing rollout for appending instead,
    /// refusing one that is missing.
    fn session_started(&self, meta: &SessionMeta) -> Result<(), StoreError> {
        let path = self.home.rollout_path(meta.id);
        let file = if meta.resumed {
            let reopen = |source: io::Error| StoreError::ReopenRollout {
                path: path.clone(),
                session: meta.id,
                source,
            };
            let mut file = OpenOptions::new()
                .read(true)
                .append(true)
                .open(&path)
                .map_err(reopen)?;
            // A writer killed mid-line left no newline: end that line, so
            // the first event of this run starts one of its own. The reader
            // skips a cut line that a resumed `session_started` follows.
            if !ends_with_newline(&mut file).map_err(reopen)? {
                file.write_all(b"\n").map_err(reopen)?;
            }
            file
        } else {
            OpenOptions::new()
                .append(true)
                .create_new(true)
                .open(&path)
                .map_err(|source| {
                    let path = path.clone();
                    if source.kind() == io::ErrorKind::AlreadyExists {
                        StoreError::RolloutExists { path }
                    } else {
                        StoreError::CreateRollout { path, source }
                    }
                })?
        };
        self.open_files().insert(meta.id, file);
        Ok(())
    }

    fn rollout_append(&self, session: SessionId, event: &Event) -> Result<(), StoreError> {
        let path = self.home.rollout_path(session);
        let mut line = serde_json::to_string(event).map_err(|source| StoreError::Serialise {
            kind: event.kind(),
            path: path.clone(),
            source,
        })?;
        line.push('\n');
        let mut files = self.open_files();
        let file = match files.entry(session) {
            Entry::Occupied(open) => open.into_mut(),
            Entry::Vacant(slot) => {
                // A session resumed by a later process: its rollout exists,
                // so keep appending to it (never create one here).
                let file = OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .map_err(|source| StoreError::OpenRollout {
                        path: path.clone(),
                        session,
                        source,
                    })?;
                slot.insert(file)
            }
        };
        file.write_all(line.as_bytes())
            .map_err(|source| StoreError::Append { path, source })
    }

    /// Does nothing: the rollout already holds every turn. Summaries
    /// (turn counts, cost) are [`crate::CoxStore`]'s, in `cox.db`.
    fn turn_finished(&self, _session: SessionId, _turns: u32) -> Result<(), StoreError> {
        Ok(())
    }
}

/// Whether the file is empty or its last byte is a newline.
fn ends_with_newline(file: &mut File) -> io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let length = file.metadata()?.len();
    if length == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::Start(length - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// A rollout read back from disk.
#[derive(Clone, Debug, PartialEq)]
pub struct Rollout {
    /// Every complete event, in the order it was appended.
    pub events: Vec<Event>,
    /// The file ended in a partial line (a writer died mid-append); it was
    /// left out of `events`.
    pub truncated_tail: bool,
    /// Lines (from 1) cut short by a writer that died, then ended by the run
    /// that resumed the session (a resumed `session_started` follows each);
    /// they were left out of `events`.
    pub cut_lines: Vec<usize>,
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

/// Writes the rollout of session `id`, a fork: `events` (another
/// session's, as [`read_rollout`] gave them) with every `session_started`
/// naming `id`, so the fork resumes as itself. The file must not exist;
/// nothing is left behind when it cannot be written whole.
///
/// # Errors
/// The rollout exists, or cannot be written.
pub fn fork_rollout(
    home: &CoxHome,
    id: SessionId,
    events: &[Event],
) -> Result<PathBuf, StoreError> {
    let path = home.rollout_path(id);
    let mut text = String::new();
    for event in events {
        let mut event = event.clone();
        if let Event::SessionStarted { session_id, .. } = &mut event {
            *session_id = id;
        }
        let line = serde_json::to_string(&event).map_err(|source| StoreError::Serialise {
            kind: event.kind(),
            path: path.clone(),
            source,
        })?;
        text.push_str(&line);
        text.push('\n');
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|source| match source.kind() {
            io::ErrorKind::AlreadyExists => StoreError::RolloutExists { path: path.clone() },
            _ => StoreError::CreateRollout {
                path: path.clone(),
                source,
            },
        })?;
    if let Err(source) = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
    {
        drop(file);
        let _ = std::fs::remove_file(&path);
        return Err(StoreError::CreateRollout { path, source });
    }
    Ok(path)
}

/// Whether the next line of `rest` is a resumed `session_started`.
fn resumes(rest: &[u8]) -> bool {
    let next = rest.split(|b| *b == b'\n').next().unwrap_or_default();
    matches!(
        serde_json::from_slice::<Event>(next),
        Ok(Event::SessionStarted { resumed: true, .. })
    )
}

/// Reads every event of the rollout at `path`.
///
/// A last line with no newline that is not valid JSON is what a killed
/// writer leaves; it is skipped and reported in [`Rollout::truncated_tail`].
/// A last line with no newline that *is* a valid event is kept. A line that
/// is not JSON, followed by the resumed `session_started` of the run that
/// picked the session up after the crash, is the same damage after a
/// resume; it is skipped and listed in [`Rollout::cut_lines`].
pub fn read_rollout(path: &Path) -> Result<Rollout, RolloutError> {
    let bytes = std::fs::read(path).map_err(|source| RolloutError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut events = Vec::new();
    let mut truncated_tail = false;
    let mut cut_lines = Vec::new();
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
        let err = match serde_json::from_slice::<Event>(line) {
            Ok(event) => {
                events.push(event);
                continue;
            }
            Err(err) => err,
        };
        let json = serde_json::from_slice::<serde_json::Value>(line).ok();
        if json.is_none() && !complete {
            truncated_tail = true;
            continue;
        }
        if json.is_none() && resumes(rest) {
            cut_lines.push(number);
            continue;
        }
        let unknown = err.to_string().starts_with("unknown variant");
        let message = match json.as_ref().and_then(|v| v["type"].as_str()) {
            _ if line.is_empty() => "empty line".to_owned(),
            Some(kind) if unknown => format!(
                "an event this cox does not know (`{kind}`): was the rollout written by a newer cox?"
            ),
            _ => err.to_string(),
        };
        return Err(RolloutError::BadLine {
            path: path.to_path_buf(),
            line: number,
            message,
        });
    }
    Ok(Rollout {
        events,
        truncated_tail,
        cut_lines,
    })
}
