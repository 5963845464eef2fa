//! `cox-hooks`: hooks with Claude Code's contract.
//!
//! [`config`] reads hooks from Claude Code's settings files, a plugin's
//! `hooks.json` and cox's `[hooks]` table; [`CommandHooks`] is the
//! session's [`Hooks`]: for each point the core calls, it picks the hooks
//! of that event whose matcher takes the call (by cox's tool name or
//! Claude Code's, see [`claude`]), runs them at once, each in a process
//! group of its own with its time limit ([`run`]), and answers one reply
//! per hook in configuration order, its stdout read as Claude Code reads
//! it ([`output`]). Two hooks with the same command run once.
//!
//! What a hook is shown on stdin is Claude Code's object: `session_id`,
//! `transcript_path` (cox's rollout of the session), `cwd`,
//! `permission_mode`, `hook_event_name` and the event's own fields, with
//! tool names and inputs as Claude Code spells them. Its environment has
//! `CLAUDE_PROJECT_DIR` (and `COX_PROJECT_DIR`) set to the session's
//! folder, and a plugin's hooks `CLAUDE_PLUGIN_ROOT`.
//!
//! Which hooks a session gets (trusted ones only; none with `--no-hooks`)
//! is the command line's choice; this crate runs what it is given.

pub mod claude;
pub mod config;
pub mod matcher;
pub mod output;
pub mod pins;
mod run;

use std::path::PathBuf;

use cox_protocol::hook::{HookCall, HookEvent, HookReply, Hooks};
use cox_protocol::provider::BoxFuture;
use serde_json::{Map, Value, json};

pub use config::{DEFAULT_TIMEOUT, HookDef, Loaded, Loader, Origin, Scope};
pub use run::CAPTURE_MAX;

/// The reply of a hook whose pinned script changed since it was trusted:
/// it does not run; a tool-gating hook refuses the call instead, so a
/// guard cannot be switched off by rewriting it.
fn changed_script(def: &HookDef, script: &std::path::Path) -> HookReply {
    let message = format!(
        "its script {} changed since it was trusted, so it did not run; review it, then `cox ext \
         trust {}`",
        script.display(),
        def.name
    );
    let status = if matches!(
        def.event,
        HookEvent::PreToolUse | HookEvent::PermissionRequest
    ) {
        cox_protocol::hook::HookStatus::Blocked { reason: message }
    } else {
        cox_protocol::hook::HookStatus::Failed { message }
    };
    HookReply {
        hook: def.name.clone(),
        duration_ms: 0,
        status,
        output: cox_protocol::hook::HookOutput::default(),
    }
}

/// What every hook of a session is told about it.
#[derive(Clone, Debug)]
pub struct SessionInfo {
    pub session_id: String,
    /// The session's rollout.
    pub transcript_path: PathBuf,
    /// The session's folder: where hooks run, and `CLAUDE_PROJECT_DIR`.
    pub cwd: PathBuf,
}

/// A session's hooks, run as commands.
#[derive(Debug)]
pub struct CommandHooks {
    defs: Vec<HookDef>,
    session: SessionInfo,
    shell: &'static str,
    env: Vec<(String, String)>,
}

impl CommandHooks {
    /// Runs `defs` for the session `session`.
    #[must_use]
    pub fn new(defs: Vec<HookDef>, session: SessionInfo) -> Self {
        let dir = session.cwd.display().to_string();
        Self {
            defs,
            shell: run::shell(),
            env: vec![
                ("CLAUDE_PROJECT_DIR".into(), dir.clone()),
                ("COX_PROJECT_DIR".into(), dir),
                ("COX_SESSION_ID".into(), session.session_id.clone()),
            ],
            session,
        }
    }

    /// The hooks it runs.
    #[must_use]
    pub fn defs(&self) -> &[HookDef] {
        &self.defs
    }

