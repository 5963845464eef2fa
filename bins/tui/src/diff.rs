//! An edit, a new file or a patch as coloured diff lines.
//!
//! A [`Diff`] is worked out once ([`Diff::change`], [`Diff::new_file`],
//! [`Diff::content`], [`Diff::patch`]) and drawn at any width, so a frame
//! never diffs a file again. It shows what changes: a header with the path and `+N −M` (lines
//! added and removed, counted over the whole diff), then unified hunks with
//! [`CONTEXT`] lines of context around each change, removed lines in red
//! behind `-`, added lines in green behind `+`, context in the default
//! style, and a dim `⋮` between hunks instead of an `@@` header (the line
//! numbers already say where a hunk is). One line number column, dim: a
//! removed line shows its number in the old text, an added or context line
//! its number in the new one. Given a whole file before and after, these
//! are the file's real line numbers. A new file shows every line as an
//! addition. [`edit_diff`] and [`write_preview`] do both steps at once.
//! An `apply_patch` patch is drawn as it is written, file by file, with
//! no line numbers (a hunk does not say where it lands), its header
//! `N files +A −R` instead of a path: see [`Diff::patch`].
//!
//! Invariants: [`Diff::body`] holds at most [`MAX_BODY_LINES`] lines; past
//! that the last one is a dim `… N more lines`, N counting the diff lines
//! left out ([`Diff::window`] shows any stretch of the whole body, for an
//! approval prompt that scrolls). An edit that changes nothing says
//! `(no changes)`. No line is wider than `width` (a width of 0 counts as
//! 1): a longer one ends in `…`. The path and every text line go through
//! [`sanitize`] here, so callers may pass what the model or the file holds.
//! A change to the final line break alone shows that line removed and added
//! again, looking the same (there is no `\ No newline` marker). The diff
//! gives up on minimality after [`DIFF_TIMEOUT`] (the one place this module
//! reads a clock), so a huge rewrite renders a larger but still correct
//! diff rather than stalling a frame.

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
/// The header of a patch that does not parse.
pub const WARN: Style = Style::new().fg(Color::Yellow);

/// What changes from `old` to `new` in the file at `path`.
pub fn edit_diff(path: &str, old: &str, new: &str, width: u16) -> Vec<Line<'static>> {
    Diff::change(old, new).lines(path, width)
}

/// A new file at `path` holding `content`.
pub fn write_preview(path: &str, content: &str, width: u16) -> Vec<Line<'static>> {
    Diff::new_file(content).lines(path, width)
}

/// A diff worked out once and drawn at any width: what the transcript and
/// an approval prompt keep, so a frame never diffs a file again.
#[derive(Clone, Debug, PartialEq)]
pub struct Diff {
    head: Head,
    rows: Vec<Row>,
}

/// What the header says after the path (a patch's says no path).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Head {
    /// `+N −M`, counted over the whole diff.
    Change { added: usize, removed: usize },
    /// `(new, N lines)`: no file was there.
    NewFile,
    /// `(N lines)`: the content of a write whose target was not compared.
    Content,
    /// `N files +A −R`: a patch, counted over all its files.
    Patch {
        files: usize,
        added: usize,
        removed: usize,
    },
    /// A patch that does not parse, and why: the body is its raw text.
    Unparsed { why: String },
}

