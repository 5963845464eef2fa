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
//! When unsure it makes the line opaque and lists more rather than less:
//! an extra command only makes deny rules stricter on a line that no allow
//! rule can pass anyway.
//!
//! # What is listed
//!
//! * Commands separated by `;`, `&&`, `||`, `|`, `|&`, `&` and newlines.
//! * Commands nested anywhere: `( … )`, `{ …; }`, `$( … )`, backticks,
//!   `<( … )`, `>( … )`, `for`/`while`/`until` conditions and bodies,
//!   `if`/`elif`/`else` conditions and bodies, `case` arms, function bodies,
//!   the commands after a heredoc start (`cat <<EOF | rm x`), substitutions
//!   in assignment values, redirect targets and heredoc bodies.
//! * Substitutions the tree shows as plain text: a `$( … )` or backtick
//!   anywhere in the raw text that the tree did not parse as one (in a
//!   heredoc body, inside `${x:-…}` in double quotes, in a single-quoted
//!   array subscript that bash evaluates again) is parsed on its own and its
//!   commands listed (see `scan`).
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
//! [`Command::text`] is what rules match: the command's words after
//! stripping wrappers and leading assignments, joined by one space. A word
//! that is a plain literal is written without its quotes and backslashes
//! (`rm '-rf' y`, `\rm -rf y` and `r""m -rf y` all read `rm -rf y`, so a
//! rule with arguments sees them); whitespace inside it is kept. A word with
//! an expansion is written as in the source, whitespace outside quotes
//! collapsed (`rm "$d"`). An empty literal (`''`) is left out. Line
//! continuations between words collapse. Redirects are left out
//! (`git status 2>/dev/null` reads `git status`); they are judged
//! separately, see Opacity. A word tree-sitter files as an extra redirect
//! target (`echo >/dev/null hi`) is put back as an argument. The fast path
//! for plain lines gives the same text.
//!
//! # Wrappers
//!
//! Transparent wrappers are stripped, with their options, and only the
//! wrapped command is listed (nested ones too: `nohup timeout 5 nice rm x`
//! lists `rm x`): `nohup`, `timeout` (options and duration), `time` (`-p`
//! and GNU time's `-v -q -f FMT -o FILE`; `-o` to a file is judged like an
//! output redirect), `nice` (`-n N`, `-N`), `stdbuf` (`-o0 -eL`,
//! `--output=L` …), `command` (`-p`; `command -v`/`-V` is a lookup, listed
//! as is and ReadOnly), `builtin`, zsh's `noglob`, `coproc`, `!`, `exec`
//! (`-c -l -a NAME`), `env` (`-i -0 -u NAME -C DIR`, then `NAME=VALUE`
//! words, which count like leading assignments) and bare `xargs` (`xargs rm`
//! lists `rm`). `time`, `!` and `coproc NAME` before a compound command
//! (`time while …`, `coproc foo { …; }`) are keywords; see `keywords`.
//!
//! *Runners* change who or how a command runs, so the runner itself is
//! listed **and** the command it runs is listed after it: `xargs` with
//! options (`xargs -0 rm` lists `xargs -0 rm` and `rm`), `sudo` and `doas`
//! (listed Destructive), and each `find … -exec/-execdir/-ok/-okdir CMD … ;`
//! clause. A deny rule sees the inner command; an allow rule has to cover
//! both.
//!
//! *Opaque runners* are listed the same way, and also make the line opaque
//! ([`Opacity::Runner`]), because an allow rule for the inner command must
//! not see through them: `setsid`, `taskset`, `ionice`, `chrt`, `strace`,
//! `ltrace`, `unbuffer`, `chroot`, `runuser`, `pkexec`, `systemd-run`,
//! `busybox`, `nsenter`, `unshare`, `flock`, `npx`/`pnpx`/`bunx`/`uvx`,
//! `npm exec`, `pnpm dlx`, `yarn dlx`, `bun x`, `uv run`, `uv tool run`,
//! `git bisect run`. `watch`, `sg`, `flock -c`, `parallel` take a command
//! string, parsed again as below. See `programs`.
//!
//! A wrapper or runner option this crate does not know (say
//! `timeout --sig KILL 5 rm x`, or an option built from an expansion) makes
//! the line opaque ([`Opacity::UnknownOption`]): it might take a value, and
//! guessing wrong would name the wrong command. The best guess is still
//! listed so deny rules see it. At most [`MAX_WRAPPERS`] wrappers and
//! runners are looked through in one command; past that the rest is
//! listed as one command and the line is opaque ([`Opacity::TooDeep`]).
//!
//! Not seen through (they are rated Exec and listed as written): `ssh`,
//! git aliases, scripts run by a program. Absolute paths are not resolved
//! for rule text (`/bin/rm x` reads `/bin/rm x`), but wrappers, shells and
//! risk go by the name's last path component.
//!
//! # Shell strings and scripts
//!
//! These run a string as shell code; they are listed, the line is opaque
//! ([`Opacity::Eval`], [`Opacity::ShellString`], [`Opacity::Runner`]), and
//! the string is parsed again with the same walk, so its commands are
//! listed after them: `eval …` (its arguments joined by spaces),
//! `sh|bash|zsh|dash|ksh|mksh|ash|fish|… -c '…'` (also with other flags
//! before or around `-c`, as in `bash -lc`), `su -c`, `runuser -c`, `sudo
//! -s|-i …`, `trap '…' SIGNAL`, `env -S '…'`, `script -c`, `mapfile`/
//! `readarray -C '…'`, `compgen`/`complete -C '…'`, `git rebase -x`, `git
//! submodule foreach`, `git filter-branch --*-filter`, `watch`, `sg`,
//! `flock -c`, `parallel`. A string that is not a plain literal (`bash -c
//! "rm $x"`) is parsed as written between its quotes, best effort.
//!
//! A shell without `-c` (`bash x.sh`, `sh <<< '…'`, `curl … | sh`), `.`
//! and `source`, `at` and `batch` run a script the split cannot see
//! ([`Opacity::Script`]); when the script is their standard input and that
//! is known text (a here-string, a heredoc body, or what a literal `echo`
//! or `printf` pipes in), it is parsed again like `sh -c`.
//!
//! Interpreters given code inline or on standard input (`python -c`, `perl
//! -e`, `ruby -e`, `node -e/-p`, `php -r`, `lua -e`, `python3 <<EOF`,
//! `tclsh`), `awk` programs that call `system(` or pipe, and `sed` scripts
//! with an `e` command or flag are opaque ([`Opacity::InlineCode`]); so are
//! `tar --to-command`/`--use-compress-program`/`-I`/`-F`/
//! `--checkpoint-action` and `git -c`/`--config-env`/`--exec-path`
//! ([`Opacity::Runner`]). See `inline`.
//!
//! Strings nest at most [`MAX_SHELL_DEPTH`] deep; deeper is
//! [`Opacity::TooDeep`].
//!
//! # Opacity
//!
//! [`Split::opaque`] holds the first reason found, in walk order:
//!
//! * `$( … )`, backticks, `<( … )`/`>( … )`, `eval`, a shell string or
//!   script, a runner or inline code as above;
//! * **any** backtick, `$(`, `<(`, `>(` or `$[` in the raw text, quoted or
//!   not, even where the tree shows none (a `$((` the tree parsed as
//!   arithmetic excepted) — the catch-all of `scan`;
//! * a variable set from data (`for x in *`, `read x`, `mapfile`,
//!   `getopts`, `printf -v`) on a line that evaluates a variable's value
//!   as code (`$((x))`, `((x))`, `let`, `${!x}`, `${x@P}`, a subscript or
//!   offset naming a variable, `-v` or an arithmetic comparison in
//!   `test`/`[[`): [`Opacity::Arithmetic`], checked once the line is walked;
//! * an output redirect (`>`, `>>`, `&>`, `&>>`, `>|`, `<>`, `N>`,
//!   `>&file`) to anything except `/dev/null`, `/dev/stdout`,
//!   `/dev/stderr`, an fd duplication (`2>&1`, `>&2`) or a close (`2>&-`).
//!   Input redirects (`<`, `<&3`), heredocs and here-strings are fine;
//! * a parse error: a tree-sitter ERROR or MISSING node, text the tree
//!   leaves out (tree-sitter-bash drops the `-` of `- A=1`), a NUL, or a
//!   keyword where a command name should be (`nohup time while …`);
//! * a control character other than tab and newline (`\r`, `\v`, `\f` …,
//!   [`Opacity::ControlCharacter`]; every `\r`, a CRLF line ending too, as
//!   bash reads `ls\r` as a command named `ls\r`), and a line continuation
//!   inside a word or an operator (`r\` newline `m`,
//!   [`Opacity::LineContinuation`]);
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
//!   [`MAX_SHELL_DEPTH`] shell strings; [`MAX_WRAPPERS`] wrappers), or a
//!   line too large to parse in bounded time (more than [`MAX_LINE`]
//!   bytes, more than 100 heredocs, nested strings and substitutions past
//!   a budget of 256 parses and 8 times the line's length, or a parse past
//!   its operation budget). What lies deeper is not listed, but
//!   the line is opaque, so no prefix rule or grant allows it.
//!
//! A leading assignment of a locale/display variable (`LC_ALL`, any `LC_*`,
//! `LANG`, `LANGUAGE`, `TZ`, `NO_COLOR`) is stripped and does not make the
//! line opaque: it cannot change which program a name resolves to.
//!
//! # What a deny rule still sees
//!
//! Besides the commands, a [`Split`] carries what deny and ask rules need
//! where the split cannot vouch for a line:
//!
//! * **Resolved names.** A command word cox can work out from the text is
//!   judged as what it becomes (see `resolve`): `$'\x72m'`, `{rm,x}`,
//!   `r$()m`, `rm${IFS}-rf${IFS}x`, `a=rm; $a x` (every value the line
//!   gives `a`), `${a:-rm}`. A name that stays dynamic sets
//!   [`Split::dynamic`], as does evaluating a risky value as code
//!   (`$((x))` with `x` from data), a prompt string, or a script cox
//!   cannot see (`bash x.sh`, `xargs env`).
//! * **The rough scan** ([`Split::scan`]): program names found word by word
//!   in the whole line when a limit was reached or it did not parse, and
//!   in the arguments of commands that run code cox does not parse
//!   (`python3 -c`, `awk 'system(…)'`, `git -c alias.x='!…'`, `alias`,
//!   `hash -p`, runners such as `docker run`) and in assignment values
//!   (`GIT_EXTERNAL_DIFF=rm`). Quotes, backslashes, empty substitutions
//!   and ANSI-C strings do not hide a name from it.
//! * **Paths** ([`Split::paths`], see `paths`): what each command reads or
//!   writes, and [`Split::dirs`], where a `cd` may move, for path rules.
//!   The bash tool resolves them against the file system.
//! * **Network**: a line naming `/dev/tcp/…` or `/dev/udp/…`, however
//!   quoted, is opaque ([`Opacity::Network`]).
//!
//! # Risk
//!
//! See the `risk` module: ReadOnly only for a vetted set of read-only
//! commands and flags, with every long option in a per-command list of
//! harmless ones written in full (`allow`, `git`), Destructive for clearly
//! destructive ones, Exec for everything else. [`line_risk`] is the maximum
//! over the commands, and at least Exec when the line is opaque.
//!
//! # Where tree-sitter-bash and bash differ
//!
//! The walk corrects for what was found by property tests, fuzzing and
//! review:
//!
//! * after a pipeline of three, or before a word starting with a backslash
//!   (`ls` newline `\rm x`), tree-sitter-bash can file the next line's
//!   first word as an argument; bash ends a command at an unescaped
//!   newline, and so does the walk;
//! * two words with only a line continuation between them (`r\` newline
//!   `m`) are one word to bash, and are joined;
//! * `time`, `!` and `coproc NAME` before a compound command are blanked
//!   and the line parsed again (see `keywords`);
//! * control characters other than tab and newline, which tree-sitter may
//!   take for blanks, and non-ASCII characters, before which its scanner
//!   can crash (`{` then a large code point), are parsed as `x` (words are
//!   read from the original line);
//! * a line that does not parse is also cut roughly at its operators and
//!   each piece listed (see `fallback`): `cat <<E''`, `((true) && rm y)`
//!   and `echo `#`;rm y` parse differently in bash.
//!
//! # Cost
//!
//! Plain lines (words, quotes, and `;`, `&&`, `||`, `|`, `&`, newlines, no
//! expansion, redirect or keyword) take a fast path without tree-sitter,
//! about 3 µs for 100 bytes; a property test and the fuzz target check that
//! it agrees with the tree-sitter walk on every line. Other lines cost a
//! tree-sitter parse (about 15–20 µs for 100 bytes) plus the walk. One
//! parser is kept per thread (`thread_local!`). Every step is linear or
//! bounded in the line's length: lines over [`MAX_LINE`] bytes are not
//! parsed, wrappers, shell strings, hidden substitutions and tree depth
//! are capped, and a test splits hostile lines of the cap in debug builds.

