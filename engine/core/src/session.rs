//! The session driver: the one place that awaits, and the one place generic
//! over the outside world.
//!
//! [`Session::run`] reads submissions and drives each user turn through the
//! phases of [`crate::turn`]. While a turn runs it keeps listening, so an
//! `Interrupt` cancels the turn's token (the provider stream and every tool
//! see it) and an `Approve` answers the call that waits for it. Submissions
//! that cannot act mid-turn (another `UserTurn`, `Compact`) wait their turn.
//!
//! Every event goes to the store's rollout first, then to the surface's
//! sink. A turn's events go through a [`TurnOut`] that is consumed by the
//! closing `TurnDone`, so no event of a turn can follow it.

use std::collections::{HashMap, VecDeque};
use std::pin::pin;
use std::sync::Arc;

use cox_protocol::archive::ArchiveMeta;
use cox_protocol::config::{BudgetConfig, ContextConfig};
use cox_protocol::hook::{Hook, HookPoint, HookVerdict};
use cox_protocol::provider::{
    Effort, Message, ProviderError, Request, StreamEvent, SystemParts, Tier,
};
use cox_protocol::store::{SessionMeta, SessionState, StoreError};
use cox_protocol::tool::{OutputSink, Tool, ToolContext, Workspace};
use cox_protocol::types::{
    ApprovalPolicy, Decision, Event, Job, NoticeLevel, PermissionMode, ROLLOUT_FORMAT, Risk,
    SandboxMode, StopReason, Submission, ToolResult,
};
use cox_protocol::{Archive, CallId, CancelToken, Provider, Sandbox, SessionId, Store};
use futures::channel::mpsc;
use futures::stream::FuturesUnordered;
use futures::{Stream, StreamExt};

use crate::context::{self, Compaction, ResultMeta, Seen};
use crate::permission::{Engine, Grant, Outcome};
use crate::resume::Resumed;
use crate::session_tools::ExpandTool;
use crate::toolset::ToolSet;
use crate::turn::{Done, History, INTERRUPTED, Next, Prefix, Turn};

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
}

/// The session could not start.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("cannot start the session record: {0}")]
    Store(#[from] StoreError),
}

/// The parts that do not change while a session runs.
struct World<P, S, A, X> {
    provider: P,
    store: S,
    archive: Arc<A>,
    sandbox: X,
    tools: ToolSet,
    hooks: Vec<Arc<dyn Hook>>,
    engine: Engine,
    config: SessionConfig,
}

/// What changes from turn to turn.
#[derive(Default)]
struct State {
    history: History,
    turns: u32,
    grants: Vec<Grant>,
    /// The session existed before this run.
    resumed: bool,
    /// Where each turn's messages start in the history.
    turn_starts: Vec<(u32, usize)>,
    /// The summary standing in for the earliest turns, once compacted.
    compaction: Option<Compaction>,
    /// Each tool result's turn, archive and call, for microcompaction.
    results: HashMap<CallId, ResultMeta>,
    /// Recent read-only calls, for dedup.
    seen: Seen,
    /// The context tokens of the last model call.
    last_context: u64,
    /// Deferred tools found when the last request was built.
    tools_found: usize,
    /// The permission mode and main tier now (a `SetMode` changes them).
    mode: Option<(PermissionMode, Tier)>,
    /// The model main turns run on, when the person switched (`/model`).
    model: Option<String>,
}

/// What a session left behind when it ended.
#[derive(Debug)]
pub struct SessionEnd {
    /// What the model would be shown next: the whole conversation.
    pub history: History,
    /// Turns started, resumed ones included.
    pub turns: u32,
    /// The summary standing in for the earliest turns, if compacted.
    pub compaction: Option<Compaction>,
}

/// One session over a provider `P`, a store `S`, an archive `A` and a
/// sandbox `X`, all chosen by the binary at compile time.
pub struct Session<P, S, A, X> {
    world: World<P, S, A, X>,
    state: State,
}

