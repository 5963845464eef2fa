//! The `__sandbox-exec` mode: the last step before a confined command runs.
//!
//! It lives in two binaries: `cox-sandbox-exec`, a small one installed
//! beside `cox` that does nothing else (it starts in about a millisecond
//! less than the full binary, whose relocations dominate a cold start), and
//! every binary that runs sessions, as a fallback when the small one is
//! absent ([`program`] picks). bwrap (or, without it, the OS sandbox
//! directly) starts `HELPER __sandbox-exec SPEC -- PROGRAM ARGS…`; this mode, still single
//! threaded and before any runtime exists, applies what the spec asks and
//! then becomes the command:
//! 1. starts the proxy relay when the network goes through cox's proxy
//!    (a child listening on loopback inside the namespace, relaying each
//!    connection to the proxy's Unix socket);
//! 2. under bwrap, mounts the read-only and hidden paths ([`crate::mounts`]),
//!    and, started by root, moves the command off uid 0 ([`crate::uid`]);
//!    without bwrap, applies Landlock rules to do the file system;
//! 3. gives up every capability, then installs the seccomp filter
//!    ([`crate::seccomp`]);
//! 4. execs the command, or, when it must supervise (no pid namespace to
//!    end the command's descendants), forks it and stays its reaper.
//!
//! Invariants: every failure before the command runs prints one line that
//! starts `cox sandbox:` and exits 126, so a command never runs with less
//! confinement than the spec asked; a supervised command and everything it
//! started is killed as soon as the lifeline (a pipe cox holds) closes, which
//! happens when the call ends or when cox dies, however it dies.

use std::ffi::{CString, OsString};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The word that selects this mode, as the binary's first argument.
pub const HELPER_ARG: &str = "__sandbox-exec";

/// Where the proxy's socket is bound inside a bwrap namespace.
pub const PROXY_SOCKET_INSIDE: &str = "/tmp/.cox-proxy.sock";

/// Exit status when the sandbox could not be set up (as a shell's "found
/// but could not run").
pub const SETUP_FAILED: i32 = 126;

/// The small helper binary's name, looked for beside the running one.
pub const HELPER_BINARY: &str = "cox-sandbox-exec";

/// The program to start as the helper: `cox-sandbox-exec` beside the
/// running binary when it is there, else the running binary itself (which
/// must call [`run_if_asked`] first thing in `main`).
#[must_use]
pub fn program() -> PathBuf {
    let Ok(exe) = std::env::current_exe() else {
        return PathBuf::from("cox");
    };
    let small = exe.with_file_name(HELPER_BINARY);
    if small.is_file() { small } else { exe }
}

/// What the helper applies, passed as one JSON argument.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HelperSpec {
    /// Refuse every socket but `AF_UNIX`.
    pub network_off: bool,
    /// Relay a loopback proxy port to this Unix socket, and point the
    /// proxy variables at it.
    pub proxy_socket: Option<PathBuf>,
    /// File system rules to apply with Landlock (no bwrap).
    pub landlock: Option<LandlockSpec>,
    /// Stay as the command's reaper, ending its whole tree when `lifeline`
    /// (an inherited file descriptor) reads EOF.
    pub lifeline: Option<i32>,
    /// Refuse `AF_UNIX` sockets too (Landlock cannot hide a socket file,
    /// so an agent, a session bus or a terminal multiplexer would be in
    /// reach); connected pairs still work.
    #[serde(default)]
    pub unix_off: bool,
    /// Paths to bind read-only, then paths to hide, inside bubblewrap's
    /// namespaces (which leave the helper `CAP_SYS_ADMIN` there for it):
    /// see [`crate::mounts`].
    #[serde(default)]
    pub pinned: Vec<PathBuf>,
    #[serde(default)]
    pub read_only: Vec<PathBuf>,
    #[serde(default)]
    pub hidden: Vec<PathBuf>,
    /// Started by root in the host's user namespace (bubblewrap run by
    /// root): make `/proc` read-only and move the command off uid 0
    /// ([`crate::uid`]).
    #[serde(default)]
    pub host_root: bool,
}

/// The Landlock half of a policy: read everything but `hidden`, write only
/// `writable`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LandlockSpec {
    pub writable: Vec<PathBuf>,
    pub hidden: Vec<PathBuf>,
}

/// Runs the helper mode if `args` (the whole argv) asks for it; returns
/// only when it does not.
pub fn run_if_asked() {
    let mut args = std::env::args_os();
    let _program = args.next();
    if args.next().as_deref() != Some(std::ffi::OsStr::new(HELPER_ARG)) {
        return;
    }
    let rest: Vec<OsString> = args.collect();
    let code = match helper(&rest) {
        Ok(never) => match never {},
        Err(why) => {
            let _ = writeln!(io::stderr(), "cox sandbox: {why}");
            SETUP_FAILED
        }
    };
    std::process::exit(code);
}

enum Never {}

