//! `--input-format stream-json --output-format stream-json`: the Claude
//! Agent SDKs' protocol, so a script that drives Claude Code through
//! `claude-agent-sdk` (its `cli_path`) drives cox. A surface, as the
//! terminal UI and the editors' servers are: `cox run` hands it a builder
//! of the session ([`execute`]), and it never assembles one itself.
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
//! The same frames serve a script that gives one prompt (`cox -p "…"
//! --output-format stream-json --verbose`, as Claude Code prints them
//! there; [`execute_one`]): that prompt is the one turn, stdin is not read
//! for control traffic, and the run ends with its result.
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
mod out;
mod state;
mod stdin;

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
use frames::Frames;

use out::*;
use state::*;
use stdin::*;

/// Runs the SDK's session and returns the exit code. Errors before the
/// session starts are one line on stderr and exit 1.
pub fn execute<P, B>(args: RunArgs, build: B) -> i32
where
    P: Provider,
    B: FnOnce(&RunArgs, ApprovalPolicy) -> Result<Built<P>>,
{
    match start(&args, build, None) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("cox: error: {}", crate::one_line(&err));
            1
        }
    }
}

/// One prompt (and its images), its run written as Claude Code's frames
/// (`system/init`, `assistant`, `user`, `result`): what `-p
/// --output-format stream-json --verbose` prints in Claude Code.
pub fn execute_one<P, B>(
    args: RunArgs,
    prompt: (String, Vec<cox_protocol::types::Image>),
    build: B,
) -> i32
where
    P: Provider,
    B: FnOnce(&RunArgs, ApprovalPolicy) -> Result<Built<P>>,
{
    let mut args = args;
    args.prompt = None;
    match start(&args, build, Some(prompt)) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("cox: error: {}", crate::one_line(&err));
            1
        }
    }
}

/// A session as the binary built it for this surface: the session, what a
/// surface shows of it, and what its calls cost.
pub type Built<P> = (
    crate::session::CoxSession<P>,
    crate::session::SessionFacts,
    cox_protocol::catalog::Catalog,
);

fn start<P, B>(
    args: &RunArgs,
    build: B,
    one: Option<(String, Vec<cox_protocol::types::Image>)>,
) -> Result<i32>
where
    P: Provider,
    B: FnOnce(&RunArgs, ApprovalPolicy) -> Result<Built<P>>,
{
    let stream_json = args.output_format == Some(crate::args::OutputFormat::StreamJson);
    // One prompt's frames take the flags that shape them; those that need
    // the SDK's stdin (its permission answers, its user messages) still
    // need it.
    let refused = if one.is_some() {
        let mut flags = args.sdk.clone();
        flags.include_partial_messages = false;
        flags.include_hook_events = false;
        flags.allow_dangerously_skip_permissions = false;
        flags.refusal(stream_json)
    } else {
        args.sdk.refusal(stream_json)
    };
    if let Some(line) = refused {
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
    let asks = args.sdk.permission_prompt_tool.is_some();
    let approval = if asks {
        ApprovalPolicy::OnRequest
    } else {
        ApprovalPolicy::Never
    };
    let (session, facts, catalog) = build(args, approval)?;
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
    // Its host is asked for input an MCP server wants (its
    // `onElicitation`), whether or not it judges calls.
    let session = session
        .with_hooks(Arc::clone(&sdk_hooks) as _)
        .with_input_answered();
    // Its subagents' calls are the script's to judge too.
    facts.surface_hooks.set(Arc::clone(&sdk_hooks) as _);
    // The tools are settled once `initialize` has been taken (its agents
    // join the agent tool's definitions, its SDK servers are connected, its
    // system prompt is the session's): the session waits for it, or for
    // the first prompt or stdin's end from a client that sends none.
    let (ready_tx, ready_rx) = futures::channel::oneshot::channel::<Init>();
    // The configured servers' states (filled as they connect), then the
    // SDK's own.
    let statuses = Arc::clone(&facts.mcp_servers);
    let session = {
        let requester = Arc::clone(&requester);
        let statuses = Arc::clone(&statuses);
        let flag_prompt = args.sdk.system_prompt()?;
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
            statuses
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend(connected);
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
        if let Some((text, images)) = one {
            // One prompt, no reader: the session starts with nothing
            // `initialize` set, runs the prompt, and ends with it.
            if let Some(settle) = lock_ready(&ready).take() {
                let _ = settle.send(Init::default());
            }
            {
                let mut state = lock(&shared);
                state.closed = true;
                state.running = true;
            }
            let _ = tx.unbounded_send(Submission::UserTurn { text, images });
        } else {
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
        if let cox_protocol::types::Event::Elicitation {
            id,
            server,
            message,
            schema,
        } = event
        {
            elicit(
                Arc::clone(&requester),
                tx.clone(),
                id,
                server,
                message,
                schema,
            );
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

/// The `initialize` settlement, taken once.
fn lock_ready<T>(ready: &Mutex<Option<T>>) -> std::sync::MutexGuard<'_, Option<T>> {
    ready.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An MCP server's ask for input, put to the SDK as Claude Code does (a
/// `control_request` of subtype `elicitation`: the server's name, its
/// message and form); the SDK's `{action, content}` goes back to the
/// session. An error, or no answer, cancels.
fn elicit(
    requester: Arc<mcp::Requester>,
    tx: futures::channel::mpsc::UnboundedSender<Submission>,
    id: &str,
    server: &str,
    message: &str,
    schema: &Value,
) {
    use cox_protocol::types::ElicitAnswer;
    let request = json!({
        "subtype": "elicitation", "mcp_server_name": server, "message": message,
        "mode": "form", "requested_schema": schema, "elicitation_id": id,
    });
    let id = id.to_owned();
    tokio::spawn(async move {
        let answer = match requester.request(request, true).await {
            Ok((answer, _)) => match answer["action"].as_str() {
                Some("accept") => ElicitAnswer::Accept {
                    content: answer["content"].as_object().cloned().unwrap_or_default(),
                },
                Some("decline") => ElicitAnswer::Decline,
                _ => ElicitAnswer::Cancel,
            },
            Err(why) => {
                tracing::warn!(%why, "the SDK did not answer an MCP server's ask for input");
                ElicitAnswer::Cancel
            }
        };
        let _ = tx.unbounded_send(Submission::Elicited { id, answer });
    });
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
            // Through the session's reads: the MCP loader reads it again.
            crate::config::once::read(std::path::Path::new(config), |path| {
                std::fs::read_to_string(path).map(Some)
            })
            .ok()
            .flatten()
            .unwrap_or_default()
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

#[cfg(test)]
mod tests;
