//! The MCP client of the `cox` binary: `cox-mcp` behind the command
//! line's [`McpClient`] edge, so `cox-headless` carries none of it.

use cox_cli::mcp::{
    ConnectContext, Connected, McpClient, McpServer, ServerReport, ToolReport, ToolTrust,
};
use cox_protocol::provider::BoxFuture;

/// Connects servers with `cox-mcp`.
pub(crate) struct Client;

fn options(cx: ConnectContext) -> cox_mcp::Options {
    cox_mcp::Options {
        home: cx.home,
        cwd: cx.cwd,
        sandbox: cx.sandbox,
        deadline: cx.deadline,
        call_timeout: cx.call_timeout,
    }
}

impl McpClient for Client {
    fn connect<'a>(
        &'a self,
        servers: Vec<McpServer>,
        cx: ConnectContext,
    ) -> BoxFuture<'a, Connected> {
        Box::pin(cox_mcp::connect(servers, options(cx)))
    }

    fn inspect<'a>(
        &'a self,
        servers: Vec<McpServer>,
        cx: ConnectContext,
    ) -> BoxFuture<'a, Vec<ServerReport>> {
        Box::pin(cox_mcp::inspect(servers, options(cx)))
    }

    fn trust<'a>(
        &'a self,
        server: McpServer,
        cx: ConnectContext,
    ) -> BoxFuture<'a, Result<Vec<ToolReport>, String>> {
        Box::pin(async move {
            let trusted = cox_mcp::trust_server(&server, &options(cx)).await?;
            Ok(trusted
                .into_iter()
                .map(|d| ToolReport {
                    name: d.name,
                    description: d.description,
                    input_schema: d.input_schema,
                    trust: ToolTrust::Trusted,
                })
                .collect())
        })
    }
}
