//! How much one command can change: the vetted lists.
//!
//! **ReadOnly** only for commands known to read and print, and only with
//! arguments that keep them so: `ls cat head tail wc grep egrep fgrep`,
//! `rg` (not `--pre`), `find` (not `-exec -execdir -ok -okdir -delete
//! -fprint -fprint0 -fprintf -fls`), `pwd echo printf which type`, `file`
//! (not `-C`), `stat du df`, `tree` (not `-o`, `-R`), `sort` (not `-o`,
//! `--output`, `--compress-program`), `uniq` (at most one file operand, a
//! second one is written), `cut tr diff cmp basename dirname realpath
//! readlink`, `date` (not `-s`/`--set`), `whoami id uname printenv`, `env`
//! alone, `true false : test [ [[`, `jq` (not `-i`), `cd pushd popd` (they
//! change only the shell's directory), `command -v`/`-V`, `sed` with only
//! `-n -E -r -s -u -z` options and scripts made of line addresses and the
//! commands `p d q =` (no `w`, `e`, `s`, no `-i`), and `git` with a
//! read-only subcommand and no option that writes or runs a program (see
//! [`git`]).
//!
//! **Destructive** for `rm -r/-R/-f/--recursive/--force`, `dd`, `mkfs*`,
//! `shred`, `wipefs`, `chmod/chown/chgrp -R`, `sudo`/`doas`/`su`, `find
//! -delete`, and git's force-push (`-f`, `--force`, `--force-with-lease`,
//! `--force-if-includes`, a `+refspec`), remote deletion (`--delete`, `-d`,
//! `:branch`), `--mirror`, `reset --hard`, `clean -f`, `branch -D`, `stash
//! drop/clear`.
//!
//! **Exec** for everything else, including a plain `rm file`: when unsure,
//! Exec. Commands are recognised by their name's last path component, so
//! `/bin/rm -rf x` is Destructive too.

use cox_protocol::types::Risk;

use crate::words::basename;

/// The risk of one command from its words (quotes already removed).
pub(crate) fn classify(words: &[String]) -> Risk {
    let Some((name, args)) = words.split_first() else {
        return Risk::Exec;
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match basename(name) {
        "ls" | "cat" | "head" | "tail" | "wc" | "grep" | "egrep" | "fgrep" | "pwd" | "echo"
        | "printf" | "which" | "type" | "stat" | "du" | "df" | "cut" | "tr" | "diff" | "cmp"
        | "basename" | "dirname" | "realpath" | "readlink" | "whoami" | "id" | "uname"
        | "printenv" | "true" | "false" | ":" | "test" | "[" | "[[" | "cd" | "pushd" | "popd" => {
            Risk::ReadOnly
        }
        "rg" => read_only_unless(args.iter().any(|a| a.starts_with("--pre"))),
        "file" => read_only_unless(has_short(&args, 'C') || args.contains(&"--compile")),
        "tree" => read_only_unless(has_short(&args, 'o') || has_short(&args, 'R')),
        "sort" => read_only_unless(
            has_short(&args, 'o')
                || args
                    .iter()
                    .any(|a| a.starts_with("--output") || a.starts_with("--compress-program")),
        ),
        "uniq" => read_only_unless(args.iter().filter(|a| !a.starts_with('-')).count() > 1),
        "date" => {
            read_only_unless(has_short(&args, 's') || args.iter().any(|a| a.starts_with("--set")))
        }
        "env" => read_only_unless(!args.is_empty()),
        "jq" => read_only_unless(args.iter().any(|a| *a == "-i" || *a == "--in-place")),
        "command" => read_only_unless(!matches!(args.first(), Some(&("-v" | "-V")))),
        "find" => find(&args),
        "sed" => read_only_unless(!sed_reads_only(&args)),
        "git" => git(&args),
        "rm" => {
            let forceful = options(&args).any(|o| {
                matches!(o, "--recursive" | "--force")
                    || (!o.starts_with("--") && o.contains(['r', 'R', 'f']))
            });
            if forceful {
                Risk::Destructive
            } else {
                Risk::Exec
            }
        }
        "chmod" | "chown" | "chgrp" => {
            let recursive = options(&args)
                .any(|o| o == "--recursive" || (!o.starts_with("--") && o.contains('R')));
            if recursive {
                Risk::Destructive
            } else {
                Risk::Exec
            }
        }
        "dd" | "shred" | "wipefs" | "sudo" | "doas" | "su" => Risk::Destructive,
        program if program.starts_with("mkfs") => Risk::Destructive,
        _ => Risk::Exec,
    }
}

fn read_only_unless(writes: bool) -> Risk {
    if writes { Risk::Exec } else { Risk::ReadOnly }
}

/// The option words before a `--`.
fn options<'a>(args: &'a [&'a str]) -> impl Iterator<Item = &'a str> + 'a {
    args.iter()
        .copied()
        .take_while(|a| *a != "--")
        .filter(|a| a.starts_with('-') && a.len() > 1)
}

/// Whether a short option cluster (`-xo`) holds `letter`. Conservative: a
/// value attached to another option counts too.
fn has_short(args: &[&str], letter: char) -> bool {
    options(args).any(|o| !o.starts_with("--") && o.contains(letter))
}

fn find(args: &[&str]) -> Risk {
    if args.contains(&"-delete") {
        return Risk::Destructive;
    }
    let runs_or_writes = args.iter().any(|a| {
        matches!(
            *a,
            "-exec" | "-execdir" | "-ok" | "-okdir" | "-fprint" | "-fprint0" | "-fprintf" | "-fls"
        )
    });
    read_only_unless(runs_or_writes)
}

/// `sed` that only prints: `-n`-style options and scripts of addresses and
/// `p`, `d`, `q`, `=`.
fn sed_reads_only(args: &[&str]) -> bool {
    let script_is_safe = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_whitespace() || ",$;pdq=!~".contains(c))
    };
    let mut scripts = 0;
    let mut i = 0;
    let mut operands = Vec::new();
    while let Some(arg) = args.get(i) {
        i += 1;
        match *arg {
            "-n" | "--quiet" | "--silent" | "-E" | "-r" | "--regexp-extended" | "-s"
            | "--separate" | "-u" | "--unbuffered" | "-z" | "--null-data" | "--posix" => {}
            "-e" | "--expression" => {
                let Some(script) = args.get(i) else {
                    return false;
                };
                if !script_is_safe(script) {
                    return false;
                }
                scripts += 1;
                i += 1;
            }
            "--" => {
                operands.extend(args.get(i..).unwrap_or_default().iter().copied());
                break;
            }
            a if a.starts_with('-') && a.len() > 1 => {
                // Clusters of the flags above (`-nE`) only.
                if !a[1..].chars().all(|c| "nErsuz".contains(c)) {
                    return false;
                }
            }
            a => operands.push(a),
        }
    }
    if scripts == 0 {
        match operands.first() {
            Some(script) => script_is_safe(script),
            None => false,
        }
    } else {
        true
    }
}

