//! The environment of every process cox starts on the model's behalf
//! (commands, background shells, hooks, stdio MCP servers): cox's own,
//! less what would hand over a credential.
//!
//! Dropped unless a setting names them (`[sandbox] env`, or an MCP entry's
//! own `env`, which is set on top):
//! - every variable whose name, in upper case, holds `KEY`, `SECRET`,
//!   `TOKEN`, `PASSWORD`, `PASSWD` or `CREDENTIAL`, or has `AUTH`, `PASS`,
//!   `PWD`, `PAT`, `DSN`, `CREDS`, `OAUTH`, `AUTHORIZATION` or `SESSION` as
//!   one of its `_`-separated words (provider keys, `GITHUB_TOKEN`,
//!   `AWS_SECRET_ACCESS_KEY`, `SSH_AUTH_SOCK`, `MYSQL_PWD`, `BW_SESSION`;
//!   not `GIT_AUTHOR_NAME`, `PWD` or `XDG_SESSION_ID`);
//! - the variables the session reads its provider keys from, whatever they
//!   are called (`[providers.X] api_key_env`).
//!
//! Invariant: the filter only removes; a name it keeps has the value cox
//! itself was started with, and only the variables a person's settings
//! set (`env` of Claude Code's settings, [`EnvFilter::set`]) and the
//! caller's own go on top.

use std::ffi::{OsStr, OsString};

/// Parts of a name that mark a variable as a credential.
const SECRET_WORDS: [&str; 9] = [
    "KEY",
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "CONNECTION_STRING",
    "PGPASS",
];

/// `_`-separated words that mark one too (as a whole word, so that
/// `GIT_AUTHOR_NAME` and `COMPASS` stay): `SSH_AUTH_SOCK`, `DB_PASS`,
/// `MYSQL_PWD` (the word, not `PWD` itself), `GH_PAT`, `SENTRY_DSN`,
/// `AWS_CREDS`, `X_OAUTH`, `HTTP_AUTHORIZATION`, `BW_SESSION`,
/// `OP_SESSION_x`.
const SECRET_PARTS: [&str; 11] = [
    "JWT",
    "HEADERS",
    "AUTH",
    "PASS",
    "PWD",
    "PAT",
    "DSN",
    "CREDS",
    "OAUTH",
    "AUTHORIZATION",
    "SESSION",
];

/// Session variables of the system that hold no secret, though one of
/// their words is `SESSION`.
const PLAIN_SESSIONS: [&str; 2] = ["XDG_", "DESKTOP_SESSION"];

/// Which of cox's variables a child process may see.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnvFilter {
    /// Names passed although they look like credentials (`[sandbox] env`);
    /// a trailing `*` matches any name it starts.
    pub allow: Vec<String>,
    /// Names dropped whatever they look like (provider key variables).
    pub deny: Vec<String>,
    /// Variables set for every child whatever cox's own are (Claude Code
    /// settings' `env`, which the person wrote): on top of what passes.
    pub set: Vec<(String, String)>,
}

impl EnvFilter {
    /// Whether `name` looks like it holds a credential.
    #[must_use]
    pub fn looks_secret(name: &str) -> bool {
        let upper = name.to_ascii_uppercase();
        if SECRET_WORDS.iter().any(|w| upper.contains(w)) {
            return true;
        }
        if PLAIN_SESSIONS.iter().any(|p| upper.starts_with(p)) {
            return false;
        }
        let words: Vec<&str> = upper.split('_').collect();
        words.len() > 1 && words.iter().any(|w| SECRET_PARTS.contains(w))
            || (words.len() == 1 && upper != "PWD" && SECRET_PARTS.contains(&upper.as_str()))
    }

