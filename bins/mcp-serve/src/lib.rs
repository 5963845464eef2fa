//! `cox mcp serve`: cox as an MCP server on stdio, for agents and editors
//! that call other agents as tools. Two tools: `cox` starts a session on a
//! prompt, `cox-reply` continues one by its id; each runs one turn and
//! answers with the final text and the session id. While a call runs, its
//! streamed text and tool calls go out as progress notifications (when the
//! caller gave a progress token); a cancelled call interrupts the turn.
//!
//! Approvals: a call the permission engine would ask about is asked of
//! the caller through MCP elicitation when it declared that it answers,
//! else denied with its reason, as headless runs do. On the handshake
//! revisions the server sends the elicitation request and waits; the
//! 2026-07-28 revision forbids a server's requests, so there the call
//! answers `input_required` with the elicitation, the turn waits parked
//! (see [`park`]), and the caller's retry carries the answer.
//!
//! Invariants: stdout carries protocol only; each session runs on a
//! thread of its own (the session is not `Send`), reached over channels;
//! the protocol revisions rmcp knows are answered, the 2026-07-28
//! stateless one included.

mod park;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use cox_cli::RunArgs;
use cox_protocol::CallId;
use cox_protocol::types::{Decision, Event, NoticeLevel, PermissionMode, StopReason, Submission};
use futures::channel::mpsc;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, ProgressToken,
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
    /// Turns waiting for the caller's retry, by their request state.
    parked: park::Parked,
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
    heard: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Said>>>,
}

/// What a session says, held by the one call that follows its turn (or
/// by its parked turn).
type Heard = tokio::sync::OwnedMutexGuard<mpsc::UnboundedReceiver<Said>>;

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
        heard: Arc::new(tokio::sync::Mutex::new(heard)),
    }
}

/// How long an elicitation waits for the caller's answer.
const ASK_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// How the caller can be asked about a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Asking {
    /// It declared no elicitation: nobody to ask.
    Nobody,
    /// A handshake revision: an elicitation request, answered in place.
    Request,
    /// The stateless revision: an `input_required` result, answered by a
    /// retry of the call.
    Retry,
}

fn asking(context: &RequestContext<RoleServer>) -> Asking {
    if context
        .client_capabilities()
        .is_none_or(|c| c.elicitation.is_none())
    {
        return Asking::Nobody;
    }
    if context
        .protocol_version()
        .is_none_or(|v| v.has_initialize())
    {
        Asking::Request
    } else {
        Asking::Retry
    }
}

/// The elicitation that asks whether `call` may run: one boolean, `allow`.
fn elicitation(call: &str, reason: &str) -> Option<ElicitRequestParams> {
    let schema = ElicitationSchema::builder()
        .required_bool("allow")
        .build()
        .ok()?;
    Some(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!("cox asks to run {call}: {reason}. Allow it?"),
        requested_schema: schema,
    })
}

/// The decision an elicitation's answer says.
fn decided(result: &ElicitResult) -> Decision {
    let allowed = matches!(result.action, ElicitationAction::Accept)
        && result
            .content
            .as_ref()
            .and_then(|c| c.get("allow"))
            .and_then(Value::as_bool)
            == Some(true);
    if allowed {
        Decision::Allow
    } else {
        Decision::Deny {
            reason: Some("the caller declined this call".into()),
        }
    }
}

/// Asks the caller whether `call` may run, through an MCP elicitation
/// request (the handshake revisions); `None` when the request failed or
/// the call was cancelled.
async fn ask(context: &RequestContext<RoleServer>, call: &str, reason: &str) -> Option<Decision> {
    let params = elicitation(call, reason)?;
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
    Some(decided(&result))
}

/// How one turn went.
#[derive(Default)]
struct Turn {
    session_id: Option<String>,
    text: String,
    stop: Option<StopReason>,
    failure: Option<String>,
}

/// A turn being followed: what it said so far, the calls it announced
/// (for the asks' wording), and the last progress count.
#[derive(Default)]
struct Follow {
    turn: Turn,
    calls: HashMap<String, String>,
    progress: u32,
}

/// Where a followed turn stands when its call returns.
enum Stand {
    Done(Turn),
    /// Waiting for the caller's answer to an ask, which comes with a retry
    /// of the call (the stateless revision).
    Asking {
        follow: Follow,
        call_id: CallId,
        call: String,
        reason: String,
    },
}

