//! The risk of a git command.
//!
//! ReadOnly only for a reading subcommand whose every long option is in
//! its list below (written in full: git, like GNU, takes abbreviations,
//! and `git grep --open-files-in-p=CMD` runs CMD), with no short option
//! that writes or runs (`-O`, `-o`), and with no global option but
//! `--no-pager`, `-P`, `--no-replace-objects`, `--literal-pathspecs`,
//! `--no-optional-locks`: `-C DIR`, `--git-dir`, `--work-tree` point git
//! at another repository, whose configuration can run programs
//! (`core.fsmonitor`, a pager); `-c`, `--config-env`, `--exec-path` set
//! them directly. Destructive for force-pushes, remote deletions,
//! `--mirror`, `reset --hard`, `clean -f`, `branch -D`, `stash drop/clear`.
//! Exec otherwise.

use cox_protocol::types::Risk;

/// Options of `log`, `show`, `diff` and the like that only change what is
/// printed.
const LOG: &[&str] = &[
    "oneline",
    "stat",
    "shortstat",
    "numstat",
    "summary",
    "compact-summary",
    "format",
    "pretty",
    "name-only",
    "name-status",
    "since",
    "until",
    "after",
    "before",
    "author",
    "committer",
    "grep",
    "invert-grep",
    "all-match",
    "regexp-ignore-case",
    "extended-regexp",
    "fixed-strings",
    "graph",
    "decorate",
    "no-decorate",
    "color",
    "no-color",
    "patch",
    "no-patch",
    "all",
    "branches",
    "tags",
    "remotes",
    "reverse",
    "max-count",
    "skip",
    "abbrev",
    "abbrev-commit",
    "no-abbrev-commit",
    "no-merges",
    "merges",
    "first-parent",
    "follow",
    "date",
    "relative-date",
    "cached",
    "staged",
    "word-diff",
    "color-words",
    "ignore-space-change",
    "ignore-all-space",
    "ignore-blank-lines",
    "ignore-space-at-eol",
    "unified",
    "function-context",
    "minimal",
    "patience",
    "histogram",
    "diff-algorithm",
    "find-renames",
    "find-copies",
    "no-renames",
    "full-index",
    "exit-code",
    "quiet",
    "check",
    "no-ext-diff",
    "no-textconv",
    "no-prefix",
    "relative",
    "left-right",
    "cherry-pick",
    "boundary",
    "ancestry-path",
    "full-history",
    "topo-order",
    "date-order",
    "parents",
    "raw",
    "diff-filter",
    "ignore-submodules",
    "merge-base",
    "no-index",
    "count",
    "left-only",
    "right-only",
    "source",
    "mailmap",
    "use-mailmap",
];

