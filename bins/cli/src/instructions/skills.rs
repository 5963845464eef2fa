//! The skills index: one line per skill, so the model knows which
//! procedures exist and where to read them, without paying for their bodies
//! in every request.
//!
//! A skill is a folder holding a `SKILL.md` that starts with a frontmatter
//! block (Claude Code's convention):
//!
//! ```text
//! ---
//! name: release
//! description: Cut a release: bump versions, tag, write the changelog.
//! ---
//! …the procedure…
//! ```
//!
//! Only `name:` and `description:` are read, with the parts of YAML such
//! files use (plain, quoted and `>`/`|` block values, continuation lines);
//! other keys are ignored. A file without both is malformed: a warning and
//! no line. When two folders hold skills of one name, the first place
//! searched wins: the repository's `.cox/skills`, then its
//! `.claude/skills`, then the user's own.

use std::collections::HashSet;
use std::fs;
use std::path::PathBuf;

use super::shown;

/// The most of the index the model is shown, in bytes.
pub const INDEX_CAP: usize = 16 * 1024;
/// Longer names are refused, as Claude Code does.
const NAME_MAX: usize = 64;
/// Longer descriptions are cut (Claude Code's limit).
const DESCRIPTION_MAX: usize = 1024;

/// One skill as the index shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// As the frontmatter names it; a plugin's is `<plugin>:<name>`.
    pub name: String,
    pub description: String,
    /// The stable spelling of its `SKILL.md`.
    pub path: String,
    /// Its `SKILL.md`, to read.
    pub file: PathBuf,
}

/// A folder of skills: where it is, its stable spelling, and the prefix
/// its skills' names take (a plugin's name).
#[derive(Debug, Clone)]
pub struct SkillDir {
    pub dir: PathBuf,
    pub label: String,
    pub prefix: Option<String>,
    /// A repository's or a plugin's folder: a `SKILL.md` that resolves
    /// outside it (a link to a secret, or `.claude/skills` itself a link)
    /// is refused. `None` for the person's own.
    pub within: Option<PathBuf>,
}

/// The skills under each folder, sorted by name, one per name.
pub fn scan(dirs: &[SkillDir], warnings: &mut Vec<String>) -> Vec<Skill> {
    let mut seen = HashSet::new();
    let mut found: Vec<(Skill, PathBuf)> = Vec::new();
    for SkillDir {
        dir,
        label,
        prefix,
        within,
    } in dirs
    {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            Err(err) => {
                warnings.push(format!(
                    "{}: cannot list the skills ({err}); left out",
                    shown(dir)
                ));
                continue;
            }
        };
        let mut names: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        names.sort();
        for name in names {
            let file = dir.join(&name).join("SKILL.md");
            if !file.is_file() {
                continue;
            }
            let canonical = fs::canonicalize(&file).unwrap_or_else(|_| file.clone());
            if let Some(top) = within
                && !canonical.starts_with(top)
            {
                warnings.push(format!(
                    "{}: a link to {}, outside {}; skill left out",
                    shown(&file),
                    shown(&canonical),
                    shown(top)
                ));
                continue;
            }
            if !seen.insert(canonical) {
                continue;
            }
            let path = format!("{label}/{}/SKILL.md", name.to_string_lossy());
            let parsed = match super::read_capped(&file) {
                Ok(Some((text, _))) => frontmatter(&text),
                Ok(None) => Err("the file is empty".to_owned()),
                Err(why) => Err(why),
            };
            match parsed {
                Ok((name, description)) => found.push((
                    Skill {
                        name: match prefix {
                            Some(prefix) => format!("{prefix}:{name}"),
                            None => name,
                        },
                        description,
                        path,
                        file: file.clone(),
                    },
                    file,
                )),
                Err(why) => warnings.push(format!("{}: {why}; skill left out", shown(&file))),
            }
        }
    }
    // Stable: among equal names, the earlier place searched stays first.
    found.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    let mut out: Vec<(Skill, PathBuf)> = Vec::new();
    for (skill, file) in found {
        match out.last() {
            Some((kept, kept_file)) if kept.name == skill.name => warnings.push(format!(
                "{}: skill `{}` is also defined in {}, which wins; left out",
                shown(&file),
                skill.name,
                shown(kept_file)
            )),
            _ => out.push((skill, file)),
        }
    }
    out.into_iter().map(|(skill, _)| skill).collect()
}

/// The index text; empty without skills.
pub fn index(skills: &[Skill]) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "# Skills\n\nA skill is a folder of instructions for one kind of task. Each line \
         gives a skill's name, what it is for, and its SKILL.md; when a task matches a \
         description, load the skill with the `skill` tool before you start and follow it.\n\n",
    );
    let start = out.len();
    for (at, skill) in skills.iter().enumerate() {
        let line = format!(
            "- `{}`: {} (`{}`)\n",
            skill.name, skill.description, skill.path
        );
        if out.len() - start + line.len() > INDEX_CAP {
            out.push_str(&format!(
                "[cox: {} more skills left out: the index is capped at {} KiB]\n",
                skills.len() - at,
                INDEX_CAP / 1024
            ));
            break;
        }
        out.push_str(&line);
    }
    out
}

