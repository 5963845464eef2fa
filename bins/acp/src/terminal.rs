//! Shell commands started in the editor's terminal (`terminal/*`), when the
//! client offers one: the person watches each command run in the tool
//! call's card.
//!
//! What the client starts is the launch cox's sandbox built (bubblewrap and
//! its arguments around `bash -c`, or `bash -c` alone where the session runs
//! unconfined), so a command is exactly as confined as when cox starts it
//! itself; launches that cannot be handed over run in cox (see
//! `cox_sandbox::host`). Invariants:
//! - the terminal is embedded in its call's card as soon as it exists, and
//!   stays there when the call ends ([`Terminals`] tells the translator);
//! - the timeout, a cancel and a dropped call kill the terminal; every
//!   terminal created is released, whatever way the call ends (the talk
//!   with the client is a task of its own, so dropping the call's future
//!   cannot cut it short).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use agent_client_protocol::v1::schema as acp;
use cox_protocol::CancelToken;
use cox_protocol::provider::BoxFuture;
use cox_protocol::sandbox::{ExecOutput, SandboxError};
use cox_sandbox::host::HANDOFF_OUTPUT_LIMIT;
use cox_sandbox::{CommandHost, Handoff};

use crate::{Cx, lock};

/// The terminal each running call's command started in, by call id.
pub type Terminals = Arc<Mutex<HashMap<String, acp::TerminalId>>>;

/// The client's terminals as the place commands start.
pub(crate) struct ClientTerminal {
    pub(crate) cx: Cx,
    /// Set once the session has its id (requests name it).
    pub(crate) session: Arc<OnceLock<acp::SessionId>>,
    pub(crate) terminals: Terminals,
}

/// How long a killed command's end is waited for.
const KILL_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// What went wrong talking to the client, as the sandbox says it.
fn failed(handoff: &Handoff, what: &str, err: &agent_client_protocol::Error) -> SandboxError {
    SandboxError::Spawn {
        program: format!("the editor's terminal ({what})"),
        cwd: handoff.cwd.clone(),
        source: std::io::Error::other(err.to_string()),
    }
}

/// How a command ended, as cox counts it.
enum End {
    Exited,
    TimedOut,
    Cancelled,
}

impl CommandHost for ClientTerminal {
    fn run(
        &self,
        handoff: Handoff,
        cancel: CancelToken,
    ) -> BoxFuture<'_, Result<ExecOutput, SandboxError>> {
        // Dropping `stop` (with the call's future) kills the command.
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (done, answer) = tokio::sync::oneshot::channel();
        let talk = Talk {
            cx: self.cx.clone(),
            session: self.session.get().cloned(),
            terminals: Arc::clone(&self.terminals),
        };
        let spawned = tokio::runtime::Handle::try_current().map(|runtime| {
            runtime.spawn(async move {
                let _ = done.send(talk.run(handoff, cancel, stopped).await);
            })
        });
        Box::pin(async move {
            let _stop = stop;
            if spawned.is_err() {
                return Err(SandboxError::Unavailable {
                    why: "no runtime to talk to the editor's terminal on".into(),
                });
            }
            answer.await.unwrap_or_else(|_| {
                Err(SandboxError::Unavailable {
                    why: "the talk with the editor's terminal ended early".into(),
                })
            })
        })
    }
}

/// One command's talk with the client.
struct Talk {
    cx: Cx,
    session: Option<acp::SessionId>,
    terminals: Terminals,
}

impl Talk {
    async fn run(
        self,
        handoff: Handoff,
        cancel: CancelToken,
        stopped: tokio::sync::oneshot::Receiver<()>,
    ) -> Result<ExecOutput, SandboxError> {
        {
            let Some(session) = self.session.clone() else {
                return Err(SandboxError::Unavailable {
                    why: "the editor's session is not open yet".into(),
                });
            };
            let env = handoff
                .env
                .iter()
                .map(|(k, v)| acp::EnvVariable::new(k.clone(), v.clone()))
                .collect();
            let create = acp::CreateTerminalRequest::new(session.clone(), handoff.program.clone())
                .args(handoff.args.clone())
                .env(env)
                .cwd(handoff.cwd.clone())
                .output_byte_limit(HANDOFF_OUTPUT_LIMIT);
            let created = self
                .cx
                .send_request(create)
                .block_task()
                .await
                .map_err(|e| failed(&handoff, "terminal/create", &e))?;
            let terminal = created.terminal_id;
            if let Some(call_id) = &handoff.call_id {
                lock(&self.terminals).insert(call_id.clone(), terminal.clone());
                let fields = acp::ToolCallUpdateFields::new()
                    .status(acp::ToolCallStatus::InProgress)
                    .content(vec![acp::ToolCallContent::Terminal(acp::Terminal::new(
                        terminal.clone(),
                    ))]);
                let _ = self.cx.send_notification(acp::SessionNotification::new(
                    session.clone(),
                    acp::SessionUpdate::ToolCallUpdate(acp::ToolCallUpdate::new(
                        call_id.clone(),
                        fields,
                    )),
                ));
            }
            let outcome = self
                .watch(&session, &terminal, &handoff, (&cancel, stopped))
                .await;
            let release = acp::ReleaseTerminalRequest::new(session.clone(), terminal.clone());
            if let Err(err) = self.cx.send_request(release).block_task().await {
                tracing::warn!(%err, "the editor did not release a terminal");
            }
            outcome
        }
    }

