//! `COX_HOME`: the one folder cox writes its record into.
//!
//! Finding the folder and checking it is usable happen once, at startup, so
//! that a home that cannot be written is a clear one-line error before a
//! session begins rather than a failed append in the middle of one. Every
//! other path cox writes is derived from [`CoxHome`], so the layout is
//! defined in this file and nowhere else:
//!
//! ```text
//! <home>/sessions/<session id>.jsonl   one rollout per session
//! <home>/archive/<ulid>                one full tool output per file
//! <home>/logs/                         diagnostics
//! <home>/cox.db                        sessions, the usage ledger, indexes
//! ```

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use cox_protocol::SessionId;

/// The home folder could not be found or used.
#[derive(Debug, thiserror::Error)]
pub enum HomeError {
    /// No explicit path, no `COX_HOME`, and no `HOME` to put `.cox` under.
    #[error("cannot find COX_HOME: pass a home folder explicitly, or set COX_HOME or HOME")]
    NotFound,
    /// A folder of the layout could not be created or written.
    #[error("COX_HOME {} is not writable: {source}", path.display())]
    NotWritable { path: PathBuf, source: io::Error },
}

/// The resolved home folder and the layout under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoxHome {
    root: PathBuf,
}

impl CoxHome {
    /// The home at exactly `root`, without looking at the environment.
    #[must_use]
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// `explicit` if given, else `$COX_HOME`, else `$HOME/.cox`. Empty
    /// variables count as unset.
    pub fn resolve(explicit: Option<PathBuf>) -> Result<CoxHome, HomeError> {
        Self::resolve_from(
            explicit,
            std::env::var_os("COX_HOME"),
            std::env::var_os("HOME"),
        )
    }

    /// [`CoxHome::resolve`] with the variables passed in, so it can be tested
    /// without touching the process environment.
    pub fn resolve_from(
        explicit: Option<PathBuf>,
        cox_home: Option<OsString>,
        home: Option<OsString>,
    ) -> Result<CoxHome, HomeError> {
        let set = |v: Option<OsString>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
        if let Some(root) = explicit {
            return Ok(Self::at(root));
        }
        if let Some(root) = set(cox_home) {
            return Ok(Self::at(root));
        }
        set(home)
            .map(|home| Self::at(home.join(".cox")))
            .ok_or(HomeError::NotFound)
    }

    /// Creates the layout's folders and proves the home is writable by
    /// creating and removing a probe file. Safe to call on every start.
    pub fn prepare(&self) -> Result<(), HomeError> {
        let not_writable = |path: &Path| {
            let path = path.to_path_buf();
            move |source| HomeError::NotWritable { path, source }
        };
        for dir in [
            self.root.clone(),
            self.sessions_dir(),
            self.archive_dir(),
            self.logs_dir(),
        ] {
            fs::create_dir_all(&dir).map_err(not_writable(&dir))?;
        }
        let probe = self
            .root
            .join(format!(".write-probe-{}", ulid::Ulid::generate()));
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)
            .map_err(not_writable(&self.root))?;
        fs::remove_file(&probe).map_err(not_writable(&self.root))
    }

    /// The home folder itself.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where rollouts live.
    #[must_use]
    pub fn sessions_dir(&self) -> PathBuf {
        self.root.join("sessions")
    }

    /// Where archived tool outputs live.
    #[must_use]
    pub fn archive_dir(&self) -> PathBuf {
        self.root.join("archive")
    }

    /// Where the private repositories of checkpoint snapshots live, one
    /// per workspace root.
    #[must_use]
    pub fn checkpoints_dir(&self) -> PathBuf {
        self.root.join("checkpoints")
    }

    /// Where diagnostic logs live.
    #[must_use]
    pub fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// The SQLite database: `cox.db` (see [`crate::Db`]).
    #[must_use]
    pub fn db_path(&self) -> PathBuf {
        self.root.join("cox.db")
    }

    /// The rollout of one session: `sessions/<id>.jsonl`.
    #[must_use]
    pub fn rollout_path(&self, session: SessionId) -> PathBuf {
        self.sessions_dir().join(format!("{session}.jsonl"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution_prefers_explicit_then_cox_home_then_home() {
        let os = |s: &str| Some(OsString::from(s));
        let root = |r: Result<CoxHome, HomeError>| r.unwrap().root().to_path_buf();
        assert_eq!(
            root(CoxHome::resolve_from(
                Some("/explicit".into()),
                os("/env"),
                os("/home/me")
            )),
            PathBuf::from("/explicit")
        );
        assert_eq!(
            root(CoxHome::resolve_from(None, os("/env"), os("/home/me"))),
            PathBuf::from("/env")
        );
        assert_eq!(
            root(CoxHome::resolve_from(None, os(""), os("/home/me"))),
            PathBuf::from("/home/me/.cox")
        );
        assert_eq!(
            root(CoxHome::resolve_from(None, None, os("/home/me"))),
            PathBuf::from("/home/me/.cox")
        );
        let none = CoxHome::resolve_from(None, None, os("")).unwrap_err();
        assert!(matches!(none, HomeError::NotFound));
        assert!(!none.to_string().contains('\n'));
    }

    #[test]
    fn paths_follow_the_layout() {
        let home = CoxHome::at("/h");
        let id: SessionId = "01J0000000000000000000000A".parse().unwrap();
        assert_eq!(
            home.rollout_path(id),
            PathBuf::from("/h/sessions/01J0000000000000000000000A.jsonl")
        );
        assert_eq!(home.archive_dir(), PathBuf::from("/h/archive"));
        assert_eq!(home.logs_dir(), PathBuf::from("/h/logs"));
        assert_eq!(home.db_path(), PathBuf::from("/h/cox.db"));
    }
}
