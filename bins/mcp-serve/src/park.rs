//! Turns paused on an ask, on the 2026-07-28 revision: the call answered
//! `input_required` with the elicitation, and the caller's retry (a new
//! `tools/call` echoing the request state) brings the answer.
//!
//! Invariants:
//! - the request state is a key and nothing else: 160 random bits that
//!   name a parked turn held here, never data the caller could alter;
//! - a key works once: the retry takes the turn out;
//! - a turn nobody answers is denied after [`ASK_WAIT`] and followed to its
//!   end (its later asks denied too), so the session is free again and no
//!   stale event reaches the next call;
//! - while parked, the turn keeps its session's lock: `cox-reply` on it
//!   says a turn is running.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use cox_protocol::types::{Decision, Event, Submission};
use cox_protocol::{CallId, SessionId};

use crate::{Follow, Heard, Live, Said};

/// The key of the answer in the input requests and responses.
pub(crate) const ANSWER: &str = "allow";

/// How long a parked ask waits for the caller's retry.
pub(crate) const ASK_WAIT: std::time::Duration = crate::ASK_WAIT;

/// A turn waiting for its caller's answer.
pub(crate) struct Turn {
    pub(crate) live: Arc<Live>,
    pub(crate) heard: Heard,
    pub(crate) follow: Follow,
    pub(crate) call_id: CallId,
    /// The call asked about, as progress shows it.
    pub(crate) call: String,
    /// The session the call named, when it resumed one.
    pub(crate) resumed: Option<String>,
}

/// The parked turns, by key.
#[derive(Clone, Default)]
pub(crate) struct Parked(Arc<Mutex<HashMap<String, Turn>>>);

impl Parked {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Turn>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Parks `turn`; answers its key, and denies it when no retry comes in
    /// time.
    pub(crate) fn park(&self, turn: Turn) -> String {
        // Two ULIDs: 80 random bits each, from a CSPRNG.
        let key = format!("{}{}", SessionId::generate(), SessionId::generate());
        self.lock().insert(key.clone(), turn);
        let parked = self.clone();
        let waited = key.clone();
        tokio::spawn(async move {
            tokio::time::sleep(ASK_WAIT).await;
            if let Some(turn) = parked.take(&waited) {
                deny_to_the_end(turn).await;
            }
        });
        key
    }

    /// The turn parked under `key`, taken out.
    pub(crate) fn take(&self, key: &str) -> Option<Turn> {
        self.lock().remove(key)
    }
}

/// Denies the waiting call, then every later ask of the turn, and reads
/// the turn to its end.
async fn deny_to_the_end(mut turn: Turn) {
    use futures::StreamExt as _;
    let deny = |call_id: CallId| Submission::Approve {
        call_id,
        decision: Decision::Deny {
            reason: Some("the caller did not answer within ten minutes".into()),
        },
    };
    let _ = turn.live.submit.unbounded_send(deny(turn.call_id.clone()));
    while let Some(said) = turn.heard.next().await {
        let event = match said {
            Said::Failed(_) => break,
            Said::Event(event) => event,
        };
        // A subagent's asks are denied too; only this turn's end ends it.
        if let Some(call_id) = cox_core::subagent_ids::asked(&event) {
            let _ = turn.live.submit.unbounded_send(deny(call_id.clone()));
        }
        if matches!(event, Event::TurnDone { .. }) {
            break;
        }
    }
}
