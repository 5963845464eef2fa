//! Parsing a line with tree-sitter-bash, within bounds.
//!
//! One parser is kept per thread (`thread_local!`): making one is cheap,
//! but keeping it also keeps its allocations warm. These guards keep a
//! hostile line from costing much more than a parse of ordinary text of
//! its size, or from crashing the process:
//!
//! * a line with a NUL is not parsed (bash cannot run it, and the lexer is
//!   quadratic on runs of NULs): [`Opacity::ParseError`];
//! * more than [`MAX_HEREDOCS`] heredoc operators are not parsed (the
//!   scanner copies its pending heredocs at every token):
//!   [`Opacity::TooLarge`];
//! * the parse has an operation budget proportional to the line's length,
//!   about ten times what ordinary lines need; past it the parse is
//!   cancelled: [`Opacity::TooLarge`];
//! * non-ASCII characters, and control characters other than tab and
//!   newline, are parsed as ASCII word characters; see [`shape`].

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::{ControlFlow, Range};

use tree_sitter::{ParseOptions, ParseState, Parser, Tree};

use crate::Opacity;

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// At most this many heredoc operators are parsed: tree-sitter-bash's
/// scanner copies its list of pending heredocs at every token, so thousands
/// of them take seconds.
const MAX_HEREDOCS: usize = 100;

fn new_parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()?;
    Some(parser)
}

/// Parses with a budget of parser operations proportional to the input
/// (ordinary lines use a tenth of it), so error recovery on garbage cannot
/// run for long. A cancelled parser is reset for the next use.
fn parse_with(parser: &mut Parser, src: &str) -> Option<Tree> {
    // The progress callback runs about every hundred operations.
    let budget = 64 + src.len() / 8;
    let mut calls = 0usize;
    let mut progress = |_: &ParseState| {
        calls += 1;
        if calls > budget {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let bytes = src.as_bytes();
    let options = ParseOptions::new().progress_callback(&mut progress);
    let tree = parser.parse_with_options(
        &mut |at, _| bytes.get(at..).unwrap_or_default(),
        None,
        Some(options),
    );
    if tree.is_none() {
        parser.reset();
    }
    tree
}

/// Parses `src` with this thread's parser (a fresh parser if the
/// thread's one is unavailable, which does not happen in practice). The
/// bytes in `blanks` are parsed as spaces (see `keywords`). Returns the
/// tree and the text it was parsed from, which has the same byte offsets
/// as `src`.
pub(crate) fn parse<'s>(
    src: &'s str,
    blanks: &[Range<usize>],
) -> Result<(Tree, Cow<'s, str>), Opacity> {
    // Bash cannot run a line with a NUL in it, and tree-sitter's lexer is
    // slow on long runs of them.
    if src.contains('\0') {
        return Err(Opacity::ParseError);
    }
    if src.matches("<<").count() > MAX_HEREDOCS {
        return Err(Opacity::TooLarge);
    }
    let shaped = shape(src, blanks);
    let reused = PARSER.try_with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            *slot = new_parser();
        }
        Some(parse_with(slot.as_mut()?, &shaped))
    });
    let tree = match reused {
        Ok(Some(tree)) => tree,
        _ => new_parser().and_then(|mut parser| parse_with(&mut parser, &shaped)),
    };
    tree.map(|tree| (tree, shaped)).ok_or(Opacity::TooLarge)
}

/// Whether bash reads this byte as an ordinary word character where
/// tree-sitter-bash would not: a control character other than tab and
/// newline (tree-sitter takes `\r`, `\v` and `\f` for blanks, so
/// `ls \r# x; rm y` hid `rm y` in a comment).
pub(crate) fn is_odd_control(b: u8) -> bool {
    b.is_ascii_control() && b != b'\t' && b != b'\n'
}

/// The line as the parser sees it, with the same byte offsets: every
/// non-ASCII character becomes as many `x` bytes as its UTF-8 encoding
/// has, a control character other than tab and newline becomes `x`, and
/// the `blanks` become spaces.
///
/// tree-sitter-bash 0.25.1's scanner passes the code point after a `{` to
/// C's `isdigit`, which reads outside its table for large code points and
/// crashes the process (`echo {` followed by U+F0000). All of bash's syntax
/// is ASCII and it treats other characters as word characters, which `x`
/// is too, so the tree has the same shape; the walk reads every word's
/// text from the original line. (tree-sitter's `iswspace` would also take
/// U+00A0 for a blank, which bash does not: this is closer to bash.)
///
/// A descriptor close (`2>&-`, `<&-`) is parsed as a duplication of
/// descriptor 0 (`2>&0`): tree-sitter-bash takes the word after `>&-` for
/// its target and fails on the next one (`nohup 2>&- rm y`), while bash
/// reads both as the command's words. The walk reads the target `-` from
/// the original line.
fn shape<'s>(src: &'s str, blanks: &[Range<usize>]) -> Cow<'s, str> {
    let closes = closes(src);
    if blanks.is_empty()
        && closes.is_empty()
        && !src.bytes().any(|b| !b.is_ascii() || is_odd_control(b))
    {
        return Cow::Borrowed(src);
    }
    let mut bytes: Vec<u8> = src
        .bytes()
        .map(|b| {
            if !b.is_ascii() || is_odd_control(b) {
                b'x'
            } else {
                b
            }
        })
        .collect();
    for range in blanks {
        if let Some(span) = bytes.get_mut(range.clone()) {
            span.fill(b' ');
        }
    }
    for at in closes {
        if let Some(byte) = bytes.get_mut(at) {
            *byte = b'0';
        }
    }
    // Every byte is ASCII now.
    Cow::Owned(String::from_utf8(bytes).unwrap_or_default())
}

/// Where the `-` of each descriptor close (`>&-`, `<&-`) followed by a
/// blank, an operator or the end of the line is.
fn closes(src: &str) -> Vec<usize> {
    let bytes = src.as_bytes();
    src.match_indices("&-")
        .filter(|(at, _)| {
            let before = at.checked_sub(1).and_then(|i| bytes.get(i));
            let after = bytes.get(at + 2);
            matches!(before, Some(b'<' | b'>')) && after.is_none_or(|b| b" \t\n;&|)".contains(b))
        })
        .map(|(at, _)| at + 1)
        .collect()
}
