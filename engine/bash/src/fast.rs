//! A fast path for plain lines, which skips tree-sitter.
//!
//! tree-sitter-bash takes about 15 µs to parse a 100-byte line on the
//! machines cox runs on, most of the time budget. Most agent lines are
//! plain: words, quotes, and `;`, `&&`, `||`, `|`, `&`, newlines between
//! commands. For those the split is fixed by the shell grammar, and this
//! module reads them directly.
//!
//! It accepts only a strict subset and declines (returns `None`) at the
//! first sign of anything else, leaving the line to tree-sitter:
//!
//! * only printable ASCII, tabs and newlines, and no
//!   `$ \` \ ( ) { } [ ] < > # * ? !` outside single
//!   quotes, no `$ \` \` inside double quotes;
//! * no `|&`, `;;`, or an operator with no command on the side it needs
//!   (`&& b`, `a |`, `; b`), which are syntax errors;
//! * no reserved word (`if`, `for`, `{`, `!`, `[[`, `time` …), declaration
//!   builtin (`export`, `local` …) or `=` in the first word of a command.
//!
//! What it accepts, it hands to the same wrapper and risk code as the
//! tree-sitter walk, with the same words (and what a literal `echo` pipes
//! into the next command), and the same scan follows (see `scan`). A
//! property test and the fuzz target check that both paths give the same
//! split on every line this path accepts.

use crate::words::Word;

/// First words that tree-sitter-bash parses as syntax, not as a command,
/// or that bash does and tree-sitter-bash does not (`time` before a
/// compound command; see `keywords`).
const SYNTAX_WORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "coproc", "declare", "typeset", "export", "local", "readonly",
    "unset", "time",
];

/// A command of a plain line: its words, and whether a `|` feeds it the
/// previous command's output.
#[derive(Debug, PartialEq)]
pub(crate) struct Plain {
    pub words: Vec<Word>,
    pub piped: bool,
}

/// The commands of a plain line; `None` when the line is not plain.
pub(crate) fn plain(src: &str) -> Option<Vec<Plain>> {
    // Control characters other than tab and newline are blanks to
    // tree-sitter but not to bash, and bash cannot run a NUL.
    let odd = |b: u8| !b.is_ascii() || (b.is_ascii_control() && b != b'\t' && b != b'\n');
    if src.bytes().any(odd) {
        return None;
    }
    let bytes = src.as_bytes();
    let mut commands = Vec::new();
    let mut current: Vec<Word> = Vec::new();
    // Whether the command being read follows a `|`.
    let mut piped = false;
    // After `&&`, `||` or `|`, a command must follow (newlines may come
    // first).
    let mut needs_command = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b' ' | b'\t' => i += 1,
            b'\n' => {
                if !current.is_empty() {
                    let words = std::mem::take(&mut current);
                    commands.push(Plain { words, piped });
                    piped = false;
                }
                i += 1;
            }
            b';' | b'&' | b'|' => {
                let next = bytes.get(i + 1).copied();
                let (binary, width) = match (b, next) {
                    (b'&', Some(b'&')) | (b'|', Some(b'|')) => (true, 2),
                    (b'|', Some(b'&' | b';')) | (b';', Some(b';' | b'&')) => return None,
                    (b'|', _) => (true, 1),
                    _ => (false, 1),
                };
                if current.is_empty() {
                    return None;
                }
                let words = std::mem::take(&mut current);
                commands.push(Plain { words, piped });
                piped = b == b'|' && width == 1;
                needs_command = binary;
                i += width;
            }
            _ => {
                let (word, end) = word(src, i)?;
                // tree-sitter reads `==` and `=~` as test operators.
                if word.raw.starts_with('=') {
                    return None;
                }
                if current.is_empty() && !command_word(&word) {
                    return None;
                }
                current.push(word);
                needs_command = false;
                i = end;
            }
        }
    }
    if needs_command {
        return None;
    }
    if !current.is_empty() {
        commands.push(Plain {
            words: current,
            piped,
        });
    }
    Some(commands)
}

