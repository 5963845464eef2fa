//! Option tables of the programs that run another command but are not
//! transparent (see `programs`). They need not be complete: an option
//! not listed makes the line opaque, which these lines are anyway, and
//! only moves the best guess at the command they run.

use crate::options::Spec;

pub(crate) const SETSID: Spec = Spec {
    flags: "cfw",
    long_flags: &["ctty", "fork", "wait"],
    ..Spec::NONE
};

pub(crate) const TASKSET: Spec = Spec {
    flags: "apc",
    long_flags: &["all-tasks", "pid", "cpu-list"],
    ..Spec::NONE
};

pub(crate) const IONICE: Spec = Spec {
    flags: "t",
    values: "cnpPu",
    long_flags: &["ignore"],
    long_values: &["class", "classdata", "pid", "pgid", "uid"],
    ..Spec::NONE
};

pub(crate) const CHRT: Spec = Spec {
    flags: "abdefiomprRv",
    values: "TPD",
    long_flags: &[
        "all-tasks",
        "batch",
        "deadline",
        "ext",
        "fifo",
        "idle",
        "other",
        "rr",
        "reset-on-fork",
        "max",
        "pid",
        "verbose",
    ],
    long_values: &["sched-runtime", "sched-period", "sched-deadline"],
    ..Spec::NONE
};

pub(crate) const STRACE: Spec = Spec {
    flags: "cCdDfFhiknqrtTvVwxyYzZ",
    values: "abeEIoOpPsSuUX",
    long_flags: &[
        "summary-only",
        "summary",
        "debug",
        "daemonize",
        "follow-forks",
        "output-separately",
        "instruction-pointer",
        "stack-trace",
        "quiet",
        "relative-timestamps",
        "syscall-times",
        "no-abbrev",
        "summary-wall-clock",
        "decode-fds",
        "decode-pids",
        "successful-only",
        "failed-only",
        "seccomp-bpf",
        "timestamps",
        "absolute-timestamps",
    ],
    long_values: &[
        "columns",
        "abbrev",
        "verbose",
        "raw",
        "read",
        "write",
        "trace",
        "trace-path",
        "signal",
        "status",
        "inject",
        "fault",
        "env",
        "output",
        "attach",
        "string-limit",
        "summary-sort-by",
        "user",
        "const-print-style",
        "quiet",
    ],
    ..Spec::NONE
};

pub(crate) const LTRACE: Spec = Spec {
    flags: "bcCfhiLrStTV",
    values: "aAeEFlnopsuwxXD",
    long_flags: &["demangle", "help", "version", "no-signals"],
    long_values: &["align", "indent", "library", "output", "config"],
    ..Spec::NONE
};

pub(crate) const UNBUFFER: Spec = Spec {
    flags: "p",
    ..Spec::NONE
};

pub(crate) const CHROOT: Spec = Spec {
    long_flags: &["skip-chdir"],
    long_values: &["userspec", "groups"],
    ..Spec::NONE
};

pub(crate) const RUNUSER: Spec = Spec {
    flags: "lmpfP",
    values: "ugGsw",
    long_flags: &["login", "preserve-environment", "pty", "fast"],
    long_values: &[
        "user",
        "group",
        "supp-group",
        "shell",
        "whitelist-environment",
    ],
    ..Spec::NONE
};

pub(crate) const PKEXEC: Spec = Spec {
    long_flags: &["disable-internal-agent", "keep-cwd"],
    long_values: &["user"],
    ..Spec::NONE
};

pub(crate) const SYSTEMD_RUN: Spec = Spec {
    flags: "dtPGqSrh",
    values: "pEuMH",
    long_flags: &[
        "user",
        "system",
        "scope",
        "wait",
        "no-block",
        "quiet",
        "pty",
        "pipe",
        "collect",
        "same-dir",
        "remain-after-exit",
        "shell",
        "no-ask-password",
        "send-sighup",
        "expand-environment",
        "ignore-failure",
    ],
    long_values: &[
        "unit",
        "property",
        "description",
        "slice",
        "slice-inherit",
        "service-type",
        "uid",
        "gid",
        "nice",
        "working-directory",
        "setenv",
        "machine",
        "host",
        "on-active",
        "on-boot",
        "on-startup",
        "on-unit-active",
        "on-unit-inactive",
        "on-calendar",
        "on-clock-change",
        "on-timezone-change",
        "timer-property",
        "path-property",
        "socket-property",
        "json",
    ],
    ..Spec::NONE
};

