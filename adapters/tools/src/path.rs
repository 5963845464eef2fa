//! Confinement of the paths the model names to the workspace roots.
//!
//! Every file tool passes its raw path through [`confine`] and then does its
//! I/O on the *returned* path, never on the raw one. The returned path is
//! absolute, has no `.` or `..`, and its existing part has no symbolic link
//! left in it, so the place that was checked is the place that is touched: a
//! link inside the workspace that points outside is seen through, whether it
//! names a file to read or a directory to create a file under.
//!
//! Decisions worth knowing:
//! - `..` is applied lexically, before links are resolved (`link/..` is the
//!   folder holding `link`, whatever `link` points at); since the I/O uses the
//!   result, this is consistent, only stricter than the shell;
//! - `~` is an ordinary name: the model must not reach the home folder by a
//!   shorthand the permission rules never see;
//! - a dangling link is followed to where its target would be, so writing
//!   through it cannot create a file outside the roots;
//! - roots are compared as given, so they must be canonical.
//!
//! What it cannot do: a link swapped in between the check and the I/O is not
//! caught. Containing a hostile process is the sandbox's job, not this one's.

use std::ffi::OsString;
use std::fs;
use std::path::{Component, Path, PathBuf};

use cox_protocol::tool::Workspace;

/// Links followed in one resolution before giving up, as the kernel does.
const MAX_LINK_HOPS: usize = 40;

/// Why a path was refused. The message is for the model: it names the path
/// and says what to do instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the path is empty; give a path inside the workspace (roots: {})", show_roots(.roots))]
    Empty { roots: Vec<PathBuf> },
    #[error(
        "path {raw} is outside the workspace (roots: {}); use a path inside it",
        show_roots(.roots)
    )]
    Outside { raw: String, roots: Vec<PathBuf> },
    #[error("path {raw} goes through too many symbolic links to resolve; use the real path")]
    LinkLoop { raw: String },
    #[error(
        "path {raw} is inside a repository's .git folder, which the file tools do not write \
         (as commands cannot in the sandbox): its config and hooks run code; use git itself"
    )]
    GitFolder { raw: String },
    #[error(
        "path {raw} is in {}, which this session reads but never writes (it works in {}); \
         change the copy in the working folder instead",
        root.display(), cwd.display()
    )]
    ReadOnlyRoot {
        raw: String,
        root: PathBuf,
        cwd: PathBuf,
    },
}

fn show_roots(roots: &[PathBuf]) -> String {
    let names: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    names.join(", ")
}

/// The absolute, link-free path `raw` names, if it lies inside a root.
///
/// Relative paths are taken from `workspace.cwd`. The path need not exist;
/// its deepest existing ancestor is resolved and the rest re-appended.
pub fn confine(workspace: &Workspace, raw: &str) -> Result<PathBuf, PathError> {
    if raw.is_empty() {
        return Err(PathError::Empty {
            roots: workspace.roots.clone(),
        });
    }
    let lexical = normalize(&workspace.cwd.join(raw));
    let resolved = resolve(lexical).ok_or_else(|| PathError::LinkLoop {
        raw: raw.to_owned(),
    })?;
    if workspace
        .roots
        .iter()
        .any(|root| resolved.starts_with(root))
    {
        Ok(resolved)
    } else {
        Err(PathError::Outside {
            raw: raw.to_owned(),
            roots: workspace.roots.clone(),
        })
    }
}

/// [`confine`] for a path a tool writes: inside a workspace root, but not
/// inside a `.git` folder below it. A repository's `.git` (its `config`,
/// its `hooks/`) holds what `git` and hooks run outside the sandbox, so the
/// file tools leave it read-only, as the sandbox does for commands.
pub fn confine_write(workspace: &Workspace, raw: &str) -> Result<PathBuf, PathError> {
    let path = confine(workspace, raw)?;
    // A read-only root nested in a writable one (or the other way round)
    // goes by the deepest: the closest root decides.
    let closest = workspace
        .roots
        .iter()
        .filter(|root| path.starts_with(root))
        .max_by_key(|root| root.components().count());
    if let Some(root) = closest
        && workspace.read_only.contains(root)
    {
        return Err(PathError::ReadOnlyRoot {
            raw: raw.to_owned(),
            root: root.clone(),
            cwd: workspace.cwd.clone(),
        });
    }
    let in_git = workspace
        .roots
        .iter()
        .filter_map(|root| path.strip_prefix(root).ok())
        .any(|rest| rest.components().any(|c| c.as_os_str() == ".git"));
    // A repository's git folder by any other name (`git init
    // --separate-git-dir=gd`, a bare repository): its config and hooks run
    // code just the same.
    let in_git = in_git
        || path
            .ancestors()
            .skip(1)
            .take_while(|dir| workspace.roots.iter().any(|root| dir.starts_with(root)))
            .any(is_git_folder);
    if in_git {
        return Err(PathError::GitFolder {
            raw: raw.to_owned(),
        });
    }
    Ok(path)
}

/// Whether `dir` is a git folder: `HEAD`, `objects/` and `refs/` in it.
fn is_git_folder(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
}

/// Drops `.` and applies `..` by text alone; `..` at the root stays there.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

/// Canonicalizes the deepest existing ancestor of an absolute, normalized
/// path and re-appends the rest. `None` when links loop.
fn resolve(path: PathBuf) -> Option<PathBuf> {
    let mut head = path;
    // The names that do not exist (yet), innermost first.
    let mut tail: Vec<OsString> = Vec::new();
    let mut hops = 0;
    loop {
        if let Ok(canonical) = head.canonicalize() {
            return Some(append(canonical, &tail));
        }
        let is_link = fs::symlink_metadata(&head).is_ok_and(|m| m.file_type().is_symlink());
        if is_link {
            // A dangling (or looping) link: go where it points.
            hops += 1;
            if hops > MAX_LINK_HOPS {
                return None;
            }
            let target = fs::read_link(&head).ok()?;
            let base = head
                .parent()
                .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
            head = normalize(&base.join(target));
            continue;
        }
        match (head.parent(), head.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_owned());
                head = parent.to_path_buf();
            }
            // The root itself did not canonicalize; keep what we have.
            _ => return Some(append(head, &tail)),
        }
    }
}

fn append(mut base: PathBuf, tail: &[OsString]) -> PathBuf {
    for name in tail.iter().rev() {
        base.push(name);
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_applies_dots_lexically_and_stops_at_the_root() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("/../../x")), PathBuf::from("/x"));
        assert_eq!(normalize(Path::new("/a/b/")), PathBuf::from("/a/b"));
    }

    #[test]
    fn a_write_into_a_git_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        let workspace = Workspace::single(root.clone());
        for raw in [".git/config", ".git/hooks/pre-commit", "sub/.git/config"] {
            assert!(
                matches!(
                    confine_write(&workspace, raw),
                    Err(PathError::GitFolder { .. })
                ),
                "{raw}"
            );
        }
        assert_eq!(
            confine_write(&workspace, ".gitignore").unwrap(),
            root.join(".gitignore")
        );
        assert!(
            confine(&workspace, ".git/config").is_ok(),
            "reading stays allowed"
        );
    }

    #[test]
    fn the_message_names_the_path_and_the_roots() {
        let err = PathError::Outside {
            raw: "../x".into(),
            roots: vec![PathBuf::from("/repo"), PathBuf::from("/lib")],
        };
        assert_eq!(
            err.to_string(),
            "path ../x is outside the workspace (roots: /repo, /lib); use a path inside it"
        );
    }
}
