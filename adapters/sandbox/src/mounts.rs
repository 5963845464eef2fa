//! The read-only and hidden paths, mounted by the helper inside
//! bubblewrap's namespaces rather than by bubblewrap (run by root only).
//!
//! bubblewrap re-reads `/proc/self/mountinfo` for every read-only bind it
//! makes (to find the sub-mounts to make read-only too), so each costs
//! about 0.3 ms and a hundred deny rules cost 30 ms a command. Here each is
//! a handful of system calls (tens of µs): the helper starts with
//! `CAP_SYS_ADMIN`, mounts, and gives it up with every other capability
//! before the seccomp filter and the command.
//!
//! Every mount goes through one descriptor of the path it covers, opened
//! once: the clone that is mounted is taken from it and attached back onto
//! it. Resolving the path twice (a source, then a target, as `mount(2)`
//! does) would let another confined process of the session swap a link in
//! between and have a secret file bound where a protected one stood.
//!
//! Invariants:
//! - a read-only path is a clone of itself without its sub-mounts: nothing
//!   mounted below it can stay writable;
//! - a hidden folder becomes an empty read-only tmpfs (one, cloned onto
//!   each hidden folder), a hidden file `/dev/null`, read-only;
//! - the helper looks paths up with `CAP_DAC_READ_SEARCH`: no folder mode a
//!   command set (`chmod 000` on a parent, in an earlier call) hides a
//!   path from it; only a path that does not exist is skipped;
//! - every other failure is an error: a command never runs with a path the
//!   policy covers left as it was.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

const OPEN_TREE_CLONE: libc::c_uint = 1;
pub(crate) const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const MOUNT_ATTR_NOEXEC: u64 = 0x8;
const FSCONFIG_SET_STRING: libc::c_uint = 1;
const FSOPEN_CLOEXEC: libc::c_uint = 1;
const FSMOUNT_CLOEXEC: libc::c_uint = 1;
const FSCONFIG_CMD_CREATE: libc::c_uint = 6;

/// `struct mount_attr`, as `mount_setattr` reads it.
#[repr(C)]
pub(crate) struct MountAttr {
    pub(crate) attr_set: u64,
    pub(crate) attr_clr: u64,
    pub(crate) propagation: u64,
    pub(crate) userns_fd: u64,
}

