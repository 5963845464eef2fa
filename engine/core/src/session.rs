//! The session: the one place that awaits, and the one place generic over
//! the outside world.
//!
//! [`Session::run`] reads submissions and hands each to the [`Driver`], one
//! value holding the world, the session's state, the emitter and the inbox,
//! so the `W: World` bound is written once and every step is a method. While
//! a turn runs the driver keeps listening, so an `Interrupt` cancels the
//! turn's token (the provider stream and every tool see it) and an
//! `Approve` answers the call that waits for it. Submissions that cannot act
//! mid-turn (another `UserTurn`, `Compact`) wait their turn.
//!
//! Every event goes to the store's rollout first, then into the session's
//! [`History`] (the one fold of the conversation, the same a resume runs),
//! then to the surface's sink. A turn's closing `TurnDone` is emitted only by
//! consuming its `Turn<Done>` ([`Emitter::done`]), so it is said once, and
//! only once the store says every event before it is on disk: a store may
//! write on a thread of its own (cox's does), and the driver never waits on
//! the disk otherwise, nor does anything here block the runtime.
//!
//! The driver's steps live in child modules by job: `turn_loop` (a turn's
//! rounds), `calls` (the calls of one message), `modes`, `request` (what a
//! request carries), `results` (what the model gets of a tool's output),
//! `compaction`, `budget` and `title`.

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;

use cox_protocol::Checkpoints;
use cox_protocol::config::{BudgetConfig, ContextConfig};
use cox_protocol::hook::Hooks;
use cox_protocol::mcp::Expander;
use cox_protocol::provider::{Effort, SystemParts, Tier};
use cox_protocol::store::{SessionMeta, SessionState, StoreError};
use cox_protocol::tool::{Tool, Workspace};
use cox_protocol::types::{
    ApprovalPolicy, Decision, Event, NoticeLevel, PermissionMode, ROLLOUT_FORMAT, SandboxMode,
    StopReason, Submission,
};
use cox_protocol::{CallId, Provider, SessionId, Store};
use futures::{Stream, StreamExt};

use crate::context::{Seen, Sent};
use crate::history::History;
use crate::permission::{Engine, Grant};
use crate::resume::Resumed;
use crate::tool_set::ToolSet;
use crate::turn::{Done, Turn};
use crate::world::{Adapters, World};

pub use late::{LateSource, LateTools};

mod budget;
mod calls;
mod checkpoints;
mod compaction;
mod elicit;
mod hooks;
mod late;
mod modes;
mod request;
mod results;
mod shell;
mod title;
mod turn_loop;

use compaction::CompactOutcome;
pub(crate) use shell::context_text as shell_context;
pub use title::{Grace, TITLE_CHARS, TITLE_PROMPT, first_line};

/// Everything a session is told when it starts. The driver gathers it (time,
/// paths, flags); the core reads no clock, file or variable itself.
#[derive(Clone, Debug)]
pub struct SessionConfig {
    pub id: SessionId,
    pub workspace: Workspace,
    pub permission_mode: PermissionMode,
    pub approval: ApprovalPolicy,
    pub sandbox_mode: SandboxMode,
    /// Model rounds allowed per user turn (`--max-turns`).
    pub max_turns: Option<u32>,
    /// RFC 3339 UTC, as the driver read the clock.
    pub started_at: String,
    pub system: SystemParts,
    pub max_output_tokens: u32,
    /// The tier main turns run on: `code`, or `think` in architect mode.
    pub tier: Tier,
    /// The effort main turns ask for; `None` leaves it to the model.
    pub effort: Option<Effort>,
    /// Spending caps; a turn stops before a model call that would cross
    /// one.
    pub budget: BudgetConfig,
    /// Dedup, microcompaction, compaction and tool deferral settings.
    pub context: ContextConfig,
    /// The main model's context window, when the catalog knows it: what
    /// `context.compact_at` is a share of.
    pub context_window: Option<u64>,
    /// The session that started this one (a subagent's parent): its turns
    /// end with `SubagentStop` hooks rather than `Stop`, start with
    /// `SubagentStart` rather than `SessionStart`, and run no
    /// `UserPromptSubmit` or `SessionEnd` hooks (no person prompts it).
    pub parent: Option<SessionId>,
    /// A subagent's type, as its hooks are told it (its definition's name,
    /// `general-purpose` without one); `None` reads as `general-purpose`.
    pub agent_type: Option<String>,
    /// Why `bypassPermissions` may not be entered here (a settings file's
    /// `disableBypassPermissionsMode`), or `None` when it may: a `SetMode`
    /// to it is refused with a notice, and a resumed session left in it
    /// goes on in `default`.
    pub bypass_refused: Option<String>,
}

