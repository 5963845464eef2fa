//! The session's tools: a name-sorted list with its schemas computed once.
//!
//! Sorting by name and caching the specs keeps the tool block of every
//! request byte-identical, which is what lets a provider cache the prefix.

use std::sync::Arc;

use cox_protocol::CallId;
use cox_protocol::provider::ToolSpec;
use cox_protocol::tool::{Classified, Tool, Workspace};
use cox_protocol::types::{Risk, ToolCall};
use serde_json::Value;

/// The tools a session offers the model.
#[derive(Clone)]
pub struct ToolSet {
    tools: Vec<Arc<dyn Tool>>,
    specs: Vec<ToolSpec>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|t| t.name()))
            .finish()
    }
}

impl ToolSet {
    /// Sorts the tools by name; a later tool with a name already taken is dropped.
    #[must_use]
    pub fn new(mut tools: Vec<Arc<dyn Tool>>) -> Self {
        tools.sort_by(|a, b| a.name().cmp(b.name()));
        tools.dedup_by(|a, b| a.name() == b.name());
        let specs = tools.iter().map(|t| t.spec()).collect();
        Self { tools, specs }
    }

    /// The schemas, sorted by name.
    #[must_use]
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
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