/// The `name` and `description` of a `SKILL.md`, each on one line; `Err`
/// says what is wrong with the frontmatter.
pub fn frontmatter(text: &str) -> Result<(String, String), String> {
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("no frontmatter: the file must start with a line `---`".to_owned());
    }
    let block: Vec<&str> = lines
        .by_ref()
        .take_while(|l| l.trim_end() != "---")
        .collect();
    if text.lines().nth(1 + block.len()).is_none() {
        return Err("the frontmatter is not closed by a line `---`".to_owned());
    }
    let name = value(&block, "name").ok_or("the frontmatter has no `name:`")?;
    let description =
        value(&block, "description").ok_or("the frontmatter has no `description:`")?;
    if name.chars().count() > NAME_MAX {
        return Err(format!("the name is longer than {NAME_MAX} characters"));
    }
    let description = match description.char_indices().nth(DESCRIPTION_MAX) {
        Some((at, _)) => format!("{}…", &description[..at]),
        None => description,
    };
    Ok((name, description))
}

/// The frontmatter lines of `text` and the body after them; no lines and
/// the whole text when it has no frontmatter (a command's is optional).
///
/// # Errors
/// A frontmatter that is opened by a line `---` but never closed.
pub fn split(text: &str) -> Result<(Vec<&str>, &str), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Ok((Vec::new(), text));
    };
    let mut block = Vec::new();
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        at += line.len();
        if line.trim_end() == "---" {
            return Ok((block, &rest[at..]));
        }
        block.push(line.trim_end_matches(['\n', '\r']));
    }
    Err("the frontmatter is not closed by a line `---`".to_owned())
}

/// The keys at the top level of frontmatter lines, in order.
pub fn keys<'a>(block: &[&'a str]) -> Vec<&'a str> {
    block
        .iter()
        .filter(|l| !l.starts_with([' ', '\t', '#', '-']))
        .filter_map(|l| l.split_once(':').map(|(k, _)| k.trim()))
        .filter(|k| !k.is_empty())
        .collect()
}

/// The items of a list value, `key: a, b(c, d)` or one `- item` per line
/// under `key:`; empty when the key is missing.
pub fn list(block: &[&str], key: &str) -> Vec<String> {
    let Some(at) = block.iter().position(|line| {
        line.strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    }) else {
        return Vec::new();
    };
    let first = block[at][key.len()..].trim_start()[1..].trim();
    if !first.is_empty() {
        let first = first.trim_start_matches('[').trim_end_matches(']');
        let mut items = Vec::new();
        let (mut depth, mut start) = (0i32, 0);
        for (i, c) in first.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(first[start..i].to_owned());
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.push(first[start..].to_owned());
        return items
            .into_iter()
            .map(|i| unquote(i.trim()))
            .filter(|i| !i.is_empty())
            .collect();
    }
    block[at + 1..]
        .iter()
        .take_while(|l| l.trim().is_empty() || l.starts_with([' ', '\t', '-']))
        .filter_map(|l| l.trim().strip_prefix('-'))
        .map(|i| unquote(i.trim()))
        .filter(|i| !i.is_empty())
        .collect()
}

/// A YAML scalar without its quotes.
fn unquote(text: &str) -> String {
    let quoted = text.len() >= 2
        && ((text.starts_with('"') && text.ends_with('"'))
            || (text.starts_with('\'') && text.ends_with('\'')));
    if quoted {
        text[1..text.len() - 1].to_owned()
    } else {
        text.to_owned()
    }
}

/// The value of a top-level `key:` in the frontmatter lines, its
/// continuation lines folded in, white space collapsed; `None` when the key
/// is missing or its value is empty.
pub fn value(block: &[&str], key: &str) -> Option<String> {
    let at = block.iter().position(|line| {
        line.strip_prefix(key)
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    })?;
    let first = block[at][key.len()..].trim_start()[1..].trim();
    let more = block[at + 1..]
        .iter()
        .take_while(|l| l.trim().is_empty() || l.starts_with([' ', '\t']))
        .map(|l| l.trim());
    let is_block = first.starts_with(['|', '>'])
        && first[1..]
            .chars()
            .all(|c| matches!(c, '+' | '-' | '0'..='9'));
    let mut parts: Vec<&str> = if is_block { Vec::new() } else { vec![first] };
    parts.extend(more);
    let joined = one_line(&parts.join(" "));
    let unquoted = if joined.len() >= 2 && joined.starts_with('"') && joined.ends_with('"') {
        joined[1..joined.len() - 1]
            .replace("\\\"", "\"")
            .replace("\\\\", "\\")
    } else if joined.len() >= 2 && joined.starts_with('\'') && joined.ends_with('\'') {
        joined[1..joined.len() - 1].replace("''", "'")
    } else {
        joined
    };
    let unquoted = one_line(&unquoted);
    (!unquoted.is_empty()).then_some(unquoted)
}

/// Runs of white space become one space and control characters go, so a
/// value can never start a line of its own in the index.
fn one_line(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .collect()
}
