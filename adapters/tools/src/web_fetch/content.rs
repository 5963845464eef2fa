//! What a fetched body becomes for the model: the kind of content from its
//! declared type (sniffed when none is declared), text decoded by the
//! charset the header, a byte-order mark or the page's `<meta>` names,
//! HTML converted to markdown, and the result with its header line.
//!
//! Pure: no I/O, so every decision here is tested on bytes.

use std::fmt::Write as _;

use cox_protocol::types::ToolResult;
use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252};
use htmd::element_handler::{HandlerResult, Handlers};
use htmd::options::{BulletListMarker, Options};
use htmd::{Element, HtmlToMarkdown};

use super::PASSAGES_BUDGET;
use super::passages;

/// The characters of an error page shown with its status.
const ERROR_TEXT_CHARS: usize = 2000;

/// How far into an HTML page its `<meta>` charset is looked for.
const META_SCAN_BYTES: usize = 4096;

/// Types besides `text/*` (and `+json`, `+xml`) that are text.
const TEXT_TYPES: [&str; 12] = [
    "application/json",
    "application/xml",
    "application/javascript",
    "application/ecmascript",
    "application/x-javascript",
    "application/yaml",
    "application/x-yaml",
    "application/toml",
    "application/x-sh",
    "application/sql",
    "application/graphql",
    "application/x-ndjson",
];

/// Elements that are no content for a reader: code, styling, navigation.
const SKIPPED: [&str; 11] = [
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "nav",
    "select",
];

/// The final answer of a fetch.
#[derive(Debug)]
pub(crate) struct Page {
    /// The URL the body came from (after redirects).
    pub url: String,
    /// Its status, as `200 OK`.
    pub status: String,
    /// A 4xx or 5xx status.
    pub failed: bool,
    pub content_type: Option<String>,
    /// The bytes received, at most the body limit.
    pub body: Vec<u8>,
    /// True when the body went on past the limit.
    pub cut: bool,
}

/// What a body is read as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Html,
    Text,
    Binary,
}

/// The result the model reads for `page`, its passages matching `prompt`
/// first when there is one.
pub(crate) fn render(page: &Page, prompt: Option<&str>) -> ToolResult {
    let declared = page.content_type.as_deref();
    let shown_type = declared.unwrap_or("no content type");
    let received = page.body.len();
    let kind = kind(declared, &page.body);
    if page.failed && kind == Kind::Binary {
        return ToolResult::error(format!(
            "{} answered {} ({shown_type}, {received} bytes)",
            page.url, page.status
        ));
    }
    if kind == Kind::Binary {
        return ToolResult::error(format!(
            "binary content ({shown_type}, {received} bytes) is not fetched as text: {}",
            page.url
        ));
    }
    let text = decode(declared, &page.body, kind == Kind::Html);
    let text = match kind {
        Kind::Html => markdown(&text),
        _ => text,
    };
    if page.failed {
        let mut shown: String = text.chars().take(ERROR_TEXT_CHARS).collect();
        if shown.len() < text.len() {
            shown.push_str(" […]");
        }
        return ToolResult::error(format!("{} answered {}\n{shown}", page.url, page.status));
    }

    let mut out = format!(
        "{} — {}, {shown_type}, {received} bytes\n",
        page.url, page.status
    );
    if page.cut {
        let _ = writeln!(
            out,
            "[cut at {received} bytes: the rest of the page was not fetched]"
        );
    }
    out.push('\n');
    if let Some(prompt) = prompt {
        let found = passages::best(&text, prompt, PASSAGES_BUDGET);
        if found.is_empty() {
            out.push_str("No passage matches the prompt; the whole page follows.\n\n");
        } else {
            out.push_str("Passages matching the prompt:\n\n");
            for passage in found {
                out.push_str(&passage);
                out.push_str("\n\n");
            }
            out.push_str("The whole page:\n\n");
        }
    }
    if text.trim().is_empty() {
        out.push_str("[the page has no text]");
    } else {
        out.push_str(&text);
    }
    ToolResult::ok(out)
}

/// How a body declared as `content_type` is read.
pub(crate) fn kind(content_type: Option<&str>, body: &[u8]) -> Kind {
    let essence = content_type
        .and_then(|t| t.split(';').next())
        .map(|t| t.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let wide = charset(content_type).is_some_and(|e| e == UTF_16LE || e == UTF_16BE)
        || body.starts_with(&[0xFF, 0xFE])
        || body.starts_with(&[0xFE, 0xFF]);
    if !wide && crate::common::looks_binary(body) {
        return Kind::Binary;
    }
    match essence.as_str() {
        "" => sniff(body),
        "text/html" | "application/xhtml+xml" => Kind::Html,
        t if t.starts_with("text/")
            || TEXT_TYPES.contains(&t)
            || t.ends_with("+json")
            || t.ends_with("+xml") =>
        {
            Kind::Text
        }
        _ => Kind::Binary,
    }
}

/// The kind of a body no type was declared for.
fn sniff(body: &[u8]) -> Kind {
    let head = &body[..body.len().min(512)];
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let start = String::from_utf8_lossy(head)
        .trim_start()
        .to_ascii_lowercase();
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        Kind::Html
    } else if utf8_so_far(body) {
        Kind::Text
    } else {
        Kind::Binary
    }
}

/// Whether `body` is UTF-8, but for a character the body limit cut.
fn utf8_so_far(body: &[u8]) -> bool {
    std::str::from_utf8(body).map_or_else(|e| e.error_len().is_none(), |_| true)
}

