//! Worktrees: a session (`cox --worktree NAME`) that works on a branch of
//! its own in a folder of its own, never touching the checkout it was
//! started from.
//!
//! Where and what, given the repository `<repo>` and the name `NAME`:
//! - the folder is `<root>/<repo>-<name>`, `<root>` being the nearest
//!   ancestor of the repository that already holds a `_worktrees/` folder,
//!   else `$WT_ROOT`, else a new `_worktrees/` next to the repository;
//! - the branch is `name` lower-cased, cut with no upstream from a freshly
//!   fetched `origin/<default>`, or, without a remote, from the local
//!   default branch (which is said);
//! - the worktree is locked with the reason `cox / pid <pid> | <name> |
//!   <date>`.
//!
//! Invariants: another owner's lock (one not written by cox) is never
//! reused or removed; a cox lock whose process is alive belongs to that
//! session (the new one is warned and goes on); removing a worktree never
//! deletes its branch, and a worktree with changes is never removed.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, anyhow, bail};

/// A worktree a session works in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Worktree {
    /// The worktree's folder (canonical).
    pub path: PathBuf,
    /// Its branch.
    pub branch: String,
    /// The main checkout (canonical): read, never written.
    pub main: PathBuf,
    /// What the session should say (where the branch was cut from, …).
    pub notes: Vec<String>,
}

