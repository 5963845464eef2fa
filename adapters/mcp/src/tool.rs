//! One MCP tool as a cox tool.
//!
//! Its name is `mcp__<server>__<tool>` (characters a provider refuses
//! become `_`, a name past 64 is cut and given a hash), its risk comes
//! from trust: a trusted tool the server calls read-only is `ReadOnly`,
//! one it calls destructive `Destructive`, any other `Exec`; a pending or
//! changed tool is a `Write` whose call answers [`pending`] without
//! reaching the server, and whose description is that sentence alone.

use std::collections::BTreeSet;
use std::sync::Arc;

use cox_protocol::mcp::McpServer;
use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use cox_store::Db;
use serde_json::Value;

use crate::Server;
use crate::trust::{self, Definition, TrustState};

/// The sentence a pending tool shows and answers, `{server}` filled in.
pub const PENDING: &str = "pending trust for mcp server '{server}'; run: cox mcp trust {server}";

/// The sentence for `server`.
#[must_use]
pub fn pending(server: &str) -> String {
    PENDING.replace("{server}", server)
}

/// The longest tool name providers take.
const NAME_MAX: usize = 64;

pub struct McpTool {
    name: String,
    /// The tool's name on its server.
    remote: String,
    server: Arc<Server>,
    spec: ToolSpec,
    risk: Risk,
    pending: bool,
}

/// `mcp__<server>__<tool>`, in the characters providers take.
#[must_use]
pub fn tool_name(server: &str, tool: &str) -> String {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = format!("mcp__{server}__{clean}");
    if name.len() <= NAME_MAX {
        return name;
    }
    let digest = Definition {
        name: tool.to_owned(),
        description: String::new(),
        input_schema: Value::Null,
    }
    .hash();
    format!("{}_{}", &name[..NAME_MAX - 9], &digest[..8])
}

/// The tools of one connected server, the notices about the ones left
/// out, and how many wait for trust.
pub(crate) fn build(
    db: &Db,
    config: &McpServer,
    server: &Arc<Server>,
    tools: Vec<rmcp::model::Tool>,
) -> (Vec<McpTool>, Vec<String>, usize) {
    let mut notices = Vec::new();
    let mut kept = Vec::new();
    let mut names = BTreeSet::new();
    for tool in tools {
        let mut schema = Value::Object((*tool.input_schema).clone());
        match schema.get("type") {
            None => {
                schema["type"] = Value::from("object");
            }
            Some(Value::String(t)) if t == "object" => {}
            Some(other) => {
                notices.push(format!(
                    "MCP server '{}': tool '{}' is left out: its input schema is not a JSON \
                     Schema object (its type is {other})",
                    config.name, tool.name
                ));
                continue;
            }
        }
        let name = tool_name(&config.name, &tool.name);
        if !names.insert(name.clone()) {
            notices.push(format!(
                "MCP server '{}': tool '{}' is left out: its name reads as {name}, which another \
                 of its tools has",
                config.name, tool.name
            ));
            continue;
        }
        kept.push((name, schema, tool));
    }
    let definitions: Vec<Definition> = kept.iter().map(|(_, _, t)| Definition::of(t)).collect();
    let states = match trust::check(
        db,
        &config.name,
        config.origin.kind.trusted_on_first_connect(),
        &definitions,
    ) {
        Ok(states) => states,
        Err(e) => {
            notices.push(format!(
                "MCP server '{}': its trust could not be read ({e}); its tools wait for `cox mcp \
                 trust {}`",
                config.name, config.name
            ));
            vec![TrustState::Pending; definitions.len()]
        }
    };
    let mut out = Vec::new();
    let mut waiting = 0;
    for ((name, schema, tool), state) in kept.into_iter().zip(states) {
        let pending = state != TrustState::Trusted;
        let hints = tool.annotations.as_ref();
        let risk = if pending {
            waiting += 1;
            Risk::Write
        } else if hints.and_then(|a| a.destructive_hint) == Some(true) {
            Risk::Destructive
        } else if hints.and_then(|a| a.read_only_hint) == Some(true) {
            Risk::ReadOnly
        } else {
            Risk::Exec
        };
        let spec = if pending {
            ToolSpec {
                name: name.clone(),
                description: pending_sentence(&config.name),
                input_schema: serde_json::json!({"type": "object"}),
            }
        } else {
            ToolSpec {
                name: name.clone(),
                description: tool.description.as_deref().unwrap_or_default().to_owned(),
                input_schema: schema,
            }
        };
        out.push(McpTool {
            name,
            remote: tool.name.to_string(),
            server: Arc::clone(server),
            spec,
            risk,
            pending,
        });
    }
    (out, notices, waiting)
}

fn pending_sentence(server: &str) -> String {
    pending(server)
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn classify(&self, _input: &Value, _workspace: &Workspace) -> Classified {
        Classified {
            risk: self.risk,
            subject: self.name.clone(),
            segments: None,
            writes: Vec::new(),
        }
    }

    fn run<'a>(&'a self, input: Value, cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            if self.pending {
                return ToolResult::error(pending(&self.server.name));
            }
            let arguments = match input {
                Value::Object(map) => map,
                Value::Null => serde_json::Map::new(),
                other => {
                    return ToolResult::error(format!(
                        "the input of {} must be a JSON object, not {other}",
                        self.name
                    ));
                }
            };
            let params = rmcp::model::CallToolRequestParams::new(self.remote.clone())
                .with_arguments(arguments);
            let call = self.server.service.peer().call_tool(params);
            let answer = tokio::select! {
                answer = tokio::time::timeout(self.server.call_timeout, call) => answer,
                () = cx.cancel.cancelled() => {
                    return ToolResult::error(format!("{} was interrupted", self.name));
                }
            };
            match answer {
                Err(_) => ToolResult::error(format!(
                    "MCP server '{}' did not answer {} within {} s (MCP_TOOL_TIMEOUT sets the bound)",
                    self.server.name,
                    self.remote,
                    self.server.call_timeout.as_secs()
                )),
                Ok(Err(e)) => ToolResult::error(format!(
                    "MCP server '{}' failed on {}: {e}{}",
                    self.server.name,
                    self.remote,
                    self.server.last_words()
                )),
                Ok(Ok(result)) => {
                    let value = serde_json::to_value(&result).unwrap_or(Value::Null);
                    let (text, is_error) = crate::render::result(&value);
                    let bytes = text.len() as u64;
                    if is_error {
                        ToolResult::error(text).with_bytes(bytes)
                    } else {
                        ToolResult::ok(text).with_bytes(bytes)
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_what_providers_take() {
        assert_eq!(tool_name("fs", "read_file"), "mcp__fs__read_file");
        assert_eq!(tool_name("every", "get-sum"), "mcp__every__get-sum");
        assert_eq!(tool_name("s", "a.b/c d"), "mcp__s__a_b_c_d");
        let long = tool_name("server", &"x".repeat(100));
        assert_eq!(long.len(), NAME_MAX);
        assert_ne!(long, tool_name("server", &"x".repeat(99)));
    }
}
