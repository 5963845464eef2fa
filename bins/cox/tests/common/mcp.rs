//! Helpers of the MCP tests: where `.ci/run` installed the servers,
//! scenarios of tool calls, `cox run` in stream-json and readers of its
//! events, and the Python servers of `tests/mcp/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use super::{Env, lines};

/// A path from `variable`, which `.ci/run` sets (`what` it installs):
/// `None` (the test says so and passes) when it is unset, except under
/// CI, where it must be set.
pub fn installed(variable: &str, what: &str) -> Option<PathBuf> {
    match std::env::var_os(variable) {
        Some(path) => Some(PathBuf::from(path)),
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{variable} is not set: .ci/run installs {what}"
            );
            eprintln!("skipped: {variable} is not set (.ci/run sets it)");
            None
        }
    }
}

/// Where the npm servers are.
pub fn node_modules() -> Option<PathBuf> {
    installed("COX_TEST_MCP_NODE_MODULES", "the MCP servers")
}

/// The reference servers, where bubblewrap can confine them too (`None`,
/// said on stderr, where either is missing).
pub fn sandboxed_node_modules() -> Option<PathBuf> {
    let modules = node_modules()?;
    if !Path::new("/usr/bin/bwrap").exists() {
        eprintln!("skipped: no bwrap");
        return None;
    }
    Some(modules)
}

/// The fake server's source, run as `node -e SOURCE`: no file to find, so
/// it runs inside the sandbox (which has a private /tmp) wherever the
/// repository is checked out.
pub fn fake_source() -> String {
    let source = include_str!("../../../../tests/mcp/fake-server.js");
    source
        .strip_prefix("#!")
        .map_or(source, |rest| {
            rest.split_once('\n').map_or("", |(_, body)| body)
        })
        .to_owned()
}

/// `command` and `args` of the fake server, as TOML lines.
pub fn fake_toml() -> String {
    format!(
        "command = \"node\"\nargs = [\"-e\", {}]\n",
        serde_json::to_string(&fake_source()).unwrap()
    )
}

pub fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

/// A scenario of one turn calling each of `calls` (tool, input), then
/// saying done.
pub fn calls(env: &Env, calls: &[(&str, Value)]) -> PathBuf {
    let mut text = String::from("[[turn]]\n");
    for (tool, input) in calls {
        text.push_str(&format!(
            "[[turn.tool_call]]\nname = \"{tool}\"\ninput = {}\n",
            toml_inline(input)
        ));
    }
    text.push_str("[[turn]]\ntext = \"done\"\n");
    write(&env.home.path().join("scenario.toml"), &text)
}

pub fn toml_inline(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k} = {}", toml_inline(v)))
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(toml_inline).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}

/// `cox run` of `scenario` in bypass mode, stream-json, with `extra`.
pub fn run(env: &Env, scenario: &Path, extra: &[&str]) -> Output {
    cox(env)
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario)
        .args(["run", "-p", "use the tools", "--permission-mode"])
        .args(["bypassPermissions", "--output-format", "stream-json"])
        .args(extra)
        .output()
        .unwrap()
}

pub fn cox(env: &Env) -> Command {
    let mut cmd = env.cox();
    cmd.env("HOME", env.home.path()).env("MCP_TIMEOUT", "20000");
    cmd
}

/// Each call's result, in order: (ok, visible).
pub fn results(out: &Output) -> Vec<(bool, String)> {
    lines(out)
        .into_iter()
        .filter(|e| e["type"] == "tool_call_done")
        .map(|e| {
            (
                e["result"]["ok"].as_bool().unwrap(),
                e["result"]["visible"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

pub fn notices(out: &Output) -> Vec<String> {
    lines(out)
        .into_iter()
        .filter(|e| e["type"] == "notice")
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect()
}

pub fn tools(out: &Output) -> Vec<String> {
    let init = lines(out)
        .into_iter()
        .find(|e| e["type"] == "system" && e["subtype"] == "init")
        .unwrap();
    init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect()
}

pub fn servers_json(servers: &[(&str, Value)]) -> String {
    let map: serde_json::Map<String, Value> = servers
        .iter()
        .map(|(name, entry)| ((*name).to_owned(), entry.clone()))
        .collect();
    serde_json::json!({ "mcpServers": map }).to_string()
}

pub fn fake(env: &[(&str, &str)]) -> Value {
    let env: serde_json::Map<String, Value> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
        .collect();
    serde_json::json!({ "command": "node", "args": ["-e", fake_source()], "env": env })
}

/// The MCP Python SDK's interpreter.
pub fn sdk_python() -> Option<PathBuf> {
    installed("COX_TEST_MCP_PYTHON", "the MCP Python SDK")
}

/// `tests/mcp/SCRIPT ARGS…` on `python`, once it listens on `port`.
pub fn python_server(
    python: &Path,
    script: &str,
    args: &[&std::ffi::OsStr],
    port: u16,
) -> std::process::Child {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp")
        .join(script);
    let server = Command::new(python)
        .arg(script)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port);
    server
}

pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

pub fn wait_for_port(port: u16) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server never listened"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A POST with no body to the test server's administration routes.
pub fn post(port: u16, path: &str) {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

pub fn auth_events(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn doctor_row(env: &Env, check: &str) -> String {
    let out = cox(env).arg("doctor").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    stdout
        .lines()
        .find(|l| l.contains(check))
        .unwrap_or_else(|| panic!("no {check} row in:\n{stdout}"))
        .to_owned()
}

/// The reference server (`server-everything` over stdio) as `every` in an
/// `--mcp-config` file.
pub fn everything_config(env: &Env) -> Option<PathBuf> {
    let modules = node_modules()?;
    let server = modules.join(".bin/mcp-server-everything");
    Some(write(
        &env.home.path().join("mcp.json"),
        &servers_json(&[(
            "every",
            serde_json::json!({"command": "node", "args": [server, "stdio"]}),
        )]),
    ))
}
