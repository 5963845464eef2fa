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
fn only_writes_and_edits_have_a_preview() {
    let bash = call("bash", json!({"command": "ls"}));
    assert!(!wants_file(&bash));
    assert_eq!(preview(&bash, None), None);
    assert!(wants_file(&edit("a", "b")));
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
