//! The session every surface runs, built from the command line.
//!
//! `cox run`, the terminal UI and `cox permissions check` start here, so
//! they cannot disagree about what a command line means: `prepare` checks
//! the flags, prepares `COX_HOME`, opens the log, finds the session to
//! resume, loads the permissions and the models, and builds the provider;
//! `build_session` then opens the record and assembles the session with
//! the approval policy of the surface (`never` headless, `on-request` where
//! a person can answer). Anything that fails here fails before the session
//! starts, as one error the surface prints on one line.
//!
//! The layers, weakest first: built-in defaults, the user's config, the
//! project's (which may only narrow), Claude Code's settings files, the
//! `COX_*` variables, then the flags. What they make of the mode, the
//! permissions, the budget and the preset is [`settings`]; the sandbox
//! policy, the MCP servers and the log are [`wiring`]; `build_session`
//! itself is [`build`].

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use cox_core::{Adapters, Session, SessionConfig};
use cox_protocol::config::{BudgetConfig, ContextConfig};
use cox_protocol::provider::{SystemParts, Tier};
use cox_protocol::tool::Workspace;
use cox_protocol::types::{ApprovalPolicy, Event, PermissionMode, SandboxMode};
use cox_protocol::{Provider, SessionId};
use cox_sandbox::{OsSandbox, SandboxPolicy};
use cox_store::{Background, CoxHome, CoxStore};

pub use cox_tools::shells::Shells;

use crate::args::RunArgs;
use crate::given::Given;
use crate::providers::ProviderChoice;
use crate::{config, env, instructions, providers, resume};

mod build;
mod settings;
mod wiring;

pub(crate) use build::build_session;
pub(crate) use settings::permission_mode;
pub use settings::{Consent, session_permissions};
use settings::{Preset, budget, preset, session_permissions_at};
pub(crate) use wiring::mcp_outside_a_session;
use wiring::{connect_context, host_gate, init_log, mcp_servers, sandbox_policy, with_mcp};