/// The session could not start.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("cannot start the session record: {0}")]
    Store(#[from] StoreError),
}

/// The parts that do not change while a session runs.
struct Fixed<W> {
    world: W,
    /// The tools offered now: swapped whole when late tools join (between
    /// turns), so a turn keeps the set it started with.
    tools: std::sync::RwLock<Arc<ToolSet>>,
    /// The tools the session was made with, for the set to be built again
    /// once `late` tools join it.
    base_tools: Vec<Arc<dyn Tool>>,
    /// The late tools joined so far, for the set to be built again when
    /// more join.
    joined: std::sync::Mutex<Vec<Arc<dyn Tool>>>,
    /// Where tools that join after the session started come from (a
    /// server that connected late): looked at as each turn starts.
    updates: std::sync::Mutex<Option<futures::channel::mpsc::UnboundedReceiver<LateTools>>>,
    /// Tool name prefixes that are not there, and why ([`LateTools`]).
    unavailable: std::sync::Mutex<Vec<(String, String)>>,
    /// Where MCP servers' asks for input come from; taken while calls run.
    asks: std::sync::Mutex<
        Option<futures::channel::mpsc::UnboundedReceiver<cox_protocol::mcp::Elicitation>>,
    >,
    /// Tools that are still connecting (MCP servers): awaited once, as the
    /// run starts, before the first request.
    late: Option<LateSource>,
    /// What prompts may name: the command line's commands and skills,
    /// then the MCP servers' prompts and resources (once `late` is in),
    /// asked in that order.
    expanders: Vec<Arc<dyn Expander>>,
    /// The project's notes, recalled for each turn.
    memory: Option<Arc<dyn cox_protocol::memory::Memory>>,
    /// The hooks configured for the session; `None` runs none.
    hooks: Option<Arc<dyn Hooks>>,
    /// Where the file tools read and write text; `None`: the disk.
    files: Option<Arc<dyn cox_protocol::tool::TextFiles>>,
    /// Where pre-images are kept; `None` runs without checkpoints.
    checkpoints: Option<Arc<dyn Checkpoints>>,
    /// Shared with each running call, which checks the paths it opens.
    engine: Arc<Engine>,
    config: SessionConfig,
    /// What a title call still running at the end may take.
    title_grace: Option<Grace>,
}

/// What changes from turn to turn, besides the conversation (which the
/// emitter folds).
#[derive(Default)]
struct State {
    grants: Vec<Grant>,
    /// Where the OS sandbox can confine nothing, a person let commands run
    /// unconfined for the session (a call asking to leave a sandbox that
    /// works is asked about every time).
    unconfinable_granted: bool,
    /// The session existed before this run.
    resumed: bool,
    /// Recent read-only calls, for dedup.
    seen: Seen,
    /// The context tokens of the last model call.
    last_context: u64,
    /// The deferred tools `tool_search` has found.
    found: BTreeSet<String>,
    /// How many of them the last request was built with.
    found_sent: usize,
    /// The conversation as requests carry it (microcompacted).
    sent: Sent,
    /// The title was started (or the session had one before this run).
    titled: bool,
    /// A checkpoint failure was said (it is said once a session).
    checkpoint_warned: bool,
    /// The model this turn runs on (a command's `model`), if not the
    /// session's.
    turn_model: Option<String>,
    /// The rules this turn is decided by, when a command allowed more
    /// tools for it.
    turn_engine: Option<Arc<Engine>>,
    /// The notes recalled for this turn's prompt.
    turn_notes: Vec<cox_protocol::memory::Note>,
    /// Commands the person ran (`! cmd`) in this run, for their ids.
    user_shells: u32,
    /// An interrupt cut the start hooks short while a prompt already
    /// waited: that prompt's turn ends interrupted, unsent (a subagent's
    /// task is queued before it starts, and its parent's cancel must
    /// reach it).
    start_interrupted: bool,
    /// MCP servers' asks for input open now.
    elicitations: elicit::Open,
}

/// What a session left behind when it ended.
#[derive(Debug)]
pub struct SessionEnd {
    /// The whole conversation, as the model would be shown it next (turns
    /// started, resumed ones included; the compaction in force).
    pub history: History,
}

