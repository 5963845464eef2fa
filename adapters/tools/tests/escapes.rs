//! No file tool reaches outside the workspace: not by `..`, not by an
//! absolute path, not through a link planted inside it.

mod common;

use common::{Fixture, assert_error};
use cox_protocol::Tool;
use cox_tools::{EditTool, GlobTool, GrepTool, ReadTool, WriteTool};
use serde_json::{Value, json};

/// One call per file tool aimed at `raw`.
fn calls(raw: &str) -> Vec<(&'static dyn Tool, Value)> {
    vec![
        (&ReadTool, json!({"path": raw})),
        (&WriteTool, json!({"path": raw, "content": "pwned"})),
        (
            &EditTool,
            json!({"path": raw, "old_string": "secret", "new_string": "pwned"}),
        ),
        (&GlobTool, json!({"pattern": "**/*", "path": raw})),
        (&GrepTool, json!({"pattern": "secret", "path": raw})),
    ]
}

#[tokio::test]
async fn every_file_tool_refuses_dot_dot_and_absolute_escapes() {
    let fx = Fixture::new();
    let absolute = fx.outside.join("secret.txt").display().to_string();
    for raw in [
        "../outside/secret.txt",
        "sub/../../outside/secret.txt",
        absolute.as_str(),
    ] {
        for (tool, input) in calls(raw) {
            let result = fx.run(tool, input).await;
            assert_error(
                &result,
                &[
                    &format!("path {raw} is outside the workspace"),
                    "use a path inside it",
                ],
            );
        }
    }
    for (tool, input) in calls("../outside") {
        assert_error(&fx.run(tool, input).await, &["outside the workspace"]);
    }
    assert_eq!(
        std::fs::read_to_string(fx.outside.join("secret.txt")).unwrap(),
        "secret\n"
    );
}

#[tokio::test]
async fn every_file_tool_refuses_links_that_lead_outside() {
    let fx = Fixture::new();
    fx.link("leak.txt", &fx.outside.join("secret.txt"));
    fx.link("out", &fx.outside);
    for raw in ["leak.txt", "out/secret.txt", "out"] {
        for (tool, input) in calls(raw) {
            assert_error(&fx.run(tool, input).await, &["outside the workspace"]);
        }
    }
    // Writing a new file under a linked folder must not create it outside.
    let result = fx
        .run(&WriteTool, json!({"path": "out/new.txt", "content": "x"}))
        .await;
    assert_error(&result, &["path out/new.txt is outside the workspace"]);
    assert!(!fx.outside.join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(fx.outside.join("secret.txt")).unwrap(),
        "secret\n"
    );
}

#[tokio::test]
async fn searches_from_inside_do_not_follow_links_outside() {
    let fx = Fixture::new();
    fx.file("inside.txt", "no secrets here\n");
    fx.link("leak.txt", &fx.outside.join("secret.txt"));
    fx.link("out", &fx.outside);
    let grep = fx.run(&GrepTool, json!({"pattern": "secret"})).await;
    assert_eq!(grep.visible, "inside.txt\n");
    let glob = fx.run(&GlobTool, json!({"pattern": "**/*"})).await;
    assert_eq!(glob.visible, "inside.txt");
}

#[tokio::test]
async fn links_that_stay_inside_work() {
    let fx = Fixture::new();
    fx.file("real/notes.txt", "hello\n");
    fx.link("alias", &fx.at("real"));
    fx.link("notes-link.txt", &fx.at("real/notes.txt"));
    let read = fx.run(&ReadTool, json!({"path": "alias/notes.txt"})).await;
    assert_eq!(read.visible, "     1\thello\n");
    let grep = fx.run(&GrepTool, json!({"pattern": "hello"})).await;
    assert_eq!(grep.visible, "notes-link.txt\nreal/notes.txt\n");
}
