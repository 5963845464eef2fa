//! Plugins in Claude Code's layout, found in `$COX_HOME/plugins/<name>`
//! and each `--plugin-dir DIR`.
//!
//! A plugin is a folder with a manifest, `.claude-plugin/plugin.json`
//! (`name` is required; `description`, `version` and `author` are shown),
//! and any of its parts in their usual places: `commands/*.md`,
//! `agents/*.md`, `skills/<name>/SKILL.md`, `hooks/hooks.json` and
//! `.mcp.json`. The manifest may name more places for commands and agents
//! (a path or a list of paths, relative to the plugin), and its hooks or
//! MCP servers as a path or inline. Each part loads as one more source of
//! its kind: a plugin's commands are `/<plugin>:<command>`; its hooks and
//! MCP servers are the plugin's own and wait for a person's trust like a
//! project's.
//!
//! A folder that is not a plugin, a manifest that does not parse, a name
//! that is not a plain word or one already taken is one warning naming the
//! file and line, and that plugin is left out; the others load. Manifest
//! keys cox does not read are said, not silently dropped.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The manifest's keys cox reads or shows.
const KNOWN: &[&str] = &[
    "name",
    "version",
    "description",
    "author",
    "homepage",
    "repository",
    "license",
    "keywords",
    "commands",
    "agents",
    "hooks",
    "mcpServers",
];

/// Where a plugin was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// `$COX_HOME/plugins/<name>`.
    Home,
    /// `--plugin-dir`.
    Flag,
}

/// Hooks or MCP servers: a file, or the manifest's own object.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    File(PathBuf),
    /// Inline in the manifest (its text, for the lines).
    Inline(Value),
}

/// One plugin and where its parts are.
#[derive(Clone, Debug, PartialEq)]
pub struct Plugin {
    pub name: String,
    /// Canonical.
    pub root: PathBuf,
    pub manifest: PathBuf,
    /// The manifest's text, for lines of what it holds inline.
    pub manifest_text: String,
    pub description: Option<String>,
    pub version: Option<String>,
    pub found: Found,
    /// Folders or files of commands, the default first.
    pub commands: Vec<PathBuf>,
    /// Folders or files of agents, the default first.
    pub agents: Vec<PathBuf>,
    /// `skills/`.
    pub skills: PathBuf,
    pub hooks: Option<Part>,
    pub mcp: Option<Part>,
}

impl Plugin {
    /// Its skills' folder, as the instructions loader reads it: names
    /// prefixed with the plugin's, nothing resolving outside the plugin.
    #[must_use]
    pub fn skill_dir(&self) -> crate::instructions::skills::SkillDir {
        crate::instructions::skills::SkillDir {
            dir: self.skills.clone(),
            label: format!("plugin {}/skills", self.name),
            prefix: Some(self.name.clone()),
            within: Some(std::fs::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone())),
        }
    }

    /// The skill folders of `plugins`.
    #[must_use]
    pub fn skill_dirs(plugins: &[Plugin]) -> Vec<crate::instructions::skills::SkillDir> {
        plugins.iter().map(Plugin::skill_dir).collect()
    }

    /// The scope its hooks are trusted in: the plugin, and where it lives.
    #[must_use]
    pub fn trust_scope(&self) -> String {
        format!("plugin:{}:{}", self.name, self.root.display())
    }
}

/// Every plugin found, and a warning for each folder that is not one.
#[derive(Debug, Default)]
pub struct Plugins {
    pub plugins: Vec<Plugin>,
    pub warnings: Vec<String>,
}

