//! `cox`: the full command line. `cox run -p` runs one task headless; the
//! terminal UI (plain `cox`) arrives with its own issue.

use clap::{Parser, Subcommand};
use cox_run::{Parsed, RunArgs};

#[derive(Parser, Debug)]
#[command(name = "cox", version, about = "cox: a terminal AI coding agent")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one task without a terminal UI, then exit.
    Run(RunArgs),
    /// Inspect the permission rules.
    #[command(subcommand)]
    Permissions(PermissionsCommand),
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
            None => {
                eprintln!(
                    "cox: error: the terminal UI is not in this build yet; run a task with `cox run -p \"…\"`"
                );
                1
            }
        },
    };
    std::process::exit(code);
}
