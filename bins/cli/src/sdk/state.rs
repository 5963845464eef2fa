//! What the stdin reader and the session share: the prompts queued, the
//! asks put to the SDK and not answered yet, the inputs it rewrote; and
//! how an ask goes out.

use super::*;

/// The most times the SDK may rewrite one call's input.
pub(super) const MAX_EDITS: u32 = 5;

/// An ask put to the SDK and not answered yet.
pub(super) struct Asked {
    pub(super) call_id: CallId,
    /// The call's input (cox's shape) and tool (cox's name).
    pub(super) input: Value,
    pub(super) tool: String,
    /// What the callback was shown, when it had to be cut to fit the
    /// line: an `updatedInput` that echoes it is no rewrite, and any other
    /// cannot be taken (it rewrote what was not the whole input).
    pub(super) cut: Option<Value>,
    /// What the callback was shown of the input (before any cut): a field
    /// it gives back as shown is no change.
    pub(super) shown: Value,
}

/// What the reader and the session share.
#[derive(Default)]
pub(super) struct Shared {
    /// cox's `can_use_tool` requests not answered yet, by request id.
    pub(super) asks: HashMap<String, Asked>,
    /// Inputs the SDK rewrote and allowed: the edited call is allowed
    /// (for the session, when the answer's permissions said so) when it
    /// asks again, without a second round.
    pub(super) allowed_inputs: HashMap<String, (Value, Decision)>,
    /// How often the SDK rewrote each call's input.
    pub(super) edits: HashMap<String, u32>,
    pub(super) next_request: u64,
    /// stdin ended: nothing will answer an ask.
    pub(super) closed: bool,
    /// A turn runs (or its answer's second chance): the next prompt waits
    /// in `queued`, so the second chance comes before it.
    pub(super) running: bool,
    /// Prompts taken and not started yet, in order (a refused one as the
    /// reason, its result said in its turn). The session is told to end
    /// once stdin has ended, no turn runs and none waits.
    pub(super) queued: std::collections::VecDeque<Result<Submission, String>>,
    /// The last result written was a refused prompt's (the exit is 1).
    pub(super) refused_last: bool,
}

impl Shared {
    /// The next prompt to start, the refused ones before it answered.
    pub(super) fn next_turn(&mut self, out: &Out, session: &str) -> Option<Submission> {
        while let Some(next) = self.queued.pop_front() {
            match next {
                Ok(turn) => {
                    self.refused_last = false;
                    return Some(turn);
                }
                Err(why) => {
                    refuse(out, session, &why);
                    self.refused_last = true;
                }
            }
        }
        None
    }

    /// What a turn left behind that must not reach another call with a
    /// reused id.
    pub(super) fn forget_turn(&mut self) {
        self.asks.clear();
        self.allowed_inputs.clear();
        self.edits.clear();
    }
}

pub(super) fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An ask: to the SDK as `can_use_tool`, or denied when nothing can answer.
pub(super) fn ask(
    out: &Out,
    shared: &Mutex<Shared>,
    tx: &UnboundedSender<Submission>,
    (frames, cwd): (&Frames, &std::path::Path),
    call_id: &CallId,
) {
    // A call the frames did not see cannot be described to the SDK's
    // callback: it is denied, never asked about blind.
    let Some((name, tool, input)) = frames
        .call(call_id.as_str())
        .map(|(name, tool, input)| (name.to_owned(), tool.to_owned(), input.clone()))
    else {
        let _ = tx.unbounded_send(Submission::Approve {
            call_id: call_id.clone(),
            decision: Decision::Deny {
                reason: Some(
                    "cox could not tell the SDK which call this is (another call shares its id); \
                     it was not run"
                        .into(),
                ),
            },
        });
        return;
    };
    let mut state = lock(shared);
    if state
        .allowed_inputs
        .get(call_id.as_str())
        .is_some_and(|(allowed, _)| *allowed == input)
        && let Some((_, decision)) = state.allowed_inputs.remove(call_id.as_str())
    {
        let _ = tx.unbounded_send(Submission::Approve {
            call_id: call_id.clone(),
            decision,
        });
        return;
    }
    if state.closed {
        let _ = tx.unbounded_send(Submission::Approve {
            call_id: call_id.clone(),
            decision: Decision::Deny {
                reason: Some("the SDK closed its input, so nobody could allow this call".into()),
            },
        });
        return;
    }
    state.next_request += 1;
    let request_id = format!("cox_{}", state.next_request);
    // Claude Code's names and shapes (`file_path`, absolute), as a
    // callback written for it expects, and as hooks are given them.
    // A subagent's paths are its own folder's (its worktree's).
    let cwd = frames
        .cwd_of(call_id.as_str())
        .map_or(cwd, std::path::Path::new)
        .to_path_buf();
    let mut shown = cox_hooks::claude::input_for_hook(&tool, &input, &cwd);
    if let Some(file) = frames.written(call_id.as_str()) {
        cox_hooks::claude::name_written_file(&tool, &mut shown, file);
    }
    let request = json!({
        "type": "control_request", "request_id": request_id,
        "request": {
            "subtype": "can_use_tool", "tool_name": name, "input": shown.clone(),
            "tool_use_id": call_id.as_str(), "permission_suggestions": null, "blocked_path": null,
        },
    });
    // Fitted before it is recorded, so an answer never finds it unknown;
    // an input that had to go whole is not shown at all.
    let Some((request, cut)) = fitted(request)
        .ok()
        .filter(|(r, _)| r["request"]["input"].is_object())
    else {
        drop(state);
        let _ = tx.unbounded_send(Submission::Approve {
            call_id: call_id.clone(),
            decision: Decision::Deny {
                reason: Some(
                    "this call's input is too big to show the SDK's permission callback; it \
                     was not run"
                        .into(),
                ),
            },
        });
        return;
    };
    state.asks.insert(
        request_id,
        Asked {
            call_id: call_id.clone(),
            input,
            tool,
            cut: cut.then(|| request["request"]["input"].clone()),
            shown,
        },
    );
    drop(state);
    out.write(&request);
}
