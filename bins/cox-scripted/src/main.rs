//! `cox-scripted`: `cox run` with the scripted provider only. Deterministic
//! and offline: it replays a TOML scenario (`--scenario` or `COX_SCENARIO`)
//! through the real session, tools and rollout.

use cox_run::{HeadlessCli, HeadlessCommand, Parsed};

fn main() {
    let code = match cox_run::parse::<HeadlessCli>(std::env::args_os()) {
        Parsed::Exit(code) => code,
        Parsed::Args(cli) => match cli.command {
            HeadlessCommand::Run(args) => cox_run::execute(args, cox_run::scripted_provider),
        },
    };
    std::process::exit(code);
}
