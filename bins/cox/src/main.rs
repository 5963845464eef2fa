//! `cox`: the full command line. Plain `cox` opens the terminal UI; `cox
//! run -p` runs one task headless; the other subcommands read the record.

use clap::{Parser, Subcommand};
use cox_run::{Parsed, RunArgs};

#[derive(Parser, Debug)]
#[command(name = "cox", version, about = "cox: a terminal AI coding agent")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Open session ID (or a unique prefix) in the terminal UI.
    #[arg(long, value_name = "ID")]
    resume: Option<String>,
    /// Open the newest session of this folder in the terminal UI.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    continue_: bool,
    /// The folder to work in (default: the current folder).
    #[arg(long, value_name = "DIR")]
    cwd: Option<std::path::PathBuf>,
    /// default, acceptEdits, auto, plan or bypassPermissions.
    #[arg(long, value_name = "MODE")]
    permission_mode: Option<String>,
    /// The provider: anthropic, openai or scripted.
    #[arg(long, value_name = "NAME")]
    provider: Option<String>,
    /// The model main turns run on.
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// The scenario the scripted provider replays.
    #[arg(long, value_name = "FILE")]
    scenario: Option<std::path::PathBuf>,
    /// architect or editor.
    #[arg(long, value_name = "MODE")]
    mode: Option<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one task without a terminal UI, then exit.
    Run(RunArgs),
    /// Inspect the permission rules.
    #[command(subcommand)]
    Permissions(PermissionsCommand),
    /// Inspect the effective config.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Check keys, COX_HOME, cox.db, git, the sandbox and the price rows:
    /// one row each, exit 1 if any fails.
    Doctor(cox_run::doctor::DoctorArgs),
    /// List the recorded sessions, show one, or search their rollouts.
    Sessions(cox_run::sessions::SessionsArgs),
    /// The usage ledger: per month (the default), per day, the prompt
    /// cache, or one session's calls.
    Stats(cox_run::stats::StatsArgs),
    /// Print an archived tool output whole, or `--lines 60-90` of it.
    Expand(cox_run::expand::ExpandArgs),
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

#[derive(Subcommand, Debug)]
enum ConfigCommand {
    /// The effective config; with --sources, where each key came from.
    Show(cox_run::show::ShowArgs),
}

#[derive(Subcommand, Debug)]
enum PermissionsCommand {
    /// Decide one call and say which rule or step decided it.
    Check(cox_run::check::CheckArgs),
}

/// Plain `cox`: the terminal UI over a session built as `cox run` builds
/// one, with approvals asked of the person.
fn tui(cli: &Cli) -> i32 {
    let mut flags: Vec<std::ffi::OsString> = vec!["cox".into(), "run".into(), "-p".into()];
    // The interactive session takes its prompts from the composer; `run`'s
    // flag parser wants one, and it is never sent.
    flags.push("(interactive)".into());
    let mut add = |name: &str, value: Option<String>| {
        if let Some(value) = value {
            flags.push(format!("--{name}").into());
            flags.push(value.into());
        }
    };
    add("resume", cli.resume.clone());
    add("cwd", cli.cwd.as_ref().map(|p| p.display().to_string()));
    add("permission-mode", cli.permission_mode.clone());
    add("provider", cli.provider.clone());
    add("model", cli.model.clone());
    add(
        "scenario",
        cli.scenario.as_ref().map(|p| p.display().to_string()),
    );
    add("mode", cli.mode.clone());
    if cli.continue_ {
        flags.push("--continue".into());
    }
    let args = match cox_run::parse::<Cli>(flags) {
        Parsed::Args(Cli {
            command: Some(Command::Run(args)),
            ..
        }) => args,
        Parsed::Exit(code) => return code,
        Parsed::Args(_) => return 1,
    };
    cox_tui::run::run(|start| {
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
            cox_run::interactive_session(&args, cox_run::providers::any_provider)
                .map_err(|e| format!("{e:#}"))?;
        Ok((
            session,
            cox_tui::app::Facts {
                branch: facts.branch,
                window: facts.window,
                prices: facts.prices,
                permissions: facts.rules,
                base_mode: facts.permission_mode,
                past: facts.past,
                recent: facts.recent,
                models: facts.models,
            },
        ))
    })
}

fn main() {
    let code = match cox_run::parse::<Cli>(std::env::args_os()) {
        Parsed::Exit(code) => code,
        Parsed::Args(cli) => match cli.command {
            Some(Command::Run(args)) => cox_run::execute(args, cox_run::providers::any_provider),
            Some(Command::Permissions(PermissionsCommand::Check(args))) => {
                cox_run::check::run(&args)
            }
            Some(Command::Config(ConfigCommand::Show(args))) => cox_run::show::run(&args),
            Some(Command::Doctor(args)) => cox_run::doctor::run(&args),
            Some(Command::Sessions(args)) => cox_run::sessions::run(&args),
            Some(Command::Stats(args)) => cox_run::stats::run(&args),
            Some(Command::Expand(args)) => cox_run::expand::run(&args),
            Some(Command::Record(record)) => {
                let argv = std::iter::once("cox".into()).chain(record.command);
                match cox_run::parse::<Cli>(argv) {
                    Parsed::Exit(code) => code,
                    Parsed::Args(Cli {
                        command: Some(Command::Run(mut args)),
                        ..
                    }) => {
                        args.record = Some(record.out);
                        cox_run::execute(args, cox_run::providers::any_provider)
                    }
                    Parsed::Args(_) => {
                        eprintln!(
                            "cox: error: cox record records a run: cox record --out FILE -- run -p \"…\""
                        );
                        1
                    }
                }
            }
            None => tui(&cli),
        },
    };
    std::process::exit(code);
}
