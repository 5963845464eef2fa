//! MCP servers as people configure them, from outside: the recipes they
//! paste (`npx -y PKG`, a server installed under `/tmp`) starting in the
//! sandbox with the defaults, an older HTTP server asked `initialize` when
//! it does not discover, and no server lost under load. Sessions run the
//! scripted provider; each test has its own COX_HOME and HOME.

mod common;

use common::mcp::*;
use std::path::Path;
use std::process::Command;

use common::{Env, text};
use serde_json::Value;

/// A server of an older revision answers `server/discover` with an empty
/// result (not a discovery result, not an error): cox asks it the
/// `initialize` handshake instead, names itself in it, and asks for the
/// newest revision that has that handshake.
#[test]
fn a_server_that_does_not_discover_is_asked_to_initialize() {
    let Some(python) = sdk_python() else {
        return;
    };
    let env = Env::new();
    let log = env.home.path().join("requests.log");
    let port = free_port();
    let mut server = python_server(
        &python,
        "py-server.py",
        &[
            "http-old".as_ref(),
            port.to_string().as_ref(),
            log.as_os_str(),
        ],
        port,
    );
    let config = servers_json(&[(
        "old",
        serde_json::json!({"type": "http", "url": format!("http://127.0.0.1:{port}/mcp")}),
    )]);
    let scenario = calls(
        &env,
        &[("mcp__old__add", serde_json::json!({"a": 40, "b": 2}))],
    );
    let out = run(&env, &scenario, &["--mcp-config", &config]);
    let _ = server.kill();
    let _ = server.wait();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(results(&out)[0], (true, "42".to_owned()), "{}", text(&out));
    let requests: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let methods: Vec<&str> = requests
        .iter()
        .filter_map(|r| r["method"].as_str())
        .collect();
    let discover = methods.iter().position(|m| *m == "server/discover");
    let initialize = methods.iter().position(|m| *m == "initialize");
    assert!(
        matches!((discover, initialize), (Some(d), Some(i)) if d < i),
        "discover, then initialize: {methods:?}"
    );
    let hello = requests
        .iter()
        .find(|r| r["method"] == "initialize")
        .unwrap();
    assert_eq!(hello["client"], "cox", "{requests:?}");
    assert_eq!(hello["asked"], "2025-11-25", "{requests:?}");
}

