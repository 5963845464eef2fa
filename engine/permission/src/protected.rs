//! The paths a file tool never writes unasked: the folders and files that
//! tell the next session what to run and what to believe.
//!
//! `.cox` and `.claude` (settings, hooks, commands, skills, agents),
//! `.mcp.json` (servers to start), and the instruction files `AGENTS.md`,
//! `CLAUDE.md` and `CLAUDE.local.md`. A write to any of them asks in every
//! permission mode, bypass included, and plan mode refuses it like any
//! write; only an allow rule of the person's own (user config or flag) that
//! spells the protected name and matches the path lifts the question. `.git` is not here because the file
//! tools refuse it outright (its hooks run code).
//!
//! The sandbox keeps the same paths read-only for commands (present or not
//! for the folders), so neither way round reaches them unasked.
//!
//! Invariant: the match is on the path's names alone, wherever it lies, as
//! the file tool resolved it and as the model wrote it, so a link named
//! `.claude` or a link into one is caught by one of the two.

/// Folder names whose contents are protected, at any depth.
pub const PROTECTED_FOLDERS: [&str; 2] = [".cox", ".claude"];

/// File names that are protected, at any depth.
pub const PROTECTED_FILES: [&str; 4] = [".mcp.json", "AGENTS.md", "CLAUDE.md", "CLAUDE.local.md"];

/// Whether writing `path` (absolute or as written) changes what the next
/// session runs or reads as instructions.
#[must_use]
pub fn is_protected(path: &str) -> bool {
    protected_name(path).is_some()
}

/// The protected name `path` goes through (`.claude`, `AGENTS.md`, …), if
/// any: an allow rule lifts the question only when it spells that name, so
/// `Edit(**)` does not, and `Edit(.claude/**)` does.
#[must_use]
pub fn protected_name(path: &str) -> Option<&'static str> {
    let mut names = path.split('/').filter(|n| !n.is_empty() && *n != ".");
    let last = path.rsplit('/').find(|n| !n.is_empty() && *n != ".");
    names
        .find_map(|n| PROTECTED_FOLDERS.iter().find(|p| **p == n))
        .or_else(|| last.and_then(|n| PROTECTED_FILES.iter().find(|p| **p == n)))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_folders_and_instruction_files_are_protected_wherever_they_lie() {
        for path in [
            "/repo/.claude/settings.json",
            "/repo/.claude",
            "/repo/.cox/config.toml",
            "/repo/.claude/hooks/guard.sh",
            "/repo/sub/.claude/commands/x.md",
            "/repo/.mcp.json",
            "/repo/AGENTS.md",
            "/repo/docs/CLAUDE.md",
            "CLAUDE.local.md",
            "./.claude/agents/a.md",
            "/repo/.claude/",
        ] {
            assert!(is_protected(path), "{path}");
        }
        for path in [
            "/repo/src/main.rs",
            "/repo/claude.md.bak",
            "/repo/.claudex/x",
            "/repo/AGENTS.md.orig",
            "/repo/notes/agents.md",
            "mcp__server__tool",
            "/repo/.coxrc",
        ] {
            assert!(!is_protected(path), "{path}");
        }
    }
}
