//! The file walk `glob` and `grep` share.
//!
//! It sees what a developer's own tools see: `.gitignore` and `.ignore` rules
//! hold (in a git repository or not), `.git` itself is never entered, and
//! hidden files are listed unless ignored. Links to folders are not followed,
//! and a link to a file is listed only when its target is a file inside the
//! workspace roots, so a search cannot read past the roots by a link. The
//! order is by file name, so the same tree always gives the same answer.

use std::path::{Path, PathBuf};

use cox_protocol::CancelToken;
use ignore::WalkBuilder;

/// The walk was stopped by the call's cancellation token.
#[derive(Debug)]
pub(crate) struct Cancelled;

/// Every file under `root` (or `root` itself when it is a file).
pub(crate) fn files(
    root: &Path,
    roots: &[PathBuf],
    cancel: &CancelToken,
) -> Result<Vec<PathBuf>, Cancelled> {
    let walker = WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .sort_by_file_name(Ord::cmp)
        .build();
    let mut files = Vec::new();
    for entry in walker {
        if cancel.is_cancelled() {
            return Err(Cancelled);
        }
        // Unreadable folders and broken entries are skipped, as `rg` does.
        let Ok(entry) = entry else { continue };
        let Some(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_file() || (kind.is_symlink() && link_to_file_inside(entry.path(), roots)) {
            files.push(entry.into_path());
        }
    }
    Ok(files)
}

fn link_to_file_inside(link: &Path, roots: &[PathBuf]) -> bool {
    link.canonicalize()
        .is_ok_and(|target| target.is_file() && roots.iter().any(|root| target.starts_with(root)))
}