impl<P, S, A, X> Session<P, S, A, X>
where
    P: Provider,
    S: Store,
    A: Archive + 'static,
    X: Sandbox + 'static,
{
    /// A session that has not started yet.
    pub fn new(
        config: SessionConfig,
        provider: P,
        store: S,
        archive: A,
        sandbox: X,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Self {
        let archive = Arc::new(archive);
        let mut tools = tools;
        tools.push(Arc::new(ExpandTool {
            archive: Arc::clone(&archive),
        }));
        let max_tools = usize::try_from(config.context.max_tools).unwrap_or(usize::MAX);
        let world = World {
            provider,
            store,
            archive,
            sandbox,
            tools: ToolSet::new(tools, max_tools),
            hooks: Vec::new(),
            engine: Engine::default(),
            config,
        };
        Self {
            world,
            state: State::default(),
        }
    }

    /// Uses these permission rules (the default has only the built-in denies
    /// of secret folders when compiled with a home; `Engine::default()` has
    /// none).
    #[must_use]
    pub fn with_engine(mut self, engine: Engine) -> Self {
        self.world.engine = engine;
        self
    }

    /// Adds hooks, called in the order given.
    #[must_use]
    pub fn with_hooks(mut self, hooks: Vec<Arc<dyn Hook>>) -> Self {
        self.world.hooks = hooks;
        self
    }

    /// Picks up a session from its rollout: the history and the turn count
    /// go on from where it was, and the store reopens its record.
    #[must_use]
    pub fn resume(mut self, resumed: Resumed) -> Self {
        self.state.history = resumed.history;
        self.state.turns = resumed.turns;
        self.state.turn_starts = resumed.turn_starts;
        self.state.compaction = resumed.compaction;
        self.state.results = resumed.results;
        if let Some((permission_mode, tier, model)) = resumed.mode {
            self.state.mode = Some((permission_mode, tier));
            self.state.model = model;
        }
        self.state.resumed = true;
        self
    }

    /// The session's id.
    #[must_use]
    pub fn id(&self) -> SessionId {
        self.world.config.id
    }

    /// The tool names the model is offered, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        self.world.tools.names().map(str::to_owned).collect()
    }

    /// Runs until `Shutdown` or until `submissions` ends, sending every event
    /// to the rollout and then to `sink`. Fails only when the record cannot
    /// be started; every later failure is an event.
    pub async fn run<I, F>(self, submissions: I, mut sink: F) -> Result<SessionEnd, SessionError>
    where
        I: Stream<Item = Submission> + Unpin,
        F: FnMut(&Event),
    {
        let Self { world, mut state } = self;
        let cfg = &world.config;
        world.store.session_started(&SessionMeta {
            id: cfg.id,
            cwd: cfg.workspace.cwd.display().to_string(),
            provider: world.provider.name().to_owned(),
            model: world.provider.model().to_owned(),
            created_at: cfg.started_at.clone(),
            parent_id: None,
            resumed: state.resumed,
        })?;
        let mut out = Emitter {
            store: &world.store,
            id: cfg.id,
            sink: &mut sink,
            broken: false,
        };
        out.emit(Event::SessionStarted {
            session_id: cfg.id,
            cwd: cfg.workspace.cwd.display().to_string(),
            model: state
                .model
                .clone()
                .unwrap_or_else(|| world.provider.model().to_owned()),
            provider: world.provider.name().to_owned(),
            tools: world.tools.names().map(str::to_owned).collect(),
            permission_mode: state.mode.map_or(cfg.permission_mode, |m| m.0),
            at: cfg.started_at.clone(),
            resumed: state.resumed,
            format: ROLLOUT_FORMAT,
        });
        let mut inbox = Inbox {
            subs: submissions,
            closed: false,
            queue: VecDeque::new(),
        };
        loop {
            let Some(sub) = inbox.next_idle().await else {
                break;
            };
            match sub {
                Submission::UserTurn { text } => {
                    run_turn(&world, &mut state, &mut out, &mut inbox, text).await;
                }
                Submission::Shutdown => break,
                Submission::SetMode {
                    permission_mode,
                    tier,
                    model,
                } => set_mode(&world, &mut state, &mut out, permission_mode, tier, model),
                Submission::Interrupt => {}
                Submission::Approve { call_id, .. } => out.notice(
                    NoticeLevel::Warn,
                    format!("no call {call_id} is waiting for approval; the answer was ignored"),
                ),
                Submission::Compact { focus } => {
                    let keep = world.config.context.keep_turns.max(1);
                    let done = compact(
                        &world,
                        &mut state,
                        &mut out,
                        &mut inbox,
                        focus.as_deref(),
                        keep,
                    )
                    .await;
                    if done == CompactOutcome::Nothing {
                        out.notice(
                            NoticeLevel::Info,
                            format!("nothing to compact: the session has no turns before the last {keep}"),
                        );
                    }
                }
            }
        }
        let ended = if out.broken {
            SessionState::Error
        } else {
            SessionState::Closed
        };
        if let Err(err) = world.store.session_ended(cfg.id, ended) {
            out.notice(
                NoticeLevel::Error,
                format!("the session record was not closed: {err}"),
            );
        }
        Ok(SessionEnd {
            history: state.history,
            turns: state.turns,
            compaction: state.compaction,
        })
    }
}

/// Sends events to the rollout, then to the surface. The rollout receives
/// text deltas, tool output and tool results scrubbed of secrets
/// ([`crate::redact::rollout_copy`]); the surface gets them as they are,
/// and a scrubbed tool result is followed by a `Security` notice.
struct Emitter<'a, S, F> {
    store: &'a S,
    id: SessionId,
    sink: &'a mut F,
    /// The rollout failed once; it is said once, not per event.
    broken: bool,
}

