//! The `agent` tool: a subagent, a session of its own that works on a
//! prompt and answers with its final text.
//!
//! A child is a whole cox session, built from its parent's command line as
//! any session is (config, hooks, MCP servers, sandbox, record): its own
//! rollout, its own `sessions` row with `parent_id` set, its own ledger
//! rows. It runs on a thread of its own; its events go up to the parent
//! through the call's [`Nested`](cox_protocol::tool::Nested) link (the
//! parent says them as `Event::Subagent`), and the answers to its asks come
//! down the same way.
//!
//! Invariants:
//! - a child is never wider than its parent: the parent's permission mode
//!   at the call (never a wider one), the same rules, sandbox and approval
//!   policy; a definition's `tools` only narrows;
//! - a session at `[agents] max_depth` (2 by default) has no agent tool, so
//!   nesting ends there;
//! - at most `[agents] parallel` (4) children of one session run at once;
//!   the others wait their turn;
//! - an interrupt of the parent (the call's cancel) interrupts the child,
//!   and the call ends when the child's turn does.

use std::sync::Arc;

use cox_protocol::SessionId;
use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::{
    ApprovalPolicy, Event, PermissionMode, Risk, StopReason, Submission, ToolResult,
};
use futures::StreamExt as _;
use futures::channel::mpsc;
use serde_json::{Value, json};

use crate::RunArgs;
use crate::config::AgentsConfig;
use crate::ext::agents::Agent;
use crate::given::Given;

mod names;

pub(crate) use names::{CLAUDE_NAMES, tool_names};

/// The tool's name, as the model calls it.
pub const NAME: &str = "agent";

/// How deep subagents nest when `[agents] max_depth` is unset.
pub const DEFAULT_MAX_DEPTH: u32 = 2;

/// How many children run at once when `[agents] parallel` is unset.
pub const DEFAULT_PARALLEL: u32 = 4;

/// Hooks a surface adds to its session (the Agent SDK's callbacks), which
/// every subagent of it runs too, however deep: shared, as the surface
/// fills it once it has them.
#[derive(Clone, Default)]
pub struct SurfaceHooks(Arc<std::sync::Mutex<Option<Arc<dyn cox_protocol::hook::Hooks>>>>);

impl SurfaceHooks {
    /// The session's children (and theirs) run `hooks` from now on.
    pub fn set(&self, hooks: Arc<dyn cox_protocol::hook::Hooks>) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(hooks);
    }

    #[must_use]
    pub fn get(&self) -> Option<Arc<dyn cox_protocol::hook::Hooks>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl std::fmt::Debug for SurfaceHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.get().is_some() {
            "SurfaceHooks(set)"
        } else {
            "SurfaceHooks(none)"
        })
    }
}

/// Where a session stands among subagents.
#[derive(Clone, Debug, Default)]
pub struct Lineage {
    /// The session that started this one; `None` for one a person did.
    pub parent: Option<SessionId>,
    /// The session a person started, at the top of this one's lineage;
    /// `None` for that session itself.
    pub top: Option<SessionId>,
    /// 0 for a session a person started; a child's is its parent's + 1.
    pub depth: u32,
    /// The tools it may use (cox's names); `None`: every tool.
    pub tools: Option<Vec<String>>,
    /// Its definition's instructions, appended to the system prompt.
    pub prompt: Option<String>,
    /// Its definition's name (`general-purpose` without one), which its
    /// hooks are told and their `SubagentStart`/`SubagentStop` matchers
    /// test.
    pub agent_type: Option<String>,
    /// The `description` of the call that runs it (the scripted provider
    /// plays that subagent's script).
    pub script: Option<String>,
    /// The tier its main turns run on, when its definition names one.
    pub tier: Option<cox_protocol::provider::Tier>,
    /// Where its project settings (rules, sandbox, hooks, MCP servers)
    /// are read: its parent's folder; `None`: its own.
    pub settings_from: Option<std::path::PathBuf>,
    /// The surface's hooks of the session at the top, run by a subagent
    /// as by that session.
    pub hooks: SurfaceHooks,
}

