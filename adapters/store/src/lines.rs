//! Lines of an archived output, counted and cut the way `cox expand` and
//! the marker the model sees (`expand #<id> lines 3–8210`) number them.
//!
//! A line is the bytes up to and including a `\n`, plus whatever follows
//! the last `\n` when the output does not end with one. So `a\nb\n` and
//! `a\nb` both have two lines, and the empty output has none. Cutting keeps
//! every byte of the lines asked for, terminators included, so the lines
//! `1-N` of an output are the output itself.
//!
//! Everything here is pure: bytes and numbers in, a slice or an error out,
//! so the core can share it without doing any I/O.

use std::fmt;
use std::str::FromStr;

/// What is wrong with a line range, or why it does not fit an output.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineRangeError {
    /// Not `A-B`, `A-` or `A` with whole numbers.
    #[error("`{text}` is not a line range: write A-B (60-90), A- (to the end) or A (one line)")]
    Malformed { text: String },
    /// Line numbers count from 1.
    #[error("line numbers start at 1")]
    Zero,
    /// The last line comes before the first.
    #[error("{from}-{to} ends before it starts")]
    Reversed { from: usize, to: usize },
    /// A line the range names is not in the output.
    #[error("the output has {lines} line{}", if *lines == 1 { "" } else { "s" })]
    PastEnd { lines: usize },
}

/// Lines `from` to `to` (1-based, both included); `to: None` runs to the
/// last line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineRange {
    pub from: usize,
    pub to: Option<usize>,
}

impl LineRange {
    /// The range, checked to start at 1 or later and not to run backwards.
    pub fn new(from: usize, to: Option<usize>) -> Result<Self, LineRangeError> {
        if from == 0 || to == Some(0) {
            return Err(LineRangeError::Zero);
        }
        if let Some(to) = to
            && to < from
        {
            return Err(LineRangeError::Reversed { from, to });
        }
        Ok(Self { from, to })
    }

    /// These lines of `bytes`; see [`line_range`].
    pub fn cut(self, bytes: &[u8]) -> Result<&[u8], LineRangeError> {
        line_range(bytes, self.from, self.to)
    }
}

/// Reads `60-90`, `60-` and `60`. The marker the model sees writes its
/// ranges with an en dash (`3–8210`), so that is taken as well; spaces
/// around the numbers are not.
impl FromStr for LineRange {
    type Err = LineRangeError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let malformed = || LineRangeError::Malformed {
            text: text.to_owned(),
        };
        let number = |digits: &str| -> Result<usize, LineRangeError> {
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(malformed());
            }
            digits.parse().map_err(|_| malformed())
        };
        let (from, to) = match text.split_once(['-', '–']) {
            None => {
                let line = number(text)?;
                (line, Some(line))
            }
            Some((from, "")) => (number(from)?, None),
            Some((from, to)) => (number(from)?, Some(number(to)?)),
        };
        Self::new(from, to)
    }
}

/// `60-90`, `60-`, or `60` for a single line.
impl fmt::Display for LineRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to {
            Some(to) if to == self.from => write!(f, "{to}"),
            Some(to) => write!(f, "{}-{to}", self.from),
            None => write!(f, "{}-", self.from),
        }
    }
}

