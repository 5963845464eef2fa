//! `cox sessions --grep TEXT`: which rollout lines mention some text.
//!
//! The search is over the raw lines of every `sessions/<id>.jsonl` (a
//! case-sensitive substring test, so it also finds text inside tool inputs
//! and results), newest session first (ULIDs sort by time), in line order
//! within a session. It needs no database: a rollout is the full record.
//!
//! Each hit is printed as `<session id>:<line>: <event type> <excerpt>`,
//! where the excerpt is about [`EXCERPT_CHARS`] characters of the first
//! string in the event that holds the text, around the match, on one line.
//! When no single string holds it (the text spans JSON syntax or an
//! escape), the excerpt is taken from the raw line instead.
//!
//! A rollout that cannot be read is a warning on stderr; the others are
//! still searched.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use serde::Serialize;
use serde_json::Value;

use crate::report::Record;

/// About how many characters of context an excerpt shows.
pub const EXCERPT_CHARS: usize = 120;

/// How many of those come before the match, when the text is long.
const BEFORE_CHARS: usize = 40;

/// One rollout line that contains the text.
#[derive(Debug, PartialEq, Serialize)]
pub struct Hit {
    pub session_id: String,
    /// From 1.
    pub line: usize,
    /// The event's `type`, or `?` for a line that is not an event.
    #[serde(rename = "type")]
    pub kind: String,
    pub excerpt: String,
}

/// The hits as text or JSON; `only` names one session (id or prefix).
pub(crate) fn render(
    record: &Record,
    only: Option<&str>,
    needle: &str,
    json: bool,
) -> Result<String> {
    if needle.is_empty() {
        bail!("--grep needs the text to look for");
    }
    let rollouts = match only {
        Some(id) => {
            let session = record.session(id)?;
            vec![(session.id.clone(), record.rollout_of(&session))]
        }
        None => rollouts_in(&record.home.sessions_dir())?,
    };
    let mut hits = Vec::new();
    for (id, path) in &rollouts {
        match std::fs::read(path) {
            Ok(bytes) => hits.extend(search(id, &bytes, needle)),
            Err(e) => eprintln!("cox: warning: cannot read rollout {}: {e}", path.display()),
        }
    }
    if json {
        return Ok(serde_json::to_string_pretty(&hits)? + "\n");
    }
    if hits.is_empty() {
        return Ok(format!("no rollout line contains `{needle}`\n"));
    }
    let mut out = String::new();
    for hit in &hits {
        let _ = writeln!(
            out,
            "{}:{}: {} {}",
            hit.session_id, hit.line, hit.kind, hit.excerpt
        );
    }
    Ok(out)
}

/// Every `<id>.jsonl` in the folder, newest id first; none when the folder
/// does not exist yet.
fn rollouts_in(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(anyhow!("cannot list {}: {e}", dir.display())),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| anyhow!("cannot list {}: {e}", dir.display()))?;
        let path = entry.path();
        let id = path
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.strip_suffix(".jsonl"));
        if let Some(id) = id {
            found.push((id.to_owned(), path.clone()));
        }
    }
    found.sort_by(|a, b| b.0.cmp(&a.0));
    Ok(found)
}

/// The lines of one rollout that contain `needle`.
pub fn search(session_id: &str, bytes: &[u8], needle: &str) -> Vec<Hit> {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter_map(|(index, line)| {
            let line = String::from_utf8_lossy(line);
            if !line.contains(needle) {
                return None;
            }
            let event: Option<Value> = serde_json::from_str(&line).ok();
            let kind = event
                .as_ref()
                .and_then(|e| e["type"].as_str())
                .unwrap_or("?")
                .to_owned();
            let holder = event.as_ref().and_then(|e| first_string_with(e, needle));
            Some(Hit {
                session_id: session_id.to_owned(),
                line: index + 1,
                kind,
                excerpt: excerpt(holder.unwrap_or(&line), needle),
            })
        })
        .collect()
}

/// The first string in the value (in document order) that contains
/// `needle`.
fn first_string_with<'a>(value: &'a Value, needle: &str) -> Option<&'a str> {
    match value {
        Value::String(text) => text.contains(needle).then_some(text.as_str()),
        Value::Array(items) => items.iter().find_map(|v| first_string_with(v, needle)),
        Value::Object(map) => map.values().find_map(|v| first_string_with(v, needle)),
        _ => None,
    }
}

/// About [`EXCERPT_CHARS`] characters of `text` around the first `needle`,
/// line breaks and tabs shown as spaces, `…` where it was cut.
pub fn excerpt(text: &str, needle: &str) -> String {
    let chars: Vec<char> = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let at = text
        .find(needle)
        .map_or(0, |byte| text[..byte].chars().count());
    let start = if chars.len() <= EXCERPT_CHARS {
        0
    } else {
        at.saturating_sub(BEFORE_CHARS)
            .min(chars.len() - EXCERPT_CHARS)
    };
    let end = (start + EXCERPT_CHARS).min(chars.len());
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(&chars[start..end]);
    if end < chars.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hit_names_the_line_the_event_and_the_string_that_holds_the_text() {
        let rollout = b"{\"type\":\"turn_started\",\"turn\":1,\"text\":\"make hello.txt\"}\n\
{\"type\":\"text_delta\",\"text\":\"nothing here\"}\n\
{\"type\":\"tool_call_requested\",\"call\":{\"name\":\"write\",\"input\":{\"path\":\"hello.txt\"}}}\n\
{\"type\":\"turn_do";
        let hits = search("S", rollout, "hello");
        assert_eq!(
            hits,
            [
                Hit {
                    session_id: "S".into(),
                    line: 1,
                    kind: "turn_started".into(),
                    excerpt: "make hello.txt".into(),
                },
                Hit {
                    session_id: "S".into(),
                    line: 3,
                    kind: "tool_call_requested".into(),
                    excerpt: "hello.txt".into(),
                },
            ]
        );
        let cut = search("S", rollout, "turn_do");
        assert_eq!(cut[0].kind, "?", "a cut line is not an event");
        assert_eq!(cut[0].excerpt, "{\"type\":\"turn_do");
    }

    #[test]
    fn text_across_json_syntax_is_shown_from_the_raw_line() {
        let hits = search(
            "S",
            b"{\"type\":\"usage\",\"model\":\"m\"}",
            "\"model\":\"m",
        );
        assert_eq!(hits[0].kind, "usage");
        assert_eq!(hits[0].excerpt, "{\"type\":\"usage\",\"model\":\"m\"}");
    }

    #[test]
    fn a_long_text_is_cut_around_the_match_on_one_line() {
        let text = format!("{}\nNEEDLE\t{}", "a".repeat(200), "b".repeat(200));
        let shown = excerpt(&text, "NEEDLE");
        assert!(shown.starts_with('…') && shown.ends_with('…'), "{shown}");
        assert_eq!(shown.chars().count(), EXCERPT_CHARS + 2);
        assert!(shown.contains(" NEEDLE "), "{shown}");
        assert_eq!(shown.find("NEEDLE"), Some('…'.len_utf8() + BEFORE_CHARS));
        let end = format!("{}NEEDLE", "a".repeat(300));
        let shown = excerpt(&end, "NEEDLE");
        assert!(
            shown.ends_with("NEEDLE") && shown.starts_with('…'),
            "{shown}"
        );
    }
}
