//! `cox sessions --grep TEXT`: where the sessions mention some text.
//!
//! The search is over every `sessions/<id>.jsonl`, newest session first
//! (ULIDs sort by time), in line order within a session, with a
//! case-sensitive substring test. It needs no database: a rollout is the
//! full record.
//!
//! What the assistant said arrives as many `text_delta` events (and its
//! reasoning as `thinking_delta`s), so a phrase can be cut across several
//! lines. Each run of consecutive deltas of one kind is put back together
//! and searched as one message; a match in it is one hit, printed as
//! `<session id>:<first line>-<last line>: text <excerpt>` (`thinking` for
//! reasoning; a message of one line shows that line alone). Every other
//! line is searched as it is (so the text is also found inside tool inputs
//! and results) and printed as `<session id>:<line>: <event type>
//! <excerpt>`.
//!
//! The excerpt is about [`EXCERPT_CHARS`] characters around the match, on
//! one line: from the assembled message, or from the first string in the
//! event that holds the text; when no single string holds it (the text
//! spans JSON syntax or an escape), from the raw line.
//!
//! As with grep, the exit code is 0 when something matched and 1 when
//! nothing did (a line on stderr says so; `--json` prints `[]`). An error
//! is one line on stderr and exit 1 too. A rollout that cannot be read is a
//! warning on stderr; the others are still searched.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use serde::Serialize;
use serde_json::Value;

use crate::report::Record;

/// About how many characters of context an excerpt shows.
pub const EXCERPT_CHARS: usize = 120;

/// How many of those come before the match, when the text is long.
const BEFORE_CHARS: usize = 40;

/// One event, or one message put back together from its deltas, that
/// contains the text.
#[derive(Debug, PartialEq, Serialize)]
pub struct Hit {
    pub session_id: String,
    /// From 1: the line of the event, or of a message's first delta.
    pub line: usize,
    /// A message's last delta, when it spans several lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_line: Option<usize>,
    /// The event's `type`; `text` or `thinking` for a message assembled
    /// from `text_delta` or `thinking_delta` events; `?` for a line that is
    /// not an event.
    #[serde(rename = "type")]
    pub kind: String,
    pub excerpt: String,
}

/// Runs the search; returns the exit code: 0 when something matched, 1
/// when nothing did or the search failed (said on stderr).
pub(crate) fn run(only: Option<&str>, needle: &str, json: bool) -> i32 {
    let found = Record::open().and_then(|record| find(&record, only, needle));
    let hits = match found {
        Ok(hits) => hits,
        Err(err) => {
            eprintln!("cox: error: {}", crate::one_line(&err));
            return 1;
        }
    };
    let text = match render(&hits, json) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("cox: error: {}", crate::one_line(&err));
            return 1;
        }
    };
    // A closed pipe (`| head`) is not an error.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    if hits.is_empty() {
        if !json {
            eprintln!("cox: no session mentions `{needle}`");
        }
        return 1;
    }
    0
}

/// The hits of every rollout, or of the one session `only` names (an id
/// or a unique prefix).
pub(crate) fn find(record: &Record, only: Option<&str>, needle: &str) -> Result<Vec<Hit>> {
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
    Ok(hits)
}

