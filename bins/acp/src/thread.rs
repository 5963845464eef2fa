//! A session's own thread: the session built (or resumed) as the
//! terminal UI builds one, run on a current-thread runtime, its events
//! sent to the client as updates; permission requests asked of the client
//! and answered back into the session; the editor's buffers as the file
//! tools' [`TextFiles`](cox_protocol::tool::TextFiles).
//!
//! Invariant: nothing here waits on the client from the connection's
//! dispatch: requests to the client are awaited on this thread's runtime.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema as acp;
use cox_cli::RunArgs;
use cox_protocol::types::Submission;
use futures::channel::{mpsc, oneshot};

use crate::convert::{decision, permission_options};
use crate::updates::{Out, Updates};
use crate::{Cx, Ended, Started, lock};

/// The editor's buffers, through `fs/read_text_file` and
/// `fs/write_text_file` as far as the client offers them (the disk for
/// what it does not).
pub(crate) struct ClientFiles {
    pub(crate) cx: Cx,
    /// Set once the session has its id (requests name it).
    pub(crate) session: Arc<std::sync::OnceLock<acp::SessionId>>,
    pub(crate) read: bool,
    pub(crate) write: bool,
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

/// What a session's thread is given.
pub(crate) struct SessionThread {
    pub(crate) args: RunArgs,
    /// The editor's buffers and terminal, as far as the client offers them.
    pub(crate) editor: cox_cli::session::Editor,
    /// The terminal each call's command runs in.
    pub(crate) terminals: crate::terminal::Terminals,
    /// How long a permission request waits.
    pub(crate) wait: Duration,
    /// The client fills in forms (`elicitation/create`).
    pub(crate) forms: bool,
    pub(crate) incoming: mpsc::UnboundedReceiver<Submission>,
    pub(crate) submissions: mpsc::UnboundedSender<Submission>,
    pub(crate) turn: Arc<Mutex<Option<oneshot::Sender<Ended>>>>,
    pub(crate) ready: oneshot::Sender<Result<Started, Error>>,
    pub(crate) cx: Cx,
}

impl SessionThread {
    /// Builds the session, says so (or why not), then runs it, sending its
    /// events to the client; its id goes to `session_id_slot` once known.
    pub(crate) fn run(self, session_id_slot: &std::sync::OnceLock<acp::SessionId>) {
        let SessionThread {
            args,
            editor,
            terminals,
            wait,
            forms,
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
        let (session, facts) = match cox_cli::session::interactive_session_in(
            &args,
            cox_cli::providers::any_provider,
            editor,
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
        let mut updates = Updates::new(facts.catalog.clone()).with_terminals(terminals);
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
                    Out::Elicit {
                        id,
                        server,
                        message,
                        schema,
                    } => {
                        tracing::info!(%id, %server, "acp elicitation");
                        if forms {
                            elicit(&cx, &session_id, (id, &server, message, schema), submissions.clone());
                        } else {
                            // Said before the answer, so it precedes the
                            // server's reply to it.
                            let said = format!(
                                "\n\n⚠ MCP server '{server}' asked for input ({message}); this editor does not fill in forms, so it was declined\n\n"
                            );
                            let _ = cx.send_notification(acp::SessionNotification::new(
                                session_id.clone(),
                                acp::SessionUpdate::AgentMessageChunk(acp::ContentChunk::new(said.into())),
                            ));
                            let _ = submissions.unbounded_send(Submission::Elicited {
                                id,
                                answer: cox_protocol::types::ElicitAnswer::Decline,
                            });
                        }
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

/// Asks the client to fill in an MCP server's form (`elicitation/create`,
/// tied to the session), and passes its answer to the session. A schema
/// the client's types cannot carry is declined; a failed or unanswered
/// request cancels.
pub(crate) fn elicit(
    cx: &Cx,
    session_id: &acp::SessionId,
    (id, server, message, schema): (String, &str, String, serde_json::Value),
    submissions: mpsc::UnboundedSender<Submission>,
) {
    use cox_protocol::types::ElicitAnswer;
    let request = serde_json::from_value::<acp::CreateElicitationRequest>(serde_json::json!({
        "mode": "form",
        "sessionId": session_id,
        "requestedSchema": schema,
        "message": format!("MCP server '{server}' asks: {message}"),
    }));
    let request = match request {
        Ok(request) => request,
        Err(err) => {
            tracing::warn!(%err, "an MCP form the client's types cannot carry; declined");
            let _ = submissions.unbounded_send(Submission::Elicited {
                id,
                answer: ElicitAnswer::Decline,
            });
            return;
        }
    };
    let sent = cx.send_request(request);
    tokio::spawn(async move {
        let answer = match sent.block_task().await {
            Ok(response) => {
                let value = serde_json::to_value(&response).unwrap_or_default();
                match value.get("action").and_then(serde_json::Value::as_str) {
                    Some("accept") => ElicitAnswer::Accept {
                        content: value
                            .get("content")
                            .and_then(serde_json::Value::as_object)
                            .cloned()
                            .unwrap_or_default(),
                    },
                    Some("decline") => ElicitAnswer::Decline,
                    _ => ElicitAnswer::Cancel,
                }
            }
            Err(err) => {
                tracing::warn!(%err, "the client failed the elicitation");
                ElicitAnswer::Cancel
            }
        };
        let _ = submissions.unbounded_send(Submission::Elicited { id, answer });
    });
}

/// Asks the client about a call, and passes its answer to the session
/// (a cancelled or unanswered request cancels the turn).
pub(crate) fn ask(
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
