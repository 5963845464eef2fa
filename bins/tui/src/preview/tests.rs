use super::*;
use cox_protocol::types::Risk;
use pretty_assertions::assert_eq;
use ratatui::text::Line;
use serde_json::json;

fn call(name: &str, input: Value) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: name.into(),
        input,
        risk: Risk::Write,
        subject: "/w/src/lib.rs".into(),
        segments: None,
        writes: Vec::new(),
    }
}

fn texts(lines: &[Line<'_>]) -> Vec<String> {
    lines
        .iter()
        .map(|line| line.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

fn numbered(range: std::ops::RangeInclusive<usize>) -> String {
    range.map(|i| format!("line {i}\n")).collect()
}

fn edit(old: &str, new: &str) -> ToolCall {
    call(
        "edit",
        json!({"path": "src/lib.rs", "old_string": old, "new_string": new}),
    )
}

#[test]
fn an_edit_shows_the_file_s_own_line_numbers_and_context() {
    let file = numbered(1..=200);
    let preview = preview(
        &edit("line 120\n", "line one-twenty\n"),
        Some(&Read::Text(file)),
    )
    .unwrap();
    assert_eq!(preview.note, None);
    assert_eq!(
        texts(&preview.diff.lines("src/lib.rs", 80)),
        [
            "src/lib.rs +1 \u{2212}1",
            "118  line 118",
            "119  line 119",
            "120 -line 120",
            "120 +line one-twenty",
            "121  line 121",
            "122  line 122",
        ]
    );
}

#[test]
fn an_edit_inside_a_line_shows_the_whole_line() {
    let preview = preview(
        &edit("x = 1", "x = 2"),
        Some(&Read::Text("fn a() {}\nlet x = 1;\n".into())),
    )
    .unwrap();
    assert_eq!(
        texts(&preview.diff.body(80)),
        ["1  fn a() {}", "2 -let x = 1;", "2 +let x = 2;"]
    );
}

#[test]
fn replace_all_shows_every_place() {
    let file = "a\nb\nc\nd\ne\nf\ng\na\n";
    let input = json!({"path": "f", "old_string": "a\n", "new_string": "A\n", "replace_all": true});
    let preview = preview(&call("edit", input), Some(&Read::Text(file.into()))).unwrap();
    assert_eq!(
        texts(&preview.diff.body(80)),
        [
            "1 -a", "1 +A", "2  b", "3  c", "⋮", "6  f", "7  g", "8 -a", "8 +A"
        ]
    );
}

#[test]
fn without_the_file_the_numbers_count_from_old_string_and_say_why() {
    let cases = [
        (None, "the file was not read"),
        (Some(Read::Missing), "the file does not exist"),
        (
            Some(Read::Failed("permission denied".into())),
            "the file could not be read (permission denied)",
        ),
        (
            Some(Read::Text("other text\n".into())),
            "old_string is not in the file as it is now",
        ),
        (
            Some(Read::Text("x\nx\n".into())),
            "old_string occurs 2 times in the file; the tool will refuse it",
        ),
    ];
    for (read, why) in cases {
        let preview = preview(&edit("x\n", "y\n"), read.as_ref()).unwrap();
        assert_eq!(
            preview.note.as_deref(),
            Some(format!("line numbers count from old_string: {why}").as_str())
        );
        assert_eq!(texts(&preview.diff.body(80)), ["1 -x", "1 +y"]);
    }
}

#[test]
fn a_write_over_a_file_is_a_diff_and_a_new_file_its_lines() {
    let write = call("write", json!({"path": "f", "content": "a\nB\nc\n"}));
    let over = preview(&write, Some(&Read::Text("a\nb\nc\n".into()))).unwrap();
    assert_eq!(over.note, None);
    assert_eq!(
        texts(&over.diff.lines("f", 80)),
        ["f +1 \u{2212}1", "1  a", "2 -b", "2 +B", "3  c"]
    );
    let new = preview(&write, Some(&Read::Missing)).unwrap();
    assert_eq!(
        texts(&new.diff.lines("f", 80)),
        ["f (new, 3 lines)", "1 +a", "2 +B", "3 +c"]
    );
    let unread = preview(&write, None).unwrap();
    assert_eq!(texts(&unread.diff.lines("f", 80))[0], "f (3 lines)");
    assert_eq!(
        unread.note.as_deref(),
        Some("not compared with the file: it was not read")
    );
    let failed = preview(&write, Some(&Read::Failed("not UTF-8 text".into()))).unwrap();
    assert_eq!(
        failed.note.as_deref(),
        Some("not compared with the file: it could not be read (not UTF-8 text)")
    );
}

#[test]
fn only_writes_edits_and_patches_have_a_preview() {
    let bash = call("bash", json!({"command": "ls"}));
    assert!(!wants_file(&bash));
    assert_eq!(preview(&bash, None), None);
    assert!(wants_file(&edit("a", "b")));
    // A patch says what changes itself: no file is read for it.
    let patch = apply_patch(&["*** Delete File: a"]);
    assert!(!wants_file(&patch));
    assert!(preview(&patch, None).is_some());
}

#[test]
fn a_hostile_read_error_is_sanitized() {
    let preview = preview(
        &edit("a", "b"),
        Some(&Read::Failed("\u{1b}]0;pwned\u{7}bad".into())),
    )
    .unwrap();
    let note = preview.note.unwrap();
    assert!(!note.contains('\u{1b}') && note.contains("bad"), "{note:?}");
}

/// An `apply_patch` call whose patch is `body` inside the envelope.
fn apply_patch(body: &[&str]) -> ToolCall {
    let patch = format!("*** Begin Patch\n{}\n*** End Patch", body.join("\n"));
    call("apply_patch", json!({ "patch": patch }))
}

/// The patch preview's header and whole body, as text.
fn patch_lines(call: &ToolCall) -> Vec<String> {
    let preview = preview(call, None).unwrap();
    assert_eq!(preview.note, None);
    let mut lines = vec![preview.diff.header("/w/src/lib.rs", 80)];
    lines.extend(preview.diff.window(80, 0, usize::MAX));
    texts(&lines)
}

/// Each line's spans as (text, style).
fn styled(lines: &[Line<'_>]) -> Vec<Vec<(String, ratatui::style::Style)>> {
    lines
        .iter()
        .map(|line| {
            line.spans
                .iter()
                .map(|s| (s.content.to_string(), s.style))
                .collect()
        })
        .collect()
}

#[test]
fn a_patch_adding_a_file_shows_its_lines_as_additions() {
    use crate::diff::{ADDED, PATH};
    let add = apply_patch(&["*** Add File: notes/new.txt", "+one", "+two"]);
    assert_eq!(
        patch_lines(&add),
        ["1 file +2 \u{2212}0", "A notes/new.txt", "+one", "+two"]
    );
    let body = preview(&add, None).unwrap().diff.body(80);
    assert_eq!(
        styled(&body[..2]),
        [
            vec![("A ".to_owned(), ADDED), ("notes/new.txt".to_owned(), PATH)],
            vec![("+one".to_owned(), ADDED)],
        ]
    );
    // Wrapped in a heredoc, with CRLF line ends, the key `input`: the same.
    let wrapped = call(
        "apply_patch",
        json!({"input": "<<'EOF'\r\n*** Begin Patch\r\n*** Add File: notes/new.txt\r\n+one\r\n+two\r\n*** End Patch\r\nEOF\r\n"}),
    );
    assert_eq!(patch_lines(&wrapped), patch_lines(&add));
}

#[test]
fn a_patch_updating_a_file_in_two_hunks_is_a_coloured_diff() {
    use crate::diff::{ADDED, DIM, PATH, REMOVED};
    let update = apply_patch(&[
        "*** Update File: src/lib.rs",
        "@@ fn a()",
        " let x = 1;",
        "-let y = 2;",
        "+let y = 3;",
        "",
        "@@ fn b()",
        "-b();",
        "+c();",
        "*** End of File",
    ]);
    assert_eq!(
        patch_lines(&update),
        [
            "1 file +2 \u{2212}2",
            "M src/lib.rs",
            "@@ fn a()",
            " let x = 1;",
            "-let y = 2;",
            "+let y = 3;",
            " ",
            "@@ fn b()",
            "-b();",
            "+c();",
        ]
    );
    let diff = preview(&update, None).unwrap().diff;
    assert_eq!(
        styled(&diff.window(80, 0, 5)),
        [
            vec![("M ".to_owned(), PATH), ("src/lib.rs".to_owned(), PATH)],
            vec![("@@ fn a()".to_owned(), DIM)],
            vec![(" let x = 1;".to_owned(), DIM)],
            vec![("-let y = 2;".to_owned(), REMOVED)],
            vec![("+let y = 3;".to_owned(), ADDED)],
        ]
    );
    // The approval prompt scrolls it like an edit's diff.
    assert_eq!(diff.len(), 9);
    assert_eq!(texts(&diff.window(80, 6, 2)), ["@@ fn b()", "-b();"]);
}

#[test]
fn a_patch_deleting_and_moving_files_says_so_per_file() {
    let delete = apply_patch(&["*** Delete File: old.txt"]);
    assert_eq!(patch_lines(&delete), ["1 file +0 \u{2212}0", "D old.txt"]);
    let moved = apply_patch(&[
        "*** Update File: src/a.rs",
        "*** Move to: src/b.rs",
        "@@",
        "-mod a;",
        "+mod b;",
        "*** Update File: src/c.rs",
        "  *** Move to:  src/d.rs  ",
        "*** Delete File: old.txt",
    ]);
    assert_eq!(
        patch_lines(&moved),
        [
            "3 files +1 \u{2212}1",
            "R src/a.rs -> src/b.rs",
            "@@",
            "-mod a;",
            "+mod b;",
            "R src/c.rs -> src/d.rs",
            "D old.txt",
        ]
    );
}

#[test]
fn a_patch_that_does_not_parse_shows_its_raw_text_dimmed() {
    use crate::diff::DIM;
    let cases = [
        (
            "*** Begin Patch\n*** Update File: a\n@@\n-x\nfoo\n*** End Patch",
            "line 5 is not a line of a hunk",
        ),
        (
            "*** Update File: a\n-x",
            "it does not start with `*** Begin Patch`",
        ),
        (
            "*** Begin Patch\n*** Delete File: a",
            "it does not end with `*** End Patch`",
        ),
        (
            "*** Begin Patch\n-x\n*** End Patch",
            "line 2 is not in a file",
        ),
        ("*** Begin Patch\n*** End Patch", "it names no file"),
        (
            "*** Begin Patch\n*** Add File:  \n*** End Patch",
            "line 2 names no file",
        ),
        ("  \n", "it is empty"),
    ];
    for (patch, why) in cases {
        let diff = preview(&call("apply_patch", json!({ "patch": patch })), None)
            .unwrap()
            .diff;
        assert_eq!(
            texts(&[diff.header("/w/a", 80)]),
            [format!("the patch does not parse: {why}")],
            "for {patch:?}"
        );
        let body = diff.window(80, 0, usize::MAX);
        assert_eq!(
            texts(&body),
            patch.lines().collect::<Vec<_>>(),
            "for {patch:?}"
        );
        assert!(
            body.iter().flat_map(|l| &l.spans).all(|s| s.style == DIM),
            "for {patch:?}"
        );
    }
    // No patch at all is an empty one.
    let none = preview(&call("apply_patch", json!({})), None).unwrap();
    assert_eq!(
        texts(&[none.diff.header("/w/a", 80)]),
        ["the patch does not parse: it is empty"]
    );
}

#[test]
fn hostile_escapes_in_a_patch_never_reach_the_terminal() {
    let hostile = [
        "*** Update File: src/\u{1b}[2Jlib.rs",
        "*** Move to: src/\u{1b}]0;pwned\u{7}new.rs",
        "@@ fn \u{1b}[31ma()",
        " ctx\u{9b}2J",
        "-old\u{1b}[1A\u{202e}",
        "+new\u{1b}]52;c;aGk=\u{7}",
        "*** Add File: \u{1b}Pevil\u{1b}\\x.txt",
        "+\u{1b}[2Jwiped",
    ];
    let parsed = apply_patch(&hostile);
    let mut broken = hostile.to_vec();
    broken.push("not a hunk line \u{1b}[2J");
    let unparsed = apply_patch(&broken);
    for call in [parsed, unparsed] {
        let diff = preview(&call, None).unwrap().diff;
        let mut lines = vec![diff.header("/w/a", 200)];
        lines.extend(diff.window(200, 0, usize::MAX));
        lines.extend(diff.body(200));
        let text = texts(&lines).join("\n");
        assert!(
            !text.contains(['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}']),
            "{text:?}"
        );
        for kept in [
            "src/lib.rs",
            "new.rs",
            "a()",
            "ctx",
            "-old",
            "+new",
            "x.txt",
            "wiped",
        ] {
            assert!(text.contains(kept), "`{kept}` in {text:?}");
        }
    }
}
