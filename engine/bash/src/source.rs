//! One source text: the line, or a shell string or hidden substitution
//! found in it. It is read by the fast path or parsed and walked, and then
//! scanned for what the tree does not show (see `scan`).
//!
//! Before the walk, the text is checked for what tree-sitter-bash reads
//! apart from bash:
//!
//! * a control character other than tab and newline (`\r`, `\v`, `\f` …):
//!   tree-sitter takes some for blanks, bash for word characters
//!   ([`Opacity::ControlCharacter`]; the parser sees them as `x`);
//! * a line continuation with a word character on both sides (`r\` newline
//!   `m`): bash joins the two into one token, tree-sitter keeps two
//!   ([`Opacity::LineContinuation`]; words are joined back by the walk);
//! * `time`, `!` and `coproc NAME` before a compound command, which
//!   tree-sitter-bash does not know (see `keywords`): they are blanked and
//!   the text parsed again.
//!
//! A text that does not parse is opaque, and is also cut roughly at its
//! operators for deny rules (see `fallback`).
//!
//! Nested sources (shell strings, scripts read on standard input, hidden
//! substitutions) are walked within a budget per line (`sink::Budget`); past
//! it the line is opaque ([`Opacity::TooLarge`]) and they are not listed.

use std::collections::HashSet;

use tree_sitter::Node;

use crate::fallback;
use crate::fast;
use crate::keywords;
use crate::parse::{is_odd_control, parse};
use crate::rules::echoed;
use crate::scan;
use crate::sink::Sink;
use crate::syntax::{Kind, kind};
use crate::walk::Walk;
use crate::{MAX_SHELL_DEPTH, Opacity};

/// Parses `src` and walks it into `sink`. `shell_depth` counts the shell
/// strings this source is nested in; `tree_depth` the tree levels above it.
pub(crate) fn walk_source(sink: &mut Sink, src: &str, shell_depth: usize, tree_depth: usize) {
    if shell_depth > MAX_SHELL_DEPTH {
        sink.opaque(Opacity::TooDeep);
        return;
    }
    if shell_depth > 0 && !sink.budget.take(src.len()) {
        sink.opaque(Opacity::TooLarge);
        return;
    }
    // A NUL is a parse error (bash cannot run it), reported by `parse`.
    if src.bytes().any(|b| b != 0 && is_odd_control(b)) {
        sink.opaque(Opacity::ControlCharacter);
    }
    if joins_tokens(src) {
        sink.opaque(Opacity::LineContinuation);
    }
    let fast = (!sink.tree_sitter_only).then(|| fast::plain(src)).flatten();
    let mut walk = Walk::new(sink, src, shell_depth);
    if let Some(commands) = fast {
        let mut feed = None;
        let mut producer: Option<String> = None;
        for command in &commands {
            walk.stdin = if command.piped { feed.take() } else { None };
            walk.piped_from = if command.piped { producer.take() } else { None };
            walk.judge(&command.words, tree_depth + 1);
            walk.stdin = None;
            walk.piped_from = None;
            feed = echoed(&command.words);
            producer = command
                .words
                .first()
                .and_then(crate::words::Word::lit)
                .map(|n| crate::words::basename(n).to_owned());
        }
        scan::after_walk(&mut walk, tree_depth);
        return;
    }
    let (mut tree, mut shape) = match parse(src, &[]) {
        Ok(parsed) => parsed,
        Err(reason) => {
            walk.sink.opaque(reason);
            return;
        }
    };
    if keywords::may_hide(src) {
        let blanks = keywords::blanks(tree.root_node(), &shape);
        if !blanks.is_empty() {
            match parse(src, &blanks) {
                Ok(parsed) => (tree, shape) = parsed,
                Err(reason) => {
                    walk.sink.opaque(reason);
                    return;
                }
            }
        }
    }
    let root = tree.root_node();
    // Several heredocs on one line: tree-sitter can hand a body to the
    // wrong command (`cat <<A | sh <<B`). The line is scanned whole.
    let heredocs = unquoted_heredocs(src);
    let damaged = root.has_error() || skips_text(root, &shape, &mut walk.glued) || heredocs > 1;
    if damaged {
        // Reported before anything found inside the damaged tree.
        walk.sink.opaque(Opacity::ParseError);
    }
    walk.node(root, tree_depth);
    if damaged {
        fallback::rough_split(&mut walk, tree_depth);
    }
    if !walk.glued.is_empty() {
        // A word glued to the line before it where the walk did not split
        // it off.
        walk.sink.opaque(Opacity::ParseError);
    }
    scan::after_walk(&mut walk, tree_depth);
}

