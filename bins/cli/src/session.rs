//! The session every surface runs, built from the command line.
//!
//! `cox run`, the terminal UI, an editor's server and a subagent start
//! here, so they cannot disagree about what a command line means. Setting
//! a session up is four steps, each small:
//!
//! 1. [`locate`]: where it works (the folder, a resumed session's, a
//!    worktree) and the folders it reaches;
//! 2. [`crate::plan::Inputs::read`] then [`crate::plan::resolve`]: every
//!    settings source read once, and turned by one pure function into the
//!    plan (mode, rules, sandbox settings, models, budget, telemetry…);
//! 3. [`prepare_in`]'s wiring: the log and the exporter, the workspace and
//!    the sandbox policy, the provider, the MCP servers, plugins and hooks,
//!    the session to resume;
//! 4. [`build_session`]: the record, the tools and the hooks, assembled
//!    into one `Session` with the approval policy of the surface (`never`
//!    headless, `on-request` where a person can answer).
//!
//! Anything that fails here fails before the session starts, as one error
//! the surface prints on one line.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use cox_core::{Adapters, Session, SessionConfig};
use cox_protocol::provider::{SystemParts, Tier};
use cox_protocol::tool::Workspace;
use cox_protocol::types::{ApprovalPolicy, Event, PermissionMode, SandboxMode};
use cox_protocol::{Provider, SessionId};
use cox_sandbox::{OsSandbox, SandboxPolicy};
use cox_store::{Background, CoxHome, CoxStore};

pub use cox_tools::shells::Shells;

use crate::args::RunArgs;
use crate::given::Given;
use crate::plan::Plan;
use crate::providers::ProviderChoice;
use crate::{config, env, instructions, providers};

mod build;
mod locate;
mod wiring;

pub use crate::plan::Consent;
pub(crate) use build::build_session;
use locate::{Place, locate};
pub(crate) use wiring::mcp_outside_a_session;
use wiring::{connect_context, host_gate, init_log, mcp_servers, sandbox_policy, with_mcp};

/// What [`prepare`] found out: the plan, and everything the session needs
/// besides its record.
pub(crate) struct Prepared<P> {
    provider: P,
    home: CoxHome,
    cwd: PathBuf,
    /// The working folder and every `--add-dir`.
    workspace: Workspace,
    /// `--session-id`: the new session's id.
    new_id: Option<SessionId>,
    /// `--system-prompt` (or its file), in place of cox's own.
    system_prompt: Option<String>,
    /// `--tools`: the only tools of the session besides MCP servers'
    /// (cox's names).
    only_tools: Option<Vec<String>>,
    /// The session's settings, resolved (its rules in `engine`).
    plan: Plan,
    engine: cox_permission::Engine,
    tier: Tier,
    resumed: Option<cox_core::Resumed>,
    /// The resumed session's events so far.
    past: Vec<cox_protocol::types::Event>,
    pub(crate) catalog: cox_protocol::catalog::Catalog,
    /// What shell commands may reach.
    sandbox: SandboxPolicy,
    /// The MCP servers to connect, and what was wrong with the others.
    mcp: crate::mcp::Loaded,
    /// The plugins found (`$COX_HOME/plugins`, `--plugin-dir`).
    plugins: Vec<crate::ext::plugins::Plugin>,
    /// The hooks found, trusted or pending (none with `--no-hooks`).
    hooks: crate::ext::hooks::Found,
    /// The command line it was prepared from (a subagent starts from it).
    args: RunArgs,
    /// Where it stands among subagents.
    lineage: crate::ext::agent_tool::Lineage,
}

/// Says each of `warnings` on stderr (and in the log), as `what`.
fn warn_all(warnings: &[String], what: &str) {
    for warning in warnings {
        eprintln!("cox: warning: {}", crate::output::printable(warning));
        tracing::warn!(%warning, "{what}");
    }
}

/// The plugins and hooks a session with these flags has in `cwd`, their
/// warnings said.
fn extensions(
    args: &RunArgs,
    home: &CoxHome,
    cwd: &std::path::Path,
    claude: &config::claude::Choice,
    quiet: bool,
) -> (Vec<crate::ext::plugins::Plugin>, crate::ext::hooks::Found) {
    let plugins = crate::ext::plugins::discover(home.root(), &args.plugin_dir);
    if !quiet {
        warn_all(&plugins.warnings, "plugins");
    }
    if args.no_hooks {
        return (plugins.plugins, crate::ext::hooks::Found::default());
    }
    let home_dir = env::home_dir();
    let user_config = home.root().join("config.toml");
    let hooks = crate::ext::hooks::find(
        &crate::ext::hooks::Places {
            user_config: &user_config,
            home_dir: home_dir.as_deref(),
            cwd,
            plugins: &plugins.plugins,
            claude,
        },
        &home.db_path(),
    );
    warn_all(&hooks.warnings, "hooks");
    (plugins.plugins, hooks)
}

