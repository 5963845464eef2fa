//! Drawing the app: the transcript, an approval prompt when one waits (with
//! what the call would do, see `view/approval.rs`), the composer (with slash
//! completion above it) and the status line.
//!
//! Pure: it reads the [`App`] and writes a ratatui frame, so tests draw into
//! a `TestBackend` and compare whole screens. Every string from a model or a
//! tool was sanitized when it entered the transcript. Narrow terminals get
//! the same layout, truncated, never a panic; below 20×6 only a line saying
//! the terminal is too small is drawn.

use cox_protocol::hook::HookOutcome;
use cox_protocol::types::{NoticeLevel, Risk, StopReason};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Clear, Paragraph};

use crate::app::{App, Overlay};
use crate::preview::Preview;
use crate::transcript::{Entry, ToolEntry};

/// The smallest screen that is drawn in full.
pub const MIN_WIDTH: u16 = 20;
pub const MIN_HEIGHT: u16 = 6;
/// Transcript lines an approval prompt leaves on screen when it can.
const MIN_TRANSCRIPT: usize = 3;

mod approval;

/// Draws the whole screen.
pub fn draw(frame: &mut Frame<'_>, app: &App) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        frame.render_widget(
            Paragraph::new("terminal too small").style(Style::new().fg(Color::Yellow)),
            area,
        );
        return;
    }
    let composer_lines = app.composer.visual_lines(area.width.saturating_sub(2));
    let mut composer_height = (composer_lines.len().clamp(1, 8) + 2) as u16;
    // The prompt takes what the screen leaves, less a few transcript lines
    // (the call it asks about shows there).
    let room = usize::from(area.height)
        .saturating_sub(usize::from(composer_height) + 1 + 1 + MIN_TRANSCRIPT);
    let approval_lines = if app.transcript.pending.is_some() {
        approval::lines(app, area.width, room)
    } else {
        Vec::new()
    };
    let approval_height = if approval_lines.is_empty() {
        0
    } else {
        u16::try_from(approval_lines.len() + 1).unwrap_or(u16::MAX)
    };
    // A screen too short for both: keys go to the prompt anyway, so the
    // composer makes room for the question and its keys.
    if approval_height > 0 && approval_height + composer_height + 1 > area.height {
        composer_height = 0;
    }
    // The plan, while a step is left: a compact panel over the composer.
    let plan_lines = plan_lines(&app.transcript.plan, area.width);
    let plan_height = if approval_height > 0 || area.height < MIN_HEIGHT + 8 {
        0
    } else {
        u16::try_from(plan_lines.len()).unwrap_or(0)
    };
    let [transcript, plan, approval, composer, status] = Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(plan_height),
        Constraint::Length(approval_height),
        Constraint::Length(composer_height),
        Constraint::Length(1),
    ])
    .areas(area);
    draw_transcript(frame, app, transcript);
    if plan_height > 0 {
        frame.render_widget(Paragraph::new(plan_lines), plan);
    }
    if approval_height > 0 {
        approval::draw(frame, approval, approval_lines);
    }
    if composer_height > 0 {
        draw_composer(frame, app, composer, &composer_lines);
    }
    draw_status(frame, app, status);
    let completions = app.completions();
    if !completions.is_empty() && app.overlay.is_none() {
        let height = (completions.len().min(8) + 2) as u16;
        let popup = Rect {
            x: composer.x,
            y: composer.y.saturating_sub(height),
            width: composer.width.min(60),
            height: height.min(composer.y),
        };
        let lines: Vec<Line<'_>> = completions
            .iter()
            .take(8)
            .map(|(name, help)| {
                Line::from(vec![
                    Span::styled(format!("{name:<12}"), Style::new().fg(Color::Cyan)),
                    Span::styled(help.as_str(), Style::new().add_modifier(Modifier::DIM)),
                ])
            })
            .collect();
        frame.render_widget(Clear, popup);
        frame.render_widget(
            Paragraph::new(lines).block(Block::bordered().title(" commands · Tab ")),
            popup,
        );
    }
    if let Some(overlay) = &app.overlay {
        draw_overlay(frame, overlay, transcript);
    }
}

