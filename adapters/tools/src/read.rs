//! `read`: a text file's lines, numbered like `cat -n`.
//!
//! The numbers are what the model cites back (`offset`) and what keeps its
//! edits anchored, so they are always the file's real line numbers, never
//! positions in the window shown. A window never exceeds `limit` lines or
//! [`MAX_LINE_CHARS`](crate::common::MAX_LINE_CHARS) per line, and the end of
//! the answer says how to read on, so a large file costs what is asked for.
//! Binary files and folders are refused with a pointer to the right tool.
//!
//! An image (a PNG, JPEG, GIF or WebP by its first bytes, whatever its
//! name) is shown to the model as an image, made ready by
//! [`crate::image::prepare`], with one line naming it; `offset` and
//! `limit` do not apply. A file named like an image whose bytes are none is
//! refused with what they are.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind, Read, Seek, SeekFrom};
use std::path::Path;

use cox_protocol::CancelToken;
use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::common::{self, BINARY_SNIFF_BYTES};
use crate::path::confine;
use crate::schema::input_schema;

const NAME: &str = "read";
/// Lines shown when the call gives no `limit`.
pub const DEFAULT_LIMIT: usize = 2000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    path: String,
    /// 1-based first line
    offset: Option<usize>,
    limit: Option<usize>,
}

/// Reads a text file from the workspace.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadTool;

impl Tool for ReadTool {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Read a file; lines come numbered (offset and limit for a big one). An \
                          image comes as an image, a notebook as its cells."
                .into(),
            input_schema: input_schema::<Input>(),
        }
    }

    fn classify(&self, input: &Value, workspace: &Workspace) -> Classified {
        common::classify_path(NAME, Risk::ReadOnly, input, workspace)
    }

    fn run<'a>(&'a self, input: Value, cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let input: Input = match common::parse(NAME, input) {
                Ok(input) => input,
                Err(result) => return result,
            };
            let path = match confine(cx.workspace, &input.path) {
                Ok(path) => path,
                Err(e) => return ToolResult::error(e.to_string()),
            };
            if let Err(e) = common::still_decided(cx.decided, &input.path, &path) {
                return ToolResult::error(e);
            }
            let cancel = cx.cancel.clone();
            if let Some(result) = read_image(&path, &input.path, &cancel).await {
                return result;
            }
            // A notebook reads as numbered cells (with their outputs), its
            // lines windowed as any file's.
            if path.extension().is_some_and(|e| e == "ipynb") {
                let text = match cx.files {
                    Some(files) => files.read(&path).await.ok(),
                    None => None,
                };
                let text = match text {
                    Some(text) => Ok(text),
                    None => tokio::fs::read_to_string(&path)
                        .await
                        .map_err(|e| format!("cannot read {}: {e}", input.path)),
                };
                match text.and_then(|t| crate::notebook::render(&t)) {
                    Ok(shown) => {
                        let head = &shown.as_bytes()[..shown.len().min(BINARY_SNIFF_BYTES)];
                        return window(shown.as_bytes(), shown.len() as u64, head, &input, &cancel);
                    }
                    // A notebook that does not parse (a merge conflict, a
                    // Git LFS pointer) is shown as the text it is.
                    Err(why) => {
                        let mut raw = read_raw(&cx, &path, input).await;
                        raw.visible = format!(
                            "[not shown as a notebook: {why}; its text follows]\n{}",
                            raw.visible
                        );
                        return raw;
                    }
                }
            }
            read_raw(&cx, &path, input).await
        })
    }
}

/// The largest image file `read` decodes.
const MAX_IMAGE_FILE: u64 = 32 * 1024 * 1024;

/// The names of the image files `read` shows.
const IMAGE_EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "gif", "webp"];

