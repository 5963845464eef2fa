//! The one question a project's hooks and allow rules get before they
//! take effect: the terminal UI's counterpart of Claude Code's
//! workspace-trust question.
//!
//! Asked once, as the UI opens, before the session starts (so a trusted
//! `SessionStart` hook runs for it): the hooks are listed as they are
//! written — name, event, matcher, command and where — and the person
//! answers `y` (trusted as they are now; a changed command asks again) or
//! `n` (the session runs without them, and the next one asks again).
//! A list longer than the screen scrolls, the answers stay at the bottom,
//! and `y` answers only once the end of the list has been shown, so no
//! hook is trusted unseen. Nothing else is read until they answer; Ctrl+C
//! and Esc answer no.

use std::io;

use crossterm::event::{self, Event as Input, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::DefaultTerminal;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Text};
use ratatui::widgets::{Block, Paragraph};

use crate::sanitize::sanitize;

/// What to ask, and how to record a yes.
pub struct TrustQuestion {
    /// The folder whose hooks they are.
    pub project: String,
    /// One entry per hook (its name and event, then its command and where
    /// it is written) and per allow rule (`allow rule <rule>`, then where).
    pub hooks: Vec<(String, String)>,
    /// Records the trust; a line saying why it could not.
    pub trust: Box<dyn FnOnce() -> Result<(), String>>,
}

impl std::fmt::Debug for TrustQuestion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrustQuestion")
            .field("project", &self.project)
            .field("hooks", &self.hooks)
            .finish_non_exhaustive()
    }
}

/// The question's body: what it is about, then each hook.
#[must_use]
pub fn body(question: &TrustQuestion) -> Text<'static> {
    let bold = Style::new().add_modifier(Modifier::BOLD);
    let dim = Style::new().add_modifier(Modifier::DIM);
    let mut lines = vec![
        Line::styled("Trust this folder's hooks and rules?", bold),
        Line::raw(""),
        Line::raw(format!(
            "{} defines {}: hooks are commands that run at points of every session (before and \
             after tool calls, at each prompt), inside the session's sandbox (they write only the \
             workspace, and see a /tmp of their own); allow rules let the \
             model make those calls without asking you. A repository could use them against you, \
             so they take effect only once you trust them.",
            sanitize(&question.project),
            counted(&question.hooks)
        )),
        Line::raw(""),
    ];
    for (head, detail) in &question.hooks {
        lines.push(Line::styled(format!("  {}", sanitize(head)), bold));
        lines.push(Line::styled(format!("    {}", sanitize(detail)), dim));
    }
    Text::from(lines)
}

/// "2 hook(s) and 1 allow rule(s)", as the entries' heads say.
pub(crate) fn counted(entries: &[(String, String)]) -> String {
    let rules = entries
        .iter()
        .filter(|(head, _)| head.starts_with("allow rule "))
        .count();
    let hooks = entries.len() - rules;
    match (hooks, rules) {
        (_, 0) => format!("{hooks} hook(s)"),
        (0, _) => format!("{rules} allow rule(s)"),
        _ => format!("{hooks} hook(s) and {rules} allow rule(s)"),
    }
}

/// Where the person is in the question: how far the list is scrolled, and
/// how far it can be.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct View {
    pub scroll: usize,
    pub max_scroll: usize,
}

impl View {
    /// Whether every hook has been on the screen: `y` answers only then,
    /// so a hook below the fold is never trusted unseen.
    #[must_use]
    pub fn seen_all(self) -> bool {
        self.scroll >= self.max_scroll
    }
}

/// Draws the question: the list (scrolled to `scroll`) above, the answers
/// always at the bottom. How far the list can scroll.
pub fn draw(frame: &mut ratatui::Frame<'_>, question: &TrustQuestion, scroll: usize) -> View {
    let area = frame.area();
    let [top, bottom] = Layout::vertical([Constraint::Min(3), Constraint::Length(4)]).areas(area);
    // Wrapped here, so the count of lines (and how far to scroll) is known.
    let width = top.width.saturating_sub(2).max(1);
    let lines: Vec<Line<'static>> = body(question)
        .lines
        .into_iter()
        .flat_map(|line| {
            let style = line.style;
            let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
            let pieces = crate::view::wrap_columns(&text, width);
            let pieces = if pieces.is_empty() {
                vec![String::new()]
            } else {
                pieces
            };
            pieces.into_iter().map(move |p| Line::styled(p, style))
        })
        .collect();
    // Counted and cut here, in `usize`: a list of any length scrolls to its
    // true end.
    let rows = usize::from(top.height.saturating_sub(2));
    let max_scroll = lines.len().saturating_sub(rows);
    let scroll = scroll.min(max_scroll);
    let shown: Vec<Line<'static>> = lines.into_iter().skip(scroll).take(rows).collect();
    let paragraph = Paragraph::new(shown);
    let title = if max_scroll > 0 {
        format!(
            " cox · {} · ↑ ↓ PgUp PgDn to scroll · {} more line(s) below ",
            counted(&question.hooks),
            max_scroll - scroll
        )
    } else {
        " cox ".to_owned()
    };
    frame.render_widget(paragraph.block(Block::bordered().title(title)), top);
    let view = View { scroll, max_scroll };
    let yes = if view.seen_all() {
        Line::styled(
            "y  trust them as they are now (a changed hook asks again)",
            Style::new().fg(Color::Green),
        )
    } else {
        Line::styled(
            "scroll to the end of the list to answer y (every hook is shown before it is trusted)",
            Style::new().fg(Color::Yellow),
        )
    };
    let answers = Text::from(vec![
        yes,
        Line::styled(
            "n  not now: this session runs without them",
            Style::new().fg(Color::Yellow),
        ),
    ]);
    frame.render_widget(Paragraph::new(answers).block(Block::bordered()), bottom);
    view
}

/// Asks on `terminal` until the person answers; whether they said yes.
///
/// # Errors
/// The terminal could not be drawn on or read.
pub fn ask(terminal: &mut DefaultTerminal, question: &TrustQuestion) -> io::Result<bool> {
    let mut scroll: usize = 0;
    loop {
        let mut view = View::default();
        terminal.draw(|frame| view = draw(frame, question, scroll))?;
        scroll = view.scroll;
        let page = usize::from(terminal.size()?.height.saturating_sub(8).max(1));
        if let Input::Key(key) = event::read()?
            && key.kind == KeyEventKind::Press
        {
            match key.code {
                KeyCode::Char('y' | 'Y') if view.seen_all() => return Ok(true),
                KeyCode::Char('n' | 'N') | KeyCode::Esc => return Ok(false),
                KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    return Ok(false);
                }
                KeyCode::Down | KeyCode::Char('j') => scroll = scroll.saturating_add(1),
                KeyCode::Up | KeyCode::Char('k') => scroll = scroll.saturating_sub(1),
                KeyCode::PageDown | KeyCode::Char(' ') => scroll = scroll.saturating_add(page),
                KeyCode::PageUp => scroll = scroll.saturating_sub(page),
                KeyCode::End | KeyCode::Char('G') => scroll = view.max_scroll,
                KeyCode::Home => scroll = 0,
                _ => {}
            }
        }
    }
}
