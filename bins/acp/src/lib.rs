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

mod convert;
pub mod stdin;
pub mod stdout;
pub mod terminal;
mod thread;
pub mod updates;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema as acp;
use agent_client_protocol::{Agent, ByteStreams, Client, Error};
use convert::{initialize, mcp_config, mode_submission, model_option, modes, prompt_text};
use cox_cli::RunArgs;
use cox_protocol::types::{PermissionMode, StopReason, Submission};
use futures::channel::{mpsc, oneshot};
use thread::{ClientFiles, SessionThread};

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

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
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
        let (text, images) = prompt_text(&request.prompt)?;
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
            .unbounded_send(Submission::UserTurn { text, images })
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
        // same rollout and miss the first one's cancel. Asked first: a
        // session just started may not have written its record yet.
        let _opening = match &resume {
            Some(id) => {
                let opening = self.open_once(id)?;
                if !cox_cli::resume::known(id) {
                    return Err(
                        acp::Error::session_not_found(acp::SessionId::new(id.clone())).into(),
                    );
                }
                Some(opening)
            }
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
        let terminals = terminal::Terminals::default();
        let terminal: Option<Arc<dyn cox_sandbox::CommandHost>> = caps.terminal.then(|| {
            Arc::new(terminal::ClientTerminal {
                cx: cx.clone(),
                session: Arc::clone(&session_id),
                terminals: Arc::clone(&terminals),
            }) as Arc<dyn cox_sandbox::CommandHost>
        });
        let wait = self.wait;
        let forms = caps.elicitation.as_ref().is_some_and(|e| e.form.is_some());
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
                        editor: cox_cli::session::Editor {
                            files,
                            terminal,
                            interactive: true,
                        },
                        terminals,
                        wait,
                        forms,
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
