//! Seeing through wrappers, runners and shell strings.
//!
//! [`Walk::judge`] takes a simple command's words (leading assignments
//! already handled) and lists what it runs. It peels transparent wrappers
//! (`nohup`, `timeout 5`, `env`, bare `xargs` …) off the front, lists a
//! runner (`sudo`, `xargs -0`, `find -exec`) *and* what it runs, and parses
//! shell strings (`sh -c`, `eval`, `su -c`, `trap`, `env -S`) again with
//! the same walk. Other programs go to `builtins`, `programs` and `inline`.
//! The crate docs list the choices; `options` and `specs` hold the option
//! tables.

use crate::options::{
    COMMAND, DOAS, ENV, EXEC, NICE, Parsed, STDBUF, SUDO, Spec, TIME, TIMEOUT, XARGS, parse_options,
};
use crate::paths::PathArg;
use crate::rules::{is_locale, may_matter, redirect_opacity};
use crate::shells::{shell_string, su, trap};
use crate::walk::Walk;
use crate::words::{Word, basename};
use crate::{MAX_WRAPPERS, Opacity};
use crate::{builtins, programs, resolve};

/// Shells whose `-c` string is parsed again.
pub(crate) const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash", "yash", "tcsh", "csh",
    "pdksh", "oksh", "posh",
];

/// Words that bash reads as syntax in command position, so a command
/// cannot be named by them unquoted; one that reaches the wrappers means
/// tree-sitter misread the line.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "function", "{", "}", "]]",
];

/// What to do with a command after looking at its name.
pub(crate) enum Step {
    /// Strip this many words and look again (a transparent wrapper).
    Strip(usize),
    /// The line is opaque for this reason; strip this many words and look
    /// again (`env FOO=1 cmd`, which is `FOO=1 cmd`).
    StripOpaque(Opacity, usize),
    /// List the words as they are, then look again past this many (a
    /// runner: the runner and what it runs are both listed).
    Runner(usize),
    /// A runner the line is opaque for (`setsid`, `chroot`, `watch` …).
    OpaqueRunner(Opacity, usize),
    /// Not understood: list the words, the line is opaque, then look again
    /// past this many words as the best guess.
    Unknown(String, usize),
    /// List the words; the line is opaque for this reason; this text, if
    /// known, is a shell string, parsed again (`sh -c`, `eval`, `watch`).
    Reparse(Opacity, Option<String>),
    /// List the words; the line is opaque for this reason; a script the
    /// command reads on its standard input is parsed again, if `stdin`
    /// and it is known (`sh <<< 'rm x'`, `source /dev/stdin`).
    Script { reason: Opacity, stdin: bool },
    /// List the words; these ranges are commands of their own (find -exec).
    Clauses(Vec<(usize, usize)>),
    /// List the words as they are; the line is opaque for this reason.
    Opaque(Opacity),
    /// Like `Opaque`, and what runs is only known at run time (`xargs
    /// env`: the command comes from standard input).
    Dynamic(Opacity),
    /// A runner whose options are not known: list it, and each suffix of
    /// its words from this index as a command of its own.
    Suffixes(Opacity, usize),
    /// List the words as they are.
    Plain,
}

