//! `cox`: the full command line. Plain `cox` opens the terminal UI; `cox
//! run -p` runs one task headless; the other subcommands read the record.

mod mcp;

use clap::{Parser, Subcommand};
use cox_cli::{Parsed, RunArgs, commands};

#[derive(Parser, Debug)]
#[command(
    name = "cox",
    version,
    about = "cox: a terminal AI coding agent",
    long_about = "cox: a terminal AI coding agent.\n\n\
        Plain `cox` opens the terminal UI; `cox -p \"…\"` (or `cox run -p \"…\"`) runs one \
        task headless. The session flags below mean the same before or after `run`."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// The session flags, as `cox run` takes them.
    #[command(flatten)]
    session: RunArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one task without a terminal UI, then exit.
    #[command(after_help = cox_cli::args::CLAUDE_CODE_FLAGS)]
    Run(RunArgs),
    /// Serve an editor (Zed, …) over the Agent Client Protocol on stdin and
    /// stdout; the session flags apply to every session it opens.
    Acp(RunArgs),
    /// Inspect the permission rules.
    #[command(subcommand)]
    Permissions(PermissionsCommand),
    /// Inspect the effective config.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Check keys, COX_HOME, cox.db, git, the sandbox and the price rows:
    /// one row each, exit 1 if any fails.
    Doctor(commands::doctor::DoctorArgs),
    /// List the recorded sessions, show one, or search their rollouts.
    Sessions(commands::sessions::SessionsArgs),
    /// The usage ledger: per month (the default), per day, the prompt
    /// cache, or one session's calls.
    Stats(commands::stats::StatsArgs),
    /// Print an archived tool output whole, or `--lines 60-90` of it.
    Expand(commands::expand::ExpandArgs),
    /// Run one command confined as a session here would confine it:
    /// `cox sandbox [--mode M] -- CMD ARGS…`.
    Sandbox(commands::sandbox::SandboxArgs),
    /// Undo turns: `cox rewind SESSION --list`, or `--to N` with `--code`,
    /// `--conversation` or `--both` (`--force` overwrites files changed
    /// outside cox since).
    Rewind(commands::rewind::RewindArgs),
    /// The checkpoint store: `cox checkpoints prune --older-than 30d`.
    #[command(subcommand)]
    Checkpoints(CheckpointsCommand),
    /// MCP servers: `cox mcp list|get|add|remove|trust` (a session here
    /// starts the ones `list` shows), and `cox mcp serve` (cox as one).
    #[command(subcommand)]
    Mcp(McpTop),
    /// Extensions: `cox ext list [--json]` (instruction files, skills,
    /// commands, plugins, hooks, MCP servers) and `cox ext trust` (the
    /// hooks of a project or a plugin).
    #[command(subcommand)]
    Ext(commands::ext::ExtCommand),
    /// Record a session's provider exchanges as a cassette:
    /// `cox record --out FILE -- run -p …`. Replay it offline with
    /// `cox run --scenario FILE -p …`.
    Record(RecordArgs),
}

#[derive(clap::Args, Debug)]
struct RecordArgs {
    /// Where the cassette goes (replaced if it exists).
    #[arg(long, value_name = "FILE")]
    out: std::path::PathBuf,
    /// The command to record, after `--`: `run -p …`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<std::ffi::OsString>,
}

/// `cox mcp`: the client's commands, and `serve`.
#[derive(Subcommand, Debug)]
enum McpTop {
    /// Serve cox as an MCP server on stdin and stdout: the tools `cox`
    /// (run a session on a prompt) and `cox-reply` (continue one); the
    /// session flags apply to every session it runs.
    Serve(RunArgs),
    #[command(flatten)]
    Client(commands::mcp::McpCommand),
}

#[derive(Subcommand, Debug)]
enum CheckpointsCommand {
    /// Forget the pre-images older than an age, of sessions not open.
    Prune(commands::checkpoints::PruneArgs),
}

#[derive(Subcommand, Debug)]
enum ConfigCommand {
    /// The effective config; with --sources, where each key came from.
    Show(commands::config::ShowArgs),
}

#[derive(Subcommand, Debug)]
enum PermissionsCommand {
    /// Decide one call and say which rule or step decided it.
    Check(commands::permissions::CheckArgs),
}