/// How many lines `bytes` has: its `\n`s, plus one for a last line
/// without one.
#[must_use]
pub fn line_count(bytes: &[u8]) -> usize {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
    newlines + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// Lines `from` to `to` of `bytes` (1-based, both included; `None` runs to
/// the last line), with their terminators. A range that starts at 0, runs
/// backwards, or names a line past the last is an error, never a shorter
/// answer: the caller asked for exactly those lines.
pub fn line_range(bytes: &[u8], from: usize, to: Option<usize>) -> Result<&[u8], LineRangeError> {
    LineRange::new(from, to)?;
    // The offset just past each line's end, in order.
    let mut ends = bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .map(|(at, _)| at + 1)
        .chain((bytes.last().is_some_and(|&b| b != b'\n')).then_some(bytes.len()));
    let past_end = || LineRangeError::PastEnd {
        lines: line_count(bytes),
    };
    // Line `from` starts where line `from - 1` ends.
    let start = if from == 1 {
        0
    } else {
        ends.nth(from - 2).ok_or_else(past_end)?
    };
    if start == bytes.len() {
        return Err(past_end());
    }
    let end = match to {
        None => bytes.len(),
        Some(to) => ends.nth(to - from).ok_or_else(past_end)?,
    };
    Ok(&bytes[start..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_counted_with_or_without_a_last_newline() {
        assert_eq!(line_count(b""), 0);
        assert_eq!(line_count(b"\n"), 1);
        assert_eq!(line_count(b"a"), 1);
        assert_eq!(line_count(b"a\nb\n"), 2);
        assert_eq!(line_count(b"a\nb"), 2);
        assert_eq!(line_count(b"\n\n\n"), 3);
    }

    #[test]
    fn a_range_keeps_its_lines_and_their_terminators() {
        let text = b"one\ntwo\n\nfour\nfive";
        assert_eq!(line_range(text, 1, Some(1)), Ok(&b"one\n"[..]));
        assert_eq!(line_range(text, 2, Some(3)), Ok(&b"two\n\n"[..]));
        assert_eq!(line_range(text, 3, Some(3)), Ok(&b"\n"[..]));
        assert_eq!(line_range(text, 4, None), Ok(&b"four\nfive"[..]));
        assert_eq!(line_range(text, 5, Some(5)), Ok(&b"five"[..]));
        assert_eq!(line_range(text, 1, None), Ok(&text[..]));
        assert_eq!(line_range(text, 1, Some(5)), Ok(&text[..]));
        assert_eq!(line_range(b"a\nb\n", 2, None), Ok(&b"b\n"[..]));
    }

    #[test]
    fn a_range_past_the_end_is_refused_with_the_line_count() {
        let past = |lines| Err(LineRangeError::PastEnd { lines });
        assert_eq!(line_range(b"a\nb\n", 3, None), past(2));
        assert_eq!(line_range(b"a\nb\n", 3, Some(3)), past(2));
        assert_eq!(line_range(b"a\nb", 2, Some(3)), past(2));
        assert_eq!(line_range(b"a\nb", 9000, Some(9010)), past(2));
        assert_eq!(line_range(b"", 1, None), past(0));
        assert_eq!(line_range(b"", 1, Some(1)), past(0));
    }

    #[test]
    fn ranges_start_at_one_and_run_forwards() {
        assert_eq!(line_range(b"a\n", 0, Some(1)), Err(LineRangeError::Zero));
        assert_eq!(
            line_range(b"a\nb\n", 2, Some(1)),
            Err(LineRangeError::Reversed { from: 2, to: 1 })
        );
    }

    #[test]
    fn ranges_are_read_as_a_person_or_the_marker_writes_them() {
        let range = |from, to| Ok(LineRange { from, to });
        assert_eq!("60-90".parse(), range(60, Some(90)));
        assert_eq!("3–8210".parse(), range(3, Some(8210)));
        assert_eq!("60-".parse(), range(60, None));
        assert_eq!("60".parse(), range(60, Some(60)));
        for text in ["60-90", "60-", "60"] {
            assert_eq!(text.parse::<LineRange>().unwrap().to_string(), text);
        }
        for bad in ["", "-", "-5", "a-b", "1-2-3", " 1-2", "1 - 2", "+1", "1.5"] {
            assert_eq!(
                bad.parse::<LineRange>(),
                Err(LineRangeError::Malformed { text: bad.into() }),
                "{bad:?}"
            );
        }
        assert_eq!("0-4".parse::<LineRange>(), Err(LineRangeError::Zero));
        assert_eq!(
            "90-60".parse::<LineRange>(),
            Err(LineRangeError::Reversed { from: 90, to: 60 })
        );
    }
}
