//! The MCP client from outside, against real servers: the reference
//! servers from npm (`@modelcontextprotocol/server-everything` over stdio
//! and streamable HTTP, `server-filesystem` inside and outside the
//! sandbox), installed by `.ci/run` where `COX_TEST_MCP_NODE_MODULES`
//! points, and `tests/mcp/fake-server.js`, a server that misbehaves on
//! purpose (hangs, exits, crashes mid-call, serves a bad schema, answers
//! 10 MB, changes its tool). Sessions run the scripted provider; each test
//! has its own COX_HOME and HOME.

mod common;

use common::mcp::*;
use std::path::Path;
use std::process::Command;

use common::{Env, lines, text};
use serde_json::Value;

#[test]
fn the_reference_servers_tools_are_offered_and_their_results_read() {
    let env = Env::new();
    let Some(config) = everything_config(&env) else {
        return;
    };
    let scenario = calls(
        &env,
        &[
            (
                "mcp__every__echo",
                serde_json::json!({"message": "hi from cox"}),
            ),
            ("mcp__every__get-sum", serde_json::json!({"a": 2, "b": 40})),
            ("mcp__every__get-tiny-image", serde_json::json!({})),
            (
                "mcp__every__get-structured-content",
                serde_json::json!({"location": "New York"}),
            ),
            ("mcp__every__get-roots-list", serde_json::json!({})),
        ],
    );
    let out = run(
        &env,
        &scenario,
        &["--mcp-config", &config.display().to_string()],
    );
    assert!(out.status.success(), "{}", text(&out));
    let offered = tools(&out);
    assert!(
        offered.contains(&"mcp__every__echo".to_owned()),
        "{offered:?}"
    );
    assert!(offered.contains(&"bash".to_owned()), "{offered:?}");
    let results = results(&out);
    assert_eq!(results[0], (true, "Echo: hi from cox".to_owned()));
    assert!(results[1].1.contains("42"), "{:?}", results[1]);
    assert!(
        results[2].1.contains("[image: image/png,"),
        "an image reads as its type and size: {:?}",
        results[2]
    );
    assert!(
        results[3].1.contains("temperature"),
        "structured content reads as JSON: {:?}",
        results[3]
    );
    // cox offers roots: the workspace's folder, as a file URI.
    let root = format!(
        "file://{}",
        env.work.path().canonicalize().unwrap().display()
    );
    assert!(
        results[4].0 && results[4].1.contains(&root),
        "{:?}",
        results[4]
    );
    assert!(notices(&out).is_empty(), "{:?}", notices(&out));
}

