//! Helpers shared by the tests of the real `cox` binary: a temporary
//! COX_HOME and work folder per test, and readers for its output.

#![allow(dead_code)] // each test file uses its own subset

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread;

use serde_json::Value;
use tempfile::TempDir;

pub mod acp;
pub mod ext;
pub mod mcp;
pub mod otlp;

/// `git -C dir args…` as a fixed author; what it printed, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `<work>/code/repo` with `a.txt` (`text`) in one commit on `main`, no
/// remote; its folder, canonical.
pub fn git_repo(env: &Env, text: &str) -> PathBuf {
    let code = env.work.path().join("code");
    std::fs::create_dir_all(&code).unwrap();
    git(&code, &["init", "-q", "-b", "main", "repo"]);
    let repo = code.join("repo").canonicalize().unwrap();
    std::fs::write(repo.join("a.txt"), text).unwrap();
    git(&repo, &["add", "a.txt"]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    repo
}

pub fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/scenarios")
        .join(format!("{name}.toml"))
}

pub struct Env {
    pub home: TempDir,
    pub work: TempDir,
}

impl Env {
    pub fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
        }
    }

    /// Writes the person's Claude Code settings (`~/.claude/settings.json`
    /// under the test's home).
    pub fn claude_settings(&self, settings: &Value) {
        std::fs::create_dir_all(self.home.path().join(".claude")).unwrap();
        std::fs::write(
            self.home.path().join(".claude/settings.json"),
            settings.to_string(),
        )
        .unwrap();
    }

    pub fn cox(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cox"));
        for (key, _) in std::env::vars_os() {
            let key_text = key.to_string_lossy();
            if ["COX_", "ANTHROPIC_", "OPENAI_"]
                .iter()
                .any(|p| key_text.starts_with(p))
            {
                cmd.env_remove(key);
            }
        }
        // No session bus: logins never reach the OS keyring of whoever
        // runs the tests (a test that wants one starts its own).
        cmd.env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env("XDG_RUNTIME_DIR", self.home.path());
        // Never the real home: its ~/.claude settings, commands and skills
        // would join every test's session.
        cmd.env("COX_HOME", self.home.path())
            .env("HOME", self.home.path())
            .current_dir(self.work.path());
        // Nor the machine's managed settings: a test writes its own here.
        cmd.env("COX_MANAGED_SETTINGS", self.managed_settings());
        cmd
    }

    /// Where this test's Claude Code managed settings file goes (none
    /// until a test writes it).
    pub fn managed_settings(&self) -> PathBuf {
        self.home.path().join("managed-settings.json")
    }

    pub fn run(&self, scenario_name: &str, extra: &[&str]) -> Output {
        self.cox()
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", scenario(scenario_name))
            .args(["run", "-p", "do the task"])
            .args(extra)
            .output()
            .unwrap()
    }

    /// `slow.toml` in stream-json, stdout piped: 32 words, 200 ms apart.
    pub fn spawn_slow(&self) -> std::process::Child {
        self.cox()
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", scenario("slow"))
            .args(["run", "-p", "talk slowly", "--output-format", "stream-json"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    /// Every daily file of the JSON log (`logs/cox.log.<date>`), oldest
    /// first, as one text: a test that runs over midnight reads both days.
    pub fn log(&self) -> String {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.home.path().join("logs"))
            .map(|dir| dir.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        files.retain(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("cox.log."))
        });
        files.sort();
        files
            .iter()
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect()
    }

    pub fn rollouts(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.home.path().join("sessions"))
            .map(|dir| dir.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default()
    }
}