/// Finds the plugins of `--plugin-dir` (first: the command line chooses)
/// and of `$COX_HOME/plugins`.
#[must_use]
pub fn discover(cox_home: &Path, flags: &[PathBuf]) -> Plugins {
    let mut out = Plugins::default();
    for dir in flags {
        match std::fs::canonicalize(dir) {
            Ok(root) if root.is_dir() => out.add(&root, Found::Flag),
            _ => out.warnings.push(format!(
                "--plugin-dir {}: not a folder; left out",
                dir.display()
            )),
        }
    }
    let home = cox_home.join("plugins");
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(&home) {
        Ok(entries) => entries.filter_map(Result::ok).map(|e| e.path()).collect(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => {
            out.warnings.push(format!(
                "{}: cannot list the plugins ({err})",
                home.display()
            ));
            Vec::new()
        }
    };
    entries.sort();
    for dir in entries {
        if let Ok(root) = std::fs::canonicalize(&dir)
            && root.is_dir()
        {
            out.add(&root, Found::Home);
        }
    }
    out
}

impl Plugins {
    /// Reads the plugin at `root`, or says why it is not one.
    fn add(&mut self, root: &Path, found: Found) {
        match read(root, found) {
            Ok((plugin, warnings)) => {
                self.warnings.extend(warnings);
                if let Some(first) = self.plugins.iter().find(|p| p.name == plugin.name) {
                    self.warnings.push(format!(
                        "{}: plugin `{}` is also at {}, which wins; left out",
                        plugin.manifest.display(),
                        plugin.name,
                        first.root.display()
                    ));
                    return;
                }
                self.plugins.push(plugin);
            }
            Err(why) => self.warnings.push(why),
        }
    }
}

/// The plugin at `root` and what was odd about it, or why it is none.
fn read(root: &Path, found: Found) -> Result<(Plugin, Vec<String>), String> {
    let manifest = root.join(".claude-plugin").join("plugin.json");
    let text = std::fs::read_to_string(&manifest).map_err(|err| {
        if err.kind() == std::io::ErrorKind::NotFound {
            format!(
                "{}: not a plugin (no .claude-plugin/plugin.json); left out",
                root.display()
            )
        } else {
            format!(
                "{}: cannot read: {err}; the plugin is left out",
                manifest.display()
            )
        }
    })?;
    let at = |needle: &str| {
        format!(
            "{}:{}",
            manifest.display(),
            cox_hooks::config::line_of(&text, needle)
        )
    };
    let value: Value = serde_json::from_str(&text).map_err(|err| {
        format!(
            "{}:{}: not valid JSON ({}); the plugin is left out",
            manifest.display(),
            err.line().max(1),
            err.to_string().split(" at line").next().unwrap_or_default()
        )
    })?;
    let Value::Object(object) = value else {
        return Err(format!(
            "{}:1: the manifest must be a JSON object; the plugin is left out",
            manifest.display()
        ));
    };
    let name = match object.get("name") {
        Some(Value::String(name)) => name.clone(),
        _ => {
            return Err(format!(
                "{}: the manifest has no `name`; the plugin is left out",
                at("{")
            ));
        }
    };
    if matches!(name.as_str(), "user" | "project") {
        return Err(format!(
            "{}: plugin name {name:?} is reserved (it names the person's or the project's own \
             hooks); the plugin is left out",
            at("\"name\"")
        ));
    }
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!(
            "{}: plugin name {name:?} may only hold letters, digits, '-' and '_'; the plugin is \
             left out",
            at("\"name\"")
        ));
    }
    let mut warnings = Vec::new();
    for key in object.keys().filter(|k| !KNOWN.contains(&k.as_str())) {
        warnings.push(format!(
            "{}: plugin {name}: `{key}` is not read by cox; it has no effect",
            at(&format!("\"{key}\""))
        ));
    }
    let text_of = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
    let paths = |key: &str, default: &str, warnings: &mut Vec<String>| -> Vec<PathBuf> {
        let mut out = vec![root.join(default)];
        let extra: Vec<&str> = match object.get(key) {
            None => Vec::new(),
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            Some(_) => {
                warnings.push(format!(
                    "{}: plugin {name}: `{key}` must be a path or a list of paths; ignored",
                    at(&format!("\"{key}\""))
                ));
                Vec::new()
            }
        };
        for path in extra {
            match inside(root, path) {
                Some(path) if !out.contains(&path) => out.push(path),
                Some(_) => {}
                None => warnings.push(format!(
                    "{}: plugin {name}: {key} path {path:?} leaves the plugin's folder; ignored",
                    at(path)
                )),
            }
        }
        out
    };
    let commands = paths("commands", "commands", &mut warnings);
    let agents = paths("agents", "agents", &mut warnings);
    let part = |key: &str, default: PathBuf, warnings: &mut Vec<String>| -> Option<Part> {
        match object.get(key) {
            None => default.is_file().then_some(Part::File(default)),
            Some(Value::String(path)) => match inside(root, path) {
                Some(path) => Some(Part::File(path)),
                None => {
                    warnings.push(format!(
                        "{}: plugin {name}: {key} path {path:?} leaves the plugin's folder; \
                         ignored",
                        at(path)
                    ));
                    None
                }
            },
            Some(inline @ Value::Object(_)) => Some(Part::Inline(inline.clone())),
            Some(_) => {
                warnings.push(format!(
                    "{}: plugin {name}: `{key}` must be a path or an object; ignored",
                    at(&format!("\"{key}\""))
                ));
                None
            }
        }
    };
    let hooks = part(
        "hooks",
        root.join("hooks").join("hooks.json"),
        &mut warnings,
    );
    let mcp = part("mcpServers", root.join(".mcp.json"), &mut warnings);
    Ok((
        Plugin {
            root: root.to_path_buf(),
            manifest: manifest.clone(),
            description: text_of("description"),
            version: text_of("version"),
            found,
            commands,
            agents,
            skills: root.join("skills"),
            hooks,
            mcp,
            manifest_text: text.clone(),
            name,
        },
        warnings,
    ))
}