impl<S: Store, F: FnMut(&Event)> Emitter<'_, S, F> {
    fn emit(&mut self, event: Event) {
        let scrubbed = crate::redact::rollout_copy(&event);
        if !self.broken
            && let Err(err) = self
                .store
                .rollout_append(self.id, scrubbed.as_ref().unwrap_or(&event))
        {
            self.broken = true;
            (self.sink)(&Event::Notice {
                level: NoticeLevel::Error,
                text: format!(
                    "the rollout could not be written ({err}); events are no longer recorded"
                ),
            });
        }
        (self.sink)(&event);
        if scrubbed.is_some() && matches!(event, Event::ToolCallDone { .. }) {
            self.notice(
                NoticeLevel::Security,
                crate::redact::TOOL_OUTPUT_NOTICE.to_owned(),
            );
        }
    }

    fn notice(&mut self, level: NoticeLevel, text: String) {
        self.emit(Event::Notice { level, text });
    }
}

/// The events of one turn. [`TurnOut::done`] consumes it with the turn's
/// `TurnDone`, so nothing of the turn can be emitted after.
struct TurnOut<'o, 'a, S, F>(&'o mut Emitter<'a, S, F>);

impl<S: Store, F: FnMut(&Event)> TurnOut<'_, '_, S, F> {
    fn emit(&mut self, event: Event) {
        self.0.emit(event);
    }

    fn notice(&mut self, level: NoticeLevel, text: String) {
        self.0.notice(level, text);
    }

