//! `glob` and `grep` under real permission rules: what a deny (or an
//! unanswered ask) rule covers is never opened nor listed, at any depth,
//! hidden or not, by a link or as the search root, and the result says in
//! one line that paths were skipped, without naming them.
//!
//! Every engine here is compiled from a `PermissionsConfig` with a home
//! folder inside the test's temporary folder, never the real one.

mod common;

use std::sync::Arc;

use common::Fixture;
use cox_permission::{CallRules, Engine};
use cox_protocol::config::PermissionsConfig;
use cox_protocol::types::ToolResult;
use cox_tools::{GlobTool, GrepTool};
use serde_json::{Value, json};

const SKIPPED: &str = "skipped: permission rules deny reading them]";
const KEY_LINE: &str = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ-distinctive";

fn config(deny: &[&str], ask: &[&str]) -> PermissionsConfig {
    let list = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect();
    PermissionsConfig {
        deny: list(deny),
        ask: list(ask),
        ..PermissionsConfig::default()
    }
}

/// A workspace with a `secrets` folder (two levels), a public file and a
/// hidden one, all holding the word `hunter2`, under `deny` and `ask`.
fn secrets(deny: &[&str], ask: &[&str]) -> Fixture {
    let fx = Fixture::new();
    let home = fx.outside.join("home");
    let fx = fx.with_rules(&config(deny, ask), &home);
    fx.file("secrets/key.txt", "TOKEN=hunter2\n");
    fx.file("secrets/deep/more.txt", "hunter2 again\n");
    fx.file("public/a.txt", "hunter2 is a famous password\n");
    fx.file(".env.example", "PASSWORD=hunter2\n");
    fx
}

async fn grep(fx: &Fixture, input: Value) -> ToolResult {
    let result = fx.run(&GrepTool, input).await;
    assert!(result.ok, "{result:?}");
    result
}

async fn glob(fx: &Fixture, input: Value) -> ToolResult {
    let result = fx.run(&GlobTool, input).await;
    assert!(result.ok, "{result:?}");
    result
}

#[track_caller]
fn assert_nothing_from(result: &ToolResult, hidden: &[&str]) {
    for text in hidden {
        assert!(
            !result.visible.contains(text),
            "{text:?} leaked: {:?}",
            result.visible
        );
    }
    assert!(
        result.visible.contains(SKIPPED),
        "no skipped line: {:?}",
        result.visible
    );
}

#[tokio::test]
async fn a_denied_folder_is_closed_to_grep_from_inside_and_above() {
    let fx = secrets(&["Read(secrets/**)"], &[]);
    let hidden = ["TOKEN", "again", "key.txt", "more.txt"];
    for input in [
        json!({"pattern": "hunter2", "path": "secrets", "output_mode": "content"}),
        json!({"pattern": "hunter2", "path": "secrets/deep"}),
        json!({"pattern": "hunter2", "path": "secrets/key.txt", "output_mode": "count"}),
        json!({"pattern": "TOKEN", "output_mode": "content"}),
        json!({"pattern": "hunter2", "glob": "key.txt", "output_mode": "content"}),
        json!({"pattern": "hunter2", "glob": "secrets/**", "output_mode": "content"}),
    ] {
        let result = grep(&fx, input.clone()).await;
        assert_nothing_from(&result, &hidden);
    }
    let all = grep(&fx, json!({"pattern": "hunter2", "output_mode": "content"})).await;
    assert_eq!(
        all.visible,
        ".env.example:1:PASSWORD=hunter2\n\
         public/a.txt:1:hunter2 is a famous password\n\
         [2 paths skipped: permission rules deny reading them]\n",
        "order, hidden files and the one line are as they were"
    );
    let none = grep(&fx, json!({"pattern": "TOKEN", "path": "secrets"})).await;
    assert_eq!(
        none.visible,
        "no matches\n[2 paths skipped: permission rules deny reading them]"
    );
}

