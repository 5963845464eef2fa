//! What the tree does not show: a scan of the raw text after the walk.
//!
//! tree-sitter-bash does not parse everything bash expands. Backticks in a
//! heredoc body, a backtick or quoted `$( )` inside `${x:-…}` in double
//! quotes, and `$( )` inside a single-quoted array subscript that bash
//! evaluates again (`$(( 'a[$(rm y)]' ))`, `test -v 'a[$(rm y)]'`,
//! `${x@P}`) all run a command that the tree shows as plain text. So:
//!
//! * **Catch-all.** A source with a backtick, `$(`, `<(`, `>(` or `$[`
//!   anywhere, quoted or not, is opaque, even where the tree shows none
//!   (`$((` that the tree parsed as arithmetic excepted). The words may be
//!   plain text to bash; the split does not try to tell.
//! * **Hidden substitutions.** Each `$( … )` or `` `…` `` the tree did not
//!   parse as a substitution is parsed again on its own, like a shell
//!   string, so its commands are listed for deny rules, within the line's
//!   budget of nested parses (see `source`).
//! * **Evaluation.** Arithmetic (`$((x))`, `((x))`, `$[x]`, `let`, a
//!   subscript `${a[x]}`, an offset `${s:x}`), `${!x}`, `${x@P}`, and `-v`
//!   or an arithmetic comparison in `test`/`[[` evaluate a variable's
//!   *value* as code: with `x='a[$(rm y)]'`, `$((x))` runs `rm y`. When a
//!   line both evaluates and sets a variable from data (`for x in *`,
//!   `read x`, `mapfile`, `getopts`, `printf -v`), it is opaque
//!   ([`Opacity::Arithmetic`]); the crate checks this once the whole line
//!   is walked.

use crate::Opacity;
use crate::rules::may_matter;
use crate::walk::Walk;

/// Runs the scan over the source a walk has just walked.
pub(crate) fn after_walk(walk: &mut Walk<'_>, tree_depth: usize) {
    let src = walk.src;
    if src.contains("coproc")
        && let Some(name) = coproc_name(src)
    {
        walk.sink.opaque(Opacity::Assignment(name));
    }
    // Every construct below needs one of these.
    if !src.contains(['`', '$', '(']) {
        return;
    }
    walk.seen.sort_unstable();
    walk.arithmetic.sort_unstable();
    walk.sink.evaluates |= evaluates(src);
    if let Some(name) = arithmetic_assignment(src) {
        walk.sink.opaque(Opacity::Assignment(name));
    }

    if walk.sink.opaque.is_none()
        && let Some(reason) = catch_all(src, &walk.arithmetic)
    {
        walk.sink.opaque(reason);
    }
    if !src.contains(['`', '$']) {
        return;
    }
    let found = Found {
        seen: &walk.seen,
        arithmetic: &walk.arithmetic,
        unwalked: &walk.unwalked,
    };
    let regions = hidden(src, &found, walk.sink.budget.walks + 1);
    for region in regions {
        walk.nested(&region, tree_depth);
    }
}

/// The first sign of a substitution in the raw text, whatever the quoting:
/// a backtick, `$(` (not a `$((` the tree parsed as arithmetic), `<(`,
/// `>(` or `$[`.
fn catch_all(src: &str, arithmetic: &[usize]) -> Option<Opacity> {
    let bytes = src.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let next = bytes.get(i + 1).copied();
        match (b, next) {
            (b'`', _) => return Some(Opacity::Backticks),
            (b'$', Some(b'(')) => {
                let parsed_arithmetic =
                    bytes.get(i + 2) == Some(&b'(') && arithmetic.binary_search(&i).is_ok();
                if !parsed_arithmetic {
                    return Some(Opacity::CommandSubstitution);
                }
            }
            (b'<' | b'>', Some(b'(')) => return Some(Opacity::ProcessSubstitution),
            (b'$', Some(b'[')) => return Some(Opacity::Arithmetic),
            _ => {}
        }
    }
    None
}

/// What the walk found in the tree, by byte offset.
struct Found<'a> {
    /// Where a substitution starts (sorted).
    seen: &'a [usize],
    /// Where `$((…))` or `$[…]` starts (sorted).
    arithmetic: &'a [usize],
    /// Subtrees not walked for being too deep.
    unwalked: &'a [std::ops::Range<usize>],
}