/// What a session's agent tool starts children from.
pub struct Recipe {
    /// The parent's command line.
    pub args: RunArgs,
    /// The parent's working folder.
    pub cwd: std::path::PathBuf,
    /// Where the parent's project settings came from (its own folder, or
    /// its parent's): its children read them there too.
    pub settings_from: std::path::PathBuf,
    pub parent: SessionId,
    /// The session at the top of the parent's lineage (the parent itself
    /// when a person started it).
    pub top: SessionId,
    /// The parent's depth.
    pub depth: u32,
    /// The parent's approval policy (a child asks where its parent does).
    pub approval: ApprovalPolicy,
    pub max_turns: Option<u32>,
    pub config: AgentsConfig,
    /// The editor's buffers the parent reads and writes through (ACP), so
    /// a child's edits land there too.
    pub files: Option<std::sync::Arc<dyn cox_protocol::tool::TextFiles>>,
    /// The surface's hooks, which children run too.
    pub hooks: SurfaceHooks,
    /// What builds and runs a child session.
    pub spawn: Spawn,
}

/// A child session to start: its command line and place among subagents,
/// its parent's approval policy and turn cap, and the editor's buffers.
pub struct Child {
    pub args: RunArgs,
    pub lineage: Lineage,
    pub approval: ApprovalPolicy,
    pub max_turns: Option<u32>,
    pub files: Option<Arc<dyn cox_protocol::tool::TextFiles>>,
}

/// Builds a child session as any session is built, and runs it on the
/// calling thread (inside `runtime`) until `submissions` end, each of its
/// events given to the callback; why it could not, as one line. Given by
/// whoever assembles sessions (see `crate::session`), so this tool never
/// reaches into session assembly itself.
pub type Spawn = Arc<
    dyn Fn(
            Child,
            &tokio::runtime::Runtime,
            mpsc::UnboundedReceiver<Submission>,
            &mut dyn FnMut(&Event),
        ) -> Result<(), String>
        + Send
        + Sync,
>;

/// The agent definitions a session's agent tool offers: those found on
/// disk, and any a surface adds later (the Claude Agent SDK's, from its
/// `initialize`, before the first request). Each use reads a snapshot.
#[derive(Clone, Default)]
pub struct Definitions(Arc<std::sync::Mutex<Arc<Vec<Agent>>>>);

impl Definitions {
    fn new(found: Vec<Agent>) -> Self {
        Self(Arc::new(std::sync::Mutex::new(Arc::new(found))))
    }

    /// The definitions as they are now.
    #[must_use]
    pub fn snapshot(&self) -> Arc<Vec<Agent>> {
        Arc::clone(
            &self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Adds `more`; one of a name already defined replaces it.
    pub fn add(&self, more: Vec<Agent>) {
        let mut held = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut all: Vec<Agent> = held
            .iter()
            .filter(|a| !more.iter().any(|m| m.name == a.name))
            .cloned()
            .collect();
        all.extend(more);
        *held = Arc::new(all);
    }
}

impl std::fmt::Debug for Definitions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.snapshot().iter().map(|a| a.name.clone()).collect();
        f.debug_tuple("Definitions").field(&names).finish()
    }
}

/// The agent tool of one session.
pub struct AgentTool {
    recipe: Arc<Recipe>,
    definitions: Definitions,
    slots: Arc<tokio::sync::Semaphore>,
}

impl AgentTool {
    /// Its definitions, to add to.
    #[must_use]
    pub fn definitions(&self) -> Definitions {
        self.definitions.clone()
    }

