//! The local JSON log: `logs/cox.log.<date>` under cox's home, one file a
//! day (UTC), and the old ones removed.
//!
//! Invariants:
//! - a run appends to the file of the day it started on; a session that
//!   runs past midnight keeps writing there;
//! - at every start, files of the log older than the retention (by their
//!   modification time, so a file still written to is never one) are
//!   removed; nothing else in the folder is touched;
//! - a log that cannot be opened or cleaned never stops a run: the caller
//!   gets one line saying why.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How many days of logs are kept when nothing says otherwise.
pub const KEEP_DAYS: u64 = 14;

/// The name every log file starts with.
const STEM: &str = "cox.log";

/// Today's log file in `dir`, for a run that starts at `now` (RFC 3339).
#[must_use]
pub fn today(dir: &Path, now: &str) -> PathBuf {
    let day = now.get(..10).unwrap_or(now);
    dir.join(format!("{STEM}.{day}"))
}

/// Removes the files of the log in `dir` last written more than
/// `keep_days` days before `now`; the files removed, or a line saying what
/// could not be read or removed.
///
/// # Errors
/// The folder cannot be read, or a file cannot be removed.
pub fn prune(dir: &Path, keep_days: u64, now: SystemTime) -> Result<Vec<PathBuf>, String> {
    let horizon = now
        .checked_sub(Duration::from_secs(keep_days.saturating_mul(86_400)))
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let entries = std::fs::read_dir(dir)
        .map_err(|err| format!("cannot read the log folder {}: {err}", dir.display()))?;
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let ours = name == STEM || name.strip_prefix(STEM).is_some_and(|t| t.starts_with('.'));
        if !ours {
            continue;
        }
        // Only plain files: a link or folder of that name is not ours.
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let Ok(modified) = meta.modified() else {
            continue;
        };
        if modified < horizon {
            let path = entry.path();
            std::fs::remove_file(&path)
                .map_err(|err| format!("cannot remove the old log {}: {err}", path.display()))?;
            removed.push(path);
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aged(path: &Path, days: u64) {
        let file = std::fs::File::create(path).unwrap();
        let when = SystemTime::now() - Duration::from_secs(days * 86_400 + 60);
        file.set_modified(when).unwrap();
    }

    #[test]
    fn a_day_has_its_own_file() {
        assert_eq!(
            today(Path::new("/h/logs"), "2026-12-05T04:30:00.000Z"),
            PathBuf::from("/h/logs/cox.log.2026-12-05")
        );
    }

    #[test]
    fn only_log_files_past_the_retention_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        aged(&d.join("cox.log.2026-11-01"), 20);
        aged(&d.join("cox.log"), 30);
        aged(&d.join("cox.log.2026-11-30"), 5);
        aged(&d.join("notes.txt"), 40);
        aged(&d.join("cox.logger"), 40);
        std::fs::create_dir(d.join("cox.log.dir")).unwrap();
        let mut removed = prune(d, 14, SystemTime::now()).unwrap();
        removed.sort();
        assert_eq!(removed, [d.join("cox.log"), d.join("cox.log.2026-11-01")]);
        for kept in [
            "cox.log.2026-11-30",
            "notes.txt",
            "cox.logger",
            "cox.log.dir",
        ] {
            assert!(d.join(kept).exists(), "{kept}");
        }
        // A retention of zero days keeps only what was written since `now`.
        aged(&d.join("cox.log.2026-12-05"), 0);
        std::fs::write(d.join("cox.log.2026-12-06"), "").unwrap();
        let now = SystemTime::now() - Duration::from_secs(30);
        let removed = prune(d, 0, now).unwrap();
        assert!(removed.contains(&d.join("cox.log.2026-12-05")));
        assert!(d.join("cox.log.2026-12-06").exists());
    }

    #[test]
    fn a_missing_folder_is_one_line() {
        let err = prune(Path::new("/nonexistent/cox/logs"), 14, SystemTime::now()).unwrap_err();
        assert!(
            err.starts_with("cannot read the log folder /nonexistent/cox/logs"),
            "{err}"
        );
    }
}
