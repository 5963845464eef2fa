//! The rewind: each file a turn from `to_turn` on changed is written back
//! as its earliest pre-image says, after the conflict check and a check
//! that every file can be written, so a rewind that cannot finish writes
//! nothing; every write is checkpointed under the rewind's own turn.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use cox_protocol::Archive as _;
use cox_protocol::checkpoint::{CheckpointError, CheckpointFile, FileChange, RewindReport};
use cox_protocol::{CallId, SessionId};
use cox_store::CheckpointRow;

use crate::{GONE, Inner, S_IFLNK, S_IFMT, S_IFREG, current_hash, fail};

impl Inner {
    pub(crate) fn rewind(
        &self,
        session: SessionId,
        to_turn: u32,
        as_turn: u32,
        force: bool,
    ) -> Result<RewindReport, CheckpointError> {
        self.recover(session)?;
        let rows = self.db.checkpoints_of(&session.to_string()).map_err(fail)?;
        // Per file: its earliest row from `to_turn` on, and its latest.
        let mut files: BTreeMap<String, (CheckpointRow, Option<String>)> = BTreeMap::new();
        for row in rows {
            if row.kind == "marker" || row.turn < to_turn {
                continue;
            }
            let Some(path) = row.path.clone() else {
                continue;
            };
            let post = row.post.clone();
            files
                .entry(path)
                .and_modify(|(_, last)| *last = post.clone())
                .or_insert((row, post));
        }
        let mut report = RewindReport::default();
        for (path, (_, last)) in &files {
            if let Some(expected) = last {
                let now = current_hash(Path::new(path)).unwrap_or_else(|| GONE.to_owned());
                if &now != expected {
                    report.conflicts.push(path.clone());
                }
            }
        }
        if !report.conflicts.is_empty() && !force {
            return Ok(report);
        }
        // A file (or folder) that cannot be written back stops the rewind
        // before anything is written, as a conflict does.
        for (path, (first, _)) in &files {
            if first.kept
                && let Some(blocked) = unwritable(Path::new(path.trim_end_matches('/')))
            {
                return Err(fail(format!(
                    "cannot rewind: {blocked} cannot be written (read-only?); nothing was restored"
                )));
            }
        }
        self.marker(
            session,
            as_turn,
            &format!("rewind to before turn {to_turn}"),
        )?;
        let call = CallId::from(format!("rewind-{as_turn}"));
        let mut made_dirs = Vec::new();
        for (path, (first, _)) in files {
            if let Some(dir) = path.strip_suffix('/') {
                // A folder: made again when it was removed (its files come
                // back on their own), emptied of folders when it was made.
                match first.kind.as_str() {
                    "deleted" => self.restore_dir(session, as_turn, &call, dir, first.mode)?,
                    _ => made_dirs.push(dir.to_owned()),
                }
                let change = if first.kind == "deleted" {
                    FileChange::Deleted
                } else {
                    FileChange::Created
                };
                report.restored.push(CheckpointFile { path, change });
                continue;
            }
            if !first.kept {
                report.unkept.push(path);
                continue;
            }
            let target = PathBuf::from(&path);
            let bytes = match &first.archive_id {
                Some(id) => Some(self.archive.get(id).map_err(fail)?),
                None => None,
            };
            let kept = self.keep_files(session, as_turn, &call, std::slice::from_ref(&target))?;
            restore(&target, first.mode, bytes.as_deref())
                .map_err(|e| fail(format!("cannot restore {path}: {e}")))?;
            self.finish_files(kept)?;
            let change = match first.kind.as_str() {
                "created" => FileChange::Created,
                "deleted" => FileChange::Deleted,
                _ => FileChange::Pre,
            };
            report.restored.push(CheckpointFile { path, change });
        }
        // Deepest first, once the files in them are gone.
        made_dirs.sort_by(|a, b| b.cmp(a));
        for dir in made_dirs {
            self.remove_empty_dirs(session, as_turn, &call, Path::new(&dir))?;
        }
        Ok(report)
    }

