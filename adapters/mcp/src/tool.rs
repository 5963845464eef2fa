//! One MCP tool as a cox tool.
//!
//! Its name is `mcp__<server>__<tool>` (characters a provider refuses
//! become `_`, a name past 64 is cut and given a hash), its risk comes
//! from trust: a trusted tool is `ReadOnly` when the server called it
//! read-only both when it was trusted and now, `Destructive` when it
//! called it destructive either time, `Exec` otherwise; a pending or
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

/// `mcp__<server>__<tool>`, in the characters providers take; past 64, cut
/// and given a hash of the server and the tool together.
#[must_use]
pub fn tool_name(server: &str, tool: &str) -> String {
    let name = cox_protocol::mcp::tool_name(server, tool);
    if name.len() <= NAME_MAX {
        return name;
    }
    let digest = Definition {
        name: format!("{server}\0{tool}"),
        description: String::new(),
        input_schema: Value::Null,
        read_only: false,
        destructive: false,
    }
    .hash();
    format!("{}_{}", &name[..NAME_MAX - 9], &digest[..8])
}

/// A tool a server lists that cox can offer: its name as the model sees
/// it and its input schema, checked.
pub(crate) struct Usable {
    pub name: String,
    pub schema: Value,
    pub tool: rmcp::model::Tool,
}

/// Why `schema` would be refused by a provider, if it would: the shape of
/// a JSON Schema object a tool's input must have (an object type, an
/// object of object `properties`, a list of names as `required`, types
/// that are type names).
fn schema_fault(schema: &Value) -> Option<String> {
    const TYPES: [&str; 7] = [
        "object", "string", "number", "integer", "boolean", "array", "null",
    ];
    fn check_type(value: &Value) -> Option<String> {
        match value {
            Value::String(t) if TYPES.contains(&t.as_str()) => None,
            Value::Array(ts)
                if ts
                    .iter()
                    .all(|t| t.as_str().is_some_and(|t| TYPES.contains(&t))) =>
            {
                None
            }
            other => Some(format!("{other} is not a type")),
        }
    }
    fn walk(schema: &Value, depth: usize) -> Option<String> {
        if depth > 32 {
            return Some("it nests deeper than 32 levels".into());
        }
        let Value::Object(map) = schema else {
            return match schema {
                Value::Bool(_) => None,
                other => Some(format!("{other} is not a schema")),
            };
        };
        if let Some(t) = map.get("type")
            && let Some(fault) = check_type(t)
        {
            return Some(fault);
        }
        if let Some(props) = map.get("properties") {
            let Value::Object(props) = props else {
                return Some("its properties are not an object".into());
            };
            for (name, prop) in props {
                if let Some(fault) = walk(prop, depth + 1) {
                    return Some(format!("property {name:?}: {fault}"));
                }
            }
        }
        if let Some(required) = map.get("required")
            && !required
                .as_array()
                .is_some_and(|r| r.iter().all(Value::is_string))
        {
            return Some("its required is not a list of names".into());
        }
        if let Some(items) = map.get("items")
            && let Some(fault) = walk(items, depth + 1)
        {
            return Some(format!("items: {fault}"));
        }
        None
    }
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => walk(schema, 0),
        Some(other) => Some(format!("its type is {other}, not \"object\"")),
        None => Some("it has no type".into()),
    }
}