/// A reading subcommand's own long options (added to [`LOG`] where it
/// prints commits or diffs); `None` for subcommands that are not read-only.
fn own_options(sub: &str) -> Option<(&'static [&'static str], bool)> {
    Some(match sub {
        "log" | "show" | "diff" | "whatchanged" | "rev-list" | "shortlog" | "reflog" | "stash" => (
            &[
                "numbered",
                "email",
                "group",
                "objects",
                "timestamp",
                "header",
            ],
            true,
        ),
        "status" => (
            &[
                "short",
                "branch",
                "porcelain",
                "long",
                "verbose",
                "untracked-files",
                "ignore-submodules",
                "ignored",
                "column",
                "no-column",
                "ahead-behind",
                "no-ahead-behind",
                "renames",
                "no-renames",
                "null",
                "show-stash",
            ],
            false,
        ),
        "rev-parse" => (
            &[
                "short",
                "abbrev-ref",
                "verify",
                "quiet",
                "show-toplevel",
                "show-prefix",
                "show-cdup",
                "git-dir",
                "git-common-dir",
                "absolute-git-dir",
                "is-inside-work-tree",
                "is-inside-git-dir",
                "is-bare-repository",
                "is-shallow-repository",
                "symbolic",
                "symbolic-full-name",
                "all",
                "branches",
                "tags",
                "remotes",
                "default",
                "sq",
                "not",
                "path-format",
                "show-object-format",
            ],
            false,
        ),
        "ls-files" => (
            &[
                "cached",
                "deleted",
                "modified",
                "others",
                "ignored",
                "stage",
                "directory",
                "no-empty-directory",
                "unmerged",
                "killed",
                "exclude",
                "exclude-from",
                "exclude-standard",
                "error-unmatch",
                "full-name",
                "recurse-submodules",
                "abbrev",
                "eol",
                "deduplicate",
                "format",
            ],
            false,
        ),
        "ls-tree" => (
            &[
                "full-name",
                "full-tree",
                "name-only",
                "name-status",
                "object-only",
                "long",
                "abbrev",
                "format",
            ],
            false,
        ),
        "blame" => (
            &[
                "line-porcelain",
                "porcelain",
                "incremental",
                "show-name",
                "show-number",
                "show-email",
                "show-stats",
                "root",
                "reverse",
                "first-parent",
                "date",
                "color-lines",
                "color-by-age",
                "minimal",
                "abbrev",
                "ignore-rev",
                "since",
            ],
            false,
        ),
        "describe" => (
            &[
                "tags",
                "all",
                "long",
                "abbrev",
                "contains",
                "exact-match",
                "candidates",
                "match",
                "exclude",
                "always",
                "first-parent",
                "dirty",
                "broken",
            ],
            false,
        ),
        "cat-file" => (
            &[
                "batch",
                "batch-check",
                "batch-all-objects",
                "buffer",
                "unordered",
                "follow-symlinks",
            ],
            false,
        ),
        "merge-base" => (
            &["all", "octopus", "independent", "is-ancestor", "fork-point"],
            false,
        ),
        "name-rev" => (
            &[
                "tags",
                "refs",
                "exclude",
                "all",
                "name-only",
                "no-undefined",
                "always",
            ],
            false,
        ),
        "show-ref" => (
            &[
                "head",
                "verify",
                "exists",
                "branches",
                "tags",
                "heads",
                "dereference",
                "hash",
                "abbrev",
                "quiet",
            ],
            false,
        ),
        "grep" => (
            &[
                "cached",
                "untracked",
                "no-index",
                "exclude-standard",
                "no-exclude-standard",
                "recurse-submodules",
                "text",
                "ignore-case",
                "max-depth",
                "recursive",
                "no-recursive",
                "word-regexp",
                "invert-match",
                "full-name",
                "extended-regexp",
                "basic-regexp",
                "perl-regexp",
                "fixed-strings",
                "line-number",
                "column",
                "files-with-matches",
                "name-only",
                "files-without-match",
                "null",
                "only-matching",
                "count",
                "color",
                "no-color",
                "break",
                "heading",
                "show-function",
                "function-context",
                "context",
                "after-context",
                "before-context",
                "and",
                "or",
                "not",
                "all-match",
                "quiet",
                "max-count",
                "no-textconv",
            ],
            false,
        ),
        "count-objects" => (&["verbose", "human-readable"], false),
        "check-ignore" => (&["quiet", "verbose", "non-matching", "no-index"], false),
        "version" => (&["build-options"], false),
        // Checked option by option below.
        "branch" | "tag" | "remote" | "worktree" | "config" => (&[], false),
        _ => return None,
    })
}

/// Global options that leave git reading the repository it is in.
const GLOBAL: &[&str] = &[
    "--no-pager",
    "-P",
    "--no-replace-objects",
    "--literal-pathspecs",
    "--no-optional-locks",
];

/// git's global options that take a value, in the next word or after `=`.
const GLOBAL_VALUES: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
    "--attr-source",
    "--list-cmds",
];

/// git's global options that take no value (`--exec-path` only with `=`).
const GLOBAL_FLAGS: &[&str] = &[
    "--no-pager",
    "-P",
    "-p",
    "--paginate",
    "--bare",
    "--no-replace-objects",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-optional-locks",
    "--no-lazy-fetch",
    "--no-advice",
    "--exec-path",
    "--html-path",
    "--man-path",
    "--info-path",
    "--version",
    "--help",
    "-v",
    "-h",
];

/// Where git's subcommand is among `args` (the words after `git`): past
/// every global option. `Err` names an option git does not have (git
/// refuses it, but a guess at what it takes could name the wrong
/// subcommand) or one whose name is only known when the line runs.
pub(crate) fn subcommand_index(args: &[Option<&str>]) -> Result<usize, String> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(arg) = arg else {
            return Err("an option built from an expansion".to_owned());
        };
        if !arg.starts_with('-') || *arg == "-" {
            return Ok(i);
        }
        let name = arg.split_once('=').map_or(*arg, |(name, _)| name);
        if GLOBAL_VALUES.contains(&name) {
            i += if arg.contains('=') && name.starts_with("--") {
                1
            } else {
                2
            };
        } else if GLOBAL_FLAGS.contains(&name) {
            i += 1;
        } else {
            return Err((*arg).to_owned());
        }
    }
    Ok(i)
}

