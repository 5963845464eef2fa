//! Any line given to the bash split is split without a panic, every
//! command it lists has text and words, an opaque line is at least as
//! risky as its first reason makes it (a command substitution leaves it to
//! its commands, a redirect makes it a write, anything else a command),
//! and the fast path for plain lines agrees with the tree-sitter walk.
//! Differential check: the same bytes, read as the choices of the line
//! generator of the split tests (`engine/bash/tests/common/gen.rs`), give
//! a bash line whose every stub program in command position the split must
//! report, unless it marks the line DynamicCommand.
#![no_main]

#[path = "../../engine/bash/tests/common/gen.rs"]
mod linegen;

use cox_bash::{Split, line_risk, segments, split, split_tree_sitter};
use libfuzzer_sys::fuzz_target;

fn check(line: &str) -> Split {
    let got = split(line);
    for command in &got.commands {
        assert!(!command.text.is_empty(), "an empty command from {line:?}");
        assert!(!command.words.is_empty(), "no words for {:?}", command.text);
        assert!(command.risk <= line_risk(&got));
    }
    if let Some(reason) = &got.opaque {
        let floor = reason.floor();
        assert!(line_risk(&got) >= floor, "{line:?}: {reason:?}");
    }
    assert_eq!(segments(&got).commands.len(), got.commands.len());
    assert_eq!(
        got,
        split_tree_sitter(line),
        "the fast path disagrees on {line:?}"
    );
    got
}

fuzz_target!(|data: &[u8]| {
    check(&String::from_utf8_lossy(data));

    let generated = linegen::from_bytes(data);
    let got = check(&generated.line);
    if !linegen::exempt(&got) {
        let reported = linegen::reported(&got);
        let missing: Vec<&String> = generated.names.difference(&reported).collect();
        assert!(
            missing.is_empty(),
            "the split of {:?} does not report {missing:?}; it reports {reported:?} (opaque: {:?})",
            generated.line,
            got.opaque
        );
    }
});
