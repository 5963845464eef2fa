//! What a write, an edit or a patch does to its files, shown before it is
//! approved and after it ran.
//!
//! The runner reads the file a call names as the call is requested, before
//! it can run (the session emits `ToolCallRequested` while the model
//! streams; calls run after), and hands what it found here as a [`Read`].
//! This module is pure: it turns the call and that read into a [`Preview`]:
//! - an edit: the whole file before and after the replacement, diffed, so
//!   the line numbers and the context lines are the file's own;
//! - a write over a file: the file's content against the new one; a write
//!   of a new file: every line an addition.
//!
//! Fail soft: when the file could not be read, or the edit's `old_string`
//! is not in it once (the tool will refuse the call), the preview still
//! shows `old_string` → `new_string` (or the written content), numbered
//! from 1, with a note saying why the numbers are not the file's. A
//! resumed session's calls have no read at all, and say so the same way.
//! Two edits of one file in one message are both read before either runs,
//! so the second one's numbers are those of the file before the first.
//!
//! An `apply_patch` call needs no read: its patch (`patch`, or its alias
//! `input`) already says what changes, and is drawn as written, file by
//! file ([`Diff::patch`]); one that does not parse shows its raw text.

use cox_protocol::types::ToolCall;
use serde_json::Value;

use crate::diff::Diff;
use crate::sanitize::sanitize;

/// The most of a file the runner reads for a preview.
pub const MAX_READ: u64 = 4 * 1024 * 1024;

/// What the runner found at the path a write or an edit names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Read {
    /// The file's text.
    Text(String),
    /// Nothing is there.
    Missing,
    /// It could not be used: why (too big, not UTF-8, an I/O error).
    Failed(String),
}

/// What a call does to its file, worked out once.
#[derive(Clone, Debug, PartialEq)]
pub struct Preview {
    pub diff: Diff,
    /// Why the line numbers or the comparison are not the file's, when
    /// they are not; drawn dim under the diff's header.
    pub note: Option<String>,
}

/// True when a call of this tool gets a preview worked out from the file
/// it names, so the runner reads that file (an `apply_patch` preview needs
/// none).
#[must_use]
pub fn wants_file(call: &ToolCall) -> bool {
    matches!(call.name.as_str(), "edit" | "write")
}

/// The preview of `call`, from `read` (`None`: the file was not read).
/// `None` for a call that has no preview.
#[must_use]
pub fn preview(call: &ToolCall, read: Option<&Read>) -> Option<Preview> {
    let input = &call.input;
    let text = |key: &str| input.get(key).and_then(Value::as_str).unwrap_or_default();
    match call.name.as_str() {
        "edit" => Some(edit(
            text("old_string"),
            text("new_string"),
            input.get("replace_all").and_then(Value::as_bool) == Some(true),
            read,
        )),
        "write" => Some(write(text("content"), read)),
        "apply_patch" => {
            let patch = input
                .get("patch")
                .or_else(|| input.get("input"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            Some(Preview {
                diff: Diff::patch(patch),
                note: None,
            })
        }
        _ => None,
    }
}

fn edit(old: &str, new: &str, replace_all: bool, read: Option<&Read>) -> Preview {
    let why = match read {
        Some(Read::Text(file)) if !old.is_empty() => {
            let found = file.matches(old).count();
            match found {
                0 => "old_string is not in the file as it is now".to_owned(),
                n if n > 1 && !replace_all => {
                    format!("old_string occurs {n} times in the file; the tool will refuse it")
                }
                _ => {
                    let after = if replace_all {
                        file.replace(old, new)
                    } else {
                        file.replacen(old, new, 1)
                    };
                    return Preview {
                        diff: Diff::change(file, &after),
                        note: None,
                    };
                }
            }
        }
        Some(Read::Text(_)) => "old_string is empty".to_owned(),
        Some(Read::Missing) => "the file does not exist".to_owned(),
        Some(Read::Failed(why)) => format!("the file could not be read ({})", sanitize(why)),
        None => "the file was not read".to_owned(),
    };
    Preview {
        diff: Diff::change(old, new),
        note: Some(format!("line numbers count from old_string: {why}")),
    }
}

fn write(content: &str, read: Option<&Read>) -> Preview {
    match read {
        Some(Read::Text(file)) => Preview {
            diff: Diff::change(file, content),
            note: None,
        },
        Some(Read::Missing) => Preview {
            diff: Diff::new_file(content),
            note: None,
        },
        Some(Read::Failed(why)) => Preview {
            diff: Diff::content(content),
            note: Some(format!(
                "not compared with the file: it could not be read ({})",
                sanitize(why)
            )),
        },
        None => Preview {
            diff: Diff::content(content),
            note: Some("not compared with the file: it was not read".to_owned()),
        },
    }
}

#[cfg(test)]
mod tests;
