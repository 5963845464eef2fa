//! The `memory` table (FTS5): notes kept per project, across sessions.
//!
//! A note is one short text a person (`/memory add`) or the model (the
//! `memory` tool) asked to keep for a project; its id is the row's id.
//! Recall is a full-text query of a prompt's words, best matches first
//! (FTS5's `rank`), so only the notes that bear on a turn reach the model.
//! The query is built from plain words only, quoted, so no text of a
//! prompt is read as FTS5 syntax. A store with no note at all answers a
//! recall from FTS5's content table (`memory_content`, a plain table)
//! without opening the index.

use rusqlite::params;

use super::{Db, DbError};

/// One kept note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryRow {
    pub id: i64,
    pub text: String,
    pub created_at: String,
}

/// Words shorter than this are not searched for.
const WORD_MIN: usize = 3;
/// The most words of a prompt a recall searches for.
const WORDS_MAX: usize = 64;

impl Db {
    /// Keeps `text` for `project`; its id.
    pub fn memory_add(&self, project: &str, text: &str, created_at: &str) -> Result<i64, DbError> {
        let conn = self.conn();
        conn.execute(
            "INSERT INTO memory (project, text, created_at) VALUES (?1, ?2, ?3)",
            params![project, text, created_at],
        )
        .map(|_| conn.last_insert_rowid())
        .map_err(self.fail("cannot keep the note".to_owned()))
    }

    /// Every note of `project`, oldest first.
    pub fn memory_list(&self, project: &str) -> Result<Vec<MemoryRow>, DbError> {
        let conn = self.conn();
        conn.prepare_cached(
            "SELECT rowid, text, created_at FROM memory WHERE project = ?1 ORDER BY rowid",
        )
        .and_then(|mut stmt| stmt.query_map(params![project], row)?.collect())
        .map_err(self.fail("cannot read the notes".to_owned()))
    }

    /// The notes of `project` that share words with `text`, best first, at
    /// most `limit`.
    pub fn memory_search(
        &self,
        project: &str,
        text: &str,
        limit: usize,
    ) -> Result<Vec<MemoryRow>, DbError> {
        let Some(query) = fts_query(text) else {
            return Ok(Vec::new());
        };
        let conn = self.conn();
        // Most stores keep no note at all: a look at the content table
        // answers that without opening the full-text index (about a third
        // of a millisecond at every turn otherwise).
        let any: bool = conn
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM memory_content)")
            .and_then(|mut stmt| stmt.query_row([], |r| r.get(0)))
            .map_err(self.fail("cannot search the notes".to_owned()))?;
        if !any {
            return Ok(Vec::new());
        }
        conn.prepare_cached(
            "SELECT rowid, text, created_at FROM memory \
             WHERE memory MATCH ?1 AND project = ?2 ORDER BY rank LIMIT ?3",
        )
        .and_then(|mut stmt| {
            stmt.query_map(
                params![query, project, i64::try_from(limit).unwrap_or(i64::MAX)],
                row,
            )?
            .collect()
        })
        .map_err(self.fail("cannot search the notes".to_owned()))
    }

    /// Forgets note `id` of `project`; whether there was one.
    pub fn memory_forget(&self, project: &str, id: i64) -> Result<bool, DbError> {
        let conn = self.conn();
        conn.execute(
            "DELETE FROM memory WHERE rowid = ?1 AND project = ?2",
            params![id, project],
        )
        .map(|n| n > 0)
        .map_err(self.fail(format!("cannot forget note {id}")))
    }
}

fn row(row: &rusqlite::Row<'_>) -> rusqlite::Result<MemoryRow> {
    Ok(MemoryRow {
        id: row.get(0)?,
        text: row.get(1)?,
        created_at: row.get(2)?,
    })
}

/// The words of `text` as an FTS5 query over the `text` column (`text :
/// ("a" OR "b")`), or `None` when it has no word worth searching for.
fn fts_query(text: &str) -> Option<String> {
    let mut words: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric() && c != '_') {
        let word = word.to_lowercase();
        if word.chars().count() >= WORD_MIN && !words.contains(&word) {
            words.push(word);
        }
        if words.len() == WORDS_MAX {
            break;
        }
    }
    if words.is_empty() {
        return None;
    }
    let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
    Some(format!("text : ({})", quoted.join(" OR ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_becomes_plain_quoted_words() {
        assert_eq!(
            fts_query("Fix the NEAR(parser) \"now\" -- OR x").as_deref(),
            Some("text : (\"fix\" OR \"the\" OR \"near\" OR \"parser\" OR \"now\")")
        );
        assert_eq!(fts_query("a b ??"), None);
    }
}