    /// The tool for a session made from `recipe`, with the definitions
    /// `find` reads; `None` at the depth where nesting ends.
    pub fn for_session(recipe: Recipe, find: impl FnOnce() -> Vec<Agent>) -> Option<Self> {
        let max_depth = recipe.config.max_depth.unwrap_or(DEFAULT_MAX_DEPTH);
        if recipe.depth >= max_depth {
            return None;
        }
        let parallel = recipe.config.parallel.unwrap_or(DEFAULT_PARALLEL).max(1);
        Some(Self {
            recipe: Arc::new(recipe),
            definitions: Definitions::new(find()),
            slots: Arc::new(tokio::sync::Semaphore::new(parallel as usize)),
        })
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    description: String,
    prompt: String,
    #[serde(default)]
    subagent_type: Option<String>,
    #[serde(default)]
    isolation: Option<String>,
}

/// What a child is: its command line and its place among subagents.
fn child_of(
    recipe: &Recipe,
    input: &Input,
    definition: Option<&Agent>,
    mode: PermissionMode,
) -> Result<(RunArgs, Lineage), String> {
    let mut args = recipe.args.clone();
    // Where the parent works (its worktree, when it has one).
    args.cwd = Some(recipe.cwd.clone());
    args.worktree = None;
    args.resume = None;
    args.continue_ = false;
    args.prompt = None;
    // One cassette per process: a child does not write the parent's.
    args.record = None;
    // The parent's mode at the call, never a wider one.
    args.permission_mode = Some(Given::Flag(mode));
    args.dangerously_skip_permissions = false;
    // Main turns on the code tier (a definition may say otherwise), never
    // the think tier a config's `core.mode = architect` would ask consent
    // for: the child's permissions come from the mode above.
    args.mode = Some(crate::config::ModeName::Editor);
    args.deep = false;
    let mut lineage = Lineage {
        parent: Some(recipe.parent),
        top: Some(recipe.top),
        depth: recipe.depth + 1,
        tools: None,
        prompt: None,
        agent_type: Some(
            definition.map_or_else(|| "general-purpose".to_owned(), |a| a.name.clone()),
        ),
        script: Some(input.description.clone()),
        tier: None,
        settings_from: Some(recipe.settings_from.clone()),
        hooks: recipe.hooks.clone(),
    };
    if let Some(agent) = definition {
        if let Some(written) = &agent.tools {
            lineage.tools = Some(tool_names(written).map_err(|name| {
                format!(
                    "agent `{}` ({}) names the tool `{name}`, which cox does not have",
                    agent.name,
                    agent.file.display()
                )
            })?);
        }
        if !agent.prompt.is_empty() {
            lineage.prompt = Some(agent.prompt.clone());
        }
        use cox_protocol::provider::Tier;
        let tier = match agent.model.as_deref() {
            None | Some("inherit") => None,
            Some("cheap" | "haiku") => Some(Tier::Cheap),
            Some("code" | "sonnet") => Some(Tier::Code),
            Some("think" | "opus") => Some(Tier::Think),
            Some(model) => {
                args.model = Some(Given::Flag(model.to_owned()));
                None
            }
        };
        // What a repository wrote may not choose a dearer model than the
        // one the person runs: only their own definitions can.
        let dearer = tier == Some(Tier::Think)
            || (tier.is_none() && agent.model.as_deref().is_some_and(|m| m != "inherit"));
        if agent.project && dearer {
            return Err(format!(
                "agent `{}` ({}) asks for the model `{}`, which only a definition of your own \
                 ($COX_HOME/agents, ~/.claude/agents) may choose",
                agent.name,
                agent.file.display(),
                agent.model.as_deref().unwrap_or_default()
            ));
        }
        lineage.tier = tier;
    }
    Ok((args, lineage))
}

/// The way to a child's session: dropped before its turn is over, it
/// interrupts the child first.
struct Submit {
    tx: mpsc::UnboundedSender<Submission>,
    /// The child's turn ended: nothing to interrupt.
    done: bool,
}

impl Submit {
    fn unbounded_send(&self, submission: Submission) -> Result<(), ()> {
        self.tx.unbounded_send(submission).map_err(drop)
    }

    /// The turn is over: dropping this ends the child's session quietly.
    fn finished(mut self) {
        self.done = true;
    }
}

impl Drop for Submit {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.tx.unbounded_send(Submission::Interrupt);
        }
    }
}

/// What a child's thread says.
enum Said {
    Event(Event),
    Failed(String),
}

/// Starts the child on a thread of its own; it runs until `submissions`
/// end.
fn start(
    spawn: Spawn,
    child: Child,
    submissions: mpsc::UnboundedReceiver<Submission>,
    said: mpsc::UnboundedSender<Said>,
) -> Result<(), String> {
    std::thread::Builder::new()
        .name("cox-subagent".into())
        .spawn(move || {
            let fail = |why: String| {
                let _ = said.unbounded_send(Said::Failed(why));
            };
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(err) => return fail(err.to_string()),
            };
            let _inside = runtime.enter();
            let mut each = |event: &Event| {
                let _ = said.unbounded_send(Said::Event(event.clone()));
            };
            if let Err(why) = spawn(child, &runtime, submissions, &mut each) {
                fail(why);
            }
        })
        .map(drop)
        .map_err(|e| format!("cannot start the subagent's thread: {e}"))
}

/// How a child's turn went.
#[derive(Default)]
struct Ran {
    session: Option<SessionId>,
    /// Where it worked.
    cwd: Option<String>,
    /// The text since its last tool call: its answer.
    answer: String,
    stop: Option<StopReason>,
    error: Option<String>,
}

/// An agent call's risk and subject (see [`AgentTool`]'s `classify`): the
/// tool's own, and `cox permissions check`'s.
#[must_use]
pub fn classify_input(input: &Value) -> Classified {
    let subject = input
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or(NAME)
        .to_owned();
    let isolated = input.get("isolation").and_then(Value::as_str) == Some("worktree");
    Classified {
        risk: if isolated {
            Risk::Destructive
        } else {
            Risk::ReadOnly
        },
        subject,
        segments: None,
        writes: Vec::new(),
    }
}