#[test]
fn a_streamable_http_server_is_reached_over_loopback() {
    let Some(modules) = node_modules() else {
        return;
    };
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut server = Command::new("node")
        .arg(modules.join(".bin/mcp-server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the HTTP server never listened"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let env = Env::new();
    let config = servers_json(&[(
        "web",
        serde_json::json!({"type": "http", "url": format!("http://127.0.0.1:{port}/mcp")}),
    )]);
    let scenario = calls(
        &env,
        &[(
            "mcp__web__echo",
            serde_json::json!({"message": "over http"}),
        )],
    );
    let out = run(&env, &scenario, &["--mcp-config", &config]);
    let _ = server.kill();
    let _ = server.wait();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        results(&out)[0],
        (true, "Echo: over http".to_owned()),
        "{}",
        text(&out)
    );
}

/// A project's server is not even started until `cox mcp trust`; once
/// trusted it runs; when a tool's definition changes, that tool shows the
/// model only the pending sentence and its calls never reach the server,
/// and `cox mcp trust` shows what changed; when the server's configuration
/// changes, it is not started again. A project's server that takes the
/// name of a server the user trusted inherits nothing.
#[test]
fn a_project_server_waits_for_trust_and_a_changed_tool_waits_again() {
    let env = Env::new();
    let w = env.work.path();
    // In the workspace: the server runs sandboxed, and reads and writes
    // only there.
    let log = w.join("calls.log");
    let description = w.join("description.txt");
    std::fs::write(&description, "Echoes its message.").unwrap();
    let (log_text, description_text) =
        (log.display().to_string(), description.display().to_string());
    let project = |extra: &[(&str, &str)]| {
        let mut vars = vec![
            ("FAKE_LOG", log_text.as_str()),
            ("FAKE_DESCRIPTION_FILE", description_text.as_str()),
        ];
        vars.extend_from_slice(extra);
        write(
            &w.join(".mcp.json"),
            &servers_json(&[("fake", fake(&vars))]),
        );
    };
    project(&[]);
    let scenario = calls(
        &env,
        &[("mcp__fake__echo", serde_json::json!({"message": "one"}))],
    );
    let out = run(&env, &scenario, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !tools(&out).iter().any(|t| t.starts_with("mcp__fake__")),
        "{}",
        text(&out)
    );
    assert!(
        notices(&out)
            .iter()
            .any(|n| n.contains("'fake'") && n.contains("not started until you trust it")),
        "{:?}",
        notices(&out)
    );
    assert!(
        !log.exists() && !w.join("calls.log").exists(),
        "nothing of the server ran"
    );

    let listed = cox(&env).args(["mcp", "trust"]).output().unwrap();
    let said = String::from_utf8_lossy(&listed.stdout);
    assert!(
        said.contains("fake: pending trust (not started)"),
        "{}",
        text(&listed)
    );
    assert!(said.contains("it would run: stdio: node -e"), "{said}");
    let trusted = cox(&env).args(["mcp", "trust", "fake"]).output().unwrap();
    assert!(trusted.status.success(), "{}", text(&trusted));
    let said = String::from_utf8_lossy(&trusted.stdout);
    assert!(
        said.contains("and the 2 tools it serves:") && said.contains("echo  Echoes its message."),
        "{said}"
    );

    let out = run(&env, &scenario, &[]);
    assert_eq!(
        results(&out)[0],
        (true, "echo: one".to_owned()),
        "{}",
        text(&out)
    );
    assert!(log.exists());

    std::fs::write(&description, "Echoes its message, and mails it to someone.").unwrap();
    std::fs::remove_file(&log).unwrap();
    let out = run(&env, &scenario, &[]);
    let pending = "pending trust for mcp server 'fake'; run: cox mcp trust fake";
    assert_eq!(
        results(&out)[0],
        (false, pending.to_owned()),
        "{}",
        text(&out)
    );
    assert!(
        !log.exists(),
        "a changed tool's call never reaches its server"
    );
    let listed = cox(&env).args(["mcp", "trust"]).output().unwrap();
    let said = String::from_utf8_lossy(&listed.stdout);
    assert!(
        said.contains("fake: echo changed since it was trusted"),
        "{said}"
    );
    assert!(said.contains("    - Echoes its message."), "{said}");
    assert!(
        said.contains("    + Echoes its message, and mails it to someone."),
        "{said}"
    );

    // Started another way: not started at all.
    project(&[("EXTRA", "1")]);
    let out = run(&env, &scenario, &[]);
    assert!(
        !tools(&out).iter().any(|t| t.starts_with("mcp__fake__")),
        "{}",
        text(&out)
    );

    // The user's own "fake", trusted on first connect; a project's "fake"
    // that overrides it by name starts with no trust of its own.
    std::fs::remove_file(w.join(".mcp.json")).unwrap();
    write(
        &env.home.path().join("config.toml"),
        &format!("[mcp_servers.fake]\n{}", fake_toml()),
    );
    let out = run(&env, &scenario, &[]);
    assert_eq!(
        results(&out)[0],
        (true, "echo: one".to_owned()),
        "{}",
        text(&out)
    );
    write(&w.join(".mcp.json"), &servers_json(&[("fake", fake(&[]))]));
    let out = run(&env, &scenario, &[]);
    assert!(
        !tools(&out).iter().any(|t| t.starts_with("mcp__fake__")),
        "{}",
        text(&out)
    );
}

/// A server of the user's own config is trusted when it first connects;
/// its read-only tool runs without asking, and its other tool, which the
/// server does not call read-only, is refused headless without a rule.
#[test]
fn a_user_server_is_trusted_on_first_connect_and_its_risk_follows_trust() {
    let env = Env::new();
    let config = format!("[mcp_servers.fake]\n{}", fake_toml());
    write(&env.home.path().join("config.toml"), &config);
    let scenario = calls(
        &env,
        &[
            ("mcp__fake__echo", serde_json::json!({"message": "ro"})),
            ("mcp__fake__shout", serde_json::json!({"message": "loud"})),
        ],
    );
    let out = cox(&env)
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "x", "--output-format", "stream-json"])
        .output()
        .unwrap();
    let results = results(&out);
    assert_eq!(results[0], (true, "echo: ro".to_owned()), "{}", text(&out));
    assert!(!results[1].0, "{:?}", results[1]);
    assert!(
        !results[1].1.contains("LOUD"),
        "refused, not run: {:?}",
        results[1]
    );

    let allowed = cox(&env)
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "x", "--output-format", "stream-json"])
        .args(["--allowedTools", "mcp__fake__shout"])
        .output()
        .unwrap();
    let results = self::results(&allowed);
    assert_eq!(
        results[1],
        (false, "LOUD".to_owned()),
        "the server's isError is a failed result: {}",
        text(&allowed)
    );
}

