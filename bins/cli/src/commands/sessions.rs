//! `cox sessions`: the sessions `cox.db` knows, one of them in detail, or
//! the rollout lines that mention some text.
//!
//! ```text
//! cox sessions                 every session, newest first
//! cox sessions <id>            one session: times, turns, cost, state, and
//!                              its tokens per provider, model and effort
//! cox sessions [<id>] --json   the same, as JSON with stable field names
//! cox sessions --grep TEXT     where the sessions mention TEXT (see
//!                              sessions/grep.rs); exit 1 when nothing does
//! ```
//!
//! Nothing here writes: the database is opened only if it exists and only
//! to read (see [`crate::report::Record`]). A home with no database lists
//! no sessions and exits 0; naming a session there is an error, as is an
//! id that matches no session or several.

mod grep;

use std::collections::BTreeSet;
use std::fmt::Write as _;

use anyhow::Result;
use clap::Args;
use cox_store::{ModelTotals, SessionRow};
use serde::Serialize;

use crate::report::{Record, age, clip, duration, finish, micro_usd, now_millis, span_ms, usd};
use crate::table::{
    Cell, Column, ESTIMATED_NOTE, TOTALS_COLUMNS, Table, col, table_only, totals_cells,
};

/// How many characters of a title the list shows.
const TITLE_CHARS: usize = 40;

/// `cox sessions [ID] [--json] [--grep TEXT]`.
#[derive(Args, Debug, Clone)]
pub struct SessionsArgs {
    /// A session's id, or the start of one that no other session shares.
    #[arg(value_name = "ID")]
    pub id: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Print where the sessions mention TEXT (case-sensitive), newest
    /// session first; with ID, only that session's. The assistant's
    /// streamed text is searched whole. Exit 1 when nothing matches.
    #[arg(long, value_name = "TEXT")]
    pub grep: Option<String>,
}

/// Runs `cox sessions`; returns the exit code (0, or 1 after a one-line
/// error, or when `--grep` matched nothing).
pub fn run(args: &SessionsArgs) -> i32 {
    if let Some(needle) = &args.grep {
        return grep::run(args.id.as_deref(), needle, args.json);
    }
    finish(Record::open().and_then(|record| render(&record, args, now_millis())))
}

fn render(record: &Record, args: &SessionsArgs, now_ms: u64) -> Result<String> {
    match &args.id {
        Some(id) => detail(record, &record.session(id)?, args.json),
        None => list(record, args.json, now_ms),
    }
}

/// A session as the list shows it in JSON.
#[derive(Serialize)]
struct Summary<'a> {
    id: &'a str,
    title: Option<&'a str>,
    cwd: &'a str,
    project_slug: &'a str,
    parent_id: Option<&'a str>,
    /// Forked from `parent_id` (`--fork-session`), not its subagent.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    forked: bool,
    created_at: &'a str,
    updated_at: &'a str,
    turns: u32,
    cost_usd: f64,
    state: &'static str,
    /// The worktree it worked in, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    worktree: Option<String>,
}

impl<'a> Summary<'a> {
    /// `row`, with the worktree `worktrees` say it worked in.
    fn with_worktree(
        row: &'a SessionRow,
        worktrees: &std::collections::HashMap<String, String>,
    ) -> Self {
        Summary {
            worktree: worktrees.get(&row.id).cloned(),
            ..Summary::of(row)
        }
    }

    fn of(row: &'a SessionRow) -> Self {
        Summary {
            id: &row.id,
            title: row.title.as_deref(),
            cwd: &row.cwd,
            project_slug: &row.project_slug,
            parent_id: row.parent_id.as_deref(),
            forked: row.forked,
            created_at: &row.created_at,
            updated_at: &row.updated_at,
            turns: row.turns,
            cost_usd: micro_usd(row.cost_usd),
            state: row.state.as_str(),
            worktree: None,
        }
    }
}