/// The result for an image at the confined `path`: the file's bytes are
/// one, or its name says it is one. `None` for any other file, or one that
/// cannot be opened (the text path says why).
async fn read_image(path: &Path, raw: &str, cancel: &CancelToken) -> Option<ToolResult> {
    let path = path.to_path_buf();
    let raw = raw.to_owned();
    let cancel = cancel.clone();
    let named = path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        IMAGE_EXTENSIONS
            .iter()
            .any(|known| e.eq_ignore_ascii_case(known))
    });
    tokio::task::spawn_blocking(move || {
        let mut file = File::open(&path).ok()?;
        let mut head = Vec::with_capacity(512);
        (&mut file).take(512).read_to_end(&mut head).ok()?;
        if crate::image::Format::sniff(&head).is_none() {
            let why = crate::image::prepare(&head, &raw).err()?;
            return named.then(|| ToolResult::error(why));
        }
        let size = file.metadata().map_or(0, |m| m.len());
        if size > MAX_IMAGE_FILE {
            return Some(ToolResult::error(format!(
                "{raw} is an image of {size} bytes; read shows images up to {MAX_IMAGE_FILE} bytes"
            )));
        }
        let mut bytes = head;
        if let Err(e) = file.read_to_end(&mut bytes) {
            return Some(ToolResult::error(format!("could not read {raw}: {e}")));
        }
        if cancel.is_cancelled() {
            return Some(common::cancelled(NAME));
        }
        Some(match crate::image::prepare(&bytes, &raw) {
            Ok(prepared) => ToolResult::ok(prepared.line(&raw))
                .with_images(vec![prepared.image])
                .with_bytes(bytes.len() as u64),
            Err(why) => ToolResult::error(why),
        })
    })
    .await
    .unwrap_or_else(|e| {
        Some(ToolResult::error(format!(
            "the tool failed unexpectedly: {e}"
        )))
    })
}

/// The lines `input` asks for: an editor's buffer, unsaved changes
/// included, when the surface keeps the files; the disk when it cannot say.
async fn read_raw(cx: &ToolContext<'_>, path: &Path, input: Input) -> ToolResult {
    let cancel = cx.cancel.clone();
    if let Some(files) = cx.files
        && let Ok(text) = files.read(path).await
    {
        let head = &text.as_bytes()[..text.len().min(BINARY_SNIFF_BYTES)];
        return window(text.as_bytes(), text.len() as u64, head, &input, &cancel);
    }
    let path = path.to_path_buf();
    common::blocking(move || read_window(&path, &input, &cancel)).await
}

/// Reads the lines `input` asks for from the confined `path`.
fn read_window(path: &Path, input: &Input, cancel: &CancelToken) -> ToolResult {
    let raw = &input.path;
    if input.limit == Some(0) {
        return ToolResult::error("limit must be at least 1");
    }
    let file = match open_file(path, raw) {
        Ok(file) => file,
        Err(result) => return result,
    };
    let size = file.metadata().map_or(0, |m| m.len());
    let mut head = Vec::with_capacity(BINARY_SNIFF_BYTES);
    let sniffed = (&file)
        .take(BINARY_SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .and_then(|_| (&file).seek(SeekFrom::Start(0)));
    if let Err(e) = sniffed {
        return ToolResult::error(format!("could not read {raw}: {e}"));
    }
    window(
        BufReader::with_capacity(64 * 1024, file),
        size,
        &head,
        input,
        cancel,
    )
}

/// The lines `input` asks for from `reader` (`size` bytes, starting with
/// `head`), numbered.
fn window(
    mut reader: impl BufRead,
    size: u64,
    head: &[u8],
    input: &Input,
    cancel: &CancelToken,
) -> ToolResult {
    let raw = &input.path;
    let offset = input.offset.unwrap_or(1).max(1);
    let limit = input.limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 {
        return ToolResult::error("limit must be at least 1");
    }
    if head.is_empty() {
        return ToolResult::ok(format!("{raw} is empty")).with_bytes(0);
    }
    if common::looks_binary(head) {
        return ToolResult::error(format!(
            "{raw} is a binary file; read shows text only (try bash with `file` or `xxd | head`)"
        ));
    }

    let mut line = Vec::new();
    let mut shown = String::new();
    let mut total = 0usize;
    let last = offset.saturating_add(limit);
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return ToolResult::error(format!("could not read {raw}: {e}")),
        }
        total += 1;
        if (offset..last).contains(&total) {
            let _ = writeln!(shown, "{total:>6}\t{}", common::show_line(&line));
        }
        if cancel.is_cancelled() {
            return common::cancelled(NAME);
        }
    }

    if offset > total {
        return ToolResult::error(format!(
            "{raw} has {total} lines; offset {offset} is past the end"
        ));
    }
    let next = last.min(total + 1);
    let remaining = total + 1 - next;
    if remaining > 0 {
        let _ = writeln!(shown, "[… {remaining} more lines; read with offset={next}]");
    }
    ToolResult::ok(shown).with_bytes(size)
}

/// Opens a regular file, or the result explaining why not.
fn open_file(path: &Path, raw: &str) -> Result<File, ToolResult> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolResult::error(format!(
                "{raw} is a directory; use glob to list the files in it"
            )));
        }
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(ToolResult::error(format!("file {raw} does not exist")));
        }
        Err(e) => return Err(ToolResult::error(format!("could not read {raw}: {e}"))),
    }
    File::open(path).map_err(|e| ToolResult::error(format!("could not read {raw}: {e}")))
}
