//! An `apply_patch` patch as [`Diff`] rows, parsed here on its own.
//!
//! The TUI does not depend on the tools crate, so this is a second,
//! smaller reading of the grammar `cox-tools` applies (`*** Begin Patch`,
//! `*** Add File:` / `*** Update File:` (+ `*** Move to:`) / `*** Delete
//! File:`, `@@` hunks of ` `/`-`/`+` lines, `*** End of File`, `*** End
//! Patch`). It only has to draw what the patch says, so it is tolerant
//! where the tool is strict about meaning (an update without hunks, a hunk
//! of context only, an empty hunk all draw as written) and as tolerant as
//! the tool of how models wrap the text (whitespace around the envelope
//! and header lines, CRLF, a `<<'EOF'` … `EOF` heredoc). What it cannot
//! place (no envelope, a line outside any file, a line that is not a hunk
//! line) makes the whole patch [`Head::Unparsed`]: its raw text, dim,
//! under one line saying why. Nothing is sanitized here: [`Diff`] does it
//! when it draws.

use super::{Diff, FileOp, Head, Kind, Row};

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";

impl Diff {
    /// What the `apply_patch` patch `text` does, file by file: a header
    /// row per file, then its hunks; or, when it does not parse, its raw
    /// text under a header saying why.
    #[must_use]
    pub fn patch(text: &str) -> Self {
        match rows(text) {
            Ok(rows) => {
                let mut files = 0;
                let (mut added, mut removed) = (0, 0);
                for row in &rows {
                    match row {
                        Row::File { .. } => files += 1,
                        Row::Patch {
                            kind: Kind::Added, ..
                        } => added += 1,
                        Row::Patch {
                            kind: Kind::Removed,
                            ..
                        } => removed += 1,
                        _ => {}
                    }
                }
                Self {
                    head: Head::Patch {
                        files,
                        added,
                        removed,
                    },
                    rows,
                }
            }
            Err(why) => Self {
                head: Head::Unparsed { why },
                rows: text.lines().map(|line| Row::Raw(line.to_owned())).collect(),
            },
        }
    }
}

/// The rows of a patch that parses, or why it does not.
fn rows(text: &str) -> Result<Vec<Row>, String> {
    if text.trim().is_empty() {
        return Err("it is empty".to_owned());
    }
    let lines: Vec<&str> = text
        .trim()
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect();
    let body = unwrap_heredoc(&lines);
    let (Some(first), Some(last)) = (body.first(), body.last()) else {
        return Err("it is empty".to_owned());
    };
    if first.trim() != BEGIN {
        return Err(format!("it does not start with `{BEGIN}`"));
    }
    if body.len() < 2 || last.trim() != END {
        return Err(format!("it does not end with `{END}`"));
    }
    let mut rows = Vec::new();
    // What the lines being read belong to.
    let mut file = None;
    let mut at = 1;
    while at < body.len() - 1 {
        let line = body[at];
        // The patch's own line number, 1-based.
        let number = at + 1;
        at += 1;
        let header = line.trim();
        let op = [
            (ADD, FileOp::Add),
            (UPDATE, FileOp::Update),
            (DELETE, FileOp::Delete),
        ]
        .into_iter()
        .find_map(|(prefix, op)| Some((op, header.strip_prefix(prefix)?.trim())));
        if let Some((op, path)) = op {
            if path.is_empty() {
                return Err(format!("line {number} names no file"));
            }
            let to = match body[at].trim().strip_prefix(MOVE) {
                Some(to) if op == FileOp::Update && at < body.len() - 1 => {
                    at += 1;
                    Some(to.trim().to_owned())
                }
                _ => None,
            };
            rows.push(Row::File {
                op,
                path: path.to_owned(),
                to,
            });
            file = Some(op);
            continue;
        }
        let kind = match (file, line.chars().next()) {
            (None, _) => return Err(format!("line {number} is not in a file")),
            (Some(FileOp::Update), _) if header == END_OF_FILE => continue,
            (Some(FileOp::Update), _) if line.starts_with("@@") => {
                rows.push(Row::Hunk(header.to_owned()));
                continue;
            }
            (Some(FileOp::Update), None) => Kind::Context,
            (Some(FileOp::Update), Some(' ')) => Kind::Context,
            (Some(FileOp::Update), Some('-')) => Kind::Removed,
            (Some(FileOp::Update | FileOp::Add), Some('+')) => Kind::Added,
            (Some(_), _) => return Err(format!("line {number} is not a line of a hunk")),
        };
        rows.push(Row::Patch {
            kind,
            text: line.get(1..).unwrap_or_default().to_owned(),
        });
    }
    if file.is_none() {
        return Err("it names no file".to_owned());
    }
    Ok(rows)
}

/// The lines inside a `<<'EOF'` … `EOF` wrapper, or all of them.
fn unwrap_heredoc<'a>(lines: &'a [&'a str]) -> &'a [&'a str] {
    let [first, inner @ .., last] = lines else {
        return lines;
    };
    let Some(tag) = first.trim().strip_prefix("<<") else {
        return lines;
    };
    let tag = tag.trim().trim_matches(|c| c == '\'' || c == '"');
    if !tag.is_empty() && last.trim() == tag {
        inner
    } else {
        lines
    }
}
