//! Hooks the driving script registers through the SDK (`initialize`'s
//! `hooks`: for each event, matchers and the ids of the script's
//! callbacks), run as `hook_callback` control requests.
//!
//! Each callback is given the same objects a command hook reads on stdin
//! (`cox_hooks::payloads`: one per file for a call that writes several,
//! their answers merged) and answers with Claude Code's hook JSON, read by
//! the same parser as a command hook's stdout; so a callback may deny or
//! allow a call, rewrite its input, add context, or send a turn back,
//! exactly as a hook in `.claude/settings.json`. They are the script's
//! own code, trusted as the person's own hooks. A callback that errs or
//! does not answer in its timeout (60 s unless it set one) gives no
//! answer: a failed run, said, that decides nothing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cox_hooks::matcher::Matcher;
use cox_protocol::hook::{HookCall, HookEvent, HookReply, HookStatus, Hooks};
use cox_protocol::provider::BoxFuture;
use serde_json::{Value, json};

use super::mcp::Requester;

/// One registered callback.
struct Callback {
    event: HookEvent,
    matcher: Matcher,
    id: String,
    timeout: Duration,
}

/// The script's hooks: none until `initialize` registers them (the SDK
/// sends it before any prompt, so no turn runs without them).
pub(super) struct SdkHooks {
    callbacks: std::sync::Mutex<Vec<Callback>>,
    requester: Arc<Requester>,
    session: cox_hooks::SessionInfo,
}

/// The callbacks `initialize`'s `hooks` registers; `Err` names the first
/// entry cox cannot take (an unknown event, a matcher that is not one).
pub(super) fn registered(
    hooks: &Value,
) -> Result<Vec<(HookEvent, Matcher, String, Duration)>, String> {
    let mut out = Vec::new();
    let events = match hooks {
        Value::Null => return Ok(out),
        Value::Object(events) => events,
        _ => return Err("hooks: not an object of events".into()),
    };
    for (name, entries) in events {
        let event: HookEvent = serde_json::from_value(json!(name))
            .map_err(|_| format!("hooks: `{name}` is not an event cox runs hooks for"))?;
        let entries = entries
            .as_array()
            .ok_or_else(|| format!("hooks: {name}: not a list of matchers"))?;
        for entry in entries {
            let matcher = match &entry["matcher"] {
                Value::Null => None,
                Value::String(text) => Some(text.as_str()),
                other => return Err(format!("hooks: {name}: matcher {other} is not text")),
            };
            let matcher = Matcher::parse(matcher).map_err(|why| format!("hooks: {name}: {why}"))?;
            let timeout =
                timeout(&entry["timeout"]).map_err(|why| format!("hooks: {name}: {why}"))?;
            let ids = entry["hookCallbackIds"]
                .as_array()
                .filter(|ids| !ids.is_empty())
                .and_then(|ids| ids.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
                .ok_or_else(|| format!("hooks: {name}: hookCallbackIds is not a list of ids"))?;
            for id in ids {
                out.push((event, matcher.clone(), id.to_owned(), timeout));
            }
        }
    }
    Ok(out)
}

/// A callback's `timeout` (seconds): absent is 60 s; more than that is
/// 60 s too, as no request to the SDK waits longer; anything but a
/// positive number is refused.
fn timeout(value: &Value) -> Result<Duration, String> {
    if value.is_null() {
        return Ok(super::mcp::TIMEOUT);
    }
    value
        .as_f64()
        .filter(|s| *s > 0.0)
        .map(|s| s.min(super::mcp::TIMEOUT.as_secs_f64()))
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("timeout {value} is not a positive number of seconds"))
}

impl SdkHooks {
    pub(super) fn new(requester: Arc<Requester>, session: cox_hooks::SessionInfo) -> Self {
        Self {
            callbacks: std::sync::Mutex::new(Vec::new()),
            requester,
            session,
        }
    }