#[tokio::test]
async fn a_denied_folder_is_closed_to_glob_from_inside_and_above() {
    let fx = secrets(&["Read(secrets/**)"], &[]);
    let hidden = ["key.txt", "more.txt"];
    for input in [
        json!({"pattern": "**/*", "path": "secrets"}),
        json!({"pattern": "*.txt", "path": "secrets"}),
        json!({"pattern": "**/key.txt"}),
        json!({"pattern": "secrets/**"}),
        json!({"pattern": "**", "path": "secrets/deep"}),
    ] {
        let result = glob(&fx, input.clone()).await;
        assert_nothing_from(&result, &hidden);
    }
    let all = glob(&fx, json!({"pattern": "**/*.txt"})).await;
    assert_eq!(
        all.visible,
        "public/a.txt\n[2 paths skipped: permission rules deny reading them]"
    );
}

#[tokio::test]
async fn a_denied_folder_named_alone_is_not_entered() {
    let fx = secrets(&["Read(secrets)"], &[]);
    let result = grep(&fx, json!({"pattern": "hunter2", "output_mode": "content"})).await;
    assert_nothing_from(&result, &["TOKEN", "again"]);
    assert!(
        result.visible.contains("[1 path skipped: "),
        "the folder counts once: {:?}",
        result.visible
    );
    let result = glob(&fx, json!({"pattern": "**/*"})).await;
    assert_nothing_from(&result, &["key.txt", "more.txt"]);
    assert!(result.visible.contains("public/a.txt"));
}

#[tokio::test]
async fn a_deny_of_one_file_leaves_its_neighbours() {
    let fx = secrets(&["Read(secrets/key.txt)"], &[]);
    let result = grep(&fx, json!({"pattern": "hunter2", "output_mode": "content"})).await;
    assert_nothing_from(&result, &["TOKEN"]);
    assert!(
        result
            .visible
            .contains("secrets/deep/more.txt:1:hunter2 again")
    );
    assert!(result.visible.contains("[1 path skipped: "));
    let result = glob(&fx, json!({"pattern": "secrets/**/*.txt"})).await;
    assert_eq!(
        result.visible,
        "secrets/deep/more.txt\n[1 path skipped: permission rules deny reading them]"
    );
}

#[tokio::test]
async fn a_grep_rule_closes_grep_and_not_glob() {
    let fx = secrets(&["Grep(secrets/**)"], &[]);
    let result = grep(&fx, json!({"pattern": "TOKEN"})).await;
    assert_nothing_from(&result, &["key.txt"]);
    let result = glob(&fx, json!({"pattern": "**/key.txt"})).await;
    assert_eq!(result.visible, "secrets/key.txt");
}

#[tokio::test]
async fn an_unanswered_ask_rule_skips_too() {
    let fx = secrets(&[], &["Read(secrets/**)"]);
    let result = grep(&fx, json!({"pattern": "hunter2", "output_mode": "content"})).await;
    assert_nothing_from(&result, &["TOKEN", "again"]);
    assert!(result.visible.contains("public/a.txt"));
    let result = glob(&fx, json!({"pattern": "**/*.txt", "path": "secrets"})).await;
    assert_nothing_from(&result, &["key.txt", "more.txt"]);
}

#[tokio::test]
async fn an_ask_answered_for_the_root_opens_it_and_nothing_else() {
    let fx = secrets(&[], &[]);
    let engine = Arc::new(
        Engine::compile(
            &config(&[], &["Read(secrets)", "Read(public)"]),
            Some(&fx.outside),
            &fx.root,
        )
        .unwrap(),
    );
    let subject = fx.at("secrets").display().to_string();
    let fx = fx.with_path_rules(Arc::new(CallRules::approved(engine, &subject)));
    let result = grep(&fx, json!({"pattern": "hunter2", "path": "secrets"})).await;
    assert_eq!(result.visible, "secrets/deep/more.txt\nsecrets/key.txt\n");
    let result = grep(&fx, json!({"pattern": "hunter2"})).await;
    assert!(result.visible.contains("secrets/key.txt"), "{result:?}");
    assert_nothing_from(&result, &["public/a.txt"]);
}

