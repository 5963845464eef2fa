//! `cox mcp serve`: cox as an MCP server on stdio, for agents and editors
//! that call other agents as tools. Two tools: `cox` starts a session on a
//! prompt, `cox-reply` continues one by its id; each runs one turn and
//! answers with the final text and the session id. While a call runs, its
//! streamed text and tool calls go out as progress notifications (when the
//! caller gave a progress token); a cancelled call interrupts the turn.
//!
//! Approvals: a call the permission engine would ask about is asked of
//! the caller through MCP elicitation when it declared that it answers
//! (on the handshake revisions; the 2026-07-28 one forbids a server's
//! requests), else denied with its reason, as headless runs do.
//!
//! Invariants: stdout carries protocol only; each session runs on a
//! thread of its own (the session is not `Send`), reached over channels;
//! the protocol revisions rmcp knows are answered, the 2026-07-28
//! stateless one included.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use cox_cli::RunArgs;
use cox_protocol::types::{Decision, Event, NoticeLevel, PermissionMode, StopReason, Submission};
use futures::channel::mpsc;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitationAction, ElicitationSchema,
    ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// The server: the flags every session starts with, and the sessions it
/// runs (kept between calls, so `cox-reply` goes on in place).
struct CoxServer {
    base: RunArgs,
    sessions: Mutex<HashMap<String, Arc<Live>>>,
}

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn tools() -> Vec<Tool> {
    let modes: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.as_str()).collect();
    vec![
        Tool::new(
            "cox",
            "Run a cox session on a coding task: one turn of the agent in a folder, with its \
             tools under cox's permission engine and sandbox. Answers with the final text and \
             the session id (continue it with cox-reply).",
            schema(json!({
                "type": "object",
                "properties": {
                    "prompt": {"type": "string", "description": "The task."},
                    "cwd": {"type": "string", "description": "The folder to work in (absolute; default: the server's)."},
                    "permission_mode": {"type": "string", "enum": modes, "description": "How calls are allowed (default: the config's)."},
                    "model": {"type": "string", "description": "The model main turns run on."}
                },
                "required": ["prompt"],
                "additionalProperties": false
            })),
        ),
        Tool::new(
            "cox-reply",
            "Continue a cox session by its id with another prompt; answers like `cox`.",
            schema(json!({
                "type": "object",
                "properties": {
                    "session_id": {"type": "string", "description": "The id `cox` answered with."},
                    "prompt": {"type": "string", "description": "What to say next."}
                },
                "required": ["session_id", "prompt"],
                "additionalProperties": false
            })),
        ),
    ]
}

/// A call's arguments as session flags.
fn call_args(
    base: &RunArgs,
    name: &str,
    arguments: &JsonObject,
) -> Result<(RunArgs, String), String> {
    let known: &[&str] = match name {
        "cox" => &["prompt", "cwd", "permission_mode", "model"],
        _ => &["session_id", "prompt"],
    };
    if let Some(extra) = arguments.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(format!("{name} takes no argument `{extra}`"));
    }
    // Every argument is text: another type is an error, never a default.
    if let Some((key, _)) = arguments.iter().find(|(_, v)| !v.is_string()) {
        return Err(format!("`{key}` must be a string"));
    }
    let text = |key: &str| {
        arguments
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .filter(|v| !v.trim().is_empty())
    };
    let prompt = text("prompt").ok_or("`prompt` is required (a non-empty string)")?;
    let mut args = base.clone();
    args.prompt = None;
    if name == "cox-reply" {
        args.resume = Some(
            text("session_id").ok_or("`session_id` is required (the id `cox` answered with)")?,
        );
        return Ok((args, prompt));
    }
    if let Some(cwd) = text("cwd") {
        let path = std::path::PathBuf::from(&cwd);
        if !path.is_absolute() || !path.is_dir() {
            return Err(format!("cwd {cwd} is not an absolute path to a folder"));
        }
        // The whole filesystem is no project: every shell call would
        // snapshot all of it.
        if std::fs::canonicalize(&path).is_ok_and(|real| real.parent().is_none()) {
            return Err(format!(
                "cwd {cwd} is the filesystem's root; name a project folder"
            ));
        }
        args.cwd = Some(path);
    }
    if let Some(mode) = text("permission_mode") {
        let mode = PermissionMode::ALL
            .into_iter()
            .find(|m| m.as_str() == mode)
            .ok_or_else(|| format!("unknown permission_mode `{mode}`"))?;
        args.permission_mode = Some(cox_cli::given::Given::Flag(mode));
    }
    if let Some(model) = text("model") {
        args.model = Some(cox_cli::given::Given::Flag(model));
    }
    Ok((args, prompt))
}