/// Runs `git` in `dir`; its stdout, trimmed, or why it failed.
fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .with_context(|| format!("cannot run git {}", args.join(" ")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        bail!(
            "git {} failed: {}",
            args.join(" "),
            err.lines().next().unwrap_or("no message").trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The main checkout of the repository holding `dir` (for a worktree,
/// the repository it belongs to).
///
/// # Errors
/// `dir` is in no git repository.
pub fn main_checkout(dir: &Path) -> Result<PathBuf> {
    let common = git(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )
    .map_err(|_| anyhow!("{} is not in a git repository", dir.display()))?;
    let common = PathBuf::from(common);
    let main = if common.file_name().is_some_and(|n| n == ".git") {
        common.parent().map(Path::to_path_buf).unwrap_or(common)
    } else {
        // A bare repository has no checkout of its own.
        bail!(
            "{} has no main checkout (a bare repository)",
            common.display()
        );
    };
    std::fs::canonicalize(&main).with_context(|| format!("cannot open {}", main.display()))
}

/// Where `dir` is in git, read from the files (no `git` started, as every
/// session start asks): the top of its checkout and its main checkout
/// (the same folder unless it is a linked worktree).
#[must_use]
pub fn checkouts(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let top = dir.ancestors().find(|d| d.join(".git").exists())?;
    let dot_git = top.join(".git");
    if dot_git.is_dir() {
        return Some((top.to_path_buf(), top.to_path_buf()));
    }
    // A linked worktree: `.git` names its folder in the main repository's
    // `.git/worktrees/`, whose `commondir` leads back to that `.git`.
    let pointer = std::fs::read_to_string(&dot_git).ok()?;
    let gitdir = top.join(pointer.strip_prefix("gitdir:")?.trim());
    let common = std::fs::read_to_string(gitdir.join("commondir")).ok()?;
    let common = std::fs::canonicalize(gitdir.join(common.trim())).ok()?;
    let main = common
        .file_name()
        .is_some_and(|n| n == ".git")
        .then(|| common.parent().map(Path::to_path_buf))??;
    Some((top.to_path_buf(), main))
}

/// Whether `dir` is in a linked worktree (not a main checkout); its main
/// checkout when it is.
#[must_use]
pub fn linked(dir: &Path) -> Option<PathBuf> {
    let (top, main) = checkouts(dir)?;
    (top != main).then_some(main)
}

/// The folder worktrees of `main` go in (see the module's note).
fn root_for(main: &Path, wt_root: Option<&Path>) -> PathBuf {
    if let Some(found) = main
        .ancestors()
        .skip(1)
        .map(|a| a.join("_worktrees"))
        .find(|dir| dir.is_dir())
    {
        return found;
    }
    if let Some(root) = wt_root {
        return root.to_path_buf();
    }
    main.parent().unwrap_or(main).join("_worktrees")
}

/// `path` with its deepest existing ancestor resolved through links (the
/// rest, not made yet, appended as it is).
fn resolved_through_links(path: &Path) -> PathBuf {
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    for ancestor in path.ancestors() {
        if let Ok(real) = std::fs::canonicalize(ancestor) {
            return rest.iter().rev().fold(real, |at, name| at.join(name));
        }
        if let Some(name) = ancestor.file_name() {
            rest.push(name);
        }
    }
    path.to_path_buf()
}

/// A name a branch and a folder can take: letters, digits, `-`, `_`, `.`,
/// `/` inside, lower-cased.
fn branch_name(name: &str) -> Result<String> {
    let branch = name.trim().to_lowercase();
    let fine = !branch.is_empty()
        && branch
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !branch.starts_with(['-', '.'])
        && !branch.ends_with(".lock");
    if !fine {
        bail!(
            "--worktree {name:?}: a worktree name is letters, digits, `-`, `_` and `.` \
             (it names a branch and a folder)"
        );
    }
    Ok(branch)
}

/// Who holds a worktree, from its lock reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lock {
    None,
    /// cox's, with the pid of the session that took it.
    Cox {
        pid: u32,
    },
    /// Anyone else's (another tool): never reused or removed.
    Other(String),
}

/// The lock of the worktree at `path`, as `git worktree list` says.
fn lock_of(main: &Path, path: &Path) -> Result<Option<Lock>> {
    let list = git(main, &["worktree", "list", "--porcelain"])?;
    let mut current: Option<PathBuf> = None;
    let mut found: Option<Lock> = None;
    for line in list.lines().chain(std::iter::once("")) {
        if let Some(at) = line.strip_prefix("worktree ") {
            current = std::fs::canonicalize(at).ok().or_else(|| Some(at.into()));
            continue;
        }
        if current.as_deref() != Some(path) {
            continue;
        }
        if found.is_none() {
            found = Some(Lock::None);
        }
        if let Some(reason) = line
            .strip_prefix("locked")
            .map(|r| r.trim_start().to_owned())
        {
            found = Some(parse_lock(&reason));
        }
    }
    Ok(found)
}

/// A lock reason: cox's (`cox / pid 123 | …`) or another's.
#[must_use]
pub fn parse_lock(reason: &str) -> Lock {
    reason
        .strip_prefix("cox / pid ")
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|pid| pid.parse().ok())
        .map_or_else(|| Lock::Other(reason.to_owned()), |pid| Lock::Cox { pid })
}

/// When process `pid` started, in clock ticks since boot (`/proc`'s
/// `starttime`); `None` when it is gone.
#[must_use]
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name (which may hold spaces): the
    // state is field 3, the start time field 22.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

/// Whether process `pid` runs (and is not a zombie).
#[must_use]
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with(['Z', 'X']))
    })
}

