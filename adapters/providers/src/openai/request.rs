//! The Chat Completions request body, laid out for automatic prefix caching.
//!
//! OpenAI and the local servers that speak its API (llama.cpp, vLLM,
//! Ollama, LM Studio) cache by prefix without being asked, so the order is
//! the whole story: the tools (sorted by name by the core), then one system
//! message holding cox's prompt, then the instruction files, then the
//! volatile block last, then the history. One system message rather than
//! several, because some local chat templates accept only one, at the start.
//!
//! An assistant message carries its text and its tool calls (`arguments` as
//! a JSON string); each tool result is its own `tool` message, in the order
//! the calls were made. Thinking is not sent back. An effort, when the
//! router left one, is `reasoning_effort`.

use cox_protocol::provider::{ContentBlock, Message, Request, Role};
use serde_json::{Map, Value, json};

/// How the output limit is named: OpenAI's current API refuses `max_tokens`
/// for reasoning models, and many local servers know only `max_tokens`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitField {
    MaxCompletionTokens,
    MaxTokens,
}

/// The body's bytes, as sent.
#[must_use]
pub fn body_bytes(request: &Request, limit: LimitField) -> Vec<u8> {
    serde_json::to_vec(&body(request, limit)).unwrap_or_default()
}

/// [`body_bytes`] asking a search model to search the web (when the
/// request offers tools at all).
#[must_use]
pub fn body_bytes_searching(request: &Request, limit: LimitField) -> Vec<u8> {
    let mut body = body(request, limit);
    if !request.tools.is_empty() {
        body["web_search_options"] = json!({});
    }
    serde_json::to_vec(&body).unwrap_or_default()
}

/// The JSON body for `POST …/chat/completions`, streaming.
#[must_use]
pub fn body(request: &Request, limit: LimitField) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    let limit_key = match limit {
        LimitField::MaxCompletionTokens => "max_completion_tokens",
        LimitField::MaxTokens => "max_tokens",
    };
    body.insert(limit_key.into(), json!(request.max_output_tokens));
    if let Some(effort) = request.effort {
        body.insert("reasoning_effort".into(), json!(effort.as_str()));
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.input_schema,
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let system: Vec<&str> = [
        &request.system.prompt,
        &request.system.instructions,
        &request.system.volatile,
    ]
    .into_iter()
    .map(String::as_str)
    .filter(|t| !t.is_empty())
    .collect();
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system.join("\n\n")}));
    }
    // Images go to OpenAI's own API (the one that takes
    // `max_completion_tokens`); another server speaking its format may
    // serve a text-only model, or refuse a user message after tool
    // messages, and either would refuse every later request: there the
    // results' lines name the images instead.
    let images = matches!(limit, LimitField::MaxCompletionTokens);
    for message in request.messages.iter() {
        push_message(&mut messages, message, images);
    }
    body.insert("messages".into(), Value::Array(messages));
    Value::Object(body)
}

/// What leads the images of tool results, sent after the results.
const IMAGES_LEAD: &str = "The images the tool results above returned:";

