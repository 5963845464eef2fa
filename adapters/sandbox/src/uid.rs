//! Run by root, the command leaves uid 0: it runs as [`CONFINED_UID`] in a
//! user namespace of its own, where it still looks like root.
//!
//! bubblewrap started by root gives the helper the host's user namespace
//! (with the [`CAPABILITIES`] only). The helper then, before anything of
//! the command runs:
//! 1. makes a user namespace whose uid and gid 0 stand for
//!    [`CONFINED_UID`] outside (and every other id below it for itself), by
//!    a short-lived child whose maps it writes;
//! 2. clones each visible mount of the sandboxed tree on its own (the
//!    kernel idmaps only the root of a detached clone) and idmaps each real
//!    file system among them through that namespace, so that a file owned
//!    by root on disk belongs to the command: it writes the workspace as
//!    before, and what it creates is owned by root on disk;
//! 3. puts the clones together in place of the tree (`pivot_root`);
//!    the helper's own read-only and hidden mounts follow
//!    ([`crate::mounts`]);
//! 4. makes `/proc` read-only (bubblewrap cannot: the maps are written
//!    through it first);
//! 5. enters the namespace as its uid and gid 0.
//!
//! Outside, the command is then an ordinary uid with no capability, which
//! owns no host setting and no process of the host: whatever a later mount
//! misses, the kernel's own permission checks still stop it.
//!
//! Invariants:
//! - where the kernel refuses a step (no idmapped mounts for one of the
//!   file systems, user namespaces off), the command keeps uid 0 with no
//!   capability in a namespace mapping only 0 to 0, as without this step,
//!   and `cox doctor` says which uid the command has outside;
//! - `/proc` is read-only whatever happened before; failing that, nothing
//!   runs;
//! - nothing here widens access: a clone keeps every mount's flags
//!   (read-only stays read-only), and the idmapping only renames owners.

use std::fs;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use crate::mounts::c_path;

/// The uid (and gid) a root-started command has outside its namespace:
/// `nobody`, which every system (and every container's id map) has.
pub const CONFINED_UID: u32 = 65534;

/// The capabilities the helper needs for this, which bubblewrap leaves it
/// when root starts it.
/// (`CAP_SETFCAP` because a map that names the host's root needs it,
/// `CAP_CHOWN` to hand a fresh tmpfs over where it cannot be idmapped,
/// `CAP_DAC_READ_SEARCH` to reach every path it mounts on: once the tree
/// is idmapped, root's own folders belong to the command's uid, a mount may
/// sit below another user's private folder, and a command may have taken
/// the search bit off a folder above a path to hide, in an earlier call.)
pub const CAPABILITIES: [&str; 6] = [
    "CAP_SYS_ADMIN",
    "CAP_SETUID",
    "CAP_SETGID",
    "CAP_SETFCAP",
    "CAP_CHOWN",
    "CAP_DAC_READ_SEARCH",
];

const MOUNT_ATTR_IDMAP: u64 = 0x0010_0000;

/// File systems that are not files on a disk: never idmapped, and never
/// a reason to give up the uid (none of them is written by ownership).
const PSEUDO: &[&str] = &[
    "proc",
    "sysfs",
    "devpts",
    "devtmpfs",
    "mqueue",
    "cgroup",
    "cgroup2",
    "securityfs",
    "debugfs",
    "tracefs",
    "bpf",
    "pstore",
    "configfs",
    "fusectl",
    "hugetlbfs",
    "binfmt_misc",
    "autofs",
    "efivarfs",
    "nsfs",
    "selinuxfs",
    "rpc_pipefs",
];

fn os_error(what: &str) -> String {
    format!("{what}: {}", io::Error::last_os_error())
}

/// What steps 1 to 3 left for the last two.
pub(crate) struct Leaving {
    ns: Option<OwnedFd>,
    confined: bool,
}

/// Steps 1 to 3 above: the namespace made and the idmapped tree in place,
/// or, where the kernel refuses either, a namespace mapping 0 to 0 (none
/// where user namespaces are off). The helper's own read-only and hidden
/// mounts go after this (binds of an idmapped mount are idmapped too).
///
/// # Errors
/// The idmapped tree could not be put in place: nothing may run.
pub(crate) fn idmap_root() -> Result<Leaving, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the folder: {e}"))?;
    let confined =
        confined_namespace().and_then(|ns| idmapped_tree(ns.as_fd()).map(|tree| (ns, tree)));
    Ok(match confined {
        Ok((ns, tree)) => {
            put_in_place(&tree, &cwd)?;
            Leaving {
                ns: Some(ns),
                confined: true,
            }
        }
        // uid 0 keeps a namespace of its own (no capability over the
        // host's), as bubblewrap would have given it.
        Err(_) => Leaving {
            ns: namespace("0 0 1\n").ok(),
            confined: false,
        },
    })
}

