//! `cox-bench tools [RUNS]`: what the heavier tools cost.
//!
//! - web_fetch: a generated 1 MB HTML page (headings, paragraphs, links,
//!   lists, tables, scripts and styles) served from a loopback server
//!   (TCP_NODELAY, its own thread): the whole call through the tool, the
//!   HTML to markdown conversion alone, and the bytes the model is given;
//! - image: `cox_tools::image::prepare` on a generated 4000×3000 JPEG (a
//!   photo's gradients and grain) and a 2560×1600 PNG (a screenshot's flat
//!   colours): the time and the bytes sent; and the resize alone with the
//!   filters one could choose, to show why `prepare` uses the one it does.
//!
//! - bash_output: one poll of a background shell (through the tool, as the
//!   model calls it) with nothing new, and with 64 KiB new since the last.
//!
//! Medians of RUNS runs each.

use std::io::{Cursor, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cox_protocol::tool::{OutputSink, PathRules, Tool, ToolContext, Workspace};
use cox_tools::{FetchLimits, WebFetchTool};
use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};

use crate::{ms, tempdir};

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

struct Open;

impl PathRules for Open {
    fn may_open(&self, _tool: &str, _path: &std::path::Path) -> bool {
        true
    }
}

pub(crate) fn run(runs: usize) -> Result<(), String> {
    let runs = runs.max(3);
    fetch(runs)?;
    images(runs)?;
    polls(runs.max(200))
}

/// 64 KiB a line at a time, again and again: each poll finds a full
/// buffer's worth waiting (the shell outpaces the polls).
const BUSY: &str = "while :; do head -c 65536 /dev/zero | tr '\\0' x; echo; done";

fn idle_id(started: Result<String, String>) -> Result<String, String> {
    started.map_err(|e| format!("cannot start a background shell: {e}"))
}

/// The cost of one `bash_output` poll: of a shell with nothing new, and of
/// one that printed 64 KiB since the last poll (the reading is what costs;
/// the shell only has to have printed).
fn polls(runs: usize) -> Result<(), String> {
    use cox_tools::shells::{BashOutputTool, Shells};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let work = tempdir::Dir::new("shells").map_err(|e| e.to_string())?;
    let workspace = Workspace::single(work.0.clone());
    let sandbox = cox_sandbox::ProcessSandbox::new();
    let rules: Arc<dyn PathRules> = Arc::new(Open);
    let shells = Shells::new(Arc::new(cox_sandbox::ProcessSandbox::new()));
    let tool = BashOutputTool::new(Arc::clone(&shells));
    let _guard = runtime.enter();
    let start = |command: &str| {
        let request = cox_protocol::sandbox::ExecRequest {
            command: command.to_owned(),
            cwd: work.0.clone(),
            timeout: Duration::from_secs(600),
            env: Vec::new(),
            unconfined: false,
            call_id: None,
        };
        shells.start(request, None)
    };
    let (idle, busy) = (idle_id(start("sleep 600"))?, idle_id(start(BUSY))?);

    let poll = |id: &str| {
        let call_id = cox_protocol::CallId::from("bench");
        let cx = ToolContext {
            call_id: &call_id,
            workspace: &workspace,
            cancel: cox_protocol::CancelToken::new(),
            sandbox: &sandbox,
            output: OutputSink::discard(call_id.clone()),
            rules: Arc::clone(&rules),
            unconfined: false,
            files: None,
            permission_mode: cox_protocol::types::PermissionMode::Default,
            nested: cox_protocol::tool::Nested::none(),
            decided: &[],
        };
        let started = Instant::now();
        let result = runtime.block_on(tool.run(serde_json::json!({ "id": id }), cx));
        (started.elapsed(), result.visible.len())
    };
    let mut quiet = Vec::with_capacity(runs);
    for _ in 0..runs {
        quiet.push(poll(&idle).0);
    }
    let mut loaded = Vec::with_capacity(runs);
    let mut bytes = 0;
    for _ in 0..runs {
        // Let 64 KiB or more arrive, outside the timing.
        runtime.block_on(tokio::time::sleep(Duration::from_millis(2)));
        let (took, got) = poll(&busy);
        bytes = bytes.max(got);
        loaded.push(took);
    }
    shells.kill_all();
    println!(
        "bash_output poll: {:.1} µs median with nothing new; {:.1} µs with new output waiting (up to {bytes} bytes a poll)",
        median(quiet).as_secs_f64() * 1e6,
        median(loaded).as_secs_f64() * 1e6,
    );
    Ok(())
}

