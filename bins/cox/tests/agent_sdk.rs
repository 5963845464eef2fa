//! cox driven by the Claude Agent SDK (PyPI `claude-agent-sdk`, its own
//! transport and message parser) through `cli_path`, with the scripted
//! provider (`tests/agent_sdk/driver.py`): `query()` with a string
//! prompt; `ClaudeSDKClient` with two turns over one process; a
//! `can_use_tool` callback that denies one call and rewrites another's
//! input; an interrupt mid-tool; a resume of an earlier session; a
//! structured-output query whose first answer does not validate; a tool
//! of an in-process SDK MCP server called by the scripted model; a
//! PreToolUse hook registered through the SDK refusing a call; an agent
//! the script defines run as a subagent; and the npm SDK
//! (`@anthropic-ai/claude-agent-sdk`, `tests/agent_sdk/driver.mjs`) with a
//! string prompt and a `canUseTool` callback. Every
//! frame cox prints is parsed by the SDK; one it cannot parse fails the
//! case.
//!
//! `COX_TEST_SDK_PYTHON` names a Python with `claude-agent-sdk` (`.ci/run`
//! installs one outside the repository). Without it the test says so and
//! does nothing, unless `CI` is set: there it fails.

mod common;

use std::path::Path;
use std::process::Output;

use common::{Env, scenario, stderr};

fn python() -> Option<String> {
    match std::env::var("COX_TEST_SDK_PYTHON")
        .ok()
        .filter(|v| !v.is_empty())
    {
        Some(python) => Some(python),
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run this test: set COX_TEST_SDK_PYTHON"
            );
            eprintln!(
                "skipped: set COX_TEST_SDK_PYTHON (a Python with claude-agent-sdk) to run it"
            );
            None
        }
    }
}

fn driver(env: &Env, python: &str, case: &str, scenario_name: &str, session: &str) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/agent_sdk/driver.py");
    let work = env.work.path().canonicalize().unwrap();
    let mut cox = env.cox();
    cox.env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario(scenario_name))
        .env("CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK", "1");
    let mut command = std::process::Command::new(python);
    for (key, value) in cox.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    command
        .env_remove("PYTHONPATH")
        .current_dir(&work)
        .arg(script)
        .args([case, env!("CARGO_BIN_EXE_cox")])
        .arg(&work)
        .arg(session)
        .output()
        .unwrap()
}

fn session_of(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(out));
    let line = text.lines().rfind(|l| l.starts_with("ok ")).unwrap();
    line.split_whitespace().nth(1).unwrap().to_owned()
}

#[test]
fn query_and_a_two_turn_client_run_and_every_frame_parses() {
    let Some(python) = python() else { return };
    let env = Env::new();
    let session = session_of(&driver(&env, &python, "query", "hello", ""));
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    // The session the SDK was told of goes on where it was.
    let resumed = session_of(&driver(&env, &python, "resume", "sdk_resumed", &session));
    assert_eq!(resumed, session);
    let other = Env::new();
    session_of(&driver(&other, &python, "client", "two_turns", ""));
}

#[test]
fn a_permission_callback_denies_one_call_and_rewrites_another() {
    let Some(python) = python() else { return };
    let env = Env::new();
    std::fs::write(env.work.path().join("important.txt"), "keep\n").unwrap();
    session_of(&driver(&env, &python, "callback", "sdk_callback", ""));
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("out.txt")).unwrap(),
        "rewritten\n"
    );
}

#[test]
fn a_structured_output_query_is_asked_again_once_and_returns_the_json() {
    let Some(python) = python() else { return };
    let env = Env::new();
    session_of(&driver(&env, &python, "structured", "sdk_structured", ""));
}

#[test]
fn an_sdk_mcp_tool_served_by_the_script_is_called_by_the_model() {
    let Some(python) = python() else { return };
    let env = Env::new();
    session_of(&driver(&env, &python, "mcp", "sdk_mcp", ""));
}

#[test]
fn a_hook_registered_through_the_sdk_refuses_a_call_and_lets_another_run() {
    let Some(python) = python() else { return };
    let env = Env::new();
    std::fs::write(env.work.path().join("important.txt"), "keep\n").unwrap();
    session_of(&driver(&env, &python, "hooks", "sdk_hooks", ""));
}

#[test]
fn an_agent_defined_through_the_sdk_runs_as_a_subagent() {
    let Some(python) = python() else { return };
    let env = Env::new();
    session_of(&driver(&env, &python, "agents", "sdk_agents", ""));
}

/// The npm SDK too: `COX_TEST_SDK_NODE` names a folder whose
/// `node_modules` holds `@anthropic-ai/claude-agent-sdk`. Runs
/// tests/agent_sdk/driver.mjs's `case` on `scenario_name`; `None` when
/// the SDK is not there (never on CI).
fn npm(env: &Env, case: &str, scenario_name: &str) -> Option<Output> {
    let node_dir = match std::env::var("COX_TEST_SDK_NODE")
        .ok()
        .filter(|v| !v.is_empty())
    {
        Some(dir) => dir,
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run this test: set COX_TEST_SDK_NODE"
            );
            eprintln!(
                "skipped: set COX_TEST_SDK_NODE (a folder with @anthropic-ai/claude-agent-sdk)"
            );
            return None;
        }
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/agent_sdk/driver.mjs");
    let work = env.work.path().canonicalize().unwrap();
    let mut cox = env.cox();
    cox.env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario(scenario_name));
    let mut command = std::process::Command::new("node");
    if let Some(modules) = std::env::var_os("COX_TEST_MCP_NODE_MODULES") {
        command.env("MCP_MODULES", modules);
    }
    for (key, value) in cox.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let out = command
        .current_dir(&work)
        .arg(script)
        .arg(&node_dir)
        .arg(env!("CARGO_BIN_EXE_cox"))
        .arg(&work)
        .arg(case)
        .output()
        .unwrap();
    Some(out)
}

#[test]
fn the_npm_sdk_drives_cox_as_well() {
    let env = Env::new();
    if let Some(out) = npm(&env, "hello", "hello") {
        session_of(&out);
    }
}

/// The npm SDK sends the system prompt, the title and its in-process MCP
/// servers in `initialize`, not as flags: each takes effect (the scenario
/// checks the first request's system prompt and tools).
#[test]
fn the_npm_sdk_s_initialize_sets_the_prompt_the_title_and_its_mcp_server() {
    let env = Env::new();
    let Some(out) = npm(&env, "mcp", "sdk_mcp_npm") else {
        return;
    };
    session_of(&out);
    // The only session: the title the script named, no title job's.
    let listed = env.cox().args(["sessions", "--json"]).output().unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed[0]["title"], "Adding numbers", "{listed}");
}

/// An MCP server asks for input mid-call: the npm SDK's `onElicitation`
/// is asked (Claude Code's `elicitation` control request), and what it
/// filled in reaches the server.
#[test]
fn the_npm_sdk_fills_in_an_mcp_servers_form() {
    if std::env::var_os("COX_TEST_MCP_NODE_MODULES").is_none()
        || !Path::new("/usr/bin/bwrap").exists()
    {
        eprintln!("skipped: COX_TEST_MCP_NODE_MODULES is not set, or no bwrap");
        return;
    }
    let env = Env::new();
    if let Some(out) = npm(&env, "elicit", "mcp_elicit") {
        session_of(&out);
    }
}

#[test]
fn an_interrupt_ends_the_turn_with_an_error_result() {
    let Some(python) = python() else { return };
    let env = Env::new();
    session_of(&driver(&env, &python, "interrupt", "interrupt_tool", ""));
}
