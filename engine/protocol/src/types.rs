//! Submissions in, events out: the two enums every surface speaks.
//!
//! Both serialise as internally tagged JSON (`{"type": "…", …}`) with
//! snake_case names. That JSON is printed by `cox run --output-format
//! stream-json` and written line by line to the rollout, so a change here is a
//! change of a public format.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{CallId, SessionId};
use crate::provider::{Effort, Tier};

pub use crate::config::{ApprovalPolicy, PermissionMode, SandboxMode};

/// What a surface asks the session to do.
///
/// A user turn as JSON:
///
/// ```
/// use cox_protocol::types::Submission;
///
/// let turn = Submission::UserTurn { text: "create hello.txt containing hi".into(), images: Vec::new() };
/// let json = serde_json::to_string(&turn).unwrap();
/// assert_eq!(json, r#"{"type":"user_turn","text":"create hello.txt containing hi"}"#);
/// let back: Submission = serde_json::from_str(&json).unwrap();
/// assert_eq!(back, turn);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Submission {
    /// The person (or script) says something; the session runs one turn.
    UserTurn {
        text: String,
        /// Images sent with the text (`--image`, an editor's),
        /// already within the providers' limits.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
    /// The answer to an [`Event::ApprovalRequired`].
    Approve { call_id: CallId, decision: Decision },
    /// Cancel the running turn: the model stream and every running tool.
    Interrupt,
    /// Summarise the history now, optionally steering what to keep.
    Compact {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        focus: Option<String>,
    },
    /// Change the permission mode or the tier main turns run on (Shift+Tab,
    /// `/mode`). Sent during a turn, it waits for the turn's end; the next
    /// turn is decided and routed under the new values.
    SetMode {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        permission_mode: Option<PermissionMode>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tier: Option<Tier>,
        /// Main turns run on this model from now on (`/model <name>`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// Undo: the files as they were before turn `to_turn`, the
    /// conversation cut before it, or both. Sent during a turn, it waits for
    /// the turn's end. Files changed outside cox since then are named in an
    /// [`Event::RewindConflict`] and left alone unless `force` is set.
    Rewind {
        to_turn: u32,
        what: crate::checkpoint::RewindWhat,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        force: bool,
    },
    /// The person runs a shell command themselves (`! cmd` in the TUI):
    /// through the permission engine's deny rules and the OS sandbox,
    /// between turns; its output joins the conversation with the next
    /// prompt. Sent during a turn, it waits for the turn's end.
    Shell { command: String },
    /// Finish: the session ends once what came before it is done.
    Shutdown,
    /// The person's answer to an [`Event::Elicitation`].
    Elicited { id: String, answer: ElicitAnswer },
}

/// How a person answered an MCP server's request for input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ElicitAnswer {
    /// They filled in the form: each field's value, by its name.
    Accept {
        content: serde_json::Map<String, Value>,
    },
    /// They said no.
    Decline,
    /// They dismissed it without choosing.
    Cancel,
}

impl ElicitAnswer {
    /// The answer's action, without what was typed.
    #[must_use]
    pub fn action(&self) -> &'static str {
        match self {
            Self::Accept { .. } => "accept",
            Self::Decline => "decline",
            Self::Cancel => "cancel",
        }
    }
}

/// How much a tool call can change the world. Ordered from least to most.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Reads only: may run concurrently with other read-only calls.
    #[default]
    ReadOnly,
    /// Changes files in the workspace.
    Write,
    /// Runs a program.
    Exec,
    /// Hard to undo (deleting, force-pushing, leaving the machine).
    Destructive,
}

impl Risk {
    /// The name used in JSON and in messages.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::ReadOnly => "read_only",
            Risk::Write => "write",
            Risk::Exec => "exec",
            Risk::Destructive => "destructive",
        }
    }
}

/// One tool call the model asked for, classified before anything runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: CallId,
    /// The tool's name as the model used it (`read`, `bash`, `mcp__srv__tool`).
    pub name: String,
    /// The input exactly as the model sent it.
    pub input: Value,
    pub risk: Risk,
    /// What the call acts on: a confined path, a command line, a URL, or an
    /// MCP tool name. Permission rules match against it.
    pub subject: String,
    /// For `bash`: the commands the line splits into. `None` for other tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments: Option<Segments>,
    /// The files the call writes (see `Classified::writes`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<String>,
}

