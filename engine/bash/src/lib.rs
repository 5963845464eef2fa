//! Splits a shell command line into the commands a permission engine judges.
//!
//! A rule such as `deny = ["Bash(rm:*)"]` must see every command a line runs,
//! not only its first word, and an allow rule must never let through a line
//! whose effect it cannot vouch for. [`split`] parses the line with
//! tree-sitter-bash and walks the tree; the result is a list of [`Command`]s,
//! each with the text rules match, its words and its [`Risk`], plus the first
//! reason ([`Opacity`]) the line is *opaque*: something the split cannot see
//! through, so that no prefix rule or session grant may allow it.
//!
//! The crate is pure: it takes a string and returns values, with no I/O.
//!
//! # What is listed
//!
//! * Commands separated by `;`, `&&`, `||`, `|`, `|&`, `&` and newlines.
//! * Commands nested anywhere: `( … )`, `{ …; }`, `$( … )`, backticks,
//!   `<( … )`, `>( … )`, `for`/`while`/`until` conditions and bodies,
//!   `if`/`elif`/`else` conditions and bodies, `case` arms, function bodies,
//!   the commands after a heredoc start (`cat <<EOF | rm x`), substitutions
//!   in assignment values, redirect targets and heredoc bodies.
//! * The command that *contains* a substitution is listed too, and first:
//!   `echo $(rm x)` lists `echo $(rm x)` then `rm x`. Commands come in source
//!   order, an outer command before what is nested in it.
//! * `[ … ]` and `[[ … ]]` are listed as commands (they are the `test`
//!   builtin) and rated ReadOnly.
//! * Standalone assignments (`FOO=1`) are not commands; they only make the
//!   line opaque (a locale one does not, see below).
//!
//! # Text
//!
//! [`Command::text`] is what rules match. It is built from the command's
//! words after stripping wrappers and leading assignments, joined by one
//! space, so runs of whitespace and line continuations collapse; quotes in
//! arguments are kept as written, and so is whitespace inside them. Two
//! deliberate differences from the bare source text:
//!
//! * the command *name* is written unquoted when it is a plain literal, so
//!   `\rm -rf x`, `'rm' -rf x` and `r""m -rf x` all read `rm -rf x` and a
//!   rule for `rm` sees them;
//! * redirects are left out (`git status 2>/dev/null` reads `git status`);
//!   they are judged separately, see Opacity. A word tree-sitter files as an
//!   extra redirect target (`echo >/dev/null hi`) is put back as an argument.
//!
//! # Wrappers
//!
//! Transparent wrappers are stripped, with their options, and only the
//! wrapped command is listed (nested ones too: `nohup timeout 5 nice rm x`
//! lists `rm x`): `nohup`, `timeout` (options and duration), `time` (`-p`
//! and GNU time's `-v -q -f FMT`), `nice` (`-n N`, `-N`), `stdbuf`
//! (`-o0 -eL`, `--output=L` …), `command` (`-p`; `command -v`/`-V` is a
//! lookup, listed as is and ReadOnly), `builtin`, zsh's `noglob`, `coproc`,
//! `exec`
//! (`-c -l -a NAME`), `env` (`-i -0 -u NAME -C DIR`, then `NAME=VALUE`
//! words, which count like leading assignments) and bare `xargs` (`xargs rm`
//! lists `rm`).
//!
//! *Runners* change who or how a command runs, so the runner itself is
//! listed **and** the command it runs is listed after it: `xargs` with
//! options (`xargs -0 rm` lists `xargs -0 rm` and `rm`), `sudo` and `doas`
//! (listed Destructive), and each `find … -exec/-execdir/-ok/-okdir CMD … ;`
//! clause. A deny rule sees the inner command; an allow rule has to cover
//! both.
//!
//! A wrapper or runner option this crate does not know (say
//! `timeout --sig KILL 5 rm x`, or an option built from an expansion) makes
//! the line opaque ([`Opacity::UnknownOption`]): it might take a value, and
//! guessing wrong would name the wrong command. The best guess is still
//! listed so deny rules see it.
//!
//! Not seen through (they are rated Exec and listed as written): `ssh`,
//! `watch`, `flock`, `parallel`, `script`, interpreters' `-c`/`-e` strings
//! (`python -c`, `perl -e`), git aliases. Absolute paths are not resolved
//! for rule text (`/bin/rm x` reads `/bin/rm x`), but wrappers, shells and
//! risk go by the name's last path component.
//!
//! # Shell strings
//!
//! `eval …` (its arguments joined by spaces), `sh|bash|zsh|dash|ksh|mksh|
//! ash|fish -c '…'` (also with other flags before or around `-c`, as in
//! `bash -lc`), `su -c '…'`, `sudo -s|-i …` and `trap '…' SIGNAL` are listed
//! as they are, and their string is parsed again with the same walk, so its
//! commands are listed after them. The line is opaque regardless
//! ([`Opacity::Eval`], [`Opacity::ShellString`]). A string that is not a
//! plain literal (`bash -c "rm $x"`) is parsed as written between its
//! quotes, best effort. Shell strings nest at most [`MAX_SHELL_DEPTH`]
//! deep; deeper is [`Opacity::TooDeep`].
//!
//! # Opacity
//!
//! [`Split::opaque`] holds the first reason found, in walk order:
//!
//! * `$( … )`, backticks, `<( … )`/`>( … )`, `eval`, a shell string;
//! * an output redirect (`>`, `>>`, `&>`, `&>>`, `>|`, `<>`, `N>`,
//!   `>&file`) to anything except `/dev/null`, `/dev/stdout`,
//!   `/dev/stderr`, an fd duplication (`2>&1`, `>&2`) or a close (`2>&-`).
//!   Input redirects (`<`, `<&3`), heredocs and here-strings are fine;
//! * a parse error: a tree-sitter ERROR or MISSING node, text the tree
//!   leaves out (tree-sitter-bash drops the `-` of `- A=1`), or a NUL;
//! * an assignment before a command or alone (`PATH=/x git status`,
//!   `FOO=1`, `env FOO=1 cmd`), and `export`, `declare`, `typeset`,
//!   `local`, `readonly`, `unset`. Variables set by `read`, `mapfile`,
//!   `readarray`, `getopts`, `let`, `printf -v` and `for NAME in` count
//!   only when the name has no lower-case letter: `PATH`, `IFS`,
//!   `LD_PRELOAD` and every other variable that steers the shell or a
//!   program are upper case, while `while read -r line` and `for f in *`
//!   are everyday loops;
//! * `alias NAME=…`, `hash -p` and `enable`, which change what a later
//!   name runs;
//! * a command name built from an expansion or a glob/brace pattern
//!   (`$SHELL -c …`, `/bin/r? -rf x`);
//! * a wrapper option not understood (see Wrappers);
//! * nesting deeper than the walk follows ([`MAX_TREE_DEPTH`] tree levels;
//!   [`MAX_SHELL_DEPTH`] shell strings), or a line too large to parse in
//!   bounded time (more than 100 heredocs, or a parse past its operation
//!   budget). What lies deeper is not listed, but the line is opaque, so no
//!   prefix rule or grant allows it.
//!
//! A leading assignment of a locale/display variable (`LC_ALL`, any `LC_*`,
//! `LANG`, `LANGUAGE`, `TZ`, `NO_COLOR`) is stripped and does not make the
//! line opaque: it cannot change which program a name resolves to.
//!
//! # Risk
//!
//! See the `risk` module: ReadOnly only for a vetted set of read-only
//! commands and flags, Destructive for clearly destructive ones, Exec for
//! everything else. [`line_risk`] is the maximum over the commands, and at
//! least Exec when the line is opaque.
//!
//! # Where tree-sitter-bash and bash differ
//!
//! The walk corrects for what was found by property tests and fuzzing:
//! after a pipeline of three, tree-sitter-bash can file the next line's
//! first word as an argument (`a | b | c` newline `d` gives `c d`); bash
//! ends a command at an unescaped newline, and so does the walk. Its
//! scanner crashes the process on `{` before a large code point, so the
//! parser sees every non-ASCII character as `x` bytes (words are read from
//! the original line). Lines it cannot parse quickly are bounded (see the
//! `parse` module).
//!
//! # Cost
//!
//! Plain lines (words, quotes, and `;`, `&&`, `||`, `|`, `&`, newlines, no
//! expansion, redirect or keyword) take a fast path without tree-sitter,
//! about 3 µs for 100 bytes; a property test and the fuzz target check that
//! it agrees with the tree-sitter walk on every line. Other lines cost a
//! tree-sitter parse (about 15–20 µs for 100 bytes) plus the walk. One
//! parser is kept per thread (`thread_local!`).