/// The worktree each session worked in, by session id.
fn worktrees_of(db: &cox_store::Db) -> std::collections::HashMap<String, String> {
    db.worktree_sessions()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|p| Some((p.session_id, p.worktree?)))
        .collect()
}

fn list(record: &Record, json: bool, now_ms: u64) -> Result<String> {
    let rows = match &record.db {
        Some(db) => db.sessions()?,
        None if json => Vec::new(),
        None => return Ok(format!("{}\n", record.nothing_yet())),
    };
    let worktrees = record.db.as_ref().map(worktrees_of).unwrap_or_default();
    if json {
        let summaries: Vec<Summary<'_>> = rows
            .iter()
            .map(|row| Summary::with_worktree(row, &worktrees))
            .collect();
        return Ok(serde_json::to_string_pretty(&summaries)? + "\n");
    }
    if rows.is_empty() {
        let path = record.home.db_path();
        return Ok(format!("no sessions recorded in {}\n", path.display()));
    }
    let mut table = Table::new(&[
        col("ID", "id"),
        col("TITLE", "title"),
        col("CWD", "cwd"),
        col("AGE", "age"),
        col("TURNS", "turns"),
        col("COST", "cost_usd"),
    ]);
    for row in &rows {
        // A subagent's session is marked as one, a fork and a worktree's
        // too.
        let mut mark = String::new();
        if row.forked {
            mark.push_str("⑂ ");
        } else if row.parent_id.is_some() {
            mark.push_str("↳ ");
        }
        if worktrees.contains_key(&row.id) {
            mark.push_str("⧉ ");
        }
        table.push(vec![
            Cell::Text(row.id.clone()),
            Cell::Maybe(
                row.title
                    .as_deref()
                    .map(|t| format!("{mark}{}", clip(t, TITLE_CHARS))),
            ),
            Cell::Text(row.cwd.clone()),
            Cell::Text(age(&row.created_at, now_ms)),
            Cell::Count(u64::from(row.turns)),
            Cell::Usd {
                amount: row.cost_usd,
                estimated: false,
            },
        ]);
    }
    Ok(table.text())
}

/// One provider, model and effort of a session, in JSON.
#[derive(Serialize)]
struct ModelJson<'a> {
    provider: &'a str,
    model: &'a str,
    effort: Option<&'a str>,
    calls: u64,
    input_tokens: u64,
    output_tokens: u64,
    cache_read_tokens: u64,
    cache_write_tokens: u64,
    cost_usd: f64,
    /// Some call had no price in the catalog and was counted at $0.
    estimated: bool,
}

/// One session in JSON: the list's fields and more.
#[derive(Serialize)]
struct Detail<'a> {
    #[serde(flatten)]
    summary: Summary<'a>,
    duration_ms: Option<u64>,
    rollout_path: &'a str,
    provider: Option<&'a str>,
    model: Option<&'a str>,
    usage: Vec<ModelJson<'a>>,
    /// The subagents it started, and theirs, oldest first.
    subagents: Vec<Summary<'a>>,
    /// Its own cost and every subagent's.
    cost_with_subagents_usd: f64,
}

/// The sessions `id` started, and theirs, oldest first.
fn descendants<'a>(rows: &'a [SessionRow], id: &str) -> Vec<&'a SessionRow> {
    let mut found: Vec<&SessionRow> = Vec::new();
    let mut parents = vec![id.to_owned()];
    while let Some(parent) = parents.pop() {
        for row in rows
            .iter()
            .filter(|r| !r.forked && r.parent_id.as_deref() == Some(parent.as_str()))
        {
            if !found.iter().any(|f| f.id == row.id) {
                found.push(row);
                parents.push(row.id.clone());
            }
        }
    }
    found.sort_by(|a, b| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
    found
}

type ModelKey = (String, String, Option<String>);

