//! The `ext_trust` table: which of a project's (or a plugin's) extensions
//! a person trusted to run.
//!
//! A row is one extension exactly as it was when trusted (its hash); an
//! extension whose hash has no row is pending. Rows are only added (by
//! `cox ext trust`, or the terminal UI's question) and removed by hand:
//! a changed hook simply has a new hash, so its old row keeps nothing
//! alive.

use rusqlite::params;

use super::{Db, DbError};

/// One trusted extension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustedExtension {
    /// Whose it is: a project's folder, or `plugin:<name>:<folder>`.
    pub scope: String,
    /// `hook`.
    pub kind: String,
    pub hash: String,
    /// Its name when it was trusted (`project:PreToolUse:1`), to list.
    pub label: String,
    pub trusted_at: String,
}

impl Db {
    /// The hashes of `kind` trusted in `scope`.
    pub fn trusted_extensions(&self, scope: &str, kind: &str) -> Result<Vec<String>, DbError> {
        let conn = self.conn();
        conn.prepare_cached("SELECT hash FROM ext_trust WHERE scope = ?1 AND kind = ?2")
            .and_then(|mut stmt| {
                stmt.query_map(params![scope, kind], |row| row.get(0))?
                    .collect()
            })
            .map_err(self.fail(format!("cannot read the trusted extensions of {scope}")))
    }

    /// Records `rows` as trusted, in one transaction.
    pub fn trust_extensions(&self, rows: &[TrustedExtension]) -> Result<(), DbError> {
        let mut conn = self.conn();
        let run = |conn: &mut rusqlite::Connection| -> rusqlite::Result<()> {
            let tx = conn.transaction()?;
            for row in rows {
                tx.execute(
                    "INSERT OR REPLACE INTO ext_trust (scope, kind, hash, label, trusted_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![row.scope, row.kind, row.hash, row.label, row.trusted_at],
                )?;
            }
            tx.commit()
        };
        run(&mut conn).map_err(self.fail("cannot record the trusted extensions".to_owned()))
    }
}
