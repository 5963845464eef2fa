//! An edit or a new file as coloured diff lines.
//!
//! [`edit_diff`] shows what an edit changes: a header with the path and
//! `+N −M` (lines added and removed, counted over the whole diff), then
//! unified hunks with [`CONTEXT`] lines of context around each change,
//! removed lines in red behind `-`, added lines in green behind `+`,
//! context in the default style, and a dim `⋮` between hunks instead of an
//! `@@` header (the line numbers already say where a hunk is). One line
//! number column, dim: a removed line shows its number in the old text, an
//! added or context line its number in the new one. [`write_preview`]
//! shows a new file the same way, every line an addition.
//!
//! Invariants: the body holds at most [`MAX_BODY_LINES`] lines; past that
//! the last one is a dim `… N more lines`, N counting the diff lines left
//! out. An edit that changes nothing says `(no changes)`. No line is wider
//! than `width` (a width of 0 counts as 1): a longer one ends in `…`. The
//! path and every text line go through [`sanitize`] here, so callers may
//! pass what the model or the file holds. A change to the final line
//! break alone shows that line removed and added again, looking the same
//! (there is no `\ No newline` marker). The diff gives up on minimality after
//! [`DIFF_TIMEOUT`] (the one place this module reads a clock), so a huge
//! rewrite renders a larger but still correct diff rather than stalling a
//! frame.

use std::time::Duration;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use similar::{Algorithm, ChangeTag, DiffTag, TextDiff};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::sanitize::sanitize;

/// Unchanged lines shown on each side of a change.
pub const CONTEXT: usize = 2;
/// The most lines shown under the header, the footer included.
pub const MAX_BODY_LINES: usize = 40;
/// How long the diff may search for a minimal edit script.
pub const DIFF_TIMEOUT: Duration = Duration::from_millis(200);

/// Removed lines and the removed count.
pub const REMOVED: Style = Style::new().fg(Color::Red);
/// Added lines and the added count.
pub const ADDED: Style = Style::new().fg(Color::Green);
/// Line numbers, the hunk separator and the footer.
pub const DIM: Style = Style::new().add_modifier(Modifier::DIM);
/// The path in a header.
pub const PATH: Style = Style::new().add_modifier(Modifier::BOLD);

/// What changes from `old` to `new` in the file at `path`.
pub fn edit_diff(path: &str, old: &str, new: &str, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width).max(1);
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let (mut added, mut removed) = (0, 0);
    for op in diff.ops() {
        match op.tag() {
            DiffTag::Equal => {}
            DiffTag::Delete => removed += op.old_range().len(),
            DiffTag::Insert => added += op.new_range().len(),
            DiffTag::Replace => {
                removed += op.old_range().len();
                added += op.new_range().len();
            }
        }
    }
    let mut rows = Vec::new();
    for (i, group) in diff.grouped_ops(CONTEXT).iter().enumerate() {
        if i > 0 {
            rows.push(Row::Gap);
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let (kind, index) = match change.tag() {
                    ChangeTag::Equal => (Kind::Context, change.new_index()),
                    ChangeTag::Delete => (Kind::Removed, change.old_index()),
                    ChangeTag::Insert => (Kind::Added, change.new_index()),
                };
                let text = change.as_str().unwrap_or_default();
                rows.push(Row::Line {
                    kind,
                    number: index.map_or(0, |i| i + 1),
                    text: text.strip_suffix('\n').unwrap_or(text),
                });
            }
        }
    }
    let header = vec![
        Span::styled(sanitize(path).into_owned(), PATH),
        Span::raw(" "),
        Span::styled(format!("+{added}"), ADDED),
        Span::raw(" "),
        Span::styled(format!("\u{2212}{removed}"), REMOVED),
    ];
    let mut lines = vec![fit(header, width)];
    if rows.is_empty() {
        lines.push(fit(vec![Span::styled("(no changes)", DIM)], width));
    }
    lines.extend(body(&rows, width));
    lines
}