fn detail(record: &Record, row: &SessionRow, json: bool) -> Result<String> {
    let db = record.db_for(&row.id)?;
    let by_model = db.usage_totals_by(&row.id)?;
    // Which groups hold a call the catalog could not price.
    let estimated: BTreeSet<ModelKey> = db
        .usage_of(&row.id)?
        .into_iter()
        .filter(|call| call.estimated)
        .map(|call| (call.provider, call.model, call.effort))
        .collect();
    let is_estimated = |m: &ModelTotals| {
        estimated.contains(&(m.provider.clone(), m.model.clone(), m.effort.clone()))
    };
    let duration_ms = span_ms(&row.created_at, &row.updated_at);
    let all = db.sessions()?;
    let children = descendants(&all, &row.id);
    let with_children = row.cost_usd + children.iter().map(|c| c.cost_usd).sum::<f64>();
    if json {
        let usage = by_model
            .iter()
            .map(|m| ModelJson {
                provider: &m.provider,
                model: &m.model,
                effort: m.effort.as_deref(),
                calls: m.totals.calls,
                input_tokens: m.totals.input_tokens,
                output_tokens: m.totals.output_tokens,
                cache_read_tokens: m.totals.cache_read_tokens,
                cache_write_tokens: m.totals.cache_write_tokens,
                cost_usd: micro_usd(m.totals.cost_usd),
                estimated: is_estimated(m),
            })
            .collect();
        let detail = Detail {
            summary: Summary::with_worktree(row, &worktrees_of(db)),
            duration_ms,
            rollout_path: &row.rollout_path,
            provider: row.provider.as_deref(),
            model: row.model.as_deref(),
            usage,
            subagents: children.iter().map(|c| Summary::of(c)).collect(),
            cost_with_subagents_usd: micro_usd(with_children),
        };
        return Ok(serde_json::to_string_pretty(&detail)? + "\n");
    }
    let mut out = String::new();
    let mut field = |name: &str, value: &str| {
        let _ = writeln!(out, "{name:<9} {value}");
    };
    field("session", &row.id);
    field("title", row.title.as_deref().unwrap_or("-"));
    match &row.parent_id {
        Some(from) if row.forked => field("forked", &format!("from {from}")),
        Some(parent) => field("parent", parent),
        None => {}
    }
    field("cwd", &row.cwd);
    if let Some(worktree) = worktrees_of(db).get(&row.id) {
        field("worktree", worktree);
    }
    field("rollout", &row.rollout_path);
    field("start", &row.created_at);
    field("end", &row.updated_at);
    field(
        "duration",
        &duration_ms.map_or_else(|| "?".to_owned(), duration),
    );
    field("turns", &row.turns.to_string());
    if children.is_empty() {
        field("cost", &usd(row.cost_usd, false));
    } else {
        field(
            "cost",
            &format!(
                "{} ({} with its {} subagent(s))",
                usd(row.cost_usd, false),
                usd(with_children, false),
                children.len()
            ),
        );
    }
    field("state", row.state.as_str());
    for child in &children {
        field(
            "subagent",
            &format!(
                "{} · {} · {} turn(s) · {}",
                child.id,
                child
                    .title
                    .as_deref()
                    .map_or("-".into(), |t| clip(t, TITLE_CHARS)),
                child.turns,
                usd(child.cost_usd, false)
            ),
        );
    }
    out.push('\n');
    if by_model.is_empty() {
        out.push_str("no model calls recorded\n");
        return Ok(out);
    }
    let mut columns: Vec<Column> = vec![
        table_only("PROVIDER"),
        table_only("MODEL"),
        table_only("EFFORT"),
    ];
    columns.extend(TOTALS_COLUMNS);
    let mut table = Table::new(&columns);
    for m in &by_model {
        let mut cells = vec![
            Cell::Text(m.provider.clone()),
            Cell::Text(m.model.clone()),
            Cell::Maybe(m.effort.clone()),
        ];
        cells.extend(totals_cells(&m.totals, is_estimated(m)));
        table.push(cells);
    }
    out.push_str(&table.text());
    if !estimated.is_empty() {
        let _ = writeln!(out, "\n{ESTIMATED_NOTE}");
    }
    Ok(out)
}
