//! `read`, `write` and `edit`: what the model reads back for each outcome.

mod common;

use common::{Fixture, assert_error};
use cox_tools::{EditTool, ReadTool, WriteTool};
use serde_json::json;

fn numbered(lines: std::ops::RangeInclusive<usize>) -> String {
    lines.map(|n| format!("{n:>6}\tline {n}\n")).collect()
}

fn lines_file(fx: &Fixture, rel: &str, count: usize) {
    let text: String = (1..=count).map(|n| format!("line {n}\n")).collect();
    fx.file(rel, text);
}

#[tokio::test]
async fn read_numbers_lines_like_cat_n_and_reports_the_file_size() {
    let fx = Fixture::new();
    fx.file("a.txt", "first\nsecond\n\nlast without newline");
    let result = fx.run(&ReadTool, json!({"path": "a.txt"})).await;
    assert!(result.ok);
    assert_eq!(
        result.visible,
        "     1\tfirst\n     2\tsecond\n     3\t\n     4\tlast without newline\n"
    );
    assert_eq!(result.bytes, Some(34));
}

#[tokio::test]
async fn read_windows_a_long_file_and_says_how_to_read_on() {
    let fx = Fixture::new();
    lines_file(&fx, "long.txt", 3200);
    let result = fx.run(&ReadTool, json!({"path": "long.txt"})).await;
    assert_eq!(
        result.visible,
        numbered(1..=2000) + "[… 1200 more lines; read with offset=2001]\n"
    );

    let result = fx
        .run(&ReadTool, json!({"path": "long.txt", "offset": 2001}))
        .await;
    assert_eq!(result.visible, numbered(2001..=3200));

    let result = fx
        .run(
            &ReadTool,
            json!({"path": "long.txt", "offset": 10, "limit": 3}),
        )
        .await;
    assert_eq!(
        result.visible,
        numbered(10..=12) + "[… 3188 more lines; read with offset=13]\n"
    );
}

#[tokio::test]
async fn read_cuts_long_lines_and_says_so() {
    let fx = Fixture::new();
    fx.file("wide.txt", format!("{}\nshort\n", "x".repeat(2500)));
    let result = fx.run(&ReadTool, json!({"path": "wide.txt"})).await;
    let expected = format!(
        "     1\t{} [… line cut: 2500 chars]\n     2\tshort\n",
        "x".repeat(2000)
    );
    assert_eq!(result.visible, expected);
}

#[tokio::test]
async fn read_explains_empty_files_folders_binaries_and_bad_windows() {
    let fx = Fixture::new();
    fx.file("empty.txt", "");
    let result = fx.run(&ReadTool, json!({"path": "empty.txt"})).await;
    assert!(result.ok);
    assert_eq!(result.visible, "empty.txt is empty");

    std::fs::create_dir(fx.at("dir")).unwrap();
    assert_error(
        &fx.run(&ReadTool, json!({"path": "dir"})).await,
        &["dir is a directory", "glob"],
    );

    fx.file("blob.bin", b"PNG\x00\x01\x02 data");
    assert_error(
        &fx.run(&ReadTool, json!({"path": "blob.bin"})).await,
        &["blob.bin is a binary file"],
    );

    let missing = fx.run(&ReadTool, json!({"path": "nope.txt"})).await;
    assert_error(&missing, &["file nope.txt does not exist"]);

    lines_file(&fx, "three.txt", 3);
    let past = fx
        .run(&ReadTool, json!({"path": "three.txt", "offset": 9}))
        .await;
    assert_error(&past, &["three.txt has 3 lines; offset 9 is past the end"]);
    let zero = fx
        .run(&ReadTool, json!({"path": "three.txt", "limit": 0}))
        .await;
    assert_error(&zero, &["limit must be at least 1"]);
}

#[tokio::test]
async fn read_refuses_input_that_does_not_fit_its_schema() {
    let fx = Fixture::new();
    let extra = fx
        .run(&ReadTool, json!({"path": "a.txt", "lines": 3}))
        .await;
    assert_error(&extra, &["invalid input for read: unknown field `lines`"]);
    let missing = fx.run(&ReadTool, json!({"offset": 3})).await;
    assert_error(&missing, &["invalid input for read: missing field `path`"]);
    let wrong = fx
        .run(&ReadTool, json!({"path": "a.txt", "offset": -1}))
        .await;
    assert_error(&wrong, &["invalid input for read: invalid value"]);
}

