//! Jupyter notebooks: `read` shows one as numbered cells, and
//! `notebook_edit` replaces, inserts or deletes one cell.
//!
//! Invariants:
//! - an edit changes the bytes of the cell it names and nothing else: the
//!   other cells, the metadata and the file's formatting stay byte for
//!   byte (each cell's place is found in the file's own text, never
//!   re-serialised), and the result is checked to parse as a notebook
//!   before it is written;
//! - a cell is named by its `id` (nbformat 4.5) or its 0-based index; a
//!   name that matches nothing is an error naming what there is.

use std::path::Path;

use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::common;
use crate::path::confine_write;
use crate::schema::input_schema;

const NAME: &str = "notebook_edit";

/// The most of one output a rendering shows, in characters.
const OUTPUT_CHARS: usize = 2_000;

/// A cell's text: a string, or the list of lines nbformat writes.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// The notebook as numbered cells: each cell's type, id and source, then
/// its text outputs (images and other data summarised).
///
/// # Errors
/// The text is not a notebook: what is wrong.
pub fn render(text: &str) -> Result<String, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("not a notebook: {e}"))?;
    let Some(cells) = doc.get("cells").and_then(Value::as_array) else {
        return Err("not a notebook: no `cells` list".into());
    };
    let mut out = String::new();
    for (index, cell) in cells.iter().enumerate() {
        let kind = cell["cell_type"].as_str().unwrap_or("unknown");
        let id = cell["id"]
            .as_str()
            .map(|id| format!(" · id {id}"))
            .unwrap_or_default();
        out.push_str(&format!("[cell {index} · {kind}{id}]\n"));
        let source = text_of(&cell["source"]);
        out.push_str(&source);
        if !source.ends_with('\n') {
            out.push('\n');
        }
        for output in cell["outputs"].as_array().into_iter().flatten() {
            let shown = match output["output_type"].as_str() {
                Some("stream") => text_of(&output["text"]),
                Some("error") => format!(
                    "{}: {}",
                    output["ename"].as_str().unwrap_or("error"),
                    output["evalue"].as_str().unwrap_or_default()
                ),
                _ => match output["data"].get("text/plain") {
                    Some(plain) => text_of(plain),
                    None => {
                        let kinds: Vec<&str> = output["data"]
                            .as_object()
                            .map(|d| d.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        format!("[{} output]", kinds.join(", "))
                    }
                },
            };
            let cut = shown.chars().count() > OUTPUT_CHARS;
            let mut shown: String = shown.chars().take(OUTPUT_CHARS).collect();
            if cut {
                shown.push_str(" […]");
            }
            for line in shown.lines() {
                out.push_str(&format!("  ⎿ {line}\n"));
            }
        }
    }
    Ok(out)
}

/// What kind of cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CellType {
    Code,
    Markdown,
    Raw,
}

impl CellType {
    fn as_str(self) -> &'static str {
        match self {
            CellType::Code => "code",
            CellType::Markdown => "markdown",
            CellType::Raw => "raw",
        }
    }
}

/// What to do to the cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EditMode {
    #[default]
    Replace,
    Insert,
    Delete,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    path: String,
    #[serde(default)]
    cell_id: Option<String>,
    /// 0-based; insert: where the new cell goes (default: the end)
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    new_source: Option<String>,
    /// Default: code (insert), the cell's own (replace)
    #[serde(default)]
    cell_type: Option<CellType>,
    /// Default: replace
    #[serde(default)]
    edit_mode: Option<EditMode>,
}

/// The notebook's text with its cells' byte ranges.
#[derive(Deserialize)]
struct Cells<'a> {
    #[serde(borrow)]
    cells: &'a RawValue,
}

/// A byte range of the notebook's text.
type Span = (usize, usize);

/// Where each cell is in `text`, and where the `cells` list's brackets are.
fn cell_spans(text: &str) -> Result<(Vec<Span>, Span), String> {
    let whole: Cells<'_> =
        serde_json::from_str(text).map_err(|e| format!("not a notebook: {e}"))?;
    let list = whole.cells.get();
    let start = list.as_ptr() as usize - text.as_ptr() as usize;
    let cells: Vec<&RawValue> =
        serde_json::from_str(list).map_err(|e| format!("not a notebook: `cells`: {e}"))?;
    let spans = cells
        .iter()
        .map(|cell| {
            let at = cell.get().as_ptr() as usize - text.as_ptr() as usize;
            (at, at + cell.get().len())
        })
        .collect();
    Ok((spans, (start, start + list.len())))
}

