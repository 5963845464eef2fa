//! `cox permissions check`: why would this call run, ask, or be refused?
//!
//! It classifies one call with the real tool (so a shell line is split as
//! the session would split it), decides it against the effective config plus
//! the rules given on the command line, and prints the decision, the step or
//! rule that made it, and for a shell line each command with its own verdict.
//! With `--explain`, a shell line also shows the words each command was
//! matched as, the paths it names (resolved as the bash tool resolves them)
//! and what a rough scan found where the split could not follow.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow};
use clap::Args;
use cox_permission::Outcome;
use cox_protocol::CallId;
use cox_protocol::tool::Workspace;
use cox_protocol::types::{ApprovalPolicy, PermissionMode, ToolCall};
use serde_json::{Value, json};

/// `cox permissions check --tool NAME --input JSON`.
#[derive(Args, Debug, Clone)]
pub struct CheckArgs {
    /// The tool, as the model calls it (`bash`, `read`, `mcp__server__tool`).
    #[arg(long, value_name = "NAME")]
    pub tool: String,
    /// The call's input as JSON, e.g. '{"command": "git status"}'.
    #[arg(long, value_name = "JSON")]
    pub input: String,
    /// Extra rules, as with `cox run`.
    #[command(flatten)]
    pub rules: crate::args::RuleFlags,
    /// The permission mode to decide in (default: as `cox run` would
    /// resolve it: `COX_PERMISSION_MODE`, then the config files).
    #[arg(
        long,
        value_name = "MODE",
        env = "COX_PERMISSION_MODE",
        hide_env = true,
        value_parser = crate::given::FlagOrEnv(crate::args::parse_mode)
    )]
    pub permission_mode: Option<crate::given::Given<PermissionMode>>,
    /// Decide as `cox run --dangerously-skip-permissions` would.
    #[arg(long)]
    pub dangerously_skip_permissions: bool,
    /// Decide as `cox run --mode MODE` would (architect: plan).
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<crate::config::ModeName>,
    /// The folder the call would run in (default: the current folder).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// For a shell line, also show what the engine matched: each command's
    /// words after wrappers, git's global options, redirects and resolved
    /// names, the paths the line names, and the names a rough scan found.
    #[arg(long)]
    pub explain: bool,
}

/// Runs the check; returns the exit code (0, or 1 on bad input).
pub fn run(args: &CheckArgs) -> i32 {
    crate::print_result(check(args))
}

fn check(args: &CheckArgs) -> Result<String> {
    let input: Value =
        serde_json::from_str(&args.input).map_err(|e| anyhow!("--input is not JSON: {e}"))?;
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    let cwd = std::fs::canonicalize(&cwd)
        .with_context(|| format!("--cwd {}: cannot open the folder", cwd.display()))?;
    let home = cox_store::CoxHome::resolve(None)?;
    // The very flags `cox run` would get, through the same function.
    let run = crate::RunArgs {
        permission_mode: args.permission_mode.clone(),
        dangerously_skip_permissions: args.dangerously_skip_permissions,
        mode: args.mode,
        rules: args.rules.clone(),
        ..crate::RunArgs::default()
    };
    let mut permissions =
        crate::plan::for_folder(&home, &cwd, &run, crate::session::Consent::Flag)?.permissions;
    let workspace = Workspace::single(cwd);
    // As `cox run` decides: with what the sandbox enforces by itself.
    let policy = crate::sandbox::policy(
        &permissions.sandbox,
        None,
        &workspace,
        crate::env::home_dir().as_deref(),
        home.root(),
        &permissions.engine,
    );
    crate::sandbox::enforce(&mut permissions.engine, &policy);
    let call = classify(&args.tool, input, &workspace, &policy);
    let engine = &permissions.engine;
    let outcome = engine.decide(
        &call,
        permissions.mode,
        ApprovalPolicy::OnRequest,
        permissions.sandbox.mode,
        &[],
    );
    let rows = engine.explain(&call);
    let opaque = call.segments.as_ref().and_then(|s| s.opaque.clone());
    let explained = (args.explain && call.name == "bash")
        .then(|| input_command(&call.input).map(|line| explain(line, &call)))
        .flatten();
    if args.json {
        let commands: Vec<Value> = rows
            .iter()
            .map(|(command, verdict, rule)| json!({"command": command, "verdict": verdict, "rule": rule}))
            .collect();
        let value = json!({
            "decision": outcome.verdict(),
            "reason": outcome.reason(),
            "mode": permissions.mode,
            "mode_source": permissions.mode_source,
            "tool": call.name,
            "risk": call.risk,
            "subject": call.subject,
            "commands": commands,
            "opaque": opaque,
            "warnings": permissions.warnings,
        });
        let mut value = value;
        if let Some((json, _)) = explained {
            value["explain"] = json;
        }
        return Ok(value.to_string());
    }
    let mut out = format!(
        "decision: {}\nreason:   {}\nmode:     {} (from {})\ncall:     {} · risk {} · {}",
        outcome.verdict(),
        outcome.reason(),
        permissions.mode,
        permissions.mode_source,
        call.name,
        call.risk.as_str(),
        call.subject,
    );
    if call.segments.is_some() {
        out.push_str("\ncommands:");
        for (command, verdict, rule) in &rows {
            let rule = rule
                .as_deref()
                .map_or(String::new(), |r| format!("  ({r})"));
            out.push_str(&format!("\n  {verdict:<5}  {command}{rule}"));
        }
        if let Some(opaque) = opaque {
            out.push_str(&format!(
                "\nopaque:   {opaque}: no prefix rule or session grant can allow this line"
            ));
        }
    }
    if let Some((_, text)) = explained {
        out.push_str(&text);
    }
    for warning in &permissions.warnings {
        out.push_str(&format!("\nwarning:  {warning}"));
    }
    if matches!(outcome, Outcome::Ask { .. }) {
        out.push_str("\n(headless `cox run` denies what asks: --approve never)");
    }
    Ok(out)
}

