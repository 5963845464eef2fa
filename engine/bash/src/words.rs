//! Shell words as the wrappers and the risk rules see them.
//!
//! A [`Word`] keeps a word's source text (whitespace collapsed outside
//! quotes) and, when the word is a *plain literal* (no expansion, no
//! substitution), its value with quotes and backslashes removed. Only plain
//! literals are trusted as option names, command names or shell strings;
//! anything else is judged by its source text, conservatively.

use tree_sitter::Node;

use crate::syntax::{Kind, children, kind};

/// What tree-sitter may put before a word's first character.
const BLANKS: [char; 3] = [' ', '\t', '\n'];

/// How deep `literal` descends into a word's own nodes (concatenations of
/// strings are shallow; this only bounds hostile input).
const MAX_WORD_DEPTH: usize = 16;

/// One word of a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Word {
    /// The source text, whitespace collapsed outside quotes.
    pub raw: String,
    /// The value, when the word is a plain literal.
    pub lit: Option<String>,
    /// The best guess at the value: `lit`, else the inside of a
    /// double-quoted string, else `raw`. Used to re-parse shell strings.
    pub loose: String,
    /// Whether the word has an unquoted glob or brace character, so that as
    /// a command name it could expand to anything.
    pub pattern: bool,
}

impl Word {
    /// A word from a tree-sitter node of the line `src`.
    pub(crate) fn from_node(node: Node<'_>, src: &str) -> Word {
        let node = if kind(node) == Kind::CommandName {
            node.named_child(0).unwrap_or(node)
        } else {
            node
        };
        // tree-sitter can start a word with the newline before it (see
        // `Walk::command`); bash never does.
        let text = node_text(node, src).trim_start_matches(BLANKS);
        let lit = literal(node, src, 0);
        let loose = match (&lit, kind(node)) {
            (Some(value), _) => value.clone(),
            (None, Kind::String) => strip_quotes(text, '"').unwrap_or(text).to_owned(),
            (None, _) => text.to_owned(),
        };
        Word {
            raw: collapse_whitespace(text),
            lit,
            loose,
            pattern: has_pattern(node, src, 0),
        }
    }

    /// A plain literal word with this value (one cox worked out, such as a
    /// resolved command name).
    pub(crate) fn plain(value: &str) -> Word {
        Word {
            raw: value.to_owned(),
            lit: Some(value.to_owned()),
            loose: value.to_owned(),
            pattern: false,
        }
    }

    /// Appends `next` to this word: bash reads two words with only a line
    /// continuation between them as one.
    pub(crate) fn join(&mut self, next: Word) {
        self.raw.push_str(&next.raw);
        self.lit = self.lit.take().zip(next.lit).map(|(a, b)| a + &b);
        self.loose.push_str(&next.loose);
        self.pattern |= next.pattern;
    }

    /// Whether the word could expand to an option: it has an expansion or
    /// an unquoted glob, and does not start with an unquoted character
    /// that is plainly not a `-` (`$x`, `"$x"`, `*.rs`, `-$x` could; `src/*`
    /// and `./*` could not).
    pub(crate) fn may_become_option(&self) -> bool {
        if self.lit.is_some() && !self.pattern {
            return false;
        }
        !self
            .raw
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b"/._~+:,=@%^".contains(&b))
    }

    /// The literal value, or `None` when the word has an expansion.
    pub(crate) fn lit(&self) -> Option<&str> {
        self.lit.as_deref()
    }

    /// The value when literal, else the source text.
    pub(crate) fn value(&self) -> &str {
        self.lit.as_deref().unwrap_or(&self.raw)
    }

    /// The name a command word runs, when it can be known from the text:
    /// a literal without glob or brace characters. `[` and `[[` are names.
    pub(crate) fn command_name(&self) -> Option<&str> {
        let lit = self.lit()?;
        if lit.is_empty() {
            return None;
        }
        if self.pattern && lit != "[" && lit != "[[" {
            return None;
        }
        Some(lit)
    }
}

