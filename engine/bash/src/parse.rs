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
//! * non-ASCII characters are parsed as ASCII word characters; see
//!   [`ascii_shape`].

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::ControlFlow;

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

/// Parses with this thread's parser, made on first use (a fresh parser if
/// the thread's one is unavailable, which does not happen in practice).
pub(crate) fn parse(src: &str) -> Result<Tree, Opacity> {
    // Bash cannot run a line with a NUL in it, and tree-sitter's lexer is
    // slow on long runs of them.
    if src.contains('\0') {
        return Err(Opacity::ParseError);
    }
    if src.matches("<<").count() > MAX_HEREDOCS {
        return Err(Opacity::TooLarge);
    }
    let ascii = ascii_shape(src);
    let reused = PARSER.try_with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            *slot = new_parser();
        }
        Some(parse_with(slot.as_mut()?, &ascii))
    });
    let tree = match reused {
        Ok(Some(tree)) => tree,
        _ => new_parser().and_then(|mut parser| parse_with(&mut parser, &ascii)),
    };
    tree.ok_or(Opacity::TooLarge)
}

/// The line with every non-ASCII character replaced by as many `x` bytes
/// as its UTF-8 encoding has, so byte offsets are unchanged.
///
/// tree-sitter-bash 0.25.1's scanner passes the code point after a `{` to
/// C's `isdigit`, which reads outside its table for large code points and
/// crashes the process (`echo {` followed by U+F0000). All of bash's syntax
/// is ASCII and it treats other characters as word characters, which `x`
/// is too, so the tree has the same shape; the walk reads every word's
/// text from the original line. (tree-sitter's `iswspace` would also take
/// U+00A0 for a blank, which bash does not: this is closer to bash.)
fn ascii_shape(src: &str) -> Cow<'_, str> {
    if src.is_ascii() {
        return Cow::Borrowed(src);
    }
    let mut out = String::with_capacity(src.len());
    for c in src.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('x', c.len_utf8()));
        }
    }
    Cow::Owned(out)
}