pub fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A failure before the session: exactly one line on stderr, exit 1.
pub fn assert_one_line_error(out: &Output, needle: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.starts_with("cox: error: "), "{err}");
    assert!(err.contains(needle), "{err:?} should mention {needle:?}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Anthropic's framing: `event: <type>`, then the data line.
pub fn anthropic_sse(events: &[&str]) -> String {
    events
        .iter()
        .map(|data| {
            let kind: serde_json::Value = serde_json::from_str(data).unwrap();
            format!(
                "event: {}\ndata: {data}\n\n",
                kind["type"].as_str().unwrap()
            )
        })
        .collect()
}

pub fn anthropic_write_call() -> String {
    anthropic_sse(&[
        r#"{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-5","usage":{"input_tokens":900,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_w","name":"write","input":{}}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"hello.txt\", "}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"content\": \"hi\\n\"}"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}"#,
        r#"{"type":"message_stop"}"#,
    ])
}

pub fn anthropic_final_text() -> String {
    anthropic_sse(&[
        r#"{"type":"message_start","message":{"id":"m2","type":"message","role":"assistant","content":[],"model":"claude-sonnet-5","usage":{"input_tokens":960,"cache_read_input_tokens":900,"output_tokens":1}}}"#,
        r#"{"type":"ping"}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Created "}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello.txt."}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}"#,
        r#"{"type":"message_stop"}"#,
    ])
}

/// How cox's title request begins (`cox_core::session::TITLE_PROMPT`):
/// cox asks the cheap tier for one alongside the first turn when the
/// provider has a cheap model of its own, as Anthropic does by default.
pub const TITLE_REQUEST: &str = "Write a title for the coding session";

/// In a body given to [`serve`]: send what comes before, wait, then the
/// rest, so the client has streamed the first part when the second comes.
pub const PAUSE: &str = "\u{0}pause\u{0}";

/// Answers one request per body, in order; returns the requests' bodies.
///
/// A title request takes no answer from the list and is not returned: it
/// is refused with a 400 (not retried), so the session's title is the
/// prompt's first line and each test sees only the calls of its turns, in
/// order, whenever the title call happens to arrive.
pub fn serve(responses: Vec<(&'static str, String)>) -> (String, thread::JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = thread::spawn(move || {
        let mut bodies = Vec::new();
        let mut responses = responses.into_iter().peekable();
        while let Some((status, body)) = responses.peek().cloned() {
            let (socket, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(socket);
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut request = vec![0; length];
            reader.read_exact(&mut request).unwrap();
            let request = String::from_utf8(request).unwrap();
            let mut socket = reader.into_inner();
            if request.contains(TITLE_REQUEST) {
                let refusal = r#"{"type":"error","error":{"type":"invalid_request_error","message":"no titles here"}}"#;
                let head = format!(
                    "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    refusal.len()
                );
                let _ = socket.write_all(head.as_bytes());
                let _ = socket.write_all(refusal.as_bytes());
                continue;
            }
            responses.next();
            bodies.push(request);
            // An overloaded answer asks to be retried at once.
            let retry = if status.starts_with("529") {
                "retry-after: 0\r\n"
            } else {
                ""
            };
            // `CUT` promises more than it sends: the connection drops
            // mid-answer.
            let parts: Vec<&str> = body.split(PAUSE).collect();
            let length: usize = parts.iter().map(|p| p.len()).sum();
            let (status, promised) = match status.strip_prefix("CUT ") {
                Some(real) => (real, length + 100),
                None => (status, length),
            };
            let head = format!(
                "HTTP/1.1 {status}\r\n{retry}content-type: text/event-stream\r\ncontent-length: {promised}\r\nconnection: close\r\n\r\n"
            );
            socket.write_all(head.as_bytes()).unwrap();
            for (index, part) in parts.iter().enumerate() {
                if index > 0 {
                    // Long enough for the client to read what came before.
                    thread::sleep(std::time::Duration::from_millis(100));
                }
                socket.write_all(part.as_bytes()).unwrap();
                socket.flush().unwrap();
            }
        }
        bodies
    });
    (url, handle)
}

/// OpenAI's framing: data lines only, then `[DONE]`.
pub fn openai_sse(chunks: &[&str]) -> String {
    let mut out: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

/// A Chat Completions answer that writes hello.txt.
pub fn openai_write_call() -> String {
    openai_sse(&[
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_w","type":"function","function":{"name":"write","arguments":""}}]},"finish_reason":null}]}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\": \"hello.txt\", "}}]},"finish_reason":null}]}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"content\": \"hi\\n\"}"}}]},"finish_reason":null}]}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[],"usage":{"prompt_tokens":900,"completion_tokens":30,"total_tokens":930}}"#,
    ])
}

/// A Chat Completions answer: "Created hello.txt.".
pub fn openai_final_text() -> String {
    openai_sse(&[
        r#"{"id":"c2","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{"role":"assistant","content":"Created "},"finish_reason":null}]}"#,
        r#"{"id":"c2","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{"content":"hello.txt."},"finish_reason":null}]}"#,
        r#"{"id":"c2","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        r#"{"id":"c2","object":"chat.completion.chunk","created":1,"model":"qwen3-coder","choices":[],"usage":{"prompt_tokens":960,"completion_tokens":5,"total_tokens":965,"prompt_tokens_details":{"cached_tokens":896}}}"#,
    ])
}

/// A finished command's status, stdout and stderr, for an assertion's
/// message.
pub fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The interrupt scenarios' `sleep 31` still running in `dir`, if any (not
/// a zombie; the sandbox's pid namespace hides the pid it wrote).
pub fn sleep_31_in(dir: &Path) -> Option<String> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let cwd = std::fs::read_link(entry.path().join("cwd")).ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let zombie = stat
                .rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'));
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let sleep = cmdline == b"sleep\x0031\x00";
            (name.parse::<u32>().is_ok() && cwd == dir && sleep && !zombie).then_some(name)
        })
}