mod allow;
mod builtins;
mod fallback;
mod fast;
mod git;
mod inline;
mod keywords;
mod options;
mod parse;
mod paths;
mod programs;
mod redirects;
mod resolve;
mod risk;
mod rules;
mod scan;
mod sed;
mod shells;
mod sink;
mod source;
mod specs;
mod syntax;
mod walk;
mod words;
mod wrappers;

use std::fmt;

use cox_protocol::types::{PathAccess, Risk, Segments, ShellPath};

pub use paths::{Access, PathArg};

/// How deep `eval`/`sh -c` strings may nest before the line is opaque.
pub const MAX_SHELL_DEPTH: usize = 8;

/// The longest line split, in bytes. A longer one is not parsed: it is
/// opaque ([`Opacity::TooLarge`]) and listed as one command, its whole
/// text with whitespace collapsed.
pub const MAX_LINE: usize = 16 * 1024;

/// How many wrappers and runners (`nohup`, `sudo`, `xargs -0` …) are
/// looked through in one command; past that the command is opaque
/// ([`Opacity::TooDeep`]).
pub const MAX_WRAPPERS: usize = 32;

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
    /// Program names from a rough word scan of what the split could not
    /// follow: the whole line when a limit was reached or it did not parse
    /// (the commands listed may then be incomplete), and the arguments of
    /// a command given code inline (`python3 -c …`, `awk '{system(…)}'`,
    /// `git -c alias.x='!…'`). A deny or ask rule whose program is among
    /// them applies to the line.
    pub scan: Vec<String>,
    /// A command name is only known when the line runs (`$cmd x`,
    /// `$(echo rm) x`): a deny rule cannot tell what it is.
    pub dynamic: bool,
    /// The paths the commands name (operands of readers and writers,
    /// path-like arguments of other programs, redirect targets), for path
    /// rules; see the `paths` module.
    pub paths: Vec<PathArg>,
    /// Where a `cd` or `pushd` on the line may move before a later command
    /// runs, so relative paths are judged from each (`None`: only known
    /// when the line runs, `cd "$d"`, `cd -`, `popd`).
    pub dirs: Vec<Option<String>>,
    /// The least risk the line's opacities give it, whatever its commands'
    /// (Exec for a reason that may hide a command, Write for an output
    /// redirect, none for a command substitution the walk followed).
    pub floor: Risk,
}

