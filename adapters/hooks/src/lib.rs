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

use cox_protocol::hook::{
    HookCall, HookDecision, HookEvent, HookOutput, HookReply, HookStatus, Hooks,
};
use cox_protocol::provider::BoxFuture;
use serde_json::{Map, Value, json};

pub use config::{DEFAULT_TIMEOUT, HookDef, Loaded, Loader, Origin, Scope};
pub use run::CAPTURE_MAX;

/// The reply of a hook that is not run: its pinned script changed since
/// it was trusted, or it cannot be confined here. A hook that gates calls
/// or prompts refuses instead (fail closed: a guard cannot be switched off
/// by editing it, nor run unconfined because confinement is missing);
/// any other is a warning.
fn not_run(def: &HookDef, message: String) -> HookReply {
    let gate = matches!(
        def.event,
        HookEvent::PreToolUse | HookEvent::PermissionRequest | HookEvent::UserPromptSubmit
    );
    let status = if gate {
        HookStatus::Blocked { reason: message }
    } else {
        HookStatus::Failed { message }
    };
    HookReply {
        hook: def.name.clone(),
        narrow_only: !def.origin.scope.trusted_as_written(),
        duration_ms: 0,
        status,
        output: HookOutput::default(),
    }
}

/// How many hook processes run at once: a patch of a thousand files must
/// not start a thousand shells.
const PARALLEL_MAX: usize = 8;

/// One reply for a hook shown a call once per file: it refused if any run
/// refused, it asked if any asked, and it allowed only if every run
/// allowed; an `updatedInput` of one file is not the whole call's, so it
/// is dropped.
#[must_use]
pub fn merge(mut runs: Vec<HookReply>) -> Option<HookReply> {
    if runs.len() <= 1 {
        return runs.pop();
    }
    let rank = |r: &HookReply| match (&r.status, r.output.decision) {
        (HookStatus::Blocked { .. }, _) | (HookStatus::Success, Some(HookDecision::Deny)) => 4,
        (HookStatus::Failed { .. }, _) => 3,
        (HookStatus::Success, Some(HookDecision::Ask)) => 2,
        (HookStatus::Error { .. }, _) => 1,
        (HookStatus::Success, None) => 1,
        (HookStatus::Success, Some(HookDecision::Allow)) => 0,
    };
    let duration_ms = runs.iter().map(|r| r.duration_ms).sum();
    let contexts: Vec<String> = runs
        .iter()
        .filter_map(|r| r.output.context.clone())
        .collect();
    let proceed = runs.iter().all(|r| r.output.proceed);
    let stop_reason = runs.iter().find_map(|r| r.output.stop_reason.clone());
    let mut worst = runs.iter().max_by_key(|r| rank(r)).cloned()?;
    worst.duration_ms = duration_ms;
    worst.output.updated_input = None;
    worst.output.context = (!contexts.is_empty()).then(|| contexts.join("\n"));
    worst.output.proceed = proceed;
    worst.output.stop_reason = stop_reason;
    Some(worst)
}

/// Where a project's or a plugin's hooks run: inside the session's
/// sandbox, as its commands do.
#[derive(Debug)]
pub struct Confinement {
    pub sandbox: cox_sandbox::OsSandbox,
    /// The sandbox lets commands reach the network.
    pub network: bool,
}

/// What every hook of a session is told about it.
#[derive(Clone, Debug)]
pub struct SessionInfo {
    /// The session a person started (a subagent's hooks are told the
    /// session at the top, as Claude Code's are, with `agent_id` beside).
    pub session_id: String,
    /// That session's rollout.
    pub transcript_path: PathBuf,
    /// The session's folder: where hooks run, and `CLAUDE_PROJECT_DIR`.
    pub cwd: PathBuf,
    /// The folder holding each session's rollout (`<id>.jsonl`), where a
    /// `SubagentStop` hook is pointed at the subagent's own
    /// (`agent_transcript_path`); `None` says none.
    pub rollouts: Option<PathBuf>,
}

