//! A recorded-shape Anthropic stream (thinking, text, three tool calls, one
//! with no input, pings, cache usage) decoded whole and in every cut.

use cox_protocol::provider::{ModelStop, ProviderError, StreamEvent};
use cox_protocol::types::Usage;
use cox_providers::anthropic::stream::{MessageStream, classify_error};
use cox_providers::sse::{SseDecoder, SseEvent};
use serde_json::json;

const FIXTURE: &str = include_str!("fixtures/parallel_tools.sse");

fn decode(pieces: &[&[u8]]) -> Result<Vec<StreamEvent>, ProviderError> {
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

fn expected() -> Vec<StreamEvent> {
    vec![
        StreamEvent::ThinkingDelta("Two files to read.".into()),
        StreamEvent::TextDelta("Reading both ".into()),
        StreamEvent::TextDelta("files.".into()),
        StreamEvent::ToolUse {
            id: "toolu_01A".into(),
            name: "read".into(),
            input: json!({"path": "src/main.rs"}),
        },
        StreamEvent::ToolUse {
            id: "toolu_01B".into(),
            name: "read".into(),
            input: json!({"path": "Cargo.toml", "limit": 40}),
        },
        StreamEvent::ToolUse {
            id: "toolu_01C".into(),
            name: "glob".into(),
            input: json!({}),
        },
        StreamEvent::Usage(Usage {
            input_tokens: 2048,
            output_tokens: 91,
            cache_read_tokens: 300,
            cache_write_tokens: 1500,
            web_searches: 0,
        }),
        StreamEvent::Done(ModelStop::ToolUse),
    ]
}

#[test]
fn a_whole_stream_decodes_to_calls_in_block_order() {
    assert_eq!(decode(&[FIXTURE.as_bytes()]).unwrap(), expected());
}

#[test]
fn any_cut_of_the_bytes_decodes_the_same() {
    let bytes = FIXTURE.as_bytes();
    for size in [1, 2, 3, 7, 64, 1000] {
        let pieces: Vec<&[u8]> = bytes.chunks(size).collect();
        assert_eq!(decode(&pieces).unwrap(), expected(), "pieces of {size}");
    }
    let crlf = FIXTURE.replace('\n', "\r\n");
    assert_eq!(decode(&[crlf.as_bytes()]).unwrap(), expected());
}

#[test]
fn error_events_and_malformed_data_are_errors_that_say_so() {
    let mut message = MessageStream::new();
    let overloaded = SseEvent {
        event: "error".into(),
        data: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            .into(),
    };
    let err = message.push(&overloaded).unwrap_err();
    assert_eq!(
        err,
        ProviderError::Retryable {
            message: "anthropic: overloaded_error: Overloaded".into(),
            retry_after_ms: None
        },
        "an overload mid-stream is worth another try"
    );
    let refused = SseEvent {
        event: "error".into(),
        data: r#"{"type":"error","error":{"type":"permission_error","message":"no"}}"#.into(),
    };
    assert_eq!(
        message.push(&refused).unwrap_err(),
        ProviderError::Failed("anthropic: permission_error: no".into())
    );

    let too_long = SseEvent {
        event: "error".into(),
        data: r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#.into(),
    };
    assert!(matches!(
        message.push(&too_long),
        Err(ProviderError::ContextLength(_))
    ));

    let garbage = SseEvent {
        event: "content_block_delta".into(),
        data: "{not json".into(),
    };
    let err = message.push(&garbage).unwrap_err().to_string();
    assert!(err.starts_with("anthropic: malformed stream:"), "{err}");

    let mut message = MessageStream::new();
    let start = SseEvent {
        event: "content_block_start".into(),
        data: r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"read","input":{}}}"#.into(),
    };
    let delta = SseEvent {
        event: "content_block_delta".into(),
        data: r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": "}}"#.into(),
    };
    let stop = SseEvent {
        event: "content_block_stop".into(),
        data: r#"{"type":"content_block_stop","index":0}"#.into(),
    };
    message.push(&start).unwrap();
    message.push(&delta).unwrap();
    // Whether the input was cut by the output limit is known only from the
    // stop reason: a stop for any other reason makes it malformed.
    assert_eq!(message.push(&stop).unwrap(), []);
    let end = SseEvent {
        event: "message_delta".into(),
        data: r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}"#.into(),
    };
    assert_eq!(message.push(&end).unwrap(), []);
    let last = SseEvent {
        event: "message_stop".into(),
        data: r#"{"type":"message_stop"}"#.into(),
    };
    let err = message.push(&last).unwrap_err().to_string();
    assert!(err.contains("tool_use read input is not JSON"), "{err}");
}

fn events(lines: &[&str]) -> Result<Vec<StreamEvent>, ProviderError> {
    let mut message = MessageStream::new();
    let mut out = Vec::new();
    for data in lines {
        let value: serde_json::Value = serde_json::from_str(data).unwrap();
        let event = SseEvent {
            event: value["type"].as_str().unwrap().to_owned(),
            data: (*data).to_owned(),
        };
        out.extend(message.push(&event)?);
    }
    Ok(out)
}

#[test]
fn a_tool_block_cut_right_after_its_name_never_becomes_a_call() {
    let start = |index: u32, id: &str| {
        format!(
            r#"{{"type":"content_block_start","index":{index},"content_block":{{"type":"tool_use","id":"{id}","name":"bash","input":{{}}}}}}"#
        )
    };
    let stop = |index: u32| format!(r#"{{"type":"content_block_stop","index":{index}}}"#);
    let limit = r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":9}}"#;
    let end = r#"{"type":"message_stop"}"#;
    let (s0, e0, s1, e1) = (start(0, "a"), stop(0), start(1, "b"), stop(1));
    // An earlier call with no input takes none; the last one was cut.
    let out = events(&[&s0, &e0, &s1, &e1, limit, end]).unwrap();
    assert_eq!(
        out[..2],
        [
            StreamEvent::ToolUse {
                id: "a".into(),
                name: "bash".into(),
                input: serde_json::json!({})
            },
            StreamEvent::ToolUseCut {
                id: "b".into(),
                name: "bash".into()
            },
        ]
    );
    assert_eq!(out.last(), Some(&StreamEvent::Done(ModelStop::MaxTokens)));
    // Without the limit, a call with no input is whole.
    let tool_use = r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}"#;
    let out = events(&[&s1, &e1, tool_use, end]).unwrap();
    assert_eq!(
        out[0],
        StreamEvent::ToolUse {
            id: "b".into(),
            name: "bash".into(),
            input: serde_json::json!({})
        }
    );
}

#[test]
fn a_gateways_placeholder_type_is_not_a_label() {
    let err = classify_error("None", "", "upstream\nfailed");
    assert_eq!(err.to_string(), "anthropic: upstream failed");
    let err = classify_error("api_error", "400", "bad");
    assert!(
        matches!(err, ProviderError::Failed(_)),
        "a 400 code wins: {err:?}"
    );
}