    fn done(self, turn: Turn<Done>) -> StopReason {
        let stop = turn.stop();
        self.0.emit(turn.into_event());
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

/// What a submission that arrived mid-turn means for the turn.
enum MidTurn {
    Interrupt,
    Approve(Decision),
    Ignored,
}

/// Sorts a submission that arrived during a turn: what can wait is queued.
fn mid_turn<I, S: Store, F: FnMut(&Event)>(
    sub: Submission,
    inbox: &mut Inbox<I>,
    out: &mut TurnOut<'_, '_, S, F>,
    waiting_for: Option<&CallId>,
) -> MidTurn {
    match sub {
        Submission::Interrupt => MidTurn::Interrupt,
        Submission::Approve { call_id, decision } if Some(&call_id) == waiting_for => {
            MidTurn::Approve(decision)
        }
        Submission::Approve { call_id, .. } => {
            out.notice(
                NoticeLevel::Warn,
                format!("no call {call_id} is waiting for approval; the answer was ignored"),
            );
            MidTurn::Ignored
        }
        sub @ (Submission::UserTurn { .. }
        | Submission::Compact { .. }
        | Submission::SetMode { .. }
        | Submission::Shutdown) => {
            inbox.queue.push_back(sub);
            MidTurn::Ignored
        }
    }
}

/// How the model stream of one round ended.
enum Streamed {
    Finished,
    Interrupted,
    Failed(ProviderError),
}

/// Runs one user turn to its `TurnDone`. Submissions that arrive meanwhile
/// and cannot act on the turn (including `Shutdown`) wait in the inbox, in
/// order.
async fn run_turn<P, S, A, X, I, F>(
    world: &World<P, S, A, X>,
    state: &mut State,
    emitter: &mut Emitter<'_, S, F>,
    inbox: &mut Inbox<I>,
    text: String,
) where
    P: Provider,
    S: Store,
    A: Archive,
    X: Sandbox + 'static,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    state.turns += 1;
    let number = state.turns;
    let mut out = TurnOut(emitter);
    // Hooks first, so the turn starts with the prompt the model will see
    // (a hook may rewrite it) and a resume rebuilds that same prompt.
    let original = text.clone();
    let text = match prompt_hooks(world, &mut out, text).await {
        Ok(text) => {
            out.emit(Event::TurnStarted {
                turn: number,
                text: text.clone(),
            });
            text
        }
        Err(()) => {
            out.emit(Event::TurnStarted {
                turn: number,
                text: original,
            });
            out.done(Turn::refused(number, StopReason::Denied));
            return;
        }
    };

    let cfg = &world.config;
    let prefix = Prefix {
        provider: world.provider.name(),
        model: world.provider.model(),
        tier: current_mode(world, state).1,
        effort: cfg.effort,
        system: &cfg.system,
        tools: &world.tools,
        workspace: &cfg.workspace,
        max_output_tokens: cfg.max_output_tokens,
    };
    let cancel = CancelToken::new();
    state.turn_starts.push((number, state.history.len()));
    let mut turn = Turn::begin(number, &text, cfg.max_turns, &mut state.history);
    let mut compacted_for_length = false;
    let done = loop {
        if let Some(over) = over_budget(world, &mut out) {
            out.notice(NoticeLevel::Warn, over);
            break turn.stop(StopReason::Budget);
        }
        let (mut streaming, mut request) = turn.request(&state.history, &prefix);
        shape_request(world, state, &mut out, &mut request);
        let streamed = {
            let mut stream = pin!(world.provider.stream(request, cancel.clone()));
            loop {
                tokio::select! {
                    biased;
                    sub = inbox.next_live() => {
                        if let MidTurn::Interrupt = mid_turn(sub, inbox, &mut out, None) {
                            cancel.cancel();
                            break Streamed::Interrupted;
                        }
                    }
                    item = stream.next() => match item {
                        Some(Ok(event)) => {
                            if let Some(event) = streaming.apply(event, &prefix) {
                                if let Event::Usage { usage, .. } = &event {
                                    state.last_context = usage.input_tokens
                                        + usage.cache_read_tokens
                                        + usage.cache_write_tokens;
                                }
                                out.emit(event);
                            }
                            if streaming.is_complete() {
                                break Streamed::Finished;
                            }
                        }
                        Some(Err(err)) => break Streamed::Failed(err),
                        None => break Streamed::Failed(ProviderError::Failed(
                            "the model's stream ended before the response was complete".into(),
                        )),
                    },
                }
            }
        };
        let mut running = match streamed {
            Streamed::Interrupted => {
                let (events, done) = streaming.interrupt(&mut state.history);
                events.into_iter().for_each(|e| out.emit(e));
                break done;
            }
            Streamed::Failed(ProviderError::ContextLength(why))
                if !compacted_for_length && streaming.is_empty() =>
            {
                // Over the window: summarise the earlier turns and ask once
                // more.
                compacted_for_length = true;
                out.notice(
                    NoticeLevel::Warn,
                    format!("{why}; compacting the earlier turns and trying again"),
                );
                let keep = cfg.context.keep_turns.max(1);
                if compact(world, state, out.0, inbox, None, keep).await == CompactOutcome::Done {
                    turn = streaming.restart();
                    continue;
                }
                out.notice(NoticeLevel::Error, format!("the model call failed: {why}"));
                let why = "[not run: the model call failed before the response was complete]";
                let (events, done) = streaming.abandon(&mut state.history, StopReason::Error, why);
                events.into_iter().for_each(|e| out.emit(e));
                break done;
            }
            Streamed::Failed(err) => {
                out.notice(NoticeLevel::Error, format!("the model call failed: {err}"));
                let why = "[not run: the model call failed before the response was complete]";
                let (events, done) = streaming.abandon(&mut state.history, StopReason::Error, why);
                events.into_iter().for_each(|e| out.emit(e));
                break done;
            }
            Streamed::Finished => match streaming.finish(&mut state.history) {
                Next::Done(done) => break done,
                Next::Tools(running) => running,
            },
        };
        let ran = run_tools(world, state, &mut out, inbox, &mut running, &cancel);
        let (results, stop) = ran.await;
        match running.record(results, stop, &mut state.history) {
            Ok(next) => turn = next,
            Err(done) => break done,
        }
    };
    if done.stop() == StopReason::MaxTurns {
        let rounds = done.ctx().rounds;
        out.notice(
            NoticeLevel::Warn,
            format!("stopped after {rounds} model rounds: the --max-turns limit was reached"),
        );
    }
    if let Some(window) = cfg.context_window.filter(|w| *w > 0)
        && state.last_context as f64 >= cfg.context.compact_at * window as f64
        && !matches!(done.stop(), StopReason::Interrupted | StopReason::Budget)
    {
        compact(
            world,
            state,
            out.0,
            inbox,
            None,
            cfg.context.keep_turns.max(1),
        )
        .await;
    }
    if let Err(err) = world.store.turn_finished(cfg.id, state.turns) {
        out.notice(
            NoticeLevel::Error,
            format!("the session record was not updated: {err}"),
        );
    }
    out.done(done);
}

/// The permission mode and main tier in force.
fn current_mode<P, S, A, X>(world: &World<P, S, A, X>, state: &State) -> (PermissionMode, Tier) {
    state
        .mode
        .unwrap_or((world.config.permission_mode, world.config.tier))
}

/// Applies a `SetMode` and says so.
fn set_mode<P, S: Store, A, X, F: FnMut(&Event)>(
    world: &World<P, S, A, X>,
    state: &mut State,
    out: &mut Emitter<'_, S, F>,
    permission_mode: Option<PermissionMode>,
    tier: Option<Tier>,
    model: Option<String>,
) {
    let (mode, main) = current_mode(world, state);
    let next = (permission_mode.unwrap_or(mode), tier.unwrap_or(main));
    state.mode = Some(next);
    if let Some(model) = model.filter(|m| !m.trim().is_empty()) {
        state.model = Some(model.trim().to_owned());
    }
    out.emit(Event::ModeChanged {
        permission_mode: next.0,
        tier: next.1,
        model: state.model.clone(),
    });
}

/// What the model is sent of the history: the summary in place of the
/// compacted turns, and pointers in place of old tool results. Says so once
/// when a found tool changed the tool block (and so the cached prefix).
fn shape_request<P, S: Store, A, X, F: FnMut(&Event)>(
    world: &World<P, S, A, X>,
    state: &mut State,
    out: &mut TurnOut<'_, '_, S, F>,
    request: &mut Request,
) {
    request.model_override.clone_from(&state.model);
    if let Some(compaction) = &state.compaction {
        request.messages = compaction.apply(&state.history);
    }
    let after = world.config.context.microcompact_after_turns;
    if after > 0 {
        context::microcompact(&mut request.messages, &state.results, state.turns, after);
    }
    let found = world.tools.found_count();
    if found != state.tools_found {
        state.tools_found = found;
        out.notice(
            NoticeLevel::Info,
            format!(
                "tool_search found {found} of the {} deferred tools: their schemas are sent from now on, \
                 so the tool block changed and the prompt cache starts again once",
                world.tools.deferred().len()
            ),
        );
    }
}

/// A tool's result as the model gets it. The output is archived first,
/// whole; a big one is shown as head and tail around a marker, and a
/// read-only call repeating an earlier one with the same output within the
/// dedup window is answered `unchanged since #<id>`. A result of a call
/// that never ran (refused, unknown) is kept as it is.
fn shape_result<P, S, A: Archive, X>(
    world: &World<P, S, A, X>,
    state: &mut State,
    call: &cox_protocol::types::ToolCall,
    mut result: ToolResult,
    notices: &mut Vec<String>,
) -> ToolResult {
    state.results.insert(
        call.id.clone(),
        ResultMeta {
            turn: state.turns,
            archive: None,
            what: format!("{} {}", call.name, call.subject),
        },
    );
    if result.denied || call.name == "expand" {
        return result;
    }
    let meta = ArchiveMeta {
        session: world.config.id,
        call: Some(call.id.clone()),
    };
    let id = match world.archive.put(&meta, result.visible.as_bytes()) {
        Ok(id) => id,
        Err(err) => {
            // Lossless beats small: the model gets the whole output.
            notices.push(format!("the output of {} was not archived: {err}", call.id));
            return result;
        }
    };
    if let Some(info) = state.results.get_mut(&call.id) {
        info.archive = Some(id.clone());
    }
    let window = world.config.context.dedup_window_turns;
    if call.risk == Risk::ReadOnly && result.ok && window > 0 {
        let input = call.input.to_string();
        let earlier = state.seen.check(
            &call.name,
            &input,
            &result.visible,
            state.turns,
            window,
            &id,
        );
        // Only point back at an output the model is still sent whole: not
        // one already shown as a pointer, nor one summarised away.
        let after = world.config.context.microcompact_after_turns;
        let first_kept = state.compaction.as_ref().and_then(|c| {
            state
                .turn_starts
                .iter()
                .find(|(_, index)| *index >= c.until)
                .map(|(turn, _)| *turn)
        });
        if let Some((earlier, turn)) = earlier
            && (after == 0 || state.turns.saturating_sub(turn) < after)
            && first_kept.is_none_or(|first| turn >= first)
        {
            if let Some(info) = state.results.get_mut(&call.id) {
                info.archive = Some(earlier.clone());
            }
            result.visible = context::unchanged(&earlier);
            result.archive = Some(earlier);
            return result;
        }
    }
    result.visible = context::view(&result.visible, &id);
    result.archive = Some(id);
    result
}

/// What a compaction came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CompactOutcome {
    Done,
    /// There were no turns before the ones to keep.
    Nothing,
    /// The summary could not be had (the reason was said).
    Failed,
}