/// What [`prepare`] found out: everything a session needs but its record.
pub(crate) struct Prepared<P> {
    provider: P,
    home: CoxHome,
    cwd: PathBuf,
    /// The working folder and every `--add-dir`.
    workspace: Workspace,
    append_system_prompt: Option<String>,
    /// `--session-id`: the new session's id.
    new_id: Option<SessionId>,
    /// `--system-prompt` (or its file), in place of cox's own.
    system_prompt: Option<String>,
    /// `--tools`: the only tools of the session besides MCP servers'
    /// (cox's names).
    only_tools: Option<Vec<String>>,
    permissions: config::Permissions,
    preset: Preset,
    resumed: Option<cox_core::Resumed>,
    /// The resumed session's events so far.
    past: Vec<cox_protocol::types::Event>,
    pub(crate) catalog: cox_protocol::catalog::Catalog,
    /// Models the config names in `[tiers]`, priced or not.
    tier_models: Vec<String>,
    budget: BudgetConfig,
    context: ContextConfig,
    /// What shell commands may reach.
    sandbox: SandboxPolicy,
    /// The MCP servers to connect, and what was wrong with the others.
    mcp: crate::mcp::Loaded,
    /// `[tui] status_line.command`.
    status_line: Option<String>,
    /// The plugins found (`$COX_HOME/plugins`, `--plugin-dir`).
    plugins: Vec<crate::ext::plugins::Plugin>,
    /// The hooks found, trusted or pending (none with `--no-hooks`).
    hooks: crate::ext::hooks::Found,
    /// The command line it was prepared from (a subagent starts from it).
    args: RunArgs,
    /// `[agents]` of the user's config.
    agents: config::AgentsConfig,
    /// `[tools]` of the user's config.
    web: config::ToolsConfig,
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
    // A bad --settings stops the session where the permissions load; here
    // it reads as none.
    let claude = settings::claude_choice(args).unwrap_or_default();
    let hooks = crate::ext::hooks::find(
        &crate::ext::hooks::Places {
            user_config: &user_config,
            home_dir: home_dir.as_deref(),
            cwd,
            plugins: &plugins.plugins,
            claude: &claude,
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
    let user_config = home.root().join("config.toml");
    if lineage.parent.is_none() {
        let telemetry = config::load_models(&user_config)?.telemetry;
        init_log(
            home.logs_dir(),
            config::log_filter_for(&user_config)?,
            telemetry.log_days,
        );
        crate::telemetry::export::start(
            crate::telemetry::export::wanted(telemetry.otel)?,
            telemetry.endpoint.as_deref(),
        )?;
    }
    let pick = match (&args.resume, args.continue_) {
        (Some(id), _) => Some(resume::Pick::Id(id.clone())),
        (None, true) => Some(resume::Pick::Latest),
        (None, false) => None,
    };
    let here = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    let found = match &pick {
        Some(pick) => {
            let at = std::fs::canonicalize(&here).unwrap_or_else(|_| here.clone());
            Some(resume::find(&home, pick, &at)?)
        }
        None => None,
    };
    // A resumed session runs where it ran, unless --cwd says otherwise.
    // `--worktree`: the session works there, whatever it resumes.
    let worktree = match &args.worktree {
        Some(name) => {
            let at = std::fs::canonicalize(&here).unwrap_or_else(|_| here.clone());
            let opened =
                crate::worktree::open(&at, name, std::process::id(), &env::now_rfc3339()[..10])?;
            for note in opened.notes.iter().filter(|_| lineage.parent.is_none()) {
                eprintln!("cox: {note}");
                tracing::info!(%note, "worktree");
            }
            Some(opened)
        }
        None => None,
    };
    let cwd = match (&found, &args.cwd, &worktree) {
        (_, _, Some(worktree)) => worktree.path.clone(),
        (Some(found), None, None) => PathBuf::from(&found.resumed.cwd),
        _ => here,
    };
    let cwd = std::fs::canonicalize(&cwd).with_context(|| match (&found, &args.cwd) {
        (Some(found), None) if found.resumed.cwd.contains("/_worktrees/") => format!(
            "session {id} worked in the worktree {}, which is gone: see `git worktree list`, \
             or run `cox --worktree <name> --resume {id}` to make it again",
            cwd.display(),
            id = found.resumed.session_id,
        ),
        (Some(found), None) => format!(
            "session {} ran in {}, which cannot be opened now: pass --cwd to resume it elsewhere",
            found.resumed.session_id,
            cwd.display()
        ),
        _ => format!("--cwd {}: cannot open the folder", cwd.display()),
    })?;
    if !cwd.is_dir() {
        bail!("--cwd {}: not a folder", cwd.display());
    }
    // A worktree session (this one, or one resumed in its worktree) reads
    // its main checkout as a second root, and never writes it.
    let main_checkout = match &worktree {
        Some(worktree) => Some(worktree.main.clone()),
        // Any linked worktree, made by cox or not: its main checkout is
        // read, never written.
        None => crate::worktree::linked(&cwd),
    }
    // A worktree inside its main checkout (`<repo>/.worktrees/x`) works as
    // a folder of it: the checkout is no second root there.
    .filter(|main| !cwd.starts_with(main));
    if let Some(found) = &found {
        for warning in &found.warnings {
            eprintln!("cox: warning: {warning}");
            tracing::warn!(%warning, "resume");
        }
        tracing::info!(session = %found.resumed.session_id, rollout = %found.rollout.display(), turns = found.resumed.turns(), "resume");
    }
    let mut roots = vec![cwd.clone()];
    if let Some(main) = &main_checkout {
        roots.push(main.clone());
    }
    for dir in &args.add_dir {
        let root = std::fs::canonicalize(dir)
            .with_context(|| format!("--add-dir {}: cannot open the folder", dir.display()))?;
        if !root.is_dir() {
            bail!("--add-dir {}: not a folder", dir.display());
        }
        if !roots.contains(&root) {
            roots.push(root);
        }
    }
    // Claude Code's `permissions.additionalDirectories`, from the person's
    // own settings: as --add-dir.
    for root in crate::config::claude::additional_dirs(
        env::home_dir().as_deref(),
        &cwd,
        &settings::claude_choice(args)?,
    )? {
        if !roots.contains(&root) {
            roots.push(root);
        }
    }
    // Where the project's settings are read: a subagent's are its
    // parent's, even in a worktree of its own (whose checkout may lack the
    // parent's uncommitted rules and trusted hooks).
    let settings_from = lineage.settings_from.clone().unwrap_or_else(|| cwd.clone());
    // A project's deny and ask rules about relative paths hold in every
    // checkout the session reaches: its parent's folder, its main checkout.
    let also: Vec<PathBuf> = [Some(settings_from.clone()), main_checkout.clone()]
        .into_iter()
        .flatten()
        .filter(|anchor| *anchor != cwd)
        .collect();
    let (mut permissions, models) =
        session_permissions_at(&home, (&settings_from, &cwd, &also), args, consent)?;
    // A subagent's config is its parent's, whose warnings were said.
    let quiet = lineage.parent.is_some();
    for warning in permissions.warnings.iter().filter(|_| !quiet) {
        eprintln!("cox: warning: {warning}");
        tracing::warn!(%warning, "permissions");
    }
    let mut preset = preset(args, &models, consent)?;
    if let Some(tier) = lineage.tier {
        preset.tier = tier;
    }
    let budget = budget(&models, permissions.project_budget, args.max_budget_usd)?;
    // The main checkout is read-only, and so is any other root inside it
    // (`--add-dir <main>/docs`): only the working folder is written.
    let read_only = match &main_checkout {
        Some(main) => roots
            .iter()
            .filter(|root| **root != cwd && root.starts_with(main))
            .cloned()
            .collect(),
        None => Vec::new(),
    };
    let workspace = Workspace {
        cwd: cwd.clone(),
        roots,
        read_only,
    };
    let sandbox = sandbox_policy(&permissions, args, &workspace, &home);
    // What the sandbox enforces itself, a line cox cannot follow runs
    // under confined rather than asking.
    crate::sandbox::enforce(&mut permissions.engine, &sandbox);
    // Where protected names that are links lead is protected for the file
    // tools too.
    permissions.engine.protect_targets(
        sandbox
            .links
            .iter()
            .filter_map(|(link, _)| link.canonicalize().ok())
            .map(|target| target.display().to_string())
            .collect(),
    );
    let catalog = providers::full_catalog(&models);
    let tier_models = models
        .tiers
        .values()
        .filter_map(|tier| tier.model.clone())
        .collect();
    let context = models.context;
    let choice = ProviderChoice {
        provider: args
            .provider
            .as_ref()
            .and_then(Given::text)
            .map(str::to_owned),
        model: args.model.as_ref().and_then(Given::text).map(str::to_owned),
        scenario: match &args.scenario {
            Some(Given::Flag(path)) => Some(path.clone()),
            Some(env) => env.env().map(PathBuf::from),
            None => None,
        },
        record: args.record.clone(),
        main_tier: preset.tier,
        agent: lineage.script.clone(),
        // A subagent whose definition names its tools searches only if
        // they include web_search.
        web_search: web_search(&models, &permissions.engine, quiet)
            && lineage
                .tools
                .as_ref()
                .is_none_or(|names| names.iter().any(|n| n == "web_search")),
        models,
    };
    let agents = choice.models.agents.clone();
    let web = choice.models.tools.clone();
    let (plugins, hooks) = extensions(args, &home, &settings_from, quiet);
    let mcp = mcp_servers(args, &home, &settings_from, &plugins)?;
    let status_line = config::load_tui(&home.root().join("config.toml"))?
        .status_line
        .map(|s| s.command);
    let system_prompt = flag_system_prompt(&args.sdk)?;
    let only_tools = match args.sdk.tools.as_deref().map(str::trim) {
        None | Some("default") => None,
        Some("") => Some(Vec::new()),
        Some(list) => {
            let written: Vec<String> = list.split(',').map(|t| t.trim().to_owned()).collect();
            Some(crate::ext::agent_tool::tool_names(&written).map_err(|name| {
                anyhow::anyhow!("--tools: cox has no tool `{name}` (its tools go by Claude Code's names or its own)")
            })?)
        }
    };
    // `--session-id`: the new session's id (a UUID, as the SDKs give it,
    // or cox's own spelling); a new session, or the fork of a resumed one.
    let new_id = match &args.sdk.session_id {
        None => None,
        Some(text) => {
            let id = SessionId::from_either(text).ok_or_else(|| {
                anyhow::anyhow!("--session-id {text}: not a session id (a UUID, or cox's own id)")
            })?;
            if found.is_some() && !args.fork_session {
                bail!(
                    "--session-id names a new session: with --resume or --continue, add \
                     --fork-session"
                );
            }
            if home.rollout_path(id).exists() {
                bail!("--session-id {text}: that session exists; pick it up with --resume {text}");
            }
            Some(id)
        }
    };
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
    let past = found.as_ref().map(|f| f.events.clone()).unwrap_or_default();
    let resumed = match found {
        Some(f) => {
            // A resumed session goes on in the mode and model it was
            // switched to, unless this command line says otherwise (a
            // variable does not).
            let mut resumed = f.resumed;
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
            // Last, once everything else is known to work: a failed start
            // leaves no fork behind.
            if args.fork_session {
                fork(&home, &mut resumed, &f.events, new_id)?;
            }
            Some(resumed)
        }
        None => None,
    };
    Ok(Prepared {
        provider,
        home,
        new_id: new_id.filter(|_| resumed.is_none()),
        workspace,
        append_system_prompt: args.append_system_prompt.clone(),
        system_prompt,
        only_tools,
        cwd,
        permissions,
        preset,
        past,
        resumed,
        catalog,
        tier_models,
        budget,
        context,
        sandbox,
        mcp,
        status_line,
        plugins,
        hooks,
        args: args.clone(),
        agents,
        web,
        lineage,
    })
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

/// The system prompt `--system-prompt` or `--system-prompt-file` sets, if
/// any: the SDKs pass "" when none was set, and cox's own stays then.
pub(crate) fn flag_system_prompt(sdk: &crate::args::SdkFlags) -> Result<Option<String>> {
    Ok(match (&sdk.system_prompt, &sdk.system_prompt_file) {
        (Some(text), _) if text.trim().is_empty() => None,
        (Some(text), _) => Some(text.clone()),
        (None, Some(file)) => {
            Some(std::fs::read_to_string(file).with_context(|| {
                format!("--system-prompt-file {}: cannot read it", file.display())
            })?)
        }
        (None, None) => None,
    })
}
