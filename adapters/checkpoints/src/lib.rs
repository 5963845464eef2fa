//! cox's checkpoint store: a pre-image of every file a session changes,
//! and the rewind that writes them back.
//!
//! [`GitCheckpoints`] implements the protocol's `Checkpoints`:
//! - a call that names its files (edit, write, apply_patch) has each file
//!   read and its bytes put in the archive, with a `checkpoints` row
//!   (`pre`, or `created` when it did not exist), before the tool runs;
//! - any other call that can write (bash, an MCP tool) is bracketed by two
//!   snapshots of each workspace root in a private git repository
//!   ([`git::Snapshots`]); every file that differs has its earlier bytes
//!   put in the archive with a row (`pre`, `created` or `deleted`), modes
//!   and symlinks included;
//! - after the call, each row gets the file's state (`post`, a SHA-256),
//!   and a row whose file is as it was is removed;
//! - a rewind to turn N finds, for each file a row of turn N or later
//!   names, its earliest row (what the file was before turn N) and its
//!   latest (what cox last left there); a file whose bytes now differ from
//!   that is a conflict. Unforced, a conflict stops the rewind before
//!   anything is written; otherwise each file's present state is
//!   checkpointed under the rewind's own turn and the earliest pre-image
//!   written back, so a rewind can itself be undone.
//!
//! A shell call's tree before it is also noted in a file until the call
//! ends, so a process killed inside the call leaves it behind; the next
//! listing or rewind of that session keeps what the call changed.
//!
//! Invariants: a pre-image over [`KEEP_MAX`] is recorded without bytes
//! (and a rewind says it left that file alone); the user's repository is
//! only ever read (its objects serve as alternates); without git, files the
//! call names are still kept, and only snapshots are missing, said once.

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use cox_protocol::archive::{Archive, ArchiveMeta};
use cox_protocol::checkpoint::{
    CheckpointError, CheckpointFile, Checkpoints, FileChange, RewindReport, Scope, TurnCheckpoint,
};
use cox_protocol::provider::BoxFuture;
use cox_protocol::{CallId, SessionId};
use cox_store::{CheckpointRow, CoxHome, Db, FileArchive};

pub mod git;
mod rewind;
mod watch;

/// The largest pre-image whose bytes are kept: 8 MiB.
pub const KEEP_MAX: u64 = 8 * 1024 * 1024;

/// The `post` of a file that is gone.
const GONE: &str = "-";

const S_IFMT: u32 = 0o170_000;
const S_IFLNK: u32 = 0o120_000;
const S_IFREG: u32 = 0o100_000;
const S_IFDIR: u32 = 0o040_000;

/// The checkpoint store of one workspace.
#[derive(Clone)]
pub struct GitCheckpoints {
    inner: Arc<Inner>,
}

struct Inner {
    db: Db,
    archive: FileArchive,
    /// The private repository of each workspace root; `Err` says why
    /// there are none.
    snapshots: Result<Vec<git::Snapshots>, String>,
    /// What each running call's `before` left for its `after`.
    pending: Mutex<HashMap<CallId, Pending>>,
}

enum Pending {
    /// Rows of named files.
    Files(Vec<FileRow>),
    /// The tree of each root before a pathless call.
    Trees(Vec<git::Oid>),
    /// The snapshot could not be taken.
    Nothing,
}

/// A named file's row, until its call is done.
struct FileRow {
    id: i64,
    path: PathBuf,
    /// It did not exist before the call.
    created: bool,
    /// Its state before (`None` when it did not exist, or was too large to
    /// read).
    before: Option<String>,
}

fn fail(e: impl std::fmt::Display) -> CheckpointError {
    CheckpointError(e.to_string())
}

