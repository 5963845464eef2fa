//! sed scripts: whether one runs a command.
//!
//! GNU sed's `e` command runs the pattern space (or its argument) as a
//! shell command, and the `e` flag of `s` runs the replacement's result:
//! `sed 's/.*/rm -rf y/e'` runs `rm -rf y`. A script is read command by
//! command; one with an `e` command or flag, or one this reader cannot
//! follow, counts as running a command.

use crate::words::Word;

/// Whether `sed …` runs a command: a script given with `-e`,
/// `--expression` (or an abbreviation) or as the first operand has an
/// `e`. A script from a file (`-f`) is not seen; `--sandbox` forbids `e`.
pub(crate) fn executes(words: &[Word]) -> bool {
    let mut scripts: Vec<&str> = Vec::new();
    let mut operands: Vec<&str> = Vec::new();
    let mut from_file = false;
    let mut sandbox = false;
    let mut i = 1;
    while let Some(word) = words.get(i) {
        i += 1;
        let arg = word.lit().unwrap_or(&word.loose);
        if arg == "--" {
            operands.extend(
                words
                    .get(i..)
                    .unwrap_or_default()
                    .iter()
                    .map(|w| w.loose.as_str()),
            );
            break;
        }
        if !arg.starts_with('-') || arg == "-" || word.lit().is_none() {
            operands.push(&word.loose);
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            let is = |full: &str| !name.is_empty() && full.starts_with(name);
            if is("expression") || is("file") || is("line-length") {
                let value = value.or_else(|| {
                    i += 1;
                    words.get(i - 1).map(|w| w.loose.as_str())
                });
                if is("expression") {
                    scripts.extend(value);
                } else {
                    from_file |= is("file");
                }
            }
            sandbox |= is("sandbox") && name.len() >= 2;
            continue;
        }
        for (at, letter) in arg.char_indices().skip(1) {
            if matches!(letter, 'e' | 'f' | 'l') {
                let rest = &arg[at + 1..];
                let value = if rest.is_empty() {
                    i += 1;
                    words.get(i - 1).map(|w| w.loose.as_str())
                } else {
                    Some(rest)
                };
                match letter {
                    'e' => scripts.extend(value),
                    'f' => from_file = true,
                    _ => {}
                }
                break;
            }
            if letter == 'i' {
                // `-i[SUFFIX]`: the rest of the word is the suffix.
                break;
            }
        }
    }
    if scripts.is_empty() && !from_file {
        scripts.extend(operands.first());
    }
    !sandbox && scripts.iter().any(|s| script_executes(s))
}

/// Whether a sed script has an `e` command or an `s` command with the `e`
/// flag, or cannot be read.
pub(crate) fn script_executes(script: &str) -> bool {
    Reader {
        bytes: script.as_bytes(),
        at: 0,
    }
    .executes()
    .unwrap_or(true)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_while(&mut self, f: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&f) {
            self.at += 1;
        }
    }

    /// `Some(true)` when a command runs something, `Some(false)` when the
    /// script is read to its end without one, `None` when it cannot be
    /// read.
    fn executes(&mut self) -> Option<bool> {
        loop {
            self.skip_while(|b| b.is_ascii_whitespace() || b == b';');
            let Some(_) = self.peek() else {
                return Some(false);
            };
            self.address()?;
            if self.peek() == Some(b',') {
                self.at += 1;
                self.skip_while(|b| b == b' ' || b == b'\t');
                self.address()?;
            }
            self.skip_while(|b| b == b' ' || b == b'\t' || b == b'!');
            let command = self.peek()?;
            self.at += 1;
            match command {
                b'e' => return Some(true),
                b'{' | b'}' | b'=' | b'd' | b'D' | b'g' | b'G' | b'h' | b'H' | b'n' | b'N'
                | b'p' | b'P' | b'x' | b'z' | b'F' | b'l' | b'L' | b'q' | b'Q' => {
                    self.skip_while(|b| b.is_ascii_digit() || b == b' ' || b == b'\t');
                }
                b':' | b'b' | b't' | b'T' | b'v' => {
                    self.skip_while(|b| b != b';' && b != b'\n');
                }
                b'#' | b'r' | b'R' | b'w' | b'W' => self.skip_while(|b| b != b'\n'),
                b'a' | b'i' | b'c' => self.text(),
                b'y' => {
                    let delimiter = self.peek()?;
                    self.at += 1;
                    self.part(delimiter)?;
                    self.part(delimiter)?;
                }
                b's' => {
                    let delimiter = self.peek()?;
                    if delimiter == b'\\' || delimiter == b'\n' {
                        return None;
                    }
                    self.at += 1;
                    self.part(delimiter)?;
                    self.part(delimiter)?;
                    while let Some(flag) = self.peek() {
                        match flag {
                            b'e' => return Some(true),
                            b'w' => {
                                self.skip_while(|b| b != b'\n');
                                break;
                            }
                            b'g' | b'p' | b'i' | b'I' | b'm' | b'M' | b'0'..=b'9' => self.at += 1,
                            _ => break,
                        }
                    }
                }
                _ => return None,
            }
        }
    }

    /// An address: a line number, `$`, `first~step`, `+N`, `~N`, or a
    /// regular expression `/re/` or `\cREc` with `I`/`M` after it.
    fn address(&mut self) -> Option<()> {
        match self.peek() {
            Some(b'0'..=b'9' | b'$' | b'+' | b'~') => {
                self.skip_while(|b| b.is_ascii_digit() || b == b'$' || b == b'~' || b == b'+');
            }
            Some(b'/') => {
                self.at += 1;
                self.part(b'/')?;
                self.skip_while(|b| b == b'I' || b == b'M');
            }
            Some(b'\\') => {
                self.at += 1;
                let delimiter = self.peek()?;
                self.at += 1;
                self.part(delimiter)?;
                self.skip_while(|b| b == b'I' || b == b'M');
            }
            _ => {}
        }
        Some(())
    }

    /// Reads up to and past an unescaped `delimiter`.
    fn part(&mut self, delimiter: u8) -> Option<()> {
        loop {
            let b = self.peek()?;
            self.at += 1;
            if b == b'\\' {
                self.at += 1;
            } else if b == delimiter {
                return Some(());
            }
        }
    }

    /// The text of `a`, `i`, `c`: to the end of the line, where a
    /// backslash before the newline continues it.
    fn text(&mut self) {
        while let Some(b) = self.peek() {
            self.at += 1;
            match b {
                b'\\' => self.at += 1,
                b'\n' => return,
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::script_executes;

    #[test]
    fn finds_e() {
        for script in [
            "e",
            "1e rm x",
            "s/a/b/e",
            "s/a/b/ge",
            "/x/e",
            "1,3{s|a|b|e}",
            "$!e",
            "s/a/b/;e",
        ] {
            assert!(script_executes(script), "{script}");
        }
        for script in [
            "s/a/b/g",
            "5p",
            "/error/p",
            "s/e/E/",
            "1d;$d",
            "y/abc/xyz/",
            "/re/I,+2p",
            "s/x/y/w out",
            "a\\\ntext e",
            ":a;N;ba",
            "\\,e,d",
        ] {
            assert!(!script_executes(script), "{script}");
        }
        assert!(script_executes("k"));
    }
}
