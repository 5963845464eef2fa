//! `cox stats`: the usage ledger of `cox.db`, read back.
//!
//! ```text
//! cox stats                    = --month
//! cox stats --month | --day    the calls per UTC month / day
//! cox stats --cache            prompt-cache reads, writes and hit rate per
//!                              model and day
//! cox stats --session <id>     the session's calls one by one, its totals
//!                              per tier and job, and its most used tools
//! cox stats --session <id> --day   that session's calls per day
//! ... --csv                    CSV with a header row instead of a table
//! ```
//!
//! Every figure is a sum of `usage` rows, the one place a cost exists. A
//! call the catalog could not price was booked at $0 and marked estimated;
//! tables show its cost as `~$0.0000`, CSV has an `estimated` column. Tool
//! calls are not in the ledger: the top tools come from the session's
//! rollout (`tool_call_requested` events by tool name).
//!
//! Like `cox sessions`, this only reads. With no database, or an empty
//! ledger, it says so in one line and exits 0; a `--session` that names
//! nothing is an error (exit 1).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::Result;
use clap::{ArgGroup, Args};
use cox_protocol::types::Event;
use cox_store::{CacheDay, Db, PeriodTotals, SessionRow, UsageRow, read_rollout};

use crate::report::{Record, finish};
use crate::table::{
    Cell, Column, ESTIMATED_NOTE, TOTALS_COLUMNS, Table, col, csv_only, sum, table_only,
    totals_cells,
};

/// How many tools "top tools" lists.
const TOP_TOOLS: usize = 10;

/// `cox stats [--session ID] [--day | --month | --cache] [--csv]`.
#[derive(Args, Debug, Clone)]
#[command(group(ArgGroup::new("period").args(["day", "month", "cache"])))]
pub struct StatsArgs {
    /// One session (its id, or the start of one no other session shares):
    /// every call, then totals per tier and job, then the top tools.
    #[arg(long, value_name = "ID", conflicts_with_all = ["month", "cache"])]
    pub session: Option<String>,
    /// Calls per UTC day (of the session, with --session).
    #[arg(long)]
    pub day: bool,
    /// Calls per UTC month (the default).
    #[arg(long)]
    pub month: bool,
    /// Prompt-cache reads, writes and hit rate per model and day.
    #[arg(long)]
    pub cache: bool,
    /// Print CSV with a header row instead of an aligned table.
    #[arg(long)]
    pub csv: bool,
}

/// What to report, from the flags.
enum View<'a> {
    /// `--session ID`: call by call.
    Session(&'a str),
    /// `--session ID --day`.
    SessionDays(&'a str),
    /// The whole ledger.
    Ledger(Grouping),
}

/// How the whole ledger is grouped.
#[derive(Clone, Copy)]
enum Grouping {
    Month,
    Day,
    CacheByModelDay,
}

impl StatsArgs {
    fn view(&self) -> View<'_> {
        match (&self.session, self.day, self.cache) {
            (Some(id), true, _) => View::SessionDays(id),
            (Some(id), false, _) => View::Session(id),
            (None, true, _) => View::Ledger(Grouping::Day),
            (None, false, true) => View::Ledger(Grouping::CacheByModelDay),
            (None, false, false) => View::Ledger(Grouping::Month),
        }
    }
}

/// Runs `cox stats`; returns the exit code (0, or 1 after a one-line
/// error).
pub fn run(args: &StatsArgs) -> i32 {
    finish(Record::open().and_then(|record| render(&record, args)))
}

fn render(record: &Record, args: &StatsArgs) -> Result<String> {
    match args.view() {
        View::Session(id) => {
            let session = record.session(id)?;
            session_report(record, record.db_for(id)?, &session, args.csv)
        }
        View::SessionDays(id) => {
            let session = record.session(id)?;
            let days = record.db_for(id)?.by_day(Some(&session.id))?;
            if days.is_empty() {
                return Ok(no_calls(&session));
            }
            Ok(periods("DAY", "day", &days, args.csv))
        }
        View::Ledger(grouping) => match &record.db {
            Some(db) => ledger(db, grouping, args.csv),
            None => Ok(format!("{}\n", record.nothing_yet())),
        },
    }
}

