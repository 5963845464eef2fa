//! Whole screens drawn into a `TestBackend` and compared with insta
//! snapshots (`INSTA_UPDATE=always cargo test -p cox-tui` accepts changed
//! ones; review the `.snap` diff before committing): idle, streaming, an
//! approval prompt, a tool result with its diff, an interrupted turn, and a
//! 40-column terminal. Keys are driven through the real `App`.

use std::time::{Duration, Instant};

use cox_protocol::CallId;
use cox_protocol::types::{
    Event, PermissionMode, Risk, StopReason, Submission, ToolCall, ToolResult, Usage,
};
use cox_tui::app::{Action, App, Facts};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

fn app() -> App {
    let mut app = App::new(
        Facts {
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
            models: Vec::new(),
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

fn screen(app: &App, width: u16, height: u16) -> String {
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

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn type_text(app: &mut App, text: &str) -> Vec<Action> {
    let mut actions = Vec::new();
    for c in text.chars() {
        actions.extend(app.on_key(key(KeyCode::Char(c)), Instant::now()));
    }
    actions
}

fn turn(app: &mut App, text: &str) {
    app.on_event(&Event::TurnStarted {
        turn: 1,
        text: text.into(),
    });
}

fn write_call() -> ToolCall {
    ToolCall {
        id: CallId::from("toolu_1"),
        name: "edit".into(),
        input: json!({"path": "src/lib.rs", "old_string": "let x = 1;\n", "new_string": "let x = 2;\n"}),
        risk: Risk::Write,
        subject: "/work/repo/src/lib.rs".into(),
        segments: None,
    }
}

#[test]
fn idle() {
    let mut app = app();
    type_text(&mut app, "fix the failing test");
    insta::assert_snapshot!(screen(&app, 80, 12));
}

#[test]
fn streaming() {
    let mut app = app();
    turn(&mut app, "explain the parser");
    for piece in [
        "The parser ",
        "reads **tokens** ",
        "one at a time.\n\n",
        "```rust\nfn parse() {}\n```\n",
    ] {
        app.on_event(&Event::TextDelta { text: piece.into() });
    }
    insta::assert_snapshot!(screen(&app, 80, 14));
}

#[test]
fn approval_prompt_and_answers() {
    let mut app = app();
    turn(&mut app, "bump x");
    app.on_event(&Event::ToolCallRequested { call: write_call() });
    app.on_event(&Event::ApprovalRequired {
        call_id: "toolu_1".into(),
        reason: "write calls ask in default mode".into(),
    });
    insta::assert_snapshot!(screen(&app, 80, 14));
    // A y typed as the prompt appears was meant for something else.
    assert!(
        app.on_key(key(KeyCode::Char('y')), Instant::now())
            .is_empty()
    );
    let later = Instant::now() + Duration::from_secs(1);
    // y answers, and the prompt goes.
    let actions = app.on_key(key(KeyCode::Char('y')), later);
    assert_eq!(
        actions,
        [Action::Submit(Submission::Approve {
            call_id: "toolu_1".into(),
            decision: cox_protocol::types::Decision::Allow
        })]
    );
    assert!(app.transcript.pending.is_none());
    // Asked again (say, after an edit): n, a reason, Enter.
    app.on_event(&Event::ApprovalRequired {
        call_id: "toolu_1".into(),
        reason: "write calls ask in default mode".into(),
    });
    app.on_key(key(KeyCode::Char('n')), later);
    for c in "not now".chars() {
        app.on_key(key(KeyCode::Char(c)), later);
    }
    let actions = app.on_key(key(KeyCode::Enter), later);
    assert_eq!(
        actions,
        [Action::Submit(Submission::Approve {
            call_id: "toolu_1".into(),
            decision: cox_protocol::types::Decision::Deny {
                reason: Some("not now".into())
            }
        })]
    );
}

#[test]
fn tool_result_with_a_diff() {
    let mut app = app();
    turn(&mut app, "bump x");
    app.on_event(&Event::ToolCallRequested { call: write_call() });
    app.on_event(&Event::ToolCallDone {
        call_id: "toolu_1".into(),
        result: ToolResult::ok("edited src/lib.rs: replaced 1 occurrence(s)"),
    });
    app.on_event(&Event::Usage {
        provider: "anthropic".into(),
        model: "claude-sonnet-5".into(),
        tier: cox_protocol::provider::Tier::Code,
        job: Default::default(),
        effort: None,
        usage: Usage {
            input_tokens: 1200,
            output_tokens: 80,
            cache_read_tokens: 30_000,
            cache_write_tokens: 0,
        },
    });
    insta::assert_snapshot!(screen(&app, 80, 16));
}

#[test]
fn an_interrupted_turn_keeps_its_partial_answer() {
    let mut app = app();
    turn(&mut app, "write a long essay");
    app.on_event(&Event::TextDelta {
        text: "It was a dark and".into(),
    });
    let actions = app.on_key(key(KeyCode::Esc), Instant::now());
    assert_eq!(actions, [Action::Submit(Submission::Interrupt)]);
    app.on_event(&Event::TurnDone {
        stop: StopReason::Interrupted,
    });
    insta::assert_snapshot!(screen(&app, 80, 10));
}

#[test]
fn forty_columns() {
    let mut app = app();
    turn(
        &mut app,
        "a prompt long enough to wrap in a narrow terminal window",
    );
    app.on_event(&Event::TextDelta {
        text: "A reply that also wraps, with `code` and **bold** words in it.".into(),
    });
    insta::assert_snapshot!(screen(&app, 40, 14));
}

#[test]
fn a_tiny_terminal_and_hostile_text_never_break_the_screen() {
    let mut app = app();
    turn(&mut app, "x");
    app.on_event(&Event::TextDelta {
        text: "\u{1b}[2J\u{1b}]0;pwned\u{7}\u{202e}evil\u{9b}31m".into(),
    });
    for (w, h) in [(1, 1), (10, 3), (19, 40), (20, 6), (200, 60)] {
        let drawn = screen(&app, w, h);
        assert!(
            !drawn.contains('\u{1b}') && !drawn.contains('\u{202e}'),
            "{drawn}"
        );
    }
    let mut big = String::new();
    for _ in 0..20_000 {
        big.push_str("pasted line with words\n");
    }
    app.on_paste(&big);
    let drawn = screen(&app, 80, 20);
    assert!(drawn.contains("pasted line"));
}

#[test]
fn keys_shift_tab_slash_commands_and_double_ctrl_c() {
    let mut app = app();
    let actions = app.on_key(
        KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT),
        Instant::now(),
    );
    assert_eq!(
        actions,
        [Action::Submit(Submission::SetMode {
            permission_mode: Some(PermissionMode::AcceptEdits),
            tier: None,
            model: None
        })]
    );
    type_text(&mut app, "/compact the parser");
    let actions = app.on_key(key(KeyCode::Enter), Instant::now());
    assert_eq!(
        actions,
        [Action::Submit(Submission::Compact {
            focus: Some("the parser".into())
        })]
    );
    type_text(&mut app, "/mode architect");
    let actions = app.on_key(key(KeyCode::Enter), Instant::now());
    assert_eq!(
        actions,
        [Action::Submit(Submission::SetMode {
            permission_mode: Some(PermissionMode::Plan),
            tier: Some(cox_protocol::provider::Tier::Think),
            model: None
        })]
    );
    type_text(&mut app, "/model claude-opus-4-5");
    let actions = app.on_key(key(KeyCode::Enter), Instant::now());
    assert_eq!(
        actions,
        [Action::Submit(Submission::SetMode {
            permission_mode: None,
            tier: None,
            model: Some("claude-opus-4-5".into())
        })]
    );
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    let now = Instant::now();
    assert!(app.on_key(ctrl_c, now).is_empty());
    assert_eq!(app.on_key(ctrl_c, now), [Action::Quit]);
}

#[test]
fn prompts_sent_during_a_turn_wait_for_its_end() {
    let mut app = app();
    turn(&mut app, "first");
    type_text(&mut app, "second");
    assert!(app.on_key(key(KeyCode::Enter), Instant::now()).is_empty());
    assert!(app.ready().is_empty(), "not while the turn runs");
    app.on_event(&Event::TurnDone {
        stop: StopReason::EndTurn,
    });
    assert_eq!(
        app.ready(),
        [Action::Submit(Submission::UserTurn {
            text: "second".into()
        })]
    );
}

#[test]
fn a_discarded_attempt_leaves_nothing_on_screen() {
    let mut app = app();
    turn(&mut app, "go");
    app.on_event(&Event::TextDelta { text: "Hel".into() });
    app.on_event(&Event::ToolCallRequested { call: write_call() });
    app.on_event(&Event::Retry {
        attempt: 2,
        of: 4,
        delay_ms: 10,
        reason: "cut".into(),
        discarded: true,
    });
    assert!(matches!(
        app.transcript.entries.as_slice(),
        [
            cox_tui::transcript::Entry::User { .. },
            cox_tui::transcript::Entry::Notice { .. }
        ]
    ));
}

#[test]
fn a_hostile_tool_name_never_reaches_the_terminal() {
    let mut app = app();
    turn(&mut app, "x");
    let mut call = write_call();
    call.name = "x\u{1b}]2;PWNED\u{7}\u{1b}[2J".into();
    app.on_event(&Event::ToolCallRequested { call });
    let plain = app.plain_transcript();
    assert!(
        !plain.contains('\u{1b}') && !plain.contains('\u{7}'),
        "{plain:?}"
    );
    assert!(!screen(&app, 80, 12).contains('\u{1b}'));
}

#[test]
fn a_resumed_session_shows_its_conversation_and_recalls_its_prompts() {
    let past = vec![
        Event::TurnStarted {
            turn: 1,
            text: "the earlier prompt".into(),
        },
        Event::TextDelta {
            text: "The earlier answer.".into(),
        },
        Event::TurnDone {
            stop: StopReason::EndTurn,
        },
    ];
    let mut app = App::new(
        Facts {
            base_mode: PermissionMode::Default,
            past,
            ..Facts::default()
        },
        Vec::new(),
    );
    let drawn = screen(&app, 60, 12);
    assert!(drawn.contains("the earlier prompt") && drawn.contains("The earlier answer."));
    app.on_key(key(KeyCode::Up), Instant::now());
    assert_eq!(app.composer.text(), "the earlier prompt");
}

#[test]
fn resume_lists_recent_sessions_to_pick_and_takes_an_id() {
    let mut app = app();
    type_text(&mut app, "/resume");
    assert!(app.on_key(key(KeyCode::Enter), Instant::now()).is_empty());
    assert!(screen(&app, 80, 12).contains("01JCXT0000000000000000000B"));
    assert_eq!(
        app.on_key(key(KeyCode::Enter), Instant::now()),
        [Action::Resume("01JCXT0000000000000000000B".into())]
    );
    type_text(&mut app, "/resume 01JABC");
    assert_eq!(
        app.on_key(key(KeyCode::Enter), Instant::now()),
        [Action::Resume("01JABC".into())]
    );
}

#[test]
fn long_notices_and_wide_prompts_wrap_by_display_width() {
    let mut app = app();
    turn(&mut app, &"漢字".repeat(30));
    app.on_event(&Event::Notice {
        level: cox_protocol::types::NoticeLevel::Error,
        text: format!("the model call failed: {}", "overloaded ".repeat(12)),
    });
    let drawn = screen(&app, 40, 16);
    let shown = drawn.matches('漢').count() + drawn.matches('字').count();
    assert_eq!(
        shown, 60,
        "every character of the prompt is on screen ({shown}):\n{drawn}"
    );
    // Wrapped by columns: rejoined, every word of the notice is there.
    let joined: String = drawn.split_whitespace().collect();
    assert_eq!(joined.matches("overloaded").count(), 12, "{drawn}");
}

#[test]
fn a_list_keeps_its_selection_in_view() {
    let mut app = App::new(
        Facts {
            base_mode: PermissionMode::Default,
            recent: (0..30)
                .map(|i| (format!("01JSESSION{i:02}"), format!("session {i}")))
                .collect(),
            ..Facts::default()
        },
        Vec::new(),
    );
    type_text(&mut app, "/resume");
    app.on_key(key(KeyCode::Enter), Instant::now());
    for _ in 0..25 {
        app.on_key(key(KeyCode::Down), Instant::now());
    }
    let drawn = screen(&app, 60, 12);
    assert!(drawn.contains("session 25"), "{drawn}");
}
