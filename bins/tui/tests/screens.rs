//! Whole screens drawn into a `TestBackend` and compared with insta
//! snapshots (`INSTA_UPDATE=always cargo test -p cox-tui` accepts changed
//! ones; review the `.snap` diff before committing): idle, streaming, an
//! approval prompt (an edit's, a patch's), a tool result with its diff,
//! an interrupted turn, and a 40-column terminal. Keys are driven through
//! the real `App`.

mod common;

use std::time::{Duration, Instant};

use cox_protocol::CallId;
use cox_protocol::types::{
    Event, PermissionMode, Risk, StopReason, Submission, ToolCall, ToolResult, Usage,
};
use cox_tui::app::{Action, App, Facts, Overlay};
use cox_tui::preview::Read;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use common::{app, key, screen, type_text};

fn turn(app: &mut App, text: &str) {
    app.on_event(&Event::TurnStarted {
        turn: 1,
        text: text.into(),
    });
}

/// src/lib.rs as the edit finds it: `let x = 1;` on line 12.
fn lib_rs() -> Read {
    let mut text: String = (1..=11).map(|i| format!("// line {i}\n")).collect();
    text.push_str("let x = 1;\n// line 13\n// line 14\n// line 15\n");
    Read::Text(text)
}

fn write_call() -> ToolCall {
    ToolCall {
        id: CallId::from("toolu_1"),
        name: "edit".into(),
        input: json!({"path": "src/lib.rs", "old_string": "let x = 1;\n", "new_string": "let x = 2;\n"}),
        risk: Risk::Write,
        subject: "/work/repo/src/lib.rs".into(),
        segments: None,
        writes: Vec::new(),
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
    app.on_file(&"toolu_1".into(), &lib_rs());
    app.on_event(&Event::ApprovalRequired {
        call_id: "toolu_1".into(),
        reason: "write calls ask in default mode".into(),
    });
    // The diff shows before any key, at the file's own line numbers.
    insta::assert_snapshot!(screen(&app, 80, 18));
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
    app.on_file(&"toolu_1".into(), &lib_rs());
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
            web_searches: 0,
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
            text: "second".into(),
            images: Vec::new(),
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
            sandbox: "sandboxed".into(),
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
            sandbox: "sandboxed".into(),
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

fn approve(call: ToolCall, read: Option<Read>) -> App {
    let mut app = app();
    turn(&mut app, "go");
    let id = call.id.clone();
    app.on_event(&Event::ToolCallRequested { call });
    if let Some(read) = read {
        app.on_file(&id, &read);
    }
    app.on_event(&Event::ApprovalRequired {
        call_id: id,
        reason: "write calls ask in default mode".into(),
    });
    app
}

fn new_file(lines: usize) -> ToolCall {
    let content: String = (1..=lines).map(|i| format!("row {i}\n")).collect();
    ToolCall {
        id: CallId::from("toolu_2"),
        name: "write".into(),
        input: json!({"path": "notes.txt", "content": content}),
        risk: Risk::Write,
        subject: "/work/repo/notes.txt".into(),
        segments: None,
        writes: Vec::new(),
    }
}

#[test]
fn a_write_s_approval_shows_the_new_content_first() {
    let app = approve(new_file(3), Some(Read::Missing));
    let drawn = screen(&app, 80, 20);
    for needle in [
        "Allow write notes.txt?",
        "notes.txt (new, 3 lines)",
        "1 +row 1",
        "3 +row 3",
        "y allow once",
    ] {
        assert!(
            drawn.contains(needle),
            "`{needle}` is not on screen:\n{drawn}"
        );
    }
    // Over an existing file: what changes in it.
    let app = approve(new_file(3), Some(Read::Text("row 1\nold\nrow 3\n".into())));
    let drawn = screen(&app, 80, 20);
    assert!(
        drawn.contains("+1 \u{2212}1") && drawn.contains("2 -old") && drawn.contains("2 +row 2"),
        "{drawn}"
    );
}

#[test]
fn a_long_preview_scrolls_and_the_keys_still_answer() {
    let mut app = approve(new_file(100), Some(Read::Missing));
    let later = Instant::now() + Duration::from_secs(1);
    let drawn = screen(&app, 80, 24);
    assert!(drawn.contains("  1 +row 1"), "{drawn}");
    assert!(!drawn.contains("+row 100"), "{drawn}");
    let shown = drawn
        .lines()
        .find(|l| l.contains("of 100"))
        .expect("a line says which lines show");
    assert!(shown.contains("lines 1–"), "{shown}");
    // PgDn goes a page on, Up one line back, End to the end, Home back.
    app.on_key(key(KeyCode::PageDown), later);
    let page = app.preview_scroll;
    assert!(page > 1, "a page is more than a line: {page}");
    let drawn = screen(&app, 80, 24);
    assert!(drawn.contains(&format!("+row {}", page + 1)), "{drawn}");
    assert!(!drawn.contains("  1 +row 1"), "{drawn}");
    app.on_key(key(KeyCode::Up), later);
    assert_eq!(app.preview_scroll, page - 1);
    app.on_key(key(KeyCode::End), later);
    let drawn = screen(&app, 80, 24);
    assert!(drawn.contains("100 +row 100"), "{drawn}");
    assert!(drawn.contains("of 100"), "{drawn}");
    // Scrolling past the end stays at the end.
    app.on_key(key(KeyCode::PageDown), later);
    assert_eq!(screen(&app, 80, 24), drawn);
    app.on_key(key(KeyCode::Home), later);
    assert_eq!(app.preview_scroll, 0);
    // The wheel scrolls it too, and y still answers.
    app.on_mouse(crossterm::event::MouseEvent {
        kind: crossterm::event::MouseEventKind::ScrollDown,
        column: 0,
        row: 0,
        modifiers: KeyModifiers::NONE,
    });
    assert_eq!(app.preview_scroll, 3);
    assert_eq!(
        app.on_key(key(KeyCode::Char('y')), later),
        [Action::Submit(Submission::Approve {
            call_id: "toolu_2".into(),
            decision: cox_protocol::types::Decision::Allow
        })]
    );
    // While a reason is typed, PgUp/PgDn scroll and the letters are the reason.
    let mut app = approve(new_file(100), Some(Read::Missing));
    screen(&app, 80, 24);
    app.on_key(key(KeyCode::Char('n')), later);
    app.on_key(key(KeyCode::PageDown), later);
    assert!(app.preview_scroll > 0);
    for c in "no".chars() {
        app.on_key(key(KeyCode::Char(c)), later);
    }
    assert!(screen(&app, 80, 24).contains("> no"));
    assert_eq!(
        app.on_key(key(KeyCode::Enter), later),
        [Action::Submit(Submission::Approve {
            call_id: "toolu_2".into(),
            decision: cox_protocol::types::Decision::Deny {
                reason: Some("no".into())
            }
        })]
    );
}

#[test]
fn a_small_screen_keeps_the_question_and_the_keys() {
    let app = approve(new_file(100), Some(Read::Missing));
    for (w, h) in [(20, 6), (40, 10), (80, 12)] {
        let drawn = screen(&app, w, h);
        assert!(drawn.contains("Allow"), "{w}×{h}:\n{drawn}");
        assert!(drawn.contains("y "), "{w}×{h}:\n{drawn}");
    }
    let drawn = screen(&app, 40, 16);
    assert!(
        drawn.contains("y once · s session · n deny · e edit"),
        "{drawn}"
    );
}

#[test]
fn an_edit_whose_file_cannot_be_read_says_its_numbers_are_relative() {
    let app = approve(write_call(), None);
    let drawn = screen(&app, 100, 20);
    assert!(
        drawn.contains("(line numbers count from old_string: the file was not read)"),
        "{drawn}"
    );
    assert!(drawn.contains("1 -let x = 1;"), "{drawn}");
    let app = approve(write_call(), Some(Read::Failed("Permission denied".into())));
    let drawn = screen(&app, 100, 20);
    assert!(
        drawn.contains("the file could not be read (Permission denied)"),
        "{drawn}"
    );
}

#[test]
fn after_an_edit_ran_its_diff_keeps_the_file_s_line_numbers() {
    let mut app = approve(write_call(), Some(lib_rs()));
    let later = Instant::now() + Duration::from_secs(1);
    app.on_key(key(KeyCode::Char('y')), later);
    app.on_event(&Event::ToolCallDone {
        call_id: "toolu_1".into(),
        result: ToolResult::ok("edited src/lib.rs: replaced 1 occurrence(s)"),
    });
    let drawn = screen(&app, 80, 16);
    assert!(
        drawn.contains("12 -let x = 1;") && drawn.contains("12 +let x = 2;"),
        "{drawn}"
    );
    assert!(drawn.contains("10  // line 10"), "{drawn}");
}

#[test]
fn a_continued_session_reusing_call_0_keeps_both_calls() {
    let bash = |command: &str| ToolCall {
        id: CallId::from("call_0"),
        name: "bash".into(),
        input: json!({ "command": command }),
        risk: Risk::Exec,
        subject: command.into(),
        segments: None,
        writes: Vec::new(),
    };
    let past = vec![
        Event::TurnStarted {
            turn: 1,
            text: "first".into(),
        },
        Event::ToolCallRequested {
            call: bash("echo earlier"),
        },
        Event::ToolCallDone {
            call_id: "call_0".into(),
            result: ToolResult::ok("earlier"),
        },
        Event::TurnDone {
            stop: StopReason::EndTurn,
        },
    ];
    let mut app = App::new(
        Facts {
            sandbox: "sandboxed".into(),
            past,
            ..Facts::default()
        },
        Vec::new(),
    );
    app.on_event(&Event::TurnStarted {
        turn: 2,
        text: "second".into(),
    });
    app.on_event(&Event::ToolCallRequested {
        call: bash("echo later"),
    });
    app.on_event(&Event::ToolCallDone {
        call_id: "call_0".into(),
        result: ToolResult::ok("later"),
    });
    let drawn = screen(&app, 60, 16);
    for needle in [
        "bash echo earlier",
        "⎿ earlier",
        "bash echo later",
        "⎿ later",
    ] {
        assert!(drawn.contains(needle), "`{needle}` is gone:\n{drawn}");
    }
}

#[test]
fn model_refuses_a_model_nobody_knows_and_names_the_known_ones() {
    let mut app = app();
    type_text(&mut app, "/model claude-sonet-5");
    assert!(app.on_key(key(KeyCode::Enter), Instant::now()).is_empty());
    let Some(Overlay::Text { title, lines }) = &app.overlay else {
        panic!("no overlay: {:?}", app.overlay)
    };
    assert_eq!(title, "model not switched");
    assert_eq!(
        lines[0],
        "unknown model claude-sonet-5: neither in the catalog nor in your config; \
         did you mean claude-sonnet-5?"
    );
    assert!(lines.contains(&"  claude-opus-4-5".to_owned()), "{lines:?}");
    assert!(screen(&app, 100, 16).contains("claude-opus-4-5"));
    assert!(app.flash.as_deref().unwrap().starts_with("not switched: "));
    app.on_key(key(KeyCode::Esc), Instant::now());
    // The case of a known one does not matter.
    type_text(&mut app, "/model Claude-Opus-4-5");
    assert_eq!(
        app.on_key(key(KeyCode::Enter), Instant::now()),
        [Action::Submit(Submission::SetMode {
            permission_mode: None,
            tier: None,
            model: Some("claude-opus-4-5".into())
        })]
    );
}

#[test]
fn a_long_write_s_approval_scrolled_a_page() {
    let mut app = approve(new_file(60), Some(Read::Missing));
    screen(&app, 80, 24);
    app.on_key(key(KeyCode::PageDown), Instant::now());
    insta::assert_snapshot!(screen(&app, 80, 24));
}

/// An apply_patch call touching four files, one of each kind.
fn patch_call() -> ToolCall {
    let patch = "*** Begin Patch\n\
                 *** Update File: src/lib.rs\n\
                 @@ fn parse()\n let x = 1;\n-let y = 2;\n+let y = 3;\n\
                 @@ fn main()\n-    run();\n+    run(\u{1b}[2Jfast);\n\
                 *** Add File: docs/notes.md\n+# Notes\n+first\n\
                 *** Delete File: old.txt\n\
                 *** Update File: src/a.rs\n*** Move to: src/b.rs\n\
                 *** End Patch";
    ToolCall {
        id: CallId::from("toolu_3"),
        name: "apply_patch".into(),
        input: json!({ "patch": patch }),
        risk: Risk::Write,
        subject: "/work/repo/src/lib.rs".into(),
        segments: None,
        writes: Vec::new(),
    }
}

#[test]
fn a_patch_s_approval_shows_each_file_and_its_hunks() {
    let mut app = approve(patch_call(), None);
    let drawn = screen(&app, 80, 26);
    assert!(!drawn.contains('\u{1b}'), "{drawn}");
    insta::assert_snapshot!(drawn);
    // A short screen scrolls it like an edit's diff.
    let short = screen(&app, 80, 14);
    assert!(short.contains("lines 1–"), "{short}");
    app.on_key(key(KeyCode::PageDown), Instant::now());
    assert!(app.preview_scroll > 0);
    // Once it ran, the transcript keeps the files and their hunks.
    let later = Instant::now() + Duration::from_secs(1);
    app.on_key(key(KeyCode::Char('y')), later);
    app.on_event(&Event::ToolCallDone {
        call_id: "toolu_3".into(),
        result: ToolResult::ok("patched 4 files"),
    });
    let drawn = screen(&app, 80, 24);
    for needle in [
        "● apply_patch src/lib.rs",
        "4 files +4 \u{2212}2",
        "M src/lib.rs",
        "+let y = 3;",
        "R src/a.rs -> src/b.rs",
    ] {
        assert!(
            drawn.contains(needle),
            "`{needle}` is not on screen:\n{drawn}"
        );
    }
}

#[test]
fn esc_esc_lists_turns_with_their_files_and_sends_the_rewind_chosen() {
    use cox_protocol::checkpoint::{CheckpointFile, FileChange, RewindWhat};
    let mut app = app();
    turn(&mut app, "add the cache column");
    app.on_event(&Event::Checkpoint {
        turn: 1,
        call_id: CallId::from("toolu_1"),
        files: vec![
            CheckpointFile {
                path: "/work/repo/a.rs".into(),
                change: FileChange::Pre,
            },
            CheckpointFile {
                path: "/work/repo/b.rs".into(),
                change: FileChange::Created,
            },
        ],
    });
    app.on_event(&Event::TurnDone {
        stop: StopReason::EndTurn,
    });
    let now = Instant::now();
    app.on_key(key(KeyCode::Esc), now);
    app.on_key(key(KeyCode::Esc), now + Duration::from_millis(100));
    let drawn = screen(&app, 100, 12);
    assert!(
        drawn.contains("T1 · 2 files · \"add the cache column\""),
        "{drawn}"
    );
    let actions = app.on_key(key(KeyCode::Char('c')), now);
    assert_eq!(
        actions,
        [Action::Submit(Submission::Rewind {
            to_turn: 1,
            what: RewindWhat::Code,
            force: false
        })]
    );
    // Files changed outside cox: asked, and `y` forces it.
    app.on_event(&Event::RewindConflict {
        to_turn: 1,
        files: vec!["/work/repo/a.rs".into()],
    });
    assert!(matches!(app.overlay, Some(Overlay::RewindConflict { .. })));
    assert!(screen(&app, 100, 12).contains("/work/repo/a.rs"));
    let actions = app.on_key(key(KeyCode::Char('y')), now);
    assert_eq!(
        actions,
        [Action::Submit(Submission::Rewind {
            to_turn: 1,
            what: RewindWhat::Code,
            force: true
        })]
    );
    // A conversation rewind puts the prompt back and drops the turn from
    // the list.
    app.on_event(&Event::Rewound {
        to_turn: 1,
        turn: 2,
        what: RewindWhat::Code,
        files: Vec::new(),
        unkept: Vec::new(),
    });
    let actions = type_text(&mut app, "/undo");
    assert!(actions.is_empty());
    app.on_key(key(KeyCode::Enter), now);
    let actions = app.on_key(key(KeyCode::Char('v')), now);
    assert_eq!(
        actions,
        [Action::Submit(Submission::Rewind {
            to_turn: 1,
            what: RewindWhat::Conversation,
            force: false
        })]
    );
    assert_eq!(app.composer.text(), "add the cache column");
    app.on_event(&Event::Rewound {
        to_turn: 1,
        turn: 3,
        what: RewindWhat::Conversation,
        files: Vec::new(),
        unkept: Vec::new(),
    });
    assert!(app.transcript.prompts().is_empty());
}

#[test]
fn the_servers_prompts_complete_and_go_to_the_session_as_typed() {
    let mut app = app();
    app.on_event(&Event::Commands {
        commands: vec![
            cox_protocol::types::SlashCommand {
                name: "mcp__every__args-prompt".into(),
                description: "A prompt with two arguments".into(),
                hint: "<city> [state]".into(),
            },
            cox_protocol::types::SlashCommand {
                name: "mcp__every__simple-prompt".into(),
                description: "A prompt with no arguments".into(),
                hint: String::new(),
            },
        ],
    });
    type_text(&mut app, "/mcp__every__a");
    assert_eq!(
        app.completions(),
        [(
            "/mcp__every__args-prompt".to_owned(),
            "A prompt with two arguments".to_owned()
        )]
    );
    assert!(screen(&app, 80, 16).contains("/mcp__every__args-prompt"));
    app.on_key(key(KeyCode::Tab), Instant::now());
    assert_eq!(app.composer.text(), "/mcp__every__args-prompt ");
    type_text(&mut app, "Paris");
    assert_eq!(
        app.on_key(key(KeyCode::Enter), Instant::now()),
        [Action::Submit(Submission::UserTurn {
            text: "/mcp__every__args-prompt Paris".into(),
            images: Vec::new(),
        })]
    );
    // One the session does not offer is refused here, with the near ones.
    type_text(&mut app, "/mcp__every__nope");
    assert!(app.on_key(key(KeyCode::Enter), Instant::now()).is_empty());
    assert_eq!(
        app.flash.as_deref(),
        Some(
            "/mcp__every__nope: no such prompt; try /mcp__every__args-prompt, \
             /mcp__every__simple-prompt"
        )
    );
    // /help lists them with their arguments.
    app.composer.set_text("");
    type_text(&mut app, "/help");
    app.on_key(key(KeyCode::Enter), Instant::now());
    let Some(Overlay::Text { lines, .. }) = &app.overlay else {
        panic!("no help: {:?}", app.overlay)
    };
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("/mcp__every__args-prompt <city> [state] A prompt")),
        "{lines:?}"
    );
}