mod fast;
mod options;
mod parse;
mod risk;
mod syntax;
mod walk;
mod words;
mod wrappers;

use std::fmt;

use cox_protocol::types::{Risk, Segments};

/// How deep `eval`/`sh -c` strings may nest before the line is opaque.
pub const MAX_SHELL_DEPTH: usize = 8;

/// How many syntax tree levels the walk descends before it stops and marks
/// the line opaque. It bounds the walk's stack use on hostile input such as
/// ten thousand nested `$(`.
pub const MAX_TREE_DEPTH: usize = 200;

/// A command line split into the commands a permission engine judges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Split {
    /// Every command the line runs, in source order, outer before nested.
    pub commands: Vec<Command>,
    /// The first reason the line cannot be vouched for, if there is one.
    pub opaque: Option<Opacity>,
}

/// One command of a line, written as rules match it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// Its words from the first real word to its end, wrappers and leading
    /// locale assignments stripped, joined by single spaces; quotes in
    /// arguments kept as written, the command name unquoted.
    pub text: String,
    /// Its words after stripping, quotes removed where a word is a plain
    /// literal; a word with an expansion is kept as written.
    pub words: Vec<String>,
    /// How much running it can change.
    pub risk: Risk,
}

/// Why a line cannot be vouched for.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Opacity {
    /// `$( … )`: its output becomes part of another command.
    CommandSubstitution,
    /// `` `…` ``: the old form of a command substitution.
    Backticks,
    /// `<( … )` or `>( … )`.
    ProcessSubstitution,
    /// `eval …`.
    Eval,
    /// `sh -c '…'` and the like (also `su -c`, `sudo -s`, `trap`).
    ShellString,
    /// An output redirect to this target.
    Redirect(String),
    /// An assignment to this variable (not a locale one).
    Assignment(String),
    /// `export`, `declare`, `typeset`, `local`, `readonly` or `unset`.
    Export(String),
    /// `alias`, `hash -p` or `enable`: a later name runs something else.
    Rebinding(String),
    /// A command name built from an expansion or a glob, as written.
    DynamicCommand(String),
    /// An option of a wrapper or runner that this crate does not know.
    UnknownOption {
        /// The wrapper, such as `timeout`.
        program: String,
        /// The option as written.
        option: String,
    },
    /// The line did not parse.
    ParseError,
    /// Nesting deeper than the walk follows.
    TooDeep,
    /// A line too large or too odd to parse in bounded time.
    TooLarge,
}

