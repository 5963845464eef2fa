//! `cox`: the full command line. `cox run -p` runs one task headless; the
//! terminal UI (plain `cox`) arrives with its own issue.

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
            None => {
                let resume = match (&cli.resume, cli.continue_) {
                    (Some(id), _) => {
                        format!("; resume it headless with `cox run --resume {id} -p \"…\"`")
                    }
                    (None, true) => {
                        "; continue headless with `cox run --continue -p \"…\"`".to_owned()
                    }
                    (None, false) => "; run a task with `cox run -p \"…\"`".to_owned(),
                };
                eprintln!("cox: error: the terminal UI is not in this build yet{resume}");
                1
            }
        },
    };
    std::process::exit(code);
}
