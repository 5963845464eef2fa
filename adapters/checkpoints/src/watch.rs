//! Which paths of a workspace root changed since the last look, from the
//! kernel (inotify), so a warm snapshot looks only at those instead of
//! stating every file.
//!
//! Every folder of the root is watched except the user's `.git`, nested
//! repositories and the folders git ignores (`target/`); a folder that
//! appears is watched as soon as it is seen, and its own path is reported,
//! so whatever was written inside it before its watch existed is still
//! looked at. A folder moved away has its watches dropped (their paths
//! would be wrong); the place it moved to is a new folder.
//!
//! Invariants: whenever the watcher cannot vouch for what it reports (the
//! kernel's queue overflowed, the root itself moved, a `.gitignore`
//! changed, a watch could not be added), [`Drained::Everything`] says so and
//! the caller looks at every file, as it would with no watcher at all. Only
//! local filesystems whose every change inotify sees are watched.

#![allow(unsafe_code)] // inotify has no safe wrapper in std

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

/// The most folders one root may have watched; past it, a root is
/// snapshotted by looking at every file (a watch costs the kernel about a
/// kilobyte, and the per-user limit is shared with editors).
pub const MAX_WATCHED: usize = 16_384;

const MASK: u32 = libc::IN_MODIFY
    | libc::IN_ATTRIB
    | libc::IN_CLOSE_WRITE
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF
    | libc::IN_ONLYDIR
    | libc::IN_DONT_FOLLOW
    | libc::IN_EXCL_UNLINK;

/// What happened under a root since the last drain.
#[derive(Debug, PartialEq, Eq)]
pub enum Drained {
    /// Nothing.
    Quiet,
    /// These paths (relative, `/` separated) may have changed.
    Paths(Changed),
    /// The watcher cannot say; look at everything. The reason is for logs.
    Everything(String),
}

/// The paths one drain reports.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changed {
    /// Every path an event named.
    pub paths: BTreeSet<String>,
    /// Paths that were created in this drain's window and are gone again:
    /// never seen by a snapshot, so nothing to look at.
    pub transient: BTreeSet<String>,
    /// Folders that appeared (created or moved in), not yet watched.
    pub new_dirs: Vec<String>,
    /// Watched folders that were removed or moved away, with the mode
    /// they had.
    pub gone_dirs: Vec<(String, u32)>,
}

struct Watched {
    path: String,
    mode: u32,
}

/// The inotify watches of one root.
pub struct Watcher {
    file: File,
    root: PathBuf,
    by_wd: HashMap<i32, Watched>,
    by_path: HashMap<String, i32>,
    buffer: Vec<u8>,
}

/// Whether inotify sees every change on the filesystem holding `root`.
fn local_filesystem(root: &Path) -> Result<(), String> {
    const EXT4: i64 = 0xEF53;
    const XFS: i64 = 0x5846_5342;
    const BTRFS: i64 = 0x9123_683E;
    const TMPFS: i64 = 0x0102_1994;
    const OVERLAY: i64 = 0x794C_7630;
    const F2FS: i64 = 0xF2F5_2010;
    const ZFS: i64 = 0x2FC1_2FC1;
    let path = std::ffi::CString::new(root.as_os_str().as_bytes())
        .map_err(|_| "the root's path holds a NUL byte".to_owned())?;
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a valid C string and `stat` a writable statfs.
    let rc = unsafe { libc::statfs(path.as_ptr(), &raw mut stat) };
    if rc != 0 {
        return Err(format!("statfs: {}", std::io::Error::last_os_error()));
    }
    #[allow(clippy::unnecessary_cast, clippy::cast_lossless)]
    let kind = stat.f_type as i64;
    if [EXT4, XFS, BTRFS, TMPFS, OVERLAY, F2FS, ZFS].contains(&kind) {
        Ok(())
    } else {
        Err(format!("filesystem type {kind:#x} is not watched"))
    }
}

impl Watcher {
    /// Watches every folder of `root` but `.git`, nested repositories and
    /// `ignored` (relative paths of folders git ignores).
    ///
    /// # Errors
    /// inotify is unavailable, the filesystem is not a local one it sees
    /// every change of, a watch could not be added (the user's limit), or
    /// the root has more than [`MAX_WATCHED`] folders.
    pub fn start(root: &Path, ignored: &HashSet<String>) -> Result<Self, String> {
        local_filesystem(root)?;
        // SAFETY: plain system call; the result is checked.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return Err(format!("inotify: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: `fd` is a fresh descriptor that nothing else owns.
        let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let mut watcher = Watcher {
            file,
            root: root.to_path_buf(),
            by_wd: HashMap::new(),
            by_path: HashMap::new(),
            buffer: vec![0; 64 * 1024],
        };
        watcher.watch_tree("", ignored)?;
        Ok(watcher)
    }

