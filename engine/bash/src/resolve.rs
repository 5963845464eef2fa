//! Command names cox can work out before the line runs.
//!
//! A command word that is not a plain literal may still name a program
//! that can be known from the text alone: `$'\x72m'` (ANSI-C quoting),
//! `{rm,x}` (brace expansion: the words `rm x`), `r$()m` and `r""m` (empty
//! expansions and quotes inside a word), `rm${IFS}-rf${IFS}x` (an unquoted
//! `$IFS` splits words), `a=rm; $a x` (a variable assigned earlier on the
//! line) and `${a:-rm}` (a default). [`command_word`] gives every set of
//! words such a command word can become, so deny rules see `rm` whichever
//! way it was written.
//!
//! It errs on the side of listing more: a variable assigned in several
//! places on the line (`if …; then a=rm; else a=ls; fi`) gives one
//! candidate per value, and a default counts as a candidate although the
//! environment may set the variable. Whatever reads a variable stays
//! dynamic for the engine (an allow rule cannot vouch for it); what is
//! fully static (`$'\x72m'`, `{rm,x}`, `r""m`) is not. Anything it cannot
//! follow (a glob, a non-empty substitution, a variable with no value
//! known from the line and no default) gives `None`, and the command word
//! stays dynamic.

use std::collections::HashMap;

use crate::words::ansi_c;

/// At most this many candidates are worked out for one command word.
const MAX_CANDIDATES: usize = 16;

/// Values the line gives its variables, in the order it assigns them.
/// `None` marks a variable assigned a value that is only known at run
/// time.
#[derive(Debug, Default)]
pub(crate) struct Vars {
    values: HashMap<String, Option<Vec<String>>>,
}

impl Vars {
    /// Notes `name=value`; `None` for a value only known at run time.
    pub(crate) fn assign(&mut self, name: &str, value: Option<&str>) {
        let entry = self
            .values
            .entry(name.to_owned())
            .or_insert_with(|| Some(Vec::new()));
        match (entry.as_mut(), value) {
            (Some(values), Some(value)) => {
                if values.len() < MAX_CANDIDATES && !values.iter().any(|v| v == value) {
                    values.push(value.to_owned());
                }
            }
            _ => *entry = None,
        }
    }

    /// Whether the line gives a variable a value that bash would expand
    /// again when it evaluates the variable as arithmetic or a name: one
    /// only known at run time, or one with `[`, `$` or a backtick in it.
    pub(crate) fn risky(&self) -> bool {
        self.values.values().any(|values| match values {
            None => true,
            Some(values) => values.iter().any(|v| v.contains(['[', '$', '`'])),
        })
    }

    /// The values known for `name`: `Some(empty)` when the line never
    /// assigns it, `None` when it assigns something unknown.
    fn get(&self, name: &str) -> Option<&[String]> {
        match self.values.get(name) {
            None => Some(&[]),
            Some(values) => values.as_deref(),
        }
    }
}

/// What a command word can become: each candidate is the words it expands
/// to (one or more, after brace expansion and `$IFS` splitting), and
/// whether a variable was read to get there.
pub(crate) fn command_word(raw: &str, vars: &Vars) -> Option<(Vec<Vec<String>>, bool)> {
    let mut via_variable = false;
    let braced = braces(raw, 0)?;
    let candidates = if let [word] = braced.as_slice() {
        expand(word, vars, &mut via_variable)?
    } else {
        // Brace expansion makes several words: `{rm,x}` is `rm x`.
        let mut words = Vec::new();
        for word in &braced {
            let mut each = expand(word, vars, &mut via_variable)?;
            if each.len() != 1 {
                return None;
            }
            words.extend(each.pop()?);
        }
        vec![words]
    };
    let mut out: Vec<Vec<String>> = Vec::new();
    for fields in candidates {
        let words: Vec<String> = fields.into_iter().filter(|f| !f.is_empty()).collect();
        if !words.is_empty() && !out.contains(&words) {
            out.push(words);
        }
    }
    (!out.is_empty()).then_some((out, via_variable))
}