/// The text of each `$( … )` and `` `…` `` that the tree did not parse as
/// a substitution, at most `limit` of them, outside the subtrees the walk
/// left for being too deep.
/// A backtick substitution's text is unescaped as bash does (`` \` ``,
/// `\\`, `\$`), so nested backticks are found when it is parsed; one the
/// tree did parse is taken again when it has nested backticks, which the
/// tree leaves as text.
fn hidden(src: &str, found: &Found<'_>, limit: usize) -> Vec<String> {
    let Found {
        seen,
        arithmetic,
        unwalked,
    } = *found;
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    // The closing backtick of a substitution the tree parsed.
    let mut closer = None;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if out.len() >= limit {
            break;
        }
        if let Some(skipped) = unwalked.iter().find(|r| r.contains(&i)) {
            i = skipped.end;
            continue;
        }
        match b {
            b'\\' => i += 2,
            b'`' if closer == Some(i) => {
                closer = None;
                i += 1;
            }
            b'`' => {
                let end = closing_backtick(bytes, i + 1);
                let inner = src.get(i + 1..end).unwrap_or_default();
                if seen.binary_search(&i).is_ok() && !inner.contains("\\`") {
                    closer = Some(end);
                    i += 1;
                } else {
                    out.push(unescape_backticks(inner));
                    i = end + 1;
                }
            }
            b'$' if bytes.get(i + 1) == Some(&b'(') => {
                let arithmetic =
                    bytes.get(i + 2) == Some(&b'(') && arithmetic.binary_search(&i).is_ok();
                if arithmetic {
                    i += 3;
                } else if seen.binary_search(&i).is_ok() {
                    i += 2;
                } else {
                    let end = closing_paren(bytes, i + 2);
                    out.push(src.get(i + 2..end).unwrap_or_default().to_owned());
                    i = end + 1;
                }
            }
            _ => i += 1,
        }
    }
    out.retain(|region| !region.trim().is_empty());
    out
}

