//! The flags of `cox run`, shared by every binary that offers it.
//!
//! Parsing happens in two stages: clap turns the command line into
//! [`RunArgs`] (raw, as typed), and [`crate::execute`] checks what clap
//! cannot (an empty prompt, a missing folder) before anything starts. A
//! usage error is one line on stderr and exit 1, never clap's multi-line
//! report and its exit 2, which scripts would read as "a call was denied".

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, ValueEnum};
use cox_protocol::provider::Effort;
use cox_protocol::types::PermissionMode;

use crate::config::ModeName;

/// `cox run`: one headless task, then exit.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// The task for the model.
    #[arg(short = 'p', long = "prompt", value_name = "PROMPT")]
    pub prompt: String,

    /// How to print the session: the final text, one JSON result, or every
    /// event as a JSON line.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// The folder to work in (default: the current folder).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// default, acceptEdits, auto, plan or bypassPermissions.
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub permission_mode: Option<PermissionMode>,

    #[command(flatten)]
    pub rules: RuleFlags,

    /// What a call that would ask does. Headless runs cannot ask: `never`
    /// denies it and tells the model why.
    #[arg(long, value_enum, default_value_t = Approve::Never)]
    pub approve: Approve,

    /// Stop after this many model rounds in the turn.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,

    /// Do not run hooks.
    #[arg(long)]
    pub no_hooks: bool,

    /// Do not start MCP servers.
    #[arg(long)]
    pub no_mcp: bool,

    /// The provider: anthropic, openai (or any OpenAI-compatible server)
    /// or scripted; also COX_PROVIDER.
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,

    /// The model main turns run on; also COX_MODEL.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,

    /// How hard main turns think: low, medium, high or xhigh (clamped to
    /// what the model supports); also COX_EFFORT.
    #[arg(long, value_name = "EFFORT", value_parser = parse_effort)]
    pub effort: Option<Effort>,

    /// architect (plan permissions, main turns on the think tier) or editor
    /// (your permissions, the code tier).
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<ModeName>,

    /// Same as --mode architect.
    #[arg(long, conflicts_with = "mode")]
    pub deep: bool,

    /// Pick up session ID (or a unique prefix of it): its history and turn
    /// count go on, in its folder unless --cwd says otherwise.
    #[arg(long, value_name = "ID", conflicts_with = "continue_")]
    pub resume: Option<String>,

    /// Pick up the newest session of this folder.
    #[arg(short = 'c', long = "continue")]
    pub continue_: bool,

    /// Record every provider exchange to FILE, a scenario the scripted
    /// provider replays (`--scenario FILE`).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    /// The scenario the scripted provider replays; also COX_SCENARIO.
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
}

/// Permission rules given on the command line (`cox run`, `cox permissions
/// check`), on top of the config files.
#[derive(Args, Debug, Clone, Default)]
pub struct RuleFlags {
    /// Allow calls matching RULE (Claude Code's grammar, e.g. `Bash(git:*)`);
    /// repeatable.
    #[arg(long = "allow", value_name = "RULE")]
    pub allow: Vec<String>,

    /// Ask before calls matching RULE; repeatable.
    #[arg(long = "ask", value_name = "RULE")]
    pub ask: Vec<String>,

    /// Refuse calls matching RULE, in every mode; repeatable.
    #[arg(long = "deny", value_name = "RULE")]
    pub deny: Vec<String>,
}

impl RuleFlags {
    /// These rules with a mode, as the config loader takes them.
    #[must_use]
    pub fn with_mode(&self, mode: Option<PermissionMode>) -> crate::config::PermissionFlags {
        crate::config::PermissionFlags {
            allow: self.allow.clone(),
            ask: self.ask.clone(),
            deny: self.deny.clone(),
            mode,
        }
    }
}

/// How `cox run` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    StreamJson,
}

/// The headless approval policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Approve {
    Never,
}

fn parse_effort(s: &str) -> Result<Effort, String> {
    Effort::parse(s).ok_or_else(|| format!("unknown effort `{s}` (low, medium, high, xhigh)"))
}

pub(crate) fn parse_mode(s: &str) -> Result<PermissionMode, String> {
    s.parse()
        .map_err(|e: cox_protocol::config::UnknownMode| e.to_string())
}

/// The command line of a binary whose only job is `run`.
#[derive(Parser, Debug)]
#[command(
    name = "cox",
    version,
    about = "cox: a terminal AI coding agent (headless)"
)]
pub struct HeadlessCli {
    #[command(subcommand)]
    pub command: HeadlessCommand,
}

/// The one subcommand of a headless binary.
#[derive(clap::Subcommand, Debug)]
pub enum HeadlessCommand {
    /// Run one task without a terminal UI, then exit.
    Run(RunArgs),
}

/// What parsing a command line came to.
pub enum Parsed<T> {
    /// Go on with these arguments.
    Args(T),
    /// Help or version was printed; exit with this code.
    Exit(i32),
}

/// Parses with clap, turning its errors into one line on stderr and exit 1.
pub fn parse<T: Parser>(argv: impl IntoIterator<Item = OsString>) -> Parsed<T> {
    match T::try_parse_from(argv) {
        Ok(args) => Parsed::Args(args),
        Err(err) => {
            use clap::error::ErrorKind;
            match err.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    let _ = err.print();
                    Parsed::Exit(0)
                }
                ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    let _ = err.print();
                    Parsed::Exit(1)
                }
                _ => {
                    eprintln!("cox: error: {}", one_line(&err.to_string()));
                    Parsed::Exit(1)
                }
            }
        }
    }
}

/// The first line of clap's report, without its `error: ` prefix, plus a
/// pointer to `--help`.
fn one_line(report: &str) -> String {
    let first = report
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("invalid arguments");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    format!("{first} (see --help)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_reports_fold_into_one_line() {
        let report = "error: unexpected argument '--frob' found\n\n  tip: …\n\nUsage: cox run\n";
        assert_eq!(
            one_line(report),
            "unexpected argument '--frob' found (see --help)"
        );
    }

    #[test]
    fn run_flags_parse() {
        let Parsed::Args(cli) = parse::<HeadlessCli>(
            [
                "cox",
                "run",
                "-p",
                "hi",
                "--output-format",
                "stream-json",
                "--permission-mode",
                "acceptEdits",
                "--max-turns",
                "3",
            ]
            .map(OsString::from),
        ) else {
            panic!("valid flags")
        };
        let HeadlessCommand::Run(run) = cli.command;
        assert_eq!(run.prompt, "hi");
        assert_eq!(run.output_format, OutputFormat::StreamJson);
        assert_eq!(run.permission_mode, Some(PermissionMode::AcceptEdits));
        assert_eq!(run.max_turns, Some(3));
        assert_eq!(run.approve, Approve::Never);
    }
}