/// The words a word's raw text becomes when cox can tell: brace groups
/// expanded, quotes removed, known variables and empty substitutions
/// resolved. A variable with several values gives each; `None` when a part
/// cannot be known. `~` is left as written.
pub(crate) fn literal_words(raw: &str, vars: &Vars) -> Option<Vec<String>> {
    let mut via_variable = false;
    let mut out = Vec::new();
    for braced in braces(raw, 0)? {
        for fields in expand_paths(&braced, vars, &mut via_variable)? {
            out.extend(fields.into_iter().filter(|f| !f.is_empty()));
            if out.len() > MAX_CANDIDATES {
                return None;
            }
        }
    }
    Some(out)
}

/// Like [`expand`], keeping glob characters (a path may be a glob).
fn expand_paths(raw: &str, vars: &Vars, via: &mut bool) -> Option<Vec<Vec<String>>> {
    // Globs stay: split the raw text around them and expand the rest.
    if !raw.contains(['*', '?', '[']) {
        return expand(raw, vars, via);
    }
    let quoted = raw.contains(['\'', '"', '\\', '$', '`']);
    (!quoted).then(|| vec![vec![raw.to_owned()]])
}

/// Brace expansion of a word's raw text: `a{b,c}d` is `abd acd`. Only
/// groups with a comma at their top level, outside quotes; nested groups
/// are expanded one level at a time, a few levels deep.
fn braces(raw: &str, depth: usize) -> Option<Vec<String>> {
    let Some((open, close, parts)) = first_group(raw) else {
        return Some(vec![raw.to_owned()]);
    };
    if depth > 4 {
        return None;
    }
    let mut out = Vec::new();
    for part in parts {
        let word = format!("{}{part}{}", &raw[..open], &raw[close + 1..]);
        out.extend(braces(&word, depth + 1)?);
        if out.len() > MAX_CANDIDATES {
            return None;
        }
    }
    Some(out)
}