/// Everything before the session: see the module doc.
pub(crate) fn prepare<P, M>(
    args: &RunArgs,
    make_provider: M,
    consent: Consent,
) -> Result<Prepared<P>>
where
    P: Provider,
    M: FnOnce(&ProviderChoice) -> Result<P>,
{
    prepare_in(
        args,
        make_provider,
        consent,
        crate::ext::agent_tool::Lineage::default(),
    )
}

/// [`prepare`] for a session at `lineage` (a subagent's: the log and the
/// exporter are its parent's, already running).
pub(crate) fn prepare_in<P, M>(
    args: &RunArgs,
    make_provider: M,
    consent: Consent,
    lineage: crate::ext::agent_tool::Lineage,
) -> Result<Prepared<P>>
where
    P: Provider,
    M: FnOnce(&ProviderChoice) -> Result<P>,
{
    let home = CoxHome::resolve(None)?;
    home.prepare()?;
    let place = locate(args, &home, &lineage)?;
    let inputs = crate::plan::Inputs::read(
        args,
        consent,
        &home,
        (&place.settings_from, &place.cwd, &place.also),
    )?;
    let mut plan = crate::plan::resolve(&inputs)?;
    config::check_dirs(&plan.permissions.dirs)?;
    let workspace = place.workspace(&plan)?;
    // A subagent's log and exporter are its parent's, and so are the
    // warnings about its settings (said once, by the parent).
    let quiet = lineage.parent.is_some();
    if !quiet {
        let telemetry = &mut plan.telemetry;
        init_log(
            home.logs_dir(),
            std::mem::take(&mut telemetry.log_filter),
            telemetry.log_days,
        );
        if let Some(signals) = telemetry.export {
            crate::telemetry::export::start_with(
                signals,
                telemetry.endpoint.as_deref(),
                &|name| inputs.var(name),
            )?;
        }
        place.say();
        warn_all(&plan.warnings, "settings");
    }
    let mut tier = plan.preset.tier;
    if let Some(lineage_tier) = lineage.tier {
        tier = lineage_tier;
    }
    let mut engine = std::mem::take(&mut plan.permissions.engine);
    let sandbox = sandbox_policy(&plan.permissions, args, &workspace, &engine, &home);
    // What the sandbox enforces itself, a line cox cannot follow runs
    // under confined rather than asking.
    crate::sandbox::enforce(&mut engine, &sandbox);
    // Where protected names that are links lead is protected for the file
    // tools too.
    engine.protect_targets(
        sandbox
            .links
            .iter()
            .filter_map(|(link, _)| link.canonicalize().ok())
            .map(|target| target.display().to_string())
            .collect(),
    );
    let catalog = providers::full_catalog(&plan.models);
    let choice = provider_choice(args, &plan, tier, &engine, &lineage);
    let (plugins, hooks) = extensions(args, &home, &place.settings_from, &inputs.choice, quiet);
    let mcp = mcp_servers(args, &home, &place.settings_from, &plugins, &plan.mcp)?;
    let system_prompt = args.sdk.system_prompt()?;
    let only_tools = only_tools(args)?;
    let new_id = new_id(args, &home, place.found.is_some())?;
    let provider = make_provider(&choice)?;
    if choice.web_search && !catalog.get(provider.model()).is_some_and(|m| m.web_search) {
        let line = format!(
            "[tools] web_search is on, but {} has no server-side web search (its catalog row \
             says so; `[models.\"{}\"] web_search = true` if it does): off for it",
            provider.model(),
            provider.model()
        );
        if !quiet {
            eprintln!("cox: warning: {line}");
        }
        tracing::warn!(%line, "web search");
    }
    let Place { cwd, found, .. } = place;
    let past = found.as_ref().map(|f| f.events.clone()).unwrap_or_default();
    let resumed = match found {
        Some(f) => Some(resume(args, &home, f, new_id)?),
        None => None,
    };
    Ok(Prepared {
        provider,
        home,
        new_id: new_id.filter(|_| resumed.is_none()),
        workspace,
        system_prompt,
        only_tools,
        cwd,
        plan,
        engine,
        tier,
        past,
        resumed,
        catalog,
        sandbox,
        mcp,
        plugins,
        hooks,
        args: args.clone(),
        lineage,
    })
}