impl Tool for AgentTool {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> ToolSpec {
        let definitions = self.definitions.snapshot();
        let mut description = String::from(
            "Run a subagent: a fresh session that works on `prompt` alone (it sees none of this \
             conversation: say all it needs) and answers with its final text. For a \
             self-contained task or a broad search; agent calls in one message run at once.",
        );
        if !definitions.is_empty() {
            description.push_str(" subagent_type picks one of these agents:");
            for agent in definitions.iter() {
                description.push_str(&format!("\n- {}: {}", agent.name, agent.description));
            }
        }
        let mut properties = json!({
            "description": {"type": "string", "description": "A few words naming the task."},
            "prompt": {"type": "string", "description": "The whole task for the subagent."},
            "isolation": {"type": "string", "enum": ["worktree"],
                "description": "worktree: the subagent works on a branch and in a folder of its own, which outlive it (this asks first)."},
        });
        if !definitions.is_empty() {
            let names: Vec<&str> = definitions.iter().map(|a| a.name.as_str()).collect();
            properties["subagent_type"] = json!({"type": "string", "enum": names});
        }
        ToolSpec {
            name: NAME.into(),
            description,
            input_schema: json!({
                "type": "object",
                "properties": properties,
                "required": ["description", "prompt"],
                "additionalProperties": false,
            }),
        }
    }

    /// The call itself changes nothing: each of the child's calls is
    /// judged by the child's own engine. A child in a worktree of its own
    /// makes a branch and a folder that outlive it: that asks (and plan
    /// mode refuses it).
    fn classify(&self, input: &Value, _workspace: &Workspace) -> Classified {
        classify_input(input)
    }

    fn nests(&self) -> bool {
        true
    }

    fn run<'a>(&'a self, input: Value, mut cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let definitions = self.definitions.snapshot();
            let input: Input = match serde_json::from_value(input) {
                Ok(input) => input,
                Err(e) => return ToolResult::error(format!("agent: bad input: {e}")),
            };
            if input.prompt.trim().is_empty() {
                return ToolResult::error("agent: `prompt` is empty: say what the subagent does");
            }
            if self.recipe.args.record.is_some() {
                return ToolResult::error(
                    "agent: this session records a cassette (--record), which holds this \
                     session's model exchanges only, not a subagent's: do the task here, or \
                     run without --record",
                );
            }
            let isolated = match input.isolation.as_deref() {
                None => None,
                Some("worktree") => Some(task_name(cx.call_id.as_str())),
                Some(other) => {
                    return ToolResult::error(format!(
                        "agent: isolation `{other}` is not one cox knows; the one there is: worktree"
                    ));
                }
            };
            let definition = match &input.subagent_type {
                None => None,
                Some(name) => match definitions.iter().find(|a| &a.name == name) {
                    Some(agent) => Some(agent),
                    None => {
                        let known: Vec<&str> =
                            definitions.iter().map(|a| a.name.as_str()).collect();
                        return ToolResult::error(format!(
                            "agent: no agent named `{name}` (known: {})",
                            if known.is_empty() {
                                "none".to_owned()
                            } else {
                                known.join(", ")
                            }
                        ));
                    }
                },
            };
            let (mut args, lineage) =
                match child_of(&self.recipe, &input, definition, cx.permission_mode) {
                    Ok(child) => child,
                    Err(why) => return ToolResult::error(format!("agent: {why}")),
                };
            // Its own worktree, named after the task, made from where the
            // parent works; never one a running subagent of this process
            // works in (a nested one's call can have the same id).
            let claimed = isolated.map(Claimed::new);
            let isolated = claimed.as_ref().map(|c| c.0.clone());
            args.worktree.clone_from(&isolated);
            let _slot = tokio::select! {
                slot = self.slots.acquire() => match slot {
                    Ok(slot) => slot,
                    Err(_) => return ToolResult::error("agent: no slot to run in"),
                },
                () = cx.cancel.cancelled() => return ToolResult::error("agent: interrupted before it started"),
            };
            let (submit, submissions) = mpsc::unbounded();
            // A call dropped before the child's turn ended (the parent was
            // interrupted) interrupts the child.
            let submit = Submit {
                tx: submit,
                done: false,
            };
            let (said_tx, mut said) = mpsc::unbounded();
            let _ = submit.unbounded_send(Submission::UserTurn {
                text: input.prompt.clone(),
                images: Vec::new(),
            });
            let child = Child {
                args,
                lineage,
                approval: self.recipe.approval,
                max_turns: self.recipe.max_turns,
                files: self.recipe.files.clone(),
            };
            if let Err(why) = start(Arc::clone(&self.recipe.spawn), child, submissions, said_tx) {
                return ToolResult::error(format!("agent: {why}"));
            }
            let mut answers = cx.nested.answers();
            let mut ran = Ran::default();
            let mut interrupted = false;
            loop {
                let answer = async {
                    match answers.as_mut() {
                        Some(answers) => answers.next().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    said = said.next() => match said {
                        Some(Said::Event(event)) => {
                            if follow(&mut ran, &event, &cx) {
                                break;
                            }
                        }
                        Some(Said::Failed(why)) => {
                            ran.error = Some(why);
                            break;
                        }
                        None => break,
                    },
                    Some((call_id, decision)) = answer => {
                        let _ = submit.unbounded_send(Submission::Approve { call_id, decision });
                    }
                    () = cx.cancel.cancelled(), if !interrupted => {
                        interrupted = true;
                        let _ = submit.unbounded_send(Submission::Interrupt);
                    }
                }
            }
            // The child's session ends once its submissions do; its thread
            // is waited for (a few seconds at most), so its record and
            // spans are whole before the parent goes on (or exits).
            submit.finished();
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), async {
                while said.next().await.is_some() {}
            })
            .await;
            let place = ran.cwd.clone();
            let mut result = result(ran);
            if let (Some(branch), Some(place)) = (&isolated, &place) {
                result
                    .visible
                    .push_str(&format!("\n[worktree {place}, branch {branch}]"));
            }
            result
        })
    }
}

