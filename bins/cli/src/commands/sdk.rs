//! `--input-format stream-json --output-format stream-json`: the Claude
//! Agent SDKs' protocol, so a script that drives Claude Code through
//! `claude-agent-sdk` (its `cli_path`) drives cox.
//!
//! stdin carries one JSON object a line: `user` messages (each starts a
//! turn, in order, over one long-lived session; one sent while a turn runs
//! waits for it) and `control_request`s (`initialize` — hooks, agents, and
//! the npm SDK's system prompt, title and in-process servers, all settled
//! before the first model request — `interrupt`, `set_permission_mode`,
//! `set_model`), plus
//! the `control_response`s to cox's own requests (`can_use_tool`, for
//! every ask, with `--permission-prompt-tool stdio`). stdout carries
//! Claude Code's frames (see [`frames`]) and cox's control traffic.
//!
//! A reader thread takes stdin as it comes, so an interrupt or an answer
//! reaches the session while a turn runs. Every control request is
//! answered (success, or an error naming what is not supported), never
//! left to time out. stdin's end means "no more prompts": the queued turns
//! finish, their results are written, and the process exits (0, or 1 when
//! the last turn failed, as Claude Code does); an ask still open then, or
//! raised after, is denied. A line that is not JSON, or JSON of no known
//! type, is answered with an error frame and the session goes on.

pub mod frames;
mod hooks;
mod mcp;

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use anyhow::{Result, bail};
use cox_protocol::types::{ApprovalPolicy, Decision, PermissionMode, Submission};
use cox_protocol::{CallId, Provider};
use futures::channel::mpsc::UnboundedSender;
use serde_json::{Value, json};

use crate::args::RunArgs;
use crate::providers::ProviderChoice;
use crate::session::{Consent, Editor, build_session, prepare};
use frames::Frames;

/// Writes whole lines to stdout, one writer at a time.
#[derive(Clone)]
pub(super) struct Out(Arc<Mutex<std::io::Stdout>>);

impl Out {
    /// A frame of the session's stream: scrubbed of secrets, and fitted
    /// under the SDK's line limit.
    pub(super) fn line(&self, mut frame: Value) {
        crate::output::scrub_strings(&mut frame);
        self.raw(frame);
    }

    /// A frame as it is, fitted under the SDK's line limit (see
    /// [`fitted`]); one that cannot be is said in an error frame instead.
    pub(super) fn raw(&self, frame: Value) {
        match fitted(frame) {
            Ok((frame, _)) => self.write(&frame),
            Err(len) => self.write(&error_frame(&format!(
                "a frame of {len} bytes did not fit the SDK's line and was left out"
            ))),
        }
    }

    /// Writes `frame` as one line, as it is.
    pub(super) fn write(&self, frame: &Value) {
        let mut text = frame.to_string();
        text.push('\n');
        let out = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut lock = out.lock();
        // A closed stdout (the SDK went away) ends nothing here: the
        // session finishes its turn and the record stays whole.
        let _ = lock.write_all(text.as_bytes()).and_then(|()| lock.flush());
    }
}

/// `frame` under the SDK's line limit: as it is, or cut (its longest
/// strings, else lists, saying so; `true` then). `Err` (its length) when
/// nothing is left to cut (a huge object of small fields): a control
/// request that cannot be shown whole enough is not sent at all.
pub(super) fn fitted(mut frame: Value) -> Result<(Value, bool), usize> {
    let mut len = frame.to_string().len();
    let mut cut = false;
    while len > frames::MAX_LINE && shorten_longest(&mut frame) {
        cut = true;
        len = frame.to_string().len();
    }
    if len > frames::MAX_LINE {
        return Err(len);
    }
    Ok((frame, cut))
}

/// Halves the longest string in `value`, or else its longest list (saying
/// so); false when nothing is left worth cutting.
fn shorten_longest(value: &mut Value) -> bool {
    fn longest(value: &mut Value) -> Option<&mut String> {
        match value {
            Value::String(s) => Some(s),
            Value::Array(items) => items.iter_mut().filter_map(longest).max_by_key(|s| s.len()),
            Value::Object(map) => map.values_mut().filter_map(longest).max_by_key(|s| s.len()),
            _ => None,
        }
    }
    /// The length of the longest list in `value`.
    fn most(value: &Value) -> usize {
        match value {
            Value::Array(items) => items.iter().map(most).max().unwrap_or(0).max(items.len()),
            Value::Object(map) => map.values().map(most).max().unwrap_or(0),
            _ => 0,
        }
    }
    fn list_of(value: &mut Value, len: usize) -> Option<&mut Vec<Value>> {
        if value.as_array().is_some_and(|items| items.len() == len) {
            return value.as_array_mut();
        }
        match value {
            Value::Array(items) => items.iter_mut().find_map(|v| list_of(v, len)),
            Value::Object(map) => map.values_mut().find_map(|v| list_of(v, len)),
            _ => None,
        }
    }
    if let Some(text) = longest(value).filter(|t| t.len() >= 1024) {
        let mut cut = text.len() / 2;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str(" [cut here to fit the frame]");
        return true;
    }
    let len = most(value);
    match list_of(value, len).filter(|l| l.len() >= 4) {
        Some(list) => {
            let cut = list.len() - list.len() / 2;
            list.truncate(list.len() / 2);
            list.push(Value::String(format!(
                "[{cut} more items cut to fit the frame]"
            )));
            true
        }
        None => replace_biggest_object(value),
    }
}