/// Servers that hang, exit, serve a bad schema or crash mid-call: each is
/// a notice or a failed result, and the session goes on; a 10 MB result is
/// archived like any big output.
#[test]
fn broken_servers_are_notices_and_absences_and_the_session_goes_on() {
    let env = Env::new();
    let config = servers_json(&[
        ("hangs", fake(&[("FAKE_MODE", "hang")])),
        ("exits", fake(&[("FAKE_MODE", "exit")])),
        ("schema", fake(&[("FAKE_MODE", "bad-schema")])),
        ("crashes", fake(&[("FAKE_MODE", "crash-on-call")])),
        ("big", fake(&[("FAKE_MODE", "big")])),
    ]);
    let scenario = calls(
        &env,
        &[
            ("mcp__schema__echo", serde_json::json!({"message": "fine"})),
            ("mcp__crashes__echo", serde_json::json!({"message": "bye"})),
            ("mcp__big__big", serde_json::json!({})),
            ("mcp__hangs__anything", serde_json::json!({})),
        ],
    );
    let started = std::time::Instant::now();
    let out = cox(&env)
        .env("MCP_TIMEOUT", "1500")
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "x", "--permission-mode", "bypassPermissions"])
        .args(["--output-format", "stream-json", "--mcp-config", &config])
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(out.status.success(), "{}", text(&out));
    let said = notices(&out);
    let about = |server: &str| {
        said.iter()
            .find(|n| n.contains(&format!("'{server}'")))
            .cloned()
            .unwrap_or_else(|| panic!("no notice about {server}: {said:?}"))
    };
    assert!(
        about("hangs").contains("did not answer within 1500 ms"),
        "{said:?}"
    );
    assert!(
        about("exits").contains("boom, no config"),
        "its stderr says why: {said:?}"
    );
    assert!(about("schema").contains("'broken' is left out"), "{said:?}");
    assert!(took < std::time::Duration::from_secs(15), "{took:?}");
    let offered = tools(&out);
    assert!(
        !offered.iter().any(|t| t.starts_with("mcp__hangs__")),
        "{offered:?}"
    );
    assert!(
        offered.contains(&"mcp__schema__echo".to_owned()),
        "{offered:?}"
    );
    assert!(
        !offered.contains(&"mcp__schema__broken".to_owned()),
        "{offered:?}"
    );
    let results = results(&out);
    assert_eq!(results[0], (true, "echo: fine".to_owned()));
    assert!(!results[1].0, "{:?}", results[1]);
    assert!(
        results[1].1.contains("MCP server 'crashes' failed"),
        "{:?}",
        results[1]
    );
    let big = lines(&out)
        .into_iter()
        .filter(|e| e["type"] == "tool_call_done")
        .nth(2)
        .unwrap();
    assert!(big["result"]["ok"].as_bool().unwrap());
    assert!(big["result"]["archive"].is_string(), "archived: {big}");
    assert!(
        big["result"]["visible"].as_str().unwrap().len() < 100_000,
        "the model sees a view of it, not 10 MB"
    );
    // A tool of a server that did not connect: the model is told why.
    assert!(!results[3].0, "{:?}", results[3]);
    assert!(
        results[3]
            .1
            .contains("its MCP server 'hangs' is not connected (it did not answer within 1500 ms"),
        "{:?}",
        results[3]
    );
    // And system/init lists every server with where it stands.
    let init = lines(&out)
        .into_iter()
        .find(|e| e["type"] == "system" && e["subtype"] == "init")
        .unwrap();
    let status = |name: &str| {
        init["mcp_servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .map(|s| s["status"].clone())
    };
    assert_eq!(status("hangs"), Some("failed".into()), "{init}");
    assert_eq!(status("exits"), Some("failed".into()), "{init}");
    assert_eq!(status("schema"), Some("connected".into()), "{init}");
}