/// Git: ReadOnly for reading subcommands with no option that writes or runs
/// something; Destructive for the forceful ones; Exec otherwise.
///
/// Global options before the subcommand: `-C DIR`, `--no-pager`,
/// `--git-dir=…`, `--work-tree=…`, `--bare`, `-P`/`--no-pager` are fine;
/// `-c NAME=VALUE` (which can set a pager or an alias to run) and any
/// option not known make the command Exec.
pub(crate) fn git(args: &[&str]) -> Risk {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match *arg {
            "-C" => i += 2,
            "--no-pager" | "-P" | "--bare" | "--no-replace-objects" | "--literal-pathspecs" => {
                i += 1;
            }
            a if a.starts_with("--git-dir=") || a.starts_with("--work-tree=") => i += 1,
            a if a.starts_with('-') => return Risk::Exec,
            _ => break,
        }
    }
    let Some((sub, rest)) = args.get(i..).and_then(<[&str]>::split_first) else {
        return Risk::Exec;
    };
    if git_destructive(sub, rest) {
        return Risk::Destructive;
    }
    let writes_or_runs = rest.iter().any(|a| {
        a.starts_with("--output")
            || *a == "-o"
            || a.starts_with("--ext-diff")
            || a.starts_with("--exec")
            || a.starts_with("--upload-pack")
            || *a == "-O"
            || a.starts_with("--open-files-in-pager")
    });
    if writes_or_runs {
        return Risk::Exec;
    }
    let read_only = match *sub {
        "status" | "log" | "diff" | "show" | "rev-parse" | "ls-files" | "ls-tree" | "blame"
        | "describe" | "shortlog" | "cat-file" | "merge-base" | "name-rev" | "rev-list"
        | "show-ref" | "grep" | "whatchanged" | "count-objects" | "check-ignore" | "version"
        | "help" => true,
        "branch" => {
            let listing = rest.iter().any(|a| matches!(*a, "--list" | "-l"));
            rest.iter().all(|a| {
                matches!(
                    *a,
                    "-a" | "-r"
                        | "-v"
                        | "-vv"
                        | "--list"
                        | "-l"
                        | "--all"
                        | "--remotes"
                        | "--verbose"
                        | "--show-current"
                        | "--no-color"
                ) || (listing && !a.starts_with('-'))
            })
        }
        "tag" => {
            let listing = rest.iter().any(|a| matches!(*a, "--list" | "-l"));
            rest.iter()
                .all(|a| matches!(*a, "-l" | "--list") || (listing && !a.starts_with('-')))
        }
        "remote" => matches!(rest, [] | ["-v" | "--verbose"] | ["get-url", _]),
        "stash" => matches!(rest.first(), Some(&("list" | "show"))),
        "worktree" => matches!(rest.first(), Some(&"list")),
        "reflog" => matches!(rest.first(), None | Some(&"show")),
        "config" => {
            rest.iter()
                .any(|a| matches!(*a, "--get" | "--get-all" | "--get-regexp" | "--list" | "-l"))
                && !rest.iter().any(|a| {
                    matches!(
                        *a,
                        "--add" | "--unset" | "--unset-all" | "--replace-all" | "--edit" | "-e"
                    )
                })
        }
        _ => false,
    };
    read_only_unless(!read_only)
}

fn git_destructive(sub: &str, rest: &[&str]) -> bool {
    let short = |letter: char| {
        rest.iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(letter))
    };
    match sub {
        "push" => {
            short('f')
                || short('d')
                || rest.iter().any(|a| {
                    a.starts_with("--force")
                        || matches!(*a, "--delete" | "--mirror" | "--prune")
                        || (!a.starts_with('-') && (a.starts_with('+') || a.starts_with(':')))
                })
        }
        "reset" => rest.contains(&"--hard"),
        "clean" => short('f') || rest.contains(&"--force"),
        "branch" => short('D') || (rest.contains(&"--delete") && rest.contains(&"--force")),
        "stash" => matches!(rest.first(), Some(&("drop" | "clear"))),
        _ => false,
    }
}
