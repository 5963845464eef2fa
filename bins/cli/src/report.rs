//! What `cox sessions` and `cox stats` share: finding the record without
//! touching it, and printing times and money (tables are in `table.rs`).
//!
//! Both commands only read. [`Record::open`] resolves `COX_HOME` but never
//! prepares it, and opens `cox.db` only when the file is already there,
//! through [`Db::open_for_reading`], which neither creates, migrates nor
//! writes; a home with no database yet is "no record", not an error.
//!
//! The formatting helpers take the time as an argument, so what they print
//! depends on nothing but their inputs.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{Result, anyhow};
use cox_store::{CoxHome, Db, SessionRow};

/// The home and, when it has one, its database.
pub(crate) struct Record {
    pub home: CoxHome,
    pub db: Option<Db>,
}

impl Record {
    /// Finds the home and opens its `cox.db` if the file exists.
    pub fn open() -> Result<Record> {
        let home = CoxHome::resolve(None)?;
        let path = home.db_path();
        let exists = path
            .try_exists()
            .map_err(|e| anyhow!("cannot look for {}: {e}", path.display()))?;
        let db = if exists {
            Some(Db::open_for_reading(&path)?)
        } else {
            None
        };
        Ok(Record { home, db })
    }

    /// What to say when there is no database: nothing has been recorded.
    pub fn nothing_yet(&self) -> String {
        format!(
            "no record yet: {} does not exist (cox run writes it)",
            self.home.db_path().display()
        )
    }

    /// The database, or an error saying there is none to find `id` in.
    pub fn db_for(&self, id: &str) -> Result<&Db> {
        self.db
            .as_ref()
            .ok_or_else(|| anyhow!("no session `{id}`: {}", self.nothing_yet()))
    }

    /// The session `id` names (whole or as a unique prefix).
    pub fn session(&self, id: &str) -> Result<SessionRow> {
        let db = self.db_for(id)?;
        db.session(id)?
            .ok_or_else(|| anyhow!("no session `{id}` in {}", db.path().display()))
    }

    /// Where the session's rollout is: the path recorded for it, or, when
    /// that is gone (the home was moved), its place in this home.
    pub fn rollout_of(&self, session: &SessionRow) -> PathBuf {
        let recorded = PathBuf::from(&session.rollout_path);
        if recorded.is_file() {
            return recorded;
        }
        self.home
            .sessions_dir()
            .join(format!("{}.jsonl", session.id))
    }
}

/// Prints `text` on stdout (a closed pipe, as with `| head`, is not an
/// error) and returns exit code 0, or prints the error as one line on
/// stderr and returns 1.
pub(crate) fn finish(result: Result<String>) -> i32 {
    match result {
        Ok(text) => {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            0
        }
        Err(err) => {
            eprintln!(
                "cox: error: {}",
                crate::joined_lines(&crate::error_chain(&err))
            );
            1
        }
    }
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_millis() -> u64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// How long ago `stamp` was, in its largest whole unit: `42s`, `3m`,
/// `2h`, `5d`; `?` when the stamp cannot be read. A stamp in the future
/// (another machine's clock) is `0s`.
pub(crate) fn age(stamp: &str, now_ms: u64) -> String {
    let Some(then) = cox_store::clock::millis_of(stamp) else {
        return "?".to_owned();
    };
    let secs = now_ms.saturating_sub(then) / 1_000;
    match secs {
        0..60 => format!("{secs}s"),
        60..3_600 => format!("{}m", secs / 60),
        3_600..86_400 => format!("{}h", secs / 3_600),
        _ => format!("{}d", secs / 86_400),
    }
}

/// Milliseconds from one stamp to a later one; `None` when either cannot
/// be read.
pub(crate) fn span_ms(from: &str, to: &str) -> Option<u64> {
    let from = cox_store::clock::millis_of(from)?;
    let to = cox_store::clock::millis_of(to)?;
    Some(to.saturating_sub(from))
}

/// A duration as a person reads it: `850ms`, `4.2s`, `3m 05s`, `2h 07m`,
/// `3d 04h`.
pub(crate) fn duration(ms: u64) -> String {
    let secs = ms / 1_000;
    match ms {
        0..1_000 => format!("{ms}ms"),
        1_000..60_000 => format!("{}.{}s", secs, ms % 1_000 / 100),
        60_000..3_600_000 => format!("{}m {:02}s", secs / 60, secs % 60),
        3_600_000..86_400_000 => format!("{}h {:02}m", secs / 3_600, secs / 60 % 60),
        _ => format!("{}d {:02}h", secs / 86_400, secs / 3_600 % 24),
    }
}

/// Dollars for a table: `$0.0123`, or `~$0.0000` when the figure is not
/// a price (the model had none in the catalog).
pub(crate) fn usd(amount: f64, estimated: bool) -> String {
    let mark = if estimated { "~" } else { "" };
    format!("{mark}${amount:.4}")
}

/// Dollars rounded to the micro-dollar, for JSON: sums of prices carry
/// float noise (`0.012554999999999998`) that no reader wants.
pub(crate) fn micro_usd(amount: f64) -> f64 {
    (amount * 1e6).round() / 1e6
}

/// The text of `text` cut to `max` characters, ending in `…` when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_take_the_largest_whole_unit() {
        let at = "2026-11-30T12:00:00.000Z";
        let then = cox_store::clock::millis_of(at).unwrap();
        let ago = |ms: u64| age(at, then + ms);
        assert_eq!(ago(0), "0s");
        assert_eq!(ago(59_999), "59s");
        assert_eq!(ago(60_000), "1m");
        assert_eq!(ago(3 * 3_600_000 - 1), "2h");
        assert_eq!(ago(5 * 86_400_000 + 7), "5d");
        assert_eq!(age(at, then - 5_000), "0s", "a stamp from the future");
        assert_eq!(age("yesterday", then), "?");
    }

    #[test]
    fn durations_read_like_a_clock() {
        assert_eq!(duration(850), "850ms");
        assert_eq!(duration(4_250), "4.2s");
        assert_eq!(duration(185_000), "3m 05s");
        assert_eq!(duration(7_620_000), "2h 07m");
        assert_eq!(duration(273_600_000), "3d 04h");
        assert_eq!(
            span_ms("2026-11-30T23:59:59.500Z", "2026-12-01T00:00:01.000Z"),
            Some(1_500)
        );
    }

    #[test]
    fn money_has_four_decimals_and_a_mark_when_estimated() {
        assert_eq!(usd(0.012_555, false), "$0.0126");
        assert_eq!(usd(0.0, true), "~$0.0000");
        assert_eq!(usd(12.5, false), "$12.5000");
        assert_eq!(micro_usd(0.012_554_999_999_999_998).to_string(), "0.012555");
    }

    #[test]
    fn clipping_counts_characters_not_bytes() {
        assert_eq!(clip("héllo", 5), "héllo");
        assert_eq!(clip("héllo wörld", 6), "héllo…");
    }
}
