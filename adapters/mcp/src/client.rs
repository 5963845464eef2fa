//! cox as an MCP client, to each server: who it is (`clientInfo`: cox and
//! its version), and what it does when the server says its tools changed
//! (`notifications/tools/list_changed`): it lists them again, puts each
//! through trust again (a changed definition waits for the person, as at
//! connect), and sends the server's whole new set to the session, which
//! offers it from the next turn.
//!
//! It offers the workspace's roots (`roots/list`: each root folder as a
//! `file://` URI), which servers such as the reference file system server
//! take as the folders they serve.
//!
//! A session's servers may ask the person for input (elicitation, forms
//! only): the ask goes to the session, which says it to the person, and
//! their answer comes back.
//!
//! Invariants: nothing else is offered to servers (no sampling: a server
//! cannot spend the person's model; no elicitation by URL); a change from a server that is gone, or whose trust cannot
//! be read, is a notice and no tools, never an error of the session.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use cox_protocol::mcp::{Change, Elicitation, McpServer, ServerChanged};
use cox_protocol::tool::Tool;
use cox_protocol::types::ElicitAnswer;
use futures::channel::mpsc::UnboundedSender;
use rmcp::model::{ClientConfig, Implementation};
use rmcp::service::NotificationContext;

use crate::Server;

/// Where a server's changed tools go, and what building them needs.
pub(crate) struct Changes {
    pub(crate) config: McpServer,
    pub(crate) home: cox_store::CoxHome,
    /// The connection, once it is made and its first listing is in
    /// `known` (the handler exists first).
    pub(crate) phase: Mutex<Phase>,
    pub(crate) to: UnboundedSender<ServerChanged>,
    /// The hashes of the definitions the session has now: a notification
    /// that changes none of them changes nothing (some servers send one
    /// as they start).
    pub(crate) known: std::sync::Mutex<Vec<String>>,
    /// The session's prompts, once made: a server's changed prompts go
    /// there.
    pub(crate) expander: std::sync::OnceLock<Weak<crate::prompts::McpExpander>>,
}

/// Where a server's connection is, for a change it says.
#[derive(Default)]
pub(crate) enum Phase {
    #[default]
    Connecting,
    /// Still connecting, and a change was said meanwhile: the first
    /// listing may predate it, so it is taken again.
    ChangedWhileConnecting,
    Live(Weak<Server>),
}

/// The sorted hashes of `tools`' definitions.
pub(crate) fn hashes(tools: &[rmcp::model::Tool]) -> Vec<String> {
    let mut out: Vec<String> = tools
        .iter()
        .map(|t| crate::trust::Definition::of(t).hash())
        .collect();
    out.sort();
    out
}

/// The handler every server connection runs with.
#[derive(Clone, Default)]
pub(crate) struct CoxClient {
    pub(crate) changes: Option<Arc<Changes>>,
    /// The workspace's roots, offered to a server that asks (`roots/list`);
    /// none: the capability is not offered.
    pub(crate) roots: Arc<[PathBuf]>,
    /// Where a server's asks for input go (the session, which says them
    /// to the person); none: elicitation is not offered.
    pub(crate) asks: Option<UnboundedSender<Elicitation>>,
}

