//! `cox-headless`: only `cox run -p`, with the smallest dependency tree (no
//! terminal UI, MCP or telemetry crates). For scripts, CI and containers.

use cox_run::{HeadlessCli, HeadlessCommand, Parsed};

fn main() {
    let code = match cox_run::parse::<HeadlessCli>(std::env::args_os()) {
        Parsed::Exit(code) => code,
        Parsed::Args(cli) => match cli.command {
            HeadlessCommand::Run(args) => cox_run::execute(args, cox_run::providers::any_provider),
        },
    };
    std::process::exit(code);
}
