//! Custom slash commands and skills as `/<name> args`.
//!
//! A command is a markdown file, Claude Code's convention: its name is the
//! file's (a subfolder adds `<folder>:`, a plugin `<plugin>:`), its body
//! the prompt, with `$ARGUMENTS` (everything after the name) and `$1` …
//! `$9` (the arguments one by one, quotes grouping words) put in. An
//! optional frontmatter says more:
//!
//! ```text
//! ---
//! description: Review the staged changes
//! argument-hint: [focus]
//! allowed-tools: Bash(git diff:*), Bash(git status:*)
//! model: claude-haiku-4-5
//! ---
//! Review the staged diff, focusing on $ARGUMENTS.
//! ```
//!
//! Places, the first of a name winning: the repository's `.cox/commands`
//! and `.claude/commands`, then `$COX_HOME/commands` and Claude Code's
//! `~/.claude/commands`, then each plugin's. A skill is a command too:
//! `/<skill> args` brings in its `SKILL.md`, as the `skill` tool does.
//!
//! What a command asks for takes effect or is refused aloud: `model` must
//! be one cox knows (its catalog or config), else the command runs on the
//! session's model and its file gets a warning; `allowed-tools` lets those
//! rules through unasked for the turn the command starts — only for the
//! person's own commands, since a repository's or a plugin's allow would be
//! an allow rule written by someone else (cox's project configs cannot
//! allow either). `!`-lines are not run: the model reads them as written.
//!
//! Expansion is what the core asks before each turn
//! ([`cox_protocol::mcp::Expander`]), so `cox run -p "/review x"` and the
//! terminal UI's `/review x` are the same prompt. The model is sent what
//! the person typed, then the command's text.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cox_protocol::mcp::{Expanded, Expander};
use cox_protocol::provider::BoxFuture;
use cox_protocol::types::SlashCommand;

use crate::instructions::skills::{self, Skill};

use super::plugins::Plugin;

/// The most of a command's or a skill's file that is read, in bytes.
pub const BODY_MAX: usize = 64 * 1024;

/// The frontmatter keys a command may have; others are said.
const KEYS: &[&str] = &[
    "description",
    "argument-hint",
    "allowed-tools",
    "model",
    "disable-model-invocation",
];

/// Whose a command is, for what it may ask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    /// The person's own (`$COX_HOME/commands`, `~/.claude/commands`).
    User,
    /// The repository's.
    Project,
    /// A plugin's.
    Plugin(String),
}

impl Owner {
    #[must_use]
    pub fn label(&self) -> String {
        match self {
            Owner::User => "user".into(),
            Owner::Project => "project".into(),
            Owner::Plugin(name) => format!("plugin {name}"),
        }
    }
}

/// One custom command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// Without the `/`.
    pub name: String,
    pub description: String,
    pub hint: String,
    /// Honoured only for the person's own commands.
    pub allowed_tools: Vec<String>,
    /// Known to cox, or `None`.
    pub model: Option<String>,
    pub file: PathBuf,
    pub owner: Owner,
}

/// What `/<name>` stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    Command(Command),
    Skill(Skill),
}

impl Entry {
    #[must_use]
    pub fn name(&self) -> &str {
        match self {
            Entry::Command(c) => &c.name,
            Entry::Skill(s) => &s.name,
        }
    }
}

/// Every command and skill of a session, by name.
#[derive(Debug, Default)]
pub struct Commands {
    entries: BTreeMap<String, Entry>,
    /// What was odd about them: files that do not load, asks refused.
    pub warnings: Vec<String>,
}

/// Where commands are looked for.
#[derive(Clone, Copy, Debug)]
pub struct Places<'a> {
    pub cox_home: &'a Path,
    pub home_dir: Option<&'a Path>,
    /// The repository root (or the working folder outside one).
    pub base: &'a Path,
    pub plugins: &'a [Plugin],
    /// Models `model:` may name.
    pub models: &'a [String],
}