/// Replaces the biggest object inside `value` (not `value` itself) by a
/// line saying so; false when none is big enough to be worth it.
fn replace_biggest_object(value: &mut Value) -> bool {
    fn size(value: &Value) -> usize {
        value.to_string().len()
    }
    /// The size of the biggest object below `value`.
    fn biggest(value: &Value) -> usize {
        let inner: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => return 0,
        };
        inner
            .map(|v| {
                if v.is_object() {
                    size(v).max(biggest(v))
                } else {
                    biggest(v)
                }
            })
            .max()
            .unwrap_or(0)
    }
    fn replace(value: &mut Value, target: usize) -> bool {
        let inner: Box<dyn Iterator<Item = &mut Value>> = match value {
            Value::Array(items) => Box::new(items.iter_mut()),
            Value::Object(map) => Box::new(map.values_mut()),
            _ => return false,
        };
        for v in inner {
            if v.is_object() && size(v) == target {
                *v = Value::String(format!(
                    "[an object of {target} bytes cut to fit the frame]"
                ));
                return true;
            }
            if replace(v, target) {
                return true;
            }
        }
        false
    }
    let target = biggest(value);
    target >= 1024 && replace(value, target)
}

/// The most times the SDK may rewrite one call's input.
const MAX_EDITS: u32 = 5;

/// An ask put to the SDK and not answered yet.
struct Asked {
    call_id: CallId,
    /// The call's input (cox's shape) and tool (cox's name).
    input: Value,
    tool: String,
    /// What the callback was shown, when it had to be cut to fit the
    /// line: an `updatedInput` that echoes it is no rewrite, and any other
    /// cannot be taken (it rewrote what was not the whole input).
    cut: Option<Value>,
    /// What the callback was shown of the input (before any cut): a field
    /// it gives back as shown is no change.
    shown: Value,
}

/// What the reader and the session share.
#[derive(Default)]
struct Shared {
    /// cox's `can_use_tool` requests not answered yet, by request id.
    asks: HashMap<String, Asked>,
    /// Inputs the SDK rewrote and allowed: the edited call is allowed
    /// (for the session, when the answer's permissions said so) when it
    /// asks again, without a second round.
    allowed_inputs: HashMap<String, (Value, Decision)>,
    /// How often the SDK rewrote each call's input.
    edits: HashMap<String, u32>,
    next_request: u64,
    /// stdin ended: nothing will answer an ask.
    closed: bool,
    /// A turn runs (or its answer's second chance): the next prompt waits
    /// in `queued`, so the second chance comes before it.
    running: bool,
    /// Prompts taken and not started yet, in order (a refused one as the
    /// reason, its result said in its turn). The session is told to end
    /// once stdin has ended, no turn runs and none waits.
    queued: std::collections::VecDeque<Result<Submission, String>>,
    /// The last result written was a refused prompt's (the exit is 1).
    refused_last: bool,
}

impl Shared {
    /// The next prompt to start, the refused ones before it answered.
    fn next_turn(&mut self, out: &Out, session: &str) -> Option<Submission> {
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
    fn forget_turn(&mut self) {
        self.asks.clear();
        self.allowed_inputs.clear();
        self.edits.clear();
    }
}

fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs the SDK's session and returns the exit code. Errors before the
/// session starts are one line on stderr and exit 1.
pub fn execute<P, M>(args: RunArgs, make_provider: M) -> i32
where
    P: Provider,
    M: FnOnce(&ProviderChoice) -> Result<P>,
{
    match start(&args, make_provider) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("cox: error: {}", crate::one_line(&err));
            1
        }
    }
}