#[test]
fn a_bang_runs_the_persons_command_and_its_card_shows_the_output() {
    let mut app = app();
    type_text(&mut app, "! ls -la src");
    assert_eq!(
        app.on_key(key(KeyCode::Enter), Instant::now()),
        [Action::Submit(Submission::Shell {
            command: "ls -la src".into()
        })]
    );
    type_text(&mut app, "!  ");
    assert!(app.on_key(key(KeyCode::Enter), Instant::now()).is_empty());
    app.on_event(&Event::UserShell {
        command: "ls -la src".into(),
        result: ToolResult::ok("main.rs\nlib.rs\n"),
    });
    let drawn = screen(&app, 60, 12);
    assert!(drawn.contains("ls -la src"), "{drawn}");
    assert!(drawn.contains("main.rs"), "{drawn}");
}

#[test]
fn a_servers_form_is_drawn_filled_in_and_sent_to_the_session() {
    let mut app = app();
    turn(&mut app, "fill it");
    app.on_event(&Event::Elicitation {
        id: "elicit-1".into(),
        server: "every".into(),
        message: "Please provide inputs for the following fields:".into(),
        schema: serde_json::json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "description": "Your full, legal name"},
                "check": {"type": "boolean", "title": "Agree"}
            },
            "required": ["name"]
        }),
    });
    let drawn = screen(&app, 80, 20);
    assert!(drawn.contains("MCP server 'every' asks:"), "{drawn}");
    assert!(drawn.contains("Name*:"), "{drawn}");
    assert!(drawn.contains("Your full, legal name"), "{drawn}");
    assert!(drawn.contains("Esc decline"), "{drawn}");
    // Keys fill the form, not the composer.
    type_text(&mut app, "Ada");
    assert_eq!(app.composer.text(), "");
    app.on_key(key(KeyCode::Down), Instant::now());
    app.on_key(key(KeyCode::Char(' ')), Instant::now());
    let sent = app.on_key(key(KeyCode::Enter), Instant::now());
    let mut content = serde_json::Map::new();
    content.insert("name".into(), "Ada".into());
    content.insert("check".into(), true.into());
    assert_eq!(
        sent,
        [Action::Submit(Submission::Elicited {
            id: "elicit-1".into(),
            answer: cox_protocol::types::ElicitAnswer::Accept { content },
        })]
    );
    assert!(app.overlay.is_none());
    assert!(!screen(&app, 80, 20).contains("Esc decline"));
    // One cancelled as its call ends closes by itself.
    app.on_event(&Event::Elicitation {
        id: "elicit-2".into(),
        server: "every".into(),
        message: "Again?".into(),
        schema: serde_json::json!({"type": "object", "properties": {}}),
    });
    app.on_event(&Event::Elicited {
        id: "elicit-2".into(),
        action: "cancel".into(),
    });
    assert!(app.overlay.is_none());
    let drawn = screen(&app, 80, 20);
    assert!(drawn.contains("the request was cancelled"), "{drawn}");
}

