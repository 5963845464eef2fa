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

/// Agents defined as JSON, Claude Code's shape (`{name: {description,
/// prompt, tools?, model?}}`: the SDK's `initialize`, `--agents`); a field
/// cox cannot honour is an error naming it.
///
/// # Errors
/// Not an object of definitions, or a definition cox cannot honour.
pub fn from_json(agents: &serde_json::Value) -> Result<Vec<Agent>, String> {
    use serde_json::Value;
    const TAKEN: &[&str] = &["description", "prompt", "tools", "model"];
    let mut out = Vec::new();
    let agents = match agents {
        Value::Null => return Ok(out),
        Value::Object(agents) => agents,
        _ => return Err("agents: not an object of definitions".into()),
    };
    for (name, agent) in agents {
        let Some(fields) = agent.as_object() else {
            return Err(format!("agents: `{name}` is not an object"));
        };
        if let Some(other) = fields.keys().find(|k| !TAKEN.contains(&k.as_str())) {
            return Err(format!(
                "agents: `{name}`: `{other}` is not supported by cox (it takes description, \
                 prompt, tools and model)"
            ));
        }
        let text = |key: &str| fields.get(key).and_then(Value::as_str).map(str::to_owned);
        let (Some(description), Some(prompt)) = (text("description"), text("prompt")) else {
            return Err(format!("agents: `{name}` needs a description and a prompt"));
        };
        if fields
            .get("model")
            .is_some_and(|m| !m.is_null() && !m.is_string())
        {
            return Err(format!("agents: `{name}`: model must be a name"));
        }
        let tools = match fields.get("tools") {
            None | Some(Value::Null) => None,
            Some(Value::Array(list)) => Some(
                list.iter()
                    .map(|t| t.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| format!("agents: `{name}`: tools must be names"))?,
            ),
            Some(_) => return Err(format!("agents: `{name}`: tools must be a list of names")),
        };
        out.push(Agent {
            name: name.clone(),
            description,
            file: std::path::PathBuf::from("(the Agent SDK)"),
            tools,
            model: text("model"),
            prompt,
            project: false,
        });
    }
    Ok(out)
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
