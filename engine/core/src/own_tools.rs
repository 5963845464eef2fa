//! Tools the session itself provides, because they read its own state:
//! `expand` (an archived output, whole or by lines) and `tool_search` (the
//! schemas of tools that were deferred to keep the tool list short).
//!
//! They are a closed set ([`OwnTool`]) the driver runs itself, not `Tool`
//! objects: `expand` reads through the session's `Archive`, and
//! `tool_search` adds what it finds to the set of found tools the session
//! state keeps (and a resume rebuilds by running the same searches again).
//! `todo` keeps the model's plan: the steps it means to take and where
//! each stands, said as an [`Event::Plan`](cox_protocol::types::Event) the
//! surfaces show and the history keeps (a resume and compaction keep it
//! too). All three are read-only and reach nothing outside the session.

use cox_protocol::Archive;
use cox_protocol::provider::ToolSpec;
use cox_protocol::tool::Classified;
use cox_protocol::types::{Risk, ToolResult};
use serde_json::{Value, json};

/// A tool of the session's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OwnTool {
    /// Reads an archived output back.
    Expand,
    /// Finds deferred tools.
    ToolSearch,
    /// Keeps the plan.
    Todo,
}

impl OwnTool {
    /// The tool the model calls `name`, if it is one of these.
    #[must_use]
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "expand" => Some(Self::Expand),
            "tool_search" => Some(Self::ToolSearch),
            "todo" => Some(Self::Todo),
            _ => None,
        }
    }

    /// The name the model calls it by.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Expand => "expand",
            Self::ToolSearch => "tool_search",
            Self::Todo => "todo",
        }
    }

    /// Its schema; `deferred` is how many tools `tool_search` can find.
    #[must_use]
    pub fn spec(self, deferred: usize) -> ToolSpec {
        match self {
            Self::Expand => ToolSpec {
                name: "expand".into(),
                description: "Read an archived tool output (`#<id>` in a result): whole, or lines from..to (1-based); 64 KiB at a time from `offset`.".into(),
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "from": {"type": "integer", "minimum": 1},
                        "to": {"type": "integer", "minimum": 1},
                        "offset": {"type": "integer", "minimum": 0}
                    },
                    "required": ["id"],
                    "additionalProperties": false
                }),
            },
            Self::Todo => ToolSpec {
                name: "todo".into(),
                description: "A plan for a task of several steps: send the whole list each time (it replaces the last); one step in_progress, each marked completed when done. The person sees it.".into(),
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "todos": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "content": {"type": "string"},
                                    "status": {"enum": ["pending", "in_progress", "completed"]}
                                },
                                "required": ["content", "status"],
                                "additionalProperties": false
                            }
                        }
                    },
                    "required": ["todos"],
                    "additionalProperties": false
                }),
            },
            Self::ToolSearch => ToolSpec {
                name: "tool_search".into(),
                description: format!(
                    "Find tools not listed yet ({deferred} more exist, e.g. from MCP servers) by words of their name or purpose; the ones found become callable."
                ),
                input_schema: json!({
                    "type": "object",
                    "properties": {"query": {"type": "string"}},
                    "required": ["query"],
                    "additionalProperties": false
                }),
            },
        }
    }

    /// Both are read-only; the subject is the archive id or the query.
    #[must_use]
    pub fn classify(self, input: &Value) -> Classified {
        let subject = match self {
            Self::Expand => {
                let id = input["id"]
                    .as_str()
                    .unwrap_or_default()
                    .trim_start_matches('#');
                format!("#{id}")
            }
            Self::ToolSearch => input["query"].as_str().unwrap_or_default().to_owned(),
            Self::Todo => {
                let steps = input["todos"].as_array().map_or(0, Vec::len);
                format!("{steps} step(s)")
            }
        };
        Classified {
            risk: Risk::ReadOnly,
            subject,
            segments: None,
            writes: Vec::new(),
        }
    }
}

/// The most steps a plan keeps, and the most characters of one.
const PLAN_STEPS: usize = 30;
const STEP_CHARS: usize = 200;

/// The plan a `todo` call sets, or why its input is not one.
///
/// # Errors
/// The result the model reads: what is wrong with the input.
pub fn plan(input: &Value) -> Result<Vec<cox_protocol::types::PlanStep>, ToolResult> {
    use cox_protocol::types::{PlanStep, StepStatus};
    let wrong = |why: String| ToolResult::error(format!("todo: {why}"));
    let Some(todos) = input["todos"].as_array() else {
        return Err(wrong("`todos` must be a list of {content, status}".into()));
    };
    if todos.len() > PLAN_STEPS {
        return Err(wrong(format!(
            "{} steps; a plan keeps at most {PLAN_STEPS}",
            todos.len()
        )));
    }
    let mut steps = Vec::with_capacity(todos.len());
    for (index, todo) in todos.iter().enumerate() {
        let n = index + 1;
        // One line each: inner whitespace, newlines included, is one space.
        let content = todo["content"]
            .as_str()
            .unwrap_or_default()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let content = content.as_str();
        if content.is_empty() {
            return Err(wrong(format!("step {n} has no `content`")));
        }
        if content.chars().count() > STEP_CHARS {
            return Err(wrong(format!(
                "step {n} is longer than {STEP_CHARS} characters"
            )));
        }
        let status = match todo["status"].as_str() {
            Some("pending") => StepStatus::Pending,
            Some("in_progress") => StepStatus::InProgress,
            Some("completed") => StepStatus::Completed,
            other => {
                return Err(wrong(format!(
                    "step {n}: status {} is not pending, in_progress or completed",
                    other.map_or_else(|| "missing".to_owned(), |s| format!("`{s}`"))
                )));
            }
        };
        steps.push(PlanStep {
            content: content.to_owned(),
            status,
        });
    }
    Ok(steps)
}