pub(crate) const PARALLEL: Spec = Spec {
    flags: "0kquvXmg",
    values: "jSadEIneNLl",
    long_flags: &[
        "keep-order",
        "null",
        "quote",
        "ungroup",
        "verbose",
        "xargs",
        "dry-run",
        "bar",
        "progress",
        "eta",
        "tag",
        "lb",
        "line-buffer",
        "group",
        "pipe",
        "plain",
        "no-notice",
        "will-cite",
        "shellquote",
        "halt-on-error",
        "trim",
    ],
    long_values: &[
        "jobs",
        "sshlogin",
        "arg-file",
        "delimiter",
        "eof",
        "colsep",
        "max-args",
        "max-lines",
        "results",
        "joblog",
        "tmpdir",
        "workdir",
        "basefile",
        "env",
        "timeout",
        "delay",
        "memfree",
        "load",
        "halt",
        "tagstring",
        "block",
        "retries",
    ],
    ..Spec::NONE
};

pub(crate) const WATCH: Spec = Spec {
    flags: "bcCdegptwxr",
    values: "nq",
    long_flags: &[
        "beep",
        "color",
        "no-color",
        "differences",
        "errexit",
        "chgexit",
        "precise",
        "no-title",
        "no-wrap",
        "no-linewrap",
        "exec",
        "no-rerun",
    ],
    long_values: &["interval", "equexit", "shotsdir"],
    ..Spec::NONE
};

pub(crate) const FLOCK: Spec = Spec {
    flags: "sexnouF",
    values: "wE",
    long_flags: &[
        "shared",
        "exclusive",
        "unlock",
        "nonblock",
        "nb",
        "close",
        "no-fork",
        "verbose",
    ],
    long_values: &["timeout", "wait", "conflict-exit-code"],
    ..Spec::NONE
};

pub(crate) const NAMESPACES: Spec = Spec {
    flags: "aFZefrcl",
    values: "tSGRw",
    attached: "muinpUCT",
    long_flags: &[
        "all",
        "mount",
        "uts",
        "ipc",
        "net",
        "pid",
        "user",
        "cgroup",
        "time",
        "no-fork",
        "preserve-credentials",
        "follow-context",
        "env",
        "user-parent",
        "keep-caps",
        "fork",
        "map-root-user",
        "map-current-user",
        "map-auto",
        "kill-child",
        "mount-proc",
        "mount-binfmt",
    ],
    long_values: &[
        "target",
        "setuid",
        "setgid",
        "root",
        "wd",
        "wdns",
        "propagation",
        "setgroups",
        "map-user",
        "map-group",
        "map-users",
        "map-groups",
        "monotonic",
        "boottime",
        "load-interp",
        "join-cgroup",
    ],
    ..Spec::NONE
};

/// `npx`, `pnpx`, `bunx`, `uvx` and the `npm exec`-style subcommands.
pub(crate) const PACKAGE_RUNNER: Spec = Spec {
    flags: "yqnv",
    values: "pc",
    long_flags: &[
        "yes",
        "no",
        "quiet",
        "silent",
        "verbose",
        "bun",
        "ignore-existing",
        "prefer-online",
        "prefer-offline",
        "no-install",
        "isolated",
        "offline",
        "no-cache",
    ],
    long_values: &[
        "package",
        "call",
        "from",
        "with",
        "with-editable",
        "with-requirements",
        "python",
        "index",
        "index-url",
        "extra-index-url",
        "registry",
        "cache",
        "cache-dir",
        "directory",
        "env-file",
        "constraints",
        "overrides",
    ],
    ..Spec::NONE
};

/// `uv run`.
pub(crate) const UV_RUN: Spec = Spec {
    flags: "qvm",
    values: "pf",
    long_flags: &[
        "module",
        "no-project",
        "frozen",
        "locked",
        "no-sync",
        "isolated",
        "all-extras",
        "no-dev",
        "active",
        "quiet",
        "verbose",
        "offline",
        "no-cache",
        "refresh",
        "script",
        "exact",
    ],
    long_values: &[
        "with",
        "with-editable",
        "with-requirements",
        "python",
        "directory",
        "project",
        "package",
        "env-file",
        "extra",
        "group",
        "only-group",
        "index",
        "index-url",
        "extra-index-url",
        "find-links",
        "cache-dir",
    ],
    ..Spec::NONE
};