impl Commands {
    /// The commands of `places`, then `skills` where no command has their
    /// name.
    #[must_use]
    pub fn find(places: &Places<'_>, skills: &[Skill]) -> Commands {
        let mut out = Commands::default();
        let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let base = canonical(places.base);
        // Each folder, whose it is, its names' prefix, and the folder its
        // files must stay in (a repository's or a plugin's, taken before
        // any link is followed: `.claude/commands` may itself be a link).
        let mut dirs: Vec<(PathBuf, Owner, Option<String>, Option<PathBuf>)> = vec![
            (
                places.base.join(".cox/commands"),
                Owner::Project,
                None,
                Some(base.clone()),
            ),
            (
                places.base.join(".claude/commands"),
                Owner::Project,
                None,
                Some(base),
            ),
            (places.cox_home.join("commands"), Owner::User, None, None),
        ];
        if let Some(home) = places.home_dir {
            dirs.push((home.join(".claude/commands"), Owner::User, None, None));
        }
        for plugin in places.plugins {
            for dir in &plugin.commands {
                dirs.push((
                    dir.clone(),
                    Owner::Plugin(plugin.name.clone()),
                    Some(plugin.name.clone()),
                    Some(canonical(&plugin.root)),
                ));
            }
        }
        for (dir, owner, prefix, within) in dirs {
            let mut files = Vec::new();
            let mut walk = Walk {
                root: dir.clone(),
                top: within.clone().unwrap_or_else(|| canonical(&dir)),
                confined: within.is_some(),
                seen: Vec::new(),
                out: &mut files,
                warnings: &mut out.warnings,
            };
            walk.dir(&dir, 0);
            files.sort();
            for (file, mut name) in files {
                if let Some(prefix) = &prefix {
                    name = format!("{prefix}:{name}");
                }
                out.add_file(&file, name, owner.clone(), places.models);
            }
        }
        for skill in skills {
            if let Some(Entry::Command(command)) = out.entries.get(&skill.name) {
                out.warnings.push(format!(
                    "{}: skill `{}` is also a command ({}), which wins as /{}",
                    skill.file.display(),
                    skill.name,
                    command.file.display(),
                    skill.name
                ));
                continue;
            }
            out.entries
                .insert(skill.name.clone(), Entry::Skill(skill.clone()));
        }
        out
    }

    /// Every entry, by name.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    /// Reads one command file as `name`.
    fn add_file(&mut self, file: &Path, name: String, owner: Owner, models: &[String]) {
        if let Some(first) = self.entries.get(&name) {
            let Entry::Command(first) = first else {
                return;
            };
            self.warnings.push(format!(
                "{}: command /{name} is also defined in {}, which wins; left out",
                file.display(),
                first.file.display()
            ));
            return;
        }
        let text = match read(file) {
            Ok(text) => text,
            Err(why) => {
                self.warnings.push(format!(
                    "{}: {why}; the command is left out",
                    file.display()
                ));
                return;
            }
        };
        let (block, body) = match skills::split(&text) {
            Ok(split) => split,
            Err(why) => {
                self.warnings.push(format!(
                    "{}:1: {why}; the command is left out",
                    file.display()
                ));
                return;
            }
        };
        let line = |key: &str| {
            block
                .iter()
                .position(|l| l.starts_with(key))
                .map_or(1, |i| i + 2)
        };
        for key in skills::keys(&block) {
            if !KEYS.contains(&key) {
                self.warnings.push(format!(
                    "{}:{}: `{key}` is not read by cox; it has no effect (known: {})",
                    file.display(),
                    line(key),
                    KEYS.join(", ")
                ));
            }
        }
        let description = skills::value(&block, "description").unwrap_or_else(|| {
            body.lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("(no description)")
                .chars()
                .take(100)
                .collect()
        });
        let hint = skills::value(&block, "argument-hint").unwrap_or_default();
        let mut model = skills::value(&block, "model");
        if model.is_some() && owner != Owner::User {
            self.warnings.push(format!(
                "{}:{}: the model of a {} command is not honoured (only your own config and \
                 commands choose what you pay for); /{name} runs on the session's model",
                file.display(),
                line("model"),
                owner.label()
            ));
            model = None;
        }
        if let Some(asked) = &model
            && !models.iter().any(|m| m == asked)
        {
            self.warnings.push(format!(
                "{}:{}: model `{asked}` is neither in cox's catalog nor in your config; /{name} \
                 runs on the session's model",
                file.display(),
                line("model")
            ));
            model = None;
        }
        let mut allowed_tools = skills::list(&block, "allowed-tools");
        if !allowed_tools.is_empty() && owner != Owner::User {
            self.warnings.push(format!(
                "{}:{}: allowed-tools of a {} command are not honoured (only your own commands \
                 may allow tools; copy it to $COX_HOME/commands to trust it); /{name} runs \
                 under your rules",
                file.display(),
                line("allowed-tools"),
                owner.label()
            ));
            allowed_tools.clear();
        }
        let mut bad_rule = None;
        for rule in &allowed_tools {
            if let Err(err) = cox_permission::Rule::parse(
                rule,
                cox_permission::Origin::Command(file.to_path_buf()),
                None,
                Path::new("/"),
            ) {
                bad_rule = Some(err.to_string());
            }
        }
        if let Some(why) = bad_rule {
            self.warnings.push(format!(
                "{}:{}: {why}; /{name} runs under your rules",
                file.display(),
                line("allowed-tools")
            ));
            allowed_tools.clear();
        }
        if body.lines().any(|l| l.trim_start().starts_with("!`")) {
            self.warnings.push(format!(
                "{}: /{name} has `!` lines, which cox does not run: the model reads them as \
                 written",
                file.display()
            ));
        }
        self.entries.insert(
            name.clone(),
            Entry::Command(Command {
                name,
                description,
                hint,
                allowed_tools,
                model,
                file: file.to_path_buf(),
                owner,
            }),
        );
    }