/// What a session's thread sends back.
enum Said {
    Event(Event),
    /// The session could not start, or ended in error: why.
    Failed(String),
}

/// A session kept between calls: its submissions, and what it says (held
/// by the call whose turn runs).
struct Live {
    submit: mpsc::UnboundedSender<Submission>,
    heard: tokio::sync::Mutex<mpsc::UnboundedReceiver<Said>>,
}

/// Starts the session `args` describes on a thread of its own; it runs
/// until its submissions end.
fn start(args: RunArgs) -> Live {
    let (said, heard) = mpsc::unbounded();
    let (submit, submissions) = mpsc::unbounded();
    let spawned = std::thread::Builder::new()
        .name("cox-mcp-session".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(err) => {
                    let _ = said.unbounded_send(Said::Failed(err.to_string()));
                    return;
                }
            };
            let _inside = runtime.enter();
            let (session, facts) = match cox_cli::session::interactive_session(
                &args,
                cox_cli::providers::any_provider,
            ) {
                Ok(built) => built,
                Err(err) => {
                    let _ = said.unbounded_send(Said::Failed(cox_cli::error_chain(&err)));
                    return;
                }
            };
            let mut watch = cox_cli::telemetry::Watch::new(facts.catalog);
            let outcome = runtime.block_on(session.run(submissions, |event| {
                watch.event(event);
                let _ = said.unbounded_send(Said::Event(event.clone()));
            }));
            drop(watch);
            if let Err(err) = outcome {
                let _ = said.unbounded_send(Said::Failed(err.to_string()));
            }
        });
    if let Err(err) = spawned {
        tracing::warn!(%err, "cannot start a session thread");
    }
    Live {
        submit,
        heard: tokio::sync::Mutex::new(heard),
    }
}

/// How long an elicitation waits for the caller's answer.
const ASK_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// Asks the caller whether `call` may run, through MCP elicitation; `None`
/// when the caller cannot be asked (it declared no elicitation, or the
/// session is on the stateless revision, which forbids a server's
/// requests), or the request failed.
async fn ask(context: &RequestContext<RoleServer>, call: &str, reason: &str) -> Option<Decision> {
    let answers = context
        .client_capabilities()
        .is_some_and(|c| c.elicitation.is_some())
        && context
            .protocol_version()
            .is_none_or(|v| v.has_initialize());
    if !answers {
        return None;
    }
    let schema = ElicitationSchema::builder()
        .required_bool("allow")
        .build()
        .ok()?;
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!("cox asks to run {call}: {reason}. Allow it?"),
        requested_schema: schema,
    };
    let sent = context
        .peer
        .send_request_with_option(
            ServerRequest::ElicitRequest(ElicitRequest::new(params)),
            PeerRequestOptions::with_timeout(ASK_WAIT),
        )
        .await
        .ok()?;
    let answer = tokio::select! {
        answer = sent.await_response() => answer.ok()?,
        () = context.ct.cancelled() => return None,
    };
    let ClientResult::ElicitResult(result) = answer else {
        return None;
    };
    let allowed = matches!(result.action, ElicitationAction::Accept)
        && result
            .content
            .as_ref()
            .and_then(|c| c.get("allow"))
            .and_then(Value::as_bool)
            == Some(true);
    Some(if allowed {
        Decision::Allow
    } else {
        Decision::Deny {
            reason: Some("the caller declined this call".into()),
        }
    })
}

