//! Hooks: programs a person configures to run at fixed points of a
//! session, with Claude Code's contract (a JSON object on stdin; the exit
//! code and a JSON object on stdout answer).
//!
//! The core says *when* and *what about* ([`HookCall`]); the [`Hooks`]
//! adapter finds the hooks configured for the event whose matcher takes
//! the call's [`HookCall::target`], runs them, and hands back one
//! [`HookReply`] per hook, parsed but not interpreted. What a reply means
//! for the session (a call denied, a prompt refused, a turn that goes on)
//! is the core's decision, so the rule that a hook may narrow but never
//! widen what the permission engine decided is kept in one place.
//!
//! Hooks are untrusted and optional: a hook that cannot start, crashes,
//! times out or prints garbage is a warning and an absence, never a failed
//! turn and never a silent deny.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::provider::BoxFuture;
use crate::types::PermissionMode;

/// The points of a session a hook can run at, spelt as Claude Code spells
/// them (in settings files, in `hook_event_name`, in events).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum HookEvent {
    /// Before a tool call runs, once the permission engine did not deny
    /// it: may deny it, make it ask, let an asking call through, or change
    /// its input (which the engine then decides again).
    PreToolUse,
    /// After a tool call succeeded: may add to what the model reads.
    PostToolUse,
    /// After a tool call failed: may add to what the model reads.
    PostToolUseFailure,
    /// Before a person would be asked about a call: may answer for them.
    PermissionRequest,
    /// Before a prompt reaches the model: may refuse it or add context.
    UserPromptSubmit,
    /// When the model ends its turn: may send it back to work.
    Stop,
    /// When a subagent starts (in place of `SessionStart`): may add
    /// context to its first prompt.
    SubagentStart,
    /// When a subagent's turn ends (a session that has a parent).
    SubagentStop,
    /// When a session starts or is resumed: may add context.
    SessionStart,
    /// When a session ends.
    SessionEnd,
    /// Before the conversation is compacted.
    PreCompact,
    /// When cox needs the person's attention (an approval waits).
    Notification,
}

impl HookEvent {
    /// Every event, in the order the docs list them.
    pub const ALL: [HookEvent; 12] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::PermissionRequest,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::SubagentStart,
        HookEvent::SubagentStop,
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
        HookEvent::PreCompact,
        HookEvent::Notification,
    ];

    /// The name settings files and `hook_event_name` use.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStart => "SubagentStart",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::Notification => "Notification",
        }
    }

    /// The event of that name (exactly as spelt), if there is one.
    #[must_use]
    pub fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// Whether the event is about one tool call (its matcher names tools).
    #[must_use]
    pub fn is_tool_event(self) -> bool {
        matches!(
            self,
            HookEvent::PreToolUse
                | HookEvent::PostToolUse
                | HookEvent::PostToolUseFailure
                | HookEvent::PermissionRequest
        )
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the core asks the hooks about.
#[derive(Clone, Debug, PartialEq)]
pub struct HookCall {
    pub event: HookEvent,
    /// What a hook's matcher is tested against: the tool's name (as cox
    /// names it) for a tool event, the start's source for `SessionStart`
    /// (`startup`, `resume`), the trigger for `PreCompact` (`manual`,
    /// `auto`), the kind of notice for `Notification`, the agent's type for
    /// `SubagentStart` and `SubagentStop`; `None` for the events that take
    /// no matcher.
    pub target: Option<String>,
    /// The event's own fields, as cox names them (`tool_name`,
    /// `tool_input`, `tool_response`, `prompt`, `source`, …). The adapter
    /// adds what every event carries (`session_id`, `transcript_path`,
    /// `cwd`, `hook_event_name`) and speaks Claude Code's tool names.
    pub fields: Map<String, Value>,
    /// The permission mode in force.
    pub permission_mode: PermissionMode,
    /// For a tool event, the files the call writes (confined, absolute):
    /// a call that writes several (`apply_patch`) is shown to the hooks
    /// once per file, with Claude Code's `file_path`, so a guard that reads
    /// `tool_input.file_path` sees every one.
    pub files: Vec<String>,
    /// The subagent the point is in; `None` in a session a person started.
    pub agent: Option<HookAgent>,
    /// For a tool event, what the call acts on as the permission engine
    /// judges it (for a file tool, the confined path: links and `..`
    /// resolved); `None` for other events.
    pub subject: Option<String>,
}

/// The subagent a hook point is in, which a hook is told as Claude Code
/// tells it (`agent_id`, `agent_type`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookAgent {
    /// The subagent's own session.
    pub id: String,
    /// Its definition's name; `general-purpose` without one.
    pub agent_type: String,
    /// Where it works (its worktree, when it has one): the folder its
    /// calls' relative paths are read against, which may not be the
    /// folder its hooks were configured in.
    pub cwd: String,
}

