//! Soft wrapping of the composer's text by display width, and where the
//! cursor lands in it.
//!
//! Wrapping is by character, not by word: a row takes chars while they fit
//! in the width, so every char index maps to exactly one visual position
//! and the cursor can never sit past the edge. Widths come from
//! `unicode-width` (CJK and most emoji are two columns, combining marks
//! zero); a `\t` is drawn as [`TAB_WIDTH`] spaces. A char wider than the
//! whole row (a CJK char in a one-column box) gets a row to itself.
//!
//! When the cursor is at the end of a line whose last row is full, it is
//! shown at the start of an extra empty row, which [`Composer::visual_lines`]
//! includes so the two always agree.

use unicode_width::UnicodeWidthChar;

use super::Composer;

/// Columns a tab takes on screen.
pub(super) const TAB_WIDTH: usize = 4;

fn char_width(c: char) -> usize {
    if c == '\t' {
        TAB_WIDTH
    } else {
        c.width().unwrap_or(0)
    }
}

/// The display width of the first `col` chars of `s`.
pub(super) fn prefix_width(s: &str, col: usize) -> usize {
    s.chars().take(col).map(char_width).sum()
}

/// The largest char index whose prefix is at most `goal` columns wide.
pub(super) fn col_at_width(s: &str, goal: usize) -> usize {
    let mut width = 0;
    for (i, c) in s.chars().enumerate() {
        width += char_width(c);
        if width > goal {
            return i;
        }
    }
    s.chars().count()
}

/// One visual row of a line: chars `start..end`, `width` columns wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Row {
    start: usize,
    end: usize,
    width: usize,
}

/// Splits a line into rows of at most `width` columns (`width` >= 1). An
/// empty line is one empty row.
fn rows(line: &str, width: usize) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut row = Row {
        start: 0,
        end: 0,
        width: 0,
    };
    for (i, c) in line.chars().enumerate() {
        let w = char_width(c);
        if row.width + w > width && i > row.start {
            rows.push(row);
            row = Row {
                start: i,
                end: i,
                width: 0,
            };
        }
        row.end = i + 1;
        row.width += w;
    }
    rows.push(row);
    rows
}

fn render(line: &str, row: Row) -> String {
    let mut out = String::with_capacity(row.end - row.start);
    for c in line.chars().skip(row.start).take(row.end - row.start) {
        if c == '\t' {
            out.extend(std::iter::repeat_n(' ', TAB_WIDTH));
        } else {
            out.push(c);
        }
    }
    out
}

impl Composer {
    /// The text soft-wrapped to `width` columns (tabs drawn as spaces), one
    /// string per screen row. A `width` of 0 is taken as 1.
    pub fn visual_lines(&self, width: u16) -> Vec<String> {
        let width = usize::from(width.max(1));
        let mut out = Vec::with_capacity(self.lines.len());
        for (index, line) in self.lines.iter().enumerate() {
            let rows = rows(line, width);
            out.extend(rows.iter().map(|row| render(line, *row)));
            if index == self.line && self.cursor_overflows(&rows, width) {
                out.push(String::new());
            }
        }
        out
    }

    /// Where the cursor is in [`Composer::visual_lines`] for the same
    /// `width`: `(row, column)`, both counted from 0 (saturating at
    /// `u16::MAX`).
    pub fn visual_cursor(&self, width: u16) -> (u16, u16) {
        let width = usize::from(width.max(1));
        let above: usize = self.lines[..self.line]
            .iter()
            .map(|line| rows(line, width).len())
            .sum();
        let line = &self.lines[self.line];
        let rows = rows(line, width);
        if self.cursor_overflows(&rows, width) {
            return (saturate(above + rows.len()), 0);
        }
        let (index, row) = rows
            .iter()
            .enumerate()
            .find(|(_, row)| self.col < row.end)
            .unwrap_or((rows.len() - 1, &rows[rows.len() - 1]));
        let column: usize = line
            .chars()
            .skip(row.start)
            .take(self.col - row.start)
            .map(char_width)
            .sum();
        (saturate(above + index), saturate(column))
    }

    /// Whether the cursor sits at the end of its line and that line's last
    /// row is full, so it must be shown on the row below.
    fn cursor_overflows(&self, rows: &[Row], width: usize) -> bool {
        let last = rows[rows.len() - 1];
        self.col == last.end && last.end > last.start && last.width >= width
    }
}

fn saturate(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}
