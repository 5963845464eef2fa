//! The file-system half of the sandbox where bwrap is missing: Landlock.
//!
//! Landlock only grants, so "read everything but the secrets" is spelled as
//! read rules on every sibling along the way to each hidden path: `/home`'s
//! other entries, then the home folder's, and so on. The folders on the way
//! keep only the right to be listed, so a hidden folder's names can be
//! listed but no file in it opened. Writes are granted on the writable
//! roots, `/tmp` and `/dev/shm`; device files may be read and written (for
//! `/dev/null`), not created.
//!
//! What Landlock cannot do, and the OS sandbox says so with a Notice: keep
//! `.git` read-only inside a writable root (a grant covers the whole tree
//! beneath), or give a private `/tmp`.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, Scope,
};

use crate::helper::LandlockSpec;

/// The Landlock ABI the kernel offers (0: none).
#[must_use]
pub fn kernel_abi() -> i64 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_long = 1;
    // SAFETY: the version query takes no pointer.
    unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    }
    .max(0)
}

/// Restricts this process (and what it execs) to `spec`.
///
/// # Errors
/// The kernel has no Landlock, or did not enforce the rules fully.
pub fn restrict(spec: &LandlockSpec) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| format!("landlock: {e}");
    let abi_number = kernel_abi();
    if abi_number == 0 {
        return Err("landlock: this kernel does not offer Landlock".into());
    }
    // The rules ask exactly what this kernel can enforce, so anything short
    // of full enforcement is a failure, not a compromise.
    let best = ABI::from(i32::try_from(abi_number.min(6)).unwrap_or(6));
    let read = AccessFs::from_read(best);
    let all = AccessFs::from_all(best);
    let device = (read | AccessFs::WriteFile | AccessFs::Truncate) & all;
    let mut ruleset = Ruleset::default()
        .handle_access(all)
        .map_err(|e| fail(&e))?;
    if abi_number >= 6 {
        // Signals and abstract sockets stay within the sandbox.
        ruleset = ruleset
            .scope(Scope::AbstractUnixSocket | Scope::Signal)
            .map_err(|e| fail(&e))?;
    }
    let created = ruleset.create().map_err(|e| fail(&e))?;
    let mut grants: Vec<(PathBuf, BitFlags<AccessFs>)> = read_grants(&spec.hidden)
        .into_iter()
        .map(|(path, only_list)| {
            let access = if only_list {
                BitFlags::from(AccessFs::ReadDir)
            } else {
                read
            };
            (path, access)
        })
        .collect();
    grants.push(("/dev".into(), device));
    for root in spec
        .writable
        .iter()
        .cloned()
        .chain(["/tmp".into(), "/dev/shm".into()])
    {
        // Write rights only: reading comes from the walk, so a hidden path
        // under a writable root stays unreadable.
        grants.push((root, AccessFs::from_write(best)));
    }
    let rules = grants.into_iter().filter_map(|(path, access)| {
        // A path gone since it was listed has nothing to grant.
        let fd = PathFd::new(&path).ok()?;
        let access = if std::fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
            access
        } else {
            access & AccessFs::from_file(best)
        };
        Some(Ok::<_, landlock::RulesetError>(PathBeneath::new(
            fd, access,
        )))
    });
    let created = created.add_rules(rules).map_err(|e| fail(&e))?;
    let status = created.restrict_self().map_err(|e| fail(&e))?;
    if status.ruleset != RulesetStatus::FullyEnforced {
        return Err(format!(
            "landlock: the kernel enforced the rules only partly ({:?})",
            status.ruleset
        ));
    }
    Ok(())
}

/// The paths to grant reading, with `true` for a folder on the way to a
/// hidden path (listing only).
fn read_grants(hidden: &[PathBuf]) -> Vec<(PathBuf, bool)> {
    let mut out = Vec::new();
    walk(Path::new("/"), hidden, &mut out);
    out
}

/// Whether granting `path` (which may be a link, or a second name of a
/// file) would grant a hidden path: a link that leads into one, to one or
/// to a folder holding one, or a hard link to a hidden file. A grant
/// follows links, so the walk must not hand one out.
fn reaches_hidden(path: &Path, hidden: &[PathBuf]) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return true;
    };
    if meta.file_type().is_symlink() {
        let Ok(target) = path.canonicalize() else {
            // A dangling link grants nothing that exists now; a later
            // target is checked when the next command starts.
            return false;
        };
        return hidden
            .iter()
            .any(|h| target.starts_with(h) || h.starts_with(&target));
    }
    meta.is_file()
        && meta.nlink() > 1
        && hidden.iter().any(|h| {
            std::fs::metadata(h).is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
        })
}

fn walk(dir: &Path, hidden: &[PathBuf], out: &mut Vec<(PathBuf, bool)>) {
    if hidden.iter().any(|h| h == dir) {
        return;
    }
    if !hidden.iter().any(|h| h.starts_with(dir)) {
        out.push((dir.to_path_buf(), false));
        return;
    }
    out.push((dir.to_path_buf(), true));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if hidden.contains(&path) || (!is_dir && reaches_hidden(&path, hidden)) {
            continue;
        }
        if is_dir {
            walk(&path, hidden, out);
        } else {
            out.push((path, false));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_grants_everything_but_the_hidden_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("home/.ssh")).unwrap();
        std::fs::create_dir_all(root.join("home/code")).unwrap();
        std::fs::write(root.join("home/.netrc"), "x").unwrap();
        std::fs::write(root.join("home/notes"), "x").unwrap();
        let hidden = vec![root.join("home/.ssh"), root.join("home/.netrc")];
        let mut out = Vec::new();
        walk(&root, &hidden, &mut out);
        assert!(out.contains(&(root.join("home"), true)));
        assert!(out.contains(&(root.join("home/code"), false)));
        assert!(out.contains(&(root.join("home/notes"), false)));
        assert!(!out.iter().any(|(p, _)| hidden.contains(p)));
    }

    #[test]
    fn links_into_hidden_paths_and_second_names_of_hidden_files_are_not_granted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("home/.ssh")).unwrap();
        std::fs::write(root.join("home/.ssh/key"), "x").unwrap();
        std::fs::write(root.join("home/.netrc"), "x").unwrap();
        std::fs::write(root.join("home/plain"), "x").unwrap();
        let link = |target: &str, name: &str| {
            std::os::unix::fs::symlink(root.join(target), root.join("home").join(name)).unwrap();
        };
        link("home/.ssh", "sshlink");
        link("home/.ssh/key", "keylink");
        link("home", "homelink");
        link("home/plain", "plainlink");
        std::fs::hard_link(root.join("home/.netrc"), root.join("home/netrc-again")).unwrap();
        let hidden = vec![root.join("home/.ssh"), root.join("home/.netrc")];
        let mut out = Vec::new();
        walk(&root, &hidden, &mut out);
        let granted = |name: &str| out.iter().any(|(p, _)| *p == root.join("home").join(name));
        for name in ["sshlink", "keylink", "homelink", "netrc-again"] {
            assert!(!granted(name), "{name}: {out:?}");
        }
        assert!(granted("plain") && granted("plainlink"), "{out:?}");
    }
}