/// The project's notes as the terminal UI's `/memory` reaches them.
/// The worktree a TUI session works in.
#[derive(Debug)]
struct Place(cox_cli::worktree::Worktree);

impl cox_tui::app::Worktree for Place {
    fn branch(&self) -> String {
        self.0.branch.clone()
    }

    fn path(&self) -> String {
        self.0.path.display().to_string()
    }

    fn stat(&self) -> Option<(u64, u64)> {
        cox_cli::worktree::diff_stat(&self.0.path)
    }

    fn held(&self) -> bool {
        cox_cli::worktree::held_here(&self.0.main, &self.0.path)
    }

    fn dirty(&self) -> Result<bool, String> {
        cox_cli::worktree::dirty(&self.0.path).map_err(|e| cox_cli::error_chain(&e))
    }

    fn remove(&self) -> Result<(), String> {
        match cox_cli::worktree::remove_if_clean(&self.0.main, &self.0.path) {
            Ok(cox_cli::worktree::Removal::Removed) => Ok(()),
            Ok(cox_cli::worktree::Removal::Dirty) => Err("it has changes now".into()),
            Err(err) => Err(cox_cli::error_chain(&err)),
        }
    }
}

/// The session's background shells as `/shells` reaches them.
#[derive(Debug)]
struct ShellsView(std::sync::Arc<cox_cli::session::Shells>);

impl cox_tui::app::BackgroundShells for ShellsView {
    fn lines(&self) -> Vec<String> {
        self.0.lines()
    }

    fn stop(&self, id: &str) -> Result<String, String> {
        self.0.stop(id)
    }
}

#[derive(Debug)]
struct Notes(std::sync::Arc<cox_cli::ext::memory::ProjectMemory>);

impl cox_tui::app::Notes for Notes {
    fn add(&self, text: &str) -> Result<String, String> {
        self.0.add(text)
    }

    fn list(&self) -> Result<String, String> {
        self.0.list()
    }

    fn forget(&self, id: i64) -> Result<String, String> {
        self.0.forget(id)
    }
}

/// The session's MCP servers as `/mcp` lists them: the states the
/// session's connections filled in (late ones join as they connect).
#[derive(Debug)]
struct McpView(cox_cli::mcp::Statuses);

impl cox_tui::app::McpServers for McpView {
    fn states(&self) -> Vec<cox_tui::app::McpState> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .map(|e| cox_tui::app::McpState {
                name: e["name"].as_str().unwrap_or_default().to_owned(),
                status: e["status"].as_str().unwrap_or_default().to_owned(),
                detail: e["why"].as_str().unwrap_or_default().to_owned(),
            })
            .collect()
    }
}

/// The session's spans, in the log, as the terminal UI feeds them; they
/// end when the last holder drops them.
struct Spans(cox_cli::telemetry::Watch);

impl std::fmt::Debug for Spans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Spans")
    }
}

impl cox_tui::app::Watcher for Spans {
    fn event(&mut self, event: &cox_protocol::types::Event) {
        self.0.event(event);
    }
}

