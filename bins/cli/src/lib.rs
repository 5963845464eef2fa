//! `cox-cli`: the command line of cox, shared by every binary.
//!
//! The binaries (`cox`, `cox-headless`, `cox-scripted`) only pick their
//! adapters and their set of subcommands; the flags, what they mean, the
//! output formats and the exit codes live here, so they are the same in
//! each. The map:
//!
//! - [`commands`]: one module per subcommand (`run`, `sessions`, `stats`,
//!   `expand`, `config`, `permissions`, `doctor`, …), each with its clap
//!   arguments and a `run` that returns the exit code;
//! - `plan`: a session's settings, every source read once (`Inputs`) and
//!   resolved by one pure function into the `Plan`;
//! - [`session`]: the session every surface runs, built from a command
//!   line and its plan (`cox run`, the terminal UI, editors, subagents);
//! - `sdk`: the Claude Agent SDKs' stream-json surface, handed a builder
//!   of the session by `cox run`;
//! - [`args`]: the session flags and the two-stage parse; [`given`]: a
//!   flag's value told apart from its `COX_*` variable's; `env`: what is
//!   read from the machine (the clock, the git branch, the home folder,
//!   the variables no flag stands for);
//! - [`config`]: the config files, checked and layered; [`providers`]: the
//!   provider and its tier routes; `instructions`: `AGENTS.md` and the
//!   skills; [`ext`]: hooks, plugins, commands and the subagent tool;
//!   [`resume`]: the session to pick up;
//! - [`output`]: a session's events as text, json or stream-json;
//!   `report` and `table`: the record read back, and its tables, for the
//!   commands that only read.
//!
//! Only what another crate uses is public here (the binaries, the
//! terminal UI's and editors' servers, the benchmarks); the rest is the
//! crate's own.
//!
//! Invariants: an error before a session starts is one line on stderr
//! (secrets scrubbed, control characters escaped) and exit 1, never a
//! panic; a usage error is clap's report and exit 1, never clap's 2.

pub mod args;
pub mod attach;
mod classify;
pub mod commands;
pub mod config;
mod env;
pub mod ext;
pub mod given;
mod instructions;
mod log_file;
pub mod mcp;
pub mod output;
mod plan;
mod presence;
pub mod providers;
mod report;
pub mod resume;
pub mod sandbox;
mod sdk;
pub mod session;
mod structured;
mod table;
pub mod telemetry;
pub mod worktree;

use std::io::Write;

use anyhow::Result;

pub use args::{HeadlessCli, HeadlessCommand, OutputFormat, Parsed, RunArgs, parse};

/// Runs a headless binary's command line with `make_provider`.
pub fn headless_main<P, M>(make_provider: M) -> i32
where
    P: cox_protocol::Provider,
    M: FnOnce(&crate::providers::ProviderChoice) -> anyhow::Result<P>,
{
    crate::sandbox::run_helper_if_asked();
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(refused) = args::claude_code_only(&argv) {
        eprintln!("cox: error: {refused}");
        return 1;
    }
    let code = match args::parse::<HeadlessCli>(argv) {
        Parsed::Exit(code) => code,
        Parsed::Args(cli) => match cli.into_run() {
            Ok(args) => crate::commands::run::execute(args, make_provider),
            Err(err) => {
                eprintln!("cox: error: {err}");
                1
            }
        },
    };
    crate::telemetry::export::finish();
    code
}

/// Prints a command's text, or its error as one line; returns the exit
/// code (0, or 1 on an error).
pub(crate) fn print_result(result: Result<String>) -> i32 {
    match result {
        Ok(text) => {
            // A closed pipe (`| head`) is not an error worth a panic.
            let _ = writeln!(std::io::stdout().lock(), "{text}");
            0
        }
        Err(err) => {
            eprintln!("cox: error: {}", one_line(&err));
            1
        }
    }
}

/// An error as one printable line: its chain joined, secrets scrubbed and
/// control characters escaped (an error may quote what a model or a file
/// said).
pub(crate) fn one_line(err: &anyhow::Error) -> String {
    output::printable(&joined_lines(&error_chain(err)))
}

/// An error and its causes, each said once: the messages joined by `": "`
/// as `{:#}` joins them, without repeating a cause a message already says
/// (see [`cox_protocol::error::chain_line`]).
#[must_use]
pub fn error_chain(err: &anyhow::Error) -> String {
    cox_protocol::error::chain_line(err.as_ref())
}

/// `text`'s lines, trimmed, the empty ones dropped, joined by spaces.
pub(crate) fn joined_lines(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
