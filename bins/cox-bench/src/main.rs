//! `cox-bench`: the figures cox promises, measured the same way every time.
//!
//! - `cox-bench turns [N]`: N scripted user turns without tools through the
//!   real session, store and tools (sessions of ten turns, as a person would
//!   have); prints the core's overhead per turn and events per second.
//! - `cox-bench long [TURNS]`: a scripted session of TURNS user turns, each
//!   a read, a bash call and a text answer; prints how long a turn takes
//!   early and late in it (whole, and outside its tool calls), to show the
//!   session stays flat as its history grows.
//! - `cox-bench deltas [N]`: one turn streaming N text deltas through the
//!   session and the stream-json writer; prints the wall time.
//! - `cox-bench exec [RUNS] -- CMD ARGS…`: runs a command RUNS times and
//!   prints its wall time (min, median) and peak RSS (max), read with wait4.
//! - `cox-bench resume [N]`: writes a rollout of N events shaped like real
//!   sessions (turns of streamed text, tool calls and results, usage), then
//!   times reading it back and rebuilding the history, as `--resume` does.
//! - `cox-bench context [TURNS]`: a scripted session of TURNS user turns
//!   that re-reads a 20 KB and a 2 KB file every turn, edits the small one
//!   every fifth turn and runs a command printing 60 KB every third; prints
//!   the bytes every request would carry (Anthropic's body) with the default
//!   `[context]` and with dedup and microcompaction off.
//! - `cox-bench ledger [N]`: fills `$COX_HOME/cox.db` with one session and
//!   N usage rows spread over twelve months, for timing `cox stats` on it
//!   (`cox-bench exec 10 -- cox stats --month`).
//! - `cox-bench db [N]`: creates a new `cox.db` N times (each in a fresh
//!   folder) and prints the time `Db::open` takes to create and migrate it,
//!   and the time dropping the handle takes (SQLite's checkpoint on close).
//! - `cox-bench checkpoints [FILES]`: on a generated git repository of FILES
//!   files, the cold and warm snapshot, the extra time a file-tool call and
//!   a shell call pay for their checkpoints, and the rewind of a turn that
//!   wrote 100 files.
//! - `cox-bench hooks [N]`: what one PreToolUse hook (`true`) costs over
//!   spawning the same command, what finding the hooks of a folder with
//!   none costs at a session's start, and a read-only turn with and without
//!   the hook.
//! - `cox-bench acp [RUNS] [DELTAS]`: the release `cox acp` beside this
//!   binary: spawn to the `initialize` answer, and what ACP adds to each
//!   event (a DELTAS-delta turn over ACP against stream-json).
//! - `cox-bench telemetry [ROUNDS] [RUNS]`: the release `cox` beside this
//!   binary on a headless session of ROUNDS provider rounds, with OTLP
//!   export off, on (a loopback collector), to a collector that is down and
//!   to one that never answers: wall time, peak RSS, the change from off.
//! - `cox-bench subagents [RUNS] [FILES]`: the release `cox` beside this
//!   binary: what starting a subagent costs, four subagents in one message
//!   against four in turn, and `--worktree` in a repository of FILES files.
//! - `cox-bench tools [RUNS]`: `web_fetch` of a 1 MB HTML page from a
//!   loopback server (the call, the conversion alone, the bytes the model
//!   gets) and `image::prepare` of a 4000×3000 JPEG and a 2560×1600 PNG.
//! - `cox-bench mock [--port N] [--dir DIR] [--log FILE] [--dump DIR]`: a loopback model
//!   server (Anthropic Messages and OpenAI Responses) that answers every
//!   conversation with a write of `DIR/hello.txt`, then a short text; for
//!   timing cox against other agents on the same turn (`benches/peers.sh`).
//!
//! Arguments go through clap: a count that is not a number is an error,
//! never the default. Every mode ends with this process's own peak RSS.
//! Build with `--release`; debug figures mean nothing.