/// The whole ledger, by month, by day, or by model and day.
fn ledger(db: &Db, grouping: Grouping, csv: bool) -> Result<String> {
    let empty = || format!("no usage recorded yet in {}\n", db.path().display());
    let (title, key, rows) = match grouping {
        Grouping::Month => ("MONTH", "month", db.by_month()),
        Grouping::Day => ("DAY", "day", db.by_day(None)),
        Grouping::CacheByModelDay => {
            let days = db.cache_by_model_day()?;
            if days.is_empty() {
                return Ok(empty());
            }
            return Ok(cache_table(days, csv));
        }
    };
    let rows = rows?;
    if rows.is_empty() {
        return Ok(empty());
    }
    Ok(periods(title, key, &rows, csv))
}

fn cache_table(days: Vec<CacheDay>, csv: bool) -> String {
    let mut table = Table::new(&[
        col("DAY", "day"),
        col("MODEL", "model"),
        col("CACHE READ", "cache_read_tokens"),
        col("CACHE WRITE", "cache_write_tokens"),
        col("IN", "input_tokens"),
        col("HIT RATE", "hit_rate"),
    ]);
    for day in days {
        table.push(vec![
            Cell::Text(day.day),
            Cell::Text(day.model),
            Cell::Count(day.cache_read_tokens),
            Cell::Count(day.cache_write_tokens),
            Cell::Count(day.input_tokens),
            Cell::Share(day.hit_rate),
        ]);
    }
    if csv { table.csv() } else { table.text() }
}

/// Periods as a table with a total, or as CSV.
fn periods(title: &'static str, key: &'static str, rows: &[PeriodTotals], csv: bool) -> String {
    let mut columns = vec![col(title, key)];
    columns.extend(TOTALS_COLUMNS);
    let mut table = Table::new(&columns);
    for row in rows {
        let mut cells = vec![Cell::Text(row.period.clone())];
        cells.extend(totals_cells(&row.totals, false));
        table.push(cells);
    }
    if csv {
        return table.csv();
    }
    if rows.len() > 1 {
        let mut cells = vec![Cell::Text("total".to_owned())];
        cells.extend(totals_cells(&sum(rows.iter().map(|r| &r.totals)), false));
        table.footer(cells);
    }
    table.text()
}

fn no_calls(session: &SessionRow) -> String {
    format!("session {} made no model calls\n", session.id)
}

/// The per-call table, then (as text) totals per tier and job and the top
/// tools. CSV holds the per-call rows alone: the totals are their sums,
/// and tools are not ledger rows.
fn session_report(record: &Record, db: &Db, session: &SessionRow, csv: bool) -> Result<String> {
    let calls = db.usage_of(&session.id)?;
    let mut table = Table::new(&[
        col("TURN", "turn"),
        col("JOB", "job"),
        col("TIER", "tier"),
        col("PROVIDER", "provider"),
        col("MODEL", "model"),
        col("EFFORT", "effort"),
        col("IN", "input_tokens"),
        col("OUT", "output_tokens"),
        col("CACHE READ", "cache_read_tokens"),
        col("CACHE WRITE", "cache_write_tokens"),
        col("CONTEXT", "context_tokens"),
        col("COST", "cost_usd"),
        csv_only("estimated"),
        col("LATENCY MS", "latency_ms"),
        csv_only("created_at"),
    ]);
    for call in &calls {
        table.push(vec![
            Cell::Count(u64::from(call.turn)),
            Cell::Text(call.job.clone()),
            Cell::Text(call.tier.clone()),
            Cell::Text(call.provider.clone()),
            Cell::Text(call.model.clone()),
            Cell::Maybe(call.effort.clone()),
            Cell::Count(call.input_tokens),
            Cell::Count(call.output_tokens),
            Cell::Count(call.cache_read_tokens),
            Cell::Count(call.cache_write_tokens),
            Cell::Count(call.context_tokens),
            Cell::Usd {
                amount: call.cost_usd,
                estimated: call.estimated,
            },
            Cell::Flag(call.estimated),
            Cell::Count(call.latency_ms),
            Cell::Text(call.created_at.clone()),
        ]);
    }
    if csv {
        return Ok(table.csv());
    }
    let mut out = String::new();
    if table.is_empty() {
        out.push_str(&no_calls(session));
    } else {
        out.push_str(&table.text());
        out.push('\n');
        out.push_str(&tier_job(db, session, &calls)?);
    }
    out.push('\n');
    out.push_str(&top_tools(record, session));
    if calls.iter().any(|c| c.estimated) {
        let _ = writeln!(out, "\n{ESTIMATED_NOTE}");
    }
    Ok(out)
}

