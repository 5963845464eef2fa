//! Programs that run another command in a way rules cannot follow.
//!
//! `setsid`, `taskset`, `ionice`, `chrt`, `strace`, `ltrace`, `unbuffer`,
//! `chroot`, `runuser -u`, `pkexec`, `systemd-run`, `busybox`, `nsenter`,
//! `unshare`, `npx`/`pnpx`/`bunx`/`uvx` (and `npm exec`, `pnpm dlx`,
//! `yarn dlx`, `bun x`, `uv run`, `uv tool run`): each is listed, the
//! command it runs is listed after it, and the line is opaque
//! ([`Opacity::Runner`]): they change where, as whom or under what a
//! command runs, so an allow rule for the inner command must not see
//! through them. `sg`, `watch`, `flock -c`, `parallel` and `script -c`
//! take a command string, which is parsed again like `sh -c`. `.`,
//! `source`, `at` and `batch` run a script (see `builtins`); interpreters
//! and the options that run programs are in `inline`.

use crate::Opacity;
use crate::builtins;
use crate::inline;
use crate::options::{Parsed, Spec, parse_options};
use crate::shells::su;
use crate::specs::{
    CHROOT, CHRT, FLOCK, IONICE, LTRACE, NAMESPACES, PACKAGE_RUNNER, PARALLEL, PKEXEC, RUNUSER,
    SETSID, STRACE, SYSTEMD_RUN, TASKSET, UNBUFFER, UV_RUN, WATCH,
};
use crate::words::Word;
use crate::wrappers::{Step, joined};

