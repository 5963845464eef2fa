//! `cox acp`: cox in an editor, over the Agent Client Protocol (JSON-RPC
//! on stdio). Each ACP session is a cox session, built as the terminal UI
//! builds one (approvals asked of the person, here through
//! `session/request_permission`), running on a thread of its own; its
//! events become `session/update`s ([`updates`]).
//!
//! Invariants:
//! - stdout carries protocol JSON only: diagnostics go to the log file,
//!   warnings to stderr;
//! - a request handler never waits on the client: a prompt's turn runs
//!   apart and answers when its `TurnDone` comes, so `session/cancel` and
//!   the permission answers get through while it runs;
//! - stdin's end ends every session (its rollout complete) and the process.

pub mod stdin;
pub mod stdout;
pub mod updates;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Agent, ByteStreams, Client, Error};
use cox_cli::RunArgs;
use cox_protocol::provider::Tier;
use cox_protocol::types::{Decision, PermissionMode, StopReason, Submission};
use futures::channel::{mpsc, oneshot};
use updates::{Out, Updates};

type Cx = ConnectionTo<Client>;

/// How long a permission request waits for the client before the turn is
/// cancelled, unless [`PERMISSION_WAIT_VAR`] says otherwise.
const PERMISSION_WAIT: Duration = Duration::from_secs(600);

/// The variable that sets that wait, in milliseconds.
pub const PERMISSION_WAIT_VAR: &str = "COX_ACP_PERMISSION_TIMEOUT_MS";

/// The wait for a permission answer: the variable when set, else ten
/// minutes.
///
/// # Errors
/// The variable is not a whole number of milliseconds above 0.
fn permission_wait() -> Result<Duration, String> {
    match std::env::var(PERMISSION_WAIT_VAR) {
        Err(_) => Ok(PERMISSION_WAIT),
        Ok(text) => text
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|ms| *ms > 0)
            .map(Duration::from_millis)
            .ok_or_else(|| {
                format!(
                    "{PERMISSION_WAIT_VAR}={text}: expected a whole number of milliseconds above 0"
                )
            }),
    }
}

/// A running session.
struct Live {
    submissions: mpsc::UnboundedSender<Submission>,
    /// The models a client may pick, and the one picked.
    models: Vec<String>,
    model: String,
    /// The running prompt's answer, taken at its `TurnDone`.
    turn: Arc<Mutex<Option<oneshot::Sender<Ended>>>>,
    thread: std::thread::JoinHandle<()>,
}

/// How a turn ended, and the error said in it, if any.
type Ended = (StopReason, Option<String>);

/// What a session's start says back.
struct Started {
    id: String,
    mode: PermissionMode,
    model: String,
    models: Vec<String>,
}

/// The model picker, `current` chosen among `models`.
fn model_option(current: &str, models: &[String]) -> acp::SessionConfigOption {
    let options: Vec<acp::SessionConfigSelectOption> = models
        .iter()
        .map(|m| acp::SessionConfigSelectOption::new(m.clone(), m.clone()))
        .collect();
    acp::SessionConfigOption::select("model", "Model", current.to_owned(), options)
        .category(acp::SessionConfigOptionCategory::Model)
}

/// The server's state: the flags it was started with, what the client
/// said it can do, and the sessions.
struct Server {
    base: RunArgs,
    /// How long a permission request waits for its answer.
    wait: Duration,
    client: Mutex<acp::ClientCapabilities>,
    sessions: Mutex<HashMap<String, Live>>,
    /// Sessions `session/load` is opening now.
    opening: Mutex<std::collections::HashSet<String>>,
}

/// The editor's buffers, through `fs/read_text_file` and
/// `fs/write_text_file` as far as the client offers them (the disk for
/// what it does not).
struct ClientFiles {
    cx: Cx,
    /// Set once the session has its id (requests name it).
    session: Arc<std::sync::OnceLock<acp::SessionId>>,
    read: bool,
    write: bool,
}

