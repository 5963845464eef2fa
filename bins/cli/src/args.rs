//! The flags of a session, shared by every binary and every place they
//! can be given.
//!
//! One [`RunArgs`] holds them all. `cox` flattens it both at the top level
//! (for the terminal UI and for `cox -p`, Claude Code's habit) and under
//! `run`; the two are merged, so a flag means the same before or after the
//! subcommand, and one given in both places with different values is
//! refused by name. A flag that means nothing where it was given (a
//! headless-only flag for the terminal UI, a session flag before `cox
//! sessions`) is refused, never dropped.
//!
//! Parsing happens in two stages: clap turns the command line into
//! [`RunArgs`] (raw, as typed), and [`crate::commands::run::execute`] checks what clap
//! cannot (an empty prompt, a missing folder) before anything starts. A
//! usage error prints clap's whole report and exits 1, never clap's 2,
//! which scripts would read as "a call was denied".
//!
//! The `COX_*` variable of a flag (`COX_MODEL` for `--model`) is read here,
//! by clap, on the flag's argument, and kept apart from a typed value
//! ([`Given`]): it never counts as a flag given before a subcommand or on
//! both sides of `run`, and it is checked where it is used, with a line
//! naming the variable.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, ValueEnum};
use cox_protocol::provider::Effort;
use cox_protocol::types::{PermissionMode, SandboxMode};

use crate::config::ModeName;

mod claude_only;
mod sdk_flags;
use crate::given::{self, FlagOrEnv, Given};
pub use claude_only::{CLAUDE_CODE_ONLY, claude_code_only};
pub use sdk_flags::{InputFormat, SdkFlags};

/// A flag's value given before the subcommand (`outer`) and after it
/// (`inner`): either, or both when they agree.
fn one<T: PartialEq + std::fmt::Debug>(
    flag: &str,
    inner: Option<T>,
    outer: Option<T>,
) -> Result<Option<T>, String> {
    match (inner, outer) {
        (Some(a), Some(b)) if a != b => Err(format!(
            "{flag} is given twice, as {b:?} before the subcommand and as {a:?} after it: give it once"
        )),
        (a, b) => Ok(a.or(b)),
    }
}