/// How a shell line splits into commands, for the permission engine.
///
/// Each command is written as rules match it: wrappers such as `nohup` or
/// `timeout 5` and leading locale variables are stripped, and commands
/// nested in subshells, `$(…)`, loops or `sh -c '…'` strings are listed too.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segments {
    pub commands: Vec<String>,
    /// Why the line cannot be vouched for, when it cannot (a command
    /// substitution, `eval`, a redirect to a file, an assignment, a parse
    /// error…). Such a line is never allowed by a prefix rule or a grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opaque: Option<String>,
    /// Program names from a rough word scan of what the split could not
    /// follow (a line past a limit or that did not parse, code given to an
    /// interpreter inline): a deny or ask rule whose program is among them
    /// applies to the line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scan: Vec<String>,
    /// A command name is only known when the line runs (`$cmd x`): with a
    /// deny rule for the shell, such a line asks even where it would run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dynamic: bool,
    /// The paths the line's commands read or write, for path rules
    /// (`Read(…)`, `Edit(…)`): absolute once the bash tool has resolved
    /// them against the workspace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<ShellPath>,
    /// The call asks to run outside the OS sandbox (bash's `unsandboxed`
    /// input): it always asks a person, in every permission mode, unless
    /// the session runs with `danger-full-access`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsandboxed: bool,
}

/// A path a shell line names, for the permission engine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShellPath {
    /// The path: absolute and normalised (`~`, `..`, links inside the
    /// workspace resolved) when the tool resolved it, else as written.
    pub path: String,
    pub access: PathAccess,
    /// The command walks the folder (`grep -r`, `find`, `cp -r`): a rule
    /// for anything inside it may apply.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recursive: bool,
    /// What the command gets is only known when the line runs (an
    /// expansion, a glob too large to follow, a `cd` to somewhere unknown).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unknown: bool,
    /// The path lies outside every workspace root.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outside: bool,
}

/// Whether a shell command reads or writes a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathAccess {
    Read,
    Write,
}

/// A person's answer to an approval request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Decision {
    /// Run this call once.
    Allow,
    /// Run it, and let calls like it through for the rest of the session.
    AllowForSession,
    /// Do not run it. With a reason, the model reads it and the turn goes on;
    /// without one, the turn stops after the pending results are recorded.
    Deny {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Replace the call's input; the new call is decided again.
    Edit { input: Value },
}

/// Why a turn ended. `turn_done.stop` in JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished on its own.
    EndTurn,
    /// An `Interrupt` arrived.
    Interrupted,
    /// A spending cap would have been crossed.
    Budget,
    /// A person denied a call and gave no reason to go on with.
    Denied,
    /// The provider or the session failed; a `Notice` before says why.
    Error,
    /// The model kept calling tools past `--max-turns` rounds.
    MaxTurns,
    /// The model's answer reached its output limit and was cut off.
    MaxTokens,
}

impl StopReason {
    /// The snake_case name used in JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::Interrupted => "interrupted",
            StopReason::Budget => "budget",
            StopReason::Denied => "denied",
            StopReason::Error => "error",
            StopReason::MaxTurns => "max_turns",
            StopReason::MaxTokens => "max_tokens",
        }
    }
}

/// What a finished tool call returns to the model and to the surfaces.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// False when the tool failed, was refused or was denied.
    pub ok: bool,
    /// The text the model reads.
    pub visible: String,
    /// The size of the payload the tool handled (bytes written, read, or
    /// printed by a command), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// True when the permission engine or a person refused the call.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub denied: bool,
    /// Where the tool's whole output is kept (`cox expand <id>`), when it
    /// ran and produced one; `visible` may be a shortened view of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive: Option<String>,
    /// What the person should hear about the run besides the result (a
    /// connection the sandbox refused, a limit of its mechanism). The core
    /// takes them out and emits each as a `Notice`; the text the model
    /// reads says them too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
    /// Images the model is shown with the text (an MCP tool's screenshot);
    /// `visible` names each in a line too, for the surfaces.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
}