fn start<P, M>(args: &RunArgs, make_provider: M) -> Result<i32>
where
    P: Provider,
    M: FnOnce(&ProviderChoice) -> Result<P>,
{
    let stream_json = args.output_format == Some(crate::args::OutputFormat::StreamJson);
    if let Some(line) = args.sdk.refusal(stream_json) {
        bail!("{line}");
    }
    if args.prompt.is_some() {
        bail!("-p goes without --input-format stream-json: the prompts come on stdin");
    }
    let schema = crate::structured::Schema::from_flags(&args.sdk)?;
    let (servers, other_configs) = sdk_servers(&args.mcp_config);
    let mut args = args.clone();
    // The SDK's own servers are reached over the control channel; the MCP
    // client starts the others.
    args.mcp_config = other_configs;
    if let Some(schema) = &schema {
        // The model is told the schema after everything else it is told.
        args.append_system_prompt = Some(
            [
                args.append_system_prompt.clone(),
                Some(schema.instruction()),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("\n\n"),
        );
    }
    let args = &args;
    let prepared = prepare(args, make_provider, Consent::Flag)?;
    let catalog = prepared.catalog.clone();
    let asks = args.sdk.permission_prompt_tool.is_some();
    let approval = if asks {
        ApprovalPolicy::OnRequest
    } else {
        ApprovalPolicy::Never
    };
    let (session, facts) = build_session(prepared, args.max_turns, approval, Editor::default())?;
    // A session left in bypassPermissions resumes in it only where the SDK
    // may choose that mode (a switch would be refused the same).
    let resumed_mode = facts.past.iter().rev().find_map(|event| match event {
        cox_protocol::types::Event::ModeChanged {
            permission_mode, ..
        } => Some(*permission_mode),
        _ => None,
    });
    if resumed_mode == Some(PermissionMode::BypassPermissions)
        && !args.sdk.allow_dangerously_skip_permissions
        && facts.permission_mode != PermissionMode::BypassPermissions
    {
        bail!(
            "the session resumed was left in bypassPermissions: resume it with \
             --allow-dangerously-skip-permissions, or --permission-mode bypassPermissions"
        );
    }
    let out = Out(Arc::new(Mutex::new(std::io::stdout())));
    let requester = mcp::Requester::new(out.clone());
    // The script's hooks, once `initialize` registers them.
    let sdk_hooks = Arc::new(hooks::SdkHooks::new(
        Arc::clone(&requester),
        cox_hooks::SessionInfo {
            session_id: session.id().as_uuid(),
            transcript_path: cox_store::CoxHome::resolve(None)?.rollout_path(session.id()),
            cwd: facts.cwd.clone(),
            rollouts: Some(cox_store::CoxHome::resolve(None)?.sessions_dir()),
        },
    ));
    let session = session.with_hooks(Arc::clone(&sdk_hooks) as _);
    // Its subagents' calls are the script's to judge too.
    facts.surface_hooks.set(Arc::clone(&sdk_hooks) as _);
    // The tools are settled once `initialize` has been taken (its agents
    // join the agent tool's definitions, its SDK servers are connected, its
    // system prompt is the session's): the session waits for it, or for
    // the first prompt or stdin's end from a client that sends none.
    let (ready_tx, ready_rx) = futures::channel::oneshot::channel::<Init>();
    let statuses = Arc::new(Mutex::new(Vec::new()));
    let session = {
        let requester = Arc::clone(&requester);
        let statuses = Arc::clone(&statuses);
        let flag_prompt = crate::session::flag_system_prompt(&args.sdk)?;
        let flag_append = args.append_system_prompt.clone();
        let mut servers = servers;
        session.with_late_tools(Box::pin(async move {
            let init = ready_rx.await.unwrap_or_default();
            for server in init.servers {
                if !servers.contains(&server) {
                    servers.push(server);
                }
            }
            let (mut late, connected) = mcp::connect(requester, servers).await;
            *statuses.lock().unwrap_or_else(PoisonError::into_inner) = connected;
            late.system_prompt = match (init.system_prompt, init.append) {
                (None, None) => None,
                (prompt, append) => Some(
                    [prompt
                        .or(flag_prompt)
                        .unwrap_or_else(|| cox_core::prompt::SYSTEM_PROMPT.to_owned())]
                    .into_iter()
                    .chain(flag_append)
                    .chain(append)
                    .collect::<Vec<_>>()
                    .join("\n\n"),
                ),
            };
            late.title = init.title;
            late
        }))
    };
    let ready = Mutex::new(Some(ready_tx));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let shared = Arc::new(Mutex::new(Shared::default()));
    let (tx, rx) = futures::channel::mpsc::unbounded();
    let replay = args.sdk.replay_user_messages;
    {
        let (out, shared, tx) = (out.clone(), Arc::clone(&shared), tx.clone());
        let requester = Arc::clone(&requester);
        let sdk_hooks = Arc::clone(&sdk_hooks);
        let agents = facts.agents.clone();
        let session_uuid = session.id().as_uuid();
        let schema = crate::structured::Schema::from_flags(&args.sdk)?;
        let bypass = args.sdk.allow_dangerously_skip_permissions
            || facts.permission_mode == PermissionMode::BypassPermissions;
        std::thread::Builder::new()
            .name("sdk stdin".into())
            .spawn(move || {
                let registry = Registry {
                    requester: &requester,
                    hooks: &sdk_hooks,
                    agents: agents.as_ref(),
                    ready: &ready,
                    session: &session_uuid,
                    schema,
                    bypass,
                };
                read_stdin(&out, &shared, &registry, &tx, replay);
            })?;
    }
    let cwd = facts.cwd.clone();
    let mut frames = Frames::new(catalog, args.sdk.include_partial_messages, schema)
        .with_servers(statuses)
        .with_hook_events(args.sdk.include_hook_events);
    let started = Instant::now();
    let ended = runtime.block_on(session.run(rx, |event| {
        for frame in frames.event(event) {
            out.line(frame);
        }
        // An answer that did not fit the schema is asked for again, once.
        if let Some(again) = frames.retry.take() {
            let _ = tx.unbounded_send(Submission::UserTurn {
                text: again,
                images: Vec::new(),
            });
        } else if matches!(event, cox_protocol::types::Event::TurnDone { .. }) {
            // The next prompt starts, or the session ends.
            let mut state = lock(&shared);
            state.forget_turn();
            state.refused_last = false;
            match state.next_turn(&out, frames.session_id()) {
                Some(next) => {
                    let _ = tx.unbounded_send(next);
                }
                None => {
                    state.running = false;
                    if state.closed {
                        let _ = tx.unbounded_send(Submission::Shutdown);
                    }
                }
            }
        }
        if let Some(call_id) = cox_core::subagent_ids::asked(event) {
            ask(&out, &shared, &tx, (&frames, &cwd), call_id);
        }
        // A rewrite allowed for a call that is over must not allow a later
        // call given the same id.
        if let Some(call_id) = done_call(event) {
            let mut state = lock(&shared);
            state.allowed_inputs.remove(call_id.as_str());
            state.edits.remove(call_id.as_str());
        }
    }));
    tracing::info!(ms = started.elapsed().as_millis(), "sdk session ended");
    match ended {
        Ok(_) => Ok(i32::from(frames.failed || lock(&shared).refused_last)),
        Err(err) => bail!("{err}"),
    }
}

/// The in-process SDK servers `--mcp-config` names (`"type": "sdk"`:
/// tools the SDK serves over its control channel), and the configs with
/// them taken out (for the MCP client, which starts the others).
fn sdk_servers(configs: &[String]) -> (Vec<String>, Vec<String>) {
    let mut names = Vec::new();
    let mut rest = Vec::new();
    for config in configs {
        let text = if config.trim_start().starts_with('{') {
            config.clone()
        } else {
            std::fs::read_to_string(config).unwrap_or_default()
        };
        let Ok(mut value) = serde_json::from_str::<Value>(&text) else {
            rest.push(config.clone());
            continue;
        };
        let Some(servers) = value["mcpServers"].as_object_mut() else {
            rest.push(config.clone());
            continue;
        };
        let sdk: Vec<String> = servers
            .iter()
            .filter(|(_, s)| s["type"] == "sdk")
            .map(|(name, _)| name.clone())
            .collect();
        if sdk.is_empty() {
            rest.push(config.clone());
            continue;
        }
        for name in &sdk {
            servers.remove(name);
        }
        if !servers.is_empty() {
            rest.push(value.to_string());
        }
        names.extend(sdk);
    }
    (names, rest)
}

/// The first in-process SDK server `--mcp-config` names, as the line
/// refusing it where there is no SDK to serve it (a plain `cox run`).
#[must_use]
pub fn sdk_server_refusal(configs: &[String]) -> Option<String> {
    let (names, _) = sdk_servers(configs);
    names.first().map(|name| {
        format!(
            "--mcp-config: MCP server '{name}' is an in-process SDK server (type sdk), which only \
             the Claude Agent SDK serves: drive cox with it (--input-format stream-json), or run \
             the tools as a stdio MCP server"
        )
    })
}

/// The call `event` says is done (a subagent's too, by its tagged id).
fn done_call(event: &cox_protocol::types::Event) -> Option<&CallId> {
    match event {
        cox_protocol::types::Event::ToolCallDone { call_id, .. } => Some(call_id),
        cox_protocol::types::Event::Subagent { event, .. } => done_call(event),
        _ => None,
    }
}

/// An ask: to the SDK as `can_use_tool`, or denied when nothing can answer.
fn ask(
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

/// What the SDK's `initialize` and answers reach: cox's own requests, the
/// script's hooks, the agent tool's definitions.
struct Registry<'a> {
    requester: &'a mcp::Requester,
    hooks: &'a hooks::SdkHooks,
    agents: Option<&'a crate::ext::agent_tool::Definitions>,
    /// Told once the session's tools are settled (see `start`).
    ready: &'a Mutex<Option<futures::channel::oneshot::Sender<Init>>>,
    /// The session's id, as the frames spell it.
    session: &'a str,
    /// `--json-schema`, which `initialize` may repeat.
    schema: Option<crate::structured::Schema>,
    /// The SDK may switch to bypassPermissions: the session started in it,
    /// or --allow-dangerously-skip-permissions.
    bypass: bool,
}

/// Why a switch to bypassPermissions is refused.
const BYPASS_REFUSED: &str = "bypassPermissions needs a session started in it or \
     --allow-dangerously-skip-permissions (the SDK's allowDangerouslySkipPermissions); the mode \
     is unchanged";

impl Registry<'_> {
    /// The session may start: with nothing `initialize` set.
    fn settled(&self) {
        self.settle(Init::default());
    }

    /// `Err` when the session has started already and `init` would
    /// change it. (Only the reader thread settles, so this holds until
    /// its `settle`.)
    fn can_settle(&self, init: &Init) -> Result<(), String> {
        let started = self
            .ready
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none();
        if started && !init.is_empty() {
            return Err(
                "initialize: the session has started; its system prompt, title and \
                        SDK MCP servers can no longer change"
                    .into(),
            );
        }
        Ok(())
    }

    /// The session may start, with what `initialize` set (nothing, once
    /// it has started: see `can_settle`).
    fn settle(&self, init: Init) {
        let sender = self
            .ready
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(sender) = sender {
            let _ = sender.send(init);
        }
    }
}