/// A page of about `size` bytes, shaped like documentation.
fn page(size: usize) -> String {
    let mut html = String::from(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Generated manual</title>\
         <style>body { font-family: sans-serif } .note { color: #333 }</style>\
         <script>window.analytics = { id: 'x', events: [] };</script></head><body>\
         <nav><a href=\"/\">Home</a> <a href=\"/docs\">Docs</a> <a href=\"/blog\">Blog</a></nav><main>",
    );
    let mut section = 0;
    while html.len() < size {
        section += 1;
        html.push_str(&format!(
            "<h2 id=\"s{section}\">Section {section}: configuring the widget</h2>\
             <p>The <strong>widget</strong> reads its settings from <code>widget.toml</code> at \
             start; see <a href=\"/docs/widget#s{section}\">the reference</a> for every key. \
             A setting given twice keeps the <em>last</em> value, and an unknown key is an error \
             that names the file and the line.</p>\
             <ul><li>timeout: seconds, default 30</li><li>retries: count, default 3</li>\
             <li>mode: <code>fast</code> or <code>safe</code></li></ul>\
             <table><tr><th>key</th><th>type</th><th>default</th></tr>\
             <tr><td>timeout</td><td>integer</td><td>30</td></tr>\
             <tr><td>retries</td><td>integer</td><td>3</td></tr></table>\
             <pre><code>[widget]\ntimeout = 30\nretries = 3\n</code></pre>\
             <script>track('s{section}');</script>"
        ));
    }
    html.push_str("</main><footer>© 2026 Example</footer></body></html>");
    html
}

/// Serves `body` as `text/html` to every request, on its own thread.
fn serve(body: Arc<Vec<u8>>) -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    std::thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(mut socket) = socket else { continue };
            let _ = socket.set_nodelay(true);
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match socket.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let header = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = socket.write_all(header.as_bytes());
            let _ = socket.write_all(&body);
        }
    });
    Ok(port)
}

fn fetch(runs: usize) -> Result<(), String> {
    let html = page(1024 * 1024);
    let port = serve(Arc::new(html.clone().into_bytes()))?;
    let url = format!("http://127.0.0.1:{port}/manual.html");
    let tool = WebFetchTool::new(
        Arc::new(|_: &str| Ok(())),
        FetchLimits {
            system_proxy: false,
            ..FetchLimits::default()
        },
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let work = tempdir::Dir::new("tools").map_err(|e| e.to_string())?;
    let workspace = Workspace::single(work.0.clone());
    let sandbox = cox_sandbox::ProcessSandbox::new();
    let rules: Arc<dyn PathRules> = Arc::new(Open);
    let call = |input: serde_json::Value| {
        let call_id = cox_protocol::CallId::from("bench");
        let cx = ToolContext {
            call_id: &call_id,
            workspace: &workspace,
            cancel: cox_protocol::CancelToken::new(),
            sandbox: &sandbox,
            output: OutputSink::discard(call_id.clone()),
            rules: Arc::clone(&rules),
            unconfined: false,
            files: None,
            permission_mode: cox_protocol::types::PermissionMode::Default,
            nested: cox_protocol::tool::Nested::none(),
            decided: &[],
        };
        let started = Instant::now();
        let result = runtime.block_on(tool.run(input, cx));
        (started.elapsed(), result)
    };
    // The first call builds the client; it is not counted.
    let (first, warm) = call(serde_json::json!({ "url": url }));
    if !warm.ok {
        return Err(format!("web_fetch failed: {}", warm.visible));
    }
    let mut calls = Vec::with_capacity(runs);
    let mut visible = 0;
    for _ in 0..runs {
        let (took, result) = call(serde_json::json!({ "url": url }));
        visible = result.visible.len();
        calls.push(took);
    }
    let mut prompted = Vec::with_capacity(runs);
    let mut prompted_visible = 0;
    for _ in 0..runs {
        let input = serde_json::json!({ "url": url, "prompt": "which key sets the retries" });
        let (took, result) = call(input);
        prompted_visible = result.visible.len();
        prompted.push(took);
    }
    let mut converts = Vec::with_capacity(runs);
    let mut markdown = 0;
    for _ in 0..runs {
        let started = Instant::now();
        markdown = cox_tools::web_fetch::html_to_markdown(&html).len();
        converts.push(started.elapsed());
    }
    println!(
        "web_fetch of a {} byte HTML page (loopback): {:.1} ms median call ({:.1} ms the first, building the client)",
        html.len(),
        ms(median(calls)),
        ms(first)
    );
    println!(
        "  HTML to markdown alone: {:.1} ms median; the model gets {visible} bytes ({markdown} of markdown, {:.0}% of the HTML)",
        ms(median(converts)),
        100.0 * markdown as f64 / html.len() as f64
    );
    println!(
        "  with a prompt: {:.1} ms median call, {prompted_visible} bytes",
        ms(median(prompted))
    );
    Ok(())
}

/// A photo-like picture: smooth gradients with grain.
fn photo(width: u32, height: u32) -> RgbImage {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    RgbImage::from_fn(width, height, |x, y| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let grain = (state % 24) as u32;
        let r = (x * 200 / width + grain) as u8;
        let g = (y * 200 / height + grain) as u8;
        let b = (((x / 7 + y / 5) % 160) + grain) as u8;
        Rgb([r, g, b])
    })
}

