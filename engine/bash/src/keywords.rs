//! `time`, `!` and `coproc` before a compound command.
//!
//! In bash `time`, `!` and `coproc [NAME]` may come before any command,
//! compound ones included: `time while rm y; do :; done` times a loop,
//! `coproc foo { rm y; }` runs a group. tree-sitter-bash 0.25.1 knows none
//! of this: it reads `time`, `coproc` and a second `!` as command names,
//! and the loop's keywords as their arguments (`while rm y`, then `do :`,
//! then `done`), so `rm y` was never listed.
//!
//! None of them changes which commands run, so where one stands before a
//! compound command its words are blanked (parsed as spaces) and the line
//! is parsed again; the compound command is then walked as usual. Before a
//! simple command they are left to the wrappers (`time rm x` lists
//! `rm x`).

use std::ops::Range;

use tree_sitter::Node;

use crate::syntax::{Field, Kind, children, kind};

/// Whether `src` has one of the words at all (a cheap test before the
/// tree is searched).
pub(crate) fn may_hide(src: &str) -> bool {
    src.contains("time") || src.contains('!') || src.contains("coproc")
}

/// The byte ranges to blank in `shape`, the text `root` was parsed from.
pub(crate) fn blanks(root: Node<'_>, shape: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        match kind(node) {
            Kind::Command => {
                let (ranges, compound) = leading(node, shape);
                if compound {
                    out.extend(ranges);
                }
            }
            Kind::NegatedCommand => {
                // tree-sitter took `!` but read what follows as a command.
                let inner = node.named_child(0).filter(|n| kind(*n) == Kind::Command);
                if let (Some(bang), Some(inner)) = (node.child(0), inner) {
                    let (ranges, compound) = leading(inner, shape);
                    if compound {
                        out.push(bang.byte_range());
                        out.extend(ranges);
                    }
                }
            }
            _ => {}
        }
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    out
}

/// The leading `time [-p]`, `!` and `coproc [NAME]` words of a command,
/// and whether a compound command's keyword follows them.
fn leading(command: Node<'_>, shape: &str) -> (Vec<Range<usize>>, bool) {
    let words: Vec<(&str, Range<usize>)> = children(command)
        .filter(|(_, field)| matches!(field, Field::Name | Field::Argument))
        .map(|(child, _)| {
            let range = child.byte_range();
            (shape.get(range.clone()).unwrap_or_default(), range)
        })
        .collect();
    let text = |i: usize| words.get(i).map(|(t, _)| *t);
    let mut ranges = Vec::new();
    let mut i = 0;
    while let Some(word) = text(i) {
        match word {
            "time" => {
                ranges.push(words[i].1.clone());
                i += 1;
                if text(i) == Some("-p") {
                    ranges.push(words[i].1.clone());
                    i += 1;
                }
            }
            "!" => {
                ranges.push(words[i].1.clone());
                i += 1;
            }
            "coproc" if text(i + 1).is_some_and(starts_compound) => {
                ranges.push(words[i].1.clone());
                i += 1;
            }
            "coproc"
                if text(i + 2).is_some_and(starts_compound) && text(i + 1).is_some_and(is_name) =>
            {
                ranges.push(words[i].1.clone());
                ranges.push(words[i + 1].1.clone());
                i += 2;
            }
            _ => break,
        }
    }
    let compound = text(i).is_some_and(starts_compound);
    (ranges, compound)
}

/// A word that, in command position, starts a compound command (or is a
/// keyword that tree-sitter-bash would take for a command name).
fn starts_compound(word: &str) -> bool {
    matches!(
        word,
        "if" | "case"
            | "for"
            | "select"
            | "while"
            | "until"
            | "function"
            | "{"
            | "[["
            | "!"
            | "time"
            | "coproc"
    ) || word.starts_with("((")
}

/// A plain identifier, as a coprocess name must be.
fn is_name(word: &str) -> bool {
    let mut bytes = word.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}