/// A session's hooks, run as commands.
#[derive(Debug)]
pub struct CommandHooks {
    defs: Vec<HookDef>,
    session: SessionInfo,
    shell: &'static str,
    env: Vec<(String, String)>,
    /// Where a project's and a plugin's hooks run; `None` runs them as the
    /// person's own (tests, benchmarks).
    confinement: Option<Confinement>,
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
            confinement: None,
        }
    }

    /// The same hooks, a project's and a plugin's run inside `confinement`.
    #[must_use]
    pub fn confined(mut self, confinement: Confinement) -> Self {
        self.confinement = Some(confinement);
        self
    }

    /// How `def` starts: `bash -c <command>` with the session's variables
    /// and its own; inside the sandbox when it is not the person's own.
    fn launch(&self, def: &HookDef) -> Result<run::Launch, String> {
        let env: Vec<(String, String)> = self.env.iter().chain(&def.env).cloned().collect();
        let argv: Vec<std::ffi::OsString> =
            vec![self.shell.into(), "-c".into(), def.command.clone().into()];
        let confinement = match &self.confinement {
            Some(confinement) if !def.origin.scope.trusted_as_written() => confinement,
            _ => {
                // The person's own hooks run unconfined, but without cox's
                // credentials all the same (`[sandbox] env` lets one
                // through).
                let filter = self
                    .confinement
                    .as_ref()
                    .map(|c| c.sandbox.policy().env.clone())
                    .unwrap_or_default();
                let launch = cox_sandbox::ServerLaunch::unconfined(&argv, &env, &filter)
                    .ok_or("no program")?;
                return Ok(run::Launch {
                    program: launch.program,
                    args: launch.args,
                    base: launch.base,
                    env: launch.env,
                });
            }
        };
        let launch = confinement
            .sandbox
            .server_launch(
                &argv,
                &self.session.cwd,
                &env,
                &cox_sandbox::ServerReach::network(confinement.network),
            )
            .map_err(|err| {
                format!("it cannot run inside the sandbox here ({err}), and a project's hooks run only there")
            })?;
        Ok(run::Launch {
            program: launch.program,
            args: launch.args,
            base: launch.base,
            env: launch.env,
        })
    }

    /// Runs `def` on one payload, unless its script changed or it cannot
    /// be confined.
    async fn one(&self, def: &HookDef, payload: &[u8]) -> HookReply {
        if let Some(script) = pins::changed(def) {
            return not_run(
                def,
                format!(
                    "its script {} changed since it was trusted, so it did not run; review it, \
                     then `cox ext trust {}`",
                    script.display(),
                    def.name
                ),
            );
        }
        match self.launch(def) {
            Ok(launch) => run::run_one(def, &launch, payload, &self.session.cwd).await,
            Err(why) => not_run(def, why),
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

    /// What the hooks are given on stdin for `shown` ([`payloads`]).
    fn stdin_lines(shown: &[Value]) -> Vec<Vec<u8>> {
        shown
            .iter()
            .map(|value| {
                let mut bytes = value.to_string().into_bytes();
                bytes.push(b'\n');
                bytes
            })
            .collect()
    }
}

/// What the hooks of `call` are given: one [`payload`], or for a call that
/// writes several files (or names its file in no `path`, as `apply_patch`
/// does) one per file, each with that file as `tool_input.file_path`, so
/// a guard that reads `file_path` sees every file the call writes. A hook
/// shown several answers once ([`merge`]).
#[must_use]
pub fn payloads(session: &SessionInfo, call: &HookCall) -> Vec<Value> {
    let input = payload(session, call);
    let names_its_file = call
        .fields
        .get("tool_input")
        .is_some_and(|i| i.get("path").is_some());
    if call.files.len() > 1 || (!call.files.is_empty() && !names_its_file) {
        call.files
            .iter()
            .map(|file| {
                let mut one = input.clone();
                if let Some(tool_input) = one.get_mut("tool_input").and_then(Value::as_object_mut) {
                    tool_input.insert("file_path".into(), json!(file));
                }
                one
            })
            .collect()
    } else {
        // A path through a link or `..`: shown as written too, as Claude
        // Code shows it, so a guard on either name holds (the runs answer
        // as one, a refusal from either winning).
        let as_written = call
            .fields
            .get("tool_name")
            .and_then(Value::as_str)
            .zip(call.fields.get("tool_input"))
            .map(|(tool, raw)| claude::input_for_hook(tool, raw, &call_cwd(session, call)));
        match as_written {
            Some(written) if Some(&written) != input.get("tool_input") => {
                let mut other = input.clone();
                other["tool_input"] = written;
                vec![other, input]
            }
            _ => vec![input],
        }
    }
}

/// One reply for a hook shown `call` as `shown` (its [`payloads`]), from
/// its `runs` in the same order: merged as [`merge`] says, and a rewrite
/// taken back in cox's fields. A call shown twice only because its path
/// goes through a link keeps a rewrite both runs agree on; a patch's
/// files, each shown alone, never do.
#[must_use]
pub fn answer_as_one(call: &HookCall, shown: &[Value], runs: Vec<HookReply>) -> Option<HookReply> {
    let tool = call.fields.get("tool_name").and_then(Value::as_str);
    let back: Vec<Option<Value>> = runs
        .iter()
        .zip(shown)
        .map(|(run, payload)| {
            let updated = run.output.updated_input.as_ref()?;
            let seen = payload.get("tool_input")?;
            Some(claude::input_from_shown(tool?, seen, updated))
        })
        .collect();
    let one_file = call.files.len() <= 1
        && call
            .fields
            .get("tool_input")
            .is_some_and(|i| i.get("path").is_some());
    let agreed = match back.as_slice() {
        [only] => only.clone(),
        [first, rest @ ..] if one_file && first.is_some() && rest.iter().all(|b| b == first) => {
            first.clone()
        }
        _ => None,
    };
    let mut reply = merge(runs)?;
    reply.output.updated_input = agreed;
    Some(reply)
}

/// `call`'s tool input as its hooks are shown it: cox's fields with
/// Claude Code's beside them, paths absolute in the folder the call runs
/// in, and the one file it writes (or the file a read reads) named as the
/// file really touched (links and `..` resolved, as the tool resolves
/// them). `None` for an
/// event about no tool call.
#[must_use]
pub fn shown_input(session: &SessionInfo, call: &HookCall) -> Option<Value> {
    let tool = call.fields.get("tool_name").and_then(Value::as_str)?;
    let input = call.fields.get("tool_input")?;
    let mut shown = claude::input_for_hook(tool, input, &call_cwd(session, call));
    // A read names the file it reads as its subject. A path that could not
    // be confined stays as the model wrote it (made absolute): the tool
    // refuses it.
    let real = match (call.files.as_slice(), call.subject.as_deref()) {
        ([file], _) => Some(file.as_str()),
        ([], Some(subject)) if tool == "read" => Some(subject),
        _ => None,
    };
    if let Some(real) = real.filter(|p| p.starts_with('/')) {
        claude::name_written_file(tool, &mut shown, real);
    }
    Some(shown)
}

/// The folder `call`'s relative paths are read against: where its session
/// works — a subagent's own folder (its worktree) where it has one, else
/// the session's.
#[must_use]
pub fn call_cwd(session: &SessionInfo, call: &HookCall) -> PathBuf {
    call.agent
        .as_ref()
        .map_or_else(|| session.cwd.clone(), |a| PathBuf::from(&a.cwd))
}

/// The object a hook is given for `call` in session `session`: what every
/// event carries (`session_id`, `transcript_path`, `cwd`,
/// `permission_mode`, `hook_event_name`; in a subagent `agent_id` and
/// `agent_type` too, `cwd` being the subagent's) and the event's own
/// fields, tools in Claude Code's names and shapes, paths made absolute
/// against that `cwd`. Command hooks read it on stdin; an SDK's hook
/// callbacks are sent it.
#[must_use]
pub fn payload(session: &SessionInfo, call: &HookCall) -> Value {
    let cwd = call_cwd(session, call);
    let mut input = Map::new();
    input.insert("session_id".into(), json!(session.session_id));
    input.insert(
        "transcript_path".into(),
        json!(session.transcript_path.display().to_string()),
    );
    input.insert("cwd".into(), json!(cwd.display().to_string()));
    if let Some(agent) = &call.agent {
        input.insert("agent_id".into(), json!(agent.id));
        input.insert("agent_type".into(), json!(agent.agent_type));
        if call.event == HookEvent::SubagentStop
            && let Some(rollouts) = &session.rollouts
        {
            let own = rollouts.join(format!("{}.jsonl", agent.id));
            input.insert(
                "agent_transcript_path".into(),
                json!(own.display().to_string()),
            );
        }
    }
    input.insert(
        "permission_mode".into(),
        json!(call.permission_mode.as_str()),
    );
    input.insert("hook_event_name".into(), json!(call.event.as_str()));
    let tool = call.fields.get("tool_name").and_then(Value::as_str);
    for (key, value) in &call.fields {
        let shown = match (key.as_str(), tool) {
            ("tool_name", Some(tool)) => json!(claude::claude_name(tool).unwrap_or(tool)),
            ("tool_input", Some(_)) => shown_input(session, call).unwrap_or_else(|| value.clone()),
            ("tool_response", Some(tool)) => {
                let raw = call.fields.get("tool_input").unwrap_or(&Value::Null);
                let mut response = claude::response_for_hook(tool, raw, value, &cwd);
                // The file named as the input names it (the real one).
                let named = shown_input(session, call).and_then(|s| {
                    ["file_path", "notebook_path"]
                        .iter()
                        .find_map(|k| s.get(*k).filter(|p| p.is_string()).cloned())
                });
                if let (Some(named), Some(object)) = (named, response.as_object_mut())
                    && object.contains_key("filePath")
                {
                    object.insert("filePath".into(), named);
                }
                response
            }
            _ => value.clone(),
        };
        input.insert(key.clone(), shown);
    }
    Value::Object(input)
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
            use futures::StreamExt;
            let payloads_shown = payloads(&self.session, call);
            let payloads = Self::stdin_lines(&payloads_shown);
            let mut jobs: Vec<BoxFuture<'_, (usize, HookReply)>> = Vec::new();
            for (at, def) in chosen.iter().enumerate() {
                for payload in &payloads {
                    let def: &HookDef = def;
                    jobs.push(Box::pin(async move { (at, self.one(def, payload).await) }));
                }
            }
            let runs: Vec<(usize, HookReply)> = futures::stream::iter(jobs)
                .buffered(PARALLEL_MAX)
                .collect()
                .await;
            // One reply per hook, in configuration order.
            (0..chosen.len())
                .filter_map(|at| {
                    let own = runs
                        .iter()
                        .filter(|(of, _)| *of == at)
                        .map(|(_, r)| r.clone())
                        .collect();
                    answer_as_one(call, &payloads_shown, own)
                })
                .collect()
        })
    }
}
