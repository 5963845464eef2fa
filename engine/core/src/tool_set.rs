//! The session's tools: a name-sorted list with its schemas computed once.
//!
//! Sorting by name and caching the specs keeps the tool block of every
//! request byte-identical, which is what lets a provider cache the prefix.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use cox_protocol::CallId;
use cox_protocol::provider::ToolSpec;
use cox_protocol::tool::{Classified, Tool, Workspace};
use cox_protocol::types::{Risk, ToolCall};
use serde_json::Value;

/// The tools a session offers the model.
///
/// Past `max_tools`, the schemas of MCP tools (`mcp__…`) are deferred: not
/// sent until the model finds them with `tool_search`, which this set then
/// offers. Finding one changes the tool block once (and so the cached
/// prefix); [`ToolSet::specs`] reports the set as it stands.
#[derive(Clone)]
pub struct ToolSet {
    tools: Vec<Arc<dyn Tool>>,
    specs: Vec<ToolSpec>,
    deferred: BTreeSet<String>,
    found: Arc<Mutex<BTreeSet<String>>>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| t.name()))
            .finish()
    }
}

impl ToolSet {
    /// Sorts the tools by name; a later tool with a name already taken is
    /// dropped. With more than `max_tools`, MCP tools are deferred behind a
    /// `tool_search` tool.
    #[must_use]
    pub fn new(mut tools: Vec<Arc<dyn Tool>>, max_tools: usize) -> Self {
        tools.sort_by(|a, b| a.name().cmp(b.name()));
        tools.dedup_by(|a, b| a.name() == b.name());
        let found = Arc::new(Mutex::new(BTreeSet::new()));
        let mut deferred = BTreeSet::new();
        if tools.len() > max_tools {
            let specs: Vec<ToolSpec> = tools
                .iter()
                .filter(|t| t.name().starts_with("mcp__"))
                .map(|t| t.spec())
                .collect();
            if !specs.is_empty() {
                deferred = specs.iter().map(|s| s.name.clone()).collect();
                let search = crate::own_tools::ToolSearch {
                    deferred: crate::own_tools::Deferred {
                        specs,
                        found: Arc::clone(&found),
                    },
                };
                tools.push(Arc::new(search));
                tools.sort_by(|a, b| a.name().cmp(b.name()));
                tools.dedup_by(|a, b| a.name() == b.name());
            }
        }
        let specs = tools.iter().map(|t| t.spec()).collect();
        Self {
            tools,
            specs,
            deferred,
            found,
        }
    }

    /// The schemas sent with a request, sorted by name: every tool but the
    /// deferred ones not found yet.
    #[must_use]
    pub fn specs(&self) -> Vec<ToolSpec> {
        if self.deferred.is_empty() {
            return self.specs.clone();
        }
        let found = self
            .found
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.specs
            .iter()
            .filter(|s| !self.deferred.contains(&s.name) || found.contains(&s.name))
            .cloned()
            .collect()
    }

    /// How many deferred tools have been found so far.
    #[must_use]
    pub fn found_count(&self) -> usize {
        self.found
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }

    /// The names of the tools deferred behind `tool_search`.
    #[must_use]
    pub fn deferred(&self) -> &BTreeSet<String> {
        &self.deferred
    }

    /// The tool names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.name())
    }

    /// The tool called `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools
            .binary_search_by(|t| t.name().cmp(name))
            .ok()
            .map(|i| &self.tools[i])
    }

    /// Builds the classified call for what the model asked. An unknown tool
    /// is classified `Exec` with its own name as subject; it never runs.
    #[must_use]
    pub fn classify(&self, id: CallId, name: String, input: Value, ws: &Workspace) -> ToolCall {
        let Classified {
            risk,
            subject,
            segments,
        } = match self.get(&name) {
            Some(tool) => tool.classify(&input, ws),
            None => Classified {
                risk: Risk::Exec,
                subject: name.clone(),
                segments: None,
            },
        };
        ToolCall {
            id,
            name,
            input,
            risk,
            subject,
            segments,
        }
    }
}
