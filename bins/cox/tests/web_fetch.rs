//! `web_fetch` over the real binary with the scripted provider, against
//! loopback HTTP servers: a page comes back as markdown when a
//! `WebFetch(domain:…)` rule allows its host; without one a headless run
//! refuses the call; `[sandbox] allowed_domains` binds the fetch; a
//! redirect to another host is handed back to the model, not followed.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

use common::{Env, stderr};
use serde_json::Value;

/// Serves `page` (HTML) at `/page` and a redirect to `elsewhere` at
/// `/away`, for as long as the test runs; returns the port.
fn site(elsewhere: String) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(mut socket) = socket else { return };
            socket.set_nodelay(true).unwrap();
            let mut reader = BufReader::new(socket.try_clone().unwrap());
            let mut first = String::new();
            reader.read_line(&mut first).unwrap();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap() == 0 || line == "\r\n" {
                    break;
                }
            }
            let response = if first.starts_with("GET /away ") {
                format!(
                    "HTTP/1.1 302 Found\r\nLocation: {elsewhere}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
            } else {
                let body = "<html><head><title>T</title><script>var x = 1;</script></head>\
                    <body><h1>Release notes</h1><p>The cache is <b>warm</b> now.</p>\
                    <a href=\"/more\">more</a></body></html>";
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
            };
            let _ = socket.write_all(response.as_bytes());
        }
    });
    port
}

fn fetch_run(env: &Env, url: &str, expect: &str, flags: &[&str]) -> std::process::Output {
    let scenario = env.work.path().join("fetch.toml");
    std::fs::write(
        &scenario,
        format!(
            "[[turn]]\n[[turn.tool_call]]\nname = \"web_fetch\"\ninput = {{ url = \"{url}\" }}\n\n\
             [[turn]]\ntext = \"Read it.\"\n[turn.expect]\ntool_result_contains = {expect:?}\n"
        ),
    )
    .unwrap();
    env.cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY")
        .env_remove("ALL_PROXY")
        .env_remove("http_proxy")
        .env_remove("https_proxy")
        .args(["run", "-p", "read the notes", "--output-format", "json"])
        .args(flags)
        .output()
        .unwrap()
}

fn result(out: &std::process::Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn an_allowed_host_s_page_comes_back_as_markdown() {
    let env = Env::new();
    let port = site(String::new());
    let url = format!("http://127.0.0.1:{port}/page");
    let out = fetch_run(
        &env,
        &url,
        "# Release notes\n\nThe cache is **warm** now.",
        &["--allowedTools", "WebFetch(domain:127.0.0.1)"],
    );
    let result = result(&out);
    assert_eq!(result["result"], "Read it.");
    assert_eq!(result["permission_denials"], serde_json::json!([]));
}

#[test]
fn without_a_rule_a_headless_run_refuses_the_fetch() {
    let env = Env::new();
    let port = site(String::new());
    let url = format!("http://127.0.0.1:{port}/page");
    let out = fetch_run(&env, &url, "this session cannot ask", &[]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a call was denied: {}",
        stderr(&out)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["permission_denials"][0]["tool_name"], "web_fetch");
}

#[test]
fn allowed_domains_bind_the_fetch() {
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[sandbox]\nallowed_domains = [\"example.com\"]\n",
    )
    .unwrap();
    let port = site(String::new());
    let url = format!("http://127.0.0.1:{port}/page");
    let out = fetch_run(
        &env,
        &url,
        "web_fetch may not connect to 127.0.0.1: it is not in [sandbox] allowed_domains",
        &["--allowedTools", "WebFetch(domain:127.0.0.1)"],
    );
    result(&out);
}

#[test]
fn a_redirect_to_another_host_is_handed_back_not_followed() {
    let env = Env::new();
    let other = site(String::new());
    let port = site(format!("http://localhost:{other}/page"));
    let url = format!("http://127.0.0.1:{port}/away");
    let out = fetch_run(
        &env,
        &url,
        &format!("http://localhost:{other}/page"),
        &["--allowedTools", "WebFetch(domain:127.0.0.1)"],
    );
    let result = result(&out);
    assert_eq!(result["result"], "Read it.");
}

#[test]
fn tools_web_fetch_false_takes_the_tool_away() {
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[tools]\nweb_fetch = false\n",
    )
    .unwrap();
    let out = fetch_run(
        &env,
        "http://127.0.0.1:9/page",
        "unknown tool `web_fetch`",
        &[],
    );
    result(&out);
}