/// How one turn went.
#[derive(Default)]
struct Turn {
    session_id: Option<String>,
    text: String,
    stop: Option<StopReason>,
    failure: Option<String>,
}

/// Runs one turn of `live` on `prompt`: its events become progress (with
/// `token`), its asks are denied with their reason, a cancelled call
/// interrupts it; returns at its end.
async fn turn(
    live: &Live,
    heard: &mut mpsc::UnboundedReceiver<Said>,
    prompt: String,
    context: &RequestContext<RoleServer>,
) -> Turn {
    use futures::StreamExt as _;
    let mut turn = Turn::default();
    if live
        .submit
        .unbounded_send(Submission::UserTurn { text: prompt })
        .is_err()
    {
        turn.failure = Some("the session has ended".into());
        return turn;
    }
    let token = context.meta.get_progress_token();
    let mut progress = 0u32;
    let mut calls: HashMap<String, String> = HashMap::new();
    let mut interrupted = false;
    loop {
        let said = tokio::select! {
            said = heard.next() => said,
            () = context.ct.cancelled(), if !interrupted => {
                interrupted = true;
                let _ = live.submit.unbounded_send(Submission::Interrupt);
                continue;
            }
        };
        let event = match said {
            None => break,
            Some(Said::Failed(why)) => {
                turn.failure = Some(why);
                break;
            }
            Some(Said::Event(event)) => event,
        };
        let message = match &event {
            Event::SessionStarted { session_id, .. } => {
                turn.session_id = Some(session_id.to_string());
                None
            }
            Event::TextDelta { text } => {
                turn.text.push_str(text);
                Some(format!("text: {text}"))
            }
            Event::ToolCallRequested { call } => {
                let shown = format!("{} {}", call.name, call.subject);
                calls.insert(call.id.as_str().to_owned(), shown.clone());
                Some(format!("tool: {shown}"))
            }
            Event::ApprovalRequired { call_id, reason } => {
                let call = calls.get(call_id.as_str()).cloned().unwrap_or_default();
                let (decision, said) = match ask(context, &call, reason).await {
                    Some(decision @ Decision::Allow) => (decision, format!("allowed: {call}")),
                    Some(decision) => (decision, format!("declined: {call}")),
                    // No one to ask: the headless answer, with why.
                    None => (
                        Decision::Deny {
                            reason: Some(format!(
                                "{reason}; cox mcp serve cannot ask its caller, so it is denied \
                                 (allow it with a rule or a wider permission_mode)"
                            )),
                        },
                        format!("denied: {reason}"),
                    ),
                };
                let _ = live.submit.unbounded_send(Submission::Approve {
                    call_id: call_id.clone(),
                    decision,
                });
                Some(said)
            }
            Event::Notice { level, text } => {
                if *level == NoticeLevel::Error {
                    turn.failure = Some(text.clone());
                }
                Some(format!("notice: {text}"))
            }
            Event::TurnDone { stop } => {
                turn.stop = Some(*stop);
                break;
            }
            _ => None,
        };
        if let (Some(token), Some(message)) = (&token, message) {
            progress += 1;
            let note = ProgressNotificationParam::new(token.clone(), f64::from(progress))
                .with_message(message);
            let _ = context.peer.notify_progress(note).await;
        }
    }
    turn
}

/// The tool's answer for a turn of session `id`.
fn answer(id: &str, turn: Turn) -> CallToolResult {
    let stop = turn.stop.unwrap_or(StopReason::Error);
    let ok = !matches!(stop, StopReason::Error | StopReason::Budget);
    let structured = json!({
        "session_id": id,
        "text": turn.text,
        "stop_reason": stop.as_str(),
    });
    let mut result = if ok {
        CallToolResult::success(vec![ContentBlock::text(format!(
            "{}\n\n[session {id}]",
            turn.text
        ))])
    } else {
        CallToolResult::error(vec![ContentBlock::text(format!(
            "the turn ended: {}{}\n\n[session {id}]",
            stop.as_str(),
            turn.failure.map(|f| format!(": {f}")).unwrap_or_default()
        ))])
    };
    result.structured_content = Some(structured);
    result
}