fn helper(args: &[OsString]) -> Result<Never, String> {
    let (spec, command) = match args {
        [spec, dashes, command @ ..] if dashes == "--" && !command.is_empty() => (spec, command),
        _ => return Err(format!("usage: cox {HELPER_ARG} SPEC -- PROGRAM [ARGS…]")),
    };
    let spec: HelperSpec = serde_json::from_slice(spec.as_bytes())
        .map_err(|e| format!("the sandbox spec is not valid: {e}"))?;
    if spec.lifeline.is_none() {
        // Under bwrap: end with our parent, whatever happens to it.
        // SAFETY: prctl with integer arguments only.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    }
    let leaving = if spec.host_root {
        Some(crate::uid::idmap_root()?)
    } else {
        None
    };
    if !spec.pinned.is_empty() || !spec.read_only.is_empty() || !spec.hidden.is_empty() {
        crate::mounts::apply(&spec.pinned, &spec.read_only, &spec.hidden)?;
    }
    if let Some(leaving) = leaving {
        leaving.finish()?;
    }
    // Last, so that the relay is what the command is: its uid, its tree,
    // no capability.
    if let Some(socket) = &spec.proxy_socket {
        let url = start_relay(socket)?;
        for var in [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "http_proxy",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
        ] {
            // SAFETY: single-threaded: no other thread reads the environment.
            unsafe { std::env::set_var(var, &url) };
        }
        for var in ["NO_PROXY", "no_proxy"] {
            // SAFETY: as above.
            unsafe { std::env::remove_var(var) };
        }
    }
    if let Some(landlock) = &spec.landlock {
        crate::landlock::restrict(landlock)?;
    }
    drop_capabilities()?;
    let argv = command
        .iter()
        .map(|a| CString::new(a.as_bytes()).map_err(|_| "an argument holds a NUL byte".to_owned()))
        .collect::<Result<Vec<_>, _>>()?;
    match spec.lifeline {
        None => {
            crate::seccomp::install(spec.network_off, spec.unix_off)?;
            exec(&argv)
        }
        Some(fd) => supervise(fd, (spec.network_off, spec.unix_off), &argv),
    }
}

/// Gives up every capability for good: the bounding set (so an `exec` as
/// root grants none back), the ambient set, and the effective, permitted
/// and inheritable sets. Under bubblewrap there are none left to give up;
/// under Landlock, run by root, this is what keeps the command from the
/// host's settings (`hostname`, the clock, network devices, other
/// processes' limits). The seccomp filter that follows sets
/// `PR_SET_NO_NEW_PRIVS`, so a set-user-ID program grants nothing either.
fn drop_capabilities() -> Result<(), String> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    for cap in 0..64 {
        // SAFETY: prctl with integer arguments only; a capability this
        // process cannot drop (no CAP_SETPCAP) or that does not exist
        // answers an error, which is fine: it is not held.
        unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
    }
    // SAFETY: as above.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let none = [Data::default(); 2];
    // SAFETY: a version 3 header and two data structs, as capset expects.
    if unsafe { libc::syscall(libc::SYS_capset, &raw mut header, none.as_ptr()) } != 0 {
        return Err(format!(
            "cannot drop capabilities: {}",
            io::Error::last_os_error()
        ));
    }
    let mut held = [Data::default(); 2];
    // SAFETY: as above, for capget.
    let read = unsafe { libc::syscall(libc::SYS_capget, &raw mut header, held.as_mut_ptr()) };
    if read != 0 || held.iter().any(|d| d.effective != 0 || d.permitted != 0) {
        return Err("capabilities are still held after dropping them".to_owned());
    }
    Ok(())
}

/// Replaces this process with the command.
fn exec(argv: &[CString]) -> Result<Never, String> {
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: `ptrs` is a NUL-terminated array of valid C strings that
    // outlive the call.
    unsafe { libc::execvp(ptrs[0], ptrs.as_ptr()) };
    Err(format!(
        "cannot run {}: {}",
        argv[0].to_string_lossy(),
        io::Error::last_os_error()
    ))
}

/// Binds a loopback port, forks a relay that serves it, and returns the
/// proxy URL for the command's environment.
fn start_relay(socket: &Path) -> Result<String, String> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
        .map_err(|e| format!("cannot open the proxy port inside the sandbox: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("cannot read the proxy port: {e}"))?
        .port();
    // SAFETY: still single-threaded, so the child may run any code.
    match unsafe { libc::fork() } {
        -1 => Err(format!(
            "cannot start the proxy relay: {}",
            io::Error::last_os_error()
        )),
        0 => {
            // SAFETY: prctl with integer arguments only.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
            // The relay needs none of the capabilities the helper started
            // with, and keeps none within the command's reach.
            let _ = drop_capabilities();
            close_inherited_output();
            relay(&listener, socket);
            std::process::exit(0)
        }
        _ => Ok(format!("http://127.0.0.1:{port}")),
    }
}

/// The relay must not hold the command's output pipe open after it ends.
fn close_inherited_output() {
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        use std::os::fd::AsRawFd;
        // SAFETY: dup2 onto the standard descriptors of this process.
        unsafe {
            libc::dup2(null.as_raw_fd(), 1);
            libc::dup2(null.as_raw_fd(), 2);
        }
    }
}