/// A new cell's JSON, indented like its neighbours.
fn new_cell(kind: &str, source: &str, with_id: bool, indent: &str) -> String {
    let lines: Vec<String> = source.split_inclusive('\n').map(str::to_owned).collect();
    let mut cell = serde_json::Map::new();
    cell.insert("cell_type".into(), json!(kind));
    if with_id {
        let id: String = cox_protocol::SessionId::generate()
            .to_string()
            .to_lowercase()
            .chars()
            .rev()
            .take(8)
            .collect();
        cell.insert("id".into(), json!(id));
    }
    cell.insert("metadata".into(), json!({}));
    cell.insert("source".into(), json!(lines));
    if kind == "code" {
        cell.insert("execution_count".into(), Value::Null);
        cell.insert("outputs".into(), json!([]));
    }
    pretty(&Value::Object(cell), indent)
}

/// `value` as Jupyter writes JSON (keys sorted, one space per level), its
/// lines after the first indented by `indent`.
fn pretty(value: &Value, indent: &str) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&map[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut writer = serde_json::Serializer::with_formatter(&mut out, formatter);
    if serde::Serialize::serialize(&sorted(value), &mut writer).is_err() {
        return String::new();
    }
    String::from_utf8_lossy(&out).replace('\n', &format!("\n{indent}"))
}

/// The whitespace before byte `at` on its line.
fn indent_at(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..at];
    if before.chars().all(char::is_whitespace) {
        before
    } else {
        " "
    }
}

/// The notebook `text` with the edit `input` asks for made.
///
/// # Errors
/// The result the model reads: what is wrong with the input or the file.
fn edit(text: &str, input: &Input) -> Result<(String, String), String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("not a notebook: {e}"))?;
    let cells = doc["cells"].as_array().cloned().unwrap_or_default();
    let (spans, (list_start, list_end)) = cell_spans(text)?;
    let mode = input.edit_mode.unwrap_or_default();
    let with_id = doc["nbformat"].as_u64() == Some(4) && doc["nbformat_minor"].as_u64() >= Some(5);
    let named = match (&input.cell_id, input.index) {
        (Some(id), _) => Some(
            cells
                .iter()
                .position(|c| c["id"].as_str() == Some(id.as_str()))
                .ok_or_else(|| {
                    let ids: Vec<&str> = cells.iter().filter_map(|c| c["id"].as_str()).collect();
                    format!("no cell has id `{id}` (ids: {})", ids.join(", "))
                })?,
        ),
        (None, Some(index)) => Some(index),
        (None, None) => None,
    };
    let in_range = |index: usize| {
        if index < cells.len() {
            Ok(index)
        } else {
            Err(format!(
                "cell {index} does not exist: the notebook has {} cell(s), 0 to {}",
                cells.len(),
                cells.len().saturating_sub(1)
            ))
        }
    };
    let source = || {
        input
            .new_source
            .clone()
            .ok_or_else(|| "this edit needs `new_source`".to_owned())
    };
    match mode {
        EditMode::Replace => {
            let index = in_range(named.ok_or("replace needs `cell_id` or `index`")?)?;
            let old = &cells[index];
            let kind = match input.cell_type {
                Some(kind) => kind.as_str().to_owned(),
                None => old["cell_type"].as_str().unwrap_or("code").to_owned(),
            };
            let (start, end) = spans[index];
            let indent = indent_at(text, start);
            // It keeps its id, its metadata and its attachments; a code
            // cell's outputs were of the old source and go.
            let mut cell = serde_json::Map::new();
            cell.insert("cell_type".into(), json!(kind));
            for key in ["id", "metadata", "attachments"] {
                if let Some(value) = old.get(key) {
                    cell.insert(key.into(), value.clone());
                }
            }
            if !cell.contains_key("metadata") {
                cell.insert("metadata".into(), json!({}));
            }
            let new_source = source()?;
            let lines: Vec<&str> = new_source.split_inclusive('\n').collect();
            cell.insert("source".into(), json!(lines));
            if kind == "code" {
                cell.insert("execution_count".into(), Value::Null);
                cell.insert("outputs".into(), json!([]));
            }
            let cell = pretty(&Value::Object(cell), indent);
            let out = format!("{}{cell}{}", &text[..start], &text[end..]);
            Ok((out, format!("replaced cell {index} ({kind})")))
        }
        EditMode::Insert => {
            let kind = input.cell_type.unwrap_or(CellType::Code).as_str();
            let at = named.unwrap_or(cells.len());
            if at > cells.len() {
                return Err(format!(
                    "cannot insert at {at}: the notebook has {} cell(s)",
                    cells.len()
                ));
            }
            let out = if let Some(&(start, _)) = spans.get(at) {
                let indent = indent_at(text, start);
                let cell = new_cell(kind, &source()?, with_id, indent);
                format!("{}{cell},\n{indent}{}", &text[..start], &text[start..])
            } else if let Some(&(start, end)) = spans.last() {
                let indent = indent_at(text, start);
                let cell = new_cell(kind, &source()?, with_id, indent);
                format!("{},\n{indent}{cell}{}", &text[..end], &text[end..])
            } else {
                let indent = format!("{}  ", indent_at(text, list_start));
                let cell = new_cell(kind, &source()?, with_id, &indent);
                let inner_end = list_end - 1;
                format!(
                    "{}[\n{indent}{cell}\n{}]{}",
                    &text[..list_start],
                    indent_at(text, list_start),
                    &text[inner_end + 1..]
                )
            };
            Ok((out, format!("inserted a {kind} cell at {at}")))
        }
        EditMode::Delete => {
            let index = in_range(named.ok_or("delete needs `cell_id` or `index`")?)?;
            let (start, end) = spans[index];
            // The cell and the comma that joins it to a neighbour.
            let (from, to) = match (spans.get(index + 1), index.checked_sub(1)) {
                (Some(&(next, _)), _) => (start, next),
                (None, Some(before)) => (spans[before].1, end),
                (None, None) => (list_start + 1, list_end - 1),
            };
            let out = format!("{}{}", &text[..from], &text[to..]);
            Ok((out, format!("deleted cell {index}")))
        }
    }
}