/// Summarises every turn but the last `keep` (at least one) on the cheap
/// tier; from then on requests carry the summary instead of those turns'
/// messages. The history is kept whole (append-only): only what is sent
/// changes. A `[budget]` cap already reached stops it, like any call.
async fn compact<P, S, A, X, I, F>(
    world: &World<P, S, A, X>,
    state: &mut State,
    out: &mut Emitter<'_, S, F>,
    inbox: &mut Inbox<I>,
    focus: Option<&str>,
    keep: u32,
) -> CompactOutcome
where
    P: Provider,
    S: Store,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    let keep = usize::try_from(keep.max(1)).unwrap_or(usize::MAX);
    let starts = &state.turn_starts;
    if starts.len() <= keep {
        return CompactOutcome::Nothing;
    }
    let (first_kept, until) = starts[starts.len() - keep];
    let since = state.compaction.as_ref().map_or(0, |c| c.until);
    if until <= since {
        return CompactOutcome::Nothing;
    }
    if let Some(over) = budget_reached(world, |level, text| out.notice(level, text)) {
        out.notice(NoticeLevel::Warn, format!("not compacting: {over}"));
        return CompactOutcome::Failed;
    }
    let dropped: Vec<u32> = starts
        .iter()
        .filter(|(turn, index)| *turn < first_kept && *index >= since)
        .map(|(turn, _)| *turn)
        .collect();
    let mut earlier: Vec<Message> = Vec::new();
    if let Some(previous) = &state.compaction {
        earlier.push(Message::user_text(format!(
            "[Summary of what came before]\n{}",
            previous.summary
        )));
    }
    earlier.extend_from_slice(&state.history[since..until]);
    let request = Request {
        model: world.provider.model().to_owned(),
        tier: Tier::Cheap,
        effort: None,
        model_override: None,
        system: SystemParts {
            prompt: context::SUMMARY_PROMPT.to_owned(),
            instructions: String::new(),
            volatile: String::new(),
        },
        tools: Vec::new(),
        messages: vec![Message::user_text(context::transcript(&earlier, focus))],
        max_output_tokens: 2_000,
    };
    let cancel = CancelToken::new();
    let mut stream = pin!(world.provider.stream(request, cancel.clone()));
    let mut summary = String::new();
    let mut served = (
        world.provider.name().to_owned(),
        world.provider.model().to_owned(),
        None,
    );
    loop {
        // An interrupt stops the summary; anything else waits its turn.
        let item = tokio::select! {
            biased;
            sub = inbox.next_live() => {
                if sub == Submission::Interrupt {
                    cancel.cancel();
                    out.notice(
                        NoticeLevel::Info,
                        "compaction interrupted; the history was kept whole".into(),
                    );
                    return CompactOutcome::Failed;
                }
                inbox.queue.push_back(sub);
                continue;
            }
            item = stream.next() => item,
        };
        let Some(item) = item else { break };
        match item {
            Ok(StreamEvent::TextDelta(text)) => summary.push_str(&text),
            Ok(StreamEvent::Routed {
                provider,
                model,
                effort,
            }) => served = (provider, model, effort),
            Ok(StreamEvent::Usage(usage)) => out.emit(Event::Usage {
                provider: served.0.clone(),
                model: served.1.clone(),
                tier: Tier::Cheap,
                job: Job::Compact,
                effort: served.2,
                usage,
            }),
            Ok(StreamEvent::Retrying {
                attempt,
                of,
                delay_ms,
                reason,
                discarded,
            }) => {
                if discarded {
                    summary.clear();
                }
                out.emit(Event::Retry {
                    attempt,
                    of,
                    delay_ms,
                    reason,
                    discarded,
                });
            }
            Ok(StreamEvent::Done(_)) => break,
            Ok(_) => {}
            Err(err) => {
                out.notice(NoticeLevel::Warn, format!("compaction failed: {err}"));
                return CompactOutcome::Failed;
            }
        }
    }
    let summary = summary.trim().to_owned();
    if summary.is_empty() {
        out.notice(
            NoticeLevel::Warn,
            "compaction failed: the summary came back empty".into(),
        );
        return CompactOutcome::Failed;
    }
    let compaction = Compaction { until, summary };
    let after_bytes: usize = compaction
        .apply(&state.history)
        .iter()
        .map(|m| serde_json::to_string(m).map_or(0, |t| t.len()))
        .sum::<usize>()
        + world.config.system.prompt.len()
        + world.config.system.instructions.len();
    out.emit(Event::Compacted {
        summary: compaction.summary.clone(),
        dropped,
        before_tokens: state.last_context,
        after_tokens: (after_bytes / 4) as u64,
    });
    state.compaction = Some(compaction);
    CompactOutcome::Done
}

