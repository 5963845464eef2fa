//! `core.log_level` and `COX_LOG`: the tracing filter of `logs/cox.log.<date>`.
//!
//! A filter is tracing's list of directives (`info`, `debug`,
//! `cox_core=trace,info`). `COX_LOG` replaces the config's filter for one
//! run, as every variable replaces its key; with neither, `info`.
//!
//! tracing reads a bare word that is not a level as a target's name, so a
//! misspelt level (`inof`) would quietly log nothing at all. Here a bare
//! word must be a level, or name one of cox's own crates (`cox_core`);
//! another crate is named with its level (`hyper=debug`).

use tracing_subscriber::EnvFilter;

/// The levels, quietest first.
const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

/// The filter when neither the config nor `COX_LOG` names one.
pub const DEFAULT: &str = "info";

/// Checks a filter as written; the error says what is wrong with it.
///
/// # Errors
/// An empty filter, a bare word that is not a level, a directive tracing
/// cannot parse.
pub fn check(text: &str) -> Result<(), String> {
    parse(text).map(drop)
}

/// The filter `COX_LOG` (first) or the config asks for, else [`DEFAULT`].
///
/// # Errors
/// `COX_LOG` is not a filter: one line naming it. (The config's value was
/// checked, with its line, when the file was read.)
pub fn choose(configured: Option<&str>, cox_log: Option<&str>) -> anyhow::Result<EnvFilter> {
    if let Some(text) = cox_log {
        return parse(text).map_err(|why| anyhow::anyhow!("COX_LOG={text}: {why}"));
    }
    let text = configured.unwrap_or(DEFAULT);
    parse(text).map_err(|why| anyhow::anyhow!("core.log_level `{text}`: {why}"))
}

fn parse(text: &str) -> Result<EnvFilter, String> {
    if text.trim().is_empty() {
        return Err(format!(
            "an empty filter; use a level ({})",
            LEVELS.join(", ")
        ));
    }
    for directive in text.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let bare = !directive.contains(['=', '[', ':']);
        let level = LEVELS.contains(&directive.to_ascii_lowercase().as_str());
        if bare && !level && !directive.starts_with("cox") {
            let lower = directive.to_ascii_lowercase();
            let hint = LEVELS
                .iter()
                .map(|l| (edits(l, &lower), l))
                .filter(|(d, _)| *d <= 2)
                .min_by_key(|(d, _)| *d)
                .map_or_else(
                    || format!("; name a crate with its level: `{directive}=debug`"),
                    |(_, l)| format!(", did you mean `{l}`?"),
                );
            return Err(format!(
                "`{directive}` is not a level ({}){hint}",
                LEVELS.join(", ")
            ));
        }
    }
    EnvFilter::builder()
        .parse(text)
        .map_err(|e| format!("not a tracing filter: {e}"))
}

/// Letters to change, add or drop to turn `a` into `b` (short words only).
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_directives_pass_misspelt_levels_do_not() {
        for good in [
            "info",
            "DEBUG",
            "cox_core=trace,info",
            "warn,hyper=debug",
            "cox_cli",
        ] {
            assert_eq!(check(good), Ok(()), "{good}");
        }
        assert_eq!(
            check("inof").unwrap_err(),
            "`inof` is not a level (off, error, warn, info, debug, trace), did you mean `info`?"
        );
        assert!(check("hyper").unwrap_err().contains("`hyper=debug`"));
        assert!(check(" ").unwrap_err().starts_with("an empty filter"));
        assert!(check("cox_core=loud").is_err());
    }

    #[test]
    fn the_variable_wins_over_the_config() {
        let chosen = choose(Some("error"), Some("debug")).unwrap();
        assert_eq!(chosen.to_string(), "debug");
        assert_eq!(choose(Some("error"), None).unwrap().to_string(), "error");
        assert_eq!(choose(None, None).unwrap().to_string(), "info");
        let err = choose(Some("info"), Some("loud")).unwrap_err().to_string();
        assert!(
            err.starts_with("COX_LOG=loud: `loud` is not a level"),
            "{err}"
        );
    }
}