/// Edits one cell of a notebook.
pub struct NotebookEditTool;

impl Tool for NotebookEditTool {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Edit one cell of a Jupyter notebook: replace its source, insert a cell or delete one, named by cell_id or 0-based index as read shows them; the other cells stay byte for byte.".into(),
            input_schema: input_schema::<Input>(),
        }
    }

    fn classify(&self, input: &Value, workspace: &Workspace) -> Classified {
        let raw = common::str_field(input, "path").unwrap_or_default();
        let (subject, writes) = match confine_write(workspace, raw) {
            Ok(path) => {
                let shown = path.display().to_string();
                (shown.clone(), vec![shown])
            }
            Err(_) => (raw.to_owned(), Vec::new()),
        };
        Classified {
            risk: Risk::Write,
            subject,
            segments: None,
            writes,
        }
    }

    fn run<'a>(&'a self, input: Value, cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let input: Input = match serde_json::from_value(input) {
                Ok(input) => input,
                Err(e) => return ToolResult::error(format!("{NAME}: bad input: {e}")),
            };
            let path = match confine_write(cx.workspace, &input.path) {
                Ok(path) => path,
                Err(e) => return ToolResult::error(e.to_string()),
            };
            if let Err(e) = common::still_decided(cx.decided, &input.path, &path) {
                return ToolResult::error(e);
            }
            if path.extension().is_none_or(|e| e != "ipynb") {
                return ToolResult::error(format!(
                    "{NAME}: {} is not a notebook (.ipynb); use edit for other files",
                    input.path
                ));
            }
            let text = match read_text(&cx, &path).await {
                Ok(text) => text,
                Err(why) => return ToolResult::error(format!("{NAME}: {why}")),
            };
            let (changed, said) = match edit(&text, &input) {
                Ok(done) => done,
                Err(why) => return ToolResult::error(format!("{NAME}: {why}")),
            };
            if let Err(e) = render(&changed) {
                return ToolResult::error(format!(
                    "{NAME}: the edit would break the notebook: {e}"
                ));
            }
            let written = match cx.files {
                Some(files) => files.write(&path, &changed).await,
                None => tokio::fs::write(&path, changed.as_bytes())
                    .await
                    .map_err(|e| e.to_string()),
            };
            match written {
                Ok(()) => ToolResult::ok(format!("{said} in {}", input.path)),
                Err(why) => {
                    ToolResult::error(format!("{NAME}: cannot write {}: {why}", input.path))
                }
            }
        })
    }
}