/// Why the next model call may not be made, when a `[budget]` cap would be
/// crossed by it: the spend so far plus the last call's cost (the best guess
/// at the next one's) reaches the cap.
fn over_budget<P, S: Store, A, X, F: FnMut(&Event)>(
    world: &World<P, S, A, X>,
    out: &mut TurnOut<'_, '_, S, F>,
) -> Option<String> {
    budget_reached(world, |level, text| out.notice(level, text))
}

/// The budget check itself; `say` reports a ledger that cannot be read.
fn budget_reached<P, S: Store, A, X>(
    world: &World<P, S, A, X>,
    mut say: impl FnMut(NoticeLevel, String),
) -> Option<String> {
    let caps = world.config.budget;
    if caps.session_usd.is_none() && caps.monthly_usd.is_none() {
        return None;
    }
    let spend = match world.store.spend(world.config.id) {
        Ok(spend) => spend,
        Err(err) => {
            say(
                NoticeLevel::Warn,
                format!("the spend so far cannot be read, so [budget] is not enforced: {err}"),
            );
            return None;
        }
    };
    let next = spend.last_call_usd;
    let check = |cap: Option<f64>, spent: f64, what: &str| {
        let cap = cap?;
        (spent + next >= cap).then(|| {
            format!(
                "stopping before the next model call: the {what} budget is ${cap:.2} and ${spent:.4} is spent \
                 (the last call cost ${next:.4}); raise [budget] {} to go on",
                if what == "session" { "session_usd" } else { "monthly_usd" }
            )
        })
    };
    check(caps.session_usd, spend.session_usd, "session")
        .or_else(|| check(caps.monthly_usd, spend.month_usd, "monthly"))
}