/// Scrollback from the first frame of a new session: a long answer's start
/// and the prompt before it come back with PgUp (and Home), and PgDn and
/// End go back down, the wheel likewise.
#[test]
fn a_new_sessions_long_answer_scrolls_back_from_the_first_frame() {
    let mut app = app();
    // The first frame: empty.
    let _ = screen(&app, 80, 20);
    turn(&mut app, "tell me everything");
    let answer: String = (1..=120)
        .map(|i| format!("line {i} of the answer\n\n"))
        .collect();
    app.on_event(&Event::TextDelta { text: answer });
    let bottom = screen(&app, 80, 20);
    assert!(bottom.contains("line 120 of the answer"), "{bottom}");
    assert!(!bottom.contains("tell me everything"), "{bottom}");
    for _ in 0..40 {
        app.on_key(key(KeyCode::PageUp), Instant::now());
        let _ = screen(&app, 80, 20);
    }
    let top = screen(&app, 80, 20);
    assert!(top.contains("tell me everything"), "{top}");
    assert!(top.contains("line 1 of the answer"), "{top}");
    // Back down a page at once, though PgUp was pressed past the top.
    app.on_key(key(KeyCode::PageDown), Instant::now());
    let lower = screen(&app, 80, 20);
    assert!(!lower.contains("tell me everything"), "{lower}");
    app.on_key(key(KeyCode::End), Instant::now());
    assert!(screen(&app, 80, 20).contains("line 120 of the answer"));
    app.on_key(key(KeyCode::Home), Instant::now());
    let _ = screen(&app, 80, 20);
    assert!(screen(&app, 80, 20).contains("tell me everything"));
    app.on_key(key(KeyCode::End), Instant::now());
    app.on_mouse(crossterm::event::MouseEvent {
        kind: crossterm::event::MouseEventKind::ScrollUp,
        column: 0,
        row: 0,
        modifiers: crossterm::event::KeyModifiers::NONE,
    });
    let up = screen(&app, 80, 20);
    assert!(
        !up.contains("line 120 of the answer"),
        "the wheel scrolls: {up}"
    );
}

