//! Background shells through the real process sandbox: `bash` with
//! `run_in_background` answers at once, `bash_output` returns only what is
//! new (filtered when asked) and how the shell stands, `kill_shell` stops
//! it, an interrupt or the session's end stops them all, and an unknown id
//! is a result the model can read.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Fixture, assert_error};
use cox_protocol::Tool;
use cox_protocol::types::ToolResult;
use cox_sandbox::ProcessSandbox;
use cox_tools::shells::{BashOutputTool, Ended, KillShellTool, Shells};
use cox_tools::{BashTool, SessionBashTool};
use serde_json::json;

struct Set {
    fx: Fixture,
    shells: Arc<Shells>,
    bash: SessionBashTool,
    output: BashOutputTool,
    kill: KillShellTool,
}

impl Set {
    fn new() -> Self {
        let shells = Shells::new(Arc::new(ProcessSandbox::new()));
        Self {
            fx: Fixture::new(),
            bash: SessionBashTool::new(Arc::clone(&shells)),
            output: BashOutputTool::new(Arc::clone(&shells)),
            kill: KillShellTool::new(Arc::clone(&shells)),
            shells,
        }
    }

    async fn start(&self, command: &str) -> String {
        let result = self
            .fx
            .run(
                &self.bash,
                json!({"command": command, "run_in_background": true}),
            )
            .await;
        assert!(result.ok, "{result:?}");
        result
            .visible
            .split_whitespace()
            .find(|w| w.starts_with("bash_"))
            .unwrap()
            .trim_end_matches(';')
            .to_owned()
    }

    async fn read(&self, id: &str) -> ToolResult {
        self.fx.run(&self.output, json!({"id": id})).await
    }

    /// Reads until the shell has ended, gathering what it printed.
    async fn read_to_end(&self, id: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut all = String::new();
        loop {
            let result = self.read(id).await;
            assert!(result.ok, "{result:?}");
            all.push_str(&result.visible);
            if !result.visible.contains("is still running") {
                return all;
            }
            all.push('\n');
            assert!(Instant::now() < deadline, "{id} never ended: {all}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test]
async fn a_background_shell_answers_at_once_and_its_output_is_read_in_parts() {
    let set = Set::new();
    let began = Instant::now();
    let id = set
        .start("echo one; sleep 0.4; echo two; sleep 0.4; echo three; exit 3")
        .await;
    assert!(
        began.elapsed() < Duration::from_millis(300),
        "it did not wait"
    );
    assert_eq!(id, "bash_1");
    let all = set.read_to_end(&id).await;
    // Each line came once, in order, however the reads fell.
    let lines: Vec<&str> = all.lines().filter(|l| !l.starts_with('[')).collect();
    assert_eq!(lines, ["one", "two", "three"], "{all}");
    assert!(all.ends_with("[bash_1 exited with code 3]"), "{all}");
    // Nothing new after the end.
    let again = set.read(&id).await;
    assert_eq!(
        again.visible,
        "[no new output]\n[bash_1 exited with code 3]"
    );
}

#[tokio::test]
async fn a_filter_keeps_only_matching_lines_and_consumes_the_rest() {
    let set = Set::new();
    let id = set
        .start("echo 'ok 1'; echo 'error: boom'; echo 'ok 2'")
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let result = set
        .fx
        .run(&set.output, json!({"id": id, "filter": "^error"}))
        .await;
    assert!(result.ok, "{result:?}");
    assert!(result.visible.starts_with("error: boom\n"), "{result:?}");
    assert!(!result.visible.contains("ok 1"));
    let after = set.read(&id).await;
    assert!(after.visible.starts_with("[no new output]"), "{after:?}");
    let bad = set
        .fx
        .run(&set.output, json!({"id": id, "filter": "("}))
        .await;
    assert_error(&bad, &["filter is not a valid regex"]);
}

#[tokio::test]
async fn kill_shell_stops_it_and_says_so() {
    let set = Set::new();
    let id = set.start("echo started; sleep 60").await;
    let killed = set.fx.run(&set.kill, json!({"id": id})).await;
    assert!(killed.ok, "{killed:?}");
    assert_eq!(killed.visible, format!("killed {id}"));
    let info = &set.shells.list()[0];
    assert_eq!(info.ended, Some(Ended::Killed));
    let read = set.read_to_end(&id).await;
    assert!(read.ends_with("[bash_1 was killed]"), "{read}");
    let twice = set.fx.run(&set.kill, json!({"id": id})).await;
    assert_error(&twice, &["bash_1 had already ended"]);
}

#[tokio::test]
async fn an_interrupt_and_the_session_end_stop_every_shell() {
    let set = Set::new();
    let a = set.start("sleep 60").await;
    let b = set.start("sleep 60").await;
    assert_eq!((a.as_str(), b.as_str()), ("bash_1", "bash_2"));
    set.bash.interrupted();
    let deadline = Instant::now() + Duration::from_secs(5);
    while set.shells.list().iter().any(|s| s.ended.is_none()) {
        assert!(Instant::now() < deadline, "{:?}", set.shells.list());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let c = set.start("sleep 60").await;
    set.bash.session_ended();
    let read = set.read_to_end(&c).await;
    assert!(read.ends_with("[bash_3 was killed]"), "{read}");
}

#[tokio::test]
async fn an_unknown_id_names_the_shells_there_are() {
    let set = Set::new();
    let none = set.read("bash_9").await;
    assert_error(&none, &["no background shell bash_9: none was started"]);
    let id = set.start("true").await;
    let wrong = set.fx.run(&set.kill, json!({"id": "bash_7"})).await;
    assert_error(&wrong, &["no background shell bash_7", &id]);
}

#[tokio::test]
async fn a_background_shell_honours_its_timeout() {
    let set = Set::new();
    let result = set
        .fx
        .run(
            &set.bash,
            json!({"command": "sleep 30", "run_in_background": true, "timeout_ms": 200}),
        )
        .await;
    assert!(result.ok, "{result:?}");
    let read = set.read_to_end("bash_1").await;
    assert!(read.ends_with("[bash_1 timed out]"), "{read}");
}

#[tokio::test]
async fn a_foreground_only_bash_refuses_the_flag() {
    let fx = Fixture::new();
    let result = fx
        .run(
            &BashTool,
            json!({"command": "echo x", "run_in_background": true}),
        )
        .await;
    assert_error(&result, &["background shells are not available here"]);
}

#[tokio::test]
async fn without_the_flag_the_session_bash_runs_in_the_foreground() {
    let set = Set::new();
    let result = set.fx.run(&set.bash, json!({"command": "echo here"})).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(result.visible, "here\n");
    assert!(set.shells.list().is_empty());
}

#[tokio::test]
async fn no_more_than_sixteen_run_at_once() {
    let set = Set::new();
    for _ in 0..cox_tools::shells::MAX_RUNNING {
        set.start("sleep 60").await;
    }
    let over = set
        .fx
        .run(
            &set.bash,
            json!({"command": "sleep 60", "run_in_background": true}),
        )
        .await;
    assert_error(&over, &["16 background shells are running", "kill_shell"]);
    let killed = set.fx.run(&set.kill, json!({"id": "bash_1"})).await;
    assert!(killed.ok, "{killed:?}");
    set.start("true").await;
    set.bash.session_ended();
}