impl Diff {
    /// What changes from `old` to `new`; line numbers count from 1 in
    /// each, so with whole files they are the file's own.
    #[must_use]
    pub fn change(old: &str, new: &str) -> Self {
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
                        text: text.strip_suffix('\n').unwrap_or(text).to_owned(),
                    });
                }
            }
        }
        Self {
            head: Head::Change { added, removed },
            rows,
        }
    }

    /// A new file holding `content`: every line an addition.
    #[must_use]
    pub fn new_file(content: &str) -> Self {
        Self {
            head: Head::NewFile,
            rows: added_rows(content),
        }
    }

    /// What a write puts in a file that was not compared with it (it could
    /// not be read): every line an addition, the header without `new`.
    #[must_use]
    pub fn content(content: &str) -> Self {
        Self {
            head: Head::Content,
            rows: added_rows(content),
        }
    }

    /// The header, then the body capped at [`MAX_BODY_LINES`] (the module
    /// doc says how).
    #[must_use]
    pub fn lines(&self, path: &str, width: u16) -> Vec<Line<'static>> {
        let mut lines = vec![self.header(path, width)];
        lines.extend(self.body(width));
        lines
    }

    /// The path and what changes, on one line.
    #[must_use]
    pub fn header(&self, path: &str, width: u16) -> Line<'static> {
        let width = usize::from(width).max(1);
        let path = Span::styled(sanitize(path).into_owned(), PATH);
        let spans = match &self.head {
            Head::Change { added, removed } => vec![
                path,
                Span::raw(" "),
                Span::styled(format!("+{added}"), ADDED),
                Span::raw(" "),
                Span::styled(format!("\u{2212}{removed}"), REMOVED),
            ],
            Head::NewFile => vec![path, Span::styled(format!(" (new, {})", self.count()), DIM)],
            Head::Content => vec![path, Span::styled(format!(" ({})", self.count()), DIM)],
            Head::Patch {
                files,
                added,
                removed,
            } => vec![
                Span::styled(
                    format!("{files} file{}", if *files == 1 { "" } else { "s" }),
                    PATH,
                ),
                Span::raw(" "),
                Span::styled(format!("+{added}"), ADDED),
                Span::raw(" "),
                Span::styled(format!("\u{2212}{removed}"), REMOVED),
            ],
            Head::Unparsed { why } => vec![Span::styled(
                format!("the patch does not parse: {}", sanitize(why)),
                WARN,
            )],
        };
        fit(spans, width)
    }

    /// The body under the header, capped at [`MAX_BODY_LINES`].
    #[must_use]
    pub fn body(&self, width: u16) -> Vec<Line<'static>> {
        let width = usize::from(width).max(1);
        if let Some(line) = self.no_changes(width) {
            return vec![line];
        }
        let rows = &self.rows;
        let shown = if rows.len() > MAX_BODY_LINES {
            &rows[..MAX_BODY_LINES - 1]
        } else {
            &rows[..]
        };
        let mut lines = layout(shown, digits(shown), width);
        let hidden = rows[shown.len()..]
            .iter()
            .filter(|row| !matches!(row, Row::Gap | Row::Hunk(_)))
            .count();
        if hidden > 0 {
            let footer = format!("… {hidden} more line{}", if hidden == 1 { "" } else { "s" });
            lines.push(fit(vec![Span::styled(footer, DIM)], width));
        }
        lines
    }

    /// How many lines the whole body has, uncapped (`(no changes)` is one).
    #[must_use]
    pub fn len(&self) -> usize {
        self.rows.len().max(usize::from(self.is_no_change()))
    }

    /// True when there is no body at all (a write of an empty file).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lines `skip..skip + take` of the whole body, uncapped: the part of
    /// a long diff an approval prompt has scrolled to. The number column
    /// is as wide as the body's widest number, so it holds still while
    /// the body scrolls.
    #[must_use]
    pub fn window(&self, width: u16, skip: usize, take: usize) -> Vec<Line<'static>> {
        let width = usize::from(width).max(1);
        if let Some(line) = self.no_changes(width) {
            return if skip == 0 && take > 0 {
                vec![line]
            } else {
                Vec::new()
            };
        }
        let start = skip.min(self.rows.len());
        let end = start.saturating_add(take).min(self.rows.len());
        layout(&self.rows[start..end], digits(&self.rows), width)
    }

    fn is_no_change(&self) -> bool {
        matches!(self.head, Head::Change { .. }) && self.rows.is_empty()
    }

    fn no_changes(&self, width: usize) -> Option<Line<'static>> {
        self.is_no_change()
            .then(|| fit(vec![Span::styled("(no changes)", DIM)], width))
    }

    /// `1 line`, `N lines`: the lines of a new file's content.
    fn count(&self) -> String {
        match self.rows.len() {
            1 => "1 line".to_owned(),
            n => format!("{n} lines"),
        }
    }
}

fn added_rows(content: &str) -> Vec<Row> {
    content
        .lines()
        .enumerate()
        .map(|(i, text)| Row::Line {
            kind: Kind::Added,
            number: i + 1,
            text: text.to_owned(),
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Context,
    Removed,
    Added,
}

/// One line under the header, before layout.
#[derive(Clone, Debug, PartialEq)]
enum Row {
    Line {
        kind: Kind,
        /// 1-based.
        number: usize,
        /// Without its line break; not yet sanitized.
        text: String,
    },
    /// Between two hunks.
    Gap,
    /// A patch's file: `A path`, `M path`, `D path` or `R from -> to`.
    File {
        op: FileOp,
        /// Not yet sanitized, like `to`.
        path: String,
        to: Option<String>,
    },
    /// A patch's `@@` line, as written (not yet sanitized).
    Hunk(String),
    /// A patch's hunk line: no number, context dim.
    Patch { kind: Kind, text: String },
    /// A line of a patch that does not parse, drawn dim.
    Raw(String),
}

/// What a patch does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileOp {
    Add,
    Update,
    Delete,
}

/// The width of the widest line number among `rows`.
fn digits(rows: &[Row]) -> usize {
    rows.iter()
        .filter_map(|row| match row {
            Row::Line { number, .. } => Some(number.to_string().len()),
            Row::Gap | Row::File { .. } | Row::Hunk(_) | Row::Patch { .. } | Row::Raw(_) => None,
        })
        .max()
        .unwrap_or(1)
}

/// `rows` laid out, numbers right-aligned to `digits` columns.
fn layout(rows: &[Row], digits: usize, width: usize) -> Vec<Line<'static>> {
    rows.iter()
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
            Row::File { op, path, to } => {
                let path = sanitize(path).into_owned();
                let spans = match (op, to) {
                    (FileOp::Update, Some(to)) => vec![
                        Span::styled("R ", PATH),
                        Span::styled(path, PATH),
                        Span::styled(" -> ", DIM),
                        Span::styled(sanitize(to).into_owned(), PATH),
                    ],
                    (FileOp::Add, _) => vec![Span::styled("A ", ADDED), Span::styled(path, PATH)],
                    (FileOp::Delete, _) => {
                        vec![Span::styled("D ", REMOVED), Span::styled(path, PATH)]
                    }
                    (FileOp::Update, None) => {
                        vec![Span::styled("M ", PATH), Span::styled(path, PATH)]
                    }
                };
                fit(spans, width)
            }
            Row::Hunk(text) => fit(vec![Span::styled(sanitize(text).into_owned(), DIM)], width),
            Row::Patch { kind, text } => {
                let (sign, style) = match kind {
                    Kind::Context => (' ', DIM),
                    Kind::Removed => ('-', REMOVED),
                    Kind::Added => ('+', ADDED),
                };
                fit(
                    vec![Span::styled(format!("{sign}{}", sanitize(text)), style)],
                    width,
                )
            }
            Row::Raw(text) => fit(vec![Span::styled(sanitize(text).into_owned(), DIM)], width),
        })
        .collect()
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

mod patch;
#[cfg(test)]
mod tests;
