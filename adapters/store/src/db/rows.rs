//! The rows of `sessions`, `usage` and `archive` as plain structs, the
//! column lists every statement uses for them, and the functions reading a
//! result row.
//!
//! The column lists are macros so that statements can be assembled with
//! `concat!` into constant text, and they sit next to the readers so that
//! the order of a `SELECT`'s columns and the indexes a reader takes them
//! from are checked side by side.

use std::path::{Path, PathBuf};

use cox_protocol::store::SessionState;
use rusqlite::Row;

macro_rules! session_columns {
    () => {
        "id, created_at, updated_at, cwd, project_slug, title, parent_id, rollout_path, \
         turns, cost_usd, state, provider, model, forked"
    };
}

macro_rules! usage_columns {
    () => {
        "id, session_id, turn, job, tier, provider, model, effort, input_tokens, \
         output_tokens, cache_read_tokens, cache_write_tokens, context_tokens, estimated, \
         cost_usd, latency_ms, created_at"
    };
}

macro_rules! archive_columns {
    () => {
        "id, session_id, call_id, bytes, lines, path, inline, created_at"
    };
}

/// One row of `sessions`: a session as the CLI lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionRow {
    /// The session's ULID, also the rollout's file name.
    pub id: String,
    pub created_at: String,
    /// When the last turn finished (or the session was started, resumed or
    /// ended, whichever came last).
    pub updated_at: String,
    pub cwd: String,
    /// See [`project_slug`].
    pub project_slug: String,
    /// A generated summary; `None` until one is written.
    pub title: Option<String>,
    pub parent_id: Option<String>,
    pub rollout_path: String,
    /// Finished turns.
    pub turns: u32,
    /// The sum of the session's usage rows as of its last finished turn.
    pub cost_usd: f64,
    pub state: SessionState,
    /// The provider and model the session was started with (each call's
    /// own are in its usage row).
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Forked from `parent_id` (`--fork-session`) rather than started by it
    /// as a subagent.
    pub forked: bool,
}

/// One row of `usage`: one provider call.
#[derive(Clone, Debug, PartialEq)]
pub struct UsageRow {
    /// Given by the database; [`Db::insert_usage`](super::Db::insert_usage) ignores it and returns
    /// the new one.
    pub id: i64,
    pub session_id: String,
    /// The turn that paid for the call.
    pub turn: u32,
    /// What the call was for: `main`, `compact`, `summarize`, `memory`, …
    pub job: String,
    /// The tier the router was asked for (`cheap`, `code`, `think`).
    pub tier: String,
    /// What served the call.
    pub provider: String,
    pub model: String,
    /// The effort after clamping; `None` when unknown or not taken.
    pub effort: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// What the model saw: input plus cache read plus cache write.
    pub context_tokens: u64,
    /// The model had no price row, so `cost_usd` is 0 rather than known.
    pub estimated: bool,
    pub cost_usd: f64,
    pub latency_ms: u64,
    pub created_at: String,
}

/// One row of `archive`: the index entry of one archived tool output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchiveRow {
    /// The output's ULID, spelled canonically (upper case).
    pub id: String,
    /// The session and the tool call it came from, when known.
    pub session_id: Option<String>,
    pub call_id: Option<String>,
    /// The output's length.
    pub bytes: u64,
    /// Its line count, as [`line_count`](crate::line_count) counts.
    pub lines: u64,
    pub kept: Kept,
    pub created_at: String,
}

/// Where an archived output's bytes are: in its row, or in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kept {
    /// In the row's `inline` column (`path` is `NULL`).
    Inline(Vec<u8>),
    /// In the file at `path` (`inline` is `NULL`).
    File(PathBuf),
}

/// The `project_slug` of a working folder: its last path component,
/// lower-cased, with every character other than an ASCII letter or digit
/// turned into `-` (`/src/My App` → `my-app`). A path with no last
/// component (`/`) has the empty slug.
#[must_use]
pub fn project_slug(cwd: &str) -> String {
    let last = Path::new(cwd)
        .file_name()
        .map(|name| name.to_string_lossy())
        .unwrap_or_default();
    last.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

pub(super) fn session_row(row: &Row<'_>) -> rusqlite::Result<SessionRow> {
    let state: String = row.get(10)?;
    let state = match state.as_str() {
        "open" => SessionState::Open,
        "closed" => SessionState::Closed,
        "error" => SessionState::Error,
        other => {
            return Err(rusqlite::Error::FromSqlConversionFailure(
                10,
                rusqlite::types::Type::Text,
                format!("`{other}` is not a session state").into(),
            ));
        }
    };
    Ok(SessionRow {
        id: row.get(0)?,
        created_at: row.get(1)?,
        updated_at: row.get(2)?,
        cwd: row.get(3)?,
        project_slug: row.get(4)?,
        title: row.get(5)?,
        parent_id: row.get(6)?,
        rollout_path: row.get(7)?,
        turns: row.get(8)?,
        cost_usd: row.get(9)?,
        state,
        provider: row.get(11)?,
        model: row.get(12)?,
        forked: row.get(13)?,
    })
}

pub(super) fn usage_row(row: &Row<'_>) -> rusqlite::Result<UsageRow> {
    Ok(UsageRow {
        id: row.get(0)?,
        session_id: row.get(1)?,
        turn: row.get(2)?,
        job: row.get(3)?,
        tier: row.get(4)?,
        provider: row.get(5)?,
        model: row.get(6)?,
        effort: row.get(7)?,
        input_tokens: row.get(8)?,
        output_tokens: row.get(9)?,
        cache_read_tokens: row.get(10)?,
        cache_write_tokens: row.get(11)?,
        context_tokens: row.get(12)?,
        estimated: row.get(13)?,
        cost_usd: row.get(14)?,
        latency_ms: row.get(15)?,
        created_at: row.get(16)?,
    })
}

pub(super) fn archive_row(row: &Row<'_>) -> rusqlite::Result<ArchiveRow> {
    let path: Option<String> = row.get(5)?;
    let inline: Option<Vec<u8>> = row.get(6)?;
    let kept = match (path, inline) {
        (Some(path), _) => Kept::File(PathBuf::from(path)),
        (None, Some(bytes)) => Kept::Inline(bytes),
        (None, None) => {
            return Err(rusqlite::Error::FromSqlConversionFailure(
                5,
                rusqlite::types::Type::Null,
                "the row has neither a path nor inline bytes".into(),
            ));
        }
    };
    Ok(ArchiveRow {
        id: row.get(0)?,
        session_id: row.get(1)?,
        call_id: row.get(2)?,
        bytes: row.get(3)?,
        lines: row.get(4)?,
        kept,
        created_at: row.get(7)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_keep_ascii_letters_and_digits_of_the_last_component() {
        assert_eq!(project_slug("/src/My App"), "my-app");
        assert_eq!(project_slug("/src/cox_v2.1/"), "cox-v2-1");
        assert_eq!(project_slug("/src/Café"), "caf-");
        assert_eq!(project_slug("relative/Dir"), "dir");
        assert_eq!(project_slug("/"), "");
    }
}
