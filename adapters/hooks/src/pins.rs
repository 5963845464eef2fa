//! The scripts a project's (or a plugin's) hook runs, pinned as they were
//! trusted.
//!
//! A hook's command is only half of what it runs: `"$CLAUDE_PROJECT_DIR"/
//! .claude/hooks/check.sh` is trusted as a line of text, and the script it
//! names could change under it — by a `git pull`, or by the model writing
//! the file in a session whose hooks then run it outside the sandbox. So
//! every file a command names that lies inside the project (or the plugin)
//! is pinned: its hash is part of what a person trusts
//! ([`crate::HookDef::fingerprint`]), and it is checked again before each
//! run. A changed script makes the hook pending again; in a session that
//! already runs it, the hook does not run, and a tool-gating hook
//! (`PreToolUse`, `PermissionRequest`) refuses the call instead, so a
//! guard cannot be switched off by editing it.
//!
//! What the pinned scripts run in turn (a file they source, a program on
//! `PATH`) is not followed.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::config::HookDef;

/// The most of a script that is hashed, in bytes (its size counts too).
const HASHED_MAX: u64 = 4 << 20;

/// One file a hook's command names, and its hash when pinned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pin {
    pub path: PathBuf,
    pub hash: String,
}

/// Pins the scripts of every hook in `defs` that needs trust: the files
/// its command names inside `project` (or its plugin's folder).
pub fn pin_all(defs: &mut [HookDef], project: &Path) {
    for def in defs.iter_mut() {
        if def.origin.scope.trusted_as_written() {
            continue;
        }
        def.pins = scripts(def, project)
            .into_iter()
            .filter_map(|path| {
                let hash = hash_file(&path)?;
                Some(Pin { path, hash })
            })
            .collect();
    }
}

/// The pins of `def` whose file is not what was pinned now: the first
/// such path.
#[must_use]
pub fn changed(def: &HookDef) -> Option<&Path> {
    def.pins
        .iter()
        .find(|pin| hash_file(&pin.path).as_deref() != Some(pin.hash.as_str()))
        .map(|pin| pin.path.as_path())
}

/// The files `def`'s command names that lie inside `project` or its
/// plugin's folder, canonical.
fn scripts(def: &HookDef, project: &Path) -> Vec<PathBuf> {
    let plugin_root = def
        .env
        .iter()
        .find(|(k, _)| k == "CLAUDE_PLUGIN_ROOT")
        .map(|(_, v)| PathBuf::from(v));
    let project_text = project.display().to_string();
    let root_text = plugin_root.as_ref().map(|r| r.display().to_string());
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
        if word.is_empty() || word.contains('$') {
            continue;
        }
        let path = Path::new(&word);
        let path = if path.is_absolute() {
            path.to_path_buf()
        } else {
            project.join(path)
        };
        let Ok(canonical) = std::fs::canonicalize(&path) else {
            continue;
        };
        let inside = canonical.starts_with(project)
            || plugin_root
                .as_ref()
                .is_some_and(|r| canonical.starts_with(r));
        if inside && canonical.is_file() && !found.contains(&canonical) {
            found.push(canonical);
        }
    }
    found
}

/// The words of a command line, roughly as a shell splits them: on white
/// space and operators, quotes dropped.
fn words(command: &str) -> Vec<String> {
    command
        .split(|c: char| c.is_whitespace() || ";|&<>()`".contains(c))
        .map(|w| {
            w.trim_matches(|c| c == '"' || c == '\'')
                .replace(['"', '\''], "")
        })
        .filter(|w| !w.is_empty() && !w.starts_with('-'))
        .collect()
}

/// The SHA-256 of a file's first [`HASHED_MAX`] bytes and its size; `None`
/// when it cannot be read (a pinned file that is gone has changed).
fn hash_file(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    let mut hash = Sha256::new();
    hash.update(size.to_le_bytes());
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
        assert_eq!(defs[0].pins[0].path, script);
        // Outside the project: not pinned (and not trusted by a hash).
        assert!(defs[1].pins.is_empty());
        let before = defs[0].fingerprint();
        assert_eq!(changed(&defs[0]), None);
        std::fs::write(&script, "id > /tmp/owned\n").unwrap();
        assert_eq!(changed(&defs[0]), Some(script.as_path()));
        pin_all(&mut defs, &project);
        assert_ne!(defs[0].fingerprint(), before);
    }
}
