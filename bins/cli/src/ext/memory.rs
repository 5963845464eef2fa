//! Project memory over `cox.db`'s full-text `memory` table: what a
//! session recalls for each turn ([`ProjectMemory`], the core's
//! [`Memory`]), the `memory` tool the model keeps notes with
//! ([`MemoryTool`]), and the operations the terminal UI's `/memory` runs.
//!
//! A project is the repository root (or the working folder outside one),
//! so every session of a repository shares its notes and no other
//! project's leak in. Adding or forgetting a note changes what later
//! sessions are told, so the tool's `add` and `forget` are writes (they ask
//! where a write asks); `list` and `search` are read-only.

use std::path::Path;
use std::sync::Arc;

use cox_protocol::memory::{Memory, Note};
use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use cox_store::Db;
use serde_json::{Value, json};

/// The longest note kept, in characters.
pub const NOTE_MAX: usize = 2000;

/// The notes of one project, in the session's own `cox.db` connection.
pub struct ProjectMemory {
    store: Arc<cox_store::CoxStore>,
    project: String,
}

impl std::fmt::Debug for ProjectMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjectMemory")
            .field("project", &self.project)
            .finish_non_exhaustive()
    }
}

impl ProjectMemory {
    /// The notes of the project `cwd` is in.
    #[must_use]
    pub fn new(store: Arc<cox_store::CoxStore>, cwd: &Path) -> ProjectMemory {
        let project = crate::instructions::repo_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
        ProjectMemory {
            store,
            project: project.display().to_string(),
        }
    }

    fn db(&self) -> &Db {
        self.store.db()
    }

    /// Keeps `text`; the line saying so.
    ///
    /// # Errors
    /// An empty or overlong note, or `cox.db` cannot be written.
    pub fn add(&self, text: &str) -> Result<String, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("a note needs text: /memory add <text>".to_owned());
        }
        if text.chars().count() > NOTE_MAX {
            return Err(format!("a note is at most {NOTE_MAX} characters"));
        }
        let id = self
            .db()
            .memory_add(&self.project, text, &crate::env::now_rfc3339())
            .map_err(|e| e.to_string())?;
        Ok(format!("kept note {id} for {}", self.project))
    }

    /// Every note, one line each.
    ///
    /// # Errors
    /// `cox.db` cannot be read.
    pub fn list(&self) -> Result<String, String> {
        let rows = self
            .db()
            .memory_list(&self.project)
            .map_err(|e| e.to_string())?;
        if rows.is_empty() {
            return Ok(format!("no notes kept for {}", self.project));
        }
        let mut out = format!("{} note(s) for {}:", rows.len(), self.project);
        for row in rows {
            let day = row.created_at.get(..10).unwrap_or(&row.created_at);
            out.push_str(&format!("\n[{}] {day}  {}", row.id, row.text));
        }
        Ok(out)
    }

    /// The notes that share words with `query`.
    ///
    /// # Errors
    /// `cox.db` cannot be read.
    pub fn search(&self, query: &str) -> Result<String, String> {
        let rows = self
            .db()
            .memory_search(&self.project, query, 20)
            .map_err(|e| e.to_string())?;
        if rows.is_empty() {
            return Ok(format!("no note matches {query:?}"));
        }
        Ok(rows
            .iter()
            .map(|r| format!("[{}] {}", r.id, r.text))
            .collect::<Vec<_>>()
            .join("\n"))
    }

    /// Forgets note `id`.
    ///
    /// # Errors
    /// There is no such note here, or `cox.db` cannot be written.
    pub fn forget(&self, id: i64) -> Result<String, String> {
        match self.db().memory_forget(&self.project, id) {
            Ok(true) => Ok(format!("forgot note {id}")),
            Ok(false) => Err(format!("no note {id} is kept for {}", self.project)),
            Err(err) => Err(err.to_string()),
        }
    }
}

impl Memory for ProjectMemory {
    fn recall<'a>(&'a self, prompt: &'a str, limit: usize) -> BoxFuture<'a, Vec<Note>> {
        Box::pin(async move {
            match self.db().memory_search(&self.project, prompt, limit) {
                Ok(rows) => rows
                    .into_iter()
                    .map(|r| Note {
                        id: r.id,
                        text: r.text,
                    })
                    .collect(),
                Err(err) => {
                    tracing::warn!(%err, "memory recall");
                    Vec::new()
                }
            }
        })
    }
}

/// The `memory` tool.
#[derive(Debug)]
pub struct MemoryTool {
    memory: Arc<ProjectMemory>,
}

impl MemoryTool {
    #[must_use]
    pub fn new(memory: Arc<ProjectMemory>) -> Self {
        Self { memory }
    }
}

/// What a call asks.
enum Action {
    Add(String),
    List,
    Search(String),
    Forget(i64),
}

/// A memory call's risk (reading the notes, or changing them): the tool's
/// own, and `cox permissions check`'s.
#[must_use]
pub fn classify_input(input: &Value) -> Classified {
    let risk = match action(input) {
        Ok(Action::List | Action::Search(_)) => Risk::ReadOnly,
        _ => Risk::Write,
    };
    Classified {
        risk,
        subject: "memory".into(),
        segments: None,
        writes: Vec::new(),
    }
}

fn action(input: &Value) -> Result<Action, String> {
    let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_owned);
    match input.get("action").and_then(Value::as_str) {
        Some("add") => text("text")
            .map(Action::Add)
            .ok_or_else(|| "add needs `text`".to_owned()),
        Some("list") => Ok(Action::List),
        Some("search") => text("query")
            .map(Action::Search)
            .ok_or_else(|| "search needs `query`".to_owned()),
        Some("forget") => input
            .get("id")
            .and_then(Value::as_i64)
            .map(Action::Forget)
            .ok_or_else(|| "forget needs the note's `id`".to_owned()),
        _ => Err("`action` must be add, list, search or forget".to_owned()),
    }
}

impl Tool for MemoryTool {
    fn name(&self) -> &str {
        "memory"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "memory".into(),
            description: "Notes kept for this project across sessions: facts you had to \
                          discover and will need again (how to run the tests, where things \
                          live). Those that bear on a request come with it. No secrets."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ["add", "list", "search", "forget"]},
                    "text": {"type": "string", "description": "The note to keep (add)."},
                    "query": {"type": "string", "description": "Words to look for (search)."},
                    "id": {"type": "integer", "description": "The note to forget (forget)."}
                },
                "required": ["action"],
                "additionalProperties": false
            }),
        }
    }

    fn classify(&self, input: &Value, _workspace: &Workspace) -> Classified {
        classify_input(input)
    }

    fn run<'a>(&'a self, input: Value, _cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let done = match action(&input) {
                Ok(Action::Add(text)) => self.memory.add(&text),
                Ok(Action::List) => self.memory.list(),
                Ok(Action::Search(query)) => self.memory.search(&query),
                Ok(Action::Forget(id)) => self.memory.forget(id),
                Err(why) => Err(why),
            };
            match done {
                Ok(text) => ToolResult::ok(text),
                Err(why) => ToolResult::error(why),
            }
        })
    }
}