/// A stdio server, confined or not, starts without cox's credentials; what
/// its own entry sets reaches it.
#[test]
fn a_stdio_server_gets_no_credential_but_its_own() {
    let env = Env::new();
    for sandbox in [true, false] {
        let dump = env.work.path().join(format!("env-{sandbox}.txt"));
        let dump_text = dump.display().to_string();
        let mut entry = fake(&[
            ("FAKE_ENV_DUMP", dump_text.as_str()),
            ("SERVER_TOKEN", "its-own"),
        ]);
        entry["sandbox"] = serde_json::json!(sandbox);
        let config = servers_json(&[("fake", entry)]);
        let scenario = calls(
            &env,
            &[("mcp__fake__echo", serde_json::json!({"message": "hi"}))],
        );
        let out = cox(&env)
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", &scenario)
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            .env("GITHUB_TOKEN", "ghp_test")
            .env("KEEP_ME", "1")
            .args(["run", "-p", "use the tools", "--permission-mode"])
            .args(["bypassPermissions", "--output-format", "stream-json"])
            .args(["--mcp-config", &config])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let seen = std::fs::read_to_string(&dump)
            .unwrap_or_else(|e| panic!("sandbox {sandbox}: {e}: {}", text(&out)));
        for name in ["KEEP_ME", "SERVER_TOKEN", "FAKE_ENV_DUMP"] {
            assert!(
                seen.lines().any(|l| l == name),
                "sandbox {sandbox} {name}: {seen}"
            );
        }
        for name in ["ANTHROPIC_API_KEY", "GITHUB_TOKEN"] {
            assert!(
                !seen.lines().any(|l| l == name),
                "sandbox {sandbox} {name}: {seen}"
            );
        }
    }
}

/// A stdio server runs inside the session's sandbox: a server that
/// writes where it is asked cannot write to a folder outside the
/// workspace; with `sandbox = false` it can.
#[test]
fn a_stdio_server_runs_inside_the_sandbox_unless_its_config_says_not() {
    if !std::path::Path::new("/usr/bin/bwrap").exists() {
        eprintln!("skipped: no bwrap");
        return;
    }
    let env = Env::new();
    // Outside the workspace and not under the private /tmp: seen read-only.
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    let outside_dir = outside.path().canonicalize().unwrap();
    let target = outside_dir.join("note.txt");
    let entry = |sandbox: bool| {
        let mut entry = fake(&[("FAKE_MODE", "write")]);
        entry["sandbox"] = sandbox.into();
        entry
    };
    let scenario = calls(
        &env,
        &[(
            "mcp__fs__write_file",
            serde_json::json!({"path": target.display().to_string(), "content": "hello"}),
        )],
    );
    let confined = servers_json(&[("fs", entry(true))]);
    let out = run(
        &env,
        &scenario,
        &["--sandbox", "workspace-write", "--mcp-config", &confined],
    );
    assert!(out.status.success(), "{}", text(&out));
    let results = results(&out);
    assert!(
        !results[0].0 && results[0].1.contains("cannot write: EROFS"),
        "{}",
        text(&out)
    );
    assert!(!target.exists(), "the sandbox kept the write out");

    let free = servers_json(&[("fs", entry(false))]);
    let out = run(
        &env,
        &scenario,
        &["--sandbox", "workspace-write", "--mcp-config", &free],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "hello",
        "{}",
        text(&out)
    );
}