/// The first unquoted `{…}` with a top-level comma: where it opens and
/// closes, and its alternatives.
fn first_group(raw: &str) -> Option<(usize, usize, Vec<&str>)> {
    let bytes = raw.as_bytes();
    let mut quote = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match (quote, b) {
            (None, b'\\') => i += 1,
            (None, b'\'' | b'"') => quote = Some(b),
            (Some(q), _) if b == q => quote = None,
            (Some(b'"'), b'\\') => i += 1,
            (None, b'$') if bytes.get(i + 1) == Some(&b'{') => {
                // A parameter expansion, not a brace group.
                let end = raw[i..].find('}')?;
                i += end;
            }
            (None, b'{') => {
                let mut level = 0usize;
                let mut commas = Vec::new();
                for (j, &c) in bytes.iter().enumerate().skip(i) {
                    match c {
                        b'{' => level += 1,
                        b'}' => {
                            level -= 1;
                            if level == 0 {
                                if commas.is_empty() {
                                    break;
                                }
                                let mut parts = Vec::new();
                                let mut from = i + 1;
                                for comma in commas {
                                    parts.push(&raw[from..comma]);
                                    from = comma + 1;
                                }
                                parts.push(&raw[from..j]);
                                return Some((i, j, parts));
                            }
                        }
                        b',' if level == 1 => commas.push(j),
                        b'\'' | b'"' | b'\\' | b'$' => break,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// One partial expansion: the fields so far and the one being built.
#[derive(Clone, Default)]
struct Partial {
    fields: Vec<String>,
    current: String,
}

/// Expands a word's raw text (without brace groups) into its candidates'
/// fields, or `None` when a part cannot be known.
fn expand(raw: &str, vars: &Vars, via_variable: &mut bool) -> Option<Vec<Vec<String>>> {
    let mut partials = vec![Partial::default()];
    let push_all = |partials: &mut Vec<Partial>, text: &str| {
        for p in partials.iter_mut() {
            p.current.push_str(text);
        }
    };
    let chars: Vec<char> = raw.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                if let Some(next) = chars.get(i + 1)
                    && *next != '\n'
                {
                    push_all(&mut partials, &next.to_string());
                }
                i += 2;
            }
            '\'' => {
                let end = find(&chars, i + 1, '\'')?;
                let text: String = chars[i + 1..end].iter().collect();
                push_all(&mut partials, &text);
                i = end + 1;
            }
            '"' => {
                let end = closing_double(&chars, i + 1)?;
                let inner: String = chars[i + 1..end].iter().collect();
                let values = double_quoted(&inner, vars, via_variable)?;
                partials = product(partials, &values, false)?;
                i = end + 1;
            }
            '$' => {
                let rest: String = chars[i..].iter().collect();
                let (values, used, split) = dollar(&rest, vars, via_variable)?;
                partials = product(partials, &values, split)?;
                i += used;
            }
            '`' => {
                // Only an empty substitution is known: it expands to nothing.
                let end = find(&chars, i + 1, '`')?;
                if chars[i + 1..end].iter().any(|c| !c.is_whitespace()) {
                    return None;
                }
                i = end + 1;
            }
            '*' | '?' | '[' | '{' | '}' => return None,
            _ => {
                push_all(&mut partials, &c.to_string());
                i += 1;
            }
        }
    }
    Some(
        partials
            .into_iter()
            .map(|mut p| {
                p.fields.push(p.current);
                p.fields
            })
            .collect(),
    )
}

/// Every partial extended by every value; with `split`, an unquoted
/// expansion's blanks end a field (`$IFS` at its default).
fn product(partials: Vec<Partial>, values: &[String], split: bool) -> Option<Vec<Partial>> {
    let mut out = Vec::new();
    for partial in partials {
        for value in values {
            let mut next = partial.clone();
            if split {
                let mut pieces = value.split([' ', '\t', '\n']);
                if let Some(first) = pieces.next() {
                    next.current.push_str(first);
                }
                for piece in pieces {
                    next.fields.push(std::mem::take(&mut next.current));
                    next.current.push_str(piece);
                }
            } else {
                next.current.push_str(value);
            }
            out.push(next);
            if out.len() > MAX_CANDIDATES {
                return None;
            }
        }
    }
    Some(out)
}

/// The values of the inside of a double-quoted string.
fn double_quoted(inner: &str, vars: &Vars, via_variable: &mut bool) -> Option<Vec<String>> {
    let mut values = vec![String::new()];
    let chars: Vec<char> = inner.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' if matches!(chars.get(i + 1), Some('$' | '`' | '"' | '\\')) => {
                values.iter_mut().for_each(|v| v.push(chars[i + 1]));
                i += 2;
            }
            '\\' if chars.get(i + 1) == Some(&'\n') => i += 2,
            '$' => {
                let rest: String = chars[i..].iter().collect();
                let (found, used, _) = dollar(&rest, vars, via_variable)?;
                let mut next = Vec::new();
                for v in &values {
                    for f in &found {
                        next.push(format!("{v}{f}"));
                    }
                }
                if next.len() > MAX_CANDIDATES {
                    return None;
                }
                values = next;
                i += used;
            }
            '`' => return None,
            c => {
                values.iter_mut().for_each(|v| v.push(c));
                i += 1;
            }
        }
    }
    Some(values)
}

