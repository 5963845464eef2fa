//! Claude Code's flags that cox does not have: refused by name, before
//! the command line is parsed, with what to use instead, so one is never
//! taken for a near miss of another flag (clap's did-you-mean) and
//! `--help` lists none of them.

use std::ffi::OsString;

/// Claude Code's flags that cox does not have, each with what to use
/// instead: refused by name before the command line is parsed, so one is
/// never taken for a near-miss of another flag.
pub const CLAUDE_CODE_ONLY: &[(&str, &str)] = &[
    (
        "--agent",
        "define agents in .claude/agents/ or with --agents, and let the model pick",
    ),
    (
        "--ax-screen-reader",
        "the terminal UI draws plain text; there is no other mode",
    ),
    (
        "--await-initialize",
        "give the Agent SDK `mcpServersDelivery: 'argv'` so servers come as --mcp-config",
    ),
    (
        "--background",
        "run it headless with cox -p in the background",
    ),
    (
        "--bare",
        "--setting-sources \"\" --strict-mcp-config --no-mcp turn the sources off one by one",
    ),
    ("--bg", "run it headless with cox -p in the background"),
    ("--betas", "cox sends no beta headers"),
    ("--brief", "cox has no SendUserMessage tool"),
    (
        "--chrome",
        "cox has no browser integration; web_fetch reads pages",
    ),
    (
        "--debug-file",
        "logs go to $COX_HOME/logs (COX_LOG sets the filter)",
    ),
    (
        "--disable-slash-commands",
        "--setting-sources \"\" leaves the project's commands and skills out",
    ),
    (
        "--exclude-dynamic-system-prompt-sections",
        "cox's system prompt keeps its volatile part last already",
    ),
    (
        "--fallback-model",
        "cox retries the same model; pick the model with --model",
    ),
    (
        "--file",
        "name the file in the prompt (@path) or attach an image with --image",
    ),
    ("--from-pr", "check the branch out and cox --continue"),
    (
        "--ide",
        "editors reach cox over ACP: run cox acp from the editor",
    ),
    (
        "--max-thinking-tokens",
        "set how hard the model works with --effort",
    ),
    ("--no-chrome", "cox has no browser integration to turn off"),
    ("--plugin-url", "download the plugin and give --plugin-dir"),
    ("--prompt-suggestions", "cox suggests no prompts"),
    (
        "--remote-control",
        "cox has no remote control; editors use cox acp",
    ),
    (
        "--remote-control-session-name-prefix",
        "cox has no remote control",
    ),
    (
        "--safe-mode",
        "--setting-sources \"\" --no-mcp start without your customizations",
    ),
    ("--task-budget", "cap the cost with --max-budget-usd"),
    ("--thinking", "set how hard the model works with --effort"),
    (
        "--thinking-display",
        "set how hard the model works with --effort",
    ),
    ("--tmux", "run cox inside the tmux session you want"),
];

/// The first of `argv`'s words that is a Claude Code flag cox does not
/// have (before a `--`), with what to use instead.
#[must_use]
pub fn claude_code_only(argv: &[OsString]) -> Option<String> {
    argv.iter()
        .skip(1)
        .map(|a| a.to_string_lossy())
        .take_while(|a| a != "--")
        .find_map(|word| {
            let flag = word.split('=').next().unwrap_or_default().to_owned();
            CLAUDE_CODE_ONLY
                .iter()
                .find(|(name, _)| *name == flag)
                .map(|(name, instead)| {
                    format!("{name} is Claude Code's and not supported by cox: {instead}")
                })
        })
}
