//! How much one command can change: the vetted lists.
//!
//! **ReadOnly** only for commands known to read and print, and only with
//! arguments that keep them so: `ls cat head tail wc grep egrep fgrep`,
//! `rg` (not `-z`), `find` (not `-exec -execdir -ok -okdir -delete
//! -fprint -fprint0 -fprintf -fls`), `pwd echo which type`, `printf` (not
//! `-v`), `file` (not `-C`, `-z`, `-Z`), `stat du df`, `tree` (not `-o`,
//! `-R`), `sort` (not `-o`), `uniq` (at most one file operand, a second one
//! is written), `cut tr cmp basename dirname realpath readlink`, `diff`
//! (not `-l`, which runs `pr`), `date` (not `-s`), `whoami id uname
//! printenv`, `env` alone, `true false : test [ [[`, `jq` (not `-i`), `cd
//! pushd popd` (they change only the shell's directory), `command -v`/`-V`,
//! `sed` with only `-n -E -r -s -u -z` options and scripts made of line
//! addresses and the commands `p d q =` (no `w`, `e`, `s`, no `-i`), and
//! `git` with a read-only subcommand (see the `git` module).
//!
//! On top of that, every long option (`--name`, `--name=value`, before a
//! `--`) must be in the command's list of harmless options, written in full
//! (see the `allow` module): GNU programs take abbreviations, and some long
//! options write or run a program (`sort --compress-program`, `rg --pre`,
//! `rg --hostname-bin`, `date --set`). And for the commands with such an
//! option (`sort rg date git find file tree sed uniq diff`), an argument
//! that an expansion or a glob could turn into an option (`$x`, `"$x"`,
//! `*`, `*.rs`; not `src/*`) makes them Exec.
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

use crate::allow::{long_options, long_options_allowed};
use crate::git::git;
use crate::words::basename;

/// Read-only commands with an option that writes, runs a program or
/// changes the system: one of their arguments that an expansion or a glob
/// could turn into an option (`sort $opt`, `rg x *` beside a file named
/// `--pre=evil`) makes them Exec.
const OPTION_SENSITIVE: &[&str] = &[
    "sort", "rg", "date", "git", "find", "file", "tree", "sed", "uniq", "diff",
];

/// The risk of one command from its words (quotes already removed).
/// `dynamic_args` says whether an argument could expand to an option.
pub(crate) fn classify(words: &[String], dynamic_args: bool) -> Risk {
    let Some((name, args)) = words.split_first() else {
        return Risk::Exec;
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let program = basename(name);
    let risk = classify_program(program, &args);
    if risk != Risk::ReadOnly {
        return risk;
    }
    let long_ok = long_options(program).is_none_or(|allowed| long_options_allowed(&args, allowed));
    if !long_ok || (dynamic_args && OPTION_SENSITIVE.contains(&program)) {
        Risk::Exec
    } else {
        Risk::ReadOnly
    }
}

fn classify_program(program: &str, args: &[&str]) -> Risk {
    match program {
        "ls" | "cat" | "head" | "tail" | "wc" | "grep" | "egrep" | "fgrep" | "pwd" | "echo"
        | "which" | "type" | "stat" | "du" | "df" | "cut" | "tr" | "cmp" | "basename"
        | "dirname" | "realpath" | "readlink" | "whoami" | "id" | "uname" | "printenv" | "true"
        | "false" | ":" | "test" | "[" | "[[" | "cd" | "pushd" | "popd" | "seq" | "expr"
        | "nproc" => Risk::ReadOnly,
        "printf" => read_only_unless(args.iter().any(|a| a.starts_with("-v"))),
        "diff" => read_only_unless(has_short(args, 'l')),
        "rg" => read_only_unless(has_short(args, 'z')),
        "file" => {
            read_only_unless(has_short(args, 'C') || has_short(args, 'z') || has_short(args, 'Z'))
        }
        "tree" => read_only_unless(has_short(args, 'o') || has_short(args, 'R')),
        "sort" => read_only_unless(has_short(args, 'o')),
        // A second operand (`-` for standard input counts) is written.
        "uniq" => read_only_unless(operand_count(args) > 1),
        "date" => read_only_unless(has_short(args, 's')),
        "env" => read_only_unless(!args.is_empty()),
        "jq" => read_only_unless(args.iter().any(|a| *a == "-i" || *a == "--in-place")),
        "command" => read_only_unless(!matches!(args.first(), Some(&("-v" | "-V")))),
        "find" => find(args),
        "sed" => read_only_unless(!sed_reads_only(args)),
        "git" => git(args),
        "rm" => {
            let forceful = options(args).any(|o| {
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
            let recursive = options(args)
                .any(|o| o == "--recursive" || (!o.starts_with("--") && o.contains('R')));
            if recursive {
                Risk::Destructive
            } else {
                Risk::Exec
            }
        }
        "dd" | "shred" | "wipefs" | "sudo" | "doas" | "su" | "truncate" => Risk::Destructive,
        // `--delete`, `--del`, `--delete-after`…, and moving the sources
        // away.
        "rsync"
            if args
                .iter()
                .any(|a| a.starts_with("--del") || *a == "--remove-source-files") =>
        {
            Risk::Destructive
        }
        "python" | "python3" | "perl" | "ruby" | "node" | "deno" | "bun"
            if inline_code_deletes(args) =>
        {
            Risk::Destructive
        }
        program if program.starts_with("mkfs") => Risk::Destructive,
        _ => Risk::Exec,
    }
}

/// Whether code given inline (`python -c`, `node -e`) names a call that
/// deletes files or trees: a rough scan, which only ever raises the risk.
fn inline_code_deletes(args: &[&str]) -> bool {
    const DELETERS: [&str; 10] = [
        "rmtree",
        "os.remove",
        "os.unlink",
        "unlink(",
        "rmdir",
        "rmSync",
        "rm_rf",
        "rm -r",
        "rm -f",
        "remove_dir_all",
    ];
    let code = args
        .windows(2)
        .filter(|w| matches!(w[0], "-c" | "-e" | "--eval" | "-E" | "-p" | "--print"))
        .map(|w| w[1]);
    code.into_iter()
        .any(|c| DELETERS.iter().any(|d| c.contains(d)))
}

/// How many operands: words that are not options, `-` included, and
/// everything after `--`.
fn operand_count(args: &[&str]) -> usize {
    let mut count = 0;
    let mut options = true;
    for arg in args {
        if options && *arg == "--" {
            options = false;
        } else if !options || !arg.starts_with('-') || *arg == "-" {
            count += 1;
        }
    }
    count
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
    // `-exec rm {} +` and its kin delete what the walk finds.
    let deletes = args.windows(2).any(|w| {
        matches!(w[0], "-exec" | "-execdir" | "-ok" | "-okdir")
            && matches!(
                w[1].rsplit('/').next().unwrap_or(w[1]),
                "rm" | "rmdir" | "unlink" | "shred" | "truncate"
            )
    });
    if deletes {
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
