//! The session's tools: a name-sorted list with its schemas computed once.
//!
//! Sorting by name and caching the specs keeps the tool block of every
//! request byte-identical, which is what lets a provider cache the prefix.
//! The list holds the adapters' tools and the session's own
//! ([`OwnTool`]): `expand` always, `tool_search` when tools are deferred.
//! Which deferred tools were found is session state, passed in when a
//! request is built; the set itself never changes while a session runs.

use std::collections::BTreeSet;
use std::sync::Arc;

use cox_protocol::CallId;
use cox_protocol::provider::ToolSpec;
use cox_protocol::tool::{Classified, Tool, Workspace};
use cox_protocol::types::{Risk, ToolCall};
use serde_json::Value;

use crate::own_tools::OwnTool;

/// One tool of the set.
#[derive(Clone)]
pub enum Entry {
    /// A tool of the session's own, run by the driver.
    Own(OwnTool),
    /// A tool an adapter provides.
    Tool(Arc<dyn Tool>),
}

impl Entry {
    fn name(&self) -> &str {
        match self {
            Entry::Own(own) => own.name(),
            Entry::Tool(tool) => tool.name(),
        }
    }
}

/// The tools a session offers the model.
///
/// Past `max_tools`, the schemas of MCP tools (`mcp__…`) are deferred: not
/// sent until the model finds them with `tool_search`, which this set then
/// offers. Finding one changes the tool block once (and so the cached
/// prefix); [`ToolSet::specs`] reports the set for the tools found so far.
#[derive(Clone)]
pub struct ToolSet {
    entries: Vec<Entry>,
    specs: Vec<ToolSpec>,
    /// The deferred tools' schemas, for `tool_search`.
    deferred: Vec<ToolSpec>,
    deferred_names: BTreeSet<String>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl ToolSet {
    /// Sorts the tools by name, with `expand`; a later tool with a name
    /// already taken is dropped (an adapter's tool before the session's
    /// own). With more than `max_tools`, MCP tools are deferred behind a
    /// `tool_search` tool.
    #[must_use]
    pub fn new(tools: Vec<Arc<dyn Tool>>, max_tools: usize) -> Self {
        let mut entries: Vec<Entry> = tools.into_iter().map(Entry::Tool).collect();
        entries.push(Entry::Own(OwnTool::Expand));
        entries.push(Entry::Own(OwnTool::Todo));
        sort(&mut entries);
        let mut deferred = Vec::new();
        if entries.len() > max_tools {
            deferred = entries
                .iter()
                .filter_map(|e| match e {
                    Entry::Tool(t) if t.name().starts_with("mcp__") => Some(t.spec()),
                    _ => None,
                })
                .collect();
            if !deferred.is_empty() {
                entries.push(Entry::Own(OwnTool::ToolSearch));
                sort(&mut entries);
            }
        }
        let specs = entries
            .iter()
            .map(|e| match e {
                Entry::Own(own) => own.spec(deferred.len()),
                Entry::Tool(tool) => tool.spec(),
            })
            .collect();
        let deferred_names = deferred.iter().map(|s| s.name.clone()).collect();
        Self {
            entries,
            specs,
            deferred,
            deferred_names,
        }
    }

    /// The schemas sent with a request, sorted by name: every tool but the
    /// deferred ones not in `found`.
    #[must_use]
    pub fn specs(&self, found: &BTreeSet<String>) -> Vec<ToolSpec> {
        if self.deferred.is_empty() {
            return self.specs.clone();
        }
        self.specs
            .iter()
            .filter(|s| !self.deferred_names.contains(&s.name) || found.contains(&s.name))
            .cloned()
            .collect()
    }

    /// The schemas of the tools deferred behind `tool_search`.
    #[must_use]
    pub fn deferred(&self) -> &[ToolSpec] {
        &self.deferred
    }

    /// The adapters' tools.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Tool(tool) => Some(tool),
            Entry::Own(_) => None,
        })
    }

    /// Every tool's name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(Entry::name)
    }

    /// The tool called `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries
            .binary_search_by(|e| e.name().cmp(name))
            .ok()
            .map(|i| &self.entries[i])
    }

    /// Builds the classified call for what the model asked. An unknown tool
    /// is classified `Exec` with its own name as subject; it never runs.
    #[must_use]
    pub fn classify(&self, id: CallId, name: String, input: Value, ws: &Workspace) -> ToolCall {
        let Classified {
            risk,
            subject,
            segments,
            writes,
        } = match self.get(&name) {
            Some(Entry::Tool(tool)) => tool.classify(&input, ws),
            Some(Entry::Own(own)) => own.classify(&input),
            None => Classified {
                risk: Risk::Exec,
                subject: name.clone(),
                segments: None,
                writes: Vec::new(),
            },
        };
        ToolCall {
            id,
            name,
            input,
            risk,
            subject,
            segments,
            writes,
        }
    }
}

/// By name, the first of each name kept (the sort is stable).
fn sort(entries: &mut Vec<Entry>) {
    entries.sort_by(|a, b| a.name().cmp(b.name()));
    entries.dedup_by(|a, b| a.name() == b.name());
}