/// Bad configuration: a `.mcp.json` that is not JSON, an unknown field, an
/// unset variable are notices naming the file and line, and the session
/// goes on; a `--mcp-config` that does not parse is one line and exit 1;
/// `--no-mcp` starts nothing; `--strict-mcp-config` only the flag's.
#[test]
fn bad_server_configs_are_named_and_flags_choose_the_sources() {
    let env = Env::new();
    let w = env.work.path();
    let scenario = calls(&env, &[]);
    write(
        &w.join(".mcp.json"),
        "{\n  \"mcpServers\": {\n    \"a\": { \"command\": \"x\", }\n  }\n}\n",
    );
    let out = run(&env, &scenario, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let said = notices(&out);
    assert!(
        said.iter()
            .any(|n| n.contains(".mcp.json:3:") && n.contains("not started")),
        "{said:?}"
    );

    write(
        &w.join(".mcp.json"),
        "{\"mcpServers\": {\n\"typo\": {\"command\": \"node\", \"argz\": []},\n\"unset\": {\"command\": \"${COX_TEST_NOT_SET}\"}\n}}",
    );
    let out = run(&env, &scenario, &[]);
    let said = notices(&out);
    assert!(
        said.iter()
            .any(|n| n.contains(".mcp.json:2:") && n.contains("unknown field `argz`")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|n| n.contains("${COX_TEST_NOT_SET} is not set")),
        "{said:?}"
    );

    let broken = write(&env.home.path().join("broken.json"), "{ not json");
    let out = run(
        &env,
        &scenario,
        &["--mcp-config", &broken.display().to_string()],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("broken.json:1:"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");

    std::fs::remove_file(w.join(".mcp.json")).unwrap();
    write(
        &env.home.path().join("config.toml"),
        &format!("[mcp_servers.mine]\n{}", fake_toml()),
    );
    let out = run(&env, &scenario, &["--no-mcp"]);
    assert!(
        !tools(&out).iter().any(|t| t.starts_with("mcp__")),
        "{}",
        text(&out)
    );
    let flag = servers_json(&[("flagged", fake(&[]))]);
    let out = run(
        &env,
        &scenario,
        &["--strict-mcp-config", "--mcp-config", &flag],
    );
    let offered = tools(&out);
    assert!(
        offered.contains(&"mcp__flagged__echo".to_owned()),
        "{offered:?}"
    );
    assert!(
        !offered.contains(&"mcp__mine__echo".to_owned()),
        "{offered:?}"
    );
    let out = run(&env, &scenario, &[]);
    assert!(
        tools(&out).contains(&"mcp__mine__echo".to_owned()),
        "{}",
        text(&out)
    );
}

/// `cox mcp add`, `list`, `get` and `remove` on both scopes.
#[test]
fn cox_mcp_adds_lists_and_removes_servers() {
    let env = Env::new();
    let node = fake_source();
    let add = cox(&env)
        .args([
            "mcp",
            "add",
            "mine",
            "-e",
            "FAKE_DESCRIPTION=Mine.",
            "--",
            "node",
            "-e",
            &node,
        ])
        .output()
        .unwrap();
    assert!(add.status.success(), "{}", text(&add));
    let add = cox(&env)
        .args([
            "mcp", "add", "--scope", "project", "theirs", "--", "node", "-e", &node,
        ])
        .output()
        .unwrap();
    assert!(add.status.success(), "{}", text(&add));
    let again = cox(&env)
        .args(["mcp", "add", "mine", "--", "node", "-e", &node])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));
    // An entry that does not load (an unset variable) is still the file's:
    // add refuses to write over it.
    let mcp_json = env.work.path().join(".mcp.json");
    let before = std::fs::read_to_string(&mcp_json).unwrap();
    let with_broken = before.replacen(
        "\"mcpServers\": {",
        "\"mcpServers\": {\n    \"broken\": {\"command\": \"${COX_TEST_UNSET}\"},",
        1,
    );
    std::fs::write(&mcp_json, &with_broken).unwrap();
    let over = cox(&env)
        .args(["mcp", "add", "--scope", "project", "broken", "--", "node"])
        .output()
        .unwrap();
    assert_eq!(over.status.code(), Some(1), "{}", text(&over));
    assert_eq!(std::fs::read_to_string(&mcp_json).unwrap(), with_broken);
    std::fs::write(&mcp_json, &before).unwrap();

    let list = cox(&env).args(["mcp", "list"]).output().unwrap();
    let said = String::from_utf8_lossy(&list.stdout);
    assert!(
        said.lines()
            .any(|l| l.starts_with("mine ") && l.ends_with("connected · 2 tools")),
        "{said}"
    );
    assert!(
        said.lines().any(|l| l.starts_with("theirs ")
            && l.contains("pending trust (not started): not started until you trust it")),
        "{said}"
    );
    let get = cox(&env).args(["mcp", "get", "mine"]).output().unwrap();
    let got = String::from_utf8_lossy(&get.stdout);
    assert!(got.contains("mcp__mine__echo  trusted  Mine."), "{got}");
    // What the sandbox leaves it is said.
    assert!(got.contains("(sandboxed, network)"), "{got}");
    assert!(
        got.contains("confined: reads the file system but cox's secret folders")
            && got.contains("network = false cuts it off"),
        "{got}"
    );

    for name in ["mine", "theirs"] {
        let removed = cox(&env).args(["mcp", "remove", name]).output().unwrap();
        assert!(removed.status.success(), "{}", text(&removed));
    }
    let list = cox(&env).args(["mcp", "list"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&list.stdout).starts_with("no MCP servers"),
        "{}",
        text(&list)
    );
}

/// `cox-headless` has no MCP client: `--mcp-config` is refused, and
/// configured servers are said not to start.
#[test]
fn the_headless_binary_says_it_has_no_mcp_client() {
    let env = Env::new();
    let headless = Path::new(env!("CARGO_BIN_EXE_cox")).with_file_name("cox-headless");
    if !headless.exists() {
        eprintln!("skipped: cox-headless is not built beside cox");
        return;
    }
    let scenario = calls(&env, &[]);
    let flag = servers_json(&[("x", fake(&[]))]);
    let out = Command::new(&headless)
        .env("COX_HOME", env.home.path())
        .env("HOME", env.home.path())
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .current_dir(env.work.path())
        .args(["-p", "x", "--mcp-config", &flag])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no MCP client"));
}

/// A server on the official Python SDK (PyPI `mcp`, installed by `.ci/run`
/// where `COX_TEST_MCP_PYTHON` points), over streamable HTTP: cox speaks
/// the stateless 2026-07-28 revision to it (no `initialize`, no session),
/// and over stdio the handshake it knows.
#[test]
fn a_python_sdk_server_is_reached_on_the_stateless_revision() {
    let Some(python) = sdk_python() else {
        return;
    };
    let env = Env::new();
    let log = env.home.path().join("requests.log");
    let port = free_port();
    let mut server = python_server(
        &python,
        "py-server.py",
        &["http".as_ref(), port.to_string().as_ref(), log.as_os_str()],
        port,
    );
    let config = servers_json(&[
        (
            "py",
            serde_json::json!({"type": "http", "url": format!("http://127.0.0.1:{port}/mcp")}),
        ),
        (
            "pystdio",
            // Its source as `-c`: the sandbox's /tmp is private, and the
            // checkout may be under it.
            serde_json::json!({
                "command": python,
                "args": ["-c", include_str!("../../../tests/mcp/py-server.py"), "stdio"],
            }),
        ),
    ]);
    let scenario = calls(
        &env,
        &[
            ("mcp__py__add", serde_json::json!({"a": 20, "b": 22})),
            ("mcp__pystdio__add", serde_json::json!({"a": 1, "b": 2})),
        ],
    );
    let out = run(&env, &scenario, &["--mcp-config", &config]);
    let _ = server.kill();
    let _ = server.wait();
    assert!(out.status.success(), "{}", text(&out));
    let results = results(&out);
    assert_eq!(results[0], (true, "42".to_owned()), "{}", text(&out));
    assert_eq!(results[1], (true, "3".to_owned()), "{}", text(&out));
    let requests: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        !requests.iter().any(|r| r["method"] == "initialize"),
        "no legacy handshake over HTTP: {requests:?}"
    );
    let call = requests
        .iter()
        .find(|r| r["method"] == "tools/call")
        .unwrap();
    assert_eq!(call["version"], "2026-07-28", "{requests:?}");
    assert!(call["session"].is_null(), "stateless: {requests:?}");
}

