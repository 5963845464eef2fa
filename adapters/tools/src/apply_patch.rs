//! `apply_patch`: the `*** Begin Patch` format models trained on Codex
//! write, adding, updating, moving and deleting several files in one call.
//!
//! Invariants:
//! - all or nothing: every file's new content is worked out in memory
//!   first ([`plan`]); if a path is refused, a file is missing (or already
//!   there, for an add or a move's destination) or a hunk does not apply,
//!   nothing is written and the result names the file and the hunk;
//! - then new contents go to temporary files beside their targets, which
//!   are renamed over them only once every one was written, and deletes
//!   come last; a failure while writing the temporary files removes them
//!   (and the folders made for them), so the workspace is as it was;
//! - every path goes through [`confine`], and I/O uses the confined path;
//! - an updated or moved file keeps its permission bits; a read-only file
//!   is refused, as `edit` refuses it;
//! - `classify` names every path the patch touches in `writes` (moves'
//!   destinations included), so `Edit(...)` rules and pre-images cover all
//!   of them; a patch that does not parse still classifies, as a write on
//!   the subject `apply_patch`, and fails when it runs.
//!
//! The grammar is in `parse`; how hunks find their place in `hunks`.

mod hunks;
mod parse;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fs::{self, Permissions};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use cox_protocol::CancelToken;
use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::common;
use crate::path::confine_write;
use crate::schema::input_schema;
use parse::FileOp;

const NAME: &str = "apply_patch";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    #[serde(alias = "input")]
    patch: String,
}

/// Applies a multi-file patch in the Codex format, all or nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct ApplyPatchTool;

impl Tool for ApplyPatchTool {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Add, update, move or delete files in one patch: *** Begin Patch, then \
                          *** Add File: <path> (+ lines), *** Update File: <path> (@@ hunks), \
                          *** Delete File: <path>, then *** End Patch."
                .into(),
            input_schema: input_schema::<Input>(),
        }
    }

    fn classify(&self, input: &Value, workspace: &Workspace) -> Classified {
        let text = common::str_field(input, "patch").or_else(|| common::str_field(input, "input"));
        let Some(Ok(ops)) = text.map(parse::parse) else {
            return Classified {
                risk: Risk::Write,
                subject: NAME.into(),
                segments: None,
                writes: Vec::new(),
            };
        };
        let mut writes: Vec<String> = Vec::new();
        let named = ops.iter().flat_map(|op| match op {
            FileOp::Update {
                path,
                move_to: Some(to),
                ..
            } => vec![path.as_str(), to.as_str()],
            op => vec![op.path()],
        });
        for raw in named {
            let path = common::path_subject(Some(raw), workspace, NAME);
            if !writes.contains(&path) {
                writes.push(path);
            }
        }
        Classified {
            risk: Risk::Write,
            subject: writes.first().cloned().unwrap_or_else(|| NAME.into()),
            segments: None,
            writes,
        }
    }

    fn run<'a>(&'a self, input: Value, cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let input: Input = match common::parse(NAME, input) {
                Ok(input) => input,
                Err(result) => return result,
            };
            let workspace = cx.workspace.clone();
            let cancel = cx.cancel.clone();
            let decided = cx.decided.to_vec();
            let result =
                common::blocking(move || run(&input.patch, &workspace, &decided, &cancel)).await;
            if result.ok {
                for path in cx.decided {
                    cx.sandbox.wrote(std::path::Path::new(path));
                }
            }
            result
        })
    }
}

/// Parses, plans and commits a patch; the result the model reads.
fn run(text: &str, workspace: &Workspace, decided: &[String], cancel: &CancelToken) -> ToolResult {
    let ops = match parse::parse(text) {
        Ok(ops) => ops,
        Err(e) => return ToolResult::error(format!("{e}; nothing was written")),
    };
    let plan = match plan(&ops, workspace, decided) {
        Ok(plan) => plan,
        Err(why) => return ToolResult::error(format!("{why}; nothing was written")),
    };
    if cancel.is_cancelled() {
        return common::cancelled(NAME);
    }
    match commit(&plan) {
        Ok(bytes) => {
            ToolResult::ok(format!("applied: {}", plan.summary.join(", "))).with_bytes(bytes)
        }
        Err(why) => ToolResult::error(why),
    }
}

