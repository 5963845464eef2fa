//! The `Tool` trait: one capability the model can call.
//!
//! Tools are an open set (built-ins today, MCP tools discovered at run time
//! later), so the core holds them as trait objects and their futures are
//! boxed. Every tool classifies a call before it runs (risk and subject, for
//! the permission engine) and validates its own input: a bad input is a
//! failed [`ToolResult`] the model reads, never a panic.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender};
use serde_json::Value;

use crate::cancel::CancelToken;
use crate::ids::{CallId, SessionId};
use crate::provider::{BoxFuture, ToolSpec};
use crate::sandbox::Sandbox;
use crate::types::{Decision, Event, PermissionMode, Risk, ToolResult};

/// Where a session works: the folder it started in and the roots file tools
/// may reach. `cwd` is always inside one of the roots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workspace {
    pub cwd: PathBuf,
    /// Canonical paths; the first is the primary root.
    pub roots: Vec<PathBuf>,
    /// Roots that are read, never written (a worktree session's main
    /// checkout); each is also in `roots`.
    pub read_only: Vec<PathBuf>,
}

impl Workspace {
    /// A workspace whose only root is `cwd`.
    #[must_use]
    pub fn single(cwd: PathBuf) -> Self {
        Self {
            roots: vec![cwd.clone()],
            cwd,
            read_only: Vec::new(),
        }
    }

    /// The roots that may be written.
    pub fn writable_roots(&self) -> impl Iterator<Item = &PathBuf> {
        self.roots.iter().filter(|r| !self.read_only.contains(r))
    }
}

/// What a tool says about a call before it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Classified {
    pub risk: Risk,
    /// The confined path, the command line, the URL, or the tool's name.
    pub subject: String,
    /// For shell commands: the commands the line splits into.
    pub segments: Option<crate::types::Segments>,
    /// The files the call writes, confined, in the form of `subject`: the
    /// permission engine checks `Edit(...)` rules against each, and the
    /// session archives each one's pre-image before the call runs. Empty
    /// for a call that names no file it writes (a read, a shell command).
    pub writes: Vec<String>,
}

/// Streams pieces of a running call's output to the surfaces.
#[derive(Clone, Debug)]
pub struct OutputSink {
    call_id: CallId,
    tx: Option<UnboundedSender<(CallId, String)>>,
}

impl OutputSink {
    /// A sink that forwards to the session's event loop.
    #[must_use]
    pub fn new(call_id: CallId, tx: UnboundedSender<(CallId, String)>) -> Self {
        Self {
            call_id,
            tx: Some(tx),
        }
    }

    /// A sink that drops everything (for tests and one-off calls).
    #[must_use]
    pub fn discard(call_id: CallId) -> Self {
        Self { call_id, tx: None }
    }

    /// Sends one chunk; ignored once the session stopped listening.
    pub fn send(&self, chunk: String) {
        if let Some(tx) = &self.tx {
            let _ = tx.unbounded_send((self.call_id.clone(), chunk));
        }
    }
}

/// A call's link to the sessions it runs itself (a subagent's): the
/// child's events go up to the parent, which shows them tagged with the
/// call ([`Event::Subagent`]); the answers to the child's asks come down.
/// Only a tool that [`Tool::nests`] gets a live one.
#[derive(Debug, Default)]
pub struct Nested {
    up: Option<UnboundedSender<(CallId, SessionId, Event)>>,
    down: Option<UnboundedReceiver<(CallId, Decision)>>,
    call_id: Option<CallId>,
}

impl Nested {
    /// A link for call `call_id`: events go to `up`, answers come from
    /// `down`.
    #[must_use]
    pub fn new(
        call_id: CallId,
        up: UnboundedSender<(CallId, SessionId, Event)>,
        down: UnboundedReceiver<(CallId, Decision)>,
    ) -> Self {
        Self {
            up: Some(up),
            down: Some(down),
            call_id: Some(call_id),
        }
    }

    /// No link: the call runs no session.
    #[must_use]
    pub fn none() -> Self {
        Self::default()
    }

    /// Passes an event of the child session `child` up; dropped once the
    /// parent stopped listening, or when there is no link.
    pub fn send(&self, child: SessionId, event: Event) {
        if let (Some(up), Some(call_id)) = (&self.up, &self.call_id) {
            let _ = up.unbounded_send((call_id.clone(), child, event));
        }
    }