/// What the SDK's `initialize` settles before the session's first request
/// (the npm SDK's way; the Python SDK passes flags).
#[derive(Default)]
struct Init {
    /// `sdkMcpServers`: in-process servers, reached as `--mcp-config`'s.
    servers: Vec<String>,
    /// `systemPrompt`: replaces cox's prompt (blank strings are the SDK's
    /// way of setting none, and leave it).
    system_prompt: Option<String>,
    /// `appendSystemPrompt`: said after the prompt and `--append-system-prompt`.
    append: Option<String>,
    title: Option<String>,
}

impl Init {
    fn is_empty(&self) -> bool {
        self.servers.is_empty()
            && self.system_prompt.is_none()
            && self.append.is_none()
            && self.title.is_none()
    }

    /// The settings `request` carries; `Err` names the first cox cannot
    /// take, so nothing the script set is silently dropped.
    fn parse(request: &Value, schema: Option<&crate::structured::Schema>) -> Result<Self, String> {
        /// Handled elsewhere (`hooks`, `agents`) or informational.
        const TAKEN: &[&str] = &[
            "subtype",
            "hooks",
            "agents",
            "sdkMcpServers",
            "sdkMcpServerManifests",
            "sdkMcpServerConfigs",
            "jsonSchema",
            "systemPrompt",
            "appendSystemPrompt",
            "title",
        ];
        let unset = |v: &Value| match v {
            Value::Null | Value::Bool(false) => true,
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
            Value::String(s) => s.is_empty(),
            _ => false,
        };
        if let Some(fields) = request.as_object()
            && let Some((key, _)) = fields
                .iter()
                .find(|(key, value)| !TAKEN.contains(&key.as_str()) && !unset(value))
        {
            return Err(format!("initialize: `{key}` is not something cox supports"));
        }
        let text = |key: &str| -> Result<Option<String>, String> {
            match &request[key] {
                Value::Null => Ok(None),
                Value::String(s) => Ok(Some(s.clone())),
                Value::Array(parts) => parts
                    .iter()
                    .map(|p| p.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .map(|parts| Some(parts.join("\n\n")))
                    .ok_or_else(|| format!("initialize: `{key}` is not text")),
                _ => Err(format!("initialize: `{key}` is not text")),
            }
        };
        let schema_given = &request["jsonSchema"];
        if !schema_given.is_null() && !schema.is_some_and(|s| s.same_as(schema_given)) {
            return Err(
                "initialize: `jsonSchema` is not the one --json-schema gave; pass the \
                        schema as the flag"
                    .into(),
            );
        }
        let servers = match &request["sdkMcpServers"] {
            Value::Null => Vec::new(),
            Value::Array(names) => names
                .iter()
                .map(|n| n.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or("initialize: `sdkMcpServers` is not a list of names")?,
            _ => return Err("initialize: `sdkMcpServers` is not a list of names".into()),
        };
        Ok(Self {
            servers,
            system_prompt: text("systemPrompt")?.filter(|p| !p.trim().is_empty()),
            append: text("appendSystemPrompt")?.filter(|p| !p.trim().is_empty()),
            title: text("title")?.filter(|t| !t.trim().is_empty()),
        })
    }
}

/// Reads stdin to its end, line by line.
fn read_stdin(
    out: &Out,
    shared: &Mutex<Shared>,
    registry: &Registry<'_>,
    tx: &UnboundedSender<Submission>,
    replay: bool,
) {
    let stdin = std::io::stdin();
    let mut stdin = stdin.lock();
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        match stdin.read_until(b'\n', &mut bytes) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // Bytes that are not UTF-8 make the line an error, not the end.
        let Ok(line) = std::str::from_utf8(&bytes) else {
            out.line(error_frame("stdin: a line that is not UTF-8"));
            continue;
        };
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(message) => take(out, shared, registry, tx, message, replay),
            Err(err) => out.line(error_frame(&format!(
                "stdin: a line that is not JSON: {err}"
            ))),
        }
    }
    // No more prompts: the asks still open are denied, then the session
    // ends once the queued turns are done.
    registry.requester.close();
    registry.settled();
    let mut state = lock(shared);
    state.closed = true;
    for (_, Asked { call_id, .. }) in state.asks.drain() {
        let _ = tx.unbounded_send(Submission::Approve {
            call_id,
            decision: Decision::Deny {
                reason: Some("the SDK closed its input before answering".into()),
            },
        });
    }
    if !state.running && state.queued.is_empty() {
        let _ = tx.unbounded_send(Submission::Shutdown);
    }
}

