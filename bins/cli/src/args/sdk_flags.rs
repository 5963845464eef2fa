//! The flags the Claude Agent SDKs pass to the CLI they drive, as cox
//! reads them.
//!
//! Every one is parsed, so an SDK's command line never fails on a name
//! cox does not know; each either takes effect or is refused by
//! [`SdkFlags::refusal`] with a line naming it and why, before anything
//! starts. None is accepted and ignored.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// How prompts arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// `-p` (and stdin piped into it).
    Text,
    /// One JSON object a line on stdin: the Claude Agent SDK's user
    /// messages and control requests (with `--output-format stream-json`).
    StreamJson,
}

/// The SDKs' flags (see the module doc).
#[derive(Args, Debug, Clone, Default, PartialEq)]
pub struct SdkFlags {
    /// `stream-json`: read user messages and control requests (the Claude
    /// Agent SDK's protocol) from stdin, one JSON object a line; needs
    /// --output-format stream-json, which then prints Claude Code's frames.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub input_format: Option<InputFormat>,

    /// The system prompt in place of cox's own ("" keeps cox's, as the
    /// SDKs pass it when none was set).
    #[arg(long, value_name = "TEXT", conflicts_with = "system_prompt_file")]
    pub system_prompt: Option<String>,

    /// --system-prompt, read from FILE.
    #[arg(long, value_name = "FILE")]
    pub system_prompt_file: Option<PathBuf>,

    /// Only these built-in tools, comma-separated, in Claude Code's names
    /// or cox's ("" for none, `default` for all).
    #[arg(long, value_name = "LIST")]
    pub tools: Option<String>,

    /// How asks are answered: `stdio` sends each to the SDK as a
    /// `can_use_tool` control request (with --input-format stream-json).
    #[arg(long, value_name = "TOOL")]
    pub permission_prompt_tool: Option<String>,

    /// Under --input-format stream-json: the raw stream events of each
    /// answer as `stream_event` frames.
    #[arg(long)]
    pub include_partial_messages: bool,

    /// Under --input-format stream-json: every user message is echoed back
    /// as a `user` frame.
    #[arg(long)]
    pub replay_user_messages: bool,

    /// A model to fall back on when the main one is overloaded.
    #[arg(long, value_name = "MODEL", hide = true)]
    pub fallback_model: Option<String>,

    /// The new session's id (a UUID, or cox's own spelling).
    #[arg(long, value_name = "ID")]
    pub session_id: Option<String>,

    /// Claude Code settings (JSON, or a file holding it) for this run:
    /// permissions and hooks as in ~/.claude/settings.json, its mode
    /// under --permission-mode.
    #[arg(long, value_name = "JSON|FILE")]
    pub settings: Option<String>,

    /// Which Claude Code settings files are read: a comma list of user,
    /// project and local (empty: none); the managed file always is.
    #[arg(long, value_name = "LIST")]
    pub setting_sources: Option<String>,

    /// Hook runs as frames of the stream.
    #[arg(long)]
    pub include_hook_events: bool,

    /// Extended thinking: adaptive, enabled or disabled.
    #[arg(long, value_name = "MODE", hide = true)]
    pub thinking: Option<String>,

    /// How thinking is shown.
    #[arg(long, value_name = "MODE", hide = true)]
    pub thinking_display: Option<String>,

    /// A thinking budget in tokens.
    #[arg(long, value_name = "N", hide = true)]
    pub max_thinking_tokens: Option<u32>,

    /// A JSON schema the final answer must validate against; the answer's
    /// JSON is the result's `structured_output`.
    #[arg(long, value_name = "SCHEMA", conflicts_with = "output_schema")]
    pub json_schema: Option<String>,

    /// --json-schema, read from FILE (Codex's flag).
    #[arg(long, value_name = "FILE")]
    pub output_schema: Option<PathBuf>,

    /// Under --input-format stream-json: the SDK may switch the session to
    /// bypassPermissions (set_permission_mode, an approval's setMode),
    /// which it may not otherwise unless the session started in it.
    #[arg(long)]
    pub allow_dangerously_skip_permissions: bool,

    /// Anthropic beta headers.
    #[arg(long, value_name = "LIST", hide = true)]
    pub betas: Option<String>,

    /// A task budget in tokens.
    #[arg(long, value_name = "N", hide = true)]
    pub task_budget: Option<u64>,
}

impl SdkFlags {
    /// The system prompt `--system-prompt` or `--system-prompt-file` sets,
    /// if any: the SDKs pass "" when none was set, and cox's own stays
    /// then.
    ///
    /// # Errors
    /// The file cannot be read.
    pub fn system_prompt(&self) -> anyhow::Result<Option<String>> {
        use anyhow::Context as _;
        Ok(match (&self.system_prompt, &self.system_prompt_file) {
            (Some(text), _) if text.trim().is_empty() => None,
            (Some(text), _) => Some(text.clone()),
            (None, Some(file)) => Some(std::fs::read_to_string(file).with_context(|| {
                format!("--system-prompt-file {}: cannot read it", file.display())
            })?),
            (None, None) => None,
        })
    }

