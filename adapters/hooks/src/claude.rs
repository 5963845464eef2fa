//! cox's tools as Claude Code's hooks know them.
//!
//! A hook written for Claude Code reads `tool_name == "Bash"` and
//! `tool_input.file_path`; cox's tools are `bash` and `read { path }`. So a
//! hook is shown the Claude Code name of a built-in tool that has one, and
//! its input with Claude Code's field names added beside cox's own
//! (`file_path`, absolute, next to `path`); an `updatedInput` it answers is
//! brought back to cox's fields before the tool sees it. Tools Claude Code
//! has no name for (`apply_patch`, `expand`, MCP tools) keep cox's name.
//!
//! Matchers take either name: `Bash|Write` and `bash|write` both match.
//! `apply_patch` changes files as Claude Code's `Edit` and `MultiEdit` do,
//! so a matcher naming those takes it too (as `Edit(...)` permission rules
//! cover it).

use std::path::Path;

use serde_json::{Value, json};

/// The Claude Code name of a cox tool, where it has one.
#[must_use]
pub fn claude_name(tool: &str) -> Option<&'static str> {
    Some(match tool {
        "bash" => "Bash",
        "read" => "Read",
        "write" => "Write",
        "edit" => "Edit",
        "glob" => "Glob",
        "grep" => "Grep",
        "notebook_edit" => "NotebookEdit",
        "bash_output" => "BashOutput",
        "kill_shell" => "KillShell",
        "agent" => "Task",
        "todo" => "TodoWrite",
        _ => return None,
    })
}

/// Every name a matcher may use for the cox tool `tool`: its own, its
/// Claude Code name, and for `apply_patch` the edit tools it stands for.
#[must_use]
pub fn names_for(tool: &str) -> Vec<&str> {
    let mut names = vec![tool];
    if let Some(name) = claude_name(tool) {
        names.push(name);
    }
    if tool == "apply_patch" {
        names.extend(["Edit", "MultiEdit"]);
    }
    names
}

/// The tools whose input names one file in `path`.
fn names_a_file(tool: &str) -> bool {
    matches!(tool, "read" | "write" | "edit" | "notebook_edit")
}

/// How a field of a cox tool's input is spelt for Claude Code: cox's
/// name, Claude Code's, and whether it is a path (shown absolute).
type Alias = (&'static str, &'static str, bool);

/// The fields of `tool`'s input that Claude Code spells otherwise. A hook
/// or an SDK callback written for Claude Code reads (and may rewrite)
/// these names; a bash call that asks to leave the sandbox must be seen
/// as one.
fn aliases(tool: &str) -> &'static [Alias] {
    match tool {
        "read" | "write" | "edit" => &[("path", "file_path", true)],
        "notebook_edit" => &[("path", "notebook_path", true)],
        "bash" => &[
            ("timeout_ms", "timeout", false),
            ("unsandboxed", "dangerouslyDisableSandbox", false),
        ],
        _ => &[],
    }
}

/// `path` made absolute against `cwd`.
fn absolute(path: &str, cwd: &Path) -> String {
    let path = Path::new(path);
    if path.is_absolute() {
        path.display().to_string()
    } else {
        cwd.join(path).display().to_string()
    }
}

/// A cox call's input as a Claude Code hook reads it: cox's fields, and
/// Claude Code's beside them.
#[must_use]
pub fn input_for_hook(tool: &str, input: &Value, cwd: &Path) -> Value {
    let mut shown = input.clone();
    let Some(object) = shown.as_object_mut() else {
        return shown;
    };
    for &(ours, theirs, path) in aliases(tool) {
        match input.get(ours) {
            Some(Value::String(p)) if path => {
                object.insert(theirs.into(), json!(absolute(p, cwd)));
            }
            Some(value) if !path => {
                object.insert(theirs.into(), value.clone());
            }
            _ => {}
        }
    }
    shown
}

/// `shown` (an input as [`input_for_hook`] shows it) naming `file`, the
/// file the call really writes or reads (links and `..` resolved, as the
/// tool will open it), in Claude Code's path field: a guard that reads
/// `file_path` judges the file that changes or is read, not a link to it.
pub fn name_written_file(tool: &str, shown: &mut Value, file: &str) {
    if let Some(object) = shown.as_object_mut() {
        for &(_, theirs, path) in aliases(tool) {
            if path && object.contains_key(theirs) {
                object.insert(theirs.into(), json!(file));
            }
        }
    }
}

