//! The SDK's in-process MCP servers (`"type": "sdk"` in `--mcp-config`):
//! tools the driving script serves itself, reached through the control
//! channel (`mcp_message` control requests carrying JSON-RPC).
//!
//! cox is the MCP client: for each server it sends `initialize`, then
//! `notifications/initialized`, then `tools/list`, before the session's
//! first request (they are late tools, awaited as the run starts); each
//! listed tool becomes `mcp__<server>__<tool>`, decided by the permission
//! engine like any MCP tool (read-only or destructive as its annotations
//! say, else exec). A call is `tools/call`; a JSON-RPC error or `isError`
//! is a failed result the model reads. Every request cox sends waits at
//! most [`TIMEOUT`]; a server that fails its handshake is left out with a
//! warning naming it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use cox_core::LateTools;
use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use futures::channel::oneshot;
use serde_json::{Value, json};

use super::Out;

/// How long cox waits for the SDK to answer one of its requests.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// cox's own control requests (other than asks) and their answers.
pub(super) struct Requester {
    out: Out,
    pending: Mutex<HashMap<String, oneshot::Sender<Result<Value, String>>>>,
    next: AtomicU64,
    /// stdin ended: nothing can answer, so a request fails at once.
    closed: std::sync::atomic::AtomicBool,
}

impl Requester {
    pub(super) fn new(out: Out) -> Arc<Self> {
        Arc::new(Self {
            out,
            pending: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            closed: std::sync::atomic::AtomicBool::new(false),
        })
    }

