//! Helpers shared by the split tests.
#![allow(dead_code)]

use cox_bash::{Opacity, split, split_tree_sitter};

/// The texts of a line's commands; also checks that the fast path for
/// plain lines agrees with the tree-sitter walk.
#[track_caller]
pub fn texts(line: &str) -> Vec<String> {
    let got = split(line);
    assert_eq!(
        got,
        split_tree_sitter(line),
        "the two paths disagree on {line:?}"
    );
    got.commands.into_iter().map(|c| c.text).collect()
}

pub fn opaque(line: &str) -> Option<Opacity> {
    split(line).opaque
}

/// The line is not opaque and lists these commands.
#[track_caller]
pub fn clear(line: &str, expected: &[&str]) {
    let got = split(line);
    assert_eq!(got.opaque, None, "{line:?} should not be opaque");
    assert_eq!(texts(line), expected, "{line:?}");
}

/// The line is opaque for this reason and lists these commands.
#[track_caller]
pub fn opaque_with(line: &str, reason: Opacity, expected: &[&str]) {
    assert_eq!(opaque(line), Some(reason), "{line:?}");
    assert_eq!(texts(line), expected, "{line:?}");
}
