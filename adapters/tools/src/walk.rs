//! The file walk `glob` and `grep` share.
//!
//! It sees what a developer's own tools see: `.gitignore` and `.ignore` rules
//! hold (in a git repository or not), `.git` itself is never entered, and
//! hidden files are listed unless ignored. Links to folders are not followed,
//! and a link to a file is listed only when its target is a file inside the
//! workspace roots, so a search cannot read past the roots by a link. The
//! order is by file name, so the same tree always gives the same answer.
//!
//! The permission rules hold for every path the walk meets, hidden ones
//! included: a folder they close is not entered, a file they close is not
//! listed (nor a link whose target they close), and a closed root yields
//! nothing. What was left out is kept apart, never shown, so the tool can
//! say how many paths it would have used were skipped without naming them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use cox_protocol::CancelToken;
use cox_protocol::tool::PathRules;
use ignore::WalkBuilder;

/// The walk was stopped by the call's cancellation token.
#[derive(Debug)]
pub(crate) struct Cancelled;

/// What a walk found.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    /// The files, in walk order.
    pub files: Vec<PathBuf>,
    /// The files the permission rules closed (links included), so a tool
    /// can count those it would have used.
    pub closed_files: Vec<PathBuf>,
    /// The folders the rules closed (each counts once, whatever is inside;
    /// a closed root is one of them).
    pub closed_folders: usize,
}

impl Walked {
    /// One line saying paths were skipped: the closed folders, and the
    /// closed files `wanted` says the tool would have used. `None` when
    /// there are none.
    pub fn skipped_note(&self, wanted: impl Fn(&Path) -> bool) -> Option<String> {
        let n = self.closed_folders + self.closed_files.iter().filter(|f| wanted(f)).count();
        (n > 0).then(|| {
            let paths = if n == 1 { "path" } else { "paths" };
            format!("[{n} {paths} skipped: permission rules deny reading them]")
        })
    }
}

/// What the filter closed, as the walk goes.
#[derive(Default)]
struct Closed {
    files: Vec<PathBuf>,
    folders: usize,
}

/// Every file under `root` (or `root` itself when it is a file) that the
/// rules let `tool` open.
pub(crate) fn files(
    tool: &'static str,
    root: &Path,
    roots: &[PathBuf],
    rules: &Arc<dyn PathRules>,
    cancel: &CancelToken,
) -> Result<Walked, Cancelled> {
    // The walker never filters its root, so the root is checked here.
    if !rules.may_open(tool, root) {
        let mut walked = Walked::default();
        if root.is_dir() {
            walked.closed_folders = 1;
        } else {
            walked.closed_files.push(root.to_path_buf());
        }
        return Ok(walked);
    }
    let closed = Arc::new(Mutex::new(Closed::default()));
    let walker = {
        let rules = Arc::clone(rules);
        let closed = Arc::clone(&closed);
        WalkBuilder::new(root)
            .hidden(false)
            .require_git(false)
            .filter_entry(move |entry| {
                if entry.file_name() == ".git" {
                    return false;
                }
                let open = rules.may_open(tool, entry.path());
                if !open {
                    let mut closed = closed.lock().unwrap_or_else(PoisonError::into_inner);
                    if entry.file_type().is_some_and(|kind| kind.is_dir()) {
                        closed.folders += 1;
                    } else {
                        closed.files.push(entry.path().to_path_buf());
                    }
                }
                open
            })
            .sort_by_file_name(Ord::cmp)
            .build()
    };
    let mut files = Vec::new();
    let mut closed_links = Vec::new();
    for entry in walker {
        if cancel.is_cancelled() {
            return Err(Cancelled);
        }
        // Unreadable folders and broken entries are skipped, as `rg` does.
        let Ok(entry) = entry else { continue };
        let Some(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_file() {
            files.push(entry.into_path());
        } else if kind.is_symlink()
            && let Some(target) = link_to_file_inside(entry.path(), roots)
        {
            if rules.may_open(tool, &target) {
                files.push(entry.into_path());
            } else {
                closed_links.push(entry.into_path());
            }
        }
    }
    let Closed {
        files: mut closed_files,
        folders,
    } = std::mem::take(&mut *closed.lock().unwrap_or_else(PoisonError::into_inner));
    closed_files.extend(closed_links);
    Ok(Walked {
        files,
        closed_files,
        closed_folders: folders,
    })
}

/// The target of a link to a file inside the roots.
fn link_to_file_inside(link: &Path, roots: &[PathBuf]) -> Option<PathBuf> {
    link.canonicalize()
        .ok()
        .filter(|target| target.is_file() && roots.iter().any(|root| target.starts_with(root)))
}