/// The recipe people paste: `npx -y PKG`, with the defaults (no
/// `network`, no `MCP_TIMEOUT`): inside the sandbox it reaches the npm
/// registry and writes only a cache of cox's own, and its tools work. Reaches the
/// public registry, so it runs where `COX_TEST_NPX` is set (`.ci/run` sets
/// it: its machines install from npm).
#[test]
fn npx_dash_y_starts_with_the_defaults() {
    if std::env::var_os("COX_TEST_NPX").is_none() || !Path::new("/usr/bin/bwrap").exists() {
        eprintln!("skipped: COX_TEST_NPX is not set, or no bwrap");
        return;
    }
    let env = Env::new();
    // The person's home, apart from cox's own (which commands and servers
    // only read).
    let home = tempfile::tempdir().unwrap();
    write(
        &env.home.path().join("config.toml"),
        "[mcp_servers.everything]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-everything\"]\n",
    );
    let scenario = calls(
        &env,
        &[(
            "mcp__everything__echo",
            serde_json::json!({"message": "from npx"}),
        )],
    );
    let out = env
        .cox()
        .env("HOME", home.path())
        .env_remove("MCP_TIMEOUT")
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "use the tools", "--permission-mode"])
        .args(["bypassPermissions", "--output-format", "stream-json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let results = results(&out);
    assert!(
        results[0].0 && results[0].1.contains("from npx"),
        "{}",
        text(&out)
    );
    // Its own cache, never the person's (a package planted there would run
    // unconfined at their next npx).
    assert!(
        home.path().join(".cache/cox-mcp/npm/_cacache").is_dir(),
        "npm's cache for servers was written"
    );
    assert!(!home.path().join(".npm/_cacache").exists());
}

/// A server installed under `/tmp` (the sandbox's own `/tmp` is private)
/// starts sandboxed: the top folder of a path its command names there is
/// bound in, read-only.
#[test]
fn a_server_installed_under_tmp_starts_in_the_sandbox() {
    let Some(modules) = sandboxed_node_modules() else {
        return;
    };
    let env = Env::new();
    let install = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
    let copied = Command::new("cp")
        .arg("-a")
        .arg(&modules)
        .arg(install.path().join("node_modules"))
        .status()
        .unwrap();
    assert!(copied.success());
    std::fs::write(env.work.path().join("seen.txt"), "from the workspace").unwrap();
    let work = env.work.path().canonicalize().unwrap();
    let server = install
        .path()
        .join("node_modules/.bin/mcp-server-filesystem");
    let config = servers_json(&[(
        "fs",
        serde_json::json!({"command": "node", "args": [server, work]}),
    )]);
    let scenario = calls(
        &env,
        &[(
            "mcp__fs__read_text_file",
            serde_json::json!({"path": work.join("seen.txt").display().to_string()}),
        )],
    );
    let out = run(
        &env,
        &scenario,
        &["--sandbox", "workspace-write", "--mcp-config", &config],
    );
    assert!(out.status.success(), "{}", text(&out));
    let results = results(&out);
    assert!(
        results[0].0 && results[0].1.contains("from the workspace"),
        "{}",
        text(&out)
    );
}

/// Under load (two processes keeping both cores busy), two reference
/// servers and the Python SDK's all connect, with the default bound, in
/// each of three runs: nothing is lost to a tight deadline.
#[test]
fn under_load_no_server_is_lost() {
    let Some(modules) = node_modules() else {
        return;
    };
    let Some(python) = sdk_python() else {
        return;
    };
    let env = Env::new();
    let config = servers_json(&[
        (
            "every",
            serde_json::json!({"command": "node", "args": [modules.join(".bin/mcp-server-everything"), "stdio"]}),
        ),
        (
            "fs",
            serde_json::json!({"command": "node", "args": [modules.join(".bin/mcp-server-filesystem"), env.work.path()]}),
        ),
        (
            "py",
            serde_json::json!({
                "command": python,
                "args": ["-c", include_str!("../../../tests/mcp/py-server.py"), "stdio"],
            }),
        ),
    ]);
    let busy: Vec<std::process::Child> = (0..2)
        .map(|_| {
            Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .unwrap()
        })
        .collect();
    let scenario = calls(
        &env,
        &[
            ("mcp__every__echo", serde_json::json!({"message": "x"})),
            ("mcp__py__add", serde_json::json!({"a": 1, "b": 1})),
        ],
    );
    let mut outcomes = Vec::new();
    for _ in 0..3 {
        let out = cox(&env)
            .env_remove("MCP_TIMEOUT")
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", &scenario)
            .args(["run", "-p", "x", "--permission-mode", "bypassPermissions"])
            .args(["--output-format", "stream-json", "--mcp-config", &config])
            .output()
            .unwrap();
        outcomes.push(out);
    }
    for mut child in busy {
        let _ = child.kill();
        let _ = child.wait();
    }
    for out in &outcomes {
        assert!(out.status.success(), "{}", text(out));
        let offered = tools(out);
        for server in ["every", "fs", "py"] {
            assert!(
                offered
                    .iter()
                    .any(|t| t.starts_with(&format!("mcp__{server}__"))),
                "{server} lost under load: {offered:?} {}",
                text(out)
            );
        }
        assert_eq!(results(out)[1], (true, "2".to_owned()), "{}", text(out));
    }
}

/// A server that adds a tool while it connects (and says so before its
/// first listing is answered) gets it offered in the first request, with
/// nothing said about a changed tool block: no request was sent yet, so no
/// prompt cache was lost.
#[test]
fn a_tool_added_while_connecting_is_in_the_first_request_unremarked() {
    if !Path::new("/usr/bin/bwrap").exists() {
        eprintln!("skipped: no bwrap");
        return;
    }
    let env = Env::new();
    let config = servers_json(&[("g", fake(&[("FAKE_MODE", "grows-at-start")]))]);
    let scenario = calls(&env, &[("mcp__g__early", serde_json::json!({}))]);
    for _ in 0..3 {
        let out = run(&env, &scenario, &["--mcp-config", &config]);
        assert!(out.status.success(), "{}", text(&out));
        let offered = tools(&out);
        assert!(offered.contains(&"mcp__g__early".to_owned()), "{offered:?}");
        let results = results(&out);
        assert_eq!(
            results[0],
            (true, "grown here".to_owned()),
            "{}",
            text(&out)
        );
        assert!(notices(&out).is_empty(), "{:?}", notices(&out));
    }
}

/// The docker recipe (`docker run -i --rm IMAGE`) in the sandbox: the
/// docker socket stays out of sight (it gives root on the host), and the
/// server's failure says so and what lifts it, with docker's own words.
#[test]
fn a_docker_server_is_told_the_socket_is_outside_the_sandbox() {
    let docker = ["/usr/local/bin/docker", "/usr/bin/docker"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let (Some(docker), true) = (docker, Path::new("/usr/bin/bwrap").exists()) else {
        eprintln!("skipped: no docker client, or no bwrap");
        return;
    };
    let env = Env::new();
    let config = servers_json(&[(
        "box",
        serde_json::json!({"command": docker, "args": ["run", "-i", "--rm", "mcp/everything"]}),
    )]);
    let scenario = calls(&env, &[]);
    let out = run(&env, &scenario, &["--mcp-config", &config]);
    assert!(out.status.success(), "{}", text(&out));
    let said = notices(&out);
    let failed = said
        .iter()
        .find(|n| n.starts_with("MCP server 'box' is not available"))
        .unwrap_or_else(|| panic!("{said:?}"));
    assert!(failed.to_lowercase().contains("docker"), "{failed}");
    assert!(
        failed.contains("the docker socket is outside the sandbox")
            && failed.contains("allow_unix_sockets"),
        "{failed}"
    );
}

/// The Python recipes as people paste them, `uvx PKG` and `pipx run PKG`
/// (the reference time server from PyPI), start in the sandbox with the
/// defaults: each launcher fetches into a cache of cox's own, and never
/// the person's.
#[test]
fn uvx_and_pipx_run_start_with_the_defaults() {
    let Some(bin) = installed("COX_TEST_LAUNCHERS", "uv and pipx") else {
        return;
    };
    if !Path::new("/usr/bin/bwrap").exists() {
        eprintln!("skipped: no bwrap");
        return;
    }
    for (launcher, args, cached) in [
        ("uvx", vec!["mcp-server-time"], "uv"),
        ("pipx", vec!["run", "mcp-server-time"], "pipx"),
    ] {
        let env = Env::new();
        // The person's home, apart from cox's own.
        let home = tempfile::tempdir().unwrap();
        let config = servers_json(&[(
            "time",
            serde_json::json!({"command": bin.join(launcher), "args": args}),
        )]);
        let scenario = calls(
            &env,
            &[(
                "mcp__time__get_current_time",
                serde_json::json!({"timezone": "UTC"}),
            )],
        );
        let out = env
            .cox()
            .env("HOME", home.path())
            .env_remove("MCP_TIMEOUT")
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", &scenario)
            .args(["run", "-p", "use the tools", "--permission-mode"])
            .args(["bypassPermissions", "--output-format", "stream-json"])
            .args(["--mcp-config", &config])
            .output()
            .unwrap();
        assert!(out.status.success(), "{launcher}: {}", text(&out));
        let results = results(&out);
        assert!(
            results[0].0 && results[0].1.contains("\"timezone\": \"UTC\""),
            "{launcher}: {}",
            text(&out)
        );
        let cache = home.path().join(".cache/cox-mcp").join(cached);
        assert!(
            std::fs::read_dir(&cache).is_ok_and(|mut d| d.next().is_some()),
            "{launcher} fetched into {}",
            cache.display()
        );
        assert!(!home.path().join(".cache/uv").exists());
        assert!(!home.path().join(".local/pipx").exists());
    }
}