/// A `$…` at the start of `rest`: its possible values, how many chars it
/// spans, and whether its value is split into fields (`$IFS` unquoted).
fn dollar(rest: &str, vars: &Vars, via_variable: &mut bool) -> Option<(Vec<String>, usize, bool)> {
    let chars: Vec<char> = rest.chars().collect();
    match chars.get(1) {
        Some('\'') => {
            let end = find(&chars, 2, '\'')?;
            let inner: String = chars[2..end].iter().collect();
            Some((vec![ansi_c(&inner)?], end + 1, false))
        }
        Some('(') => {
            // `$()` or `$( )`: an empty substitution.
            let end = find(&chars, 2, ')')?;
            if chars[2..end].iter().any(|c| !c.is_whitespace()) {
                return None;
            }
            Some((vec![String::new()], end + 1, false))
        }
        Some('{') => {
            let end = find(&chars, 2, '}')?;
            let inner: String = chars[2..end].iter().collect();
            let name_len = inner
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .count();
            let (name, op) = inner.split_at(name_len);
            let default = ["-", ":-", "=", ":="]
                .iter()
                .find_map(|o| op.strip_prefix(o))
                .filter(|d| d.chars().all(|c| c.is_alphanumeric() || "_-./".contains(c)));
            if !op.is_empty() && default.is_none() {
                return None;
            }
            let values = variable(name, default, vars, via_variable)?;
            Some((values, end + 1, name == "IFS"))
        }
        Some(c) if c.is_ascii_alphabetic() || *c == '_' => {
            let len = chars[1..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
                .count();
            let name: String = chars[1..=len].iter().collect();
            let values = variable(&name, None, vars, via_variable)?;
            Some((values, len + 1, name == "IFS"))
        }
        _ => None,
    }
}

/// The values a variable can have: what the line assigns it, and its
/// default. `$IFS` is blank-separated unless the line assigns it.
fn variable(
    name: &str,
    default: Option<&str>,
    vars: &Vars,
    via_variable: &mut bool,
) -> Option<Vec<String>> {
    let known = vars.get(name)?;
    if name == "IFS" && known.is_empty() {
        return Some(vec![" ".to_owned()]);
    }
    *via_variable = true;
    let mut values: Vec<String> = known.to_vec();
    if let Some(default) = default {
        values.push(default.to_owned());
    }
    (!values.is_empty()).then_some(values)
}

fn find(chars: &[char], from: usize, target: char) -> Option<usize> {
    (from..chars.len()).find(|&i| chars[i] == target)
}

/// The closing `"` of a double-quoted string opened before `from`.
fn closing_double(chars: &[char], from: usize) -> Option<usize> {
    let mut i = from;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(raw: &str, vars: &Vars) -> Option<Vec<Vec<String>>> {
        command_word(raw, vars).map(|(candidates, _)| candidates)
    }

    fn one(list: &[&str]) -> Vec<Vec<String>> {
        vec![list.iter().map(|s| (*s).to_owned()).collect()]
    }

    #[test]
    fn static_names() {
        let none = Vars::default();
        assert_eq!(words("$'\\x72m'", &none), Some(one(&["rm"])));
        assert_eq!(words("$'\\162m'", &none), Some(one(&["rm"])));
        assert_eq!(words("{rm,x}", &none), Some(one(&["rm", "x"])));
        assert_eq!(words("r$()m", &none), Some(one(&["rm"])));
        assert_eq!(words("r``m", &none), Some(one(&["rm"])));
        assert_eq!(words("r\"\"m", &none), Some(one(&["rm"])));
        assert_eq!(
            words("rm${IFS}-rf${IFS}x", &none),
            Some(one(&["rm", "-rf", "x"]))
        );
        assert_eq!(words("rm$IFS'x'", &none), Some(one(&["rm", "x"])));
        assert_eq!(words("*", &none), None);
        assert_eq!(words("$(echo rm)", &none), None);
        assert_eq!(words("$x", &none), None);
    }

    #[test]
    fn variables_and_defaults() {
        let mut vars = Vars::default();
        vars.assign("a", Some("rm"));
        assert_eq!(words("$a", &vars), Some(one(&["rm"])));
        assert_eq!(words("\"${a}\"", &vars), Some(one(&["rm"])));
        assert_eq!(words("${b:-rm}", &vars), Some(one(&["rm"])));
        vars.assign("a", Some("ls"));
        let got = words("$a", &vars).unwrap();
        assert_eq!(got.len(), 2, "{got:?}");
        vars.assign("c", None);
        assert_eq!(words("$c", &vars), None);
        assert!(command_word("$a", &vars).unwrap().1, "a variable was read");
        assert!(!command_word("$'rm'", &vars).unwrap().1);
    }
}
