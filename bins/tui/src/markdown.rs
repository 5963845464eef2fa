//! Assistant text as styled terminal lines.
//!
//! A small, hand-written, line-based renderer for the markdown models
//! write: `#` headings, paragraphs, `**bold**`, `*italic*` / `_italic_`,
//! `` `code` `` spans, bullet and numbered lists with a hanging indent,
//! `>` quotes, fenced code blocks and horizontal rules. It is not
//! CommonMark; it is what reads well while an answer streams in, and it is
//! cheap enough to run over the whole answer on every frame.
//!
//! Decisions:
//! - A line break in the source is a line break on screen (models mean
//!   it), so each source line is rendered on its own; runs of blank lines
//!   become one blank line, and none leads or trails.
//! - Prose wraps at word boundaries by display width (`unicode-width`); a
//!   word longer than the line is broken between characters, and a
//!   zero-width character (a combining mark, a joiner, a variation
//!   selector) always stays with the character before it.
//! - Code blocks wrap too, character by character (nothing of the code is
//!   hidden), with no prefix, in [`CODE`]; fence lines are not shown, the
//!   language is a line of its own in [`DIM`]. Indented code blocks are
//!   just indented text.
//! - Leading spaces of a line are kept as a hanging indent.
//! - A quoted line may be a heading, a list item or a rule, never a fence;
//!   links, tables and HTML stay as written.
//! - Delimiters that do not close render literally (`**bold` while it
//!   streams), and an unclosed fence renders the rest as code; inline
//!   markup nests at most [`MAX_NESTING`] deep, then is literal.
//!
//! Invariants: the input is sanitized by the caller (see
//! [`crate::sanitize`]); any input renders without panicking, in time
//! about linear in its length; every line fits in `width` columns (0
//! counts as 1) but for a character wider than the room left for it,
//! which then stands alone after the line's prefix. A prefix (indent, list
//! marker, quote bars) that would leave less than two columns is dropped.

mod inline;
mod wrap;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use wrap::{Prefix, Wrapper};

/// Headings; a level-1 heading is also underlined.
pub const HEADING: Style = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
/// Code spans and code blocks.
pub const CODE: Style = Style::new().fg(Color::Yellow);
/// A code block's language.
pub const DIM: Style = Style::new().add_modifier(Modifier::DIM);
/// The bar in front of quoted lines (whose text is italic).
pub const QUOTE_BAR: Style = Style::new().fg(Color::DarkGray);
/// Horizontal rules.
pub const RULE: Style = Style::new().fg(Color::DarkGray);
/// How deep emphasis may nest before delimiters are taken literally.
pub const MAX_NESTING: usize = 4;

/// Renders `text` as lines at most `width` columns wide (see the module
/// doc for the one exception).
pub fn render(text: &str, width: u16) -> Vec<Line<'static>> {
    let mut renderer = Renderer {
        width: usize::from(width).max(1),
        lines: Vec::new(),
        blank_pending: false,
        fence: None,
    };
    for line in text.lines() {
        renderer.line(line);
    }
    renderer.lines
}

/// An open code fence.
#[derive(Debug, Clone, Copy)]
struct Fence {
    marker: u8,
    len: usize,
    /// Spaces before the opening fence, stripped from the code lines.
    indent: usize,
}

struct Renderer {
    width: usize,
    lines: Vec<Line<'static>>,
    /// A blank line was seen since the last block.
    blank_pending: bool,
    fence: Option<Fence>,
}

impl Renderer {
    fn line(&mut self, line: &str) {
        if let Some(fence) = self.fence {
            if closes(line, fence) {
                self.fence = None;
            } else {
                let code = strip_spaces(line, fence.indent);
                let mut wrapper = Wrapper::new(self.width, Prefix::default(), Prefix::default());
                wrapper.hard_split(code, CODE);
                self.lines.extend(wrapper.finish());
            }
            return;
        }
        if line.trim().is_empty() {
            self.blank_pending = !self.lines.is_empty();
            return;
        }
        if self.blank_pending {
            self.lines.push(Line::default());
            self.blank_pending = false;
        }
        if let Some((fence, lang)) = opens(line) {
            self.fence = Some(fence);
            if !lang.is_empty() {
                let mut wrapper = Wrapper::new(self.width, Prefix::default(), Prefix::default());
                wrapper.hard_split(lang, DIM);
                self.lines.extend(wrapper.finish());
            }
            return;
        }
        self.block(line);
    }