#![allow(unsafe_code)] // wait4 and getrusage have no safe wrapper in std

use std::io::Write;
use std::process::Command;
use std::time::{Duration, Instant};

use cox_cli::OutputFormat;
use cox_cli::output::Renderer;
use cox_core::{Session, SessionConfig};
use cox_protocol::SessionId;
use cox_protocol::provider::SystemParts;
use cox_protocol::tool::Workspace;
use cox_protocol::types::{ApprovalPolicy, Event, PermissionMode, SandboxMode, Submission};
use cox_sandbox::ProcessSandbox;
use cox_scripted::{Scenario, ScriptedProvider};
use cox_store::{CoxHome, FileArchive, JsonlStore};

mod acp;
mod checkpoints;
mod hooks;
mod mcp;
mod mock;
mod sandbox;
mod subagents;
mod telemetry;
mod tools;

/// The figures cox promises (see the module docs for each).
#[derive(clap::Parser, Debug)]
#[command(
    name = "cox-bench",
    about = "The figures cox promises, measured the same way every time"
)]
struct Cli {
    #[command(subcommand)]
    job: Job,
}

#[derive(clap::Subcommand, Debug)]
enum Job {
    /// N scripted turns without tools: the core's overhead per turn.
    Turns {
        #[arg(default_value_t = 2_000)]
        n: usize,
    },
    /// A TURNS-turn session (read, bash, text each): a turn early and late.
    Long {
        #[arg(default_value_t = 500)]
        turns: usize,
    },
    /// One turn streaming N text deltas through the session and stream-json.
    Deltas {
        #[arg(default_value_t = 10_000)]
        n: usize,
    },
    /// Read back and rebuild a rollout of N events, as `--resume` does.
    Resume {
        #[arg(default_value_t = 10_000)]
        n: usize,
    },
    /// Fill `$COX_HOME/cox.db` with N usage rows over twelve months.
    Ledger {
        #[arg(default_value_t = 100_000)]
        n: usize,
    },
    /// The bytes each request of a TURNS-turn session carries.
    Context {
        #[arg(default_value_t = 30)]
        turns: usize,
    },
    /// Run `true` N times unconfined, under bwrap and under the Landlock
    /// helper, and under bwrap with 10 and 100 deny rules enforced as
    /// mounts: the sandbox's cost per command, and the probe's once.
    Sandbox {
        #[arg(default_value_t = 100)]
        n: usize,
    },
    /// Snapshots, pre-images and a rewind on a generated FILES-file git
    /// repository.
    Checkpoints {
        #[arg(default_value_t = 10_000)]
        files: usize,
    },
    /// The MCP client: three servers' startup, one that hangs, and what a
    /// call adds over bare JSON-RPC (N calls).
    Mcp {
        #[arg(default_value_t = 200)]
        n: usize,
    },
    /// A `true` PreToolUse hook: its cost over spawning the command, and
    /// a session turn with and without it (N runs each).
    Hooks {
        #[arg(default_value_t = 200)]
        n: usize,
    },
    /// A ROUNDS-round session of the `cox` beside this binary with OTLP
    /// export off, on, to a collector that is down, and to one that never
    /// answers (RUNS runs each).
    Telemetry {
        #[arg(default_value_t = 20)]
        rounds: usize,
        #[arg(default_value_t = 20)]
        runs: usize,
    },
    /// `cox acp` (the release binary beside this one): spawn to the
    /// initialize answer, and a turn of DELTAS deltas over ACP against
    /// stream-json (RUNS runs each).
    Acp {
        #[arg(default_value_t = 20)]
        runs: usize,
        #[arg(default_value_t = 10_000)]
        deltas: usize,
    },
    /// Subagents and worktrees (the release `cox` beside this binary):
    /// starting a subagent, four at once against four in turn, and a
    /// worktree made in a repository of FILES files (RUNS runs each).
    Subagents {
        #[arg(default_value_t = 20)]
        runs: usize,
        #[arg(default_value_t = 10_000)]
        files: usize,
    },
    /// web_fetch of a 1 MB page and image::prepare of large images (RUNS
    /// runs each).
    Tools {
        #[arg(default_value_t = 20)]
        runs: usize,
    },
    /// Create a new cox.db N times.
    Db {
        #[arg(default_value_t = 50)]
        n: usize,
    },
    /// A loopback model server for timing whole agents on the same turn.
    Mock(mock::MockArgs),
    /// Run a command RUNS times: wall time (min, median) and peak RSS.
    Exec {
        #[arg(default_value_t = 20)]
        runs: usize,
        /// The command and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "CMD")]
        command: Vec<String>,
    },
}