impl HookCall {
    /// A call for `event` with no target and no fields yet.
    #[must_use]
    pub fn new(event: HookEvent, permission_mode: PermissionMode) -> Self {
        Self {
            event,
            target: None,
            fields: Map::new(),
            permission_mode,
            files: Vec::new(),
            agent: None,
            subject: None,
        }
    }

    /// The same call with a target for matchers.
    #[must_use]
    pub fn target(mut self, target: impl Into<String>) -> Self {
        self.target = Some(target.into());
        self
    }

    /// The same call with one more field.
    #[must_use]
    pub fn field(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.fields.insert(name.to_owned(), value.into());
        self
    }
}

/// How one hook's run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookStatus {
    /// Exit code 0; its output (if any) is in [`HookReply::output`].
    Success,
    /// Exit code 2: a blocking answer, its standard error the reason.
    Blocked { reason: String },
    /// Another exit code: a warning, not an answer.
    Error { message: String },
    /// It gave no answer: it could not start, was killed by a signal or
    /// at its time limit, or printed JSON that does not parse.
    Failed { message: String },
}

/// What a hook's answer asked for, whichever field said it (`decision`,
/// `hookSpecificOutput.permissionDecision`, a `PermissionRequest`'s
/// `decision.behavior`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookDecision {
    /// Let it through (a call that would ask runs without asking, as far
    /// as the permission engine's deny rules and modes allow).
    Allow,
    /// Refuse it (a call, a prompt, the end of a turn).
    Deny,
    /// Ask a person, even where the engine would not.
    Ask,
}

/// A hook's JSON answer on stdout (Claude Code's fields), read after exit
/// code 0. A hook that printed plain text, or nothing, has the default:
/// go on, no decision; plain text is [`HookOutput::context`] for the
/// events that take it (`UserPromptSubmit`, `SessionStart`).
#[derive(Clone, Debug, PartialEq)]
pub struct HookOutput {
    /// `continue: false` ends the turn (after the current step).
    pub proceed: bool,
    /// Why it ended the turn (`stopReason`), for the person.
    pub stop_reason: Option<String>,
    /// `suppressOutput`: its stdout is not shown.
    pub suppress_output: bool,
    /// `systemMessage`: a line for the person.
    pub system_message: Option<String>,
    pub decision: Option<HookDecision>,
    /// Why (`reason`, `permissionDecisionReason`, a denial's `message`).
    pub reason: Option<String>,
    /// `updatedInput`: the tool call's input to use instead.
    pub updated_input: Option<Value>,
    /// `additionalContext`, or plain stdout where that counts: text the
    /// model reads with what comes next.
    pub context: Option<String>,
    /// A `PermissionRequest` denial with `interrupt: true`: the turn stops.
    pub interrupt: bool,
    /// What it printed, for a surface to show unless suppressed.
    pub stdout: String,
}

impl Default for HookOutput {
    fn default() -> Self {
        Self {
            proceed: true,
            stop_reason: None,
            suppress_output: false,
            system_message: None,
            decision: None,
            reason: None,
            updated_input: None,
            context: None,
            interrupt: false,
            stdout: String::new(),
        }
    }
}

/// One hook's run, as the adapter saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct HookReply {
    /// The hook's name (what `cox ext list` and `cox ext trust` show).
    pub hook: String,
    /// A project's or a plugin's hook, someone else's code: it may refuse
    /// or ask, never allow (as a project's config may deny and ask, never
    /// allow).
    pub narrow_only: bool,
    pub duration_ms: u64,
    pub status: HookStatus,
    pub output: HookOutput,
}

/// How a hook's run is said in a [`crate::types::Event::HookRan`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookOutcome {
    /// It ran and let things go on (possibly with context or an allow).
    Ok,
    /// It refused: a call denied, a prompt refused, a turn sent back.
    Blocked,
    /// It exited with an error code that does not block: a warning.
    Warning,
    /// It gave no answer (could not start, crashed, timed out, garbage).
    Failed,
}

impl HookOutcome {
    /// The name JSON uses.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            HookOutcome::Ok => "ok",
            HookOutcome::Blocked => "blocked",
            HookOutcome::Warning => "warning",
            HookOutcome::Failed => "failed",
        }
    }
}

/// The hooks of a session: the one dynamic edge the core calls them
/// through.
pub trait Hooks: Send + Sync {
    /// Whether any hook is configured for `event`, so a session without
    /// hooks builds no payload and awaits nothing.
    fn wants(&self, event: HookEvent) -> bool;

    /// Runs every hook configured for `call.event` whose matcher takes
    /// `call.target`, and answers one reply per hook, in configuration
    /// order. Never fails: a hook that does not work is a
    /// [`HookStatus::Failed`] reply.
    fn run<'a>(&'a self, call: &'a HookCall) -> BoxFuture<'a, Vec<HookReply>>;
}