/// One command of a line, written as rules match it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// Its words from the first real word to its end, wrappers and leading
    /// locale assignments stripped, joined by single spaces: a plain literal
    /// word without its quotes, a word with an expansion as written, an
    /// empty literal left out.
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
    /// A control character other than tab and newline (`\r`, `\v`, `\f`
    /// …), which bash reads as part of a word and tree-sitter may not.
    ControlCharacter,
    /// A line continuation inside a word or an operator (`r\` newline `m`).
    LineContinuation,
    /// A variable set from data and evaluated as code (`$((x))`, `${!x}`,
    /// `${x@P}`, `test -v`), or `$[ … ]`.
    Arithmetic,
    /// A program that runs another command in a way rules cannot follow
    /// (`setsid`, `chroot`, `watch`, `npx` …), or one with an option that
    /// runs a command (`git -c`, `tar --to-command`).
    Runner(String),
    /// Code for an interpreter given on its command line or standard input
    /// (`python -c`, `perl -e`, `awk '{ system(…) }'`, `sed 's/x/y/e'`).
    InlineCode(String),
    /// A shell or `source` running a script from a file or standard input.
    Script(String),
    /// A network connection through bash's `/dev/tcp` or `/dev/udp`.
    Network,
}

impl Opacity {
    /// The least risk this reason gives a line, whatever its commands: a
    /// command substitution hides no command (the walk lists the commands
    /// inside it), so none; an output redirect writes a file; any other
    /// reason may hide a command.
    #[must_use]
    pub fn floor(&self) -> Risk {
        match self {
            Opacity::CommandSubstitution | Opacity::Backticks => Risk::ReadOnly,
            Opacity::Redirect(_) => Risk::Write,
            _ => Risk::Exec,
        }
    }
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
            Opacity::ControlCharacter => {
                f.write_str("a control character (\\r, \\v, \\f …) bash reads as a word character")
            }
            Opacity::LineContinuation => {
                f.write_str("a line continuation inside a word or operator")
            }
            Opacity::Arithmetic => f.write_str(
                "an arithmetic or indirect expansion that can run what a variable holds",
            ),
            Opacity::Runner(program) => {
                write!(
                    f,
                    "{program}, which runs a command in a way rules cannot follow"
                )
            }
            Opacity::InlineCode(program) => write!(f, "code run by {program}"),
            Opacity::Script(program) => write!(f, "a script run by {program}"),
            Opacity::Network => f.write_str("a network connection through /dev/tcp or /dev/udp"),
        }
    }
}

