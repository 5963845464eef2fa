//! `grep`: searches file contents with a regular expression.
//!
//! Lines are matched one at a time (a line ending, `\r` included, is not part
//! of the line), so `^` and `$` mean the start and end of a line and a match
//! never spans two lines. Binary files are skipped, as `rg` does. Results are
//! in file-name order and capped at `head_limit` entries, with the number
//! left out said, so a broad pattern costs a bounded answer.
//!
//! A `glob` filter with a `/` is matched against the path relative to the
//! search root; one without is matched against the file name alone, so
//! `*.rs` means Rust files at any depth.
//!
//! Every file and folder the walk meets passes the permission rules first
//! (`ToolContext::rules`): what they close is never opened, and one line at
//! the end says how many paths were skipped (closed folders, and closed
//! files the `glob` filter would have searched), without naming them.

use std::fmt::Write as _;
use std::path::Path;

use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::ToolResult;
use globset::{GlobBuilder, GlobMatcher};
use regex::bytes::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::common;
use crate::path::confine;
use crate::schema::input_schema;
use crate::walk;

const NAME: &str = "grep";
/// Entries shown when the call gives no `head_limit`.
pub const DEFAULT_HEAD_LIMIT: usize = 100;

/// What each result entry is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = crate::schema::names_only)]
pub(crate) enum OutputMode {
    /// One path per matching file.
    #[default]
    FilesWithMatches,
    /// `path:line:text` per matching line.
    Content,
    /// `path:N` per matching file.
    Count,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    pattern: String,
    path: Option<String>,
    /// File filter, e.g. *.rs
    glob: Option<String>,
    #[serde(default)]
    case_insensitive: bool,
    #[serde(default)]
    output_mode: OutputMode,
    head_limit: Option<usize>,
}

/// Searches file contents by regular expression.
#[derive(Clone, Copy, Debug, Default)]
pub struct GrepTool;

impl Tool for GrepTool {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Search file contents with a regex, line by line: files in name \
                          order (output_mode: content for the lines, count per file)."
                .into(),
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
            let limit = input.head_limit.unwrap_or(DEFAULT_HEAD_LIMIT);
            if limit == 0 {
                return ToolResult::error("head_limit must be at least 1");
            }
            let regex = match RegexBuilder::new(&input.pattern)
                .case_insensitive(input.case_insensitive)
                .build()
            {
                Ok(regex) => regex,
                Err(e) => return ToolResult::error(format!("invalid regex: {e}")),
            };
            let filter = match input.glob.as_deref().map(FileFilter::new).transpose() {
                Ok(filter) => filter,
                Err(e) => return ToolResult::error(format!("invalid glob filter: {e}")),
            };
            let raw_root = input.path.as_deref().unwrap_or(".");
            let root = match confine(cx.workspace, raw_root) {
                Ok(root) => root,
                Err(e) => return ToolResult::error(e.to_string()),
            };
            if !root.exists() {
                return ToolResult::error(format!("{raw_root} does not exist"));
            }
            let workspace = cx.workspace.clone();
            let cancel = cx.cancel.clone();
            let rules = cx.rules;
            common::blocking(move || {
                let Ok(walked) = walk::files(NAME, &root, &workspace.roots, &rules, &cancel) else {
                    return common::cancelled(NAME);
                };
                let base = common::display_base(&workspace);
                let mut found = Found::new(limit);
                for file in &walked.files {
                    if cancel.is_cancelled() {
                        return common::cancelled(NAME);
                    }
                    if wanted(&filter, &root, file) {
                        search_file(
                            file,
                            &common::relative_to(file, &base),
                            &regex,
                            input.output_mode,
                            &mut found,
                        );
                    }
                }
                found.finish(walked.skipped_note(|file| wanted(&filter, &root, file)))
            })
            .await
        })
    }
}

/// Whether the `glob` argument, if any, lets `file` be searched.
fn wanted(filter: &Option<FileFilter>, root: &Path, file: &Path) -> bool {
    filter.as_ref().is_none_or(|f| f.matches(root, file))
}

/// The `glob` argument, compiled.
struct FileFilter {
    matcher: GlobMatcher,
    /// Matched against the whole relative path, not just the file name.
    by_path: bool,
}

impl FileFilter {
    fn new(glob: &str) -> Result<Self, globset::Error> {
        let matcher = GlobBuilder::new(glob)
            .literal_separator(true)
            .build()?
            .compile_matcher();
        Ok(Self {
            matcher,
            by_path: glob.contains('/'),
        })
    }

    fn matches(&self, root: &Path, file: &Path) -> bool {
        if self.by_path {
            file.strip_prefix(root)
                .is_ok_and(|rel| self.matcher.is_match(rel))
        } else {
            file.file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        }
    }
}

/// The entries kept so far, and how many there were in all.
struct Found {
    shown: String,
    limit: usize,
    total: usize,
}

impl Found {
    fn new(limit: usize) -> Self {
        Self {
            shown: String::new(),
            limit,
            total: 0,
        }
    }

    fn push(&mut self, entry: std::fmt::Arguments<'_>) {
        self.total += 1;
        if self.total <= self.limit {
            let _ = writeln!(self.shown, "{entry}");
        }
    }

    /// The result: the entries, what the cap left out, and `skipped` (the
    /// line saying the rules closed some paths), each on its own line.
    fn finish(mut self, skipped: Option<String>) -> ToolResult {
        if self.total == 0 {
            return ToolResult::ok(match skipped {
                Some(skipped) => format!("no matches\n{skipped}"),
                None => "no matches".to_owned(),
            });
        }
        if self.total > self.limit {
            let more = self.total - self.limit;
            let _ = writeln!(
                self.shown,
                "[… {more} more; raise head_limit or narrow the search]"
            );
        }
        if let Some(skipped) = skipped {
            let _ = writeln!(self.shown, "{skipped}");
        }
        ToolResult::ok(self.shown)
    }
}

/// Adds one file's entries; unreadable and binary files add none.
fn search_file(file: &Path, shown_as: &str, regex: &Regex, mode: OutputMode, found: &mut Found) {
    let Ok(bytes) = std::fs::read(file) else {
        return;
    };
    if common::looks_binary(&bytes) {
        return;
    }
    let mut count = 0usize;
    for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !regex.is_match(line) {
            continue;
        }
        count += 1;
        match mode {
            OutputMode::FilesWithMatches => break,
            OutputMode::Content => {
                found.push(format_args!(
                    "{shown_as}:{}:{}",
                    index + 1,
                    common::show_line(line)
                ));
            }
            OutputMode::Count => {}
        }
    }
    match mode {
        OutputMode::FilesWithMatches if count > 0 => found.push(format_args!("{shown_as}")),
        OutputMode::Count if count > 0 => found.push(format_args!("{shown_as}:{count}")),
        _ => {}
    }
}
