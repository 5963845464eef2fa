//! Decoding streamed responses (issue 4's figure: at least 50,000 events/s):
//! SSE framing plus the fold into provider-neutral events, for each wire
//! format, over a response of realistic shape cut into 1,500-byte pieces as
//! a network would deliver it.

use std::hint::black_box;

use cox_providers::anthropic::stream::MessageStream;
use cox_providers::openai::stream::ChunkStream;
use cox_providers::sse::SseDecoder;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// A long Anthropic answer: thinking, 2,000 text deltas, a tool call in
/// pieces, usage.
fn anthropic_response() -> (String, u64) {
    let mut events = vec![
        r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-5","usage":{"input_tokens":2048,"cache_read_input_tokens":9000,"output_tokens":1}}}"#.to_owned(),
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#.to_owned(),
    ];
    for i in 0..2_000 {
        events.push(format!(
            r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"word{i} and "}}}}"#
        ));
        if i % 100 == 0 {
            events.push(r#"{"type": "ping"}"#.to_owned());
        }
    }
    events.push(r#"{"type":"content_block_stop","index":0}"#.to_owned());
    events.push(r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}"#.to_owned());
    for piece in [r#"{\"pa"#, r#"th\": \"src/"#, r#"main.rs\"}"#] {
        events.push(format!(
            r#"{{"type":"content_block_delta","index":1,"delta":{{"type":"input_json_delta","partial_json":"{piece}"}}}}"#
        ));
    }
    events.push(r#"{"type":"content_block_stop","index":1}"#.to_owned());
    events.push(r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":4000}}"#.to_owned());
    events.push(r#"{"type":"message_stop"}"#.to_owned());
    let count = events.len() as u64;
    let text = events
        .iter()
        .map(|data| {
            let kind = data
                .split("\"type\":")
                .nth(1)
                .and_then(|r| r.trim_start().split('"').nth(1))
                .unwrap_or("ping");
            format!("event: {kind}\ndata: {data}\n\n")
        })
        .collect();
    (text, count)
}

/// The same answer as Chat Completions chunks.
fn openai_response() -> (String, u64) {
    let mut chunks = Vec::new();
    for i in 0..2_000 {
        chunks.push(format!(
            r#"{{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-5.1","choices":[{{"index":0,"delta":{{"content":"word{i} and "}},"finish_reason":null}}]}}"#
        ));
    }
    chunks.push(r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-5.1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\": \"src/main.rs\"}"}}]},"finish_reason":null}]}"#.to_owned());
    chunks.push(r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-5.1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#.to_owned());
    chunks.push(r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-5.1","choices":[],"usage":{"prompt_tokens":11048,"completion_tokens":4000,"prompt_tokens_details":{"cached_tokens":9000}}}"#.to_owned());
    let mut text: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    text.push_str("data: [DONE]\n\n");
    (text, chunks.len() as u64 + 1)
}

fn decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("sse");
    let (anthropic, count) = anthropic_response();
    group.throughput(Throughput::Elements(count));
    group.bench_function("anthropic events", |b| {
        b.iter(|| {
            let mut sse = SseDecoder::new();
            let mut message = MessageStream::new();
            let mut out = 0usize;
            for piece in black_box(anthropic.as_bytes()).chunks(1_500) {
                for event in sse.push(piece) {
                    out += message.push(&event).unwrap().len();
                }
            }
            assert!(message.is_done());
            out
        });
    });
    let (openai, count) = openai_response();
    group.throughput(Throughput::Elements(count));
    group.bench_function("openai chunks", |b| {
        b.iter(|| {
            let mut sse = SseDecoder::new();
            let mut stream = ChunkStream::new();
            let mut out = 0usize;
            for piece in black_box(openai.as_bytes()).chunks(1_500) {
                for event in sse.push(piece) {
                    out += stream.push(&event).unwrap().len();
                }
            }
            out
        });
    });
    group.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
