//! `web_fetch` against loopback HTTP servers written here: what the model
//! reads for each kind of answer, and every limit (redirects, size, time,
//! the host gate) holding.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Fixture, assert_error};
use cox_protocol::types::ToolResult;
use cox_tools::{FetchLimits, HostGate, WebFetchTool};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What a server sends for one request.
enum Reply {
    /// These bytes, then the connection closes.
    Send(Vec<u8>),
    /// These bytes, then nothing, ever.
    Hang(Vec<u8>),
}

/// A loopback HTTP/1.1 server answering each request's path with
/// `answer`; `paths` holds the paths asked, in order.
struct Server {
    port: u16,
    paths: Arc<Mutex<Vec<String>>>,
}

impl Server {
    async fn start(answer: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let paths = Arc::new(Mutex::new(Vec::new()));
        let answer = Arc::new(answer);
        let seen = Arc::clone(&paths);
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                socket.set_nodelay(true).unwrap();
                let answer = Arc::clone(&answer);
                let seen = Arc::clone(&seen);
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&head).into_owned();
                    let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
                    seen.lock().unwrap().push(path.clone());
                    match answer(&path) {
                        Reply::Send(bytes) => {
                            let _ = socket.write_all(&bytes).await;
                            let _ = socket.shutdown().await;
                        }
                        Reply::Hang(bytes) => {
                            let _ = socket.write_all(&bytes).await;
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                        }
                    }
                });
            }
        });
        Server { port, paths }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn paths(&self) -> Vec<String> {
        self.paths.lock().unwrap().clone()
    }
}

/// A whole HTTP response.
fn response(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

fn ok(content_type: &str, body: impl AsRef<[u8]>) -> Reply {
    Reply::Send(response(
        "200 OK",
        &[("Content-Type", content_type)],
        body.as_ref(),
    ))
}

fn redirect(to: &str) -> Reply {
    Reply::Send(response("302 Found", &[("Location", to)], b""))
}

/// A gate that records every host it is asked about and refuses `refused`.
fn gate(refused: &'static [&'static str]) -> (HostGate, Arc<Mutex<Vec<String>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&asked);
    let gate: HostGate = Arc::new(move |host: &str| {
        record.lock().unwrap().push(host.to_owned());
        if refused.contains(&host) {
            Err("it is not in [sandbox] allowed_domains".into())
        } else {
            Ok(())
        }
    });
    (gate, asked)
}

/// Limits that ignore the environment's proxies.
fn limits() -> FetchLimits {
    FetchLimits {
        system_proxy: false,
        ..FetchLimits::default()
    }
}

fn tool() -> WebFetchTool {
    WebFetchTool::new(gate(&[]).0, limits())
}

async fn fetch(tool: &WebFetchTool, url: &str) -> ToolResult {
    Fixture::new().run(tool, json!({ "url": url })).await
}

#[tokio::test]
async fn an_html_page_comes_back_as_markdown_under_a_header_line() {
    let html = "<html><head><script>alert(1)</script></head><body>\
        <h1>Release notes</h1><p>See <a href=\"https://example.com/changes\">the changes</a>.</p>\
        <h2>Fixed</h2><ul><li>a crash</li></ul></body></html>";
    let server = Server::start(move |_| ok("text/html; charset=utf-8", html)).await;
    let result = fetch(&tool(), &server.url("/notes")).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(
        result.visible,
        format!(
            "{} — 200 OK, text/html; charset=utf-8, {} bytes\n\n\
             # Release notes\n\nSee [the changes](https://example.com/changes).\n\n## Fixed\n\n- a crash",
            server.url("/notes"),
            html.len()
        )
    );
    assert_eq!(result.bytes, Some(html.len() as u64));
}

