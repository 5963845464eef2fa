//! The scripts a project's (or a plugin's) hook runs, pinned as they were
//! trusted.
//!
//! A hook's command is only half of what it runs: `"$CLAUDE_PROJECT_DIR"/
//! .claude/hooks/check.sh` is trusted as a line of text, and the script it
//! names could change under it (a `git pull`, or the model writing the
//! file). So every path a command names inside the project (or the
//! plugin) is pinned: its hash — or that it does not exist — is part of
//! what a person trusts ([`crate::HookDef::fingerprint`]), and it is
//! checked again before each run, by the path as named (a link re-pointed
//! is a change). A changed script makes the hook pending again; in a
//! session that already runs it, the hook does not run, and a gate
//! (`PreToolUse`, `PermissionRequest`, `UserPromptSubmit`) refuses instead.
//!
//! This is a best effort over a shell line: what a pinned script runs in
//! turn (a file it sources, a module it imports, a program on `PATH`), a
//! path only a variable or a `cd` names, is not followed. What bounds a
//! project's hook is elsewhere: it runs inside the sandbox, and it may
//! refuse or ask, never allow.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::config::HookDef;

/// The most of a file that is hashed, in bytes; a larger one is pinned by
/// its size and modification time.
const HASHED_MAX: u64 = 16 << 20;

/// One path a hook's command names, and what was there when pinned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pin {
    /// Absolute, as the command names it (links not followed).
    pub path: PathBuf,
    /// `None`: nothing was there.
    pub hash: Option<String>,
}

/// Pins what every hook in `defs` that needs trust names inside `project`
/// (or its plugin's folder).
pub fn pin_all(defs: &mut [HookDef], project: &Path) {
    for def in defs.iter_mut() {
        if def.origin.scope.trusted_as_written() {
            continue;
        }
        def.pins = named_paths(def, project)
            .into_iter()
            .map(|path| Pin {
                hash: hash_file(&path),
                path,
            })
            .collect();
    }
}

/// The first path `def` names that is not as it was pinned.
#[must_use]
pub fn changed(def: &HookDef) -> Option<&Path> {
    def.pins
        .iter()
        .find(|pin| hash_file(&pin.path) != pin.hash)
        .map(|pin| pin.path.as_path())
}

/// The paths `def`'s command names that lie inside `project` or its
/// plugin's folder (where their links lead, too), absolute as named: the
/// files there, and the names that look like paths (`a/b`, `x.sh`) where
/// nothing is yet.
fn named_paths(def: &HookDef, project: &Path) -> Vec<PathBuf> {
    let plugin_root = def
        .env
        .iter()
        .find(|(k, _)| k == "CLAUDE_PLUGIN_ROOT")
        .map(|(_, v)| PathBuf::from(v));
    let project_text = project.display().to_string();
    let root_text = plugin_root.as_ref().map(|r| r.display().to_string());
    let inside =
        |p: &Path| p.starts_with(project) || plugin_root.as_ref().is_some_and(|r| p.starts_with(r));
    let mut found: Vec<PathBuf> = Vec::new();
    for word in words(&def.command) {
        let mut word = word;
        for name in ["CLAUDE_PROJECT_DIR", "COX_PROJECT_DIR"] {
            word = word
                .replace(&format!("${{{name}}}"), &project_text)
                .replace(&format!("${name}"), &project_text);
        }
        if let Some(root) = &root_text {
            word = word
                .replace("${CLAUDE_PLUGIN_ROOT}", root)
                .replace("$CLAUDE_PLUGIN_ROOT", root);
        }
        // `--require=./pre.js`: the value of a flag may be a path too.
        let word = match word.split_once('=') {
            Some((flag, value)) if flag.starts_with('-') => value.to_owned(),
            _ => word,
        };
        if word.is_empty() || word.starts_with('-') || word.contains('$') {
            continue;
        }
        let named = Path::new(&word);
        let path = if named.is_absolute() {
            named.to_path_buf()
        } else {
            project.join(named)
        };
        let real = std::fs::canonicalize(&path).ok();
        let looks_like_a_path = word.contains('/') || Path::new(&word).extension().is_some();
        let keep = match &real {
            Some(real) => real.is_file() && (inside(real) || inside(&path)),
            None => looks_like_a_path && inside(&path),
        };
        if keep && !found.contains(&path) {
            found.push(path);
        }
    }
    found
}