/// The flags of a session: what plain `cox` (the terminal UI), `cox -p`
/// and `cox run` share. Every field is an `Option` (or a list, or a switch
/// off by default), so a value given before the subcommand and one given
/// after can be told apart and merged ([`RunArgs::merge`]).
#[derive(Args, Debug, Clone, Default, PartialEq)]
pub struct RunArgs {
    /// The task for the model, run headless. `-p -` (or `-p` with nothing
    /// after it) reads it from stdin; text piped into `-p "…"` is sent
    /// after the prompt.
    #[arg(
        short = 'p',
        long = "prompt",
        visible_alias = "print",
        value_name = "PROMPT",
        num_args = 0..=1,
        default_missing_value = "-"
    )]
    pub prompt: Option<String>,

    /// The task, as Claude Code takes it: with -p (anywhere before it) it
    /// runs headless; without, the terminal UI opens with it sent.
    #[arg(value_name = "TASK")]
    pub task: Option<String>,

    /// How to print the session: the final text, one JSON result, or every
    /// event as a JSON line [default: text].
    #[arg(long, value_enum)]
    pub output_format: Option<OutputFormat>,

    /// The folder to work in (default: the current folder).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Another folder the session may work in, as the working folder's
    /// peer (acceptEdits covers it, paths in it are not "outside");
    /// repeatable.
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dir: Vec<PathBuf>,

    /// An image (png, jpeg, gif, webp) sent with the prompt, scaled down
    /// to the providers' limits; repeatable. In the terminal UI, name it
    /// in the prompt as @path instead.
    #[arg(short = 'i', long = "image", value_name = "FILE")]
    pub image: Vec<PathBuf>,

    /// Work in the worktree NAME of this repository, on branch NAME
    /// (both created when missing); the checkout you are in is read,
    /// never written.
    #[arg(long, value_name = "NAME")]
    pub worktree: Option<String>,

    /// default, acceptEdits, auto, plan or bypassPermissions.
    #[arg(
        long,
        value_name = "MODE",
        env = "COX_PERMISSION_MODE",
        hide_env = true,
        value_parser = FlagOrEnv(parse_mode)
    )]
    pub permission_mode: Option<Given<PermissionMode>>,

    /// Same as --permission-mode bypassPermissions: every call runs
    /// without asking, deny rules still apply.
    #[arg(long)]
    pub dangerously_skip_permissions: bool,

    /// How far shell commands reach: read-only, workspace-write (writes in
    /// the workspace only, no network; the default) or danger-full-access
    /// (no OS sandbox). Wins over `[sandbox] mode`.
    #[arg(long, value_name = "MODE", value_parser = parse_sandbox_mode)]
    pub sandbox: Option<SandboxMode>,

    #[command(flatten)]
    pub rules: RuleFlags,

    #[command(flatten)]
    pub sdk: SdkFlags,

    /// What a call that would ask does. Headless runs cannot ask: `never`
    /// denies it and tells the model why [default: never].
    #[arg(long, value_enum)]
    pub approve: Option<Approve>,

    /// Stop after this many model rounds in the turn.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,

    /// Stop the session once it has cost this many US dollars (the
    /// session cap of `[budget]`, for this run).
    #[arg(long, value_name = "USD", value_parser = parse_usd)]
    pub max_budget_usd: Option<f64>,

    /// Text added to the end of the system prompt, for this session.
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,

    /// In text format, also print each tool call and how it ended on
    /// stderr; with stream-json, print Claude Code's frames.
    #[arg(long)]
    pub verbose: bool,

    /// The session's name, as `cox sessions` and the terminal UI show it
    /// (no title is made for it).
    #[arg(short = 'n', long, value_name = "NAME")]
    pub name: Option<String>,

    /// Subagents for this session, as JSON (`{"name": {"description",
    /// "prompt", "tools", "model"}}`), beside and over those of the
    /// agents folders.
    #[arg(long, value_name = "JSON")]
    pub agents: Option<String>,

    /// The log at debug level for this run (or with the filter given, as
    /// COX_LOG takes it), in $COX_HOME/logs.
    #[arg(short = 'd', long, value_name = "FILTER", num_args = 0..=1, default_missing_value = "debug")]
    pub debug: Option<String>,

    /// The provider: anthropic, openai (or any OpenAI-compatible server)
    /// or scripted; also COX_PROVIDER.
    #[arg(
        long,
        value_name = "NAME",
        env = "COX_PROVIDER",
        hide_env = true,
        value_parser = FlagOrEnv(non_empty)
    )]
    pub provider: Option<Given<String>>,

    /// The model main turns run on; also COX_MODEL.
    #[arg(
        long,
        value_name = "MODEL",
        env = "COX_MODEL",
        hide_env = true,
        value_parser = FlagOrEnv(non_empty)
    )]
    pub model: Option<Given<String>>,

    /// How hard main turns think: low, medium, high or xhigh (clamped to
    /// what the model supports); also COX_EFFORT.
    #[arg(
        long,
        value_name = "EFFORT",
        env = "COX_EFFORT",
        hide_env = true,
        value_parser = FlagOrEnv(parse_effort)
    )]
    pub effort: Option<Given<Effort>>,

    /// architect (plan permissions, main turns on the think tier) or editor
    /// (your permissions, the code tier).
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<ModeName>,

    /// Same as --mode architect.
    #[arg(long, conflicts_with = "mode")]
    pub deep: bool,

    /// Pick up session ID (or a unique prefix of it): its history and turn
    /// count go on, in its folder unless --cwd says otherwise.
    #[arg(short = 'r', long, value_name = "ID", conflicts_with = "continue_")]
    pub resume: Option<String>,

    /// Pick up the newest session of this folder.
    #[arg(short = 'c', long = "continue")]
    pub continue_: bool,

    /// With --resume or --continue: go on as a new session whose history
    /// starts as a copy of that one (which is left as it was).
    #[arg(long)]
    pub fork_session: bool,

    /// Record every provider exchange to FILE, a scenario the scripted
    /// provider replays (`--scenario FILE`).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    /// The scenario the scripted provider replays; also COX_SCENARIO.
    #[arg(
        long,
        value_name = "FILE",
        env = "COX_SCENARIO",
        hide_env = true,
        value_parser = FlagOrEnv(clap::builder::PathBufValueParser::new())
    )]
    pub scenario: Option<Given<PathBuf>>,

    /// MCP servers from FILE (Claude Code's `{"mcpServers": …}`), or from
    /// the JSON text itself; may be given more than once, later files
    /// winning by server name.
    #[arg(long = "mcp-config", value_name = "FILE|JSON")]
    pub mcp_config: Vec<String>,

    /// Only the servers of --mcp-config: none from config.toml,
    /// ~/.claude.json or .mcp.json.
    #[arg(long)]
    pub strict_mcp_config: bool,

    /// Start no MCP server at all.
    #[arg(long, conflicts_with_all = ["mcp_config", "strict_mcp_config"])]
    pub no_mcp: bool,

    /// Run no hook at all (from any settings file, config or plugin).
    #[arg(long)]
    pub no_hooks: bool,

    /// A plugin in Claude Code's layout to load for this session, besides
    /// those in $COX_HOME/plugins; repeatable.
    #[arg(long = "plugin-dir", value_name = "DIR")]
    pub plugin_dir: Vec<PathBuf>,
}

