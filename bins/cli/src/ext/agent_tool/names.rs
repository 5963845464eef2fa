//! The names a subagent definition's `tools` may use: Claude Code's
//! (`Read`, `Bash`, `Task`) and cox's own, read as cox's.

use super::NAME;

/// Claude Code's tool names, as cox names its own.
pub(crate) const CLAUDE_NAMES: &[(&str, &str)] = &[
    ("Read", "read"),
    ("Write", "write"),
    ("Edit", "edit"),
    ("MultiEdit", "edit"),
    ("Bash", "bash"),
    ("Grep", "grep"),
    ("Glob", "glob"),
    ("LS", "glob"),
    ("Task", "agent"),
    ("Agent", "agent"),
    ("Skill", "skill"),
    ("NotebookEdit", "notebook_edit"),
    ("NotebookRead", "read"),
    ("TodoWrite", "todo"),
    ("WebFetch", "web_fetch"),
    ("WebSearch", "web_search"),
    ("BashOutput", "bash_output"),
    ("KillShell", "kill_shell"),
    ("KillBash", "kill_shell"),
];

/// cox's names for a definition's `tools`, or the first name it has no
/// tool for.
pub(crate) fn tool_names(written: &[String]) -> Result<Vec<String>, String> {
    let ours = [
        "read",
        "write",
        "edit",
        "apply_patch",
        "bash",
        "grep",
        "glob",
        "memory",
        "skill",
        "notebook_edit",
        "todo",
        "web_fetch",
        "web_search",
        "bash_output",
        "kill_shell",
        NAME,
    ];
    let mut names = Vec::new();
    for name in written {
        let mapped = CLAUDE_NAMES
            .iter()
            .find(|(claude, _)| claude == name)
            .map(|(_, cox)| (*cox).to_owned())
            .or_else(|| ours.contains(&name.as_str()).then(|| name.clone()))
            .or_else(|| name.starts_with("mcp__").then(|| name.clone()));
        match mapped {
            Some(mapped) => {
                if !names.contains(&mapped) {
                    names.push(mapped);
                }
            }
            None => return Err(name.clone()),
        }
    }
    // A child that may start background shells may read and stop them.
    if names.iter().any(|n| n == "bash") {
        for shell_tool in ["bash_output", "kill_shell"] {
            if !names.iter().any(|n| n == shell_tool) {
                names.push(shell_tool.to_owned());
            }
        }
    }
    Ok(names)
}