/// Every entry as lines at `width`.
#[must_use]
pub fn transcript_lines(app: &App, width: u16) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for entry in &app.transcript.entries {
        entry_lines(entry, width, &mut lines);
    }
    lines
}

/// The last `need` lines of the transcript (or all, when shorter): entries
/// are rendered from the newest back only until enough lines exist, so a
/// frame costs what is on screen, not the whole session.
#[must_use]
pub fn last_lines(app: &App, width: u16, need: usize) -> Vec<Line<'static>> {
    let mut blocks: Vec<Vec<Line<'static>>> = Vec::new();
    let mut have = 0;
    for entry in app.transcript.entries.iter().rev() {
        let mut block = Vec::new();
        entry_lines(entry, width, &mut block);
        have += block.len();
        blocks.push(block);
        if have >= need {
            break;
        }
    }
    let mut lines = Vec::with_capacity(have);
    for block in blocks.into_iter().rev() {
        lines.extend(block);
    }
    lines
}

/// One entry as lines at `width`, appended to `lines`.
fn entry_lines(entry: &Entry, width: u16, lines: &mut Vec<Line<'static>>) {
    {
        match entry {
            Entry::User { text, .. } => {
                lines.push(Line::default());
                let mut first = true;
                for line in text.lines() {
                    for piece in wrap_columns(line, width.saturating_sub(2)) {
                        let mark = if first { "› " } else { "  " };
                        first = false;
                        lines.push(Line::from(vec![
                            Span::styled(mark, Style::new().fg(Color::Cyan)),
                            Span::styled(piece, Style::new().add_modifier(Modifier::BOLD)),
                        ]));
                    }
                }
            }
            Entry::Assistant { text } => lines.extend(crate::markdown::render(text, width)),
            Entry::Thinking { text } => {
                let tail: Vec<&str> = text.lines().rev().take(2).collect();
                for line in tail.into_iter().rev() {
                    lines.push(Line::styled(
                        format!("  ✻ {line}"),
                        Style::new().add_modifier(Modifier::DIM | Modifier::ITALIC),
                    ));
                }
            }
            // A subagent's call, folded under the call that runs it: one
            // line, more while it waits for an answer.
            Entry::Tool(tool) if tool.via.is_some() => {
                let mut own = Vec::new();
                tool_lines(tool, width.saturating_sub(4), &mut own);
                if tool.approval.is_none() {
                    own.truncate(1);
                }
                indent(own, lines);
            }
            Entry::Tool(tool) => tool_lines(tool, width, lines),
            Entry::Notice { level, text } => {
                let (mark, color) = match level {
                    NoticeLevel::Info => ("ℹ", Color::DarkGray),
                    NoticeLevel::Warn => ("⚠", Color::Yellow),
                    NoticeLevel::Error => ("✗", Color::Red),
                    NoticeLevel::Security => ("⚿", Color::Magenta),
                };
                let mut first = true;
                for line in text.lines() {
                    for piece in wrap_words(line, width.saturating_sub(4)) {
                        let lead = if first {
                            format!("  {mark} ")
                        } else {
                            "    ".into()
                        };
                        first = false;
                        lines.push(Line::styled(
                            format!("{lead}{piece}"),
                            Style::new().fg(color),
                        ));
                    }
                }
            }
            Entry::Compacted { dropped, summary } => {
                let first = summary.lines().next().unwrap_or_default();
                lines.push(Line::styled(
                    format!("  ⋯ {dropped} earlier turns compacted: {first}"),
                    Style::new().add_modifier(Modifier::DIM),
                ));
            }
            Entry::Hook {
                hook,
                event,
                outcome,
                duration_ms,
                said,
            } => {
                let (mark, style) = match outcome {
                    HookOutcome::Ok => ("✓", Style::new().add_modifier(Modifier::DIM)),
                    HookOutcome::Blocked => ("⛔", Style::new().fg(Color::Yellow)),
                    HookOutcome::Warning | HookOutcome::Failed => {
                        ("⚠", Style::new().fg(Color::Yellow))
                    }
                };
                let mut text = format!("  ⚓ {event} hook {hook} {mark} {duration_ms} ms");
                if let Some(said) = said {
                    text.push_str(&format!(": {said}"));
                }
                for piece in wrap_columns(&text, width.saturating_sub(2)) {
                    lines.push(Line::styled(piece, style));
                }
            }
            Entry::Stopped { stop } => {
                let text = match stop {
                    StopReason::Interrupted => "⏹ interrupted",
                    StopReason::Budget => "⏹ stopped: budget reached",
                    StopReason::Denied => "⏹ stopped: denied",
                    StopReason::Error => "⏹ stopped by an error",
                    StopReason::MaxTurns => "⏹ stopped: too many rounds",
                    StopReason::MaxTokens => "⏹ stopped: the answer reached the output limit",
                    StopReason::EndTurn => "",
                };
                lines.push(Line::styled(
                    format!("  {text}"),
                    Style::new().fg(Color::Yellow),
                ));
            }
        }
    }
}

