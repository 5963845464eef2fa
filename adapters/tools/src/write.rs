//! `write`: creates or replaces a whole file.
//!
//! Missing parent folders are created, because a model writing a new module
//! should not need a `mkdir` round trip. The confined path is what is
//! written; the answer repeats the path as the model gave it, so the model
//! recognises it.

use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::common;
use crate::path::confine_write;
use crate::schema::input_schema;

const NAME: &str = "write";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    path: String,
    content: String,
}

/// Writes a file in the workspace, replacing what was there.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteTool;

impl Tool for WriteTool {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Create a file, or overwrite one whole; to change part of a file, use \
                          edit."
                .into(),
            input_schema: input_schema::<Input>(),
        }
    }

    fn classify(&self, input: &Value, workspace: &Workspace) -> Classified {
        common::classify_path(NAME, Risk::Write, input, workspace)
    }

    fn run<'a>(&'a self, input: Value, cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let input: Input = match common::parse(NAME, input) {
                Ok(input) => input,
                Err(result) => return result,
            };
            let path = match confine_write(cx.workspace, &input.path) {
                Ok(path) => path,
                Err(e) => return ToolResult::error(e.to_string()),
            };
            if let Err(e) = common::still_decided(cx.decided, &input.path, &path) {
                return ToolResult::error(e);
            }
            let raw = &input.path;
            if let Some(parent) = path.parent()
                && let Err(e) = tokio::fs::create_dir_all(parent).await
            {
                return ToolResult::error(format!("could not create the folder for {raw}: {e}"));
            }
            let written = match cx.files {
                // The editor's buffer: the file lands in the editor.
                Some(files) => files.write(&path, &input.content).await,
                None => tokio::fs::write(&path, input.content.as_bytes())
                    .await
                    .map_err(|e| e.to_string()),
            };
            if let Err(e) = written {
                return ToolResult::error(format!("could not write {raw}: {e}"));
            }
            cx.sandbox.wrote(&path);
            let n = input.content.len();
            ToolResult::ok(format!("wrote {n} bytes to {raw}")).with_bytes(n as u64)
        })
    }
}