/// Looks at a command no wrapper claimed.
pub(crate) fn step(program: &str, words: &[Word]) -> Step {
    let options = |spec: &Spec| parse_options(words, spec);
    match program {
        "." | "source" => builtins::source(program, words),
        "at" | "batch" => builtins::at(program, words),
        "compgen" | "complete" => builtins::completion(program, words),
        "setsid" => opaque_runner(program, options(&SETSID), 0, words),
        "unbuffer" => opaque_runner(program, options(&UNBUFFER), 0, words),
        "strace" => opaque_runner(program, options(&STRACE), 0, words),
        "ltrace" => opaque_runner(program, options(&LTRACE), 0, words),
        "pkexec" => opaque_runner(program, options(&PKEXEC), 0, words),
        "nsenter" | "unshare" => opaque_runner(program, options(&NAMESPACES), 0, words),
        "chroot" => opaque_runner(program, options(&CHROOT), 1, words),
        "taskset" => unless_pid(program, options(&TASKSET), 1, words, &["p", "pid"]),
        "ionice" => unless_pid(program, options(&IONICE), 0, words, &["p", "P", "u", "pid"]),
        "chrt" => unless_pid(program, options(&CHRT), 1, words, &["p", "m", "pid", "max"]),
        "systemd-run" => {
            let parsed = options(&SYSTEMD_RUN);
            if parsed.saw("S") || parsed.saw("shell") {
                Step::Opaque(Opacity::Runner(program.to_owned()))
            } else {
                opaque_runner(program, parsed, 0, words)
            }
        }
        "runuser" => runuser(words),
        "busybox" => match words.get(1).and_then(Word::lit) {
            Some(applet) if !applet.starts_with('-') => {
                Step::OpaqueRunner(Opacity::Runner(program.to_owned()), 1)
            }
            _ => Step::Plain,
        },
        "sg" => sg(words),
        "watch" => {
            let parsed = options(&WATCH);
            string_runner(program, parsed.end, words)
        }
        "flock" => flock(words),
        "parallel" => parallel(words),
        "script" => {
            // GNU getopt reads options after operands too.
            match option_value(words, words.len(), 'c', "command") {
                Some(command) => Step::Reparse(Opacity::ShellString, Some(command)),
                None => Step::Script {
                    reason: Opacity::Script(program.to_owned()),
                    stdin: true,
                },
            }
        }
        // Runners whose options cox does not read: every word after the
        // name may be where the command starts.
        "setpriv" | "prlimit" | "linux32" | "linux64" | "setarch" | "logsave" | "fakeroot"
        | "valgrind" | "firejail" | "bwrap" | "tini" | "gosu" | "su-exec" | "catchsegv"
        | "nocache" | "cpulimit" | "faketime" | "torsocks" | "proxychains" | "proxychains4"
        | "numactl" | "trickle" | "daemonize" | "chpst" | "setuidgid" | "softlimit"
        | "dumb-init" | "env-update" | "sem" | "xvfb-run" | "dbus-run-session" | "script-run"
        | "ssh-agent" | "perf" | "eatmydata" | "rlwrap" | "sshpass" | "chronic" | "ifne"
        | "dbus-launch" | "systemd-inhibit" | "fakechroot" | "proot" | "mpirun" | "mpiexec"
        | "srun" | "ccache" | "distcc" | "flatpak-spawn" | "cgexec" | "dtach" | "cross-env"
        | "env-cmd" | "dotenv" | "entr" | "watchexec" | "guix" | "distrobox" | "xterm"
        | "caffeinate" => Step::Suffixes(Opacity::Runner(program.to_owned()), 1),
        "gdb" | "lldb" => match words.iter().position(|w| w.lit() == Some("--args")) {
            Some(at) => Step::Suffixes(Opacity::Runner(program.to_owned()), at + 1),
            // `-ex '!rm x'`, `-ex 'shell …'`, a script: commands of its own.
            None => Step::Opaque(Opacity::Runner(program.to_owned())),
        },
        // Strings of commands or code they run, scanned for deny rules.
        "hyperfine" | "pee" | "expect" | "emacs" => {
            Step::Opaque(Opacity::Runner(program.to_owned()))
        }
        "make" | "gmake"
            if words.iter().any(|w| {
                w.value().starts_with("--eval") || matches!(w.lit(), Some("/dev/stdin" | "-"))
            }) =>
        {
            Step::Opaque(Opacity::Runner(program.to_owned()))
        }
        "zip"
            if words
                .iter()
                .any(|w| w.lit() == Some("-TT") || w.value().starts_with("--unzip-command")) =>
        {
            Step::Opaque(Opacity::Runner(program.to_owned()))
        }
        "scp" | "sftp" | "man" | "rsync"
            if words
                .iter()
                .any(|w| matches!(w.lit(), Some("-S" | "-P" | "-e"))) =>
        {
            Step::Opaque(Opacity::Runner(program.to_owned()))
        }
        // `capsh -- -c CMD`: what follows `--` goes to a shell.
        "capsh" => match words.iter().position(|w| w.lit() == Some("--")) {
            Some(at) => {
                let mut shell = vec![Word::plain("bash")];
                shell.extend(words[at + 1..].iter().cloned());
                match crate::shells::shell_string("bash", &shell) {
                    Step::Reparse(_, script) => {
                        Step::Reparse(Opacity::Runner(program.to_owned()), script)
                    }
                    _ => Step::Opaque(Opacity::Runner(program.to_owned())),
                }
            }
            None => Step::Opaque(Opacity::Runner(program.to_owned())),
        },
        "toybox" => match words.get(1).and_then(Word::lit) {
            Some(applet) if !applet.starts_with('-') => {
                Step::OpaqueRunner(Opacity::Runner(program.to_owned()), 1)
            }
            _ => Step::Plain,
        },
        // What these run is named among their arguments, in forms of their
        // own (a container, a session, a string): opaque, and the words
        // are scanned for deny rules.
        "coreutils" | "tmux" | "screen" | "nix-shell" | "nix" | "direnv" | "mise" | "asdf"
        | "poetry" | "pipenv" | "pdm" | "hatch" | "rye" | "conda" | "mamba" | "micromamba"
        | "devbox" | "flox"
            if words.len() > 1 =>
        {
            let sub = words.get(1).and_then(Word::lit).unwrap_or_default();
            let runs = matches!(program, "coreutils" | "tmux" | "screen" | "nix-shell")
                || matches!(sub, "run" | "exec" | "shell" | "x" | "develop");
            if runs {
                Step::Opaque(Opacity::Runner(program.to_owned()))
            } else {
                inline::step(program, words)
            }
        }
        "docker" | "podman" | "nerdctl" | "kubectl" | "oc" => {
            let runs = words.iter().skip(1).take(3).any(|w| {
                matches!(
                    w.lit(),
                    Some("run" | "exec" | "create" | "debug" | "compose")
                )
            });
            if runs {
                Step::Opaque(Opacity::Runner(program.to_owned()))
            } else {
                inline::step(program, words)
            }
        }
        "npx" | "pnpx" | "bunx" | "uvx" => package_runner(program, words),
        "npm" | "pnpm" | "yarn" | "bun" | "uv" => subcommand_runner(program, words),
        _ => inline::step(program, words),
    }
}