/// The tools of `tools` cox can offer, with a notice for each it cannot:
/// an input schema that is not an object schema, a name another of the
/// server's tools already reads as.
pub(crate) fn usable(
    config: &McpServer,
    tools: Vec<rmcp::model::Tool>,
) -> (Vec<Usable>, Vec<String>) {
    let mut notices = Vec::new();
    let mut kept = Vec::new();
    let mut names = BTreeSet::new();
    for tool in tools {
        let mut schema = Value::Object((*tool.input_schema).clone());
        if schema.get("type").is_none() {
            schema["type"] = Value::from("object");
        }
        if let Some(fault) = schema_fault(&schema) {
            notices.push(format!(
                "MCP server '{}': tool '{}' is left out: its input schema is not a JSON Schema \
                 object ({fault})",
                config.name, tool.name
            ));
            continue;
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
        kept.push(Usable { name, schema, tool });
    }
    (kept, notices)
}

/// The tools of one connected server, the notices about the ones left
/// out, and how many wait for trust.
pub(crate) fn build(
    db: &Db,
    config: &McpServer,
    server: &Arc<Server>,
    tools: Vec<rmcp::model::Tool>,
) -> (Vec<McpTool>, Vec<String>, usize) {
    let (kept, mut notices) = usable(config, tools);
    let definitions: Vec<Definition> = kept.iter().map(|u| Definition::of(&u.tool)).collect();
    let states = match trust::check(db, config, &definitions) {
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
    for ((usable, definition), state) in kept.into_iter().zip(&definitions).zip(states) {
        // The stricter of the hints trusted and the hints served now.
        let risk = match state {
            TrustState::Trusted {
                read_only,
                destructive,
            } => {
                if destructive || definition.destructive {
                    Risk::Destructive
                } else if read_only && definition.read_only {
                    Risk::ReadOnly
                } else {
                    Risk::Exec
                }
            }
            TrustState::Pending | TrustState::Changed { .. } => {
                waiting += 1;
                Risk::Write
            }
        };
        let pending = risk == Risk::Write;
        let spec = if pending {
            ToolSpec {
                name: usable.name.clone(),
                description: pending_sentence(&config.name),
                input_schema: serde_json::json!({"type": "object"}),
            }
        } else {
            ToolSpec {
                name: usable.name.clone(),
                description: usable
                    .tool
                    .description
                    .as_deref()
                    .unwrap_or_default()
                    .to_owned(),
                input_schema: usable.schema,
            }
        };
        out.push(McpTool {
            name: usable.name,
            remote: usable.tool.name.to_string(),
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
        self.call(input, cx)
    }
}

impl McpTool {
    /// The server refused the call for want of `scope` (the login does not
    /// grant it): the next `cox mcp login` asks for it, and the model is
    /// told what the person has to do.
    async fn needs_scope(&self, scope: String) -> ToolResult {
        let name = &self.server.name;
        if let Some(login) = self.server.login.clone()
            && !scope.is_empty()
        {
            let wanted = scope.clone();
            match tokio::task::spawn_blocking(move || login.want(&wanted)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(server = %name, error = %e, "cannot record the scope"),
                Err(e) => tracing::warn!(server = %name, error = %e, "cannot record the scope"),
            }
        }
        let needs = if scope.is_empty() {
            String::new()
        } else {
            format!(" (it needs scope \"{scope}\")")
        };
        ToolResult::error(format!(
            "MCP server '{name}' refused {}: the login does not grant it{needs}; the person \
             can run `cox mcp login {name}` to log in with it, then try again",
            self.remote
        ))
    }

    fn call<'a>(&'a self, input: Value, cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
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
                Ok(Err(e)) => match crate::auth::insufficient_scope(&e) {
                    Some(scope) => self.needs_scope(scope).await,
                    None => ToolResult::error(format!(
                        "MCP server '{}' failed on {}: {e}{}",
                        self.server.name,
                        self.remote,
                        self.server.last_words()
                    )),
                },
                Ok(Ok(result)) => {
                    let value = serde_json::to_value(&result).unwrap_or(Value::Null);
                    let (text, is_error) = crate::render::result(&value);
                    let images = crate::render::images(&value);
                    let bytes = text.len() as u64;
                    if is_error {
                        ToolResult::error(text).with_bytes(bytes)
                    } else {
                        ToolResult::ok(text).with_bytes(bytes)
                    }
                    .with_images(images)
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
        // Cut names of two servers differ: the hash covers both parts.
        let a = tool_name(&"s".repeat(30), &"t".repeat(40));
        let b = tool_name(&"s".repeat(31), &"t".repeat(39));
        assert_ne!(a, b);
    }

    #[test]
    fn schemas_a_provider_would_refuse_are_named() {
        let ok = serde_json::json!({"type": "object", "properties": {"q": {"type": ["string", "null"]}, "n": {"type": "array", "items": {"type": "integer"}}}, "required": ["q"]});
        assert_eq!(schema_fault(&ok), None);
        let bad = [
            (serde_json::json!({"type": "string"}), "not \"object\""),
            (
                serde_json::json!({"type": "object", "properties": {"q": {"type": "strin"}}}),
                "property \"q\"",
            ),
            (
                serde_json::json!({"type": "object", "required": "q"}),
                "required",
            ),
            (
                serde_json::json!({"type": "object", "properties": []}),
                "properties",
            ),
            (
                serde_json::json!({"type": "object", "properties": {"l": {"type": "array", "items": 3}}}),
                "items",
            ),
        ];
        for (schema, says) in bad {
            let fault = schema_fault(&schema).unwrap_or_default();
            assert!(fault.contains(says), "{schema}: {fault}");
        }
    }
}
