//! Seeing through wrappers, runners and shell strings.
//!
//! [`Walk::judge`] takes a simple command's words (leading assignments
//! already handled) and lists what it runs. It peels transparent wrappers
//! (`nohup`, `timeout 5`, `env`, bare `xargs` …) off the front, lists a
//! runner (`sudo`, `xargs -0`, `find -exec`) *and* what it runs, and parses
//! shell strings (`sh -c`, `eval`, `su -c`, `trap`) again with the same
//! walk. The crate docs list the choices; `options` holds the option
//! tables.

use crate::Opacity;
use crate::options::{
    COMMAND, DOAS, ENV, EXEC, NICE, Parsed, STDBUF, SUDO, Spec, TIME, TIMEOUT, XARGS, parse_options,
};
use crate::walk::{Walk, is_locale, may_matter};
use crate::words::{Word, basename};

/// Shells whose `-c` string is parsed again.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash", "yash",
];

/// What to do with a command after looking at its name.
enum Step {
    /// Strip this many words and look again (a transparent wrapper).
    Strip(usize),
    /// The line is opaque for this reason; strip this many words and look
    /// again (`env FOO=1 cmd`, which is `FOO=1 cmd`).
    StripOpaque(Opacity, usize),
    /// List the words as they are, then look again past this many (a
    /// runner: the runner and what it runs are both listed).
    Runner(usize),
    /// Not understood: list the words, the line is opaque, then look again
    /// past this many words as the best guess.
    Unknown(String, usize),
    /// List the words; the word at this index, if any, is a shell string.
    Shell(Option<usize>),
    /// List the words; the words from this index, joined, are a shell
    /// string (`eval`, `sudo -s`).
    Joined(Opacity, usize),
    /// List the words; these ranges are commands of their own (find -exec).
    Clauses(Vec<(usize, usize)>),
    /// List the words as they are; the line is opaque for this reason.
    Opaque(Opacity),
    /// List the words as they are.
    Plain,
}