    /// How many folders are watched.
    #[must_use]
    pub fn watched(&self) -> usize {
        self.by_wd.len()
    }

    fn absolute(&self, rel: &str) -> PathBuf {
        if rel.is_empty() {
            self.root.clone()
        } else {
            self.root.join(rel)
        }
    }

    /// Watches the folder `rel` and every folder below it that is not
    /// ignored (`ignored` holds relative paths).
    ///
    /// # Errors
    /// A watch could not be added, or there would be too many.
    pub fn watch_tree(&mut self, rel: &str, ignored: &HashSet<String>) -> Result<(), String> {
        let mut stack = vec![rel.to_owned()];
        while let Some(dir) = stack.pop() {
            if ignored.contains(&dir) {
                continue;
            }
            let path = self.absolute(&dir);
            let Ok(entries) = std::fs::read_dir(&path) else {
                // Gone already, or unreadable: its parent's events name it.
                continue;
            };
            let mut children = Vec::new();
            let mut nested_repo = false;
            for entry in entries.flatten() {
                let name = entry.file_name();
                if name == ".git" {
                    nested_repo = !dir.is_empty();
                    continue;
                }
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    let name = name.to_string_lossy();
                    children.push(if dir.is_empty() {
                        name.into_owned()
                    } else {
                        format!("{dir}/{name}")
                    });
                }
            }
            if nested_repo {
                // git keeps a nested repository as a single entry.
                continue;
            }
            self.add_watch(&dir)?;
            stack.extend(children);
        }
        Ok(())
    }

    fn add_watch(&mut self, rel: &str) -> Result<(), String> {
        if self.by_wd.len() >= MAX_WATCHED {
            return Err(format!("more than {MAX_WATCHED} folders"));
        }
        let path = self.absolute(rel);
        let c_path = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| format!("{} holds a NUL byte", path.display()))?;
        // SAFETY: the descriptor is ours and `c_path` a valid C string.
        let wd = unsafe { libc::inotify_add_watch(self.file.as_raw_fd(), c_path.as_ptr(), MASK) };
        if wd < 0 {
            let err = std::io::Error::last_os_error();
            return match err.raw_os_error() {
                // Removed or replaced by a file meanwhile: its parent's
                // events name it.
                Some(libc::ENOENT | libc::ENOTDIR) => Ok(()),
                _ => Err(format!("cannot watch {}: {err}", path.display())),
            };
        }
        let mode = std::fs::symlink_metadata(&path).map_or(0o040_755, |m| {
            use std::os::unix::fs::MetadataExt;
            m.mode()
        });
        if let Some(old) = self.by_path.insert(rel.to_owned(), wd)
            && old != wd
        {
            self.by_wd.remove(&old);
        }
        self.by_wd.insert(
            wd,
            Watched {
                path: rel.to_owned(),
                mode,
            },
        );
        Ok(())
    }

    /// Drops the watches of `rel` and every folder below it.
    fn unwatch_tree(&mut self, rel: &str) {
        let prefix = format!("{rel}/");
        let doomed: Vec<String> = self
            .by_path
            .keys()
            .filter(|p| *p == rel || p.starts_with(&prefix))
            .cloned()
            .collect();
        for path in doomed {
            if let Some(wd) = self.by_path.remove(&path) {
                self.by_wd.remove(&wd);
                // SAFETY: the descriptor is ours; a stale `wd` only fails.
                unsafe { libc::inotify_rm_watch(self.file.as_raw_fd(), wd) };
            }
        }
    }

    /// Whether `rel` is a watched folder, and its mode.
    fn watched_mode(&self, rel: &str) -> Option<u32> {
        let wd = self.by_path.get(rel)?;
        self.by_wd.get(wd).map(|w| w.mode)
    }

    /// Everything the kernel queued since the last drain.
    pub fn drain(&mut self) -> Drained {
        let mut changed = Changed::default();
        // The first event of each path in this window: a path whose first
        // event is its creation did not exist at the last drain.
        let mut first_created: HashMap<String, bool> = HashMap::new();
        let mut everything = None;
        // Folders whose watch the kernel dropped in this window (it may
        // say so before the parent says they were removed).
        let mut forgotten: HashMap<String, u32> = HashMap::new();
        loop {
            let n = match self.file.read(&mut self.buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Drained::Everything(format!("reading inotify: {e}")),
            };
            let mut at = 0;
            while at + 16 <= n {
                let field = |i: usize| {
                    let mut word = [0u8; 4];
                    word.copy_from_slice(&self.buffer[at + i..at + i + 4]);
                    word
                };
                let wd = i32::from_ne_bytes(field(0));
                let mask = u32::from_ne_bytes(field(4));
                let len = u32::from_ne_bytes(field(12)) as usize;
                let name_bytes = &self.buffer[at + 16..(at + 16 + len).min(n)];
                let name_end = name_bytes.iter().position(|b| *b == 0).unwrap_or(len);
                let name = String::from_utf8_lossy(&name_bytes[..name_end]).into_owned();
                at += 16 + len;
                if mask & libc::IN_Q_OVERFLOW != 0 {
                    everything = Some("the kernel's event queue overflowed".to_owned());
                    continue;
                }
                let Some(dir) = self.by_wd.get(&wd).map(|w| w.path.clone()) else {
                    continue;
                };
                if mask & libc::IN_IGNORED != 0 {
                    if let Some(w) = self.by_wd.remove(&wd)
                        && self.by_path.get(&w.path) == Some(&wd)
                    {
                        self.by_path.remove(&w.path);
                        forgotten.insert(w.path, w.mode);
                    }
                    continue;
                }
                if name.is_empty() {
                    // An event of the watched folder itself.
                    if mask & (libc::IN_DELETE_SELF | libc::IN_MOVE_SELF) != 0 && dir.is_empty() {
                        everything = Some("the workspace root itself moved".to_owned());
                    }
                    continue;
                }
                let path = if dir.is_empty() {
                    name.clone()
                } else {
                    format!("{dir}/{name}")
                };
                if name == ".gitignore" {
                    everything = Some(format!("{path} changed"));
                }
                let creation = mask & (libc::IN_CREATE | libc::IN_MOVED_TO) != 0;
                first_created.entry(path.clone()).or_insert(creation);
                if mask & libc::IN_ISDIR != 0 {
                    if creation {
                        changed.new_dirs.push(path.clone());
                    } else if mask & (libc::IN_DELETE | libc::IN_MOVED_FROM) != 0 {
                        if let Some(mode) = self
                            .watched_mode(&path)
                            .or_else(|| forgotten.get(&path).copied())
                        {
                            changed.gone_dirs.push((path.clone(), mode));
                        }
                        // A folder moved away keeps its watches, under
                        // paths that are no longer true.
                        self.unwatch_tree(&path);
                    }
                }
                changed.paths.insert(path);
            }
        }
        if let Some(why) = everything {
            return Drained::Everything(why);
        }
        if changed.paths.is_empty() {
            return Drained::Quiet;
        }
        for (path, created) in first_created {
            if created && std::fs::symlink_metadata(self.absolute(&path)).is_err() {
                changed.transient.insert(path);
            }
        }
        Drained::Paths(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drained(watcher: &mut Watcher) -> Changed {
        match watcher.drain() {
            Drained::Paths(changed) => changed,
            other => panic!("expected paths, got {other:?}"),
        }
    }

    #[test]
    fn writes_creations_removals_and_moves_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/empty")).unwrap();
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::fs::write(root.join("src/a.rs"), "a").unwrap();
        let ignored = HashSet::from(["target".to_owned()]);
        let mut watcher = Watcher::start(root, &ignored).unwrap();
        assert_eq!(watcher.watched(), 3, "root, src, src/empty");
        assert_eq!(watcher.drain(), Drained::Quiet);

        std::fs::write(root.join("src/a.rs"), "b").unwrap();
        std::fs::write(root.join("target/debug/out"), "ignored").unwrap();
        let changed = drained(&mut watcher);
        assert_eq!(changed.paths, BTreeSet::from(["src/a.rs".to_owned()]));

        std::fs::write(root.join("tmp"), "t").unwrap();
        std::fs::remove_file(root.join("tmp")).unwrap();
        std::fs::remove_dir(root.join("src/empty")).unwrap();
        let changed = drained(&mut watcher);
        assert!(changed.transient.contains("tmp"));
        assert_eq!(changed.gone_dirs.len(), 1);
        assert_eq!(changed.gone_dirs[0].0, "src/empty");

        std::fs::rename(root.join("src"), root.join("lib")).unwrap();
        let changed = drained(&mut watcher);
        assert!(changed.paths.contains("src") && changed.paths.contains("lib"));
        assert_eq!(changed.new_dirs, vec!["lib".to_owned()]);
        // The moved folder's old watch is gone: a write in it is not
        // reported under its old name.
        watcher.watch_tree("lib", &ignored).unwrap();
        std::fs::write(root.join("lib/a.rs"), "c").unwrap();
        let changed = drained(&mut watcher);
        assert_eq!(changed.paths, BTreeSet::from(["lib/a.rs".to_owned()]));

        std::fs::write(root.join(".gitignore"), "x\n").unwrap();
        assert!(matches!(watcher.drain(), Drained::Everything(_)));
    }

    #[test]
    fn a_nested_repository_is_not_watched() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git/objects")).unwrap();
        std::fs::create_dir_all(dir.path().join("vendor/dep/.git")).unwrap();
        std::fs::create_dir_all(dir.path().join("vendor/dep/src")).unwrap();
        let watcher = Watcher::start(dir.path(), &HashSet::new()).unwrap();
        assert_eq!(watcher.watched(), 2, "the root and vendor");
    }
}