impl ServerHandler for CoxServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("cox", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "cox runs coding tasks in a folder: call `cox` with a prompt, then `cox-reply` \
                 with the session id to go on.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if name != "cox" && name != "cox-reply" {
            return Err(McpError::invalid_params(
                format!("unknown tool `{name}`"),
                None,
            ));
        }
        let arguments = request.arguments.unwrap_or_default();
        let (args, prompt) = match call_args(&self.base, &name, &arguments) {
            Ok(parsed) => parsed,
            Err(why) => return Ok(CallToolResult::error(vec![ContentBlock::text(why)]).into()),
        };
        // A session this server runs goes on in place; another is resumed
        // from its record.
        let kept = args.resume.as_ref().and_then(|id| {
            self.sessions
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(id)
                .cloned()
        });
        let live = kept.unwrap_or_else(|| Arc::new(start(args.clone())));
        let Ok(mut heard) = live.heard.try_lock() else {
            return Ok(CallToolResult::error(vec![ContentBlock::text(
                "a turn is already running in this session",
            )])
            .into());
        };
        let done = turn(&live, &mut heard, prompt, &context).await;
        drop(heard);
        let Some(id) = done.session_id.clone().or(args.resume) else {
            let why = done
                .failure
                .unwrap_or_else(|| "the session did not start".into());
            return Ok(CallToolResult::error(vec![ContentBlock::text(why)]).into());
        };
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), Arc::clone(&live));
        Ok(answer(&id, done).into())
    }
}

/// Serves MCP on stdin and stdout until the client goes; the exit code.
#[must_use]
pub fn serve(base: RunArgs) -> i32 {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("cox: error: cannot start the async runtime: {err}");
            return 1;
        }
    };
    runtime.block_on(async {
        let server = CoxServer {
            base,
            sessions: Mutex::new(HashMap::new()),
        };
        match server.serve(rmcp::transport::stdio()).await {
            Ok(running) => match running.waiting().await {
                Ok(_) => 0,
                Err(err) => {
                    eprintln!("cox: error: mcp serve: {err}");
                    1
                }
            },
            Err(err) => {
                eprintln!("cox: error: mcp serve: {err}");
                1
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            _ => JsonObject::new(),
        }
    }

    #[test]
    fn an_argument_of_another_type_is_an_error_never_a_default() {
        let base = RunArgs::default();
        for (bad, needle) in [
            (
                json!({"prompt": "hi", "cwd": ["/tmp"]}),
                "`cwd` must be a string",
            ),
            (
                json!({"prompt": "hi", "permission_mode": ["plan"]}),
                "`permission_mode` must be a string",
            ),
            (
                json!({"prompt": "hi", "model": 3}),
                "`model` must be a string",
            ),
            (json!({"prompt": 5}), "`prompt` must be a string"),
            (json!({"prompt": "  "}), "`prompt` is required"),
            (json!({"prompt": "hi", "cwd": "/"}), "the filesystem's root"),
            (
                json!({"prompt": "hi", "zzz": "1"}),
                "takes no argument `zzz`",
            ),
        ] {
            let err = call_args(&base, "cox", &args(bad)).unwrap_err();
            assert!(err.contains(needle), "{err}");
        }
        let err = call_args(
            &base,
            "cox-reply",
            &args(json!({"session_id": "", "prompt": "x"})),
        )
        .unwrap_err();
        assert!(err.contains("`session_id` is required"), "{err}");
        let (parsed, prompt) = call_args(
            &base,
            "cox",
            &args(json!({"prompt": "go", "permission_mode": "plan"})),
        )
        .unwrap();
        assert_eq!(prompt, "go");
        assert!(parsed.permission_mode.is_some());
    }
}
