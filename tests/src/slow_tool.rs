//! A read-only test tool that waits before it answers, so a test can make
//! calls finish in a different order than the model asked for them. It
//! records the order in which calls finished.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use serde_json::{Value, json};

/// `slow_echo { text, delay_ms }`: waits, then returns `text`.
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
            description: "Waits delay_ms, then returns text.".into(),
            input_schema: json!({"type": "object", "properties": {
                "text": {"type": "string"}, "delay_ms": {"type": "integer"}},
                "required": ["text", "delay_ms"], "additionalProperties": false}),
        }
    }

    fn classify(&self, input: &Value, _: &Workspace) -> Classified {
        let subject = input["text"].as_str().unwrap_or_default().to_owned();
        Classified {
            risk: Risk::ReadOnly,
            subject,
            segments: None,
        }
    }

    fn run<'a>(&'a self, input: Value, cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let text = input["text"].as_str().unwrap_or_default().to_owned();
            let delay = Duration::from_millis(input["delay_ms"].as_u64().unwrap_or(0));
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = cx.cancel.cancelled() => return ToolResult::error("cancelled"),
            }
            self.finished.lock().expect("log").push(text.clone());
            ToolResult::ok(text)
        })
    }
}
