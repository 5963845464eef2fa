//! A read-only test tool that answers only after another call of it has
//! finished, so a test can make calls finish in a chosen order that differs
//! from the order the model asked for them. If the calls did not run at the
//! same time, a call would wait for one that never starts: the wait gives up
//! after ten seconds with an error, and the test fails instead of hanging.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use serde_json::{Value, json};

/// `slow_echo { text, wait_for? }`: waits until the call whose text is
/// `wait_for` has finished, then returns `text`.
#[derive(Default)]
pub struct SlowEcho {
    /// The `text` of each call, in the order the calls finished.
    pub finished: Arc<Mutex<Vec<String>>>,
}

impl Tool for SlowEcho {
    fn name(&self) -> &str {
        "slow_echo"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "slow_echo".into(),
            description: "Waits for another call to finish, then returns text.".into(),
            input_schema: json!({"type": "object", "properties": {
                "text": {"type": "string"}, "wait_for": {"type": "string"}},
                "required": ["text"], "additionalProperties": false}),
        }
    }

    fn classify(&self, input: &Value, _: &Workspace) -> Classified {
        let subject = input["text"].as_str().unwrap_or_default().to_owned();
        Classified {
            risk: Risk::ReadOnly,
            subject,
            segments: None,
            writes: Vec::new(),
        }
    }

    fn run<'a>(&'a self, input: Value, cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let text = input["text"].as_str().unwrap_or_default().to_owned();
            if let Some(wait_for) = input["wait_for"].as_str() {
                let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
                while !self
                    .finished
                    .lock()
                    .expect("log")
                    .iter()
                    .any(|t| t == wait_for)
                {
                    if tokio::time::Instant::now() > deadline {
                        return ToolResult::error(format!("{wait_for} never finished"));
                    }
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(2)) => {}
                        () = cx.cancel.cancelled() => return ToolResult::error("cancelled"),
                    }
                }
            }
            self.finished.lock().expect("log").push(text.clone());
            ToolResult::ok(text)
        })
    }
}
