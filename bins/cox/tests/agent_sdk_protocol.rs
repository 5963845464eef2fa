//! The Agent SDK protocol's bad input, with raw lines on stdin (no SDK):
//! a line that is not JSON, a message of no known type, an unknown
//! control request, a control response to a request cox never sent — each
//! answered with an error frame (or a control error) while the session
//! goes on; stdin closed while an ask waits — the ask denied, the turn's
//! result written, the rollout complete, a clean exit; and the SDK's
//! flags cox cannot honour, each refused naming it.

mod common;

use std::io::Write;
use std::process::{Output, Stdio};

use common::{Env, assert_one_line_error, scenario, stderr};
use serde_json::Value;

fn sdk(env: &Env, scenario_path: &std::path::Path, extra: &[&str], lines: &[&str]) -> Output {
    let mut child = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario_path)
        .args([
            "--output-format",
            "stream-json",
            "--verbose",
            "--input-format",
            "stream-json",
        ])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    child.wait_with_output().unwrap()
}

fn frames(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

const INIT: &str = r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"initialize","hooks":null}}"#;
const HELLO: &str = r#"{"type":"user","session_id":"","message":{"role":"user","content":"create hello.txt containing hi"},"parent_tool_use_id":null}"#;

#[test]
fn bad_lines_are_answered_and_the_session_goes_on() {
    let env = Env::new();
    let out = sdk(
        &env,
        &scenario("hello"),
        &["--permission-mode", "acceptEdits"],
        &[
            INIT,
            "this is not json",
            r#"{"type":"telemetry","x":1}"#,
            r#"{"type":"control_request","request_id":"r2","request":{"subtype":"frobnicate"}}"#,
            r#"{"type":"control_request","request_id":"r3","request":{"subtype":"initialize","hooks":{"OnFullMoon":[{"matcher":null,"hookCallbackIds":["hook_0"]}]}}}"#,
            r#"{"type":"control_request","request_id":"r4","request":{"subtype":"initialize","agents":{"x":{"description":"d","prompt":"p","maxTurns":3}}}}"#,
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"nope","response":{}}}"#,
            HELLO,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let frames = frames(&out);
    assert_eq!(frames[0]["response"]["subtype"], "success");
    assert_eq!(frames[0]["response"]["request_id"], "req_1");
    let errors: Vec<&str> = frames
        .iter()
        .filter(|f| f["subtype"] == "error")
        .filter_map(|f| f["text"].as_str())
        .collect();
    assert!(errors[0].contains("not JSON"), "{errors:?}");
    assert!(
        errors[1].contains("`telemetry` is not one cox reads"),
        "{errors:?}"
    );
    assert!(errors[2].contains("request `nope`"), "{errors:?}");
    let refused = frames
        .iter()
        .find(|f| f["response"]["request_id"] == "r2")
        .unwrap();
    assert_eq!(refused["response"]["subtype"], "error");
    assert!(
        refused["response"]["error"]
            .as_str()
            .unwrap()
            .contains("frobnicate")
    );
    let bad_hooks = frames
        .iter()
        .find(|f| f["response"]["request_id"] == "r3")
        .unwrap();
    assert_eq!(bad_hooks["response"]["subtype"], "error");
    assert!(
        bad_hooks["response"]["error"]
            .as_str()
            .unwrap()
            .contains("`OnFullMoon` is not an event"),
        "{bad_hooks}"
    );
    let bad_agent = frames
        .iter()
        .find(|f| f["response"]["request_id"] == "r4")
        .unwrap();
    assert!(
        bad_agent["response"]["error"]
            .as_str()
            .unwrap()
            .contains("`maxTurns` is not supported by cox"),
        "{bad_agent}"
    );
    let result = frames.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["result"], "Created hello.txt.");
}

