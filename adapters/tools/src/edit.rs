//! `edit`: replaces exact text in a file.
//!
//! An edit is only made when it is unambiguous: `old_string` must occur
//! exactly once, or `replace_all` must say every occurrence is meant. Every
//! refusal says why and what to do, because the model's next try depends on
//! it. The file is rewritten in place, so its permissions are kept.

use std::io::ErrorKind;

use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::common;
use crate::path::confine_write;
use crate::schema::input_schema;

const NAME: &str = "edit";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    path: String,
    /// Must be unique unless replace_all
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

/// Replaces exact text in a workspace file.
#[derive(Clone, Copy, Debug, Default)]
pub struct EditTool;

impl Tool for EditTool {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Replace text in a file: old_string must match exactly, whitespace \
                          included; read the file first."
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
            let raw = &input.path;
            if input.old_string.is_empty() {
                return ToolResult::error(
                    "old_string is empty; give the exact text to replace (use write to create a file)",
                );
            }
            if input.old_string == input.new_string {
                return ToolResult::error(
                    "old_string and new_string are the same; there is nothing to change",
                );
            }
            let path = match confine_write(cx.workspace, raw) {
                Ok(path) => path,
                Err(e) => return ToolResult::error(e.to_string()),
            };
            if let Err(e) = common::still_decided(cx.decided, raw, &path) {
                return ToolResult::error(e);
            }
            // An editor's buffer when the surface keeps the files (the
            // disk when it cannot say).
            let buffer = match cx.files {
                Some(files) => files.read(&path).await.ok(),
                None => None,
            };
            let read = match buffer {
                Some(text) => Ok(text.into_bytes()),
                None => tokio::fs::read(&path).await,
            };
            let bytes = match read {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    return ToolResult::error(format!(
                        "file {raw} does not exist; use write to create it"
                    ));
                }
                Err(e) => return ToolResult::error(format!("could not read {raw}: {e}")),
            };
            let Ok(text) = String::from_utf8(bytes) else {
                return ToolResult::error(format!(
                    "{raw} is not UTF-8 text; edit changes text only"
                ));
            };
            let found = text.matches(input.old_string.as_str()).count();
            if found == 0 {
                return ToolResult::error(format!(
                    "old_string was not found in {raw}; read the file and copy the text exactly, \
                     whitespace included"
                ));
            }
            if found > 1 && !input.replace_all {
                return ToolResult::error(format!(
                    "old_string occurs {found} times in {raw}; add more surrounding context to make it \
                     unique, or set replace_all to true"
                ));
            }
            let (updated, replaced) = if input.replace_all {
                (text.replace(&input.old_string, &input.new_string), found)
            } else {
                (text.replacen(&input.old_string, &input.new_string, 1), 1)
            };
            let written = match cx.files {
                Some(files) => files.write(&path, &updated).await,
                None => tokio::fs::write(&path, updated.as_bytes())
                    .await
                    .map_err(|e| e.to_string()),
            };
            if let Err(e) = written {
                return ToolResult::error(format!("could not write {raw}: {e}"));
            }
            ToolResult::ok(format!("edited {raw}: replaced {replaced} occurrence(s)"))
                .with_bytes(updated.len() as u64)
        })
    }
}
