use super::*;
use pretty_assertions::assert_eq;
use proptest::prelude::*;

fn texts(lines: &[Line<'_>]) -> Vec<String> {
    lines
        .iter()
        .map(|line| line.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

/// Each span of a line as (text, style).
fn spans(line: &Line<'_>) -> Vec<(String, Style)> {
    line.spans
        .iter()
        .map(|s| (s.content.to_string(), s.style))
        .collect()
}

fn numbered(range: std::ops::RangeInclusive<usize>) -> String {
    range.map(|i| format!("line {i}\n")).collect()
}

#[test]
fn header_counts_added_and_removed_lines() {
    let lines = edit_diff("src/lib.rs", "a\nb\nc\n", "a\nB\nc\nd\n", 80);
    assert_eq!(
        spans(&lines[0]),
        [
            ("src/lib.rs".to_owned(), PATH),
            (" ".to_owned(), Style::new()),
            ("+2".to_owned(), ADDED),
            (" ".to_owned(), Style::new()),
            ("\u{2212}1".to_owned(), REMOVED),
        ]
    );
}

#[test]
fn a_change_shows_two_lines_of_context_each_side() {
    let old = numbered(1..=10);
    let new = old.replace("line 5\n", "line five\n");
    let lines = edit_diff("f.txt", &old, &new, 80);
    assert_eq!(
        texts(&lines),
        [
            "f.txt +1 \u{2212}1",
            "3  line 3",
            "4  line 4",
            "5 -line 5",
            "5 +line five",
            "6  line 6",
            "7  line 7",
        ]
    );
    assert_eq!(
        spans(&lines[3]),
        [
            ("5".to_owned(), DIM),
            (" ".to_owned(), Style::new()),
            ("-line 5".to_owned(), REMOVED),
        ]
    );
    assert_eq!(spans(&lines[4])[2], ("+line five".to_owned(), ADDED));
    assert_eq!(spans(&lines[1])[2], (" line 3".to_owned(), Style::new()));
}

#[test]
fn removed_lines_number_the_old_text_and_others_the_new() {
    let lines = edit_diff("f", "a\nb\nc\n", "b\nc\nd\n", 80);
    assert_eq!(
        texts(&lines),
        ["f +1 \u{2212}1", "1 -a", "1  b", "2  c", "3 +d"]
    );
}

#[test]
fn distant_changes_make_separate_hunks() {
    let old = numbered(1..=30);
    let new = old
        .replace("line 2\n", "line two\n")
        .replace("line 20\n", "");
    let lines = edit_diff("f", &old, &new, 80);
    assert_eq!(
        texts(&lines),
        [
            "f +1 \u{2212}2",
            " 1  line 1",
            " 2 -line 2",
            " 2 +line two",
            " 3  line 3",
            " 4  line 4",
            " ⋮",
            "18  line 18",
            "19  line 19",
            "20 -line 20",
            "20  line 21",
            "21  line 22",
        ]
    );
    assert_eq!(spans(&lines[6]), [(" ⋮".to_owned(), DIM)]);
}

#[test]
fn long_lines_are_cut_with_an_ellipsis() {
    let long = "x".repeat(100);
    let lines = edit_diff("f", "short\n", &format!("{long}\n"), 20);
    for line in &lines {
        assert!(
            line.width() <= 20,
            "{:?}",
            texts(std::slice::from_ref(line))
        );
    }
    assert_eq!(texts(&lines)[2], format!("1 +{}…", "x".repeat(16)));
    assert_eq!(lines[2].spans.last().map(|s| s.style), Some(ADDED));
    // Wide characters never straddle the edge.
    let lines = edit_diff("f", "", "漢字漢字漢字\n", 8);
    assert_eq!(texts(&lines)[1], "1 +漢字…");
    assert!(lines[1].width() <= 8);
}

#[test]
fn long_paths_are_cut_too() {
    let path = format!("{}/main.rs", "deep".repeat(20));
    let lines = write_preview(&path, "x\n", 16);
    assert_eq!(texts(&lines)[0], "deepdeepdeepdee…");
    assert_eq!(lines[0].spans.last().map(|s| s.style), Some(PATH));
}

#[test]
fn big_diffs_stop_at_forty_lines_with_a_footer() {
    let lines = edit_diff("f", "", &numbered(1..=100), 80);
    assert_eq!(lines.len(), 1 + MAX_BODY_LINES);
    assert_eq!(texts(&lines)[0], "f +100 \u{2212}0");
    assert_eq!(texts(&lines)[1], " 1 +line 1");
    assert_eq!(texts(&lines)[39], "39 +line 39");
    assert_eq!(spans(&lines[40]), [("… 61 more lines".to_owned(), DIM)]);
}

#[test]
fn exactly_forty_lines_need_no_footer() {
    let lines = edit_diff("f", "", &numbered(1..=40), 80);
    assert_eq!(lines.len(), 41);
    assert_eq!(texts(&lines)[40], "40 +line 40");
}

#[test]
fn identical_texts_have_no_hunks() {
    let lines = edit_diff("f", "same\n", "same\n", 80);
    assert_eq!(texts(&lines), ["f +0 \u{2212}0", "(no changes)"]);
}

#[test]
fn path_and_lines_are_sanitized() {
    let lines = edit_diff(
        "evil\x1b]0;title\x07.rs",
        "ok\n",
        "\x1b[2J\x1b[Hgone\u{202e}txt.exe\n",
        80,
    );
    assert_eq!(
        texts(&lines),
        ["evil.rs +1 \u{2212}1", "1 -ok", "1 +gonetxt.exe"]
    );
    let lines = write_preview("a\tb", "\x1b]52;c;AAAA\x07x\ty\r\n", 80);
    assert_eq!(texts(&lines), ["a   b (new, 1 line)", "1 +x   y"]);
}

#[test]
fn write_preview_shows_every_line_as_added() {
    let lines = write_preview("src/new.rs", "fn a() {}\n\nfn b() {}\n", 80);
    assert_eq!(
        texts(&lines),
        [
            "src/new.rs (new, 3 lines)",
            "1 +fn a() {}",
            "2 +",
            "3 +fn b() {}"
        ]
    );
    assert_eq!(
        spans(&lines[0]),
        [
            ("src/new.rs".to_owned(), PATH),
            (" (new, 3 lines)".to_owned(), DIM)
        ]
    );
    assert_eq!(spans(&lines[1])[2].1, ADDED);
}

#[test]
fn write_preview_of_an_empty_or_long_file() {
    assert_eq!(texts(&write_preview("e", "", 80)), ["e (new, 0 lines)"]);
    let lines = write_preview("big", &numbered(1..=41), 80);
    assert_eq!(lines.len(), 1 + MAX_BODY_LINES);
    assert_eq!(texts(&lines)[40], "… 2 more lines");
    let lines = write_preview("big", &numbered(1..=40), 80);
    assert_eq!(texts(&lines)[40], "40 +line 40");
}

#[test]
fn tiny_widths_still_fit() {
    for width in [0, 1, 2] {
        let limit = usize::from(width).max(1);
        let mut lines = edit_diff("path", "a\nb\n", "a\nc\n", width);
        lines.extend(write_preview("path", "abc\n", width));
        for line in &lines {
            assert!(line.width() <= limit, "{:?} at {width}", texts(&lines));
        }
    }
    assert_eq!(texts(&write_preview("path", "abc\n", 1)), ["…", "…"]);
}

fn small_text() -> impl Strategy<Value = String> {
    let line = prop::sample::select(vec![
        "a",
        "b",
        "c",
        "",
        "漢字",
        "x\ty",
        "\x1b[31mred",
        "long line",
    ]);
    prop::collection::vec(line, 0..30)
        .prop_map(|lines| lines.iter().map(|l| format!("{l}\n")).collect::<String>())
}

proptest! {
    #[test]
    fn diffs_fit_and_count_what_they_show(
        old in small_text(),
        new in small_text(),
        width in 0u16..=40,
    ) {
        let limit = usize::from(width).max(1);
        let lines = edit_diff("p", &old, &new, width);
        prop_assert!(lines.len() <= 2 + MAX_BODY_LINES);
        for line in &lines {
            prop_assert!(line.width() <= limit, "{:?}", texts(&lines));
        }
        // Wide enough for everything: the header counts the signed rows.
        let lines = edit_diff("p", &old, &new, 200);
        let count = |style| {
            let signed = |line: &&Line<'_>| line.spans.last().map(|s| s.style) == Some(style);
            lines[1..].iter().filter(signed).count()
        };
        let (added, removed) = (count(ADDED), count(REMOVED));
        if lines.len() <= MAX_BODY_LINES {
            prop_assert_eq!(&texts(&lines)[0], &format!("p +{added} \u{2212}{removed}"));
        }
    }
}

#[test]
fn a_window_shows_any_stretch_of_the_whole_body() {
    let diff = Diff::new_file(&numbered(1..=120));
    assert_eq!(diff.len(), 120);
    assert_eq!(
        texts(&diff.window(80, 98, 3)),
        [" 99 +line 99", "100 +line 100", "101 +line 101"]
    );
    // The number column is as wide as the body's widest number.
    assert_eq!(texts(&diff.window(80, 0, 1)), ["  1 +line 1"]);
    assert_eq!(diff.window(80, 118, 10).len(), 2);
    assert!(diff.window(80, 500, 10).is_empty());
    let same = Diff::change("a\n", "a\n");
    assert_eq!(same.len(), 1);
    assert_eq!(texts(&same.window(80, 0, 5)), ["(no changes)"]);
    assert!(Diff::new_file("").is_empty());
}

#[test]
fn a_write_not_compared_with_its_file_says_only_its_lines() {
    let diff = Diff::content("a\nb\n");
    assert_eq!(texts(&diff.lines("f", 80)), ["f (2 lines)", "1 +a", "2 +b"]);
}
