//! `cox-bench hooks N`: what hooks cost.
//!
//! - spawn: `bash -c true` started with its three streams piped and waited
//!   for, N times: what any hook pays the operating system;
//! - hook: one PreToolUse hook whose command is `true`, run through the
//!   hooks adapter (the stdin object built and written, the streams read,
//!   the exit code and output read), N times, interleaved with the spawns
//!   so noise lands on both; the difference is cox's own cost per hook;
//! - confined: the same hook as a project's, run inside the sandbox
//!   (bubblewrap, where this machine has it), as a project's hooks run;
//! - discovery: finding the hooks of a folder that has none (the settings
//!   files looked for), as every session start does;
//! - turn: a read-only turn (a `read`, then a text answer) through the real
//!   session, without hooks and with the `true` PreToolUse hook.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cox_protocol::Hooks;
use cox_protocol::hook::{HookCall, HookEvent};
use cox_protocol::types::PermissionMode;
use cox_scripted::{Scenario, ScriptedProvider};

use crate::{Bench, ms, tempdir, us};

pub(crate) fn run(n: usize) -> Result<(), String> {
    let n = n.max(5);
    let work = tempdir::Dir::new("hooks").map_err(|e| e.to_string())?;
    let settings = work.0.join("settings.json");
    std::fs::write(
        &settings,
        r#"{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "true"}]}]}}"#,
    )
    .map_err(|e| e.to_string())?;
    let mut loader = cox_hooks::Loader::new();
    loader.settings_file(&settings, &cox_hooks::Scope::User, &[]);
    let hooks = Arc::new(cox_hooks::CommandHooks::new(
        loader.finish().defs,
        cox_hooks::SessionInfo {
            session_id: "01BENCH".into(),
            transcript_path: work.0.join("rollout.jsonl"),
            cwd: work.0.clone(),
            rollouts: None,
        },
    ));
    let call = HookCall::new(HookEvent::PreToolUse, PermissionMode::Default)
        .target("read")
        .field("tool_name", "read")
        .field("tool_input", serde_json::json!({"path": "a.txt"}))
        .field("tool_use_id", "toolu_1");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let (mut spawns, mut runs) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let started = Instant::now();
        runtime.block_on(async {
            let child = tokio::process::Command::new("bash")
                .args(["-c", "true"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .process_group(0)
                .spawn();
            if let Ok(child) = child {
                let _ = child.wait_with_output().await;
            }
        });
        spawns.push(started.elapsed());
        let started = Instant::now();
        let replies = runtime.block_on(hooks.run(&call));
        runs.push(started.elapsed());
        if replies.len() != 1 || replies[0].status != cox_protocol::hook::HookStatus::Success {
            return Err(format!("the hook did not run: {replies:?}"));
        }
    }
    let (spawn_min, spawn_med) = min_median(&mut spawns);
    let (hook_min, hook_med) = min_median(&mut runs);
    println!(
        "spawn `bash -c true` ({n} times): min {:.2} ms, median {:.2} ms",
        ms(spawn_min),
        ms(spawn_med)
    );
    println!(
        "PreToolUse hook `true` ({n} times): min {:.2} ms, median {:.2} ms",
        ms(hook_min),
        ms(hook_med)
    );
    println!(
        "hook over spawn: {:.2} ms (median), {:.2} ms (min)",
        ms(hook_med.saturating_sub(spawn_med)),
        ms(hook_min.saturating_sub(spawn_min))
    );

    // The same hook as a project's: inside the sandbox (bubblewrap), where
    // this machine has it.
    let project_settings = work.0.join("project.json");
    std::fs::copy(&settings, &project_settings).map_err(|e| e.to_string())?;
    let mut loader = cox_hooks::Loader::new();
    loader.settings_file(&project_settings, &cox_hooks::Scope::Project, &[]);
    let mut policy = cox_sandbox::SandboxPolicy::new(
        cox_protocol::types::SandboxMode::WorkspaceWrite,
        cox_sandbox::helper::program(),
    );
    policy.add_writable_root(&work.0);
    let confined = cox_hooks::CommandHooks::new(
        loader.finish().defs,
        cox_hooks::SessionInfo {
            session_id: "01BENCH".into(),
            transcript_path: work.0.join("rollout.jsonl"),
            cwd: work.0.clone(),
            rollouts: None,
        },
    )
    .confined(cox_hooks::Confinement {
        sandbox: cox_sandbox::OsSandbox::new(policy),
        network: false,
    });
    let mut boxed = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let replies = runtime.block_on(confined.run(&call));
        boxed.push(started.elapsed());
        if replies.first().map(|r| &r.status) != Some(&cox_protocol::hook::HookStatus::Success) {
            println!("a project's hook in the sandbox: not run here ({replies:?})");
            boxed.clear();
            break;
        }
    }
    if !boxed.is_empty() {
        let (min, med) = min_median(&mut boxed);
        println!(
            "the same hook as a project's, inside the sandbox ({n} times): min {:.2} ms, median {:.2} ms",
            ms(min),
            ms(med)
        );
    }

    // A folder with no hooks, as every session start looks at one.
    let empty = tempdir::Dir::new("nohooks").map_err(|e| e.to_string())?;
    let home = tempdir::Dir::new("nohooks-home").map_err(|e| e.to_string())?;
    let mut finds = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let found = cox_cli::ext::hooks::find(
            &cox_cli::ext::hooks::Places {
                user_config: &home.0.join("config.toml"),
                home_dir: Some(&home.0),
                cwd: &empty.0,
                plugins: &[],
                claude: &cox_cli::config::claude::Choice::default(),
            },
            &home.0.join("cox.db"),
        );
        finds.push(started.elapsed());
        if !found.trusted.is_empty() || !found.pending.is_empty() {
            return Err("hooks found where there are none".into());
        }
    }
    let (find_min, find_med) = min_median(&mut finds);
    println!(
        "finding the hooks of a folder with none ({n} times): min {:.1} µs, median {:.1} µs",
        us(find_min),
        us(find_med)
    );

    // A read-only turn, without and with the hook, in interleaved rounds.
    let turns = (n / 10).max(5);
    let mut toml = String::new();
    for _ in 0..turns {
        toml.push_str(
            "[[turn]]\nusage = { input_tokens = 100, output_tokens = 10 }\n\
             [[turn.tool_call]]\nname = \"read\"\ninput = { path = \"a.txt\" }\n\n\
             [[turn]]\ntext = \"ok\"\nusage = { input_tokens = 100, output_tokens = 10 }\n\n",
        );
    }
    let scenario = Scenario::parse(&toml, "hooks bench").map_err(|e| e.to_string())?;
    let mut without = Vec::new();
    let mut with = Vec::new();
    for round in 0..6 {
        for hooked in [false, true] {
            let bench = Bench::new()?;
            std::fs::write(bench.cwd.join("a.txt"), "a\n").map_err(|e| e.to_string())?;
            let mut starts = Vec::with_capacity(turns);
            let mut spans = Vec::with_capacity(turns);
            let hooks: Option<Arc<dyn Hooks>> = hooked.then(|| Arc::clone(&hooks) as _);
            bench.run_with(
                ScriptedProvider::new(scenario.clone()),
                cox_protocol::config::ContextConfig::default(),
                turns,
                |event| match event {
                    cox_protocol::types::Event::TurnStarted { .. } => starts.push(Instant::now()),
                    cox_protocol::types::Event::TurnDone { .. } => {
                        if let Some(at) = starts.last() {
                            spans.push(at.elapsed());
                        }
                    }
                    _ => {}
                },
                hooks,
            )?;
            // The first round warms the page cache and the allocator.
            if round > 0 {
                if hooked { &mut with } else { &mut without }.extend(spans);
            }
        }
    }
    let (without_min, without_med) = min_median(&mut without);
    let (with_min, with_med) = min_median(&mut with);
    println!(
        "read-only turn, no hooks ({} turns): min {:.2} ms, median {:.2} ms",
        without.len(),
        ms(without_min),
        ms(without_med)
    );
    println!(
        "read-only turn, one PreToolUse hook ({} turns): min {:.2} ms, median {:.2} ms",
        with.len(),
        ms(with_min),
        ms(with_med)
    );
    Ok(())
}

/// The smallest and the median of `values` (sorted in place).
fn min_median(values: &mut [Duration]) -> (Duration, Duration) {
    values.sort();
    let min = values.first().copied().unwrap_or_default();
    let median = values.get(values.len() / 2).copied().unwrap_or_default();
    (min, median)
}