/// The call as a session here would classify it ([`crate::classify`]).
fn classify(
    tool: &str,
    input: Value,
    workspace: &Workspace,
    policy: &cox_sandbox::SandboxPolicy,
) -> ToolCall {
    // Claude Code's spelling (`Bash`, `WebFetch`) names cox's tool.
    let name = crate::ext::agent_tool::CLAUDE_NAMES
        .iter()
        .find(|(theirs, _)| *theirs == tool)
        .map_or_else(|| tool.to_owned(), |(_, ours)| (*ours).to_owned());
    let classified = crate::classify::classify(&name, &input, workspace, policy);
    ToolCall {
        id: CallId::new(),
        name,
        input,
        risk: classified.risk,
        subject: classified.subject,
        segments: classified.segments,
        writes: classified.writes,
    }
}

/// The `command` string of a bash call's input.
fn input_command(input: &Value) -> Option<&str> {
    input.get("command").and_then(Value::as_str)
}

/// What the engine matched for a shell line, as JSON and as text.
fn explain(line: &str, call: &ToolCall) -> (Value, String) {
    let split = cox_bash::split(line);
    let mut text = String::from("\nmatched:");
    let mut commands = Vec::new();
    for command in &split.commands {
        let words: Vec<String> = command.words.iter().map(|w| format!("[{w}]")).collect();
        text.push_str(&format!(
            "\n  {:<11}  {}\n               as {}",
            command.risk.as_str(),
            words.join(" "),
            command.text
        ));
        commands.push(json!({"text": command.text, "words": command.words, "risk": command.risk}));
    }
    let paths = call
        .segments
        .as_ref()
        .map(|s| s.paths.clone())
        .unwrap_or_default();
    for path in &paths {
        let mut notes = Vec::new();
        if path.recursive {
            notes.push("walks it");
        }
        if path.unknown {
            notes.push("only known when it runs");
        }
        if path.outside {
            notes.push("outside the workspace");
        }
        let access = match path.access {
            cox_protocol::types::PathAccess::Read => "reads ",
            cox_protocol::types::PathAccess::Write => "writes",
        };
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!("  ({})", notes.join(", "))
        };
        text.push_str(&format!("\npath:     {access} {}{notes}", path.path));
    }
    if !split.scan.is_empty() {
        text.push_str(&format!(
            "\nscan:     {} (deny and ask rules naming one of these apply)",
            split.scan.join(" ")
        ));
    }
    if split.dynamic {
        text.push_str("\ndynamic:  a command name is only known when the line runs");
    }
    let json = json!({
        "commands": commands,
        "paths": paths,
        "scan": split.scan,
        "dynamic": split.dynamic,
    });
    (json, text)
}