/// The words of a command line, roughly as a shell splits them: on white
/// space and operators, quotes dropped; the target of an output
/// redirection (`> log.txt`) is not a word a hook runs, so it is left out
/// (a log the hook appends to must not make it pending after every run).
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut after_output = false;
    let mut word = String::new();
    let flush = |word: &mut String, after_output: &mut bool, out: &mut Vec<String>| {
        let clean = word.replace(['"', '\''], "");
        if !clean.is_empty() {
            if !*after_output {
                out.push(clean);
            }
            *after_output = false;
        }
        word.clear();
    };
    for c in command.chars() {
        if c.is_whitespace() || ";|&<()`".contains(c) {
            flush(&mut word, &mut after_output, &mut out);
        } else if c == '>' {
            flush(&mut word, &mut after_output, &mut out);
            after_output = true;
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut after_output, &mut out);
    out
}

/// The SHA-256 of a file (with its size), or of its size and modification
/// time past [`HASHED_MAX`]; `None` when nothing readable is there.
fn hash_file(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return Some("not a file".to_owned());
    }
    let size = meta.len();
    let mut hash = Sha256::new();
    hash.update(size.to_le_bytes());
    if size > HASHED_MAX {
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .unwrap_or_default();
        hash.update(modified.as_nanos().to_le_bytes());
        return Some(hash.finalize().iter().map(|b| format!("{b:02x}")).collect());
    }
    let mut reader = file.take(HASHED_MAX);
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        hash.update(&buf[..n]);
    }
    Some(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Loader, Scope};

    #[test]
    fn an_output_target_is_not_a_word_a_hook_runs() {
        assert_eq!(
            words("sh ./check.sh --fast >> log.txt 2> err.txt; cat < in.txt"),
            ["sh", "./check.sh", "--fast", "2", "cat", "in.txt"]
        );
    }

    #[test]
    fn a_script_the_command_names_is_pinned_and_a_change_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let project = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(project.join(".claude/hooks")).unwrap();
        let script = project.join(".claude/hooks/post.sh");
        std::fs::write(&script, "echo ok\n").unwrap();
        let settings = project.join(".claude/settings.json");
        std::fs::write(
            &settings,
            r#"{"hooks": {"PostToolUse": [{"hooks": [
                {"command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/post.sh --fast"},
                {"command": "python3 -c 'print(1)' /etc/passwd"}
            ]}]}}"#,
        )
        .unwrap();
        let mut loader = Loader::new();
        loader.settings_file(&settings, &Scope::Project, &[]);
        let mut defs = loader.finish().defs;
        pin_all(&mut defs, &project);
        assert_eq!(defs[0].pins.len(), 1);
        assert_eq!(defs[0].pins[0].path, project.join(".claude/hooks/post.sh"));
        // Outside the project: not pinned (and not trusted by a hash).
        assert!(defs[1].pins.is_empty());
        let before = defs[0].fingerprint();
        assert_eq!(changed(&defs[0]), None);
        std::fs::write(&script, "id > /tmp/owned\n").unwrap();
        assert_eq!(changed(&defs[0]), Some(script.as_path()));
        // A script that was not there, then is: a change too.
        std::fs::write(
            &settings,
            r#"{"hooks": {"Stop": [{"hooks": [{"command": "[ -f gate.sh ] && sh gate.sh"}]}]}}"#,
        )
        .unwrap();
        let mut loader = Loader::new();
        loader.settings_file(&settings, &Scope::Project, &[]);
        let mut later = loader.finish().defs;
        pin_all(&mut later, &project);
        assert_eq!(changed(&later[0]), None);
        std::fs::write(project.join("gate.sh"), "id\n").unwrap();
        assert!(changed(&later[0]).is_some());
        pin_all(&mut defs, &project);
        assert_ne!(defs[0].fingerprint(), before);
    }
}
