//! The `mcp_trust` table: the MCP tool definitions a person trusted.
//!
//! A row is written when a server from the user's own configuration first
//! connects, and by `cox mcp trust <server>`, which replaces every row of
//! that server with what it serves now. A definition that differs from its
//! row is never written over on its own: that is what keeps a changed tool
//! pending.

use rusqlite::params;

use super::{Db, DbError};

/// One trusted tool definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustedTool {
    pub server: String,
    pub tool: String,
    /// SHA-256 of the name, description and canonical input schema.
    pub hash: String,
    /// The definition as JSON (`name`, `description`, `inputSchema`).
    pub definition: String,
    pub trusted_at: String,
}

impl Db {
    /// Every trusted tool of `server`, by tool name.
    pub fn trusted_tools(&self, server: &str) -> Result<Vec<TrustedTool>, DbError> {
        let conn = self.conn();
        conn.prepare_cached(
            "SELECT server, tool, hash, definition, trusted_at FROM mcp_trust \
             WHERE server = ?1 ORDER BY tool",
        )
        .and_then(|mut stmt| {
            stmt.query_map(params![server], |row| {
                Ok(TrustedTool {
                    server: row.get(0)?,
                    tool: row.get(1)?,
                    hash: row.get(2)?,
                    definition: row.get(3)?,
                    trusted_at: row.get(4)?,
                })
            })?
            .collect()
        })
        .map_err(self.fail(format!("cannot read the trusted tools of {server}")))
    }

    /// Makes `tools` the whole trusted set of `server`, in one transaction.
    pub fn trust_tools(&self, server: &str, tools: &[TrustedTool]) -> Result<(), DbError> {
        let mut conn = self.conn();
        let run = |conn: &mut rusqlite::Connection| -> rusqlite::Result<()> {
            let tx = conn.transaction()?;
            tx.execute("DELETE FROM mcp_trust WHERE server = ?1", params![server])?;
            for tool in tools {
                tx.execute(
                    "INSERT INTO mcp_trust (server, tool, hash, definition, trusted_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![
                        server,
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