/// Whether a word can start a plain command. Besides syntax words and
/// assignments, this declines first words tree-sitter-bash reads apart
/// from bash: a keyword glued to a quote or punctuation (`export'x'`,
/// `time%1`; bash reads one word), punctuation other than `_ . / ~ -`
/// (`ls@`, `x+:`), and a leading `-` (`- A=1`; tree-sitter drops the `-`).
/// The tree-sitter walk then reports them as parse errors.
fn command_word(word: &Word) -> bool {
    let raw = word.raw.as_str();
    let plain = raw
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_./~-'\" ".contains(&b));
    if !plain || raw.starts_with('-') {
        return false;
    }
    let glued = |keyword: &str| {
        raw.strip_prefix(keyword).is_some_and(|rest| {
            rest.bytes()
                .next()
                .is_some_and(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
        })
    };
    !SYNTAX_WORDS.contains(&raw) && !SYNTAX_WORDS.iter().any(|k| glued(k))
}

/// Reads one word starting at `start`: plain characters and quoted parts
/// run together. Returns it and where it ends.
fn word(src: &str, start: usize) -> Option<(Word, usize)> {
    let bytes = src.as_bytes();
    let mut lit = String::new();
    let mut i = start;
    while let Some(&b) = bytes.get(i) {
        match b {
            b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' => break,
            b'\'' => {
                let len = src.get(i + 1..)?.find('\'')?;
                lit.push_str(src.get(i + 1..i + 1 + len)?);
                i += len + 2;
            }
            b'"' => {
                let len = src.get(i + 1..)?.find('"')?;
                let inner = src.get(i + 1..i + 1 + len)?;
                if inner.contains(['$', '`', '\\']) {
                    return None;
                }
                lit.push_str(inner);
                i += len + 2;
            }
            b if b.is_ascii_alphanumeric() || b"_-./:,%+@^~=".contains(&b) => {
                lit.push(char::from(b));
                i += 1;
            }
            _ => return None,
        }
    }
    let raw = src.get(start..i)?.to_owned();
    Some((
        Word {
            raw,
            loose: lit.clone(),
            lit: Some(lit),
            pattern: false,
        },
        i,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Option<Vec<String>> {
        plain(src).map(|commands| {
            commands
                .iter()
                .map(|command| {
                    let raws: Vec<&str> = command.words.iter().map(|w| w.raw.as_str()).collect();
                    raws.join(" ")
                })
                .collect()
        })
    }

    #[test]
    fn reads_plain_lines() {
        assert_eq!(
            texts("cd src && git status --short | grep '\\.rs$' | head -n 20"),
            Some(vec![
                "cd src".into(),
                "git status --short".into(),
                "grep '\\.rs$'".into(),
                "head -n 20".into()
            ])
        );
        assert_eq!(
            texts("a;b&c\n\nd ;"),
            Some(vec!["a".into(), "b".into(), "c".into(), "d".into()])
        );
        assert_eq!(texts("a &&\n  b"), Some(vec!["a".into(), "b".into()]));
        assert_eq!(
            texts("git log --format=%H"),
            Some(vec!["git log --format=%H".into()])
        );
        assert_eq!(texts(""), Some(vec![]));
    }

    #[test]
    fn declines_everything_else() {
        for line in [
            "echo $x",
            "a > b",
            "a 2>&1",
            "(a)",
            "{ a; }",
            "a `b`",
            "a \\b",
            "a # c",
            "ls *.rs",
            "a |& b",
            "a ;; b",
            "; a",
            "a && ",
            "&& a",
            "a | | b",
            "a || ",
            "FOO=1 a",
            "if a",
            "export A",
            "! a",
            "[[ a ]]",
            "[ a ]",
            "echo \"$x\"",
            "echo 'open",
            "é",
            "a <b",
            "echo \"a\\\"b\"",
            "for x",
            "x=1",
        ] {
            assert_eq!(plain(line), None, "{line:?}");
        }
    }
}