impl Walk<'_> {
    /// Lists what a simple command runs. `depth` is the tree depth, passed
    /// on to shell strings.
    pub(crate) fn judge(&mut self, words: &[Word], depth: usize) {
        let mut words = words;
        // Every step that loops consumes at least one word, so this ends;
        // it is also bounded, so `sudo sudo … rm x` costs no more than a
        // line of its length.
        for _ in 0..=MAX_WRAPPERS {
            let Some(first) = words.first() else {
                return;
            };
            let Some(name) = first.command_name() else {
                // A name cox can work out is judged as what it becomes
                // (`$'\x72m'`, `{rm,x}`, `a=rm; $a`); one read from a
                // variable stays dynamic.
                if let Some((candidates, via_variable)) =
                    resolve::command_word(&first.raw, &self.sink.vars)
                {
                    if via_variable {
                        self.sink.opaque(Opacity::DynamicCommand(first.raw.clone()));
                    }
                    for fields in candidates {
                        let mut next: Vec<Word> = fields.iter().map(|f| Word::plain(f)).collect();
                        next.extend(words[1..].iter().cloned());
                        self.judge(&next, depth);
                    }
                    return;
                }
                self.sink.opaque(Opacity::DynamicCommand(first.raw.clone()));
                self.push(words);
                return;
            };
            if first.raw == name && RESERVED.contains(&name) {
                self.sink.opaque(Opacity::ParseError);
                self.push(words);
                return;
            }
            let program = basename(name);
            builtins::note_evaluation(self.sink, program, words);
            self.note_directory(program, words);
            let next = match step(program, words) {
                Step::Strip(n) if n < words.len() => n,
                Step::Opaque(reason) => {
                    if matches!(
                        reason,
                        Opacity::InlineCode(_) | Opacity::Runner(_) | Opacity::Rebinding(_)
                    ) {
                        // The code it runs (or a name will run) is among
                        // its arguments, or what it reads on its input.
                        let args = words.iter().skip(1).map(|w| w.loose.clone());
                        self.sink.unfollowed.extend(args);
                        if let Some(input) = self.stdin.clone() {
                            self.sink.unfollowed.push(input);
                        }
                    }
                    self.sink.opaque(reason);
                    self.push(words);
                    return;
                }
                Step::Strip(_) | Step::Plain => {
                    self.push(words);
                    return;
                }
                Step::StripOpaque(reason, n) => {
                    self.sink.opaque(reason);
                    if n >= words.len() {
                        self.push(words);
                        return;
                    }
                    n
                }
                Step::Runner(n) => {
                    self.push(words);
                    n
                }
                Step::OpaqueRunner(reason, n) => {
                    self.sink.opaque(reason);
                    self.push(words);
                    n
                }
                Step::Unknown(option, n) => {
                    self.sink.opaque(Opacity::UnknownOption {
                        program: program.to_owned(),
                        option,
                    });
                    self.push(words);
                    n
                }
                Step::Reparse(reason, script) => {
                    self.push(words);
                    self.sink.opaque(reason);
                    match script {
                        Some(script) => self.nested(&script, depth),
                        None => self.sink.dynamic = true,
                    }
                    return;
                }
                Step::Dynamic(reason) => {
                    self.sink.opaque(reason);
                    self.sink.dynamic = true;
                    self.push(words);
                    return;
                }
                Step::Suffixes(reason, from) => {
                    // A runner whose options cox does not know: every
                    // word from `from` on may be where the command starts.
                    self.sink.opaque(reason);
                    self.push(words);
                    for start in from..words.len().min(from + 8) {
                        if let Some(rest) = words.get(start..) {
                            self.judge(rest, depth);
                        }
                    }
                    return;
                }
                Step::Script { reason, stdin } => {
                    self.push(words);
                    self.sink.opaque(reason);
                    match self.stdin.take().filter(|_| stdin) {
                        Some(script) => self.nested(&script, depth),
                        // A script cox cannot see may run anything.
                        None => self.sink.dynamic = true,
                    }
                    return;
                }
                Step::Clauses(clauses) => {
                    self.push(words);
                    for (start, end) in clauses {
                        if let Some(clause) = words.get(start..end) {
                            self.judge(clause, depth);
                        }
                    }
                    return;
                }
            };
            // `xargs cat`: its operands come from its input, unless that is
            // a list of paths a command before it found (and was judged on).
            let producer = self.piped_from.take();
            if program == "xargs" {
                let lists_paths = producer.as_deref().is_some_and(|p| {
                    matches!(p, "find" | "fd" | "fdfind" | "git" | "rg" | "grep" | "ls")
                });
                if lists_paths {
                    // The paths it reads are files found below here; what
                    // links among them point at is read too.
                    self.sink.paths.push(PathArg::walked_here());
                } else {
                    self.sink.from_input = true;
                }
            }
            words = words.get(next.max(1)..).unwrap_or_default();
        }
        // Past the bound: what is left, as one command.
        self.sink.opaque(Opacity::TooDeep);
        self.push(words);
    }
}

