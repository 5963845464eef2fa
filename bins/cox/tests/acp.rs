//! `cox acp` from outside: JSON-RPC lines on its stdin, every stdout line
//! read back as JSON (a line that is not fails the test), through the
//! scripted provider: a prompt with a permission request, a rejection, a
//! cancel mid-tool, a session loaded again, and bad input.

mod common;

use std::io::Write as _;
use std::time::{Duration, Instant};

use common::Env;
use common::acp::{Acp, choose, updates};
use serde_json::json;

#[test]
fn a_prompt_asks_writes_and_ends_its_turn() {
    let env = Env::new();
    let mut acp = Acp::start(&env, "hello", &[]);
    let init = acp.initialize();
    assert_eq!(init["result"]["protocolVersion"], 1);
    assert_eq!(init["result"]["agentCapabilities"]["loadSession"], true);
    assert_eq!(init["result"]["agentInfo"]["name"], "cox");
    let session = acp.new_session(&env);
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "create hello.txt"}]}),
    );
    let mut asked = 0;
    let mut allow = choose("allow_once");
    let (answer, seen) = acp.response(id, |request| {
        asked += 1;
        assert_eq!(request["params"]["toolCall"]["kind"], "edit");
        allow(request)
    });
    assert_eq!(asked, 1);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    let call = updates(&seen, "tool_call");
    assert_eq!(call[0]["kind"], "edit");
    assert!(
        call[0]["locations"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("hello.txt")
    );
    let done = updates(&seen, "tool_call_update");
    assert_eq!(done.last().unwrap()["status"], "completed");
    let text: String = updates(&seen, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Created hello.txt.");
    assert_eq!(acp.finish(), 0);
    // The session's record is complete.
    let rollouts = env.rollouts();
    assert_eq!(rollouts.len(), 1);
    let rollout = std::fs::read_to_string(&rollouts[0]).unwrap();
    assert!(rollout.contains("\"turn_done\""), "{rollout}");
}

#[test]
fn a_rejected_call_does_not_run_and_the_turn_goes_on() {
    let env = Env::new();
    let mut acp = Acp::start(&env, "rejected", &[]);
    acp.initialize();
    let session = acp.new_session(&env);
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "create hello.txt"}]}),
    );
    let (answer, seen) = acp.response(id, choose("reject_once"));
    assert!(!env.work.path().join("hello.txt").exists());
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        updates(&seen, "tool_call_update").last().unwrap()["status"],
        "failed"
    );
    let text: String = updates(&seen, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "You did not want hello.txt written.");
    assert_eq!(acp.finish(), 0);
}

/// A turn that fails is a JSON-RPC error saying why, not a quiet end.
#[test]
fn a_failed_turn_is_an_error_with_its_reason() {
    let env = Env::new();
    // hello scripts one turn: a second prompt finds no answer.
    let mut acp = Acp::start(&env, "hello", &["--permission-mode", "acceptEdits"]);
    acp.initialize();
    let session = acp.new_session(&env);
    let prompt =
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "create hello.txt"}]});
    let id = acp.request("session/prompt", prompt.clone());
    let (first, _) = acp.response(id, |r| panic!("unexpected request {r}"));
    assert_eq!(first["result"]["stopReason"], "end_turn", "{first}");
    let id = acp.request("session/prompt", prompt);
    let (second, _) = acp.response(id, |r| panic!("unexpected request {r}"));
    assert_eq!(second["error"]["code"], -32603, "{second}");
    assert!(
        second["error"]["data"]
            .as_str()
            .unwrap()
            .contains("the model call failed"),
        "{second}"
    );
    assert_eq!(acp.finish(), 0);
}

/// One process opens a session once; a mode switch waits for no turn.
#[test]
fn a_session_opens_once_and_its_mode_changes_between_turns() {
    let env = Env::new();
    let mut acp = Acp::start(
        &env,
        "interrupt_tool",
        &["--permission-mode", "bypassPermissions"],
    );
    acp.initialize();
    let session = acp.new_session(&env);
    let cwd = env.work.path().canonicalize().unwrap();
    let again = acp.call(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    assert_eq!(again["error"]["code"], -32600, "{again}");
    assert!(
        again["error"]["data"]
            .as_str()
            .unwrap()
            .contains("already open"),
        "{again}"
    );
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "run the long thing"}]}),
    );
    loop {
        let line = acp.recv();
        if line["params"]["update"]["status"] == "in_progress" {
            break;
        }
    }
    let mode = acp.call(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "default"}),
    );
    assert_eq!(mode["error"]["code"], -32600, "{mode}");
    acp.send(
        &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
    );
    let (answer, _) = acp.response(id, |r| panic!("unexpected request {r}"));
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    let mode = acp.call(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "default"}),
    );
    assert!(mode.get("error").is_none(), "{mode}");
    assert_eq!(acp.finish(), 0);
}