#[tokio::test]
async fn plain_text_and_json_come_back_as_they_are() {
    let server = Server::start(|path| match path {
        "/a.txt" => ok("text/plain", "line one\n<b>not html</b>\n"),
        _ => ok("application/json", r#"{"a": [1, 2]}"#),
    })
    .await;
    let result = fetch(&tool(), &server.url("/a.txt")).await;
    assert!(
        result.visible.ends_with("\n\nline one\n<b>not html</b>\n"),
        "{}",
        result.visible
    );
    let result = fetch(&tool(), &server.url("/data")).await;
    assert!(
        result.visible.ends_with("\n\n{\"a\": [1, 2]}"),
        "{}",
        result.visible
    );
}

#[tokio::test]
async fn a_redirect_on_the_same_host_is_followed_and_the_gate_asked_again() {
    let server = Server::start(|path| match path {
        "/old" => redirect("/new"),
        _ => ok("text/plain", "the new page"),
    })
    .await;
    let (gate, asked) = gate(&[]);
    let result = fetch(&WebFetchTool::new(gate, limits()), &server.url("/old")).await;
    assert!(result.ok, "{result:?}");
    assert!(
        result
            .visible
            .starts_with(&format!("{} — 200 OK", server.url("/new"))),
        "{}",
        result.visible
    );
    assert!(result.visible.ends_with("the new page"));
    assert_eq!(server.paths(), ["/old", "/new"]);
    assert_eq!(*asked.lock().unwrap(), ["127.0.0.1", "127.0.0.1"]);
}

#[tokio::test]
async fn a_redirect_to_another_host_is_returned_not_followed() {
    let other = Server::start(|_| ok("text/plain", "elsewhere")).await;
    let target = format!("http://localhost:{}/landing", other.port);
    let to = target.clone();
    let server = Server::start(move |_| redirect(&to)).await;
    let result = fetch(&tool(), &server.url("/go")).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(
        result.visible,
        format!(
            "REDIRECT: {} redirects to a different host: {target}. \
             Call web_fetch again with that URL if you want it.",
            server.url("/go")
        )
    );
    assert!(other.paths().is_empty(), "the other host was fetched");
    // Another port on the same host is another origin too.
    let to = other.url("/x");
    let server = Server::start(move |_| redirect(&to)).await;
    let result = fetch(&tool(), &server.url("/")).await;
    assert!(
        result.visible.starts_with("REDIRECT: "),
        "{}",
        result.visible
    );
    assert!(other.paths().is_empty());
}

#[tokio::test]
async fn redirect_loops_and_long_chains_are_errors() {
    let server = Server::start(|path| match path {
        "/a" => redirect("/b"),
        "/b" => redirect("/a"),
        other => {
            let n: usize = other.trim_start_matches("/r").parse().unwrap_or(0);
            redirect(&format!("/r{}", n + 1))
        }
    })
    .await;
    let result = fetch(&tool(), &server.url("/a")).await;
    assert_error(
        &result,
        &[&format!(
            "redirect loop: {} → {} → {}",
            server.url("/a"),
            server.url("/b"),
            server.url("/a")
        )],
    );
    let result = fetch(&tool(), &server.url("/r0")).await;
    assert_error(
        &result,
        &[&format!(
            "{} redirects more than 5 times",
            server.url("/r0")
        )],
    );
    assert_eq!(server.paths().len(), 2 + 6);
}

#[tokio::test]
async fn a_body_over_the_limit_is_cut_and_the_cut_said() {
    let body = "0123456789abcdef\n".repeat(10 * 1024 * 1024 / 17);
    let server = Server::start(move |_| ok("text/plain", &body)).await;
    let result = fetch(&tool(), &server.url("/big")).await;
    assert!(result.ok, "{:?}", &result.visible[..200]);
    let max = FetchLimits::default().max_body_bytes;
    assert_eq!(max, 5 * 1024 * 1024);
    assert_eq!(result.bytes, Some(max as u64));
    let header = result
        .visible
        .lines()
        .take(2)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        header.ends_with(&format!(
            "{max} bytes\n[cut at {max} bytes: the rest of the page was not fetched]"
        )),
        "{header}"
    );
}