    /// The answers to the child's asks, taken once.
    pub fn answers(&mut self) -> Option<UnboundedReceiver<(CallId, Decision)>> {
        self.down.take()
    }
}

/// What a running tool asks before it opens or lists a path it found on its
/// own (the files and folders a search walks), beyond the call's subject the
/// permission engine already decided.
///
/// The session's permission engine implements it; a tool must not open,
/// read, list or descend into a path for which [`PathRules::may_open`] says
/// no.
pub trait PathRules: Send + Sync {
    /// False when a deny rule covers `path` for the tool named `tool` (by its
    /// call name, e.g. `grep`; `Read(...)` rules cover `glob` and `grep`),
    /// the built-in secret-folder rules (`~/.ssh`, ...) included; false too
    /// when an ask rule covers it that nobody has answered for this call,
    /// since a walk cannot stop to ask. `path` is absolute, as the walk
    /// found it. Never does I/O.
    fn may_open(&self, tool: &str, path: &Path) -> bool;
}

/// Everything a running call may use.
pub struct ToolContext<'a> {
    pub call_id: &'a CallId,
    pub workspace: &'a Workspace,
    /// Fires on `Interrupt`; a tool stops promptly and cleans up.
    pub cancel: CancelToken,
    /// Where shell commands run.
    pub sandbox: &'a dyn Sandbox,
    pub output: OutputSink,
    /// The path rules a tool checks for every path it opens on its own. An
    /// `Arc` so the check can travel into blocking work (a walk).
    pub rules: Arc<dyn PathRules>,
    /// A person approved running this call outside the sandbox (see
    /// [`crate::sandbox::ExecRequest::unconfined`]).
    pub unconfined: bool,
    /// Where the file tools read and write text instead of the disk (an
    /// editor's buffers); `None`: the disk.
    pub files: Option<&'a dyn TextFiles>,
    /// The session's permission mode when the call runs (a subagent may
    /// run in it, never in a wider one).
    pub permission_mode: PermissionMode,
    /// The link to the sessions the call runs (see [`Nested`]).
    pub nested: Nested,
    /// The paths the call was decided on (its subject and every file it
    /// writes, resolved when it was decided). A file tool refuses a path
    /// that resolves elsewhere when it runs: a link made or moved by an
    /// earlier call of the same turn must not carry it past the decision.
    /// Empty: nothing to compare (a call run outside a turn).
    pub decided: &'a [String],
}

/// Text files as a surface keeps them: an editor's buffers, read and
/// written over its protocol (ACP's `fs/read_text_file` and
/// `fs/write_text_file`). The file tools still decide everything else
/// (paths, rules, matching); only the bytes come and go this way.
pub trait TextFiles: Send + Sync {
    /// The text of the file at `path` (absolute), unsaved changes
    /// included; `Err` with a reason the tool may fall back from.
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, String>>;
    /// Replaces the text of the file at `path` (absolute).
    fn write<'a>(&'a self, path: &'a Path, text: &'a str) -> BoxFuture<'a, Result<(), String>>;
}

impl ToolContext<'_> {
    /// The session's working folder.
    #[must_use]
    pub fn cwd(&self) -> &Path {
        &self.workspace.cwd
    }
}

/// One tool the model can call.
pub trait Tool: Send + Sync {
    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// The description and JSON schema sent to the model.
    fn spec(&self) -> ToolSpec;
    /// Risk and subject of a call, decided from its input alone. Must not
    /// fail: an input that does not parse still gets the tool's base risk.
    fn classify(&self, input: &Value, workspace: &Workspace) -> Classified;
    /// Runs the call. Failures are results the model reads.
    fn run<'a>(&'a self, input: Value, cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult>;
    /// Whether the tool runs sessions of its own (a subagent): its calls
    /// get a live [`Nested`] link, and run alongside each other and the
    /// read-only calls of their message.
    fn nests(&self) -> bool {
        false
    }
    /// The person interrupted the session (not a plain end of a turn):
    /// what the tool keeps running past its calls (a background shell)
    /// stops.
    fn interrupted(&self) {}
    /// The session is over: everything the tool still runs stops.
    fn session_ended(&self) {}
}
