//! What the screen tests share: an app over a started session, its screen
//! as text, and keys.

#![allow(dead_code)] // each test file uses its own subset

use std::time::Instant;

use cox_protocol::provider::Tier;
use cox_protocol::types::{Event, PermissionMode};
use cox_tui::app::{Action, App, Facts};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

pub fn app() -> App {
    let mut app = App::new(
        Facts {
            sandbox: "sandboxed".into(),
            branch: Some("main".into()),
            window: Some(200_000),
            prices: None,
            permissions: vec!["deny  Read(~/.ssh/**)  (built-in)".into()],
            base_mode: PermissionMode::Default,
            past: Vec::new(),
            recent: vec![(
                "01JCXT0000000000000000000B".into(),
                "2026-11-29 10:00 · repo · 3 turns".into(),
            )],
            models: vec![
                ("claude-sonnet-5".into(), None, 200_000),
                ("claude-opus-4-5".into(), None, 200_000),
            ],
            status_line: None,
            notes: None,
            watcher: None,
            tier: Tier::Code,
            think: Some((
                "claude-opus-4-5".into(),
                Some(cox_protocol::catalog::Prices {
                    input: 5.0,
                    output: 25.0,
                    cache_read: 0.5,
                    cache_write: 6.25,
                    web_search: 0.0,
                }),
            )),
            worktree: None,
            shells: None,
            cwd: None,
            mcp: None,
            first_prompt: None,
        },
        Vec::new(),
    );
    app.on_event(&Event::SessionStarted {
        session_id: "01JCXT0000000000000000000A".parse().unwrap(),
        cwd: "/work/repo".into(),
        model: "claude-sonnet-5".into(),
        provider: "anthropic".into(),
        tools: vec!["read".into()],
        permission_mode: PermissionMode::Default,
        at: "2026-11-30T00:00:00.000Z".into(),
        resumed: false,
        format: 1,
    });
    app
}

pub fn screen(app: &App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| cox_tui::view::draw(frame, app))
        .unwrap();
    let buffer = terminal.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..buffer.area.height {
        let mut line = String::new();
        for x in 0..buffer.area.width {
            line.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn type_text(app: &mut App, text: &str) -> Vec<Action> {
    let mut actions = Vec::new();
    for c in text.chars() {
        actions.extend(app.on_key(key(KeyCode::Char(c)), Instant::now()));
    }
    actions
}