/// A file as the patch leaves it.
#[derive(Clone, Debug)]
enum State {
    Present {
        bytes: Vec<u8>,
        /// Kept from the file it came from; `None` for a new file.
        mode: Option<Permissions>,
        /// The path as the patch wrote it, for messages.
        raw: String,
    },
    Absent {
        raw: String,
    },
}

/// Every file the patch changes, in its final state, and the summary.
#[derive(Debug, Default)]
struct Plan {
    files: BTreeMap<PathBuf, State>,
    summary: Vec<String>,
}

impl Plan {
    /// A file's bytes and mode as the patch has it so far, `None` when it
    /// does not exist.
    fn current(&self, path: &Path, raw: &str) -> Result<Option<Current>, String> {
        match self.files.get(path) {
            Some(State::Present { bytes, mode, .. }) => {
                return Ok(Some((bytes.clone(), mode.clone())));
            }
            Some(State::Absent { .. }) => return Ok(None),
            None => {}
        }
        let meta = match fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("could not read {raw}: {e}")),
        };
        if meta.is_dir() {
            return Err(format!("{raw} is a folder, not a file"));
        }
        let bytes = fs::read(path).map_err(|e| format!("could not read {raw}: {e}"))?;
        Ok(Some((bytes, Some(meta.permissions()))))
    }
}

/// A file's bytes and, unless the patch adds it, its permissions.
type Current = (Vec<u8>, Option<Permissions>);

fn confined(workspace: &Workspace, decided: &[String], raw: &str) -> Result<PathBuf, String> {
    let path = confine_write(workspace, raw).map_err(|e| e.to_string())?;
    common::still_decided(decided, raw, &path)?;
    Ok(path)
}

/// Works out every file's final state, touching nothing.
fn plan(ops: &[FileOp], workspace: &Workspace, decided: &[String]) -> Result<Plan, String> {
    let mut plan = Plan::default();
    for op in ops {
        match op {
            FileOp::Add { path: raw, lines } => {
                let path = confined(workspace, decided, raw)?;
                if plan.current(&path, raw)?.is_some() {
                    return Err(format!(
                        "cannot add {raw}: it already exists; use *** Update File to change it"
                    ));
                }
                let mut bytes = lines.join("\n").into_bytes();
                if !lines.is_empty() {
                    bytes.push(b'\n');
                }
                let raw = raw.clone();
                plan.summary.push(format!("A {raw}"));
                let state = State::Present {
                    bytes,
                    mode: None,
                    raw,
                };
                plan.files.insert(path, state);
            }
            FileOp::Delete { path: raw } => {
                let path = confined(workspace, decided, raw)?;
                if plan.current(&path, raw)?.is_none() {
                    return Err(format!("cannot delete {raw}: it does not exist"));
                }
                plan.summary.push(format!("D {raw}"));
                plan.files.insert(path, State::Absent { raw: raw.clone() });
            }
            FileOp::Update {
                path: raw,
                move_to,
                hunks,
            } => {
                let path = confined(workspace, decided, raw)?;
                let Some((bytes, mode)) = plan.current(&path, raw)? else {
                    return Err(format!(
                        "cannot update {raw}: it does not exist; use *** Add File to create it"
                    ));
                };
                if mode.as_ref().is_some_and(Permissions::readonly) {
                    return Err(format!("cannot update {raw}: it is read-only"));
                }
                let Ok(text) = String::from_utf8(bytes) else {
                    return Err(format!(
                        "{raw} is not UTF-8 text; apply_patch changes text only"
                    ));
                };
                let updated = hunks::apply(&text, hunks)
                    .map_err(|e| format!("hunk {} of {raw} does not apply: {}", e.number, e.why))?;
                let (target, target_raw) = match move_to {
                    Some(to) => {
                        let target = confined(workspace, decided, to)?;
                        if target != path && plan.current(&target, to)?.is_some() {
                            return Err(format!("cannot move {raw} to {to}: {to} already exists"));
                        }
                        plan.summary.push(format!("R {raw} -> {to}"));
                        (target, to.clone())
                    }
                    None => {
                        plan.summary.push(format!("M {raw}"));
                        (path.clone(), raw.clone())
                    }
                };
                if target != path {
                    plan.files.insert(path, State::Absent { raw: raw.clone() });
                }
                let state = State::Present {
                    bytes: updated.into_bytes(),
                    mode,
                    raw: target_raw,
                };
                plan.files.insert(target, state);
            }
        }
    }
    // A file the patch writes cannot also be a folder of another.
    for (path, state) in &plan.files {
        let State::Present { raw, .. } = state else {
            continue;
        };
        let parent = path
            .ancestors()
            .skip(1)
            .find_map(|dir| match plan.files.get(dir) {
                Some(State::Present { raw, .. }) => Some(raw),
                _ => None,
            });
        if let Some(parent) = parent {
            return Err(format!(
                "cannot write {raw}: the patch also writes {parent} as a file"
            ));
        }
    }
    Ok(plan)
}