/// The last path component of a command name: `/usr/bin/rm` → `rm`.
pub(crate) fn basename(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// A node's text, or the empty string if it is not valid UTF-8 (it always
/// is for a `&str` source; this keeps the walk panic-free regardless).
pub(crate) fn node_text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

fn strip_quotes(text: &str, quote: char) -> Option<&str> {
    text.strip_prefix(quote)?.strip_suffix(quote)
}

/// The value of a plain literal node, or `None`.
fn literal(node: Node<'_>, src: &str, depth: usize) -> Option<String> {
    if depth > MAX_WORD_DEPTH || node.is_missing() || node.is_error() {
        return None;
    }
    let text = node_text(node, src);
    match kind(node) {
        Kind::Word => Some(unescape_word(text.trim_start_matches(BLANKS))),
        Kind::Number if node.named_child_count() == 0 => Some(text.to_owned()),
        Kind::RawString => strip_quotes(text, '\'').map(str::to_owned),
        Kind::AnsiCString => ansi_c(text.strip_prefix("$'")?.strip_suffix('\'')?),
        // An empty substitution, `$()` or `` `` ``, expands to nothing.
        Kind::CommandSubstitution => {
            let inner = text
                .strip_prefix("$(")
                .and_then(|t| t.strip_suffix(')'))
                .or_else(|| text.strip_prefix('`').and_then(|t| t.strip_suffix('`')))?;
            inner.trim().is_empty().then(String::new)
        }
        Kind::String => {
            let plain = children(node)
                .all(|(child, _)| !child.is_named() || kind(child) == Kind::StringContent);
            if !plain {
                return None;
            }
            strip_quotes(text, '"').map(unescape_double)
        }
        Kind::Concatenation => {
            let mut value = String::new();
            for (child, _) in children(node) {
                value.push_str(&literal(child, src, depth + 1)?);
            }
            Some(value)
        }
        _ => None,
    }
}

/// The value of the inside of an ANSI-C string (`$'…'`): `\n`, `\t`, `\e`
/// and the other letters bash knows, `\NNN` octal, `\xHH`, `\uHHHH`,
/// `\UHHHHHHHH`, `\cX`, `\\`, `\'` and `\"`. `None` for an escape that
/// makes no character (a NUL, which ends the string in bash, or a code
/// point that is not one).
pub(crate) fn ansi_c(inner: &str) -> Option<String> {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let mut number = |radix: u32, max: usize, first: Option<char>| {
            let mut digits: String = first.into_iter().collect();
            while digits.len() < max {
                match chars.peek() {
                    Some(d) if d.is_digit(radix) => digits.extend(chars.next()),
                    _ => break,
                }
            }
            u32::from_str_radix(&digits, radix).ok()
        };
        let code = match e {
            'a' => Some(7),
            'b' => Some(8),
            'e' | 'E' => Some(27),
            'f' => Some(12),
            'n' => Some(10),
            'r' => Some(13),
            't' => Some(9),
            'v' => Some(11),
            '\\' | '\'' | '"' | '?' => Some(u32::from(e)),
            '0'..='7' => number(8, 3, Some(e)),
            'x' => number(16, 2, None),
            'u' => number(16, 4, None),
            'U' => number(16, 8, None),
            'c' => chars.next().map(|x| u32::from(x) & 0x1f),
            other => {
                out.push('\\');
                out.push(other);
                continue;
            }
        };
        match code.and_then(char::from_u32) {
            Some('\0') | None => return None,
            Some(ch) => out.push(ch),
        }
    }
    Some(out)
}

/// An unquoted word's value: `\x` is `x`, a backslash-newline vanishes.
fn unescape_word(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\n') => {}
            Some(next) => out.push(next),
            None => out.push('\\'),
        }
    }
    out
}

/// The inside of a double-quoted string: only `\$ \` \" \\` and
/// backslash-newline are escapes there.
fn unescape_double(inner: &str) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('$' | '`' | '"' | '\\') => out.extend(chars.next()),
            Some('\n') => {
                chars.next();
            }
            _ => out.push('\\'),
        }
    }
    out
}

