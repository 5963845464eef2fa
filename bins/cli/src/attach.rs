//! What a person attaches to a prompt: files named as `@path` (in the
//! terminal UI and headless alike), images given with `--image` or by an
//! editor.
//!
//! `@path` is expanded by the core before the turn starts, through the
//! same [`Expander`] port as slash commands and MCP resources, so every
//! surface gets the same result. A text file's contents follow the prompt
//! in a `<file>` block, a folder's listing in a `<folder>` block, and an
//! image joins the prompt as an image (scaled to the providers' limits).
//!
//! Invariants:
//! - a file is attached only when the `read` tool could read it without
//!   asking: inside a workspace root (links resolved), and a `read` call on
//!   it allowed by the rules as they stand (no deny rule, no ask rule, the
//!   built-in secret folders included); anything else is not attached, and
//!   a notice says why; only regular files and folders (a FIFO or a device
//!   would never end);
//! - what is attached is bounded ([`MAX_FILE_BYTES`], [`MAX_ENTRIES`]);
//! - a word that names nothing on disk (an e-mail address, `@someone`, an
//!   MCP resource `@server:uri`) is left alone, never an error;
//! - the core scrubs what is brought in of secret-shaped strings.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cox_protocol::CallId;
use cox_protocol::mcp::{Expanded, Expander};
use cox_protocol::provider::BoxFuture;
use cox_protocol::tool::{PathRules, Workspace};
use cox_protocol::types::{
    ApprovalPolicy, Image, PermissionMode, Risk, SandboxMode, SlashCommand, ToolCall,
};

/// The most of a text file a mention attaches.
pub const MAX_FILE_BYTES: usize = 256 * 1024;
/// The most entries of a folder's listing a mention attaches.
pub const MAX_ENTRIES: usize = 200;
/// The largest image file a mention reads (as the `read` tool).
pub const MAX_IMAGE_FILE: u64 = 32 * 1024 * 1024;

/// `@path` mentions, read under the session's rules.
pub struct Mentions {
    workspace: Workspace,
    rules: Arc<cox_permission::Engine>,
    home: Option<PathBuf>,
}

impl Mentions {
    #[must_use]
    pub fn new(
        workspace: Workspace,
        rules: Arc<cox_permission::Engine>,
        home: Option<PathBuf>,
    ) -> Self {
        Self {
            workspace,
            rules,
            home,
        }
    }

    /// The paths `text` mentions, as typed (without the `@`), each once.
    fn mentioned(text: &str) -> Vec<&str> {
        let mut found: Vec<&str> = Vec::new();
        for word in text.split_whitespace() {
            let Some(raw) = word.strip_prefix('@') else {
                continue;
            };
            let raw = raw.trim_end_matches([',', '.', ';', ':', '!', '?', ')', '"', '\'']);
            // An MCP resource (`@server:uri`) or a URL is another
            // expander's, or nobody's.
            if raw.is_empty() || raw.contains("://") || is_resource(raw) {
                continue;
            }
            if !found.contains(&raw) {
                found.push(raw);
            }
        }
        found
    }

    /// What the mention of `raw` attaches: `Ok(None)` when it names
    /// nothing on disk.
    fn attach(&self, raw: &str) -> Result<Option<Attached>, String> {
        let expanded = match (raw.strip_prefix("~/"), &self.home) {
            (Some(rest), Some(home)) => home.join(rest).display().to_string(),
            _ => raw.to_owned(),
        };
        let lexical = self.workspace.cwd.join(&expanded);
        if std::fs::symlink_metadata(&lexical).is_err() {
            return Ok(None);
        }
        let path = cox_tools::path::confine(&self.workspace, &expanded)
            .map_err(|e| format!("@{raw} was not attached: {e}"))?;
        let read = ToolCall {
            id: CallId::from("mention"),
            name: "read".to_owned(),
            input: serde_json::json!({ "path": path }),
            risk: Risk::ReadOnly,
            subject: path.display().to_string(),
            segments: None,
            writes: Vec::new(),
        };
        let decided = self.rules.decide(
            &read,
            PermissionMode::Default,
            ApprovalPolicy::Never,
            SandboxMode::WorkspaceWrite,
            &[],
        );
        if !matches!(decided, cox_permission::Outcome::Allow { .. })
            || !self.rules.may_open("read", &path)
        {
            return Err(format!(
                "@{raw} was not attached: the permission rules do not let it be read without asking"
            ));
        }
        let meta = std::fs::metadata(&path).map_err(|e| format!("@{raw}: {e}"))?;
        if meta.is_dir() {
            return listing(raw, &path).map(Some);
        }
        if !meta.is_file() {
            return Err(format!(
                "@{raw} was not attached: it is not a regular file (a pipe or a device never ends)"
            ));
        }
        let bytes = read_head(&path).map_err(|e| format!("@{raw}: cannot read it: {e}"))?;
        if cox_tools::image::Format::sniff(&bytes.0).is_some() {
            if meta.len() > MAX_IMAGE_FILE {
                return Err(format!(
                    "@{raw} was not attached: an image of {} bytes is over the {MAX_IMAGE_FILE} \
                     bytes read",
                    meta.len()
                ));
            }
            let whole = std::fs::read(&path).map_err(|e| format!("@{raw}: cannot read it: {e}"))?;
            return cox_tools::image::prepare(&whole, raw)
                .map(|p| Some(Attached::Image(p.image)))
                .map_err(|why| format!("@{raw} was not attached: {why}"));
        }
        let (head, whole) = bytes;
        if head.iter().take(8192).any(|b| *b == 0) {
            return Err(format!(
                "@{raw} was not attached: it is a binary file (only text and images are)"
            ));
        }
        let mut text = String::from_utf8_lossy(&head).into_owned();
        if !whole {
            text.push_str(&format!(
                "\n[cut at {MAX_FILE_BYTES} bytes of {}: read the rest with the read tool]",
                meta.len()
            ));
        }
        Ok(Some(Attached::Text(format!(
            "<file path=\"{raw}\">\n{text}\n</file>"
        ))))
    }
}