fn relay(listener: &std::net::TcpListener, socket: &Path) {
    for client in listener.incoming().flatten() {
        let socket = socket.to_path_buf();
        std::thread::spawn(move || {
            let Ok(upstream) = std::os::unix::net::UnixStream::connect(&socket) else {
                return;
            };
            let (Ok(mut client_read), Ok(mut upstream_write)) =
                (client.try_clone(), upstream.try_clone())
            else {
                return;
            };
            let up = std::thread::spawn(move || {
                let _ = io::copy(&mut client_read, &mut upstream_write);
                let _ = upstream_write.shutdown(std::net::Shutdown::Write);
            });
            let (mut upstream_read, mut client_write) = (upstream, client);
            let _ = io::copy(&mut upstream_read, &mut client_write);
            let _ = client_write.shutdown(std::net::Shutdown::Write);
            let _ = up.join();
        });
    }
}

/// Forks the command and reaps it; when it exits, or the lifeline closes,
/// kills every process left under this one and exits with its status.
fn supervise(lifeline: i32, sockets: (bool, bool), argv: &[CString]) -> Result<Never, String> {
    // SAFETY: prctl with integer arguments only. Orphans of the command's
    // tree are reparented here, so none escapes the final sweep.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
    // SIGCHLD arrives through a descriptor, so one poll waits for either
    // end: the command's exit or the lifeline's.
    // SAFETY: plain signal-set manipulation on a local set.
    let chld = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        libc::sigaddset(&raw mut set, libc::SIGCHLD);
        libc::sigprocmask(libc::SIG_BLOCK, &raw const set, std::ptr::null_mut());
        set
    };
    // SAFETY: a valid signal set.
    let signals = unsafe { libc::signalfd(-1, &raw const chld, libc::SFD_CLOEXEC) };
    if signals == -1 {
        return Err(format!(
            "cannot wait for the command: {}",
            io::Error::last_os_error()
        ));
    }
    // One installation covers both processes: the forked command inherits
    // the supervisor's filters (and keeps them across its exec), and the
    // supervisor itself never needs what they refuse.
    crate::seccomp::install(sockets.0, sockets.1)?;
    // SAFETY: single-threaded.
    let child = unsafe { libc::fork() };
    if child == -1 {
        return Err(format!(
            "cannot start the command: {}",
            io::Error::last_os_error()
        ));
    }
    if child == 0 {
        // SAFETY: the command gets the default signal mask back, and not
        // the lifeline.
        unsafe {
            libc::sigprocmask(libc::SIG_UNBLOCK, &raw const chld, std::ptr::null_mut());
            libc::close(lifeline);
        }
        return exec(argv);
    }
    let mut status = 0;
    loop {
        // SAFETY: non-blocking waitpid of our own child.
        if unsafe { libc::waitpid(child, &raw mut status, libc::WNOHANG) } == child {
            break;
        }
        let mut fds = [
            libc::pollfd {
                fd: lifeline,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: signals,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfds.
        unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if fds[1].revents != 0 {
            let mut info = [0u8; 128];
            // SAFETY: reading one siginfo record into a buffer of its size.
            unsafe { libc::read(signals, info.as_mut_ptr().cast(), info.len()) };
        }
        if fds[0].revents != 0 {
            let mut byte = [0u8; 1];
            // SAFETY: reading one byte from the lifeline we own.
            let n = unsafe { libc::read(lifeline, byte.as_mut_ptr().cast(), 1) };
            if n <= 0 {
                kill_tree();
                std::process::exit(137);
            }
        }
    }
    kill_tree();
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    std::process::exit(code)
}

/// Kills every descendant of this process, until none is left.
fn kill_tree() {
    // SAFETY: getpid cannot fail.
    let me = unsafe { libc::getpid() };
    for _ in 0..100 {
        let descendants = descendants_of(me);
        if descendants.is_empty() {
            break;
        }
        for pid in descendants {
            // SAFETY: signalling a pid we just read as our descendant.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        // Reap what died, so the next sweep does not count zombies.
        // SAFETY: non-blocking waitpid.
        while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
    }
}

/// Live descendants of `root`: through the kernel's lists of children
/// (`/proc/<pid>/task/<tid>/children`), which cost a read per process of
/// the tree, or by a scan of all of `/proc` where the kernel keeps none.
fn descendants_of(root: i32) -> Vec<i32> {
    let mut found = Vec::new();
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            match std::fs::read_to_string(task.path().join("children")) {
                Ok(list) => {
                    for child in list.split_whitespace().filter_map(|c| c.parse().ok()) {
                        found.push(child);
                        queue.push(child);
                    }
                }
                Err(_) if pid == root => return scan_descendants_of(root),
                Err(_) => {}
            }
        }
    }
    found
}

/// Live (non-zombie) descendants of `root`, from a scan of `/proc`.
fn scan_descendants_of(root: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut parent_of = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = after.split_whitespace();
        let state = fields.next().unwrap_or("Z");
        let Some(ppid) = fields.next().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if state != "Z" {
            parent_of.push((pid, ppid));
        }
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parent_of
                .iter()
                .filter(|(_, ppid)| *ppid == parent)
                .map(|(pid, _)| *pid),
        );
        i += 1;
    }
    found.remove(0);
    found
}
