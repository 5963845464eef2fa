//! Session grants: what a person allowed "for this session".
//!
//! A grant is as narrow as what was approved. For a shell line that splits
//! cleanly, each command gets its own grant, so approving
//! `git status && npm test` later covers `npm test` alone, and never
//! `npm test; rm -rf ~` (the `rm` is not covered). An opaque line is granted
//! only as the exact line approved. Any other call is granted for its tool
//! and exact subject; one that writes several files (`apply_patch`), for its
//! tool and each of those paths, as the engine decides it path by path. A
//! `web_fetch` call is granted for its URL's host (and the hosts below it,
//! as a `WebFetch(domain:…)` rule reads): "allow for this session" on a
//! page of docs.rs lets the model read docs.rs, not the web.

use cox_protocol::types::ToolCall;

use crate::rule::{collapse, domain_covers, normalise_tool, url_host};

/// One thing allowed for the rest of the session.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Grant {
    /// A non-shell tool on exactly this subject.
    Call { tool: String, subject: String },
    /// One shell command, as the split wrote it.
    Command(String),
    /// One whole opaque shell line, whitespace-collapsed.
    Line(String),
    /// `web_fetch` on this host and those below it.
    Domain(String),
}

impl Grant {
    /// The grants "allow for this session" records for `call`.
    #[must_use]
    pub fn for_call(call: &ToolCall) -> Vec<Grant> {
        if normalise_tool(&call.name) == "webfetch" {
            return match url_host(&call.subject) {
                Some(host) => vec![Grant::Domain(host)],
                None => vec![Grant::Call {
                    tool: call.name.clone(),
                    subject: call.subject.clone(),
                }],
            };
        }
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
        match self {
            Grant::Call { tool, subject } => *tool == call.name && *subject == call.subject,
            Grant::Domain(domain) => {
                normalise_tool(&call.name) == "webfetch"
                    && url_host(&call.subject).is_some_and(|host| domain_covers(domain, &host))
            }
            Grant::Command(_) | Grant::Line(_) => false,
        }
    }
}
