//! The paths a shell line names, resolved for the permission engine.
//!
//! `cox-bash` lists the words that name files (`cat ~/.ssh/id_rsa`, `cp a
//! b`, `> out`); this module turns each into the absolute paths the
//! command will touch, the way bash and the kernel would find them, so
//! that `Read(~/.ssh/**)` denies `cat $HOME/.ssh/id_rsa`, `cat
//! ../../home/me/.ssh/id_rsa` and `cat link/id_rsa` (a link in the
//! workspace to `~/.ssh`) alike:
//!
//! * `~`, `~/…` become the home folder, `~user/…` that user's home (from
//!   `/etc/passwd`); a user it cannot find makes the path unknown;
//! * a relative path is taken from the working folder, and also from each
//!   folder a `cd`/`pushd` on the line moves to (a `cd` to somewhere
//!   unknown makes it unknown);
//! * `.`, `..` and repeated `/` are removed lexically, as bash passes the
//!   path on;
//! * an unquoted glob is expanded as bash does (a leading `.` only
//!   matched by a pattern that starts with one), within bounds: past
//!   [`MAX_MATCHES`] matches or [`MAX_ENTRIES`] folder entries read, the
//!   path is unknown;
//! * links are followed: the deepest existing part of the path is made
//!   canonical, and both the lexical and the canonical path are listed
//!   when they differ, so a rule for either holds;
//! * a path whose canonical form lies under no workspace root is marked
//!   outside.
//!
//! It reads folder listings and link targets, never file contents, and it
//! never fails: what it cannot work out is marked unknown, which the
//! engine never auto-allows.

use std::path::{Component, Path, PathBuf};

use cox_bash::{Access, PathArg, Split};
use cox_protocol::tool::Workspace;
use cox_protocol::types::{PathAccess, ShellPath};
use globset::GlobBuilder;

/// Paths one glob may expand to before it is treated as unknown.
pub const MAX_MATCHES: usize = 256;
/// Folder entries one glob may read before it is treated as unknown.
pub const MAX_ENTRIES: usize = 10_000;

/// The resolved paths of a split line.
pub(crate) fn resolve(split: &Split, workspace: &Workspace, home: Option<&Path>) -> Vec<ShellPath> {
    let mut out = Vec::new();
    for arg in &split.paths {
        resolve_one(arg, split, workspace, home, &mut out);
    }
    out.dedup();
    out
}

fn resolve_one(
    arg: &PathArg,
    split: &Split,
    workspace: &Workspace,
    home: Option<&Path>,
    out: &mut Vec<ShellPath>,
) {
    let access = match arg.access {
        Access::Read => PathAccess::Read,
        Access::Write => PathAccess::Write,
    };
    let unknown = |out: &mut Vec<ShellPath>| {
        out.push(ShellPath {
            path: arg.text.clone(),
            access,
            recursive: arg.recursive,
            unknown: true,
            outside: false,
        });
    };
    if !arg.known {
        unknown(out);
        return;
    }
    // The folders a relative path may be taken from.
    // Each `cd` moves from where the one before it went (and, in case it
    // was in a subshell or failed, from the start too).
    let mut bases = vec![workspace.cwd.clone()];
    if !arg.text.starts_with(['/', '~']) {
        let mut here = workspace.cwd.clone();
        for dir in &split.dirs {
            let Some(dir) = dir else {
                unknown(out);
                return;
            };
            let (Some(moved), Some(fresh)) = (
                physical(dir, &here, home),
                physical(dir, &workspace.cwd, home),
            ) else {
                unknown(out);
                return;
            };
            here = moved;
            bases.push(here.clone());
            bases.push(fresh);
        }
        bases.dedup();
    }
    for base in bases {
        let Some(path) = absolute(&arg.text, &base, home) else {
            unknown(out);
            return;
        };
        // The kernel applies `..` after following links: `link/../x` is
        // beside the link's target, not beside the link.
        let Some(physical) = physical(&arg.text, &base, home) else {
            unknown(out);
            return;
        };
        // `/proc/self/cwd`, `/proc/PID/root`, `/dev/fd/N` name what the
        // command's own process has open or stands in: only known then.
        if path.starts_with("/proc") || path.starts_with("/dev/fd") {
            unknown(out);
            continue;
        }
        if physical != path && !arg.glob {
            push(out, &physical, access, arg.recursive, workspace);
        }
        let paths = if arg.glob {
            match expand_glob(&path) {
                Some(found) if found.is_empty() => vec![path],
                Some(found) => found,
                None => {
                    unknown(out);
                    // The folder the glob starts from is still named.
                    if let Some(dir) = literal_prefix(&path) {
                        push(out, &dir, access, true, workspace);
                    }
                    continue;
                }
            }
        } else {
            vec![path]
        };
        for path in paths {
            push(out, &path, access, arg.recursive, workspace);
            if arg.follows && !links_below(&path, access, workspace, out) {
                unknown(out);
            }
        }
    }
}

/// Lists `path` and, when links make it differ, its canonical form.
fn push(
    out: &mut Vec<ShellPath>,
    path: &Path,
    access: PathAccess,
    recursive: bool,
    workspace: &Workspace,
) {
    let canonical = canonical(path);
    let outside = !workspace
        .roots
        .iter()
        .any(|root| canonical.starts_with(root));
    for each in [path.to_path_buf(), canonical.clone()] {
        let shell = ShellPath {
            path: each.display().to_string(),
            access,
            recursive,
            unknown: false,
            outside,
        };
        if !out.contains(&shell) {
            out.push(shell);
        }
    }
}