pub(crate) fn c_path(path: &Path) -> Result<CString, String> {
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

/// A descriptor from a system call's return, or the error it set.
fn owned(fd: libc::c_long) -> io::Result<OwnedFd> {
    match i32::try_from(fd) {
        // SAFETY: a descriptor the kernel just returned, owned by nobody else.
        Ok(fd) if fd >= 0 => Ok(unsafe { OwnedFd::from_raw_fd(fd) }),
        _ => Err(io::Error::last_os_error()),
    }
}

/// `path` opened as a place (`O_PATH`), following links: the one lookup
/// every mount on it goes through.
pub(crate) fn place(path: &Path) -> Result<OwnedFd, String> {
    let c = c_path(path)?;
    // SAFETY: a NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    owned(fd.into()).map_err(|e| format!("cannot open {}: {e}", path.display()))
}

/// A detached clone of the mount at `fd` (its sub-mounts too when
/// `recursive`).
pub(crate) fn clone_of(fd: &OwnedFd, recursive: bool) -> io::Result<OwnedFd> {
    let mut flags = OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint;
    flags |= libc::AT_EMPTY_PATH as libc::c_uint;
    if recursive {
        flags |= libc::AT_RECURSIVE as libc::c_uint;
    }
    // SAFETY: a descriptor with an empty path; flags as open_tree(2) says.
    owned(unsafe { libc::syscall(libc::SYS_open_tree, fd.as_raw_fd(), c"".as_ptr(), flags) })
}

/// Sets the flags `attr` on the detached clone `mount`.
fn set(mount: &OwnedFd, attr: u64) -> io::Result<()> {
    set_attr(
        mount,
        &MountAttr {
            attr_set: attr,
            attr_clr: 0,
            propagation: 0,
            userns_fd: 0,
        },
    )
}

/// `mount_setattr` on the detached clone `mount` itself.
pub(crate) fn set_attr(mount: &OwnedFd, attr: &MountAttr) -> io::Result<()> {
    // SAFETY: an empty path on a descriptor, a mount_attr of the size given.
    let done = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            mount.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            std::ptr::from_ref(attr),
            std::mem::size_of::<MountAttr>(),
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Attaches the detached `mount` onto the place `onto`.
fn attach(mount: &OwnedFd, onto: &OwnedFd) -> io::Result<()> {
    // SAFETY: two descriptors with empty paths.
    let done = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            mount.as_raw_fd(),
            c"".as_ptr(),
            onto.as_raw_fd(),
            c"".as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Binds `path` onto itself, read-only.
fn bind_read_only(path: &Path) -> Result<(), String> {
    let at = place(path)?;
    let clone = clone_of(&at, false).map_err(|_| failed("bind", path))?;
    set(&clone, MOUNT_ATTR_RDONLY).map_err(|_| failed("make read-only", path))?;
    attach(&clone, &at).map_err(|_| failed("bind", path))
}

/// What hidden paths are covered with: `/dev/null` for files, and one
/// empty read-only tmpfs for folders, made when the first one needs it.
struct Covers {
    null: OwnedFd,
    empty: Option<OwnedFd>,
}

impl Covers {
    fn new() -> Result<Covers, String> {
        let null = place(Path::new("/dev/null"))?;
        let null = clone_of(&null, false).map_err(|_| failed("clone", Path::new("/dev/null")))?;
        set(&null, MOUNT_ATTR_RDONLY)
            .map_err(|_| failed("make read-only", Path::new("/dev/null")))?;
        Ok(Covers { null, empty: None })
    }

    /// The empty tmpfs, made on first use.
    fn empty(&mut self) -> Result<&OwnedFd, String> {
        if self.empty.is_none() {
            self.empty =
                Some(empty_tmpfs().map_err(|e| format!("cannot make an empty tmpfs: {e}"))?);
        }
        self.empty
            .as_ref()
            .ok_or_else(|| "no empty tmpfs".to_owned())
    }
}

/// A new tmpfs of no size, read-only, never attached: what hidden folders
/// are covered with (a clone each).
fn empty_tmpfs() -> io::Result<OwnedFd> {
    // SAFETY: a NUL-terminated name and a flag.
    let fs = owned(unsafe { libc::syscall(libc::SYS_fsopen, c"tmpfs".as_ptr(), FSOPEN_CLOEXEC) })?;
    for (key, value) in [(c"size", c"0"), (c"mode", c"0555")] {
        // SAFETY: NUL-terminated key and value on the fs context.
        let done = unsafe {
            libc::syscall(
                libc::SYS_fsconfig,
                fs.as_raw_fd(),
                FSCONFIG_SET_STRING,
                key.as_ptr(),
                value.as_ptr(),
                0,
            )
        };
        if done != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    // SAFETY: the create command takes no key or value.
    let created = unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            fs.as_raw_fd(),
            FSCONFIG_CMD_CREATE,
            std::ptr::null::<libc::c_char>(),
            std::ptr::null::<libc::c_void>(),
            0,
        )
    };
    if created != 0 {
        return Err(io::Error::last_os_error());
    }
    let attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
    // SAFETY: the fs context's descriptor and flags.
    owned(unsafe {
        libc::syscall(
            libc::SYS_fsmount,
            fs.as_raw_fd(),
            FSMOUNT_CLOEXEC,
            attrs as libc::c_uint,
        )
    })
}

/// Covers `path` with an empty read-only folder, or `/dev/null`.
fn hide(path: &Path, covers: &mut Covers) -> Result<(), String> {
    let at = place(path)?;
    // SAFETY: a zeroed stat is a valid out-parameter.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a descriptor and a valid out-parameter.
    if unsafe { libc::fstat(at.as_raw_fd(), &raw mut stat) } != 0 {
        return Err(failed("look at", path));
    }
    let cover = if stat.st_mode & libc::S_IFMT == libc::S_IFDIR {
        covers.empty()?
    } else {
        &covers.null
    };
    let clone = clone_of(cover, false).map_err(|_| failed("hide", path))?;
    attach(&clone, &at).map_err(|_| failed("hide", path))
}

/// Pins the folders on the way to them, then mounts the read-only paths,
/// then the hidden ones (a later mount narrows an earlier one). A path that
/// does not exist has nothing to protect and is skipped.
///
/// # Errors
/// A path that could not be looked up (other than not existing), or a
/// mount the kernel refused.
pub(crate) fn apply(
    pinned: &[PathBuf],
    read_only: &[PathBuf],
    hidden: &[PathBuf],
) -> Result<(), String> {
    // Folders bound onto themselves (with what is mounted below them),
    // writable, so none can be renamed.
    for dir in pinned {
        if exists(dir)? {
            let at = place(dir)?;
            let clone = clone_of(&at, true).map_err(|_| failed("pin", dir))?;
            attach(&clone, &at).map_err(|_| failed("pin", dir))?;
        }
    }
    for path in read_only {
        if exists(path)? {
            bind_read_only(path)?;
        }
    }
    if hidden.is_empty() {
        return Ok(());
    }
    let mut covers = Covers::new()?;
    for path in hidden {
        if exists(path)? {
            hide(path, &mut covers)?;
        }
    }
    Ok(())
}

/// Whether there is something at `path` to cover.
fn exists(path: &Path) -> Result<bool, String> {
    match path.symlink_metadata() {
        Ok(_) => Ok(true),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(false)
        }
        Err(e) => Err(format!("cannot look up {}: {e}", path.display())),
    }
}