    /// The text `/<name> args` stands for, and what the turn takes from
    /// it; `None` when `text` names no command or skill of these.
    ///
    /// # Errors
    /// Its file can no longer be read: one line saying which.
    pub fn expand_text(&self, text: &str) -> Result<Option<Expanded>, String> {
        let typed = text.trim_start();
        let Some(rest) = typed.strip_prefix('/') else {
            return Ok(None);
        };
        let (word, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let Some(entry) = self.entries.get(word) else {
            return Ok(None);
        };
        let args = args.trim();
        match entry {
            Entry::Command(command) => {
                let file = read(&command.file)
                    .map_err(|why| format!("/{word}: {}: {why}", command.file.display()))?;
                let body = skills::split(&file).map(|(_, body)| body).unwrap_or(&file);
                let body = substitute(body.trim(), args);
                Ok(Some(Expanded {
                    text: format!("{text}\n\n{body}"),
                    notices: Vec::new(),
                    model: command.model.clone(),
                    allowed_tools: command.allowed_tools.clone(),
                    command_file: Some(command.file.clone()),
                    images: Vec::new(),
                }))
            }
            Entry::Skill(skill) => {
                let loaded = load_skill(skill, args)?;
                Ok(Some(Expanded {
                    text: format!("{text}\n\n{loaded}"),
                    ..Expanded::default()
                }))
            }
        }
    }
}

impl Expander for Commands {
    fn commands(&self) -> Vec<SlashCommand> {
        self.entries
            .values()
            .map(|entry| match entry {
                Entry::Command(c) => SlashCommand {
                    name: c.name.clone(),
                    description: c.description.clone(),
                    hint: c.hint.clone(),
                },
                Entry::Skill(s) => SlashCommand {
                    name: s.name.clone(),
                    description: format!("(skill) {}", s.description),
                    hint: String::new(),
                },
            })
            .collect()
    }

    fn expand<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Option<Expanded>, String>> {
        Box::pin(std::future::ready(self.expand_text(text)))
    }
}

/// A skill's text for the model: where it is, its `SKILL.md` (without the
/// frontmatter), the arguments, and the other files of its folder.
///
/// # Errors
/// Its `SKILL.md` cannot be read.
pub fn load_skill(skill: &Skill, args: &str) -> Result<String, String> {
    let text = read(&skill.file).map_err(|why| format!("skill {}: {why}", skill.name))?;
    let body = skills::split(&text).map(|(_, body)| body).unwrap_or(&text);
    let dir = skill.file.parent().unwrap_or(Path::new("/"));
    let mut out = format!(
        "Base directory for this skill: {}\n\n{}",
        dir.display(),
        body.trim()
    );
    if !args.is_empty() {
        out.push_str(&format!("\n\nARGUMENTS: {args}"));
    }
    let mut files = Vec::new();
    let mut ignored = Vec::new();
    collect_any(dir, dir, &mut files, &mut ignored);
    files.retain(|f| f != "SKILL.md");
    files.sort();
    if !files.is_empty() {
        let shown = files.len().min(FILES_SHOWN);
        out.push_str(
            "\n\nOther files in this skill's folder (read them when the steps call for them):",
        );
        for file in &files[..shown] {
            out.push_str(&format!("\n- {file}"));
        }
        if files.len() > shown {
            out.push_str(&format!("\n- … and {} more", files.len() - shown));
        }
    }
    Ok(out)
}

/// The most files of a skill's folder listed.
const FILES_SHOWN: usize = 50;

/// `body` with `$ARGUMENTS` and `$1` … `$9` put in; the arguments go at the
/// end when it names none of them.
#[must_use]
pub fn substitute(body: &str, args: &str) -> String {
    let words = split_args(args);
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            used = true;
            rest = tail;
        } else if let Some(digit) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
            let index = (digit as usize) - ('1' as usize);
            out.push_str(words.get(index).map_or("", String::as_str));
            used = true;
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if !used && !args.is_empty() {
        out.push_str(&format!("\n\nARGUMENTS: {args}"));
    }
    out
}