/// One session over the adapters of a [`World`], chosen by the binary at
/// compile time.
pub struct Session<W> {
    fixed: Fixed<W>,
    state: State,
    history: History,
}

impl<P, S, A, X> Session<Adapters<P, S, A, X>>
where
    Adapters<P, S, A, X>: World,
{
    /// A session that has not started yet, over one value per adapter.
    pub fn new(
        config: SessionConfig,
        provider: P,
        store: S,
        archive: A,
        sandbox: X,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Self {
        let world = Adapters {
            provider,
            store,
            archive,
            sandbox,
        };
        Session::over(config, world, tools)
    }
}

impl<W: World> Session<W> {
    /// A session that has not started yet, over `world`.
    pub fn over(config: SessionConfig, world: W, tools: Vec<Arc<dyn Tool>>) -> Self {
        let max_tools = usize::try_from(config.context.max_tools).unwrap_or(usize::MAX);
        let fixed = Fixed {
            world,
            tools: std::sync::RwLock::new(Arc::new(ToolSet::new(tools.clone(), max_tools))),
            base_tools: tools,
            joined: std::sync::Mutex::default(),
            updates: std::sync::Mutex::default(),
            unavailable: std::sync::Mutex::default(),
            asks: std::sync::Mutex::default(),
            late: None,
            expanders: Vec::new(),
            memory: None,
            hooks: None,
            files: None,
            checkpoints: None,
            engine: Arc::new(Engine::default()),
            config,
            title_grace: None,
        };
        Self {
            fixed,
            state: State::default(),
            history: History::new(),
        }
    }

    /// Uses these permission rules (the default has only the built-in denies
    /// of secret folders when compiled with a home; `Engine::default()` has
    /// none).
    #[must_use]
    pub fn with_engine(mut self, engine: impl Into<Arc<Engine>>) -> Self {
        self.fixed.engine = engine.into();
        self
    }

    /// Gives a title call still running when the session ends until
    /// `grace` resolves (by default it is not waited for, and the title is
    /// the first prompt's first line).
    #[must_use]
    pub fn with_title_grace(mut self, grace: Grace) -> Self {
        self.fixed.title_grace = Some(grace);
        self
    }

    /// Keeps a pre-image of every write in `checkpoints`, and lets
    /// [`Submission::Rewind`] undo turns.
    #[must_use]
    pub fn with_checkpoints(mut self, checkpoints: Arc<dyn Checkpoints>) -> Self {
        self.fixed.checkpoints = Some(checkpoints);
        self
    }

    /// Lets prompts name what `expander` offers (custom commands, skills),
    /// asked before the MCP servers' own.
    #[must_use]
    pub fn with_expander(mut self, expander: Arc<dyn Expander>) -> Self {
        self.fixed.expanders.push(expander);
        self
    }

    /// Recalls the project's notes relevant to each turn into its volatile
    /// block (see [`cox_protocol::memory`]).
    #[must_use]
    pub fn with_memory(mut self, memory: Arc<dyn cox_protocol::memory::Memory>) -> Self {
        self.fixed.memory = Some(memory);
        self
    }

    /// Has the file tools read and write text through `files` (an
    /// editor's buffers) rather than the disk.
    #[must_use]
    pub fn with_files(mut self, files: Arc<dyn cox_protocol::tool::TextFiles>) -> Self {
        self.fixed.files = Some(files);
        self
    }

    /// Runs `hooks` at the session's points (see [`cox_protocol::hook`]);
    /// given twice, both run, the earlier ones' replies first.
    #[must_use]
    pub fn with_hooks(mut self, hooks: Arc<dyn Hooks>) -> Self {
        self.fixed.hooks = Some(match self.fixed.hooks.take() {
            None => hooks,
            Some(first) => Arc::new(BothHooks(first, hooks)),
        });
        self
    }

    /// Picks up a session from its rollout: the conversation, the turn
    /// count and the mode go on from where they were, the tools found by
    /// `tool_search` are found again, and the store reopens its record.
    #[must_use]
    pub fn resume(mut self, resumed: Resumed) -> Self {
        self.history = resumed.history;
        find_again(&self.fixed.tools(), &self.history, &mut self.state);
        self.state.resumed = true;
        self.state.titled = true;
        self
    }

    /// The session's id.
    #[must_use]
    pub fn id(&self) -> SessionId {
        self.fixed.config.id
    }

    /// The tool names the model is offered, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        self.fixed.tools().names().map(str::to_owned).collect()
    }

    /// Runs until `Shutdown` or until `submissions` ends, sending every event
    /// to the rollout and then to `sink`. Fails only when the record cannot
    /// be started; every later failure is an event.
    pub async fn run<I, F>(self, submissions: I, sink: F) -> Result<SessionEnd, SessionError>
    where
        I: Stream<Item = Submission> + Unpin,
        F: FnMut(&Event),
    {
        let Self {
            mut fixed,
            mut state,
            history,
        } = self;
        let mut late_notices = Vec::new();
        let mut late_title = None;
        if let Some(source) = fixed.late.take() {
            let late = source.await;
            fixed.join(late.tools, None);
            if state.resumed {
                find_again(&fixed.tools(), &history, &mut state);
            }
            late_notices = late.notices;
            fixed.set_unavailable(late.unavailable);
            late_notices.extend(fixed.absorb_waiting());
            fixed.expanders.extend(late.expander);
            if let Some(prompt) = late.system_prompt {
                fixed.config.system.prompt = prompt;
            }
            if late.title.is_some() {
                state.titled = true;
                late_title = late.title;
            }
        }
        let cfg = &fixed.config;
        let provider = fixed.world.provider();
        let store = fixed.world.store();
        store.session_started(&SessionMeta {
            id: cfg.id,
            cwd: cfg.workspace.cwd.display().to_string(),
            provider: provider.name().to_owned(),
            model: provider.model().to_owned(),
            created_at: cfg.started_at.clone(),
            parent_id: cfg.parent,
            resumed: state.resumed,
        })?;
        // The record is started before the first event: a store that writes
        // later says here whether it could.
        store.flush().await?;
        let mut driver = Driver {
            fixed: &fixed,
            state,
            out: Emitter {
                store: fixed.world.store(),
                id: cfg.id,
                sink,
                broken: false,
                history,
            },
            inbox: Inbox {
                subs: submissions,
                closed: false,
                queue: VecDeque::new(),
            },
        };
        driver.start();
        let commands: Vec<_> = fixed.expanders.iter().flat_map(|e| e.commands()).collect();
        if !commands.is_empty() {
            driver.out.emit(Event::Commands { commands });
        }
        for text in late_notices {
            driver.out.notice(NoticeLevel::Warn, text);
        }
        if let Some(title) = late_title {
            driver.out.emit(Event::SessionTitled { title });
        }
        driver.session_start_hooks().await;
        let mut why = EndReason::InputClosed;
        while let Some(sub) = driver.inbox.next_idle().await {
            if !driver.between_turns(sub).await {
                why = EndReason::Shutdown;
                break;
            }
        }
        driver.session_end_hooks(why).await;
        Ok(driver.end().await)
    }
}