#[tokio::test]
async fn read_stops_when_cancelled() {
    let fx = Fixture::new();
    lines_file(&fx, "a.txt", 10);
    assert_error(
        &fx.run_cancelled(&ReadTool, json!({"path": "a.txt"})).await,
        &["read was cancelled"],
    );
}

#[tokio::test]
async fn write_creates_folders_and_reports_bytes_against_the_given_path() {
    let fx = Fixture::new();
    let result = fx
        .run(
            &WriteTool,
            json!({"path": "new/dir/hello.txt", "content": "hi\n"}),
        )
        .await;
    assert!(result.ok);
    assert_eq!(result.visible, "wrote 3 bytes to new/dir/hello.txt");
    assert_eq!(result.bytes, Some(3));
    assert_eq!(fx.read("new/dir/hello.txt"), "hi\n");

    let again = fx
        .run(
            &WriteTool,
            json!({"path": "new/dir/hello.txt", "content": "é"}),
        )
        .await;
    assert_eq!(
        (again.visible.as_str(), again.bytes),
        ("wrote 2 bytes to new/dir/hello.txt", Some(2))
    );
    assert_eq!(fx.read("new/dir/hello.txt"), "é");
}

#[tokio::test]
async fn write_reports_failures_and_bad_input() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.at("dir")).unwrap();
    assert_error(
        &fx.run(&WriteTool, json!({"path": "dir", "content": "x"}))
            .await,
        &["could not write dir"],
    );
    let missing = fx.run(&WriteTool, json!({"path": "a.txt"})).await;
    assert_error(
        &missing,
        &["invalid input for write: missing field `content`"],
    );
    let extra = fx
        .run(
            &WriteTool,
            json!({"path": "a.txt", "content": "", "mode": "0644"}),
        )
        .await;
    assert_error(&extra, &["invalid input for write: unknown field `mode`"]);
    assert!(!fx.at("a.txt").exists());
}

#[tokio::test]
async fn edit_replaces_a_unique_string() {
    let fx = Fixture::new();
    fx.file("a.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    let input = json!({"path": "a.rs", "old_string": "\"hi\"", "new_string": "\"hello\""});
    let result = fx.run(&EditTool, input).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(result.visible, "edited a.rs: replaced 1 occurrence(s)");
    assert_eq!(
        fx.read("a.rs"),
        "fn main() {\n    println!(\"hello\");\n}\n"
    );
}

#[tokio::test]
async fn edit_replaces_every_occurrence_only_when_asked() {
    let fx = Fixture::new();
    fx.file("a.txt", "foo bar foo baz foo\n");
    let input = json!({"path": "a.txt", "old_string": "foo", "new_string": "qux"});
    let refused = fx.run(&EditTool, input.clone()).await;
    assert_error(
        &refused,
        &[
            "old_string occurs 3 times in a.txt",
            "context",
            "replace_all",
        ],
    );
    assert_eq!(fx.read("a.txt"), "foo bar foo baz foo\n");

    let mut all = input;
    all["replace_all"] = json!(true);
    let result = fx.run(&EditTool, all).await;
    assert_eq!(result.visible, "edited a.txt: replaced 3 occurrence(s)");
    assert_eq!(fx.read("a.txt"), "qux bar qux baz qux\n");
}

#[tokio::test]
async fn edit_explains_every_refusal() {
    let fx = Fixture::new();
    fx.file("a.txt", "alpha\n");
    let edit =
        |old: &str, new: &str| json!({"path": "a.txt", "old_string": old, "new_string": new});
    assert_error(
        &fx.run(&EditTool, edit("", "x")).await,
        &["old_string is empty"],
    );
    assert_error(
        &fx.run(&EditTool, edit("alpha", "alpha")).await,
        &["are the same"],
    );
    assert_error(
        &fx.run(&EditTool, edit("beta", "x")).await,
        &["old_string was not found in a.txt"],
    );
    let missing = json!({"path": "b.txt", "old_string": "a", "new_string": "b"});
    assert_error(
        &fx.run(&EditTool, missing).await,
        &["file b.txt does not exist", "write"],
    );
    fx.file("bin.dat", [0xff, 0xfe, 0x00]);
    let binary = json!({"path": "bin.dat", "old_string": "a", "new_string": "b"});
    assert_error(
        &fx.run(&EditTool, binary).await,
        &["bin.dat is not UTF-8 text"],
    );
    let typo = json!({"path": "a.txt", "old": "alpha", "new_string": "b"});
    assert_error(
        &fx.run(&EditTool, typo).await,
        &["invalid input for edit: unknown field `old`"],
    );
    assert_eq!(fx.read("a.txt"), "alpha\n");
}
