//! Trust in MCP tool definitions, and in the servers that serve them.
//!
//! A definition is a tool's name, description and input schema; its hash
//! is a SHA-256 over the three, the schema in a canonical form (keys
//! sorted, no spaces), so a server that reorders its JSON is the same
//! server. Annotations (`readOnlyHint`, ...) are not part of the hash, but
//! the ones a person trusted are kept with it, and a tool's risk takes the
//! stricter of those and the ones served now: a server cannot make a
//! trusted tool read-only later.
//!
//! Rows are kept per server *identity* ([`scope`]): where the server is
//! defined (a project's servers: which project) and its whole
//! configuration. A project's server that takes the name of one you
//! trusted, or a server whose command changed, is a server of its own,
//! with no trust. A project's server is not even started until trusted:
//! [`may_start`].
//!
//! Invariant: stored rows are only replaced by an explicit trust (`cox mcp
//! trust <server>`) or, for a server from the user's own configuration,
//! written once, when that identity first connects with no rows at all.

use std::collections::BTreeMap;

use cox_protocol::mcp::{McpServer, OriginKind, Transport};
use cox_store::{Db, TrustedTool};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// What the trust covers of one tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    /// The server calls it read-only (a hint; not hashed).
    pub read_only: bool,
    /// The server calls it destructive (a hint; not hashed).
    pub destructive: bool,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn digest(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    hex(&hasher.finalize())
}

impl Definition {
    /// The definition of a tool as the server lists it.
    #[must_use]
    pub fn of(tool: &rmcp::model::Tool) -> Self {
        let hints = tool.annotations.as_ref();
        Self {
            name: tool.name.to_string(),
            description: tool.description.as_deref().unwrap_or_default().to_owned(),
            input_schema: Value::Object((*tool.input_schema).clone()),
            read_only: hints.and_then(|a| a.read_only_hint) == Some(true),
            destructive: hints.and_then(|a| a.destructive_hint) == Some(true),
        }
    }

    /// The hash the trust rows keep.
    #[must_use]
    pub fn hash(&self) -> String {
        digest(&[
            self.name.as_str(),
            self.description.as_str(),
            &canonical(&self.input_schema),
        ])
    }