impl RunArgs {
    /// The positional task joined to `-p`, as Claude Code reads them: a
    /// `-p` given no value of its own (`cox -p --output-format json
    /// "task"`) takes the task; without `-p`, the task is the terminal
    /// UI's first prompt, returned.
    ///
    /// # Errors
    /// Both `-p "…"` and a task: two prompts.
    pub fn take_task(&mut self) -> Result<Option<String>, String> {
        let Some(task) = self.task.take() else {
            return Ok(None);
        };
        match self.prompt.as_deref() {
            None => Ok(Some(task)),
            // `-p` alone (its value would be stdin): the task is the
            // prompt, and text piped in still follows it.
            Some("-") => {
                self.prompt = Some(task);
                Ok(None)
            }
            Some(given) => Err(format!(
                "two prompts: -p {given:?} and {task:?}; give the task once, after -p or as -p's \
                 value"
            )),
        }
    }

    /// These flags, given after the subcommand, over `outer`, the same
    /// flags given before it. A value given in both places must agree;
    /// lists add up.
    ///
    /// # Errors
    /// A flag given twice with different values, named.
    pub fn merge(self, outer: RunArgs) -> Result<RunArgs, String> {
        // A typed value beats its variable's on either side (the
        // variable is there on both); two typed ones must agree.
        fn given<T: PartialEq + std::fmt::Debug>(
            flag: &str,
            inner: Option<Given<T>>,
            outer: Option<Given<T>>,
        ) -> Result<Option<Given<T>>, String> {
            match (inner, outer) {
                (Some(Given::Flag(a)), Some(Given::Flag(b))) if a != b => Err(format!(
                    "{flag} is given twice, as {b:?} before the subcommand and as {a:?} after it: give it once"
                )),
                (None | Some(Given::Env(_)), Some(outer @ Given::Flag(_))) => Ok(Some(outer)),
                (inner, outer) => Ok(inner.or(outer)),
            }
        }
        fn list<T>(mut outer: Vec<T>, inner: Vec<T>) -> Vec<T> {
            outer.extend(inner);
            outer
        }
        let merged = RunArgs {
            prompt: one("-p/--prompt", self.prompt, outer.prompt)?,
            task: one("the task", self.task, outer.task)?,
            output_format: one("--output-format", self.output_format, outer.output_format)?,
            cwd: one("--cwd", self.cwd, outer.cwd)?,
            add_dir: list(outer.add_dir, self.add_dir),
            image: list(outer.image, self.image),
            worktree: one("--worktree", self.worktree, outer.worktree)?,
            permission_mode: given(
                "--permission-mode",
                self.permission_mode,
                outer.permission_mode,
            )?,
            dangerously_skip_permissions: self.dangerously_skip_permissions
                || outer.dangerously_skip_permissions,
            sandbox: one("--sandbox", self.sandbox, outer.sandbox)?,
            rules: RuleFlags {
                allow: list(outer.rules.allow, self.rules.allow),
                ask: list(outer.rules.ask, self.rules.ask),
                deny: list(outer.rules.deny, self.rules.deny),
                allowed_tools: list(outer.rules.allowed_tools, self.rules.allowed_tools),
                disallowed_tools: list(outer.rules.disallowed_tools, self.rules.disallowed_tools),
            },
            approve: one("--approve", self.approve, outer.approve)?,
            sdk: self.sdk.merge(outer.sdk)?,
            max_turns: one("--max-turns", self.max_turns, outer.max_turns)?,
            max_budget_usd: one(
                "--max-budget-usd",
                self.max_budget_usd,
                outer.max_budget_usd,
            )?,
            append_system_prompt: one(
                "--append-system-prompt",
                self.append_system_prompt,
                outer.append_system_prompt,
            )?,
            verbose: self.verbose || outer.verbose,
            name: one("--name", self.name, outer.name)?,
            agents: one("--agents", self.agents, outer.agents)?,
            debug: one("--debug", self.debug, outer.debug)?,
            provider: given("--provider", self.provider, outer.provider)?,
            model: given("--model", self.model, outer.model)?,
            effort: given("--effort", self.effort, outer.effort)?,
            mode: one("--mode", self.mode, outer.mode)?,
            deep: self.deep || outer.deep,
            resume: one("--resume", self.resume, outer.resume)?,
            continue_: self.continue_ || outer.continue_,
            fork_session: self.fork_session || outer.fork_session,
            record: one("--record", self.record, outer.record)?,
            scenario: given("--scenario", self.scenario, outer.scenario)?,
            mcp_config: list(outer.mcp_config, self.mcp_config),
            strict_mcp_config: self.strict_mcp_config || outer.strict_mcp_config,
            no_mcp: self.no_mcp || outer.no_mcp,
            no_hooks: self.no_hooks || outer.no_hooks,
            plugin_dir: list(outer.plugin_dir, self.plugin_dir),
        };
        if merged.no_mcp && (merged.strict_mcp_config || !merged.mcp_config.is_empty()) {
            return Err("--no-mcp cannot be used with --mcp-config or --strict-mcp-config".into());
        }
        if merged.resume.is_some() && merged.continue_ {
            return Err("--resume and --continue cannot be used together".into());
        }
        if merged.fork_session && merged.resume.is_none() && !merged.continue_ {
            return Err(
                "--fork-session needs --resume ID or --continue: it forks that session".into(),
            );
        }
        if merged.deep && merged.mode.is_some() {
            return Err("--deep and --mode cannot be used together".into());
        }
        Ok(merged)
    }

