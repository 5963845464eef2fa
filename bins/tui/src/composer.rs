//! The prompt editor: a multi-line text box with shell-like history and a
//! reverse incremental search.
//!
//! It is pure: keys come in as crossterm [`KeyEvent`]s, a pasted string
//! through [`Composer::insert_str`], and [`Composer::handle`] answers with a
//! [`ComposerAction`]. It never touches the terminal; the view draws
//! [`Composer::visual_lines`] and puts the terminal cursor at
//! [`Composer::visual_cursor`], both soft-wrapped to the width it is given.
//!
//! Invariants:
//! - there is always at least one line, and no line holds a `\n`, a `\r` or
//!   any other control character except `\t` (typed and pasted text is
//!   filtered on the way in, so nothing drawn can be a terminal escape);
//! - the cursor is `(line, char index)`: the line exists and the index is at
//!   most the line's length in `char`s (never a byte offset);
//! - while a search is open ([`Composer::search`] is `Some`) the text is the
//!   draft as it was when the search began; the match only replaces it when
//!   the search is accepted with Enter.
//!
//! Keys: Enter submits (nothing happens when the text is blank);
//! Shift+Enter, Alt+Enter and Ctrl+J insert a line break; Backspace (and
//! Ctrl+H) and Delete erase; Left/Right/Home/End, Ctrl+A/Ctrl+E and
//! Ctrl+Left/Ctrl+Right (by word) move; Ctrl+U and Ctrl+K cut to the start
//! and end of the line (at either end they remove the line break, as in
//! Emacs); Ctrl+W and Alt+Backspace cut the previous whitespace-delimited
//! word; Up/Down move between lines and, on the first/last line, walk the
//! history; Ctrl+R opens the search.
//!
//! History works like a shell's: the first Up stashes the draft, Down past
//! the newest entry brings it back. An entry recalled with Up has the
//! cursor on its first line (so Up again goes further back) and one
//! recalled with Down has it at the end of its last line. Edits to a
//! recalled entry are not written back into the history. A submission equal
//! to the newest entry is not recorded twice.

mod history;
#[cfg(test)]
mod tests;
mod wrap;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use history::{History, Search};

/// What a key did to the composer, for the caller to act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComposerAction {
    /// The key had no effect (or is not a composer key): the caller may use
    /// it for something else.
    None,
    /// The user sent this text. The composer is empty again and the text is
    /// the newest history entry.
    Submit(String),
    /// The text, the cursor or the search changed: redraw.
    Changed,
}

/// The multi-line prompt editor. See the module doc for its keys and
/// invariants.
#[derive(Debug, Clone)]
pub struct Composer {
    lines: Vec<String>,
    line: usize,
    col: usize,
    /// The display column Up/Down aim for, kept across a run of vertical
    /// moves so crossing a short line does not lose it.
    goal: Option<usize>,
    history: History,
    search: Option<Search>,
}

impl Default for Composer {
    fn default() -> Self {
        Self::new()
    }
}

impl Composer {
    /// An empty composer with no history.
    pub fn new() -> Self {
        Self::with_history(Vec::new())
    }

    /// An empty composer whose history holds `entries`, oldest first.
    pub fn with_history(entries: Vec<String>) -> Self {
        Self {
            lines: vec![String::new()],
            line: 0,
            col: 0,
            goal: None,
            history: History::new(entries),
            search: None,
        }
    }

    /// The text, lines joined with `\n`.
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// Whether there is no text at all (whitespace counts as text).
    pub fn is_empty(&self) -> bool {
        self.lines.len() == 1 && self.lines[0].is_empty()
    }

    /// The text as lines; never empty.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The cursor as `(line, char index within the line)`.
    pub fn cursor(&self) -> (usize, usize) {
        (self.line, self.col)
    }

    /// The history, oldest first.
    pub fn history(&self) -> &[String] {
        self.history.entries()
    }

    /// The open search, for drawing: the query and the history entry it
    /// currently matches, if any.
    pub fn search(&self) -> Option<(&str, Option<&str>)> {
        let search = self.search.as_ref()?;
        Some((
            search.query(),
            search.hit().map(|i| self.history.entries()[i].as_str()),
        ))
    }

    /// Replaces the text (control characters dropped, `\r\n` and `\r` read
    /// as line breaks) and puts the cursor at its end. Closes a search and
    /// leaves history browsing.
    pub fn set_text(&mut self, s: &str) {
        self.lines = vec![String::new()];
        self.line = 0;
        self.col = 0;
        self.search = None;
        self.history.stop_browsing();
        self.insert_str(s);
    }

    /// Empties the composer, closes a search and leaves history browsing.
    pub fn clear(&mut self) {
        self.set_text("");
    }