    /// The callbacks `initialize` registered.
    pub(super) fn set(&self, callbacks: Vec<(HookEvent, Matcher, String, Duration)>) {
        *self.callbacks() = callbacks
            .into_iter()
            .map(|(event, matcher, id, timeout)| Callback {
                event,
                matcher,
                id,
                timeout,
            })
            .collect();
    }

    fn callbacks(&self) -> std::sync::MutexGuard<'_, Vec<Callback>> {
        self.callbacks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Callback `id` on one of `call`'s payloads.
    async fn one(
        &self,
        (id, timeout): (String, Duration),
        call: &HookCall,
        input: Value,
    ) -> HookReply {
        let started = Instant::now();
        let request = json!({
            "subtype": "hook_callback", "callback_id": id, "input": input,
            "tool_use_id": call.fields.get("tool_use_id").cloned().unwrap_or(Value::Null),
        });
        let answer = tokio::time::timeout(timeout, self.requester.request(request, false)).await;
        let (status, output) = match answer {
            Ok(Ok((answer, cut))) => {
                let bytes = answer.to_string().into_bytes();
                match cox_hooks::output::parse(call.event, &bytes) {
                    // An input it was shown cut: its rewrite is not the
                    // call, and an allow with one is not an allow of the
                    // call (it decides nothing); a refusal still holds.
                    Ok(mut output) if cut && output.updated_input.is_some() => {
                        output.updated_input = None;
                        if output.decision == Some(cox_protocol::hook::HookDecision::Allow) {
                            output.decision = None;
                        }
                        (HookStatus::Success, output)
                    }
                    // Its rewrite goes back in cox's fields in `run`.
                    Ok(output) => (HookStatus::Success, output),
                    Err(why) => (
                        HookStatus::Failed { message: why },
                        cox_protocol::hook::HookOutput::default(),
                    ),
                }
            }
            // The script can no longer be asked: a hook that could refuse
            // a call or a prompt refuses it, rather than letting through
            // what it was registered to judge.
            Ok(Err(why))
                if self.requester.is_closed()
                    && matches!(
                        call.event,
                        HookEvent::PreToolUse
                            | HookEvent::PermissionRequest
                            | HookEvent::UserPromptSubmit
                    ) =>
            {
                (
                    HookStatus::Blocked {
                        reason: format!(
                            "the script's hook could not be asked ({why}), so cox refused"
                        ),
                    },
                    cox_protocol::hook::HookOutput::default(),
                )
            }
            Ok(Err(why)) => (
                HookStatus::Failed { message: why },
                cox_protocol::hook::HookOutput::default(),
            ),
            Err(_) => (
                HookStatus::Failed {
                    message: format!(
                        "the SDK's callback did not answer in {} s",
                        timeout.as_secs()
                    ),
                },
                cox_protocol::hook::HookOutput::default(),
            ),
        };
        HookReply {
            hook: format!("SDK callback {id}"),
            narrow_only: false,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            status,
            output,
        }
    }
}

impl Hooks for SdkHooks {
    fn wants(&self, event: HookEvent) -> bool {
        self.callbacks().iter().any(|c| c.event == event)
    }

    fn run<'a>(&'a self, call: &'a HookCall) -> BoxFuture<'a, Vec<HookReply>> {
        Box::pin(async move {
            let target = call.target.as_deref().unwrap_or_default();
            let names = cox_hooks::claude::names_for(target);
            let chosen: Vec<(String, Duration)> = self
                .callbacks()
                .iter()
                .filter(|c| c.event == call.event)
                .filter(|c| call.target.is_none() || c.matcher.matches(&names))
                .map(|c| (c.id.clone(), c.timeout))
                .collect();
            // A call that writes several files (apply_patch) is shown once
            // per file, as to a command hook; the runs answer as one.
            let payloads = cox_hooks::payloads(&self.session, call);
            let mut replies = Vec::new();
            for callback in chosen {
                let mut runs = Vec::with_capacity(payloads.len());
                for input in &payloads {
                    runs.push(self.one(callback.clone(), call, input.clone()).await);
                }
                replies.extend(cox_hooks::answer_as_one(call, &payloads, runs));
            }
            replies
        })
    }
}