/// A page a web search found, or an answer cites.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    pub url: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
}

/// What a provider's own tool did inside a model call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum ServerStep {
    /// The model searched the web for `query`.
    Searched { id: String, query: String },
    /// What search `id` found, or why it failed.
    Found {
        id: String,
        results: Vec<Source>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}

/// One step of a provider's own tool (its server-side web search), as the
/// surfaces show it and as the provider wants it back: `raw` is the block
/// exactly as it came (encrypted parts included), returned only to the
/// provider named.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerBlock {
    pub provider: String,
    #[serde(flatten)]
    pub step: ServerStep,
    pub raw: Value,
}

/// An image, as the providers take it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The bytes, base64.
    pub data: String,
}

impl ToolResult {
    /// A successful result.
    #[must_use]
    pub fn ok(visible: impl Into<String>) -> Self {
        Self {
            ok: true,
            visible: visible.into(),
            bytes: None,
            denied: false,
            archive: None,
            notices: Vec::new(),
            images: Vec::new(),
        }
    }

    /// A failed result the model can read and act on.
    #[must_use]
    pub fn error(visible: impl Into<String>) -> Self {
        Self {
            ok: false,
            visible: visible.into(),
            bytes: None,
            denied: false,
            archive: None,
            notices: Vec::new(),
            images: Vec::new(),
        }
    }

    /// A refused call, with the reason for the model.
    #[must_use]
    pub fn denied(visible: impl Into<String>) -> Self {
        Self {
            ok: false,
            visible: visible.into(),
            bytes: None,
            denied: true,
            archive: None,
            notices: Vec::new(),
            images: Vec::new(),
        }
    }

    /// The same result with a payload size.
    #[must_use]
    pub fn with_bytes(mut self, bytes: u64) -> Self {
        self.bytes = Some(bytes);
        self
    }

    /// The same result with images for the model.
    #[must_use]
    pub fn with_images(mut self, images: Vec<Image>) -> Self {
        self.images = images;
        self
    }
}

/// How loud a [`Event::Notice`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeLevel {
    Info,
    Warn,
    Error,
    /// Something secret-shaped was seen or a trust boundary was crossed.
    Security,
}

/// Tokens one provider call used, as the provider reported them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// Searches the provider ran for the call (its server-side web
    /// search), each priced on its own.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub web_searches: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Adds another call's usage to this total.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.web_searches += other.web_searches;
    }
}

/// What a model call was for, as the ledger books it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Job {
    /// A main turn's call.
    #[default]
    Main,
    /// Summarising the history (compaction).
    Compact,
    /// Naming the session after its first prompt.
    Title,
}

impl Job {
    /// The name the ledger stores.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Job::Main => "main",
            Job::Compact => "compact",
            Job::Title => "title",
        }
    }

    #[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
    fn is_main(job: &Job) -> bool {
        *job == Job::Main
    }
}

/// The rollout format this build writes and reads.
pub const ROLLOUT_FORMAT: u32 = 1;

fn first_format() -> u32 {
    1
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_first_format(format: &u32) -> bool {
    *format == 1
}

/// One step of the model's plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanStep {
    pub content: String,
    pub status: StepStatus,
}

/// Where a step of the plan stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Pending,
    InProgress,
    Completed,
}

impl StepStatus {
    /// The name the protocol and the tool use.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Pending => "pending",
            StepStatus::InProgress => "in_progress",
            StepStatus::Completed => "completed",
        }
    }
}