impl Leaving {
    /// Steps 4 and 5: `/proc` read-only, then the namespace entered.
    /// `Ok(true)` when the command runs as [`CONFINED_UID`] outside.
    ///
    /// # Errors
    /// Either step failed: nothing may run.
    pub(crate) fn finish(self) -> Result<bool, String> {
        read_only_proc()?;
        if let Some(ns) = &self.ns {
            enter(ns)?;
        }
        Ok(self.confined)
    }
}

/// The namespace the command runs in: its 0 is [`CONFINED_UID`] outside,
/// the ids from 1 up to it are themselves (so the owners of other users'
/// files read right).
fn confined_namespace() -> Result<OwnedFd, String> {
    let u = CONFINED_UID;
    namespace(&format!("0 {u} 1\n1 1 {}\n", u - 1))
}

/// A new user namespace with `map` as both its uid and gid map, held by a
/// descriptor: a child makes it and waits while this process writes the
/// maps, then goes.
fn namespace(map: &str) -> Result<OwnedFd, String> {
    let (ready_read, ready_write) = pipe()?;
    let (done_read, done_write) = pipe()?;
    // SAFETY: this process is single-threaded; the child only makes
    // system calls before `_exit`.
    let child = unsafe { libc::fork() };
    if child == -1 {
        return Err(os_error("cannot fork"));
    }
    if child == 0 {
        // SAFETY: plain system calls on descriptors this child owns.
        unsafe {
            // Only this process's copy of the writing end must hold the
            // pipe open, or the wait below never ends.
            libc::close(done_write.as_raw_fd());
            let made = libc::unshare(libc::CLONE_NEWUSER) == 0;
            let byte = [u8::from(made)];
            libc::write(ready_write.as_raw_fd(), byte.as_ptr().cast(), 1);
            let mut wait = [0u8; 1];
            libc::read(done_read.as_raw_fd(), wait.as_mut_ptr().cast(), 1);
            libc::_exit(0);
        }
    }
    drop(ready_write);
    drop(done_read);
    let mut byte = [0u8; 1];
    // SAFETY: reading one byte into a local buffer.
    let read = unsafe { libc::read(ready_read.as_raw_fd(), byte.as_mut_ptr().cast(), 1) };
    let made = if read == 1 && byte[0] == 1 {
        write_maps(child, map)
    } else {
        Err("user namespaces are off".to_owned())
    };
    drop(done_write);
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(child, std::ptr::null_mut(), 0) };
    made
}

fn write_maps(child: libc::pid_t, map: &str) -> Result<OwnedFd, String> {
    let proc = PathBuf::from(format!("/proc/{child}"));
    let write = |name: &str, text: &str| {
        fs::write(proc.join(name), text).map_err(|e| format!("cannot write {name}: {e}"))
    };
    write("setgroups", "deny")?;
    write("uid_map", map)?;
    write("gid_map", map)?;
    let path = c_path(&proc.join("ns/user"))?;
    // SAFETY: a NUL-terminated path.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd == -1 {
        return Err(os_error("cannot hold the user namespace"));
    }
    // SAFETY: a descriptor just opened and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn pipe() -> Result<(OwnedFd, OwnedFd), String> {
    let mut fds = [0; 2];
    // SAFETY: a valid two-int array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(os_error("cannot make a pipe"));
    }
    // SAFETY: two descriptors just made and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// One mount of this namespace, as `/proc/self/mountinfo` lists it.
#[derive(Debug, PartialEq, Eq)]
struct Mount {
    id: u64,
    point: PathBuf,
    fstype: String,
    writable: bool,
}

/// Parses `/proc/self/mountinfo`: `ID PARENT MAJ:MIN ROOT POINT OPTIONS
/// [TAGS…] - FSTYPE SOURCE SUPER`, where a path escapes space, tab,
/// newline and backslash as octal.
fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split(' ');
            let id = words.next()?.parse().ok()?;
            let point = unescape(words.nth(3)?);
            let writable = words.next()?.split(',').any(|o| o == "rw");
            let mut rest = words.skip_while(|w| *w != "-");
            rest.next()?;
            let fstype = rest.next()?.to_owned();
            Some(Mount {
                id,
                point,
                fstype,
                writable,
            })
        })
        .collect()
}

