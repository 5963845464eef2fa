//! The seccomp filter every confined command runs under.
//!
//! Two filters are installed, both after `PR_SET_NO_NEW_PRIVS`:
//! - the main one (built with seccompiler) answers `EPERM` to the system
//!   calls a command has no business making: debugging other processes,
//!   mounting, new namespaces, kernel keyrings, BPF, modules, `io_uring`
//!   (which would bypass the rest), terminal injection, and, when the
//!   network is off, any socket but `AF_UNIX`, and under Landlock (which
//!   cannot hide a socket file) `AF_UNIX` sockets too; a mode with a
//!   set-user-ID or set-group-ID bit (`chmod 4755`, `open(…, 04755)`); a
//!   call from another architecture's table (i386 through `int 0x80`)
//!   kills the process;
//! - a small one written by hand refuses the x32 table on x86-64 (numbers
//!   with bit 30 set, which the main filter's numbers would not match) and
//!   answers `clone3` and `openat2` with `ENOSYS`, so libc falls back to
//!   `clone` and `openat`, whose flags and mode the main filter can
//!   inspect.
//!
//! Invariant: a filter that cannot be built or installed is an error; the
//! caller then refuses to run the command.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

/// Builds and installs both filters on the calling thread; every process
/// it forks afterwards inherits them.
///
/// # Errors
/// The filter could not be built for this architecture, or the kernel
/// refused it.
pub fn install(network_off: bool, unix_off: bool) -> Result<(), String> {
    let main = main_filter(network_off, unix_off)?;
    seccompiler::apply_filter(&guard_filter()).map_err(|e| format!("seccomp: {e}"))?;
    seccompiler::apply_filter(&main).map_err(|e| format!("seccomp: {e}"))
}

fn arch() -> Result<TargetArch, String> {
    if cfg!(target_arch = "x86_64") {
        Ok(TargetArch::x86_64)
    } else if cfg!(target_arch = "aarch64") {
        Ok(TargetArch::aarch64)
    } else if cfg!(target_arch = "riscv64") {
        Ok(TargetArch::riscv64)
    } else {
        Err(format!(
            "seccomp: no filter for this architecture ({})",
            std::env::consts::ARCH
        ))
    }
}

/// The system calls refused outright.
fn refused() -> Vec<libc::c_long> {
    let mut calls = vec![
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_kexec_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_quotactl,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_userfaultfd,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_fsopen,
        libc::SYS_fsmount,
        libc::SYS_fsconfig,
        libc::SYS_fspick,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_mount_setattr,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([libc::SYS_kexec_file_load, libc::SYS_iopl, libc::SYS_ioperm]);
    calls
}

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Qword, op, value)
        .map_err(|e| format!("seccomp: {e}"))
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| format!("seccomp: {e}"))
}

/// Rules that refuse a call whose `arg` holds a set-user-ID or
/// set-group-ID bit: a command must not leave a program behind that runs
/// as its owner (as root, that is every file it makes).
fn setid_rules(arg: u8) -> Result<Vec<SeccompRule>, String> {
    let bits = u64::from(libc::S_ISUID | libc::S_ISGID);
    [u64::from(libc::S_ISUID), u64::from(libc::S_ISGID), bits]
        .into_iter()
        .map(|value| rule(vec![cond(arg, SeccompCmpOp::MaskedEq(bits), value)?]))
        .collect()
}

fn main_filter(network_off: bool, unix_off: bool) -> Result<BpfProgram, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in refused() {
        rules.insert(call, Vec::new());
    }
    // A clone that asks for a new namespace of any kind.
    let namespaces = [
        libc::CLONE_NEWNS,
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWCGROUP,
    ];
    let clone_rules = namespaces
        .iter()
        .map(|&flag| {
            let flag = u64::from(flag.cast_unsigned());
            rule(vec![cond(0, SeccompCmpOp::MaskedEq(flag), flag)?])
        })
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, clone_rules);
    // Typing into the controlling terminal of whoever started cox.
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, SeccompCmpOp::Eq, libc::TIOCSTI)?])?,
            rule(vec![cond(1, SeccompCmpOp::Eq, libc::TIOCLINUX)?])?,
        ],
    );
    // Set-ID bits, through every call that sets a mode.
    rules.insert(libc::SYS_fchmod, setid_rules(1)?);
    rules.insert(libc::SYS_fchmodat, setid_rules(2)?);
    rules.insert(libc::SYS_openat, setid_rules(3)?);
    rules.insert(libc::SYS_mknodat, setid_rules(2)?);
    // fchmodat2 (452 on every architecture), newer than the libc table.
    rules.insert(452, setid_rules(2)?);
    #[cfg(target_arch = "x86_64")]
    {
        rules.insert(libc::SYS_chmod, setid_rules(1)?);
        rules.insert(libc::SYS_open, setid_rules(2)?);
        rules.insert(libc::SYS_creat, setid_rules(1)?);
        rules.insert(libc::SYS_mknod, setid_rules(1)?);
    }
    let unix = u64::from(libc::AF_UNIX.cast_unsigned());
    if network_off && unix_off {
        // No socket at all; a connected pair (`socketpair`) still works.
        rules.insert(libc::SYS_socket, Vec::new());
    } else if network_off {
        rules.insert(
            libc::SYS_socket,
            vec![rule(vec![cond(0, SeccompCmpOp::Ne, unix)?])?],
        );
    } else if unix_off {
        rules.insert(
            libc::SYS_socket,
            vec![rule(vec![cond(0, SeccompCmpOp::Eq, unix)?])?],
        );
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM.cast_unsigned()),
        arch()?,
    )
    .map_err(|e| format!("seccomp: {e}"))?;
    BpfProgram::try_from(filter).map_err(|e| format!("seccomp: {e}"))
}

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGE_K: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// The x32 and `clone3` guard (see the module note).
fn guard_filter() -> BpfProgram {
    const X32_BIT: u32 = 0x4000_0000;
    let errno = |e: i32| libc::SECCOMP_RET_ERRNO | (e.cast_unsigned() & libc::SECCOMP_RET_DATA);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let clone3 = libc::SYS_clone3 as u32;
    // openat2 carries its mode in a struct the filter cannot read: ENOSYS,
    // so libc and programs fall back to openat, whose mode it can.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let openat2 = libc::SYS_openat2 as u32;
    vec![
        // The syscall number is the first word of `seccomp_data`.
        stmt(BPF_LD_W_ABS, 0),
        jump(BPF_JGE_K, X32_BIT, 0, 1),
        stmt(BPF_RET_K, errno(libc::EPERM)),
        jump(BPF_JEQ_K, clone3, 0, 1),
        stmt(BPF_RET_K, errno(libc::ENOSYS)),
        jump(BPF_JEQ_K, openat2, 0, 1),
        stmt(BPF_RET_K, errno(libc::ENOSYS)),
        stmt(BPF_RET_K, libc::SECCOMP_RET_ALLOW),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_filters_build_for_this_machine() {
        for (network_off, unix_off) in [(true, true), (true, false), (false, true), (false, false)]
        {
            assert!(main_filter(network_off, unix_off).unwrap().len() > refused().len());
        }
        assert_eq!(guard_filter().len(), 8);
    }
}
