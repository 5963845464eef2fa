//! The patch grammar: text in, a list of file operations out.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: <path>        then `+` lines: the new file's content
//! *** Delete File: <path>
//! *** Update File: <path>
//! *** Move to: <path>         optional, right after Update File
//! @@ [header]                 a hunk; the first may leave the `@@` out
//!  context / -removed / +added lines; an empty line is empty context
//! *** End of File             optional: the hunk ends the file
//! *** End Patch
//! ```
//!
//! Strict where a guess could write the wrong thing (a line that is not a
//! hunk line, an `Update` without hunks, an `Add` without `+` lines is an
//! empty file, never a skipped one), tolerant of how models wrap the text:
//! whitespace around the envelope and around header lines, a heredoc
//! wrapper (`<<'EOF'` … `EOF`), CRLF line ends, and a unified-diff range
//! (`@@ -3,7 +3,8 @@`) where a header is expected, which is read as no
//! header. Errors name the patch line (1-based) so the model can fix it.

/// One line of a hunk's body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Line {
    Context(String),
    Removed(String),
    Added(String),
}

/// One `@@` section of an `Update File`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Hunk {
    /// The text after `@@`: the hunk starts after a line equal to it.
    pub header: Option<String>,
    pub lines: Vec<Line>,
    /// `*** End of File`: the hunk's old lines end the file.
    pub end_of_file: bool,
}

impl Hunk {
    /// The lines the file must hold: context and removed, in order.
    pub fn old(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().filter_map(|line| match line {
            Line::Context(text) | Line::Removed(text) => Some(text.as_str()),
            Line::Added(_) => None,
        })
    }
}

/// One file operation, with its paths as the patch wrote them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FileOp {
    Add {
        path: String,
        lines: Vec<String>,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        hunks: Vec<Hunk>,
    },
}

impl FileOp {
    /// The path the operation starts from.
    pub fn path(&self) -> &str {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path } | FileOp::Update { path, .. } => {
                path
            }
        }
    }
}

/// Why a patch does not parse; the message is for the model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid patch: {0}")]
pub(crate) struct ParseError(String);

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";

/// Parses a whole patch, envelope included.
pub(crate) fn parse(text: &str) -> Result<Vec<FileOp>, ParseError> {
    if text.trim().is_empty() {
        return Err(err(0, "the patch is empty"));
    }
    let lines: Vec<&str> = text
        .trim()
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect();
    let body = unwrap_heredoc(&lines);
    let (Some(first), Some(last)) = (body.first(), body.last()) else {
        return Err(err(0, "the patch is empty"));
    };
    if first.trim() != BEGIN {
        return Err(err(1, &format!("the patch must start with `{BEGIN}`")));
    }
    if body.len() < 2 || last.trim() != END {
        return Err(err(body.len(), &format!("the patch must end with `{END}`")));
    }
    let mut parser = Parser {
        lines: &body[1..body.len() - 1],
        at: 0,
    };
    let mut ops = Vec::new();
    while parser.at < parser.lines.len() {
        ops.push(parser.file_op()?);
    }
    if ops.is_empty() {
        return Err(err(2, "the patch names no file"));
    }
    Ok(ops)
}

/// The lines inside a `<<'EOF'` … `EOF` wrapper, or all of them.
fn unwrap_heredoc<'a>(lines: &'a [&'a str]) -> &'a [&'a str] {
    let [first, inner @ .., last] = lines else {
        return lines;
    };
    let opener = first.trim();
    let Some(tag) = opener.strip_prefix("<<") else {
        return lines;
    };
    let tag = tag.trim().trim_matches(|c| c == '\'' || c == '"');
    if !tag.is_empty() && last.trim() == tag {
        inner
    } else {
        lines
    }
}

fn err(line: usize, what: &str) -> ParseError {
    if line == 0 {
        ParseError(what.to_owned())
    } else {
        ParseError(format!("line {line}: {what}"))
    }
}

/// A cursor over the lines between `*** Begin Patch` and `*** End Patch`.
struct Parser<'a> {
    lines: &'a [&'a str],
    at: usize,
}

impl<'a> Parser<'a> {
    /// The patch line number of the current line (the envelope is line 1).
    fn number(&self) -> usize {
        self.at + 2
    }

