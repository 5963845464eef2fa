//! The composer's memory of what was sent: browsing it with Up/Down and
//! searching it with Ctrl+R (the types, and the composer's keys for them).
//!
//! Entries are oldest first and never change once recorded. While browsing,
//! `browsing` is the index of the entry on screen and `draft` holds what was
//! being typed before the first Up; leaving browsing drops both. A search
//! only points into the entries (`hit`); it never edits them.

use std::collections::HashSet;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{Composer, ComposerAction};

/// The text being typed before history browsing began, cursor included, so
/// coming back down restores it exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Draft {
    pub(super) lines: Vec<String>,
    pub(super) line: usize,
    pub(super) col: usize,
}

#[derive(Debug, Clone, Default)]
pub(super) struct History {
    entries: Vec<String>,
    browsing: Option<usize>,
    draft: Option<Draft>,
}

impl History {
    pub(super) fn new(entries: Vec<String>) -> Self {
        Self {
            entries,
            browsing: None,
            draft: None,
        }
    }

    pub(super) fn entries(&self) -> &[String] {
        &self.entries
    }

    /// Records a submission, unless it repeats the newest entry, and stops
    /// browsing.
    pub(super) fn push(&mut self, text: String) {
        if self.entries.last() != Some(&text) {
            self.entries.push(text);
        }
        self.stop_browsing();
    }

    pub(super) fn stop_browsing(&mut self) {
        self.browsing = None;
        self.draft = None;
    }

    /// The entry before the one on screen; on the first step back the
    /// draft is stashed (`draft` is only called then). `None` when there is
    /// nothing older.
    pub(super) fn older(&mut self, draft: impl FnOnce() -> Draft) -> Option<&str> {
        let index = match self.browsing {
            None if self.entries.is_empty() => return None,
            None => {
                self.draft = Some(draft());
                self.entries.len() - 1
            }
            Some(0) => return None,
            Some(i) => i - 1,
        };
        self.browsing = Some(index);
        Some(&self.entries[index])
    }

    /// The entry after the one on screen (`Ok`), or, past the newest, the
    /// stashed draft (`Err`, browsing ends). `None` when not browsing.
    pub(super) fn newer(&mut self) -> Option<Result<&str, Draft>> {
        let i = self.browsing?;
        if i + 1 < self.entries.len() {
            self.browsing = Some(i + 1);
            return Some(Ok(&self.entries[i + 1]));
        }
        self.browsing = None;
        let draft = self.draft.take().unwrap_or(Draft {
            lines: vec![String::new()],
            line: 0,
            col: 0,
        });
        Some(Err(draft))
    }
}

/// A reverse incremental search: the query typed so far and the entry it
/// matches. The query is smart-case: all lower case matches any case, a
/// capital makes it exact. An empty query matches nothing.
#[derive(Debug, Clone, Default)]
pub(super) struct Search {
    query: String,
    hit: Option<usize>,
}

impl Search {
    pub(super) fn query(&self) -> &str {
        &self.query
    }

    pub(super) fn hit(&self) -> Option<usize> {
        self.hit
    }

    /// Narrows the query: the match stays if it still fits, otherwise the
    /// search continues towards older entries (from the newest when there
    /// was no match).
    pub(super) fn push(&mut self, c: char, entries: &[String]) {
        self.query.push(c);
        let from = self.hit.map_or(entries.len(), |i| i + 1);
        self.hit = self.find(entries, from);
    }

    /// Widens the query by one char and searches again from the newest
    /// entry. `false` when the query was already empty.
    pub(super) fn pop(&mut self, entries: &[String]) -> bool {
        if self.query.pop().is_none() {
            return false;
        }
        self.hit = self.find(entries, entries.len());
        true
    }

    /// Goes to the next older match. `false` (and the match stays) when
    /// there is none.
    pub(super) fn older(&mut self, entries: &[String]) -> bool {
        let Some(current) = self.hit else {
            return false;
        };
        let older = self.find(entries, current);
        if older.is_some() {
            self.hit = older;
        }
        older.is_some()
    }

    /// The newest entry before index `before` that matches the query. Each
    /// distinct text is only found at its newest occurrence, so stepping
    /// back never shows the same line twice.
    fn find(&self, entries: &[String], before: usize) -> Option<usize> {
        if self.query.is_empty() {
            return None;
        }
        let exact = self.query.chars().any(char::is_uppercase);
        let query = if exact {
            self.query.clone()
        } else {
            self.query.to_lowercase()
        };
        let mut newer: HashSet<&str> = HashSet::new();
        for (i, entry) in entries.iter().enumerate().rev() {
            let found = if exact {
                entry.contains(&query)
            } else {
                entry.to_lowercase().contains(&query)
            };
            if i < before && found && !newer.contains(entry.as_str()) {
                return Some(i);
            }
            newer.insert(entry);
        }
        None
    }
}

/// The keys that walk the history and drive a search.
impl Composer {
    /// Up on the first line: the previous entry, stashing the draft first.
    pub(super) fn recall_older(&mut self) -> ComposerAction {
        let draft = || Draft {
            lines: self.lines.clone(),
            line: self.line,
            col: self.col,
        };
        let Some(entry) = self.history.older(draft) else {
            return ComposerAction::None;
        };
        let entry = entry.to_owned();
        self.load(&entry);
        self.line = 0;
        self.col = self.line_len();
        ComposerAction::Changed
    }

    /// Down on the last line: the next entry, or back to the draft.
    pub(super) fn recall_newer(&mut self) -> ComposerAction {
        match self.history.newer() {
            None => ComposerAction::None,
            Some(Ok(entry)) => {
                let entry = entry.to_owned();
                self.load(&entry);
                ComposerAction::Changed
            }
            Some(Err(draft)) => {
                self.lines = draft.lines;
                self.line = draft.line;
                self.col = draft.col;
                ComposerAction::Changed
            }
        }
    }

    /// Replaces the text with a history entry, cursor at the end, without
    /// leaving history browsing.
    fn load(&mut self, entry: &str) {
        self.lines = vec![String::new()];
        self.line = 0;
        self.col = 0;
        self.insert_str(entry);
    }

    /// A key while a search is open: the query, Ctrl+R, Enter, Esc/Ctrl+G;
    /// any other key is ignored.
    pub(super) fn handle_search(&mut self, key: KeyEvent) -> ComposerAction {
        let Some(search) = self.search.as_mut() else {
            return ComposerAction::None;
        };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let entries = self.history.entries();
        match key.code {
            KeyCode::Esc => {
                self.search = None;
                ComposerAction::Changed
            }
            KeyCode::Char('g' | 'G') if ctrl => {
                self.search = None;
                ComposerAction::Changed
            }
            KeyCode::Char('r' | 'R') if ctrl => {
                if search.older(entries) {
                    ComposerAction::Changed
                } else {
                    ComposerAction::None
                }
            }
            KeyCode::Enter => {
                let hit = search.hit().map(|i| entries[i].clone());
                self.search = None;
                if let Some(entry) = hit {
                    self.set_text(&entry);
                }
                ComposerAction::Changed
            }
            KeyCode::Backspace => {
                if search.pop(entries) {
                    ComposerAction::Changed
                } else {
                    ComposerAction::None
                }
            }
            KeyCode::Char(c) if !ctrl && !alt && !c.is_control() => {
                search.push(c, entries);
                ComposerAction::Changed
            }
            _ => ComposerAction::None,
        }
    }
}
