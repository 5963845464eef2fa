//! A project's allow rules, and the person's trust in them.
//!
//! A repository's `.cox/config.toml` and `.claude/settings*.json` may deny
//! and ask from the first session; their allow rules widen what the model
//! may do unasked, so each takes effect only once the person trusted it as
//! it is written now (`cox ext trust`, or the terminal UI's question: the
//! same trust a project's hooks wait for). Trust is kept per rule in
//! `cox.db` (kind `allow`, the project's folder as its scope, a hash of the
//! file and the rule's text): a rule added or changed later waits again.
//!
//! Invariants: `cox.db` is opened only when a project file has an allow
//! rule; one that cannot be read leaves every such rule untrusted (and is
//! said); nothing here ever trusts a rule by itself.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// What `kind` trust rows of allow rules use.
pub const KIND: &str = "allow";

/// A project allow rule that waits for the person's trust.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingAllow {
    /// The project file it is written in.
    pub file: PathBuf,
    /// Its line there (from 1).
    pub line: usize,
    pub rule: String,
}

impl PendingAllow {
    /// What its trust row keeps: the file and the rule, hashed.
    #[must_use]
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.file, &self.rule)
    }
}

/// The hash a trust row keeps for `rule` written in `file`.
#[must_use]
pub fn fingerprint(file: &Path, rule: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(file.display().to_string().as_bytes());
    hash.update([0]);
    hash.update(rule.as_bytes());
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The trust scope of a project whose settings are read in `folder`: the
/// one its hooks use.
#[must_use]
pub fn scope(folder: &Path) -> String {
    format!("project:{}", folder.display())
}

/// Where the hashes of trusted allow rules are read from.
#[derive(Clone, Copy, Debug)]
pub enum Trust<'a> {
    /// None is trusted (a command that only shows the rules, a test).
    Nobody,
    /// The rows in this `cox.db`, opened only if a rule needs them.
    Db(&'a Path),
}

impl Trust<'_> {
    /// The trusted hashes in `scope`, or why they could not be read.
    ///
    /// # Errors
    /// `cox.db` cannot be opened or read: why, in a few words.
    pub fn hashes(self, scope: &str) -> Result<Vec<String>, String> {
        match self {
            Trust::Nobody => Ok(Vec::new()),
            Trust::Db(path) => cox_store::Db::open(path)
                .and_then(|db| db.trusted_extensions(scope, KIND))
                .map_err(|err| err.to_string()),
        }
    }
}

/// The one warning about `pending` rules (`None` when there are none):
/// each named with its file and line, and the command that trusts them.
#[must_use]
pub fn pending_line(pending: &[PendingAllow]) -> Option<String> {
    if pending.is_empty() {
        return None;
    }
    let named: Vec<String> = pending
        .iter()
        .map(|p| format!("`{}` ({}:{})", p.rule, p.file.display(), p.line))
        .collect();
    Some(format!(
        "ignoring {} allow rule(s) of this project until you trust them (review them, then run \
         `cox ext trust --all`): {}",
        pending.len(),
        named.join(", ")
    ))
}

/// Records `rules` as trusted in `db` for the project read in `folder`.
///
/// # Errors
/// `cox.db` cannot be written.
pub fn trust(
    db: &cox_store::Db,
    folder: &Path,
    rules: &[&PendingAllow],
    now: &str,
) -> Result<(), cox_store::DbError> {
    let rows: Vec<cox_store::TrustedExtension> = rules
        .iter()
        .map(|p| cox_store::TrustedExtension {
            scope: scope(folder),
            kind: KIND.to_owned(),
            hash: p.fingerprint(),
            label: p.rule.clone(),
            trusted_at: now.to_owned(),
        })
        .collect();
    db.trust_extensions(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_moved_to_another_file_or_changed_is_another_fingerprint() {
        let a = fingerprint(Path::new("/p/.cox/config.toml"), "Bash(npm test)");
        assert_eq!(
            a,
            fingerprint(Path::new("/p/.cox/config.toml"), "Bash(npm test)")
        );
        assert_ne!(
            a,
            fingerprint(Path::new("/p/.claude/settings.json"), "Bash(npm test)")
        );
        assert_ne!(
            a,
            fingerprint(Path::new("/p/.cox/config.toml"), "Bash(npm test:*)")
        );
        assert_eq!(a.len(), 64);
    }

    #[test]
    fn the_warning_names_every_rule_in_one_line() {
        let pending = [
            PendingAllow {
                file: "/p/.cox/config.toml".into(),
                line: 2,
                rule: "Bash(make:*)".into(),
            },
            PendingAllow {
                file: "/p/.claude/settings.json".into(),
                line: 4,
                rule: "Read".into(),
            },
        ];
        let line = pending_line(&pending).unwrap_or_default();
        assert!(!line.contains('\n'));
        assert!(line.contains("2 allow rule(s)"));
        assert!(line.contains("`Bash(make:*)` (/p/.cox/config.toml:2)"));
        assert!(line.contains("`Read` (/p/.claude/settings.json:4)"));
        assert!(line.contains("cox ext trust --all"));
        assert_eq!(pending_line(&[]), None);
    }
}
