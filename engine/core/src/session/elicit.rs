//! MCP servers asking the person for input while a call runs
//! (`elicitation/create`): each ask is said as an [`Event::Elicitation`]
//! and its answer ([`Submission::Elicited`]) goes back to the server.
//!
//! Invariants: asks are read only while calls run (a server asks within a
//! call); a session that cannot ask (approval policy `never`: a headless
//! run, unless its surface answers asks for input all the same) declines
//! at once and says so; what the person typed goes to the
//! server only, the rollout and the model see the action alone; asks still
//! open when their calls are over are cancelled, and said so.

use std::collections::BTreeMap;

use cox_protocol::mcp::Elicitation;
use cox_protocol::types::{ApprovalPolicy, ElicitAnswer, Event, NoticeLevel, Submission};
use futures::channel::mpsc::UnboundedReceiver;
use futures::{Stream, StreamExt as _};

use super::{Driver, Session};
use crate::world::World;

/// The asks a turn's calls have open, by id.
#[derive(Default)]
pub(super) struct Open {
    waiting: BTreeMap<String, futures::channel::oneshot::Sender<ElicitAnswer>>,
    next: u32,
    /// See [`Session::with_input_answered`].
    answered: bool,
}

impl<W: World> Session<W> {
    /// MCP servers' asks for input come on `asks` (see the module).
    #[must_use]
    pub fn with_elicitations(self, asks: UnboundedReceiver<Elicitation>) -> Self {
        *self
            .fixed
            .asks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(asks);
        self
    }

    /// The surface answers asks for input even though it answers no
    /// approvals (the Agent SDK's host, whose `onElicitation` is asked
    /// whether or not it judges calls): asks are said, not declined.
    #[must_use]
    pub fn with_input_answered(mut self) -> Self {
        self.state.elicitations.answered = true;
        self
    }
}

/// The next ask on `asks`; never, when there is no channel or it ended.
pub(super) async fn next_ask(asks: &mut Option<UnboundedReceiver<Elicitation>>) -> Elicitation {
    if let Some(rx) = asks.as_mut()
        && let Some(ask) = rx.next().await
    {
        return ask;
    }
    *asks = None;
    std::future::pending().await
}

impl<W, I, F> Driver<'_, W, I, F>
where
    W: World,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    /// The asks channel, taken for a stretch of calls.
    pub(super) fn take_asks(&self) -> Option<UnboundedReceiver<Elicitation>> {
        self.fixed
            .asks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    /// The asks channel back once the calls are over; the asks still open
    /// are cancelled.
    pub(super) fn put_back_asks(&mut self, asks: Option<UnboundedReceiver<Elicitation>>) {
        if asks.is_some() {
            *self
                .fixed
                .asks
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = asks;
        }
        let open = std::mem::take(&mut self.state.elicitations.waiting);
        for (id, reply) in open {
            let _ = reply.send(ElicitAnswer::Cancel);
            self.out.emit(Event::Elicited {
                id,
                action: "cancel".to_owned(),
            });
        }
    }

    /// A server asks: said, or declined where no one can answer.
    pub(super) fn elicit(&mut self, ask: Elicitation) {
        if self.fixed.config.approval == ApprovalPolicy::Never && !self.state.elicitations.answered
        {
            let _ = ask.reply.send(ElicitAnswer::Decline);
            self.out.notice(
                NoticeLevel::Warn,
                format!(
                    "MCP server '{}' asked for input ({}), which was declined: this session \
                     cannot ask (approval policy: never)",
                    ask.server,
                    one_line(&ask.message)
                ),
            );
            return;
        }
        let open = &mut self.state.elicitations;
        open.next += 1;
        let id = format!("elicit-{}", open.next);
        open.waiting.insert(id.clone(), ask.reply);
        self.out.emit(Event::Elicitation {
            id,
            server: ask.server,
            message: ask.message,
            schema: ask.schema,
        });
    }

    /// The person answered ask `id`.
    pub(super) fn elicited(&mut self, id: String, answer: ElicitAnswer) {
        match self.state.elicitations.waiting.remove(&id) {
            Some(reply) => {
                let action = answer.action().to_owned();
                let _ = reply.send(answer);
                self.out.emit(Event::Elicited { id, action });
            }
            None => self.out.notice(
                NoticeLevel::Warn,
                format!("no request for input {id} is open; the answer was ignored"),
            ),
        }
    }
}

/// `text` on one line, at most 200 characters.
fn one_line(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &flat[..at]),
        None => flat,
    }
}
