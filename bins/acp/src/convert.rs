//! The protocol's shapes as cox fills and reads them: the answer to
//! `initialize`, the modes and the model picker, a prompt's blocks as a
//! user turn, the client's MCP servers as cox's config, the permission
//! options and what an answer decides. Pure: no I/O.

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema as acp;
use cox_protocol::provider::Tier;
use cox_protocol::types::{Decision, PermissionMode, Submission};

use crate::invalid;

/// The model picker, `current` chosen among `models`.
pub(crate) fn model_option(current: &str, models: &[String]) -> acp::SessionConfigOption {
    let options: Vec<acp::SessionConfigSelectOption> = models
        .iter()
        .map(|m| acp::SessionConfigSelectOption::new(m.clone(), m.clone()))
        .collect();
    acp::SessionConfigOption::select("model", "Model", current.to_owned(), options)
        .category(acp::SessionConfigOptionCategory::Model)
}

/// The answer to `initialize`: what cox can do for an editor.
pub(crate) fn initialize(request: &acp::InitializeRequest) -> acp::InitializeResponse {
    let capabilities = acp::AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(
            acp::PromptCapabilities::new()
                .image(true)
                .audio(false)
                .embedded_context(true),
        )
        .mcp_capabilities(acp::McpCapabilities::new().http(true).sse(false));
    let environment = acp::AuthMethod::Agent(
        acp::AuthMethodAgent::new("environment", "API key in the environment").description(
            "set ANTHROPIC_API_KEY (or OPENAI_API_KEY, or OPENAI_BASE_URL for a local \
             server) in the environment cox runs in, then start again",
        ),
    );
    acp::InitializeResponse::new(request.protocol_version)
        .agent_capabilities(capabilities)
        .auth_methods(vec![environment])
        .agent_info(acp::Implementation::new("cox", env!("CARGO_PKG_VERSION")))
}

/// The modes a client may switch to: the permission modes, then architect
/// and editor; `current` is on.
pub(crate) fn modes(current: PermissionMode) -> acp::SessionModeState {
    let mut available: Vec<acp::SessionMode> = PermissionMode::ALL
        .iter()
        .map(|m| acp::SessionMode::new(m.as_str().to_owned(), m.as_str().to_owned()))
        .collect();
    available.push(
        acp::SessionMode::new("architect", "architect")
            .description("plan mode, main turns on the think tier"),
    );
    available.push(
        acp::SessionMode::new("editor", "editor").description("main turns back on the code tier"),
    );
    acp::SessionModeState::new(current.as_str().to_owned(), available)
}

/// What switching to mode `id` asks of the session.
pub(crate) fn mode_submission(id: &str) -> Result<Submission, Error> {
    let set = |permission_mode, tier| Submission::SetMode {
        permission_mode,
        tier,
        model: None,
    };
    match id {
        "architect" => Ok(set(Some(PermissionMode::Plan), Some(Tier::Think))),
        "editor" => Ok(set(None, Some(Tier::Code))),
        _ => PermissionMode::ALL
            .iter()
            .find(|m| m.as_str() == id)
            .map(|m| set(Some(*m), None))
            .ok_or_else(|| invalid(format!("unknown mode `{id}`"))),
    }
}

/// The prompt's blocks as the text of a user turn.
pub(crate) fn prompt_text(
    blocks: &[acp::ContentBlock],
) -> Result<(String, Vec<cox_protocol::types::Image>), Error> {
    let mut text = String::new();
    let mut images = Vec::new();
    for block in blocks {
        match block {
            acp::ContentBlock::Text(t) => text.push_str(&t.text),
            acp::ContentBlock::Image(image) => {
                let name = image.uri.as_deref().unwrap_or("the image");
                let prepared = cox_cli::attach::image_from_base64(&image.data, name)
                    .map_err(|why| invalid(&why))?;
                images.push(prepared);
            }
            acp::ContentBlock::ResourceLink(link) => {
                text.push_str(&format!(" @{} ", link.uri));
            }
            acp::ContentBlock::Resource(embedded) => match &embedded.resource {
                acp::EmbeddedResourceResource::TextResourceContents(r) => {
                    text.push_str(&format!(
                        "\n<resource uri=\"{}\">\n{}\n</resource>\n",
                        r.uri, r.text
                    ));
                }
                _ => return Err(invalid("only text resources can be embedded in a prompt")),
            },
            _ => {
                return Err(invalid(
                    "this prompt block is not supported (cox takes text and embedded text)",
                ));
            }
        }
    }
    if text.trim().is_empty() && images.is_empty() {
        return Err(invalid("the prompt is empty"));
    }
    Ok((text, images))
}