impl GitCheckpoints {
    /// The store for the workspace of `roots` (the first is the primary
    /// one; each gets a private repository of its own), its rows in `home`'s
    /// `cox.db`, its bytes in `home`'s archive. Without git (or when the
    /// private repository cannot be made), calls that name no file are not
    /// snapshotted, and [`GitCheckpoints::without_snapshots`] says why.
    ///
    /// # Errors
    /// `cox.db` cannot be opened.
    pub fn open(home: &CoxHome, roots: &[PathBuf]) -> Result<Self, CheckpointError> {
        let db = Db::open(&home.db_path()).map_err(fail)?;
        let snapshots = match git::find_git() {
            None => Err("git is not on PATH".to_owned()),
            Some(git) => roots
                .iter()
                .map(|root| git::Snapshots::open(git.clone(), &home.checkpoints_dir(), root))
                .collect(),
        };
        Ok(Self {
            inner: Arc::new(Inner {
                db,
                archive: FileArchive::new(home),
                snapshots,
                pending: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// Why shell commands are not snapshotted, when they are not.
    #[must_use]
    pub fn without_snapshots(&self) -> Option<&str> {
        self.inner.snapshots.as_ref().err().map(String::as_str)
    }

    /// The private repository of the primary root, when there is one.
    #[must_use]
    pub fn repo(&self) -> Option<&Path> {
        let all = self.inner.snapshots.as_ref().ok()?;
        all.first().map(git::Snapshots::repo)
    }

    /// Runs blocking work off the async runtime.
    fn blocking<T, F>(&self, work: F) -> BoxFuture<'static, Result<T, CheckpointError>>
    where
        T: Send + 'static,
        F: FnOnce(&Inner) -> Result<T, CheckpointError> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => handle
                    .spawn_blocking(move || work(&inner))
                    .await
                    .map_err(|e| fail(format!("the checkpoint task failed: {e}")))?,
                Err(_) => work(&inner),
            }
        })
    }
}

impl Checkpoints for GitCheckpoints {
    fn turn_started<'a>(
        &'a self,
        session: SessionId,
        turn: u32,
        prompt: &'a str,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        let prompt = prompt.lines().next().unwrap_or_default().to_owned();
        self.blocking(move |inner| inner.marker(session, turn, &prompt))
    }

    fn before<'a>(
        &'a self,
        session: SessionId,
        turn: u32,
        call: &'a CallId,
        scope: Scope<'a>,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        let call = call.clone();
        let files: Option<Vec<PathBuf>> = match scope {
            Scope::Files(paths) => Some(paths.iter().map(PathBuf::from).collect()),
            Scope::Workspace => None,
        };
        self.blocking(move |inner| {
            let pending = match files {
                Some(paths) => Pending::Files(inner.keep_files(session, turn, &call, &paths)?),
                None => match &inner.snapshots {
                    Ok(all) => {
                        let mut trees = Vec::with_capacity(all.len());
                        for snapshots in all {
                            let tree = snapshots.snapshot().map_err(fail)?;
                            inner.note_open(snapshots, session, turn, &call, &tree)?;
                            trees.push(tree);
                        }
                        Pending::Trees(trees)
                    }
                    Err(why) => {
                        inner.set_pending(&call, Pending::Nothing);
                        return Err(fail(format!("shell commands are not snapshotted: {why}")));
                    }
                },
            };
            inner.set_pending(&call, pending);
            Ok(())
        })
    }

    fn after<'a>(
        &'a self,
        session: SessionId,
        turn: u32,
        call: &'a CallId,
    ) -> BoxFuture<'a, Result<Vec<CheckpointFile>, CheckpointError>> {
        let call = call.clone();
        self.blocking(move |inner| {
            let pending = inner
                .pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&call);
            match pending {
                None | Some(Pending::Nothing) => Ok(Vec::new()),
                Some(Pending::Files(rows)) => inner.finish_files(rows),
                Some(Pending::Trees(trees)) => {
                    let mut kept = Vec::new();
                    let mut failed = None;
                    for (snapshots, before) in inner.all().iter().zip(&trees) {
                        match inner.keep_changes(session, turn, &call, snapshots, before) {
                            Ok(files) => kept.extend(files),
                            Err(err) => failed = Some(err),
                        }
                        Inner::note_closed(snapshots, session, &call);
                    }
                    failed.map_or(Ok(kept), Err)
                }
            }
        })
    }

    fn list(
        &self,
        session: SessionId,
    ) -> BoxFuture<'_, Result<Vec<TurnCheckpoint>, CheckpointError>> {
        self.blocking(move |inner| inner.list(session))
    }

    fn rewind(
        &self,
        session: SessionId,
        to_turn: u32,
        as_turn: u32,
        force: bool,
    ) -> BoxFuture<'_, Result<RewindReport, CheckpointError>> {
        self.blocking(move |inner| inner.rewind(session, to_turn, as_turn, force))
    }
}

