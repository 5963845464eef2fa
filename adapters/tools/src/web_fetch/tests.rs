use std::path::PathBuf;

use serde_json::json;

use super::content::{Kind, Page, decode, kind, markdown, render};
use super::*;

fn tool() -> WebFetchTool {
    WebFetchTool::new(Arc::new(|_: &str| Ok(())), FetchLimits::default())
}

fn subject(url: &str) -> String {
    let ws = Workspace::single(PathBuf::from("/ws"));
    let classified = tool().classify(&json!({ "url": url }), &ws);
    assert_eq!(classified.risk, Risk::Exec);
    assert!(classified.writes.is_empty());
    classified.subject
}

/// The host the permission engine reads from a subject (as `url_host` in
/// `cox-permission` does: after `://`, up to `/?#`, after the last `@`,
/// before `:`).
fn engine_host(subject: &str) -> String {
    let rest = subject.split_once("://").map_or(subject, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap();
    let host = authority.rsplit('@').next().unwrap();
    host.split(':').next().unwrap().to_ascii_lowercase()
}

#[test]
fn the_subject_is_the_url_as_requested_so_its_host_is_the_real_one() {
    let cases = [
        // A backslash is a slash in an http URL: the host is evil.com.
        (
            "http://evil.com\\@example.com/",
            "http://evil.com/@example.com/",
            "evil.com",
        ),
        (
            "http://example.com:80@evil.com/",
            "http://example.com:80@evil.com/",
            "evil.com",
        ),
        (
            "HTTP://User@EXAMPLE.com:80/x",
            "http://User@example.com/x",
            "example.com",
        ),
        (
            "https://user:p%40ss@example.com/",
            "https://user:p%40ss@example.com/",
            "example.com",
        ),
        (
            "https://example.com./a",
            "https://example.com/a",
            "example.com",
        ),
        (
            "https://example.com.../",
            "https://example.com/",
            "example.com",
        ),
        (
            "http://%65xample.com/",
            "http://example.com/",
            "example.com",
        ),
        ("http://0x7f.1/", "http://127.0.0.1/", "127.0.0.1"),
        (
            "http://2130706433:8080/",
            "http://127.0.0.1:8080/",
            "127.0.0.1",
        ),
        ("http://0177.0.0.1/", "http://127.0.0.1/", "127.0.0.1"),
        (
            "http://bücher.example/",
            "http://xn--bcher-kva.example/",
            "xn--bcher-kva.example",
        ),
        (
            "  https://example.com/a b?q=1#top ",
            "https://example.com/a%20b?q=1#top",
            "example.com",
        ),
        (
            "https://example.com:443/",
            "https://example.com/",
            "example.com",
        ),
    ];
    for (raw, canonical, host) in cases {
        let subject = subject(raw);
        assert_eq!(subject, canonical, "{raw}");
        assert_eq!(engine_host(&subject), host, "{raw}");
    }
}

#[test]
fn what_is_not_an_http_url_keeps_its_raw_subject_and_is_refused() {
    for raw in [
        "file:///etc/passwd",
        "ftp://example.com/x",
        "example.com",
        "http://./",
        "",
    ] {
        assert_eq!(subject(raw), raw);
        assert!(canonical(raw).is_err(), "{raw}");
    }
    assert_eq!(
        canonical("file:///etc/passwd").unwrap_err(),
        "web_fetch takes http and https URLs only; file:///etc/passwd is a file URL"
    );
    let ws = Workspace::single(PathBuf::from("/ws"));
    assert_eq!(tool().classify(&json!({}), &ws).subject, "web_fetch");
}

#[test]
fn redirects_are_followed_only_within_the_origin_or_up_to_https() {
    let url = |s: &str| Url::parse(s).unwrap();
    let from = url("http://example.com/a");
    assert!(same_origin(&from, &url("http://example.com/b")));
    assert!(same_origin(&from, &url("http://example.com:80/b")));
    assert!(same_origin(&from, &url("https://example.com/b")));
    assert!(!same_origin(&from, &url("https://example.com:8443/b")));
    assert!(!same_origin(&from, &url("http://example.com:8080/b")));
    assert!(!same_origin(&from, &url("http://www.example.com/b")));
    assert!(!same_origin(
        &url("https://example.com/"),
        &url("http://example.com/")
    ));
    let local = url("http://127.0.0.1:9000/");
    assert!(same_origin(&local, &url("http://127.0.0.1:9000/x")));
    assert!(!same_origin(&local, &url("http://localhost:9000/x")));
}

#[test]
fn the_spec_is_terse_and_derived_from_the_input() {
    let spec = tool().spec();
    let size = serde_json::to_string(&spec).unwrap().len();
    assert!(size <= 450, "web_fetch takes {size} bytes of JSON");
    assert_eq!(spec.input_schema["required"], json!(["url"]));
    assert_eq!(spec.input_schema["additionalProperties"], json!(false));
}

#[test]
fn content_kinds_come_from_the_declared_type_or_the_bytes() {
    let html = b"<!DOCTYPE html><html><body>hi</body></html>";
    assert_eq!(kind(Some("text/html; charset=utf-8"), b"x"), Kind::Html);
    assert_eq!(kind(Some("application/xhtml+xml"), b"x"), Kind::Html);
    assert_eq!(kind(Some("TEXT/PLAIN"), html), Kind::Text);
    assert_eq!(kind(Some("application/json"), b"{}"), Kind::Text);
    assert_eq!(kind(Some("application/ld+json"), b"{}"), Kind::Text);
    assert_eq!(kind(Some("application/atom+xml"), b"<a/>"), Kind::Text);
    assert_eq!(kind(None, html), Kind::Html);
    assert_eq!(kind(None, b"  <html lang=en>"), Kind::Html);
    assert_eq!(kind(None, b"plain words"), Kind::Text);
    assert_eq!(kind(None, b"\xFF\xFE\xFD not utf-8"), Kind::Binary);
    assert_eq!(
        kind(Some("application/octet-stream"), b"words"),
        Kind::Binary
    );
    assert_eq!(kind(Some("application/pdf"), b"%PDF-1.7"), Kind::Binary);
    assert_eq!(
        kind(Some("image/png"), b"\x89PNG\r\n\x1a\n\0\0"),
        Kind::Binary
    );
    // NUL bytes under a text type: not text.
    assert_eq!(kind(Some("text/plain"), b"ab\0cd"), Kind::Binary);
    // Except in UTF-16, where they are half of every ASCII letter.
    assert_eq!(
        kind(Some("text/plain; charset=utf-16le"), b"a\0b\0"),
        Kind::Text
    );
}

#[test]
fn text_is_decoded_by_the_charset_the_header_or_the_page_names() {
    let latin = b"caf\xe9 cr\xe8me";
    assert_eq!(
        decode(Some("text/plain; charset=ISO-8859-1"), latin, false),
        "café crème"
    );
    assert_eq!(
        decode(Some("text/plain; charset=\"latin1\""), latin, false),
        "café crème"
    );
    let page = b"<html><head><meta charset=\"iso-8859-1\"></head><body>caf\xe9</body></html>";
    assert!(decode(Some("text/html"), page, true).contains("café"));
    let page =
        b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1252\">\x93q\x94";
    assert!(decode(None, page, true).ends_with("\u{201c}q\u{201d}"));
    // The header wins over the page.
    let page = "<meta charset=iso-8859-1>café".as_bytes();
    assert!(decode(Some("text/html; charset=utf-8"), page, true).ends_with("café"));
    // Nothing named: UTF-8 when it is, else what browsers assume.
    assert_eq!(decode(None, "naïve".as_bytes(), false), "naïve");
    assert_eq!(decode(None, latin, false), "café crème");
    // A byte-order mark wins.
    assert_eq!(
        decode(Some("text/plain; charset=latin1"), b"\xEF\xBB\xBFok", false),
        "ok"
    );
}

#[test]
fn html_becomes_markdown_without_the_noise() {
    let html = r#"<html><head><title>T</title><style>p{color:red}</style>
        <script>var x = "SECRET_SCRIPT";</script></head><body>
        <nav><a href="/home">Home</a> <a href="/about">About</a></nav>
        <h1>Main title</h1><p>Read <a href="https://example.com/doc">the doc</a>.</p>
        <h2>List</h2><ul><li>one</li><li>two</li></ul>
        <img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB" alt="a dot">
        <img src="/logo.png" alt="logo">
        <pre><code>let a = 1;</code></pre></body></html>"#;
    let md = markdown(html);
    assert!(md.contains("# Main title"), "{md}");
    assert!(md.contains("[the doc](https://example.com/doc)"), "{md}");
    assert!(md.contains("## List"), "{md}");
    assert!(md.contains("- one\n- two"), "{md}");
    assert!(md.contains("[image: a dot]"), "{md}");
    assert!(md.contains("![logo](/logo.png)"), "{md}");
    assert!(md.contains("let a = 1;"), "{md}");
    for noise in ["SECRET_SCRIPT", "color:red", "About", "iVBORw0KGgo"] {
        assert!(!md.contains(noise), "{noise} in {md}");
    }
}

fn page(content_type: &str, body: &[u8]) -> Page {
    Page {
        url: "https://example.com/p".into(),
        status: "200 OK".into(),
        failed: false,
        content_type: Some(content_type.into()),
        body: body.to_vec(),
        cut: false,
    }
}

#[test]
fn the_result_starts_with_one_header_line() {
    let result = render(&page("text/plain", b"hello\n"), None);
    assert!(result.ok);
    assert_eq!(
        result.visible,
        "https://example.com/p — 200 OK, text/plain, 6 bytes\n\nhello\n"
    );
    let mut cut = page("text/plain", b"abc");
    cut.cut = true;
    let result = render(&cut, None);
    assert!(
        result
            .visible
            .contains("[cut at 3 bytes: the rest of the page was not fetched]")
    );
    let result = render(&page("application/pdf", b"%PDF-1.7 ..."), None);
    assert!(!result.ok);
    assert_eq!(
        result.visible,
        "binary content (application/pdf, 12 bytes) is not fetched as text: https://example.com/p"
    );
    let mut missing = page("text/html", &b"<h1>Not here</h1><p>x</p>".repeat(200));
    missing.failed = true;
    missing.status = "404 Not Found".into();
    let result = render(&missing, None);
    assert!(!result.ok);
    assert!(
        result
            .visible
            .starts_with("https://example.com/p answered 404 Not Found\n# Not here")
    );
    assert!(result.visible.len() < 2100, "{}", result.visible.len());
}

#[test]
fn a_prompt_puts_the_matching_passage_first() {
    let mut html = String::from("<h1>Manual</h1>");
    for n in 0..300 {
        html.push_str(&format!(
            "<p>Paragraph {n} tells of weather, tides and boats.</p>"
        ));
    }
    html.push_str(
        "<h2>Proxy settings</h2><p>To configure the proxy, set HTTPS_PROXY before starting.</p>",
    );
    for n in 300..400 {
        html.push_str(&format!("<p>Paragraph {n} is filler.</p>"));
    }
    let result = render(
        &page("text/html", html.as_bytes()),
        Some("How do I configure a proxy?"),
    );
    let text = result.visible;
    let passages = text
        .find("Passages matching the prompt:")
        .expect("passages");
    let found = text.find("To configure the proxy").expect("the passage");
    let whole = text.find("The whole page:").expect("the page");
    assert!(passages < found && found < whole, "{}", &text[..600]);
    assert!(found < 300, "the passage is not near the top: {found}");
    // With its heading.
    assert!(text[passages..found].contains("## Proxy settings"));
    // The page follows whole.
    assert!(text[whole..].contains("Paragraph 399 is filler."));

    let result = render(&page("text/plain", b"nothing here"), Some("kubernetes"));
    assert!(
        result
            .visible
            .contains("No passage matches the prompt; the whole page follows.")
    );
}

#[test]
fn passages_stay_within_their_budget() {
    let text: String = (0..100)
        .map(|n| format!("proxy line {n} {}\n\n", "x".repeat(500)))
        .collect();
    let found = passages::best(&text, "proxy", 4096);
    assert_eq!(found.len(), 5);
    assert!(found.iter().map(String::len).sum::<usize>() <= 4096);
    assert!(found[0].starts_with("proxy line 0 "));
    assert!(passages::best(&text, "the how what", 4096).is_empty());
}

#[test]
fn durations_read_as_a_person_says_them() {
    assert_eq!(seconds(Duration::from_secs(30)), "30 s");
    assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
    assert_eq!(seconds(Duration::from_millis(200)), "200 ms");
}