fn tool_lines(tool: &ToolEntry, width: u16, lines: &mut Vec<Line<'static>>) {
    let (mark, color) = match &tool.result {
        None if tool.approval.is_some() => ("?", Color::Yellow),
        None => ("●", Color::Blue),
        Some(r) if r.denied => ("⊘", Color::Magenta),
        Some(r) if r.ok => ("●", Color::Green),
        Some(_) => ("●", Color::Red),
    };
    let subject: String = tool.call.subject.chars().take(usize::from(width)).collect();
    lines.push(Line::from(vec![
        Span::styled(format!("{mark} "), Style::new().fg(color)),
        Span::styled(
            tool.call.name.clone(),
            Style::new().add_modifier(Modifier::BOLD),
        ),
        Span::raw(" "),
        Span::styled(subject, Style::new().add_modifier(Modifier::DIM)),
    ]));
    match (&tool.result, &tool.preview) {
        (Some(result), Some(preview)) if result.ok => {
            let width = width.saturating_sub(4);
            let mut block = vec![preview.diff.header(&tool.call.subject, width)];
            block.extend(note_line(preview, width));
            block.extend(preview.diff.body(width));
            indent(block, lines);
        }
        (Some(result), _) => {
            let shown: Vec<&str> = result.visible.lines().collect();
            for line in shown.iter().take(4) {
                lines.push(Line::styled(
                    format!("  ⎿ {}", clip(line, width.saturating_sub(4))),
                    Style::new().add_modifier(Modifier::DIM),
                ));
            }
            if shown.len() > 4 {
                lines.push(Line::styled(
                    format!("    … {} more lines", shown.len() - 4),
                    Style::new().add_modifier(Modifier::DIM),
                ));
            }
        }
        (None, _) if tool.call.risk != Risk::ReadOnly || !tool.output.is_empty() => {
            for line in tool
                .output
                .lines()
                .rev()
                .take(3)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
            {
                lines.push(Line::styled(
                    format!("  │ {}", clip(line, width.saturating_sub(4))),
                    Style::new().add_modifier(Modifier::DIM),
                ));
            }
        }
        (None, _) => {}
    }
}

/// The most steps the plan panel shows.
const PLAN_ROWS: usize = 6;