/// The default branch of `main`'s repository and what to cut from: the
/// freshly fetched `origin/<default>` when there is a remote, else the
/// local default branch (with a note saying so).
fn base_of(main: &Path, notes: &mut Vec<String>) -> Result<String> {
    let has_origin = git(main, &["remote"])?.lines().any(|r| r == "origin");
    if has_origin {
        let default = git(
            main,
            &["symbolic-ref", "--short", "refs/remotes/origin/HEAD"],
        )
        .ok()
        .and_then(|r| r.strip_prefix("origin/").map(str::to_owned))
        .or_else(|| {
            git(main, &["ls-remote", "--symref", "origin", "HEAD"])
                .ok()?
                .lines()
                .find_map(|l| l.strip_prefix("ref: refs/heads/"))
                .and_then(|r| r.split_whitespace().next())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "main".to_owned());
        git(main, &["fetch", "--quiet", "origin", &default])
            .with_context(|| format!("cannot fetch origin/{default}"))?;
        return Ok(format!("origin/{default}"));
    }
    let local = ["main", "master"]
        .into_iter()
        .find(|b| {
            git(
                main,
                &[
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("refs/heads/{b}"),
                ],
            )
            .is_ok()
        })
        .map(str::to_owned)
        .or_else(|| git(main, &["symbolic-ref", "--short", "HEAD"]).ok())
        .ok_or_else(|| anyhow!("{} has no branch to cut a worktree from", main.display()))?;
    notes.push(format!(
        "the repository has no remote `origin`: branch cut from the local `{local}`"
    ));
    Ok(local)
}

/// Opens the worktree `name` of the repository holding `cwd` for the
/// session of process `pid`, creating the folder and the branch when
/// missing, and locks it; `today` is `YYYY-MM-DD`.
///
/// # Errors
/// No repository, a bad name, another owner's lock, or git failing: one
/// line naming what.
pub fn open(cwd: &Path, name: &str, pid: u32, today: &str) -> Result<Worktree> {
    let branch = branch_name(name)?;
    let main = main_checkout(cwd).context("--worktree needs a git repository")?;
    let repo = main
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repo".to_owned());
    let wt_root = std::env::var_os("WT_ROOT").map(PathBuf::from);
    if let Some(root) = wt_root.as_ref().filter(|r| !r.is_absolute()) {
        bail!("WT_ROOT={}: an absolute path is needed", root.display());
    }
    let root = root_for(&main, wt_root.as_deref());
    let path = root.join(format!("{repo}-{branch}"));
    // Inside the main checkout it could be neither written (the checkout
    // is read-only to the session) nor kept out of the checkout's status.
    if resolved_through_links(&root).starts_with(&main) {
        bail!(
            "the worktrees' folder {} is inside the repository {}: set WT_ROOT to a folder \
             outside it",
            root.display(),
            main.display()
        );
    }
    let mut notes = Vec::new();
    let existing = std::fs::canonicalize(&path).ok();
    let lock = match &existing {
        Some(path) => lock_of(&main, path)?,
        None => None,
    };
    let reason = format!("cox / pid {pid} | {branch} | {today}");
    let path = match (existing, lock) {
        (Some(path), None) => bail!(
            "{} exists and is not a worktree of {}: move it, or pick another name",
            path.display(),
            main.display()
        ),
        // Made by someone else (cox always locks its own): not cox's.
        (Some(path), Some(Lock::None)) => bail!(
            "worktree {} is not locked, so it is not cox's: pick another name, or hand it to \
             cox with `git worktree lock --reason \"cox / pid 0\" {}`",
            path.display(),
            path.display()
        ),
        (Some(path), Some(Lock::Other(reason))) => bail!(
            "worktree {} is locked by someone else ({reason}): cox never reuses another \
             owner's worktree; pick another name",
            path.display()
        ),
        (Some(path), Some(held)) => {
            if !matches!(held, Lock::Cox { pid } if alive(pid)) {
                git(&main, &["worktree", "unlock", &path.to_string_lossy()])?;
                git(
                    &main,
                    &[
                        "worktree",
                        "lock",
                        "--reason",
                        &reason,
                        &path.to_string_lossy(),
                    ],
                )?;
            }
            path
        }
        (None, _) => {
            std::fs::create_dir_all(&root)
                .with_context(|| format!("cannot create {}", root.display()))?;
            let exists = git(
                &main,
                &[
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("refs/heads/{branch}"),
                ],
            )
            .is_ok();
            let target = path.to_string_lossy().into_owned();
            if exists {
                git(
                    &main,
                    &[
                        "worktree", "add", "--lock", "--reason", &reason, &target, &branch,
                    ],
                )?;
                notes.push(format!(
                    "branch `{branch}` already existed: its worktree was made again"
                ));
            } else {
                let base = base_of(&main, &mut notes)?;
                git(
                    &main,
                    &[
                        "worktree",
                        "add",
                        "--lock",
                        "--reason",
                        &reason,
                        "--no-track",
                        "-b",
                        &branch,
                        &target,
                        &base,
                    ],
                )?;
                notes.push(format!(
                    "created worktree {target} on branch `{branch}` from {base}"
                ));
            }
            std::fs::canonicalize(&path).with_context(|| format!("cannot open {target}"))?
        }
    };
    Ok(Worktree {
        path,
        branch,
        main,
        notes,
    })
}

/// Whether the worktree at `path` has changes (tracked or not).
///
/// # Errors
/// git cannot say.
pub fn dirty(path: &Path) -> Result<bool> {
    Ok(!git(path, &["status", "--porcelain"])?.is_empty())
}

/// Lines added and removed in the worktree at `path` since its branch's
/// commit (for the status line): tracked changes, and the lines of new
/// files not ignored (the first 200 files of at most 1 MiB each).
#[must_use]
pub fn diff_stat(path: &Path) -> Option<(u64, u64)> {
    let numstat = git(path, &["diff", "HEAD", "--numstat"]).ok()?;
    let mut added = 0;
    let mut removed = 0;
    for line in numstat.lines() {
        let mut cols = line.split_whitespace();
        added += cols.next()?.parse::<u64>().unwrap_or(0);
        removed += cols.next()?.parse::<u64>().unwrap_or(0);
    }
    let new = git(path, &["ls-files", "--others", "--exclude-standard"]).ok()?;
    for file in new.lines().take(200) {
        let file = path.join(file);
        if std::fs::metadata(&file).is_ok_and(|m| m.is_file() && m.len() <= 1 << 20)
            && let Ok(bytes) = std::fs::read(&file)
            && !bytes.contains(&0)
        {
            let lines = bytes.iter().filter(|b| **b == b'\n').count();
            let last = usize::from(bytes.last().is_some_and(|b| *b != b'\n'));
            added += (lines + last) as u64;
        }
    }
    Some((added, removed))
}

/// What happened to a worktree at the end of its session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Removal {
    Removed,
    /// It has changes: kept.
    Dirty,
}

