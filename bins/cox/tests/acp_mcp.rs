//! `cox acp` with MCP servers from `session/new`: a server that connects
//! late joins at the next prompt, one that changes its tools mid-session
//! has its new set offered, and what went wrong is said to the editor.

mod common;

use std::time::{Duration, Instant};

use common::Env;
use common::acp::{Acp, choose, updates};
use serde_json::{Value, json};

/// `session/new` in the work folder with `servers`, each the test server
/// (`tests/mcp/fake-server.js`) under node with its name and variables.
fn session_with(acp: &mut Acp, env: &Env, servers: &[(&str, &[(&str, &str)])]) -> String {
    let cwd = env.work.path().canonicalize().unwrap();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/fake-server.js");
    let servers: Vec<Value> = servers
        .iter()
        .map(|(name, vars)| {
            json!({
                "name": name,
                "command": "node",
                "args": [script],
                "env": vars.iter().map(|(n, v)| json!({"name": n, "value": v})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let answer = acp.call("session/new", json!({"cwd": cwd, "mcpServers": servers}));
    answer["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"))
        .to_owned()
}

/// One prompt, its permission requests allowed: the answer, every update
/// seen, and the agent's text.
fn prompt(acp: &mut Acp, session: &str, text: &str) -> (Value, Vec<Value>, String) {
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
    );
    let (answer, seen) = acp.response(id, choose("allow_once"));
    let said: String = updates(&seen, "agent_message_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    (answer, seen, said)
}

fn no_bwrap() -> bool {
    if std::path::Path::new("/usr/bin/bwrap").exists() {
        return false;
    }
    eprintln!("skipped: no bwrap");
    true
}

/// Where a person types, a slow MCP server never holds a prompt, nor the
/// quick ones: the first request goes after at most a second, with the
/// quick server's tools and without the slow one's (a notice says it is
/// still connecting), and once it has connected its tools are in the next
/// request, and its prompts the editor's commands; a server that did not
/// start is said to the editor at once, with its last words.
#[test]
fn a_server_that_connects_late_joins_at_the_next_prompt() {
    if no_bwrap() {
        return;
    }
    let env = Env::new();
    let mut acp = Acp::start(&env, "mcp_late", &[]);
    acp.initialize();
    let session = session_with(
        &mut acp,
        &env,
        &[
            ("late", &[("FAKE_START_MS", "2500"), ("FAKE_PROMPTS", "1")]),
            ("dead", &[("FAKE_MODE", "exit")]),
            ("quick", &[]),
        ],
    );
    let started = Instant::now();
    let (answer, _, said) = prompt(&mut acp, &session, "one");
    assert!(
        started.elapsed() < Duration::from_millis(2400),
        "the first prompt waited for the server: {:?}",
        started.elapsed()
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(said.contains("First, without it."), "{said}");
    // The editor is told, as a marked paragraph of its own.
    assert!(
        said.contains("⚠ MCP servers late are still connecting"),
        "{said}"
    );
    assert!(
        said.contains("⚠ MCP server 'dead' is not available") && said.contains("boom, no config"),
        "{said}"
    );
    // Past the server's 2.5 s, its tools join the next prompt.
    std::thread::sleep(Duration::from_millis(3000).saturating_sub(started.elapsed()));
    let (answer, seen, said) = prompt(&mut acp, &session, "two");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(said.contains("Second, with it."), "{said}");
    // Its prompts are the editor's commands from then on.
    assert!(
        updates(&seen, "available_commands_update")
            .iter()
            .any(|u| u.to_string().contains("\"mcp__late__hello\"")),
        "{seen:?}"
    );
    assert_eq!(acp.finish(), 0);
}

/// A server that adds a tool and a prompt mid-session and says so
/// (`notifications/tools/list_changed`, `…/prompts/list_changed`): from
/// the next prompt the tool is offered, through trust again, and a call to
/// it is answered; the editor is sent the new command, which expands.
#[test]
fn a_tool_and_a_prompt_a_server_adds_mid_session_are_offered_from_the_next_prompt() {
    if no_bwrap() {
        return;
    }
    let env = Env::new();
    let mut acp = Acp::start(&env, "mcp_grows", &[]);
    acp.initialize();
    let session = session_with(&mut acp, &env, &[("g", &[("FAKE_MODE", "grows")])]);
    let (answer, first, _) = prompt(&mut acp, &session, "one");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(!updates(&first, "tool_call_update").is_empty(), "{first:?}");
    // The change reaches the session while it waits for the next prompt.
    std::thread::sleep(Duration::from_millis(300));
    let (answer, second, _) = prompt(&mut acp, &session, "two");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let done = updates(&second, "tool_call_update");
    let last = done.last().unwrap_or_else(|| panic!("{second:?}"));
    let said = last.to_string();
    assert!(
        said.contains("grown here") || said.contains("pending trust for mcp server 'g'"),
        "{said}"
    );
    let commands = updates(&second, "available_commands_update");
    assert!(
        commands
            .iter()
            .any(|u| u.to_string().contains("\"mcp__g__hello\"")),
        "{second:?}"
    );
    let (answer, _, said) = prompt(&mut acp, &session, "/mcp__g__hello world");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(said.contains("Hello done."), "{said}");
    assert_eq!(acp.finish(), 0);
}

/// `session/new` in the work folder with the reference server
/// (`server-everything`), or `None` where it is not installed.
fn everything_session(acp: &mut Acp, env: &Env) -> Option<String> {
    let modules = std::env::var_os("COX_TEST_MCP_NODE_MODULES")?;
    let server = std::path::Path::new(&modules).join(".bin/mcp-server-everything");
    let cwd = env.work.path().canonicalize().unwrap();
    let servers =
        json!([{"name": "every", "command": "node", "args": [server, "stdio"], "env": []}]);
    let answer = acp.call("session/new", json!({"cwd": cwd, "mcpServers": servers}));
    Some(
        answer["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("{answer}"))
            .to_owned(),
    )
}

/// Whether `params` is a valid `CreateElicitationRequest` of the protocol's
/// published schema (checked by Python's jsonschema, as the SDK test does);
/// `None` where neither is installed.
fn schema_says(params: &Value) -> Option<String> {
    let python = std::env::var_os("COX_TEST_ACP_PYTHON")?;
    let schema = std::env::var_os("COX_TEST_ACP_SCHEMA")?;
    let check = "import json, sys, jsonschema\n\
        root = json.load(open(sys.argv[1]))\n\
        root = {'$schema': root['$schema'], '$defs': root['$defs'], '$ref': '#/$defs/CreateElicitationRequest'}\n\
        errors = [e.message for e in jsonschema.Draft202012Validator(root).iter_errors(json.loads(sys.argv[2]))]\n\
        print('; '.join(errors) or 'valid')";
    let out = std::process::Command::new(python)
        .args(["-c", check])
        .arg(schema)
        .arg(params.to_string())
        .output()
        .unwrap();
    Some(
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
            + &String::from_utf8_lossy(&out.stderr),
    )
}

/// A server asks for input mid-call: an editor that fills in forms gets
/// `elicitation/create` (tied to the session, valid by the protocol's
/// schema, with the server's form), and what the person filled in reaches
/// the server, whose result says it.
#[test]
fn an_editor_fills_in_a_servers_form_and_the_server_gets_it() {
    if no_bwrap() {
        return;
    }
    let env = Env::new();
    let mut acp = Acp::start(&env, "mcp_elicit", &[]);
    acp.initialize_with(json!({"elicitation": {"form": {}}}));
    let Some(session) = everything_session(&mut acp, &env) else {
        eprintln!("skipped: COX_TEST_MCP_NODE_MODULES is not set");
        return;
    };
    let mut asked = Vec::new();
    let id = acp.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "fill it"}]}),
    );
    let (answer, seen) = acp.response(id, |request| {
        if request["method"] == "elicitation/create" {
            asked.push(request["params"].clone());
            json!({"action": "accept", "content": {"name": "Ada Lovelace", "check": true, "integer": 7}})
        } else {
            choose("allow_once")(request)
        }
    });
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(asked.len(), 1, "{seen:?}");
    let params = &asked[0];
    assert_eq!(params["mode"], "form", "{params}");
    assert_eq!(params["sessionId"], session.as_str(), "{params}");
    assert!(
        params["message"]
            .as_str()
            .is_some_and(|m| m.contains("MCP server 'every' asks")),
        "{params}"
    );
    assert_eq!(
        params["requestedSchema"]["required"],
        json!(["name"]),
        "{params}"
    );
    if let Some(said) = schema_says(params) {
        assert_eq!(said, "valid", "{params}");
    }
    let done = updates(&seen, "tool_call_update");
    let result = done
        .last()
        .unwrap_or_else(|| panic!("{seen:?}"))
        .to_string();
    assert!(
        result.contains("User provided the requested information")
            && result.contains("Ada Lovelace"),
        "{result}"
    );
    assert_eq!(acp.finish(), 0);
}

/// An editor that does not fill in forms: the ask is declined at once,
/// and the person is told in the agent's message.
#[test]
fn an_editor_without_forms_hears_the_servers_ask_was_declined() {
    if no_bwrap() {
        return;
    }
    let env = Env::new();
    let mut acp = Acp::start(&env, "mcp_elicit", &[]);
    acp.initialize();
    let Some(session) = everything_session(&mut acp, &env) else {
        eprintln!("skipped: COX_TEST_MCP_NODE_MODULES is not set");
        return;
    };
    let (answer, seen, said) = prompt(&mut acp, &session, "fill it");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(
        said.contains("⚠ MCP server 'every' asked for input")
            && said.contains("this editor does not fill in forms, so it was declined"),
        "{said}"
    );
    let done = updates(&seen, "tool_call_update");
    let result = done
        .last()
        .unwrap_or_else(|| panic!("{seen:?}"))
        .to_string();
    assert!(result.to_lowercase().contains("declined"), "{result}");
    assert_eq!(acp.finish(), 0);
}