fn unescape(word: &str) -> PathBuf {
    let bytes = word.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        if let Some(digits) = octal {
            let value = digits.iter().fold(0u32, |v, d| v * 8 + u32::from(d - b'0'));
            out.push(u8::try_from(value).unwrap_or(b'?'));
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

/// The id of the mount a lookup of `path` lands on, if it can be looked up.
fn visible_mount(path: &Path) -> Option<u64> {
    let path = c_path(path).ok()?;
    // SAFETY: a zeroed statx is a valid out-parameter.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a valid out-parameter.
    let done = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW | libc::AT_NO_AUTOMOUNT,
            libc::STATX_MNT_ID,
            &raw mut stx,
        )
    };
    (done == 0 && stx.stx_mask & libc::STATX_MNT_ID != 0).then_some(stx.stx_mnt_id)
}

/// The whole tree again, mount by mount, each visible mount cloned on
/// its own (the kernel idmaps only the root of a detached clone) and,
/// where it is a file system on disk or a tmpfs, idmapped through `ns`;
/// then put in place of the old one. A writable mount that cannot be
/// idmapped is an error (the command could not write there), but for the
/// fresh tmpfs bubblewrap made, which is handed over by ownership
/// instead; so is the root's, or one holding `$HOME` (root's private home
/// would go unreadable); another read-only one stays as it is (its files
/// read as other users' do). Every mount is cloned or the whole step fails: a mount left
/// out would uncover what it hid.
fn idmapped_tree(ns: BorrowedFd<'_>) -> Result<Vec<(PathBuf, OwnedFd)>, String> {
    let text = fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read the mount table: {e}"))?;
    let mut mounts: Vec<Mount> = parse_mountinfo(&text)
        .into_iter()
        .filter(|m| visible_mount(&m.point) == Some(m.id))
        .collect();
    // Parents before children (a visible mount's parent is shallower).
    mounts.sort_by_key(|m| m.point.components().count());
    if mounts.first().is_none_or(|m| m.point != Path::new("/")) {
        return Err("the root is not a visible mount".to_owned());
    }
    let idmap = crate::mounts::MountAttr {
        attr_set: MOUNT_ATTR_IDMAP,
        attr_clr: 0,
        propagation: libc::MS_PRIVATE,
        userns_fd: u64::try_from(ns.as_raw_fd()).unwrap_or(u64::MAX),
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut clones = Vec::with_capacity(mounts.len());
    for mount in mounts {
        let clone = clone_mount(&mount.point)?;
        if !PSEUDO.contains(&mount.fstype.as_str())
            && let Err(e) = crate::mounts::set_attr(&clone, &idmap)
        {
            let fresh =
                mount.fstype == "tmpfs" && FRESH.iter().any(|f| mount.point == Path::new(f));
            // Root's home would go unreadable (its toolchains with it).
            let needed = mount.writable
                || mount.point == Path::new("/")
                || home.as_ref().is_some_and(|h| h.starts_with(&mount.point));
            if fresh && mount.writable {
                hand_over(&mount.point)?;
            } else if needed {
                return Err(format!(
                    "cannot idmap {} ({}): {e}",
                    mount.point.display(),
                    mount.fstype
                ));
            }
        }
        clones.push((mount.point, clone));
    }
    Ok(clones)
}

/// A detached clone of the mount at `point` alone.
fn clone_mount(point: &Path) -> Result<OwnedFd, String> {
    crate::mounts::clone_of(&crate::mounts::place(point)?, false)
        .map_err(|e| format!("cannot clone {}: {e}", point.display()))
}

/// The tmpfs bubblewrap makes for this command alone, which a kernel
/// without idmapped tmpfs can hand over by ownership instead.
const FRESH: [&str; 2] = ["/tmp", "/dev"];

/// Gives the fresh tmpfs at `point` (and `/dev/shm` in `/dev`) to the
/// command's uid: it is the command's own, and seen by nobody else.
fn hand_over(point: &Path) -> Result<(), String> {
    let target = if point == Path::new("/dev") {
        point.join("shm")
    } else {
        point.to_path_buf()
    };
    if target.is_dir() {
        std::os::unix::fs::chown(&target, Some(CONFINED_UID), Some(CONFINED_UID))
            .map_err(|e| format!("cannot hand {} over: {e}", target.display()))?;
    }
    Ok(())
}

/// `move_mount` of the detached `mount` onto `path` (relative to `dir`).
fn attach(mount: &OwnedFd, dir: libc::c_int, path: &Path) -> Result<(), String> {
    let target = c_path(path)?;
    // SAFETY: the clone's descriptor with an empty path, and a
    // NUL-terminated target.
    let moved = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            mount.as_raw_fd(),
            c"".as_ptr(),
            dir,
            target.as_ptr(),
            crate::mounts::MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    if moved == 0 {
        Ok(())
    } else {
        Err(os_error(&format!("cannot mount {} again", path.display())))
    }
}

/// Puts the clones in place of the current root (the root clone on `/`,
/// the others, parents first, at their places inside it), drops the old
/// root, and returns to `cwd`.
fn put_in_place(clones: &[(PathBuf, OwnedFd)], cwd: &Path) -> Result<(), String> {
    let old = fs::File::open("/").map_err(|e| format!("cannot open the root: {e}"))?;
    let Some(((_, root), rest)) = clones.split_first() else {
        return Err("nothing to mount".to_owned());
    };
    attach(root, libc::AT_FDCWD, Path::new("/"))?;
    for (point, clone) in rest {
        let relative = point.strip_prefix("/").unwrap_or(point);
        attach(clone, root.as_raw_fd(), relative)?;
    }
    // SAFETY: plain system calls on descriptors and NUL-terminated paths.
    unsafe {
        if libc::fchdir(root.as_raw_fd()) != 0 {
            return Err(os_error("cannot enter the idmapped tree"));
        }
        if libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) != 0 {
            return Err(os_error("cannot pivot to the idmapped tree"));
        }
        if libc::fchdir(old.as_raw_fd()) != 0 {
            return Err(os_error("cannot reach the old root"));
        }
        libc::mount(
            std::ptr::null(),
            c".".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        );
        if libc::umount2(c".".as_ptr(), libc::MNT_DETACH) != 0 {
            return Err(os_error("cannot drop the old root"));
        }
    }
    drop(old);
    let cwd = c_path(cwd)?;
    // SAFETY: a NUL-terminated path.
    if unsafe { libc::chdir(cwd.as_ptr()) } != 0 {
        return Err(os_error("cannot return to the folder"));
    }
    Ok(())
}

