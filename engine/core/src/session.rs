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
//!
//! The session's title is written alongside the first turn and said at
//! its end (see `title.rs`).

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

mod calls;
mod economy;
mod title;
use crate::own_tools::ExpandTool;
use crate::tool_set::ToolSet;
use crate::turn::{Done, History, INTERRUPTED, Next, Prefix, Turn};
use calls::run_tools;
use economy::{
    CompactOutcome, compact, current_mode, over_budget, set_mode, shape_request, shape_result,
};
use title::Pending;
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
    /// Shared with each running call, which checks the paths it opens.
    engine: Arc<Engine>,
    config: SessionConfig,
    /// What a title call still running at the end may take.
    title_grace: Option<Grace>,
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
    /// The title was started (or the session had one before this run).
    titled: bool,
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
            engine: Arc::new(Engine::default()),
            config,
            title_grace: None,
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
        self.world.engine = Arc::new(engine);
        self
    }

    /// Gives a title call still running when the session ends until
    /// `grace` resolves (by default it is not waited for, and the title is
    /// the first prompt's first line).
    #[must_use]
    pub fn with_title_grace(mut self, grace: Grace) -> Self {
        self.world.title_grace = Some(grace);
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
        self.state.titled = true;
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
/// order. The session's first prompt starts its title, which is written
/// while the turn runs and said at its end.
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
    let mut title = (!state.titled).then(|| Pending::begin(world, &text));
    state.titled = true;
    let body = turn_body(world, state, &mut out, inbox, &text, number);
    let done = match title.as_mut() {
        Some(pending) => pending.alongside(body).await,
        None => body.await,
    };
    if let Some(pending) = title {
        // Before the turn is booked, so the session's cost includes it.
        let grace = (done.stop() != StopReason::Interrupted)
            .then_some(world.title_grace.as_ref())
            .flatten();
        for event in pending.finish(grace).await {
            out.emit(event);
        }
    }
    if let Err(err) = world.store.turn_finished(world.config.id, state.turns) {
        out.notice(
            NoticeLevel::Error,
            format!("the session record was not updated: {err}"),
        );
    }
    out.done(done);
}

/// The model rounds and tool calls of one turn, and a compaction it calls
/// for: everything up to its booking and its `TurnDone`.
async fn turn_body<P, S, A, X, I, F>(
    world: &World<P, S, A, X>,
    state: &mut State,
    out: &mut TurnOut<'_, '_, S, F>,
    inbox: &mut Inbox<I>,
    text: &str,
    number: u32,
) -> Turn<Done>
where
    P: Provider,
    S: Store,
    A: Archive,
    X: Sandbox + 'static,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
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
    let mut turn = Turn::begin(number, text, cfg.max_turns, &mut state.history);
    let mut compacted_for_length = false;
    // The output limit cut a call off in the last round.
    let mut cut_before = false;
    let mut limit = cfg.max_output_tokens;
    let done = loop {
        if let Some(over) = over_budget(world, out) {
            out.notice(NoticeLevel::Warn, over);
            break turn.stop(StopReason::Budget);
        }
        let (mut streaming, mut request) = turn.request(&state.history, &prefix);
        shape_request(world, state, out, &mut request);
        limit = request.max_output_tokens;
        let streamed = {
            let mut stream = pin!(world.provider.stream(request, cancel.clone()));
            loop {
                tokio::select! {
                    biased;
                    sub = inbox.next_live() => {
                        if let MidTurn::Interrupt = mid_turn(sub, inbox, out, None) {
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
                let keep = cfg.context.keep_turns.max(1);
                if economy::can_compact(state, keep) {
                    out.notice(
                        NoticeLevel::Warn,
                        format!("{why}; compacting the earlier turns and trying again"),
                    );
                    if compact(world, state, out.0, inbox, None, keep).await == CompactOutcome::Done
                    {
                        turn = streaming.restart();
                        continue;
                    }
                    out.notice(NoticeLevel::Error, format!("the model call failed: {why}"));
                } else {
                    let nothing = if state.turn_starts.len() <= 1 {
                        "this first prompt alone is over the model's context window, and there \
                         is nothing earlier to compact"
                            .to_owned()
                    } else {
                        format!(
                            "nothing to compact: the earlier turns are within the last {keep} \
                             kept whole ([context] keep_turns) or already summarised"
                        )
                    };
                    out.notice(
                        NoticeLevel::Error,
                        format!("the model call failed: {why}; {nothing}"),
                    );
                }
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
        if !running.cut().is_empty() {
            let names: Vec<String> = running
                .cut()
                .iter()
                .map(|c| format!("`{}`", c.name))
                .collect();
            let names = names.join(", ");
            if cut_before {
                // Twice in a row: the notice after the loop says it stopped.
                let why = "[not run: the answer was cut off at the output limit again]";
                let (events, done) =
                    running.abandon_all(&mut state.history, StopReason::MaxTokens, why);
                events.into_iter().for_each(|e| out.emit(e));
                break done;
            }
            out.notice(
                NoticeLevel::Warn,
                format!(
                    "the model's call to {names} was cut off at the output limit ({limit} tokens) \
                     and did not run; the model is asked to make smaller calls"
                ),
            );
            running.cut_events().into_iter().for_each(|e| out.emit(e));
        }
        cut_before = !running.cut().is_empty();
        let ran = run_tools(world, state, out, inbox, &mut running, &cancel);
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
    if done.stop() == StopReason::MaxTokens {
        out.notice(
            NoticeLevel::Warn,
            format!(
                "the model's answer was cut off at the output limit ({limit} tokens); the turn \
                 stops here"
            ),
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
    done
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
