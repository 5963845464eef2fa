//! Checkpoints from the driver's side: a marker per user turn, the
//! bracket around every call that can change files, and the rewind.
//!
//! A call with `writes` has the pre-images of exactly those files kept; any
//! other call that is not read-only (a shell command, an MCP tool) has the
//! workspace snapshotted before and after. The bracket runs inside the
//! call's own future ([`bracket`]), so the pre-image is kept before the tool
//! starts and the rows are final before its result is said; the driver then
//! says [`Event::Checkpoint`] right after the call's `ToolCallDone`.
//!
//! Invariants: checkpointing never fails a call or a turn (a failure is one
//! warning a session, and the call runs anyway); a rewind takes a turn
//! number of its own, so numbers never repeat; a rewind of the code that
//! finds files changed outside cox does nothing unless forced, and says
//! which files.

use std::path::Path;
use std::sync::Arc;

use cox_protocol::checkpoint::{CheckpointError, CheckpointFile, RewindWhat, Scope};
use cox_protocol::tool::Workspace;
use cox_protocol::types::{Event, NoticeLevel, Risk, Submission, ToolCall};
use cox_protocol::{Checkpoints, SessionId, Store as _};
use futures::Stream;

use super::Driver;
use crate::world::World;

/// What the bracket around one call came to.
pub(super) enum Kept {
    /// Nothing to keep: a read-only call, or no checkpoint store.
    Nothing,
    /// These files changed, and their pre-images are kept.
    Files(Vec<CheckpointFile>),
    /// Checkpointing failed; the call ran anyway.
    Failed(CheckpointError),
}

/// Runs `run` (the call's own future) between the checkpoint store's
/// `before` and `after`. Of the files a call names, only those inside the
/// workspace's roots are kept: a path outside is refused by the tool, and
/// its bytes have no business in the archive.
pub(super) async fn bracket<T>(
    checkpoints: Option<Arc<dyn Checkpoints>>,
    session: SessionId,
    turn: u32,
    (call, workspace): (&ToolCall, &Workspace),
    run: impl Future<Output = T>,
) -> (T, Kept) {
    let Some(store) = checkpoints.filter(|_| call.risk != Risk::ReadOnly) else {
        return (run.await, Kept::Nothing);
    };
    let inside: Vec<String> = call
        .writes
        .iter()
        .filter(|path| {
            let path = Path::new(path.as_str());
            path.is_absolute() && workspace.roots.iter().any(|root| path.starts_with(root))
        })
        .cloned()
        .collect();
    let scope = match (call.writes.is_empty(), inside.is_empty()) {
        (true, _) => Scope::Workspace,
        (false, true) => return (run.await, Kept::Nothing),
        (false, false) => Scope::Files(&inside),
    };
    if let Err(err) = store.before(session, turn, &call.id, scope).await {
        return (run.await, Kept::Failed(err));
    }
    let out = run.await;
    let kept = match store.after(session, turn, &call.id).await {
        Ok(files) => Kept::Files(files),
        Err(err) => Kept::Failed(err),
    };
    (out, kept)
}

impl<W, I, F> Driver<'_, W, I, F>
where
    W: World,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    /// Puts the user turn that just started on the rewind's timeline.
    pub(super) async fn mark_turn(&mut self, turn: u32, prompt: &str) {
        let fixed = self.fixed;
        if let Some(store) = &fixed.checkpoints
            && let Err(err) = store.turn_started(fixed.config.id, turn, prompt).await
        {
            self.checkpoint_failed(&err);
        }
    }

    /// Says a checkpoint failure, once a session.
    pub(super) fn checkpoint_failed(&mut self, err: &CheckpointError) {
        if !self.state.checkpoint_warned {
            self.state.checkpoint_warned = true;
            self.out.notice(
                NoticeLevel::Warn,
                format!("checkpoints are incomplete: {err}; the calls ran, but a rewind may not restore everything they changed"),
            );
        }
    }

    /// Says what one call's bracket kept, after its result.
    pub(super) fn say_kept(&mut self, call: &ToolCall, kept: Kept) {
        match kept {
            Kept::Nothing => {}
            Kept::Files(files) => {
                if !files.is_empty() {
                    self.out.emit(Event::Checkpoint {
                        turn: self.out.history.turns(),
                        call_id: call.id.clone(),
                        files,
                    });
                }
            }
            Kept::Failed(err) => self.checkpoint_failed(&err),
        }
    }

    /// Undoes turns `to_turn` and later: the files, the conversation, or
    /// both.
    pub(super) async fn rewind(&mut self, to_turn: u32, what: RewindWhat, force: bool) {
        let fixed = self.fixed;
        let current = self.out.history.turns();
        if to_turn == 0 || to_turn > current {
            let have = match current {
                0 => "no turns yet".to_owned(),
                1 => "only turn 1".to_owned(),
                n => format!("turns 1 to {n}"),
            };
            self.out.notice(
                NoticeLevel::Error,
                format!("cannot rewind to turn {to_turn}: the session has {have}"),
            );
            return;
        }
        let turn = current + 1;
        let (mut files, mut unkept) = (Vec::new(), Vec::new());
        if what.code() {
            let Some(store) = &fixed.checkpoints else {
                self.out.notice(
                    NoticeLevel::Error,
                    "cannot rewind the code: this session keeps no checkpoints".to_owned(),
                );
                return;
            };
            match store.rewind(fixed.config.id, to_turn, turn, force).await {
                Ok(report) if !report.conflicts.is_empty() && !force => {
                    self.out.emit(Event::RewindConflict {
                        to_turn,
                        files: report.conflicts,
                    });
                    return;
                }
                Ok(report) => (files, unkept) = (report.restored, report.unkept),
                Err(err) => {
                    self.out.notice(
                        NoticeLevel::Error,
                        format!("the rewind did not happen: {err}"),
                    );
                    return;
                }
            }
        }
        let plan_before = self.out.history.plan().to_vec();
        self.out.emit(Event::Rewound {
            to_turn,
            turn,
            what,
            files,
            unkept,
        });
        // A cut that dropped the turn of the plan says the plan there is
        // now (the surfaces show the last one they were told).
        let plan_after = self.out.history.plan().to_vec();
        if plan_after != plan_before {
            self.out.emit(Event::Plan { steps: plan_after });
        }
        if let Err(err) = fixed.world.store().turn_finished(fixed.config.id, turn) {
            self.out.notice(
                NoticeLevel::Error,
                format!("the session record did not take the rewind: {err}"),
            );
        }
    }
}