fn main() {
    // `sandbox` runs commands through this binary's helper mode.
    cox_cli::sandbox::run_helper_if_asked();
    let cli = match <Cli as clap::Parser>::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = i32::from(err.use_stderr());
            let _ = err.print();
            std::process::exit(code);
        }
    };
    let result = match cli.job {
        Job::Turns { n } => turns(n),
        Job::Deltas { n } => deltas(n),
        Job::Long { turns } => long(turns),
        Job::Exec { runs, command } => exec(runs, &command),
        Job::Resume { n } => resume(n),
        Job::Ledger { n } => ledger(n),
        Job::Context { turns } => context_bytes(turns),
        Job::Mock(args) => mock::run(args),
        Job::Db { n } => db_create(n),
        Job::Sandbox { n } => sandbox::overhead(n),
        Job::Checkpoints { files } => checkpoints::run(files),
        Job::Mcp { n } => mcp::run(n),
        Job::Hooks { n } => hooks::run(n),
        Job::Telemetry { rounds, runs } => telemetry::run(rounds, runs),
        Job::Acp { runs, deltas } => acp::run(runs, deltas),
        Job::Subagents { runs, files } => subagents::run(runs, files),
        Job::Tools { runs } => tools::run(runs),
    };
    match result {
        Ok(()) => {
            // A reader that stopped reading (`| head`) is no error.
            let _ = writeln!(
                std::io::stdout(),
                "peak RSS (cox-bench): {:.1} MB",
                own_peak_rss_kb() as f64 / 1024.0
            );
        }
        Err(err) => {
            eprintln!("cox-bench: error: {err}");
            std::process::exit(1);
        }
    }
}

/// A session over a scenario, in a fresh temporary home and work folder.
struct Bench {
    home: CoxHome,
    cwd: std::path::PathBuf,
    _dirs: (tempdir::Dir, tempdir::Dir),
}

