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

impl SessionId {
    /// The same 128 bits spelt as a UUID (`8-4-4-4-12` hex), as the Claude
    /// Agent SDKs name sessions.
    #[must_use]
    pub fn as_uuid(&self) -> String {
        let hex = format!("{:032x}", self.0.0);
        format!(
            "{}-{}-{}-{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..]
        )
    }

    /// An id spelt as a UUID ([`SessionId::as_uuid`]) or as cox's own; `None`
    /// for anything else.
    #[must_use]
    pub fn from_either(text: &str) -> Option<Self> {
        let text = text.trim();
        if let Ok(id) = text.parse() {
            return Some(id);
        }
        let hex: String = text.chars().filter(|c| *c != '-').collect();
        let uuid_shaped = hex.len() == 32
            && text.len() == 36
            && [8, 13, 18, 23]
                .iter()
                .all(|&at| text.as_bytes()[at] == b'-');
        if !uuid_shaped {
            return None;
        }
        u128::from_str_radix(&hex, 16).ok().map(|n| Self(Ulid(n)))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_id_is_the_same_spelt_as_a_uuid() {
        let id = SessionId::generate();
        let uuid = id.as_uuid();
        assert_eq!(uuid.len(), 36);
        assert_eq!(SessionId::from_either(&uuid), Some(id));
        assert_eq!(SessionId::from_either(&id.to_string()), Some(id));
        assert_eq!(
            SessionId::from_either("11111111-2222-3333-4444-555555555555").map(|i| i.as_uuid()),
            Some("11111111-2222-3333-4444-555555555555".to_owned())
        );
        assert_eq!(SessionId::from_either("not-an-id"), None);
        assert_eq!(
            SessionId::from_either("1111111122223333444455555555555x"),
            None
        );
    }
}