/// A new content written beside its target, not yet renamed over it.
struct Staged<'p> {
    temp: PathBuf,
    target: &'p Path,
    raw: &'p str,
}

/// Writes the plan: stages every new content, renames them all into place,
/// then deletes. The bytes written, or what went wrong and what was left.
fn commit(plan: &Plan) -> Result<u64, String> {
    let mut made: Vec<PathBuf> = Vec::new();
    let mut staged: Vec<Staged<'_>> = Vec::new();
    let mut written = 0;
    for (index, (target, state)) in plan.files.iter().enumerate() {
        let State::Present { bytes, mode, raw } = state else {
            continue;
        };
        match stage(target, bytes, mode.as_ref(), index, &mut made) {
            Ok(temp) => staged.push(Staged { temp, target, raw }),
            Err(e) => {
                unstage(&staged, &made);
                return Err(format!("could not write {raw}: {e}; nothing was written"));
            }
        }
        written += bytes.len() as u64;
    }
    for (done, file) in staged.iter().enumerate() {
        if let Err(e) = fs::rename(&file.temp, file.target) {
            unstage(&staged[done..], &[]);
            return Err(format!(
                "could not write {}: {e}; the files before it in the patch were written, \
                 it and the rest were not",
                file.raw
            ));
        }
    }
    for (path, state) in &plan.files {
        let State::Absent { raw } = state else {
            continue;
        };
        match fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => {
                return Err(format!(
                    "could not delete {raw}: {e}; the patch's other changes were made"
                ));
            }
        }
    }
    Ok(written)
}

/// Writes `bytes` to a new temporary file beside `target`, with `mode`,
/// making the folders it needs (recorded in `made`, shallowest first).
fn stage(
    target: &Path,
    bytes: &[u8],
    mode: Option<&Permissions>,
    index: usize,
    made: &mut Vec<PathBuf>,
) -> std::io::Result<PathBuf> {
    let (Some(folder), Some(name)) = (target.parent(), target.file_name()) else {
        return Err(std::io::Error::other("the path names no file"));
    };
    let mut missing: Vec<PathBuf> = folder
        .ancestors()
        .take_while(|dir| !dir.exists())
        .map(Path::to_path_buf)
        .collect();
    fs::create_dir_all(folder)?;
    missing.reverse();
    made.extend(missing);
    if name.is_empty() {
        return Err(std::io::Error::other("the path names no file"));
    }
    let temp = folder.join(format!(".cox-patch-{}-{index}", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        std::io::Write::write_all(&mut file, bytes)?;
        if let Some(mode) = mode {
            file.set_permissions(mode.clone())?;
        }
        Ok(())
    };
    if let Err(e) = write() {
        let _ = fs::remove_file(&temp);
        return Err(e);
    }
    Ok(temp)
}

/// Removes staged files and the folders made for them, newest first.
fn unstage(staged: &[Staged<'_>], made: &[PathBuf]) {
    for file in staged {
        let _ = fs::remove_file(&file.temp);
    }
    for dir in made.iter().rev() {
        let _ = fs::remove_dir(dir);
    }
}
