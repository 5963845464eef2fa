//! Instruction files and the skills index: the repository's conventions as
//! the model reads them, in `system[2]` ([`SystemParts::instructions`]).
//!
//! People coming from Codex and Claude Code keep their conventions in
//! `AGENTS.md` and `CLAUDE.md` and their reusable procedures in skills, and
//! expect an agent to pick them up without being told. The core does no
//! file I/O, so the driver gathers the text here, once per process, and
//! hands it over as a string.
//!
//! What is gathered, in order: the user's own `$COX_HOME/AGENTS.md`; then,
//! for each folder from the repository root (the nearest ancestor of the
//! working folder holding `.git`, or the working folder alone outside a
//! repository) down to the working folder, its `AGENTS.md` and then its
//! `CLAUDE.md`; then an index of the skills (see [`skills`]).
//!
//! Invariants:
//! - Byte-stable. The text depends only on the files' bytes and on paths
//!   relative to the repository root; the user's own files are spelled
//!   `~/.cox/…` (or `$COX_HOME/…` when the variable moves cox's home
//!   elsewhere). No time, no absolute path, and every listing is sorted, so
//!   the provider's prompt cache keeps hitting across turns and across
//!   sessions of one repository.
//! - Bounded. Each file is cut at [`FILE_CAP`] bytes and all files together
//!   at [`TOTAL_CAP`]; a cut is said in the text, so the model knows to read
//!   the file itself.
//! - Never fatal. A file that cannot be read or is not UTF-8 (skipped, not
//!   decoded lossily: a guess at a foreign encoding would put noise in every
//!   request) is one `cox: warning:` line on stderr and an absence.
//! - Untrusted. The text comes from the repository: it informs the model and
//!   grants nothing; the permission engine still judges every call.
//!
//! [`SystemParts::instructions`]: cox_protocol::provider::SystemParts

pub mod skills;

use std::collections::HashSet;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most of one instruction file the model is shown, in bytes.
pub const FILE_CAP: usize = 32 * 1024;
/// The most of all instruction files together, in bytes.
pub const TOTAL_CAP: usize = 64 * 1024;

/// The names read in every folder, in the order they are included.
const NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// The text for `system[2]` and what went wrong finding it.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Instructions {
    /// Empty when there are no files and no skills.
    pub text: String,
    /// One line each, for stderr; they name the path.
    pub warnings: Vec<String>,
    /// The instruction files included, by their stable names.
    pub files: Vec<String>,
    /// The skills found (the `skill` tool loads them).
    pub skills: Vec<skills::Skill>,
}

/// [`gather_with`] for a session: prints each warning as `cox: warning:
/// …`.
#[must_use]
pub fn load(cox_home: &Path, cwd: &Path, plugins: &[skills::SkillDir]) -> Instructions {
    let found = gather_with(cox_home, crate::env::home_dir().as_deref(), cwd, plugins);
    for warning in &found.warnings {
        eprintln!("cox: warning: {warning}");
        tracing::warn!(%warning, "instructions");
    }
    found
}

/// [`gather_with`] without plugins.
#[cfg(test)]
#[must_use]
pub fn gather(cox_home: &Path, user_home: Option<&Path>, cwd: &Path) -> Instructions {
    gather_with(cox_home, user_home, cwd, &[])
}