    /// A line outside code: a quote prefix, then a rule, a heading, a list
    /// item or plain text.
    fn block(&mut self, line: &str) {
        let (depth, rest) = strip_quotes(line);
        let mut quote = Prefix::default();
        for _ in 0..depth {
            quote.push("│ ", QUOTE_BAR);
        }
        let base = if depth > 0 {
            Style::new().add_modifier(Modifier::ITALIC)
        } else {
            Style::new()
        };
        let content = rest.trim_start();
        let indent = rest[..rest.len() - content.len()].width();

        if is_rule(content) {
            let quote = quote.fit(self.width);
            let len = self.width - quote.width;
            let mut spans = quote.spans;
            spans.push(Span::styled("─".repeat(len), RULE));
            self.lines.push(Line::from(spans));
        } else if let Some((level, title)) = heading(content).filter(|_| indent <= 3) {
            let style = if level == 1 {
                HEADING.add_modifier(Modifier::UNDERLINED)
            } else {
                HEADING
            };
            self.wrap(title, base.patch(style), quote.clone(), quote);
        } else if let Some((marker, item)) = list_marker(content, indent) {
            let mut first = quote.clone();
            first.push(" ".repeat(indent), base);
            first.push(format!("{marker} "), base);
            let mut rest = quote;
            rest.push(" ".repeat(indent + marker.width() + 1), base);
            self.wrap(item, base, first, rest);
        } else {
            let mut prefix = quote;
            prefix.push(" ".repeat(indent), base);
            self.wrap(content, base, prefix.clone(), prefix);
        }
    }

    fn wrap(&mut self, text: &str, base: Style, first: Prefix, rest: Prefix) {
        let segments = inline::parse(text, base);
        let mut wrapper = Wrapper::new(self.width, first, rest);
        wrapper.words(&segments);
        self.lines.extend(wrapper.finish());
    }
}

/// `n` leading spaces of `line` removed, or as many as it has.
fn strip_spaces(line: &str, n: usize) -> &str {
    let spaces = line.bytes().take(n).take_while(|&b| b == b' ').count();
    &line[spaces..]
}

/// A fence opening: three or more backticks or tildes after any spaces,
/// then an info string whose first word is the language.
fn opens(line: &str) -> Option<(Fence, &str)> {
    let trimmed = line.trim_start_matches(' ');
    let marker = *trimmed.as_bytes().first()?;
    if marker != b'`' && marker != b'~' {
        return None;
    }
    let len = run_len(trimmed.as_bytes(), 0);
    let info = trimmed[len..].trim();
    if len < 3 || (marker == b'`' && info.contains('`')) {
        return None;
    }
    let fence = Fence {
        marker,
        len,
        indent: line.len() - trimmed.len(),
    };
    Some((fence, info.split_whitespace().next().unwrap_or("")))
}

fn closes(line: &str, fence: Fence) -> bool {
    let trimmed = line.trim_start_matches(' ');
    let bytes = trimmed.as_bytes();
    if bytes.first() != Some(&fence.marker) {
        return false;
    }
    let len = run_len(bytes, 0);
    len >= fence.len && trimmed[len..].trim().is_empty()
}

/// The number of `>` markers in front of `line`, and what follows them.
fn strip_quotes(line: &str) -> (usize, &str) {
    let mut depth = 0;
    let mut rest = line;
    loop {
        let trimmed = rest.trim_start_matches(' ');
        let Some(after) = trimmed.strip_prefix('>') else {
            return (depth, rest);
        };
        depth += 1;
        rest = after.strip_prefix(' ').unwrap_or(after);
    }
}

/// `---`, `***` or `___`, three or more, spaces allowed between.
fn is_rule(s: &str) -> bool {
    let Some(c) = s.chars().next().filter(|c| matches!(c, '-' | '*' | '_')) else {
        return false;
    };
    s.chars().all(|x| x == c || x == ' ' || x == '\t') && s.chars().filter(|&x| x == c).count() >= 3
}

/// `#` to `######`, then a space or nothing; a closing run of `#` dropped.
fn heading(s: &str) -> Option<(usize, &str)> {
    let level = s.bytes().take_while(|&b| b == b'#').count();
    let after = &s[level..];
    if !(1..=6).contains(&level) || !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    let title = after.trim();
    let unclosed = title.trim_end_matches('#');
    Some(if unclosed.is_empty() || unclosed.ends_with(' ') {
        (level, unclosed.trim_end())
    } else {
        (level, title)
    })
}

/// A bullet (`-`, `*`, `+`) or a number (`1.`, `2)`) and a space: the
/// marker to show and the item's text.
fn list_marker(s: &str, indent: usize) -> Option<(String, &str)> {
    const BULLETS: [&str; 3] = ["•", "◦", "▪"];
    let bytes = s.as_bytes();
    if matches!(bytes, [b'-' | b'*' | b'+', b' ', ..]) {
        let bullet = BULLETS[(indent / 2) % BULLETS.len()];
        return Some((bullet.to_owned(), s[2..].trim_start()));
    }
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    match bytes.get(digits..digits + 2) {
        Some([b'.' | b')', b' ']) if (1..=9).contains(&digits) => {
            Some((s[..=digits].to_owned(), s[digits + 2..].trim_start()))
        }
        _ => None,
    }
}

fn run_len(bytes: &[u8], at: usize) -> usize {
    bytes[at..].iter().take_while(|&&b| b == bytes[at]).count()
}

#[cfg(test)]
mod tests;