/// Everything a session reports, in the order it happens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The first event of every session, and of every later run that
    /// resumes it (then `resumed` is true and the rollout goes on).
    SessionStarted {
        session_id: SessionId,
        cwd: String,
        model: String,
        provider: String,
        tools: Vec<String>,
        permission_mode: PermissionMode,
        /// Wall-clock start, RFC 3339 UTC, as the driver was told it.
        at: String,
        /// This run picks up an existing session.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        resumed: bool,
        /// The rollout format this event's writer speaks; written only when
        /// it is not [`ROLLOUT_FORMAT`] 1, so a reader can refuse a newer one.
        #[serde(default = "first_format", skip_serializing_if = "is_first_format")]
        format: u32,
    },
    /// A user turn begins; `turn` counts from 1 within the session.
    TurnStarted { turn: u32, text: String },
    /// A piece of the model's visible answer.
    TextDelta { text: String },
    /// A piece of the model's reasoning, where the provider exposes it.
    ThinkingDelta { text: String },
    /// The model asked for a tool call; it has been classified, not run.
    ToolCallRequested { call: ToolCall },
    /// The call waits for a person's [`Submission::Approve`].
    ApprovalRequired { call_id: CallId, reason: String },
    /// A piece of output from a running tool (a command's stdout/stderr).
    ToolCallOutput { call_id: CallId, chunk: String },
    /// The call finished (ran, failed, was refused, or was cancelled).
    ToolCallDone { call_id: CallId, result: ToolResult },
    /// One provider call's token usage, booked against the provider and
    /// model that served it, the tier it was asked for, the job it did
    /// (absent for a main turn's call) and the effort after clamping
    /// (absent when the model takes none).
    Usage {
        provider: String,
        model: String,
        tier: Tier,
        #[serde(default, skip_serializing_if = "Job::is_main")]
        job: Job,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        effort: Option<Effort>,
        #[serde(flatten)]
        usage: Usage,
    },
    /// Every turn but the last few was summarised: requests from now on
    /// carry `summary` instead of the messages of the `dropped` turns. The
    /// rollout keeps every original event; a resume skips the same turns.
    Compacted {
        summary: String,
        /// The turn numbers summarised away.
        dropped: Vec<u32>,
        /// The context the last call used, and what the next one will.
        before_tokens: u64,
        after_tokens: u64,
    },
    /// The permission mode or the main tier changed (a `SetMode`).
    ModeChanged {
        permission_mode: PermissionMode,
        tier: Tier,
        /// The model main turns now run on, when one was named.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// The session's title: a few words the cheap tier wrote about the
    /// first prompt, or that prompt's first line. Said once per session,
    /// between turns (normally right after the first `TurnDone`); the store
    /// keeps it as the session's title.
    SessionTitled { title: String },
    /// A model call failed and will be tried again after `delay_ms`. With
    /// `discarded`, the failed attempt had streamed part of an answer, and
    /// everything since this model call began is void: its text, thinking
    /// and requested tool calls are not part of the history (none of those
    /// calls ran), and the next attempt answers again.
    Retry {
        attempt: u32,
        of: u32,
        delay_ms: u64,
        reason: String,
        discarded: bool,
    },
    /// Something a person should know that is not part of the answer.
    Notice { level: NoticeLevel, text: String },
    /// Commands the session offers besides a surface's own (an MCP server's
    /// prompts): said once, after `SessionStarted`, when there are any. A
    /// surface lets the person type `/<name> args` and sends it as the
    /// prompt; the session expands it.
    Commands { commands: Vec<SlashCommand> },
    /// The turn is over. Nothing of this turn follows it.
    TurnDone { stop: StopReason },
    /// An MCP server asks the person for input while a call runs: a form
    /// (`schema`, a flat JSON Schema object of strings, numbers, booleans
    /// and enums) to fill in, answered with [`Submission::Elicited`]. The
    /// call waits; an interrupt cancels it.
    Elicitation {
        id: String,
        server: String,
        message: String,
        schema: Value,
    },
    /// How elicitation `id` was answered (`accept`, `decline`, `cancel`),
    /// never what was typed: that goes to the server only.
    Elicited { id: String, action: String },
    /// The pre-images of what call `call_id` changed are kept (said after
    /// its result, and only once they are on disk).
    Checkpoint {
        turn: u32,
        call_id: CallId,
        files: Vec<crate::checkpoint::CheckpointFile>,
    },
    /// A rewind happened, as turn `turn` (numbers never repeat): with
    /// `what` naming the code, `files` were restored to what they were
    /// before turn `to_turn`; naming the conversation, every turn from
    /// `to_turn` on is out of the history (the rollout keeps them, and a
    /// resume cuts the same way).
    Rewound {
        to_turn: u32,
        turn: u32,
        what: crate::checkpoint::RewindWhat,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<crate::checkpoint::CheckpointFile>,
        /// Files whose pre-images were too large to keep, left as they are.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        unkept: Vec<String>,
    },
    /// A rewind of the code was not done: these files changed since cox
    /// last wrote them. Send the rewind again with `force` to overwrite
    /// them.
    RewindConflict { to_turn: u32, files: Vec<String> },
    /// A hook ran (see [`crate::hook`]): which, at what point, how long it
    /// took and how it ended.
    HookRan {
        hook: String,
        event: crate::hook::HookEvent,
        duration_ms: u64,
        outcome: crate::hook::HookOutcome,
        /// Why it blocked, what went wrong, or the line it had for the
        /// person.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// Text it added to the conversation: the model reads it with the
        /// next message (context at a session's start or with a prompt,
        /// the reason a turn's end was refused).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<String>,
        /// What it printed (cut short), unless it asked to suppress that.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
    },
    /// The plan the model keeps (its `todo` tool): every step, in order,
    /// as it stands now. Each one replaces the one before; a resume and
    /// the surfaces rebuild the current plan from the last.
    Plan { steps: Vec<PlanStep> },
    /// A step of the provider's own tool (its web search) in the model's
    /// answer: shown by the surfaces, kept in the conversation.
    ServerTool { block: ServerBlock },
    /// The pages the text just streamed cites (the provider's web search).
    Citations { sources: Vec<Source> },
    /// A command the person ran (`Submission::Shell`) and how it went;
    /// the model reads both with the next prompt.
    UserShell { command: String, result: ToolResult },
    /// Images the prompt of the turn that just started carries (said right
    /// after its `TurnStarted`): given with it, or named in it (`@shot.png`).
    Attached { images: Vec<Image> },
    /// An event of a subagent: the session `session_id` that call
    /// `call_id` (an `agent` call) runs. Surfaces show it under the call;
    /// it is not part of this session's conversation, and this session's
    /// rollout keeps only the child's `SessionStarted` (a pointer to the
    /// child's own rollout, which holds the rest). The child's asks are
    /// answered with a plain [`Submission::Approve`] naming the child's
    /// call id.
    Subagent {
        call_id: CallId,
        session_id: SessionId,
        event: Box<Event>,
    },
}

