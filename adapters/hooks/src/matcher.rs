//! A hook's matcher, as Claude Code reads one.
//!
//! Absent, empty or `*`: every call. Letters, digits, `_`, `-` and the
//! separators `|`, `,` and space only (`Bash`, `Edit|Write`, `Edit, Bash`):
//! one of those names exactly. Anything else
//! is a regular expression searched for in the name (`mcp__github__.*`,
//! `Notebook.*`), case-sensitive as Claude Code's is. A matcher that does
//! not compile is refused where the hook is read, never at run time.

use regex::Regex;

/// What a hook runs for.
#[derive(Clone, Debug)]
pub enum Matcher {
    /// Every call of the event.
    All,
    /// One of these names exactly.
    Names(Vec<String>),
    /// A regular expression found in the name.
    Pattern(Regex),
}

impl Matcher {
    /// Reads a matcher; `Err` says why it is not one.
    ///
    /// # Errors
    /// A regular expression that does not compile (or is too large).
    pub fn parse(text: Option<&str>) -> Result<Matcher, String> {
        let text = text.map(str::trim).unwrap_or_default();
        if text.is_empty() || text == "*" {
            return Ok(Matcher::All);
        }
        let plain = text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '|' | ',' | ' '));
        if plain {
            let names = text
                .split(['|', ',', ' '])
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
                .collect();
            return Ok(Matcher::Names(names));
        }
        regex::RegexBuilder::new(text)
            .size_limit(1 << 20)
            .build()
            .map(Matcher::Pattern)
            .map_err(|err| {
                let why = err.to_string();
                let first = why.lines().last().unwrap_or("not a regular expression");
                format!(
                    "matcher `{text}` is not a regular expression: {}",
                    first.trim()
                )
            })
    }

    /// Whether any of `names` (one subject's spellings) matches.
    #[must_use]
    pub fn matches(&self, names: &[&str]) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(wanted) => names.iter().any(|n| wanted.iter().any(|w| w == n)),
            Matcher::Pattern(re) => names.iter().any(|n| re.is_match(n)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_read_as_claude_code_reads_them() {
        let all = Matcher::parse(None).unwrap();
        assert!(all.matches(&["anything"]));
        assert!(Matcher::parse(Some("*")).unwrap().matches(&["bash"]));
        let names = Matcher::parse(Some("Edit|Write")).unwrap();
        assert!(names.matches(&["write", "Write"]));
        assert!(!names.matches(&["bash", "Bash"]));
        let listed = Matcher::parse(Some("Edit, Bash")).unwrap();
        assert!(listed.matches(&["Bash"]) && listed.matches(&["Edit"]));
        // Exact: a prefix is not a match.
        assert!(!Matcher::parse(Some("Bas")).unwrap().matches(&["Bash"]));
        let pattern = Matcher::parse(Some("mcp__fs__.*")).unwrap();
        assert!(pattern.matches(&["mcp__fs__read_file"]));
        assert!(!pattern.matches(&["mcp__git__log"]));
        // Case counts.
        assert!(
            !Matcher::parse(Some("BASH"))
                .unwrap()
                .matches(&["bash", "Bash"])
        );
        let bad = Matcher::parse(Some("Bash(")).unwrap_err();
        assert!(bad.contains("`Bash(`"), "{bad}");
    }
}