/// A new file at `path` holding `content`.
pub fn write_preview(path: &str, content: &str, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width).max(1);
    let rows: Vec<Row<'_>> = content
        .lines()
        .enumerate()
        .map(|(i, text)| Row::Line {
            kind: Kind::Added,
            number: i + 1,
            text,
        })
        .collect();
    let count = match rows.len() {
        1 => "1 line".to_owned(),
        n => format!("{n} lines"),
    };
    let header = vec![
        Span::styled(sanitize(path).into_owned(), PATH),
        Span::styled(format!(" (new, {count})"), DIM),
    ];
    let mut lines = vec![fit(header, width)];
    lines.extend(body(&rows, width));
    lines
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Context,
    Removed,
    Added,
}

/// One line under the header, before layout.
#[derive(Debug)]
enum Row<'a> {
    Line {
        kind: Kind,
        /// 1-based.
        number: usize,
        /// Without its line break; not yet sanitized.
        text: &'a str,
    },
    /// Between two hunks.
    Gap,
}

/// The rows laid out: capped at [`MAX_BODY_LINES`], numbers right-aligned
/// to the widest one shown.
fn body(rows: &[Row<'_>], width: usize) -> Vec<Line<'static>> {
    let shown = if rows.len() > MAX_BODY_LINES {
        &rows[..MAX_BODY_LINES - 1]
    } else {
        rows
    };
    let digits = shown
        .iter()
        .filter_map(|row| match row {
            Row::Line { number, .. } => Some(number.to_string().len()),
            Row::Gap => None,
        })
        .max()
        .unwrap_or(1);
    let mut lines: Vec<Line<'static>> = shown
        .iter()
        .map(|row| match row {
            Row::Gap => fit(vec![Span::styled(format!("{:>digits$}", "⋮"), DIM)], width),
            Row::Line { kind, number, text } => {
                let (sign, style) = match kind {
                    Kind::Context => (' ', Style::new()),
                    Kind::Removed => ('-', REMOVED),
                    Kind::Added => ('+', ADDED),
                };
                let spans = vec![
                    Span::styled(format!("{number:>digits$}"), DIM),
                    Span::raw(" "),
                    Span::styled(format!("{sign}{}", sanitize(text)), style),
                ];
                fit(spans, width)
            }
        })
        .collect();
    let hidden = rows[shown.len()..]
        .iter()
        .filter(|row| matches!(row, Row::Line { .. }))
        .count();
    if hidden > 0 {
        let footer = format!("… {hidden} more line{}", if hidden == 1 { "" } else { "s" });
        lines.push(fit(vec![Span::styled(footer, DIM)], width));
    }
    lines
}

/// `spans` as one line at most `width` columns wide, cut with `…` when
/// longer. The cut falls before a character of non-zero width, so a
/// combining mark or a variation selector stays with its base.
fn fit(spans: Vec<Span<'static>>, width: usize) -> Line<'static> {
    let total: usize = spans.iter().map(Span::width).sum();
    if total <= width {
        return Line::from(spans);
    }
    let mut room = width - 1;
    let mut out = Vec::with_capacity(spans.len());
    let mut last_style = Style::new();
    'spans: for span in spans {
        last_style = span.style;
        let text = span.content.as_ref();
        let mut kept = 0;
        for (start, end) in atoms(text) {
            let w = text[start..end].width();
            if w > room {
                out.push(Span::styled(text[..kept].to_owned(), span.style));
                break 'spans;
            }
            room -= w;
            kept = end;
        }
        out.push(Span::styled(text.to_owned(), span.style));
    }
    out.retain(|span| !span.content.is_empty());
    out.push(Span::styled("…", last_style));
    Line::from(out)
}

/// Byte ranges of `text`, each a character of non-zero width and the
/// zero-width characters after it.
fn atoms(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut starts = text
        .char_indices()
        .filter(|&(i, c)| i == 0 || c.is_control() || c.width().unwrap_or(0) > 0)
        .map(|(i, _)| i)
        .peekable();
    std::iter::from_fn(move || {
        let start = starts.next()?;
        Some((start, starts.peek().copied().unwrap_or(text.len())))
    })
}

#[cfg(test)]
mod tests;