/// How this binary builds and runs a subagent's session: as any session
/// (prepared at its lineage, built with its parent's approval policy), its
/// spans a trace of their own naming its parent.
pub(crate) fn subagents() -> crate::ext::agent_tool::Spawn {
    std::sync::Arc::new(|child, runtime, submissions, each| {
        // Every file the child is set up from is read once.
        let _reads = config::once::scope();
        let parent = child.lineage.parent.unwrap_or_else(SessionId::generate);
        let prepared = prepare_in(
            &child.args,
            providers::any_provider,
            Consent::Flag,
            child.lineage,
        )
        .map_err(|err| crate::error_chain(&err))?;
        let (session, facts) =
            build_session(prepared, child.max_turns, child.approval, Editor::default())
                .map_err(|err| crate::error_chain(&err))?;
        let session = match child.files {
            Some(files) => session.with_files(files),
            None => session,
        };
        let mut watch = crate::telemetry::Watch::subagent(facts.catalog, parent.to_string());
        let outcome = runtime.block_on(session.run(submissions, |event| {
            watch.event(event);
            each(event);
        }));
        drop(watch);
        outcome.map(drop).map_err(|err| err.to_string())
    })
}

/// What the provider is chosen from: the flags, the plan's models, the
/// main model Claude Code's settings name, and a subagent's script.
fn provider_choice(
    args: &RunArgs,
    plan: &Plan,
    tier: Tier,
    engine: &cox_permission::Engine,
    lineage: &crate::ext::agent_tool::Lineage,
) -> ProviderChoice {
    let flag_model = args.model.as_ref().and_then(Given::text).map(str::to_owned);
    let settings = plan.model.as_ref().filter(|_| flag_model.is_none());
    if let Some(named) = settings {
        tracing::info!(model = %named.model, source = %named.source, "model from settings");
    }
    ProviderChoice {
        provider: args
            .provider
            .as_ref()
            .and_then(Given::text)
            .map(str::to_owned),
        model: flag_model.or_else(|| {
            settings
                .filter(|named| named.over_config)
                .map(|named| named.model.clone())
        }),
        settings_model: settings
            .filter(|named| !named.over_config)
            .map(|named| named.model.clone()),
        scenario: match &args.scenario {
            Some(Given::Flag(path)) => Some(path.clone()),
            Some(env) => env.env().map(PathBuf::from),
            None => None,
        },
        record: args.record.clone(),
        main_tier: tier,
        agent: lineage.script.clone(),
        // A subagent whose definition names its tools searches only if
        // they include web_search.
        web_search: web_search(&plan.models, engine, lineage.parent.is_some())
            && lineage
                .tools
                .as_ref()
                .is_none_or(|names| names.iter().any(|n| n == "web_search")),
        models: plan.models.clone(),
    }
}

/// `--tools`: the only tools of the session (cox's names), or `None` for
/// all of them.
fn only_tools(args: &RunArgs) -> Result<Option<Vec<String>>> {
    Ok(match args.sdk.tools.as_deref().map(str::trim) {
        None | Some("default") => None,
        Some("") => Some(Vec::new()),
        Some(list) => {
            let written: Vec<String> = list.split(',').map(|t| t.trim().to_owned()).collect();
            Some(
                crate::ext::agent_tool::tool_names(&written).map_err(|name| {
                    anyhow::anyhow!(
                        "--tools: cox has no tool `{name}` (its tools go by Claude Code's names or \
                     its own)"
                    )
                })?,
            )
        }
    })
}

/// `--session-id`: the new session's id (a UUID, as the SDKs give it, or
/// cox's own spelling); a new session, or the fork of a resumed one.
fn new_id(args: &RunArgs, home: &CoxHome, resuming: bool) -> Result<Option<SessionId>> {
    let Some(text) = &args.sdk.session_id else {
        return Ok(None);
    };
    let id = SessionId::from_either(text).ok_or_else(|| {
        anyhow::anyhow!("--session-id {text}: not a session id (a UUID, or cox's own id)")
    })?;
    if resuming && !args.fork_session {
        bail!("--session-id names a new session: with --resume or --continue, add --fork-session");
    }
    if home.rollout_path(id).exists() {
        bail!("--session-id {text}: that session exists; pick it up with --resume {text}");
    }
    Ok(Some(id))
}