/// Runs the `UserPromptSubmit` hooks: the prompt, possibly rewritten, or
/// `Err` when a hook blocked it (already said in a notice).
async fn prompt_hooks<P, S: Store, A, X, F: FnMut(&Event)>(
    world: &World<P, S, A, X>,
    out: &mut TurnOut<'_, '_, S, F>,
    mut text: String,
) -> Result<String, ()> {
    for hook in &world.hooks {
        let payload = serde_json::json!({ "hook_event_name": "UserPromptSubmit", "prompt": text });
        match hook.run(HookPoint::UserPromptSubmit, &payload).await {
            HookVerdict::Continue => {}
            HookVerdict::Rewrite { text: new } => text = new,
            HookVerdict::Block { reason } => {
                let name = hook.name();
                out.notice(
                    NoticeLevel::Warn,
                    format!("hook {name} blocked the prompt: {reason}"),
                );
                return Err(());
            }
            HookVerdict::Failed { message } => {
                let name = hook.name();
                out.notice(
                    NoticeLevel::Warn,
                    format!("hook {name} failed and was skipped: {message}"),
                );
            }
        }
    }
    Ok(text)
}

/// Decides, then runs, the calls of one assistant message. Results come back
/// in call order; the second value ends the turn when set.
async fn run_tools<P, S, A, X, I, F>(
    world: &World<P, S, A, X>,
    state: &mut State,
    out: &mut TurnOut<'_, '_, S, F>,
    inbox: &mut Inbox<I>,
    running: &mut Turn<crate::turn::RunningTools>,
    cancel: &CancelToken,
) -> (Vec<ToolResult>, Option<StopReason>)
where
    P: Provider,
    S: Store,
    A: Archive,
    X: Sandbox + 'static,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    let count = running.calls().len();
    let mut results: Vec<Option<ToolResult>> = vec![None; count];
    let mut stop = None;

    // Decide every call first, in order; people answer approvals one by one.
    #[allow(clippy::needless_range_loop)] // `decide_call` reads `running` by index
    for index in 0..count {
        if stop.is_some() {
            results[index] = Some(ToolResult::denied(
                "not run: the user denied an earlier call of this message",
            ));
            continue;
        }
        match decide_call(world, state, out, inbox, running, index).await {
            Decided::Run => {}
            Decided::Result(result) => results[index] = Some(result),
            Decided::Stop(result) => {
                results[index] = Some(result);
                stop = Some(StopReason::Denied);
            }
            Decided::Interrupted => {
                cancel.cancel();
                stop = Some(StopReason::Interrupted);
                break;
            }
        }
    }

    // Run: a stretch of read-only calls at once, anything else alone, in order.
    let calls = running.calls();
    let mut emitted = 0;
    let mut index = 0;
    while index < count && stop != Some(StopReason::Interrupted) {
        if results[index].is_some() {
            index += 1;
            continue;
        }
        let mut end = index + 1;
        if calls[index].risk == Risk::ReadOnly {
            while end < count && results[end].is_none() && calls[end].risk == Risk::ReadOnly {
                end += 1;
            }
        }
        let (tx, mut rx) = mpsc::unbounded();
        let mut group: FuturesUnordered<_> = (index..end)
            .filter_map(|slot| {
                let call = &calls[slot];
                let tool = world.tools.get(&call.name)?;
                let cx = ToolContext {
                    call_id: &call.id,
                    workspace: &world.config.workspace,
                    cancel: cancel.child_token(),
                    sandbox: &world.sandbox,
                    output: OutputSink::new(call.id.clone(), tx.clone()),
                };
                let run = tool.run(call.input.clone(), cx);
                Some(async move { (slot, run.await) })
            })
            .collect();
        drop(tx);
        // Results land in their slots as they come; an interrupt keeps the
        // ones already finished (a write that happened is reported as done).
        let mut interrupted = false;
        while !group.is_empty() {
            tokio::select! {
                biased;
                sub = inbox.next_live() => {
                    if let MidTurn::Interrupt = mid_turn(sub, inbox, out, None) {
                        cancel.cancel();
                        interrupted = true;
                        break;
                    }
                }
                Some((call_id, chunk)) = rx.next() => out.emit(Event::ToolCallOutput { call_id, chunk }),
                Some((slot, result)) = group.next() => {
                    let mut notices = Vec::new();
                    let shaped = shape_result(world, state, &calls[slot], result, &mut notices);
                    for text in notices {
                        out.notice(NoticeLevel::Warn, text);
                    }
                    results[slot] = Some(shaped);
                }
            }
        }
        // Dropping the unfinished futures kills what they started.
        drop(group);
        while let Ok((call_id, chunk)) = rx.try_recv() {
            out.emit(Event::ToolCallOutput { call_id, chunk });
        }
        if interrupted {
            stop = Some(StopReason::Interrupted);
            break;
        }
        for call in &calls[emitted..end] {
            let result = results[emitted]
                .clone()
                .unwrap_or_else(|| ToolResult::error(INTERRUPTED));
            out.emit(Event::ToolCallDone {
                call_id: call.id.clone(),
                result,
            });
            emitted += 1;
        }
        index = end;
    }
    let results: Vec<ToolResult> = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| ToolResult::error(INTERRUPTED)))
        .collect();
    for (call, result) in calls.iter().zip(&results).skip(emitted) {
        out.emit(Event::ToolCallDone {
            call_id: call.id.clone(),
            result: result.clone(),
        });
    }
    (results, stop)
}

