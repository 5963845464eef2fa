//! Trust in MCP tool definitions.
//!
//! A definition is a tool's name, description and input schema; its hash
//! is a SHA-256 over the three, the schema in a canonical form (keys
//! sorted, no spaces), so a server that reorders its JSON is the same
//! server. Annotations (`readOnlyHint`, ...) are not part of it: they are
//! hints, and a tool's risk never rests on them alone.
//!
//! Invariant: a stored hash is only replaced by an explicit trust (`cox mcp
//! trust <server>`) or, for a server from the user's own configuration,
//! written once, when that server first connects with no rows at all.

use std::collections::BTreeMap;

use cox_store::{Db, TrustedTool};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// What the trust covers of one tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

impl Definition {
    /// The definition of a tool as the server lists it.
    #[must_use]
    pub fn of(tool: &rmcp::model::Tool) -> Self {
        Self {
            name: tool.name.to_string(),
            description: tool.description.as_deref().unwrap_or_default().to_owned(),
            input_schema: Value::Object((*tool.input_schema).clone()),
        }
    }

    /// The hash the trust rows keep.
    #[must_use]
    pub fn hash(&self) -> String {
        let mut hasher = Sha256::new();
        for part in [
            self.name.as_str(),
            self.description.as_str(),
            &canonical(&self.input_schema),
        ] {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part.as_bytes());
        }
        hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The definition as a row stores it.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        })
        .to_string()
    }

    /// A definition a row stored.
    #[must_use]
    pub fn from_json(text: &str) -> Option<Self> {
        let value: Value = serde_json::from_str(text).ok()?;
        Some(Self {
            name: value.get("name")?.as_str()?.to_owned(),
            description: value.get("description")?.as_str()?.to_owned(),
            input_schema: value.get("inputSchema")?.clone(),
        })
    }
}

/// JSON with every object's keys sorted and no whitespace.
#[must_use]
pub fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let ordered: BTreeMap<&String, Value> =
                    map.iter().map(|(k, v)| (k, sorted(v))).collect();
                Value::Object(ordered.into_iter().map(|(k, v)| (k.clone(), v)).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

/// Where one tool stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrustState {
    Trusted,
    /// Never trusted.
    Pending,
    /// Trusted once, with another definition (kept for the diff).
    Changed {
        trusted: Option<Definition>,
    },
}

/// Where each of `server`'s tools stands; a server trusted on first
/// connect that has no rows yet gets its current definitions recorded.
///
/// # Errors
/// `cox.db` could not be read or written.
pub fn check(
    db: &Db,
    server: &str,
    trusted_on_first_connect: bool,
    definitions: &[Definition],
) -> Result<Vec<TrustState>, String> {
    let rows = db.trusted_tools(server).map_err(|e| e.to_string())?;
    if rows.is_empty() && trusted_on_first_connect {
        trust(db, server, definitions)?;
        return Ok(vec![TrustState::Trusted; definitions.len()]);
    }
    let by_name: BTreeMap<&str, &TrustedTool> = rows.iter().map(|r| (r.tool.as_str(), r)).collect();
    Ok(definitions
        .iter()
        .map(|d| match by_name.get(d.name.as_str()) {
            None => TrustState::Pending,
            Some(row) if row.hash == d.hash() => TrustState::Trusted,
            Some(row) => TrustState::Changed {
                trusted: Definition::from_json(&row.definition),
            },
        })
        .collect())
}

/// Makes `definitions` the trusted set of `server`.
///
/// # Errors
/// `cox.db` could not be written.
pub fn trust(db: &Db, server: &str, definitions: &[Definition]) -> Result<(), String> {
    let now = cox_store::clock::now_rfc3339();
    let rows: Vec<TrustedTool> = definitions
        .iter()
        .map(|d| TrustedTool {
            server: server.to_owned(),
            tool: d.name.clone(),
            hash: d.hash(),
            definition: d.to_json(),
            trusted_at: now.clone(),
        })
        .collect();
    db.trust_tools(server, &rows).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(description: &str, schema: Value) -> Definition {
        Definition {
            name: "echo".into(),
            description: description.into(),
            input_schema: schema,
        }
    }

    #[test]
    fn the_hash_ignores_key_order_but_not_content() {
        let a = def(
            "Echo",
            serde_json::json!({"type": "object", "properties": {"m": {"type": "string"}}}),
        );
        let b = def(
            "Echo",
            serde_json::from_str(r#"{"properties":{"m":{"type":"string"}},"type":"object"}"#)
                .unwrap(),
        );
        assert_eq!(a.hash(), b.hash());
        assert_ne!(a.hash(), def("Echo!", a.input_schema.clone()).hash());
        let c = def(
            "Echo",
            serde_json::json!({"type": "object", "properties": {"m": {"type": "number"}}}),
        );
        assert_ne!(a.hash(), c.hash());
        assert_eq!(Definition::from_json(&a.to_json()), Some(a));
    }

    #[test]
    fn first_connect_records_a_user_server_and_a_project_one_waits() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("cox.db")).unwrap();
        let echo = def("Echo", serde_json::json!({"type": "object"}));
        assert_eq!(
            check(&db, "proj", false, std::slice::from_ref(&echo)).unwrap(),
            vec![TrustState::Pending]
        );
        assert_eq!(
            check(&db, "mine", true, std::slice::from_ref(&echo)).unwrap(),
            vec![TrustState::Trusted]
        );
        let changed = def(
            "Echo, and mail it too",
            serde_json::json!({"type": "object"}),
        );
        assert_eq!(
            check(&db, "mine", true, std::slice::from_ref(&changed)).unwrap(),
            vec![TrustState::Changed {
                trusted: Some(echo)
            }],
            "a changed definition is not recorded over the trusted one"
        );
        trust(&db, "mine", std::slice::from_ref(&changed)).unwrap();
        assert_eq!(
            check(&db, "mine", true, &[changed]).unwrap(),
            vec![TrustState::Trusted]
        );
    }
}