/// Marks the deferred tools a resumed conversation's `tool_search` calls
/// found as found again.
fn find_again(tools: &ToolSet, history: &History, state: &mut State) {
    let deferred = tools.deferred();
    for query in history.searches() {
        let hits = crate::own_tools::search(deferred, query).unwrap_or_default();
        state.found.extend(hits.into_iter().map(|s| s.name.clone()));
    }
    state.found_sent = state.found.len();
}

/// The session while it runs: what does not change, what does, where
/// events go, and where submissions come from.
struct Driver<'s, W: World, I, F> {
    fixed: &'s Fixed<W>,
    state: State,
    out: Emitter<'s, W::Store, F>,
    inbox: Inbox<I>,
}

impl<'s, W, I, F> Driver<'s, W, I, F>
where
    W: World,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    /// Says the session started.
    fn start(&mut self) {
        let fixed = self.fixed;
        let cfg = &fixed.config;
        let provider = fixed.world.provider();
        let (permission_mode, _) = self.current_mode();
        self.out.emit(Event::SessionStarted {
            session_id: cfg.id,
            cwd: cfg.workspace.cwd.display().to_string(),
            model: self
                .switched_model()
                .unwrap_or_else(|| provider.model().to_owned()),
            provider: provider.name().to_owned(),
            tools: fixed.tools().names().map(str::to_owned).collect(),
            permission_mode,
            at: cfg.started_at.clone(),
            resumed: self.state.resumed,
            format: ROLLOUT_FORMAT,
        });
    }

    /// Acts on a submission between turns; `false` once the session is to
    /// end.
    async fn between_turns(&mut self, sub: Submission) -> bool {
        match sub {
            Submission::UserTurn { text, images } => self.run_turn(text, images).await,
            Submission::Shell { command } => self.user_shell(command).await,
            Submission::Shutdown => return false,
            Submission::SetMode {
                permission_mode,
                tier,
                model,
            } => self.set_mode(permission_mode, tier, model),
            Submission::Interrupt => self.interrupt_tools(),
            Submission::Approve { call_id, .. } => self.out.notice(
                NoticeLevel::Warn,
                format!("no call {call_id} is waiting for approval; the answer was ignored"),
            ),
            Submission::Elicited { id, answer } => self.elicited(id, answer),
            Submission::Rewind {
                to_turn,
                what,
                force,
            } => self.rewind(to_turn, what, force).await,
            Submission::Compact { focus } => {
                let keep = self.fixed.config.context.keep_turns.max(1);
                if self.compact(focus.as_deref(), keep, true).await == CompactOutcome::Nothing {
                    self.out.notice(
                        NoticeLevel::Info,
                        format!(
                            "nothing to compact: the session has no turns before the last {keep}"
                        ),
                    );
                }
            }
        }
        true
    }

    /// Closes the record and hands back the conversation.
    /// The person interrupted: the tools stop what they keep running past
    /// their calls.
    fn interrupt_tools(&self) {
        for tool in self.fixed.tools().tools() {
            tool.interrupted();
        }
    }

    async fn end(mut self) -> SessionEnd {
        for tool in self.fixed.tools().tools() {
            tool.session_ended();
        }
        let ended = if self.out.broken {
            SessionState::Error
        } else {
            SessionState::Closed
        };
        let id = self.fixed.config.id;
        let store = self.fixed.world.store();
        let closed = match store.session_ended(id, ended) {
            Ok(()) => store.flush().await,
            Err(err) => Err(err),
        };
        if let Err(err) = closed {
            self.out.notice(
                NoticeLevel::Error,
                format!("the session record was not closed: {err}"),
            );
        }
        SessionEnd {
            history: self.out.history,
        }
    }

    /// Sorts a submission that arrived during a turn: what can wait is
    /// queued.
    fn mid_turn(&mut self, sub: Submission, waiting_for: Option<&CallId>) -> MidTurn {
        match sub {
            Submission::Interrupt => {
                self.interrupt_tools();
                MidTurn::Interrupt
            }
            Submission::Approve { call_id, decision } if Some(&call_id) == waiting_for => {
                MidTurn::Approve(decision)
            }
            Submission::Approve { call_id, .. } => {
                self.out.notice(
                    NoticeLevel::Warn,
                    format!("no call {call_id} is waiting for approval; the answer was ignored"),
                );
                MidTurn::Ignored
            }
            Submission::Elicited { id, answer } => {
                self.elicited(id, answer);
                MidTurn::Ignored
            }
            // A new permission mode alone takes effect at once: the calls
            // of this turn still to be decided are decided under it (an
            // approval's "switch to acceptEdits", or a tightening to plan).
            // A model or tier waits for the turn's end.
            Submission::SetMode {
                permission_mode: Some(mode),
                tier: None,
                model: None,
            } => {
                self.set_mode(Some(mode), None, None);
                MidTurn::Ignored
            }
            sub @ (Submission::UserTurn { .. }
            | Submission::Shell { .. }
            | Submission::Compact { .. }
            | Submission::Rewind { .. }
            | Submission::SetMode { .. }
            | Submission::Shutdown) => {
                self.inbox.queue.push_back(sub);
                MidTurn::Ignored
            }
        }
    }
}