    /// Inserts `s` at the cursor, as a bracketed paste does: `\r\n` and `\r`
    /// become line breaks, other control characters but `\t` are dropped.
    /// The text is spliced in one step, so a megabyte costs a few linear
    /// passes. A paste during a search closes the search first.
    pub fn insert_str(&mut self, s: &str) {
        self.search = None;
        self.goal = None;
        let clean = clean(s);
        let mut pieces = clean.split('\n');
        // `split` always yields at least one piece.
        let first = pieces.next().unwrap_or_default();
        let rest: Vec<&str> = pieces.collect();
        let at = byte_at(&self.lines[self.line], self.col);
        let Some((last, middle)) = rest.split_last() else {
            self.lines[self.line].insert_str(at, first);
            self.col += first.chars().count();
            return;
        };
        let current = &mut self.lines[self.line];
        let tail = current.split_off(at);
        current.push_str(first);
        let mut new_last = String::with_capacity(last.len() + tail.len());
        new_last.push_str(last);
        new_last.push_str(&tail);
        let new_lines = middle
            .iter()
            .map(|piece| (*piece).to_owned())
            .chain([new_last]);
        let after = self.line + 1;
        self.lines.splice(after..after, new_lines);
        self.line += rest.len();
        self.col = last.chars().count();
    }

