//! Identifiers: sessions are ULIDs (sortable by creation time, and also the
//! rollout's file name); tool calls carry the id the model gave them, or a
//! fresh `call_<ulid>` when a caller makes one up.

use std::fmt;

use serde::{Deserialize, Serialize};
use ulid::Ulid;

/// One session: a ULID, also the rollout file name `sessions/<id>.jsonl`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionId(pub Ulid);

impl SessionId {
    /// A new id stamped with the current time.
    #[must_use]
    pub fn generate() -> Self {
        Self(Ulid::generate())
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::str::FromStr for SessionId {
    type Err = ulid::DecodeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ulid::from_string(s).map(Self)
    }
}

/// One tool call. Providers supply their own ids (`toolu_…`, `call_…`); the
/// core treats them as opaque strings and never reuses one within a session.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CallId(pub String);

impl CallId {
    /// A fresh id of the form `call_<ulid>`.
    #[must_use]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self(format!("call_{}", Ulid::generate()))
    }

    /// The id as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for CallId {
    fn from(s: &str) -> Self {
        Self(s.to_owned())
    }
}

impl From<String> for CallId {
    fn from(s: String) -> Self {
        Self(s)
    }
}
