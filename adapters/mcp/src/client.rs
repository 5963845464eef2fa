//! cox as an MCP client, to each server: who it is (`clientInfo`: cox and
//! its version), and what it does when the server says its tools changed
//! (`notifications/tools/list_changed`): it lists them again, puts each
//! through trust again (a changed definition waits for the person, as at
//! connect), and sends the server's whole new set to the session, which
//! offers it from the next turn.
//!
//! Invariants: nothing is offered to servers beyond the defaults (no
//! sampling: a server cannot spend the person's model; elicitation is
//! declined); a change from a server that is gone, or whose trust cannot
//! be read, is a notice and no tools, never an error of the session.

use std::sync::{Arc, Mutex, Weak};

use cox_protocol::mcp::{McpServer, ToolsChanged};
use cox_protocol::tool::Tool;
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
    pub(crate) to: UnboundedSender<ToolsChanged>,
    /// The hashes of the definitions the session has now: a notification
    /// that changes none of them changes nothing (some servers send one
    /// as they start).
    pub(crate) known: std::sync::Mutex<Vec<String>>,
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
}

impl CoxClient {
    /// The tools the server has now, built and trusted as at connect.
    async fn relist(&self, peer: &rmcp::Peer<rmcp::RoleClient>) -> Option<ToolsChanged> {
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
                return Some(ToolsChanged {
                    server: name.clone(),
                    tools: Vec::new(),
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
                return Some(ToolsChanged {
                    server: name.clone(),
                    tools: Vec::new(),
                    notices: vec![format!(
                        "MCP server '{name}' changed its tools, which are left out: their trust \
                         cannot be read: {e}"
                    )],
                });
            }
        };
        let (tools, notices, _) = crate::tool::build(&db, &changes.config, &server, listed);
        Some(ToolsChanged {
            server: name,
            tools: tools
                .into_iter()
                .map(|t| Arc::new(t) as Arc<dyn Tool>)
                .collect(),
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
            tracing::info!(server = %changed.server, tools = changed.tools.len(), "mcp tools changed");
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
        config
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<rmcp::RoleClient>) {
        self.changed(&context.peer).await;
    }
}
