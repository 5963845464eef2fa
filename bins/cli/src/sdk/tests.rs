//! The SDK surface's own parts, tested without a session.

use super::*;

fn fitted(mut frame: Value) -> Value {
    while frame.to_string().len() > frames::MAX_LINE && shorten_longest(&mut frame) {}
    frame
}

#[test]
fn a_frame_too_long_for_the_line_is_cut_to_fit_saying_so() {
    // One long string: halved until it fits.
    let frame = fitted(json!({"input": {"content": "x".repeat(3 * frames::MAX_LINE)}}));
    let text = frame["input"]["content"].as_str().unwrap();
    assert!(frame.to_string().len() <= frames::MAX_LINE);
    assert!(
        text.ends_with("[cut here to fit the frame]"),
        "{}",
        &text[text.len() - 40..]
    );
    // Many short strings: the list is cut, and says how much.
    let many: Vec<String> = (0..2000).map(|i| format!("{i:0>999}")).collect();
    let frame = fitted(json!({"input": {"lines": many}}));
    assert!(frame.to_string().len() <= frames::MAX_LINE);
    let lines = frame["input"]["lines"].as_array().unwrap();
    assert!(
        lines
            .last()
            .unwrap()
            .as_str()
            .unwrap()
            .contains("more items cut to fit the frame"),
        "{:?}",
        lines.last()
    );
    // A huge object of small fields: replaced whole, saying so.
    let keys: serde_json::Map<String, Value> = (0..90_000)
        .map(|i| (format!("k{i:06}"), json!("v")))
        .collect();
    let frame = fitted(json!({"type": "result", "permission_denials": [{"tool_input": keys}]}));
    assert!(frame.to_string().len() <= frames::MAX_LINE);
    assert!(
        frame["permission_denials"][0]
            .as_str()
            .unwrap()
            .contains("cut to fit the frame"),
        "{frame}"
    );
    assert_eq!(frame["type"], "result");
    // Small: nothing to cut.
    let mut small = json!({"a": [1, 2, 3]});
    assert!(!shorten_longest(&mut small));
}