/// The session `found` as this command line picks it up: in the mode and
/// model it was switched to unless a flag says otherwise (a variable does
/// not), forked under `new_id` with `--fork-session`.
fn resume(
    args: &RunArgs,
    home: &CoxHome,
    found: crate::resume::Found,
    new_id: Option<SessionId>,
) -> Result<cox_core::Resumed> {
    let mut resumed = found.resumed;
    let flags_mode = args.permission_mode.as_ref().is_some_and(Given::is_flag)
        || args.dangerously_skip_permissions
        || args.mode.is_some()
        || args.deep;
    if args.model.as_ref().is_some_and(Given::is_flag) {
        resumed.history.forget_model();
    }
    if flags_mode {
        resumed.history.forget_mode();
    }
    // Last, once everything else is known to work: a failed start leaves
    // no fork behind.
    if args.fork_session {
        fork(home, &mut resumed, &found.events, new_id)?;
    }
    Ok(resumed)
}

/// The session every surface runs: cox's own store, archive, sandbox and
/// tools over the provider `P`.
pub type CoxSession<P> =
    Session<Adapters<P, std::sync::Arc<Record>, std::sync::Arc<Record>, OsSandbox>>;

/// The record a session writes: `cox.db`, the rollout and the archive,
/// written on a thread of its own.
pub type Record = Background;

/// What a surface shows besides the events: facts the driver read.
#[derive(Debug, Clone)]
pub struct SessionFacts {
    pub cwd: PathBuf,
    /// The sandbox mode shell commands run in, for the status line.
    pub sandbox: String,
    pub branch: Option<String>,
    /// The main model's window and prices, when the catalog knows them.
    pub window: Option<u64>,
    pub prices: Option<cox_protocol::catalog::Prices>,
    /// The permission mode the config asked for.
    pub permission_mode: PermissionMode,
    /// The rules in effect, one line each, with where each came from.
    pub rules: Vec<String>,
    /// A resumed session's events so far (empty for a new one).
    pub past: Vec<cox_protocol::types::Event>,
    /// Recent sessions, newest first: id and a one-line description.
    pub recent: Vec<(String, String)>,
    /// What calls cost, for the spans of the session (see
    /// [`crate::telemetry::Watch`]).
    pub catalog: cox_protocol::catalog::Catalog,
    /// Every catalog row: model, prices, window (for a model switched to),
    /// then each `[tiers]` model without a row (no prices, window 0).
    pub models: Vec<(String, Option<cox_protocol::catalog::Prices>, u64)>,
    /// The command whose first line is the TUI's status line
    /// (`[tui] status_line.command`).
    pub status_line: Option<String>,
    /// The project's notes (`/memory`).
    pub memory: std::sync::Arc<crate::ext::memory::ProjectMemory>,
    /// The tier main turns start on (`think` in architect mode).
    pub tier: Tier,
    /// The model main turns start on.
    pub model: String,
    /// The think tier's model and its prices, for the person's consent.
    pub think: Option<(String, Option<cox_protocol::catalog::Prices>)>,
    /// The worktree the session works in, if any.
    pub worktree: Option<crate::worktree::Worktree>,
    /// The session's background shells (`/shells`).
    pub shells: std::sync::Arc<cox_tools::shells::Shells>,
    /// The agent tool's definitions, which a surface may add to (the
    /// SDK's `initialize`); `None` where the session has no agent tool.
    pub agents: Option<crate::ext::agent_tool::Definitions>,
    /// Hooks a surface adds (see [`crate::ext::agent_tool::SurfaceHooks`]):
    /// set here, its subagents run them too.
    pub surface_hooks: crate::ext::agent_tool::SurfaceHooks,
    /// The MCP servers and where each stands, once connected (for
    /// `system/init`).
    pub mcp_servers: crate::mcp::Statuses,
}

/// Prepares a session for an interactive surface (the TUI): the same
/// config, provider choice, resume and record as `cox run`, with approvals
/// asked of the person.
///
/// # Errors
/// Anything `cox run` would refuse before starting, as one line.
pub fn interactive_session<P, M>(
    args: &RunArgs,
    make_provider: M,
) -> Result<(CoxSession<P>, SessionFacts)>
where
    P: Provider,
    M: FnOnce(&ProviderChoice) -> Result<P>,
{
    interactive_session_in(args, make_provider, Editor::default())
}