/// The plan panel: a title with the count done, then the steps around the
/// one in progress (at most [`PLAN_ROWS`]); nothing once every step is
/// done, or with no plan.
fn plan_lines(steps: &[cox_protocol::types::PlanStep], width: u16) -> Vec<Line<'static>> {
    use cox_protocol::types::StepStatus;
    let done = steps
        .iter()
        .filter(|s| s.status == StepStatus::Completed)
        .count();
    if steps.is_empty() || done == steps.len() {
        return Vec::new();
    }
    let current = steps
        .iter()
        .position(|s| s.status == StepStatus::InProgress)
        .or_else(|| steps.iter().position(|s| s.status == StepStatus::Pending))
        .unwrap_or(0);
    let first = current
        .saturating_sub(1)
        .min(steps.len().saturating_sub(PLAN_ROWS));
    let mut lines = vec![Line::styled(
        format!("plan · {done}/{} done", steps.len()),
        Style::new().add_modifier(Modifier::DIM),
    )];
    for step in steps.iter().skip(first).take(PLAN_ROWS) {
        let (mark, style) = match step.status {
            StepStatus::Completed => ("✓", Style::new().add_modifier(Modifier::DIM)),
            StepStatus::InProgress => ("▶", Style::new().add_modifier(Modifier::BOLD)),
            StepStatus::Pending => ("·", Style::new()),
        };
        lines.push(Line::styled(
            clip(&format!("  {mark} {}", step.content), width),
            style,
        ));
    }
    lines
}

/// A preview's note, dim and cut to `width`, when it has one.
fn note_line(preview: &Preview, width: u16) -> Option<Line<'static>> {
    let note = preview.note.as_deref()?;
    Some(Line::styled(
        clip(&format!("({note})"), width),
        Style::new().add_modifier(Modifier::DIM | Modifier::ITALIC),
    ))
}

/// `text` cut into pieces of at most `width` display columns (a character
/// wider than the width gets a piece of its own); at least one piece.
pub(crate) fn wrap_columns(text: &str, width: u16) -> Vec<String> {
    use unicode_width::UnicodeWidthChar;
    let width = usize::from(width).max(1);
    let mut pieces = Vec::new();
    let mut piece = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width && !piece.is_empty() {
            pieces.push(std::mem::take(&mut piece));
            used = 0;
        }
        piece.push(c);
        used += w;
    }
    pieces.push(piece);
    pieces
}

/// `text` cut into pieces of at most `width` display columns, at spaces
/// where it can be (a word longer than the width is cut where it must
/// be); the space a piece ends at is dropped.
pub(crate) fn wrap_words(text: &str, width: u16) -> Vec<String> {
    use unicode_width::UnicodeWidthStr;
    let max = usize::from(width).max(1);
    let mut pieces = Vec::new();
    let mut piece = String::new();
    for word in text.split(' ') {
        let gap = usize::from(!piece.is_empty());
        if piece.width() + gap + word.width() <= max {
            if gap == 1 {
                piece.push(' ');
            }
            piece.push_str(word);
            continue;
        }
        if word.width() <= max {
            if !piece.is_empty() {
                pieces.push(std::mem::take(&mut piece));
            }
            piece.push_str(word);
        } else {
            // Too long for any line (a URL): it goes on where the line
            // is, cut by columns, so it reads as one run.
            let joined = if piece.is_empty() {
                word.to_owned()
            } else {
                format!("{piece} {word}")
            };
            let mut cut = wrap_columns(&joined, width);
            piece = cut.pop().unwrap_or_default();
            pieces.extend(cut);
        }
    }
    pieces.push(piece);
    pieces
}

fn indent(block: Vec<Line<'static>>, lines: &mut Vec<Line<'static>>) {
    for mut line in block {
        line.spans.insert(0, Span::raw("    "));
        lines.push(line);
    }
}

