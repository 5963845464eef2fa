//! The MCP client of the `cox` binary: `cox-mcp` behind the command
//! line's [`McpClient`] edge, so `cox-headless` carries none of it.

use std::path::Path;
use std::time::Duration;

use cox_cli::mcp::{
    ConnectContext, Connected, McpClient, McpServer, ServerReport, ToolReport, ToolTrust, Transport,
};
use cox_protocol::provider::BoxFuture;

/// How long `cox mcp login` waits for the browser to come back.
const LOGIN_WAIT: Duration = Duration::from_secs(300);

/// The client metadata document `MCP_OAUTH_CLIENT_METADATA_URL` names (as
/// in Claude Code), which must be an `https://` URL with a path.
///
/// # Errors
/// A value that is not such a URL.
fn client_metadata_url(value: Option<String>) -> Result<Option<String>, String> {
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let fine = value
        .strip_prefix("https://")
        .and_then(|rest| rest.split_once('/'))
        .is_some_and(|(host, path)| !host.is_empty() && !path.is_empty());
    if fine {
        Ok(Some(value))
    } else {
        Err(format!(
            "MCP_OAUTH_CLIENT_METADATA_URL: {value:?} is not an https:// URL with a path"
        ))
    }
}

/// Connects servers with `cox-mcp`.
pub(crate) struct Client;

fn options(cx: ConnectContext) -> cox_mcp::Options {
    cox_mcp::Options {
        home: cx.home,
        cwd: cx.cwd,
        sandbox: cx.sandbox,
        deadline: cx.deadline,
        call_timeout: cx.call_timeout,
        roots: cx.roots,
        asks: cx.asks,
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

    fn connect_each(
        &self,
        servers: Vec<McpServer>,
        cx: ConnectContext,
    ) -> (Connected, futures::stream::BoxStream<'static, Connected>) {
        cox_mcp::connect_each(servers, options(cx))
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

    fn login<'a>(
        &'a self,
        server: McpServer,
        cx: ConnectContext,
        show: &'a (dyn Fn(&str) + Sync),
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let Transport::Http { url, headers } = &server.transport else {
                return Err(format!(
                    "MCP server '{}' is not an HTTP server; only those log in",
                    server.name
                ));
            };
            let document =
                client_metadata_url(std::env::var("MCP_OAUTH_CLIENT_METADATA_URL").ok())?;
            cox_mcp::auth::login(
                &server.name,
                (url, headers),
                server.oauth.as_ref(),
                &cox_mcp::auth::Login {
                    home: cx.home.root(),
                    show,
                    wait: LOGIN_WAIT,
                    client_metadata_url: document.as_deref(),
                },
            )
            .await
        })
    }

    fn login_status(&self, home: &Path, server: &McpServer) -> String {
        match &server.transport {
            Transport::Http { url, .. } => cox_mcp::auth::TokenFile::new(home, &server.name, url)
                .status()
                .to_string(),
            _ => "none (not an HTTP server)".to_owned(),
        }
    }

    fn keep_client_secret(
        &self,
        home: &Path,
        name: &str,
        url: &str,
        secret: &str,
    ) -> Result<String, String> {
        cox_mcp::auth::keep_client_secret(home, name, url, secret)
    }

    fn forget_client_secret(&self, home: &Path, name: &str) -> Result<bool, String> {
        cox_mcp::auth::forget_client_secret(home, name)
    }

    fn logout(&self, home: &Path, server: &McpServer) -> Result<bool, String> {
        match &server.transport {
            Transport::Http { url, .. } => {
                cox_mcp::auth::TokenFile::new(home, &server.name, url).forget()
            }
            _ => Ok(false),
        }
    }

    fn login_store(&self, home: &Path) -> String {
        cox_mcp::auth::backend(home)
    }

    fn may_start(&self, home: &Path, server: &McpServer) -> Result<bool, String> {
        let db = cox_store::Db::open(&home.join("cox.db")).map_err(|e| e.to_string())?;
        cox_mcp::trust::may_start(&db, server)
    }
}

#[cfg(test)]
mod tests {
    use super::client_metadata_url;

    #[test]
    fn a_client_metadata_document_is_an_https_url_with_a_path() {
        let url = "https://example.com/cox/client.json";
        assert_eq!(client_metadata_url(Some(url.into())), Ok(Some(url.into())));
        assert_eq!(client_metadata_url(None), Ok(None));
        assert_eq!(client_metadata_url(Some(String::new())), Ok(None));
        for bad in [
            "http://example.com/a.json",
            "https://example.com/",
            "https://example.com",
            "example.com/a",
        ] {
            let e = client_metadata_url(Some(bad.into())).unwrap_err();
            assert!(e.starts_with("MCP_OAUTH_CLIENT_METADATA_URL: "), "{e}");
        }
    }
}