    /// The definition as a row stores it.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
        })
        .to_string()
    }

    /// A definition a row stored.
    #[must_use]
    pub fn from_json(text: &str) -> Option<Self> {
        let value: Value = serde_json::from_str(text).ok()?;
        let flag = |name: &str| value.get(name).and_then(Value::as_bool).unwrap_or(false);
        Some(Self {
            name: value.get("name")?.as_str()?.to_owned(),
            description: value.get("description")?.as_str()?.to_owned(),
            input_schema: value.get("inputSchema")?.clone(),
            read_only: flag("readOnlyHint"),
            destructive: flag("destructiveHint"),
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

/// A server's identity for its trust rows: where it is defined (the user's
/// own sources are one place; a project's `.mcp.json` is that file) and
/// everything about how it runs.
#[must_use]
pub fn scope(server: &McpServer) -> String {
    let place = match server.origin.kind {
        OriginKind::Project | OriginKind::ProjectApproved => {
            format!("project:{}", server.origin.file.display())
        }
        OriginKind::Plugin => format!("plugin:{}", server.origin.file.display()),
        _ => "user".to_owned(),
    };
    let pairs = |list: &[(String, String)]| -> Value {
        Value::Array(
            list.iter()
                .map(|(k, v)| serde_json::json!([k, v]))
                .collect(),
        )
    };
    let how = match &server.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => serde_json::json!({
            "stdio": command, "args": args, "env": pairs(env),
            "cwd": cwd.as_ref().map(|c| c.display().to_string()),
        }),
        Transport::Http { url, headers } => {
            let mut how = serde_json::json!({"http": url, "headers": pairs(headers)});
            // Whom it logs in as, and how and where it gets its tokens, are
            // part of what was trusted: a changed grant or identity
            // provider waits for trust again (the secrets are not kept,
            // even hashed).
            if let Some(client) = &server.oauth {
                how["client_id"] = Value::from(client.client_id.clone());
                if client.grant != cox_protocol::mcp::OAuthGrant::AuthorizationCode {
                    how["grant"] = Value::from(format!("{:?}", client.grant));
                    how["signing_algorithm"] = Value::from(client.signing_algorithm.clone());
                }
                if let Some(idp) = &client.idp {
                    how["idp"] = serde_json::json!([idp.issuer, idp.token_endpoint, idp.client_id]);
                }
                if let Some(port) = client.callback_port {
                    how["callback_port"] = Value::from(port);
                }
            }
            how
        }
        Transport::Sse { url, headers } => {
            serde_json::json!({"sse": url, "headers": pairs(headers)})
        }
    };
    let how = serde_json::json!({"how": how, "sandbox": server.sandbox, "network": server.network});
    digest(&[&place, &canonical(&how)])
}

/// Whether `server` may be started: a project's only once trusted as it is
/// configured now; any other at once.
///
/// # Errors
/// `cox.db` could not be read.
pub fn may_start(db: &Db, server: &McpServer) -> Result<bool, String> {
    if server.origin.kind.trusted_on_first_connect() {
        return Ok(true);
    }
    let rows = db
        .trusted_tools(&server.name, &scope(server))
        .map_err(|e| e.to_string())?;
    Ok(rows.iter().any(|r| r.tool.is_empty()))
}

/// Where one tool stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrustState {
    /// Trusted, with the hints that were trusted.
    Trusted { read_only: bool, destructive: bool },
    /// Never trusted.
    Pending,
    /// Trusted once, with another definition (kept for the diff).
    Changed { trusted: Option<Definition> },
}

/// Where each of `server`'s tools stands; a server trusted on first
/// connect whose identity has no rows yet gets its current definitions
/// recorded.
///
/// # Errors
/// `cox.db` could not be read or written.
pub fn check(
    db: &Db,
    server: &McpServer,
    definitions: &[Definition],
) -> Result<Vec<TrustState>, String> {
    let scope = scope(server);
    let rows = db
        .trusted_tools(&server.name, &scope)
        .map_err(|e| e.to_string())?;
    let rows: Vec<&TrustedTool> = rows.iter().filter(|r| !r.tool.is_empty()).collect();
    if rows.is_empty() && server.origin.kind.trusted_on_first_connect() {
        trust(db, server, definitions)?;
        return Ok(definitions
            .iter()
            .map(|d| TrustState::Trusted {
                read_only: d.read_only,
                destructive: d.destructive,
            })
            .collect());
    }
    let by_name: BTreeMap<&str, &&TrustedTool> =
        rows.iter().map(|r| (r.tool.as_str(), r)).collect();
    Ok(definitions
        .iter()
        .map(|d| match by_name.get(d.name.as_str()) {
            None => TrustState::Pending,
            Some(row) if row.hash == d.hash() => {
                let stored = Definition::from_json(&row.definition);
                TrustState::Trusted {
                    read_only: stored.as_ref().is_some_and(|s| s.read_only),
                    destructive: stored.as_ref().is_none_or(|s| s.destructive),
                }
            }
            Some(row) => TrustState::Changed {
                trusted: Definition::from_json(&row.definition),
            },
        })
        .collect())
}

/// Makes `definitions` the trusted set of `server` (as it is configured
/// now), and lets it start.
///
/// # Errors
/// `cox.db` could not be written.
pub fn trust(db: &Db, server: &McpServer, definitions: &[Definition]) -> Result<(), String> {
    let now = cox_store::clock::now_rfc3339();
    let scope = scope(server);
    let mut rows: Vec<TrustedTool> = vec![TrustedTool {
        server: server.name.clone(),
        scope: scope.clone(),
        tool: String::new(),
        hash: scope.clone(),
        definition: String::new(),
        trusted_at: now.clone(),
    }];
    rows.extend(definitions.iter().map(|d| TrustedTool {
        server: server.name.clone(),
        scope: scope.clone(),
        tool: d.name.clone(),
        hash: d.hash(),
        definition: d.to_json(),
        trusted_at: now.clone(),
    }));
    db.trust_tools(&server.name, &scope, &rows)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod grant_tests {
    use super::*;
    use cox_protocol::mcp::{OAuthClient, OAuthGrant, Origin, OriginKind};

    /// A project's HTTP server trusted with one way of getting tokens is
    /// not trusted with another: the grant and the identity provider are
    /// in what was trusted.
    #[test]
    fn a_changed_grant_or_identity_provider_is_another_trust() {
        let server = |grant: OAuthGrant, idp: Option<&str>| McpServer {
            name: "s".into(),
            origin: Origin {
                file: "/p/.mcp.json".into(),
                line: 1,
                kind: OriginKind::Project,
            },
            transport: Transport::Http {
                url: "https://s.example/mcp".into(),
                headers: Vec::new(),
            },
            sandbox: true,
            network: true,
            oauth: Some(OAuthClient {
                client_id: "c".into(),
                client_secret: None,
                grant,
                private_key: None,
                signing_algorithm: None,
                idp: idp.map(|endpoint| cox_protocol::mcp::IdentityProvider {
                    issuer: "https://idp.example".into(),
                    token_endpoint: endpoint.into(),
                    client_id: "i".into(),
                    client_secret: None,
                    id_token: "t".into(),
                }),
                callback_port: None,
            }),
        };
        let code = scope(&server(OAuthGrant::AuthorizationCode, None));
        assert_ne!(code, scope(&server(OAuthGrant::ClientCredentials, None)));
        let here = scope(&server(
            OAuthGrant::CrossApp,
            Some("https://idp.example/token"),
        ));
        let there = scope(&server(
            OAuthGrant::CrossApp,
            Some("https://evil.example/token"),
        ));
        assert_ne!(here, there);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cox_protocol::mcp::Origin;

    fn def(description: &str, schema: Value) -> Definition {
        Definition {
            name: "echo".into(),
            description: description.into(),
            input_schema: schema,
            read_only: true,
            destructive: false,
        }
    }

    fn server(name: &str, kind: OriginKind, command: &str) -> McpServer {
        McpServer {
            name: name.into(),
            origin: Origin {
                kind,
                file: "/repo/.mcp.json".into(),
                line: 1,
            },
            transport: Transport::Stdio {
                command: command.into(),
                args: vec![],
                env: vec![],
                cwd: None,
            },
            sandbox: true,
            network: false,
            oauth: None,
        }
    }

    #[test]
    fn the_hash_ignores_key_order_and_hints_but_not_content() {
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
        assert_eq!(
            a.hash(),
            Definition {
                read_only: false,
                ..a.clone()
            }
            .hash()
        );
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
        let trusted = TrustState::Trusted {
            read_only: true,
            destructive: false,
        };
        let project = server("proj", OriginKind::Project, "node");
        assert!(!may_start(&db, &project).unwrap());
        assert_eq!(
            check(&db, &project, std::slice::from_ref(&echo)).unwrap(),
            vec![TrustState::Pending]
        );
        let mine = server("mine", OriginKind::User, "node");
        assert_eq!(
            check(&db, &mine, std::slice::from_ref(&echo)).unwrap(),
            vec![trusted.clone()]
        );
        let changed = def(
            "Echo, and mail it too",
            serde_json::json!({"type": "object"}),
        );
        assert_eq!(
            check(&db, &mine, std::slice::from_ref(&changed)).unwrap(),
            vec![TrustState::Changed {
                trusted: Some(echo.clone())
            }],
            "a changed definition is not recorded over the trusted one"
        );
        trust(&db, &project, std::slice::from_ref(&echo)).unwrap();
        assert!(may_start(&db, &project).unwrap());
        assert_eq!(
            check(&db, &project, std::slice::from_ref(&echo)).unwrap(),
            vec![trusted]
        );
    }

    #[test]
    fn trust_does_not_pass_to_another_server_of_the_same_name() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("cox.db")).unwrap();
        let echo = def("Echo", serde_json::json!({"type": "object"}));
        let mine = server("github", OriginKind::User, "github-mcp");
        check(&db, &mine, std::slice::from_ref(&echo)).unwrap();
        // A repository's server that takes the name, serving the same
        // definitions word for word.
        let theirs = server("github", OriginKind::Project, "sh");
        assert!(!may_start(&db, &theirs).unwrap());
        assert_eq!(
            check(&db, &theirs, std::slice::from_ref(&echo)).unwrap(),
            vec![TrustState::Pending]
        );
        // The same project server, trusted, then started another way.
        trust(&db, &theirs, std::slice::from_ref(&echo)).unwrap();
        let changed = server("github", OriginKind::Project, "sh -c evil");
        assert!(!may_start(&db, &changed).unwrap());
    }

    #[test]
    fn a_hint_served_later_cannot_loosen_a_trusted_one() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("cox.db")).unwrap();
        let mine = server("mine", OriginKind::User, "node");
        let delete = Definition {
            read_only: false,
            destructive: true,
            ..def("Deletes", serde_json::json!({"type": "object"}))
        };
        check(&db, &mine, std::slice::from_ref(&delete)).unwrap();
        let relabelled = Definition {
            read_only: true,
            destructive: false,
            ..delete.clone()
        };
        assert_eq!(
            check(&db, &mine, &[relabelled]).unwrap(),
            vec![TrustState::Trusted {
                read_only: false,
                destructive: true
            }],
            "the stored hints are the ones the state carries"
        );
    }
}
