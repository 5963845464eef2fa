//! How cox's errors are said, and how a chain of them is printed once.
//!
//! The errors at the trait boundaries ([`StoreError`](crate::store::StoreError),
//! [`ArchiveError`](crate::archive::ArchiveError),
//! [`SandboxError`](crate::sandbox::SandboxError),
//! [`ProviderError`](crate::provider::ProviderError)) and the adapters' own
//! errors follow one convention:
//!
//! - the message (`Display`) is the whole one-line story, cause included:
//!   the core quotes `{err}` in notices and tool results, and those must
//!   read the same whatever printed them;
//! - the cause is kept all the same, as `source()`, so that a caller can
//!   look at it (`downcast_ref::<std::io::Error>()`) or log the chain.
//!
//! A plain `{:#}` over such a chain would say the cause twice (`cannot
//! append to rollout …: disk full: disk full`). [`chain_line`] prints the
//! chain the way a person should read it: each message, then each cause
//! its message has not already said.

use std::error::Error;

/// `error` and its causes as one line: the messages joined by `": "`, as
/// anyhow's `{:#}` joins them, except that the walk stops at an error whose
/// message already holds the words of its cause (or of the last error of
/// its chain, for a message that names the root cause only): everything
/// below it has been said.
#[must_use]
pub fn chain_line(error: &(dyn Error + 'static)) -> String {
    let mut line = error.to_string();
    let mut said = line.clone();
    let mut at = error;
    while let Some(cause) = at.source() {
        if holds(&said, &cause.to_string()) || holds(&said, &root(cause).to_string()) {
            break;
        }
        said = cause.to_string();
        line.push_str(": ");
        line.push_str(&said);
        at = cause;
    }
    line
}

/// The last error of `error`'s chain (`error` itself when it has no cause).
#[must_use]
pub fn root<'a>(error: &'a (dyn Error + 'static)) -> &'a (dyn Error + 'static) {
    let mut at = error;
    while let Some(cause) = at.source() {
        at = cause;
    }
    at
}

/// Whether `message` contains `words` as whole words, whitespace aside (a
/// message may have put a multi-line cause on one line).
fn holds(message: &str, words: &str) -> bool {
    let message = squash(message);
    let words = squash(words);
    if words.is_empty() {
        return true;
    }
    message.match_indices(&words).any(|(at, _)| {
        let before = message[..at].chars().next_back();
        let after = message[at + words.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// `text` with every run of whitespace as one space, and none at the ends.
fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt;

    /// An error with a message and maybe a cause.
    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl Error for Layer {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.1.as_deref().map(|l| l as &(dyn Error + 'static))
        }
    }

    fn chain(messages: &[&'static str]) -> Layer {
        let mut layers = messages.iter().rev();
        let last = Layer(layers.next().copied().unwrap_or_default(), None);
        layers.fold(last, |below, message| Layer(message, Some(Box::new(below))))
    }

    #[test]
    fn causes_are_joined_as_anyhow_joins_them() {
        let error = chain(&["cannot start", "reading the config", "permission denied"]);
        assert_eq!(
            chain_line(&error),
            "cannot start: reading the config: permission denied"
        );
    }

    #[test]
    fn a_message_that_says_its_cause_ends_the_line() {
        let error = chain(&[
            "cannot start",
            "cannot append to rollout /r: disk full",
            "disk full",
        ]);
        assert_eq!(
            chain_line(&error),
            "cannot start: cannot append to rollout /r: disk full"
        );
        // The cause's own causes were said by whoever said the cause.
        let sqlite = chain(&[
            "cox.db at /d: cannot record session 1: UNIQUE constraint failed",
            "UNIQUE constraint failed",
            "Error code 1555: A PRIMARY KEY constraint failed",
        ]);
        assert_eq!(
            chain_line(&sqlite),
            "cox.db at /d: cannot record session 1: UNIQUE constraint failed"
        );
    }

    #[test]
    fn a_message_that_names_the_root_cause_ends_the_line() {
        let error = chain(&[
            "openai: cannot build the HTTP client: no TLS backend",
            "builder error",
            "no TLS backend",
        ]);
        assert_eq!(
            chain_line(&error),
            "openai: cannot build the HTTP client: no TLS backend"
        );
    }

    #[test]
    fn a_provider_that_cannot_build_its_client_says_the_root_cause() {
        use crate::provider::ProviderError;
        let source = std::sync::Arc::new(chain(&["builder error", "no TLS backend"]));
        let error = ProviderError::Client {
            provider: "openai".into(),
            source,
        };
        assert_eq!(
            error.to_string(),
            "openai: cannot build the HTTP client: no TLS backend"
        );
        assert!(error.source().is_some());
        assert_eq!(chain_line(&error), error.to_string());
        assert_eq!(error.clone(), error);
        assert_ne!(error, ProviderError::Failed(error.to_string()));
    }

    #[test]
    fn words_are_whole_words_and_whitespace_is_loose() {
        assert!(holds("cannot read: a\nb (os error 5)", "a b"));
        assert!(holds(
            "x: near \"FROM\": syntax error",
            "near \"FROM\": syntax error"
        ));
        assert!(!holds("the file was found", "found it"));
        assert!(!holds("unfounded", "found"));
        let error = chain(&["lookup failed", "found"]);
        assert_eq!(chain_line(&error), "lookup failed: found");
    }
}
