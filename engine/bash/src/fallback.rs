//! A rough split of a line tree-sitter could not parse.
//!
//! Bash and tree-sitter-bash disagree on some lines tree-sitter reports as
//! errors (`cat <<E; rm y` newline `hi` newline `E`, a quoted heredoc
//! delimiter `<<E''`, `echo `#`;rm y`, `((true) && rm y)`), and what the
//! damaged tree shows can miss a command bash runs. Such a line is opaque
//! already; for deny rules its text is also cut at every operator,
//! parenthesis, brace, backtick and newline outside quotes, keywords and
//! redirects dropped, and each piece not already listed is judged as a
//! command. The pieces may include text bash never runs; listing too much
//! only makes deny rules stricter on a line no allow rule can pass.

use std::collections::HashSet;

use crate::walk::Walk;
use crate::words::Word;

/// Keywords dropped from the start of a piece (`then rm y` is `rm y`).
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "time", "coproc", "!", "[[", "]]", "{", "}",
];

/// Judges the pieces of `walk.src` that no listed command has as its text.
pub(crate) fn rough_split(walk: &mut Walk<'_>, tree_depth: usize) {
    let listed: HashSet<String> = walk.sink.commands.iter().map(|c| c.text.clone()).collect();
    for piece in pieces(walk.src) {
        let words: Vec<Word> = piece.into_iter().map(|token| word(&token)).collect();
        let start = words
            .iter()
            .position(|w| !KEYWORDS.contains(&w.raw.as_str()))
            .unwrap_or(words.len());
        let words = &words[start..];
        let text: Vec<&str> = words.iter().map(|w| w.value()).collect();
        if words.is_empty() || listed.contains(&text.join(" ")) {
            continue;
        }
        walk.judge(words, tree_depth + 1);
    }
}

/// A token as a word: a plain literal when it has no `$` or backtick.
fn word(token: &str) -> Word {
    let dynamic = token.contains(['$', '`']);
    let lit = (!dynamic).then(|| unquote(token));
    Word {
        raw: token.to_owned(),
        loose: lit.clone().unwrap_or_else(|| token.to_owned()),
        pattern: token.contains(['*', '?', '[', '{']),
        lit,
    }
}

/// A token without its quotes and backslashes.
fn unquote(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    let mut quote = None;
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None | Some('"'), '\\') => out.extend(chars.next()),
            _ => out.push(c),
        }
    }
    out
}

/// The line cut into pieces of tokens.
fn pieces(src: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut piece: Vec<String> = Vec::new();
    let mut token = String::new();
    let mut quote: Option<char> = None;
    let end_token = |token: &mut String, piece: &mut Vec<String>| {
        let redirect = token
            .trim_start_matches(|c: char| c.is_ascii_digit() || c == '&')
            .starts_with(['<', '>']);
        if !token.is_empty() && !redirect {
            piece.push(std::mem::take(token));
        }
        token.clear();
    };
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            token.push(c);
            if c == q {
                quote = None;
            } else if c == '\\' && q == '"' {
                token.extend(chars.next());
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                token.push(c);
            }
            '\\' => {
                token.push(c);
                token.extend(chars.next());
            }
            '#' if token.is_empty() => {
                // To the end of the line, or of the backtick it is in.
                while chars.next_if(|&n| n != '\n' && n != '`').is_some() {}
            }
            '$' if chars.peek() == Some(&'(') => {
                chars.next();
                end_token(&mut token, &mut piece);
                out.push(std::mem::take(&mut piece));
            }
            ';' | '&' | '|' | '\n' | '(' | ')' | '`' => {
                end_token(&mut token, &mut piece);
                if !piece.is_empty() {
                    out.push(std::mem::take(&mut piece));
                }
            }
            c if c.is_whitespace() => end_token(&mut token, &mut piece),
            _ => token.push(c),
        }
    }
    end_token(&mut token, &mut piece);
    if !piece.is_empty() {
        out.push(piece);
    }
    out.retain(|p| !p.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::pieces;

    #[test]
    fn cuts_at_operators() {
        let got = pieces("cat <<E; rm y\nhi\nE 2>/dev/null");
        assert_eq!(got, [vec!["cat"], vec!["rm", "y"], vec!["hi"], vec!["E"]]);
        let got = pieces("((true) && rm 'a b')");
        assert_eq!(got, [vec!["true"], vec!["rm", "'a b'"]]);
        let got = pieces("echo `#`;rm y # c; d");
        assert_eq!(got, [vec!["echo"], vec!["rm", "y"]]);
        let got = pieces("a $(b \"c;d\") e");
        assert_eq!(got, [vec!["a"], vec!["b", "\"c;d\""], vec!["e"]]);
    }
}