/// A user message that starts no turn: an error frame and its result.
fn refuse(out: &Out, session: &str, why: &str) {
    out.line(error_frame(why));
    out.line(refused_result(session, why));
}

/// The `result` of a user message that started no turn.
fn refused_result(session: &str, why: &str) -> Value {
    json!({
        "type": "result", "subtype": "error_during_execution", "is_error": true,
        "duration_ms": 0, "duration_api_ms": 0, "num_turns": 0, "result": "",
        "session_id": session, "total_cost_usd": 0.0,
        "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0,
                  "cache_creation_input_tokens": 0},
        "permission_denials": [], "errors": [why], "uuid": frames::uuid(),
    })
}

fn error_frame(text: &str) -> Value {
    json!({"type": "system", "subtype": "error", "uuid": frames::uuid(), "text": text})
}

/// One message from the SDK.
fn take(
    out: &Out,
    shared: &Mutex<Shared>,
    registry: &Registry<'_>,
    tx: &UnboundedSender<Submission>,
    message: Value,
    replay: bool,
) {
    match message["type"].as_str() {
        Some("user") => match prompt_of(&message) {
            Ok((text, images)) => {
                if replay {
                    out.line(message.clone());
                }
                registry.settled();
                let turn = Submission::UserTurn { text, images };
                let mut state = lock(shared);
                if state.running {
                    state.queued.push_back(Ok(turn));
                } else {
                    state.running = true;
                    state.refused_last = false;
                    let _ = tx.unbounded_send(turn);
                }
            }
            // Refused: still one result, in its place among the others, or
            // a client waiting for it would wait forever (or pair it with
            // another prompt).
            Err(why) => {
                let why = format!("stdin: a user message {why}");
                let mut state = lock(shared);
                if state.running {
                    state.queued.push_back(Err(why));
                } else {
                    refuse(out, registry.session, &why);
                    state.refused_last = true;
                }
            }
        },
        Some("control_request") => {
            let id = message["request_id"].clone();
            if message["request"]["subtype"] == "interrupt" {
                // Asks of the interrupted turn are void: a late answer
                // must not reach a later call with the same id.
                lock(shared).forget_turn();
            }
            let answer = control(tx, registry, &message["request"]);
            // A refused `initialize` settles nothing: the script may send
            // a better one, or its first prompt starts the session.
            if message["request"]["subtype"] == "initialize" && answer.is_ok() {
                registry.settled();
            }
            out.line(match answer {
                Ok(response) => json!({
                    "type": "control_response",
                    "response": {"subtype": "success", "request_id": id, "response": response},
                }),
                Err(error) => json!({
                    "type": "control_response",
                    "response": {"subtype": "error", "request_id": id, "error": error},
                }),
            });
        }
        Some("control_response") => {
            if !registry.requester.answer(&message["response"]) {
                answered(out, shared, (tx, registry), &message["response"]);
            }
        }
        // The SDK abandons nothing of cox's; a cancel of one of its own
        // requests needs no answer.
        Some("control_cancel_request") => {}
        other => out.line(error_frame(&format!(
            "stdin: a message of type {} is not one cox reads (user, control_request, control_response)",
            other.map_or_else(|| "(none)".to_owned(), |t| format!("`{t}`"))
        ))),
    }
}