/// Reads the instruction files and the skills (the plugins' too: their
/// skill folders, see `Plugin::skill_dir`) for a
/// session working in `cwd` (canonical). `user_home` is `$HOME`, used to
/// spell cox's home as `~/.cox` when that is where it is, and for Claude
/// Code's `~/.claude/skills`.
#[must_use]
pub fn gather_with(
    cox_home: &Path,
    user_home: Option<&Path>,
    cwd: &Path,
    plugins: &[skills::SkillDir],
) -> Instructions {
    let root = repo_root(cwd);
    // Where paths are relative to: the repository root, else the cwd.
    let base = root.as_deref().unwrap_or(cwd);
    let home = home_label(cox_home, user_home);
    let mut warnings = Vec::new();
    let mut seen = HashSet::new();
    let mut files = Vec::new();
    let mut candidates = vec![(cox_home.join("AGENTS.md"), format!("{home}/AGENTS.md"))];
    for dir in folders(base, cwd) {
        let folder = relative(base, &dir);
        for name in NAMES {
            candidates.push((dir.join(name), join_label(&folder, name)));
        }
    }
    let own = cox_home.join("AGENTS.md");
    let real_base = fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    for (path, label) in candidates {
        // Opened once, and where it really is asked of the open file: a
        // link swapped in between a check by path and a read by path (by
        // a confined command still running) would carry a secret in.
        let (file, real) = match open_regular(&path) {
            Ok(Some(opened)) => opened,
            Ok(None) => continue,
            Err(why) => {
                warnings.push(format!("{}: {why}; left out", shown(&path)));
                continue;
            }
        };
        // A repository's file that is a link out of it (to a secret, say)
        // is not sent: only the user's own may live anywhere.
        if path != own && !real.starts_with(&real_base) {
            warnings.push(format!(
                "{}: a link to {}, outside the repository; left out",
                shown(&path),
                shown(&real)
            ));
            continue;
        }
        // A CLAUDE.md linked to its AGENTS.md is one file, shown once.
        if !seen.insert(real) {
            continue;
        }
        match read_open(file) {
            Ok(Some((text, complete))) => files.push(Found {
                label,
                text,
                complete,
            }),
            Ok(None) => {}
            Err(why) => warnings.push(format!("{}: {why}; left out", shown(&path))),
        }
    }
    let dir = |dir: PathBuf, label: String, within: Option<PathBuf>| skills::SkillDir {
        dir,
        label,
        prefix: None,
        within,
    };
    let mut skill_dirs = vec![
        dir(
            base.join(".cox/skills"),
            ".cox/skills".to_owned(),
            Some(real_base.clone()),
        ),
        dir(
            base.join(".claude/skills"),
            ".claude/skills".to_owned(),
            Some(real_base.clone()),
        ),
        dir(cox_home.join("skills"), format!("{home}/skills"), None),
    ];
    if let Some(user_home) = user_home {
        skill_dirs.push(dir(
            user_home.join(".claude/skills"),
            "~/.claude/skills".to_owned(),
            None,
        ));
    }
    skill_dirs.extend(plugins.iter().cloned());
    let found_skills = skills::scan(&skill_dirs, &mut warnings);
    let at = match root {
        Some(_) => Place::Repository {
            cwd: relative(base, cwd),
        },
        None => Place::Folder,
    };
    Instructions {
        text: render(at, &files, &skills::index(&found_skills)),
        warnings,
        files: files.iter().map(|f| f.label.clone()).collect(),
        skills: found_skills,
    }
}

/// One instruction file as read.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    /// Its stable name: relative to the repository root, or under `~/.cox`.
    label: String,
    /// Its text (BOM and trailing white space removed), at most what
    /// [`read_capped`] reads.
    text: String,
    /// Whether `text` is the whole file.
    complete: bool,
}

/// Where paths in the text are relative to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// The repository root; `cwd` is the working folder inside it, `""`
    /// at the root.
    Repository { cwd: String },
    /// Not in a repository: the working folder.
    Folder,
}

/// The nearest ancestor of `cwd` (itself included) holding `.git`, a
/// folder or, in a worktree, a file.
#[must_use]
pub fn repo_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The folders from `root` down to `cwd`, both included.
fn folders(root: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = cwd
        .ancestors()
        .take_while(|dir| dir.starts_with(root))
        .map(Path::to_path_buf)
        .collect();
    out.reverse();
    out
}

/// `dir` relative to `root`, with `/` between names; `""` for the root.
fn relative(root: &Path, dir: &Path) -> String {
    let rest = dir.strip_prefix(root).unwrap_or(Path::new(""));
    let names: Vec<String> = rest
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    names.join("/")
}

fn join_label(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_owned()
    } else {
        format!("{base}/{name}")
    }
}

/// `~/.cox` when cox's home is the default one, else `$COX_HOME`: stable
/// either way, and a spelling a shell understands.
fn home_label(cox_home: &Path, user_home: Option<&Path>) -> &'static str {
    let canonical = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    match user_home {
        Some(home) if canonical(&home.join(".cox")) == canonical(cox_home) => "~/.cox",
        _ => "$COX_HOME",
    }
}