impl Walk<'_> {
    /// A program that runs in, or reads relative paths from, another
    /// folder (`env -C DIR`, `git -C DIR`, `tar -C DIR`, `make -C DIR`):
    /// the folder counts as a `cd` for the paths of the line.
    fn note_directory(&mut self, program: &str, words: &[Word]) {
        let option = match program {
            "env" => ["-C", "--chdir"],
            "git" | "tar" | "gtar" | "bsdtar" | "make" | "gmake" => ["-C", "--directory"],
            _ => return,
        };
        for (i, word) in words.iter().enumerate().skip(1) {
            let Some(arg) = word.lit() else { continue };
            let value = if option.contains(&arg) {
                Some(words.get(i + 1).and_then(Word::lit).map(str::to_owned))
            } else if let Some(v) = arg
                .strip_prefix("--chdir=")
                .or(arg.strip_prefix("--directory="))
            {
                Some(Some(v.to_owned()))
            } else {
                arg.strip_prefix("-C")
                    .filter(|v| !v.is_empty())
                    .map(|v| Some(v.to_owned()))
            };
            if let Some(dir) = value {
                self.sink.dirs.push(dir);
            }
        }
    }
}

/// Looks at a command whose program (basename) is `program`.
fn step(program: &str, words: &[Word]) -> Step {
    let options = |spec: &Spec| parse_options(words, spec);
    match program {
        "!" => keyword(words, 1),
        "nohup" | "builtin" | "noglob" | "coproc" => match words.get(1).and_then(Word::lit) {
            Some("--") => Step::Strip(2),
            _ => Step::Strip(1),
        },
        "time" => match time(words) {
            Step::Strip(n) => keyword(words, n),
            other => other,
        },
        "timeout" => wrapper(options(&TIMEOUT), 1),
        "nice" => wrapper(options(&NICE), 0),
        "stdbuf" => wrapper(options(&STDBUF), 0),
        "exec" => wrapper(options(&EXEC), 0),
        "command" => {
            let parsed = options(&COMMAND);
            if parsed.saw("v") || parsed.saw("V") {
                Step::Plain
            } else {
                wrapper(parsed, 0)
            }
        }
        "env" => env(words),
        "xargs" => xargs(words),
        "sudo" => sudo(words),
        "doas" => runner(options(&DOAS), words, &["s"]),
        "su" => su(words),
        "eval" => Step::Reparse(Opacity::Eval, Some(joined(words, 1))),
        "trap" => trap(words),
        "find" => find(words),
        shell if SHELLS.contains(&shell) => shell_string(program, words),
        "read" | "getopts" | "let" => assigns(words, 1),
        "mapfile" | "readarray" => builtins::mapfile(words).unwrap_or_else(|| assigns(words, 1)),
        "printf" | "wait" => {
            let flag = if program == "printf" { "-v" } else { "-p" };
            match words.iter().skip(1).find_map(|w| {
                let lit = w.lit()?;
                let value = lit.strip_prefix(flag)?;
                Some((w, value))
            }) {
                // `printf -vNAME`: the name is attached.
                Some((word, value)) if !value.is_empty() => {
                    assigns(&[word.clone(), attached(word, value)], 1)
                }
                Some(_) => {
                    let at = words
                        .iter()
                        .position(|w| w.lit() == Some(flag))
                        .unwrap_or(0);
                    assigns(words.get(at..at + 2).unwrap_or_default(), 1)
                }
                None => Step::Plain,
            }
        }
        "alias" if words.iter().skip(1).any(|w| w.value().contains('=')) => {
            Step::Opaque(Opacity::Rebinding("alias".to_owned()))
        }
        "hash" if words.iter().any(|w| w.lit() == Some("-p")) => {
            Step::Opaque(Opacity::Rebinding("hash -p".to_owned()))
        }
        // `git config alias.p '!rm x'`: a later `git p` runs the value.
        "git"
            if words.iter().any(|w| w.lit() == Some("config"))
                && words.iter().any(|w| w.value().starts_with("alias.")) =>
        {
            Step::Opaque(Opacity::Rebinding("git config alias".to_owned()))
        }
        "enable" => Step::Opaque(Opacity::Rebinding("enable".to_owned())),
        _ => programs::step(program, words),
    }
}

