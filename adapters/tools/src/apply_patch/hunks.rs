//! Applying an update's hunks to one file's text, in memory.
//!
//! Hunks apply in order, each searched from where the one before ended (an
//! `@@ header` first moves past the next line equal to the header). A
//! hunk's old lines (context and removed) are looked for exactly, then
//! ignoring trailing whitespace, then ignoring whitespace at both ends;
//! the first place that matches at the strictest level wins. With
//! `*** End of File` they must be the file's last lines. A hunk with no
//! old lines inserts after its header line, or at the end of the file.
//!
//! The file's bytes outside the changed lines are kept: context lines are
//! copied from the file, not from the patch (so a whitespace-tolerant match
//! never rewrites them), each line keeps its own line end, added lines take
//! the file's (CRLF when its first line ends so), and the file ends with a
//! newline exactly when it did before (an empty file gains one).

use super::parse::{Hunk, Line};

/// One line of a file: its text, and whether its end is `\r\n`.
#[derive(Clone, Debug)]
struct FileLine<'a> {
    text: std::borrow::Cow<'a, str>,
    cr: bool,
}

/// Why hunk `number` (1-based) does not apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HunkError {
    pub number: usize,
    pub why: String,
}

/// How loosely two lines may differ, strictest first.
const LEVELS: [fn(&str) -> &str; 3] = [|s| s, str::trim_end, str::trim];

/// The text with every hunk applied, or the first hunk that does not apply.
pub(crate) fn apply(text: &str, hunks: &[Hunk]) -> Result<String, HunkError> {
    let crlf = text.find('\n').is_some_and(|at| text[..at].ends_with('\r'));
    let final_newline = text.is_empty() || text.ends_with('\n');
    let lines = split(text, crlf);
    let mut out: Vec<FileLine<'_>> = Vec::with_capacity(lines.len());
    // The first line of `lines` not yet copied to `out`.
    let mut cursor = 0;
    for (index, hunk) in hunks.iter().enumerate() {
        let fail = |why: String| HunkError {
            number: index + 1,
            why,
        };
        let mut from = cursor;
        if let Some(header) = &hunk.header {
            let Some(at) = find(&lines, &[header.as_str()], from, false) else {
                return Err(fail(format!(
                    "no line matches the @@ header {}{}",
                    quote(header),
                    searched(from)
                )));
            };
            from = at + 1;
        }
        let old: Vec<&str> = hunk.old().collect();
        let at = if old.is_empty() {
            if hunk.header.is_some() {
                from
            } else {
                lines.len()
            }
        } else {
            find(&lines, &old, from, hunk.end_of_file)
                .ok_or_else(|| fail(diagnose(&lines, &old, from, hunk.end_of_file)))?
        };
        out.extend(lines[cursor..at].iter().cloned());
        let mut file_lines = lines[at..at + old.len()].iter();
        for line in &hunk.lines {
            match line {
                Line::Context(_) => out.extend(file_lines.next().cloned()),
                Line::Removed(_) => {
                    file_lines.next();
                }
                Line::Added(text) => out.push(FileLine {
                    text: text.as_str().into(),
                    cr: crlf,
                }),
            }
        }
        cursor = at + old.len();
    }
    out.extend(lines[cursor..].iter().cloned());
    Ok(join(&out, final_newline))
}

/// The lines of `text` without their ends; a last line without an end
/// takes the file's, in case a line is added after it.
fn split(text: &str, crlf: bool) -> Vec<FileLine<'_>> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    let ended = body.len() < text.len();
    let mut lines: Vec<FileLine<'_>> = body
        .split('\n')
        .map(|line| match line.strip_suffix('\r') {
            Some(text) => FileLine {
                text: text.into(),
                cr: true,
            },
            None => FileLine {
                text: line.into(),
                cr: false,
            },
        })
        .collect();
    if !ended && let Some(last) = lines.last_mut() {
        // A `\r` at the very end of a file without a newline is text.
        if last.cr {
            last.text.to_mut().push('\r');
        }
        last.cr = crlf;
    }
    lines
}

