//! A read-only test tool with any name and description that echoes its
//! input: stands in for the many tools an MCP server adds, so tool
//! deferral and `tool_search` can be tested before MCP exists.

use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use serde_json::{Value, json};

/// `mcp__<server>__<tool>`-style tools: answers `called <name> with <input>`.
pub struct NamedTool {
    pub name: String,
    pub description: String,
}

impl Tool for NamedTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.clone(),
            description: self.description.clone(),
            input_schema: json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        }
    }

    fn classify(&self, _input: &Value, _: &Workspace) -> Classified {
        Classified {
            risk: Risk::ReadOnly,
            subject: self.name.clone(),
            segments: None,
            writes: Vec::new(),
        }
    }

    fn run<'a>(&'a self, input: Value, _cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move { ToolResult::ok(format!("called {} with {input}", self.name)) })
    }
}
