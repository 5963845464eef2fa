//! The providers' own web search on wire bytes of both formats: an
//! Anthropic stream with a `server_tool_use`, its `web_search_tool_result`
//! and a cited text block (in every cut of its bytes), and a Chat
//! Completions stream of a search model with `url_citation` annotations;
//! the requests that offer the search, and the search steps of an earlier
//! answer going back to Anthropic exactly as they came (and to no one
//! else).

use std::sync::Arc;

use cox_protocol::provider::{
    ContentBlock, Message, ModelStop, ProviderError, Request, Role, StreamEvent, SystemParts, Tier,
    ToolSpec,
};
use cox_protocol::types::{ServerStep, Source, Usage};
use cox_providers::anthropic::request as anthropic_request;
use cox_providers::anthropic::stream::MessageStream;
use cox_providers::openai::request::{self as openai_request, LimitField};
use cox_providers::openai::stream::ChunkStream;
use cox_providers::sse::SseDecoder;
use serde_json::{Value, json};

const ANTHROPIC: &str = include_str!("fixtures/anthropic_web_search.sse");
const OPENAI: &str = include_str!("fixtures/openai_search_annotations.sse");

fn anthropic(pieces: &[&[u8]]) -> Result<Vec<StreamEvent>, ProviderError> {
    let mut sse = SseDecoder::new();
    let mut message = MessageStream::new();
    let mut out = Vec::new();
    for piece in pieces {
        for event in sse.push(piece) {
            out.extend(message.push(&event)?);
        }
    }
    assert!(message.is_done());
    Ok(out)
}

fn blog() -> Source {
    Source {
        url: "https://blog.rust-lang.org/2026/04/16/Rust-1.95.0/".into(),
        title: "Announcing Rust 1.95.0".into(),
    }
}

#[test]
fn an_anthropic_search_becomes_its_steps_its_citations_and_its_count() {
    let events = anthropic(&[ANTHROPIC.as_bytes()]).unwrap();
    let Some(StreamEvent::Server(searched)) = events.get(1) else {
        panic!("{events:?}");
    };
    assert_eq!(
        searched.step,
        ServerStep::Searched {
            id: "srvtoolu_01WQ".into(),
            query: "rust 1.95 release notes".into()
        }
    );
    assert_eq!(
        searched.raw,
        json!({"type": "server_tool_use", "id": "srvtoolu_01WQ", "name": "web_search",
               "input": {"query": "rust 1.95 release notes"}})
    );
    let Some(StreamEvent::Server(found)) = events.get(2) else {
        panic!("{events:?}");
    };
    let ServerStep::Found { results, error, .. } = &found.step else {
        panic!("{found:?}");
    };
    assert_eq!(error, &None);
    assert_eq!(results[0], blog());
    assert_eq!(results[1].url, "https://doc.rust-lang.org/releases.html");
    // The result block goes back whole, encrypted content and all.
    assert_eq!(found.raw["type"], "web_search_tool_result");
    assert!(
        found
            .raw
            .to_string()
            .contains("EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5")
    );
    assert_eq!(
        events[3],
        StreamEvent::TextDelta("Rust 1.95 stabilises let chains in match guards.".into())
    );
    // Each page once, in the order first cited.
    assert_eq!(
        events[4],
        StreamEvent::Citations(vec![
            blog(),
            Source {
                url: "https://doc.rust-lang.org/releases.html".into(),
                title: "Rust Release Notes".into()
            }
        ])
    );
    assert_eq!(
        events[5],
        StreamEvent::Usage(Usage {
            input_tokens: 10682,
            output_tokens: 510,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            web_searches: 1,
        })
    );
    assert_eq!(events[6], StreamEvent::Done(ModelStop::EndTurn));
    // No step of the server's is taken for a call cox runs.
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::ToolUse { .. }))
    );
}

#[test]
fn any_cut_of_the_anthropic_bytes_decodes_the_same() {
    let whole = anthropic(&[ANTHROPIC.as_bytes()]).unwrap();
    for size in [1, 3, 17, 256] {
        let pieces: Vec<&[u8]> = ANTHROPIC.as_bytes().chunks(size).collect();
        assert_eq!(anthropic(&pieces).unwrap(), whole, "pieces of {size}");
    }
}

#[test]
fn a_search_models_annotations_become_citations() {
    let mut sse = SseDecoder::new();
    let mut chunks = ChunkStream::new();
    let mut events = Vec::new();
    for event in sse.push(OPENAI.as_bytes()) {
        events.extend(chunks.push(&event).unwrap());
    }
    let cited: Vec<&Vec<Source>> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Citations(s) => Some(s),
            _ => None,
        })
        .collect();
    assert_eq!(
        cited,
        [&vec![Source {
            url: "https://blog.rust-lang.org/2026/04/16/Rust-1.95.0/?utm_source=openai".into(),
            title: "Announcing Rust 1.95.0".into(),
        }]]
    );
    assert_eq!(events.last(), Some(&StreamEvent::Done(ModelStop::EndTurn)));
}

fn request(messages: Vec<Message>, tools: bool) -> Request {
    Request {
        model: "m".into(),
        tier: Tier::Code,
        effort: None,
        model_override: None,
        system: SystemParts::default(),
        tools: if tools {
            vec![ToolSpec {
                name: "read".into(),
                description: "Read a file.".into(),
                input_schema: json!({"type": "object"}),
            }]
        } else {
            Vec::new()
        },
        messages: Arc::new(messages.into_iter().map(Arc::new).collect()),
        max_output_tokens: 1000,
    }
}

#[test]
fn the_search_is_offered_with_the_tools_and_its_steps_go_back_to_anthropic_only() {
    let events = anthropic(&[ANTHROPIC.as_bytes()]).unwrap();
    let mut answer = Vec::new();
    for event in &events {
        if let StreamEvent::Server(block) = event {
            answer.push(ContentBlock::Server(block.clone()));
        }
    }
    answer.push(ContentBlock::Text {
        text: "Rust 1.95 stabilises let chains in match guards.".into(),
    });
    let history = vec![
        Message::user_text("what is new in rust 1.95?"),
        Message {
            role: Role::Assistant,
            content: answer,
        },
        Message::user_text("thanks"),
    ];
    let searching: Value = serde_json::from_slice(&anthropic_request::body_bytes_searching(
        &request(history.clone(), true),
    ))
    .unwrap();
    let tools = searching["tools"].as_array().unwrap();
    assert_eq!(
        tools.last().unwrap(),
        &json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 5})
    );
    let sent = &searching["messages"][1]["content"];
    assert_eq!(sent[0], events_raw(&events, 0));
    assert_eq!(sent[1], events_raw(&events, 1));
    assert_eq!(sent[2]["type"], "text");
    // A title or summary call (no tools) is never offered a search.
    let plain: Value = serde_json::from_slice(&anthropic_request::body_bytes_searching(&request(
        Vec::new(),
        false,
    )))
    .unwrap();
    assert!(plain.get("tools").is_none());
    // Chat Completions: the option, and no Anthropic block in the body.
    let openai: Value = serde_json::from_slice(&openai_request::body_bytes_searching(
        &request(history, true),
        LimitField::MaxCompletionTokens,
    ))
    .unwrap();
    assert_eq!(openai["web_search_options"], json!({}));
    assert!(!openai.to_string().contains("srvtoolu_01WQ"));
}

/// The raw block of the `n`th server step of `events`.
fn events_raw(events: &[StreamEvent], n: usize) -> Value {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Server(block) => Some(block.raw.clone()),
            _ => None,
        })
        .nth(n)
        .unwrap()
}
