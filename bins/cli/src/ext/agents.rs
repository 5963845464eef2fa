//! Agent definitions in Claude Code's format (markdown with a frontmatter
//! of `name`, `description`, `tools`, `model`; the body is the subagent's
//! instructions), which the `agent` tool's `subagent_type` picks (see
//! [`super::agent_tool`]) and `cox ext list` names: the repository's
//! `.cox/agents` and `.claude/agents`, then `$COX_HOME/agents` and Claude
//! Code's `~/.claude/agents`, then each plugin's (named
//! `<plugin>:<name>`). The first definition of a name wins.
//!
//! A file without a name or a description is a warning naming it, never
//! taken in silence; `tools` is a comma-separated list (or a YAML list) of
//! tool names, Claude Code's (`Read`, `Bash`) or cox's (`read`, `bash`),
//! resolved when the agent runs.

use std::path::{Path, PathBuf};

use crate::instructions::skills;

use super::plugins::Plugin;

/// One agent definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agent {
    pub name: String,
    pub description: String,
    pub file: PathBuf,
    /// The tools it may use, as written; `None`: every tool of its parent.
    pub tools: Option<Vec<String>>,
    /// A model, a tier (`cheap`, `code`, `think`), Claude Code's alias
    /// (`haiku`, `sonnet`, `opus`) or `inherit`; `None`: its parent's.
    pub model: Option<String>,
    /// Its instructions (the body), appended to the system prompt.
    pub prompt: String,
    /// It comes from the repository (`.cox/agents`, `.claude/agents`),
    /// which may not choose a dearer model.
    pub project: bool,
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
    let project_dirs = [base.join(".cox/agents"), base.join(".claude/agents")];
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
            let (block, body) = match skills::split(&text) {
                Ok(split) => split,
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
            let tools = skills::value(&block, "tools").map(|list| tool_list(&list));
            agents.push(Agent {
                name,
                description,
                tools,
                model: skills::value(&block, "model").filter(|m| !m.is_empty()),
                prompt: body.trim().to_owned(),
                project: project_dirs.contains(&dir),
                file,
            });
        }
    }
    (agents, warnings)
}

/// The names of a `tools` value: `Read, Grep`, `[Read, Grep]` or a YAML
/// list (`- Read`), quotes dropped.
fn tool_list(value: &str) -> Vec<String> {
    value
        .split([',', '\n'])
        .flat_map(|part| part.split(" - "))
        .map(|name| {
            name.trim()
                .trim_start_matches(['[', '-'])
                .trim_end_matches(']')
                .trim()
                .trim_matches(['"', '\''])
                .to_owned()
        })
        .filter(|name| !name.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_gives_its_tools_model_and_instructions() {
        let dir = tempfile::tempdir().unwrap();
        let agents = dir.path().join(".claude/agents");
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::write(
            agents.join("reviewer.md"),
            "---\nname: reviewer\ndescription: Reviews a diff\ntools: Read, Grep, \"Glob\"\nmodel: haiku\n---\nYou review.\n",
        )
        .unwrap();
        std::fs::write(
            agents.join("lister.md"),
            "---\nname: lister\ndescription: Lists\ntools:\n  - Read\n  - Bash\n---\nList.\n",
        )
        .unwrap();
        std::fs::write(agents.join("broken.md"), "---\nname: x\n---\n").unwrap();
        let (found, warnings) = find(dir.path(), dir.path(), None, &[]);
        assert_eq!(found.len(), 2);
        let lister = &found[0];
        assert_eq!(
            lister.tools.as_deref(),
            Some(&["Read".to_owned(), "Bash".to_owned()][..])
        );
        let reviewer = &found[1];
        assert_eq!(reviewer.name, "reviewer");
        assert_eq!(
            reviewer.tools.as_deref(),
            Some(&["Read".to_owned(), "Grep".to_owned(), "Glob".to_owned()][..])
        );
        assert_eq!(reviewer.model.as_deref(), Some("haiku"));
        assert_eq!(reviewer.prompt, "You review.");
        assert!(warnings[0].contains("broken.md:1"), "{warnings:?}");
    }
}