/// The agents `initialize` defines (`{name: {description, prompt, tools?,
/// model?}}`); a field cox cannot honour is an error naming it.
fn sdk_agents(agents: &Value) -> Result<Vec<crate::ext::agents::Agent>, String> {
    const TAKEN: &[&str] = &["description", "prompt", "tools", "model"];
    let mut out = Vec::new();
    let agents = match agents {
        Value::Null => return Ok(out),
        Value::Object(agents) => agents,
        _ => return Err("agents: not an object of definitions".into()),
    };
    for (name, agent) in agents {
        let Some(fields) = agent.as_object() else {
            return Err(format!("agents: `{name}` is not an object"));
        };
        if let Some(other) = fields.keys().find(|k| !TAKEN.contains(&k.as_str())) {
            return Err(format!(
                "agents: `{name}`: `{other}` is not supported by cox (it takes description, \
                 prompt, tools and model)"
            ));
        }
        let text = |key: &str| fields.get(key).and_then(Value::as_str).map(str::to_owned);
        let (Some(description), Some(prompt)) = (text("description"), text("prompt")) else {
            return Err(format!("agents: `{name}` needs a description and a prompt"));
        };
        if fields
            .get("model")
            .is_some_and(|m| !m.is_null() && !m.is_string())
        {
            return Err(format!("agents: `{name}`: model must be a name"));
        }
        let tools = match fields.get("tools") {
            None | Some(Value::Null) => None,
            Some(Value::Array(list)) => Some(
                list.iter()
                    .map(|t| t.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| format!("agents: `{name}`: tools must be names"))?,
            ),
            Some(_) => return Err(format!("agents: `{name}`: tools must be a list of names")),
        };
        out.push(crate::ext::agents::Agent {
            name: name.clone(),
            description,
            file: std::path::PathBuf::from("(the Agent SDK)"),
            tools,
            model: text("model"),
            prompt,
            project: false,
        });
    }
    Ok(out)
}