/// After the keywords `time` and `!` (the first `skip` words), bash still
/// reads leading assignments as assignments (`time A=1 rm x` runs `rm x`
/// with `A` set), as it would at the start of a command.
fn keyword(words: &[Word], skip: usize) -> Step {
    strip_assignments(words, skip, None)
}

/// Strips the `NAME=VALUE` words from `from` on, like leading assignments
/// (a locale one is harmless); `reason` is an opacity already found.
fn strip_assignments(words: &[Word], from: usize, mut reason: Option<Opacity>) -> Step {
    let mut end = from;
    while let Some(name) = words.get(end).and_then(Word::lit).and_then(assigned_name) {
        if !is_locale(name) && reason.is_none() {
            reason = Some(Opacity::Assignment(name.to_owned()));
        }
        end += 1;
    }
    match reason {
        Some(reason) => Step::StripOpaque(reason, end),
        None => Step::Strip(end),
    }
}

/// The words from `from` joined by spaces, as best known (`eval`'s string).
pub(crate) fn joined(words: &[Word], from: usize) -> String {
    let rest = words.get(from..).unwrap_or_default();
    let script: Vec<&str> = rest.iter().map(|w| w.loose.as_str()).collect();
    script.join(" ")
}

/// A builtin that sets variables (`read`, `mapfile`, `printf -v`, `let` …):
/// the words from `from` that name a variable (a whole word, or what comes
/// before `=` for `let`) are judged by [`may_matter`]. Over-matching an
/// option's value is harmless: it only makes the line opaque.
fn assigns(words: &[Word], from: usize) -> Step {
    let target = words.iter().skip(from).find_map(|w| {
        let value = w.lit()?;
        let name = value
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .next()?;
        let identifier = name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
        (identifier && may_matter(name)).then(|| name.to_owned())
    });
    match target {
        Some(name) => Step::Opaque(Opacity::Assignment(name)),
        None => Step::Plain,
    }
}

/// `time [-p] [-o FILE] …`: a wrapper; GNU time's `-o FILE` writes the
/// file, judged like an output redirect.
fn time(words: &[Word]) -> Step {
    let parsed = parse_options(words, &TIME);
    let options = words.get(1..parsed.end).unwrap_or_default();
    let output = options.iter().enumerate().find_map(|(i, word)| {
        let arg = word.lit().unwrap_or_default();
        match arg.strip_prefix("--output") {
            Some("") => options.get(i + 1).cloned(),
            Some(value) => value.strip_prefix('=').map(|v| attached(word, v)),
            None if arg.starts_with("-o") && arg.len() > 2 => Some(attached(word, &arg[2..])),
            None if arg.starts_with('-') && !arg.starts_with("--") && arg.ends_with('o') => {
                options.get(i + 1).cloned()
            }
            None => None,
        }
    });
    match output.and_then(|target| redirect_opacity(">", Some(target))) {
        Some(reason) if parsed.unknown.is_none() => Step::StripOpaque(reason, parsed.end),
        _ => wrapper(parsed, 0),
    }
}

/// A word for a value attached to an option (`-oFILE`).
fn attached(word: &Word, value: &str) -> Word {
    Word {
        raw: value.to_owned(),
        lit: Some(value.to_owned()),
        loose: value.to_owned(),
        pattern: word.pattern,
    }
}

/// A transparent wrapper: strip its options and `positional` operands
/// (timeout's duration).
fn wrapper(parsed: Parsed, positional: usize) -> Step {
    let end = parsed.end + positional;
    match parsed.unknown {
        None => Step::Strip(end),
        Some(option) => Step::Unknown(option, end),
    }
}

