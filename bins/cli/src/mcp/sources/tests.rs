use super::*;

fn vars(name: &str) -> Option<String> {
    match name {
        "TOKEN" => Some("t0k".into()),
        "EMPTY" => Some(String::new()),
        _ => None,
    }
}

#[test]
fn variables_expand_with_their_defaults() {
    assert_eq!(expand("Bearer ${TOKEN}", &vars).unwrap(), "Bearer t0k");
    assert_eq!(expand("${NOPE:-x}/${TOKEN}", &vars).unwrap(), "x/t0k");
    assert_eq!(expand("${EMPTY:-fallback}", &vars).unwrap(), "fallback");
    assert_eq!(expand("${EMPTY}", &vars).unwrap(), "");
    assert_eq!(expand("$HOME and $", &vars).unwrap(), "$HOME and $");
    assert!(
        expand("${NOPE}", &vars)
            .unwrap_err()
            .contains("${NOPE} is not set")
    );
    assert!(
        expand("${TOKEN", &vars)
            .unwrap_err()
            .contains("never closed")
    );
}

#[test]
fn a_bad_entry_is_named_with_its_line_and_the_others_load() {
    let text = r#"{
  "mcpServers": {
"good": { "command": "node", "args": ["s.js", "${TOKEN}"] },
"typo": {
  "command": "x",
  "argz": []
},
"web": { "type": "http", "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer ${TOKEN}" } },
"unset": { "command": "${MISSING}" }
  }
}"#;
    let parsed = server_file(text, Path::new(".mcp.json"), OriginKind::Project, &vars).unwrap();
    let map: BTreeMap<_, _> = parsed.into_iter().collect();
    let good = map["good"].as_ref().unwrap();
    assert_eq!(good.origin.line, 3);
    assert_eq!(
        good.transport,
        Transport::Stdio {
            command: "node".into(),
            args: vec!["s.js".into(), "t0k".into()],
            env: vec![],
            cwd: None
        }
    );
    // Sandboxed, with the network unless the entry says otherwise.
    assert!(good.sandbox && good.network);
    let typo = map["typo"].as_ref().unwrap_err();
    assert!(
        typo.starts_with(".mcp.json:6: MCP server 'typo': unknown field `argz`"),
        "{typo}"
    );
    let web = map["web"].as_ref().unwrap();
    assert_eq!(
        web.transport,
        Transport::Http {
            url: "https://example.com/mcp".into(),
            headers: vec![("Authorization".into(), "Bearer t0k".into())]
        }
    );
    let unset = map["unset"].as_ref().unwrap_err();
    assert!(
        unset.contains(".mcp.json:9:") && unset.contains("${MISSING} is not set"),
        "{unset}"
    );
}

#[test]
fn a_file_that_is_not_json_is_one_line_with_its_line() {
    let err = server_file(
        "{\n  \"mcpServers\": {,\n}",
        Path::new("m.json"),
        OriginKind::Flag,
        &vars,
    )
    .unwrap_err();
    assert!(err.starts_with("m.json:2: "), "{err}");
    let err = server_file(
        "{\"servers\": {}}",
        Path::new("m.json"),
        OriginKind::Flag,
        &vars,
    )
    .unwrap_err();
    assert!(err.contains("unknown field `servers`"), "{err}");
}