/// Splits `line` into its commands. Never panics, on any input.
#[must_use]
pub fn split(line: &str) -> Split {
    split_with(line, sink::Sink::default())
}

fn split_with(line: &str, mut sink: sink::Sink) -> Split {
    if line.len() > MAX_LINE {
        return too_large(line);
    }
    sink.budget = sink::Budget::for_line(line.len());
    source::walk_source(&mut sink, line, 0, 0);
    // A line that evaluates a variable's value as code and gives a
    // variable a value (from data, or from text cox does not evaluate,
    // `x="a[$(rm y)]"; echo $((x))`) may run anything: the command is only
    // known when it runs.
    if sink.evaluates && (sink.data_vars || sink.vars.risky()) {
        sink.opaque(Opacity::Arithmetic);
        sink.dynamic = true;
    }
    // bash opens a connection for a redirect to these, and a word naming
    // one anywhere may reach a redirect through a string or a variable;
    // quotes, backslashes and ANSI-C strings do not hide one.
    if sink::names_network(line) {
        sink.opaque(Opacity::Network);
    }
    // After a `cd`, git may find another repository (a bare one shipped
    // inside the workspace), whose configuration can run programs
    // (`core.fsmonitor`): not read-only.
    if !sink.dirs.is_empty() {
        for command in &mut sink.commands {
            let git = command
                .words
                .first()
                .is_some_and(|w| words::basename(w) == "git");
            if git && command.risk == Risk::ReadOnly {
                command.risk = Risk::Exec;
            }
        }
    }
    line_state(line, &mut sink);
    if sink.partial {
        sink.paths.extend(unfollowed_paths());
    }
    let scan = if sink.partial {
        sink::scan_names(std::iter::once(line))
    } else {
        sink::scan_names(sink.unfollowed.iter().map(String::as_str))
    };
    Split {
        commands: sink.commands,
        opaque: sink.opaque,
        scan,
        dynamic: sink.dynamic,
        paths: sink.paths,
        dirs: sink.dirs,
        floor: sink.floor,
    }
}