impl Inner {
    /// Where the open brackets of shell calls are noted, so a process
    /// killed inside one leaves enough behind to keep its changes later.
    fn open_dir(snapshots: &git::Snapshots) -> PathBuf {
        snapshots.repo().join("cox-open")
    }

    fn open_note(snapshots: &git::Snapshots, session: SessionId, call: &CallId) -> PathBuf {
        let call: String = call
            .to_string()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Self::open_dir(snapshots).join(format!("{session}.{call}"))
    }

    /// Notes the tree a shell call started from, before it runs.
    fn note_open(
        &self,
        snapshots: &git::Snapshots,
        session: SessionId,
        turn: u32,
        call: &CallId,
        tree: &str,
    ) -> Result<(), CheckpointError> {
        let dir = Self::open_dir(snapshots);
        std::fs::create_dir_all(&dir)
            .map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
        let note = Self::open_note(snapshots, session, call);
        std::fs::write(&note, format!("{turn}\n{tree}\n{call}\n"))
            .map_err(|e| fail(format!("cannot write {}: {e}", note.display())))
    }

    fn note_closed(snapshots: &git::Snapshots, session: SessionId, call: &CallId) {
        let _ = std::fs::remove_file(Self::open_note(snapshots, session, call));
    }

    /// Every root's repository; none without git.
    fn all(&self) -> &[git::Snapshots] {
        self.snapshots.as_deref().unwrap_or_default()
    }

    /// Keeps what the shell calls of `session` that never finished (the
    /// process was killed inside them) changed, as of now. Called before a
    /// listing or a rewind, which never overlap a running call.
    fn recover(&self, session: SessionId) -> Result<(), CheckpointError> {
        for snapshots in self.all() {
            self.recover_in(snapshots, session)?;
        }
        Ok(())
    }