/// Arguments split as a shell would: on white space, quotes grouping.
fn split_args(args: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in args.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => word.push(c),
        }
    }
    if started || !word.is_empty() {
        words.push(word);
    }
    words
}

/// A regular text file, at most [`BODY_MAX`] bytes of it (cut at a
/// character).
fn read(path: &Path) -> Result<String, String> {
    use std::io::Read;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Err("not a regular file".to_owned());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(BODY_MAX as u64).read_to_end(&mut bytes))
        .map_err(|err| format!("cannot read it ({err})"))?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        // Cut inside a character at the limit: keep the whole ones.
        Err(err) if err.utf8_error().error_len().is_none() => {
            let valid = err.utf8_error().valid_up_to();
            let mut bytes = err.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())
        }
        Err(_) => Err("not UTF-8 text".to_owned()),
    }
}

/// How deep command folders are walked.
const DEPTH_MAX: usize = 8;

/// The walk of one folder of commands.
struct Walk<'a> {
    /// The folder as given: names are paths below it.
    root: PathBuf,
    /// The folder, canonical.
    top: PathBuf,
    /// A repository's or a plugin's: a file or folder that resolves
    /// outside `top` (a link to `~/.aws/credentials`) is refused.
    confined: bool,
    /// Folders walked (canonical), so a link back to one is not a loop.
    seen: Vec<PathBuf>,
    out: &'a mut Vec<(PathBuf, String)>,
    warnings: &'a mut Vec<String>,
}

impl Walk<'_> {
    /// The `.md` files under `dir` (a file itself counts), named as
    /// commands: the path below the top without `.md`, folders joined by
    /// `:`.
    fn dir(&mut self, dir: &Path, depth: usize) {
        let Ok(real) = std::fs::canonicalize(dir) else {
            return;
        };
        if self.confined && !real.starts_with(&self.top) {
            self.warnings.push(format!(
                "{}: leads outside {}; left out",
                dir.display(),
                self.top.display()
            ));
            return;
        }
        if real.is_file() {
            if let Some(stem) = dir.file_stem().and_then(|s| s.to_str()) {
                self.out.push((real, stem.to_owned()));
            }
            return;
        }
        if depth > DEPTH_MAX || self.seen.contains(&real) {
            return;
        }
        self.seen.push(real.clone());
        let entries = match std::fs::read_dir(&real) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return,
            Err(err) => {
                self.warnings.push(format!(
                    "{}: cannot list the commands ({err})",
                    dir.display()
                ));
                return;
            }
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = dir.join(&name);
            if path.is_dir() {
                self.dir(&path, depth + 1);
                continue;
            }
            let Some(stem) = name.strip_suffix(".md") else {
                continue;
            };
            let resolved = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if self.confined && !resolved.starts_with(&self.top) {
                self.warnings.push(format!(
                    "{}: a link to {}, outside {}; left out",
                    path.display(),
                    resolved.display(),
                    self.top.display()
                ));
                continue;
            }
            let Ok(relative) = dir.strip_prefix(&self.root) else {
                continue;
            };
            let mut parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            parts.push(stem.to_owned());
            let name = parts.join(":");
            if name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
            {
                self.out.push((path, name));
            } else {
                self.warnings.push(format!(
                    "{}: /{name} is not a command name (letters, digits, '-', '_' and '.' \
                     only); left out",
                    path.display()
                ));
            }
        }
    }
}

/// Every file under `dir`, relative to `top`, hidden ones aside, at most a
/// few hundred.
fn collect_any(top: &Path, dir: &Path, out: &mut Vec<String>, seen: &mut Vec<PathBuf>) {
    if out.len() > 500 || seen.len() > 100 {
        return;
    }
    seen.push(dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect_any(top, &path, out, seen),
            Ok(kind) if kind.is_file() => {
                if let Ok(relative) = path.strip_prefix(top) {
                    out.push(relative.display().to_string());
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_go_where_the_body_says() {
        assert_eq!(
            substitute("Fix issue $1 in $2; all: $ARGUMENTS.", "42 'src/a b.rs'"),
            "Fix issue 42 in src/a b.rs; all: 42 'src/a b.rs'."
        );
        assert_eq!(
            substitute("Review.", "the parser"),
            "Review.\n\nARGUMENTS: the parser"
        );
        assert_eq!(substitute("Costs $5 and $x", ""), "Costs  and $x");
        assert_eq!(substitute("Only $3", "a b"), "Only ");
    }
}
