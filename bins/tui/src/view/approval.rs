//! The approval prompt: what the waiting call asks, what it would do, and
//! the keys that answer it.
//!
//! Top to bottom, under a yellow rule: `Allow <tool> <subject>?`; the
//! engine's reason (wrapped, at most [`REASON_LINES`] lines); for a write,
//! an edit or a patch its preview (the diff's header, its note when the numbers are
//! not the file's, and as much of the diff as fits, from the line
//! `app.preview_scroll` on, with a dim line saying which lines show when
//! not all do); then the keys, or the denial reason or JSON being typed.
//! The whole diff is reachable, however long: the prompt grows to what the
//! screen leaves, and what does not fit scrolls (the keys are in `app`).
//! Each frame lays out only the lines on screen.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::{clip, note_line, wrap_columns};
use crate::app::{Answering, App};

/// The most lines the engine's reason takes.
const REASON_LINES: usize = 3;
/// Columns the preview is indented by.
const INDENT: &str = "  ";

/// The prompt's lines at `width`, at most `room` of them when that leaves
/// the title and the keys (those are always there). Records how far the
/// preview can scroll and how many of its lines show, for the keys.
pub(super) fn lines(app: &App, width: u16, room: usize) -> Vec<Line<'static>> {
    let Some(pending) = app.transcript.pending_call() else {
        return Vec::new();
    };
    let dim = Style::new().add_modifier(Modifier::DIM);
    let mut top = vec![Line::from(vec![
        Span::styled("Allow ", Style::new().add_modifier(Modifier::BOLD)),
        Span::styled(
            clip(
                &format!("{} {}", pending.call.name, pending.call.subject),
                width.saturating_sub(8),
            ),
            Style::new().fg(Color::Yellow),
        ),
        Span::raw("?"),
    ])];
    let reason = pending.approval.as_deref().unwrap_or_default();
    let mut pieces = wrap_columns(reason, width);
    if pieces.len() > REASON_LINES {
        pieces.truncate(REASON_LINES);
        let last = pieces.pop().unwrap_or_default();
        pieces.push(clip(&format!("{last}…"), width));
    }
    top.extend(pieces.into_iter().map(|piece| Line::styled(piece, dim)));
    let keys = keys(app, width);
    let mut lines = top;
    let mut left = room.saturating_sub(lines.len() + keys.len());
    app.preview_max.set(0);
    app.preview_page.set(1);
    if let Some(preview) = &pending.preview
        && left > 0
    {
        let inner = width.saturating_sub(2);
        lines.push(indent(preview.diff.header(&pending.call.subject, inner)));
        left -= 1;
        if let Some(note) = note_line(preview, inner)
            && left > 0
        {
            lines.push(indent(note));
            left -= 1;
        }
        let total = preview.diff.len();
        let take = if total > left {
            // One line says where the window is.
            left.saturating_sub(1)
        } else {
            total
        };
        if take > 0 {
            let max = total - take;
            let skip = app.preview_scroll.min(max);
            app.preview_max.set(max);
            app.preview_page.set(take);
            lines.extend(
                preview
                    .diff
                    .window(inner, skip, take)
                    .into_iter()
                    .map(indent),
            );
            if take < total {
                lines.push(Line::styled(
                    clip(
                        &format!(
                            "{INDENT}lines {}–{} of {total} · ↑↓ PgUp PgDn to scroll",
                            skip + 1,
                            skip + take
                        ),
                        width,
                    ),
                    dim,
                ));
            }
        }
    }
    lines.extend(keys);
    lines
}

/// Draws `lines` (from [`lines`]) under the rule.
pub(super) fn draw(frame: &mut Frame<'_>, area: Rect, lines: Vec<Line<'static>>) {
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::new()
                .borders(Borders::TOP)
                .border_style(Style::new().fg(Color::Yellow)),
        ),
        area,
    );
}

/// The keys that answer, or what is being typed.
fn keys(app: &App, width: u16) -> Vec<Line<'static>> {
    match &app.answering {
        None if width >= 56 => vec![Line::from(vec![
            Span::styled("y", Style::new().fg(Color::Green)),
            Span::raw(" allow once  "),
            Span::styled("s", Style::new().fg(Color::Green)),
            Span::raw(" allow for this session  "),
            Span::styled("n", Style::new().fg(Color::Red)),
            Span::raw(" deny  "),
            Span::styled("e", Style::new().fg(Color::Cyan)),
            Span::raw(" edit"),
        ])],
        None => vec![Line::from(vec![
            Span::styled("y", Style::new().fg(Color::Green)),
            Span::raw(" once · "),
            Span::styled("s", Style::new().fg(Color::Green)),
            Span::raw(" session · "),
            Span::styled("n", Style::new().fg(Color::Red)),
            Span::raw(" deny · "),
            Span::styled("e", Style::new().fg(Color::Cyan)),
            Span::raw(" edit"),
        ])],
        Some(Answering::Reason(c)) => vec![
            Line::raw(clip("why not? (Enter to deny, Esc to go back)", width)),
            Line::raw(tail(&format!("> {}", c.text()), width)),
        ],
        Some(Answering::Edit(c)) => vec![
            Line::raw(clip(
                "the input as JSON (Enter to send, Esc to go back):",
                width,
            )),
            Line::raw(tail(&c.text().replace('\n', " "), width)),
        ],
    }
}

fn indent(mut line: Line<'static>) -> Line<'static> {
    line.spans.insert(0, Span::raw(INDENT));
    line
}

/// The end of `text` that fits in `width` columns (where the typing is),
/// behind `…` when the start was cut.
fn tail(text: &str, width: u16) -> String {
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
    let width = usize::from(width);
    if text.width() <= width {
        return text.to_owned();
    }
    let mut kept = Vec::new();
    let mut used = 1;
    for c in text.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > width {
            break;
        }
        used += w;
        kept.push(c);
    }
    std::iter::once('…').chain(kept.into_iter().rev()).collect()
}