    fn recover_in(
        &self,
        snapshots: &git::Snapshots,
        session: SessionId,
    ) -> Result<(), CheckpointError> {
        let Ok(entries) = std::fs::read_dir(Self::open_dir(snapshots)) else {
            return Ok(());
        };
        let prefix = format!("{session}.");
        for entry in entries.flatten() {
            if !entry.file_name().to_string_lossy().starts_with(&prefix) {
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            let mut lines = text.lines();
            if let (Some(turn), Some(tree), Some(call)) = (lines.next(), lines.next(), lines.next())
                && let Ok(turn) = turn.parse()
            {
                self.keep_changes(session, turn, &CallId::from(call), snapshots, tree)?;
            }
            let _ = std::fs::remove_file(entry.path());
        }
        Ok(())
    }

    fn set_pending(&self, call: &CallId, pending: Pending) {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(call.clone(), pending);
    }

    fn row(
        &self,
        session: SessionId,
        turn: u32,
        call: Option<&CallId>,
        kind: &str,
    ) -> CheckpointRow {
        CheckpointRow {
            id: 0,
            session_id: session.to_string(),
            turn,
            call_id: call.map(ToString::to_string),
            kind: kind.to_owned(),
            path: None,
            archive_id: None,
            mode: None,
            kept: true,
            post: None,
            prompt: None,
            created_at: cox_store::clock::now_rfc3339(),
        }
    }

    fn marker(&self, session: SessionId, turn: u32, prompt: &str) -> Result<(), CheckpointError> {
        let mut row = self.row(session, turn, None, "marker");
        row.prompt = Some(prompt.to_owned());
        self.db.insert_checkpoint(&row).map_err(fail)?;
        Ok(())
    }

    fn archive(
        &self,
        session: SessionId,
        call: &CallId,
        bytes: &[u8],
    ) -> Result<String, CheckpointError> {
        self.archive
            .put(
                &ArchiveMeta {
                    session,
                    call: Some(call.clone()),
                },
                bytes,
            )
            .map_err(fail)
    }

    /// Keeps the files a call names, before it runs.
    fn keep_files(
        &self,
        session: SessionId,
        turn: u32,
        call: &CallId,
        paths: &[PathBuf],
    ) -> Result<Vec<FileRow>, CheckpointError> {
        let mut rows: Vec<FileRow> = Vec::new();
        for path in paths {
            if rows.iter().any(|r| &r.path == path) {
                continue;
            }
            let mut row = self.row(session, turn, Some(call), "created");
            row.path = Some(path.display().to_string());
            let mut hash = None;
            match std::fs::symlink_metadata(path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(fail(format!("cannot read {}: {e}", path.display()))),
                Ok(meta) if meta.is_dir() => continue,
                Ok(meta) => {
                    row.kind = "pre".to_owned();
                    row.mode = Some(meta.mode());
                    if meta.len() > KEEP_MAX && !meta.file_type().is_symlink() {
                        row.kept = false;
                    } else {
                        let bytes = read_state(path)
                            .map_err(|e| fail(format!("cannot read {}: {e}", path.display())))?
                            .unwrap_or_default();
                        hash = Some(state_hash(&bytes, meta.file_type().is_symlink()));
                        row.archive_id = Some(self.archive(session, call, &bytes)?);
                    }
                }
            }
            let id = self.db.insert_checkpoint(&row).map_err(fail)?;
            rows.push(FileRow {
                id,
                path: path.clone(),
                created: row.kind == "created",
                before: hash,
            });
        }
        Ok(rows)
    }

    /// Finishes the rows of named files: their state after, or no row when
    /// the file is as it was.
    fn finish_files(&self, rows: Vec<FileRow>) -> Result<Vec<CheckpointFile>, CheckpointError> {
        let mut files = Vec::new();
        for row in rows {
            let now = current_hash(&row.path);
            let unchanged = match (&row.before, &now) {
                (Some(before), Some(now)) => before == now,
                (None, None) => row.created,
                _ => false,
            };
            if unchanged {
                self.db.drop_checkpoint(row.id).map_err(fail)?;
                continue;
            }
            self.db
                .finish_checkpoint(row.id, now.as_deref().unwrap_or(GONE))
                .map_err(fail)?;
            let change = match (&now, row.created) {
                (None, _) => FileChange::Deleted,
                (Some(_), true) => FileChange::Created,
                (Some(_), false) => FileChange::Pre,
            };
            files.push(CheckpointFile {
                path: row.path.display().to_string(),
                change,
            });
        }
        Ok(files)
    }

    /// After a pathless call: snapshot again and keep what changed.
    fn keep_changes(
        &self,
        session: SessionId,
        turn: u32,
        call: &CallId,
        snapshots: &git::Snapshots,
        before: &str,
    ) -> Result<Vec<CheckpointFile>, CheckpointError> {
        let changes = snapshots.changes_since(before).map_err(fail)?;
        if changes.is_empty() {
            return Ok(Vec::new());
        }
        let olds: Vec<&str> = changes
            .iter()
            .filter_map(|c| c.before.as_ref().map(|(_, oid)| oid.as_str()))
            .filter(|oid| !oid.is_empty())
            .collect();
        let blobs = snapshots.small_blobs(&olds, KEEP_MAX).map_err(fail)?;
        let mut files = Vec::new();
        for change in changes {
            let dir = change
                .before
                .as_ref()
                .map(|(mode, _)| *mode)
                .or(change.after)
                .is_some_and(|mode| mode & S_IFMT == S_IFDIR);
            let path = snapshots.root().join(&change.path);
            let mut shown = path.display().to_string();
            if dir {
                // A folder's row names it with a slash; it has no bytes.
                shown.push('/');
            }
            let mut row = self.row(session, turn, Some(call), "created");
            row.path = Some(shown.clone());
            let kind = match (&change.before, change.after) {
                (None, _) => FileChange::Created,
                (Some(_), None) => FileChange::Deleted,
                (Some(_), Some(_)) => FileChange::Pre,
            };
            row.kind = kind.as_str().to_owned();
            if let Some((mode, oid)) = &change.before {
                row.mode = Some(*mode);
                if !dir {
                    match blobs.get(oid) {
                        Some(bytes) => row.archive_id = Some(self.archive(session, call, bytes)?),
                        None => row.kept = false,
                    }
                }
            }
            row.post = Some(current_hash(&path).unwrap_or_else(|| GONE.to_owned()));
            self.db.insert_checkpoint(&row).map_err(fail)?;
            files.push(CheckpointFile {
                path: shown,
                change: kind,
            });
        }
        Ok(files)
    }

    fn list(&self, session: SessionId) -> Result<Vec<TurnCheckpoint>, CheckpointError> {
        self.recover(session)?;
        let rows = self.db.checkpoints_of(&session.to_string()).map_err(fail)?;
        let mut turns: BTreeMap<u32, TurnCheckpoint> = BTreeMap::new();
        for row in rows {
            let entry = turns.entry(row.turn).or_insert_with(|| TurnCheckpoint {
                turn: row.turn,
                prompt: String::new(),
                files: Vec::new(),
                unkept: Vec::new(),
            });
            match (row.kind.as_str(), row.path) {
                ("marker", _) => entry.prompt = row.prompt.unwrap_or_default(),
                (_, Some(path)) => {
                    if !row.kept && !entry.unkept.contains(&path) {
                        entry.unkept.push(path.clone());
                    }
                    if !entry.files.contains(&path) {
                        entry.files.push(path);
                    }
                }
                _ => {}
            }
        }
        Ok(turns.into_values().rev().collect())
    }
}

/// A file's bytes as a pre-image keeps them: a symlink's target, a file's
/// contents; `None` when it does not exist.
fn read_state(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
        Ok(meta) if meta.file_type().is_symlink() => Ok(Some(
            std::fs::read_link(path)?
                .as_os_str()
                .as_encoded_bytes()
                .to_vec(),
        )),
        Ok(meta) if meta.is_dir() => Ok(None),
        Ok(_) => std::fs::read(path).map(Some),
    }
}

