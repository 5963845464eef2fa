//! Session grants: what a person allowed "for this session".
//!
//! A grant is as narrow as what was approved. For a shell line that splits
//! cleanly, each command gets its own grant, so approving
//! `git status && npm test` later covers `npm test` alone, and never
//! `npm test; rm -rf ~` (the `rm` is not covered). An opaque line is granted
//! only as the exact line approved. Any other call is granted for its tool
//! and exact subject; one that writes several files (`apply_patch`), for its
//! tool and each of those paths, as the engine decides it path by path.

use cox_protocol::types::ToolCall;

use crate::rule::{collapse, normalise_tool};

/// One thing allowed for the rest of the session.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Grant {
    /// A non-shell tool on exactly this subject.
    Call { tool: String, subject: String },
    /// One shell command, as the split wrote it.
    Command(String),
    /// One whole opaque shell line, whitespace-collapsed.
    Line(String),
}

impl Grant {
    /// The grants "allow for this session" records for `call`.
    #[must_use]
    pub fn for_call(call: &ToolCall) -> Vec<Grant> {
        if normalise_tool(&call.name) != "bash" {
            let subjects = crate::engine::paths_apart(call).unwrap_or_else(|| vec![&call.subject]);
            return subjects
                .into_iter()
                .map(|subject| Grant::Call {
                    tool: call.name.clone(),
                    subject: subject.clone(),
                })
                .collect();
        }
        match &call.segments {
            Some(split) if split.opaque.is_none() && !split.commands.is_empty() => {
                split.commands.iter().cloned().map(Grant::Command).collect()
            }
            _ => vec![Grant::Line(collapse(&call.subject))],
        }
    }

    /// Whether this grant covers a non-shell call.
    pub(crate) fn covers_call(&self, call: &ToolCall) -> bool {
        matches!(self, Grant::Call { tool, subject } if *tool == call.name && *subject == call.subject)
    }
}
