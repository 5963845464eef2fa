//! Read-only summaries of the usage ledger, for `cox sessions` and
//! `cox stats`.
//!
//! Each query is one `GROUP BY` over `usage` returning plain structs, in a
//! stable order (by period, then by name), so a table printed from them
//! does not shuffle between runs. Days and months are the first 10 and 7
//! characters of `created_at`, which is UTC: a "day" is a UTC day.

use rusqlite::Row;

use super::{Db, DbError};

/// Sums over a group of usage rows.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    /// Provider calls (usage rows).
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub cost_usd: f64,
}

/// A session's calls to one provider, model and effort.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelTotals {
    pub provider: String,
    pub model: String,
    /// `None` for rows that recorded no effort.
    pub effort: Option<String>,
    pub totals: Totals,
}

/// The calls of one day (`2026-11-30`) or month (`2026-11`).
#[derive(Clone, Debug, PartialEq)]
pub struct PeriodTotals {
    pub period: String,
    pub totals: Totals,
}

/// A session's calls on one tier for one job.
#[derive(Clone, Debug, PartialEq)]
pub struct TierJobTotals {
    pub tier: String,
    pub job: String,
    pub totals: Totals,
}

/// How well one model's prompt cache did on one day.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheDay {
    pub day: String,
    pub model: String,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub input_tokens: u64,
    /// `cache_read / (input + cache_read + cache_write)`: the share of the
    /// prompt served from the cache; 0 when there were no such tokens.
    pub hit_rate: f64,
}

/// The aggregate columns every grouped query ends with, read by [`totals`].
macro_rules! totals_columns {
    () => {
        "COUNT(*), SUM(input_tokens), SUM(output_tokens), SUM(cache_read_tokens), \
         SUM(cache_write_tokens), SUM(cost_usd)"
    };
}

/// Reads [`totals_columns!`] starting at column `first`.
fn totals(row: &Row<'_>, first: usize) -> rusqlite::Result<Totals> {
    Ok(Totals {
        calls: row.get(first)?,
        input_tokens: row.get(first + 1)?,
        output_tokens: row.get(first + 2)?,
        cache_read_tokens: row.get(first + 3)?,
        cache_write_tokens: row.get(first + 4)?,
        cost_usd: row.get(first + 5)?,
    })
}

impl Db {
    /// The session's calls grouped by provider, model and effort.
    pub fn usage_totals_by(&self, session_id: &str) -> Result<Vec<ModelTotals>, DbError> {
        self.grouped(
            concat!(
                "SELECT provider, model, effort, ",
                totals_columns!(),
                " FROM usage WHERE session_id = ?1 GROUP BY provider, model, effort \
                 ORDER BY provider, model, effort"
            ),
            &[&session_id],
            |row| {
                Ok(ModelTotals {
                    provider: row.get(0)?,
                    model: row.get(1)?,
                    effort: row.get(2)?,
                    totals: totals(row, 3)?,
                })
            },
        )
        .map_err(self.fail(format!("cannot total the usage of session {session_id}")))
    }

    /// Calls per UTC day, oldest first; of one session, or of all.
    pub fn by_day(&self, session: Option<&str>) -> Result<Vec<PeriodTotals>, DbError> {
        // Two statements rather than `?1 IS NULL OR …`, which would stop
        // SQLite from using the session index.
        let found = match session {
            Some(id) => self.grouped(
                concat!(
                    "SELECT substr(created_at, 1, 10) AS day, ",
                    totals_columns!(),
                    " FROM usage WHERE session_id = ?1 GROUP BY day ORDER BY day"
                ),
                &[&id],
                period,
            ),
            None => self.grouped(
                concat!(
                    "SELECT substr(created_at, 1, 10) AS day, ",
                    totals_columns!(),
                    " FROM usage GROUP BY day ORDER BY day"
                ),
                &[],
                period,
            ),
        };
        found.map_err(self.fail("cannot total the usage by day"))
    }

    /// Calls per UTC month, oldest first.
    pub fn by_month(&self) -> Result<Vec<PeriodTotals>, DbError> {
        self.grouped(
            concat!(
                "SELECT substr(created_at, 1, 7) AS month, ",
                totals_columns!(),
                " FROM usage GROUP BY month ORDER BY month"
            ),
            &[],
            period,
        )
        .map_err(self.fail("cannot total the usage by month"))
    }

    /// Prompt-cache use per UTC day and model, oldest day first.
    pub fn cache_by_model_day(&self) -> Result<Vec<CacheDay>, DbError> {
        self.grouped(
            "SELECT substr(created_at, 1, 10) AS day, model, SUM(cache_read_tokens), \
             SUM(cache_write_tokens), SUM(input_tokens) \
             FROM usage GROUP BY day, model ORDER BY day, model",
            &[],
            |row| {
                let cache_read_tokens: u64 = row.get(2)?;
                let cache_write_tokens: u64 = row.get(3)?;
                let input_tokens: u64 = row.get(4)?;
                let prompt = input_tokens
                    .saturating_add(cache_read_tokens)
                    .saturating_add(cache_write_tokens);
                #[allow(clippy::cast_precision_loss)]
                let hit_rate = if prompt == 0 {
                    0.0
                } else {
                    cache_read_tokens as f64 / prompt as f64
                };
                Ok(CacheDay {
                    day: row.get(0)?,
                    model: row.get(1)?,
                    cache_read_tokens,
                    cache_write_tokens,
                    input_tokens,
                    hit_rate,
                })
            },
        )
        .map_err(self.fail("cannot total the prompt cache by model and day"))
    }

    /// The session's calls grouped by tier and job.
    pub fn by_tier_job(&self, session_id: &str) -> Result<Vec<TierJobTotals>, DbError> {
        self.grouped(
            concat!(
                "SELECT tier, job, ",
                totals_columns!(),
                " FROM usage WHERE session_id = ?1 GROUP BY tier, job ORDER BY tier, job"
            ),
            &[&session_id],
            |row| {
                Ok(TierJobTotals {
                    tier: row.get(0)?,
                    job: row.get(1)?,
                    totals: totals(row, 2)?,
                })
            },
        )
        .map_err(self.fail(format!(
            "cannot total the usage of session {session_id} by tier and job"
        )))
    }

    fn grouped<T>(
        &self,
        sql: &str,
        args: &[&dyn rusqlite::ToSql],
        read: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<Vec<T>> {
        self.conn()
            .prepare_cached(sql)?
            .query_map(args, read)?
            .collect()
    }
}

fn period(row: &Row<'_>) -> rusqlite::Result<PeriodTotals> {
    Ok(PeriodTotals {
        period: row.get(0)?,
        totals: totals(row, 1)?,
    })
}
