//! Building a session from what [`super::prepare`] found: the sandbox and
//! its policy, the tools (built-in, web, memory, skills, the subagent
//! tool), the hooks, the MCP servers and the record, wired into one
//! `Session` with the facts a surface shows.

use super::*;

/// How long a session's end waits for a title the cheap tier is still
/// writing, before it settles for the first line of the prompt. The call
/// runs alongside the first turn, so it is nearly always done by then.
const TITLE_GRACE: std::time::Duration = std::time::Duration::from_millis(300);

/// Builds the session `prepared` describes, with `approval` as its policy
/// (`never` headless; `on-request` where a person can answer).
pub(crate) fn build_session<P: Provider>(
    prepared: Prepared<P>,
    max_turns: Option<u32>,
    approval: ApprovalPolicy,
    editor: Editor,
) -> Result<(CoxSession<P>, SessionFacts)> {
    let Prepared {
        provider,
        home,
        cwd,
        workspace,
        new_id,
        system_prompt,
        only_tools,
        plan,
        engine,
        tier,
        resumed,
        past,
        catalog,
        sandbox,
        mcp,
        plugins,
        hooks,
        args,
        lineage,
    } = prepared;
    let Plan {
        permissions,
        models: model_config,
        preset,
        budget,
        status_line,
        ..
    } = plan;
    let tier_models: Vec<String> = model_config
        .tiers
        .values()
        .filter_map(|tier| tier.model.clone())
        .collect();
    let append_system_prompt = args.append_system_prompt.clone();
    let name = args.name.clone().filter(|n| !n.trim().is_empty());
    // `--agents JSON`: beside the agents folders', over one of a name.
    let flag_agents = match args.agents.as_deref() {
        Some(json) => serde_json::from_str(json)
            .map_err(|e| format!("--agents: not JSON: {e}"))
            .and_then(|v| crate::ext::agents::from_json(&v).map_err(|e| format!("--{e}")))
            .map_err(|e| anyhow::anyhow!(e))?,
        None => Vec::new(),
    };
    // The project's hooks and MCP servers run where their settings were
    // read and trusted (a subagent's: its parent's folder), so what runs
    // is what was trusted, not a copy in another checkout.
    let settings_cwd = lineage.settings_from.clone().unwrap_or_else(|| cwd.clone());
    let connect = connect_context(&home, &settings_cwd, &sandbox, &workspace)?;
    let info = catalog.get(provider.model()).cloned();
    let main_model = provider.model().to_owned();
    let mut models: Vec<_> = catalog
        .models()
        .iter()
        .map(|m| (m.id.clone(), m.prices, m.context_window))
        .collect();
    // A model set in `[tiers]` without a row is configured too: known to
    // `/model`, with no price and no window.
    for id in tier_models {
        if !models.iter().any(|(known, ..)| *known == id) {
            models.push((id, None, 0));
        }
    }
    let context_window = info.as_ref().map(|m| m.context_window);
    let think = provider.tier_model(Tier::Think).map(|model| {
        let prices = catalog.get(model).and_then(|m| m.prices);
        (model.to_owned(), prices)
    });
    let found = instructions::load(
        home.root(),
        &cwd,
        &crate::ext::plugins::Plugin::skill_dirs(&plugins),
    );
    // Architect's plan mode is already in `permissions`.
    let mode = permissions.mode;
    let bypass_refused = permissions.bypass_refused.clone();
    let id = resumed
        .as_ref()
        .map(|r| r.session_id)
        .or(new_id)
        .unwrap_or_else(SessionId::generate);
    let started_at = env::now_rfc3339();
    let cwd_text = cwd.display().to_string();
    let branch = env::git_branch(&cwd);
    // Short: the status line is one row.
    let sandbox_label = match sandbox.mode {
        SandboxMode::ReadOnly => "read-only",
        SandboxMode::WorkspaceWrite => "sandboxed",
        SandboxMode::DangerFullAccess => "no sandbox",
    }
    .to_owned();
    // Every writable root gets its snapshots (the first is the primary one).
    // A worktree session's main checkout is never written: no snapshots.
    let checkpoint_roots: Vec<PathBuf> = if workspace.roots.is_empty() {
        vec![cwd.clone()]
    } else {
        workspace.writable_roots().cloned().collect()
    };
    let worktree = (!workspace.read_only.is_empty()).then(|| cwd.display().to_string());
    let worktree_facts = workspace
        .read_only
        .first()
        .map(|main| crate::worktree::Worktree {
            path: cwd.clone(),
            branch: branch.clone().unwrap_or_default(),
            main: main.clone(),
            notes: Vec::new(),
        });
    // `@path` in a person's prompt, read as the read tool would.
    let engine = std::sync::Arc::new(engine);
    let mentions = crate::attach::Mentions::new(
        workspace.clone(),
        std::sync::Arc::clone(&engine),
        env::home_dir(),
    );
    let mut config = SessionConfig {
        id,
        workspace,
        permission_mode: mode,
        approval,
        sandbox_mode: sandbox.mode,
        max_turns,
        system: SystemParts {
            prompt: [
                Some(
                    system_prompt
                        .as_deref()
                        .unwrap_or(cox_core::prompt::SYSTEM_PROMPT),
                ),
                append_system_prompt.as_deref(),
                lineage.prompt.as_deref(),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("\n\n"),
            instructions: found.text,
            volatile: cox_core::prompt::volatile_block(
                &started_at[..10],
                &cwd_text,
                branch.as_deref(),
            ),
        },
        started_at,
        max_output_tokens: 32_000,
        tier,
        effort: preset.effort,
        budget,
        context: model_config.context,
        context_window,
        parent: lineage.parent,
        agent_type: lineage.agent_type.clone(),
        bypass_refused,
    };
    tracing::info!(session = %id, cwd = %cwd_text, provider = provider.name(), "session start");
    let store_catalog = catalog.clone();
    let store = std::sync::Arc::new(CoxStore::open(&home, catalog)?);
    // Where the other live sessions of the project work: a warning when
    // one works in this worktree, and the model is told (system[3]).
    let project = crate::presence::project_of(&cwd);
    let others = crate::presence::others(store.db(), &project, &id.to_string());
    if let Some(worktree) = &worktree
        && lineage.parent.is_none()
    {
        warn_all(
            &crate::presence::shared_worktree(&others, worktree),
            "presence",
        );
    }
    if let Some(told) = crate::presence::told(&others) {
        config.system.volatile.push_str(&told);
    }
    let here = cox_store::Presence {
        session_id: id.to_string(),
        pid: std::process::id(),
        pid_start: crate::worktree::process_start(std::process::id()).unwrap_or(0),
        project,
        cwd: cwd_text.clone(),
        worktree: worktree.clone(),
        branch: worktree.as_ref().and(branch.clone()),
        started_at: config.started_at.clone(),
    };

    let recent = store
        .db()
        .sessions()
        .unwrap_or_default()
        .into_iter()
        .filter(|row| row.id != id.to_string())
        .take(20)
        .map(|row| {
            let day = row
                .updated_at
                .get(..16)
                .unwrap_or(&row.updated_at)
                .replace('T', " ");
            let place = row.cwd.rsplit('/').next().unwrap_or_default().to_owned();
            // The title first: a narrow list cuts the end of the line.
            let title = row.title.as_ref().map(|t| format!("{t} · "));
            let label = format!(
                "{}{day} · {place} · {} turns · ${:.4}",
                title.unwrap_or_default(),
                row.turns,
                row.cost_usd
            );
            (row.id, label)
        })
        .collect();
    let rules = engine
        .rules()
        .map(|(list, r)| format!("{list:<5} {}  ({})", r.text, r.origin))
        .collect();
    // Written off the runtime, so a cox.db another process holds locked
    // never stops the session (nor the TUI drawing it).
    // Notes are read and kept through the session's own connection.
    let memory = std::sync::Arc::new(crate::ext::memory::ProjectMemory::new(
        std::sync::Arc::clone(&store),
        &cwd,
    ));
    let record = std::sync::Arc::new(
        Background::start(store).context("cannot start the record's writer thread")?,
    );
    // Written by the record's writer: a cox.db another process holds
    // locked never stops the session.
    record.enqueue(move |store| {
        if let Err(err) = store.db().record_presence(&here) {
            tracing::warn!(%err, "presence");
        }
    });
    // Background shells run in a sandbox of their own making, with the
    // same policy (an editor's terminal is for the calls it shows).
    let shells =
        cox_tools::shells::Shells::new(std::sync::Arc::new(OsSandbox::new(sandbox.clone())));
    let mut tools = cox_tools::session_tools(&shells);
    // apply_patch is the edit tool Codex-trained models expect; Claude's
    // are edit and write, so an Anthropic session is not sent its bytes.
    if provider.name() == "anthropic" {
        tools.retain(|t| t.name() != "apply_patch");
    }
    if model_config.tools.web_fetch != Some(false) {
        tools.push(std::sync::Arc::new(cox_tools::WebFetchTool::new(
            host_gate(&sandbox),
            cox_tools::FetchLimits::default(),
        )));
    }
    tools.push(std::sync::Arc::new(crate::ext::memory::MemoryTool::new(
        std::sync::Arc::clone(&memory),
    )));
    if let Some(tool) = crate::ext::skill_tool::SkillTool::over(found.skills.clone()) {
        tools.push(std::sync::Arc::new(tool));
    }
    let home_dir = env::home_dir();
    let base = instructions::repo_root(&cwd).unwrap_or_else(|| cwd.clone());
    let mut agent_definitions = None;
    if let Some(tool) = crate::ext::agent_tool::AgentTool::for_session(
        crate::ext::agent_tool::Recipe {
            args,
            cwd: cwd.clone(),
            settings_from: lineage.settings_from.clone().unwrap_or_else(|| cwd.clone()),
            parent: id,
            top: lineage.top.unwrap_or(id),
            depth: lineage.depth,
            approval,
            max_turns,
            config: model_config.agents.clone(),
            files: editor.files.clone(),
            hooks: lineage.hooks.clone(),
            spawn: super::subagents(),
        },
        || {
            let (mut defs, warnings) =
                crate::ext::agents::find(&base, home.root(), home_dir.as_deref(), &plugins);
            if lineage.parent.is_none() {
                warn_all(&warnings, "agents");
            }
            defs.retain(|d| !flag_agents.iter().any(|f| f.name == d.name));
            defs.extend(flag_agents);
            defs
        },
    ) {
        agent_definitions = Some(tool.definitions());
        tools.push(std::sync::Arc::new(tool));
    }
    // A subagent's definition may narrow its tools, and so may --tools.
    for names in [&lineage.tools, &only_tools].into_iter().flatten() {
        tools.retain(|t| names.iter().any(|n| n == t.name()));
    }
    let known: Vec<String> = models.iter().map(|(id, ..)| id.clone()).collect();
    let commands = crate::ext::commands::Commands::find(
        &crate::ext::commands::Places {
            cox_home: home.root(),
            home_dir: home_dir.as_deref(),
            base: &base,
            plugins: &plugins,
            models: &known,
        },
        &found.skills,
    );
    warn_all(&commands.warnings, "commands");
    let session = Session::new(
        config,
        provider,
        // One record: the rollout and ledger, and the archive of outputs.
        std::sync::Arc::clone(&record),
        record,
        match editor.terminal {
            Some(host) => OsSandbox::new(sandbox.clone()).with_host(host),
            None => OsSandbox::new(sandbox.clone()),
        },
        tools,
    )
    .with_engine(engine)
    .with_memory(std::sync::Arc::clone(&memory) as _)
    .with_checkpoints(std::sync::Arc::new(
        cox_checkpoints::GitCheckpoints::open(&home, &checkpoint_roots)
            .context("cannot open the checkpoint store")?,
    ))
    .with_title_grace(std::sync::Arc::new(|| {
        Box::pin(tokio::time::sleep(TITLE_GRACE)) as cox_protocol::provider::BoxFuture<'static, ()>
    }));
    let session = match resumed {
        Some(resumed) => session.resume(resumed),
        None => session,
    };
    // `-n/--name`: the session's title, said as it starts; no title job.
    let session = match name {
        Some(name) => session.with_late_tools(Box::pin(std::future::ready(cox_core::LateTools {
            title: Some(name),
            ..cox_core::LateTools::default()
        }))),
        None => session,
    };
    // A subagent's prompt is the model's words, never a person's slash
    // command: it is not expanded (a command's allowed-tools and model
    // would reach further than the parent's model may).
    let child = lineage.parent.is_some();
    let session = if commands.entries().next().is_some() && !child {
        session.with_expander(std::sync::Arc::new(commands))
    } else {
        session
    };
    let session = if child {
        session
    } else {
        session.with_expander(std::sync::Arc::new(mentions))
    };
    let mcp_servers = crate::mcp::Statuses::default();
    let session = with_mcp(
        session,
        mcp,
        connect,
        (lineage.tools.clone(), !child),
        std::sync::Arc::clone(&mcp_servers),
        editor.interactive && !child,
    );
    if let Some(line) = crate::ext::hooks::pending_line(&hooks.pending) {
        warn_all(&[line], "hooks");
    }
    let session = if hooks.trusted.is_empty() {
        session
    } else {
        // A project's and a plugin's hooks run inside the session's sandbox.
        let network = sandbox.network == cox_sandbox::Network::On;
        let hooks = cox_hooks::CommandHooks::new(
            hooks.trusted,
            cox_hooks::SessionInfo {
                session_id: lineage.top.unwrap_or(id).to_string(),
                transcript_path: home.rollout_path(lineage.top.unwrap_or(id)),
                cwd: settings_cwd,
                rollouts: Some(home.sessions_dir()),
            },
        )
        .confined(cox_hooks::Confinement {
            sandbox: OsSandbox::new(sandbox),
            network,
        });
        session.with_hooks(std::sync::Arc::new(hooks))
    };
    // A subagent runs the surface's hooks after its settings' (the session
    // at the top adds them itself, once it has them).
    let session = match lineage.hooks.get() {
        Some(surface) if lineage.parent.is_some() => session.with_hooks(surface),
        _ => session,
    };
    let surface_hooks = lineage.hooks.clone();
    let facts = SessionFacts {
        cwd,
        sandbox: sandbox_label,
        branch,
        window: context_window,
        model: main_model,
        prices: info.and_then(|m| m.prices),
        permission_mode: mode,
        rules,
        past,
        recent,
        models,
        status_line,
        memory,
        tier,
        think,
        catalog: store_catalog,
        worktree: worktree_facts,
        shells,
        agents: agent_definitions,
        surface_hooks,
        mcp_servers,
    };
    Ok((session, facts))
}