#[tokio::test]
async fn the_built_in_ssh_deny_holds_when_the_workspace_is_home() {
    let fx = Fixture::new();
    let home = fx.root.clone();
    let fx = fx.with_rules(&PermissionsConfig::default(), &home);
    fx.file(".ssh/id_rsa", format!("-----BEGIN-----\n{KEY_LINE}\n"));
    fx.file(".ssh/config", "Host *\n");
    fx.file(".aws/credentials", format!("aws_secret = {KEY_LINE}\n"));
    fx.file(".netrc", format!("password {KEY_LINE}\n"));
    fx.file(".bashrc", "export EDITOR=vi # distinctive\n");
    fx.file(".sshx/notes", "distinctive\n");
    fx.file("code/main.rs", "// distinctive\n");
    let hidden = [KEY_LINE, "id_rsa", ".ssh/", ".aws", ".netrc"];
    for input in [
        json!({"pattern": "distinctive", "output_mode": "content"}),
        json!({"pattern": "distinctive", "path": ".", "glob": "id_rsa"}),
        json!({"pattern": "distinctive", "path": ".ssh", "output_mode": "content"}),
        json!({"pattern": "distinctive", "path": ".ssh/id_rsa", "output_mode": "content"}),
        json!({"pattern": "BEGIN|Host", "output_mode": "count"}),
    ] {
        let result = grep(&fx, input).await;
        assert_nothing_from(&result, &hidden);
    }
    let result = grep(
        &fx,
        json!({"pattern": "distinctive", "output_mode": "content"}),
    )
    .await;
    assert_eq!(
        result.visible,
        ".bashrc:1:export EDITOR=vi # distinctive\n\
         .sshx/notes:1:distinctive\n\
         code/main.rs:1:// distinctive\n\
         [3 paths skipped: permission rules deny reading them]\n",
        "hidden files no rule covers are still found"
    );
    for input in [
        json!({"pattern": "**/*"}),
        json!({"pattern": "**/id_rsa"}),
        json!({"pattern": "*", "path": ".ssh"}),
    ] {
        let result = glob(&fx, input).await;
        assert_nothing_from(&result, &hidden);
    }
    let result = glob(&fx, json!({"pattern": ".*"})).await;
    assert_eq!(
        result.visible.lines().collect::<Vec<_>>(),
        [
            ".bashrc",
            "[3 paths skipped: permission rules deny reading them]"
        ]
    );
}

#[tokio::test]
async fn a_link_to_a_closed_file_is_not_followed() {
    let fx = secrets(&["Read(secrets/**)"], &[]);
    fx.link("public/key-link.txt", &fx.at("secrets/key.txt"));
    let result = grep(&fx, json!({"pattern": "TOKEN", "output_mode": "content"})).await;
    assert_nothing_from(&result, &["TOKEN", "key-link"]);
    let result = grep(
        &fx,
        json!({"pattern": "TOKEN", "path": "public/key-link.txt"}),
    )
    .await;
    assert_nothing_from(&result, &["TOKEN", "key-link"]);
    // The link, and the closed folder `secrets/deep`: a closed folder always
    // counts, since what is inside it is not looked at.
    let result = glob(&fx, json!({"pattern": "public/*"})).await;
    assert_eq!(
        result.visible,
        "public/a.txt\n[2 paths skipped: permission rules deny reading them]"
    );
}

#[tokio::test]
async fn nothing_closed_says_nothing_and_git_stays_out() {
    let fx = secrets(&[], &[]);
    fx.file(".git/config", "hunter2 in git\n");
    let result = grep(&fx, json!({"pattern": "hunter2"})).await;
    assert_eq!(
        result.visible,
        ".env.example\npublic/a.txt\nsecrets/deep/more.txt\nsecrets/key.txt\n"
    );
    let result = glob(&fx, json!({"pattern": "**/config"})).await;
    assert_eq!(result.visible, "no files matched");
}

#[tokio::test]
async fn caps_come_before_the_skipped_line() {
    let fx = secrets(&["Read(secrets/**)"], &[]);
    let result = grep(&fx, json!({"pattern": "hunter2", "head_limit": 1})).await;
    assert_eq!(
        result.visible,
        ".env.example\n\
         [… 1 more; raise head_limit or narrow the search]\n\
         [2 paths skipped: permission rules deny reading them]\n"
    );
}
