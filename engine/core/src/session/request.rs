//! What a request carries of the conversation: the summary in place of
//! the compacted turns, pointers in place of old tool results, the model
//! switched to, and the deferred tools found so far.
//!
//! The conversation itself is never rewritten: each of these works on the
//! copy the request is built from, so the rollout, a resume and the next
//! request all agree.

use cox_protocol::provider::Request;
use cox_protocol::types::{Event, NoticeLevel, Submission};
use futures::Stream;

use super::Driver;
use crate::turn::{Assembling, Prefix, Streaming, Turn};
use crate::world::World;

impl<W, I, F> Driver<'_, W, I, F>
where
    W: World,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    /// The next request of `turn`, shaped: everything said so far goes in
    /// first. Says so once when a found tool changed the tool block (and so
    /// the cached prefix).
    pub(super) fn next_request(
        &mut self,
        turn: Turn<Assembling>,
        prefix: &Prefix<'_>,
    ) -> (Turn<Streaming>, Request) {
        self.out.history.settle();
        let history = &self.out.history;
        // Pointers for old results first (they touch only results), then
        // the summary in place of the compacted turns (it leads a prompt).
        let after = self.fixed.config.context.microcompact_after_turns;
        let sent = self.state.sent.view(
            history.messages(),
            history.results(),
            history.turns(),
            after,
        );
        let messages = match history.compaction() {
            Some(compaction) => std::sync::Arc::new(compaction.apply(&sent)),
            None => sent,
        };
        let messages = crate::context::image_budget(messages);
        let (streaming, mut request) = turn.request(messages, prefix, &self.state.found);
        request.model_override = self
            .state
            .turn_model
            .clone()
            .or_else(|| self.switched_model());
        let found = self.state.found.len();
        if found != self.state.found_sent {
            self.state.found_sent = found;
            self.out.notice(
                NoticeLevel::Info,
                format!(
                    "tool_search found {found} of the {} deferred tools: their schemas are sent from now on, \
                     so the tool block changed and the prompt cache starts again once",
                    self.fixed.tools().deferred().len()
                ),
            );
        }
        (streaming, request)
    }
}