/// `text` in at most `width` display columns, cut with `…` when longer.
pub(crate) fn clip(text: &str, width: u16) -> String {
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
    let width = usize::from(width);
    if text.width() <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

fn draw_transcript(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let lines = last_lines(
        app,
        area.width,
        usize::from(area.height).saturating_add(app.scroll),
    );
    let max = lines.len().saturating_sub(usize::from(area.height));
    if lines.len() < usize::from(area.height).saturating_add(app.scroll) {
        // Everything was rendered: this is how far it can scroll.
        app.max_scroll.set(max);
    } else {
        // Only the last lines were: there is at least one more above, so
        // the next scroll up may go on (and finds the real end then).
        app.max_scroll.set(usize::MAX);
    }
    let height = usize::from(area.height);
    let end = lines
        .len()
        .saturating_sub(app.scroll.min(lines.len().saturating_sub(height)));
    let start = end.saturating_sub(height);
    let shown: Vec<Line<'static>> = lines[start..end].to_vec();
    frame.render_widget(Paragraph::new(Text::from(shown)), area);
}

fn draw_composer(frame: &mut Frame<'_>, app: &App, area: Rect, lines: &[String]) {
    let hint = if app.compacting {
        " compacting… Esc to stop "
    } else if app.transcript.busy {
        " Esc to interrupt "
    } else {
        " / commands · Shift+Tab mode "
    };
    let block = Block::bordered()
        .title(hint)
        .border_style(Style::new().fg(Color::DarkGray));
    let inner = block.inner(area);
    let (row, col) = app.composer.visual_cursor(inner.width);
    let skip = usize::from(row).saturating_sub(usize::from(inner.height).saturating_sub(1));
    let text: Vec<Line<'_>> = match app.composer.search() {
        Some((query, found)) => vec![Line::raw(format!(
            "(search) `{query}`: {}",
            found.unwrap_or("no match")
        ))],
        None => lines
            .iter()
            .skip(skip)
            .map(|l| Line::raw(l.as_str()))
            .collect(),
    };
    frame.render_widget(Paragraph::new(text).block(block), area);
    if app.overlay.is_none() && app.answering.is_none() && app.transcript.pending.is_none() {
        let y = inner.y + row.saturating_sub(skip as u16);
        frame.set_cursor_position((inner.x + col.min(inner.width.saturating_sub(1)), y));
    }
}

fn draw_status(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let t = &app.transcript;
    let mode = if app.tier == cox_protocol::provider::Tier::Think {
        "architect"
    } else {
        "editor"
    };
    let tokens = t.usage.input_tokens
        + t.usage.output_tokens
        + t.usage.cache_read_tokens
        + t.usage.cache_write_tokens;
    let mut parts = vec![
        format!("{} ({})", t.model, app.tier.as_str()),
        mode.to_owned(),
        app.permission_mode.to_string(),
    ];
    if !app.facts.sandbox.is_empty() {
        parts.push(app.facts.sandbox.clone());
    }
    parts.push(format!("{} tok", human(tokens)));
    if let Some(usd) = app.cost() {
        parts.push(format!("${usd:.2}"));
    }
    if let Some(pct) = app.context_percent() {
        parts.push(format!("ctx {pct}%"));
    }
    let mut place = t.cwd.rsplit('/').next().unwrap_or_default().to_owned();
    if let Some(branch) = &app.facts.branch {
        place.push_str(&format!(" ⎇ {branch}"));
    }
    if let Some((added, removed)) = app.worktree_stat {
        place.push_str(&format!(" +{added} −{removed}"));
    }
    parts.push(place);
    if let Some(worktree) = &app.facts.worktree {
        parts.push(format!("⧉ {}", worktree.branch()));
    }
    let text = match (&app.flash, &app.custom_status) {
        (Some(flash), _) => flash.clone(),
        (None, Some(custom)) => custom.clone(),
        (None, None) => parts.join(" · "),
    };
    let style = if app.flash.is_some() {
        Style::new().fg(Color::Yellow)
    } else {
        Style::new().add_modifier(Modifier::DIM)
    };
    frame.render_widget(Paragraph::new(clip(&text, area.width)).style(style), area);
}