/// The session's calls per tier and job, with a total when there are
/// several groups.
fn tier_job(db: &Db, session: &SessionRow, calls: &[UsageRow]) -> Result<String> {
    let groups = db.by_tier_job(&session.id)?;
    let estimated = |tier: &str, job: &str| {
        calls
            .iter()
            .any(|c| c.estimated && c.tier == tier && c.job == job)
    };
    let mut columns = vec![table_only("TIER"), table_only("JOB")];
    columns.extend(TOTALS_COLUMNS);
    let mut table = Table::new(&columns);
    for group in &groups {
        let mut cells = vec![
            Cell::Text(group.tier.clone()),
            Cell::Text(group.job.clone()),
        ];
        cells.extend(totals_cells(
            &group.totals,
            estimated(&group.tier, &group.job),
        ));
        table.push(cells);
    }
    if groups.len() > 1 {
        let mut cells = vec![Cell::Text("total".to_owned()), Cell::Text(String::new())];
        let total = sum(groups.iter().map(|g| &g.totals));
        cells.extend(totals_cells(&total, calls.iter().any(|c| c.estimated)));
        table.footer(cells);
    }
    Ok(table.text())
}

/// The session's most requested tools, from its rollout; a rollout that
/// cannot be read is a warning, not a failed report.
fn top_tools(record: &Record, session: &SessionRow) -> String {
    let path = record.rollout_of(session);
    let rollout = match read_rollout(&path) {
        Ok(rollout) => rollout,
        Err(e) => {
            eprintln!("cox: warning: no top tools: {e}");
            return "no top tools: the rollout cannot be read\n".to_owned();
        }
    };
    let counts = tool_counts(&rollout.events);
    if counts.is_empty() {
        return "no tool calls\n".to_owned();
    }
    let columns: [Column; 2] = [table_only("TOOL"), table_only("CALLS")];
    let mut table = Table::new(&columns);
    for (name, calls) in counts.into_iter().take(TOP_TOOLS) {
        table.push(vec![Cell::Text(name), Cell::Count(calls)]);
    }
    table.text()
}

/// Requested tool calls per tool name, most used first, then by name.
pub fn tool_counts(events: &[Event]) -> Vec<(String, u64)> {
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for event in events {
        if let Event::ToolCallRequested { call } = event {
            *counts.entry(call.name.as_str()).or_default() += 1;
        }
    }
    let mut sorted: Vec<(String, u64)> = counts
        .into_iter()
        .map(|(name, n)| (name.to_owned(), n))
        .collect();
    // Stable: equal counts keep the map's name order.
    sorted.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    sorted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requested(name: &str) -> Event {
        serde_json::from_value(serde_json::json!({
            "type": "tool_call_requested",
            "call": {"id": "c", "name": name, "input": {}, "risk": "read_only", "subject": ""},
        }))
        .unwrap()
    }

    #[test]
    fn tools_are_ranked_by_calls_then_by_name() {
        let events = [
            requested("write"),
            requested("read"),
            requested("bash"),
            requested("read"),
            serde_json::from_value(serde_json::json!({"type": "turn_done", "stop": "end_turn"}))
                .unwrap(),
        ];
        assert_eq!(
            tool_counts(&events),
            [
                ("read".to_owned(), 2),
                ("bash".to_owned(), 1),
                ("write".to_owned(), 1)
            ]
        );
    }
}