/// Remounts `/proc` read-only, keeping the flags it was mounted with.
fn read_only_proc() -> Result<(), String> {
    let flags = libc::MS_REMOUNT
        | libc::MS_BIND
        | libc::MS_RDONLY
        | libc::MS_NOSUID
        | libc::MS_NODEV
        | libc::MS_NOEXEC;
    // SAFETY: NUL-terminated target; a remount takes no source or data.
    let done = unsafe {
        libc::mount(
            std::ptr::null(),
            c"/proc".as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        )
    };
    if done != 0 {
        return Err(os_error("cannot make /proc read-only"));
    }
    Ok(())
}

/// Drops the supplementary groups, enters `ns` and becomes its uid and gid
/// 0. The capabilities that come with entering are given up afterwards,
/// with the rest (`helper::drop_capabilities`).
fn enter(ns: &OwnedFd) -> Result<(), String> {
    // SAFETY: plain system calls; setgroups with an empty list.
    unsafe {
        if libc::setgroups(0, std::ptr::null()) != 0 {
            return Err(os_error("cannot drop the supplementary groups"));
        }
        if libc::setns(ns.as_raw_fd(), libc::CLONE_NEWUSER) != 0 {
            return Err(os_error("cannot enter the command's user namespace"));
        }
        if libc::setresgid(0, 0, 0) != 0 || libc::setresuid(0, 0, 0) != 0 {
            return Err(os_error("cannot take the namespace's uid 0"));
        }
        // A change of uid clears the parent-death signal; set it again.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mount_table_gives_ids_points_and_types_with_escapes_undone() {
        let text = "\
22 1 0:21 / / ro,relatime master:1 - ext4 /dev/vda rw
30 22 0:5 / /proc rw,nosuid shared:3 master:9 - proc proc rw
31 22 8:1 /src /work/my\\040repo rw - ext4 /dev/vda rw
";
        let mounts = parse_mountinfo(text);
        assert_eq!(
            mounts,
            vec![
                Mount {
                    id: 22,
                    point: "/".into(),
                    fstype: "ext4".into(),
                    writable: false,
                },
                Mount {
                    id: 30,
                    point: "/proc".into(),
                    fstype: "proc".into(),
                    writable: true,
                },
                Mount {
                    id: 31,
                    point: "/work/my repo".into(),
                    fstype: "ext4".into(),
                    writable: true,
                },
            ]
        );
    }

    #[test]
    fn a_backslash_not_followed_by_three_octal_digits_stays() {
        assert_eq!(unescape("a\\b\\13"), PathBuf::from("a\\b\\13"));
        assert_eq!(unescape("\\134x"), PathBuf::from("\\x"));
    }
}
