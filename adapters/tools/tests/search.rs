//! `glob` and `grep`: matching, ignore rules, ordering, caps and errors.

mod common;

use std::time::{Duration, SystemTime};

use common::{Fixture, assert_error};
use cox_tools::{GlobTool, GrepTool};
use serde_json::json;

/// Sets a file's modification time to `secs` after the epoch.
fn touch(fx: &Fixture, rel: &str, secs: u64) {
    let file = std::fs::File::options()
        .write(true)
        .open(fx.at(rel))
        .unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

/// A small tree with an ignored folder, a hidden file and a `.git` folder.
fn tree() -> Fixture {
    let fx = Fixture::new();
    fx.file("main.rs", "fn main() {}\n");
    fx.file("src/lib.rs", "pub fn hello() {}\n// TODO: more\n");
    fx.file("src/deep/util.rs", "pub fn util() {}\n// todo later\n");
    fx.file("README.md", "# Hello\nTODO: docs\n");
    fx.file(".hidden.rs", "// hidden TODO\n");
    fx.file("target/debug/out.rs", "// TODO built\n");
    fx.file(".gitignore", "target/\n");
    fx.file(".git/config.rs", "// TODO git\n");
    for (rel, secs) in [
        ("main.rs", 100),
        ("src/lib.rs", 300),
        ("src/deep/util.rs", 200),
        (".hidden.rs", 50),
    ] {
        touch(&fx, rel, secs);
    }
    fx
}

#[tokio::test]
async fn glob_lists_newest_first_and_honours_ignore_rules() {
    let fx = tree();
    let result = fx.run(&GlobTool, json!({"pattern": "**/*.rs"})).await;
    assert!(result.ok);
    assert_eq!(
        result.visible,
        "src/lib.rs\nsrc/deep/util.rs\nmain.rs\n.hidden.rs"
    );
}

#[tokio::test]
async fn glob_star_stays_in_one_folder_and_ties_sort_by_name() {
    let fx = tree();
    touch(&fx, "main.rs", 50);
    let result = fx.run(&GlobTool, json!({"pattern": "*.rs"})).await;
    assert_eq!(result.visible, ".hidden.rs\nmain.rs");
}

#[tokio::test]
async fn glob_searches_under_path_and_shows_paths_from_cwd() {
    let fx = tree();
    let result = fx
        .run(&GlobTool, json!({"pattern": "*.rs", "path": "src"}))
        .await;
    assert_eq!(result.visible, "src/lib.rs");
    let nested = fx.with_cwd("src");
    let result = nested.run(&GlobTool, json!({"pattern": "./**/*.rs"})).await;
    assert_eq!(result.visible, "lib.rs\ndeep/util.rs");
}

#[tokio::test]
async fn glob_says_when_nothing_matched_and_caps_long_lists() {
    let fx = tree();
    assert_eq!(
        fx.run(&GlobTool, json!({"pattern": "**/*.py"}))
            .await
            .visible,
        "no files matched"
    );
    for n in 0..205 {
        fx.file(&format!("many/f{n:03}.txt"), "");
    }
    let result = fx.run(&GlobTool, json!({"pattern": "many/*.txt"})).await;
    let lines: Vec<&str> = result.visible.lines().collect();
    assert_eq!(lines.len(), 201);
    assert_eq!(lines[200], "[… 5 more files; narrow the pattern]");
}

#[tokio::test]
async fn glob_refuses_bad_patterns_bad_roots_and_bad_input() {
    let fx = tree();
    assert_error(
        &fx.run(&GlobTool, json!({"pattern": "src/[a"})).await,
        &["invalid glob pattern"],
    );
    let file_root = fx
        .run(&GlobTool, json!({"pattern": "*", "path": "main.rs"}))
        .await;
    assert_error(&file_root, &["main.rs is not a directory"]);
    let missing = fx
        .run(&GlobTool, json!({"pattern": "*", "path": "nowhere"}))
        .await;
    assert_error(&missing, &["nowhere does not exist"]);
    let extra = fx
        .run(&GlobTool, json!({"pattern": "*", "recursive": true}))
        .await;
    assert_error(
        &extra,
        &["invalid input for glob: unknown field `recursive`"],
    );
    assert_error(
        &fx.run_cancelled(&GlobTool, json!({"pattern": "*"})).await,
        &["glob was cancelled"],
    );
}

#[tokio::test]
async fn grep_lists_matching_files_by_name_skipping_ignored_ones() {
    let fx = tree();
    let result = fx.run(&GrepTool, json!({"pattern": "TODO"})).await;
    assert!(result.ok);
    assert_eq!(result.visible, ".hidden.rs\nREADME.md\nsrc/lib.rs\n");
}

#[tokio::test]
async fn grep_shows_content_and_counts() {
    let fx = tree();
    fx.file("notes.txt", "a TODO\nnothing\nTODO again\r\n");
    let content = fx
        .run(
            &GrepTool,
            json!({"pattern": "TODO", "output_mode": "content", "path": "notes.txt"}),
        )
        .await;
    assert_eq!(
        content.visible,
        "notes.txt:1:a TODO\nnotes.txt:3:TODO again\n"
    );
    let count = fx
        .run(
            &GrepTool,
            json!({"pattern": "todo", "output_mode": "count", "case_insensitive": true}),
        )
        .await;
    assert_eq!(
        count.visible,
        ".hidden.rs:1\nREADME.md:1\nnotes.txt:2\nsrc/deep/util.rs:1\nsrc/lib.rs:1\n"
    );
    let anchored = fx
        .run(
            &GrepTool,
            json!({"pattern": "again$", "output_mode": "content"}),
        )
        .await;
    assert_eq!(anchored.visible, "notes.txt:3:TODO again\n");
}

#[tokio::test]
async fn grep_filters_by_glob_on_names_or_paths() {
    let fx = tree();
    let by_name = fx
        .run(&GrepTool, json!({"pattern": "(?i)todo", "glob": "*.rs"}))
        .await;
    assert_eq!(
        by_name.visible,
        ".hidden.rs\nsrc/deep/util.rs\nsrc/lib.rs\n"
    );
    let by_path = fx
        .run(
            &GrepTool,
            json!({"pattern": "(?i)todo", "glob": "src/*.rs"}),
        )
        .await;
    assert_eq!(by_path.visible, "src/lib.rs\n");
    let under = fx
        .run(&GrepTool, json!({"pattern": "fn", "path": "src/deep"}))
        .await;
    assert_eq!(under.visible, "src/deep/util.rs\n");
}

#[tokio::test]
async fn grep_skips_binary_files_and_caps_entries() {
    let fx = Fixture::new();
    fx.file("blob.bin", b"needle\x00\x01");
    fx.file("text.txt", "needle 1\nneedle 2\nneedle 3\n");
    let result = fx.run(&GrepTool, json!({"pattern": "needle"})).await;
    assert_eq!(result.visible, "text.txt\n");
    let capped = fx
        .run(
            &GrepTool,
            json!({"pattern": "needle", "output_mode": "content", "head_limit": 1}),
        )
        .await;
    assert_eq!(
        capped.visible,
        "text.txt:1:needle 1\n[… 2 more; raise head_limit or narrow the search]\n"
    );
    assert_eq!(
        fx.run(&GrepTool, json!({"pattern": "haystack"}))
            .await
            .visible,
        "no matches"
    );
}

#[tokio::test]
async fn grep_refuses_bad_patterns_and_bad_input() {
    let fx = tree();
    assert_error(
        &fx.run(&GrepTool, json!({"pattern": "fn("})).await,
        &["invalid regex"],
    );
    assert_error(
        &fx.run(&GrepTool, json!({"pattern": "x", "glob": "[a"}))
            .await,
        &["invalid glob filter"],
    );
    let mode = fx
        .run(&GrepTool, json!({"pattern": "x", "output_mode": "lines"}))
        .await;
    assert_error(&mode, &["invalid input for grep: unknown variant `lines`"]);
    let extra = fx.run(&GrepTool, json!({"pattern": "x", "-n": true})).await;
    assert_error(&extra, &["invalid input for grep: unknown field `-n`"]);
    let zero = fx
        .run(&GrepTool, json!({"pattern": "x", "head_limit": 0}))
        .await;
    assert_error(&zero, &["head_limit must be at least 1"]);
    let missing = fx
        .run(&GrepTool, json!({"pattern": "x", "path": "nowhere"}))
        .await;
    assert_error(&missing, &["nowhere does not exist"]);
    assert_error(
        &fx.run_cancelled(&GrepTool, json!({"pattern": "TODO"}))
            .await,
        &["grep was cancelled"],
    );
}