/// A hook's `updatedInput` in cox's fields: a `file_path` the hook changed
/// is the new `path` (a Claude Code hook knows only that one), and the
/// field itself goes, since cox's tools refuse fields they do not know.
#[must_use]
pub fn input_from_hook(tool: &str, original: &Value, updated: &Value, cwd: &Path) -> Value {
    input_from_shown(tool, &input_for_hook(tool, original, cwd), updated)
}

/// [`input_from_hook`] for a hook that was shown `shown`: a field it gave
/// back as shown is no change.
#[must_use]
pub fn input_from_shown(tool: &str, shown: &Value, updated: &Value) -> Value {
    let mut input = updated.clone();
    let Some(object) = input.as_object_mut() else {
        return input;
    };
    for &(ours, theirs, _) in aliases(tool) {
        if let Some(value) = object.remove(theirs) {
            // Claude Code's spelling, changed (or alone): it wins.
            if Some(&value) != shown.get(theirs) || !object.contains_key(ours) {
                object.insert(ours.into(), value);
            }
        }
    }
    input
}

/// A finished call's response as a Claude Code hook reads it: cox's
/// `success` and `output`, with `stdout` for a command and `filePath` for
/// a file tool beside them.
#[must_use]
pub fn response_for_hook(tool: &str, input: &Value, response: &Value, cwd: &Path) -> Value {
    let mut shown = response.clone();
    let Some(object) = shown.as_object_mut() else {
        return shown;
    };
    let output = response.get("output").cloned().unwrap_or(Value::Null);
    if tool == "bash" {
        object.insert("stdout".into(), output);
        object.insert("stderr".into(), json!(""));
        object.insert("interrupted".into(), json!(false));
    }
    if names_a_file(tool)
        && let Some(path) = input.get("path").and_then(Value::as_str)
    {
        object.insert("filePath".into(), json!(absolute(path, cwd)));
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_tools_gain_file_path_and_take_a_changed_one_back() {
        let cwd = Path::new("/repo");
        let input = json!({"path": "src/a.rs", "content": "x"});
        let shown = input_for_hook("write", &input, cwd);
        assert_eq!(shown["file_path"], "/repo/src/a.rs");
        assert_eq!(shown["path"], "src/a.rs");
        // Unchanged: cox's own path stays as the model wrote it.
        let back = input_from_hook("write", &input, &shown, cwd);
        assert_eq!(back, input);
        // A Claude Code hook moves the file: the new path wins.
        let mut moved = shown.clone();
        moved["file_path"] = json!("/etc/passwd");
        let back = input_from_hook("write", &input, &moved, cwd);
        assert_eq!(back, json!({"path": "/etc/passwd", "content": "x"}));
    }

    #[test]
    fn bash_and_notebooks_are_spelt_as_claude_code_spells_them() {
        let cwd = Path::new("/repo");
        let input = json!({"command": "make", "timeout_ms": 5000, "unsandboxed": true});
        let shown = input_for_hook("bash", &input, cwd);
        assert_eq!(shown["timeout"], 5000);
        assert_eq!(shown["dangerouslyDisableSandbox"], true);
        assert_eq!(input_from_hook("bash", &input, &shown, cwd), input);
        // A callback that keeps the command in the sandbox, in its words.
        let mut kept = shown.clone();
        kept["dangerouslyDisableSandbox"] = json!(false);
        let back = input_from_hook("bash", &input, &kept, cwd);
        assert_eq!(back["unsandboxed"], false);
        assert!(back.get("dangerouslyDisableSandbox").is_none());
        // Only Claude Code's fields, as a callback written for it sends.
        let back = input_from_hook(
            "bash",
            &input,
            &json!({"command": "ls", "timeout": 10}),
            cwd,
        );
        assert_eq!(back, json!({"command": "ls", "timeout_ms": 10}));

        let cell = json!({"path": "n.ipynb", "cell_id": "c1", "new_source": "x"});
        let shown = input_for_hook("notebook_edit", &cell, cwd);
        assert_eq!(shown["notebook_path"], "/repo/n.ipynb");
        assert_eq!(input_from_hook("notebook_edit", &cell, &shown, cwd), cell);
    }

    #[test]
    fn names_cover_both_spellings() {
        assert_eq!(names_for("bash"), ["bash", "Bash"]);
        assert_eq!(
            names_for("apply_patch"),
            ["apply_patch", "Edit", "MultiEdit"]
        );
        assert_eq!(names_for("mcp__fs__read"), ["mcp__fs__read"]);
    }
}