/// The npm SDK's `initialize` carries the system prompt: it replaces
/// cox's, `appendSystemPrompt` follows it. What cox cannot take is refused
/// by name: an option it lacks, a schema the flags did not give, a change
/// once the session has started, a hook timeout that is not a time.
#[test]
fn initialize_sets_the_system_prompt_and_refuses_what_cox_cannot_take() {
    let env = Env::new();
    let script = script(
        &env,
        "prompted.toml",
        "[[turn]]\ntext = \"Done.\"\n[turn.expect]\n\
         request_contains = [\"You are terse.\\\\n\\\\nEnd with a period.\"]\n\
         request_lacks = [\"You are cox (system prompt\"]\n",
    );
    let out = sdk(
        &env,
        &script,
        &[],
        &[
            r#"{"type":"control_request","request_id":"r1","request":{"subtype":"initialize","systemPrompt":["You are terse."],"appendSystemPrompt":"End with a period.","title":"Terse"}}"#,
            r#"{"type":"control_request","request_id":"r2","request":{"subtype":"initialize","forwardSubagentText":true}}"#,
            r#"{"type":"control_request","request_id":"r3","request":{"subtype":"initialize","jsonSchema":{"type":"object"}}}"#,
            r#"{"type":"control_request","request_id":"r4","request":{"subtype":"initialize","systemPrompt":["Another."]}}"#,
            r#"{"type":"control_request","request_id":"r5","request":{"subtype":"initialize","hooks":{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0"],"timeout":-1}]}}}"#,
            r#"{"type":"user","session_id":"","message":{"role":"user","content":"hi"},"parent_tool_use_id":null}"#,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let frames = frames(&out);
    let answer = |id: &str| {
        frames
            .iter()
            .find(|f| f["response"]["request_id"] == id)
            .unwrap_or_else(|| panic!("no answer to {id}: {frames:?}"))["response"]
            .clone()
    };
    assert_eq!(answer("r1")["subtype"], "success");
    for (id, needle) in [
        ("r2", "`forwardSubagentText` is not something cox supports"),
        ("r3", "`jsonSchema` is not the one --json-schema gave"),
        ("r4", "the session has started"),
        ("r5", "timeout -1 is not a positive number of seconds"),
    ] {
        let refused = answer(id);
        assert_eq!(refused["subtype"], "error", "{id}: {refused}");
        assert!(
            refused["error"].as_str().unwrap().contains(needle),
            "{id}: {refused}"
        );
    }
    let result = frames.last().unwrap();
    assert_eq!(result["subtype"], "success", "{frames:?}");
    assert_eq!(result["result"], "Done.");
}

#[test]
fn stdin_closed_while_an_ask_waits_denies_it_and_ends_cleanly() {
    let env = Env::new();
    let script = script(
        &env,
        "ask.toml",
        "[[turn]]\n[[turn.tool_call]]\nname = \"write\"\ninput = { path = \"a.txt\", content = \"x\" }\n\n\
         [[turn]]\ntext = \"Could not.\"\n[turn.expect]\ntool_result_contains = \"closed its input\"\n",
    );
    let out = sdk(
        &env,
        &script,
        &["--permission-prompt-tool", "stdio"],
        &[INIT, HELLO],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let frames = frames(&out);
    let result = frames.last().unwrap();
    assert_eq!(result["type"], "result", "{frames:?}");
    assert_eq!(result["result"], "Could not.");
    assert!(!env.work.path().join("a.txt").exists());
    // Whether it was asked before stdin closed or after, the call was
    // denied, and the rollout holds the whole turn.
    let rollout = std::fs::read_to_string(&env.rollouts()[0]).unwrap();
    let last: Value = serde_json::from_str(rollout.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "turn_done", "{rollout}");
}

#[test]
fn flags_cox_cannot_honour_are_refused_by_name() {
    let env = Env::new();
    for (flags, needle) in [
        (
            &["--betas", "x"][..],
            "--betas is Claude Code's and not supported by cox",
        ),
        (
            &["--json-schema", "{nope"][..],
            "--json-schema: the schema is not JSON",
        ),
        (
            &["--fallback-model", "x"][..],
            "--fallback-model is Claude Code's and not supported by cox",
        ),
        (
            &["--permission-prompt-tool", "mcp__x__y"][..],
            "--permission-prompt-tool mcp__x__y",
        ),
    ] {
        let out = sdk(&env, &scenario("hello"), flags, &[INIT, HELLO]);
        assert_one_line_error(&out, needle);
    }
    // Without --output-format stream-json the SDK's input makes no sense.
    let out = env
        .cox()
        .args(["--input-format", "stream-json", "--output-format", "json"])
        .output()
        .unwrap();
    assert_one_line_error(
        &out,
        "--input-format stream-json needs --output-format stream-json",
    );

    // An SDK's in-process server has no SDK to serve it in a plain run.
    let out = env
        .cox()
        .args(["run", "-p", "x", "--mcp-config"])
        .arg(r#"{"mcpServers":{"calc":{"type":"sdk","name":"calc"}}}"#)
        .output()
        .unwrap();
    assert_one_line_error(&out, "MCP server 'calc' is an in-process SDK server");
}

#[test]
fn system_prompt_and_tools_take_effect_in_a_plain_run_too() {
    let env = Env::new();
    let (url, server) = common::serve(vec![("200 OK", common::anthropic_final_text())]);
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", &url)
        .args(["run", "-p", "hi", "--system-prompt", "You are terse."])
        .args(["--tools", "Read,Write"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body: Value = serde_json::from_str(&server.join().unwrap()[0]).unwrap();
    assert!(
        body["system"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("You are terse."),
        "{}",
        body["system"][0]
    );
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        tools.contains(&"read") && tools.contains(&"write"),
        "{tools:?}"
    );
    assert!(
        !tools.contains(&"bash") && !tools.contains(&"edit"),
        "{tools:?}"
    );
    // A tool cox does not have is refused by name.
    let out = env
        .cox()
        .args(["run", "-p", "hi", "--tools", "Teleport"])
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario("hello"))
        .output()
        .unwrap();
    assert_one_line_error(&out, "--tools: cox has no tool `Teleport`");
}

#[test]
fn a_session_id_given_is_the_session_s_and_spelt_back_as_given() {
    let env = Env::new();
    let uuid = "11111111-2222-3333-4444-555555555555";
    let out = sdk(
        &env,
        &scenario("hello"),
        &["--permission-mode", "acceptEdits", "--session-id", uuid],
        &[INIT, HELLO],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(frames(&out).last().unwrap()["session_id"], uuid);
    // The same id again is a session that exists: refused, pointing at
    // --resume, which takes the UUID spelling.
    let again = sdk(
        &env,
        &scenario("hello"),
        &["--session-id", uuid],
        &[INIT, HELLO],
    );
    assert_one_line_error(&again, "that session exists; pick it up with --resume");
    let resumed = sdk(
        &env,
        &scenario("sdk_resumed"),
        &["--resume", uuid],
        &[
            INIT,
            r#"{"type":"user","message":{"role":"user","content":"go on"}}"#,
        ],
    );
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert_eq!(frames(&resumed).last().unwrap()["result"], "Still here.");
    let bad = sdk(&env, &scenario("hello"), &["--session-id", "nope"], &[INIT]);
    assert_one_line_error(&bad, "--session-id nope: not a session id");
}

#[test]
fn a_plain_run_with_an_output_schema_returns_the_validated_json() {
    let env = Env::new();
    let schema = env.work.path().join("schema.json");
    std::fs::write(
        &schema,
        r#"{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}"#,
    )
    .unwrap();
    let run = |scenario_name: &str| {
        env.cox()
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", scenario(scenario_name))
            .args(["run", "-p", "count the files", "--output-format", "json"])
            .arg("--output-schema")
            .arg(&schema)
            .output()
            .unwrap()
    };
    let out = run("sdk_structured");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["structured_output"], serde_json::json!({"count": 3}));
    assert_eq!(result["subtype"], "success");
    // Both answers JSON: only the second is checked and returned.
    let out = run("structured_json_twice");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["structured_output"], serde_json::json!({"count": 3}));
    assert_eq!(result["result"], r#"{"count": 3}"#);
    // Wrong twice: an error result naming why, exit 1.
    let out = run("structured_twice_wrong");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["subtype"], "error_max_structured_output_retries");
    assert_eq!(result["is_error"], true);
    assert!(result.get("structured_output").is_none());
    assert!(
        result["error"].as_str().unwrap().contains("integer"),
        "{result}"
    );
}

/// cox over the SDK protocol with `--permission-prompt-tool stdio`, its
/// stdin kept open: frames are read as they come and answered.
struct Live {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Live {
    fn start(env: &Env, scenario_path: &std::path::Path) -> Self {
        Self::start_with(env, scenario_path, INIT)
    }

    /// Started with `init` as its `initialize` request.
    fn start_with(env: &Env, scenario_path: &std::path::Path, init: &str) -> Self {
        Self::spawn(env, scenario_path, init, &[])
    }

    /// Started with `init`, and `extra` flags.
    fn spawn(env: &Env, scenario_path: &std::path::Path, init: &str, extra: &[&str]) -> Self {
        use std::io::BufRead;
        let mut child = env
            .cox()
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", scenario_path)
            .args(["--output-format", "stream-json", "--verbose"])
            .args(["--input-format", "stream-json"])
            .args(["--permission-prompt-tool", "stdio"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (lines_tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut live = Self {
            child,
            stdin,
            lines,
        };
        live.send(init);
        live
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin.as_mut().unwrap(), "{line}").unwrap();
    }

    fn prompt(&mut self, text: &str) {
        self.send(
            &serde_json::json!({"type": "user", "session_id": "", "parent_tool_use_id": null,
                                "message": {"role": "user", "content": text}})
            .to_string(),
        );
    }

    fn next(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("a frame within 30 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    /// The frames up to the first for which `stop` holds, that one last.
    fn until(&self, stop: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let frame = self.next();
            let done = stop(&frame);
            seen.push(frame);
            if done {
                return seen;
            }
        }
    }

    /// Answers each ask with `respond` until the turn's result; then
    /// stdin closed, and a clean exit.
    fn answer_asks(mut self, mut respond: impl FnMut(&Value) -> Value) {
        loop {
            let frame = self
                .until(|f| is_ask(f) || f["type"] == "result")
                .pop()
                .unwrap();
            if frame["type"] == "result" {
                break;
            }
            let response = respond(&frame);
            self.send(&answer(&frame, response));
        }
        let out = self.end();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }

    /// The frames up to the turn's result; then stdin closed, and a clean
    /// exit.
    fn finish(self) -> Vec<Value> {
        let frames = self.until(|f| f["type"] == "result");
        let out = self.end();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        frames
    }

    /// stdin closed: the exit status and stderr.
    fn end(mut self) -> Output {
        drop(self.stdin.take());
        self.child.wait_with_output().unwrap()
    }
}

/// A scenario written for one test, in its work folder.
fn script(env: &Env, name: &str, text: &str) -> std::path::PathBuf {
    let path = env.work.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The SDK's answer to `ask`: success with `response`.
fn answer(ask: &Value, response: Value) -> String {
    serde_json::json!({"type": "control_response", "response": {
        "subtype": "success", "request_id": ask["request_id"], "response": response,
    }})
    .to_string()
}

fn is_ask(frame: &Value) -> bool {
    frame["type"] == "control_request" && frame["request"]["subtype"] == "can_use_tool"
}

/// A subagent's ask reaches the SDK as its parent's do: the tool's Claude
/// Code name and input (`file_path`, absolute), its tagged id; the input
/// the callback rewrites (in that shape) is what runs.
#[test]
fn a_subagent_s_ask_reaches_the_sdk_in_claude_code_s_shape_and_its_edit_runs() {
    let env = Env::new();
    let mut live = Live::start(&env, &scenario("subagent_write"));
    live.prompt("write notes");
    let frames = live.until(|f| is_ask(f) || f["type"] == "result");
    let ask = frames.last().unwrap().clone();
    assert!(is_ask(&ask), "no ask came: {frames:?}");
    let request = &ask["request"];
    assert_eq!(request["tool_name"], "Write", "{ask}");
    let path = request["input"]["file_path"].as_str().unwrap();
    assert!(
        path.starts_with('/') && path.ends_with("/notes.txt"),
        "{ask}"
    );
    assert_eq!(request["input"]["content"], "from the subagent\n", "{ask}");
    assert!(
        request["tool_use_id"].as_str().unwrap().contains('/'),
        "a subagent's call id is tagged: {ask}"
    );
    live.send(&answer(
        &ask,
        serde_json::json!({"behavior": "allow",
                           "updatedInput": {"file_path": path, "content": "edited\n"}}),
    ));
    let result = live.finish().pop().unwrap();
    assert_eq!(result["subtype"], "success", "{result}");
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("notes.txt")).unwrap(),
        "edited\n"
    );
}

/// Two calls of one response with the same id: an ask about either could
/// describe the other, so neither is put to the callback, both are denied
/// and nothing runs.
#[test]
fn calls_sharing_an_id_are_denied_never_described_as_each_other() {
    let env = Env::new();
    let script = script(
        &env,
        "same_id.toml",
        "[[turn]]\n\
         [[turn.tool_call]]\nname = \"bash\"\nid = \"call_0\"\ninput = { command = \"echo PWNED > pwned.txt\" }\n\
         [[turn.tool_call]]\nname = \"bash\"\nid = \"call_0\"\ninput = { command = \"echo hello\" }\n\n\
         [[turn]]\ntext = \"done\"\n",
    );
    let mut live = Live::start(&env, &script);
    live.prompt("go");
    let frames = live.finish();
    assert!(!frames.iter().any(is_ask), "{frames:?}");
    assert!(!env.work.path().join("pwned.txt").exists());
    let assistant = frames.iter().find(|f| f["type"] == "assistant").unwrap();
    assert_eq!(
        assistant["message"]["content"].as_array().unwrap().len(),
        2,
        "both calls are shown: {assistant}"
    );
}

/// An allow whose `updatedPermissions` switch to acceptEdits takes effect
/// at once: the turn's next edit is not asked about.
#[test]
fn a_mode_set_in_an_approval_holds_for_the_rest_of_the_turn() {
    let env = Env::new();
    let script = script(
        &env,
        "two_writes.toml",
        "[[turn]]\n\
         [[turn.tool_call]]\nname = \"write\"\ninput = { path = \"a.txt\", content = \"a\" }\n\
         [[turn.tool_call]]\nname = \"write\"\ninput = { path = \"b.txt\", content = \"b\" }\n\n\
         [[turn]]\ntext = \"done\"\n",
    );
    let mut live = Live::start(&env, &script);
    live.prompt("write both");
    let ask = live.until(is_ask).pop().unwrap();
    live.send(&answer(
        &ask,
        serde_json::json!({"behavior": "allow", "updatedPermissions": [
            {"type": "setMode", "mode": "acceptEdits", "destination": "session"}]}),
    ));
    let frames = live.finish();
    assert!(!frames.iter().any(is_ask), "asked again: {frames:?}");
    assert_eq!(frames.last().unwrap()["subtype"], "success");
    for (file, text) in [("a.txt", "a"), ("b.txt", "b")] {
        assert_eq!(
            std::fs::read_to_string(env.work.path().join(file)).unwrap(),
            text
        );
    }
}

/// A prompt cox cannot take, sent while a turn runs, gets its error result
/// after that turn's, in its place; being the last, the exit is 1.
#[test]
fn a_refused_prompt_s_result_comes_in_its_place() {
    let env = Env::new();
    let out = sdk(
        &env,
        &scenario("hello"),
        &["--permission-mode", "acceptEdits"],
        &[
            INIT,
            HELLO,
            r#"{"type":"user","session_id":"","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"!!!"}}]},"parent_tool_use_id":null}"#,
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let results: Vec<Value> = frames(&out)
        .into_iter()
        .filter(|f| f["type"] == "result")
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0]["result"], "Created hello.txt.");
    assert_eq!(results[1]["is_error"], true);
    assert!(
        results[1]["errors"][0]
            .as_str()
            .unwrap()
            .contains("holds an image cox cannot take"),
        "{results:?}"
    );
}

/// The script's PreToolUse hook cannot be asked once stdin has closed: the
/// call it was registered to judge is refused, not let through.
#[test]
fn a_script_hook_that_cannot_be_asked_refuses_the_call() {
    let env = Env::new();
    std::fs::write(env.work.path().join("important.txt"), "keep\n").unwrap();
    let script = script(
        &env,
        "rm.toml",
        "[[turn]]\n[[turn.tool_call]]\nname = \"bash\"\ninput = { command = \"rm important.txt\" }\n\n\
         [[turn]]\ntext = \"done\"\n[turn.expect]\ntool_result_contains = \"could not be asked\"\n",
    );
    let out = sdk(
        &env,
        &script,
        &["--allowedTools", "Bash"],
        &[
            r#"{"type":"control_request","request_id":"r1","request":{"subtype":"initialize","hooks":{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["guard"]}]}}}"#,
            r#"{"type":"user","session_id":"","message":{"role":"user","content":"clean up"},"parent_tool_use_id":null}"#,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(env.work.path().join("important.txt").exists());
    let result = frames(&out).pop().unwrap();
    assert_eq!(result["result"], "done", "{result}");
}

/// What an interrupted response had streamed is not the next turn's: the
/// second turn's frames and result hold only its own answer.
#[test]
fn an_interrupted_response_leaves_nothing_in_the_next_turn() {
    let env = Env::new();
    let script = script(
        &env,
        "slow_then.toml",
        "[[turn]]\ndelay_ms = 100\ntext = \"one two three four five six seven eight nine ten\"\n\n\
         [[turn]]\ntext = \"second\"\n",
    );
    let mut live = Live::start(&env, &script);
    live.send(r#"{"type":"control_request","request_id":"r9","request":{"subtype":"set_model","model":""}}"#);
    let refused = live
        .until(|f| f["response"]["request_id"] == "r9")
        .pop()
        .unwrap();
    assert_eq!(refused["response"]["subtype"], "error", "{refused}");
    live.prompt("first");
    std::thread::sleep(std::time::Duration::from_millis(350));
    live.send(r#"{"type":"control_request","request_id":"r2","request":{"subtype":"interrupt"}}"#);
    live.prompt("again");
    let frames = live.until(|f| f["type"] == "result" && f["result"] == "second");
    let out = live.end();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results: Vec<&Value> = frames.iter().filter(|f| f["type"] == "result").collect();
    assert_eq!(results.len(), 2, "{frames:?}");
    assert_eq!(results[0]["subtype"], "error_during_execution");
    let last = frames.iter().rfind(|f| f["type"] == "assistant").unwrap();
    assert_eq!(
        last["message"]["content"],
        serde_json::json!([{"type": "text", "text": "second"}]),
        "{last}"
    );
}

/// A call the script's PreToolUse hook rewrites is the same call, asked
/// about with its new input (not taken for a second call with its id).
#[test]
fn a_call_a_hook_rewrote_is_asked_about_as_rewritten() {
    let env = Env::new();
    let script = script(
        &env,
        "hooked.toml",
        "[[turn]]\n[[turn.tool_call]]\nname = \"bash\"\ninput = { command = \"echo original > out.txt\" }\n\n\
         [[turn]]\ntext = \"done\"\n",
    );
    let mut live = Live::start_with(
        &env,
        &script,
        r#"{"type":"control_request","request_id":"r1","request":{"subtype":"initialize","hooks":{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["rw"]}]}}}"#,
    );
    live.prompt("write it");
    // The hook rewrites the command; the rewritten call is decided again,
    // the hook asked again (and content with it this time).
    let ask = loop {
        let frame = live
            .until(|f| {
                f["request"]["subtype"] == "hook_callback" || is_ask(f) || f["type"] == "result"
            })
            .pop()
            .unwrap();
        if frame["request"]["subtype"] != "hook_callback" {
            break frame;
        }
        let output =
            if frame["request"]["input"]["tool_input"]["command"] == "echo original > out.txt" {
                serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "updatedInput": {"command": "echo rewritten > out.txt"}}})
            } else {
                serde_json::json!({})
            };
        live.send(&answer(&frame, output));
    };
    assert!(is_ask(&ask), "no ask: {ask}");
    assert_eq!(
        ask["request"]["input"]["command"],
        "echo rewritten > out.txt"
    );
    live.send(&answer(&ask, serde_json::json!({"behavior": "allow"})));
    let frames = live.finish();
    let assistants: Vec<&Value> = frames.iter().filter(|f| f["type"] == "assistant").collect();
    assert_eq!(
        assistants.last().unwrap()["message"]["content"],
        serde_json::json!([{"type": "text", "text": "done"}]),
        "no stray block: {frames:?}"
    );
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("out.txt")).unwrap(),
        "rewritten\n"
    );
}

/// An ask too long for the SDK's line is shown cut: echoing that input
/// back allows the whole call as the model made it; rewriting it is
/// refused, since what was rewritten was not the whole input.
#[test]
fn an_ask_shown_cut_runs_whole_when_echoed_and_refuses_a_rewrite() {
    let env = Env::new();
    let big = "x".repeat(1_200_000);
    let script = script(
        &env,
        "big.toml",
        &format!(
            "[[turn]]\n[[turn.tool_call]]\nname = \"write\"\ninput = {{ path = \"big.txt\", content = \"{big}\" }}\n\
             [[turn.tool_call]]\nname = \"write\"\ninput = {{ path = \"other.txt\", content = \"{big}\" }}\n\n\
             [[turn]]\ntext = \"done\"\n"
        ),
    );
    let mut live = Live::start(&env, &script);
    live.prompt("write them");
    for rewrite in [false, true] {
        let ask = live.until(is_ask).pop().unwrap();
        let mut shown = ask["request"]["input"].clone();
        assert!(
            shown["content"]
                .as_str()
                .unwrap()
                .ends_with("[cut here to fit the frame]"),
            "shown cut"
        );
        if rewrite {
            shown["content"] = serde_json::json!("short");
        }
        live.send(&answer(
            &ask,
            serde_json::json!({"behavior": "allow", "updatedInput": shown}),
        ));
    }
    live.finish();
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("big.txt")).unwrap(),
        big
    );
    assert!(!env.work.path().join("other.txt").exists());
}

/// A mode widened by an approval reaches no call decided before it: the
/// subagent of an agent call decided under default still asks, though a
/// later call of the message switched the session to bypassPermissions.
#[test]
fn a_subagent_keeps_the_narrower_mode_its_call_was_decided_under() {
    let env = Env::new();
    let script = script(
        &env,
        "agent_then_bash.toml",
        "[[turn]]\n\
         [[turn.tool_call]]\nname = \"agent\"\ninput = { description = \"touch it\", prompt = \"Touch child.txt.\" }\n\
         [[turn.tool_call]]\nname = \"bash\"\ninput = { command = \"touch parent.txt\" }\n\n\
         [[turn]]\ntext = \"done\"\n\n\
         [[agent]]\ndescription = \"touch it\"\n\
         [[agent.turn]]\n[[agent.turn.tool_call]]\nname = \"bash\"\ninput = { command = \"touch child.txt\" }\n\
         [[agent.turn]]\ntext = \"could not\"\n",
    );
    let mut live = Live::spawn(
        &env,
        &script,
        INIT,
        &["--allow-dangerously-skip-permissions"],
    );
    live.prompt("go");
    let mut child_asked = false;
    live.answer_asks(|ask| {
        let id = ask["request"]["tool_use_id"].as_str().unwrap();
        if id.contains('/') {
            child_asked = true;
            serde_json::json!({"behavior": "deny", "message": "no"})
        } else if ask["request"]["tool_name"] == "Bash" {
            serde_json::json!({"behavior": "allow", "updatedPermissions": [
                {"type": "setMode", "mode": "bypassPermissions", "destination": "session"}]})
        } else {
            serde_json::json!({"behavior": "allow"})
        }
    });
    assert!(child_asked, "the subagent's call was not asked about");
    assert!(env.work.path().join("parent.txt").exists());
    assert!(!env.work.path().join("child.txt").exists());
}

/// Answers every hook callback with `hook` (given the request), and every
/// ask with a deny, until the turn's result; the asks seen.
fn answer_hooks(live: &mut Live, hook: impl Fn(&Value) -> Value) -> Vec<Value> {
    let mut asks = Vec::new();
    loop {
        let frame = live
            .until(|f| {
                f["request"]["subtype"] == "hook_callback" || is_ask(f) || f["type"] == "result"
            })
            .pop()
            .unwrap();
        if frame["type"] == "result" {
            return asks;
        }
        let response = if is_ask(&frame) {
            asks.push(frame.clone());
            serde_json::json!({"behavior": "deny", "message": "no"})
        } else {
            hook(&frame)
        };
        live.send(&answer(&frame, response));
    }
}

const GUARD_WRITES: &str = r#"{"type":"control_request","request_id":"r1","request":{"subtype":"initialize","hooks":{"PreToolUse":[{"matcher":"Write","hookCallbackIds":["guard"]}]}}}"#;

/// The script's hooks judge a subagent's calls as they do the session's.
#[test]
fn the_script_s_hooks_judge_a_subagent_s_calls() {
    let env = Env::new();
    let mut live = Live::start_with(&env, &scenario("subagent_write"), GUARD_WRITES);
    live.prompt("write notes");
    let seen = std::sync::Mutex::new(Vec::new());
    let asks = answer_hooks(&mut live, |request| {
        seen.lock()
            .unwrap()
            .push(request["request"]["input"].clone());
        serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": "not today"}})
    });
    let out = live.end();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(asks.is_empty(), "{asks:?}");
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(
        seen[0]["tool_input"]["file_path"]
            .as_str()
            .unwrap()
            .ends_with("/notes.txt"),
        "{seen:?}"
    );
    // Told, as Claude Code tells it, which subagent the call is in.
    assert_eq!(seen[0]["agent_type"], "general-purpose", "{seen:?}");
    assert!(seen[0]["agent_id"].is_string(), "{seen:?}");
    assert_ne!(seen[0]["agent_id"], seen[0]["session_id"], "{seen:?}");
    assert!(!env.work.path().join("notes.txt").exists());
}

/// An interrupt while a subagent's start hooks run ends its task too: the
/// task was queued before the interrupt, and never runs once the hooks
/// are cut short (the session goes on, so a task run late would land).
#[test]
fn an_interrupt_while_a_subagent_s_start_hooks_run_stops_its_task() {
    let env = Env::new();
    let started = env.work.path().join("hook-started");
    env.claude_settings(&serde_json::json!({"hooks": {"SubagentStart": [{"hooks": [
        {"type": "command", "command": format!("touch {}; sleep 3", started.display())}
    ]}]}}));
    let mut live = Live::spawn(
        &env,
        &scenario("subagent_late_write"),
        INIT,
        &["--permission-mode", "acceptEdits"],
    );
    live.prompt("go");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the SubagentStart hook never ran"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    live.send(r#"{"type":"control_request","request_id":"r2","request":{"subtype":"interrupt"}}"#);
    let result = live.until(|f| f["type"] == "result").pop().unwrap();
    assert_eq!(result["subtype"], "error_during_execution", "{result}");
    // A task run late would write within milliseconds of the interrupt.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let late = env.work.path().join("late.txt");
    let out = live.end();
    // 1: the last result was an error, as Claude Code exits.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        !late.exists(),
        "the subagent ran its task after the interrupt"
    );
}

/// A patch is shown to the script's hooks once per file it writes, with
/// that file as `file_path`, as to a command hook: a guard on one file
/// refuses the whole patch.
#[test]
fn the_script_s_hook_sees_each_file_a_patch_writes() {
    let env = Env::new();
    std::fs::write(env.work.path().join("open.txt"), "a\n").unwrap();
    std::fs::write(env.work.path().join("protected.txt"), "secret\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: open.txt\n@@\n-a\n+b\n\
                 *** Update File: protected.txt\n@@\n-secret\n+pwned\n*** End Patch";
    let script = script(
        &env,
        "patch.toml",
        &format!(
            "[[turn]]\n[[turn.tool_call]]\nname = \"apply_patch\"\ninput = {{ patch = {patch:?} }}\n\n\
             [[turn]]\ntext = \"done\"\n"
        ),
    );
    let guard = r#"{"type":"control_request","request_id":"r1","request":{"subtype":"initialize","hooks":{"PreToolUse":[{"matcher":"Edit","hookCallbackIds":["guard"]}]}}}"#;
    let mut live = Live::spawn(&env, &script, guard, &["--permission-mode", "acceptEdits"]);
    live.prompt("patch it");
    let seen = std::sync::Mutex::new(Vec::new());
    let asks = answer_hooks(&mut live, |request| {
        let path = request["request"]["input"]["tool_input"]["file_path"].clone();
        seen.lock().unwrap().push(path.clone());
        if path.as_str().is_some_and(|p| p.ends_with("/protected.txt")) {
            serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": "protected"}})
        } else {
            serde_json::json!({})
        }
    });
    let out = live.end();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(asks.is_empty(), "{asks:?}");
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 2, "one callback per file: {seen:?}");
    assert!(
        seen.iter()
            .any(|p| p.as_str().unwrap().ends_with("/open.txt"))
    );
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("protected.txt")).unwrap(),
        "secret\n"
    );
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("open.txt")).unwrap(),
        "a\n",
        "the patch is refused whole"
    );
}