#[test]
fn transports_are_checked() {
    let origin = Origin {
        kind: OriginKind::User,
        file: "c.toml".into(),
        line: 4,
    };
    let entry = |f: fn(&mut Entry)| {
        let mut e = Entry::default();
        f(&mut e);
        resolve("s", &e, origin.clone(), &vars)
    };
    assert!(
        entry(|_| {})
            .unwrap_err()
            .contains("neither a command nor a url")
    );
    assert!(
        entry(|e| e.kind = Some("ws".into()))
            .unwrap_err()
            .contains("not one of")
    );
    assert!(
        entry(|e| {
            e.url = Some("https://x".into());
            e.sandbox = Some(false);
        })
        .unwrap_err()
        .contains("for stdio servers")
    );
    assert!(
        entry(|e| e.url = Some("ftp://x".into()))
            .unwrap_err()
            .contains("not an http")
    );
    let sse = entry(|e| {
        e.kind = Some("sse".into());
        e.url = Some("http://127.0.0.1:1/sse".into());
    })
    .unwrap();
    assert!(matches!(sse.transport, Transport::Sse { .. }));
    let bad = resolve("a__b", &Entry::default(), origin.clone(), &vars).unwrap_err();
    assert!(bad.contains("single '_'"), "{bad}");
    // A pre-registered OAuth client: for an http server, its secret from
    // a variable, never in Debug output.
    let with_client = entry(|e| {
        e.url = Some("https://x/mcp".into());
        e.oauth = Some(crate::config::McpOAuth {
            client_id: "cox-by-hand".into(),
            client_secret: Some("${TOKEN}".into()),
            ..Default::default()
        });
    })
    .unwrap();
    let client = with_client.oauth.clone().unwrap();
    assert_eq!(client.client_id, "cox-by-hand");
    assert_eq!(client.client_secret.as_deref(), Some("t0k"));
    assert!(!format!("{with_client:?}").contains("t0k"));
    assert!(
        entry(|e| {
            e.command = Some("node".into());
            e.oauth = Some(crate::config::McpOAuth::default());
        })
        .unwrap_err()
        .contains("oauth is for an http server")
    );
}

/// Each grant takes its own keys and says which one it misses; a key
/// of another grant is refused by name; the secrets stay out of Debug.
#[test]
fn an_oauth_grant_takes_its_keys_and_refuses_the_others() {
    let vars = |name: &str| (name == "TOKEN").then(|| "t0k".to_owned());
    let origin = Origin {
        file: "cfg".into(),
        line: 1,
        kind: OriginKind::User,
    };
    let with = |oauth: crate::config::McpOAuth| {
        let entry = Entry {
            url: Some("http://127.0.0.1:1/mcp".into()),
            kind: Some("http".into()),
            oauth: Some(oauth),
            ..Entry::default()
        };
        resolve("s", &entry, origin.clone(), &vars)
    };
    let oauth = |grant: &str| crate::config::McpOAuth {
        client_id: "c".into(),
        grant: Some(grant.into()),
        ..Default::default()
    };
    let machine = with(crate::config::McpOAuth {
        client_secret: Some("${TOKEN}".into()),
        ..oauth("client_credentials")
    })
    .unwrap();
    let client = machine.oauth.clone().unwrap();
    assert_eq!(
        client.grant,
        cox_protocol::mcp::OAuthGrant::ClientCredentials
    );
    assert!(!format!("{machine:?}").contains("t0k"));
    let keyed = with(crate::config::McpOAuth {
        private_key: Some("-----BEGIN EC PRIVATE KEY-----\n…".into()),
        ..oauth("client_credentials")
    })
    .unwrap();
    let client = keyed.oauth.clone().unwrap();
    assert_eq!(client.signing_algorithm.as_deref(), Some("ES256"));
    assert!(!format!("{keyed:?}").contains("BEGIN EC"));
    let refused = |oauth: crate::config::McpOAuth| with(oauth).unwrap_err();
    assert!(refused(oauth("password")).contains("oauth.grant \"password\" is not one cox knows"));
    assert!(
        refused(crate::config::McpOAuth {
            private_key: Some("-----BEGIN PRIVATE KEY-----".into()),
            ..oauth("client_credentials")
        })
        .contains("oauth.signing_algorithm is needed")
    );
    assert!(
        refused(crate::config::McpOAuth {
            id_token: Some("x".into()),
            ..oauth("authorization_code")
        })
        .contains("oauth.id_token is for grant = \"cross_app\"")
    );
    let cross = crate::config::McpOAuth {
        client_secret: Some("s".into()),
        idp_issuer: Some("https://idp".into()),
        idp_token_endpoint: Some("https://idp/token".into()),
        idp_client_id: Some("i".into()),
        id_token: Some("${TOKEN}".into()),
        ..oauth("cross_app")
    };
    let app = with(cross.clone()).unwrap();
    let idp = app.oauth.clone().unwrap().idp.unwrap();
    assert_eq!(idp.id_token, "t0k");
    assert!(!format!("{app:?}").contains("t0k"));
    assert!(
        refused(crate::config::McpOAuth {
            idp_token_endpoint: None,
            ..cross
        })
        .contains("oauth.grant cross_app needs oauth.idp_token_endpoint")
    );
}
