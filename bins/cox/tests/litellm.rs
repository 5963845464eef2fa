//! cox behind a real gateway: the LiteLLM proxy (PyPI `litellm[proxy]`),
//! in front of the scripted upstream in `tests/litellm/`, so LiteLLM's own
//! code writes every byte cox reads, on `/v1/chat/completions` and on
//! `/v1/messages`: a tool call then text with usage in the last event, a
//! rate limit in the middle of a stream, and a tool call cut at the output
//! limit.
//!
//! `COX_TEST_LITELLM` names the `litellm` executable (`.ci/run` installs it
//! in a virtualenv outside the repository). Without it the test says so
//! and does nothing, unless `CI` is set: there it fails, so CI never
//! passes without having run it. The proxy starts offline
//! (`LITELLM_LOCAL_MODEL_COST_MAP`) in 15–25 s here, once for all cases.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{Env, lines, stderr};
use serde_json::Value;

struct Proxy {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(litellm: &str) -> Proxy {
    let dir = tempfile::tempdir().unwrap();
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/litellm");
    for file in ["config.yaml", "cox_upstream.py"] {
        std::fs::copy(here.join(file), dir.path().join(file)).unwrap();
    }
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let log = std::fs::File::create(dir.path().join("proxy.log")).unwrap();
    let child = Command::new(litellm)
        .args(["--config", "config.yaml", "--host", "127.0.0.1"])
        .args(["--port", &port.to_string()])
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("LITELLM_MASTER_KEY", "sk-test")
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {litellm}: {e}"));
    let mut proxy = Proxy {
        child,
        port,
        _dir: dir,
    };
    let deadline = Instant::now() + Duration::from_secs(180);
    while !alive(port) {
        if let Ok(Some(status)) = proxy.child.try_wait() {
            let log = std::fs::read_to_string(proxy._dir.path().join("proxy.log"));
            panic!("the proxy exited ({status}): {}", log.unwrap_or_default());
        }
        assert!(
            Instant::now() < deadline,
            "the proxy did not start in 180 s"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    proxy
}

fn alive(port: u16) -> bool {
    let Ok(mut socket) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let request = "GET /health/liveliness HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";
    if socket.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = socket.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
}

#[derive(Clone, Copy, Debug)]
enum Format {
    Chat,
    Messages,
}

fn cox(env: &Env, proxy: &Proxy, format: Format, prompt: &str) -> Output {
    let url = format!("http://127.0.0.1:{}", proxy.port);
    let mut cmd = env.cox();
    cmd.env("HOME", env.home.path())
        .stdin(Stdio::null())
        .args(["run", "-p", prompt, "--output-format", "stream-json"])
        .args(["--permission-mode", "acceptEdits", "--model", "cox-script"]);
    match format {
        Format::Chat => cmd
            .env("OPENAI_BASE_URL", format!("{url}/v1"))
            .env("OPENAI_API_KEY", "sk-test")
            .args(["--provider", "openai"]),
        Format::Messages => cmd
            .env("ANTHROPIC_BASE_URL", &url)
            .env("ANTHROPIC_API_KEY", "sk-test")
            .args(["--provider", "anthropic"]),
    };
    cmd.output().unwrap()
}

fn env() -> Env {
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[providers.anthropic]\nretry_base_ms = 1\n\n[providers.openai]\nretry_base_ms = 1\n",
    )
    .unwrap();
    env
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

/// The main calls' usage: LiteLLM's counts, 11 in and 7 out each.
fn assert_booked(lines: &[Value], calls: usize, format: Format) {
    let usage: Vec<&Value> = of_type(lines, "usage")
        .into_iter()
        .filter(|u| u["model"] == "cox-script")
        .collect();
    let whole: Vec<&&Value> = usage.iter().filter(|u| u["output_tokens"] == 7).collect();
    assert_eq!(whole.len(), calls, "{format:?}: {usage:?}");
    for u in whole {
        assert_eq!(u["input_tokens"], 11, "{format:?}: {u}");
    }
}

fn write_then_text(proxy: &Proxy, format: Format) {
    let env = env();
    let out = cox(
        &env,
        proxy,
        format,
        &format!("CASE:write_then_text {format:?}"),
    );
    assert_eq!(out.status.code(), Some(0), "{format:?}: {}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("hello.txt")).unwrap(),
        "hi\n",
        "{format:?}"
    );
    let lines = lines(&out);
    assert_booked(&lines, 2, format);
    let result = lines.last().unwrap();
    assert_eq!(result["result"], "Created hello.txt.", "{format:?}");
    assert_eq!(result["stop"], "end_turn");
}

fn rate_limit_mid(proxy: &Proxy, format: Format) {
    let env = env();
    let out = cox(
        &env,
        proxy,
        format,
        &format!("CASE:rate_limit_mid {format:?}"),
    );
    assert_eq!(out.status.code(), Some(0), "{format:?}: {}", stderr(&out));
    let lines = lines(&out);
    let retry = of_type(&lines, "retry");
    assert_eq!(retry.len(), 1, "{format:?}: {lines:?}");
    assert_eq!(retry[0]["discarded"], true, "{format:?}: text had streamed");
    let reason = retry[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("scripted upstream rate limit") && !reason.contains('\n'),
        "{format:?}: {reason}"
    );
    assert_booked(&lines, 1, format);
    assert_eq!(
        lines.last().unwrap()["result"],
        "The whole answer.",
        "{format:?}"
    );
}

fn length_in_tool(proxy: &Proxy, format: Format) {
    let env = env();
    let out = cox(
        &env,
        proxy,
        format,
        &format!("CASE:length_in_tool {format:?}"),
    );
    assert_eq!(out.status.code(), Some(0), "{format:?}: {}", stderr(&out));
    assert!(!env.work.path().join("hello.txt").exists(), "never ran");
    let lines = lines(&out);
    assert_eq!(of_type(&lines, "retry").len(), 0, "{format:?}: not retried");
    let done = of_type(&lines, "tool_call_done");
    assert_eq!(done.len(), 1, "{format:?}");
    assert_eq!(done[0]["call_id"], "call_cut", "{format:?}");
    let told = done[0]["result"]["visible"].as_str().unwrap();
    assert!(told.contains("cut off at the output limit"), "{told}");
    assert!(
        of_type(&lines, "notice").iter().any(|n| n["text"]
            .as_str()
            .is_some_and(|t| t.contains("`write` was cut off at the output limit"))),
        "{format:?}: {lines:?}"
    );
    assert_booked(&lines, 2, format);
    assert_eq!(
        lines.last().unwrap()["result"],
        "Wrote it in parts.",
        "{format:?}"
    );
}

#[test]
fn cox_behind_the_litellm_proxy() {
    let Some(litellm) = std::env::var("COX_TEST_LITELLM")
        .ok()
        .filter(|v| !v.is_empty())
    else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run this test: set COX_TEST_LITELLM to the litellm executable"
        );
        eprintln!("skipped: set COX_TEST_LITELLM to a litellm[proxy] executable to run it");
        return;
    };
    let proxy = start(&litellm);
    for format in [Format::Chat, Format::Messages] {
        write_then_text(&proxy, format);
        rate_limit_mid(&proxy, format);
        length_in_tool(&proxy, format);
    }
}