/// What a line changes for the paths and names of its later commands:
///
/// * glob options (`shopt -s dotglob`, `GLOBIGNORE=…`, `set -o …`) change
///   what a glob matches: glob paths are only known when the line runs;
/// * `HOME=…` changes what `~` is, `CDPATH=…` where `cd` goes: paths with
///   a `~` (or after a `cd`) are only known when the line runs;
/// * a path the line writes, links or copies (`ln -s ~ h`, `cp /bin/rm
///   d`, `> s`) is not what cox sees on disk now: a read below it is only
///   known when the line runs, and a command run from it is dynamic.
fn line_state(line: &str, sink: &mut sink::Sink) {
    let globs = line.contains("shopt") || line.contains("GLOBIGNORE") || line.contains("set -o");
    let home = line.contains("HOME=") || line.contains("HOME+=");
    if line.contains("CDPATH") {
        for dir in &mut sink.dirs {
            *dir = None;
        }
    }
    let written: Vec<String> = sink
        .paths
        .iter()
        .filter(|p| p.access == Access::Write && p.known)
        .map(|p| {
            p.text
                .trim_start_matches("./")
                .trim_end_matches('/')
                .to_owned()
        })
        .filter(|t| !t.is_empty())
        .collect();
    // Links the line makes (`ln [-s] TARGET NAME`, `ln -t DIR …`, a hard
    // link too): any of its operands may be a link once it ran, so a write
    // to it or below it may land elsewhere. (A link a copy or a move puts
    // in place, `cp -P`, is not followed: the sandbox's read-only binds
    // hold whatever link a write goes through.)
    let operands_of = |programs: &[&str]| -> Vec<String> {
        sink.commands
            .iter()
            .filter(|c| {
                c.words
                    .first()
                    .is_some_and(|w| programs.contains(&words::basename(w)))
            })
            .flat_map(|c| c.words.iter().skip(1).filter(|w| !w.starts_with('-')))
            .map(|t| t.trim_start_matches("./").trim_end_matches('/').to_owned())
            .filter(|t| !t.is_empty())
            .collect()
    };
    let links = operands_of(&["ln"]);
    // For reads, the names the links get (the last operand): `ln -s
    // TARGET NAME` does not read TARGET.
    let link_names: Vec<String> = sink
        .commands
        .iter()
        .filter(|c| c.words.first().is_some_and(|w| words::basename(w) == "ln"))
        .filter_map(|c| {
            c.words
                .iter()
                .skip(1)
                .rfind(|w| !w.starts_with('-'))
                .cloned()
        })
        .map(|t| t.trim_start_matches("./").trim_end_matches('/').to_owned())
        .collect();

    let under = |text: &str, list: &[String], equal: bool| {
        let text = text.trim_start_matches("./");
        list.iter().any(|w| {
            (equal && text == w)
                || text
                    .strip_prefix(w.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        })
    };
    let below = |text: &str| under(text, &written, false) || under(text, &link_names, true);
    // A write where a link may stand is judged twice: as written (a rule
    // on that name still matches) and as a path only known when it runs
    // (where the link points).
    let mut redirected = Vec::new();
    for path in &mut sink.paths {
        let unknown = (globs && path.glob)
            || (home && path.text.starts_with('~'))
            || (path.access == Access::Read && below(&path.text));
        if unknown {
            path.known = false;
        } else if path.access == Access::Write && !path.by_ln && under(&path.text, &links, true) {
            redirected.push(PathArg {
                known: false,
                ..path.clone()
            });
        }
    }
    sink.paths.extend(redirected);
    let run_from_written = sink.commands.iter().find_map(|c| {
        let name = c.words.first()?;
        (name.contains('/') && (under(name, &written, true) || below(name))).then(|| name.clone())
    });
    if let Some(name) = run_from_written {
        sink.opaque(Opacity::DynamicCommand(name));
    }
}

/// A line over [`MAX_LINE`]: one command, the whole line.
fn too_large(line: &str) -> Split {
    let text = words::collapse_whitespace(line);
    let commands = if text.is_empty() {
        Vec::new()
    } else {
        vec![Command {
            words: text.split(' ').map(str::to_owned).collect(),
            text,
            risk: Risk::Exec,
        }]
    };
    Split {
        commands,
        opaque: Some(Opacity::TooLarge),
        scan: sink::scan_names(std::iter::once(line)),
        dynamic: false,
        paths: unfollowed_paths(),
        dirs: Vec::new(),
        floor: Risk::Exec,
    }
}

/// What stands for the paths of a line cox could not follow to its end
/// (too long, too deep, or not parsed): one unknown path read and one
/// written, so every path rule may apply to it.
fn unfollowed_paths() -> Vec<PathArg> {
    [Access::Read, Access::Write]
        .into_iter()
        .map(|access| PathArg {
            text: UNFOLLOWED.to_owned(),
            access,
            recursive: false,
            follows: false,
            known: false,
            glob: false,
            by_ln: false,
        })
        .collect()
}

/// The text of [`unfollowed_paths`].
pub const UNFOLLOWED: &str = "(the paths of a line cox could not follow)";

/// [`split`] without its fast path for plain lines: every line goes
/// through tree-sitter. For tests and fuzzing, which check that both give
/// the same split.
#[doc(hidden)]
#[must_use]
pub fn split_tree_sitter(line: &str) -> Split {
    let sink = sink::Sink {
        tree_sitter_only: true,
        ..sink::Sink::default()
    };
    split_with(line, sink)
}

/// The split as the permission engine receives it: each command's text and
/// the opacity reason in words.
#[must_use]
pub fn segments(split: &Split) -> Segments {
    Segments {
        commands: split.commands.iter().map(|c| c.text.clone()).collect(),
        opaque: split.opaque.as_ref().map(ToString::to_string),
        scan: split.scan.clone(),
        dynamic: split.dynamic,
        paths: split
            .paths
            .iter()
            .map(|p| ShellPath {
                path: p.text.clone(),
                access: match p.access {
                    Access::Read => PathAccess::Read,
                    Access::Write => PathAccess::Write,
                },
                recursive: p.recursive,
                // Resolved (made absolute, links and globs followed) by the
                // tool that runs the line; the engine reads a relative or
                // unresolved path as written.
                unknown: !p.known
                    || p.glob
                    || (!split.dirs.is_empty() && !p.text.starts_with(['/', '~'])),
                outside: false,
            })
            .collect(),
        unsandboxed: false,
    }
}

/// The risk of the whole line: the highest of its commands' (ReadOnly for a
/// line with none), and at least its opacities' floor (see
/// [`Split::floor`]).
#[must_use]
pub fn line_risk(split: &Split) -> Risk {
    let most = split
        .commands
        .iter()
        .map(|c| c.risk)
        .max()
        .unwrap_or(Risk::ReadOnly);
    most.max(split.floor)
}