/// A screenshot-like picture: flat panels and lines of "text".
fn screenshot(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, y| {
        if x < 300 {
            Rgb([40, 44, 52])
        } else if y % 24 < 14 && (x / 9 + y / 24) % 7 != 0 && x % 9 < 7 && x < width - 200 {
            Rgb([220, 220, 210])
        } else {
            Rgb([30, 30, 30])
        }
    })
}

fn encode(image: RgbImage, format: ImageFormat) -> Result<Vec<u8>, String> {
    let mut out = Cursor::new(Vec::new());
    DynamicImage::ImageRgb8(image)
        .write_to(&mut out, format)
        .map_err(|e| e.to_string())?;
    Ok(out.into_inner())
}

fn images(runs: usize) -> Result<(), String> {
    let cases = [
        (
            "4000×3000 JPEG photo",
            encode(photo(4000, 3000), ImageFormat::Jpeg)?,
        ),
        (
            "2560×1600 PNG screenshot",
            encode(screenshot(2560, 1600), ImageFormat::Png)?,
        ),
    ];
    for (name, bytes) in &cases {
        let mut times = Vec::with_capacity(runs);
        let mut line = String::new();
        for _ in 0..runs {
            let started = Instant::now();
            let prepared = cox_tools::image::prepare(bytes, "x")?;
            times.push(started.elapsed());
            line = prepared.line(name);
        }
        println!(
            "image::prepare of a {name} ({} bytes): {:.1} ms median; {line}",
            bytes.len(),
            ms(median(times))
        );
    }
    let source = DynamicImage::ImageRgb8(photo(4000, 3000));
    let mut filters = Vec::new();
    for (label, filter) in [
        ("Nearest", FilterType::Nearest),
        ("Triangle", FilterType::Triangle),
        ("CatmullRom", FilterType::CatmullRom),
        ("Lanczos3", FilterType::Lanczos3),
    ] {
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let started = Instant::now();
            let small = source.resize_exact(1238, 928, filter);
            times.push(started.elapsed());
            drop(small);
        }
        filters.push(format!("{label} {:.1} ms", ms(median(times))));
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let small = source.thumbnail_exact(1238, 928);
        times.push(started.elapsed());
        drop(small);
    }
    filters.push(format!("thumbnail (area) {:.1} ms", ms(median(times))));
    println!(
        "  resize alone, 4000×3000 to 1238×928: {}",
        filters.join(", ")
    );
    Ok(())
}