/// A runner the line is opaque for: its options, `positional` operands
/// (chroot's directory), then the command. Without a command it starts a
/// shell or does nothing visible: opaque either way.
fn opaque_runner(program: &str, parsed: Parsed, positional: usize, words: &[Word]) -> Step {
    let start = parsed.end + positional;
    if let Some(option) = parsed.unknown {
        return Step::Unknown(option, start);
    }
    let reason = Opacity::Runner(program.to_owned());
    if start >= words.len() {
        Step::Opaque(reason)
    } else {
        Step::OpaqueRunner(reason, start)
    }
}

/// `taskset -p`, `ionice -p`, `chrt -p`: they change a running process
/// and run nothing; otherwise an opaque runner.
fn unless_pid(
    program: &str,
    parsed: Parsed,
    positional: usize,
    words: &[Word],
    pid: &[&str],
) -> Step {
    if parsed.unknown.is_none() && pid.iter().any(|o| parsed.saw(o)) {
        Step::Plain
    } else {
        opaque_runner(program, parsed, positional, words)
    }
}

/// A runner whose operands, joined, are a command line for a shell
/// (`watch 'ls | wc'`).
fn string_runner(program: &str, from: usize, words: &[Word]) -> Step {
    let script = (from < words.len()).then(|| joined(words, from));
    Step::Reparse(Opacity::Runner(program.to_owned()), script)
}

/// `runuser -u USER [--] COMMAND`, or su-style `runuser USER -c STRING`.
fn runuser(words: &[Word]) -> Step {
    let parsed = parse_options(words, &RUNUSER);
    if parsed.saw("u") || parsed.saw("user") {
        opaque_runner("runuser", parsed, 0, words)
    } else {
        su(words)
    }
}

/// `sg [-] GROUP [-c] COMMAND`: the command is a string for `/bin/sh -c`.
fn sg(words: &[Word]) -> Step {
    let mut i = 1;
    if words.get(i).and_then(Word::lit) == Some("-") {
        i += 1;
    }
    i += 1;
    if words.get(i).and_then(Word::lit) == Some("-c") {
        i += 1;
    }
    string_runner("sg", i, words)
}

/// `flock [options] FILE COMMAND…`, `flock [options] FILE -c STRING`, or
/// `flock [options] FD` (which runs nothing).
fn flock(words: &[Word]) -> Step {
    let parsed = parse_options(words, &FLOCK);
    if let Some(option) = parsed.unknown {
        return Step::Unknown(option, parsed.end + 1);
    }
    let after_file = parsed.end + 1;
    match words.get(after_file).and_then(Word::lit) {
        Some("-c" | "--command") => Step::Reparse(
            Opacity::Runner("flock".to_owned()),
            words.get(after_file + 1).map(|w| w.loose.clone()),
        ),
        _ if after_file < words.len() => {
            Step::OpaqueRunner(Opacity::Runner("flock".to_owned()), after_file)
        }
        _ => Step::Plain,
    }
}

