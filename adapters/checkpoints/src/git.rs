//! Snapshots of a workspace in a private git repository.
//!
//! The repository is bare and lives under `$COX_HOME/checkpoints/<hash of
//! the root>`; every command runs with `GIT_DIR` and `GIT_INDEX_FILE`
//! pointing there and `GIT_WORK_TREE` at the workspace root, so the user's
//! `.git` (index, config, refs, hooks) is never opened for writing. A
//! snapshot is `git add -A` and `git write-tree`: the private index is the
//! stat cache, so a full snapshot stats each file once and hashes only what
//! changed. When the workspace is a git repository, its object folder is an
//! alternate, so blobs it already holds are not copied; `.gitignore` keeps
//! ignored files (`target/`) out as it does for the user.
//!
//! Past the first snapshot, a [`Watcher`] says which paths changed since
//! the last one: nothing (the last tree is the tree; no git runs), a few
//! paths (`git add` and `git rm --cached` of those alone), or that it
//! cannot say (a full snapshot, and the watcher starts over). Only the
//! watcher sees folders come and go, so only it reports them: git keeps
//! no empty folder.
//!
//! Invariants: no variable of the caller's git environment reaches a
//! command (a `GIT_DIR` of the user's cannot redirect it); hooks, fsmonitor
//! and line-ending conversion are off, so the bytes kept are the bytes on
//! disk; every failure is one line naming the command and what git said.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};

use crate::watch::{Changed, Drained, Watcher};

/// A git object id, as git prints it.
pub type Oid = String;

/// One file a diff between two snapshots names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// Relative to the root, as git spells it (`/` separated).
    pub path: String,
    /// Mode and blob before; `None` when the file did not exist.
    pub before: Option<(u32, Oid)>,
    /// Mode after; `None` when the file is gone.
    pub after: Option<u32>,
}

/// How long a command waits for another session's git to release the
/// private index.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// How old an `index.lock` must be to be taken for one a killed git left.
const LOCK_STALE: std::time::Duration = std::time::Duration::from_secs(600);

/// The mode git gives a folder.
pub const DIR_MODE: u32 = 0o040_000;

/// One look at a root: its tree, and the folders that came or went since
/// the last look (as [`Change`]s whose mode is a folder's, blob empty).
#[derive(Clone, Debug, Default)]
pub struct Look {
    pub tree: Oid,
    pub dirs: Vec<Change>,
}

/// The private repository of one workspace root.
#[derive(Clone)]
pub struct Snapshots {
    git: PathBuf,
    repo: PathBuf,
    root: PathBuf,
    alternates: Option<PathBuf>,
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    /// `None` before the first look; `Err` says why there is no watcher
    /// (every look is then a full one).
    watcher: Option<Result<Watcher, String>>,
    /// The tree the private index holds, while the watcher has seen
    /// nothing change since it was written.
    tree: Option<Oid>,
}

/// Where `git` is on `PATH`, if it is.
#[must_use]
pub fn find_git() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("git"))
        .find(|candidate| candidate.is_file())
}

