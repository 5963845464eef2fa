//! `cox sessions --grep` over the real binary: what the assistant said is
//! found even when it streamed in pieces, the hit names the lines of the
//! message it belongs to, and the exit code says whether anything matched,
//! as grep's does.

mod common;

use std::process::Output;

use common::{Env, stderr};
use regex::Regex;
use serde_json::Value;

/// One turn whose answer streams four characters a delta.
const CHOPPED: &str = "[[turn]]\n\
text = \"The answer is forty-two, as before.\"\n\
chunk_chars = 4\n";

struct Searched {
    env: Env,
    home: tempfile::TempDir,
    id: String,
}

impl Searched {
    fn new() -> Self {
        let env = Env::new();
        let home = tempfile::tempdir().unwrap();
        let scenario = env.home.path().join("chopped.toml");
        std::fs::write(&scenario, CHOPPED).unwrap();
        let out = env
            .cox()
            .env("HOME", home.path())
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", &scenario)
            .args([
                "run",
                "-p",
                "what is the answer?",
                "--output-format",
                "json",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let id = common::lines(&out)[0]["session_id"]
            .as_str()
            .unwrap()
            .to_owned();
        Self { env, home, id }
    }

    fn cox(&self, args: &[&str]) -> Output {
        self.env
            .cox()
            .env("HOME", self.home.path())
            .args(args)
            .output()
            .unwrap()
    }

    fn rollout(&self) -> Vec<Value> {
        let path = self
            .env
            .home
            .path()
            .join("sessions")
            .join(format!("{}.jsonl", self.id));
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

#[test]
fn text_streamed_across_deltas_is_found_and_the_hit_names_its_lines() {
    let s = Searched::new();
    let out = s.cox(&["sessions", "--grep", "forty-two, as"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let text = String::from_utf8(out.stdout).unwrap();
    let shape =
        Regex::new(r"^([0-9A-Z]{26}):(\d+)-(\d+): text The answer is forty-two, as before\.\n$")
            .unwrap();
    let caps = shape.captures(&text).unwrap_or_else(|| panic!("{text:?}"));
    assert_eq!(&caps[1], s.id);
    let (first, last): (usize, usize) = (caps[2].parse().unwrap(), caps[3].parse().unwrap());
    // The lines named are the message's deltas, first to last, and no
    // single one of them holds the text.
    let rollout = s.rollout();
    let deltas = &rollout[first - 1..last];
    assert!(
        deltas.iter().all(|e| e["type"] == "text_delta"),
        "{deltas:?}"
    );
    assert!(deltas.len() > 2);
    assert_ne!(
        rollout[first - 2]["type"],
        "text_delta",
        "starts at the first"
    );
    assert_ne!(rollout[last]["type"], "text_delta", "ends at the last");
    assert!(
        !deltas
            .iter()
            .any(|e| e["text"].as_str().unwrap().contains("forty-two"))
    );

    let json = s.cox(&["sessions", "--grep", "forty-two", "--json"]);
    assert_eq!(json.status.code(), Some(0));
    let hits: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        hits,
        serde_json::json!([{
            "session_id": s.id,
            "line": first,
            "last_line": last,
            "type": "text",
            "excerpt": "The answer is forty-two, as before.",
        }])
    );
    // Every other event is searched as before: the prompt, and the title
    // made of its first line.
    let prompt = s.cox(&["sessions", &s.id[..20], "--grep", "the answer?"]);
    let prompt = String::from_utf8(prompt.stdout).unwrap();
    let kinds: Vec<&str> = prompt
        .lines()
        .map(|l| l.split(' ').nth(1).unwrap_or_default())
        .collect();
    assert_eq!(kinds, ["turn_started", "session_titled"], "{prompt}");
}

#[test]
fn nothing_matched_is_exit_one_as_with_grep() {
    let s = Searched::new();
    let out = s.cox(&["sessions", "--grep", "forty-three"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(stderr(&out), "cox: no session mentions `forty-three`\n");

    let out = s.cox(&["sessions", "--grep", "forty-three", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "[]\n");

    // An error is exit 1 too, with its one line.
    let out = s.cox(&["sessions", "7ZZZZZ", "--grep", "forty-two"]);
    common::assert_one_line_error(&out, "no session `7ZZZZZ`");
}