    /// The flags that make sense only headless, if any was given: the
    /// terminal UI refuses them rather than ignore them.
    #[must_use]
    pub fn headless_only(&self) -> Option<&'static str> {
        if self.output_format.is_some() {
            Some("--output-format")
        } else if self.approve.is_some() {
            Some("--approve")
        } else if self.verbose {
            Some("--verbose")
        } else if !self.image.is_empty() {
            Some("--image")
        } else if self.sdk.input_format.is_some() {
            Some("--input-format")
        } else if self.sdk != SdkFlags::default() {
            Some("the Claude Agent SDK's flags (--system-prompt, --tools, …)")
        } else {
            None
        }
    }

    /// The permission mode these flags ask for, before the environment and
    /// the config files: `--permission-mode`, or
    /// `--dangerously-skip-permissions` (never `COX_PERMISSION_MODE`).
    ///
    /// # Errors
    /// Both given, naming different modes.
    pub fn mode_flag(&self) -> Result<Option<PermissionMode>, String> {
        let typed = given::flag(self.permission_mode.as_ref()).copied();
        match (typed, self.dangerously_skip_permissions) {
            (Some(mode), true) if mode != PermissionMode::BypassPermissions => Err(format!(
                "--dangerously-skip-permissions means --permission-mode bypassPermissions, \
                 but --permission-mode {mode} was given too: give one"
            )),
            (_, true) => Ok(Some(PermissionMode::BypassPermissions)),
            (mode, false) => Ok(mode),
        }
    }
}