    fn peek(&self) -> Option<&'a str> {
        self.lines.get(self.at).copied()
    }

    fn fail<T>(&self, what: &str) -> Result<T, ParseError> {
        Err(err(self.number(), what))
    }

    fn file_op(&mut self) -> Result<FileOp, ParseError> {
        let Some(line) = self.peek() else {
            return self.fail("expected a file operation");
        };
        let header = line.trim();
        if let Some(path) = header_path(header, ADD) {
            let path = self.path(path)?;
            self.at += 1;
            let mut lines = Vec::new();
            while let Some(added) = self.peek().and_then(|l| l.strip_prefix('+')) {
                lines.push(added.to_owned());
                self.at += 1;
            }
            return Ok(FileOp::Add { path, lines });
        }
        if let Some(path) = header_path(header, DELETE) {
            let path = self.path(path)?;
            self.at += 1;
            return Ok(FileOp::Delete { path });
        }
        if let Some(path) = header_path(header, UPDATE) {
            let path = self.path(path)?;
            self.at += 1;
            let move_to = match self.peek().and_then(|l| header_path(l.trim(), MOVE)) {
                Some(to) => {
                    let to = self.path(to)?;
                    self.at += 1;
                    Some(to)
                }
                None => None,
            };
            let hunks = self.hunks(&path)?;
            if hunks.is_empty() && move_to.is_none() {
                return self.fail(&format!(
                    "`{UPDATE} {path}` has no hunk; give `@@` sections with the lines to change"
                ));
            }
            return Ok(FileOp::Update {
                path,
                move_to,
                hunks,
            });
        }
        self.fail(&format!(
            "expected `{ADD}`, `{UPDATE}` or `{DELETE}` followed by a path, found {line:?}"
        ))
    }

    fn path(&self, raw: &str) -> Result<String, ParseError> {
        let path = raw.trim();
        if path.is_empty() {
            return self.fail("the header names no path");
        }
        Ok(path.to_owned())
    }

    /// The hunks of one `Update File`, up to the next file operation.
    fn hunks(&mut self, path: &str) -> Result<Vec<Hunk>, ParseError> {
        let mut hunks = Vec::new();
        while let Some(line) = self.peek() {
            if is_file_header(line) {
                break;
            }
            let header = match line.strip_prefix("@@") {
                Some(rest) => {
                    self.at += 1;
                    header_text(rest)
                }
                // The first hunk may start straight away, without `@@`.
                None if hunks.is_empty() => None,
                None => {
                    return self.fail(&format!(
                        "expected `@@` or a file operation in {path}, found {line:?}"
                    ));
                }
            };
            hunks.push(self.hunk(path, header)?);
        }
        Ok(hunks)
    }

    fn hunk(&mut self, path: &str, header: Option<String>) -> Result<Hunk, ParseError> {
        let mut hunk = Hunk {
            header,
            lines: Vec::new(),
            end_of_file: false,
        };
        while let Some(line) = self.peek() {
            if line.trim() == END_OF_FILE {
                self.at += 1;
                hunk.end_of_file = true;
                break;
            }
            if is_file_header(line) || line.starts_with("@@") {
                break;
            }
            let parsed = match line.chars().next() {
                None => Line::Context(String::new()),
                Some(' ') => Line::Context(line[1..].to_owned()),
                Some('-') => Line::Removed(line[1..].to_owned()),
                Some('+') => Line::Added(line[1..].to_owned()),
                Some(_) => {
                    return self.fail(&format!(
                        "{line:?} in a hunk of {path}: each line starts with ' ' (context), \
                         '-' (removed) or '+' (added)"
                    ));
                }
            };
            hunk.lines.push(parsed);
            self.at += 1;
        }
        if hunk.lines.is_empty() {
            return self.fail(&format!("a hunk of {path} has no lines"));
        }
        if hunk.lines.iter().all(|l| matches!(l, Line::Context(_))) {
            return self.fail(&format!(
                "a hunk of {path} only has context lines; nothing would change"
            ));
        }
        Ok(hunk)
    }
}

/// The path after a header such as `*** Add File:`.
fn header_path<'a>(line: &'a str, header: &str) -> Option<&'a str> {
    line.strip_prefix(header)
}

fn is_file_header(line: &str) -> bool {
    let line = line.trim();
    [ADD, DELETE, UPDATE].iter().any(|h| line.starts_with(h))
}

/// The header after `@@`, `None` for a bare `@@` or a unified-diff range.
fn header_text(rest: &str) -> Option<String> {
    let text = rest.trim();
    if text.is_empty() || is_diff_range(text) {
        return None;
    }
    Some(text.to_owned())
}

