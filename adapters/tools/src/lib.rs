//! The built-in tools of cox: `read`, `write`, `edit`, `apply_patch`,
//! `bash`, `glob`, `grep` and `notebook_edit`, and the path confinement every
//! file tool goes through; [`image::prepare`], which makes an image's
//! bytes into one every provider takes (`read` shows images with it); and
//! `web_fetch` ([`WebFetchTool`]), which is no built-in: the CLI adds it
//! with the host gate its sandbox settings make.
//!
//! Invariants every tool here keeps:
//! - input is parsed strictly (`deny_unknown_fields`), and each `spec()`
//!   schema is derived from the input struct it parses (the `schema`
//!   module), so it lists exactly the fields that struct accepts;
//! - a bad input, a refused path, a missing file: each is a failed
//!   [`ToolResult`] whose text tells the model what to do next, never a panic;
//! - file tools touch only paths [`path::confine`] returned, so nothing
//!   outside the workspace roots is read or written, links included;
//! - `classify` decides from the input alone and never fails (`bash` also
//!   looks up folder listings and link targets to resolve the paths a line
//!   names, never file contents);
//! - long work runs off the async runtime and checks the call's cancellation
//!   token as it goes.
//!
//! The schemas are sent to the model on every request, so their descriptions
//! say each tool's contract in a sentence or two and no more (docs/prompt.md
//! lists what each is there for): the six besides `apply_patch` are kept
//! under 2,375 bytes of JSON, `apply_patch` under 360 more, `web_fetch`
//! under 450, and the built-ins' bytes are those of the golden request
//! bodies.
//!
//! [`ToolResult`]: cox_protocol::types::ToolResult

mod apply_patch;
mod bash;
mod common;
mod edit;
mod glob;
mod grep;
pub mod image;
pub mod notebook;
pub mod path;
mod read;
mod schema;
mod shell_paths;
pub mod shells;
mod walk;
pub mod web_fetch;
mod write;

use std::sync::Arc;

use cox_protocol::Tool;

pub use apply_patch::ApplyPatchTool;
pub use bash::{BashTool, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, SessionBashTool};
pub use edit::EditTool;
pub use glob::{GlobTool, MAX_FILES};
pub use grep::{DEFAULT_HEAD_LIMIT, GrepTool};
pub use notebook::NotebookEditTool;
pub use read::{DEFAULT_LIMIT, ReadTool};
pub use web_fetch::{FetchLimits, HostGate, WebFetchTool};
pub use write::WriteTool;

/// Every built-in tool, in the order they are listed to the model.
#[must_use]
pub fn builtin_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ReadTool),
        Arc::new(WriteTool),
        Arc::new(EditTool),
        Arc::new(ApplyPatchTool),
        Arc::new(BashTool),
        Arc::new(GlobTool),
        Arc::new(GrepTool),
        Arc::new(NotebookEditTool),
    ]
}

/// [`builtin_tools`] with background shells: `bash` starts them in
/// `shells`, and `bash_output` and `kill_shell` read and stop them.
#[must_use]
pub fn session_tools(shells: &Arc<shells::Shells>) -> Vec<Arc<dyn Tool>> {
    let mut tools = builtin_tools();
    for tool in &mut tools {
        if tool.name() == "bash" {
            *tool = Arc::new(SessionBashTool::new(Arc::clone(shells)));
        }
    }
    tools.push(Arc::new(shells::BashOutputTool::new(Arc::clone(shells))));
    tools.push(Arc::new(shells::KillShellTool::new(Arc::clone(shells))));
    tools
}

#[cfg(test)]
mod schema_tests;