/// The help's table of Claude Code's flags and what they are here.
pub const CLAUDE_CODE_FLAGS: &str = "\
Claude Code flag → cox:
  claude -p \"…\", --print          cox -p \"…\" or cox run -p \"…\" (-p - reads stdin)
  cat f | claude -p \"…\"           the same: piped text is sent after the prompt
  --output-format FORMAT          the same (json has total_cost_usd, permission_denials)
  --verbose                       the same (text: every call on stderr; stream-json: Claude Code's frames)
  -c, --continue / -r, --resume   the same
  --fork-session                  the same (the fork names the old session)
  --model, --permission-mode      the same
  --max-turns, --max-budget-usd   the same
  --allowedTools, --disallowedTools  the same (or --allow / --deny, one rule each)
  --dangerously-skip-permissions  the same: bypassPermissions, deny rules still apply
  --add-dir DIR                   the same
  --append-system-prompt TEXT     the same
  --plugin-dir DIR                the same (and $COX_HOME/plugins)
  --mcp-config, --strict-mcp-config  the same

Session flags mean the same before or after `run`.";

/// Permission rules given on the command line (`cox run`, `cox permissions
/// check`), on top of the config files.
#[derive(Args, Debug, Clone, Default, PartialEq)]
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

    /// Claude Code's spelling of --allow: one or more rules separated by
    /// commas or spaces (`"Bash(git diff:*) Edit"`); repeatable.
    #[arg(
        long = "allowedTools",
        visible_alias = "allowed-tools",
        value_name = "RULES"
    )]
    pub allowed_tools: Vec<String>,

    /// Claude Code's spelling of --deny, rules as for --allowedTools.
    #[arg(
        long = "disallowedTools",
        visible_alias = "disallowed-tools",
        value_name = "RULES"
    )]
    pub disallowed_tools: Vec<String>,
}

impl RuleFlags {
    /// These rules with a mode, as the config loader takes them.
    #[must_use]
    pub fn with_mode(&self, mode: Option<PermissionMode>) -> crate::config::PermissionFlags {
        let mut allow = self.allow.clone();
        allow.extend(self.allowed_tools.iter().flat_map(|list| split_rules(list)));
        let mut deny = self.deny.clone();
        deny.extend(
            self.disallowed_tools
                .iter()
                .flat_map(|list| split_rules(list)),
        );
        crate::config::PermissionFlags {
            allow,
            ask: self.ask.clone(),
            deny,
            mode,
            claude: crate::config::claude::Choice::default(),
        }
    }
}