#[test]
fn notices_wrap_at_words() {
    let mut app = app();
    app.on_event(&Event::Notice {
        level: cox_protocol::types::NoticeLevel::Warn,
        text: "the configured server misbehaved repeatedly: supercalifragilistic \
               expialidocious answers arrived late and incomplete"
            .into(),
    });
    let drawn = screen(&app, 40, 14);
    for word in [
        "supercalifragilistic",
        "expialidocious",
        "repeatedly:",
        "incomplete",
    ] {
        assert!(drawn.contains(word), "{word} was cut: {drawn}");
    }
    // A word longer than the line is still cut where it must be.
    let long = "x".repeat(90);
    app.on_event(&Event::Notice {
        level: cox_protocol::types::NoticeLevel::Info,
        text: format!("token {long} end"),
    });
    let drawn = screen(&app, 40, 20);
    assert!(drawn.contains("end"), "{drawn}");
}

#[test]
fn paths_in_the_workspace_read_relative_to_it() {
    let mut app = app();
    app.on_event(&Event::SessionStarted {
        session_id: cox_protocol::SessionId::generate(),
        cwd: "/work/repo".into(),
        model: "m".into(),
        provider: "p".into(),
        tools: Vec::new(),
        permission_mode: PermissionMode::Default,
        at: String::new(),
        resumed: false,
        format: 1,
    });
    turn(&mut app, "write two files");
    for (id, path) in [("c1", "/work/repo/src/a.rs"), ("c2", "/etc/hosts")] {
        app.on_event(&Event::ToolCallRequested {
            call: ToolCall {
                id: id.into(),
                name: "read".into(),
                input: serde_json::json!({ "file_path": path }),
                risk: cox_protocol::types::Risk::ReadOnly,
                subject: path.into(),
                segments: None,
                writes: Vec::new(),
            },
        });
    }
    let drawn = screen(&app, 80, 20);
    assert!(drawn.contains("read src/a.rs"), "{drawn}");
    assert!(!drawn.contains("/work/repo/src/a.rs"), "{drawn}");
    assert!(
        drawn.contains("read /etc/hosts"),
        "outside stays whole: {drawn}"
    );
}
