//! A running `cox acp` driven over its stdin, for the ACP tests: JSON-RPC
//! lines in, every stdout line read back as JSON (a line that is not fails
//! the test).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Env, scenario};

/// A running `cox acp` and the lines it wrote.
pub struct Acp {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub lines: mpsc::Receiver<Value>,
    pub next: u64,
}

impl Acp {
    pub fn start(env: &Env, scenario_name: &str, flags: &[&str]) -> Acp {
        Acp::start_with(env.cox(), scenario_name, flags)
    }

    /// [`Acp::start`] from a command already set up.
    pub fn start_with(
        mut command: std::process::Command,
        scenario_name: &str,
        flags: &[&str],
    ) -> Acp {
        let mut child = command
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", scenario(scenario_name))
            .arg("acp")
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let value =
                    serde_json::from_str(&line).unwrap_or_else(|_| json!({"NOT_JSON": line}));
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Acp {
            child,
            stdin,
            lines,
            next: 0,
        }
    }

    pub fn write(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, message: &Value) {
        self.write(&message.to_string());
    }

    pub fn recv(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(20))
            .expect("cox acp said nothing for 20 s");
        assert!(
            line.get("NOT_JSON").is_none(),
            "stdout line not JSON: {line}"
        );
        assert_eq!(line["jsonrpc"], "2.0", "{line}");
        line
    }

    /// Sends a request; returns its id.
    pub fn request(&mut self, method: &str, params: Value) -> u64 {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Reads up to the response to `id`; requests from cox on the way are
    /// answered by `answer` (its result), notifications kept.
    pub fn response(
        &mut self,
        id: u64,
        mut answer: impl FnMut(&Value) -> Value,
    ) -> (Value, Vec<Value>) {
        let mut seen = Vec::new();
        loop {
            let line = self.recv();
            if line["id"] == id && line.get("method").is_none() {
                return (line, seen);
            }
            if line.get("method").is_some() && line.get("id").is_some() {
                let result = answer(&line);
                let reply = json!({"jsonrpc": "2.0", "id": line["id"], "result": result});
                self.send(&reply);
            }
            seen.push(line);
        }
    }

    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        self.response(id, |r| panic!("unexpected request {r}")).0
    }

    pub fn initialize(&mut self) -> Value {
        self.initialize_with(json!({}))
    }

    /// `initialize` with `more` client capabilities besides no files and
    /// no terminal.
    pub fn initialize_with(&mut self, more: Value) -> Value {
        let mut capabilities =
            json!({"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false});
        if let (Some(all), Some(more)) = (capabilities.as_object_mut(), more.as_object()) {
            all.extend(more.clone());
        }
        self.call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
        )
    }

    pub fn new_session(&mut self, env: &Env) -> String {
        let cwd = env.work.path().canonicalize().unwrap();
        let answer = self.call("session/new", json!({"cwd": cwd, "mcpServers": []}));
        answer["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("{answer}"))
            .to_owned()
    }

    /// Closes stdin; the exit code, within a bound.
    pub fn finish(mut self) -> i32 {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Nothing but protocol on stdout, to the end.
                while let Ok(line) = self.lines.try_recv() {
                    assert!(line.get("NOT_JSON").is_none(), "{line}");
                }
                return status.code().unwrap_or(-1);
            }
            assert!(
                Instant::now() < deadline,
                "cox acp did not end at stdin's end"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

pub fn updates<'a>(seen: &'a [Value], kind: &str) -> Vec<&'a Value> {
    seen.iter()
        .filter(|l| {
            l["method"] == "session/update" && l["params"]["update"]["sessionUpdate"] == kind
        })
        .map(|l| &l["params"]["update"])
        .collect()
}

pub fn choose(option: &'static str) -> impl FnMut(&Value) -> Value {
    move |request| {
        assert_eq!(request["method"], "session/request_permission", "{request}");
        let ids: Vec<&str> = request["params"]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["optionId"].as_str().unwrap())
            .collect();
        assert_eq!(
            ids,
            ["allow_once", "allow_always", "reject_once", "reject_always"]
        );
        json!({"outcome": {"outcome": "selected", "optionId": option}})
    }
}