/// What the model reads after setting `steps`.
#[must_use]
pub fn plan_result(steps: &[cox_protocol::types::PlanStep]) -> ToolResult {
    use cox_protocol::types::StepStatus;
    let count = |status| steps.iter().filter(|s| s.status == status).count();
    ToolResult::ok(format!(
        "plan kept: {} step(s), {} completed, {} in progress, {} pending",
        steps.len(),
        count(StepStatus::Completed),
        count(StepStatus::InProgress),
        count(StepStatus::Pending)
    ))
}

/// The plan as the model is reminded of it once a compaction hid the call
/// that set it (system[3]): the count of completed steps, then the open
/// ones; `None` when no step is open.
#[must_use]
pub fn plan_section(steps: &[cox_protocol::types::PlanStep]) -> Option<String> {
    use cox_protocol::types::StepStatus;
    let done = steps
        .iter()
        .filter(|s| s.status == StepStatus::Completed)
        .count();
    if done == steps.len() {
        return None;
    }
    let mut out = String::from("Current plan (the todo tool's; update it as you go):\n");
    if done > 0 {
        out.push_str(&format!("[x] {done} step(s) completed\n"));
    }
    for step in steps.iter().filter(|s| s.status != StepStatus::Completed) {
        let mark = match step.status {
            StepStatus::Completed => "[x]",
            StepStatus::InProgress => "[~]",
            StepStatus::Pending => "[ ]",
        };
        out.push_str(&format!("{mark} {}\n", step.content));
    }
    Some(out)
}

/// The most one `expand` call returns; the model pages with `lines`.
const EXPAND_LIMIT: usize = 64 * 1024;

/// What `expand` returns for `input`: the archived output `id`, whole or
/// the lines asked for, at most [`EXPAND_LIMIT`] bytes from `offset`.
pub fn expand<A: Archive + ?Sized>(archive: &A, input: &Value) -> ToolResult {
    let Some(id) = input["id"]
        .as_str()
        .map(|i| i.trim().trim_start_matches('#'))
    else {
        return ToolResult::error("expand needs an `id`, e.g. {\"id\": \"01J9…\"}");
    };
    let bytes = match archive.get(id) {
        Ok(bytes) => bytes,
        Err(err) => return ToolResult::error(err.to_string()),
    };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let total = lines.len();
    let from = input["from"]
        .as_u64()
        .map_or(1, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let to = input["to"]
        .as_u64()
        .map_or(total, |n| usize::try_from(n).unwrap_or(usize::MAX));
    if from == 0 || from > total || to < from {
        return ToolResult::error(format!(
            "#{id} has {total} lines; lines {from}–{to} are not in it"
        ));
    }
    let to = to.min(total);
    // The lines asked for, then at most EXPAND_LIMIT bytes of them from
    // `offset` on (at character boundaries), so even one enormous line
    // can be read piece by piece.
    let selected: String = lines[from - 1..to].concat();
    let offset = input["offset"]
        .as_u64()
        .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
    if offset > selected.len() {
        return ToolResult::error(format!(
            "lines {from}–{to} of #{id} are {} bytes; offset {offset} is past them",
            selected.len()
        ));
    }
    let mut start = offset;
    while !selected.is_char_boundary(start) {
        start += 1;
    }
    let mut end = (start + EXPAND_LIMIT).min(selected.len());
    while !selected.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = selected[start..end].to_owned();
    if end < selected.len() {
        out.push_str(&format!(
            "\n[… {} more bytes of lines {from}–{to}: ask again with offset {end}]\n",
            selected.len() - end
        ));
    }
    let mut result = ToolResult::ok(out);
    result.bytes = Some(bytes.len() as u64);
    result
}

/// The deferred tools a `tool_search` for `query` finds: the best five by
/// how many of its words their name and description hold. `None` when the
/// query has no words.
#[must_use]
pub fn search<'a>(deferred: &'a [ToolSpec], query: &str) -> Option<Vec<&'a ToolSpec>> {
    let query = query.to_lowercase();
    let words: Vec<&str> = query.split_whitespace().collect();
    if words.is_empty() {
        return None;
    }
    let mut hits: Vec<(usize, &ToolSpec)> = deferred
        .iter()
        .map(|spec| {
            let haystack = format!("{} {}", spec.name, spec.description).to_lowercase();
            (
                words.iter().filter(|w| haystack.contains(**w)).count(),
                spec,
            )
        })
        .filter(|(score, _)| *score > 0)
        .collect();
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.name.cmp(&b.1.name)));
    hits.truncate(5);
    Some(hits.into_iter().map(|(_, spec)| spec).collect())
}

/// What the model gets back from a `tool_search` for `query` that found
/// `hits`.
#[must_use]
pub fn search_result(query: &str, hits: Option<&[&ToolSpec]>) -> ToolResult {
    let Some(hits) = hits else {
        return ToolResult::error("tool_search needs a `query`");
    };
    if hits.is_empty() {
        return ToolResult::ok(format!("no tool matches `{}`", query.to_lowercase()));
    }
    let mut out = String::from("These tools can be called now:\n");
    for spec in hits {
        out.push_str(&format!(
            "- {}: {}\n  input schema: {}\n",
            spec.name, spec.description, spec.input_schema
        ));
    }
    ToolResult::ok(out)
}
