//! The harness for cross-crate tests: a scenario from `tests/scenarios`,
//! replayed by the scripted provider through the real session, the real
//! tools, the real process sandbox and the real JSONL store, in temporary
//! folders (never the real home).
//!
//! [`run`] returns every event the session emitted; [`normalise`] turns
//! them into JSON lines with ids, times and temporary paths replaced, and
//! [`assert_golden`] compares those lines with `tests/golden/<name>.jsonl`.
//! Set `COX_BLESS=1` to write the golden file instead; a person reviews the
//! change before it is committed.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cox_core::{Session, SessionConfig};
use cox_protocol::SessionId;
use cox_protocol::provider::SystemParts;
use cox_protocol::tool::{Tool, Workspace};
use cox_protocol::types::{ApprovalPolicy, Event, PermissionMode, SandboxMode, Submission};
use cox_sandbox::ProcessSandbox;
use cox_scripted::{Scenario, ScriptedProvider};
use cox_store::{CoxHome, FileArchive, JsonlStore};
use futures::channel::mpsc;
use serde_json::Value;
use tempfile::TempDir;

pub mod named_tool;
pub mod slow_tool;

/// The folder of the bundled scenarios.
#[must_use]
pub fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// The hooks a settings object defines, run in `cwd`; a settings object
/// that does not load whole fails the test.
#[must_use]
pub fn command_hooks(settings: &Value, cwd: &Path, id: SessionId) -> cox_hooks::CommandHooks {
    let path = cwd.join(".hooks-settings.json");
    std::fs::write(&path, settings.to_string()).expect("the hooks' settings are written");
    let mut loader = cox_hooks::Loader::new();
    loader.settings_file(&path, &cox_hooks::Scope::User, &[]);
    let loaded = loader.finish();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    cox_hooks::CommandHooks::new(
        loaded.defs,
        cox_hooks::SessionInfo {
            session_id: id.to_string(),
            transcript_path: cwd.join("rollout.jsonl"),
            cwd: cwd.to_path_buf(),
            rollouts: None,
        },
    )
}

/// The folder of the golden event logs.
#[must_use]
pub fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("golden")
}

/// Decides, from the events so far, whether to send a submission now.
pub type Trigger = Box<dyn FnMut(&[Event]) -> Option<Submission>>;

/// How to run a scenario.
pub struct Options {
    pub prompt: String,
    /// Further user turns, sent right after the first (they wait in order).
    pub more_prompts: Vec<String>,
    pub mode: PermissionMode,
    pub approval: ApprovalPolicy,
    pub max_turns: Option<u32>,
    /// Files to create in the work folder first: (relative path, content).
    pub files: Vec<(String, String)>,
    /// Tools added to the built-in ones.
    pub extra_tools: Vec<Arc<dyn Tool>>,
    /// Called after every event; a returned submission is sent at once.
    pub trigger: Option<Trigger>,
    /// Sent after the prompts, before `Shutdown` (e.g. `Compact`).
    pub then: Vec<Submission>,
    /// `[context]` settings.
    pub context: cox_protocol::config::ContextConfig,
    /// The main model's window, for automatic compaction.
    pub context_window: Option<u64>,
    /// Hooks, as a Claude Code settings object (`{"hooks": {…}}`): run as
    /// real commands in the work folder.
    pub hooks: Option<Value>,
    /// Permission rules, compiled with the work folder as cwd and the
    /// temporary COX_HOME as `~`; `None` runs with no rules at all.
    pub permissions: Option<cox_protocol::config::PermissionsConfig>,
    /// The provider says its cheap tier has a model of its own, so the
    /// session asks it for a title: the scenario's first turn answers that
    /// call (the script serves every tier, in call order).
    pub cheap_tier: bool,
    /// What a title call still running at the end of the first turn is
    /// given.
    pub title_grace: Option<std::time::Duration>,
    /// Goes on from this rebuilt session (its id, conversation and found
    /// tools) instead of starting a new one; its rollout (the path) is
    /// copied into the run's home first.
    pub resume: Option<(cox_core::Resumed, PathBuf)>,
    /// Tools that join after the session started (see
    /// `Session::with_tool_updates`): what is sent here joins at the next
    /// turn.
    pub tool_updates: Option<mpsc::UnboundedReceiver<cox_core::LateTools>>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            prompt: "do the task".into(),
            more_prompts: Vec::new(),
            mode: PermissionMode::AcceptEdits,
            approval: ApprovalPolicy::Never,
            max_turns: None,
            files: Vec::new(),
            extra_tools: Vec::new(),
            trigger: None,
            then: Vec::new(),
            context: cox_protocol::config::ContextConfig::default(),
            context_window: None,
            hooks: None,
            permissions: None,
            cheap_tier: false,
            title_grace: None,
            resume: None,
            tool_updates: None,
        }
    }
}