fn join(lines: &[FileLine<'_>], final_newline: bool) -> String {
    let mut text = String::new();
    for (index, line) in lines.iter().enumerate() {
        text.push_str(&line.text);
        if final_newline || index + 1 < lines.len() {
            text.push_str(if line.cr { "\r\n" } else { "\n" });
        }
    }
    text
}

/// Where `pattern` first matches at or after `from`, at the strictest
/// level any place matches; at the very end only, with `end`.
fn find(lines: &[FileLine<'_>], pattern: &[&str], from: usize, end: bool) -> Option<usize> {
    let last = lines.len().checked_sub(pattern.len())?;
    if from > last {
        return None;
    }
    LEVELS.iter().find_map(|norm| {
        let fits = |at: &usize| {
            pattern
                .iter()
                .zip(&lines[*at..])
                .all(|(want, line)| norm(want) == norm(&line.text))
        };
        if end {
            Some(last).filter(fits)
        } else {
            (from..=last).find(fits)
        }
    })
}

/// Why `old` matches nowhere: the line that breaks the longest partial
/// match, or that the first line is nowhere.
fn diagnose(lines: &[FileLine<'_>], old: &[&str], from: usize, end: bool) -> String {
    if end && let Some(at) = find(lines, old, from, false) {
        return format!(
            "its lines match at line {}, but *** End of File says they end the file, which has {} lines",
            at + 1,
            lines.len()
        );
    }
    let loose = |want: &str, line: &FileLine<'_>| want.trim() == line.text.trim();
    let best = (from..lines.len())
        .map(|at| {
            let matched = old
                .iter()
                .zip(&lines[at..])
                .take_while(|(want, line)| loose(want, line))
                .count();
            (matched, at)
        })
        .filter(|(matched, _)| *matched > 0)
        // The longest partial match; the first of equal ones.
        .min_by_key(|(matched, at)| (std::cmp::Reverse(*matched), *at));
    let Some((matched, at)) = best else {
        return format!("no line matches {}{}", quote(old[0]), searched(from));
    };
    let broken = at + matched;
    match lines.get(broken) {
        Some(line) => format!(
            "its lines from {} match at line {}, but line {} is {} where the hunk has {}",
            quote(old[0]),
            at + 1,
            broken + 1,
            quote(&line.text),
            quote(old[matched])
        ),
        None => format!(
            "its lines from {} match at line {}, but the file ends before {}",
            quote(old[0]),
            at + 1,
            quote(old[matched])
        ),
    }
}

/// Where a failed search started, when not at the top.
fn searched(from: usize) -> String {
    if from == 0 {
        String::new()
    } else {
        format!(" after line {from}")
    }
}

/// A line as the model should see it: quoted, escapes visible, cut long.
fn quote(line: &str) -> String {
    const MAX: usize = 160;
    if line.chars().count() <= MAX {
        return format!("{line:?}");
    }
    let kept: String = line.chars().take(MAX).collect();
    format!("{kept:?}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(header: Option<&str>, body: &[&str], end_of_file: bool) -> Hunk {
        let lines = body
            .iter()
            .map(|l| match l.split_at(1) {
                (" ", t) => Line::Context(t.into()),
                ("-", t) => Line::Removed(t.into()),
                ("+", t) => Line::Added(t.into()),
                _ => panic!("bad test line {l:?}"),
            })
            .collect();
        Hunk {
            header: header.map(Into::into),
            lines,
            end_of_file,
        }
    }

    #[test]
    fn hunks_apply_in_order_and_keep_the_rest_byte_for_byte() {
        let text = "a\nb\nc\nd\nb\nc\n";
        let hunks = [
            hunk(None, &[" b", "-c", "+C"], false),
            hunk(None, &[" b", "-c", "+C2", "+C3"], false),
        ];
        assert_eq!(apply(text, &hunks).unwrap(), "a\nb\nC\nd\nb\nC2\nC3\n");
    }

    #[test]
    fn a_header_moves_the_search_past_the_line_equal_to_it() {
        let text = "fn a() {\n    x\n}\nfn b() {\n    x\n}\n";
        let hunks = [hunk(Some("fn b() {"), &["-    x", "+    y"], false)];
        assert_eq!(
            apply(text, &hunks).unwrap(),
            "fn a() {\n    x\n}\nfn b() {\n    y\n}\n"
        );
        // Without old lines, the new ones go right after the header.
        let hunks = [hunk(Some("fn a() {"), &["+    first"], false)];
        assert_eq!(
            apply(text, &hunks).unwrap(),
            "fn a() {\n    first\n    x\n}\nfn b() {\n    x\n}\n"
        );
    }

    #[test]
    fn end_of_file_anchors_the_hunk_at_the_end() {
        let text = "x\ny\nx\n";
        let hunks = [hunk(None, &["-x", "+z"], true)];
        assert_eq!(apply(text, &hunks).unwrap(), "x\ny\nz\n");
        let hunks = [hunk(None, &["-y", "+z"], true)];
        let err = apply(text, &hunks).unwrap_err();
        assert_eq!(
            err.why,
            "its lines match at line 2, but *** End of File says they end the file, which has 3 lines"
        );
    }

    #[test]
    fn matching_tolerates_trailing_then_surrounding_whitespace_but_keeps_the_files_context() {
        let text = "fn f() {   \n\tlet a = 1;\n}\n";
        let hunks = [hunk(
            None,
            &[" fn f() {", "-    let a = 1;", "+    let a = 2;", " }"],
            false,
        )];
        assert_eq!(
            apply(text, &hunks).unwrap(),
            "fn f() {   \n    let a = 2;\n}\n"
        );
        // An exact match later in the file beats a loose one earlier.
        let text = "x \nx\n";
        let hunks = [hunk(None, &["-x", "+y"], false)];
        assert_eq!(apply(text, &hunks).unwrap(), "x \ny\n");
    }

    #[test]
    fn line_ends_and_the_final_newline_are_kept() {
        let hunks = [hunk(None, &[" a", "-b", "+B", "+C"], false)];
        assert_eq!(apply("a\r\nb\r\n", &hunks).unwrap(), "a\r\nB\r\nC\r\n");
        assert_eq!(apply("a\r\nb", &hunks).unwrap(), "a\r\nB\r\nC");
        assert_eq!(apply("a\nb", &hunks).unwrap(), "a\nB\nC");
        // A mixed file keeps each untouched line's own end.
        let hunks = [hunk(None, &["-b", "+B"], false)];
        assert_eq!(apply("a\r\nb\nc\n", &hunks).unwrap(), "a\r\nB\r\nc\n");
        // Appending after a last line without a newline ends that line.
        let hunks = [hunk(None, &["+z"], false)];
        assert_eq!(apply("a\r\nb", &hunks).unwrap(), "a\r\nb\r\nz");
        assert_eq!(apply("", &hunks).unwrap(), "z\n");
    }

    #[test]
    fn a_failure_names_the_line_that_is_not_there() {
        let text = "fn main() {\n    let y = 2;\n}\n";
        let hunks = [hunk(None, &["-    let x = 1;", "+    let x = 3;"], false)];
        assert_eq!(
            apply(text, &hunks).unwrap_err(),
            HunkError {
                number: 1,
                why: "no line matches \"    let x = 1;\"".into()
            }
        );
        let hunks = [
            hunk(
                None,
                &[" fn main() {", "-    let y = 2;", "+    let y = 3;"],
                false,
            ),
            hunk(
                None,
                &[" fn main() {", "-    let y = 2;", "+    let y = 4;"],
                false,
            ),
        ];
        let err = apply(text, &hunks).unwrap_err();
        assert_eq!(err.number, 2);
        assert_eq!(err.why, "no line matches \"fn main() {\" after line 2");
        let hunks = [hunk(
            None,
            &[" fn main() {", "-    let z = 2;", "+z"],
            false,
        )];
        assert_eq!(
            apply(text, &hunks).unwrap_err().why,
            "its lines from \"fn main() {\" match at line 1, but line 2 is \"    let y = 2;\" \
             where the hunk has \"    let z = 2;\""
        );
        let hunks = [hunk(Some("fn other"), &["+z"], false)];
        assert_eq!(
            apply(text, &hunks).unwrap_err().why,
            "no line matches the @@ header \"fn other\""
        );
    }
}