/// A callback shown a cut input may still refuse: its deny holds though
/// the rewrite beside it is not taken.
#[test]
fn a_hook_s_deny_holds_when_its_input_was_cut() {
    let env = Env::new();
    let big = "x".repeat(1_200_000);
    let script = script(
        &env,
        "big_write.toml",
        &format!(
            "[[turn]]\n[[turn.tool_call]]\nname = \"write\"\ninput = {{ path = \"big.txt\", content = \"{big}\" }}\n\n\
             [[turn]]\ntext = \"done\"\n"
        ),
    );
    let mut live = Live::start_with(&env, &script, GUARD_WRITES);
    live.prompt("write it");
    let asks = answer_hooks(&mut live, |request| {
        serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": "too big",
            "updatedInput": request["request"]["input"]["tool_input"]}})
    });
    let out = live.end();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(asks.is_empty(), "asked: the deny was lost");
    assert!(!env.work.path().join("big.txt").exists());
}

/// The SDK may switch to bypassPermissions only where the session allows
/// it: started in it, or with --allow-dangerously-skip-permissions.
#[test]
fn bypass_permissions_is_the_sdk_s_to_choose_only_when_allowed() {
    let env = Env::new();
    let bypass = r#"{"type":"control_request","request_id":"b1","request":{"subtype":"set_permission_mode","mode":"bypassPermissions"}}"#;
    for (flags, allowed) in [
        (&[][..], false),
        (&["--permission-mode", "acceptEdits"][..], false),
        (&["--allow-dangerously-skip-permissions"][..], true),
        (&["--permission-mode", "bypassPermissions"][..], true),
    ] {
        let out = sdk(&env, &scenario("hello"), flags, &[INIT, bypass]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let answer = frames(&out)
            .into_iter()
            .find(|f| f["response"]["request_id"] == "b1")
            .unwrap();
        if allowed {
            assert_eq!(
                answer["response"]["subtype"], "success",
                "{flags:?}: {answer}"
            );
        } else {
            assert!(
                answer["response"]["error"]
                    .as_str()
                    .unwrap()
                    .contains("--allow-dangerously-skip-permissions"),
                "{flags:?}: {answer}"
            );
        }
    }
    // Without the SDK's protocol the flag means nothing, and is refused.
    let out = env
        .cox()
        .args(["run", "-p", "x", "--allow-dangerously-skip-permissions"])
        .output()
        .unwrap();
    assert_one_line_error(
        &out,
        "--allow-dangerously-skip-permissions goes with --input-format",
    );
}

/// Leaving a sandbox that works is a person's call each time: an "allow
/// for the session" grants the command, not the way out, so a later call
/// that asks to leave is asked about again, and once allowed it does run
/// outside (it used to run confined, and fail).
#[test]
fn leaving_a_working_sandbox_is_asked_each_time_and_runs_outside_once_allowed() {
    if !std::path::Path::new("/usr/bin/bwrap").exists() {
        assert!(std::env::var_os("CI").is_none(), "CI must have bwrap");
        eprintln!("skipped: bwrap is not installed");
        return;
    }
    let env = Env::new();
    let outside = tempfile::tempdir().unwrap();
    let out_dir = outside.path().display().to_string();
    let script = script(
        &env,
        "outside.toml",
        &format!(
            "[[turn]]\n[[turn.tool_call]]\nname = \"bash\"\ninput = {{ command = \"touch {out_dir}/a\", unsandboxed = true }}\n\n\
             [[turn]]\n[[turn.tool_call]]\nname = \"bash\"\ninput = {{ command = \"touch {out_dir}/b\", unsandboxed = true }}\n\n\
             [[turn]]\ntext = \"done\"\n"
        ),
    );
    let mut live = Live::start(&env, &script);
    live.prompt("touch both");
    let mut first = true;
    let mut asks = 0;
    live.answer_asks(|ask| {
        asks += 1;
        assert!(
            ask["request"]["input"]["dangerouslyDisableSandbox"] == true,
            "{ask}"
        );
        let response = if first {
            serde_json::json!({"behavior": "allow", "updatedPermissions": [{"type": "addRules",
                "rules": [{"toolName": "Bash"}], "behavior": "allow", "destination": "session"}]})
        } else {
            serde_json::json!({"behavior": "allow"})
        };
        first = false;
        response
    });
    assert_eq!(asks, 2, "the second call was not asked about");
    assert!(outside.path().join("a").exists());
    assert!(
        outside.path().join("b").exists(),
        "the second call ran confined"
    );
}

/// A session the SDK left in bypassPermissions does not resume in it
/// without the same opt-in a switch needs.
#[test]
fn a_session_left_in_bypass_resumes_only_with_the_opt_in() {
    let env = Env::new();
    let bypass = r#"{"type":"control_request","request_id":"b1","request":{"subtype":"set_permission_mode","mode":"bypassPermissions"}}"#;
    let out = sdk(
        &env,
        &scenario("hello"),
        &["--allow-dangerously-skip-permissions"],
        &[INIT, bypass, HELLO],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let session = frames(&out).pop().unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let again = sdk(&env, &scenario("hello"), &["--resume", &session], &[INIT]);
    assert_one_line_error(&again, "left in bypassPermissions");
    let again = sdk(
        &env,
        &scenario("hello"),
        &["--resume", &session, "--allow-dangerously-skip-permissions"],
        &[INIT],
    );
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
}

/// A subagent working in a worktree of its own is asked about with the
/// paths it really writes, and a rewrite is read back in its worktree.
#[test]
fn a_worktree_subagent_s_ask_names_the_file_in_its_worktree() {
    let env = Env::new();
    let repo = common::git_repo(&env, "from main\n");
    let code = repo.parent().unwrap().to_path_buf();
    let mut live = Live::spawn(
        &env,
        &scenario("subagent_isolated"),
        INIT,
        &["--cwd", repo.to_str().unwrap()],
    );
    live.prompt("write it apart");
    // The agent call that makes a worktree is asked about first.
    let frames = live.until(|f| is_ask(f) || f["type"] == "result");
    let task = frames.last().unwrap().clone();
    assert_eq!(task["request"]["tool_name"], "Task", "{frames:?}");
    live.send(&answer(&task, serde_json::json!({"behavior": "allow"})));
    let frames = live.until(|f| is_ask(f) || f["type"] == "result");
    let ask = frames.last().unwrap().clone();
    assert_eq!(ask["request"]["tool_name"], "Write", "{frames:?}");
    let worktree = code
        .join("_worktrees/repo-task-toolu_1_1")
        .canonicalize()
        .unwrap();
    let path = ask["request"]["input"]["file_path"].as_str().unwrap();
    assert_eq!(
        path,
        worktree.join("iso.txt").display().to_string(),
        "{ask}"
    );
    // A rewrite naming a relative path lands in the worktree too.
    live.send(&answer(
        &ask,
        serde_json::json!({"behavior": "allow",
                           "updatedInput": {"file_path": "other.txt", "content": "moved\n"}}),
    ));
    live.answer_asks(|_| serde_json::json!({"behavior": "allow"}));
    assert_eq!(
        std::fs::read_to_string(worktree.join("other.txt")).unwrap(),
        "moved\n"
    );
    assert!(!repo.join("other.txt").exists());
}

/// A settings file's `disableBypassPermissionsMode` holds against the
/// SDK's switch too: the mode stays, and the session says why.
#[test]
fn a_settings_file_that_turns_bypass_off_holds_against_the_sdk_switch() {
    let env = Env::new();
    env.claude_settings(&serde_json::json!({
        "permissions": {"disableBypassPermissionsMode": "disable"}
    }));
    let bypass = r#"{"type":"control_request","request_id":"b1","request":{"subtype":"set_permission_mode","mode":"bypassPermissions"}}"#;
    let out = sdk(
        &env,
        &scenario("hello"),
        &["--allow-dangerously-skip-permissions"],
        &[INIT, bypass, HELLO],
    );
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(
        !env.work.path().join("hello.txt").exists(),
        "the write ran in bypass: {all}"
    );
    assert!(
        all.contains("bypassPermissions is turned off here"),
        "{all}"
    );
}