/// Whether a word has an unquoted `*`, `?`, `[` or `{`, or is a brace or
/// extglob pattern: as a command name it could become anything.
fn has_pattern(node: Node<'_>, src: &str, depth: usize) -> bool {
    if depth > MAX_WORD_DEPTH {
        return true;
    }
    match kind(node) {
        Kind::Word => {
            let mut chars = node_text(node, src).trim_start_matches(BLANKS).chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '*' | '?' | '[' | '{' => return true,
                    _ => {}
                }
            }
            false
        }
        Kind::BraceExpression | Kind::ExtglobPattern => true,
        Kind::Concatenation => children(node).any(|(child, _)| has_pattern(child, src, depth + 1)),
        _ => false,
    }
}

/// Collapses each run of whitespace outside quotes to one space, treats a
/// backslash-newline outside quotes as whitespace, and trims the ends.
/// Text inside `'…'`, `"…"` and `$'…'` is kept as written.
pub(crate) fn collapse_whitespace(text: &str) -> String {
    #[derive(Clone, Copy, PartialEq)]
    enum Quote {
        None,
        Single,
        Double,
        AnsiC,
    }
    let mut out = String::with_capacity(text.len());
    let mut quote = Quote::None;
    let mut pending_space = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quote == Quote::None {
            if c == '\\' && chars.peek() == Some(&'\n') {
                chars.next();
                pending_space = true;
                continue;
            }
            if c.is_whitespace() {
                pending_space = true;
                continue;
            }
            if pending_space && !out.is_empty() {
                out.push(' ');
            }
            pending_space = false;
        }
        out.push(c);
        match (quote, c) {
            (Quote::None, '\\') | (Quote::Double | Quote::AnsiC, '\\') => {
                out.extend(chars.next());
            }
            (Quote::None, '\'') => {
                quote = if out.ends_with("$'") {
                    Quote::AnsiC
                } else {
                    Quote::Single
                };
            }
            (Quote::None, '"') => quote = Quote::Double,
            (Quote::Single | Quote::AnsiC, '\'') | (Quote::Double, '"') => quote = Quote::None,
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapse_keeps_quoted_whitespace() {
        assert_eq!(collapse_whitespace("  a   b\t\tc  "), "a b c");
        assert_eq!(
            collapse_whitespace("'a   b'  \"c   d\""),
            "'a   b' \"c   d\""
        );
        assert_eq!(collapse_whitespace("a\\ \\   b"), "a\\ \\  b");
        assert_eq!(collapse_whitespace("a \\\n   b"), "a b");
        assert_eq!(collapse_whitespace("$'x\\'  y'  z"), "$'x\\'  y' z");
        assert_eq!(collapse_whitespace("\"a \\\"  b\"   c"), "\"a \\\"  b\" c");
    }

    #[test]
    fn ansi_c_strings() {
        assert_eq!(ansi_c("\\x72m").as_deref(), Some("rm"));
        assert_eq!(ansi_c("\\162\\155").as_deref(), Some("rm"));
        assert_eq!(ansi_c("\\u0072m").as_deref(), Some("rm"));
        assert_eq!(ansi_c("a\\tb\\'c").as_deref(), Some("a\tb'c"));
        assert_eq!(ansi_c("\\q").as_deref(), Some("\\q"));
        assert_eq!(ansi_c("a\\x00b"), None);
    }

    #[test]
    fn unescapes() {
        assert_eq!(unescape_word("\\rm"), "rm");
        assert_eq!(unescape_word("a\\ b"), "a b");
        assert_eq!(unescape_word("a\\"), "a\\");
        assert_eq!(unescape_double("a\\$b \\n \\\" \\\\"), "a$b \\n \" \\");
    }

    #[test]
    fn basenames() {
        assert_eq!(basename("/usr/bin/rm"), "rm");
        assert_eq!(basename("rm"), "rm");
        assert_eq!(basename("dir/"), "");
    }
}