/// A runner: listed, then what it runs from its first operand. With one of
/// the `shell` options, its operands are a shell string, and without
/// operands it starts a shell that reads its standard input.
fn runner(parsed: Parsed, words: &[Word], shell: &[&str]) -> Step {
    if let Some(option) = parsed.unknown {
        return Step::Unknown(option, parsed.end);
    }
    let shell_option = shell.iter().any(|o| parsed.saw(o));
    if parsed.end >= words.len() && shell_option {
        // `sudo -s` alone: a shell reading its standard input.
        let program = words
            .first()
            .and_then(Word::command_name)
            .unwrap_or_default();
        Step::Script {
            reason: Opacity::Script(basename(program).to_owned()),
            stdin: true,
        }
    } else if parsed.end >= words.len() {
        Step::Plain
    } else if shell_option {
        Step::Reparse(Opacity::ShellString, Some(joined(words, parsed.end)))
    } else {
        Step::Runner(parsed.end)
    }
}

/// `env [options] [NAME=VALUE]… [command]`: like leading assignments.
/// `-S STRING` splits the string into a command: it is parsed like a
/// shell string, with the words after it.
fn env(words: &[Word]) -> Step {
    let split_string = words.iter().enumerate().skip(1).find_map(|(i, w)| {
        let arg = w.lit()?;
        let attached = match arg.strip_prefix("--split-string") {
            Some(rest) => rest.strip_prefix('='),
            None => arg.strip_prefix("-S"),
        };
        match attached {
            Some("") => Some(joined(words, i + 1)),
            Some(value) => Some(format!("{value} {}", joined(words, i + 1))),
            None => None,
        }
    });
    if let Some(script) = split_string {
        return Step::Reparse(Opacity::ShellString, Some(script));
    }
    // `env -` is `env -i`; the parser would take it for an operand.
    let dashes = words
        .iter()
        .skip(1)
        .take_while(|w| w.lit() == Some("-"))
        .count();
    let shifted: Vec<Word> = words[..1]
        .iter()
        .chain(words.get(1 + dashes..).unwrap_or_default())
        .cloned()
        .collect();
    let parsed = parse_options(&shifted, &ENV);
    let reason = parsed.unknown.map(|option| Opacity::UnknownOption {
        program: "env".to_owned(),
        option,
    });
    strip_assignments(words, parsed.end + dashes, reason)
}