/// Follows the running turn of `live` to its end: its events become
/// progress (with the call's token), its asks go to the caller as
/// [`asking`] says, a cancelled call interrupts it. On the stateless
/// revision an ask pauses it instead ([`Stand::Asking`]).
async fn follow(
    live: &Live,
    heard: &mut Heard,
    context: &RequestContext<RoleServer>,
    mut state: Follow,
) -> Stand {
    use futures::StreamExt as _;
    let token = context.meta.get_progress_token();
    let mut interrupted = false;
    let how = asking(context);
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
                state.turn.failure = Some(why);
                break;
            }
            Some(Said::Event(event)) => event,
        };
        // A subagent's calls and asks (its own subagents' too) are followed
        // as this turn's: the core made their ids unique (`<child>/<id>`);
        // the rest of what it says is its own.
        let mut event = event;
        let mut child = false;
        while let Event::Subagent { event: inner, .. } = event {
            event = *inner;
            child = true;
        }
        let message = match &event {
            Event::SessionStarted { session_id, .. } if !child => {
                state.turn.session_id = Some(session_id.to_string());
                None
            }
            Event::TextDelta { text } if !child => {
                state.turn.text.push_str(text);
                Some(format!("text: {text}"))
            }
            Event::ToolCallRequested { call } => {
                let by = if child { "(subagent) " } else { "" };
                let shown = format!("{by}{} {}", call.name, call.subject);
                state
                    .calls
                    .insert(call.id.as_str().to_owned(), shown.clone());
                Some(format!("tool: {shown}"))
            }
            Event::ApprovalRequired { call_id, reason } => {
                let call = state
                    .calls
                    .get(call_id.as_str())
                    .cloned()
                    .unwrap_or_default();
                if how == Asking::Retry && !interrupted {
                    return Stand::Asking {
                        follow: state,
                        call_id: call_id.clone(),
                        call,
                        reason: reason.clone(),
                    };
                }
                let asked = match how {
                    Asking::Request => ask(context, &call, reason).await,
                    Asking::Nobody | Asking::Retry => None,
                };
                let (decision, said) = match asked {
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
            Event::Notice { level, text } if !child => {
                if *level == NoticeLevel::Error {
                    state.turn.failure = Some(text.clone());
                }
                Some(format!("notice: {text}"))
            }
            Event::TurnDone { stop } if !child => {
                state.turn.stop = Some(*stop);
                break;
            }
            _ => None,
        };
        if let Some(message) = message {
            progress(context, token.as_ref(), &mut state.progress, message).await;
        }
    }
    Stand::Done(state.turn)
}

/// Sends one progress notification, when the call gave a token.
async fn progress(
    context: &RequestContext<RoleServer>,
    token: Option<&ProgressToken>,
    count: &mut u32,
    message: String,
) {
    if let Some(token) = token {
        *count += 1;
        let note =
            ProgressNotificationParam::new(token.clone(), f64::from(*count)).with_message(message);
        let _ = context.peer.notify_progress(note).await;
    }
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
        // A retry that answers a parked ask goes on with that turn.
        if let Some(state) = request.request_state.as_deref() {
            let Some(parked) = self.parked.take(state) else {
                return Ok(CallToolResult::error(vec![ContentBlock::text(
                    "this answer is for an ask that no longer waits (it was answered, or denied \
                     after ten minutes without one)",
                )])
                .into());
            };
            let answer = request
                .input_responses
                .as_ref()
                .and_then(|r| r.get(park::ANSWER))
                .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok());
            let decision = answer.as_ref().map_or_else(
                || Decision::Deny {
                    reason: Some("the caller sent no answer to the ask".into()),
                },
                decided,
            );
            let mut state = parked.follow;
            let said = match &decision {
                Decision::Allow => format!("allowed: {}", parked.call),
                _ => format!("declined: {}", parked.call),
            };
            let token = context.meta.get_progress_token();
            progress(&context, token.as_ref(), &mut state.progress, said).await;
            let _ = parked.live.submit.unbounded_send(Submission::Approve {
                call_id: parked.call_id,
                decision,
            });
            return Ok(self
                .go_on(parked.live, parked.heard, state, &context, parked.resumed)
                .await);
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
        let Ok(heard) = Arc::clone(&live.heard).try_lock_owned() else {
            return Ok(CallToolResult::error(vec![ContentBlock::text(
                "a turn is already running in this session",
            )])
            .into());
        };
        if live
            .submit
            .unbounded_send(Submission::UserTurn {
                text: prompt,
                images: Vec::new(),
            })
            .is_err()
        {
            return Ok(
                CallToolResult::error(vec![ContentBlock::text("the session has ended")]).into(),
            );
        }
        Ok(self
            .go_on(live, heard, Follow::default(), &context, args.resume)
            .await)
    }
}

impl CoxServer {
    /// Follows the turn of `live` and answers the call: the turn's result,
    /// or, when it waits on an ask the caller answers by retrying, an
    /// `input_required` result with the turn parked.
    async fn go_on(
        &self,
        live: Arc<Live>,
        mut heard: Heard,
        state: Follow,
        context: &RequestContext<RoleServer>,
        resumed: Option<String>,
    ) -> CallToolResponse {
        let stand = follow(&live, &mut heard, context, state).await;
        let id = match &stand {
            Stand::Done(turn)
            | Stand::Asking {
                follow: Follow { turn, .. },
                ..
            } => turn.session_id.clone().or_else(|| resumed.clone()),
        };
        if let Some(id) = &id {
            self.sessions
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(id.clone(), Arc::clone(&live));
        }
        match stand {
            Stand::Done(turn) => {
                drop(heard);
                match id {
                    Some(id) => answer(&id, turn).into(),
                    None => {
                        let why = turn
                            .failure
                            .unwrap_or_else(|| "the session did not start".into());
                        CallToolResult::error(vec![ContentBlock::text(why)]).into()
                    }
                }
            }
            Stand::Asking {
                follow,
                call_id,
                call,
                reason,
            } => {
                let Some(params) = elicitation(&call, &reason) else {
                    return CallToolResult::error(vec![ContentBlock::text(
                        "cannot build the elicitation for an ask",
                    )])
                    .into();
                };
                let state = self.parked.park(park::Turn {
                    live,
                    heard,
                    follow,
                    call_id,
                    call,
                    resumed,
                });
                let mut requests = InputRequests::new();
                requests.insert(
                    park::ANSWER.to_owned(),
                    InputRequest::Elicitation(ElicitRequest::new(params)),
                );
                InputRequiredResult::new(Some(requests), Some(state)).into()
            }
        }
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
            parked: park::Parked::default(),
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