/// Each field of `schema` the answer leaves out and the schema gives a
/// default is sent as that default (the form showed it filled in).
fn with_defaults(
    content: &mut serde_json::Map<String, serde_json::Value>,
    schema: &serde_json::Value,
) {
    let Some(properties) = schema["properties"].as_object() else {
        return;
    };
    for (name, property) in properties {
        if let Some(default) = property.get("default").filter(|d| !d.is_null())
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
}

/// `path` as a `file://` URI, each byte outside the unreserved set and `/`
/// percent-encoded.
fn file_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt as _;
    let mut out = String::from("file://");
    for &byte in path.as_os_str().as_bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

impl CoxClient {
    /// A handler that follows no changes and offers `roots`.
    pub(crate) fn offering(roots: &[PathBuf]) -> Self {
        Self {
            changes: None,
            roots: roots.into(),
            asks: None,
        }
    }

    /// The tools the server has now, built and trusted as at connect.
    async fn relist(&self, peer: &rmcp::Peer<rmcp::RoleClient>) -> Option<ServerChanged> {
        let changes = self.changes.as_ref()?;
        let name = changes.config.name.clone();
        let server = {
            let mut phase = changes
                .phase
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match &*phase {
                Phase::Live(server) => server.upgrade()?,
                // Still connecting: the listing is taken again once the
                // first is recorded.
                _ => {
                    *phase = Phase::ChangedWhileConnecting;
                    return None;
                }
            }
        };
        let listed = match peer.list_all_tools().await {
            Ok(listed) => listed,
            Err(e) => {
                return Some(ServerChanged {
                    server: name.clone(),
                    change: Change::Nothing,
                    notices: vec![format!(
                        "MCP server '{name}' said its tools changed, but listing them failed: {e}"
                    )],
                });
            }
        };
        {
            let mut known = changes
                .known
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let now = hashes(&listed);
            if *known == now {
                return None;
            }
            *known = now;
        }
        let db = match cox_store::Db::open(&changes.home.db_path()) {
            Ok(db) => db,
            Err(e) => {
                return Some(ServerChanged {
                    server: name.clone(),
                    change: Change::Nothing,
                    notices: vec![format!(
                        "MCP server '{name}' changed its tools, which are left out: their trust \
                         cannot be read: {e}"
                    )],
                });
            }
        };
        let (tools, notices, _) = crate::tool::build(&db, &changes.config, &server, listed);
        Some(ServerChanged {
            server: name,
            change: Change::Tools(
                tools
                    .into_iter()
                    .map(|t| Arc::new(t) as Arc<dyn Tool>)
                    .collect(),
            ),
            notices,
        })
    }
}

impl CoxClient {
    /// The server said its tools changed: those that differ go to the
    /// session.
    async fn changed(&self, peer: &rmcp::Peer<rmcp::RoleClient>) {
        if let Some(changed) = self.relist(peer).await
            && let Some(changes) = &self.changes
        {
            tracing::info!(server = %changed.server, "mcp tools changed");
            let _ = changes.to.unbounded_send(changed);
        }
    }

    /// The connection is made and its first listing recorded: from now on
    /// a change is listed again. True when one was said while connecting,
    /// so the first listing may predate it and is to be taken again.
    pub(crate) fn published(&self, server: &Arc<Server>) -> bool {
        let Some(changes) = &self.changes else {
            return false;
        };
        let before = std::mem::replace(
            &mut *changes
                .phase
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            Phase::Live(Arc::downgrade(server)),
        );
        matches!(before, Phase::ChangedWhileConnecting)
    }

    /// The session's prompts are in `expander`: a server's changed prompts
    /// go there from now on.
    pub(crate) fn serving(&self, expander: &Arc<crate::prompts::McpExpander>) {
        if let Some(changes) = &self.changes {
            let _ = changes.expander.set(Arc::downgrade(expander));
        }
    }

    /// The server said its prompts changed: they are listed again and
    /// offered from now on (a prompt is text the person sends, so it needs
    /// no trust), and the session is told its commands changed.
    async fn prompts_changed(&self, peer: &rmcp::Peer<rmcp::RoleClient>) {
        let Some(changes) = &self.changes else {
            return;
        };
        let Some(expander) = changes.expander.get().and_then(Weak::upgrade) else {
            return;
        };
        let server = match &*changes
            .phase
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
        {
            Phase::Live(server) => server.upgrade(),
            _ => None,
        };
        let Some(server) = server else {
            return;
        };
        let name = changes.config.name.clone();
        let changed = match peer.list_all_prompts().await {
            Ok(prompts) => {
                let resources = peer
                    .peer_info()
                    .is_some_and(|info| info.capabilities.resources.is_some());
                ServerChanged {
                    change: Change::Prompts(expander.replace_prompts(&server, prompts, resources)),
                    server: name,
                    notices: Vec::new(),
                }
            }
            Err(e) => ServerChanged {
                notices: vec![format!(
                    "MCP server '{name}' said its prompts changed, but listing them failed: {e}"
                )],
                server: name,
                change: Change::Nothing,
            },
        };
        let _ = changes.to.unbounded_send(changed);
    }

    /// Records `tools` as what the session is given.
    pub(crate) fn listed(&self, tools: &[rmcp::model::Tool]) {
        if let Some(changes) = &self.changes {
            *changes
                .known
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = hashes(tools);
        }
    }
}

impl rmcp::ClientHandler for CoxClient {
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        config.client_info = Implementation::new("cox", env!("CARGO_PKG_VERSION"));
        // The `initialize` handshake names the newest revision that has
        // one; the stateless revision is asked by `server/discover`.
        config.protocol_version = rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE;
        if !self.roots.is_empty() {
            config.capabilities.roots = Some(rmcp::model::RootsCapabilities::default());
        }
        if self.asks.is_some() {
            config.capabilities.elicitation = Some(
                rmcp::model::ElicitationCapability::new()
                    .with_form(rmcp::model::FormElicitationCapability::new()),
            );
        }
        config
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        use rmcp::model::{ElicitResult, ElicitationAction};
        let server = self
            .changes
            .as_ref()
            .map(|c| c.config.name.clone())
            .unwrap_or_default();
        let rmcp::model::ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            // Only forms are offered.
            tracing::info!(%server, "mcp elicitation by URL declined");
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let Some(asks) = &self.asks else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let (reply, answer) = futures::channel::oneshot::channel();
        let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
        let ask = Elicitation {
            server: server.clone(),
            message,
            schema: schema.clone(),
            reply,
        };
        if asks.unbounded_send(ask).is_err() {
            return Ok(ElicitResult::new(ElicitationAction::Cancel));
        }
        // An ask the session dropped (its calls ended) is a cancel.
        Ok(match answer.await {
            Ok(ElicitAnswer::Accept { mut content }) => {
                with_defaults(&mut content, &schema);
                ElicitResult::new(ElicitationAction::Accept).with_content(content.into())
            }
            Ok(ElicitAnswer::Decline) => ElicitResult::new(ElicitationAction::Decline),
            Ok(ElicitAnswer::Cancel) | Err(_) => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    // Roots are deprecated by the newest revision, and still what servers
    // of the older ones (the reference file system server) ask for.
    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        Ok(rmcp::model::ListRootsResult::new(
            self.roots
                .iter()
                .map(|root| {
                    let name = root
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_else(|| root.display().to_string());
                    rmcp::model::Root::new(file_uri(root)).with_name(name)
                })
                .collect(),
        ))
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<rmcp::RoleClient>) {
        self.changed(&context.peer).await;
    }

    async fn on_prompt_list_changed(&self, context: NotificationContext<rmcp::RoleClient>) {
        self.prompts_changed(&context.peer).await;
    }
}

#[cfg(test)]
mod tests {
    use super::file_uri;
    use std::path::Path;

    #[test]
    fn an_accepted_form_is_sent_with_the_defaults_it_left_out() {
        let schema = serde_json::json!({"properties": {
            "name": {"type": "string"},
            "tone": {"type": "string", "default": "warm"},
            "count": {"type": "integer", "default": 3},
        }});
        let mut content = serde_json::Map::new();
        content.insert("name".into(), "Ada".into());
        content.insert("count".into(), 9.into());
        super::with_defaults(&mut content, &schema);
        assert_eq!(
            serde_json::Value::Object(content),
            serde_json::json!({"name": "Ada", "tone": "warm", "count": 9})
        );
    }

    #[test]
    fn a_root_is_a_file_uri_with_its_odd_bytes_encoded() {
        assert_eq!(file_uri(Path::new("/home/a/proj")), "file:///home/a/proj");
        assert_eq!(
            file_uri(Path::new("/tmp/my dir/ü#?")),
            "file:///tmp/my%20dir/%C3%BC%23%3F"
        );
    }
}