/// The notebook's text: the editor's buffer when it keeps one, else the
/// disk.
async fn read_text(cx: &ToolContext<'_>, path: &Path) -> Result<String, String> {
    if let Some(files) = cx.files
        && let Ok(text) = files.read(path).await
    {
        return Ok(text);
    }
    tokio::fs::read_to_string(path)
        .await
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NB: &str = "{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\",\n   \"id\": \"a1\",\n   \"metadata\": {},\n   \"source\": [\n    \"# Title\"\n   ]\n  },\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": 1,\n   \"id\": \"b2\",\n   \"metadata\": {},\n   \"outputs\": [\n    {\n     \"name\": \"stdout\",\n     \"output_type\": \"stream\",\n     \"text\": [\n      \"1\\n\"\n     ]\n    }\n   ],\n   \"source\": [\n    \"print(1)\"\n   ]\n  }\n ],\n \"metadata\": {\"kernelspec\": {\"name\": \"python3\"}},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n";

    fn input(value: Value) -> Input {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_notebook_reads_as_numbered_cells_with_their_outputs() {
        let shown = render(NB).unwrap();
        assert_eq!(
            shown,
            "[cell 0 · markdown · id a1]\n# Title\n[cell 1 · code · id b2]\nprint(1)\n  ⎿ 1\n"
        );
        assert!(render("{}").unwrap_err().contains("no `cells`"));
    }

    #[test]
    fn a_replaced_cell_leaves_every_other_byte_as_it_was() {
        let (out, said) = edit(
            NB,
            &input(json!({"path": "n.ipynb", "cell_id": "b2", "new_source": "print(2)\n"})),
        )
        .unwrap();
        assert_eq!(said, "replaced cell 1 (code)");
        let (spans, _) = cell_spans(NB).unwrap();
        let (start, end) = spans[1];
        assert_eq!(&out[..start], &NB[..start], "before the cell");
        assert!(out.ends_with(&NB[end..]), "after the cell");
        let doc: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(doc["cells"][1]["id"], "b2");
        assert_eq!(doc["cells"][1]["source"], json!(["print(2)\n"]));
        assert_eq!(doc["cells"][1]["outputs"], json!([]));
    }

    #[test]
    fn a_replaced_cell_keeps_its_metadata_without_an_id() {
        let old = "{\"cells\": [{\"cell_type\": \"code\", \"metadata\": {\"tags\": [\"parameters\"]}, \"outputs\": [], \"execution_count\": 3, \"source\": \"a = 1\"}], \"metadata\": {}, \"nbformat\": 4, \"nbformat_minor\": 4}";
        let (out, _) = edit(
            old,
            &input(json!({"path": "n", "index": 0, "new_source": "a = 2"})),
        )
        .unwrap();
        let doc: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(doc["cells"][0]["metadata"]["tags"], json!(["parameters"]));
        assert_eq!(doc["cells"][0]["source"], json!(["a = 2"]));
        assert!(doc["cells"][0].get("id").is_none(), "no id added on 4.4");
        // Written as Jupyter writes: keys sorted.
        let at = |key: &str| out.find(&format!("\"{key}\"")).unwrap();
        assert!(at("cell_type") < at("execution_count") && at("metadata") < at("outputs"));
    }

    #[test]
    fn cells_are_inserted_and_deleted_and_the_notebook_stays_valid() {
        let (out, _) = edit(
            NB,
            &input(json!({"path": "n", "index": 1, "edit_mode": "insert", "cell_type": "markdown", "new_source": "Between"})),
        )
        .unwrap();
        let doc: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(doc["cells"].as_array().unwrap().len(), 3);
        assert_eq!(doc["cells"][1]["source"], json!(["Between"]));
        assert!(
            doc["cells"][1]["id"].is_string(),
            "nbformat 4.5 cells have ids"
        );
        let (appended, _) = edit(
            NB,
            &input(json!({"path": "n", "edit_mode": "insert", "new_source": "x = 1"})),
        )
        .unwrap();
        let doc: Value = serde_json::from_str(&appended).unwrap();
        assert_eq!(doc["cells"][2]["cell_type"], "code");
        for index in 0..2 {
            let (out, _) = edit(
                NB,
                &input(json!({"path": "n", "index": index, "edit_mode": "delete"})),
            )
            .unwrap();
            let doc: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(doc["cells"].as_array().unwrap().len(), 1);
        }
        let one = edit(
            NB,
            &input(json!({"path": "n", "index": 0, "edit_mode": "delete"})),
        )
        .unwrap()
        .0;
        let empty = edit(
            &one,
            &input(json!({"path": "n", "index": 0, "edit_mode": "delete"})),
        )
        .unwrap()
        .0;
        let doc: Value = serde_json::from_str(&empty).unwrap();
        assert_eq!(doc["cells"], json!([]));
        let refilled = edit(
            &empty,
            &input(json!({"path": "n", "edit_mode": "insert", "new_source": "again"})),
        )
        .unwrap()
        .0;
        let doc: Value = serde_json::from_str(&refilled).unwrap();
        assert_eq!(doc["cells"][0]["source"], json!(["again"]));
    }

    #[test]
    fn a_cell_that_is_not_there_is_named_as_such() {
        let err = edit(
            NB,
            &input(json!({"path": "n", "cell_id": "zz", "new_source": "x"})),
        )
        .unwrap_err();
        assert!(err.contains("no cell has id `zz` (ids: a1, b2)"), "{err}");
        let err = edit(
            NB,
            &input(json!({"path": "n", "index": 7, "new_source": "x"})),
        )
        .unwrap_err();
        assert!(err.contains("cell 7 does not exist"), "{err}");
        assert!(
            serde_json::from_value::<Input>(json!({"path": "n", "edit_mode": "move"})).is_err(),
            "an unknown edit_mode is a bad input"
        );
    }
}
