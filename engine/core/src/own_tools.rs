//! Tools the session itself provides, because they read its own state:
//! `expand` (an archived output, whole or by lines) and `tool_search` (the
//! schemas of tools that were deferred to keep the tool list short).
//!
//! Both are read-only and reach nothing outside the session: `expand` goes
//! through the `Archive` trait, `tool_search` through the shared set of
//! discovered tool names the tool set consults when a request is built.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use cox_protocol::Archive;
use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use serde_json::{Value, json};

/// Reads an archived output back, for the model.
pub struct ExpandTool<A> {
    pub archive: Arc<A>,
}

/// The most one `expand` call returns; the model pages with `lines`.
const EXPAND_LIMIT: usize = 64 * 1024;

impl<A: Archive + 'static> Tool for ExpandTool<A> {
    fn name(&self) -> &str {
        "expand"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "expand".into(),
            description: "Read an archived tool output (`#<id>` in an earlier result) whole, or lines from..to (1-based, inclusive); 64 KiB at a time, continuing at `offset` bytes.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "from": {"type": "integer", "minimum": 1},
                    "to": {"type": "integer", "minimum": 1},
                    "offset": {"type": "integer", "minimum": 0}
                },
                "required": ["id"],
                "additionalProperties": false
            }),
        }
    }

    fn classify(&self, input: &Value, _workspace: &Workspace) -> Classified {
        let id = input["id"]
            .as_str()
            .unwrap_or_default()
            .trim_start_matches('#');
        Classified {
            risk: Risk::ReadOnly,
            subject: format!("#{id}"),
            segments: None,
        }
    }

    fn run<'a>(&'a self, input: Value, _cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move { self.expand(&input) })
    }
}

impl<A: Archive> ExpandTool<A> {
    fn expand(&self, input: &Value) -> ToolResult {
        let Some(id) = input["id"]
            .as_str()
            .map(|i| i.trim().trim_start_matches('#'))
        else {
            return ToolResult::error("expand needs an `id`, e.g. {\"id\": \"01J9…\"}");
        };
        let bytes = match self.archive.get(id) {
            Ok(bytes) => bytes,
            Err(err) => return ToolResult::error(err.to_string()),
        };
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let total = lines.len();
        let from = input["from"]
            .as_u64()
            .map_or(1, |n| usize::try_from(n).unwrap_or(usize::MAX));
        let to = input["to"]
            .as_u64()
            .map_or(total, |n| usize::try_from(n).unwrap_or(usize::MAX));
        if from == 0 || from > total || to < from {
            return ToolResult::error(format!(
                "#{id} has {total} lines; lines {from}–{to} are not in it"
            ));
        }
        let to = to.min(total);
        // The lines asked for, then at most EXPAND_LIMIT bytes of them from
        // `offset` on (at character boundaries), so even one enormous line
        // can be read piece by piece.
        let selected: String = lines[from - 1..to].concat();
        let offset = input["offset"]
            .as_u64()
            .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
        if offset > selected.len() {
            return ToolResult::error(format!(
                "lines {from}–{to} of #{id} are {} bytes; offset {offset} is past them",
                selected.len()
            ));
        }
        let mut start = offset;
        while !selected.is_char_boundary(start) {
            start += 1;
        }
        let mut end = (start + EXPAND_LIMIT).min(selected.len());
        while !selected.is_char_boundary(end) {
            end -= 1;
        }
        let mut out = selected[start..end].to_owned();
        if end < selected.len() {
            out.push_str(&format!(
                "\n[… {} more bytes of lines {from}–{to}: ask again with offset {end}]\n",
                selected.len() - end
            ));
        }
        let mut result = ToolResult::ok(out);
        result.bytes = Some(bytes.len() as u64);
        result
    }
}

/// The tools whose schemas are not sent until found.
#[derive(Clone, Debug, Default)]
pub struct Deferred {
    /// Name, description and schema of each deferred tool.
    pub specs: Vec<ToolSpec>,
    /// Names found so far; shared with the tool set.
    pub found: Arc<Mutex<BTreeSet<String>>>,
}

impl Deferred {
    /// The names found so far.
    #[must_use]
    pub fn found(&self) -> BTreeSet<String> {
        self.found
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Finds deferred tools by words of their names and descriptions; the
/// ones it returns are sent with every request from then on.
pub struct ToolSearch {
    pub deferred: Deferred,
}

impl Tool for ToolSearch {
    fn name(&self) -> &str {
        "tool_search"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "tool_search".into(),
            description: format!(
                "Find tools not listed yet ({} more exist, e.g. from MCP servers) by words of their name or purpose; the ones found become callable.",
                self.deferred.specs.len()
            ),
            input_schema: json!({
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
                "additionalProperties": false
            }),
        }
    }

    fn classify(&self, input: &Value, _workspace: &Workspace) -> Classified {
        Classified {
            risk: Risk::ReadOnly,
            subject: input["query"].as_str().unwrap_or_default().to_owned(),
            segments: None,
        }
    }

    fn run<'a>(&'a self, input: Value, _cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let query = input["query"].as_str().unwrap_or_default().to_lowercase();
            let words: Vec<&str> = query.split_whitespace().collect();
            if words.is_empty() {
                return ToolResult::error("tool_search needs a `query`");
            }
            let mut hits: Vec<(usize, &ToolSpec)> = self
                .deferred
                .specs
                .iter()
                .map(|spec| {
                    let haystack = format!("{} {}", spec.name, spec.description).to_lowercase();
                    (
                        words.iter().filter(|w| haystack.contains(**w)).count(),
                        spec,
                    )
                })
                .filter(|(score, _)| *score > 0)
                .collect();
            hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.name.cmp(&b.1.name)));
            hits.truncate(5);
            if hits.is_empty() {
                return ToolResult::ok(format!("no tool matches `{query}`"));
            }
            let mut found = self
                .deferred
                .found
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let mut out = String::from("These tools can be called now:\n");
            for (_, spec) in hits {
                found.insert(spec.name.clone());
                out.push_str(&format!(
                    "- {}: {}\n  input schema: {}\n",
                    spec.name, spec.description, spec.input_schema
                ));
            }
            ToolResult::ok(out)
        })
    }
}