/// Sends events to the rollout, then into the conversation, then to the
/// surface. The rollout receives text deltas, tool output and tool results
/// scrubbed of secrets ([`crate::redact::rollout_copy`]); the conversation
/// and the surface get them as they are, and a scrubbed tool result is
/// followed by a `Security` notice. Of a subagent's events the rollout gets
/// only the child's start.
struct Emitter<'s, S, F> {
    store: &'s S,
    id: SessionId,
    sink: F,
    /// The rollout failed once; it is said once, not per event.
    broken: bool,
    /// The conversation, folded from every event emitted.
    history: History,
}

impl<S: Store, F: FnMut(&Event)> Emitter<'_, S, F> {
    fn emit(&mut self, event: Event) {
        let scrubbed = self.record(&event);
        self.history.apply(&event);
        (self.sink)(&event);
        if scrubbed && matches!(event, Event::ToolCallDone { .. }) {
            self.notice(
                NoticeLevel::Security,
                crate::redact::TOOL_OUTPUT_NOTICE.to_owned(),
            );
        }
    }

    /// Hands the event's rollout copy to the store; whether it was
    /// scrubbed.
    fn record(&mut self, event: &Event) -> bool {
        // Of a subagent's events only its start is kept here: a pointer to
        // the child's own rollout, which holds the rest.
        if let Event::Subagent { event: inner, .. } = event
            && !matches!(**inner, Event::SessionStarted { .. })
        {
            return false;
        }
        let scrubbed = crate::redact::rollout_copy(event);
        if !self.broken
            && let Err(err) = self
                .store
                .rollout_append(self.id, scrubbed.as_ref().unwrap_or(event))
        {
            self.broke(&err);
        }
        scrubbed.is_some()
    }

    /// The rollout failed: said once, and nothing more is handed over.
    fn broke(&mut self, err: &StoreError) {
        self.broken = true;
        (self.sink)(&Event::Notice {
            level: NoticeLevel::Error,
            text: format!(
                "the rollout could not be written ({err}); events are no longer recorded"
            ),
        });
    }

    fn emit_all(&mut self, events: Vec<Event>) {
        for event in events {
            self.emit(event);
        }
    }

    fn notice(&mut self, level: NoticeLevel, text: String) {
        self.emit(Event::Notice { level, text });
    }

    /// Ends a turn: its `TurnDone`, said once because the turn is consumed,
    /// and to the surface only once the rollout holds it.
    async fn done(&mut self, turn: Turn<Done>) -> StopReason {
        let stop = turn.stop();
        let event = turn.into_event();
        self.record(&event);
        if !self.broken
            && let Err(err) = self.store.flush().await
        {
            self.broke(&err);
        }
        self.history.apply(&event);
        (self.sink)(&event);
        stop
    }
}

