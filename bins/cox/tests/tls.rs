//! Root certificates, over the real binary: a run against an `http://`
//! base URL reads none (it works with the roots pointed at nothing), and an
//! `https://` one that cannot load them says so in one line at its first
//! request, without ever trusting a server unverified.

mod common;

use common::{Env, anthropic_final_text, anthropic_write_call, lines, serve, stderr};

const HELLO: &str = "create hello.txt containing hi";

/// `SSL_CERT_FILE` and `SSL_CERT_DIR` name a missing file and an empty
/// folder: whatever loads the platform's roots finds none and fails.
fn without_roots(env: &Env, cmd: &mut std::process::Command) {
    let empty = env.home.path().join("no-certs");
    std::fs::create_dir_all(&empty).unwrap();
    cmd.env("SSL_CERT_FILE", empty.join("none.pem"))
        .env("SSL_CERT_DIR", &empty)
        .env_remove("http_proxy")
        .env_remove("HTTP_PROXY")
        .env_remove("all_proxy")
        .env_remove("ALL_PROXY");
}

#[test]
fn an_http_base_url_needs_no_root_certificates() {
    let (url, server) = serve(vec![
        ("200 OK", anthropic_write_call()),
        ("200 OK", anthropic_final_text()),
    ]);
    let env = Env::new();
    let mut cmd = env.cox();
    without_roots(&env, &mut cmd);
    let out = cmd
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", &url)
        .args(["run", "-p", HELLO, "--output-format", "stream-json"])
        .args(["--permission-mode", "acceptEdits"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    assert_eq!(lines(&out).last().unwrap()["subtype"], "success");
    assert_eq!(server.join().unwrap().len(), 2);
}

#[test]
fn an_https_base_url_without_roots_fails_in_one_line_at_the_first_request() {
    let env = Env::new();
    let mut cmd = env.cox();
    without_roots(&env, &mut cmd);
    let out = cmd
        .env("ANTHROPIC_API_KEY", "sk-test")
        // Nothing listens there; the roots fail before any connection.
        .env("ANTHROPIC_BASE_URL", "https://127.0.0.1:9")
        .args(["run", "-p", HELLO, "--output-format", "text"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_ne!(out.status.code(), Some(0), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("cannot build the HTTPS client"))
        .unwrap_or_else(|| panic!("no line about the client: {err}"));
    assert!(line.contains("SSL_CERT_FILE"), "{line}");
    assert!(!line.contains("after"), "not retried: {line}");
    assert!(!env.work.path().join("hello.txt").exists());
}
