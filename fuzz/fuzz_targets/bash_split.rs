//! Any line given to the bash split is split without a panic, every
//! command it lists has text and words, an opaque line is at least Exec,
//! and the fast path for plain lines agrees with the tree-sitter walk.
#![no_main]

use cox_bash::{line_risk, segments, split, split_tree_sitter};
use cox_protocol::types::Risk;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let line = String::from_utf8_lossy(data);
    let got = split(&line);
    for command in &got.commands {
        assert!(!command.text.is_empty(), "an empty command from {line:?}");
        assert!(!command.words.is_empty(), "no words for {:?}", command.text);
        assert!(command.risk <= line_risk(&got));
    }
    if got.opaque.is_some() {
        assert!(line_risk(&got) >= Risk::Exec);
    }
    assert_eq!(segments(&got).commands.len(), got.commands.len());
    assert_eq!(
        got,
        split_tree_sitter(&line),
        "the fast path disagrees on {line:?}"
    );
});