impl Walk<'_> {
    /// Lists what a simple command runs. `depth` is the tree depth, passed
    /// on to shell strings.
    pub(crate) fn judge(&mut self, words: &[Word], depth: usize) {
        let mut words = words;
        // Every step that loops consumes at least one word, so this ends.
        while let Some(first) = words.first() {
            let Some(name) = first.command_name() else {
                self.sink.opaque(Opacity::DynamicCommand(first.raw.clone()));
                self.push(words);
                return;
            };
            let program = basename(name);
            let next = match step(program, words) {
                Step::Strip(n) if n < words.len() => n,
                Step::Opaque(reason) => {
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
                Step::Unknown(option, n) => {
                    self.sink.opaque(Opacity::UnknownOption {
                        program: program.to_owned(),
                        option,
                    });
                    self.push(words);
                    n
                }
                Step::Shell(script) => {
                    self.push(words);
                    self.sink.opaque(Opacity::ShellString);
                    if let Some(script) = script.and_then(|i| words.get(i)) {
                        let script = script.loose.clone();
                        self.nested(&script, depth);
                    }
                    return;
                }
                Step::Joined(reason, from) => {
                    self.push(words);
                    self.sink.opaque(reason);
                    let rest = words.get(from..).unwrap_or_default();
                    let script: Vec<&str> = rest.iter().map(|w| w.loose.as_str()).collect();
                    self.nested(&script.join(" "), depth);
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
            words = words.get(next.max(1)..).unwrap_or_default();
        }
    }
}

/// Looks at a command whose program (basename) is `program`.
fn step(program: &str, words: &[Word]) -> Step {
    let options = |spec: &Spec| parse_options(words, spec);
    match program {
        "nohup" | "builtin" | "noglob" | "coproc" => match words.get(1).and_then(Word::lit) {
            Some("--") => Step::Strip(2),
            _ => Step::Strip(1),
        },
        "time" => wrapper(options(&TIME), 0),
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
        "doas" => runner(options(&DOAS), words.len(), &["s"]),
        "su" => su(words),
        "eval" => Step::Joined(Opacity::Eval, 1),
        "trap" => trap(words),
        "find" => find(words),
        shell if SHELLS.contains(&shell) => shell_string(words),
        "read" | "mapfile" | "readarray" | "getopts" | "let" => assigns(words, 1),
        "printf" => match words.iter().position(|w| w.lit() == Some("-v")) {
            Some(at) => assigns(words.get(at..at + 2).unwrap_or_default(), 1),
            None => Step::Plain,
        },
        "alias" if words.iter().skip(1).any(|w| w.value().contains('=')) => {
            Step::Opaque(Opacity::Rebinding("alias".to_owned()))
        }
        "hash" if words.iter().any(|w| w.lit() == Some("-p")) => {
            Step::Opaque(Opacity::Rebinding("hash -p".to_owned()))
        }
        "enable" => Step::Opaque(Opacity::Rebinding("enable".to_owned())),
        _ => Step::Plain,
    }
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
/// the `shell` options, its operands are a shell string.
fn runner(parsed: Parsed, len: usize, shell: &[&str]) -> Step {
    if let Some(option) = parsed.unknown {
        return Step::Unknown(option, parsed.end);
    }
    if parsed.end >= len {
        Step::Plain
    } else if shell.iter().any(|o| parsed.saw(o)) {
        Step::Joined(Opacity::ShellString, parsed.end)
    } else {
        Step::Runner(parsed.end)
    }
}

/// `env [options] [NAME=VALUE]… [command]`: like leading assignments.
/// `-S` (split a string into a command) is not followed.
fn env(words: &[Word]) -> Step {
    let split_string = words.iter().skip(1).find(|w| {
        w.lit()
            .is_some_and(|a| a.starts_with("-S") || a.starts_with("--split-string"))
    });
    if let Some(word) = split_string {
        return Step::Unknown(word.raw.clone(), words.len());
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
    let mut end = parsed.end + dashes;
    let mut reason = parsed.unknown.map(|option| Opacity::UnknownOption {
        program: "env".to_owned(),
        option,
    });
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

/// The variable a `NAME=VALUE` word assigns.
fn assigned_name(word: &str) -> Option<&str> {
    let (name, _) = word.split_once('=')?;
    let mut bytes = name.bytes();
    let first = bytes.next()?;
    let valid = (first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    valid.then_some(name)
}

/// Bare `xargs cmd` is stripped; with options it is a runner.
fn xargs(words: &[Word]) -> Step {
    let bare = words
        .get(1)
        .and_then(Word::lit)
        .is_some_and(|arg| !arg.starts_with('-'));
    if bare {
        Step::Strip(1)
    } else {
        runner(parse_options(words, &XARGS), words.len(), &[])
    }
}

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
    runner(parsed, words.len(), &["s", "i", "shell", "login"])
}

/// `su … -c STRING …`: a shell string.
fn su(words: &[Word]) -> Step {
    for (i, word) in words.iter().enumerate().skip(1) {
        match word.lit() {
            Some("-c" | "--command") => return Step::Shell(Some(i + 1)),
            // An attached value or an expansion: opaque, not followed.
            Some(arg) if arg.starts_with("--command=") || arg.starts_with("-c") => {
                return Step::Shell(None);
            }
            None => return Step::Shell(None),
            _ => {}
        }
    }
    Step::Plain
}

/// `trap [--] STRING SIGNAL…`: the string runs later, in this shell.
fn trap(words: &[Word]) -> Step {
    let start = match words.get(1).and_then(Word::lit) {
        Some("--") => 2,
        Some(arg) if arg.starts_with('-') && arg != "-" => return Step::Plain,
        _ => 1,
    };
    if words.len() > start + 1 {
        Step::Shell(Some(start))
    } else {
        Step::Plain
    }
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

/// `sh [options] -c STRING [args]`: the first operand after the options is
/// the string when `-c` was among them.
fn shell_string(words: &[Word]) -> Step {
    let mut has_c = false;
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let Some(arg) = word.lit() else {
            // An expansion where an option or the script could be.
            return if has_c {
                Step::Shell(Some(i))
            } else {
                Step::Unknown(word.raw.clone(), words.len())
            };
        };
        if arg == "--" {
            i += 1;
            break;
        }
        let is_option = (arg.starts_with('-') || arg.starts_with('+')) && arg.len() > 1;
        if !is_option {
            break;
        }
        i += 1;
        if let Some(long) = arg.strip_prefix("--") {
            if matches!(long, "rcfile" | "init-file") {
                i += 1;
            }
            continue;
        }
        let cluster = &arg[1..];
        has_c |= cluster.contains('c');
        if cluster.contains('o') || cluster.contains('O') {
            i += 1;
        }
    }
    if has_c {
        Step::Shell(Some(i).filter(|&i| i < words.len()))
    } else {
        Step::Plain
    }
}