impl Event {
    /// The `type` tag of this event, as JSON spells it.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Event::SessionStarted { .. } => "session_started",
            Event::TurnStarted { .. } => "turn_started",
            Event::TextDelta { .. } => "text_delta",
            Event::ThinkingDelta { .. } => "thinking_delta",
            Event::ToolCallRequested { .. } => "tool_call_requested",
            Event::ApprovalRequired { .. } => "approval_required",
            Event::ToolCallOutput { .. } => "tool_call_output",
            Event::ToolCallDone { .. } => "tool_call_done",
            Event::Usage { .. } => "usage",
            Event::Retry { .. } => "retry",
            Event::Compacted { .. } => "compacted",
            Event::ModeChanged { .. } => "mode_changed",
            Event::SessionTitled { .. } => "session_titled",
            Event::Notice { .. } => "notice",
            Event::TurnDone { .. } => "turn_done",
            Event::Elicitation { .. } => "elicitation",
            Event::Elicited { .. } => "elicited",
            Event::Checkpoint { .. } => "checkpoint",
            Event::Rewound { .. } => "rewound",
            Event::RewindConflict { .. } => "rewind_conflict",
            Event::Commands { .. } => "commands",
            Event::HookRan { .. } => "hook_ran",
            Event::Subagent { .. } => "subagent",
            Event::Plan { .. } => "plan",
            Event::Attached { .. } => "attached",
            Event::UserShell { .. } => "user_shell",
            Event::ServerTool { .. } => "server_tool",
            Event::Citations { .. } => "citations",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_serialise_in_the_documented_shapes() {
        let call = ToolCall {
            id: CallId::from("c1"),
            name: "write".into(),
            input: json!({"path": "hello.txt", "content": "hi\n"}),
            risk: Risk::Write,
            subject: "hello.txt".into(),
            segments: None,
            writes: Vec::new(),
        };
        let requested = serde_json::to_value(Event::ToolCallRequested { call }).unwrap();
        assert_eq!(requested["type"], "tool_call_requested");
        assert_eq!(requested["call"]["name"], "write");
        assert_eq!(requested["call"]["risk"], "write");
        assert!(requested["call"].get("segments").is_none());

        let done = Event::ToolCallDone {
            call_id: CallId::from("c1"),
            result: ToolResult::ok("wrote 3 bytes to hello.txt").with_bytes(3),
        };
        assert_eq!(
            serde_json::to_value(done).unwrap(),
            json!({"type":"tool_call_done","call_id":"c1",
                   "result":{"ok":true,"visible":"wrote 3 bytes to hello.txt","bytes":3}})
        );
        assert_eq!(
            serde_json::to_value(Event::TextDelta {
                text: "Created.".into()
            })
            .unwrap(),
            json!({"type":"text_delta","text":"Created."})
        );
        assert_eq!(
            serde_json::to_value(Event::TurnDone {
                stop: StopReason::EndTurn
            })
            .unwrap(),
            json!({"type":"turn_done","stop":"end_turn"})
        );
    }

