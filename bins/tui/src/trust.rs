//! The one question a project's hooks get before they may run: the
//! terminal UI's counterpart of Claude Code's workspace-trust question.
//!
//! Asked once, as the UI opens, before the session starts (so a trusted
//! `SessionStart` hook runs for it): the hooks are listed as they are
//! written — name, event, matcher, command and where — and the person
//! answers `y` (trusted as they are now; a changed command asks again) or
//! `n` (the session runs without them, and the next one asks again).
//! Nothing else is read until they answer; Ctrl+C and Esc answer no.

use std::io;

use crossterm::event::{self, Event as Input, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::DefaultTerminal;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Text};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::sanitize::sanitize;

/// What to ask, and how to record a yes.
pub struct TrustQuestion {
    /// The folder whose hooks they are.
    pub project: String,
    /// One entry per hook: its name and event, then its command and where
    /// it is written.
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

/// The question as lines, for `width` columns.
#[must_use]
pub fn lines(question: &TrustQuestion) -> Text<'static> {
    let bold = Style::new().add_modifier(Modifier::BOLD);
    let dim = Style::new().add_modifier(Modifier::DIM);
    let mut lines = vec![
        Line::styled("Trust this folder's hooks?", bold),
        Line::raw(""),
        Line::raw(format!(
            "{} defines hooks: commands that run on this machine, outside the sandbox, at points \
             of every session (before and after tool calls, at each prompt). A repository could \
             use them to run anything, so they run only once you trust them.",
            sanitize(&question.project)
        )),
        Line::raw(""),
    ];
    for (head, detail) in &question.hooks {
        lines.push(Line::styled(format!("  {}", sanitize(head)), bold));
        lines.push(Line::styled(format!("    {}", sanitize(detail)), dim));
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        "y  trust them as they are now (a changed hook asks again)",
        Style::new().fg(Color::Green),
    ));
    lines.push(Line::styled(
        "n  not now: this session runs without them",
        Style::new().fg(Color::Yellow),
    ));
    Text::from(lines)
}

/// Asks on `terminal` until the person answers; whether they said yes.
///
/// # Errors
/// The terminal could not be drawn on or read.
pub fn ask(terminal: &mut DefaultTerminal, question: &TrustQuestion) -> io::Result<bool> {
    loop {
        terminal.draw(|frame| {
            let area = frame.area();
            let inner = Rect {
                x: area.x + 1,
                y: area.y,
                width: area.width.saturating_sub(2),
                height: area.height,
            };
            let block = Block::bordered().title(" cox ");
            frame.render_widget(
                Paragraph::new(lines(question))
                    .block(block)
                    .wrap(Wrap { trim: false }),
                inner,
            );
        })?;
        if let Input::Key(key) = event::read()?
            && key.kind == KeyEventKind::Press
        {
            match key.code {
                KeyCode::Char('y' | 'Y') => return Ok(true),
                KeyCode::Char('n' | 'N') | KeyCode::Esc => return Ok(false),
                KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    return Ok(false);
                }
                _ => {}
            }
        }
    }
}
