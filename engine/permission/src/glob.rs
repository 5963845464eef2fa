//! One path pattern of a rule, matched without building a regex when the
//! pattern has no wildcard.
//!
//! Most path rules cox sees are plain folders: the built-in secret folders
//! and rules like `Read(~/.aws)` compile to the folder itself and
//! `<folder>/**`. Compiling each of those into a regex costs more memory
//! than a whole headless turn otherwise spends on the heap, so a pattern
//! made only of literal characters is compared as text, one ending in a
//! literal folder and `/**` as a prefix, and anything else keeps its
//! parsed glob and compiles the matcher on first use.
//!
//! Invariant: for every pattern and subject, [`PathGlob::is_match`] answers
//! exactly what the pattern's compiled `globset` matcher (with
//! `literal_separator`) answers; a property test holds the two together.

use std::sync::OnceLock;

use globset::{Glob, GlobBuilder, GlobMatcher};

/// A parsed path pattern.
#[derive(Clone, Debug)]
pub(crate) struct PathGlob(Kind);

#[derive(Clone, Debug)]
enum Kind {
    /// No wildcard: the subject is exactly this text.
    Exact(String),
    /// `<literal>/**`: the subject starts with `<literal>/` (kept with its
    /// slash), as globset's recursive suffix matches.
    Inside(String),
    /// Anything else: globset's own matcher, compiled when first needed.
    Glob(Glob, OnceLock<GlobMatcher>),
}

/// Characters that make a glob more than literal text, `\` included since
/// it escapes the next one.
const SPECIAL: &[char] = &['*', '?', '[', ']', '{', '}', '\\'];

impl PathGlob {
    /// Parses a pattern with `/` matched only by `/` and `**`.
    ///
    /// # Errors
    /// The pattern is not a valid glob.
    pub(crate) fn new(pattern: &str) -> Result<Self, globset::Error> {
        // Parsing validates every pattern, whichever way it is matched.
        let glob = GlobBuilder::new(pattern).literal_separator(true).build()?;
        let kind = if !pattern.contains(SPECIAL) {
            Kind::Exact(pattern.to_owned())
        } else if let Some(folder) = pattern.strip_suffix("/**")
            && !folder.contains(SPECIAL)
        {
            Kind::Inside(format!("{folder}/"))
        } else {
            Kind::Glob(glob, OnceLock::new())
        };
        Ok(Self(kind))
    }

    /// Whether the subject matches.
    pub(crate) fn is_match(&self, subject: &str) -> bool {
        match &self.0 {
            Kind::Exact(text) => subject == text,
            Kind::Inside(prefix) => subject.starts_with(prefix.as_str()),
            Kind::Glob(glob, matcher) => matcher
                .get_or_init(|| glob.compile_matcher())
                .is_match(subject),
        }
    }
}

#[cfg(test)]
mod tests {
    use globset::GlobBuilder;
    use proptest::prelude::*;

    use super::{Kind, PathGlob};

    fn globset(pattern: &str, subject: &str) -> bool {
        GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .unwrap()
            .compile_matcher()
            .is_match(subject)
    }

    #[test]
    fn plain_folders_take_the_fast_paths() {
        assert!(matches!(
            PathGlob::new("/home/a/.ssh").unwrap().0,
            Kind::Exact(_)
        ));
        assert!(matches!(
            PathGlob::new("/home/a/.ssh/**").unwrap().0,
            Kind::Inside(_)
        ));
        assert!(matches!(
            PathGlob::new("/home/a/*.pem").unwrap().0,
            Kind::Glob(..)
        ));
        assert!(matches!(
            PathGlob::new("/home/a/\\*/**").unwrap().0,
            Kind::Glob(..)
        ));
    }

    #[test]
    fn agrees_with_globset_on_the_edges() {
        let patterns = [
            "/",
            "/**",
            "/a",
            "/a/**",
            "/a/b/**",
            "/a/**/b",
            "/a/*",
            "/a/?",
            "/a.b",
            "/a/[bc]",
            "/a/{b,c}/**",
            "/a/\\*",
            "/a b/**",
            "/ä/**",
        ];
        let subjects = [
            "", "/", "/a", "/a/", "/a/b", "/a/b/c", "/ab", "/a\n/b", "/a/\nb", "/a.b", "/axb",
            "/a/*", "/a b/c", "/ä/x", "a", "/b/a",
        ];
        for pattern in patterns {
            let ours = PathGlob::new(pattern).unwrap();
            for subject in subjects {
                assert_eq!(
                    ours.is_match(subject),
                    globset(pattern, subject),
                    "{pattern:?} on {subject:?}"
                );
            }
        }
    }

    #[test]
    fn a_bad_pattern_is_refused() {
        assert!(PathGlob::new("/a/[b").is_err());
        assert!(PathGlob::new("/a/{b").is_err());
    }

    proptest! {
        #[test]
        fn agrees_with_globset(
            pattern in "(/[a-c.\\-*?\\[\\]{},\\\\ \\n]{0,3}){1,3}(/\\*\\*)?",
            subject in "(/[a-c.\\-\\n ]{0,3}){0,4}/?",
        ) {
            let Ok(ours) = PathGlob::new(&pattern) else {
                prop_assert!(GlobBuilder::new(&pattern).literal_separator(true).build().is_err());
                return Ok(());
            };
            prop_assert_eq!(ours.is_match(&subject), globset(&pattern, &subject));
        }
    }
}