/// Whether the worktree at `path` is locked by this very process (cox
/// made or took it for this session): only such a worktree is cox's to
/// remove.
#[must_use]
pub fn held_here(main: &Path, path: &Path) -> bool {
    matches!(lock_of(main, path), Ok(Some(Lock::Cox { pid })) if pid == std::process::id())
}

/// Removes the clean worktree at `path` (its branch stays); a dirty one
/// is kept.
///
/// # Errors
/// It is not held by this process (another tool's, another session's),
/// or git fails.
pub fn remove_if_clean(main: &Path, path: &Path) -> Result<Removal> {
    if !held_here(main, path) {
        bail!(
            "{} is not this session's to remove (its lock is not this process's)",
            path.display()
        );
    }
    if dirty(path)? {
        return Ok(Removal::Dirty);
    }
    let target = path.to_string_lossy().into_owned();
    let _ = git(main, &["worktree", "unlock", &target]);
    git(main, &["worktree", "remove", &target])?;
    Ok(Removal::Removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_is_cox_s_only_with_its_prefix_and_a_pid() {
        assert_eq!(
            parse_lock("cox / pid 123 | t42 | 2026-09-22"),
            Lock::Cox { pid: 123 }
        );
        assert_eq!(
            parse_lock("Cursor / grok | t1"),
            Lock::Other("Cursor / grok | t1".into())
        );
        assert!(matches!(parse_lock("cox / pid x"), Lock::Other(_)));
    }

    #[test]
    fn a_name_is_one_a_branch_and_a_folder_take() {
        assert_eq!(branch_name("T42").unwrap(), "t42");
        assert_eq!(branch_name("fix-login_2").unwrap(), "fix-login_2");
        for bad in ["", "a b", "../x", "-x", "x.lock", "a/b"] {
            assert!(branch_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn this_process_is_alive_and_a_free_pid_is_not() {
        assert!(alive(std::process::id()));
        assert!(!alive(u32::MAX - 1));
    }
}