/// Splits Claude Code's `--allowedTools` list: rules separated by commas
/// or white space outside parentheses, so `Bash(git diff:*)` stays whole.
/// A piece with unbalanced parentheses is kept as it is, for the rule
/// parser to refuse by name.
#[must_use]
pub fn split_rules(list: &str) -> Vec<String> {
    let mut rules = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in list.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && (c == ',' || c.is_whitespace()) {
            if !current.is_empty() {
                rules.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.trim().is_empty() {
        rules.push(current);
    }
    rules
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

impl Approve {
    /// The session's approval policy for a headless run: `None` is the
    /// default, `never` (nobody is there to ask).
    #[must_use]
    pub fn policy(flag: Option<Approve>) -> cox_protocol::config::ApprovalPolicy {
        match flag {
            None | Some(Approve::Never) => cox_protocol::config::ApprovalPolicy::Never,
        }
    }
}

pub(crate) fn non_empty(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        Err("the value is empty".into())
    } else {
        Ok(s.to_owned())
    }
}

fn parse_usd(s: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| format!("`{s}` is not an amount in US dollars above zero"))
}

pub(crate) fn parse_effort(s: &str) -> Result<Effort, String> {
    // Claude Code's `max` is the top effort cox knows.
    if s == "max" {
        return Ok(Effort::Xhigh);
    }
    Effort::parse(s).ok_or_else(|| format!("unknown effort `{s}` (low, medium, high, xhigh, max)"))
}

pub(crate) fn parse_sandbox_mode(s: &str) -> Result<SandboxMode, String> {
    match s {
        "read-only" => Ok(SandboxMode::ReadOnly),
        "workspace-write" => Ok(SandboxMode::WorkspaceWrite),
        "danger-full-access" => Ok(SandboxMode::DangerFullAccess),
        _ => Err(format!(
            "unknown sandbox mode `{s}` (read-only, workspace-write, danger-full-access)"
        )),
    }
}

pub(crate) fn parse_mode(s: &str) -> Result<PermissionMode, String> {
    s.parse()
        .map_err(|e: cox_protocol::config::UnknownMode| e.to_string())
}

/// The command line of a binary whose only job is `run`: `cox-headless
/// run -p …`, or `cox-headless -p …` as Claude Code's `claude -p`.
#[derive(Parser, Debug)]
#[command(
    name = "cox",
    version,
    about = "cox: a terminal AI coding agent (headless)"
)]
pub struct HeadlessCli {
    #[command(subcommand)]
    pub command: Option<HeadlessCommand>,
    #[command(flatten)]
    pub session: RunArgs,
}

/// The one subcommand of a headless binary.
#[derive(clap::Subcommand, Debug)]
pub enum HeadlessCommand {
    /// Run one task without a terminal UI, then exit.
    #[command(after_help = CLAUDE_CODE_FLAGS)]
    Run(RunArgs),
}

impl HeadlessCli {
    /// The run these flags ask for.
    ///
    /// # Errors
    /// A flag given twice with different values, or no prompt at all.
    pub fn into_run(self) -> Result<RunArgs, String> {
        let mut args = match self.command {
            Some(HeadlessCommand::Run(args)) => args.merge(self.session)?,
            None => self.session,
        };
        // This binary only runs headless: a task alone is the prompt.
        if let Some(task) = args.take_task()? {
            args.prompt = Some(task);
        }
        Ok(args)
    }
}

/// What parsing a command line came to.
pub enum Parsed<T> {
    /// Go on with these arguments.
    Args(T),
    /// Help or version was printed; exit with this code.
    Exit(i32),
}

/// Parses with clap. Help and version exit 0; a usage error prints
/// clap's whole report (the did-you-mean, the valid values, the missing
/// argument's name) and exits 1, never clap's 2, which scripts read as "a
/// call was denied".
pub fn parse<T: Parser>(argv: impl IntoIterator<Item = OsString>) -> Parsed<T> {
    match parse_top::<T>(argv) {
        Parsed::Args((args, _)) => Parsed::Args(args),
        Parsed::Exit(code) => Parsed::Exit(code),
    }
}

/// Parses with clap as [`parse`] does, and also says which of the
/// top-level flags were typed (as `--name`), so a caller can refuse flags
/// that mean nothing before the subcommand that was chosen.
pub fn parse_top<T: Parser>(argv: impl IntoIterator<Item = OsString>) -> Parsed<(T, Vec<String>)> {
    use clap::parser::ValueSource;
    let command = T::command();
    let parsed = command
        .clone()
        .try_get_matches_from(argv)
        .and_then(|matches| Ok((T::from_arg_matches(&matches)?, matches)));
    match parsed {
        Ok((args, matches)) => {
            let typed = command
                .get_arguments()
                .filter(|arg| {
                    matches.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine)
                })
                .map(|arg| match (arg.get_long(), arg.get_short()) {
                    (Some(long), _) => format!("--{long}"),
                    (None, Some(short)) => format!("-{short}"),
                    (None, None) => arg.get_id().to_string(),
                })
                .collect();
            Parsed::Args((args, typed))
        }
        Err(err) => {
            use clap::error::ErrorKind;
            let _ = err.print();
            match err.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => Parsed::Exit(0),
                _ => Parsed::Exit(1),
            }
        }
    }
}

#[cfg(test)]
mod tests;