/// Plain `cox`: the terminal UI over a session built as `cox run` builds
/// one, with approvals asked of the person.
fn tui(args: RunArgs, first: Option<String>) -> i32 {
    if let Some(flag) = args.headless_only() {
        eprintln!(
            "cox: error: {flag} is for headless runs: add -p \"…\" (or use cox run) to run one task without the terminal UI"
        );
        return 1;
    }
    let login_args = args.clone();
    let login = move |server: String, lines: futures::channel::mpsc::UnboundedSender<String>| {
        cox_cli::commands::mcp::login_flow(
            login_args.clone(),
            server,
            Box::new(move |line: &str| {
                let _ = lines.unbounded_send(line.to_owned());
            }),
        )
    };
    let trust_args = args.clone();
    let trust = move |server: String, _lines: futures::channel::mpsc::UnboundedSender<String>| {
        cox_cli::commands::mcp::trust_flow(trust_args.clone(), server)
    };
    // The task given on the command line, sent as the first session's
    // first prompt (never again after /clear or /resume).
    let mut first = first;
    let make = |start| {
        let first = match start {
            cox_tui::run::Start::First => first.take(),
            _ => None,
        };
        let mut args = args.clone();
        match start {
            cox_tui::run::Start::First => {}
            // After /clear a fresh session starts: never the one resumed.
            cox_tui::run::Start::Fresh => {
                args.resume = None;
                args.continue_ = false;
            }
            cox_tui::run::Start::Resume(id) => {
                args.resume = Some(id);
                args.continue_ = false;
            }
        }
        let (session, facts) =
            cox_cli::session::interactive_session(&args, cox_cli::providers::any_provider)
                .map_err(|e| cox_cli::error_chain(&e))?;
        Ok((
            session,
            cox_tui::app::Facts {
                branch: facts.branch,
                sandbox: facts.sandbox,
                window: facts.window,
                prices: facts.prices,
                permissions: facts.rules,
                base_mode: facts.permission_mode,
                past: facts.past,
                recent: facts.recent,
                models: facts.models,
                status_line: facts.status_line,
                notes: Some(std::sync::Arc::new(Notes(facts.memory))),
                watcher: Some(std::sync::Arc::new(std::sync::Mutex::new(Spans(
                    cox_cli::telemetry::Watch::new(facts.catalog),
                )))),
                tier: facts.tier,
                think: facts.think,
                worktree: facts.worktree.map(|w| {
                    std::sync::Arc::new(Place(w)) as std::sync::Arc<dyn cox_tui::app::Worktree>
                }),
                shells: Some(std::sync::Arc::new(ShellsView(facts.shells))),
                cwd: Some(facts.cwd),
                mcp: Some(std::sync::Arc::new(McpView(facts.mcp_servers))),
                first_prompt: first,
            },
        ))
    };
    // A project's hooks wait for the person's word before the session
    // that would run them starts.
    let question =
        cox_cli::ext::hooks::Pending::find(&args).map(|pending| cox_tui::run::TrustQuestion {
            project: pending.cwd.display().to_string(),
            hooks: pending.lines(),
            trust: Box::new(move || pending.trust().map_err(|e| cox_cli::error_chain(&e))),
        });
    let flows = cox_tui::run::McpFlows {
        login: &login,
        trust: &trust,
    };
    cox_tui::run::run(make, &flows, question)
}

