//! The MCP client of the `cox` binary: `cox-mcp` behind the command
//! line's [`McpClient`] edge, so `cox-headless` carries none of it.

use cox_cli::mcp::{ConnectContext, Connected, McpClient, McpServer};
use cox_protocol::provider::BoxFuture;

/// Connects servers with `cox-mcp`.
pub(crate) struct Client;

impl McpClient for Client {
    fn connect<'a>(
        &'a self,
        servers: Vec<McpServer>,
        cx: ConnectContext,
    ) -> BoxFuture<'a, Connected> {
        Box::pin(cox_mcp::connect(
            servers,
            cox_mcp::Options {
                home: cx.home,
                cwd: cx.cwd,
                sandbox: cx.sandbox,
                deadline: cx.deadline,
                call_timeout: cx.call_timeout,
            },
        ))
    }
}
