use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::{Composer, ComposerAction};

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn with(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, modifiers)
}

fn ctrl(c: char) -> KeyEvent {
    with(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn press(composer: &mut Composer, code: KeyCode) -> ComposerAction {
    composer.handle(key(code))
}

fn typed(text: &str) -> Composer {
    let mut composer = Composer::new();
    type_in(&mut composer, text);
    composer
}

fn type_in(composer: &mut Composer, text: &str) {
    for c in text.chars() {
        assert_eq!(
            composer.handle(key(KeyCode::Char(c))),
            ComposerAction::Changed,
            "typing {c:?}"
        );
    }
}

fn two_lines() -> Composer {
    let mut composer = Composer::new();
    composer.set_text("first line\nsecond");
    composer
}

#[test]
fn typing_inserts_chars_at_the_cursor() {
    let mut composer = typed("helo");
    press(&mut composer, KeyCode::Left);
    type_in(&mut composer, "l");
    assert_eq!(composer.text(), "hello");
    assert_eq!(composer.cursor(), (0, 4));
    assert!(!composer.is_empty());
}

#[test]
fn shifted_chars_insert_as_they_come() {
    let mut composer = Composer::new();
    assert_eq!(
        composer.handle(with(KeyCode::Char('H'), KeyModifiers::SHIFT)),
        ComposerAction::Changed
    );
    assert_eq!(
        composer.handle(with(KeyCode::Char('?'), KeyModifiers::SHIFT)),
        ComposerAction::Changed
    );
    assert_eq!(composer.text(), "H?");
}

#[test]
fn alt_letters_are_chords_but_altgr_symbols_are_text() {
    let mut composer = Composer::new();
    assert_eq!(
        composer.handle(with(KeyCode::Char('x'), KeyModifiers::ALT)),
        ComposerAction::None
    );
    assert_eq!(composer.handle(ctrl('z')), ComposerAction::None);
    let ctrl_alt = KeyModifiers::CONTROL | KeyModifiers::ALT;
    assert_eq!(
        composer.handle(with(KeyCode::Char('q'), ctrl_alt)),
        ComposerAction::None
    );
    assert_eq!(
        composer.handle(with(KeyCode::Char('@'), ctrl_alt)),
        ComposerAction::Changed
    );
    assert_eq!(composer.text(), "@");
}

#[test]
fn release_events_are_ignored() {
    let mut composer = Composer::new();
    let release = KeyEvent::new_with_kind(
        KeyCode::Char('a'),
        KeyModifiers::NONE,
        KeyEventKind::Release,
    );
    assert_eq!(composer.handle(release), ComposerAction::None);
    let repeat =
        KeyEvent::new_with_kind(KeyCode::Char('a'), KeyModifiers::NONE, KeyEventKind::Repeat);
    assert_eq!(composer.handle(repeat), ComposerAction::Changed);
    assert_eq!(composer.text(), "a");
}

#[test]
fn enter_submits_clears_and_records_history() {
    let mut composer = Composer::new();
    composer.set_text("fix the bug\n  in main.rs ");
    assert_eq!(
        press(&mut composer, KeyCode::Enter),
        ComposerAction::Submit("fix the bug\n  in main.rs ".to_owned())
    );
    assert!(composer.is_empty());
    assert_eq!(composer.cursor(), (0, 0));
    assert_eq!(composer.history(), ["fix the bug\n  in main.rs "]);
}

#[test]
fn enter_on_blank_text_does_nothing() {
    let mut composer = Composer::new();
    assert_eq!(press(&mut composer, KeyCode::Enter), ComposerAction::None);
    composer.set_text("  \n\t ");
    assert_eq!(press(&mut composer, KeyCode::Enter), ComposerAction::None);
    assert_eq!(composer.text(), "  \n\t ");
    assert!(composer.history().is_empty());
}

#[test]
fn a_repeated_submission_is_recorded_once() {
    let mut composer = Composer::with_history(vec!["ls".to_owned()]);
    type_in(&mut composer, "ls");
    press(&mut composer, KeyCode::Enter);
    type_in(&mut composer, "pwd");
    press(&mut composer, KeyCode::Enter);
    type_in(&mut composer, "ls");
    press(&mut composer, KeyCode::Enter);
    assert_eq!(composer.history(), ["ls", "pwd", "ls"]);
}

#[test]
fn shift_enter_alt_enter_and_ctrl_j_insert_a_line_break() {
    for newline in [
        with(KeyCode::Enter, KeyModifiers::SHIFT),
        with(KeyCode::Enter, KeyModifiers::ALT),
        ctrl('j'),
    ] {
        let mut composer = typed("ab");
        press(&mut composer, KeyCode::Left);
        assert_eq!(
            composer.handle(newline),
            ComposerAction::Changed,
            "{newline:?}"
        );
        assert_eq!(composer.lines(), ["a", "b"], "{newline:?}");
        assert_eq!(composer.cursor(), (1, 0), "{newline:?}");
        assert!(composer.history().is_empty());
    }
}

#[test]
fn backspace_erases_before_the_cursor_and_joins_lines() {
    let mut composer = two_lines();
    press(&mut composer, KeyCode::Home);
    assert_eq!(
        press(&mut composer, KeyCode::Backspace),
        ComposerAction::Changed
    );
    assert_eq!(composer.lines(), ["first linesecond"]);
    assert_eq!(composer.cursor(), (0, 10));
    assert_eq!(
        press(&mut composer, KeyCode::Backspace),
        ComposerAction::Changed
    );
    assert_eq!(composer.text(), "first linsecond");
    assert_eq!(composer.handle(ctrl('h')), ComposerAction::Changed);
    assert_eq!(composer.text(), "first lisecond");
    press(&mut composer, KeyCode::Home);
    assert_eq!(
        press(&mut composer, KeyCode::Backspace),
        ComposerAction::None
    );
}

#[test]
fn delete_erases_under_the_cursor_and_joins_the_next_line() {
    let mut composer = two_lines();
    composer.handle(key(KeyCode::Up));
    press(&mut composer, KeyCode::Home);
    assert_eq!(
        press(&mut composer, KeyCode::Delete),
        ComposerAction::Changed
    );
    assert_eq!(composer.lines(), ["irst line", "second"]);
    press(&mut composer, KeyCode::End);
    assert_eq!(
        press(&mut composer, KeyCode::Delete),
        ComposerAction::Changed
    );
    assert_eq!(composer.lines(), ["irst linesecond"]);
    assert_eq!(composer.cursor(), (0, 9));
    press(&mut composer, KeyCode::End);
    assert_eq!(press(&mut composer, KeyCode::Delete), ComposerAction::None);
}

#[test]
fn left_and_right_move_by_char_and_cross_line_breaks() {
    let mut composer = two_lines();
    press(&mut composer, KeyCode::Home);
    assert_eq!(press(&mut composer, KeyCode::Left), ComposerAction::Changed);
    assert_eq!(composer.cursor(), (0, 10));
    assert_eq!(
        press(&mut composer, KeyCode::Right),
        ComposerAction::Changed
    );
    assert_eq!(composer.cursor(), (1, 0));
    press(&mut composer, KeyCode::End);
    assert_eq!(press(&mut composer, KeyCode::Right), ComposerAction::None);
    composer.handle(key(KeyCode::Up));
    press(&mut composer, KeyCode::Home);
    assert_eq!(press(&mut composer, KeyCode::Left), ComposerAction::None);
    assert_eq!(composer.cursor(), (0, 0));
}

#[test]
fn home_end_ctrl_a_and_ctrl_e_go_to_the_line_ends() {
    let mut composer = two_lines();
    assert_eq!(press(&mut composer, KeyCode::Home), ComposerAction::Changed);
    assert_eq!(composer.cursor(), (1, 0));
    assert_eq!(press(&mut composer, KeyCode::Home), ComposerAction::None);
    assert_eq!(press(&mut composer, KeyCode::End), ComposerAction::Changed);
    assert_eq!(composer.cursor(), (1, 6));
    assert_eq!(composer.handle(ctrl('a')), ComposerAction::Changed);
    assert_eq!(composer.cursor(), (1, 0));
    assert_eq!(composer.handle(ctrl('e')), ComposerAction::Changed);
    assert_eq!(composer.cursor(), (1, 6));
}

#[test]
fn ctrl_left_and_right_move_by_word() {
    let mut composer = typed("cargo  test -p");
    assert_eq!(
        composer.handle(with(KeyCode::Left, KeyModifiers::CONTROL)),
        ComposerAction::Changed
    );
    assert_eq!(composer.cursor(), (0, 12));
    composer.handle(with(KeyCode::Left, KeyModifiers::CONTROL));
    composer.handle(with(KeyCode::Left, KeyModifiers::ALT));
    assert_eq!(composer.cursor(), (0, 0));
    composer.handle(with(KeyCode::Right, KeyModifiers::CONTROL));
    assert_eq!(composer.cursor(), (0, 5));
    composer.handle(with(KeyCode::Right, KeyModifiers::CONTROL));
    assert_eq!(composer.cursor(), (0, 11));
}

#[test]
fn ctrl_u_cuts_to_the_line_start_then_the_line_break() {
    let mut composer = two_lines();
    press(&mut composer, KeyCode::Left);
    press(&mut composer, KeyCode::Left);
    assert_eq!(composer.handle(ctrl('u')), ComposerAction::Changed);
    assert_eq!(composer.lines(), ["first line", "nd"]);
    assert_eq!(composer.cursor(), (1, 0));
    assert_eq!(composer.handle(ctrl('u')), ComposerAction::Changed);
    assert_eq!(composer.lines(), ["first linend"]);
    assert_eq!(composer.cursor(), (0, 10));
}

#[test]
fn ctrl_k_cuts_to_the_line_end_then_the_line_break() {
    let mut composer = two_lines();
    composer.handle(key(KeyCode::Up));
    press(&mut composer, KeyCode::Home);
    composer.handle(with(KeyCode::Right, KeyModifiers::CONTROL));
    assert_eq!(composer.handle(ctrl('k')), ComposerAction::Changed);
    assert_eq!(composer.lines(), ["first", "second"]);
    assert_eq!(composer.handle(ctrl('k')), ComposerAction::Changed);
    assert_eq!(composer.lines(), ["firstsecond"]);
    assert_eq!(composer.cursor(), (0, 5));
    composer.handle(ctrl('e'));
    assert_eq!(composer.handle(ctrl('k')), ComposerAction::None);
}

#[test]
fn ctrl_w_and_alt_backspace_cut_the_previous_word() {
    let mut composer = typed("git commit  -m  ");
    assert_eq!(composer.handle(ctrl('w')), ComposerAction::Changed);
    assert_eq!(composer.text(), "git commit  ");
    assert_eq!(
        composer.handle(with(KeyCode::Backspace, KeyModifiers::ALT)),
        ComposerAction::Changed
    );
    assert_eq!(composer.text(), "git ");
    composer.handle(ctrl('w'));
    assert_eq!(composer.text(), "");
    assert_eq!(composer.handle(ctrl('w')), ComposerAction::None);
}

#[test]
fn ctrl_w_at_a_line_start_removes_the_line_break() {
    let mut composer = two_lines();
    press(&mut composer, KeyCode::Home);
    composer.handle(ctrl('w'));
    assert_eq!(composer.lines(), ["first linesecond"]);
}

#[test]
fn up_and_down_move_between_lines_keeping_the_column() {
    let mut composer = Composer::new();
    composer.set_text("a long first line\nshort\nanother long line");
    assert_eq!(composer.cursor(), (2, 17));
    press(&mut composer, KeyCode::Left);
    assert_eq!(press(&mut composer, KeyCode::Up), ComposerAction::Changed);
    assert_eq!(composer.cursor(), (1, 5));
    press(&mut composer, KeyCode::Up);
    assert_eq!(
        composer.cursor(),
        (0, 16),
        "the goal column survives the short line"
    );
    press(&mut composer, KeyCode::Down);
    press(&mut composer, KeyCode::Down);
    assert_eq!(composer.cursor(), (2, 16));
    press(&mut composer, KeyCode::Home);
    press(&mut composer, KeyCode::Up);
    assert_eq!(
        composer.cursor(),
        (1, 0),
        "a horizontal move resets the goal"
    );
}

#[test]
fn up_and_down_aim_at_the_display_column_across_wide_chars() {
    let mut composer = Composer::new();
    composer.set_text("日本語のテキスト\nabcdef");
    press(&mut composer, KeyCode::Home);
    press(&mut composer, KeyCode::Right);
    press(&mut composer, KeyCode::Right);
    press(&mut composer, KeyCode::Right);
    press(&mut composer, KeyCode::Up);
    assert_eq!(
        composer.cursor(),
        (0, 1),
        "column 3 is inside 本, so the cursor stays before it"
    );
    press(&mut composer, KeyCode::Right);
    press(&mut composer, KeyCode::Down);
    assert_eq!(composer.cursor(), (1, 4));
}

#[test]
fn history_recall_keeps_and_restores_the_draft() {
    let mut composer = Composer::with_history(vec!["first".to_owned(), "second".to_owned()]);
    type_in(&mut composer, "half-typed");
    press(&mut composer, KeyCode::Left);
    assert_eq!(press(&mut composer, KeyCode::Up), ComposerAction::Changed);
    assert_eq!(composer.text(), "second");
    press(&mut composer, KeyCode::Up);
    assert_eq!(composer.text(), "first");
    assert_eq!(
        press(&mut composer, KeyCode::Up),
        ComposerAction::None,
        "nothing older"
    );
    assert_eq!(composer.text(), "first");
    press(&mut composer, KeyCode::Down);
    assert_eq!(composer.text(), "second");
    assert_eq!(press(&mut composer, KeyCode::Down), ComposerAction::Changed);
    assert_eq!(composer.text(), "half-typed");
    assert_eq!(
        composer.cursor(),
        (0, 9),
        "the draft's cursor comes back too"
    );
    assert_eq!(press(&mut composer, KeyCode::Down), ComposerAction::None);
    assert_eq!(composer.history(), ["first", "second"]);
}

#[test]
fn history_walks_through_multi_line_entries() {
    let mut composer = Composer::with_history(vec![
        "old".to_owned(),
        "one\ntwo\nthree".to_owned(),
        "new".to_owned(),
    ]);
    press(&mut composer, KeyCode::Up);
    press(&mut composer, KeyCode::Up);
    assert_eq!(composer.lines(), ["one", "two", "three"]);
    assert_eq!(
        composer.cursor(),
        (0, 3),
        "recalled going up: on the first line"
    );
    press(&mut composer, KeyCode::Up);
    assert_eq!(composer.text(), "old");
    press(&mut composer, KeyCode::Down);
    assert_eq!(composer.cursor(), (2, 5), "recalled going down: at the end");
    press(&mut composer, KeyCode::Up);
    assert_eq!(
        composer.cursor(),
        (1, 3),
        "inside an entry Up moves between its lines"
    );
}

#[test]
fn up_with_no_history_does_nothing() {
    let mut composer = typed("draft");
    assert_eq!(press(&mut composer, KeyCode::Up), ComposerAction::None);
    assert_eq!(press(&mut composer, KeyCode::Down), ComposerAction::None);
    assert_eq!(composer.text(), "draft");
}

#[test]
fn submitting_a_recalled_entry_ends_browsing() {
    let mut composer = Composer::with_history(vec!["a".to_owned(), "b".to_owned()]);
    press(&mut composer, KeyCode::Up);
    press(&mut composer, KeyCode::Up);
    type_in(&mut composer, "!");
    assert_eq!(
        press(&mut composer, KeyCode::Enter),
        ComposerAction::Submit("a!".to_owned())
    );
    assert_eq!(
        composer.history(),
        ["a", "b", "a!"],
        "the recalled entry itself is untouched"
    );
    press(&mut composer, KeyCode::Up);
    assert_eq!(composer.text(), "a!");
}

fn searchable() -> Composer {
    let history = [
        "cargo build",
        "git status",
        "cargo test -p cox-tui",
        "Cargo fmt",
        "cargo test -p cox-tui",
    ];
    let mut composer = Composer::with_history(history.map(str::to_owned).to_vec());
    type_in(&mut composer, "draft");
    composer
}

#[test]
fn ctrl_r_searches_older_entries_as_the_query_grows() {
    let mut composer = searchable();
    assert_eq!(composer.search(), None);
    assert_eq!(composer.handle(ctrl('r')), ComposerAction::Changed);
    assert_eq!(composer.search(), Some(("", None)));
    type_in(&mut composer, "cargo");
    assert_eq!(
        composer.search(),
        Some(("cargo", Some("cargo test -p cox-tui")))
    );
    assert_eq!(composer.handle(ctrl('r')), ComposerAction::Changed);
    assert_eq!(
        composer.search(),
        Some(("cargo", Some("Cargo fmt"))),
        "lower case matches any case"
    );
    composer.handle(ctrl('r'));
    assert_eq!(
        composer.search(),
        Some(("cargo", Some("cargo build"))),
        "the duplicate is skipped"
    );
    assert_eq!(
        composer.handle(ctrl('r')),
        ComposerAction::None,
        "nothing older"
    );
    assert_eq!(composer.search(), Some(("cargo", Some("cargo build"))));
    assert_eq!(composer.text(), "draft", "the draft stays while searching");
}

#[test]
fn typing_narrows_from_the_current_match() {
    let mut composer = searchable();
    composer.handle(ctrl('r'));
    type_in(&mut composer, "t");
    assert_eq!(
        composer.search(),
        Some(("t", Some("cargo test -p cox-tui")))
    );
    composer.handle(ctrl('r'));
    composer.handle(ctrl('r'));
    assert_eq!(composer.search(), Some(("t", Some("git status"))));
    type_in(&mut composer, "a");
    assert_eq!(composer.search(), Some(("ta", Some("git status"))));
    type_in(&mut composer, "z");
    assert_eq!(composer.search(), Some(("taz", None)));
    assert_eq!(
        press(&mut composer, KeyCode::Backspace),
        ComposerAction::Changed
    );
    assert_eq!(
        composer.search(),
        Some(("ta", Some("git status"))),
        "widening searches from the newest again"
    );
}

#[test]
fn a_capital_makes_the_search_exact() {
    let mut composer = searchable();
    composer.handle(ctrl('r'));
    type_in(&mut composer, "Cargo");
    assert_eq!(composer.search(), Some(("Cargo", Some("Cargo fmt"))));
    composer.handle(ctrl('r'));
    assert_eq!(composer.search(), Some(("Cargo", Some("Cargo fmt"))));
}

#[test]
fn enter_accepts_the_match_without_submitting() {
    let mut composer = searchable();
    composer.handle(ctrl('r'));
    type_in(&mut composer, "status");
    assert_eq!(
        press(&mut composer, KeyCode::Enter),
        ComposerAction::Changed
    );
    assert_eq!(composer.search(), None);
    assert_eq!(composer.text(), "git status");
    assert_eq!(composer.cursor(), (0, 10));
    assert_eq!(composer.history().len(), 5);
    assert_eq!(
        press(&mut composer, KeyCode::Enter),
        ComposerAction::Submit("git status".to_owned())
    );
}

#[test]
fn enter_without_a_match_keeps_the_draft() {
    let mut composer = searchable();
    composer.handle(ctrl('r'));
    type_in(&mut composer, "nothing like it");
    press(&mut composer, KeyCode::Enter);
    assert_eq!(composer.search(), None);
    assert_eq!(composer.text(), "draft");
}

#[test]
fn esc_and_ctrl_g_cancel_the_search_and_keep_the_draft() {
    for cancel in [key(KeyCode::Esc), ctrl('g')] {
        let mut composer = searchable();
        composer.handle(ctrl('r'));
        type_in(&mut composer, "git");
        assert_eq!(composer.handle(cancel), ComposerAction::Changed);
        assert_eq!(composer.search(), None);
        assert_eq!(composer.text(), "draft");
        assert_eq!(composer.cursor(), (0, 5));
    }
}

#[test]
fn other_keys_are_ignored_while_searching() {
    let mut composer = searchable();
    composer.handle(ctrl('r'));
    assert_eq!(
        press(&mut composer, KeyCode::Backspace),
        ComposerAction::None,
        "empty query"
    );
    assert_eq!(press(&mut composer, KeyCode::Up), ComposerAction::None);
    assert_eq!(composer.handle(ctrl('a')), ComposerAction::None);
    assert_eq!(composer.search(), Some(("", None)));
    assert_eq!(composer.text(), "draft");
}

#[test]
fn a_paste_closes_the_search() {
    let mut composer = searchable();
    composer.handle(ctrl('r'));
    composer.insert_str(" more");
    assert_eq!(composer.search(), None);
    assert_eq!(composer.text(), "draft more");
}

#[test]
fn insert_str_reads_crlf_and_cr_as_line_breaks() {
    let mut composer = typed("<>");
    press(&mut composer, KeyCode::Left);
    composer.insert_str("one\r\ntwo\rthree\nfour");
    assert_eq!(composer.lines(), ["<one", "two", "three", "four>"]);
    assert_eq!(composer.cursor(), (3, 4));
}

#[test]
fn insert_str_drops_control_chars_but_keeps_tabs() {
    let mut composer = Composer::new();
    composer.insert_str("\u{1b}[31mred\u{1b}[0m\tok\u{7}\u{0}");
    assert_eq!(composer.text(), "[31mred[0m\tok");
    assert_eq!(
        composer.handle(key(KeyCode::Char('\u{1b}'))),
        ComposerAction::None
    );
}

#[test]
fn insert_str_on_one_line_moves_the_cursor_by_chars() {
    let mut composer = typed("ab");
    press(&mut composer, KeyCode::Left);
    composer.insert_str("日本🦀");
    assert_eq!(composer.text(), "a日本🦀b");
    assert_eq!(composer.cursor(), (0, 4));
    composer.insert_str("");
    assert_eq!(composer.cursor(), (0, 4));
}

#[test]
fn a_one_megabyte_paste_lands_in_one_step() {
    let line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd\r\n";
    let paste = line.repeat(1024 * 1024 / line.len());
    let mut composer = typed("[]");
    press(&mut composer, KeyCode::Left);
    let started = std::time::Instant::now();
    composer.insert_str(&paste);
    let lines = paste.len() / line.len();
    assert_eq!(composer.lines().len(), lines + 1);
    assert_eq!(composer.cursor(), (lines, 0));
    assert_eq!(composer.lines()[lines], "]");
    assert_eq!(composer.text().len(), 2 + paste.len() - lines);

    let long = "é".repeat(512 * 1024);
    composer.insert_str(&long);
    assert_eq!(composer.cursor(), (lines, 512 * 1024));
    assert_eq!(
        composer.visual_cursor(64).1,
        0,
        "512 Ki chars fill whole rows of 64"
    );
    eprintln!("1 MB pastes took {:?}", started.elapsed());
}

#[test]
fn wide_chars_are_one_cursor_step_each() {
    let mut composer = typed("漢字🦀é");
    assert_eq!(composer.cursor(), (0, 4));
    press(&mut composer, KeyCode::Left);
    press(&mut composer, KeyCode::Left);
    press(&mut composer, KeyCode::Backspace);
    assert_eq!(composer.text(), "漢🦀é");
    press(&mut composer, KeyCode::Delete);
    assert_eq!(composer.text(), "漢é");
    assert_eq!(composer.cursor(), (0, 1));
    assert_eq!(composer.visual_cursor(80), (0, 2));
}

#[test]
fn visual_lines_wrap_by_display_width() {
    let mut composer = Composer::new();
    composer.set_text("日本語です\nabcdefgh\n\n🦀🦀🦀");
    press(&mut composer, KeyCode::Up);
    assert_eq!(
        composer.visual_lines(5),
        ["日本", "語で", "す", "abcde", "fgh", "", "🦀🦀", "🦀"]
    );
    assert_eq!(
        composer.visual_lines(0),
        composer.visual_lines(1),
        "width 0 is taken as 1"
    );
}

#[test]
fn visual_cursor_follows_the_wrapped_rows() {
    let mut composer = Composer::new();
    composer.set_text("日本語です\nabcdefgh");
    assert_eq!(composer.visual_cursor(5), (4, 3));
    press(&mut composer, KeyCode::Up);
    assert_eq!(composer.cursor(), (0, 4));
    assert_eq!(
        composer.visual_cursor(5),
        (2, 0),
        "before す: the start of its row"
    );
    press(&mut composer, KeyCode::Left);
    assert_eq!(composer.visual_cursor(5), (1, 2));
    press(&mut composer, KeyCode::Left);
    assert_eq!(composer.visual_cursor(5), (1, 0));
    press(&mut composer, KeyCode::Home);
    assert_eq!(composer.visual_cursor(5), (0, 0));
}

#[test]
fn a_cursor_after_a_full_row_goes_to_an_extra_row() {
    let mut composer = typed("abcde");
    assert_eq!(composer.visual_lines(5), ["abcde", ""]);
    assert_eq!(composer.visual_cursor(5), (1, 0));
    press(&mut composer, KeyCode::Left);
    assert_eq!(composer.visual_lines(5), ["abcde"]);
    assert_eq!(composer.visual_cursor(5), (0, 4));
    composer.set_text("日本\nx");
    assert_eq!(
        composer.visual_lines(4),
        ["日本", "x"],
        "only the cursor's line gets the extra row"
    );
}

#[test]
fn a_char_wider_than_the_box_gets_a_row_of_its_own() {
    let composer = typed("a日b");
    assert_eq!(composer.visual_lines(1), ["a", "日", "b", ""]);
    assert_eq!(composer.visual_cursor(1), (3, 0));
}

#[test]
fn tabs_are_drawn_as_spaces() {
    let mut composer = Composer::new();
    composer.insert_str("\tx");
    assert_eq!(composer.lines(), ["\tx"]);
    assert_eq!(composer.visual_lines(80), ["    x"]);
    assert_eq!(composer.visual_cursor(80), (0, 5));
}

#[test]
fn set_text_and_clear_reset_everything() {
    let mut composer = Composer::with_history(vec!["old".to_owned()]);
    press(&mut composer, KeyCode::Up);
    composer.set_text("new\r\ntext");
    assert_eq!(composer.lines(), ["new", "text"]);
    assert_eq!(composer.cursor(), (1, 4));
    assert_eq!(
        press(&mut composer, KeyCode::Down),
        ComposerAction::None,
        "browsing ended"
    );
    composer.handle(ctrl('r'));
    composer.clear();
    assert!(composer.is_empty());
    assert_eq!(composer.lines(), [""]);
    assert_eq!(composer.cursor(), (0, 0));
    assert_eq!(composer.search(), None);
    assert_eq!(composer.history(), ["old"]);
}

#[test]
fn unbound_keys_are_left_to_the_caller() {
    let mut composer = typed("x");
    for code in [KeyCode::Tab, KeyCode::Esc, KeyCode::F(1), KeyCode::PageUp] {
        assert_eq!(press(&mut composer, code), ComposerAction::None, "{code:?}");
    }
    assert_eq!(composer.text(), "x");
}