/// `body` as text: by its byte-order mark, the charset of `content_type`,
/// an HTML page's `<meta>` charset, UTF-8 when it is, else Windows-1252
/// (what browsers assume of a legacy page).
pub(crate) fn decode(content_type: Option<&str>, body: &[u8], html: bool) -> String {
    let encoding = Encoding::for_bom(body)
        .map(|(encoding, _)| encoding)
        .or_else(|| charset(content_type))
        .or_else(|| if html { meta_charset(body) } else { None })
        .unwrap_or_else(|| {
            if utf8_so_far(body) {
                UTF_8
            } else {
                WINDOWS_1252
            }
        });
    encoding.decode(body).0.into_owned()
}

/// The encoding the `charset` parameter of a content type names.
fn charset(content_type: Option<&str>) -> Option<&'static Encoding> {
    content_type?
        .split(';')
        .skip(1)
        .find_map(|param| {
            let (name, value) = param.split_once('=')?;
            let value = value.trim().trim_matches(['"', '\'']);
            name.trim().eq_ignore_ascii_case("charset").then_some(value)
        })
        .and_then(|label| Encoding::for_label(label.as_bytes()))
}

/// The encoding an HTML page's `<meta charset>` or `<meta http-equiv
/// content="…; charset=…">` names near its start (a page that says UTF-16
/// in ASCII bytes is not UTF-16: UTF-8, as browsers read it).
fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head =
        String::from_utf8_lossy(&body[..body.len().min(META_SCAN_BYTES)]).to_ascii_lowercase();
    let mut rest = head.as_str();
    while let Some(at) = rest.find("<meta") {
        let tag = &rest[at..];
        let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
        if let Some(found) = tag.find("charset=") {
            let value = tag[found + "charset=".len()..].trim_start_matches(['"', '\'', ' ']);
            let end = value
                .find(|c: char| !(c.is_ascii_alphanumeric() || "-_:.".contains(c)))
                .unwrap_or(value.len());
            if let Some(encoding) = Encoding::for_label(&value.as_bytes()[..end]) {
                let wide = encoding == UTF_16LE || encoding == UTF_16BE;
                return Some(if wide { UTF_8 } else { encoding });
            }
        }
        rest = &rest[at + "<meta".len()..];
    }
    None
}

/// How deep elements may nest before a page is read as plain text: the
/// parser and the converter recurse per level, and a page of 5 MiB could
/// nest a million deep.
const MAX_NESTING: usize = 20_000;

/// Elements that never hold others (no end tag).
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// How deep the tags of `html` nest, at most, read in one pass over the
/// bytes (an over-estimate where end tags are left out, which only makes
/// the plain-text fallback come sooner).
fn nesting(html: &str) -> usize {
    let bytes = html.as_bytes();
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut i = 0;
    while let Some(at) = bytes[i..].iter().position(|b| *b == b'<') {
        i += at + 1;
        match bytes.get(i) {
            Some(b'/') => depth = depth.saturating_sub(1),
            Some(b) if b.is_ascii_alphabetic() => {
                let name_end = bytes[i..]
                    .iter()
                    .position(|b| !b.is_ascii_alphanumeric())
                    .map_or(bytes.len(), |n| i + n);
                let name = html[i..name_end].to_ascii_lowercase();
                // Within a tag's reach: a page of `<a<a<a…` must not make
                // this quadratic.
                let reach = (i + 4096).min(bytes.len());
                let close = bytes[i..reach]
                    .iter()
                    .position(|b| *b == b'>')
                    .map(|n| i + n);
                let self_closing = close.is_some_and(|c| c > 0 && bytes[c - 1] == b'/');
                if !VOID.contains(&name.as_str()) && !self_closing {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
            }
            _ => {}
        }
    }
    deepest
}

/// The text of `html` with every tag dropped: what a page too deeply
/// nested to convert is read as.
fn plain_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                if !out.ends_with(char::is_whitespace) {
                    out.push(' ');
                }
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    format!(
        "[the page nests its elements too deeply to convert; its text without markup follows]\n{}",
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    )
}

/// An HTML page as markdown, without scripts, styles, navigation, or the
/// bytes of inline (`data:`) images.
pub(crate) fn markdown(html: &str) -> String {
    if nesting(html) > MAX_NESTING {
        return plain_text(html);
    }
    let options = Options {
        bullet_list_marker: BulletListMarker::Dash,
        ul_bullet_spacing: 1,
        ol_number_spacing: 1,
        ..Options::default()
    };
    let converter = HtmlToMarkdown::builder()
        .options(options)
        .skip_tags(SKIPPED.to_vec())
        .add_handler(
            vec!["img"],
            |handlers: &dyn Handlers, element: Element<'_>| -> Option<HandlerResult> {
                let attr = |name: &str| {
                    element
                        .attrs
                        .iter()
                        .find(|a| &*a.name.local == name)
                        .map(|a| a.value.to_string())
                };
                let inline = attr("src").is_some_and(|src| src.trim_start().starts_with("data:"));
                if !inline {
                    return handlers.fallback(element);
                }
                let alt = attr("alt").unwrap_or_default();
                let alt = alt.trim();
                (!alt.is_empty()).then(|| format!("[image: {alt}]").into())
            },
        )
        .build();
    converter.convert(html).unwrap_or_else(|_| html.to_owned())
}
