//! How a call is classified before it is decided (its risk and subject),
//! by tool name and without a session, for `cox permissions check`.
//!
//! Each name goes to the `classify` the session's own tool of that name
//! runs: the built-in file and shell tools, the background-shell tools,
//! `web_fetch`, `memory`, `agent`, `skill` and the session's own (`todo`,
//! `expand`, `tool_search`). An MCP tool's risk comes from its server's
//! hints once trusted (a pending one is a write that answers without
//! running); without a session to connect, it is taken as `exec`, what a
//! trusted tool without hints is. Any other name is `exec` with its name
//! as subject, as the session classifies a call to a tool it does not have.
//!
//! `tool_search` and `skill` are classified as the session's own would be
//! where it has them (only when tools are deferred, or skills found); a
//! session without them refuses the call as a tool it does not have.
//!
//! Invariant: a name the session knows is never classified here any other
//! way than the session does (`bins/cox/tests/permissions.rs` runs every
//! tool both ways).

use std::sync::Arc;

use cox_protocol::tool::{Classified, Tool, Workspace};
use cox_protocol::types::Risk;
use serde_json::Value;

/// The call's risk and subject, as a session here would have them.
/// `sandbox` is the session's (the shell tools classify against it).
#[must_use]
pub fn classify(
    name: &str,
    input: &Value,
    workspace: &Workspace,
    sandbox: &cox_sandbox::SandboxPolicy,
) -> Classified {
    if let Some(own) = cox_core::own_tools::OwnTool::named(name) {
        return own.classify(input);
    }
    let shells =
        cox_tools::shells::Shells::new(Arc::new(cox_sandbox::OsSandbox::new(sandbox.clone())));
    let mut tools: Vec<Arc<dyn Tool>> = cox_tools::session_tools(&shells);
    tools.push(Arc::new(cox_tools::WebFetchTool::new(
        Arc::new(|_: &str| Ok(())),
        cox_tools::FetchLimits::default(),
    )));
    if let Some(tool) = tools.iter().find(|t| t.name() == name) {
        return tool.classify(input, workspace);
    }
    match name {
        crate::ext::agent_tool::NAME => crate::ext::agent_tool::classify_input(input),
        "memory" => crate::ext::memory::classify_input(input),
        "skill" => Classified {
            risk: Risk::ReadOnly,
            subject: input
                .get("skill")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            segments: None,
            writes: Vec::new(),
        },
        _ => Classified {
            risk: Risk::Exec,
            subject: input
                .get("repo")
                .and_then(Value::as_str)
                .map_or_else(|| name.to_owned(), str::to_owned),
            segments: None,
            writes: Vec::new(),
        },
    }
}
