//! The prompt contract holds: every row of `docs/prompt.md` names a key
//! phrase and the part of the prompt it must be in (`system`, or
//! `tool:<name>` for a tool's description and schema), and each phrase is
//! there. A prompt edited without its row, or a row whose instruction was
//! dropped, fails here.

use std::sync::Arc;

use cox_core::own_tools::OwnTool;
use cox_protocol::provider::ToolSpec;

/// Every tool spec a session can send, by name.
fn specs() -> Vec<ToolSpec> {
    let shells = cox_tools::shells::Shells::new(Arc::new(cox_sandbox::ProcessSandbox::new()));
    let mut specs: Vec<ToolSpec> = cox_tools::session_tools(&shells)
        .iter()
        .map(|t| t.spec())
        .collect();
    specs.push(
        cox_tools::WebFetchTool::new(
            Arc::new(|_: &str| Ok(())),
            cox_tools::FetchLimits::default(),
        )
        .spec(),
    );
    use cox_protocol::Tool as _;
    for own in [OwnTool::Expand, OwnTool::Todo, OwnTool::ToolSearch] {
        specs.push(own.spec(0));
    }
    specs
}

/// The rows of the contract's table: (id, where, key phrase).
fn rows() -> Vec<(String, String, String)> {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/prompt.md"),
    )
    .unwrap();
    doc.lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| id ") && !l.starts_with("|---"))
        .map(|line| {
            let cells: Vec<&str> = line
                .split(" | ")
                .map(|c| c.trim_matches(['|', ' ']))
                .collect();
            assert!(cells.len() >= 5, "a row of five cells: {line}");
            let phrase = cells[2]
                .strip_prefix('`')
                .and_then(|p| p.strip_suffix('`'))
                .unwrap_or_else(|| panic!("the key phrase in backticks: {line}"));
            (cells[0].to_owned(), cells[1].to_owned(), phrase.to_owned())
        })
        .collect()
}

#[test]
fn every_instruction_of_the_contract_is_in_the_prompt() {
    let specs = specs();
    let rows = rows();
    assert!(
        rows.len() >= 25,
        "the contract has its rows: {}",
        rows.len()
    );
    let mut missing = Vec::new();
    for (id, place, phrase) in &rows {
        let text = match place.as_str() {
            "system" => cox_core::prompt::SYSTEM_PROMPT.to_owned(),
            tool => {
                let name = tool.strip_prefix("tool:").unwrap_or_else(|| {
                    panic!("row {id}: `{tool}` is neither system nor tool:<name>")
                });
                let spec = specs
                    .iter()
                    .find(|s| s.name == name)
                    .unwrap_or_else(|| panic!("row {id}: no tool `{name}`"));
                format!("{} {}", spec.description, spec.input_schema)
            }
        };
        if !text.contains(phrase.as_str()) {
            missing.push(format!("{id} ({place}): `{phrase}`"));
        }
    }
    assert!(missing.is_empty(), "not in the prompt: {missing:#?}");
}

#[test]
fn the_prompt_names_its_version() {
    let version = cox_core::prompt::SYSTEM_PROMPT_VERSION;
    assert!(
        cox_core::prompt::SYSTEM_PROMPT.contains(&format!("(system prompt v{version})")),
        "a change of the prompt's text is a version bump, said in the text"
    );
}