/// The client's MCP servers as the JSON `--mcp-config` takes.
pub(crate) fn mcp_config(servers: &[acp::McpServer]) -> Result<Option<String>, Error> {
    if servers.is_empty() {
        return Ok(None);
    }
    let mut entries = serde_json::Map::new();
    for server in servers {
        let (name, entry) = match server {
            acp::McpServer::Stdio(s) => {
                let env: serde_json::Map<String, serde_json::Value> = s
                    .env
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone().into()))
                    .collect();
                (
                    s.name.clone(),
                    serde_json::json!({
                        "command": s.command.display().to_string(),
                        "args": s.args,
                        "env": env,
                    }),
                )
            }
            acp::McpServer::Http(h) => {
                let headers: serde_json::Map<String, serde_json::Value> = h
                    .headers
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone().into()))
                    .collect();
                (
                    h.name.clone(),
                    serde_json::json!({"type": "http", "url": h.url, "headers": headers}),
                )
            }
            _ => {
                return Err(invalid(
                    "cox connects MCP servers over stdio and HTTP, not SSE",
                ));
            }
        };
        entries.insert(name, entry);
    }
    Ok(Some(
        serde_json::json!({ "mcpServers": entries }).to_string(),
    ))
}

/// The decision an option id stands for; none for a cancelled request.
pub(crate) fn decision(outcome: &acp::RequestPermissionOutcome) -> Option<Decision> {
    match outcome {
        acp::RequestPermissionOutcome::Selected(selected) => Some(match &*selected.option_id.0 {
            "allow_once" => Decision::Allow,
            "allow_always" => Decision::AllowForSession,
            "reject_always" => Decision::Deny {
                reason: Some("the user rejected this call and asked not to be asked again".into()),
            },
            _ => Decision::Deny {
                reason: Some("the user rejected this call".into()),
            },
        }),
        _ => None,
    }
}

pub(crate) fn permission_options() -> Vec<acp::PermissionOption> {
    use acp::PermissionOptionKind as Kind;
    [
        ("allow_once", "Allow once", Kind::AllowOnce),
        ("allow_always", "Allow for this session", Kind::AllowAlways),
        ("reject_once", "Reject", Kind::RejectOnce),
        ("reject_always", "Reject, and say so", Kind::RejectAlways),
    ]
    .into_iter()
    .map(|(id, name, kind)| acp::PermissionOption::new(id, name, kind))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_switch_by_their_ids_and_refuse_others() {
        assert!(matches!(
            mode_submission("acceptEdits"),
            Ok(Submission::SetMode {
                permission_mode: Some(PermissionMode::AcceptEdits),
                tier: None,
                ..
            })
        ));
        assert!(matches!(
            mode_submission("architect"),
            Ok(Submission::SetMode {
                permission_mode: Some(PermissionMode::Plan),
                tier: Some(Tier::Think),
                ..
            })
        ));
        assert!(mode_submission("yolo").is_err());
    }

    #[test]
    fn mcp_servers_become_cox_s_config_and_sse_is_refused() {
        let servers: Vec<acp::McpServer> = serde_json::from_value(serde_json::json!([
            {"name": "fs", "command": "/bin/fs", "args": ["-x"], "env": [{"name": "A", "value": "1"}]},
            {"type": "http", "name": "web", "url": "http://127.0.0.1:1/mcp", "headers": [{"name": "X", "value": "y"}]}
        ]))
        .unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&mcp_config(&servers).unwrap().unwrap()).unwrap();
        assert_eq!(json["mcpServers"]["fs"]["command"], "/bin/fs");
        assert_eq!(json["mcpServers"]["fs"]["env"]["A"], "1");
        assert_eq!(json["mcpServers"]["web"]["type"], "http");
        assert_eq!(json["mcpServers"]["web"]["headers"]["X"], "y");
        let sse: Vec<acp::McpServer> = serde_json::from_value(serde_json::json!([
            {"type": "sse", "name": "old", "url": "http://127.0.0.1:1/sse", "headers": []}
        ]))
        .unwrap();
        assert!(mcp_config(&sse).is_err());
    }

    #[test]
    fn a_prompt_takes_text_and_embedded_text() {
        let blocks: Vec<acp::ContentBlock> = serde_json::from_value(serde_json::json!([
            {"type": "text", "text": "fix"},
            {"type": "resource", "resource": {"uri": "file:///a.rs", "text": "fn a() {}"}}
        ]))
        .unwrap();
        let (text, images) = prompt_text(&blocks).unwrap();
        assert!(text.starts_with("fix"));
        assert!(text.contains("fn a() {}"));
        assert!(images.is_empty());
        // Bytes that are no image are refused, not dropped.
        let image: Vec<acp::ContentBlock> = serde_json::from_value(serde_json::json!([
            {"type": "image", "data": "AAAA", "mimeType": "image/png"}
        ]))
        .unwrap();
        let err = prompt_text(&image).unwrap_err();
        assert!(
            format!("{err:?}").contains("not a PNG, JPEG, GIF or WebP"),
            "{err:?}"
        );
    }

    #[test]
    fn an_answer_maps_to_a_decision_and_cancelled_to_none() {
        let selected: acp::RequestPermissionOutcome = serde_json::from_value(
            serde_json::json!({"outcome": "selected", "optionId": "allow_always"}),
        )
        .unwrap();
        assert_eq!(decision(&selected), Some(Decision::AllowForSession));
        let cancelled: acp::RequestPermissionOutcome =
            serde_json::from_value(serde_json::json!({"outcome": "cancelled"})).unwrap();
        assert_eq!(decision(&cancelled), None);
    }
}