/// `parallel [options] COMMAND ::: ARGS…`: the command is a string for a
/// shell; without one, each argument is a command; with neither, commands
/// come from standard input.
fn parallel(words: &[Word]) -> Step {
    let parsed = parse_options(words, &PARALLEL);
    let reason = Opacity::Runner("parallel".to_owned());
    let is_separator = |w: &Word| matches!(w.lit(), Some(":::" | "::::" | ":::+" | "::::+"));
    let rest = words.get(parsed.end..).unwrap_or_default();
    let command = rest.iter().take_while(|w| !is_separator(w)).count();
    if command > 0 {
        let script: Vec<&str> = rest[..command].iter().map(|w| w.loose.as_str()).collect();
        return Step::Reparse(reason, Some(script.join(" ")));
    }
    if rest.is_empty() {
        return Step::Script {
            reason,
            stdin: true,
        };
    }
    let each: Vec<&str> = rest
        .iter()
        .filter(|w| !is_separator(w))
        .map(|w| w.loose.as_str())
        .collect();
    Step::Reparse(reason, Some(each.join("\n")))
}

/// `npx [options] COMMAND …` and the like; `-c STRING`/`--call` runs a
/// shell string.
fn package_runner(program: &str, words: &[Word]) -> Step {
    let parsed = parse_options(words, &PACKAGE_RUNNER);
    match option_value(words, parsed.end, 'c', "call") {
        Some(call) => Step::Reparse(Opacity::Runner(program.to_owned()), Some(call)),
        None => opaque_runner(program, parsed, 0, words),
    }
}

/// `npm exec`, `npm x`, `pnpm dlx|exec`, `yarn dlx|exec`, `bun x`,
/// `uv run`, `uv tool run`: like `npx`, past the subcommand.
fn subcommand_runner(program: &str, words: &[Word]) -> Step {
    // Options that change what a package manager runs or where: a script
    // from another package (`--prefix /`), another shell for scripts, a
    // config file that sets either, node's own options (`--require`).
    const RELOCATING: [&str; 9] = [
        "--prefix",
        "-C",
        "--dir",
        "--cwd",
        "--script-shell",
        "--userconfig",
        "--globalconfig",
        "--node-options",
        "--workspace-root",
    ];
    if matches!(program, "npm" | "pnpm" | "yarn" | "bun") {
        let relocating = words.iter().skip(1).find_map(|w| {
            let v = w.value();
            RELOCATING
                .iter()
                .find(|o| v == **o || v.strip_prefix(**o).is_some_and(|r| r.starts_with('=')))
        });
        if let Some(option) = relocating {
            return Step::Opaque(Opacity::Runner(format!("{program} {option}")));
        }
    }
    let sub = |i: usize| words.get(i).and_then(Word::lit);
    let skip = match (program, sub(1)) {
        ("npm", Some("exec" | "x"))
        | ("pnpm" | "yarn", Some("dlx" | "exec"))
        | ("bun", Some("x"))
        | ("uv", Some("run")) => 1,
        ("uv", Some("tool")) if sub(2) == Some("run") => 2,
        _ => return inline::step(program, words),
    };
    let rest = &words[skip..];
    let name = format!("{program} {}", sub(1).unwrap_or_default());
    let inner = if program == "uv" && skip == 1 {
        opaque_runner(&name, parse_options(rest, &UV_RUN), 0, rest)
    } else {
        package_runner(&name, rest)
    };
    match inner {
        Step::OpaqueRunner(reason, n) => Step::OpaqueRunner(reason, n + skip),
        Step::Unknown(option, n) => Step::Unknown(option, n + skip),
        other => other,
    }
}

/// The value of `-L VALUE`, `-LVALUE` (also at the end of a cluster),
/// `--long VALUE` or `--long=VALUE` among the options `words[1..end]`.
pub(crate) fn option_value(words: &[Word], end: usize, short: char, long: &str) -> Option<String> {
    let options = words.get(1..end.min(words.len())).unwrap_or_default();
    options.iter().enumerate().find_map(|(i, word)| {
        let arg = word.lit()?;
        let next = || options.get(i + 1).map(|w| w.loose.clone());
        if let Some(name) = arg.strip_prefix("--") {
            return match name.split_once('=') {
                Some((name, value)) if name == long => Some(value.to_owned()),
                None if name == long => next(),
                _ => None,
            };
        }
        let cluster = arg.strip_prefix('-')?;
        let at = cluster.find(short)?;
        let value = &cluster[at + short.len_utf8()..];
        if value.is_empty() {
            next()
        } else {
            Some(value.to_owned())
        }
    })
}
