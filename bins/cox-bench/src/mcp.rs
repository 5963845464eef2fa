//! `cox-bench mcp [N]`: what the MCP client costs, against
//! `tests/mcp/fake-server.js` (a node server over stdio).
//!
//! - Startup: three servers connected at once through `cox_mcp::connect`
//!   (unconfined, then inside bubblewrap where it exists), against the
//!   slowest of three bare handshakes started together (spawn, write
//!   `initialize`, read the answer); then two servers and one that never
//!   answers, under a 1 s deadline.
//! - A call: N calls of the `echo` tool through cox's tool (what a session
//!   runs), against N bare JSON-RPC round trips to a server of its own;
//!   the difference of the medians is what cox adds.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cox_protocol::mcp::{McpServer, Origin, OriginKind, Transport};
use cox_protocol::tool::{OutputSink, PathRules, ToolContext, Workspace};
use cox_protocol::types::SandboxMode;
use cox_sandbox::SandboxPolicy;
use cox_store::CoxHome;

use crate::{ms, tempdir};

fn server_js() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/fake-server.js")
}

fn server(name: &str, mode: &str) -> McpServer {
    McpServer {
        name: name.to_owned(),
        origin: Origin {
            kind: OriginKind::User,
            file: "bench".into(),
            line: 1,
        },
        transport: Transport::Stdio {
            command: "node".into(),
            args: vec![server_js().display().to_string()],
            env: vec![("FAKE_MODE".into(), mode.into())],
            cwd: None,
        },
        sandbox: true,
        network: false,
        oauth: None,
    }
}

struct Open;

impl PathRules for Open {
    fn may_open(&self, _tool: &str, _path: &std::path::Path) -> bool {
        true
    }
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

/// A bare server: its stdin, its stdout as lines, and the process.
struct Bare {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
}

impl Bare {
    fn spawn() -> Result<Self, String> {
        let mut child = Command::new("node")
            .arg(server_js())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("node: {e}"))?;
        let input = child.stdin.take().ok_or("no stdin")?;
        let output = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Self {
            child,
            input,
            output,
        })
    }

    fn ask(&mut self, request: &serde_json::Value) -> Result<String, String> {
        writeln!(self.input, "{request}").map_err(|e| e.to_string())?;
        self.input.flush().map_err(|e| e.to_string())?;
        let mut line = String::new();
        self.output
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        Ok(line)
    }

    fn handshake(&mut self) -> Result<(), String> {
        self.ask(&serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "1"}}
        }))?;
        writeln!(
            self.input,
            "{}",
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .map_err(|e| e.to_string())
    }
}

impl Drop for Bare {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn run(n: usize) -> Result<(), String> {
    let scratch = tempdir::Dir::new("mcp").map_err(|e| e.to_string())?;
    let home = CoxHome::at(scratch.0.join("home"));
    home.prepare().map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let options = |mode: SandboxMode, deadline: Duration| {
        let mut policy = SandboxPolicy::new(mode, cox_cli::sandbox::helper());
        policy.add_writable_root(&scratch.0);
        cox_mcp::Options {
            home: home.clone(),
            cwd: scratch.0.clone(),
            sandbox: policy,
            deadline,
            call_timeout: Duration::from_secs(30),
            roots: vec![scratch.0.clone()],
            asks: None,
        }
    };
    let three = || vec![server("a", "ok"), server("b", "ok"), server("c", "ok")];

    // Warm node and the page cache once.
    Bare::spawn()?.handshake()?;

    let rounds = 5;
    let (mut bare, mut unconfined, mut confined) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let start = Instant::now();
        let mut servers = (0..3)
            .map(|_| Bare::spawn())
            .collect::<Result<Vec<_>, _>>()?;
        let mut slowest = Duration::ZERO;
        for s in &mut servers {
            s.handshake()?;
            slowest = slowest.max(start.elapsed());
        }
        bare.push(slowest);

        let start = Instant::now();
        let connected = runtime.block_on(cox_mcp::connect(
            three(),
            options(SandboxMode::DangerFullAccess, Duration::from_secs(20)),
        ));
        unconfined.push(start.elapsed());
        if connected.tools.len() != 6 {
            return Err(format!(
                "three servers should give 6 tools: {:?}",
                connected.notices
            ));
        }
        drop(connected);

        let start = Instant::now();
        let connected = runtime.block_on(cox_mcp::connect(
            three(),
            options(SandboxMode::WorkspaceWrite, Duration::from_secs(20)),
        ));
        confined.push(start.elapsed());
        if connected.tools.len() != 6 {
            confined.clear();
            println!(
                "inside bubblewrap: not measured ({:?})",
                connected.notices.first()
            );
            break;
        }
    }
    println!(
        "startup, 3 stdio servers at once: connected in {:.1} ms unconfined, {:.1} ms in bubblewrap; \
         the slowest of 3 bare handshakes {:.1} ms (medians of {rounds})",
        ms(median(unconfined)),
        if confined.is_empty() {
            f64::NAN
        } else {
            ms(median(confined))
        },
        ms(median(bare))
    );

    let start = Instant::now();
    let hanging = vec![server("a", "ok"), server("b", "ok"), server("h", "hang")];
    let connected = runtime.block_on(cox_mcp::connect(
        hanging,
        options(SandboxMode::DangerFullAccess, Duration::from_secs(1)),
    ));
    println!(
        "startup with one server that never answers (1 s deadline): {:.1} ms, {} tools, {} notice",
        ms(start.elapsed()),
        connected.tools.len(),
        connected.notices.len()
    );
    drop(connected);

    // Calls.
    let connected = runtime.block_on(cox_mcp::connect(
        vec![server("a", "ok")],
        options(SandboxMode::DangerFullAccess, Duration::from_secs(20)),
    ));
    let echo = connected
        .tools
        .iter()
        .find(|t| t.name() == "mcp__a__echo")
        .ok_or("no echo tool")?;
    let workspace = Workspace::single(scratch.0.clone());
    let sandbox = cox_sandbox::ProcessSandbox::new();
    let rules: Arc<dyn PathRules> = Arc::new(Open);
    let mut through_cox = Vec::with_capacity(n);
    for i in 0..n {
        let call_id = cox_protocol::CallId::from(format!("c{i}"));
        let cx = ToolContext {
            permission_mode: cox_protocol::types::PermissionMode::Default,
            nested: cox_protocol::tool::Nested::none(),
            call_id: &call_id,
            workspace: &workspace,
            cancel: cox_protocol::CancelToken::new(),
            sandbox: &sandbox,
            output: OutputSink::discard(call_id.clone()),
            rules: Arc::clone(&rules),
            unconfined: false,
            files: None,
            decided: &[],
        };
        let start = Instant::now();
        let result =
            runtime.block_on(echo.run(serde_json::json!({"message": format!("m{i}")}), cx));
        through_cox.push(start.elapsed());
        if !result.ok {
            return Err(format!("echo failed: {}", result.visible));
        }
    }
    let mut raw = Bare::spawn()?;
    raw.handshake()?;
    let mut bare_calls = Vec::with_capacity(n);
    for i in 0..n {
        let start = Instant::now();
        raw.ask(&serde_json::json!({
            "jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": format!("m{i}")}}
        }))?;
        bare_calls.push(start.elapsed());
    }
    let (cox_median, bare_median) = (median(through_cox), median(bare_calls));
    println!(
        "a call of echo: {:.3} ms through cox, {:.3} ms bare JSON-RPC: cox adds {:.3} ms (medians of {n})",
        ms(cox_median),
        ms(bare_median),
        ms(cox_median.saturating_sub(bare_median))
    );
    Ok(())
}
