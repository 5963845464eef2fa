//! The provider's own web search over the real binary against a loopback
//! Anthropic server replaying a search answer: offered only with `[tools]
//! web_search = true` and a `WebSearch` allow rule (else off, and said),
//! its steps and citations in stream-json, the searches priced, and the
//! steps sent back in the next request of the session.

mod common;

use common::{Env, anthropic_final_text, lines, serve, stderr};
use serde_json::Value;

const ANSWER: &str =
    include_str!("../../../adapters/providers/tests/fixtures/anthropic_web_search.sse");

fn run(env: &Env, config: &str, flags: &[&str]) -> (std::process::Output, Vec<String>) {
    std::fs::write(env.home.path().join("config.toml"), config).unwrap();
    let (url, server) = serve(vec![
        ("200 OK", ANSWER.to_owned()),
        ("200 OK", anthropic_final_text()),
    ]);
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", &url)
        .args([
            "run",
            "-p",
            "what is new in rust 1.95?",
            "--output-format",
            "stream-json",
        ])
        .args(flags)
        .output()
        .unwrap();
    let first = out.clone();
    let again = env
        .cox()
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", &url)
        .args([
            "run",
            "--continue",
            "-p",
            "thanks",
            "--output-format",
            "json",
        ])
        .args(flags)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    (first, server.join().unwrap())
}

#[test]
fn a_search_is_offered_shown_priced_and_sent_back() {
    let env = Env::new();
    let (out, bodies) = run(
        &env,
        "[tools]\nweb_search = true\n",
        &["--allowedTools", "WebSearch"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first: Value = serde_json::from_str(&bodies[0]).unwrap();
    let last_tool = first["tools"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last_tool["type"], "web_search_20250305");
    let seen = lines(&out);
    let steps: Vec<&Value> = seen.iter().filter(|l| l["type"] == "server_tool").collect();
    assert_eq!(steps.len(), 2, "{seen:?}");
    assert_eq!(steps[0]["block"]["query"], "rust 1.95 release notes");
    let cited = seen.iter().find(|l| l["type"] == "citations").unwrap();
    assert_eq!(
        cited["sources"][0]["url"],
        "https://blog.rust-lang.org/2026/04/16/Rust-1.95.0/"
    );
    // 10,682 in and 510 out at $3/$15 per million, and one search at $0.01.
    let result = seen.last().unwrap();
    let cost = result["total_cost_usd"].as_f64().unwrap();
    let tokens = 10_682.0 * 3.0 / 1e6 + 510.0 * 15.0 / 1e6;
    assert!((cost - (tokens + 0.01)).abs() < 1e-9, "{cost}");
    // The next request carries the search steps back as they came.
    let second = &bodies[1];
    assert!(second.contains("\"type\":\"server_tool_use\""), "{second}");
    assert!(second.contains("EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5"));
}

#[test]
fn without_a_websearch_rule_it_is_off_and_said() {
    let env = Env::new();
    let (out, bodies) = run(&env, "[tools]\nweb_search = true\n", &[]);
    assert!(
        stderr(&out).contains("[tools] web_search is on, but off for this session"),
        "{}",
        stderr(&out)
    );
    let first: Value = serde_json::from_str(&bodies[0]).unwrap();
    assert!(!first.to_string().contains("web_search_20250305"));
}

#[test]
fn a_deny_rule_keeps_it_off_even_with_an_allow_rule() {
    let env = Env::new();
    let (out, bodies) = run(
        &env,
        "[tools]\nweb_search = true\n",
        &[
            "--allowedTools",
            "WebSearch",
            "--disallowedTools",
            "WebSearch(domain:x.com)",
        ],
    );
    assert!(stderr(&out).contains("deny rule"), "{}", stderr(&out));
    assert!(!bodies[0].contains("web_search_20250305"));
}

#[test]
fn off_by_default() {
    let env = Env::new();
    let (out, bodies) = run(&env, "", &["--allowedTools", "WebSearch"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!bodies[0].contains("web_search_20250305"));
}