/// How many heredoc operators (`<<`, `<<-`; not `<<<`) stand outside
/// quotes. (Inside quotes they are text, parsed again if the text is a
/// shell string.)
fn unquoted_heredocs(src: &str) -> usize {
    let bytes = src.as_bytes();
    let mut count = 0;
    let mut quote = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match (quote, b) {
            (None, b'\\') | (Some(b'"'), b'\\') => i += 1,
            (None, b'\'' | b'"') => quote = Some(b),
            (Some(q), _) if b == q => quote = None,
            (None, b'<') if bytes.get(i + 1) == Some(&b'<') => {
                if bytes.get(i + 2) == Some(&b'<') {
                    i += 2;
                } else {
                    count += 1;
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    count
}

/// Whether a line continuation has a character other than a blank right
/// before its backslash and right after its newline: bash reads the two
/// sides as one token (`r\` newline `m` is `rm`, `&\` newline `&` is
/// `&&`), tree-sitter as two.
fn joins_tokens(src: &str) -> bool {
    let bytes = src.as_bytes();
    let solid = |b: Option<&u8>| b.is_some_and(|b| !matches!(b, b' ' | b'\t' | b'\n'));
    src.match_indices('\n').any(|(at, _)| {
        let backslashes = bytes[..at]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        backslashes % 2 == 1 && solid(bytes.get(at.wrapping_sub(2))) && solid(bytes.get(at + 1))
    })
}

/// Whether tree-sitter left text out of the tree: some bytes between two
/// tokens that are not blanks or line continuations. It does so for a
/// leading `-` (`- A=1` parses as just `A=1`), where bash would run a
/// command named `-`; a line the tree does not cover is a parse error.
///
/// It also notes, in `glued`, every word that starts with a blank: tree-
/// sitter sometimes starts a word at the newline before it.
fn skips_text(root: Node<'_>, shape: &str, glued: &mut HashSet<usize>) -> bool {
    let mut covered = 0;
    let mut cursor = root.walk();
    loop {
        if !cursor.goto_first_child() {
            let leaf = cursor.node();
            let gap = shape.get(covered..leaf.start_byte()).unwrap_or_default();
            if !is_blank(gap) {
                return true;
            }
            let starts_blank = shape
                .as_bytes()
                .get(leaf.start_byte())
                .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n'));
            if starts_blank && kind(leaf) == Kind::Word {
                glued.insert(leaf.start_byte());
            }
            covered = covered.max(leaf.end_byte());
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    let tail = shape.get(covered..).unwrap_or_default();
                    return !is_blank(tail);
                }
            }
        }
    }
}

/// Blanks as tree-sitter-bash skips them: white space, and a backslash
/// before a newline, space or tab. (Other control characters never reach
/// the parser.)
fn is_blank(gap: &str) -> bool {
    let mut bytes = gap.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b' ' | b'\t' | b'\n' => {}
            b'\\' => match bytes.next() {
                Some(b'\n' | b' ' | b'\t') => {}
                _ => return false,
            },
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuations_that_join_tokens() {
        assert!(joins_tokens("r\\\nm"));
        assert!(joins_tokens("a &\\\n& b"));
        assert!(joins_tokens("a\\\\\\\nb"));
        assert!(!joins_tokens("cargo test \\\n  --all"));
        assert!(!joins_tokens("ls -la\\\n  && b"));
        assert!(!joins_tokens("echo a\\\\\nb"));
        assert!(!joins_tokens("\\\nrm"));
        assert!(!joins_tokens("a\\\n"));
    }
}
