//! Agent definitions in Claude Code's format (markdown with a frontmatter
//! of `name`, `description`, `tools`, `model`), found so `cox ext list`
//! can name them: the repository's `.cox/agents` and `.claude/agents`,
//! then `$COX_HOME/agents` and Claude Code's `~/.claude/agents`, then each
//! plugin's (named `<plugin>:<name>`).
//!
//! This version of cox runs no subagents, so a definition is listed with
//! that said, never taken in silence; a file without a name or a
//! description is a warning naming it.

use std::path::{Path, PathBuf};

use crate::instructions::skills;

use super::plugins::Plugin;

/// One agent definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agent {
    pub name: String,
    pub description: String,
    pub file: PathBuf,
}

/// The definitions under the usual places, first of a name winning, and
/// what was wrong with the rest.
#[must_use]
pub fn find(
    base: &Path,
    cox_home: &Path,
    home_dir: Option<&Path>,
    plugins: &[Plugin],
) -> (Vec<Agent>, Vec<String>) {
    let mut dirs: Vec<(PathBuf, Option<&str>)> = vec![
        (base.join(".cox/agents"), None),
        (base.join(".claude/agents"), None),
        (cox_home.join("agents"), None),
    ];
    if let Some(home) = home_dir {
        dirs.push((home.join(".claude/agents"), None));
    }
    for plugin in plugins {
        for dir in &plugin.agents {
            dirs.push((dir.clone(), Some(plugin.name.as_str())));
        }
    }
    let mut agents: Vec<Agent> = Vec::new();
    let mut warnings = Vec::new();
    for (dir, prefix) in dirs {
        let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
            Ok(entries) => entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "md"))
                .collect(),
            Err(_) if dir.is_file() => vec![dir.clone()],
            Err(_) => continue,
        };
        files.sort();
        for file in files {
            let text = match cox_hooks::config::read_small(&file, 1 << 20) {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(why) => {
                    warnings.push(format!("{}: {why}; left out", file.display()));
                    continue;
                }
            };
            let block = match skills::split(&text) {
                Ok((block, _)) => block,
                Err(why) => {
                    warnings.push(format!(
                        "{}:1: {why}; the agent is left out",
                        file.display()
                    ));
                    continue;
                }
            };
            let (Some(name), Some(description)) = (
                skills::value(&block, "name"),
                skills::value(&block, "description"),
            ) else {
                warnings.push(format!(
                    "{}:1: an agent needs `name` and `description` in its frontmatter; left out",
                    file.display()
                ));
                continue;
            };
            let name = match prefix {
                Some(prefix) => format!("{prefix}:{name}"),
                None => name,
            };
            if agents.iter().any(|a| a.name == name) {
                continue;
            }
            agents.push(Agent {
                name,
                description,
                file,
            });
        }
    }
    (agents, warnings)
}