    /// Makes a folder a rewind restores, with its mode, and records it
    /// under the rewind's turn (as made, so the rewind can be undone).
    fn restore_dir(
        &self,
        session: SessionId,
        turn: u32,
        call: &CallId,
        dir: &str,
        mode: Option<u32>,
    ) -> Result<(), CheckpointError> {
        let path = Path::new(dir);
        if path.is_dir() {
            return Ok(());
        }
        std::fs::create_dir_all(path).map_err(|e| fail(format!("cannot make {dir}: {e}")))?;
        if let Some(mode) = mode {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & 0o7777))
                .map_err(|e| fail(format!("cannot set the mode of {dir}: {e}")))?;
        }
        let mut row = self.row(session, turn, Some(call), "created");
        row.path = Some(format!("{dir}/"));
        row.post = Some(GONE.to_owned());
        self.db.insert_checkpoint(&row).map_err(fail)?;
        Ok(())
    }

    /// Removes a folder a rewind undoes the making of, and the folders in
    /// it, as far as they are empty: a file in them (the user's, made
    /// since) keeps its folder. Each removed folder is recorded under the
    /// rewind's turn.
    fn remove_empty_dirs(
        &self,
        session: SessionId,
        turn: u32,
        call: &CallId,
        dir: &Path,
    ) -> Result<bool, CheckpointError> {
        let Ok(meta) = std::fs::symlink_metadata(dir) else {
            return Ok(true);
        };
        if !meta.is_dir() {
            return Ok(false);
        }
        let mut empty = true;
        let entries = std::fs::read_dir(dir)
            .map_err(|e| fail(format!("cannot read {}: {e}", dir.display())))?;
        for entry in entries.flatten() {
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if !is_dir || !self.remove_empty_dirs(session, turn, call, &entry.path())? {
                empty = false;
            }
        }
        if !empty || std::fs::remove_dir(dir).is_err() {
            return Ok(false);
        }
        let mut row = self.row(session, turn, Some(call), "deleted");
        row.path = Some(format!("{}/", dir.display()));
        row.mode = Some(meta.mode());
        row.post = Some(GONE.to_owned());
        self.db.insert_checkpoint(&row).map_err(fail)?;
        Ok(true)
    }
}

/// The path that stops `path` from being written back (replaced, made or
/// removed): the file itself when it is read-only or immutable, else the
/// nearest folder above it that exists, when that one is.
fn unwritable(path: &Path) -> Option<String> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_symlink())
        && !may_write(path)
    {
        return Some(path.display().to_string());
    }
    let mut dir = path.parent();
    while let Some(parent) = dir {
        if std::fs::symlink_metadata(parent).is_ok() {
            return (!may_write(parent)).then(|| parent.display().to_string());
        }
        dir = parent.parent();
    }
    None
}

/// Whether this process may write `path`: `access(2)`, which also says no
/// to root for an immutable file.
#[allow(unsafe_code)]
fn may_write(path: &Path) -> bool {
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c_path` is a valid C string; access only reads it.
    unsafe { libc::access(c_path.as_ptr(), libc::W_OK) == 0 }
}

/// Puts `path` back as a pre-image says: absent (`bytes` is `None`), a
/// symlink, or a file with its mode.
fn restore(path: &Path, mode: Option<u32>, bytes: Option<&[u8]>) -> std::io::Result<()> {
    let Some(bytes) = bytes else {
        return match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => Ok(()),
            Ok(_) => std::fs::remove_file(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        };
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mode = mode.unwrap_or(S_IFREG | 0o644);
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && (meta.file_type().is_symlink() || mode & S_IFMT == S_IFLNK)
    {
        std::fs::remove_file(path)?;
    }
    if mode & S_IFMT == S_IFLNK {
        let target = std::ffi::OsStr::from_bytes(bytes);
        return std::os::unix::fs::symlink(target, path);
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = path.with_file_name(format!(".{name}.cox-rewind"));
    std::fs::write(&temp, bytes)?;
    std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(mode & 0o7777))?;
    std::fs::rename(&temp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}