/// `path` (relative to `root`, `./` allowed) when it stays inside it.
fn inside(root: &Path, path: &str) -> Option<PathBuf> {
    let relative = Path::new(path);
    if relative.is_absolute()
        || relative
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return None;
    }
    Some(root.join(relative))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_plugin_folder_loads_with_its_parts_and_odd_keys_are_said() {
        let home = tempfile::tempdir().unwrap();
        let root = home.path().join("plugins/fmt");
        write(
            &root.join(".claude-plugin/plugin.json"),
            r#"{"name": "fmt", "version": "1.0.0", "description": "Formats",
  "outputStyles": "./styles", "commands": ["./extra"], "agents": "../../etc"}"#,
        );
        write(&root.join("hooks/hooks.json"), r#"{"hooks": {}}"#);
        let found = discover(home.path(), &[]);
        assert_eq!(found.plugins.len(), 1, "{:?}", found.warnings);
        let plugin = &found.plugins[0];
        assert_eq!(plugin.name, "fmt");
        assert_eq!(plugin.commands.len(), 2);
        assert_eq!(plugin.agents.len(), 1);
        assert!(matches!(plugin.hooks, Some(Part::File(_))));
        assert_eq!(plugin.mcp, None);
        let all = found.warnings.join("\n");
        assert!(
            all.contains(":2: plugin fmt: `outputStyles` is not read"),
            "{all}"
        );
        assert!(all.contains("leaves the plugin's folder"), "{all}");
    }

    #[test]
    fn broken_plugins_are_warnings_and_the_rest_load() {
        let home = tempfile::tempdir().unwrap();
        let plugins = home.path().join("plugins");
        write(
            &plugins.join("a/.claude-plugin/plugin.json"),
            "{\n\"name\": \"a\",,\n}",
        );
        write(
            &plugins.join("b/.claude-plugin/plugin.json"),
            r#"{"version": "1"}"#,
        );
        write(
            &plugins.join("c/.claude-plugin/plugin.json"),
            r#"{"name": "bad name"}"#,
        );
        std::fs::create_dir_all(plugins.join("d")).unwrap();
        write(
            &plugins.join("e/.claude-plugin/plugin.json"),
            r#"{"name": "ok"}"#,
        );
        let found = discover(home.path(), &[home.path().join("nowhere")]);
        let names: Vec<&str> = found.plugins.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["ok"]);
        let all = found.warnings.join("\n");
        assert!(all.contains("plugin.json:2: not valid JSON"), "{all}");
        assert!(all.contains("has no `name`"), "{all}");
        assert!(all.contains("\"bad name\""), "{all}");
        assert!(all.contains("not a plugin"), "{all}");
        assert!(all.contains("--plugin-dir"), "{all}");
    }
}