fn draw_overlay(frame: &mut Frame<'_>, overlay: &Overlay, area: Rect) {
    let (title, lines): (String, Vec<Line<'_>>) = match overlay {
        Overlay::Text { title, lines } => (
            format!(" {title} · Esc "),
            lines.iter().map(|l| Line::raw(l.as_str())).collect(),
        ),
        Overlay::RewindConflict { to_turn, files, .. } => (
            format!(
                " changed since cox wrote them · y overwrite and rewind to before T{to_turn} · n keep "
            ),
            files.iter().map(|f| Line::raw(f.as_str())).collect(),
        ),
        Overlay::RemoveWorktree { path, branch } => (
            " leaving · y remove the worktree · n keep it ".into(),
            vec![
                Line::raw(format!("The worktree {path} has no changes.")),
                Line::raw(format!(
                    "Remove it? Its branch {branch} stays (merging is yours to do)."
                )),
            ],
        ),
        Overlay::ThinkConsent { prompt, terms } => (
            " architect mode · y agree and send · n back to editor ".into(),
            vec![
                Line::raw("Architect mode runs main turns on the think tier:"),
                Line::styled(terms.as_str(), Style::new().add_modifier(Modifier::BOLD)),
                Line::raw(
                    "Agree to it for this architect stretch? (asked again after /mode editor)",
                ),
                Line::raw(""),
                Line::styled(
                    clip(
                        prompt.lines().next().unwrap_or_default(),
                        area.width.saturating_sub(2),
                    ),
                    Style::new().add_modifier(Modifier::DIM),
                ),
            ],
        ),
        Overlay::Sessions { items, selected } => (
            " sessions · Enter to pick up · Esc ".into(),
            items
                .iter()
                .enumerate()
                .map(|(i, (id, label))| {
                    let line = clip(&format!("{id}  {label}"), area.width.saturating_sub(2));
                    if i == *selected {
                        Line::styled(line, Style::new().add_modifier(Modifier::REVERSED))
                    } else {
                        Line::raw(line)
                    }
                })
                .collect(),
        ),
        Overlay::Mcp { servers, selected } => (
            " MCP servers · t trust · l log in · r connect all anew · Esc ".into(),
            servers
                .iter()
                .enumerate()
                .map(|(i, server)| {
                    let line = clip(
                        &format!(
                            "{:<16} {:<11} {}",
                            crate::sanitize::sanitize(&server.name),
                            server.status,
                            crate::sanitize::sanitize(&server.detail)
                        ),
                        area.width.saturating_sub(2),
                    );
                    if i == *selected {
                        Line::styled(line, Style::new().add_modifier(Modifier::REVERSED))
                    } else {
                        Line::raw(line)
                    }
                })
                .collect(),
        ),
        Overlay::Form(form) => (
            " ↑↓ field · type · Space/←→ choose · Enter send · Esc decline ".into(),
            form.lines(area.width),
        ),
        Overlay::Rewind { prompts, selected } => (
            " rewind to before · Enter code+conversation · c code · v conversation · e edit · Esc "
                .into(),
            prompts
                .iter()
                .enumerate()
                .map(|(i, (turn, text, files))| {
                    let first = text.lines().next().unwrap_or_default();
                    let files = match files {
                        1 => "1 file".to_owned(),
                        n => format!("{n} files"),
                    };
                    let line = format!(
                        "T{turn} · {files} · \"{}\"",
                        clip(first, area.width.saturating_sub(24))
                    );
                    if i == *selected {
                        Line::styled(line, Style::new().add_modifier(Modifier::REVERSED))
                    } else {
                        Line::raw(line)
                    }
                })
                .collect(),
        ),
    };
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = Rect {
        x: area.x,
        y: area.y + area.height - height,
        width: area.width,
        height,
    };
    // Keep a list's selection in view.
    let selected = match overlay {
        Overlay::Rewind { selected, .. }
        | Overlay::Sessions { selected, .. }
        | Overlay::Mcp { selected, .. } => *selected,
        Overlay::Form(form) => form.selected_row(),
        Overlay::Text { .. }
        | Overlay::RewindConflict { .. }
        | Overlay::ThinkConsent { .. }
        | Overlay::RemoveWorktree { .. } => 0,
    };
    let rows = usize::from(height.saturating_sub(2)).max(1);
    let skip = selected.saturating_sub(rows - 1);
    let lines: Vec<Line<'_>> = lines.into_iter().skip(skip).collect();
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(title)),
        rect,
    );
}

fn human(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else if n >= 1_000 {
        format!("{:.1}k", n as f64 / 1e3)
    } else {
        n.to_string()
    }
}
