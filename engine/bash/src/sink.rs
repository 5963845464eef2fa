//! What a walk collects: the commands, the first opacity reason, and the
//! notes and budget shared by a line and the sources nested in it.
//!
//! Whatever reason is recorded first, the sink also notes the ones that
//! matter to deny rules later: a limit reached or a parse error (the list
//! of commands may be incomplete) and a command name built at run time.

use crate::{Command, Opacity};

/// What a walk has found so far.
#[derive(Debug)]
pub(crate) struct Sink {
    pub commands: Vec<Command>,
    pub opaque: Option<Opacity>,
    /// Parse every line with tree-sitter, even a plain one (to check the
    /// fast path against it).
    pub tree_sitter_only: bool,
    /// A loop or builtin set a variable from data (`for x in *`, `read x`).
    pub data_vars: bool,
    /// The line evaluates a variable's value as code: arithmetic, `${!x}`,
    /// `${x@P}`, `test -v`, `let` (see `scan`).
    pub evaluates: bool,
    /// What nested sources (shell strings, scripts, hidden substitutions)
    /// may still cost.
    pub budget: Budget,
    /// A limit was reached or a source did not parse: the commands listed
    /// may not be all the line runs, so the whole line is scanned for
    /// program names (see `scan_names`).
    pub partial: bool,
    /// Texts the split could not follow, scanned for program names: the
    /// arguments of a command that runs code given inline.
    pub unfollowed: Vec<String>,
    /// A command name is only known when the line runs.
    pub dynamic: bool,
    /// What the line assigns its variables, for resolving command names
    /// (`a=rm; $a x`).
    pub vars: crate::resolve::Vars,
    /// The paths commands and redirects name.
    pub paths: Vec<crate::paths::PathArg>,
    /// Where `cd`/`pushd` may move (`None`: unknown).
    pub dirs: Vec<Option<String>>,
    /// The next command listed is run by `xargs`: its operands come from
    /// standard input too.
    pub from_input: bool,
    /// The least risk the line's opacities give it (see [`Sink::opaque`]).
    pub floor: cox_protocol::types::Risk,
}

impl Default for Sink {
    fn default() -> Self {
        Sink {
            commands: Vec::new(),
            opaque: None,
            tree_sitter_only: false,
            data_vars: false,
            evaluates: false,
            budget: Budget::for_line(0),
            partial: false,
            unfollowed: Vec::new(),
            dynamic: false,
            vars: crate::resolve::Vars::default(),
            paths: Vec::new(),
            floor: cox_protocol::types::Risk::ReadOnly,
            dirs: Vec::new(),
            from_input: false,
        }
    }
}

/// How much parsing nested sources may still take, so that no line costs
/// more than a few parses of its own length: nested sources are parts of
/// the line, but a damaged line can have the same text parsed again from
/// several places (`eval eval …` listed by the tree and by `fallback`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    /// Bytes.
    pub bytes: usize,
    /// Parses.
    pub walks: usize,
}

impl Budget {
    /// Nested parses of at most 4 times the line's length plus 2 KiB, and
    /// at most 64 of them.
    pub(crate) fn for_line(len: usize) -> Budget {
        Budget {
            bytes: len.saturating_mul(4).saturating_add(2048),
            walks: 64,
        }
    }

    /// Takes a parse of `len` bytes from the budget, if it has room.
    pub(crate) fn take(&mut self, len: usize) -> bool {
        if self.walks == 0 || len > self.bytes {
            return false;
        }
        self.walks -= 1;
        self.bytes -= len;
        true
    }
}

impl Sink {
    /// Records a reason the line is opaque; the first one is kept. Each
    /// also raises the line's least risk ([`Opacity::floor`]).
    pub(crate) fn opaque(&mut self, reason: Opacity) {
        match reason {
            Opacity::TooDeep | Opacity::TooLarge | Opacity::ParseError => self.partial = true,
            Opacity::DynamicCommand(_) | Opacity::Arithmetic => self.dynamic = true,
            _ => {}
        }
        self.floor = self.floor.max(reason.floor());
        if self.opaque.is_none() {
            self.opaque = Some(reason);
        }
    }
}