/// The variable a `NAME=VALUE` word assigns.
fn assigned_name(word: &str) -> Option<&str> {
    let (name, _) = word.split_once('=')?;
    let mut bytes = name.bytes();
    let first = bytes.next()?;
    let valid = (first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    valid.then_some(name)
}

/// Bare `xargs cmd` is stripped; with options it is a runner. When what
/// it runs is itself a wrapper or runner (`xargs env`, `xargs nice`,
/// `xargs xargs`), the command comes from standard input: only known at
/// run time.
fn xargs(words: &[Word]) -> Step {
    let bare = words
        .get(1)
        .and_then(Word::lit)
        .is_some_and(|arg| !arg.starts_with('-'));
    let parsed = (!bare).then(|| parse_options(words, &XARGS));
    let start = parsed.as_ref().map_or(1, |p| p.end);
    let command = words.get(start..).unwrap_or_default();
    if takes_command_from_input(command) || replaces_code(&words[..start.min(words.len())], command)
    {
        return Step::Dynamic(Opacity::Runner("xargs".to_owned()));
    }
    match parsed {
        None => Step::Strip(1),
        Some(parsed) => runner(parsed, words, &[]),
    }
}

/// Whether what `xargs` runs is a chain of wrappers with no command of its
/// own (`env`, `nice -n 1`, `timeout 5`, `xargs -0`), or a shell with no
/// script: the command is then the words `xargs` reads.
fn takes_command_from_input(words: &[Word]) -> bool {
    let mut rest = words;
    let mut wrappers = 0;
    while let Some(name) = rest.first().and_then(Word::command_name).map(basename) {
        if SHELLS.contains(&name) {
            return !rest.iter().skip(1).any(|w| {
                w.lit()
                    .is_some_and(|v| v.starts_with("-c") || !v.starts_with('-'))
            });
        }
        if !TAKES_A_COMMAND.contains(&name) {
            return false;
        }
        wrappers += 1;
        // The wrapper's options, assignments and durations.
        let skip = rest
            .iter()
            .skip(1)
            .take_while(|w| {
                w.lit().is_some_and(|v| {
                    v.starts_with('-')
                        || v.contains('=')
                        || v.trim_end_matches(['s', 'm', 'h', 'd'])
                            .parse::<f64>()
                            .is_ok()
                })
            })
            .count();
        rest = rest.get(1 + skip..).unwrap_or_default();
    }
    wrappers > 0 && rest.is_empty()
}

/// `xargs -I STR` (also `-i`, `--replace`) puts each input line where STR
/// stands: in the command name or in a shell string (`sh -c {}`), the
/// code run comes from the input.
fn replaces_code(options: &[Word], command: &[Word]) -> bool {
    let mut replace = None;
    for (i, word) in options.iter().enumerate() {
        let Some(arg) = word.lit() else { continue };
        if arg == "-I" {
            replace = options.get(i + 1).and_then(Word::lit).map(str::to_owned);
        } else if let Some(value) = arg.strip_prefix("-I") {
            replace = Some(value.to_owned());
        } else if arg == "-i" || arg == "--replace" {
            replace = Some("{}".to_owned());
        } else if let Some(value) = arg.strip_prefix("--replace=").or(arg.strip_prefix("-i")) {
            replace = Some(if value.is_empty() { "{}" } else { value }.to_owned());
        }
    }
    let Some(replace) = replace.filter(|r| !r.is_empty()) else {
        return false;
    };
    let in_name = command.first().is_some_and(|w| w.raw.contains(&replace));
    let shell = command
        .first()
        .and_then(Word::command_name)
        .is_some_and(|n| SHELLS.contains(&basename(n)));
    in_name || (shell && command.iter().skip(1).any(|w| w.raw.contains(&replace)))
}

/// Wrappers and runners whose operands are a command.
const TAKES_A_COMMAND: &[&str] = &[
    "env", "nice", "nohup", "timeout", "stdbuf", "xargs", "command", "builtin", "exec", "time",
    "sudo", "doas", "setsid", "taskset", "ionice", "chrt", "strace", "ltrace", "unbuffer",
    "chroot", "flock", "eval", "su", "runuser", "setpriv", "prlimit", "nsenter", "unshare",
];

/// `sudo [options] command`: a runner. `-s`/`-i` with a command run it
/// through a shell; `-e`, `-l`, `-v` run nothing.
fn sudo(words: &[Word]) -> Step {
    let parsed = parse_options(words, &SUDO);
    if ["e", "l", "list", "v", "validate"]
        .iter()
        .any(|o| parsed.saw(o))
    {
        return Step::Plain;
    }
    runner(parsed, words, &["s", "i", "shell", "login"])
}

/// `find … -exec CMD … ;` (also `-execdir`, `-ok`, `-okdir`, ending with
/// `;` or `+`): each clause is a command of its own.
fn find(words: &[Word]) -> Step {
    let mut clauses = Vec::new();
    let mut i = 1;
    while i < words.len() {
        let is_exec = matches!(
            words[i].lit(),
            Some("-exec" | "-execdir" | "-ok" | "-okdir")
        );
        i += 1;
        if !is_exec {
            continue;
        }
        let start = i;
        while i < words.len() && !matches!(words[i].lit(), Some(";" | "+")) {
            i += 1;
        }
        if i > start {
            clauses.push((start, i));
        }
        i += 1;
    }
    if clauses.is_empty() {
        Step::Plain
    } else {
        Step::Clauses(clauses)
    }
}