/// `path` opened for reading when it is a regular file (a link to one is
/// fine), with where the open file really is; `Ok(None)` when there is no
/// such file or it is something else (a folder, a fifo, a device: opened
/// without blocking, never read).
fn open_regular(path: &Path) -> Result<Option<(fs::File, PathBuf)>, String> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let file = match fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("cannot read it ({err})")),
    };
    match file.metadata() {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return Ok(None),
        Err(err) => return Err(format!("cannot read it ({err})")),
    }
    let real = fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .map_err(|err| format!("cannot tell where it is ({err})"))?;
    Ok(Some((file, real)))
}

/// Linux's `O_NONBLOCK` (the same on every architecture cox builds for):
/// opening a fifo must not wait for a writer.
const O_NONBLOCK: i32 = 0o4000;

/// A file's text, read up to a little more than [`FILE_CAP`] (enough to
/// know it was cut). `Ok(None)` when there is no such file (or it is a
/// folder, or empty); `Err` says why it cannot be used.
fn read_capped(path: &Path) -> Result<Option<(String, bool)>, String> {
    match open_regular(path)? {
        Some((file, _)) => read_open(file),
        None => Ok(None),
    }
}

/// [`read_capped`] of a file already open.
fn read_open(file: fs::File) -> Result<Option<(String, bool)>, String> {
    let limit = FILE_CAP + 4;
    let mut bytes = Vec::new();
    file.take(limit as u64)
        .read_to_end(&mut bytes)
        .map_err(|err| format!("cannot read it ({err})"))?;
    let complete = bytes.len() < limit;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        // Reading stopped inside a character: keep the whole ones.
        Err(err) if !complete && err.utf8_error().error_len().is_none() => {
            let valid = err.utf8_error().valid_up_to();
            let mut bytes = err.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())?
        }
        Err(_) => return Err("not UTF-8 text".to_owned()),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text).trim_end();
    if text.is_empty() {
        return Ok(None);
    }
    Ok(Some((text.to_owned(), complete)))
}

/// The prefix of `text` at most `max` bytes long, ended at a line break
/// when there is one, else at a character boundary; and whether it was cut.
fn cut(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    let head = head.rfind('\n').map_or(head, |at| &head[..at]);
    (head.trim_end(), true)
}

/// The whole text for `system[2]`; empty when there is nothing to say.
fn render(at: Place, files: &[Found], skills_index: &str) -> String {
    if files.is_empty() && skills_index.is_empty() {
        return String::new();
    }
    let mut out = String::from("# Instructions for this repository\n\n");
    out.push_str(
        "These were found for this session in the user's files and the repository. \
         They describe how the user and the project want work done: follow them where \
         they bear on the task. They cannot widen what the permission rules allow.",
    );
    match at {
        Place::Repository { cwd } if cwd.is_empty() => out.push_str(
            " Paths below are relative to the repository root, which is the working directory.",
        ),
        Place::Repository { cwd } => out.push_str(&format!(
            " Paths below are relative to the repository root; the working directory is \
             `{cwd}` inside it."
        )),
        Place::Folder => out.push_str(" Paths below are relative to the working directory."),
    }
    out.push('\n');
    if !files.is_empty() {
        out.push_str(
            "\nInstruction files follow, the user's own first, then from the repository \
             root down to the working directory; where they disagree, the later, closer one \
             is more specific.\n",
        );
    }
    let mut used = 0;
    for file in files {
        out.push_str(&format!("\n## {}\n\n", file.label));
        let (shown, was_cut) = cut(&file.text, FILE_CAP.min(TOTAL_CAP - used));
        if shown.is_empty() {
            out.push_str(&format!(
                "[cox: left out: the files above already fill the {} KiB allowed for \
                 instruction files; read it if it matters]\n",
                TOTAL_CAP / 1024
            ));
            continue;
        }
        used += shown.len();
        out.push_str(shown);
        out.push('\n');
        if was_cut || !file.complete {
            out.push_str(&format!(
                "\n[cox: cut here: only the first {} bytes of this file are shown; read the \
                 file for the rest]\n",
                shown.len()
            ));
        }
    }
    if !skills_index.is_empty() {
        out.push('\n');
        out.push_str(skills_index);
    }
    out
}

/// A path for a warning on the terminal: control and bidi characters from
/// a folder name are escaped, not obeyed.
fn shown(path: &Path) -> String {
    path.display()
        .to_string()
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
