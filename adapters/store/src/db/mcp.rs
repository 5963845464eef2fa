//! The `mcp_trust` table: the MCP tool definitions a person trusted.
//!
//! Rows are kept per server identity (`scope`, a hash of where the server
//! is defined and how it runs). They are written when a server from the
//! user's own configuration first connects, and by `cox mcp trust
//! <server>`, which replaces every row of that identity with what it serves
//! now. A definition that differs from its row is never written over on its
//! own: that is what keeps a changed tool pending.

use rusqlite::params;

use super::{Db, DbError};

/// One trusted tool definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustedTool {
    pub server: String,
    /// The server's identity: where it is defined and how it runs.
    pub scope: String,
    /// Empty for the row that lets a project's server start.
    pub tool: String,
    /// SHA-256 of the name, description and canonical input schema.
    pub hash: String,
    /// The definition as JSON (`name`, `description`, `inputSchema`).
    pub definition: String,
    pub trusted_at: String,
}

impl Db {
    /// Every trusted row of `server` as `scope` identifies it, by tool.
    pub fn trusted_tools(&self, server: &str, scope: &str) -> Result<Vec<TrustedTool>, DbError> {
        let conn = self.conn();
        conn.prepare_cached(
            "SELECT server, scope, tool, hash, definition, trusted_at FROM mcp_trust \
             WHERE server = ?1 AND scope = ?2 ORDER BY tool",
        )
        .and_then(|mut stmt| {
            stmt.query_map(params![server, scope], |row| {
                Ok(TrustedTool {
                    server: row.get(0)?,
                    scope: row.get(1)?,
                    tool: row.get(2)?,
                    hash: row.get(3)?,
                    definition: row.get(4)?,
                    trusted_at: row.get(5)?,
                })
            })?
            .collect()
        })
        .map_err(self.fail(format!("cannot read the trusted tools of {server}")))
    }

    /// Makes `tools` the whole trusted set of `server` as `scope`
    /// identifies it, in one transaction.
    pub fn trust_tools(
        &self,
        server: &str,
        scope: &str,
        tools: &[TrustedTool],
    ) -> Result<(), DbError> {
        let mut conn = self.conn();
        let run = |conn: &mut rusqlite::Connection| -> rusqlite::Result<()> {
            let tx = conn.transaction()?;
            tx.execute(
                "DELETE FROM mcp_trust WHERE server = ?1 AND scope = ?2",
                params![server, scope],
            )?;
            for tool in tools {
                tx.execute(
                    "INSERT OR REPLACE INTO mcp_trust \
                     (server, scope, tool, hash, definition, trusted_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        server,
                        scope,
                        tool.tool,
                        tool.hash,
                        tool.definition,
                        tool.trusted_at
                    ],
                )?;
            }
            tx.commit()
        };
        run(&mut conn).map_err(self.fail(format!("cannot trust the tools of {server}")))
    }
}