/// What a run left behind.
pub struct Run {
    pub events: Vec<Event>,
    /// What the session held when it ended: the history it would send next.
    pub end: cox_core::SessionEnd,
    /// Every request the scripted model received, in order.
    pub requests: Vec<cox_protocol::provider::Request>,
    pub session_id: SessionId,
    pub workdir: TempDir,
    pub home: TempDir,
}

impl Run {
    /// The session's rollout file.
    #[must_use]
    pub fn rollout_path(&self) -> PathBuf {
        self.home
            .path()
            .join("sessions")
            .join(format!("{}.jsonl", self.session_id))
    }
}

/// The scripted provider, with or without a cheap tier of its own.
struct Tiered {
    scripted: ScriptedProvider,
    cheap: bool,
}

impl cox_protocol::Provider for Tiered {
    fn name(&self) -> &str {
        self.scripted.name()
    }

    fn model(&self) -> &str {
        self.scripted.model()
    }

    fn has_cheap_tier(&self) -> bool {
        self.cheap
    }

    fn stream(
        &self,
        request: cox_protocol::provider::Request,
        cancel: cox_protocol::CancelToken,
    ) -> impl futures::Stream<
        Item = Result<cox_protocol::provider::StreamEvent, cox_protocol::provider::ProviderError>,
    > + Send
    + 'static {
        self.scripted.stream(request, cancel)
    }
}

