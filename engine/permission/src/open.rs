//! The path rules a running tool checks for the paths it finds on its own.
//!
//! [`Engine::decide`] judges a call by its subject (for `grep` and `glob`,
//! the search root). A search then opens files the subject does not name, so
//! the engine also answers, path by path, whether a tool may open one:
//! [`PathRules`] for [`Engine`], and [`CallRules`] for a call whose ask rules
//! were answered (a person approved it) or do not apply (bypass mode).
//!
//! Invariants:
//! - a deny rule that covers a path for the tool (the built-in secret
//!   folders included) always refuses it, whatever was answered or the mode;
//! - a path ask rule refuses the path too, unless it was answered: it covers
//!   the very subject a person approved, or the session bypasses asks;
//! - bare rules (`Read`, `Grep`) were applied to the call as a whole and add
//!   nothing here, except a bare deny (which already refused the call);
//! - matching is pure: no file is touched, paths are compared as given.

use std::path::Path;
use std::sync::Arc;

use cox_protocol::tool::PathRules;

use crate::engine::Engine;
use crate::rule::{Rule, path_patterns};

/// Which ask rules still hold while one call runs.
#[derive(Clone, Debug)]
enum Asks {
    /// Every path ask rule.
    Hold,
    /// All but those covering this subject (what the person approved).
    AnsweredFor(String),
    /// None: bypass mode does not ask.
    Off,
}

/// The path rules of one call, with what was already answered for it.
#[derive(Clone, Debug)]
pub struct CallRules {
    engine: Arc<Engine>,
    asks: Asks,
}

impl CallRules {
    /// For a call nobody was asked about: every rule holds (the same answers
    /// as the engine itself).
    #[must_use]
    pub fn new(engine: Arc<Engine>) -> Self {
        Self {
            engine,
            asks: Asks::Hold,
        }
    }

    /// For a call a person approved: the ask rules that cover its own
    /// `subject` were answered, other ask rules still hold.
    #[must_use]
    pub fn approved(engine: Arc<Engine>, subject: &str) -> Self {
        Self {
            engine,
            asks: Asks::AnsweredFor(subject.to_owned()),
        }
    }

    /// For a call in `bypassPermissions` mode: ask rules do not apply, deny
    /// rules still do.
    #[must_use]
    pub fn bypassed(engine: Arc<Engine>) -> Self {
        Self {
            engine,
            asks: Asks::Off,
        }
    }
}

impl PathRules for CallRules {
    fn may_open(&self, tool: &str, path: &Path) -> bool {
        may_open(&self.engine, tool, path, &self.asks)
    }
}

impl PathRules for Engine {
    fn may_open(&self, tool: &str, path: &Path) -> bool {
        may_open(self, tool, path, &Asks::Hold)
    }
}

fn may_open(engine: &Engine, tool: &str, path: &Path, asks: &Asks) -> bool {
    // A path that is not UTF-8 is compared with its odd bytes replaced: a
    // rule cannot name those bytes, and `*` still matches the replacement.
    let path = path.to_string_lossy();
    let covers = |rule: &Rule| rule.names_tool(tool) && rule.matches_subject(&path);
    !engine.rules().any(|(list, rule)| match list {
        "deny" => covers(rule),
        "ask" => {
            path_patterns(rule).is_some()
                && covers(rule)
                && match asks {
                    Asks::Hold => true,
                    Asks::AnsweredFor(subject) => !rule.matches_subject(subject),
                    Asks::Off => false,
                }
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use cox_protocol::config::PermissionsConfig;
    use cox_protocol::tool::PathRules;

    use super::CallRules;
    use crate::Engine;

    const HOME: &str = "/home/alice";
    const CWD: &str = "/repo";

    fn engine(deny: &[&str], ask: &[&str], allow: &[&str]) -> Engine {
        let list = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect();
        let config = PermissionsConfig {
            deny: list(deny),
            ask: list(ask),
            allow: list(allow),
            ..PermissionsConfig::default()
        };
        Engine::compile(&config, Some(Path::new(HOME)), Path::new(CWD)).unwrap()
    }

    fn open(rules: &dyn PathRules, tool: &str, path: &str) -> bool {
        rules.may_open(tool, Path::new(path))
    }

    #[test]
    fn the_built_in_secret_folders_are_closed_to_every_file_tool() {
        let e = engine(&[], &[], &["Read", "Grep(~/**)"]);
        for tool in ["grep", "glob", "read"] {
            assert!(!open(&e, tool, "/home/alice/.ssh"), "{tool}");
            assert!(!open(&e, tool, "/home/alice/.ssh/id_rsa"), "{tool}");
            assert!(!open(&e, tool, "/home/alice/.aws/credentials"), "{tool}");
            assert!(!open(&e, tool, "/home/alice/.config/gcloud/x.json"));
            assert!(!open(&e, tool, "/home/alice/.netrc"));
            assert!(open(&e, tool, "/home/alice/.sshx/id"), "{tool}");
            assert!(open(&e, tool, "/home/alice/notes.txt"), "{tool}");
        }
        assert!(
            open(&e, "bash", "/home/alice/.ssh/id_rsa"),
            "not a file tool"
        );
    }

    #[test]
    fn read_rules_reach_grep_and_glob_inside_a_folder() {
        let e = engine(&["Read(secrets/**)"], &[], &[]);
        assert!(!open(&e, "grep", "/repo/secrets/a.txt"));
        assert!(!open(&e, "glob", "/repo/secrets/deep/b.txt"));
        assert!(open(&e, "grep", "/repo/public/a.txt"));
        assert!(open(&e, "grep", "/repo/secretsx/a.txt"));
        let e = engine(&["Grep(/repo/key.pem)"], &[], &[]);
        assert!(!open(&e, "grep", "/repo/key.pem"));
        assert!(
            open(&e, "glob", "/repo/key.pem"),
            "a Grep rule is not a Glob rule"
        );
    }

    #[test]
    fn unanswered_path_asks_close_a_path_and_bare_asks_do_not() {
        let e = Arc::new(engine(&[], &["Read(private)", "Grep"], &[]));
        assert!(!open(&*e, "grep", "/repo/private/a.txt"));
        assert!(
            open(&*e, "grep", "/repo/public/a.txt"),
            "a bare ask was asked"
        );
        let approved = CallRules::approved(Arc::clone(&e), "/repo/private");
        assert!(open(&approved, "grep", "/repo/private/a.txt"));
        let elsewhere = CallRules::approved(Arc::clone(&e), "/repo");
        assert!(!open(&elsewhere, "grep", "/repo/private/a.txt"));
        assert!(open(
            &CallRules::bypassed(Arc::clone(&e)),
            "grep",
            "/repo/private/a"
        ));
        assert!(!open(&CallRules::new(e), "grep", "/repo/private/a.txt"));
    }

    #[test]
    fn nothing_answered_or_bypassed_opens_a_denied_path() {
        let e = Arc::new(engine(&["Read(private)"], &["Read(private)"], &["Read"]));
        for rules in [
            CallRules::approved(Arc::clone(&e), "/repo/private"),
            CallRules::bypassed(Arc::clone(&e)),
        ] {
            assert!(!open(&rules, "grep", "/repo/private/a.txt"));
            assert!(!open(&rules, "glob", "/home/alice/.gnupg/k"));
        }
    }
}