/// `cox run` (or `cox record -- run`): the flags after `run` over those
/// before it.
/// A protocol server's session flags (`cox acp`, `cox mcp serve`):
/// merged, and refused where `refused` says its client sets them instead.
fn server_flags(
    command: &str,
    args: RunArgs,
    before: RunArgs,
    refused: impl FnOnce(&RunArgs) -> Vec<(bool, &'static str)>,
) -> Result<RunArgs, i32> {
    let args = args.merge(before).map_err(|err| {
        eprintln!("cox: error: {err}");
        1
    })?;
    if let Some((_, flag)) = refused(&args).into_iter().find(|(given, _)| *given) {
        eprintln!("cox: error: {command} does not take {flag}");
        return Err(1);
    }
    Ok(args)
}

/// `cox mcp serve`: each call sends its prompt and continues a session
/// with cox-reply; stdout carries the protocol.
fn mcp_serve(args: RunArgs, before: RunArgs) -> i32 {
    let flags = server_flags("cox mcp serve", args, before, |args| {
        vec![
            (args.prompt.is_some(), "-p (each call sends its prompt)"),
            (args.task.is_some(), "a task (each call sends its prompt)"),
            (
                args.output_format.is_some(),
                "--output-format (stdout carries the protocol)",
            ),
            (
                args.resume.is_some() || args.continue_,
                "--resume/--continue (cox-reply continues a session)",
            ),
            (
                args.worktree.is_some(),
                "--worktree (each call names its cwd)",
            ),
            (
                !args.image.is_empty(),
                "--image (each call sends its prompt)",
            ),
            (
                args.sdk != cox_cli::args::SdkFlags::default(),
                "the Claude Agent SDK's flags (each call names what it needs)",
            ),
        ]
    });
    flags.map_or_else(|code| code, cox_mcp_serve::serve)
}

/// `cox acp`: the editor sends the prompts, names each session's folder
/// and loads sessions; stdout carries the protocol.
fn acp(args: RunArgs, before: RunArgs) -> i32 {
    let flags = server_flags("cox acp", args, before, |args| {
        vec![
            (args.prompt.is_some(), "-p (the editor sends the prompts)"),
            (args.task.is_some(), "a task (the editor sends the prompts)"),
            (
                args.output_format.is_some(),
                "--output-format (stdout carries the protocol)",
            ),
            (
                args.cwd.is_some(),
                "--cwd (the editor names each session's folder)",
            ),
            (
                args.resume.is_some() || args.continue_,
                "--resume/--continue (the editor loads a session with session/load)",
            ),
            (
                args.worktree.is_some(),
                "--worktree (the editor names each session's folder)",
            ),
            (
                !args.image.is_empty(),
                "--image (the editor sends images in its prompts)",
            ),
            (
                args.sdk != cox_cli::args::SdkFlags::default(),
                "the Claude Agent SDK's flags (the editor speaks ACP)",
            ),
        ]
    });
    flags.map_or_else(|code| code, cox_acp::serve)
}

fn headless(args: RunArgs, before: RunArgs) -> i32 {
    let merged = args.merge(before).and_then(|mut args| {
        // `cox run "task"` runs it headless too.
        if let Some(task) = args.take_task()? {
            args.prompt = Some(task);
        }
        Ok(args)
    });
    match merged {
        Ok(args) => commands::run::execute(args, cox_cli::providers::any_provider),
        Err(err) => {
            eprintln!("cox: error: {err}");
            1
        }
    }
}

/// `cox record --out FILE -- …`: the run, recorded to FILE. A `--record`
/// inside would name a second cassette, and only one is written.
fn recorded(args: RunArgs, before: RunArgs, out: std::path::PathBuf) -> i32 {
    if args.record.is_some() || before.record.is_some() {
        eprintln!(
            "cox: error: cox record --out {} already names the cassette: drop --record from the command after --",
            out.display()
        );
        return 1;
    }
    headless(
        RunArgs {
            record: Some(out),
            ..args
        },
        before,
    )
}

/// The command `word` is a near miss of (one or two letters off), when it
/// is a single word that names none: a typo such as `cox sesions` is not
/// sent to the model as a task. A task after `--` is taken as it is.
fn mistyped_command(word: &str) -> Option<String> {
    use clap::CommandFactory as _;
    if word.contains(char::is_whitespace) || std::env::args().any(|a| a == "--") {
        return None;
    }
    fn distance(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut last = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let here = row[j + 1];
                row[j + 1] = (last + usize::from(ca != *cb))
                    .min(row[j] + 1)
                    .min(here + 1);
                last = here;
            }
        }
        row[b.len()]
    }
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .filter(|name| name.len() > 2)
        .find(|name| distance(word, name) <= 2)
}

/// A session flag typed before a subcommand that runs no session.
fn stray(typed: &[String], command: &str) -> Option<i32> {
    let flag = typed.first()?;
    eprintln!(
        "cox: error: {flag} is a session flag: it goes with cox, cox -p or cox run, not cox {command}"
    );
    Some(1)
}

/// What `cox --version` prints, answered before clap builds the whole
/// command (half of that run's time): the same text clap would print.
const VERSION: &str = concat!("cox ", env!("CARGO_PKG_VERSION"), "\n");

fn main() {
    // A confined command's last step runs before anything else starts.
    cox_cli::sandbox::run_helper_if_asked();
    cox_cli::mcp::install(&mcp::Client);
    #[cfg(feature = "otel")]
    cox_cli::telemetry::export::provide(start_otlp);
    let mut args = std::env::args_os().skip(1);
    if let (Some(flag), None) = (args.next(), args.next())
        && (flag == "--version" || flag == "-V" || flag == "-v")
    {
        use std::io::Write;
        let written = std::io::stdout().write_all(VERSION.as_bytes());
        std::process::exit(i32::from(written.is_err()));
    }
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(refused) = cox_cli::args::claude_code_only(&argv) {
        eprintln!("cox: error: {refused}");
        std::process::exit(1);
    }
    let code = match cox_cli::args::parse_top::<Cli>(argv) {
        Parsed::Exit(code) => code,
        Parsed::Args((cli, typed)) => {
            let name = match &cli.command {
                None | Some(Command::Run(_) | Command::Acp(_)) => None,
                Some(Command::Permissions(_)) => Some("permissions"),
                Some(Command::Config(_)) => Some("config"),
                Some(Command::Doctor(_)) => Some("doctor"),
                Some(Command::Sessions(_)) => Some("sessions"),
                Some(Command::Stats(_)) => Some("stats"),
                Some(Command::Expand(_)) => Some("expand"),
                Some(Command::Sandbox(_)) => Some("sandbox"),
                Some(Command::Rewind(_)) => Some("rewind"),
                Some(Command::Checkpoints(_)) => Some("checkpoints"),
                Some(Command::Mcp(_)) => Some("mcp"),
                Some(Command::Ext(_)) => Some("ext"),
                // `cox record` takes its flags after `--`.
                Some(Command::Record(_)) => Some("record"),
            };
            match name.and_then(|name| stray(&typed, name)) {
                Some(code) => code,
                None => dispatch(cli),
            }
        }
    };
    // What the session exported is sent now, within a bounded wait.
    cox_cli::telemetry::export::finish();
    std::process::exit(code);
}

