//! Helpers every built-in tool shares: strict input parsing, lenient
//! classification, text clipping, and running blocking work off the runtime.
//!
//! Invariants:
//! - `run` parses strictly (unknown fields refused) so a misspelt argument is
//!   reported, never silently ignored; `classify` reads leniently because it
//!   must answer for any input;
//! - filesystem work that may take long (reads, walks) runs on tokio's
//!   blocking pool, so a tool future never stalls the runtime.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use cox_protocol::tool::{Classified, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::path::confine;

/// Lines longer than this many characters are cut when shown.
pub(crate) const MAX_LINE_CHARS: usize = 2000;

/// How much of a file's head decides whether it is binary.
pub(crate) const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Parses a tool's input, or the result telling the model what was wrong.
pub(crate) fn parse<T: DeserializeOwned>(tool: &str, input: Value) -> Result<T, ToolResult> {
    serde_json::from_value(input)
        .map_err(|e| ToolResult::error(format!("invalid input for {tool}: {e}")))
}

/// A string field of an input that may not parse.
pub(crate) fn str_field<'v>(input: &'v Value, key: &str) -> Option<&'v str> {
    input.get(key).and_then(Value::as_str)
}

/// The confined path when it confines, else the raw one; `fallback` when the
/// input names no path at all.
pub(crate) fn path_subject(raw: Option<&str>, workspace: &Workspace, fallback: &str) -> String {
    match raw {
        Some(raw) => {
            confine(workspace, raw).map_or_else(|_| raw.to_owned(), |p| p.display().to_string())
        }
        None => fallback.to_owned(),
    }
}

/// Classification of a file tool from its `path` field.
pub(crate) fn classify_path(tool: &str, risk: Risk, input: &Value, ws: &Workspace) -> Classified {
    let subject = path_subject(str_field(input, "path"), ws, tool);
    let writes = if risk == Risk::Write && str_field(input, "path").is_some() {
        vec![subject.clone()]
    } else {
        Vec::new()
    };
    Classified {
        risk,
        subject,
        segments: None,
        writes,
    }
}

/// Classification of a search tool, whose subject is its search root.
pub(crate) fn classify_search(input: &Value, ws: &Workspace) -> Classified {
    let subject = path_subject(Some(str_field(input, "path").unwrap_or(".")), ws, ".");
    Classified {
        risk: Risk::ReadOnly,
        subject,
        segments: None,
        writes: Vec::new(),
    }
}

/// True when the bytes look like a binary file (a NUL early on).
pub(crate) fn looks_binary(head: &[u8]) -> bool {
    head[..head.len().min(BINARY_SNIFF_BYTES)].contains(&0)
}

/// One line as text, without its line ending, cut at [`MAX_LINE_CHARS`].
pub(crate) fn show_line(raw: &[u8]) -> Cow<'_, str> {
    let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
    let text = String::from_utf8_lossy(raw);
    let count = text.chars().count();
    if count <= MAX_LINE_CHARS {
        return text;
    }
    let kept: String = text.chars().take(MAX_LINE_CHARS).collect();
    Cow::Owned(format!("{kept} [… line cut: {count} chars]"))
}

/// `path` relative to `base` when it lies under it, else as it is.
pub(crate) fn relative_to(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The folder results are shown relative to: the working folder, as the
/// model uses it, spelt like the canonical paths a walk yields.
pub(crate) fn display_base(workspace: &Workspace) -> PathBuf {
    workspace
        .cwd
        .canonicalize()
        .unwrap_or_else(|_| workspace.cwd.clone())
}

/// Runs `work` on the blocking pool.
pub(crate) async fn blocking<F>(work: F) -> ToolResult
where
    F: FnOnce() -> ToolResult + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| ToolResult::error(format!("the tool failed unexpectedly: {e}")))
}

/// The result of a call stopped by an interrupt.
pub(crate) fn cancelled(tool: &str) -> ToolResult {
    ToolResult::error(format!("{tool} was cancelled"))
}

/// Refuses `path` (as the tool resolved `raw` now) when the call was
/// decided on other paths: a link made or moved since, by an earlier call
/// of the same turn, leads `raw` elsewhere, past what was decided (a deny
/// rule, a protected name). Nothing to compare (`decided` empty): it runs.
pub(crate) fn still_decided(
    decided: &[String],
    raw: &str,
    path: &std::path::Path,
) -> Result<(), String> {
    if decided.is_empty() || decided.iter().any(|d| std::path::Path::new(d) == path) {
        return Ok(());
    }
    Err(format!(
        "{raw} leads to {} now, not where it led when the call was decided ({}): a link was \
         made or moved since; make the call again",
        path.display(),
        decided.join(", ")
    ))
}
