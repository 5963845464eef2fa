//! Any bytes given to the submission and event parsers either fail cleanly
//! or parse into a value that serialises back to JSON that parses again.
#![no_main]

use cox_protocol::types::{Event, Submission};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(sub) = serde_json::from_slice::<Submission>(data) {
        let json = serde_json::to_vec(&sub).expect("a parsed submission serialises");
        let _: Submission = serde_json::from_slice(&json).expect("and parses again");
    }
    if let Ok(event) = serde_json::from_slice::<Event>(data) {
        let json = serde_json::to_vec(&event).expect("a parsed event serialises");
        let _: Event = serde_json::from_slice(&json).expect("and parses again");
    }
});
