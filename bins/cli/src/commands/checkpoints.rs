//! `cox checkpoints prune --older-than 30d`: forgets old pre-images.
//!
//! Removes the checkpoint rows made before the cutoff by sessions that are
//! not open (a running session keeps every one of its checkpoints, and so
//! does one that ended without saying so, which looks open), and the
//! archived bytes those rows named. The private snapshot repositories are
//! caches and stay. [`store_size`] is what `cox doctor` reports.
//!
//! Exit codes: 0 done (it says what it removed), 1 with one line on
//! stderr.

use anyhow::{Result, anyhow, bail};
use cox_store::{CoxHome, Db, FileArchive};

/// The flags of `cox checkpoints prune`.
#[derive(clap::Args, Debug)]
pub struct PruneArgs {
    /// How old a checkpoint must be to go: `30d`, `12h`, `2w`, `90m`.
    #[arg(long, value_name = "AGE")]
    pub older_than: String,
}

/// Runs `cox checkpoints prune`; returns the exit code.
pub fn prune(args: &PruneArgs) -> i32 {
    match run_prune(args) {
        Ok(text) => {
            print!("{text}");
            0
        }
        Err(err) => {
            eprintln!("cox: error: {}", crate::one_line(&err));
            1
        }
    }
}

/// `30d` as seconds.
fn parse_age(text: &str) -> Result<u64> {
    let (number, unit) = text.split_at(text.len().saturating_sub(1));
    let scale = match unit {
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        "w" => 604_800,
        _ => bail!("--older-than {text}: give a number and a unit, m, h, d or w (30d)"),
    };
    let number: u64 = number.parse().map_err(|_| {
        anyhow!("--older-than {text}: give a number and a unit, m, h, d or w (30d)")
    })?;
    Ok(number.saturating_mul(scale))
}

fn run_prune(args: &PruneArgs) -> Result<String> {
    let age = parse_age(&args.older_than)?;
    let home = CoxHome::resolve(None)?;
    if !home.db_path().is_file() {
        return Ok(format!(
            "no checkpoints: {} does not exist\n",
            home.db_path().display()
        ));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|e| anyhow!("the clock is before 1970: {e}"))?
        .saturating_sub(std::time::Duration::from_secs(age));
    let cutoff = cox_store::clock::rfc3339(now.as_secs(), now.subsec_millis());
    let db = Db::open(&home.db_path())?;
    let pruned = db.prune_checkpoints(&cutoff)?;
    let archive = FileArchive::new(&home);
    let mut freed = 0;
    for id in &pruned.archive_ids {
        freed += archive.size_of(id).unwrap_or(0);
        archive.remove(id).map_err(|e| anyhow!("{e}"))?;
    }
    Ok(format!(
        "removed {} checkpoint rows made before {cutoff} and {} pre-images ({})\n",
        pruned.rows,
        pruned.archive_ids.len(),
        bytes(freed)
    ))
}

/// The checkpoint store's size: the private repositories and the archived
/// pre-images, with their counts.
///
/// # Errors
/// `cox.db` cannot be read.
pub fn store_size(home: &CoxHome) -> Result<String> {
    let dir = home.checkpoints_dir();
    let repos = std::fs::read_dir(&dir).map_or(0, |entries| entries.flatten().count());
    let repo_bytes = folder_size(&dir);
    let (rows, ids) = if home.db_path().is_file() {
        Db::open_for_reading(&home.db_path())?.checkpoint_archive_ids()?
    } else {
        (0, Vec::new())
    };
    let archive = FileArchive::new(home);
    let kept: u64 = ids.iter().filter_map(|id| archive.size_of(id)).sum();
    Ok(format!(
        "{} in {repos} snapshot repositories, {} in {} pre-images ({rows} rows); `cox checkpoints prune --older-than 30d` frees old ones",
        bytes(repo_bytes),
        bytes(kept),
        ids.len()
    ))
}

fn folder_size(dir: &std::path::Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.metadata() {
                Ok(meta) if meta.is_dir() => stack.push(entry.path()),
                Ok(meta) => total += meta.len(),
                Err(_) => {}
            }
        }
    }
    total
}

fn bytes(n: u64) -> String {
    #[allow(clippy::cast_precision_loss)] // a size to one decimal
    let n = n as f64;
    if n >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.1} GiB", n / (1024.0 * 1024.0 * 1024.0))
    } else if n >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", n / (1024.0 * 1024.0))
    } else if n >= 1024.0 {
        format!("{:.1} KiB", n / 1024.0)
    } else {
        format!("{n} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_with_their_unit() {
        assert_eq!(parse_age("30d").unwrap(), 30 * 86_400);
        assert_eq!(parse_age("12h").unwrap(), 12 * 3_600);
        assert_eq!(parse_age("2w").unwrap(), 2 * 604_800);
        assert!(parse_age("30").is_err());
        assert!(parse_age("d").is_err());
        assert!(parse_age("-3d").is_err());
        assert!(parse_age("").is_err());
    }
}