/// `-3,7 +3,8 @@`, possibly followed by a function name git added.
fn is_diff_range(text: &str) -> bool {
    let mut words = text.split_whitespace();
    let range = |word: Option<&str>, sign: char| {
        word.and_then(|w| w.strip_prefix(sign)).is_some_and(|w| {
            !w.is_empty() && w.split(',').all(|n| n.chars().all(|c| c.is_ascii_digit()))
        })
    };
    range(words.next(), '-') && range(words.next(), '+') && words.next() == Some("@@")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(s: &str) -> Line {
        Line::Context(s.into())
    }
    fn del(s: &str) -> Line {
        Line::Removed(s.into())
    }
    fn add(s: &str) -> Line {
        Line::Added(s.into())
    }

    #[test]
    fn every_operation_parses_with_its_paths_and_lines() {
        let text = "\n  *** Begin Patch\n*** Add File: new.txt\n+one\n+two\n\
                    *** Update File: src/lib.rs\n*** Move to: src/renamed.rs\n@@ fn main\n \
                    ctx\n-old\n+new\n@@\n-gone\n*** End of File\n*** Delete File: old.txt\n\
                    *** End Patch  \n\n";
        let ops = parse(text).unwrap();
        assert_eq!(
            ops,
            vec![
                FileOp::Add {
                    path: "new.txt".into(),
                    lines: vec!["one".into(), "two".into()],
                },
                FileOp::Update {
                    path: "src/lib.rs".into(),
                    move_to: Some("src/renamed.rs".into()),
                    hunks: vec![
                        Hunk {
                            header: Some("fn main".into()),
                            lines: vec![ctx("ctx"), del("old"), add("new")],
                            end_of_file: false,
                        },
                        Hunk {
                            header: None,
                            lines: vec![del("gone")],
                            end_of_file: true,
                        },
                    ],
                },
                FileOp::Delete {
                    path: "old.txt".into(),
                },
            ]
        );
    }

    #[test]
    fn the_first_hunk_may_leave_out_its_header_and_empty_lines_are_context() {
        let text = "*** Begin Patch\r\n*** Update File: a\r\n x\r\n\r\n-y\r\n+z\r\n*** End Patch";
        let ops = parse(text).unwrap();
        let FileOp::Update { hunks, .. } = &ops[0] else {
            panic!("an update: {ops:?}");
        };
        assert_eq!(hunks[0].header, None);
        assert_eq!(hunks[0].lines, vec![ctx("x"), ctx(""), del("y"), add("z")]);
    }

    #[test]
    fn a_heredoc_wrapper_and_a_unified_diff_range_are_tolerated() {
        let text = "<<'EOF'\n*** Begin Patch\n*** Update File: a\n@@ -1,2 +1,2 @@ fn f\n-y\n+z\n\
                    *** End Patch\nEOF\n";
        let ops = parse(text).unwrap();
        let FileOp::Update { hunks, .. } = &ops[0] else {
            panic!("an update: {ops:?}");
        };
        assert_eq!(hunks[0].header, None);
    }

    #[test]
    fn a_pure_move_needs_no_hunk_and_an_empty_add_is_an_empty_file() {
        let text =
            "*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** Add File: e\n*** End Patch";
        let ops = parse(text).unwrap();
        assert_eq!(
            ops,
            vec![
                FileOp::Update {
                    path: "a".into(),
                    move_to: Some("b".into()),
                    hunks: vec![],
                },
                FileOp::Add {
                    path: "e".into(),
                    lines: vec![],
                },
            ]
        );
    }

    #[test]
    fn bad_patches_say_which_line_and_why() {
        let cases = [
            ("", "invalid patch: the patch is empty"),
            (
                "*** Update File: a",
                "invalid patch: line 1: the patch must start with `*** Begin Patch`",
            ),
            (
                "*** Begin Patch\n*** Delete File: a",
                "invalid patch: line 2: the patch must end with `*** End Patch`",
            ),
            (
                "*** Begin Patch\n*** End Patch",
                "invalid patch: line 2: the patch names no file",
            ),
            (
                "*** Begin Patch\n*** Update File: a\n*** End Patch",
                "invalid patch: line 3: `*** Update File: a` has no hunk; give `@@` sections \
                 with the lines to change",
            ),
            (
                "*** Begin Patch\n*** Update File: a\n@@\n-x\nfoo\n*** End Patch",
                "invalid patch: line 5: \"foo\" in a hunk of a: each line starts with ' ' \
                 (context), '-' (removed) or '+' (added)",
            ),
            (
                "*** Begin Patch\n*** Update File: a\n@@\n x\n*** End Patch",
                "invalid patch: line 5: a hunk of a only has context lines; nothing would change",
            ),
            (
                "*** Begin Patch\n*** Modify File: a\n*** End Patch",
                "invalid patch: line 2: expected `*** Add File:`, `*** Update File:` or \
                 `*** Delete File:` followed by a path, found \"*** Modify File: a\"",
            ),
            (
                "*** Begin Patch\n*** Delete File:   \n*** End Patch",
                "invalid patch: line 2: the header names no path",
            ),
        ];
        for (text, want) in cases {
            let got = parse(text).map(|_| ()).unwrap_err().to_string();
            assert_eq!(got, want, "for {text:?}");
        }
    }
}