    /// These flags over `outer`, the same given before the subcommand: a
    /// value given in both places must agree.
    ///
    /// # Errors
    /// A flag given twice with different values, named.
    pub fn merge(self, outer: SdkFlags) -> Result<SdkFlags, String> {
        use super::one;
        Ok(SdkFlags {
            input_format: one("--input-format", self.input_format, outer.input_format)?,
            system_prompt: one("--system-prompt", self.system_prompt, outer.system_prompt)?,
            system_prompt_file: one(
                "--system-prompt-file",
                self.system_prompt_file,
                outer.system_prompt_file,
            )?,
            tools: one("--tools", self.tools, outer.tools)?,
            permission_prompt_tool: one(
                "--permission-prompt-tool",
                self.permission_prompt_tool,
                outer.permission_prompt_tool,
            )?,
            include_partial_messages: self.include_partial_messages
                || outer.include_partial_messages,
            replay_user_messages: self.replay_user_messages || outer.replay_user_messages,
            fallback_model: one(
                "--fallback-model",
                self.fallback_model,
                outer.fallback_model,
            )?,
            session_id: one("--session-id", self.session_id, outer.session_id)?,
            settings: one("--settings", self.settings, outer.settings)?,
            setting_sources: one(
                "--setting-sources",
                self.setting_sources,
                outer.setting_sources,
            )?,
            include_hook_events: self.include_hook_events || outer.include_hook_events,
            thinking: one("--thinking", self.thinking, outer.thinking)?,
            thinking_display: one(
                "--thinking-display",
                self.thinking_display,
                outer.thinking_display,
            )?,
            max_thinking_tokens: one(
                "--max-thinking-tokens",
                self.max_thinking_tokens,
                outer.max_thinking_tokens,
            )?,
            json_schema: one("--json-schema", self.json_schema, outer.json_schema)?,
            output_schema: one("--output-schema", self.output_schema, outer.output_schema)?,
            allow_dangerously_skip_permissions: self.allow_dangerously_skip_permissions
                || outer.allow_dangerously_skip_permissions,
            betas: one("--betas", self.betas, outer.betas)?,
            task_budget: one("--task-budget", self.task_budget, outer.task_budget)?,
        })
    }

    /// Whether stdin carries the SDK's protocol.
    #[must_use]
    pub fn streaming(&self) -> bool {
        self.input_format == Some(InputFormat::StreamJson)
    }

    /// The first flag that cannot take effect in this run, as the line to
    /// print; `None` when every one given can.
    #[must_use]
    pub fn refusal(&self, output_stream_json: bool) -> Option<String> {
        let streaming = self.streaming();
        if streaming && !output_stream_json {
            return Some(
                "--input-format stream-json needs --output-format stream-json (the SDK's frames \
                 go both ways)"
                    .into(),
            );
        }
        let needs_stream = [
            (
                self.permission_prompt_tool.is_some(),
                "--permission-prompt-tool",
            ),
            (self.include_partial_messages, "--include-partial-messages"),
            (self.replay_user_messages, "--replay-user-messages"),
            (self.include_hook_events, "--include-hook-events"),
            (
                self.allow_dangerously_skip_permissions,
                "--allow-dangerously-skip-permissions",
            ),
        ];
        if let Some((_, flag)) = needs_stream.iter().find(|(given, _)| *given && !streaming) {
            let frames = matches!(
                *flag,
                "--include-partial-messages"
                    | "--include-hook-events"
                    | "--allow-dangerously-skip-permissions"
            );
            return Some(if frames && output_stream_json {
                format!(
                    "{flag} goes with Claude Code's frames: add --verbose (as Claude Code wants \
                     with --output-format stream-json), or use --input-format stream-json"
                )
            } else {
                format!(
                    "{flag} goes with --input-format stream-json (the Claude Agent SDK's protocol)"
                )
            });
        }
        if let Some(tool) = self
            .permission_prompt_tool
            .as_deref()
            .filter(|t| *t != "stdio")
        {
            return Some(format!(
                "--permission-prompt-tool {tool}: cox asks over the SDK's control channel only \
                 (`stdio`); an MCP tool cannot answer its asks"
            ));
        }
        let later: [(bool, &str, &str); 5] = [
            (
                self.fallback_model.is_some(),
                "--fallback-model",
                "cox retries the same model; pick the model with --model",
            ),
            (
                self.thinking.is_some() || self.thinking_display.is_some(),
                "--thinking",
                "set how hard the model works with --effort",
            ),
            (
                self.max_thinking_tokens.is_some(),
                "--max-thinking-tokens",
                "set how hard the model works with --effort",
            ),
            (self.betas.is_some(), "--betas", "cox sends no beta headers"),
            (
                self.task_budget.is_some(),
                "--task-budget",
                "cap the cost with --max-budget-usd",
            ),
        ];
        later
            .iter()
            .find(|(given, ..)| *given)
            .map(|(_, flag, instead)| format!("{flag} is not supported by cox: {instead}"))
    }
}