/// Folder entries a walk that follows links reads before the links below
/// a folder are treated as unknown. The walk skips what `.gitignore`
/// ignores (`target/`, `node_modules/`) and `.git`.
pub const MAX_WALK: usize = 20_000;

/// For a command that follows links while it walks `folder` (`grep -R`):
/// the target of every link below it, as a walked path too. `false` when
/// the folder holds more than [`MAX_WALK`] entries.
fn links_below(
    folder: &Path,
    access: PathAccess,
    workspace: &Workspace,
    out: &mut Vec<ShellPath>,
) -> bool {
    let walker = ignore::WalkBuilder::new(folder)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    for (seen, entry) in walker.enumerate() {
        if seen > MAX_WALK {
            return false;
        }
        let Ok(entry) = entry else { continue };
        if entry.path_is_symlink()
            && let Ok(target) = entry.path().canonicalize()
        {
            push(out, &target, access, true, workspace);
        }
    }
    true
}

/// `text` as an absolute, lexically normal path from `base`.
fn absolute(text: &str, base: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let joined = if let Some(rest) = text.strip_prefix('~') {
        let (user, rest) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, ""),
        };
        let home = if user.is_empty() {
            home?.to_path_buf()
        } else {
            user_home(user)?
        };
        PathBuf::from(format!("{}{rest}", home.display()))
    } else {
        base.join(text)
    };
    Some(lexical(&joined))
}

/// `text` from `base` with links followed where the path exists, `..`
/// applied after them as the kernel does; the part that does not exist is
/// appended lexically.
fn physical(text: &str, base: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let joined = if let Some(rest) = text.strip_prefix('~') {
        let (user, rest) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (rest, ""),
        };
        let home = if user.is_empty() {
            home?.to_path_buf()
        } else {
            user_home(user)?
        };
        home.join(rest)
    } else {
        base.join(text)
    };
    let parts: Vec<Component<'_>> = joined.components().collect();
    for keep in (1..=parts.len()).rev() {
        let prefix: PathBuf = parts[..keep].iter().collect();
        if let Ok(real) = prefix.canonicalize() {
            let rest: PathBuf = parts[keep..].iter().collect();
            return Some(lexical(&real.join(rest)));
        }
    }
    Some(lexical(&joined))
}

/// `.`, `..` and repeated separators removed, without touching the disk.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// The path with its deepest existing part made canonical (links
/// followed) and the rest appended.
fn canonical(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (
            existing.file_name().map(ToOwned::to_owned),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// A user's home folder from `/etc/passwd`.
fn user_home(user: &str) -> Option<PathBuf> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        (fields.first() == Some(&user))
            .then(|| fields.get(5).map(PathBuf::from))
            .flatten()
    })
}

/// The part of a glob path before its first component with a glob
/// character.
fn literal_prefix(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        let text = component.as_os_str().to_string_lossy();
        if text.contains(['*', '?', '[']) {
            return Some(out);
        }
        out.push(component);
    }
    Some(out)
}

/// The paths a glob matches, in bash's way; `None` past the bounds.
fn expand_glob(path: &Path) -> Option<Vec<PathBuf>> {
    let mut found = vec![PathBuf::from("/")];
    let mut entries = 0usize;
    for component in path.components().skip(1) {
        let part = component.as_os_str().to_string_lossy().into_owned();
        if !part.contains(['*', '?', '[']) {
            for each in &mut found {
                each.push(&part);
            }
            continue;
        }
        let matcher = GlobBuilder::new(&part)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .ok()?
            .compile_matcher();
        let dots = part.starts_with('.');
        let mut next = Vec::new();
        for dir in &found {
            let Ok(listing) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in listing.flatten() {
                entries += 1;
                if entries > MAX_ENTRIES {
                    return None;
                }
                let name = entry.file_name();
                let text = name.to_string_lossy();
                if (text.starts_with('.') && !dots) || !matcher.is_match(&*text) {
                    continue;
                }
                next.push(dir.join(&name));
                if next.len() > MAX_MATCHES {
                    return None;
                }
            }
        }
        next.sort();
        found = next;
        if found.is_empty() {
            return Some(Vec::new());
        }
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_paths() {
        assert_eq!(
            lexical(Path::new("/a/./b//c/../d")),
            PathBuf::from("/a/b/d")
        );
        assert_eq!(lexical(Path::new("/../x")), PathBuf::from("/x"));
        let home = Path::new("/home/me");
        assert_eq!(
            absolute("~/.ssh/k", Path::new("/repo"), Some(home)),
            Some(PathBuf::from("/home/me/.ssh/k"))
        );
        assert_eq!(
            absolute("../../home/me/.ssh", Path::new("/repo/sub"), Some(home)),
            Some(PathBuf::from("/home/me/.ssh"))
        );
        assert_eq!(absolute("~", Path::new("/r"), None), None);
        assert_eq!(
            absolute("~root/x", Path::new("/r"), None),
            user_home("root").map(|h| h.join("x"))
        );
        assert_eq!(
            absolute("~no-such-user-here/x", Path::new("/r"), None),
            None
        );
    }
}