#[tokio::test]
async fn a_server_that_never_finishes_times_out_quickly() {
    let server = Server::start(|path| match path {
        "/silent" => Reply::Hang(Vec::new()),
        _ => Reply::Hang(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nsome".to_vec()),
    })
    .await;
    let tool = WebFetchTool::new(
        gate(&[]).0,
        FetchLimits {
            timeout: Duration::from_millis(300),
            ..limits()
        },
    );
    for path in ["/silent", "/partial"] {
        let started = Instant::now();
        let result = fetch(&tool, &server.url(path)).await;
        assert_error(
            &result,
            &[&format!(
                "fetching {} did not finish in 300 ms",
                server.url(path)
            )],
        );
        assert!(started.elapsed() < Duration::from_secs(3), "{path}");
    }
}

#[tokio::test]
async fn a_fetch_stops_when_cancelled() {
    let server = Server::start(|_| Reply::Hang(Vec::new())).await;
    let result = Fixture::new()
        .run_cancelled(&tool(), json!({ "url": server.url("/") }))
        .await;
    assert_error(&result, &["web_fetch was cancelled"]);
}

#[tokio::test]
async fn a_latin1_page_is_decoded_by_the_charset_it_names() {
    let server = Server::start(|path| match path {
        "/header" => ok("text/html; charset=ISO-8859-1", b"<p>caf\xe9 cr\xe8me</p>"),
        _ => ok(
            "text/html",
            b"<html><head><meta charset=\"iso-8859-1\"></head><body><p>d\xe9j\xe0 vu</p></body></html>",
        ),
    })
    .await;
    let result = fetch(&tool(), &server.url("/header")).await;
    assert!(result.visible.ends_with("café crème"), "{}", result.visible);
    let result = fetch(&tool(), &server.url("/meta")).await;
    assert!(result.visible.ends_with("déjà vu"), "{}", result.visible);
}

#[tokio::test]
async fn binary_content_is_refused_by_its_type_and_size() {
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    let server = Server::start(move |path| match path {
        "/logo.png" => ok("image/png", &png),
        "/blob" => ok("application/octet-stream", "just bytes"),
        _ => Reply::Send(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n\x00\x01\x02\x03".to_vec()),
    })
    .await;
    assert_error(
        &fetch(&tool(), &server.url("/logo.png")).await,
        &["binary content (image/png, 16 bytes) is not fetched as text"],
    );
    assert_error(
        &fetch(&tool(), &server.url("/blob")).await,
        &["binary content (application/octet-stream, 10 bytes)"],
    );
    assert_error(
        &fetch(&tool(), &server.url("/untyped")).await,
        &["binary content (no content type, 4 bytes)"],
    );
}

#[tokio::test]
async fn an_error_status_is_an_error_with_its_text() {
    let server = Server::start(|_| {
        Reply::Send(response(
            "404 Not Found",
            &[("Content-Type", "text/html")],
            b"<h1>No such page</h1><p>Try the index.</p>",
        ))
    })
    .await;
    let result = fetch(&tool(), &server.url("/gone")).await;
    assert_error(
        &result,
        &[&format!(
            "{} answered 404 Not Found\n# No such page\n\nTry the index.",
            server.url("/gone")
        )],
    );
}

#[tokio::test]
async fn an_unreachable_port_is_a_clear_error() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let result = fetch(&tool(), &format!("http://127.0.0.1:{port}/")).await;
    assert_error(
        &result,
        &[&format!("could not connect to 127.0.0.1:{port}")],
    );
    assert!(
        result.visible.to_lowercase().contains("refused"),
        "{}",
        result.visible
    );
}

#[tokio::test]
async fn the_gate_refuses_hosts_before_any_connection_and_after_redirects() {
    let server = Server::start(|_| ok("text/plain", "x")).await;
    let (gate_fn, asked) = gate(&["localhost"]);
    let tool = WebFetchTool::new(gate_fn, limits());
    let result = fetch(&tool, &format!("http://localhost:{}/", server.port)).await;
    assert_error(
        &result,
        &["web_fetch may not connect to localhost: it is not in [sandbox] allowed_domains"],
    );
    assert!(server.paths().is_empty(), "a refused host was connected to");
    assert_eq!(*asked.lock().unwrap(), ["localhost"]);

    // The gate is asked again for the next hop on the same host, and may
    // refuse it then.
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let once: HostGate = Arc::new(move |_: &str| {
        if counted.fetch_add(1, Ordering::SeqCst) == 0 {
            Ok(())
        } else {
            Err("it is not in [sandbox] allowed_domains any more".into())
        }
    });
    let server = Server::start(|path| match path {
        "/first" => redirect("/second"),
        _ => ok("text/plain", "x"),
    })
    .await;
    let result = fetch(&WebFetchTool::new(once, limits()), &server.url("/first")).await;
    assert_error(
        &result,
        &["web_fetch may not connect to 127.0.0.1: it is not in"],
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(server.paths(), ["/first"]);
}

#[tokio::test]
async fn other_schemes_are_refused_without_any_io() {
    let (gate, asked) = gate(&[]);
    let tool = WebFetchTool::new(gate, limits());
    for url in ["file:///etc/passwd", "ftp://127.0.0.1/x", "localhost:80/"] {
        let result = fetch(&tool, url).await;
        assert!(!result.ok, "{url}: {result:?}");
        assert!(
            result.visible.contains(url.trim_end_matches('/')),
            "{}",
            result.visible
        );
    }
    assert_error(
        &fetch(&tool, "file:///etc/passwd").await,
        &["web_fetch takes http and https URLs only; file:///etc/passwd is a file URL"],
    );
    assert!(asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_prompt_brings_the_matching_passage_to_the_top() {
    let mut html = String::from("<h1>Guide</h1>");
    for n in 0..500 {
        html.push_str(&format!("<p>Section {n} covers colours and shapes.</p>"));
    }
    html.push_str("<p>The retry budget is three attempts per minute.</p>");
    let server = Server::start(move |_| ok("text/html", &html)).await;
    let result = Fixture::new()
        .run(
            &tool(),
            json!({ "url": server.url("/"), "prompt": "what is the retry budget" }),
        )
        .await;
    let at = result.visible.find("The retry budget is three").unwrap();
    assert!(at < 250, "{}", &result.visible[..400]);
}

#[tokio::test]
async fn input_outside_the_schema_is_refused() {
    let result = Fixture::new()
        .run(
            &tool(),
            json!({ "url": "http://127.0.0.1/", "method": "POST" }),
        )
        .await;
    assert_error(
        &result,
        &["invalid input for web_fetch: unknown field `method`"],
    );
}

#[tokio::test]
async fn a_page_nested_deep_is_converted_or_read_as_text_never_a_crash() {
    // 3,000 levels overflowed a runtime thread's stack; 60,000 are past
    // what is converted at all.
    for (levels, converted) in [(3_000, true), (60_000, false)] {
        let html = format!(
            "<html><body>{}deep text{}</body></html>",
            "<div>".repeat(levels),
            "</div>".repeat(levels)
        );
        let server = Server::start(move |_| ok("text/html", html.clone())).await;
        let result = fetch(&tool(), &server.url("/deep")).await;
        assert!(
            result.ok,
            "{levels}: {:?}",
            &result.visible[..200.min(result.visible.len())]
        );
        assert!(result.visible.contains("deep text"), "{levels}");
        assert_eq!(
            result.visible.contains("nests its elements too deeply"),
            !converted,
            "{levels}"
        );
    }
    // Tags that never close do not make the depth count quadratic.
    let html = "<a".repeat(200_000);
    let server = Server::start(move |_| ok("text/html", html.clone())).await;
    let result = fetch(&tool(), &server.url("/open")).await;
    assert!(
        result.ok,
        "{:?}",
        &result.visible[..200.min(result.visible.len())]
    );
}
