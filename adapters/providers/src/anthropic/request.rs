//! The Messages request body, laid out for the prompt cache.
//!
//! Anthropic caches a prefix of `tools` → `system` → `messages`. cox sends
//! the stable bytes first and marks three cache breakpoints:
//!
//! 1. the end of the stable system blocks (cox's prompt, then instruction
//!    files and skills when there are any);
//! 2. the end of the last finished turn (the message before the user's
//!    current prompt);
//! 3. the last message (it moves every call).
//!
//! The volatile block (date, cwd, branch) comes after breakpoint 1 and is
//! never cached. An effort, when the router left one, is
//! `output_config.effort`. Tools arrive sorted by name from the core. Empty text
//! blocks are left out (the API refuses them), and thinking blocks from
//! earlier responses are not sent back (cox keeps their text, not their
//! signatures). The server's web search, when the session turned it on, is
//! the last tool of a request that offers tools (never of a title or
//! summary call), and the search steps of earlier answers go back as they
//! came.

use cox_protocol::provider::{ContentBlock, Message, Request, Role};
use serde_json::{Map, Value, json};

/// How many searches one call may run.
pub const MAX_SEARCHES: u32 = 5;

/// The body's bytes, as sent.
#[must_use]
pub fn body_bytes(request: &Request) -> Vec<u8> {
    serde_json::to_vec(&body(request)).unwrap_or_default()
}

/// [`body_bytes`] with the server's web search offered (when the request
/// offers tools at all).
#[must_use]
pub fn body_bytes_searching(request: &Request) -> Vec<u8> {
    let mut body = body(request);
    if let Some(tools) = body.get_mut("tools").and_then(Value::as_array_mut) {
        tools.push(json!({
            "type": "web_search_20250305", "name": "web_search", "max_uses": MAX_SEARCHES,
        }));
    }
    serde_json::to_vec(&body).unwrap_or_default()
}