/// Submissions, with what arrived mid-turn and must wait.
struct Inbox<I> {
    subs: I,
    closed: bool,
    queue: VecDeque<Submission>,
}

impl<I: Stream<Item = Submission> + Unpin> Inbox<I> {
    /// The next submission between turns; `None` once there will be no more.
    async fn next_idle(&mut self) -> Option<Submission> {
        match self.queue.pop_front() {
            Some(sub) => Some(sub),
            None => self.next_or_closed().await,
        }
    }

    /// The next submission during a turn, or `None` once there will be no
    /// more (for waits that must not outlast their answerer).
    async fn next_or_closed(&mut self) -> Option<Submission> {
        if self.closed {
            return None;
        }
        let next = self.subs.next().await;
        self.closed = next.is_none();
        next
    }

    /// The next submission during a turn. Once the stream has ended this
    /// never resolves, so the turn runs to its end undisturbed.
    async fn next_live(&mut self) -> Submission {
        if !self.closed {
            if let Some(sub) = self.subs.next().await {
                return sub;
            }
            self.closed = true;
        }
        std::future::pending().await
    }
}

/// Why a session's run ends, as `SessionEnd` hooks are told it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EndReason {
    /// A `Shutdown` came: the person (or script) ended it.
    Shutdown,
    /// The submissions ended without one.
    InputClosed,
}

/// What a submission that arrived mid-turn means for the turn.
enum MidTurn {
    Interrupt,
    Approve(Decision),
    Ignored,
}

/// Two sets of hooks as one: each event goes to both, the first's replies
/// before the second's.
struct BothHooks(Arc<dyn Hooks>, Arc<dyn Hooks>);

impl Hooks for BothHooks {
    fn wants(&self, event: cox_protocol::hook::HookEvent) -> bool {
        self.0.wants(event) || self.1.wants(event)
    }

    fn run<'a>(
        &'a self,
        call: &'a cox_protocol::hook::HookCall,
    ) -> cox_protocol::provider::BoxFuture<'a, Vec<cox_protocol::hook::HookReply>> {
        Box::pin(async move {
            let mut replies = Vec::new();
            for hooks in [&self.0, &self.1] {
                if hooks.wants(call.event) {
                    replies.extend(hooks.run(call).await);
                }
            }
            replies
        })
    }
}