/// The worktree names the running subagents of this process work in.
static IN_USE: std::sync::Mutex<std::collections::BTreeSet<String>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// A worktree name held for one running subagent: the task's own, or with
/// `-2`, `-3`, … after it where that one is held already. Let go when
/// dropped (the worktree itself stays, as a subagent's does).
struct Claimed(String);

impl Claimed {
    fn new(name: String) -> Self {
        let mut held = IN_USE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut claimed = name.clone();
        let mut n = 2;
        while held.contains(&claimed) {
            claimed = format!("{name}-{n}");
            n += 1;
        }
        held.insert(claimed.clone());
        Self(claimed)
    }
}

impl Drop for Claimed {
    fn drop(&mut self) {
        IN_USE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&self.0);
    }
}

/// The worktree name of the task `call_id`: lower-case letters, digits,
/// `-` and `_` of it, prefixed `task-`.
fn task_name(call_id: &str) -> String {
    let tail: String = call_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        .collect::<String>()
        .to_lowercase();
    format!("task-{tail}")
}

/// Takes one event of the child; `true` at its turn's end.
fn follow(ran: &mut Ran, event: &Event, cx: &ToolContext<'_>) -> bool {
    if let Event::SessionStarted {
        session_id, cwd, ..
    } = event
    {
        ran.session = Some(*session_id);
        ran.cwd = Some(cwd.clone());
    }
    if let Some(child) = ran.session {
        cx.nested.send(child, event.clone());
    }
    match event {
        Event::TextDelta { text } => ran.answer.push_str(text),
        Event::ToolCallRequested { .. } => ran.answer.clear(),
        Event::Notice {
            level: cox_protocol::types::NoticeLevel::Error,
            text,
        } => ran.error = Some(text.clone()),
        Event::TurnDone { stop } => {
            ran.stop = Some(*stop);
            return true;
        }
        _ => {}
    }
    false
}

/// The call's result: the child's answer, with its session named.
fn result(ran: Ran) -> ToolResult {
    let session = ran
        .session
        .map(|id| format!("\n[subagent session {id}]"))
        .unwrap_or_default();
    match ran.stop {
        Some(StopReason::EndTurn) => {
            let answer = ran.answer.trim();
            let answer = if answer.is_empty() {
                "(the subagent ended without an answer)"
            } else {
                answer
            };
            ToolResult::ok(format!("{answer}{session}"))
        }
        Some(stop) => ToolResult::error(format!(
            "the subagent stopped: {}{}{}{session}",
            stop.as_str(),
            ran.error.map(|e| format!(": {e}")).unwrap_or_default(),
            if ran.answer.trim().is_empty() {
                String::new()
            } else {
                format!("\nwhat it said: {}", ran.answer.trim())
            },
        )),
        None => ToolResult::error(format!(
            "the subagent did not run: {}{session}",
            ran.error
                .unwrap_or_else(|| "it ended before its turn".into())
        )),
    }
}

#[cfg(test)]
mod tests;