/// What deciding one call led to.
enum Decided {
    /// Allowed: it runs.
    Run,
    /// Not run; this is its result.
    Result(ToolResult),
    /// Not run, and the turn stops after this message.
    Stop(ToolResult),
    /// An `Interrupt` arrived while a person was being asked.
    Interrupted,
}

async fn decide_call<P, S, A, X, I, F>(
    world: &World<P, S, A, X>,
    state: &mut State,
    out: &mut TurnOut<'_, '_, S, F>,
    inbox: &mut Inbox<I>,
    running: &mut Turn<crate::turn::RunningTools>,
    index: usize,
) -> Decided
where
    S: Store,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    let cfg = &world.config;
    loop {
        let call = &running.calls()[index];
        if world.tools.get(&call.name).is_none() {
            let known: Vec<&str> = world.tools.names().collect();
            return Decided::Result(ToolResult::error(format!(
                "unknown tool `{}`; the tools are: {}",
                call.name,
                known.join(", ")
            )));
        }
        let outcome = world.engine.decide(
            call,
            current_mode(world, state).0,
            cfg.approval,
            cfg.sandbox_mode,
            &state.grants,
        );
        let reason = match outcome {
            Outcome::Allow { .. } => return pre_tool_hooks(world, out, call).await,
            Outcome::Deny { reason } => return Decided::Result(ToolResult::denied(reason)),
            Outcome::Ask { reason } => reason,
        };
        let call_id = call.id.clone();
        out.emit(Event::ApprovalRequired {
            call_id: call_id.clone(),
            reason,
        });
        let decision = loop {
            let Some(sub) = inbox.next_or_closed().await else {
                return Decided::Result(ToolResult::denied(
                    "not run: the session's input closed before anyone answered the approval request",
                ));
            };
            if sub == Submission::Shutdown {
                // Nobody will answer: end the turn, then the session.
                inbox.queue.push_back(sub);
                return Decided::Interrupted;
            }
            match mid_turn(sub, inbox, out, Some(&call_id)) {
                MidTurn::Interrupt => return Decided::Interrupted,
                MidTurn::Approve(decision) => break decision,
                MidTurn::Ignored => {}
            }
        };
        match decision {
            Decision::Allow => return pre_tool_hooks(world, out, call).await,
            Decision::AllowForSession => {
                state.grants.extend(Grant::for_call(call));
                return pre_tool_hooks(world, out, call).await;
            }
            Decision::Deny {
                reason: Some(reason),
            } => {
                return Decided::Result(ToolResult::denied(format!(
                    "the user denied this call: {reason}"
                )));
            }
            Decision::Deny { reason: None } => {
                return Decided::Stop(ToolResult::denied("the user denied this call"));
            }
            Decision::Edit { input } => {
                let edited =
                    world
                        .tools
                        .classify(call_id, call.name.clone(), input, &cfg.workspace);
                out.emit(Event::ToolCallRequested {
                    call: edited.clone(),
                });
                running.replace_call(index, edited, &mut state.history);
            }
        }
    }
}

/// Runs the `PreToolUse` hooks on an allowed call.
async fn pre_tool_hooks<P, S: Store, A, X, F: FnMut(&Event)>(
    world: &World<P, S, A, X>,
    out: &mut TurnOut<'_, '_, S, F>,
    call: &cox_protocol::types::ToolCall,
) -> Decided {
    if world.hooks.is_empty() {
        return Decided::Run;
    }
    let payload = serde_json::json!({
        "hook_event_name": "PreToolUse",
        "tool_name": call.name,
        "tool_input": call.input,
        "call_id": call.id,
    });
    for hook in &world.hooks {
        match hook.run(HookPoint::PreToolUse, &payload).await {
            HookVerdict::Continue | HookVerdict::Rewrite { .. } => {}
            HookVerdict::Block { reason } => {
                return Decided::Result(ToolResult::denied(format!(
                    "hook {} blocked this call: {reason}",
                    hook.name()
                )));
            }
            HookVerdict::Failed { message } => out.notice(
                NoticeLevel::Warn,
                format!("hook {} failed and was skipped: {message}", hook.name()),
            ),
        }
    }
    Decided::Run
}