    /// Waits for the command's end (killing it on the timeout or a
    /// cancel), then reads what it printed.
    async fn watch(
        &self,
        session: &acp::SessionId,
        terminal: &acp::TerminalId,
        handoff: &Handoff,
        (cancel, stopped): (&CancelToken, tokio::sync::oneshot::Receiver<()>),
    ) -> Result<ExecOutput, SandboxError> {
        let wait = acp::WaitForTerminalExitRequest::new(session.clone(), terminal.clone());
        let waited = self.cx.send_request(wait).block_task();
        tokio::pin!(waited);
        let (end, mut status) = tokio::select! {
            waited = &mut waited => {
                let waited = waited.map_err(|e| failed(handoff, "terminal/wait_for_exit", &e))?;
                (End::Exited, Some(waited.exit_status))
            }
            () = tokio::time::sleep(handoff.timeout) => (End::TimedOut, None),
            () = cancel.cancelled() => (End::Cancelled, None),
            _ = stopped => (End::Cancelled, None),
        };
        if status.is_none() {
            let kill = acp::KillTerminalRequest::new(session.clone(), terminal.clone());
            if let Err(err) = self.cx.send_request(kill).block_task().await {
                tracing::warn!(%err, "the editor did not kill a terminal");
            }
            // The wait, still asked, now answers how the kill ended it.
            if let Ok(Ok(waited)) = tokio::time::timeout(KILL_GRACE, &mut waited).await {
                status = Some(waited.exit_status);
            }
        }
        let read = acp::TerminalOutputRequest::new(session.clone(), terminal.clone());
        let read = self
            .cx
            .send_request(read)
            .block_task()
            .await
            .map_err(|e| failed(handoff, "terminal/output", &e))?;
        let mut out = ExecOutput {
            output: read.output.into_bytes(),
            timed_out: matches!(end, End::TimedOut),
            cancelled: matches!(end, End::Cancelled),
            ..ExecOutput::default()
        };
        if let Some(status) = status.or(read.exit_status) {
            out.exit_code = status.exit_code.and_then(|c| i32::try_from(c).ok());
            out.signal = status.signal.as_deref().and_then(signal_number);
        }
        if read.truncated {
            out.notes.push(format!(
                "the editor's terminal kept only the last {HANDOFF_OUTPUT_LIMIT} bytes of the output"
            ));
        }
        Ok(out)
    }
}

/// The number of a signal a client names ("SIGKILL", "KILL" or "9").
fn signal_number(name: &str) -> Option<i32> {
    if let Ok(number) = name.parse() {
        return Some(number);
    }
    let name = name.strip_prefix("SIG").unwrap_or(name);
    Some(match name {
        "HUP" => 1,
        "INT" => 2,
        "QUIT" => 3,
        "ILL" => 4,
        "TRAP" => 5,
        "ABRT" => 6,
        "BUS" => 7,
        "FPE" => 8,
        "KILL" => 9,
        "USR1" => 10,
        "SEGV" => 11,
        "USR2" => 12,
        "PIPE" => 13,
        "ALRM" => 14,
        "TERM" => 15,
        "SYS" => 31,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::signal_number;

    #[test]
    fn signals_are_numbered_by_name_or_number() {
        assert_eq!(signal_number("SIGKILL"), Some(9));
        assert_eq!(signal_number("TERM"), Some(15));
        assert_eq!(signal_number("31"), Some(31));
        assert_eq!(signal_number("SIGWHAT"), None);
    }
}