/// The prompt of a `user` message: its text, and its images.
fn prompt_of(message: &Value) -> Result<(String, Vec<cox_protocol::types::Image>), String> {
    let content = &message["message"]["content"];
    if let Some(text) = content.as_str() {
        return Ok((text.to_owned(), Vec::new()));
    }
    let Some(blocks) = content.as_array() else {
        return Err("has no message.content".into());
    };
    let mut text = String::new();
    let mut images = Vec::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(block["text"].as_str().unwrap_or_default());
            }
            Some("image") => {
                let data = block["source"]["data"].as_str().unwrap_or_default();
                images.push(
                    crate::attach::image_from_base64(data, "the image")
                        .map_err(|why| format!("holds an image cox cannot take: {why}"))?,
                );
            }
            other => {
                return Err(format!(
                    "holds a block cox does not take ({})",
                    other.unwrap_or("no type")
                ));
            }
        }
    }
    Ok((text, images))
}

/// Answers one control request; `Err` is the error to send back.
fn control(
    tx: &UnboundedSender<Submission>,
    registry: &Registry<'_>,
    request: &Value,
) -> Result<Value, String> {
    let send = |sub| {
        tx.unbounded_send(sub)
            .map_err(|_| "the session has ended".to_owned())
    };
    match request["subtype"].as_str() {
        Some("initialize") => {
            let init = Init::parse(request, registry.schema.as_ref())?;
            let callbacks = hooks::registered(&request["hooks"])?;
            let agents = sdk_agents(&request["agents"])?;
            if registry.agents.is_none() && !agents.is_empty() {
                return Err(
                    "agents: this session has no agent tool ([agents] max_depth is 0, \
                            or --tools leaves it out)"
                        .into(),
                );
            }
            // Everything checked first: a refused `initialize` changes
            // nothing. The agents and hooks are in before the session may
            // start, so its first request offers them.
            registry.can_settle(&init)?;
            if let Some(definitions) = registry.agents
                && !agents.is_empty()
            {
                definitions.add(agents);
            }
            registry.hooks.set(callbacks);
            registry.settle(init);
            Ok(json!({"commands": [], "output_style": "default", "models": []}))
        }
        Some("interrupt") => {
            send(Submission::Interrupt)?;
            Ok(json!({}))
        }
        Some("set_permission_mode") => {
            let mode: PermissionMode = request["mode"]
                .as_str()
                .unwrap_or_default()
                .parse()
                .map_err(|e| format!("{e}"))?;
            if mode == PermissionMode::BypassPermissions && !registry.bypass {
                return Err(BYPASS_REFUSED.into());
            }
            send(Submission::SetMode {
                permission_mode: Some(mode),
                tier: None,
                model: None,
            })?;
            Ok(json!({}))
        }
        Some("set_model") => match request["model"].as_str().filter(|m| !m.trim().is_empty()) {
            Some(model) => {
                send(Submission::SetMode {
                    permission_mode: None,
                    tier: None,
                    model: Some(model.to_owned()),
                })?;
                Ok(json!({}))
            }
            None => Err("set_model needs a model name (cox has no default to go back to)".into()),
        },
        Some(other) => Err(format!(
            "the control request `{other}` is not supported by cox"
        )),
        None => Err("a control request without a subtype".into()),
    }
}

/// An allow's `updatedPermissions`: rules allowed for the session make it
/// an allow for the session (the call's own grant, as a person's `s`), a
/// `setMode` changes the mode; what cox cannot take (a settings file as
/// destination, deny rules, folders) is said in an error frame, never
/// taken silently.
fn permissions(
    out: &Out,
    (tx, bypass): (&UnboundedSender<Submission>, bool),
    tool: &str,
    updates: &Value,
) -> Decision {
    let mut decision = Decision::Allow;
    // A rule counts only for the tool asked about, by either name.
    let names = cox_hooks::claude::names_for(tool);
    let for_this_tool = |update: &Value| {
        update["rules"].as_array().is_some_and(|rules| {
            !rules.is_empty()
                && rules.iter().all(|r| {
                    r["toolName"]
                        .as_str()
                        .is_some_and(|n| names.iter().any(|m| m.eq_ignore_ascii_case(n)))
                })
        })
    };
    for update in updates.as_array().into_iter().flatten() {
        let kind = update["type"].as_str().unwrap_or_default();
        let session = update["destination"] == "session";
        match kind {
            "addRules" | "replaceRules"
                if session && update["behavior"] == "allow" && for_this_tool(update) =>
            {
                decision = Decision::AllowForSession;
            }
            "setMode" => match update["mode"].as_str().map(str::parse::<PermissionMode>) {
                Some(Ok(PermissionMode::BypassPermissions)) if !bypass => {
                    out.line(error_frame(BYPASS_REFUSED));
                }
                Some(Ok(mode)) => {
                    let _ = tx.unbounded_send(Submission::SetMode {
                        permission_mode: Some(mode),
                        tier: None,
                        model: None,
                    });
                }
                _ => out.line(error_frame(&format!(
                    "updatedPermissions: setMode {} is not a permission mode cox has",
                    update["mode"]
                ))),
            },
            _ => out.line(error_frame(&format!(
                "updatedPermissions: `{kind}` to {} was not applied: cox takes rules allowed for \
                 the session and setMode; put lasting rules in your config",
                update["destination"]
            ))),
        }
    }
    decision
}

