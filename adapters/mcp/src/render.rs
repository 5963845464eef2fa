//! A tool call's result as text the model reads.
//!
//! Read from the result's JSON as MCP defines it, so a content kind this
//! crate's model gains later still reads: text as it is; an image or audio
//! as one line naming its type and size (the bytes stay with the server's
//! answer, not in the prompt); an embedded resource as its URI and its
//! text (a binary one as its type and size); a resource link as its URI
//! and name; structured content as JSON when there is no other content.
//! Anything else is shown as its JSON, never dropped.

use serde_json::Value;

/// The text of a `tools/call` result, and whether it reports an error.
#[must_use]
pub fn result(value: &Value) -> (String, bool) {
    let is_error = value
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut parts = Vec::new();
    if let Some(content) = value.get("content").and_then(Value::as_array) {
        for block in content {
            parts.push(block_text(block));
        }
    }
    match value.get("structuredContent") {
        Some(structured) if parts.is_empty() => {
            parts.push(serde_json::to_string_pretty(structured).unwrap_or_default());
        }
        _ => {}
    }
    (parts.join("\n"), is_error)
}

fn size_of_base64(data: &str) -> usize {
    data.len() / 4 * 3
}

pub(crate) fn block_text(block: &Value) -> String {
    let kind = block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let field = |name: &str| block.get(name).and_then(Value::as_str).unwrap_or_default();
    match kind {
        "text" => field("text").to_owned(),
        "image" | "audio" => format!(
            "[{kind}: {}, {} bytes]",
            field("mimeType"),
            size_of_base64(field("data"))
        ),
        "resource" => {
            let resource = block.get("resource").cloned().unwrap_or(Value::Null);
            let get = |name: &str| resource.get(name).and_then(Value::as_str);
            let uri = get("uri").unwrap_or_default();
            match (get("text"), get("blob")) {
                (Some(text), _) => format!("[resource {uri}]\n{text}"),
                (None, Some(blob)) => format!(
                    "[resource {uri}: {}, {} bytes]",
                    get("mimeType").unwrap_or("application/octet-stream"),
                    size_of_base64(blob)
                ),
                (None, None) => format!("[resource {uri}]"),
            }
        }
        "resource_link" => {
            let name = field("name");
            let description = field("description");
            let mut line = format!("[resource link {} ({name})", field("uri"));
            if !description.is_empty() {
                line.push_str(": ");
                line.push_str(description);
            }
            line.push(']');
            line
        }
        _ => block.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_of_content_reads_as_text() {
        let (text, is_error) = result(&json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "test://a", "text": "inside"}},
                {"type": "resource", "resource": {"uri": "test://b", "blob": "AAAAAAAA", "mimeType": "application/gzip"}},
                {"type": "resource_link", "uri": "test://c", "name": "c", "description": "the third"},
                {"type": "hologram", "depth": 3}
            ]
        }));
        assert!(!is_error);
        assert_eq!(
            text,
            "hello\n[image: image/png, 3 bytes]\n[resource test://a]\ninside\n\
             [resource test://b: application/gzip, 6 bytes]\n[resource link test://c (c): the third]\n\
             {\"type\":\"hologram\",\"depth\":3}"
        );
    }

    #[test]
    fn structured_content_shows_when_alone_and_errors_are_errors() {
        let (text, _) = result(&json!({"content": [], "structuredContent": {"t": 21}}));
        assert_eq!(text, "{\n  \"t\": 21\n}");
        let (text, is_error) =
            result(&json!({"content": [{"type": "text", "text": "bad"}], "isError": true}));
        assert_eq!((text.as_str(), is_error), ("bad", true));
    }
}