/// The JSON body for `POST /v1/messages`, streaming.
#[must_use]
pub fn body(request: &Request) -> Value {
    let mut system = Vec::new();
    for text in [&request.system.prompt, &request.system.instructions] {
        if !text.is_empty() {
            system.push(json!({"type": "text", "text": text}));
        }
    }
    if let Some(last) = system.last_mut() {
        last["cache_control"] = ephemeral();
    }
    if !request.system.volatile.is_empty() {
        system.push(json!({"type": "text", "text": request.system.volatile}));
    }
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        .collect();
    let mut messages: Vec<Value> = request.messages.iter().filter_map(|m| message(m)).collect();
    let finished = last_finished_turn(&request.messages);
    if let Some(index) = finished {
        mark_last_block(&mut messages[index]);
    }
    if let Some(last) = messages.last_mut() {
        mark_last_block(last);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("max_tokens".into(), json!(request.max_output_tokens));
    body.insert("stream".into(), json!(true));
    if let Some(effort) = request.effort {
        body.insert("output_config".into(), json!({"effort": effort.as_str()}));
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("system".into(), Value::Array(system));
    body.insert("messages".into(), Value::Array(messages));
    Value::Object(body)
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

fn mark_last_block(message: &mut Value) {
    if let Some(block) = message["content"].as_array_mut().and_then(|c| c.last_mut()) {
        block["cache_control"] = ephemeral();
    }
}

/// The index (among sent messages) of the message that ends the last
/// finished turn: the one before the last user message that carries text
/// (a prompt, not tool results).
fn last_finished_turn(messages: &[std::sync::Arc<Message>]) -> Option<usize> {
    let sent: Vec<&Message> = messages
        .iter()
        .map(|m| &**m)
        .filter(|m| message(m).is_some())
        .collect();
    let prompt = sent.iter().rposition(|m| {
        m.role == Role::User
            && m.content
                .iter()
                .any(|b| matches!(b, ContentBlock::Text { .. }))
    })?;
    prompt.checked_sub(1)
}

/// One message as the API wants it; `None` when nothing in it is sent.
fn message(message: &Message) -> Option<Value> {
    let mut content: Vec<Value> = Vec::with_capacity(message.content.len());
    for block in &message.content {
        if let ContentBlock::Image(image) = block {
            let image = json!({"type": "image", "source": {
                "type": "base64", "media_type": image.media_type, "data": image.data}});
            // Inside the tool result it belongs to, as its content's part.
            match content.last_mut() {
                Some(last) if last["type"] == "tool_result" => {
                    if let Some(text) = last["content"].as_str() {
                        last["content"] = json!([{"type": "text", "text": text}]);
                    }
                    if let Some(parts) = last["content"].as_array_mut() {
                        parts.push(image);
                    }
                }
                _ => content.push(image),
            }
            continue;
        }
        content.extend(block_value(block));
    }
    if content.is_empty() {
        return None;
    }
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    Some(json!({"role": role, "content": content}))
}

/// One block as the API wants it (an image is placed by [`message`]).
fn block_value(block: &ContentBlock) -> Option<Value> {
    match block {
        ContentBlock::Text { text } if !text.is_empty() => {
            Some(json!({"type": "text", "text": text}))
        }
        ContentBlock::Text { .. } | ContentBlock::Thinking { .. } => None,
        ContentBlock::ToolUse { id, name, input } => {
            Some(json!({"type": "tool_use", "id": id, "name": name, "input": input}))
        }
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => {
            let mut block =
                json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": content});
            if *is_error {
                block["is_error"] = json!(true);
            }
            Some(block)
        }
        ContentBlock::Image(_) => None,
        // Returned as it came, to the provider that made it only.
        ContentBlock::Server(block) if block.provider == "anthropic" => Some(block.raw.clone()),
        ContentBlock::Server(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cox_protocol::provider::{SystemParts, ToolSpec};

    fn request(messages: Vec<Message>) -> Request {
        Request {
            model: "claude-sonnet-5".into(),
            system: SystemParts {
                prompt: "You are cox.".into(),
                instructions: "AGENTS.md says: run make.".into(),
                volatile: "Date: 2026-11-30".into(),
            },
            tools: vec![ToolSpec {
                name: "read".into(),
                description: "Read a file.".into(),
                input_schema: json!({"type": "object"}),
            }],
            messages: std::sync::Arc::new(messages.into_iter().map(std::sync::Arc::new).collect()),
            max_output_tokens: 8000,
            tier: cox_protocol::provider::Tier::Code,
            effort: None,
            model_override: None,
        }
    }

    fn turn_one() -> Vec<Message> {
        vec![
            Message::user_text("read a"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::Thinking { text: "hm".into() },
                    ContentBlock::ToolUse {
                        id: "t1".into(),
                        name: "read".into(),
                        input: json!({"path": "a"}),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "t1".into(),
                    content: "A".into(),
                    is_error: false,
                }],
            },
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::Text {
                    text: "a says A".into(),
                }],
            },
        ]
    }

    #[test]
    fn stable_parts_come_first_with_three_breakpoints() {
        let mut messages = turn_one();
        messages.push(Message::user_text("now b"));
        let body = body(&request(messages));
        let keys: Vec<&str> = body
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "model",
                "max_tokens",
                "stream",
                "tools",
                "system",
                "messages"
            ]
        );
        let system = body["system"].as_array().unwrap();
        assert_eq!(system.len(), 3);
        assert!(system[0].get("cache_control").is_none());
        assert_eq!(system[1]["cache_control"], ephemeral(), "breakpoint 1");
        assert!(
            system[2].get("cache_control").is_none(),
            "the volatile block is never cached"
        );
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(
            messages[3]["content"][0]["cache_control"],
            ephemeral(),
            "breakpoint 2"
        );
        assert_eq!(
            messages[4]["content"][0]["cache_control"],
            ephemeral(),
            "breakpoint 3"
        );
        let marks = body.to_string().matches("cache_control").count();
        assert_eq!(marks, 3);
        assert_eq!(
            messages[1]["content"].as_array().unwrap().len(),
            1,
            "no thinking sent back"
        );
    }

    #[test]
    fn the_second_request_repeats_the_first_byte_for_byte_up_to_the_new_turn() {
        let first = body(&request(vec![Message::user_text("read a")])).to_string();
        let second = body(&request(turn_one())).to_string();
        let messages_at = first.find("\"messages\"").unwrap();
        assert_eq!(
            first[..messages_at],
            second[..messages_at],
            "tools and system are identical"
        );
        let user_turn = "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"read a\"";
        assert!(first.contains(user_turn) && second.contains(user_turn));
    }

    #[test]
    fn empty_parts_are_left_out() {
        let mut req = request(vec![Message::user_text("hi")]);
        req.system.instructions.clear();
        req.tools.clear();
        let body = body(&req);
        assert!(body.get("tools").is_none());
        assert_eq!(
            body["system"][0]["cache_control"],
            ephemeral(),
            "breakpoint 1 on the prompt"
        );
        assert_eq!(body["system"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn a_results_images_go_inside_that_tool_result() {
        let image = |data: &str| {
            ContentBlock::Image(cox_protocol::types::Image {
                media_type: "image/png".into(),
                data: data.into(),
            })
        };
        let mut messages = turn_one();
        messages[2].content = vec![
            ContentBlock::ToolResult {
                tool_use_id: "t1".into(),
                content: "[image: image/png, 3 bytes]".into(),
                is_error: false,
            },
            image("AAAA"),
            image("BBBB"),
            ContentBlock::ToolResult {
                tool_use_id: "t2".into(),
                content: "plain".into(),
                is_error: false,
            },
        ];
        let body = body(&request(messages));
        let results = &body["messages"][2]["content"];
        assert_eq!(
            results[0]["content"],
            json!([
                {"type": "text", "text": "[image: image/png, 3 bytes]"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "BBBB"}}
            ])
        );
        assert_eq!(
            results[1]["content"], "plain",
            "a result without images stays text"
        );
        assert_eq!(results.as_array().unwrap().len(), 2);
    }
}