impl cox_protocol::tool::TextFiles for ClientFiles {
    fn read<'a>(
        &'a self,
        path: &'a std::path::Path,
    ) -> cox_protocol::provider::BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let Some(session) = self.session.get().filter(|_| self.read) else {
                return Err("the editor does not read files".into());
            };
            let request = acp::ReadTextFileRequest::new(session.clone(), path.to_path_buf());
            self.cx
                .send_request(request)
                .block_task()
                .await
                .map(|read| read.content)
                .map_err(|e| e.to_string())
        })
    }

    fn write<'a>(
        &'a self,
        path: &'a std::path::Path,
        text: &'a str,
    ) -> cox_protocol::provider::BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let Some(session) = self.session.get().filter(|_| self.write) else {
                return tokio::fs::write(path, text.as_bytes())
                    .await
                    .map_err(|e| e.to_string());
            };
            let request = acp::WriteTextFileRequest::new(
                session.clone(),
                path.to_path_buf(),
                text.to_owned(),
            );
            self.cx
                .send_request(request)
                .block_task()
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A JSON-RPC "invalid params" error saying `why`.
fn invalid(why: impl Into<String>) -> Error {
    Error::invalid_params().data(serde_json::Value::String(why.into()))
}

/// Runs the ACP server on stdin and stdout until stdin ends; the exit
/// code.
#[must_use]
pub fn serve(base: RunArgs) -> i32 {
    let wait = match permission_wait() {
        Ok(wait) => wait,
        Err(why) => {
            eprintln!("cox: error: {why}");
            return 1;
        }
    };
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
    let (queue, stdout) = match stdout::start() {
        Ok(started) => started,
        Err(err) => {
            eprintln!("cox: error: cannot start the stdout writer: {err}");
            return 1;
        }
    };
    let server = Arc::new(Server {
        base,
        wait,
        client: Mutex::new(acp::ClientCapabilities::default()),
        sessions: Mutex::new(HashMap::new()),
        opening: Mutex::new(std::collections::HashSet::new()),
    });
    let lines = match stdin::start() {
        Ok(lines) => lines,
        Err(err) => {
            eprintln!("cox: error: cannot start the stdin reader: {err}");
            return 1;
        }
    };
    let result = runtime.block_on(connect(Arc::clone(&server), queue, lines));
    server.close_all();
    runtime.shutdown_timeout(Duration::from_millis(100));
    // Everything said is written before the process ends (the queue went
    // with the connection and the runtime).
    stdout.finish();
    match result {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("cox: error: acp: {err}");
            1
        }
    }
}