/// The risk of `git ARGS`.
pub(crate) fn git(args: &[&str]) -> Risk {
    let lits: Vec<Option<&str>> = args.iter().map(|a| Some(*a)).collect();
    let Ok(global) = subcommand_index(&lits) else {
        return Risk::Exec;
    };
    let plain = args[..global.min(args.len())]
        .iter()
        .all(|a| GLOBAL.contains(a));
    let Some((sub, rest)) = args.get(global..).and_then(<[&str]>::split_first) else {
        return Risk::Exec;
    };
    if git_destructive(sub, rest) {
        return Risk::Destructive;
    }
    if !plain {
        return Risk::Exec;
    }
    let Some((own, log)) = own_options(sub) else {
        return Risk::Exec;
    };
    let options = rest.iter().take_while(|a| **a != "--");
    let mut short = options
        .clone()
        .filter(|a| a.starts_with('-') && !a.starts_with("--"));
    // `-O` opens files in a pager (grep) or reads an order file; `-o` writes
    // for some subcommands (grep's `-o` and ls-files' `-o` only print).
    let writes =
        short.any(|a| a.contains('O') || (*a == "-o" && !matches!(*sub, "grep" | "ls-files")));
    let strict = matches!(*sub, "branch" | "tag" | "remote" | "worktree" | "config");
    let known = strict
        || options.filter_map(|a| a.strip_prefix("--")).all(|long| {
            let name = long.split('=').next().unwrap_or(long);
            own.contains(&name) || (log && LOG.contains(&name))
        });
    if writes || !known {
        return Risk::Exec;
    }
    let read_only = match *sub {
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
        "worktree" => matches!(rest, ["list"] | ["list", "--porcelain"]),
        "reflog" => matches!(rest.first(), None | Some(&"show")),
        "config" => config_reads_only(rest),
        _ => true,
    };
    if read_only {
        Risk::ReadOnly
    } else {
        Risk::Exec
    }
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
        // Throwing away work tree changes: `checkout -- .`, `checkout -f`,
        // `restore` (of the work tree), `switch -f`/`--discard-changes`.
        "checkout" => {
            short('f')
                || rest.contains(&"--force")
                || rest
                    .iter()
                    .position(|a| *a == "--")
                    .is_some_and(|at| at + 1 < rest.len())
                || rest.iter().any(|a| matches!(*a, "." | ":/" | "*"))
        }
        "restore" => !rest.contains(&"--staged") || rest.contains(&"--worktree"),
        "switch" => {
            short('f')
                || rest
                    .iter()
                    .any(|a| matches!(*a, "--force" | "--discard-changes"))
        }
        "clean" => short('f') || rest.contains(&"--force"),
        "branch" => short('D') || (rest.contains(&"--delete") && rest.contains(&"--force")),
        "stash" => matches!(rest.first(), Some(&("drop" | "clear"))),
        _ => false,
    }
}

/// Whether `git config ARGS` only reads. In the old form git stops reading
/// options at the first operand, so `git config NAME VALUE --get` sets
/// NAME to VALUE (with `--get` as a value pattern): the action must come
/// before every operand, and the operands fit it (a name and a value
/// pattern for `--get`, none for `--list`). The new form is `git config
/// get NAME` or `git config list`.
pub(crate) fn config_reads_only(rest: &[&str]) -> bool {
    const SCOPE: &[&str] = &[
        "--global",
        "--system",
        "--local",
        "--worktree",
        "--show-origin",
        "--show-scope",
        "--name-only",
        "--null",
        "-z",
        "--includes",
        "--no-includes",
    ];
    let flags = |args: &[&str]| {
        args.iter()
            .all(|a| SCOPE.contains(a) || matches!(*a, "--all" | "--regexp" | "--show-names"))
    };
    match rest.split_first() {
        Some((&"get", args)) => {
            let (options, operands): (Vec<&str>, Vec<&str>) =
                args.iter().partition(|a| a.starts_with('-'));
            flags(&options) && operands.len() == 1
        }
        Some((&"list", args)) => flags(args),
        _ => {
            let options = rest.iter().take_while(|a| a.starts_with('-')).count();
            let (options, operands) = rest.split_at(options);
            let action = options.iter().find(|a| {
                matches!(
                    **a,
                    "--get" | "--get-all" | "--get-regexp" | "--list" | "-l"
                )
            });
            let fits = match action {
                Some(&"--list" | &"-l") => operands.is_empty(),
                Some(_) => (1..=2).contains(&operands.len()),
                None => false,
            };
            fits && options.iter().all(|a| {
                SCOPE.contains(a)
                    || matches!(*a, "--get" | "--get-all" | "--get-regexp" | "--list" | "-l")
            }) && operands.iter().all(|a| !a.starts_with('-'))
        }
    }
}