/// The hits as text, one per line, or as a JSON array.
fn render(hits: &[Hit], json: bool) -> Result<String> {
    if json {
        return Ok(serde_json::to_string_pretty(hits)? + "\n");
    }
    let mut out = String::new();
    for hit in hits {
        let _ = match hit.last_line {
            Some(last) => writeln!(
                out,
                "{}:{}-{last}: {} {}",
                hit.session_id, hit.line, hit.kind, hit.excerpt
            ),
            None => writeln!(
                out,
                "{}:{}: {} {}",
                hit.session_id, hit.line, hit.kind, hit.excerpt
            ),
        };
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

/// A message being put back together from its deltas.
struct Message {
    /// `text` or `thinking`.
    kind: &'static str,
    first: usize,
    last: usize,
    text: String,
}

impl Message {
    /// The hit this message is, if it holds `needle`.
    fn hit(self, session_id: &str, needle: &str) -> Option<Hit> {
        self.text.contains(needle).then(|| Hit {
            session_id: session_id.to_owned(),
            line: self.first,
            last_line: (self.last > self.first).then_some(self.last),
            kind: self.kind.to_owned(),
            excerpt: excerpt(&self.text, needle),
        })
    }
}

/// Which message a line is a piece of, and the piece: a `text_delta` or
/// `thinking_delta` event (the rollout writes `type` first, so other lines
/// are not parsed unless they hold the text).
fn delta(line: &str) -> Option<(&'static str, String)> {
    let kind = if line.starts_with(r#"{"type":"text_delta","#) {
        "text"
    } else if line.starts_with(r#"{"type":"thinking_delta","#) {
        "thinking"
    } else {
        return None;
    };
    let event: Value = serde_json::from_str(line).ok()?;
    Some((kind, event["text"].as_str()?.to_owned()))
}

/// The hits of one rollout, in line order: messages put back together
/// from their deltas, and every other line that contains `needle`.
pub fn search(session_id: &str, bytes: &[u8], needle: &str) -> Vec<Hit> {
    let mut hits = Vec::new();
    let mut message: Option<Message> = None;
    for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let number = index + 1;
        let line = String::from_utf8_lossy(line);
        if let Some((kind, piece)) = delta(&line) {
            match &mut message {
                Some(m) if m.kind == kind => {
                    m.last = number;
                    m.text.push_str(&piece);
                }
                _ => {
                    hits.extend(message.take().and_then(|m| m.hit(session_id, needle)));
                    message = Some(Message {
                        kind,
                        first: number,
                        last: number,
                        text: piece,
                    });
                }
            }
            continue;
        }
        hits.extend(message.take().and_then(|m| m.hit(session_id, needle)));
        if !line.contains(needle) {
            continue;
        }
        let event: Option<Value> = serde_json::from_str(&line).ok();
        let kind = event
            .as_ref()
            .and_then(|e| e["type"].as_str())
            .unwrap_or("?")
            .to_owned();
        let holder = event.as_ref().and_then(|e| first_string_with(e, needle));
        hits.push(Hit {
            session_id: session_id.to_owned(),
            line: number,
            last_line: None,
            kind,
            excerpt: excerpt(holder.unwrap_or(&line), needle),
        });
    }
    hits.extend(message.and_then(|m| m.hit(session_id, needle)));
    hits
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
                    last_line: None,
                    kind: "turn_started".into(),
                    excerpt: "make hello.txt".into(),
                },
                Hit {
                    session_id: "S".into(),
                    line: 3,
                    last_line: None,
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
    fn text_streamed_across_deltas_is_found_in_the_assembled_message() {
        let rollout = br#"{"type":"turn_started","turn":1,"text":"hi"}
{"type":"thinking_delta","text":"the user wants a gree"}
{"type":"thinking_delta","text":"ting"}
{"type":"text_delta","text":"Hello, "}
{"type":"text_delta","text":"wor"}
{"type":"text_delta","text":"ld! \"quoted\""}
{"type":"usage","provider":"p","model":"m","tier":"code","input_tokens":1,"output_tokens":1}
{"type":"text_delta","text":"world again"}
"#;
        let hits = search("S", rollout, "world");
        assert_eq!(
            hits,
            [
                Hit {
                    session_id: "S".into(),
                    line: 4,
                    last_line: Some(6),
                    kind: "text".into(),
                    excerpt: "Hello, world! \"quoted\"".into(),
                },
                Hit {
                    session_id: "S".into(),
                    line: 8,
                    last_line: None,
                    kind: "text".into(),
                    excerpt: "world again".into(),
                },
            ]
        );
        let thought = search("S", rollout, "greeting");
        assert_eq!((thought.len(), thought[0].kind.as_str()), (1, "thinking"));
        assert_eq!((thought[0].line, thought[0].last_line), (2, Some(3)));
        // Decoded: the quote is found as said, not as the JSON escapes it.
        assert_eq!(search("S", rollout, "! \"quoted").len(), 1);
        // A match inside one delta is one hit for the message, not two.
        assert_eq!(search("S", rollout, "Hello").len(), 1);
        assert!(
            search("S", rollout, "lo, wor")
                .iter()
                .all(|h| h.kind == "text")
        );
        assert!(search("S", rollout, "nowhere").is_empty());
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