/// The SDK's answer to one of cox's requests.
fn answered(
    out: &Out,
    shared: &Mutex<Shared>,
    (tx, registry): (&UnboundedSender<Submission>, &Registry<'_>),
    response: &Value,
) {
    let bypass = registry.bypass;
    let id = response["request_id"].as_str().unwrap_or_default();
    let Some(Asked {
        call_id,
        input,
        tool,
        cut,
        shown,
    }) = lock(shared).asks.remove(id)
    else {
        out.line(error_frame(&format!(
            "stdin: a control response for request `{id}`, which cox did not send or was answered"
        )));
        return;
    };
    let decision = match response["subtype"].as_str() {
        Some("success") => {
            let answer = &response["response"];
            match answer["behavior"].as_str() {
                Some("allow") => match answer
                    .get("updatedInput")
                    .filter(|u| u.is_object())
                    // An echo of a cut input is no rewrite.
                    .filter(|u| cut.as_ref() != Some(*u))
                    .map(|updated| cox_hooks::claude::input_from_shown(&tool, &shown, updated))
                {
                    Some(_) if cut.is_some() => Decision::Deny {
                        reason: Some(
                            "the SDK's permission callback rewrote an input it was shown cut \
                             (too long for its line); the rewrite cannot be taken"
                                .into(),
                        ),
                    },
                    Some(updated) if updated != input => {
                        let mut state = lock(shared);
                        let edits = state.edits.entry(call_id.as_str().to_owned()).or_default();
                        *edits += 1;
                        if *edits > MAX_EDITS {
                            Decision::Deny {
                                reason: Some(format!(
                                    "the SDK's permission callback rewrote this call's input \
                                     {MAX_EDITS} times and kept rewriting it"
                                )),
                            }
                        } else {
                            let granted = permissions(
                                out,
                                (tx, bypass),
                                &tool,
                                &answer["updatedPermissions"],
                            );
                            // A rewrite that newly leaves the sandbox is put
                            // to the callback again, shown as such.
                            let unsandboxed = |v: &Value| v["unsandboxed"] == true;
                            if !unsandboxed(&updated) || unsandboxed(&input) {
                                state.allowed_inputs.insert(
                                    call_id.as_str().to_owned(),
                                    (updated.clone(), granted),
                                );
                            }
                            Decision::Edit {
                                input: updated.clone(),
                            }
                        }
                    }
                    _ => permissions(out, (tx, bypass), &tool, &answer["updatedPermissions"]),
                },
                Some("deny") if answer["interrupt"].as_bool() == Some(true) => {
                    Decision::Deny { reason: None }
                }
                Some("deny") => Decision::Deny {
                    reason: Some(
                        answer["message"]
                            .as_str()
                            .unwrap_or("the SDK's permission callback denied it")
                            .to_owned(),
                    ),
                },
                _ => Decision::Deny {
                    reason: Some("the SDK answered the ask with no behavior".into()),
                },
            }
        }
        _ => Decision::Deny {
            reason: Some(format!(
                "the SDK could not answer the ask: {}",
                response["error"].as_str().unwrap_or("no reason given")
            )),
        },
    };
    let _ = tx.unbounded_send(Submission::Approve { call_id, decision });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fitted(mut frame: Value) -> Value {
        while frame.to_string().len() > frames::MAX_LINE && shorten_longest(&mut frame) {}
        frame
    }

    #[test]
    fn a_frame_too_long_for_the_line_is_cut_to_fit_saying_so() {
        // One long string: halved until it fits.
        let frame = fitted(json!({"input": {"content": "x".repeat(3 * frames::MAX_LINE)}}));
        let text = frame["input"]["content"].as_str().unwrap();
        assert!(frame.to_string().len() <= frames::MAX_LINE);
        assert!(
            text.ends_with("[cut here to fit the frame]"),
            "{}",
            &text[text.len() - 40..]
        );
        // Many short strings: the list is cut, and says how much.
        let many: Vec<String> = (0..2000).map(|i| format!("{i:0>999}")).collect();
        let frame = fitted(json!({"input": {"lines": many}}));
        assert!(frame.to_string().len() <= frames::MAX_LINE);
        let lines = frame["input"]["lines"].as_array().unwrap();
        assert!(
            lines
                .last()
                .unwrap()
                .as_str()
                .unwrap()
                .contains("more items cut to fit the frame"),
            "{:?}",
            lines.last()
        );
        // A huge object of small fields: replaced whole, saying so.
        let keys: serde_json::Map<String, Value> = (0..90_000)
            .map(|i| (format!("k{i:06}"), json!("v")))
            .collect();
        let frame = fitted(json!({"type": "result", "permission_denials": [{"tool_input": keys}]}));
        assert!(frame.to_string().len() <= frames::MAX_LINE);
        assert!(
            frame["permission_denials"][0]
                .as_str()
                .unwrap()
                .contains("cut to fit the frame"),
            "{frame}"
        );
        assert_eq!(frame["type"], "result");
        // Small: nothing to cut.
        let mut small = json!({"a": [1, 2, 3]});
        assert!(!shorten_longest(&mut small));
    }
}