/// What a file is now, as `post` records it: `None` when it is gone (or a
/// folder). A file is read in pieces, so a large one never sits in memory
/// whole; the hash is the same [`state_hash`] gives its bytes.
fn current_hash(path: &Path) -> Option<String> {
    use sha2::Digest;
    use std::io::Read;
    let meta = std::fs::symlink_metadata(path).ok()?;
    if meta.file_type().is_symlink() || meta.is_dir() {
        let bytes = read_state(path).ok()??;
        return Some(state_hash(&bytes, meta.file_type().is_symlink()));
    }
    let mut file = std::fs::File::open(path).ok()?;
    let mut hasher = sha2::Sha256::new();
    hasher.update(b"f");
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(hex(&hasher.finalize()))
}

fn state_hash(bytes: &[u8], symlink: bool) -> String {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    hasher.update(if symlink { b"l" } else { b"f" });
    hasher.update(bytes);
    hex(&hasher.finalize())
}

/// Lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_read_in_pieces_hashes_as_its_bytes_do() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(current_hash(&path), Some(state_hash(&bytes, false)));
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("big", &link).unwrap();
        assert_eq!(current_hash(&link), Some(state_hash(b"big", true)));
        assert_ne!(current_hash(&link), current_hash(&path));
        assert_eq!(current_hash(dir.path()), None);
        assert_eq!(current_hash(&dir.path().join("gone")), None);
    }
}