/// A byte that is not UTF-8 spoils one message, not the connection; the
/// filesystem's root is no project.
#[test]
fn a_bad_byte_and_the_root_folder_are_refused_and_the_server_goes_on() {
    let env = Env::new();
    let mut acp = Acp::start(&env, "hello", &[]);
    acp.initialize();
    {
        let stdin = acp.stdin.as_mut().unwrap();
        stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":100,\"method\":\"session/fly\",\"params\":{\"x\":\"\xff\"}}\n")
            .unwrap();
        stdin.flush().unwrap();
    }
    let answer = acp.recv();
    assert_eq!(answer["id"], 100, "{answer}");
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    let root = acp.call("session/new", json!({"cwd": "/", "mcpServers": []}));
    assert_eq!(root["error"]["code"], -32602, "{root}");
    let auth = acp.call("authenticate", json!({"methodId": "bogus"}));
    assert_eq!(auth["error"]["code"], -32602, "{auth}");
    // Still serving.
    acp.new_session(&env);
    assert_eq!(acp.finish(), 0);
}

#[test]
fn a_permission_request_the_client_cancels_cancels_the_turn() {
    let env = Env::new();
    let mut acp = Acp::start(&env, "hello", &[]);
    acp.initialize();
    let session = acp.new_session(&env);
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "create hello.txt"}]}),
    );
    let (answer, _) = acp.response(id, |_| json!({"outcome": {"outcome": "cancelled"}}));
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    assert!(!env.work.path().join("hello.txt").exists());
    assert_eq!(acp.finish(), 0);
}

#[test]
fn cancel_mid_tool_ends_the_turn_cancelled_with_no_process_left() {
    let env = Env::new();
    let mut acp = Acp::start(
        &env,
        "interrupt_tool",
        &["--permission-mode", "bypassPermissions"],
    );
    acp.initialize();
    let session = acp.new_session(&env);
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "run the long thing"}]}),
    );
    // The command runs once its output comes.
    loop {
        let line = acp.recv();
        if line["params"]["update"]["status"] == "in_progress" {
            break;
        }
        assert_ne!(line["id"], id, "the turn ended before the cancel: {line}");
    }
    let began = Instant::now();
    acp.send(
        &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
    );
    let (answer, _) = acp.response(id, |r| panic!("unexpected request {r}"));
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    assert!(began.elapsed() < Duration::from_secs(5));
    let work = env.work.path().canonicalize().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while let Some(pid) = common::sleep_31_in(&work) {
        assert!(
            Instant::now() < deadline,
            "process {pid} outlived the cancel"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(acp.finish(), 0);
}

#[test]
fn a_session_loaded_again_replays_its_conversation_first() {
    let env = Env::new();
    let mut acp = Acp::start(&env, "hello", &["--permission-mode", "acceptEdits"]);
    acp.initialize();
    let session = acp.new_session(&env);
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "create hello.txt"}]}),
    );
    acp.response(id, |r| panic!("unexpected request {r}"));
    assert_eq!(acp.finish(), 0);

    let mut again = Acp::start(&env, "hello", &[]);
    again.initialize();
    let cwd = env.work.path().canonicalize().unwrap();
    let id = again.request(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    let (answer, seen) = again.response(id, |r| panic!("unexpected request {r}"));
    assert!(answer.get("error").is_none(), "{answer}");
    let user: Vec<&str> = updates(&seen, "user_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(user, ["create hello.txt"]);
    assert_eq!(updates(&seen, "tool_call").len(), 1);
    let text: String = updates(&seen, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Created hello.txt.");
    assert_eq!(again.finish(), 0);
    assert_eq!(
        env.rollouts().len(),
        1,
        "loading continues the same session"
    );
}

#[test]
fn bad_input_gets_json_rpc_errors_never_a_crash() {
    let env = Env::new();
    let mut acp = Acp::start(&env, "hello", &[]);
    // A request before initialize.
    let early = acp.call("session/new", json!({"cwd": "/", "mcpServers": []}));
    assert_eq!(early["error"]["code"], -32600, "{early}");
    acp.initialize();
    // A line that is not JSON.
    acp.write("{not json");
    let parse = acp.recv();
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    // An unknown method.
    let unknown = acp.call("session/fly", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    // A prompt for a session that does not exist.
    let cwd = env.work.path().canonicalize().unwrap();
    let unknown = acp.call(
        "session/load",
        json!({"sessionId": "01NOSUCHSESSION0000000000", "cwd": cwd, "mcpServers": []}),
    );
    assert_eq!(unknown["error"]["code"], -32002, "{unknown}");
    let missing = acp.call(
        "session/prompt",
        json!({"sessionId": "nope", "prompt": [{"type": "text", "text": "x"}]}),
    );
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    // A relative cwd, and one that does not exist.
    for cwd in ["relative/dir", "/no/such/folder/anywhere"] {
        let refused = acp.call("session/new", json!({"cwd": cwd, "mcpServers": []}));
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(
            refused["error"]["data"].as_str().unwrap().contains(cwd),
            "{refused}"
        );
    }
    // An unknown mode.
    let session = acp.new_session(&env);
    let mode = acp.call(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "yolo"}),
    );
    assert_eq!(mode["error"]["code"], -32602, "{mode}");
    let mode = acp.call(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "acceptEdits"}),
    );
    assert!(mode.get("error").is_none(), "{mode}");
    assert_eq!(acp.finish(), 0);
}

