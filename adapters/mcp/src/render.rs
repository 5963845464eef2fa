//! A tool call's result as text the model reads.
//!
//! Read from the result's JSON as MCP defines it, so a content kind this
//! crate's model gains later still reads: text as it is; an image or audio
//! as one line naming its type and size (the bytes stay with the server's
//! answer, not in the prompt); an embedded resource as its URI and its
//! text (a binary one as its type and size); a resource link as its URI
//! and name; structured content as JSON when there is no other content.
//! Anything else is shown as its JSON, never dropped.
//!
//! An image is also given to the model as an image ([`images`]) when its
//! bytes are a PNG, JPEG, GIF or WebP (read from the bytes themselves, as a
//! provider refuses an image whose declared type is wrong, and a refused
//! image in the history would fail every later request), at most
//! [`IMAGE_MAX`] bytes, [`IMAGES_MAX`] to a result; its line says when it
//! is not shown and why.

use cox_protocol::types::Image;
use serde_json::Value;

/// The largest image the model is shown (the providers' own bound).
pub const IMAGE_MAX: usize = 5 * 1024 * 1024;

/// The most images of one result the model is shown.
pub const IMAGES_MAX: usize = 8;

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
    let padding = data.len() - data.trim_end_matches('=').len();
    (data.len() / 4 * 3).saturating_sub(padding.min(2))
}

pub(crate) fn block_text(block: &Value) -> String {
    let kind = block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let field = |name: &str| block.get(name).and_then(Value::as_str).unwrap_or_default();
    match kind {
        "text" => field("text").to_owned(),
        "image" => match image(block) {
            Ok(_) => format!(
                "[image: {}, {} bytes]",
                field("mimeType"),
                size_of_base64(field("data"))
            ),
            Err(why) => format!(
                "[image: {}, {} bytes; not shown to the model: {why}]",
                field("mimeType"),
                size_of_base64(field("data"))
            ),
        },
        "audio" => format!(
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

/// The images of a `tools/call` result the model is shown, in order.
#[must_use]
pub fn images(value: &Value) -> Vec<Image> {
    value
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("image"))
        .filter_map(|b| image(b).ok())
        .take(IMAGES_MAX)
        .collect()
}

/// One image block as an image for the model, or why it cannot be one.
fn image(block: &Value) -> Result<Image, String> {
    let data = block
        .get("data")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if data.is_empty() {
        return Err("it has no data".into());
    }
    if !valid_base64(data) {
        return Err("its data is not base64".into());
    }
    if size_of_base64(data) > IMAGE_MAX {
        return Err(format!("larger than {} MiB", IMAGE_MAX >> 20));
    }
    let head = decode_head(data);
    let media_type = sniff(&head).ok_or("its bytes are not a PNG, JPEG, GIF or WebP")?;
    Ok(Image {
        media_type: media_type.to_owned(),
        data: data.to_owned(),
    })
}

/// Whether `data` is standard base64 with its padding.
fn valid_base64(data: &str) -> bool {
    let bytes = data.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return false;
    }
    let body = data.trim_end_matches('=');
    data.len() - body.len() <= 2
        && body
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'+' || c == b'/')
}

/// The first bytes `data` holds (up to 12).
fn decode_head(data: &str) -> Vec<u8> {
    let value = |c: u8| -> Option<u32> {
        match c {
            b'A'..=b'Z' => Some(u32::from(c - b'A')),
            b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    };
    let mut out = Vec::new();
    for quad in data.as_bytes().chunks(4).take(4) {
        let values: Vec<u32> = quad.iter().map_while(|&c| value(c)).collect();
        let mut n = 0u32;
        for (i, v) in values.iter().enumerate() {
            n |= v << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..values.len().max(1)]);
        if values.len() < 4 {
            break;
        }
    }
    out
}

/// The type the bytes begin as.
fn sniff(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
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
            "hello\n[image: image/png, 3 bytes; not shown to the model: its bytes are not a PNG, \
             JPEG, GIF or WebP]\n[resource test://a]\ninside\n\
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

    /// A 1x1 PNG, base64.
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

    #[test]
    fn an_image_the_model_can_take_is_given_as_an_image() {
        let value = json!({"content": [
            {"type": "text", "text": "a screenshot"},
            {"type": "image", "data": PNG, "mimeType": "image/jpeg"},
            {"type": "image", "data": "PHN2Zz48L3N2Zz4=", "mimeType": "image/svg+xml"},
            {"type": "image", "data": "not base64!", "mimeType": "image/png"}
        ]});
        let images = images(&value);
        assert_eq!(images.len(), 1);
        assert_eq!(images[0].media_type, "image/png", "the bytes say PNG");
        assert_eq!(images[0].data, PNG);
        let (text, _) = result(&value);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "[image: image/jpeg, 70 bytes]");
        assert_eq!(
            lines[2],
            "[image: image/svg+xml, 11 bytes; not shown to the model: its bytes are not a PNG, \
             JPEG, GIF or WebP]"
        );
        assert_eq!(
            lines[3],
            "[image: image/png, 6 bytes; not shown to the model: its data is not base64]"
        );
    }

    #[test]
    fn the_head_of_base64_decodes() {
        assert_eq!(decode_head("R0lGODlh"), b"GIF89a");
        assert_eq!(sniff(&decode_head("R0lGODlh")), Some("image/gif"));
        assert_eq!(
            decode_head("/9j/4AAQ"),
            [0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]
        );
        assert_eq!(decode_head("UklGRiQAAABXRUJQ"), b"RIFF$\0\0\0WEBP");
        assert_eq!(sniff(&decode_head("UklGRiQAAABXRUJQ")), Some("image/webp"));
        assert_eq!(decode_head("YQ=="), b"a");
    }
}
