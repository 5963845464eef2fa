//! Inline markup of one line: code spans, emphasis, backslash escapes.
//!
//! Not CommonMark's delimiter stack: an opener takes the first run of the
//! same delimiter and length that can close it, which is what models'
//! markup needs and keeps this linear. Every index compared is an ASCII
//! byte, so every slice falls on a char boundary. A delimiter kind that
//! found no closer from one position finds none from a later one, and is
//! not searched for again.

use ratatui::style::{Modifier, Style};

use super::{CODE, MAX_NESTING, run_len};

/// `text` as styled segments over `base`, adjacent ones of one style merged.
pub(super) fn parse(text: &str, base: Style) -> Vec<(String, Style)> {
    let mut out = Vec::new();
    parse_inline(text, base, 0, &mut out);
    out
}

/// Appends `text` to `out`, merging with the last segment when the style
/// is the same.
fn push(out: &mut Vec<(String, Style)>, text: &str, style: Style) {
    if text.is_empty() {
        return;
    }
    match out.last_mut() {
        Some((last, last_style)) if *last_style == style => last.push_str(text),
        _ => out.push((text.to_owned(), style)),
    }
}

fn parse_inline(text: &str, base: Style, depth: usize, out: &mut Vec<(String, Style)>) {
    let bytes = text.as_bytes();
    let mut unclosed: Vec<(u8, usize)> = Vec::new();
    let (mut i, mut literal) = (0, 0);
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'\\' && bytes.get(i + 1).is_some_and(u8::is_ascii_punctuation) {
            push(out, &text[literal..i], base);
            literal = i + 1;
            i += 2;
            continue;
        }
        let emphasis = (c == b'*' || c == b'_') && depth < MAX_NESTING;
        if c != b'`' && !emphasis {
            i += 1;
            continue;
        }
        let n = run_len(bytes, i);
        let searchable = c == b'`' || (n <= 3 && can_open(text, i, n));
        let close = if !searchable || unclosed.contains(&(c, n)) {
            None
        } else if c == b'`' {
            find_code_close(bytes, i + n, n)
        } else {
            find_emphasis_close(text, i + n, n)
        };
        let Some(close) = close else {
            if searchable {
                unclosed.push((c, n));
            }
            i += n;
            continue;
        };
        push(out, &text[literal..i], base);
        let inner = &text[i + n..close];
        if c == b'`' {
            push(out, code_content(inner), base.patch(CODE));
        } else {
            let modifier = match n {
                1 => Modifier::ITALIC,
                2 => Modifier::BOLD,
                _ => Modifier::BOLD | Modifier::ITALIC,
            };
            parse_inline(inner, base.add_modifier(modifier), depth + 1, out);
        }
        i = close + n;
        literal = i;
    }
    push(out, &text[literal..], base);
}

/// An opening emphasis run is followed by a non-space; an `_` run must not
/// follow a letter or digit (so `snake_case_names` stay literal).
fn can_open(text: &str, at: usize, n: usize) -> bool {
    let next_ok = text[at + n..]
        .chars()
        .next()
        .is_some_and(|c| !c.is_whitespace());
    let prev_ok = text.as_bytes()[at] != b'_'
        || !text[..at]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric);
    next_ok && prev_ok
}

fn find_code_close(bytes: &[u8], from: usize, n: usize) -> Option<usize> {
    let mut j = from;
    while j < bytes.len() {
        if bytes[j] == b'`' {
            let m = run_len(bytes, j);
            if m == n {
                return Some(j);
            }
            j += m;
        } else {
            j += 1;
        }
    }
    None
}

/// A run of exactly `n` of the opener's delimiter, after a non-space,
/// closing non-empty content; for `_`, not followed by a letter or digit.
fn find_emphasis_close(text: &str, from: usize, n: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let c = bytes[from - 1];
    let mut j = from;
    while j < bytes.len() {
        if bytes[j] != c {
            j += 1;
            continue;
        }
        let m = run_len(bytes, j);
        let after_space = text[..j]
            .chars()
            .next_back()
            .is_none_or(char::is_whitespace);
        let before_word = c == b'_'
            && text[j + m..]
                .chars()
                .next()
                .is_some_and(char::is_alphanumeric);
        if m == n && j > from && !after_space && !before_word {
            return Some(j);
        }
        j += m;
    }
    None
}

/// A code span's text: one space each side is padding when both are there.
fn code_content(s: &str) -> &str {
    match s.strip_prefix(' ').and_then(|s| s.strip_suffix(' ')) {
        Some(inner) if !inner.trim().is_empty() => inner,
        _ => s,
    }
}
