//! `bash` through the real process sandbox: the answer's shape for every way
//! a command can end, and the chunks streamed while it runs.

mod common;

use std::time::{Duration, Instant};

use common::{Fixture, assert_error};
use cox_protocol::tool::OutputSink;
use cox_protocol::{CallId, CancelToken};
use cox_tools::BashTool;
use serde_json::json;

#[tokio::test]
async fn a_clean_exit_is_ok_and_shows_both_streams() {
    let fx = Fixture::new();
    let result = fx
        .run(&BashTool, json!({"command": "echo out; echo err >&2"}))
        .await;
    assert!(result.ok, "{result:?}");
    assert_eq!(result.visible, "out\nerr\n");
    assert_eq!(result.bytes, Some(8));
}

#[tokio::test]
async fn it_runs_in_the_working_folder() {
    let fx = Fixture::new();
    fx.file("marker.txt", "");
    let result = fx.run(&BashTool, json!({"command": "pwd; ls"})).await;
    assert_eq!(
        result.visible,
        format!("{}\nmarker.txt\n", fx.root.display())
    );
}

#[tokio::test]
async fn silence_is_said_rather_than_left_empty() {
    let fx = Fixture::new();
    let result = fx.run(&BashTool, json!({"command": "true"})).await;
    assert!(result.ok);
    assert_eq!(
        (result.visible.as_str(), result.bytes),
        ("(no output)", Some(0))
    );
}

#[tokio::test]
async fn a_failing_exit_code_is_the_last_line() {
    let fx = Fixture::new();
    let result = fx
        .run(&BashTool, json!({"command": "printf 'no newline'; exit 3"}))
        .await;
    assert!(!result.ok);
    assert_eq!(result.visible, "no newline\n[exit code 3]");
    let result = fx.run(&BashTool, json!({"command": "exit 1"})).await;
    assert_eq!(result.visible, "[exit code 1]");
}

#[tokio::test]
async fn a_signal_is_reported() {
    let fx = Fixture::new();
    let result = fx
        .run(&BashTool, json!({"command": "echo before; kill -9 $$"}))
        .await;
    assert!(!result.ok);
    assert_eq!(result.visible, "before\n[killed by signal 9]");
}

#[tokio::test]
async fn a_timeout_ends_the_command_and_says_so() {
    let fx = Fixture::new();
    let start = Instant::now();
    let result = fx
        .run(
            &BashTool,
            json!({"command": "echo waiting; sleep 20", "timeout_ms": 500}),
        )
        .await;
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(!result.ok);
    assert_eq!(result.visible, "waiting\n[timed out after 500 ms]");
}

#[tokio::test]
async fn cancellation_ends_the_command_and_says_so() {
    let fx = Fixture::new();
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let start = Instant::now();
    let sink = OutputSink::discard(CallId::from("t"));
    let result = fx
        .run_with(&BashTool, json!({"command": "sleep 20"}), cancel, sink)
        .await;
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(!result.ok);
    assert_eq!(result.visible, "[cancelled]");
}

#[tokio::test]
async fn long_output_comes_back_whole_for_the_core_to_archive() {
    let fx = Fixture::new();
    let command = "printf 'HEAD'; head -c 39992 /dev/zero | tr '\\0' x; printf 'TAIL'";
    let result = fx.run(&BashTool, json!({"command": command})).await;
    assert!(result.ok);
    assert_eq!(result.bytes, Some(40_000));
    assert_eq!(result.visible.len(), 40_000);
    assert!(result.visible.starts_with("HEADxxx") && result.visible.ends_with("xxxTAIL"));
}

#[tokio::test]
async fn output_streams_to_the_sink_as_it_arrives() {
    let fx = Fixture::new();
    let (tx, mut rx) = futures::channel::mpsc::unbounded();
    let sink = OutputSink::new(CallId::from("c7"), tx);
    let command = "echo one; sleep 0.2; echo two";
    let result = fx
        .run_with(
            &BashTool,
            json!({"command": command}),
            CancelToken::new(),
            sink,
        )
        .await;
    let mut streamed = String::new();
    while let Ok((call_id, chunk)) = rx.try_recv() {
        assert_eq!(call_id, CallId::from("c7"));
        streamed.push_str(&chunk);
    }
    assert_eq!(streamed, "one\ntwo\n");
    assert_eq!(result.visible, streamed);
}

#[tokio::test]
async fn a_background_job_does_not_hold_the_answer() {
    let fx = Fixture::new();
    let start = Instant::now();
    let result = fx
        .run(&BashTool, json!({"command": "sleep 100 & echo started"}))
        .await;
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(result.visible, "started\n");
}

#[tokio::test]
async fn input_that_does_not_fit_the_schema_is_refused() {
    let fx = Fixture::new();
    assert_error(
        &fx.run(&BashTool, json!({"cmd": "ls"})).await,
        &["invalid input for bash: unknown field `cmd`"],
    );
    let wrong = fx
        .run(&BashTool, json!({"command": "ls", "timeout_ms": "10s"}))
        .await;
    assert_error(
        &wrong,
        &["invalid input for bash: invalid type: string \"10s\""],
    );
}