    /// The hooks of `call` to run: its event, a matcher that takes its
    /// target, one per command.
    fn chosen(&self, call: &HookCall) -> Vec<&HookDef> {
        let names: Vec<&str> = match &call.target {
            Some(target) if call.event.is_tool_event() => claude::names_for(target),
            Some(target) => vec![target.as_str()],
            None => Vec::new(),
        };
        let mut chosen: Vec<&HookDef> = Vec::new();
        for def in self.defs.iter().filter(|d| d.event == call.event) {
            let takes = !config::takes_matcher(call.event)
                || matches!(def.matcher, matcher::Matcher::All)
                || def.matcher.matches(&names);
            // The same command in the same environment runs once (a plugin's
            // `${CLAUDE_PLUGIN_ROOT}/check.sh` is another plugin's too).
            let twin = chosen
                .iter()
                .any(|c| c.command == def.command && c.env == def.env);
            if takes && !twin {
                chosen.push(def);
            }
        }
        chosen
    }

    /// What the hooks of `call` are given on stdin: one object, or for a
    /// call that writes several files (or names its file in no `path`,
    /// as `apply_patch` does) one per file, each with that file as
    /// `tool_input.file_path`.
    fn payloads(&self, call: &HookCall) -> Vec<Vec<u8>> {
        let input = self.input(call);
        let names_its_file = call
            .fields
            .get("tool_input")
            .is_some_and(|i| i.get("path").is_some());
        let each: Vec<Value> =
            if call.files.len() > 1 || (!call.files.is_empty() && !names_its_file) {
                call.files
                    .iter()
                    .map(|file| {
                        let mut one = input.clone();
                        if let Some(tool_input) =
                            one.get_mut("tool_input").and_then(Value::as_object_mut)
                        {
                            tool_input.insert("file_path".into(), json!(file));
                        }
                        one
                    })
                    .collect()
            } else {
                vec![input]
            };
        each.into_iter()
            .map(|value| {
                let mut bytes = value.to_string().into_bytes();
                bytes.push(b'\n');
                bytes
            })
            .collect()
    }

    /// The object a hook reads on stdin for `call`.
    fn input(&self, call: &HookCall) -> Value {
        let mut input = Map::new();
        input.insert("session_id".into(), json!(self.session.session_id));
        input.insert(
            "transcript_path".into(),
            json!(self.session.transcript_path.display().to_string()),
        );
        input.insert("cwd".into(), json!(self.session.cwd.display().to_string()));
        input.insert(
            "permission_mode".into(),
            json!(call.permission_mode.as_str()),
        );
        input.insert("hook_event_name".into(), json!(call.event.as_str()));
        let tool = call.fields.get("tool_name").and_then(Value::as_str);
        for (key, value) in &call.fields {
            let shown = match (key.as_str(), tool) {
                ("tool_name", Some(tool)) => json!(claude::claude_name(tool).unwrap_or(tool)),
                ("tool_input", Some(tool)) => {
                    claude::input_for_hook(tool, value, &self.session.cwd)
                }
                ("tool_response", Some(tool)) => {
                    let raw = call.fields.get("tool_input").unwrap_or(&Value::Null);
                    claude::response_for_hook(tool, raw, value, &self.session.cwd)
                }
                _ => value.clone(),
            };
            input.insert(key.clone(), shown);
        }
        Value::Object(input)
    }
}

impl Hooks for CommandHooks {
    fn wants(&self, event: HookEvent) -> bool {
        self.defs.iter().any(|d| d.event == event)
    }

    fn run<'a>(&'a self, call: &'a HookCall) -> BoxFuture<'a, Vec<HookReply>> {
        Box::pin(async move {
            let chosen = self.chosen(call);
            if chosen.is_empty() {
                return Vec::new();
            }
            let payloads = self.payloads(call);
            let runs = chosen.iter().flat_map(|def| {
                payloads.iter().map(move |payload| async move {
                    match pins::changed(def) {
                        Some(script) => changed_script(def, script),
                        None => {
                            run::run_one(def, self.shell, payload, &self.session.cwd, &self.env)
                                .await
                        }
                    }
                })
            });
            let mut replies = futures::future::join_all(runs).await;
            // An input changed in Claude Code's fields goes back in cox's.
            if let (Some(tool), Some(original)) = (
                call.fields.get("tool_name").and_then(Value::as_str),
                call.fields.get("tool_input"),
            ) {
                for reply in &mut replies {
                    if let Some(updated) = &reply.output.updated_input {
                        reply.output.updated_input = Some(claude::input_from_hook(
                            tool,
                            original,
                            updated,
                            &self.session.cwd,
                        ));
                    }
                }
            }
            replies
        })
    }
}