/// Replays `tests/scenarios/<name>.toml` through a real session.
///
/// # Panics
/// When the scenario does not load or the session cannot start: both are
/// test set-up errors.
#[must_use]
pub fn run(name: &str, mut options: Options) -> Run {
    let scenario = Scenario::load(&scenarios_dir().join(format!("{name}.toml")))
        .unwrap_or_else(|e| panic!("{e}"));
    let workdir = tempfile::tempdir().expect("work folder");
    let home_dir = tempfile::tempdir().expect("COX_HOME");
    let cwd = std::fs::canonicalize(workdir.path()).expect("canonical work folder");
    for (path, content) in &options.files {
        let path = cwd.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, content).expect("fixture file");
    }
    let home = CoxHome::resolve(Some(home_dir.path().to_path_buf())).expect("home");
    home.prepare().expect("prepare home");
    let id = options
        .resume
        .as_ref()
        .map_or_else(SessionId::generate, |(r, _)| r.session_id);
    if let Some((_, rollout)) = &options.resume {
        let to = home_dir.path().join("sessions").join(format!("{id}.jsonl"));
        std::fs::copy(rollout, to).expect("the rollout to resume is copied");
    }
    let config = SessionConfig {
        id,
        workspace: Workspace::single(cwd.clone()),
        permission_mode: options.mode,
        approval: options.approval,
        sandbox_mode: SandboxMode::WorkspaceWrite,
        max_turns: options.max_turns,
        started_at: "2026-01-01T00:00:00.000Z".into(),
        system: SystemParts {
            prompt: cox_core::prompt::SYSTEM_PROMPT.into(),
            instructions: String::new(),
            volatile: cox_core::prompt::volatile_block("2026-01-01", "<cwd>", None),
        },
        max_output_tokens: 32_000,
        tier: cox_protocol::provider::Tier::Code,
        effort: None,
        budget: cox_protocol::config::BudgetConfig::default(),
        context: options.context,
        context_window: options.context_window,
        parent: None,
        agent_type: None,
        bypass_refused: None,
    };
    let mut tools = cox_tools::builtin_tools();
    tools.append(&mut options.extra_tools);
    let request_log = Arc::new(Mutex::new(Vec::new()));
    let session = Session::new(
        config,
        Tiered {
            scripted: ScriptedProvider::new(scenario).with_request_log(Arc::clone(&request_log)),
            cheap: options.cheap_tier,
        },
        JsonlStore::new(home.clone()),
        FileArchive::new(&home),
        ProcessSandbox::new(),
        tools,
    );
    let session = match options.hooks.take() {
        Some(settings) => session.with_hooks(Arc::new(command_hooks(&settings, &cwd, id))),
        None => session,
    };
    let session = match options.tool_updates.take() {
        Some(updates) => session.with_tool_updates(updates),
        None => session,
    };
    let session = match options.title_grace {
        Some(wait) => session.with_title_grace(Arc::new(move || {
            Box::pin(tokio::time::sleep(wait)) as cox_protocol::provider::BoxFuture<'static, ()>
        })),
        None => session,
    };
    let session = match &options.permissions {
        Some(config) => session.with_engine(
            cox_core::permission::Engine::compile(config, Some(home_dir.path()), &cwd)
                .unwrap_or_else(|e| panic!("{e}")),
        ),
        None => session,
    };
    let session = match options.resume.take() {
        Some((resumed, _)) => session.resume(resumed),
        None => session,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (tx, rx) = mpsc::unbounded();
    tx.unbounded_send(Submission::UserTurn {
        text: options.prompt.clone(),
        images: Vec::new(),
    })
    .expect("send");
    for text in &options.more_prompts {
        tx.unbounded_send(Submission::UserTurn {
            text: text.clone(),
            images: Vec::new(),
        })
        .expect("send");
    }
    for sub in std::mem::take(&mut options.then) {
        tx.unbounded_send(sub).expect("send");
    }
    tx.unbounded_send(Submission::Shutdown).expect("send");
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let mut trigger = options.trigger.take();
    let end = runtime
        .block_on(session.run(rx, move |event| {
            let mut seen = seen.lock().expect("events");
            seen.push(event.clone());
            if let Some(trigger) = trigger.as_mut()
                && let Some(sub) = trigger(&seen)
            {
                let _ = tx.unbounded_send(sub);
            }
        }))
        .expect("session starts");
    let events = std::mem::take(&mut *events.lock().expect("events"));
    let requests = std::mem::take(&mut *request_log.lock().expect("requests"));
    Run {
        events,
        requests,
        end,
        session_id: id,
        workdir,
        home: home_dir,
    }
}

/// The events as JSON lines, with the session id, times and the temporary
/// folders replaced by `<session>`, `<time>`, `<cwd>` and `<home>`.
#[must_use]
pub fn normalise(run: &Run) -> Vec<String> {
    let cwd = std::fs::canonicalize(run.workdir.path())
        .expect("work folder")
        .display()
        .to_string();
    let home = std::fs::canonicalize(run.home.path())
        .expect("home")
        .display()
        .to_string();
    let session = run.session_id.to_string();
    // Archive ids are fresh ULIDs: each becomes <archive-N>, numbered in the
    // order they first appear, so a repeat (dedup) still points back.
    let archives = archive_ids(run);
    let archive_names: Vec<(String, String)> = archives
        .iter()
        .enumerate()
        .map(|(n, id)| (id.clone(), format!("<archive-{}>", n + 1)))
        .collect();
    run.events
        .iter()
        .map(|event| {
            let mut value = serde_json::to_value(event).expect("events serialise");
            if let Some(obj) = value.as_object_mut()
                && obj.contains_key("at")
            {
                obj.insert("at".into(), Value::String("<time>".into()));
            }
            let mut pairs: Vec<(&str, &str)> =
                vec![(&cwd, "<cwd>"), (&home, "<home>"), (&session, "<session>")];
            pairs.extend(archive_names.iter().map(|(a, b)| (a.as_str(), b.as_str())));
            replace_strings(&mut value, &pairs);
            serde_json::to_string(&value).expect("json")
        })
        .collect()
}