#[test]
fn flags_an_editor_sets_per_session_are_refused() {
    let env = Env::new();
    for (flags, needle) in [
        (&["acp", "-p", "x"][..], "cox acp does not take -p"),
        (&["acp", "--cwd", "/tmp"][..], "cox acp does not take --cwd"),
    ] {
        let out = env.cox().args(flags).output().unwrap();
        common::assert_one_line_error(&out, needle);
    }
}

#[test]
fn the_model_is_a_config_option_the_client_may_switch() {
    let env = Env::new();
    let mut acp = Acp::start(&env, "hello", &[]);
    acp.initialize();
    let cwd = env.work.path().canonicalize().unwrap();
    let answer = acp.call("session/new", json!({"cwd": cwd, "mcpServers": []}));
    let session = answer["result"]["sessionId"].as_str().unwrap().to_owned();
    let option = &answer["result"]["configOptions"][0];
    assert_eq!(option["id"], "model", "{answer}");
    assert_eq!(option["category"], "model");
    assert_eq!(option["currentValue"], "scripted");
    assert!(
        option["options"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["value"] == "scripted")
    );
    let modes = &answer["result"]["modes"];
    assert_eq!(modes["currentModeId"], "default");
    let refused = acp.call(
        "session/set_config_option",
        json!({"sessionId": session, "configId": "model", "value": "no-such-model"}),
    );
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let picked = acp.call(
        "session/set_config_option",
        json!({"sessionId": session, "configId": "model", "value": "scripted"}),
    );
    assert_eq!(
        picked["result"]["configOptions"][0]["currentValue"], "scripted",
        "{picked}"
    );
    assert_eq!(acp.finish(), 0);
}

/// A client that never answers a permission request: the wait is bounded
/// (`COX_ACP_PERMISSION_TIMEOUT_MS`), then the turn is cancelled.
#[test]
fn an_unanswered_permission_request_cancels_the_turn_after_the_wait() {
    let env = Env::new();
    let mut child = env.cox();
    let mut acp = {
        child.env("COX_ACP_PERMISSION_TIMEOUT_MS", "300");
        Acp::start_with(child, "hello", &[])
    };
    acp.initialize();
    let session = acp.new_session(&env);
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "create hello.txt"}]}),
    );
    // Read on, never answering the request.
    let answer = loop {
        let line = acp.recv();
        if line["id"] == id && line.get("method").is_none() {
            break line;
        }
    };
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    assert!(!env.work.path().join("hello.txt").exists());
    assert_eq!(acp.finish(), 0);
    let out = env
        .cox()
        .env("COX_ACP_PERMISSION_TIMEOUT_MS", "soon")
        .arg("acp")
        .output()
        .unwrap();
    common::assert_one_line_error(&out, "COX_ACP_PERMISSION_TIMEOUT_MS=soon");
}

#[test]
fn a_subagent_s_ask_reaches_the_editor_and_the_answer_reaches_the_subagent() {
    let env = Env::new();
    let (mut acp, id) = delegate(&env, "subagent_write");
    let mut asked = Vec::new();
    let mut allow = choose("allow_once");
    let (answer, seen) = acp.response(id, |request| {
        asked.push(request["params"]["toolCall"].clone());
        allow(request)
    });
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    // One ask, for the subagent's write, named `<child>/<call>`.
    assert_eq!(asked.len(), 1, "{asked:?}");
    let call_id = asked[0]["toolCallId"].as_str().unwrap();
    let (child, _) = call_id.split_once('/').unwrap();
    assert_eq!(child.len(), 26, "a session id: {call_id}");
    assert_eq!(asked[0]["kind"], "edit");
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("notes.txt")).unwrap(),
        "from the subagent\n"
    );
    // The subagent's call is a card of its own; its text is not the answer.
    let cards = updates(&seen, "tool_call");
    assert!(
        cards.iter().any(|c| c["toolCallId"] == call_id),
        "{cards:?}"
    );
    let text: String = updates(&seen, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "The subagent is done.");
    assert_eq!(acp.finish(), 0);
}

