//! `cox acp` driven by a real ACP client, the PyPI `agent-client-protocol`
//! SDK (`tests/acp/client.py`), with every message in both directions
//! validated against the protocol's published JSON schema (the npm package
//! `@agentclientprotocol/sdk`'s `schema/v1/schema.json`): a prompt with a
//! permission request, a mode and a model switch; the session loaded again
//! in a new process; a cancel mid-tool; and a client offering its buffers
//! (`fs/read_text_file`, `fs/write_text_file`): the file tools read the
//! unsaved buffer and the edit lands in the editor, not on disk; and a
//! client offering terminals (`terminal/*`): it starts bash exactly as
//! cox's sandbox launches it (bubblewrap around `bash -c`), so the command
//! stays confined, and a cancel kills it; a prompt with an image block.
//!
//! `COX_TEST_ACP_PYTHON` names a Python with the SDK and `jsonschema`,
//! `COX_TEST_ACP_SCHEMA` the schema file (`.ci/run` installs both outside
//! the repository). Without them the test says so and does nothing, unless
//! `CI` is set: there it fails, so CI never passes without having run it.

mod common;

use std::path::Path;
use std::process::Output;

use common::{Env, scenario, stderr};

fn tools() -> Option<(String, String)> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    match (var("COX_TEST_ACP_PYTHON"), var("COX_TEST_ACP_SCHEMA")) {
        (Some(python), Some(schema)) => Some((python, schema)),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run this test: set COX_TEST_ACP_PYTHON and COX_TEST_ACP_SCHEMA"
            );
            eprintln!(
                "skipped: set COX_TEST_ACP_PYTHON (a Python with agent-client-protocol and \
                 jsonschema) and COX_TEST_ACP_SCHEMA (the protocol's schema.json) to run it"
            );
            None
        }
    }
}

fn client(
    env: &Env,
    tools: &(String, String),
    case: &str,
    scenario_name: &str,
    session: &str,
) -> Output {
    client_with(env, tools, (case, scenario_name, session), &[])
}

/// [`client`] with variables for cox (and the commands it runs).
fn client_with(
    env: &Env,
    tools: &(String, String),
    (case, scenario_name, session): (&str, &str, &str),
    vars: &[(&str, &Path)],
) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/acp/client.py");
    let work = env.work.path().canonicalize().unwrap();
    let mut command = env.cox();
    command
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario(scenario_name))
        .env_remove("PYTHONPATH")
        .envs(vars.iter().copied());
    // Not cox itself: the client, which starts cox.
    let mut python = std::process::Command::new(&tools.0);
    python
        .envs(command.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .current_dir(&work)
        .arg(script)
        .args([case, env!("CARGO_BIN_EXE_cox"), &tools.1])
        .arg(&work)
        .arg(session);
    for (key, value) in command.get_envs() {
        if value.is_none() {
            python.env_remove(key);
        }
    }
    python.output().unwrap()
}

fn session_of(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", stderr(out));
    let line = text.lines().find(|l| l.starts_with("ok ")).unwrap();
    line.split_whitespace().nth(3).unwrap().to_owned()
}

#[test]
fn a_real_acp_client_drives_cox_and_every_message_fits_the_schema() {
    let Some(tools) = tools() else {
        return;
    };
    let env = Env::new();
    let first = client(&env, &tools, "prompt", "hello", "");
    let session = session_of(&first);
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    let loaded = client(&env, &tools, "load", "hello", &session);
    assert_eq!(session_of(&loaded), session);
    let cancelled = client(&env, &tools, "cancel", "interrupt_tool", "");
    session_of(&cancelled);
    // An image block reaches the model (the scenario checks its bytes).
    let image = client(&env, &tools, "image", "image_prompt", "");
    session_of(&image);

    let editor = Env::new();
    std::fs::write(editor.work.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let buffers = client(&editor, &tools, "buffers", "read_then_edit", "");
    session_of(&buffers);
    assert_eq!(
        std::fs::read_to_string(editor.work.path().join("notes.txt")).unwrap(),
        "alpha\nbeta\n",
        "the edit went to the editor's buffer, not the disk"
    );
}

/// The commands the client says it was asked to start.
fn started(out: &Output) -> Vec<Vec<String>> {
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("started "))
        .unwrap();
    serde_json::from_str(line).unwrap()
}

#[test]
fn commands_run_in_the_editors_terminal_as_the_sandbox_launches_them() {
    let Some(tools) = tools() else {
        return;
    };
    if std::process::Command::new("bwrap")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: bubblewrap is missing, so commands are not handed to the editor");
        return;
    }
    let env = Env::new();
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    let out = client_with(
        &env,
        &tools,
        ("terminal", "terminal", ""),
        &[("COX_TEST_OUTSIDE", outside.path())],
    );
    session_of(&out);
    let commands = started(&out);
    assert_eq!(commands.len(), 1, "{commands:?}");
    let argv = &commands[0];
    // `env -i` first, so the editor's own variables (its keys) reach
    // nothing, then bubblewrap.
    assert_eq!(argv[..2], ["env", "-i"], "{argv:?}");
    let bwrap = argv
        .iter()
        .position(|a| a.ends_with("bwrap"))
        .unwrap_or_else(|| panic!("confined by bubblewrap: {argv:?}"));
    assert!(argv[2..bwrap].iter().all(|v| v.contains('=')), "{argv:?}");
    assert!(
        !argv[2..bwrap]
            .iter()
            .any(|v| v.starts_with("ANTHROPIC_API_KEY=")),
        "{argv:?}"
    );
    assert!(argv.iter().any(|a| a == "--unshare-pid"), "{argv:?}");
    let line = argv.last().unwrap();
    assert!(line.starts_with("echo made > made.txt"), "{argv:?}");
    assert_eq!(argv[argv.len() - 3..argv.len() - 1], ["bash", "-c"]);
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("made.txt")).unwrap(),
        "made\n",
        "the workspace is writable"
    );
    assert!(
        !outside.path().join("escaped.txt").exists(),
        "the editor's terminal ran the command confined"
    );
    // The model read what the terminal printed.
    let rollouts = env.rollouts();
    let record = std::fs::read_to_string(&rollouts[0]).unwrap();
    assert!(record.contains("in-terminal") && record.contains("refused"));

    let cancel = Env::new();
    let out = client(&cancel, &tools, "terminal_cancel", "interrupt_tool", "");
    session_of(&out);
    assert_eq!(started(&out).len(), 1);
    let work = cancel.work.path().canonicalize().unwrap();
    assert_eq!(
        common::sleep_31_in(&work),
        None,
        "the kill reached the command's tree"
    );
}