/// What an editor lends a session: its buffers, and a terminal to start
/// commands in. Each `None` is cox's own (the disk; processes it starts).
#[derive(Clone, Default)]
pub struct Editor {
    /// Where the file tools read and write text.
    pub files: Option<std::sync::Arc<dyn cox_protocol::tool::TextFiles>>,
    /// Where shell commands start, launched as the sandbox launches them
    /// (see [`cox_sandbox::host`]).
    pub terminal: Option<std::sync::Arc<dyn cox_sandbox::CommandHost>>,
    /// A person types here (the terminal UI, an editor): MCP servers still
    /// connecting after [`crate::mcp::FIRST_WAIT`] join at a later prompt
    /// instead of holding the first. Elsewhere (`cox run`, the SDK, a
    /// subagent) the session waits for them, up to `MCP_TIMEOUT`.
    pub interactive: bool,
}

/// [`interactive_session`] in an editor: the file tools go through its
/// buffers and commands start in its terminal, as far as `editor` lends
/// them.
///
/// # Errors
/// As [`interactive_session`].
pub fn interactive_session_in<P, M>(
    args: &RunArgs,
    make_provider: M,
    editor: Editor,
) -> Result<(CoxSession<P>, SessionFacts)>
where
    P: Provider,
    M: FnOnce(&ProviderChoice) -> Result<P>,
{
    // Every file the session is set up from is read once.
    let _reads = crate::config::once::scope();
    let prepared = prepare(args, make_provider, Consent::Asked)?;
    let files = editor.files.clone();
    let editor = Editor {
        interactive: true,
        ..editor
    };
    let (session, facts) =
        build_session(prepared, args.max_turns, ApprovalPolicy::OnRequest, editor)?;
    Ok(match files {
        Some(files) => (session.with_files(files), facts),
        None => (session, facts),
    })
}

/// `--fork-session`: `resumed` goes on as a new session, its rollout a
/// copy of the old one's events and its row naming the old one as the
/// session it was forked from (the old rollout and row are not touched).
fn fork(
    home: &CoxHome,
    resumed: &mut cox_core::Resumed,
    events: &[Event],
    id: Option<SessionId>,
) -> Result<()> {
    let from = resumed.session_id;
    let id = id.unwrap_or_else(SessionId::generate);
    let rollout = cox_store::fork_rollout(home, id, events)
        .with_context(|| format!("cannot fork session {from}"))?;
    let db = cox_store::Db::open(&home.db_path())
        .with_context(|| format!("cannot fork session {from}"))?;
    let old = db.session(&from.to_string()).ok().flatten();
    let now = env::now_rfc3339();
    let row = cox_store::SessionRow {
        id: id.to_string(),
        created_at: now.clone(),
        updated_at: now,
        cwd: resumed.cwd.clone(),
        project_slug: cox_store::project_slug(&resumed.cwd),
        title: old.as_ref().and_then(|o| o.title.clone()),
        parent_id: Some(from.to_string()),
        rollout_path: rollout.display().to_string(),
        turns: resumed.turns(),
        cost_usd: 0.0,
        state: cox_protocol::store::SessionState::Open,
        provider: old.as_ref().and_then(|o| o.provider.clone()),
        model: old.and_then(|o| o.model),
        forked: true,
    };
    if let Err(err) = db.start_session(&row) {
        let _ = std::fs::remove_file(&rollout);
        return Err(anyhow::Error::new(err).context(format!("cannot fork session {from}")));
    }
    tracing::info!(session = %id, from = %from, "fork");
    resumed.session_id = id;
    Ok(())
}

/// Whether the provider's own web search is offered: `[tools] web_search =
/// true` and the rules allow every search (a `WebSearch` allow rule, no
/// deny or ask rule naming it: cox cannot ask about a search the provider
/// runs inside a model call). Asked for and not allowed, it is off, and
/// that is said.
fn web_search(models: &config::ModelConfig, engine: &cox_permission::Engine, quiet: bool) -> bool {
    if models.tools.web_search != Some(true) {
        return false;
    }
    match engine.allows_whole_tool("web_search") {
        Ok(()) => true,
        Err(why) => {
            let line = format!(
                "[tools] web_search is on, but off for this session: {why} (add `WebSearch` to \
                 [permissions] allow)"
            );
            if !quiet {
                eprintln!("cox: warning: {line}");
            }
            tracing::warn!(%line, "web search");
            false
        }
    }
}
