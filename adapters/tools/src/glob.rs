//! `glob`: lists the files whose path matches a pattern.
//!
//! The pattern is matched against each file's path relative to the search
//! root, with `*` stopping at `/` and `**` crossing folders, so `*.rs` means
//! the root's own files and `**/*.rs` all of them. Newest files come first:
//! what the model looks for is most often what was just changed. The list is
//! capped at [`MAX_FILES`] and says how many more there were.
//!
//! Every file and folder the walk meets passes the permission rules first
//! (`ToolContext::rules`): what they close is not listed, and one line at
//! the end says how many paths were skipped (closed folders, and closed
//! files the pattern matches), without naming them.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::ToolResult;
use globset::GlobBuilder;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::common;
use crate::path::confine;
use crate::schema::input_schema;
use crate::walk;

const NAME: &str = "glob";
/// Files listed at most.
pub const MAX_FILES: usize = 200;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    pattern: String,
    path: Option<String>,
}

/// Finds files by a glob pattern.
#[derive(Clone, Copy, Debug, Default)]
pub struct GlobTool;

impl Tool for GlobTool {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "List files matching a glob such as **/*.rs, newest first.".into(),
            input_schema: input_schema::<Input>(),
        }
    }

    fn classify(&self, input: &Value, workspace: &Workspace) -> Classified {
        common::classify_search(input, workspace)
    }

    fn run<'a>(&'a self, input: Value, cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let input: Input = match common::parse(NAME, input) {
                Ok(input) => input,
                Err(result) => return result,
            };
            let raw_root = input.path.as_deref().unwrap_or(".");
            let root = match confine(cx.workspace, raw_root) {
                Ok(root) => root,
                Err(e) => return ToolResult::error(e.to_string()),
            };
            let pattern = input.pattern.strip_prefix("./").unwrap_or(&input.pattern);
            let matcher = match GlobBuilder::new(pattern).literal_separator(true).build() {
                Ok(glob) => glob.compile_matcher(),
                Err(e) => return ToolResult::error(format!("invalid glob pattern: {e}")),
            };
            if !root.exists() {
                return ToolResult::error(format!("{raw_root} does not exist"));
            }
            if !root.is_dir() {
                return ToolResult::error(format!("{raw_root} is not a directory"));
            }
            let workspace = cx.workspace.clone();
            let cancel = cx.cancel.clone();
            let rules = cx.rules;
            common::blocking(move || {
                let Ok(walked) = walk::files(NAME, &root, &workspace.roots, &rules, &cancel) else {
                    return common::cancelled(NAME);
                };
                let matches = |file: &Path| {
                    file.strip_prefix(&root)
                        .is_ok_and(|rel| matcher.is_match(rel))
                };
                let skipped = walked.skipped_note(matches);
                let mut found: Vec<(SystemTime, PathBuf)> = walked
                    .files
                    .into_iter()
                    .filter(|file| matches(file))
                    .map(|file| {
                        let modified = file.metadata().and_then(|m| m.modified());
                        (modified.unwrap_or(SystemTime::UNIX_EPOCH), file)
                    })
                    .collect();
                found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
                list(&found, &common::display_base(&workspace), skipped)
            })
            .await
        })
    }
}

/// The listing, capped, then `skipped` (the line saying the rules closed
/// some paths) when there is one.
fn list(found: &[(SystemTime, PathBuf)], base: &Path, skipped: Option<String>) -> ToolResult {
    if found.is_empty() {
        let none = "no files matched".to_owned();
        return ToolResult::ok(match skipped {
            Some(skipped) => format!("{none}\n{skipped}"),
            None => none,
        });
    }
    let mut lines: Vec<String> = found
        .iter()
        .take(MAX_FILES)
        .map(|(_, file)| common::relative_to(file, base))
        .collect();
    if found.len() > MAX_FILES {
        lines.push(format!(
            "[… {} more files; narrow the pattern]",
            found.len() - MAX_FILES
        ));
    }
    lines.extend(skipped);
    ToolResult::ok(lines.join("\n"))
}