    /// Applies one key. Release events are ignored (only presses and
    /// repeats act).
    pub fn handle(&mut self, key: KeyEvent) -> ComposerAction {
        if key.kind == KeyEventKind::Release {
            return ComposerAction::None;
        }
        if self.search.is_some() {
            return self.handle_search(key);
        }
        let goal = self.goal.take();
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Enter if shift || alt => self.insert_newline(),
            KeyCode::Enter => self.submit(),
            KeyCode::Char(c) if ctrl && alt && !c.is_ascii_alphabetic() => {
                // AltGr arrives as Ctrl+Alt on Windows and yields symbols
                // ('@', '{', '€'); Ctrl+Alt+letter is a chord, not text.
                self.insert_char(c)
            }
            KeyCode::Char(c) if ctrl && !alt => self.control(c.to_ascii_lowercase()),
            KeyCode::Char(_) if ctrl || alt => ComposerAction::None,
            KeyCode::Char(c) => self.insert_char(c),
            KeyCode::Backspace if ctrl || alt => self.delete_word_before(),
            KeyCode::Backspace => self.backspace(),
            KeyCode::Delete => self.delete(),
            KeyCode::Left if ctrl || alt => self.word_left(),
            KeyCode::Left => self.left(),
            KeyCode::Right if ctrl || alt => self.word_right(),
            KeyCode::Right => self.right(),
            KeyCode::Home => self.move_to(self.line, 0),
            KeyCode::End => self.move_to(self.line, self.line_len()),
            KeyCode::Up => self.up(goal),
            KeyCode::Down => self.down(goal),
            _ => ComposerAction::None,
        }
    }

    fn control(&mut self, c: char) -> ComposerAction {
        match c {
            'a' => self.move_to(self.line, 0),
            'e' => self.move_to(self.line, self.line_len()),
            'h' => self.backspace(),
            'j' => self.insert_newline(),
            'k' => self.cut_to_end(),
            'u' => self.cut_to_start(),
            'w' => self.delete_word_before(),
            'r' => {
                self.search = Some(Search::default());
                ComposerAction::Changed
            }
            _ => ComposerAction::None,
        }
    }

    fn submit(&mut self) -> ComposerAction {
        let text = self.text();
        if text.trim().is_empty() {
            return ComposerAction::None;
        }
        self.history.push(text.clone());
        self.clear();
        ComposerAction::Submit(text)
    }

    fn insert_char(&mut self, c: char) -> ComposerAction {
        if c.is_control() && c != '\t' {
            return ComposerAction::None;
        }
        let at = byte_at(&self.lines[self.line], self.col);
        self.lines[self.line].insert(at, c);
        self.col += 1;
        ComposerAction::Changed
    }

    fn insert_newline(&mut self) -> ComposerAction {
        let at = byte_at(&self.lines[self.line], self.col);
        let tail = self.lines[self.line].split_off(at);
        self.lines.insert(self.line + 1, tail);
        self.line += 1;
        self.col = 0;
        ComposerAction::Changed
    }

    fn backspace(&mut self) -> ComposerAction {
        if self.col > 0 {
            self.remove_range(self.col - 1, self.col);
            ComposerAction::Changed
        } else {
            self.join_with_previous()
        }
    }

    fn delete(&mut self) -> ComposerAction {
        if self.col < self.line_len() {
            self.remove_range(self.col, self.col + 1);
            ComposerAction::Changed
        } else {
            self.join_with_next()
        }
    }

    fn cut_to_start(&mut self) -> ComposerAction {
        if self.col == 0 {
            return self.join_with_previous();
        }
        self.remove_range(0, self.col);
        ComposerAction::Changed
    }

    fn cut_to_end(&mut self) -> ComposerAction {
        if self.col == self.line_len() {
            return self.join_with_next();
        }
        self.remove_range(self.col, self.line_len());
        ComposerAction::Changed
    }

    fn delete_word_before(&mut self) -> ComposerAction {
        if self.col == 0 {
            return self.join_with_previous();
        }
        let start = word_start(&self.lines[self.line], self.col);
        self.remove_range(start, self.col);
        ComposerAction::Changed
    }

    /// Removes chars `from..to` of the current line; the cursor lands on
    /// `from`.
    fn remove_range(&mut self, from: usize, to: usize) {
        let line = &mut self.lines[self.line];
        let (a, b) = (byte_at(line, from), byte_at(line, to));
        line.replace_range(a..b, "");
        self.col = from;
    }

    fn join_with_previous(&mut self) -> ComposerAction {
        if self.line == 0 {
            return ComposerAction::None;
        }
        let current = self.lines.remove(self.line);
        self.line -= 1;
        self.col = self.line_len();
        self.lines[self.line].push_str(&current);
        ComposerAction::Changed
    }

    fn join_with_next(&mut self) -> ComposerAction {
        if self.line + 1 == self.lines.len() {
            return ComposerAction::None;
        }
        let next = self.lines.remove(self.line + 1);
        self.lines[self.line].push_str(&next);
        ComposerAction::Changed
    }

    fn left(&mut self) -> ComposerAction {
        if self.col > 0 {
            self.move_to(self.line, self.col - 1)
        } else if self.line > 0 {
            let len = self.lines[self.line - 1].chars().count();
            self.move_to(self.line - 1, len)
        } else {
            ComposerAction::None
        }
    }

    fn right(&mut self) -> ComposerAction {
        if self.col < self.line_len() {
            self.move_to(self.line, self.col + 1)
        } else if self.line + 1 < self.lines.len() {
            self.move_to(self.line + 1, 0)
        } else {
            ComposerAction::None
        }
    }

    fn word_left(&mut self) -> ComposerAction {
        if self.col == 0 {
            return self.left();
        }
        let start = word_start(&self.lines[self.line], self.col);
        self.move_to(self.line, start)
    }

    fn word_right(&mut self) -> ComposerAction {
        if self.col == self.line_len() {
            return self.right();
        }
        let end = word_end(&self.lines[self.line], self.col);
        self.move_to(self.line, end)
    }

    fn up(&mut self, goal: Option<usize>) -> ComposerAction {
        if self.line == 0 {
            return self.recall_older();
        }
        self.vertical(self.line - 1, goal)
    }

    fn down(&mut self, goal: Option<usize>) -> ComposerAction {
        if self.line + 1 == self.lines.len() {
            return self.recall_newer();
        }
        self.vertical(self.line + 1, goal)
    }

    /// Moves to `line`, at the char whose display column is nearest the
    /// goal without passing it.
    fn vertical(&mut self, line: usize, goal: Option<usize>) -> ComposerAction {
        let goal = goal.unwrap_or_else(|| wrap::prefix_width(&self.lines[self.line], self.col));
        self.line = line;
        self.col = wrap::col_at_width(&self.lines[line], goal);
        self.goal = Some(goal);
        ComposerAction::Changed
    }

    fn move_to(&mut self, line: usize, col: usize) -> ComposerAction {
        if (line, col) == (self.line, self.col) {
            return ComposerAction::None;
        }
        self.line = line;
        self.col = col;
        ComposerAction::Changed
    }

    fn line_len(&self) -> usize {
        self.lines[self.line].chars().count()
    }
}

/// The text with `\r\n` and `\r` as `\n` and every other control character
/// but `\t` dropped.
fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                chars.next_if_eq(&'\n');
                out.push('\n');
            }
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// The byte offset of char `col` in `s` (its length when `col` is at the
/// end or past it).
fn byte_at(s: &str, col: usize) -> usize {
    s.char_indices().nth(col).map_or(s.len(), |(at, _)| at)
}

/// Where the word before char `col` starts: skip whitespace backwards, then
/// the word itself.
fn word_start(s: &str, col: usize) -> usize {
    let chars: Vec<char> = s.chars().take(col).collect();
    let mut i = chars.len();
    while i > 0 && chars[i - 1].is_whitespace() {
        i -= 1;
    }
    while i > 0 && !chars[i - 1].is_whitespace() {
        i -= 1;
    }
    i
}

/// Where the word at or after char `col` ends: skip whitespace, then the
/// word.
fn word_end(s: &str, col: usize) -> usize {
    let mut i = col;
    let mut chars = s.chars().skip(col).peekable();
    while chars.next_if(|c| c.is_whitespace()).is_some() {
        i += 1;
    }
    while chars.next_if(|c| !c.is_whitespace()).is_some() {
        i += 1;
    }
    i
}