/// The program names a rough word scan finds in `texts`: every run of
/// characters that can make up a command name (letters, digits and `_ . +
/// - /`, a path reduced to its last part), read once as written and once
/// with quotes and backslashes removed (`r''m` is `rm`). Sorted, each once.
pub(crate) fn scan_names<'t>(texts: impl IntoIterator<Item = &'t str>) -> Vec<String> {
    let mut names = std::collections::BTreeSet::new();
    let mut add = |text: &str| {
        let runs = text.split(|c: char| !(c.is_alphanumeric() || "_.+-/".contains(c)));
        for run in runs {
            // Leading dashes are an option's or `${x:-…}`'s, not the name's.
            let name = run
                .rsplit('/')
                .next()
                .unwrap_or(run)
                .trim_start_matches('-');
            if !name.is_empty() {
                names.insert(name.to_owned());
            }
        }
    };
    for text in texts {
        add(text);
        if text.contains(['\'', '"', '\\']) {
            add(&text.replace(['\'', '"', '\\'], ""));
        }
        // ANSI-C strings decoded: `$'\x72m'` is `rm`, also a few levels
        // of quoting deep (`\$'\\x72m'` in a string for `eval`).
        if text.contains("$'") {
            let mut level = text.replace("'\\''", "'");
            for _ in 0..3 {
                add(&decode_ansi_c(&level));
                level = unescape_once(&level);
            }
        }
        // Escapes however deeply quoted: every `\xHH`, `\NNN`, `\uHHHH`
        // decoded, then quotes dropped (`$'\''\x68ead'\''` is `head`).
        if ["\\x", "\\u", "\\U", "\\0", "\\1", "\\2", "\\3"]
            .iter()
            .any(|e| text.contains(e))
        {
            add(&decode_escapes(text).replace(['\'', '"', '\\', '$'], ""));
        }
        // Empty substitutions vanish too: `p$()ython3` is `python3`.
        if text.contains("$()") || text.contains("``") {
            let bare = text.replace("$()", "").replace("``", "");
            add(&bare.replace(['\'', '"', '\\'], ""));
        }
    }
    names.into_iter().collect()
}

/// `text` with each `$'…'` replaced by its value (undecodable ones left).
fn decode_ansi_c(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("$'") {
        out.push_str(&rest[..at]);
        let inner = &rest[at + 2..];
        // The closing quote: the first `'` not escaped by a backslash.
        let mut end = None;
        let mut escaped = false;
        for (i, c) in inner.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '\'' if !escaped => {
                    end = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let Some(end) = end else {
            out.push_str(&rest[at..]);
            return out;
        };
        match crate::words::ansi_c(&inner[..end]) {
            Some(value) => out.push_str(&value),
            None => out.push_str(&rest[at..at + 2 + end + 1]),
        }
        rest = &inner[end + 1..];
    }
    out.push_str(rest);
    out
}

/// `text` with one level of backslash escapes removed (`\\x` is `\x`,
/// `\'` is `'`).
fn unescape_once(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out.replace("'\\''", "'")
}

/// Whether a line names bash's network paths, `/dev/tcp/…` or `/dev/udp/…`,
/// however quoted.
pub(crate) fn names_network(line: &str) -> bool {
    let found = |text: &str| text.contains("/dev/tcp/") || text.contains("/dev/udp/");
    if found(line) {
        return true;
    }
    if !line.contains("/dev/") && !line.contains("$'") {
        return false;
    }
    let decoded = decode_ansi_c(line);
    found(&decoded.replace(['\'', '"', '\\'], ""))
}

/// `text` with every `\xHH`, `\NNN` (octal), `\uHHHH` and `\UHHHHHHHH`
/// escape decoded wherever it stands; other text kept.
fn decode_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let (radix, max) = match chars.peek() {
            Some('x') => (16, 2),
            Some('u') => (16, 4),
            Some('U') => (16, 8),
            Some('0'..='7') => (8, 3),
            _ => {
                out.push(c);
                continue;
            }
        };
        if radix == 16 {
            chars.next();
        }
        let mut digits = String::new();
        while digits.len() < max {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => digits.extend(chars.next()),
                _ => break,
            }
        }
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(ch) if ch != '\0' => out.push(ch),
            _ => {
                out.push('\\');
                out.push_str(&digits);
            }
        }
    }
    out
}