/// Past `[context] max_tools`, MCP tools wait behind `tool_search`: the
/// model finds one by its words, and then calls it.
#[test]
fn past_max_tools_mcp_tools_are_found_with_tool_search() {
    let env = Env::new();
    write(
        &env.home.path().join("config.toml"),
        &format!(
            "[context]\nmax_tools = 5\n\n[mcp_servers.fake]\n{}",
            fake_toml()
        ),
    );
    let scenario = calls(
        &env,
        &[
            (
                "tool_search",
                serde_json::json!({"query": "echoes message"}),
            ),
            ("mcp__fake__echo", serde_json::json!({"message": "found"})),
        ],
    );
    let out = run(&env, &scenario, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        tools(&out).contains(&"tool_search".to_owned()),
        "{}",
        text(&out)
    );
    let results = results(&out);
    assert!(results[0].1.contains("mcp__fake__echo"), "{:?}", results[0]);
    assert_eq!(results[1], (true, "echo: found".to_owned()));
}

/// `~/.claude.json`: its own servers and this folder's entry (which wins
/// by name), and `.mcp.json` over both; the rest of Claude Code's file is
/// left alone.
#[test]
fn claude_code_user_and_project_entries_are_read_and_later_ones_win() {
    let env = Env::new();
    let w = env.work.path().canonicalize().unwrap();
    let describe = |text: &str| fake(&[("FAKE_DESCRIPTION", text)]);
    let claude = serde_json::json!({
        "numStartups": 12,
        "mcpServers": {"global": describe("Global."), "shared": describe("From the user list.")},
        "projects": {
            w.display().to_string(): {
                "allowedTools": [],
                "mcpServers": {"shared": describe("From this project's entry."), "local": describe("Local.")}
            },
            "/somewhere/else": {"mcpServers": {"elsewhere": describe("Elsewhere.")}}
        }
    });
    write(&env.home.path().join(".claude.json"), &claude.to_string());
    write(
        &w.join(".mcp.json"),
        &servers_json(&[("local", describe("From .mcp.json."))]),
    );
    let get = |name: &str| {
        let out = cox(&env).args(["mcp", "get", name]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(
        get("global").contains("~/.claude.json ("),
        "{}",
        get("global")
    );
    let shared = get("shared");
    assert!(shared.contains("~/.claude.json (project)"), "{shared}");
    assert!(shared.contains("From this project's entry."), "{shared}");
    let local = get("local");
    assert!(
        local.contains("project (") && local.contains("pending trust (not started)"),
        "the project's entry wins, and waits for trust: {local}"
    );
    let list = cox(&env).args(["mcp", "list"]).output().unwrap();
    let said = String::from_utf8_lossy(&list.stdout);
    assert!(!said.contains("elsewhere"), "{said}");
}

/// `cwd` is where a stdio server starts; `network` lets a sandboxed server
/// reach the network (here a loopback port), which it cannot without; and
/// `MCP_TOOL_TIMEOUT` bounds a call that never answers.
#[test]
fn cwd_network_and_the_call_timeout_take_effect() {
    if !Path::new("/usr/bin/bwrap").exists() {
        eprintln!("skipped: no bwrap");
        return;
    }
    let env = Env::new();
    let w = env.work.path();
    std::fs::create_dir(w.join("sub")).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let entry = |network: bool| {
        let mut e = fake(&[
            ("FAKE_MODE", "net"),
            ("FAKE_PORT", &port),
            ("FAKE_LOG", "calls.log"),
        ]);
        e["cwd"] = Value::from(w.join("sub").display().to_string());
        e["network"] = Value::from(network);
        e
    };
    let scenario = calls(&env, &[("mcp__net__connect", serde_json::json!({}))]);
    let walled = servers_json(&[("net", entry(false))]);
    let out = run(
        &env,
        &scenario,
        &["--sandbox", "workspace-write", "--mcp-config", &walled],
    );
    let results = results(&out);
    assert!(
        !results[0].0 && results[0].1.starts_with("refused"),
        "{}",
        text(&out)
    );
    assert!(
        w.join("sub/calls.log").exists(),
        "the server ran in its cwd: {}",
        text(&out)
    );
    let open = servers_json(&[("net", entry(true))]);
    let out = run(
        &env,
        &scenario,
        &["--sandbox", "workspace-write", "--mcp-config", &open],
    );
    assert_eq!(
        self::results(&out)[0],
        (true, "connected".to_owned()),
        "{}",
        text(&out)
    );

    let slow = servers_json(&[("slow", fake(&[("FAKE_MODE", "slow")]))]);
    let scenario = calls(&env, &[("mcp__slow__sleep", serde_json::json!({}))]);
    let started = std::time::Instant::now();
    let out = cox(&env)
        .env("MCP_TOOL_TIMEOUT", "400")
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "x", "--permission-mode", "bypassPermissions"])
        .args(["--output-format", "stream-json", "--mcp-config", &slow])
        .output()
        .unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let results = self::results(&out);
    assert!(
        !results[0].0 && results[0].1.contains("did not answer sleep"),
        "{}",
        text(&out)
    );
    let bad = cox(&env)
        .env("MCP_TOOL_TIMEOUT", "soon")
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "x", "--mcp-config", &slow])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("MCP_TOOL_TIMEOUT"));
}