fn push_message(out: &mut Vec<Value>, message: &Message, send_images: bool) {
    let mut text = String::new();
    let mut calls = Vec::new();
    // A tool message carries text only: a result's images follow the
    // results, in a user message of their own.
    let mut images = Vec::new();
    let mut dropped = 0;
    for block in &message.content {
        match block {
            ContentBlock::Text { text: t } => {
                if !text.is_empty() && !t.is_empty() {
                    text.push('\n');
                }
                text.push_str(t);
            }
            // Another provider's search steps mean nothing here; the text
            // that came of them is sent.
            ContentBlock::Thinking { .. } | ContentBlock::Server(_) => {}
            ContentBlock::ToolUse { id, name, input } => calls.push(json!({
                "id": id, "type": "function",
                "function": {"name": name, "arguments": input.to_string()},
            })),
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => out.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content})),
            ContentBlock::Image(_) if !send_images => dropped += 1,
            ContentBlock::Image(image) => images.push(json!({
                "type": "image_url",
                "image_url": {"url": format!("data:{};base64,{}", image.media_type, image.data)},
            })),
        }
    }
    // A prompt's images (a result's are named in its text already): the
    // model is told they were there.
    let results = message
        .content
        .iter()
        .any(|b| matches!(b, ContentBlock::ToolResult { .. }));
    if dropped > 0 && !results {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!(
            "[{dropped} image(s) came with this message; cox sends images only to OpenAI's own \
             API on this side, as another server's model may not take them]"
        ));
    }
    match message.role {
        Role::User if !images.is_empty() => {
            let lead = if text.is_empty() {
                IMAGES_LEAD.to_owned()
            } else {
                text
            };
            let mut parts = vec![json!({"type": "text", "text": lead})];
            parts.append(&mut images);
            out.push(json!({"role": "user", "content": parts}));
        }
        Role::User if !text.is_empty() => out.push(json!({"role": "user", "content": text})),
        Role::User => {}
        Role::Assistant if calls.is_empty() && text.is_empty() => {}
        Role::Assistant => {
            let mut m = Map::new();
            m.insert("role".into(), json!("assistant"));
            m.insert(
                "content".into(),
                if text.is_empty() {
                    Value::Null
                } else {
                    json!(text)
                },
            );
            if !calls.is_empty() {
                m.insert("tool_calls".into(), Value::Array(calls));
            }
            out.push(Value::Object(m));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cox_protocol::provider::{Effort, SystemParts, Tier, ToolSpec};

    fn request(messages: Vec<Message>) -> Request {
        Request {
            model: "gpt-5.1".into(),
            tier: Tier::Code,
            effort: Some(Effort::High),
            model_override: None,
            system: SystemParts {
                prompt: "You are cox.".into(),
                instructions: "AGENTS.md: run make.".into(),
                volatile: "Date: 2026-11-30".into(),
            },
            tools: vec![ToolSpec {
                name: "read".into(),
                description: "Read a file.".into(),
                input_schema: json!({"type": "object"}),
            }],
            messages: std::sync::Arc::new(messages.into_iter().map(std::sync::Arc::new).collect()),
            max_output_tokens: 8000,
        }
    }

    fn turn_one() -> Vec<Message> {
        vec![
            Message::user_text("read a and b"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::Thinking { text: "hm".into() },
                    ContentBlock::ToolUse {
                        id: "c1".into(),
                        name: "read".into(),
                        input: json!({"path": "a"}),
                    },
                    ContentBlock::ToolUse {
                        id: "c2".into(),
                        name: "read".into(),
                        input: json!({"path": "b"}),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![
                    ContentBlock::ToolResult {
                        tool_use_id: "c1".into(),
                        content: "A".into(),
                        is_error: false,
                    },
                    ContentBlock::ToolResult {
                        tool_use_id: "c2".into(),
                        content: "no such file".into(),
                        is_error: true,
                    },
                ],
            },
        ]
    }

    #[test]
    fn the_layout_is_stable_first() {
        let body = body(&request(turn_one()), LimitField::MaxCompletionTokens);
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
                "stream",
                "stream_options",
                "max_completion_tokens",
                "reasoning_effort",
                "tools",
                "messages"
            ]
        );
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(
            messages[0]["content"],
            "You are cox.\n\nAGENTS.md: run make.\n\nDate: 2026-11-30"
        );
        assert_eq!(messages[2]["content"], Value::Null);
        assert_eq!(
            messages[2]["tool_calls"][1]["function"]["arguments"],
            "{\"path\":\"b\"}"
        );
        assert_eq!(messages[3]["role"], "tool");
        assert_eq!(messages[4]["tool_call_id"], "c2");
        assert_eq!(messages.len(), 5, "thinking is not sent back");
        assert_eq!(body["tools"][0]["function"]["name"], "read");
    }

    #[test]
    fn each_request_extends_the_last_byte_for_byte() {
        let mut history = vec![Message::user_text("read a and b")];
        let first = String::from_utf8(body_bytes(&request(history.clone()), LimitField::MaxTokens))
            .unwrap();
        history = turn_one();
        let second =
            String::from_utf8(body_bytes(&request(history), LimitField::MaxTokens)).unwrap();
        let open = first.len() - "]}".len();
        assert_eq!(first[..open], second[..open]);
        assert!(first.ends_with("]}"));
    }

    #[test]
    fn a_results_images_follow_the_tool_messages_in_a_user_message() {
        let messages = vec![
            Message::user_text("look"),
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: "c1".into(),
                    name: "shot".into(),
                    input: json!({}),
                }],
            },
            Message {
                role: Role::User,
                content: vec![
                    ContentBlock::ToolResult {
                        tool_use_id: "c1".into(),
                        content: "[image: image/png, 3 bytes]".into(),
                        is_error: false,
                    },
                    ContentBlock::Image(cox_protocol::types::Image {
                        media_type: "image/png".into(),
                        data: "AAAA".into(),
                    }),
                ],
            },
        ];
        let body = body(&request(messages.clone()), LimitField::MaxCompletionTokens);
        let sent = body["messages"].as_array().unwrap();
        assert_eq!(sent[3]["role"], "tool");
        assert_eq!(sent[3]["content"], "[image: image/png, 3 bytes]");
        assert_eq!(
            sent[4],
            json!({"role": "user", "content": [
                {"type": "text", "text": IMAGES_LEAD},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
            ]})
        );
        assert_eq!(sent.len(), 5);
        // Another server in OpenAI's format is sent the lines only.
        let body = super::body(&request(messages), LimitField::MaxTokens);
        let sent = body["messages"].as_array().unwrap();
        assert_eq!(sent.len(), 4, "{sent:?}");
        assert_eq!(sent[3]["content"], "[image: image/png, 3 bytes]");
    }

    #[test]
    fn a_prompts_image_goes_as_a_part_of_it_or_is_named_in_its_text() {
        let prompt = Message {
            role: Role::User,
            content: vec![
                ContentBlock::Text {
                    text: "what is this".into(),
                },
                ContentBlock::Image(cox_protocol::types::Image {
                    media_type: "image/jpeg".into(),
                    data: "/9j/".into(),
                }),
            ],
        };
        let body = body(
            &request(vec![prompt.clone()]),
            LimitField::MaxCompletionTokens,
        );
        assert_eq!(
            body["messages"][1],
            json!({"role": "user", "content": [
                {"type": "text", "text": "what is this"},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/"}}
            ]})
        );
        let body = super::body(&request(vec![prompt]), LimitField::MaxTokens);
        let text = body["messages"][1]["content"].as_str().unwrap();
        assert!(text.starts_with("what is this\n[1 image(s) came with this message"));
    }
}
