//! Properties of stream decoding over arbitrary input: no bytes make it
//! panic, and how the network cuts the bytes never changes what comes out.

use cox_protocol::provider::{ProviderError, StreamEvent};
use cox_providers::anthropic::stream::MessageStream;
use cox_providers::openai::stream::ChunkStream;
use cox_providers::sse::SseDecoder;
use proptest::prelude::*;

type Out = Vec<Result<Vec<StreamEvent>, ProviderError>>;

fn decode(pieces: &[&[u8]]) -> (Out, Out) {
    let mut sse = SseDecoder::new();
    let mut anthropic = MessageStream::new();
    let mut openai = ChunkStream::new();
    let (mut a, mut o) = (Vec::new(), Vec::new());
    for piece in pieces {
        for event in sse.push(piece) {
            a.push(anthropic.push(&event));
            o.push(openai.push(&event));
        }
    }
    (a, o)
}

/// Bytes that look like a stream often enough to reach the folds.
fn streamish() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        Just("event: message_start\n".to_owned()),
        Just("data: {\"type\":\"ping\"}\n".to_owned()),
        Just("data: [DONE]\n".to_owned()),
        Just("\n".to_owned()),
        Just("\r\n".to_owned()),
        Just(": keep-alive\n".to_owned()),
        Just("data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"read\"}}\n".to_owned()),
        Just("data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\"}}\n".to_owned()),
        Just("data: {\"type\":\"content_block_stop\",\"index\":0}\n".to_owned()),
        Just("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":\"{\"}}]},\"finish_reason\":\"tool_calls\"}]}\n".to_owned()),
        "[ -~é\u{202e}]{0,40}\n",
        "data: [ -~]{0,40}\n",
    ];
    (
        prop::collection::vec(line, 0..40),
        prop::collection::vec(any::<u8>(), 0..16),
    )
        .prop_map(|(lines, noise)| {
            let mut bytes = lines.concat().into_bytes();
            bytes.extend(noise);
            bytes
        })
}

proptest! {
    #[test]
    fn any_bytes_decode_without_panicking(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        decode(&[&bytes]);
    }

    #[test]
    fn the_cut_never_changes_the_result(bytes in streamish(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6)) {
        let whole = decode(&[&bytes]);
        let mut at: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
        at.sort_unstable();
        let mut pieces = Vec::new();
        let mut start = 0;
        for end in at {
            pieces.push(&bytes[start..end]);
            start = end;
        }
        pieces.push(&bytes[start..]);
        prop_assert_eq!(decode(&pieces), whole);
    }
}