#[test]
fn two_subagents_asking_with_the_same_call_id_each_get_their_own_answer() {
    let env = Env::new();
    let (mut acp, id) = delegate(&env, "subagent_two_asks");
    let mut asked = Vec::new();
    let (answer, _) = acp.response(id, |request| {
        let call = &request["params"]["toolCall"];
        asked.push(call["toolCallId"].as_str().unwrap().to_owned());
        let path = call["rawInput"]["path"].as_str().unwrap();
        let option = if path == "a.txt" {
            "allow_once"
        } else {
            "reject_once"
        };
        json!({"outcome": {"outcome": "selected", "optionId": option}})
    });
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_ne!(asked[0], asked[1], "each ask names its child: {asked:?}");
    assert!(
        asked.iter().all(|id| id.ends_with("/toolu_1_1")),
        "{asked:?}"
    );
    assert!(env.work.path().join("a.txt").exists());
    assert!(!env.work.path().join("b.txt").exists());
    assert_eq!(acp.finish(), 0);
}

#[test]
fn a_grandchild_s_ask_reaches_the_editor_and_its_answer_the_grandchild() {
    let env = Env::new();
    let (mut acp, id) = delegate(&env, "subagent_nested");
    let mut asked = Vec::new();
    let mut allow = choose("allow_once");
    let (answer, _) = acp.response(id, |request| {
        asked.push(request["params"]["toolCall"]["toolCallId"].clone());
        allow(request)
    });
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(asked.len(), 1, "{asked:?}");
    // `<child>/<grandchild>/<call>`.
    assert_eq!(
        asked[0].as_str().unwrap().matches('/').count(),
        2,
        "{asked:?}"
    );
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("c.txt")).unwrap(),
        "c\n"
    );
    assert_eq!(acp.finish(), 0);
}

/// `cox acp` on `scenario_name`, a session opened and the prompt
/// "delegate" sent; the request's id.
fn delegate(env: &Env, scenario_name: &str) -> (Acp, u64) {
    let mut acp = Acp::start(env, scenario_name, &[]);
    acp.initialize();
    let session = acp.new_session(env);
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "delegate"}]}),
    );
    (acp, id)
}

#[test]
fn a_cancel_stops_a_subagent_s_command_while_the_server_lives_on() {
    let env = Env::new();
    let mut acp = Acp::start(
        &env,
        "subagent_sleep",
        &["--permission-mode", "bypassPermissions"],
    );
    acp.initialize();
    let session = acp.new_session(&env);
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "delegate"}]}),
    );
    let work = env.work.path().canonicalize().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while common::sleep_31_in(&work).is_none() {
        assert!(Instant::now() < deadline, "the subagent's sleep never ran");
        std::thread::sleep(Duration::from_millis(50));
    }
    acp.send(
        &json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
    );
    let (answer, _) = acp.response(id, |r| panic!("unexpected request {r}"));
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    // The server is still running: only the subagent's process is gone.
    let deadline = Instant::now() + Duration::from_secs(5);
    while let Some(pid) = common::sleep_31_in(&work) {
        assert!(
            Instant::now() < deadline,
            "process {pid} outlived the cancel"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(acp.finish(), 0);
}

#[test]
fn a_subagent_writes_through_the_editor_s_buffers_as_its_parent_does() {
    let env = Env::new();
    let mut acp = Acp::start(
        &env,
        "subagent_write",
        &["--permission-mode", "acceptEdits"],
    );
    acp.call(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": false, "writeTextFile": true}, "terminal": false}}),
    );
    let session = acp.new_session(&env);
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "delegate"}]}),
    );
    let mut written = Vec::new();
    let (answer, _) = acp.response(id, |request| {
        assert_eq!(request["method"], "fs/write_text_file", "{request}");
        written.push((
            request["params"]["path"].as_str().unwrap().to_owned(),
            request["params"]["content"].as_str().unwrap().to_owned(),
        ));
        json!({})
    });
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].0.ends_with("/notes.txt"), "{written:?}");
    assert_eq!(written[0].1, "from the subagent\n");
    assert!(
        !env.work.path().join("notes.txt").exists(),
        "the write went to the editor, not the disk"
    );
    assert_eq!(acp.finish(), 0);
}

#[test]
fn the_model_s_plan_is_a_plan_update() {
    let env = Env::new();
    let mut acp = Acp::start(&env, "plan", &[]);
    acp.initialize();
    let session = acp.new_session(&env);
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "plan it"}]}),
    );
    let (answer, seen) = acp.response(id, |r| panic!("unexpected request {r}"));
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let plans = updates(&seen, "plan");
    assert_eq!(plans.len(), 1, "{plans:?}");
    let entries = plans[0]["entries"].as_array().unwrap();
    let statuses: Vec<&str> = entries
        .iter()
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["completed", "in_progress", "pending"]);
    assert_eq!(entries[1]["content"], "Write the parser");
    assert_eq!(acp.finish(), 0);
}