    /// Whether a variable called `name` reaches a child.
    #[must_use]
    pub fn passes(&self, name: &OsStr) -> bool {
        let Some(name) = name.to_str() else {
            // A name that is not text cannot be matched against the words:
            // it is not passed.
            return false;
        };
        if self.deny.iter().any(|d| d == name) {
            return false;
        }
        let allowed = self
            .allow
            .iter()
            .any(|pattern| match pattern.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => pattern == name,
            });
        allowed || !Self::looks_secret(name)
    }

    /// The variables of `vars` that pass: by name, and unless their value
    /// carries a password in a URL (`https://user:pass@host`, a proxy's or
    /// a base URL's) where the name is not let through by a setting.
    pub fn apply(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        vars.into_iter()
            .filter(|(k, v)| self.passes(k) && (self.named(k) || !url_with_password(v)))
            .collect()
    }

    /// Whether a setting names `name` (`[sandbox] env`).
    fn named(&self, name: &OsStr) -> bool {
        name.to_str().is_some_and(|name| {
            self.allow
                .iter()
                .any(|pattern| match pattern.strip_suffix('*') {
                    Some(prefix) => name.starts_with(prefix),
                    None => pattern == name,
                })
        })
    }

    /// This process's environment, filtered, with [`EnvFilter::set`] on
    /// top: what a child starts with.
    #[must_use]
    pub fn child_env(&self) -> Vec<(OsString, OsString)> {
        let mut vars = self.apply(std::env::vars_os());
        for (name, value) in &self.set {
            vars.retain(|(k, _)| k.as_os_str() != OsStr::new(name));
            vars.push((name.into(), value.into()));
        }
        vars
    }

    /// The names of this process's variables the filter drops, sorted, for
    /// `cox doctor` and `cox sandbox`.
    #[must_use]
    pub fn dropped(&self) -> Vec<String> {
        let mut names: Vec<String> = std::env::vars_os()
            .filter(|(k, _)| !self.passes(k))
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

/// Whether `value` holds a URL with a password in it (`scheme://user:pw@`).
fn url_with_password(value: &OsStr) -> bool {
    let value = value.to_string_lossy();
    value.split("://").skip(1).any(|rest| {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        authority
            .rsplit_once('@')
            .is_some_and(|(userinfo, _)| userinfo.contains(':'))
    })
}

/// Whether `name` is a valid entry of `[sandbox] env`: a variable name,
/// optionally ending in `*`.
#[must_use]
pub fn valid_pattern(name: &str) -> bool {
    let body = name.strip_suffix('*').unwrap_or(name);
    !body.is_empty()
        && body.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !body.starts_with(|c: char| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn credentials_are_dropped_and_the_rest_kept() {
        let filter = EnvFilter::default();
        let kept = filter.apply(os(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/u"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("OPENAI_API_KEY", "sk"),
            ("GITHUB_TOKEN", "ghp"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("aws_session_token", "x"),
            ("DB_PASSWORD", "x"),
            ("SSH_AUTH_SOCK", "/tmp/ssh/agent"),
            ("GOOGLE_APPLICATION_CREDENTIALS", "/k.json"),
            ("NPM_CONFIG__AUTH", "x"),
            ("LANG", "C.UTF-8"),
            ("TERM", "xterm"),
            ("GIT_AUTHOR_NAME", "A"),
            ("XAUTHORITY", "/x"),
            ("MYSQL_PWD", "x"),
            ("DB_PASS", "x"),
            ("GH_PAT", "x"),
            ("SENTRY_DSN", "x"),
            ("BW_SESSION", "x"),
            ("OP_SESSION_my", "x"),
            ("HTTP_AUTHORIZATION", "x"),
            ("PWD", "/w"),
            ("OLDPWD", "/"),
            ("XDG_SESSION_ID", "3"),
            ("COMPASS", "n"),
            ("GPG_PASSPHRASE", "x"),
            ("CI_JOB_JWT", "x"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x"),
            ("ANTHROPIC_CUSTOM_HEADERS", "x"),
            ("AZURE_STORAGE_CONNECTION_STRING", "x"),
            ("PGPASSFILE", "x"),
            ("HTTPS_PROXY", "http://u:p@proxy:3128"),
            ("OPENAI_BASE_URL", "https://u:sk-x@gw.example/v1"),
            ("HTTP_PROXY", "http://proxy:3128"),
            ("DOCS", "see https://a.example/b@c"),
        ]));
        let names: Vec<_> = kept.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "PATH",
                "HOME",
                "LANG",
                "TERM",
                "GIT_AUTHOR_NAME",
                "XAUTHORITY",
                "PWD",
                "OLDPWD",
                "XDG_SESSION_ID",
                "COMPASS",
                "HTTP_PROXY",
                "DOCS"
            ]
        );
    }

    #[test]
    fn a_setting_lets_a_name_through_and_a_provider_variable_never() {
        let filter = EnvFilter {
            allow: vec!["GITHUB_TOKEN".into(), "NPM_*".into()],
            deny: vec!["MY_LLM".into()],
            set: Vec::new(),
        };
        let kept = filter.apply(os(&[
            ("GITHUB_TOKEN", "ghp"),
            ("NPM_TOKEN", "n"),
            ("GITHUB_TOKEN_2", "x"),
            ("MY_LLM", "sk"),
            ("EDITOR", "vi"),
        ]));
        let names: Vec<_> = kept.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert_eq!(names, ["GITHUB_TOKEN", "NPM_TOKEN", "EDITOR"]);
    }

    #[test]
    fn patterns_are_variable_names() {
        for good in ["GITHUB_TOKEN", "NPM_*", "_X", "a1"] {
            assert!(valid_pattern(good), "{good}");
        }
        for bad in ["", "*", "A-B", "1A", "A B", "*TOKEN", "A*B"] {
            assert!(!valid_pattern(bad), "{bad}");
        }
    }
}