impl fmt::Display for Opacity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Opacity::CommandSubstitution => f.write_str("a command substitution $(…)"),
            Opacity::Backticks => f.write_str("a command substitution in backticks `…`"),
            Opacity::ProcessSubstitution => f.write_str("a process substitution <(…)"),
            Opacity::Eval => f.write_str("an eval"),
            Opacity::ShellString => f.write_str("a shell string (sh -c '…')"),
            Opacity::Redirect(target) => write!(f, "an output redirect to {target}"),
            Opacity::Assignment(name) => write!(f, "an assignment to {name}"),
            Opacity::Export(builtin) => write!(f, "a variable change with {builtin}"),
            Opacity::Rebinding(builtin) => {
                write!(f, "{builtin}, which changes what a command name runs")
            }
            Opacity::DynamicCommand(name) => {
                write!(f, "a command name only known when it runs: {name}")
            }
            Opacity::UnknownOption { program, option } => {
                write!(f, "an option of {program} that is not understood: {option}")
            }
            Opacity::ParseError => f.write_str("a parse error"),
            Opacity::TooDeep => f.write_str("nesting too deep to follow"),
            Opacity::TooLarge => f.write_str("a line too large to follow"),
        }
    }
}

/// Splits `line` into its commands. Never panics, on any input.
#[must_use]
pub fn split(line: &str) -> Split {
    let mut sink = walk::Sink::default();
    walk::walk_source(&mut sink, line, 0, 0);
    Split {
        commands: sink.commands,
        opaque: sink.opaque,
    }
}

/// [`split`] without its fast path for plain lines: every line goes
/// through tree-sitter. For tests and fuzzing, which check that both give
/// the same split.
#[doc(hidden)]
#[must_use]
pub fn split_tree_sitter(line: &str) -> Split {
    let mut sink = walk::Sink {
        tree_sitter_only: true,
        ..walk::Sink::default()
    };
    walk::walk_source(&mut sink, line, 0, 0);
    Split {
        commands: sink.commands,
        opaque: sink.opaque,
    }
}

/// The split as the permission engine receives it: each command's text and
/// the opacity reason in words.
#[must_use]
pub fn segments(split: &Split) -> Segments {
    Segments {
        commands: split.commands.iter().map(|c| c.text.clone()).collect(),
        opaque: split.opaque.as_ref().map(ToString::to_string),
    }
}

/// The risk of the whole line: the highest of its commands' (ReadOnly for a
/// line with none), and at least Exec when the line is opaque.
#[must_use]
pub fn line_risk(split: &Split) -> Risk {
    let most = split
        .commands
        .iter()
        .map(|c| c.risk)
        .max()
        .unwrap_or(Risk::ReadOnly);
    if split.opaque.is_some() {
        most.max(Risk::Exec)
    } else {
        most
    }
}