mod tempdir {
    /// A folder under the system temp dir, removed on drop.
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new(tag: &str) -> std::io::Result<Self> {
            let path = std::env::temp_dir().join(format!(
                "cox-bench-{tag}-{}-{}",
                std::process::id(),
                ulid::Ulid::generate()
            ));
            std::fs::create_dir_all(&path)?;
            Ok(Self(path.canonicalize()?))
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

impl Bench {
    fn new() -> Result<Self, String> {
        let home_dir = tempdir::Dir::new("home").map_err(|e| e.to_string())?;
        let work_dir = tempdir::Dir::new("work").map_err(|e| e.to_string())?;
        let home = CoxHome::at(home_dir.0.clone());
        home.prepare().map_err(|e| e.to_string())?;
        Ok(Self {
            home,
            cwd: work_dir.0.clone(),
            _dirs: (home_dir, work_dir),
        })
    }

    /// Runs `prompts` user turns against `scenario`, handing every event to
    /// `sink`.
    fn run(
        &self,
        scenario: Scenario,
        prompts: usize,
        sink: impl FnMut(&Event),
    ) -> Result<(), String> {
        self.run_with(
            ScriptedProvider::new(scenario),
            cox_protocol::config::ContextConfig::default(),
            prompts,
            sink,
            None,
        )
    }

    /// The same, with a provider, `[context]` settings and hooks of its own.
    fn run_with(
        &self,
        provider: ScriptedProvider,
        context: cox_protocol::config::ContextConfig,
        prompts: usize,
        sink: impl FnMut(&Event),
        hooks: Option<std::sync::Arc<dyn cox_protocol::Hooks>>,
    ) -> Result<(), String> {
        let config = SessionConfig {
            id: SessionId::generate(),
            workspace: Workspace::single(self.cwd.clone()),
            permission_mode: PermissionMode::AcceptEdits,
            approval: ApprovalPolicy::Never,
            sandbox_mode: SandboxMode::WorkspaceWrite,
            max_turns: None,
            started_at: "2026-01-01T00:00:00.000Z".into(),
            system: SystemParts {
                prompt: cox_core::prompt::SYSTEM_PROMPT.into(),
                instructions: String::new(),
                volatile: String::new(),
            },
            max_output_tokens: 32_000,
            tier: cox_protocol::provider::Tier::Code,
            effort: None,
            budget: cox_protocol::config::BudgetConfig::default(),
            context,
            context_window: None,
            parent: None,
            agent_type: None,
            bypass_refused: None,
        };
        let session = Session::new(
            config,
            provider,
            JsonlStore::new(self.home.clone()),
            FileArchive::new(&self.home),
            ProcessSandbox::new(),
            cox_tools::builtin_tools(),
        );
        let session = match hooks {
            Some(hooks) => session.with_hooks(hooks),
            None => session,
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let subs = (0..prompts)
            .map(|i| Submission::UserTurn {
                text: format!("prompt {i}"),
                images: Vec::new(),
            })
            .chain([Submission::Shutdown]);
        runtime
            .block_on(session.run(futures::stream::iter(subs), sink))
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// A rollout of `n` events, then read back and rebuilt, as `--resume`
/// would.
fn resume(n: usize) -> Result<(), String> {
    use cox_protocol::Store;
    use cox_protocol::provider::Tier;
    use cox_protocol::store::SessionMeta;
    use cox_protocol::types::{Risk, StopReason, ToolCall, ToolResult, Usage};
    let bench = Bench::new()?;
    let store = JsonlStore::new(bench.home.clone());
    let id = SessionId::generate();
    store
        .session_started(&SessionMeta {
            id,
            cwd: bench.cwd.display().to_string(),
            provider: "p".into(),
            model: "m".into(),
            created_at: "2026-11-30T00:00:00.000Z".into(),
            parent_id: None,
            resumed: false,
        })
        .map_err(|e| e.to_string())?;
    let mut events = vec![Event::SessionStarted {
        session_id: id,
        cwd: bench.cwd.display().to_string(),
        model: "m".into(),
        provider: "p".into(),
        tools: vec!["read".into()],
        permission_mode: PermissionMode::Default,
        at: "2026-11-30T00:00:00.000Z".into(),
        resumed: false,
        format: 1,
    }];
    let usage = || Event::Usage {
        provider: "p".into(),
        model: "m".into(),
        tier: Tier::Code,
        job: Default::default(),
        effort: None,
        usage: Usage {
            input_tokens: 900,
            output_tokens: 40,
            cache_read_tokens: 20_000,
            cache_write_tokens: 300,
            web_searches: 0,
        },
    };
    let mut turn = 0;
    while events.len() < n {
        turn += 1;
        events.push(Event::TurnStarted {
            turn,
            text: format!("turn {turn}: read the file and explain the change"),
        });
        for call in 0..2 {
            let call_id = cox_protocol::CallId::from(format!("toolu_{turn}_{call}").as_str());
            events.push(Event::ToolCallRequested {
                call: ToolCall {
                    id: call_id.clone(),
                    name: "read".into(),
                    input: serde_json::json!({"path": format!("src/file{call}.rs")}),
                    risk: Risk::ReadOnly,
                    subject: format!("/repo/src/file{call}.rs"),
                    segments: None,
                    writes: Vec::new(),
                },
            });
            events.push(usage());
            events.push(Event::ToolCallDone {
                call_id,
                result: ToolResult::ok("fn main() {}\n".repeat(40)),
            });
        }
        for word in 0..30 {
            events.push(Event::TextDelta {
                text: format!("word{word} "),
            });
        }
        events.push(usage());
        events.push(Event::TurnDone {
            stop: StopReason::EndTurn,
        });
    }
    for event in &events {
        store.rollout_append(id, event).map_err(|e| e.to_string())?;
    }
    let path = bench.home.rollout_path(id);
    let bytes = std::fs::metadata(&path).map_err(|e| e.to_string())?.len();
    let mut times = Vec::new();
    for _ in 0..10 {
        let started = Instant::now();
        let rollout = cox_store::read_rollout(&path).map_err(|e| e.to_string())?;
        let resumed = cox_core::rebuild(&rollout.events).map_err(|e| e.to_string())?;
        times.push(started.elapsed());
        assert_eq!(resumed.turns(), turn);
    }
    times.sort();
    println!(
        "resume of a {}-event rollout ({:.1} MB, {turn} turns): read + rebuild min {:.1} ms, median {:.1} ms",
        events.len(),
        bytes as f64 / 1e6,
        ms(times[0]),
        ms(times[times.len() / 2])
    );
    Ok(())
}

/// A session of `turns` user turns, each a read, a bash call and a text
/// answer (three model rounds), through the real session, store, archive
/// and tools: how long each turn takes early (turns 6-15) and late (the last
/// ten), whole and outside its tool calls, and the peak RSS.
fn long(turns: usize) -> Result<(), String> {
    use std::fmt::Write as _;
    if turns < 20 {
        return Err("a long session needs at least 20 turns".into());
    }
    // Usage as a model would report it: without it the scripted provider
    // estimates tokens by serialising each whole request, which is its own
    // cost (a real provider's body is built by the adapter), not the core's.
    let usage = "{ input_tokens = 2000, output_tokens = 40 }";
    let mut toml = String::new();
    for turn in 1..=turns {
        let _ = writeln!(
            toml,
            "[[turn]]\nusage = {usage}\n[[turn.tool_call]]\nname = \"read\"\ninput = {{ path = \"notes.txt\" }}\n\
             [[turn]]\nusage = {usage}\n[[turn.tool_call]]\nname = \"bash\"\ninput = {{ command = \"echo turn {turn}\" }}\n\
             [[turn]]\nusage = {usage}\ntext = \"Turn {turn}: the notes say what to do next, and the command ran.\""
        );
    }
    let scenario = Scenario::parse(&toml, "long bench").map_err(|e| e.to_string())?;
    let bench = Bench::new()?;
    let notes: String = (1..=50)
        .map(|i| format!("note {i:02}: something worth reading again\n"))
        .collect();
    std::fs::write(bench.cwd.join("notes.txt"), notes).map_err(|e| e.to_string())?;
    // Per turn: its wall time, and the time its tools ran (from the end of
    // the model round that asked to the result of the last call).
    let mut spans: Vec<(Duration, Duration)> = Vec::with_capacity(turns);
    let mut started = Instant::now();
    let mut asked = None;
    let mut in_tools = Duration::ZERO;
    let mut errors = 0;
    bench.run(scenario, turns, |event| match event {
        Event::TurnStarted { .. } => {
            started = Instant::now();
            in_tools = Duration::ZERO;
        }
        Event::Usage { .. } => asked = Some(Instant::now()),
        Event::ToolCallDone { .. } => {
            if let Some(at) = asked.take() {
                in_tools += at.elapsed();
            }
        }
        Event::TurnDone { .. } => spans.push((started.elapsed(), in_tools)),
        Event::Notice { level, .. } if *level == cox_protocol::types::NoticeLevel::Error => {
            errors += 1;
        }
        _ => {}
    })?;
    if errors > 0 || spans.len() != turns {
        return Err(format!(
            "the session did not run cleanly: {errors} errors, {} of {turns} turns",
            spans.len()
        ));
    }
    let median = |slice: &[(Duration, Duration)], outside: bool| {
        let mut times: Vec<Duration> = slice
            .iter()
            .map(|(wall, tools)| {
                if outside {
                    wall.saturating_sub(*tools)
                } else {
                    *wall
                }
            })
            .collect();
        times.sort();
        times[times.len() / 2]
    };
    let early = &spans[5..15];
    let late = &spans[turns - 10..];
    let (early_out, late_out) = (median(early, true), median(late, true));
    println!(
        "{turns} turns (read, bash, text each): turn ~10 {:.2} ms whole, {:.3} ms outside tools; \
         turn ~{turns} {:.2} ms whole, {:.3} ms outside tools ({:.2}x)",
        ms(median(early, false)),
        ms(early_out),
        ms(median(late, false)),
        ms(late_out),
        late_out.as_secs_f64() / early_out.as_secs_f64().max(1e-9)
    );
    Ok(())
}

/// Total request bytes of a long session with and without dedup and
/// microcompaction.
fn context_bytes(turns: usize) -> Result<(), String> {
    use std::fmt::Write as _;
    let mut toml = String::new();
    for turn in 1..=turns {
        let _ = writeln!(
            toml,
            "[[turn]]\n[[turn.tool_call]]\nname = \"read\"\ninput = {{ path = \"big.txt\" }}\n[[turn.tool_call]]\nname = \"read\"\ninput = {{ path = \"small.txt\" }}"
        );
        if turn % 5 == 0 {
            let _ = writeln!(
                toml,
                "[[turn]]\n[[turn.tool_call]]\nname = \"edit\"\ninput = {{ path = \"small.txt\", old_string = \"rev {}\", new_string = \"rev {turn}\" }}",
                turn - 5
            );
        }
        if turn % 3 == 0 {
            let _ = writeln!(
                toml,
                "[[turn]]\n[[turn.tool_call]]\nname = \"bash\"\ninput = {{ command = \"seq 1 11000\" }}"
            );
        }
        let _ = writeln!(toml, "[[turn]]\ntext = \"Turn {turn} done.\"");
    }
    let scenario = Scenario::parse(&toml, "context bench").map_err(|e| e.to_string())?;
    let mut results = Vec::new();
    for (label, context) in [
        (
            "default [context]",
            cox_protocol::config::ContextConfig::default(),
        ),
        (
            "dedup and microcompaction off",
            cox_protocol::config::ContextConfig {
                dedup_window_turns: 0,
                microcompact_after_turns: 0,
                ..cox_protocol::config::ContextConfig::default()
            },
        ),
    ] {
        let bench = Bench::new()?;
        let big: String = (1..=400)
            .map(|i| format!("big file line {i:04} with some words\n"))
            .collect();
        std::fs::write(bench.cwd.join("big.txt"), &big).map_err(|e| e.to_string())?;
        let small: String = std::iter::once("rev 0\n".to_owned())
            .chain((1..60).map(|i| format!("small {i}\n")))
            .collect();
        std::fs::write(bench.cwd.join("small.txt"), small).map_err(|e| e.to_string())?;
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let provider =
            ScriptedProvider::new(scenario.clone()).with_request_log(std::sync::Arc::clone(&log));
        let mut errors = 0;
        bench.run_with(
            provider,
            context,
            turns,
            |event| {
                if let Event::Notice { level, .. } = event
                    && *level == cox_protocol::types::NoticeLevel::Error
                {
                    errors += 1;
                }
            },
            None,
        )?;
        let requests = log.lock().map_err(|e| e.to_string())?;
        let bytes: usize = requests
            .iter()
            .map(|r| serde_json::to_vec(&cox_bench_body(r)).map_or(0, |b| b.len()))
            .sum();
        let last = requests.last().map_or(0, |r| {
            serde_json::to_vec(&cox_bench_body(r)).map_or(0, |b| b.len())
        });
        println!(
            "{label}: {} requests, {:.2} MB sent in all, the last one {:.1} KB{}",
            requests.len(),
            bytes as f64 / 1e6,
            last as f64 / 1e3,
            if errors > 0 { " (errors!)" } else { "" }
        );
        results.push(bytes);
    }
    println!(
        "dedup + microcompaction send {:.0} % fewer bytes",
        100.0 * (1.0 - results[0] as f64 / results[1] as f64)
    );
    Ok(())
}

/// A request as the Anthropic adapter would send it.
fn cox_bench_body(request: &cox_protocol::provider::Request) -> serde_json::Value {
    cox_providers::anthropic::request::body(request)
}

/// One session and `n` usage rows over twelve months in `$COX_HOME/cox.db`.
fn ledger(n: usize) -> Result<(), String> {
    let home = CoxHome::resolve(None).map_err(|e| e.to_string())?;
    home.prepare().map_err(|e| e.to_string())?;
    let db = cox_store::Db::open(&home.db_path()).map_err(|e| e.to_string())?;
    let id = SessionId::generate().to_string();
    db.start_session(&cox_store::SessionRow {
        id: id.clone(),
        created_at: "2025-12-01T00:00:00.000Z".into(),
        updated_at: "2026-11-30T00:00:00.000Z".into(),
        cwd: "/repo".into(),
        project_slug: "repo".into(),
        title: None,
        parent_id: None,
        rollout_path: "/dev/null".into(),
        turns: 0,
        cost_usd: 0.0,
        state: cox_protocol::store::SessionState::Closed,
        provider: Some("anthropic".into()),
        model: Some("claude-sonnet-5".into()),
        forked: false,
    })
    .map_err(|e| e.to_string())?;
    let started = Instant::now();
    for i in 0..n {
        let month = i % 12;
        let (year, month) = if month == 0 {
            (2025, 12)
        } else {
            (2026, month)
        };
        let day = i % 28 + 1;
        db.insert_usage(&cox_store::UsageRow {
            id: 0,
            session_id: id.clone(),
            turn: u32::try_from(i / 3 + 1).unwrap_or(u32::MAX),
            job: "main".into(),
            tier: "code".into(),
            provider: "anthropic".into(),
            model: if i % 3 == 0 {
                "claude-haiku-4-5"
            } else {
                "claude-sonnet-5"
            }
            .into(),
            effort: (i % 2 == 0).then(|| "medium".into()),
            input_tokens: 900,
            output_tokens: 40,
            cache_read_tokens: 20_000,
            cache_write_tokens: 300,
            context_tokens: 21_200,
            estimated: false,
            cost_usd: 0.0123,
            latency_ms: 2_000,
            created_at: format!("{year:04}-{month:02}-{day:02}T12:00:00.000Z"),
        })
        .map_err(|e| e.to_string())?;
    }
    let took = started.elapsed();
    println!(
        "{n} usage rows written to {} in {:.0} ms ({:.1} µs per row)",
        home.db_path().display(),
        ms(took),
        us(took) / n as f64
    );
    Ok(())
}

/// Creating a new `cox.db`, N times.
fn db_create(n: usize) -> Result<(), String> {
    let dir = tempdir::Dir::new("db").map_err(|e| e.to_string())?;
    let mut opens = Vec::with_capacity(n);
    let mut closes = Vec::with_capacity(n);
    for i in 0..n {
        let folder = dir.0.join(i.to_string());
        std::fs::create_dir(&folder).map_err(|e| e.to_string())?;
        let path = folder.join("cox.db");
        let started = Instant::now();
        let db = cox_store::Db::open(&path).map_err(|e| e.to_string())?;
        opens.push(started.elapsed());
        let started = Instant::now();
        drop(db);
        closes.push(started.elapsed());
    }
    opens.sort();
    closes.sort();
    let median = |v: &[Duration]| ms(v[v.len() / 2]);
    println!(
        "create a new cox.db ({n} times): Db::open min {:.2} ms, median {:.2} ms; close min {:.2} ms, median {:.2} ms",
        ms(opens[0]),
        median(&opens),
        ms(closes[0]),
        median(&closes)
    );
    Ok(())
}

fn turns(n: usize) -> Result<(), String> {
    const PER_SESSION: usize = 10;
    let sessions = n.div_ceil(PER_SESSION);
    let mut toml = String::new();
    for _ in 0..PER_SESSION {
        toml.push_str("[[turn]]\ntext = \"Done: nothing to change.\"\n");
    }
    let scenario = Scenario::parse(&toml, "bench").map_err(|e| e.to_string())?;
    let bench = Bench::new()?;
    let mut events = 0usize;
    let start = Instant::now();
    for _ in 0..sessions {
        bench.run(scenario.clone(), PER_SESSION, |_| events += 1)?;
    }
    let elapsed = start.elapsed();
    let turns = sessions * PER_SESSION;
    println!(
        "turns: {turns} in {sessions} sessions, {events} events, {:.1} ms",
        ms(elapsed)
    );
    println!(
        "core overhead per turn (no tools, rollout on disk): {:.1} µs",
        us(elapsed) / turns as f64
    );
    println!("events/s: {:.0}", events as f64 / elapsed.as_secs_f64());
    Ok(())
}

fn deltas(n: usize) -> Result<(), String> {
    let text = "x".repeat(n);
    let toml = format!("[[turn]]\nchunk_chars = 1\ntext = \"{text}\"\n");
    let scenario = Scenario::parse(&toml, "bench").map_err(|e| e.to_string())?;
    let bench = Bench::new()?;
    let mut renderer = Renderer::new(std::io::sink(), OutputFormat::StreamJson, Instant::now());
    let mut deltas = 0usize;
    let start = Instant::now();
    bench.run(scenario, 1, |event| {
        deltas += usize::from(matches!(event, Event::TextDelta { .. }));
        renderer.event(event);
    })?;
    renderer.finish();
    let elapsed = start.elapsed();
    println!(
        "{deltas} deltas through the session and stream-json: {:.1} ms",
        ms(elapsed)
    );
    println!("deltas/s: {:.0}", deltas as f64 / elapsed.as_secs_f64());
    Ok(())
}

fn exec(runs: usize, command: &[String]) -> Result<(), String> {
    let Some((program, rest)) = command.split_first() else {
        return Err("no command given".into());
    };
    let mut walls = Vec::with_capacity(runs);
    let mut peak_kb = 0i64;
    let mut codes = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let child = Command::new(program)
            .args(rest)
            .stdout(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("{program}: {e}"))?;
        let (code, maxrss_kb) = wait_with_rusage(child.id())?;
        walls.push(start.elapsed());
        peak_kb = peak_kb.max(maxrss_kb);
        codes.push(code);
    }
    walls.sort();
    let _ = std::io::stdout().flush();
    println!("command: {}", command.join(" "));
    println!(
        "runs: {runs}, wall min {:.2} ms, median {:.2} ms, max {:.2} ms",
        ms(walls[0]),
        ms(walls[walls.len() / 2]),
        ms(walls[walls.len() - 1])
    );
    println!("peak RSS (command): {:.1} MB", peak_kb as f64 / 1024.0);
    codes.dedup();
    println!("exit codes: {codes:?}");
    Ok(())
}

/// Waits for `pid` and returns its exit code and peak RSS in KiB.
fn wait_with_rusage(pid: u32) -> Result<(i32, i64), String> {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = libc::pid_t::try_from(pid).map_err(|e| e.to_string())?;
    // SAFETY: `status` and `usage` are valid for writes; `pid` is our child.
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if got != pid {
        return Err(format!("wait4 failed: {}", std::io::Error::last_os_error()));
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    Ok((code, usage.ru_maxrss))
}

fn own_peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