    fn pending(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Result<Value, String>>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends `request` and waits for its answer's `response`, and whether
    /// the SDK was shown it cut (too long for its line; see
    /// [`super::fitted`]). One that cannot be fitted at all, or `whole`
    /// and would be cut, fails at once, unsent.
    pub(super) async fn request(
        &self,
        request: Value,
        whole: bool,
    ) -> Result<(Value, bool), String> {
        let id = format!("cox_mcp_{}", self.next_id());
        let (frame, cut) =
            super::fitted(json!({"type": "control_request", "request_id": id, "request": request}))
                .map_err(|len| {
                    format!("the request ({len} bytes) is too big for the SDK's line")
                })?;
        if cut && whole {
            return Err("the request is too long for the SDK's line".into());
        }
        let (tx, rx) = oneshot::channel();
        {
            // Checked under the lock `close` takes, so no request slips in
            // after it and waits for an answer that cannot come.
            let mut pending = self.pending();
            if self.closed.load(Ordering::Acquire) {
                return Err("the SDK closed its input".into());
            }
            pending.insert(id.clone(), tx);
        }
        // As it is: a tool's arguments and a hook's input are the SDK's
        // to read whole, never scrubbed.
        self.out.write(&frame);
        match tokio::time::timeout(TIMEOUT, rx).await {
            Ok(Ok(answer)) => answer.map(|answer| (answer, cut)),
            Ok(Err(_)) => Err("the SDK closed its input before answering".into()),
            Err(_) => {
                self.pending().remove(&id);
                Err(format!("the SDK did not answer in {} s", TIMEOUT.as_secs()))
            }
        }
    }

    /// Takes the SDK's answer when it is to one of these requests.
    pub(super) fn answer(&self, response: &Value) -> bool {
        let id = response["request_id"].as_str().unwrap_or_default();
        let Some(waiting) = self.pending().remove(id) else {
            return false;
        };
        let answer = match response["subtype"].as_str() {
            Some("success") => Ok(response["response"].clone()),
            _ => Err(response["error"]
                .as_str()
                .unwrap_or("the SDK answered with an error")
                .to_owned()),
        };
        let _ = waiting.send(answer);
        true
    }

    /// Whether stdin has ended (nothing will answer again).
    pub(super) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// stdin ended: every request still waiting fails, and every later
    /// one at once.
    pub(super) fn close(&self) {
        let mut pending = self.pending();
        self.closed.store(true, Ordering::Release);
        pending.clear();
    }

    /// One JSON-RPC message to `server`, and its JSON-RPC answer.
    async fn rpc(&self, server: &str, message: Value) -> Result<Value, String> {
        // Arguments cut to fit the line are not the call the model made:
        // such a message is not sent.
        let (answer, _) = self
            .request(
                json!({"subtype": "mcp_message", "server_name": server, "message": message}),
                true,
            )
            .await?;
        let reply = answer["mcp_response"].clone();
        if let Some(error) = reply.get("error") {
            return Err(format!(
                "{} (JSON-RPC error {})",
                error["message"].as_str().unwrap_or("no message"),
                error["code"]
            ));
        }
        Ok(reply["result"].clone())
    }
}

/// The tools of `servers`, each server's handshake done: late tools, and
/// each server's state as the init frame lists it.
pub(super) async fn connect(
    requester: Arc<Requester>,
    servers: Vec<String>,
) -> (LateTools, Vec<Value>) {
    let mut late = LateTools::default();
    let mut states = Vec::new();
    for server in servers {
        match tools_of(&requester, &server).await {
            Ok(tools) => {
                late.tools.extend(tools);
                states.push(json!({"name": server, "status": "connected"}));
            }
            Err(why) => {
                late.notices
                    .push(format!("SDK MCP server '{server}' is not available: {why}"));
                states.push(json!({"name": server, "status": "failed"}));
            }
        }
    }
    (late, states)
}

async fn tools_of(requester: &Arc<Requester>, server: &str) -> Result<Vec<Arc<dyn Tool>>, String> {
    requester
        .rpc(
            server,
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "cox", "version": env!("CARGO_PKG_VERSION")},
            }}),
        )
        .await?;
    requester
        .rpc(
            server,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await?;
    let listed = requester
        .rpc(
            server,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await?;
    let tools = listed["tools"].as_array().cloned().unwrap_or_default();
    Ok(tools
        .into_iter()
        .filter_map(|tool| {
            let name = tool["name"].as_str()?.to_owned();
            let annotations = &tool["annotations"];
            let risk = if annotations["destructiveHint"] == true {
                Risk::Destructive
            } else if annotations["readOnlyHint"] == true {
                Risk::ReadOnly
            } else {
                Risk::Exec
            };
            let full = format!("mcp__{server}__{name}");
            Some(Arc::new(SdkTool {
                server: server.to_owned(),
                spec: ToolSpec {
                    name: full,
                    description: tool["description"].as_str().unwrap_or_default().to_owned(),
                    input_schema: if tool["inputSchema"].is_object() {
                        tool["inputSchema"].clone()
                    } else {
                        json!({"type": "object"})
                    },
                },
                tool: name,
                risk,
                requester: Arc::clone(requester),
            }) as Arc<dyn Tool>)
        })
        .collect())
}

/// One tool of an SDK server.
struct SdkTool {
    server: String,
    tool: String,
    spec: ToolSpec,
    risk: Risk,
    requester: Arc<Requester>,
}

impl Tool for SdkTool {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn classify(&self, _: &Value, _: &Workspace) -> Classified {
        Classified {
            risk: self.risk,
            subject: self.spec.name.clone(),
            segments: None,
            writes: Vec::new(),
        }
    }

    fn run<'a>(&'a self, input: Value, cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let call = self.requester.rpc(
                &self.server,
                json!({"jsonrpc": "2.0", "id": self.requester.next_id(), "method": "tools/call",
                       "params": {"name": self.tool, "arguments": input}}),
            );
            let answer = tokio::select! {
                answer = call => answer,
                () = cx.cancel.cancelled() => return ToolResult::error("[cancelled]"),
            };
            match answer {
                Ok(result) => {
                    let text: Vec<&str> = result["content"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|c| c["text"].as_str())
                        .collect();
                    let text = text.join("\n");
                    if result["isError"] == true {
                        ToolResult::error(text)
                    } else {
                        ToolResult::ok(text)
                    }
                }
                Err(why) => ToolResult::error(format!(
                    "SDK MCP server '{}' could not run {}: {why}",
                    self.server, self.tool
                )),
            }
        })
    }
}
