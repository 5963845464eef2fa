//! Greedy wrapping of styled text into lines behind prefixes, by display
//! width.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Spans put in front of a line (quote bars, indent, list marker).
#[derive(Debug, Clone, Default)]
pub(super) struct Prefix {
    pub(super) spans: Vec<Span<'static>>,
    pub(super) width: usize,
}

impl Prefix {
    pub(super) fn push(&mut self, text: impl Into<String>, style: Style) {
        let text = text.into();
        if !text.is_empty() {
            self.width += text.width();
            self.spans.push(Span::styled(text, style));
        }
    }

    /// The prefix, or none when it would leave less than two columns.
    pub(super) fn fit(self, width: usize) -> Self {
        if self.width + 2 > width {
            Self::default()
        } else {
            self
        }
    }
}

/// Greedy wrapping of styled text into lines behind prefixes.
pub(super) struct Wrapper {
    width: usize,
    first: Prefix,
    rest: Prefix,
    lines: Vec<Line<'static>>,
    spans: Vec<Span<'static>>,
    used: usize,
}

impl Wrapper {
    pub(super) fn new(width: usize, first: Prefix, rest: Prefix) -> Self {
        Self {
            width,
            first: first.fit(width),
            rest: rest.fit(width),
            lines: Vec::new(),
            spans: Vec::new(),
            used: 0,
        }
    }

    fn available(&self) -> usize {
        let prefix = if self.lines.is_empty() {
            &self.first
        } else {
            &self.rest
        };
        self.width - prefix.width
    }

    fn push_str(&mut self, text: &str, style: Style) {
        match self.spans.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(text),
            _ => self.spans.push(Span::styled(text.to_owned(), style)),
        }
    }

    fn break_line(&mut self) {
        let prefix = if self.lines.is_empty() {
            &self.first
        } else {
            &self.rest
        };
        let mut spans = prefix.spans.clone();
        spans.append(&mut self.spans);
        self.lines.push(Line::from(spans));
        self.used = 0;
    }

    /// Lays out words separated by whitespace; whitespace at a break is
    /// dropped, and so is trailing whitespace.
    pub(super) fn words(&mut self, segments: &[(String, Style)]) {
        let mut word: Vec<(&str, Style)> = Vec::new();
        let mut word_width = 0;
        let mut spaces: Vec<(&str, Style)> = Vec::new();
        for (text, style) in segments {
            let mut rest = text.as_str();
            while let Some(first) = rest.chars().next() {
                let is_space = first.is_whitespace();
                let end = rest
                    .find(|c: char| c.is_whitespace() != is_space)
                    .unwrap_or(rest.len());
                let (run, tail) = rest.split_at(end);
                rest = tail;
                if is_space {
                    if !word.is_empty() {
                        self.place(&spaces, &word, word_width);
                        spaces.clear();
                        word.clear();
                        word_width = 0;
                    }
                    spaces.push((run, *style));
                } else {
                    word_width += run.width();
                    word.push((run, *style));
                }
            }
        }
        if !word.is_empty() {
            self.place(&spaces, &word, word_width);
        }
    }

    fn place(&mut self, spaces: &[(&str, Style)], word: &[(&str, Style)], word_width: usize) {
        let space_width: usize = spaces.iter().map(|(s, _)| s.width()).sum();
        if self.used > 0 && self.used + space_width + word_width <= self.available() {
            for &(s, style) in spaces {
                self.push_str(s, style);
            }
            self.used += space_width;
        } else if self.used > 0 {
            self.break_line();
        }
        if self.used + word_width <= self.available() {
            for &(s, style) in word {
                self.push_str(s, style);
            }
            self.used += word_width;
        } else {
            for &(s, style) in word {
                self.hard_split(s, style);
            }
        }
    }

    /// Lays out `text` character by character, breaking wherever the line
    /// is full but never before a zero-width character.
    pub(super) fn hard_split(&mut self, text: &str, style: Style) {
        let mut start = 0;
        for (i, c) in text.char_indices().skip(1) {
            if starts_atom(c) {
                self.place_atom(&text[start..i], style);
                start = i;
            }
        }
        if start < text.len() {
            self.place_atom(&text[start..], style);
        }
    }

    fn place_atom(&mut self, atom: &str, style: Style) {
        let width = atom.width();
        if width > 0 && self.used > 0 && self.used + width > self.available() {
            self.break_line();
        }
        self.push_str(atom, style);
        self.used += width;
    }

    pub(super) fn finish(mut self) -> Vec<Line<'static>> {
        self.break_line();
        self.lines
    }
}

/// Whether `c` begins a new unit of layout: anything but a zero-width
/// character (a control has no char width but counts in a string's).
pub(super) fn starts_atom(c: char) -> bool {
    c.is_control() || c.width().unwrap_or(0) > 0
}