fn replace_strings(value: &mut Value, pairs: &[(&str, &str)]) {
    match value {
        Value::String(s) => {
            for (from, to) in pairs {
                if s.contains(from) {
                    *s = s.replace(from, to);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| replace_strings(v, pairs)),
        Value::Object(map) => map.values_mut().for_each(|v| replace_strings(v, pairs)),
        _ => {}
    }
}

/// Compares the normalised events with `tests/golden/<name>.jsonl`.
///
/// # Panics
/// When they differ (with a line diff), or the golden file is missing.
pub fn assert_golden(name: &str, run: &Run) {
    let lines = normalise(run);
    let path = golden_dir().join(format!("{name}.jsonl"));
    let actual = lines.join("\n") + "\n";
    if std::env::var_os("COX_BLESS").is_some() {
        std::fs::create_dir_all(golden_dir()).expect("golden folder");
        std::fs::write(&path, &actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with COX_BLESS=1 to create it, then review it",
            path.display()
        )
    });
    pretty_assertions::assert_eq!(expected, actual, "golden log {}", path.display());
}

/// Compares the exact bytes each request would be sent as (Anthropic's
/// wire format, one body per line) with `tests/golden/requests/<name>.jsonl`,
/// after the same normalisation as the event logs (`COX_BLESS=1` rewrites).
///
/// # Panics
/// When they differ, or the golden file is missing.
pub fn assert_golden_requests(name: &str, run: &Run) {
    let lines: Vec<String> = run
        .requests
        .iter()
        .map(|r| {
            String::from_utf8(cox_providers::anthropic::request::body_bytes(r))
                .expect("JSON is UTF-8")
        })
        .collect();
    let mut actual = lines.join("\n") + "\n";
    let cwd = std::fs::canonicalize(run.workdir.path())
        .expect("work folder")
        .display()
        .to_string();
    actual = actual.replace(&cwd, "<cwd>");
    for (n, id) in archive_ids(run).iter().enumerate() {
        actual = actual.replace(id.as_str(), &format!("<archive-{}>", n + 1));
    }
    let path = golden_dir().join("requests").join(format!("{name}.jsonl"));
    if std::env::var_os("COX_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("golden folder");
        std::fs::write(&path, &actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with COX_BLESS=1 to create it, then review it",
            path.display()
        )
    });
    pretty_assertions::assert_eq!(expected, actual, "golden requests {}", path.display());
}

/// The archive ids of a run's tool results, in the order they first appear.
fn archive_ids(run: &Run) -> Vec<String> {
    let mut archives: Vec<String> = Vec::new();
    for event in &run.events {
        if let Event::ToolCallDone { result, .. } = event
            && let Some(id) = &result.archive
            && !archives.contains(id)
        {
            archives.push(id.clone());
        }
    }
    archives
}

/// Asserts that nothing of a turn follows its `TurnDone`: after one come
/// only the next `TurnStarted`, or what happens between turns (a `/compact`:
/// its call's usage and retries, the `Compacted` event, notices).
///
/// # Panics
/// When a turn's event follows its `TurnDone`.
pub fn assert_nothing_after_turn_done(events: &[Event]) {
    let mut between = false;
    for event in events {
        match event {
            Event::TurnDone { .. } => between = true,
            Event::TurnStarted { .. } => between = false,
            Event::Compacted { .. }
            | Event::Notice { .. }
            | Event::Retry { .. }
            | Event::Usage {
                job: cox_protocol::types::Job::Compact,
                ..
            } => {}
            other => assert!(!between, "{other:?} was emitted after TurnDone"),
        }
    }
    assert!(
        events
            .iter()
            .filter(|e| matches!(e, Event::TurnDone { .. }))
            .count()
            == events
                .iter()
                .filter(|e| matches!(e, Event::TurnStarted { .. }))
                .count(),
        "every turn ends with exactly one TurnDone"
    );
}