/// The OTLP exporter of a build with the `otel` feature.
#[cfg(feature = "otel")]
fn start_otlp(
    settings: &cox_cli::telemetry::export::Settings,
) -> Result<std::sync::Arc<dyn cox_protocol::telemetry::Export>, String> {
    let otlp = cox_telemetry::Otlp::start(&settings.traces, &settings.logs, |why| {
        cox_cli::telemetry::export::cannot_start(&why);
    });
    Ok(std::sync::Arc::new(otlp))
}

fn dispatch(cli: Cli) -> i32 {
    match cli.command {
        Some(Command::Run(args)) => headless(args, cli.session),
        Some(Command::Acp(args)) => acp(args, cli.session),
        Some(Command::Permissions(PermissionsCommand::Check(args))) => {
            commands::permissions::run(&args)
        }
        Some(Command::Config(ConfigCommand::Show(args))) => commands::config::run(&args),
        Some(Command::Doctor(args)) => commands::doctor::run(&args),
        Some(Command::Sessions(args)) => commands::sessions::run(&args),
        Some(Command::Stats(args)) => commands::stats::run(&args),
        Some(Command::Sandbox(args)) => commands::sandbox::run(&args),
        Some(Command::Rewind(args)) => commands::rewind::run(&args),
        Some(Command::Checkpoints(CheckpointsCommand::Prune(args))) => {
            commands::checkpoints::prune(&args)
        }
        Some(Command::Expand(args)) => commands::expand::run(&args),
        Some(Command::Mcp(McpTop::Serve(args))) => mcp_serve(args, cli.session),
        Some(Command::Mcp(McpTop::Client(command))) => {
            commands::mcp::run(&command, &RunArgs::default())
        }
        Some(Command::Ext(command)) => commands::ext::run(&command),
        Some(Command::Record(record)) => {
            let argv = std::iter::once("cox".into()).chain(record.command);
            match cox_cli::parse::<Cli>(argv) {
                Parsed::Exit(code) => code,
                Parsed::Args(Cli {
                    command: Some(Command::Run(args)),
                    session,
                }) => recorded(args, session, record.out),
                Parsed::Args(Cli {
                    command: None,
                    session,
                }) if session.prompt.is_some() => recorded(RunArgs::default(), session, record.out),
                Parsed::Args(_) => {
                    eprintln!(
                        "cox: error: cox record records a run: cox record --out FILE -- run -p \"…\""
                    );
                    1
                }
            }
        }
        // `cox -p "…"` and `cox -p [flags] "…"`: Claude Code's ways to
        // run one task headless.
        None if cli.session.prompt.is_some() => headless(RunArgs::default(), cli.session),
        // The Claude Agent SDKs: prompts and control requests on stdin.
        None if cli.session.sdk.streaming() => headless(RunArgs::default(), cli.session),
        // `cox "task"`: the terminal UI, with the task sent.
        None => {
            if let Some(near) = cli.session.task.as_deref().and_then(mistyped_command) {
                eprintln!(
                    "cox: error: {:?} is not a command; did you mean `cox {near}`? (a one-word \
                     task goes after --: cox -- {:?})",
                    cli.session.task.as_deref().unwrap_or_default(),
                    cli.session.task.as_deref().unwrap_or_default(),
                );
                return 1;
            }
            let mut session = cli.session;
            match session.take_task() {
                Ok(first) => tui(session, first),
                Err(err) => {
                    eprintln!("cox: error: {err}");
                    1
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_fast_version_is_what_clap_prints() {
        assert_eq!(super::Cli::command().render_version(), super::VERSION);
    }
}