/// `server:uri`: a word before the first `:` with no `/` or `.` in it.
fn is_resource(raw: &str) -> bool {
    raw.split_once(':')
        .is_some_and(|(server, _)| !server.is_empty() && !server.contains(['/', '.', '~']))
}

/// The first [`MAX_FILE_BYTES`] of the file, and whether that is all of it.
fn read_head(path: &Path) -> std::io::Result<(Vec<u8>, bool)> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut head)?;
    let whole = head.len() <= MAX_FILE_BYTES;
    head.truncate(MAX_FILE_BYTES);
    Ok((head, whole))
}

fn listing(raw: &str, path: &Path) -> Result<Attached, String> {
    let mut names: Vec<String> = std::fs::read_dir(path)
        .map_err(|e| format!("@{raw}: cannot list it: {e}"))?
        .filter_map(Result::ok)
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            match entry.file_type() {
                Ok(t) if t.is_dir() => format!("{name}/"),
                _ => name,
            }
        })
        .collect();
    names.sort();
    let total = names.len();
    names.truncate(MAX_ENTRIES);
    let mut text = names.join("\n");
    if total > MAX_ENTRIES {
        text.push_str(&format!("\n[{} more entries]", total - MAX_ENTRIES));
    }
    Ok(Attached::Text(format!(
        "<folder path=\"{raw}\">\n{text}\n</folder>"
    )))
}

enum Attached {
    Text(String),
    Image(Image),
}

impl Expander for Mentions {
    fn commands(&self) -> Vec<SlashCommand> {
        Vec::new()
    }

    fn expand<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Option<Expanded>, String>> {
        Box::pin(async move {
            let mentioned = Self::mentioned(text);
            if mentioned.is_empty() {
                return Ok(None);
            }
            let mut out = Expanded {
                text: text.to_owned(),
                ..Expanded::default()
            };
            let mut any = false;
            for raw in mentioned {
                match self.attach(raw) {
                    Ok(None) => {}
                    Ok(Some(Attached::Text(block))) => {
                        out.text.push_str("\n\n");
                        out.text.push_str(&block);
                        any = true;
                    }
                    Ok(Some(Attached::Image(image))) => {
                        out.images.push(image);
                        any = true;
                    }
                    Err(why) => {
                        out.notices.push(why);
                        any = true;
                    }
                }
            }
            Ok(any.then_some(out))
        })
    }
}

/// An image an editor sent as base64 (ACP's image block), made ready for
/// the model.
///
/// # Errors
/// Not base64, or not an image the providers take: one line.
pub fn image_from_base64(data: &str, name: &str) -> Result<Image, String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| format!("{name}: the image data is not base64: {e}"))?;
    cox_tools::image::prepare(&bytes, name).map(|p| p.image)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_paths_not_addresses_resources_or_urls() {
        let found = Mentions::mentioned(
            "look at @src/main.rs, @notes.md and @shot.png; mail me@x.org, see @gh:issues/1 \
             and @https://example.com/x; @src/main.rs again. @~/todo.txt",
        );
        assert_eq!(found, ["src/main.rs", "notes.md", "shot.png", "~/todo.txt"]);
    }
}