/// Where the backtick closing one opened before `from` is: the next one
/// not escaped by a backslash, or the end of the text.
fn closing_backtick(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'`' => return i,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Where the `)` closing a `$(` opened before `from` is, counting
/// parentheses and skipping quoted text; the end of the text if none.
fn closing_paren(bytes: &[u8], from: usize) -> usize {
    let mut depth = 1usize;
    let mut i = from;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 1,
            b'\'' => {
                i += 1;
                while bytes.get(i).is_some_and(|&c| c != b'\'') {
                    i += 1;
                }
            }
            b'"' => {
                i += 1;
                while let Some(&c) = bytes.get(i) {
                    match c {
                        b'\\' => i += 1,
                        b'"' => break,
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// The text of a backtick substitution as bash runs it: `` \` ``, `\\`
/// and `\$` lose their backslash.
fn unescape_backticks(inner: &str) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('`' | '\\' | '$')) {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether the text has a construct that evaluates a variable's value as
/// an expression or a name: `${!x}`, `${x@P}`, or a variable name in
/// `(( … ))`, `$[ … ]`, a subscript `${a[…]}` or an offset `${s:…}` (not
/// `${x:-…}` and the like). `$((1+2))` and `${s:2}` name none. `let`,
/// `test -v` and `[[ … -eq … ]]` are noted by the walk.
fn evaluates(src: &str) -> bool {
    if src.contains("${!") || src.contains("@P") {
        return true;
    }
    let bytes = src.as_bytes();
    let names_a_variable = |from: usize, close: &[u8]| {
        // Up to the closing text, looked for only so far (not found is
        // taken as a name, so hostile input stays linear).
        let rest = bytes.get(from..).unwrap_or_default();
        let window = &rest[..rest.len().min(256)];
        match window.windows(close.len()).position(|w| w == close) {
            Some(end) => window[..end]
                .iter()
                .any(|b| b.is_ascii_alphabetic() || b"_$`".contains(b)),
            None => true,
        }
    };
    (0..bytes.len()).any(|at| match &bytes[at..] {
        [b'(', b'(', ..] => names_a_variable(at + 2, b"))"),
        [b'$', b'[', ..] => names_a_variable(at + 2, b"]"),
        [b'$', b'{', rest @ ..] => {
            let rest = rest.strip_prefix(b"#").unwrap_or(rest);
            let name = rest
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .count();
            let from = at + 2 + (bytes.len() - at - 2 - rest.len()) + name + 1;
            match (name, rest.get(name), rest.get(name + 1)) {
                (0, _, _) => false,
                (_, Some(b'['), _) => names_a_variable(from, b"]"),
                (_, Some(b':'), Some(b'-' | b'=' | b'?' | b'+')) => false,
                (_, Some(b':'), _) => names_a_variable(from, b"}"),
                _ => false,
            }
        }
        _ => false,
    })
}

/// The first variable that matters (see [`may_matter`]) assigned by an
/// arithmetic expression or a parameter expansion: `$((PATH=0))`,
/// `((IFS+=1))`, `$[PATH++]`, a subscript `${a[PATH=0]}` or offset
/// `${s:PATH=0}`, `${PATH:=x}` and `${PATH=x}`. Such an assignment changes
/// what later commands resolve to as surely as `PATH=x` does.
pub(crate) fn arithmetic_assignment(src: &str) -> Option<String> {
    // Quotes do not hide a name from arithmetic (`$(("PATH"=0))` assigns
    // PATH): they are dropped first, which can only find more.
    let unquoted;
    let src = if src.contains(['"', '\'', '\\']) {
        unquoted = src.replace(['"', '\'', '\\'], "");
        unquoted.as_str()
    } else {
        src
    };
    // One pass with a stack of open brackets, each noting whether what it
    // holds is arithmetic: linear in the line, whatever its nesting.
    let bytes = src.as_bytes();
    let mut stack: Vec<(u8, bool)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let arithmetic = stack.last().is_some_and(|(_, a)| *a);
        match &bytes[i..] {
            [b'(', b'(', ..] => {
                stack.push((b')', true));
                stack.push((b')', true));
                i += 2;
                continue;
            }
            [b'$', b'[', ..] => {
                stack.push((b']', true));
                i += 2;
                continue;
            }
            [b'$', b'{', rest @ ..] => {
                let name = rest
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                    .count();
                let after = rest.get(name..).unwrap_or_default();
                let candidate = src.get(i + 2..i + 2 + name).unwrap_or_default();
                let direct = after.starts_with(b"=") || after.starts_with(b":=");
                if direct && name > 0 && may_matter(candidate) {
                    return Some(candidate.to_owned());
                }
                let evaluated = name > 0
                    && (after.starts_with(b"[")
                        || (after.starts_with(b":")
                            && !matches!(after.get(1), Some(b'-' | b'=' | b'?' | b'+'))));
                stack.push((b'}', evaluated));
                i += 2 + name;
                continue;
            }
            [b'(', ..] => stack.push((b')', arithmetic)),
            [b'[', ..] if arithmetic => stack.push((b']', true)),
            [close @ (b')' | b']' | b'}'), ..] if stack.last().is_some_and(|(c, _)| c == close) => {
                stack.pop();
            }
            [b, ..] if arithmetic && (b.is_ascii_alphabetic() || *b == b'_') => {
                let starts =
                    i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
                let end = i + bytes[i..]
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                    .count();
                if starts && assigns(src, i, end) && may_matter(&src[i..end]) {
                    return Some(src[i..end].to_owned());
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `coproc NAME { …; }` sets NAME (to the coprocess's descriptors): the
/// first such name that matters.
pub(crate) fn coproc_name(src: &str) -> Option<String> {
    src.match_indices("coproc").find_map(|(at, _)| {
        let before = src[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        let rest = src[at + 6..].trim_start_matches([' ', '\t']);
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let after = rest[name.len()..].trim_start_matches([' ', '\t']);
        (after.starts_with(['{', '(']) && may_matter(&name)).then_some(name)
    })
}

/// Whether the name at `start..end` of `expr` is assigned: `NAME=`, `NAME
/// op=` (not `==`, `<=`, `>=`, `!=`), `NAME++`/`NAME--`, `++NAME`/`--NAME`.
fn assigns(expr: &str, start: usize, end: usize) -> bool {
    let rest = expr[end..].trim_start();
    let before = expr[..start].trim_end();
    rest.starts_with("<<=")
        || rest.starts_with(">>=")
        || ["+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=", "++", "--"]
            .iter()
            .any(|op| rest.starts_with(op))
        || (rest.starts_with('=') && !rest.starts_with("=="))
        || before.ends_with("++")
        || before.ends_with("--")
}

/// The first variable that matters assigned in an arithmetic expression:
/// `NAME=`, `NAME op=` (not `==`, `<=`, `>=`, `!=`), `NAME++`, `++NAME`.
pub(crate) fn assigned_name(expr: &str) -> Option<String> {
    let unquoted = expr.replace(['"', '\'', '\\'], "");
    let expr = unquoted.as_str();
    let bytes = expr.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let starts_name = (b.is_ascii_alphabetic() || b == b'_')
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
        if !starts_name {
            i += 1;
            continue;
        }
        let end = i + bytes[i..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count();
        if assigns(expr, i, end) && may_matter(&expr[i..end]) {
            return Some(expr[i..end].to_owned());
        }
        i = end;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_hidden_substitutions() {
        let none = Found {
            seen: &[],
            arithmetic: &[],
            unwalked: &[],
        };
        let seen = |at: &'static [usize]| Found { seen: at, ..none };
        assert_eq!(hidden("cat <<E\n`rm y`\nE", &none, 9), ["rm y"]);
        assert_eq!(hidden("echo '$(rm y)' x", &none, 9), ["rm y"]);
        assert_eq!(hidden("echo $(rm y)", &seen(&[5]), 9), Vec::<String>::new());
        assert_eq!(hidden("echo `a \\`rm y\\``", &seen(&[5]), 9), ["a `rm y`"]);
        let arithmetic = Found {
            arithmetic: &[5],
            ..none
        };
        assert_eq!(hidden("echo $((1)) '$(a)'", &arithmetic, 9), ["a"]);
        assert_eq!(hidden("$(a ')' b) `c", &none, 9), ["a ')' b", "c"]);
        assert_eq!(hidden("`a` `b` `c`", &none, 2), ["a", "b"]);
        let deep = vec![std::ops::Range { start: 2, end: 6 }];
        let unwalked = Found {
            unwalked: &deep,
            ..none
        };
        assert_eq!(hidden("a $(b) `c`", &unwalked, 9), ["c"]);
    }

    #[test]
    fn arithmetic_assignments() {
        for (src, name) in [
            ("echo $((PATH=0))", "PATH"),
            ("(( IFS += 1 ))", "IFS"),
            (": $[PATH++]", "PATH"),
            ("echo $((++PATH))", "PATH"),
            ("echo ${a[PATH=0]}", "PATH"),
            ("echo ${s:PATH=1}", "PATH"),
            (": ${PATH:=/tmp}", "PATH"),
            (": ${LD_PRELOAD=/x.so}", "LD_PRELOAD"),
            ("echo $(( (HOME <<= 1) ))", "HOME"),
        ] {
            assert_eq!(arithmetic_assignment(src).as_deref(), Some(name), "{src}");
        }
        for src in [
            "echo $((i=0))",
            "(( n++ ))",
            "echo $((PATH == 1))",
            "echo $((X <= 1 && Y >= 2 && Z != 3))",
            "echo ${PATH:-x} ${HOME}",
            "echo PATH=1",
            "echo ${s:2}",
        ] {
            assert_eq!(arithmetic_assignment(src), None, "{src}");
        }
    }

    #[test]
    fn catch_all_reasons() {
        assert_eq!(catch_all("echo '`'", &[]), Some(Opacity::Backticks));
        assert_eq!(
            catch_all("a '$(b)'", &[]),
            Some(Opacity::CommandSubstitution)
        );
        assert_eq!(catch_all("a $((1))", &[2]), None);
        assert_eq!(
            catch_all("a $((1))", &[]),
            Some(Opacity::CommandSubstitution)
        );
        assert_eq!(
            catch_all("a '<(b)'", &[]),
            Some(Opacity::ProcessSubstitution)
        );
        assert_eq!(catch_all("a $[1]", &[2]), Some(Opacity::Arithmetic));
        assert_eq!(catch_all("a $x (b)", &[]), None);
    }

    #[test]
    fn evaluation_markers() {
        for src in [
            "echo $((x))",
            "((x))",
            "${!x}",
            "${x@P}",
            "${a[x]}",
            "${#a[i]}",
            "${s:x}",
            "$[y]",
            "((",
        ] {
            assert!(evaluates(src), "{src}");
        }
        for src in [
            "echo ${x}",
            "$x",
            "${x-a}",
            "${x:-a}x",
            "${x:=b}",
            "a:b",
            "$((1+2))",
            "${s:2}",
            "${#a[@]}",
            "${a[0]}",
        ] {
            assert!(!evaluates(src), "{src}");
        }
    }
}
