//! The read-only and hidden paths, mounted by the helper inside
//! bubblewrap's namespaces rather than by bubblewrap.
//!
//! bubblewrap re-reads `/proc/self/mountinfo` for every read-only bind it
//! makes (to find the sub-mounts to make read-only too), so each costs
//! about 0.3 ms and a hundred deny rules cost 30 ms a command. Here each is
//! two `mount` calls (about 13 µs): the helper starts with `CAP_SYS_ADMIN`
//! in the sandbox's own user namespace, mounts, and gives it up with every
//! other capability before the seccomp filter and the command.
//!
//! Invariants:
//! - a read-only path is bound without its sub-mounts (`MS_BIND` alone):
//!   nothing mounted below it can stay writable; where the kernel refuses
//!   that (a sub-mount it locked), the helper fails and nothing runs;
//! - the flags the kernel locked on the mount a path lies on (`nosuid`,
//!   `nodev`, `noexec`, the atime ones) are kept, as a user namespace
//!   must;
//! - a hidden folder becomes an empty read-only tmpfs (one, bound on each
//!   hidden folder), a hidden file `/dev/null` bound read-only;
//! - every failure is an error: a command never runs with a path the policy
//!   covers left as it was.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

fn c_path(path: &Path) -> Result<CString, String> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("{} holds a NUL byte", path.display()))
}

fn failed(what: &str, path: &Path) -> String {
    format!(
        "cannot {what} {}: {}",
        path.display(),
        io::Error::last_os_error()
    )
}

/// The mount flags a read-only remount of `path` must keep.
fn locked_flags(path: &CString) -> libc::c_ulong {
    // SAFETY: a zeroed statvfs is a valid out-parameter.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a valid out-parameter.
    if unsafe { libc::statvfs(path.as_ptr(), &raw mut stat) } != 0 {
        return 0;
    }
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    pairs
        .iter()
        .filter(|(st, _)| stat.f_flag & *st != 0)
        .fold(0, |flags, (_, ms)| flags | *ms)
}

/// `mount(source, target, NULL, flags, NULL)`: a bind (`MS_BIND`, with
/// `MS_REC` or `MS_REMOUNT` and the like).
fn bind(source: Option<&CString>, target: &CString, flags: libc::c_ulong) -> io::Result<()> {
    let source = source.map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: NUL-terminated paths (or a null source for a remount); no
    // file system type or data.
    let done = unsafe {
        libc::mount(
            source,
            target.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Binds `source` on `target` and makes the bind read-only.
fn bind_read_only(source: &Path, target: &Path) -> Result<(), String> {
    let (src, dst) = (c_path(source)?, c_path(target)?);
    bind(Some(&src), &dst, libc::MS_BIND).map_err(|_| failed("bind", target))?;
    let flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | locked_flags(&dst);
    bind(None, &dst, flags).map_err(|_| failed("make read-only", target))
}

/// Puts an empty read-only folder (or `/dev/null`) over `path`. The first
/// hidden folder gets a new read-only tmpfs (`empty` remembers it); every
/// later one a bind of that same empty tmpfs, which costs a third as much
/// and is as read-only (the tmpfs itself is).
fn hide(path: &Path, empty: &mut Option<std::path::PathBuf>) -> Result<(), String> {
    if !path.is_dir() {
        return bind_read_only(Path::new("/dev/null"), path);
    }
    let dst = c_path(path)?;
    if let Some(first) = empty {
        return bind(Some(&c_path(first)?), &dst, libc::MS_BIND).map_err(|_| failed("hide", path));
    }
    let (fstype, data) = (c"tmpfs", c"size=0,mode=0555");
    // SAFETY: NUL-terminated strings.
    let mounted = unsafe {
        libc::mount(
            fstype.as_ptr(),
            dst.as_ptr(),
            fstype.as_ptr(),
            libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            data.as_ptr().cast(),
        )
    };
    if mounted != 0 {
        return Err(failed("hide", path));
    }
    *empty = Some(path.to_path_buf());
    Ok(())
}

/// Pins the folders on the way to them, then mounts the read-only paths,
/// then the hidden ones (a later mount narrows an earlier one). A path that
/// does not exist has nothing to protect and is skipped; so is one the
/// helper cannot reach, which the command cannot reach either (the helper
/// looks paths up as the command's uid, or as a uid that can see more);
/// any other failure to look one up is an error.
///
/// # Errors
/// A mount the kernel refused.
pub(crate) fn apply(
    pinned: &[std::path::PathBuf],
    read_only: &[std::path::PathBuf],
    hidden: &[std::path::PathBuf],
) -> Result<(), String> {
    // Folders bound onto themselves, writable, so none can be renamed.
    for dir in pinned {
        if dir.is_dir() {
            let path = c_path(dir)?;
            bind(Some(&path), &path, libc::MS_BIND | libc::MS_REC)
                .map_err(|_| failed("pin", dir))?;
        }
    }
    for path in read_only {
        if exists(path)? {
            bind_read_only(path, path)?;
        }
    }
    let mut empty = None;
    for path in hidden {
        if exists(path)? {
            hide(path, &mut empty)?;
        }
    }
    Ok(())
}

/// Whether there is something at `path` for the command to reach.
fn exists(path: &Path) -> Result<bool, String> {
    match path.symlink_metadata() {
        Ok(_) => Ok(true),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound
                    | io::ErrorKind::PermissionDenied
                    | io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(false)
        }
        Err(e) => Err(format!("cannot look up {}: {e}", path.display())),
    }
}
