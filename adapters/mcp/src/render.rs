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
//! image in the history would fail every later request), its base64 at
//! most [`IMAGE_MAX`] bytes, its sides at most [`SIDE_MAX`] pixels, and
//! within a result's budget ([`IMAGES_MAX`] images, [`RESULT_IMAGES_MAX`]
//! bytes); its line says when it is not shown and why.

use cox_protocol::types::Image;
use serde_json::Value;

/// The largest image the model is shown, as base64 (the providers' own
/// bound is on the encoded image).
pub const IMAGE_MAX: usize = 5 * 1024 * 1024;

/// The longest side, in pixels, of an image the model is shown.
pub const SIDE_MAX: u32 = 8000;

/// The most images of one result the model is shown.
pub const IMAGES_MAX: usize = 8;

/// The most base64 bytes of images one result shows the model.
pub const RESULT_IMAGES_MAX: usize = 10 * 1024 * 1024;

/// What a result's images have used of its budget so far.
#[derive(Default)]
struct Budget {
    images: usize,
    bytes: usize,
}

impl Budget {
    /// The image of `block` for the model, counted, or why not.
    fn take(&mut self, block: &Value) -> Result<Image, String> {
        let image = image(block)?;
        if self.images >= IMAGES_MAX {
            return Err(format!(
                "a result shows the model {IMAGES_MAX} images at most"
            ));
        }
        if self.bytes + image.data.len() > RESULT_IMAGES_MAX {
            return Err(format!(
                "a result shows the model {} MiB of images at most",
                RESULT_IMAGES_MAX >> 20
            ));
        }
        self.images += 1;
        self.bytes += image.data.len();
        Ok(image)
    }
}

/// The text of a `tools/call` result, and whether it reports an error.
#[must_use]
pub fn result(value: &Value) -> (String, bool) {
    let is_error = value
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut parts = Vec::new();
    let mut budget = Budget::default();
    if let Some(content) = value.get("content").and_then(Value::as_array) {
        for block in content {
            parts.push(block_text_in(block, &mut budget));
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

/// One block as text (an image as if it were a result's only one).
pub(crate) fn block_text(block: &Value) -> String {
    block_text_in(block, &mut Budget::default())
}

fn block_text_in(block: &Value, budget: &mut Budget) -> String {
    let kind = block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let field = |name: &str| block.get(name).and_then(Value::as_str).unwrap_or_default();
    match kind {
        "text" => field("text").to_owned(),
        "image" => match budget.take(block) {
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
    let mut budget = Budget::default();
    value
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("image"))
        .filter_map(|b| budget.take(b).ok())
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
    if data.len() > IMAGE_MAX {
        return Err(format!("larger than {} MiB as base64", IMAGE_MAX >> 20));
    }
    let bytes = decode(data).ok_or("its data is not base64")?;
    let media_type = sniff(&bytes).ok_or("its bytes are not a PNG, JPEG, GIF or WebP")?;
    let (width, height) = dimensions(&bytes).ok_or("its size in pixels cannot be read")?;
    if width == 0 || height == 0 || width > SIDE_MAX || height > SIDE_MAX {
        return Err(format!(
            "{width}x{height} pixels; {SIDE_MAX} a side at most"
        ));
    }
    Ok(Image {
        media_type: media_type.to_owned(),
        data: data.to_owned(),
    })
}

/// The bytes of standard base64 with its padding, or `None`.
fn decode(data: &str) -> Option<Vec<u8>> {
    if !valid_base64(data) {
        return None;
    }
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            _ => 63,
        }
    };
    let body = data.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(body.len() / 4 * 3 + 3);
    for quad in body.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in quad.iter().enumerate() {
            n |= value(c) << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..quad.len()]);
    }
    Some(out)
}

/// An image's width and height in pixels, from its header.
fn dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    let be16 = |at: usize| {
        Some(u32::from(u16::from_be_bytes([
            *bytes.get(at)?,
            *bytes.get(at + 1)?,
        ])))
    };
    let le16 = |at: usize| {
        Some(u32::from(u16::from_le_bytes([
            *bytes.get(at)?,
            *bytes.get(at + 1)?,
        ])))
    };
    let be32 = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let le24 = |at: usize| {
        let b = bytes.get(at..at + 3)?;
        Some(u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16)
    };
    match sniff(bytes)? {
        "image/png" => Some((be32(16)?, be32(20)?)),
        "image/gif" => Some((le16(6)?, le16(8)?)),
        "image/webp" => match bytes.get(12..16)? {
            b"VP8 " => Some((le16(26)? & 0x3fff, le16(28)? & 0x3fff)),
            b"VP8L" => {
                let b = bytes.get(21..25)?;
                let width = 1 + (u32::from(b[0]) | (u32::from(b[1]) & 0x3f) << 8);
                let height = 1
                    + (u32::from(b[1]) >> 6 | u32::from(b[2]) << 2 | (u32::from(b[3]) & 0xf) << 10);
                Some((width, height))
            }
            b"VP8X" => Some((1 + le24(24)?, 1 + le24(27)?)),
            _ => None,
        },
        _ => {
            // JPEG: the first start-of-frame segment holds the size.
            let mut at = 2;
            loop {
                while *bytes.get(at)? == 0xff && *bytes.get(at + 1)? == 0xff {
                    at += 1;
                }
                if *bytes.get(at)? != 0xff {
                    return None;
                }
                let marker = *bytes.get(at + 1)?;
                if (0xc0..=0xcf).contains(&marker) && ![0xc4, 0xc8, 0xcc].contains(&marker) {
                    return Some((be16(at + 7)?, be16(at + 5)?));
                }
                at += 2 + usize::try_from(be16(at + 2)?).ok()?;
            }
        }
    }
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
    fn base64_decodes_and_headers_give_the_size() {
        assert_eq!(decode("R0lGODlh").unwrap(), b"GIF89a");
        assert_eq!(decode("YQ==").unwrap(), b"a");
        assert_eq!(decode("YWI=").unwrap(), b"ab");
        assert_eq!(decode("YQ"), None, "unpadded");
        assert_eq!(decode("Y!Q="), None);
        assert_eq!(dimensions(&decode(PNG).unwrap()), Some((1, 1)));
        // GIF: 3x2.
        let gif = [b"GIF89a".as_slice(), &[3, 0, 2, 0]].concat();
        assert_eq!(dimensions(&gif), Some((3, 2)));
        // JPEG: an APP0 segment, then SOF0 of 640x480.
        let jpeg = [
            &[0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00][..],
            &[0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0xe0, 0x02, 0x80],
        ]
        .concat();
        assert_eq!(dimensions(&jpeg), Some((640, 480)));
        // WebP (VP8X): 9000x10.
        let mut webp = b"RIFF\0\0\0\0WEBPVP8X".to_vec();
        webp.extend_from_slice(&[0; 8]);
        webp.extend_from_slice(&[0x27, 0x23, 0x00, 0x09, 0x00, 0x00]);
        assert_eq!(dimensions(&webp), Some((9000, 10)));
        assert_eq!(dimensions(b"\xff\xd8\xff"), None, "a cut JPEG");
    }

    #[test]
    fn a_result_shows_eight_images_at_most() {
        let block = json!({"type": "image", "data": PNG, "mimeType": "image/png"});
        let value = json!({"content": vec![block; 9]});
        assert_eq!(images(&value).len(), 8);
        let (text, _) = result(&value);
        assert!(
            text.lines()
                .last()
                .unwrap()
                .ends_with("not shown to the model: a result shows the model 8 images at most]"),
            "{text}"
        );
    }
}