impl Snapshots {
    /// The repository for `root` under `dir`, created when missing.
    ///
    /// # Errors
    /// It cannot be created, or `git init` failed.
    pub fn open(git: PathBuf, dir: &Path, root: &Path) -> Result<Self, String> {
        let repo = dir.join(root_key(root));
        let snapshots = Snapshots {
            git,
            alternates: user_objects(root),
            repo,
            root: root.to_path_buf(),
            state: Arc::default(),
        };
        if !snapshots.repo.join("HEAD").is_file() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let out = Command::new(&snapshots.git)
                .args(["init", "--bare", "--quiet"])
                .arg(&snapshots.repo)
                .env_clear()
                .envs(kept_env())
                .output()
                .map_err(|e| format!("cannot run git init: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "git init {} failed: {}",
                    snapshots.repo.display(),
                    one_line(&out.stderr)
                ));
            }
        }
        Ok(snapshots)
    }

    /// The repository's folder.
    #[must_use]
    pub fn repo(&self) -> &Path {
        &self.repo
    }

    /// The workspace root it snapshots.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.git);
        cmd.env_clear()
            .envs(kept_env())
            .env("GIT_DIR", &self.repo)
            .env("GIT_WORK_TREE", &self.root)
            .env("GIT_INDEX_FILE", self.repo.join("index"))
            .current_dir(&self.root)
            .args([
                "-c",
                "core.autocrlf=false",
                "-c",
                "core.safecrlf=false",
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "core.quotepath=false",
                "-c",
                "core.symlinks=true",
                "-c",
                "core.filemode=true",
                "-c",
                "safe.directory=*",
                "-c",
                "gc.auto=0",
                // The private repository is a cache: the pre-images that
                // count are copied into cox's archive, so its writes need
                // not wait for the disk.
                "-c",
                "core.fsync=none",
                // Nor need its index carry a checksum: no hash of the whole
                // index on each write, none to check on each read.
                "-c",
                "index.skipHash=true",
                "-c",
                "core.bare=false",
            ]);
        if let Some(objects) = &self.alternates {
            cmd.env("GIT_ALTERNATE_OBJECT_DIRECTORIES", objects);
        }
        cmd
    }

    fn run(&self, args: &[&str]) -> Result<Vec<u8>, String> {
        let out = self.run_with_input(args, &[])?;
        self.checked(args[0], out)
    }

    /// A finished command's output, or one line naming it and what git
    /// said.
    fn checked(&self, name: &str, out: std::process::Output) -> Result<Vec<u8>, String> {
        if out.status.success() {
            Ok(out.stdout)
        } else {
            Err(format!(
                "git {name} in {} failed: {}",
                self.repo.display(),
                one_line(&out.stderr)
            ))
        }
    }

    /// The workspace as it is now: the id of its tree.
    ///
    /// # Errors
    /// git failed (a corrupt repository, a full disk).
    pub fn snapshot(&self) -> Result<Oid, String> {
        self.look().map(|look| look.tree)
    }

    /// Whether a watcher tells this root's snapshots what changed, or why
    /// not (`None` before the first snapshot).
    #[must_use]
    pub fn watching(&self) -> Option<Result<usize, String>> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match state.watcher.as_ref()? {
            Ok(watcher) => Some(Ok(watcher.watched())),
            Err(why) => Some(Err(why.clone())),
        }
    }

    /// Looks at the workspace: what the watcher saw, or everything.
    fn look(&self) -> Result<Look, String> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let drained = match &mut state.watcher {
            None => Drained::Everything("the first snapshot".to_owned()),
            Some(Err(why)) => Drained::Everything(why.clone()),
            Some(Ok(watcher)) => watcher.drain(),
        };
        let dirs = match drained {
            Drained::Quiet => {
                if let Some(tree) = &state.tree {
                    return Ok(Look {
                        tree: tree.clone(),
                        dirs: Vec::new(),
                    });
                }
                Vec::new()
            }
            Drained::Paths(changed) => {
                let Some(Ok(watcher)) = &mut state.watcher else {
                    return Err("the watcher went away".to_owned());
                };
                match self.add_changed(watcher, &changed) {
                    Ok(dirs) => dirs,
                    Err(_) => {
                        // Whatever went wrong (a path in a nested
                        // repository, too many folders), a full look is
                        // right, and a watcher that starts over.
                        state.watcher = Some(self.start_watcher());
                        self.add()?;
                        Vec::new()
                    }
                }
            }
            Drained::Everything(_) => {
                // Watch first, so what changes during the full look is
                // seen by the next one.
                if !matches!(&state.watcher, Some(Err(_))) {
                    state.watcher = Some(self.start_watcher());
                }
                self.add()?;
                Vec::new()
            }
        };
        state.tree = None;
        let tree = self.run(&["write-tree"])?;
        let tree = String::from_utf8_lossy(&tree).trim().to_owned();
        state.tree = Some(tree.clone());
        Ok(Look { tree, dirs })
    }

    /// A watcher over every folder git does not ignore.
    fn start_watcher(&self) -> Result<Watcher, String> {
        let out = self.run(&[
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
        ])?;
        let ignored: HashSet<String> = out
            .split(|b| *b == 0)
            .filter_map(|entry| entry.strip_suffix(b"/"))
            .map(|dir| String::from_utf8_lossy(dir).into_owned())
            .collect();
        Watcher::start(&self.root, &ignored)
    }

    /// Takes what the watcher saw into the private index: new folders are
    /// watched first (those git ignores are not), then paths that are gone
    /// leave the index and the others are added. Returns the folders that
    /// came and went.
    fn add_changed(&self, watcher: &mut Watcher, changed: &Changed) -> Result<Vec<Change>, String> {
        let exists = |rel: &str| std::fs::symlink_metadata(self.root.join(rel)).ok();
        let mut dirs = Vec::new();
        let new_dirs: Vec<&String> = changed
            .new_dirs
            .iter()
            .filter(|d| exists(d).is_some_and(|m| m.is_dir()))
            .collect();
        if !new_dirs.is_empty() {
            let mut below = Vec::new();
            for dir in &new_dirs {
                below.push((*dir).clone());
                self.folders_below(dir, &mut below);
            }
            let ignored = self.ignored(&below)?;
            for dir in new_dirs {
                if ignored.contains(dir) {
                    continue;
                }
                watcher.watch_tree(dir, &ignored)?;
                if !changed.gone_dirs.iter().any(|(gone, _)| gone == dir) {
                    dirs.push(Change {
                        path: dir.clone(),
                        before: None,
                        after: Some(DIR_MODE),
                    });
                }
            }
        }
        for (dir, mode) in &changed.gone_dirs {
            if !exists(dir).is_some_and(|m| m.is_dir()) {
                dirs.push(Change {
                    path: dir.clone(),
                    before: Some((*mode, String::new())),
                    after: None,
                });
            }
        }
        let (mut present, mut gone) = (Vec::new(), Vec::new());
        for path in &changed.paths {
            if changed.transient.contains(path) {
                continue;
            }
            if exists(path).is_some() {
                present.push(path.as_str());
            } else {
                gone.push(path.as_str());
            }
        }
        if !gone.is_empty() {
            self.run_paths(&["rm", "--cached", "-r", "-q", "--ignore-unmatch"], &gone)?;
        }
        if !present.is_empty() {
            match self.run_paths(&["add", "--all", "--ignore-errors"], &present) {
                Ok(()) => {}
                // A path the watcher named that git ignores (`x.log`): the
                // others were added.
                Err(e) if e.contains("paths are ignored") => {}
                Err(e) => return Err(e),
            }
        }
        Ok(dirs)
    }

    /// Every folder below `dir` (relative), but not inside a nested
    /// repository.
    fn folders_below(&self, dir: &str, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(self.root.join(dir)) else {
            return;
        };
        for entry in entries.flatten() {
            if entry.file_name() == ".git" || !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let path = format!("{dir}/{}", entry.file_name().to_string_lossy());
            out.push(path.clone());
            if out.len() > crate::watch::MAX_WATCHED {
                return;
            }
            self.folders_below(&path, out);
        }
    }

    /// Which of `dirs` git ignores.
    fn ignored(&self, dirs: &[String]) -> Result<HashSet<String>, String> {
        let out = self.run_with_input(&["check-ignore", "-z", "--stdin"], &nul_joined(dirs))?;
        // Exit 1 is "none is ignored".
        if !out.status.success() && out.status.code() != Some(1) {
            return Err(format!(
                "git check-ignore failed: {}",
                one_line(&out.stderr)
            ));
        }
        Ok(out
            .stdout
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect())
    }

    /// Runs a git command over literal paths given on its stdin.
    fn run_paths(&self, args: &[&str], paths: &[&str]) -> Result<(), String> {
        let mut full = vec!["--literal-pathspecs"];
        full.extend_from_slice(args);
        full.extend_from_slice(&["--pathspec-from-file=-", "--pathspec-file-nul"]);
        let out = self.run_with_input(&full, &nul_joined(paths))?;
        self.checked(args[0], out).map(drop)
    }

    /// Runs a git command with `input` on its stdin (written from a
    /// thread of its own, so a command that answers as it reads cannot
    /// stall on a full pipe). Another session's command holding the
    /// private index's lock is waited for, up to [`LOCK_WAIT`]; a lock
    /// older than [`LOCK_STALE`] was left by a git that was killed, and is
    /// removed.
    fn run_with_input(&self, args: &[&str], input: &[u8]) -> Result<std::process::Output, String> {
        let name = args.iter().find(|a| !a.starts_with('-')).unwrap_or(&"git");
        let deadline = std::time::Instant::now() + LOCK_WAIT;
        loop {
            let out = self.run_once(name, args, input)?;
            let locked = !out.status.success()
                && String::from_utf8_lossy(&out.stderr).contains("index.lock");
            if !locked || std::time::Instant::now() >= deadline {
                return Ok(out);
            }
            let lock = self.repo.join("index.lock");
            if std::fs::metadata(&lock)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > LOCK_STALE))
            {
                let _ = std::fs::remove_file(&lock);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    fn run_once(
        &self,
        name: &str,
        args: &[&str],
        input: &[u8],
    ) -> Result<std::process::Output, String> {
        let mut child = self
            .command()
            .args(args)
            .stdin(if input.is_empty() {
                Stdio::null()
            } else {
                Stdio::piped()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run git {name}: {e}"))?;
        let writer = child.stdin.take().map(|mut stdin| {
            let input = input.to_vec();
            std::thread::spawn(move || stdin.write_all(&input))
        });
        let out = child
            .wait_with_output()
            .map_err(|e| format!("git {name}: {e}"))?;
        // A command that failed may not have read its input; its own
        // message says more than the broken pipe would.
        if let Some(writer) = writer
            && out.status.success()
        {
            match writer.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(format!("git {name}: {e}")),
                Err(_) => return Err(format!("git {name}: the writer thread failed")),
            }
        }
        Ok(out)
    }

    /// `git add --all` into the private index.
    fn add(&self) -> Result<(), String> {
        match self.run(&["add", "--all", "--ignore-errors", "--", "."]) {
            Ok(_) => Ok(()),
            // `--ignore-errors` still exits 1 when a file was unreadable;
            // the index holds everything else, which is what counts.
            Err(e) if e.contains("unable to index") || e.contains("Permission denied") => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Looks at the workspace again and says which files (and folders)
    /// differ from the snapshot `before`.
    ///
    /// # Errors
    /// git failed.
    pub fn changes_since(&self, before: &str) -> Result<Vec<Change>, String> {
        let look = self.look()?;
        let mut changes = if look.tree == before {
            Vec::new()
        } else {
            let out = self.run(&["diff-tree", "-r", "-z", "--no-renames", before, &look.tree])?;
            parse_diff(&out)?
        };
        changes.extend(look.dirs);
        Ok(changes)
    }

    /// The bytes of the blobs no larger than `limit`, by id, in one git
    /// process (`cat-file --batch-command`: sizes first, then contents);
    /// larger ones are left out.
    ///
    /// # Errors
    /// git failed, or a blob is missing.
    pub fn small_blobs(&self, oids: &[&str], limit: u64) -> Result<HashMap<Oid, Vec<u8>>, String> {
        use std::io::BufRead;
        if oids.is_empty() {
            return Ok(HashMap::new());
        }
        let mut child = self
            .command()
            .args(["cat-file", "--batch-command", "--buffer"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run git cat-file: {e}"))?;
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("git cat-file has no pipes".to_owned());
        };
        let mut stdout = std::io::BufReader::new(stdout);
        let broken = |e: std::io::Error| format!("git cat-file: {e}");
        let infos: String = oids.iter().map(|oid| format!("info {oid}\n")).collect();
        stdin
            .write_all(format!("{infos}flush\n").as_bytes())
            .map_err(broken)?;
        let mut small = Vec::new();
        let mut line = String::new();
        for _ in oids {
            line.clear();
            stdout.read_line(&mut line).map_err(broken)?;
            let mut parts = line.split_whitespace();
            match (parts.next(), parts.next(), parts.next()) {
                (Some(oid), Some("blob"), Some(size)) => {
                    if size.parse::<u64>().is_ok_and(|s| s <= limit) {
                        small.push(oid.to_owned());
                    }
                }
                _ => return Err(format!("git cat-file: {}", line.trim())),
            }
        }
        let contents: String = small
            .iter()
            .map(|oid| format!("contents {oid}\n"))
            .collect();
        stdin
            .write_all(format!("{contents}flush\n").as_bytes())
            .map_err(broken)?;
        drop(stdin);
        let mut blobs = HashMap::new();
        for _ in &small {
            line.clear();
            stdout.read_line(&mut line).map_err(broken)?;
            let mut parts = line.split_whitespace();
            let (Some(oid), Some("blob"), Some(size)) = (parts.next(), parts.next(), parts.next())
            else {
                return Err(format!("git cat-file: {}", line.trim()));
            };
            let size: usize = size
                .parse()
                .map_err(|_| format!("git cat-file printed {:?}", line.trim()))?;
            let mut bytes = vec![0; size + 1];
            stdout.read_exact(&mut bytes).map_err(broken)?;
            bytes.pop();
            blobs.insert(oid.to_owned(), bytes);
        }
        let out = child.wait_with_output().map_err(broken)?;
        if !out.status.success() {
            return Err(format!("git cat-file failed: {}", one_line(&out.stderr)));
        }
        Ok(blobs)
    }
}

/// The variables a git command keeps from cox's environment: where to find
/// programs, the home (for the user's global excludes), the locale. Every
/// `GIT_*` variable is dropped.
fn kept_env() -> Vec<(String, String)> {
    [
        "PATH",
        "HOME",
        "LANG",
        "LC_ALL",
        "XDG_CONFIG_HOME",
        "TMPDIR",
    ]
    .iter()
    .filter_map(|key| std::env::var(key).ok().map(|v| ((*key).to_owned(), v)))
    .collect()
}

/// The folder name of a root's repository: a hash of its path.
fn root_key(root: &Path) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(root.as_os_str().as_encoded_bytes());
    crate::hex(&digest[..8])
}

/// The object folder of the user's repository at `root`, when it is one:
/// `.git/objects`, or, for a `.git` file (a worktree, a submodule), the
/// objects of the repository it points to.
fn user_objects(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    let gitdir = if dot_git.is_dir() {
        dot_git
    } else {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let target = text.strip_prefix("gitdir:")?.trim();
        let target = root.join(target);
        match std::fs::read_to_string(target.join("commondir")) {
            Ok(common) => target.join(common.trim()),
            Err(_) => target,
        }
    };
    let objects = gitdir.join("objects");
    objects.is_dir().then_some(objects)
}

fn parse_diff(out: &[u8]) -> Result<Vec<Change>, String> {
    let mut changes = Vec::new();
    let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
    while let Some(meta) = fields.next() {
        let meta = String::from_utf8_lossy(meta);
        let Some(path) = fields.next() else {
            return Err(format!(
                "git diff-tree printed a record without a path: {meta}"
            ));
        };
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old_oid, _new_oid, _status] = parts.as_slice() else {
            return Err(format!("git diff-tree printed {meta:?}"));
        };
        let mode = |m: &str| u32::from_str_radix(m, 8).ok().filter(|m| *m != 0);
        let old = mode(old_mode);
        let new = mode(new_mode);
        // A submodule (160000) has no bytes of its own to keep.
        if old == Some(0o160_000) || new == Some(0o160_000) {
            continue;
        }
        changes.push(Change {
            path: String::from_utf8_lossy(path).into_owned(),
            before: old.map(|m| (m, (*old_oid).to_owned())),
            after: new,
        });
    }
    Ok(changes)
}

/// Paths as a command reads them with `-z`: each ended by a NUL.
fn nul_joined<S: AsRef<str>>(paths: &[S]) -> Vec<u8> {
    let mut input = Vec::new();
    for path in paths {
        input.extend_from_slice(path.as_ref().as_bytes());
        input.push(0);
    }
    input
}

fn one_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let line = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    if line.is_empty() {
        "no message".to_owned()
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raw_diff_reads_as_changes() {
        let out = b":100644 100755 aaaa bbbb M\0src/a.rs\0:000000 100644 0000 cccc A\0new\0:120000 000000 dddd 0000 D\0link\0";
        let changes = parse_diff(out).unwrap();
        assert_eq!(changes.len(), 3);
        assert_eq!(changes[0].before, Some((0o100_644, "aaaa".into())));
        assert_eq!(changes[0].after, Some(0o100_755));
        assert_eq!(changes[1].before, None);
        assert_eq!(changes[2].before, Some((0o120_000, "dddd".into())));
        assert_eq!(changes[2].after, None);
    }
}