    #[test]
    fn every_event_round_trips_through_json() {
        let events = vec![
            Event::TurnStarted {
                turn: 1,
                text: "hi".into(),
            },
            Event::ApprovalRequired {
                call_id: "c".into(),
                reason: "writes".into(),
            },
            Event::ToolCallOutput {
                call_id: "c".into(),
                chunk: "out".into(),
            },
            Event::Usage {
                provider: "scripted".into(),
                model: "m".into(),
                tier: Tier::Code,
                job: Default::default(),
                effort: Some(Effort::High),
                usage: Usage {
                    input_tokens: 3,
                    output_tokens: 4,
                    ..Usage::default()
                },
            },
            Event::Retry {
                attempt: 2,
                of: 4,
                delay_ms: 1000,
                reason: "overloaded".into(),
                discarded: true,
            },
            Event::Notice {
                level: NoticeLevel::Security,
                text: "x".into(),
            },
            Event::SessionTitled {
                title: "Fix the login form".into(),
            },
            Event::Usage {
                provider: "anthropic".into(),
                model: "claude-haiku-4-5".into(),
                tier: Tier::Cheap,
                job: Job::Title,
                effort: None,
                usage: Usage::default(),
            },
            Event::TurnDone {
                stop: StopReason::MaxTurns,
            },
        ];
        for event in events {
            let line = serde_json::to_string(&event).unwrap();
            let back: Event = serde_json::from_str(&line).unwrap();
            assert_eq!(back, event, "{line}");
            assert!(
                line.starts_with(&format!("{{\"type\":\"{}\"", event.kind())),
                "{line}"
            );
        }
    }

    #[test]
    fn decisions_serialise_with_a_kind_tag() {
        let deny = Decision::Deny {
            reason: Some("not now".into()),
        };
        assert_eq!(
            serde_json::to_value(&deny).unwrap(),
            json!({"kind":"deny","reason":"not now"})
        );
        let allow: Decision = serde_json::from_value(json!({"kind":"allow_for_session"})).unwrap();
        assert_eq!(allow, Decision::AllowForSession);
        let approve = Submission::Approve {
            call_id: "c9".into(),
            decision: Decision::Allow,
        };
        assert_eq!(
            serde_json::to_value(approve).unwrap(),
            json!({"type":"approve","call_id":"c9","decision":{"kind":"allow"}})
        );
    }
}

/// A command the session expands when a prompt starts with `/<name>`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlashCommand {
    /// Without the `/`: `mcp__<server>__<prompt>`.
    pub name: String,
    /// One line saying what it does.
    pub description: String,
    /// Its arguments as a person types them (`<path> [style]`); empty when
    /// it takes none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hint: String,
}