async fn connect(
    server: Arc<Server>,
    out: stdout::Queue,
    lines: stdin::Lines,
) -> Result<(), Error> {
    let transport = ByteStreams::new(out, lines);
    let on_init = Arc::clone(&server);
    let on_new = Arc::clone(&server);
    let on_load = Arc::clone(&server);
    let on_prompt = Arc::clone(&server);
    let on_cancel = Arc::clone(&server);
    let on_mode = Arc::clone(&server);
    let on_option = Arc::clone(&server);
    Agent
        .v1()
        .name("cox")
        .on_receive_request(
            async move |request: acp::InitializeRequest, responder, _cx| {
                *lock(&on_init.client) = request.client_capabilities.clone();
                responder.respond(initialize(&request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async |request: acp::AuthenticateRequest, responder, _cx| {
                // Keys come from the environment: the one method has
                // nothing to do here.
                if &*request.method_id.0 == "environment" {
                    responder.respond(acp::AuthenticateResponse::new())
                } else {
                    responder.respond_with_error(invalid(format!(
                        "unknown auth method `{}` (cox offers `environment`)",
                        request.method_id.0
                    )))
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::NewSessionRequest, responder, cx| {
                let started = on_new
                    .start(&request.cwd, &request.mcp_servers, None, cx)
                    .await;
                responder.respond_with_result(started.map(|s| {
                    acp::NewSessionResponse::new(acp::SessionId::new(s.id))
                        .modes(modes(s.mode))
                        .config_options(vec![model_option(&s.model, &s.models)])
                }))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::LoadSessionRequest, responder, cx| {
                let id = request.session_id.0.to_string();
                let started = on_load
                    .start(&request.cwd, &request.mcp_servers, Some(id), cx)
                    .await;
                responder.respond_with_result(started.map(|s| {
                    acp::LoadSessionResponse::new()
                        .modes(modes(s.mode))
                        .config_options(vec![model_option(&s.model, &s.models)])
                }))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::PromptRequest, responder, cx| match on_prompt.prompt(&request)
            {
                Ok(done) => cx.spawn(async move {
                    let answer = match done.await {
                        // A turn that failed is an error the client shows,
                        // with what went wrong.
                        Ok((stop @ (StopReason::Error | StopReason::Budget), why)) => {
                            Err(Error::internal_error().data(serde_json::Value::String(
                                why.unwrap_or_else(|| format!("the turn ended: {}", stop.as_str())),
                            )))
                        }
                        Ok((stop, _)) => Ok(acp::PromptResponse::new(updates::stop_reason(stop))),
                        Err(_) => Err(Error::internal_error()
                            .data(serde_json::Value::String("the session ended".into()))),
                    };
                    let _ = responder.respond_with_result(answer);
                    Ok(())
                }),
                Err(err) => responder.respond_with_error(err),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: acp::CancelNotification, _cx| {
                on_cancel.submit(&notification.session_id, Submission::Interrupt);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: acp::SetSessionModeRequest, responder, _cx| {
                responder.respond_with_result(on_mode.set_mode(&request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: acp::SetSessionConfigOptionRequest, responder, _cx| {
                responder.respond_with_result(on_option.pick(&request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_to(transport)
        .await
}

/// The answer to `initialize`: what cox can do for an editor.
fn initialize(request: &acp::InitializeRequest) -> acp::InitializeResponse {
    let capabilities = acp::AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(
            acp::PromptCapabilities::new()
                .image(false)
                .audio(false)
                .embedded_context(true),
        )
        .mcp_capabilities(acp::McpCapabilities::new().http(true).sse(false));
    let environment = acp::AuthMethod::Agent(
        acp::AuthMethodAgent::new("environment", "API key in the environment").description(
            "set ANTHROPIC_API_KEY (or OPENAI_API_KEY, or OPENAI_BASE_URL for a local \
             server) in the environment cox runs in, then start again",
        ),
    );
    acp::InitializeResponse::new(request.protocol_version)
        .agent_capabilities(capabilities)
        .auth_methods(vec![environment])
        .agent_info(acp::Implementation::new("cox", env!("CARGO_PKG_VERSION")))
}

/// The modes a client may switch to: the permission modes, then architect
/// and editor; `current` is on.
fn modes(current: PermissionMode) -> acp::SessionModeState {
    let mut available: Vec<acp::SessionMode> = PermissionMode::ALL
        .iter()
        .map(|m| acp::SessionMode::new(m.as_str().to_owned(), m.as_str().to_owned()))
        .collect();
    available.push(
        acp::SessionMode::new("architect", "architect")
            .description("plan mode, main turns on the think tier"),
    );
    available.push(
        acp::SessionMode::new("editor", "editor").description("main turns back on the code tier"),
    );
    acp::SessionModeState::new(current.as_str().to_owned(), available)
}

/// What switching to mode `id` asks of the session.
fn mode_submission(id: &str) -> Result<Submission, Error> {
    let set = |permission_mode, tier| Submission::SetMode {
        permission_mode,
        tier,
        model: None,
    };
    match id {
        "architect" => Ok(set(Some(PermissionMode::Plan), Some(Tier::Think))),
        "editor" => Ok(set(None, Some(Tier::Code))),
        _ => PermissionMode::ALL
            .iter()
            .find(|m| m.as_str() == id)
            .map(|m| set(Some(*m), None))
            .ok_or_else(|| invalid(format!("unknown mode `{id}`"))),
    }
}

/// The prompt's blocks as the text of a user turn.
fn prompt_text(blocks: &[acp::ContentBlock]) -> Result<String, Error> {
    let mut text = String::new();
    for block in blocks {
        match block {
            acp::ContentBlock::Text(t) => text.push_str(&t.text),
            acp::ContentBlock::ResourceLink(link) => {
                text.push_str(&format!(" @{} ", link.uri));
            }
            acp::ContentBlock::Resource(embedded) => match &embedded.resource {
                acp::EmbeddedResourceResource::TextResourceContents(r) => {
                    text.push_str(&format!(
                        "\n<resource uri=\"{}\">\n{}\n</resource>\n",
                        r.uri, r.text
                    ));
                }
                _ => return Err(invalid("only text resources can be embedded in a prompt")),
            },
            _ => {
                return Err(invalid(
                    "this prompt block is not supported (cox takes text and embedded text)",
                ));
            }
        }
    }
    if text.trim().is_empty() {
        return Err(invalid("the prompt is empty"));
    }
    Ok(text)
}

/// The client's MCP servers as the JSON `--mcp-config` takes.
fn mcp_config(servers: &[acp::McpServer]) -> Result<Option<String>, Error> {
    if servers.is_empty() {
        return Ok(None);
    }
    let mut entries = serde_json::Map::new();
    for server in servers {
        let (name, entry) = match server {
            acp::McpServer::Stdio(s) => {
                let env: serde_json::Map<String, serde_json::Value> = s
                    .env
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone().into()))
                    .collect();
                (
                    s.name.clone(),
                    serde_json::json!({
                        "command": s.command.display().to_string(),
                        "args": s.args,
                        "env": env,
                    }),
                )
            }
            acp::McpServer::Http(h) => {
                let headers: serde_json::Map<String, serde_json::Value> = h
                    .headers
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone().into()))
                    .collect();
                (
                    h.name.clone(),
                    serde_json::json!({"type": "http", "url": h.url, "headers": headers}),
                )
            }
            _ => {
                return Err(invalid(
                    "cox connects MCP servers over stdio and HTTP, not SSE",
                ));
            }
        };
        entries.insert(name, entry);
    }
    Ok(Some(
        serde_json::json!({ "mcpServers": entries }).to_string(),
    ))
}

/// The decision an option id stands for; none for a cancelled request.
fn decision(outcome: &acp::RequestPermissionOutcome) -> Option<Decision> {
    match outcome {
        acp::RequestPermissionOutcome::Selected(selected) => Some(match &*selected.option_id.0 {
            "allow_once" => Decision::Allow,
            "allow_always" => Decision::AllowForSession,
            "reject_always" => Decision::Deny {
                reason: Some("the user rejected this call and asked not to be asked again".into()),
            },
            _ => Decision::Deny {
                reason: Some("the user rejected this call".into()),
            },
        }),
        _ => None,
    }
}

fn permission_options() -> Vec<acp::PermissionOption> {
    use acp::PermissionOptionKind as Kind;
    [
        ("allow_once", "Allow once", Kind::AllowOnce),
        ("allow_always", "Allow for this session", Kind::AllowAlways),
        ("reject_once", "Reject", Kind::RejectOnce),
        ("reject_always", "Reject, and say so", Kind::RejectAlways),
    ]
    .into_iter()
    .map(|(id, name, kind)| acp::PermissionOption::new(id, name, kind))
    .collect()
}

/// A session being opened by `session/load`; forgotten when dropped.
struct Opening<'a> {
    server: &'a Server,
    id: String,
}

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        lock(&self.server.opening).remove(&self.id);
    }
}

impl Server {
    /// Marks session `id` as being opened, unless it runs or is being
    /// opened already.
    fn open_once(&self, id: &str) -> Result<Opening<'_>, Error> {
        let running = lock(&self.sessions).contains_key(id);
        if running || !lock(&self.opening).insert(id.to_owned()) {
            return Err(
                Error::invalid_request().data(serde_json::Value::String(format!(
                    "session {id} is already open in this process"
                ))),
            );
        }
        Ok(Opening {
            server: self,
            id: id.to_owned(),
        })
    }

    /// Switches a session's mode, between turns only: a turn runs to its
    /// end under the mode it started with, so a switch while it runs is
    /// refused rather than left to apply later unseen.
    fn set_mode(
        &self,
        request: &acp::SetSessionModeRequest,
    ) -> Result<acp::SetSessionModeResponse, Error> {
        let submission = mode_submission(&request.mode_id.0)?;
        let sessions = lock(&self.sessions);
        let Some(live) = sessions.get(&*request.session_id.0) else {
            return Err(acp::Error::session_not_found(request.session_id.clone()).into());
        };
        if lock(&live.turn).is_some() {
            return Err(Error::invalid_request().data(serde_json::Value::String(
                "a turn is running: the mode can change once it ends (or cancel it first)".into(),
            )));
        }
        live.submissions
            .unbounded_send(submission)
            .map(|()| acp::SetSessionModeResponse::new())
            .map_err(|_| {
                Error::internal_error()
                    .data(serde_json::Value::String("the session has ended".into()))
            })
    }

    /// Switches a session's model (the one config option cox offers).
    fn pick(
        &self,
        request: &acp::SetSessionConfigOptionRequest,
    ) -> Result<acp::SetSessionConfigOptionResponse, Error> {
        if &*request.config_id.0 != "model" {
            return Err(invalid(format!(
                "unknown config option `{}` (cox offers `model`)",
                request.config_id.0
            )));
        }
        let Some(value) = request.value.as_value_id() else {
            return Err(invalid("the model is picked by its id"));
        };
        let mut sessions = lock(&self.sessions);
        let Some(live) = sessions.get_mut(&*request.session_id.0) else {
            return Err(acp::Error::session_not_found(request.session_id.clone()).into());
        };
        let model = value.0.to_string();
        if !live.models.contains(&model) {
            return Err(invalid(format!("unknown model `{model}`")));
        }
        let switch = Submission::SetMode {
            permission_mode: None,
            tier: None,
            model: Some(model.clone()),
        };
        if live.submissions.unbounded_send(switch).is_err() {
            return Err(Error::internal_error()
                .data(serde_json::Value::String("the session has ended".into())));
        }
        live.model.clone_from(&model);
        Ok(acp::SetSessionConfigOptionResponse::new(vec![
            model_option(&live.model, &live.models),
        ]))
    }

    /// Sends `submission` to session `id`; whether it runs.
    fn submit(&self, id: &acp::SessionId, submission: Submission) -> bool {
        lock(&self.sessions)
            .get(&*id.0)
            .is_some_and(|live| live.submissions.unbounded_send(submission).is_ok())
    }

    /// Starts a prompt's turn; the receiver gets its end.
    fn prompt(&self, request: &acp::PromptRequest) -> Result<oneshot::Receiver<Ended>, Error> {
        let text = prompt_text(&request.prompt)?;
        let sessions = lock(&self.sessions);
        let Some(live) = sessions.get(&*request.session_id.0) else {
            return Err(acp::Error::session_not_found(request.session_id.clone()).into());
        };
        let (done, answer) = oneshot::channel();
        {
            let mut turn = lock(&live.turn);
            if turn.is_some() {
                return Err(Error::invalid_request().data(serde_json::Value::String(
                    "a prompt is already running in this session".into(),
                )));
            }
            *turn = Some(done);
        }
        if live
            .submissions
            .unbounded_send(Submission::UserTurn { text })
            .is_err()
        {
            lock(&live.turn).take();
            return Err(Error::internal_error()
                .data(serde_json::Value::String("the session has ended".into())));
        }
        Ok(answer)
    }

    /// Starts a session in `cwd` (resuming `resume`) on a thread of its
    /// own; answers once it runs (after replaying a resumed session's
    /// conversation as updates).
    async fn start(
        &self,
        cwd: &std::path::Path,
        mcp_servers: &[acp::McpServer],
        resume: Option<String>,
        cx: Cx,
    ) -> Result<Started, Error> {
        if !cwd.is_absolute() {
            return Err(invalid(format!(
                "cwd {} is not an absolute path",
                cwd.display()
            )));
        }
        if !cwd.is_dir() {
            return Err(invalid(format!("cwd {} is not a folder", cwd.display())));
        }
        // The whole filesystem is no project: every shell call would
        // snapshot all of it.
        if std::fs::canonicalize(cwd).is_ok_and(|real| real.parent().is_none()) {
            return Err(invalid(format!(
                "cwd {} is the filesystem's root; open a project folder",
                cwd.display()
            )));
        }
        // One process runs a session once: a second copy would write the
        // same rollout and miss the first one's cancel.
        let _opening = match &resume {
            Some(id) if !cox_cli::resume::known(id) => {
                return Err(acp::Error::session_not_found(acp::SessionId::new(id.clone())).into());
            }
            Some(id) => Some(self.open_once(id)?),
            None => None,
        };
        let mut args = self.base.clone();
        args.cwd = Some(PathBuf::from(cwd));
        args.resume = resume;
        args.continue_ = false;
        if let Some(json) = mcp_config(mcp_servers)? {
            args.mcp_config.push(json);
        }
        let caps = lock(&self.client).clone();
        let session_id = Arc::new(std::sync::OnceLock::new());
        let files: Option<Arc<dyn cox_protocol::tool::TextFiles>> =
            (caps.fs.read_text_file || caps.fs.write_text_file).then(|| {
                Arc::new(ClientFiles {
                    cx: cx.clone(),
                    session: Arc::clone(&session_id),
                    read: caps.fs.read_text_file,
                    write: caps.fs.write_text_file,
                }) as Arc<dyn cox_protocol::tool::TextFiles>
            });
        let wait = self.wait;
        let (submissions, incoming) = mpsc::unbounded();
        let turn: Arc<Mutex<Option<oneshot::Sender<Ended>>>> = Arc::default();
        let (ready, started) = oneshot::channel();
        let thread = {
            let turn = Arc::clone(&turn);
            let submissions = submissions.clone();
            std::thread::Builder::new()
                .name("cox-acp-session".into())
                .spawn(move || {
                    SessionThread {
                        args,
                        files,
                        wait,
                        incoming,
                        submissions,
                        turn,
                        ready,
                        cx,
                    }
                    .run(&session_id);
                })
                .map_err(|e| {
                    Error::internal_error().data(serde_json::Value::String(e.to_string()))
                })?
        };
        let started = match started.await {
            Ok(Ok(started)) => started,
            Ok(Err(err)) => {
                let _ = thread.join();
                return Err(err);
            }
            Err(_) => {
                let _ = thread.join();
                return Err(Error::internal_error().data(serde_json::Value::String(
                    "the session did not start".into(),
                )));
            }
        };
        lock(&self.sessions).insert(
            started.id.clone(),
            Live {
                submissions,
                models: started.models.clone(),
                model: started.model.clone(),
                turn,
                thread,
            },
        );
        Ok(started)
    }

    /// Ends every session and waits for its record to be complete.
    fn close_all(&self) {
        let sessions: Vec<Live> = lock(&self.sessions).drain().map(|(_, live)| live).collect();
        for live in &sessions {
            let _ = live.submissions.unbounded_send(Submission::Interrupt);
            let _ = live.submissions.unbounded_send(Submission::Shutdown);
        }
        for live in sessions {
            let _ = live.thread.join();
        }
    }
}

/// What a session's thread is given.
struct SessionThread {
    args: RunArgs,
    files: Option<Arc<dyn cox_protocol::tool::TextFiles>>,
    /// How long a permission request waits.
    wait: Duration,
    incoming: mpsc::UnboundedReceiver<Submission>,
    submissions: mpsc::UnboundedSender<Submission>,
    turn: Arc<Mutex<Option<oneshot::Sender<Ended>>>>,
    ready: oneshot::Sender<Result<Started, Error>>,
    cx: Cx,
}

impl SessionThread {
    /// Builds the session, says so (or why not), then runs it, sending its
    /// events to the client; its id goes to `session_id_slot` once known.
    fn run(self, session_id_slot: &std::sync::OnceLock<acp::SessionId>) {
        let SessionThread {
            args,
            files,
            wait,
            incoming,
            submissions,
            turn,
            ready,
            cx,
        } = self;
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(err) => {
                let _ =
                    ready
                        .send(Err(Error::internal_error()
                            .data(serde_json::Value::String(err.to_string()))));
                return;
            }
        };
        let _inside = runtime.enter();
        let (session, facts) = match cox_cli::session::interactive_session_with_files(
            &args,
            cox_cli::providers::any_provider,
            files,
        ) {
            Ok(built) => built,
            Err(err) => {
                let text = cox_cli::error_chain(&err);
                let error = if text.contains("no model provider is configured") {
                    Error::auth_required()
                } else {
                    Error::invalid_params()
                };
                let _ = ready.send(Err(error.data(serde_json::Value::String(text))));
                return;
            }
        };
        let id = session.id().to_string();
        let session_id = acp::SessionId::new(id.clone());
        let _ = session_id_slot.set(session_id.clone());
        let mut updates = Updates::new(facts.catalog.clone());
        for update in updates.replay(&facts.past) {
            let _ = cx.send_notification(acp::SessionNotification::new(session_id.clone(), update));
        }
        let mut models: Vec<String> = facts.models.iter().map(|(id, ..)| id.clone()).collect();
        if !models.contains(&facts.model) {
            models.insert(0, facts.model.clone());
        }
        if ready
            .send(Ok(Started {
                id,
                mode: facts.permission_mode,
                model: facts.model.clone(),
                models,
            }))
            .is_err()
        {
            return;
        }
        let mut watch = cox_cli::telemetry::Watch::new(facts.catalog);
        let outcome = runtime.block_on(session.run(incoming, |event| {
            watch.event(event);
            for out in updates.event(event) {
                match out {
                    Out::Update(update) => {
                        let _ = cx.send_notification(acp::SessionNotification::new(
                            session_id.clone(),
                            update,
                        ));
                    }
                    Out::Ask {
                        call_id,
                        call,
                        reason,
                    } => {
                        tracing::info!(call = %call_id, %reason, "acp permission request");
                        ask(&cx, &session_id, (call_id, call), submissions.clone(), wait);
                    }
                    Out::Done(stop, why) => {
                        if let Some(done) = lock(&turn).take() {
                            let _ = done.send((stop, why));
                        }
                    }
                }
            }
        }));
        drop(watch);
        if let Err(err) = outcome {
            tracing::warn!(%err, "acp session ended in error");
        }
        // A prompt still waiting learns the session is gone.
        lock(&turn).take();
    }
}

/// Asks the client about a call, and passes its answer to the session
/// (a cancelled or unanswered request cancels the turn).
fn ask(
    cx: &Cx,
    session_id: &acp::SessionId,
    (call_id, call): (String, acp::ToolCallUpdate),
    submissions: mpsc::UnboundedSender<Submission>,
    wait: Duration,
) {
    let request =
        acp::RequestPermissionRequest::new(session_id.clone(), call, permission_options());
    let sent = cx.send_request(request);
    tokio::spawn(async move {
        let answer = tokio::time::timeout(wait, sent.block_task()).await;
        let decision = match answer {
            Ok(Ok(response)) => decision(&response.outcome),
            Ok(Err(err)) => {
                tracing::warn!(%err, "the client failed the permission request");
                None
            }
            Err(_) => {
                tracing::warn!("the client did not answer the permission request");
                None
            }
        };
        let submission = match decision {
            Some(decision) => Submission::Approve {
                call_id: call_id.into(),
                decision,
            },
            None => Submission::Interrupt,
        };
        let _ = submissions.unbounded_send(submission);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_switch_by_their_ids_and_refuse_others() {
        assert!(matches!(
            mode_submission("acceptEdits"),
            Ok(Submission::SetMode {
                permission_mode: Some(PermissionMode::AcceptEdits),
                tier: None,
                ..
            })
        ));
        assert!(matches!(
            mode_submission("architect"),
            Ok(Submission::SetMode {
                permission_mode: Some(PermissionMode::Plan),
                tier: Some(Tier::Think),
                ..
            })
        ));
        assert!(mode_submission("yolo").is_err());
    }

    #[test]
    fn mcp_servers_become_cox_s_config_and_sse_is_refused() {
        let servers: Vec<acp::McpServer> = serde_json::from_value(serde_json::json!([
            {"name": "fs", "command": "/bin/fs", "args": ["-x"], "env": [{"name": "A", "value": "1"}]},
            {"type": "http", "name": "web", "url": "http://127.0.0.1:1/mcp", "headers": [{"name": "X", "value": "y"}]}
        ]))
        .unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&mcp_config(&servers).unwrap().unwrap()).unwrap();
        assert_eq!(json["mcpServers"]["fs"]["command"], "/bin/fs");
        assert_eq!(json["mcpServers"]["fs"]["env"]["A"], "1");
        assert_eq!(json["mcpServers"]["web"]["type"], "http");
        assert_eq!(json["mcpServers"]["web"]["headers"]["X"], "y");
        let sse: Vec<acp::McpServer> = serde_json::from_value(serde_json::json!([
            {"type": "sse", "name": "old", "url": "http://127.0.0.1:1/sse", "headers": []}
        ]))
        .unwrap();
        assert!(mcp_config(&sse).is_err());
    }

    #[test]
    fn a_prompt_takes_text_and_embedded_text() {
        let blocks: Vec<acp::ContentBlock> = serde_json::from_value(serde_json::json!([
            {"type": "text", "text": "fix"},
            {"type": "resource", "resource": {"uri": "file:///a.rs", "text": "fn a() {}"}}
        ]))
        .unwrap();
        let text = prompt_text(&blocks).unwrap();
        assert!(text.starts_with("fix"));
        assert!(text.contains("fn a() {}"));
        let image: Vec<acp::ContentBlock> = serde_json::from_value(serde_json::json!([
            {"type": "image", "data": "AAAA", "mimeType": "image/png"}
        ]))
        .unwrap();
        assert!(prompt_text(&image).is_err());
    }

    #[test]
    fn an_answer_maps_to_a_decision_and_cancelled_to_none() {
        let selected: acp::RequestPermissionOutcome = serde_json::from_value(
            serde_json::json!({"outcome": "selected", "optionId": "allow_always"}),
        )
        .unwrap();
        assert_eq!(decision(&selected), Some(Decision::AllowForSession));
        let cancelled: acp::RequestPermissionOutcome =
            serde_json::from_value(serde_json::json!({"outcome": "cancelled"})).unwrap();
        assert_eq!(decision(&cancelled), None);
    }
}