/// An image a tool returns is given to the model as an image: inside the
/// tool result of the Messages API request (over loopback HTTP), its type
/// read from its bytes, and named in the text the surfaces show.
#[test]
fn an_image_result_reaches_the_model_as_an_image() {
    let env = Env::new();
    let Some(config) = everything_config(&env) else {
        return;
    };
    let call = common::anthropic_sse(&[
        r#"{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-5","usage":{"input_tokens":900,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_i","name":"mcp__every__get-tiny-image","input":{}}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}"#,
        r#"{"type":"message_stop"}"#,
    ]);
    let (url, server) = common::serve(vec![
        ("200 OK", call),
        ("200 OK", common::anthropic_final_text()),
    ]);
    let out = cox(&env)
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", &url)
        .args(["run", "-p", "show me", "--output-format", "stream-json"])
        .args(["--permission-mode", "bypassPermissions"])
        .args(["--mcp-config", &config.display().to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let bodies = server.join().unwrap();
    let second: Value = serde_json::from_str(&bodies[1]).unwrap();
    let messages = second["messages"].as_array().unwrap();
    let result = messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result")
        .unwrap();
    let parts = result["content"].as_array().expect("text and image parts");
    assert_eq!(parts[0]["type"], "text");
    assert!(
        parts[0]["text"]
            .as_str()
            .unwrap()
            .contains("[image: image/png,"),
        "{parts:?}"
    );
    let image = parts
        .iter()
        .find(|p| p["type"] == "image")
        .unwrap_or_else(|| panic!("no image part: {parts:?}"));
    assert_eq!(image["source"]["type"], "base64");
    assert_eq!(image["source"]["media_type"], "image/png");
    assert!(
        image["source"]["data"]
            .as_str()
            .unwrap()
            .starts_with("iVBORw0KGgo")
    );
    // The surfaces see the line, and the rollout keeps the image for a
    // resume.
    let done = lines(&out)
        .into_iter()
        .find(|e| e["type"] == "tool_call_done")
        .unwrap();
    assert_eq!(done["result"]["images"][0]["media_type"], "image/png");
}

/// The person's own Claude Code settings answer for a project's servers:
/// `enabledMcpjsonServers` (or `enableAllProjectMcpServers`) starts one
/// without `cox mcp trust`, `disabledMcpjsonServers` keeps one from
/// starting; the project's own settings cannot approve its servers.
#[test]
fn the_persons_settings_approve_or_turn_off_a_projects_servers() {
    let env = Env::new();
    let w = env.work.path();
    write(
        &w.join(".mcp.json"),
        &servers_json(&[("fake", fake(&[])), ("other", fake(&[]))]),
    );
    let scenario = calls(
        &env,
        &[("mcp__fake__echo", serde_json::json!({"message": "one"}))],
    );
    // The project approving itself: nothing starts.
    std::fs::create_dir_all(w.join(".claude")).unwrap();
    write(
        &w.join(".claude/settings.json"),
        r#"{"enableAllProjectMcpServers": true}"#,
    );
    let out = run(&env, &scenario, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !tools(&out).iter().any(|t| t.starts_with("mcp__fake__")),
        "{}",
        text(&out)
    );
    assert!(
        text(&out).contains("ignoring `enableAllProjectMcpServers`"),
        "{}",
        text(&out)
    );
    // The person's own: `fake` starts, `other` does not.
    env.claude_settings(&serde_json::json!({
        "enabledMcpjsonServers": ["fake"],
        "disabledMcpjsonServers": ["other"]
    }));
    let out = run(&env, &scenario, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let tools = tools(&out);
    assert!(
        tools.iter().any(|t| t == "mcp__fake__echo"),
        "{tools:?}: {}",
        text(&out)
    );
    assert!(
        !tools.iter().any(|t| t.starts_with("mcp__other__")),
        "{tools:?}"
    );
    assert!(
        notices(&out)
            .iter()
            .any(|n| n.contains("'other'") && n.contains("disabledMcpjsonServers")),
        "{:?}",
        notices(&out)
    );
}

/// A server asks for input in the middle of a call (`elicitation/create`):
/// a headless run has no one to ask, so it declines at once, says so with
/// the server's message, and the call goes on to its result.
#[test]
fn a_headless_run_declines_a_servers_request_for_input_and_says_so() {
    let env = Env::new();
    let Some(config) = everything_config(&env) else {
        return;
    };
    let scenario = calls(
        &env,
        &[(
            "mcp__every__trigger-elicitation-request",
            serde_json::json!({}),
        )],
    );
    let out = run(
        &env,
        &scenario,
        &["--mcp-config", &config.display().to_string()],
    );
    assert!(out.status.success(), "{}", text(&out));
    let said = notices(&out);
    assert!(
        said.iter().any(|n| n.contains(
            "MCP server 'every' asked for input (Please provide inputs for the following fields:), \
             which was declined: this session cannot ask"
        )),
        "{said:?}"
    );
    let results = results(&out);
    assert!(
        results[0].1.to_lowercase().contains("declined"),
        "{:?}",
        results[0]
    );
}

/// `cox mcp add --client-id … --client-secret`: the secret comes from
/// `MCP_CLIENT_SECRET` (or a prompt on a terminal), is kept beside the
/// server's login (a 0600 file here, where no keyring answers), never in
/// the config; without either, nothing is written; `cox mcp remove` forgets
/// it.
#[test]
fn a_client_secret_is_kept_beside_the_login_not_in_the_config() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = Env::new();
    let add = |secret: Option<&str>| {
        let mut command = cox(&env);
        command.env_remove("MCP_CLIENT_SECRET");
        if let Some(secret) = secret {
            command.env("MCP_CLIENT_SECRET", secret);
        }
        command
            .args([
                "mcp",
                "add",
                "--transport",
                "http",
                "--client-id",
                "corp-cli",
            ])
            .args(["--client-secret", "--callback-port", "8421", "corp"])
            .arg("https://mcp.example.com/mcp")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let config = env.home.path().join("config.toml");
    let out = add(None);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("set MCP_CLIENT_SECRET"),
        "{}",
        text(&out)
    );
    assert!(!config.exists(), "nothing written");
    let out = add(Some("s3cret-value"));
    assert!(out.status.success(), "{}", text(&out));
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(written.contains("client_id = \"corp-cli\""), "{written}");
    assert!(written.contains("callback_port = 8421"), "{written}");
    assert!(!written.contains("s3cret"), "{written}");
    assert!(!text(&out).contains("s3cret"), "{}", text(&out));
    let kept = env.home.path().join("mcp-auth/corp.client-secret.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
    assert_eq!(file["secret"], "s3cret-value");
    assert_eq!(
        file["url"], "https://mcp.example.com/mcp",
        "bound to its server's URL"
    );
    assert_eq!(
        std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let out = cox(&env).args(["mcp", "remove", "corp"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(!kept.exists(), "the secret went with the server");
}
