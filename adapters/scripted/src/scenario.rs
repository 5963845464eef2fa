//! The scenario file: what a scripted model says, turn by turn.
//!
//! A scenario is written by a person who is debugging a test, so every
//! mistake must point at a line: unknown keys are refused (`deny_unknown_fields`
//! on every table), and every error is one line of the form
//! `scenario <file>:<line>:<column>: <what is wrong>`. Checks serde cannot
//! express (an empty tool name, a zero chunk size, an error turn that also
//! scripts a response) are done after parsing, with the offending key's span.
//!
//! [`ScenarioFile`] is the file as serde sees it, both ways: the parser
//! deserialises it, and a cassette (`cox record`) builds one and writes it
//! with [`ScenarioFile::to_toml`], so there is one format and one type for
//! it. Serialising leaves out every key that holds its default, so what is
//! written parses back to the same file; values built in code carry no span
//! (`0..0`), which only error messages read.
//!
//! Once parsed, a scenario is immutable plain data; replaying it is the
//! provider's job.

use std::fmt;
use std::ops::Range;
use std::path::Path;

use cox_protocol::provider::ModelStop;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use toml::Spanned;

use crate::expect::Expect;

/// The model name a scenario reports when it does not set `model`.
pub const DEFAULT_MODEL: &str = "scripted";

/// A parsed scenario: the scripted responses, in the order they are used.
#[derive(Clone, Debug)]
pub struct Scenario {
    origin: String,
    model: String,
    pub(crate) turns: Vec<Turn>,
    /// The subagents' scripts, by the `description` of the agent call.
    agents: Vec<(String, Vec<Turn>)>,
}

/// One scripted response: what one provider call streams (a `[[turn]]`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// The size of each streamed delta; by default a word and its
    /// whitespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_chars: Option<Spanned<usize>>,
    /// A sleep before each streamed event.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<ModelStop>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageSpec>,
    /// The call fails with this text instead of responding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Spanned<String>>,
    /// `context_length` makes `error` the over-the-window kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<Spanned<String>>,
    /// Checked on the request before anything streams.
    #[serde(default, skip_serializing_if = "Expect::is_unset")]
    pub expect: Expect,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_call: Vec<ToolCallSpec>,
}

/// Token counts a turn reports; any count left out is estimated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct UsageSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
}

/// One tool call a turn makes (a `[[turn.tool_call]]`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCallSpec {
    /// By default `toolu_<turn>_<n>`, both 1-based.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: Spanned<String>,
    /// The input as a JSON object in a string, for input TOML cannot hold
    /// (a `null`); cassettes write it. Not together with `input`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_json: Option<Spanned<String>>,
    /// The output limit cut this call off: it streams as cut (its input
    /// never whole), and the turn must stop with `max_tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<Spanned<bool>>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub input: Map<String, Value>,
}

/// The file as serde sees it, before the checks serde cannot express; and
/// what a cassette writes.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turn: Vec<Turn>,
    /// `[[agent]]`: what a subagent's model says, for the agent call with
    /// this `description`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent: Vec<AgentScript>,
}

/// One subagent's script (an `[[agent]]` with its `[[agent.turn]]`s).
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AgentScript {
    /// The `description` of the agent call it answers.
    pub description: String,
    #[serde(default)]
    pub turn: Vec<Turn>,
}

impl ScenarioFile {
    /// The file as TOML, written by the toml crate: every `[[turn]]` a
    /// table of the array, keys that hold their default left out. Files
    /// that only add turns can be concatenated after one that sets `model`:
    /// TOML appends each `[[turn]]` to the one array.
    ///
    /// # Errors
    /// A value TOML cannot hold (a count past `i64::MAX`; tool input built
    /// with [`ToolCallSpec::with_input`] never is one).
    pub fn to_toml(&self) -> Result<String, toml::ser::Error> {
        toml::to_string(self)
    }
}

impl Turn {
    /// A call that fails with `message`; the over-the-window kind when
    /// `context_length`.
    #[must_use]
    pub fn failed(message: String, context_length: bool) -> Self {
        Self {
            error: Some(unplaced(message)),
            error_kind: context_length.then(|| unplaced("context_length".to_owned())),
            ..Self::default()
        }
    }
}

impl ToolCallSpec {
    /// A whole call: its input as a TOML table when TOML can hold it, else
    /// (a `null`, an integer past `i64`, input that is not an object) as
    /// `input_json`, which the parser reads back to the same value.
    #[must_use]
    pub fn with_input(id: String, name: String, input: &Value) -> Self {
        let table = match input {
            Value::Object(map) if !has_null(input) && toml::Value::try_from(map).is_ok() => {
                Some(map.clone())
            }
            _ => None,
        };
        let input_json = table.is_none().then(|| unplaced(input.to_string()));
        Self {
            id: Some(id),
            name: unplaced(name),
            input_json,
            cut: None,
            input: table.unwrap_or_default(),
        }
    }

    /// A call the output limit cut off before its input was whole.
    #[must_use]
    pub fn cut_off(id: String, name: String) -> Self {
        Self {
            id: Some(id),
            name: unplaced(name),
            input_json: None,
            cut: Some(unplaced(true)),
            input: Map::new(),
        }
    }
}

/// A value built in code, not read from a file: it has no span.
fn unplaced<T>(value: T) -> Spanned<T> {
    Spanned::new(0..0, value)
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn has_null(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.iter().any(has_null),
        Value::Object(map) => map.values().any(has_null),
        _ => false,
    }
}

/// A scenario that could not be read or is not well formed.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read at all.
    #[error("scenario {origin}: cannot read: {source}")]
    Read {
        origin: String,
        source: std::io::Error,
    },
    /// Something at a known place in the file is wrong.
    #[error("scenario {origin}:{line}:{column}: {message}")]
    At {
        origin: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// Something about the file as a whole is wrong.
    #[error("scenario {origin}: {message}")]
    Whole { origin: String, message: String },
}

impl Scenario {
    /// Parses scenario text; `origin` names it in errors (usually its path).
    pub fn parse(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
        let locate = |span: Option<Range<usize>>, message: &str| {
            let message = one_line(message);
            match span {
                Some(span) => {
                    let (line, column) = line_column(text, span.start);
                    ScenarioError::At {
                        origin: origin.to_owned(),
                        line,
                        column,
                        message,
                    }
                }
                None => ScenarioError::Whole {
                    origin: origin.to_owned(),
                    message,
                },
            }
        };
        let file: ScenarioFile = toml::from_str(text).map_err(|e| {
            // A scenario written as JSON is told the format it needs.
            if text.trim_start().starts_with('{') {
                locate(
                    None,
                    &format!(
                        "scenarios are TOML ([[turn]] tables; see docs/scripted.md), not JSON: {}",
                        e.message()
                    ),
                )
            } else {
                locate(e.span(), e.message())
            }
        })?;
        if file.turn.is_empty() {
            return Err(locate(
                None,
                "no [[turn]]: a scenario scripts at least one response",
            ));
        }
        let mut file = file;
        check_turns(&mut file.turn, "", &locate)?;
        let mut agents = Vec::with_capacity(file.agent.len());
        for agent in &mut file.agent {
            let label = format!("agent {:?}: ", agent.description);
            if agent.turn.is_empty() {
                return Err(locate(None, &format!("{label}no [[agent.turn]]")));
            }
            check_turns(&mut agent.turn, &label, &locate)?;
            agents.push((agent.description.clone(), agent.turn.clone()));
        }
        Ok(Scenario {
            origin: origin.to_owned(),
            model: file.model.unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
            turns: file.turn,
            agents,
        })
    }

    /// Reads and parses a scenario file; errors name `path` as given.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            origin: origin.clone(),
            source,
        })?;
        Scenario::parse(&text, &origin)
    }

    /// Where the scenario came from, as errors name it.
    #[must_use]
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The model name the provider reports.
    #[must_use]
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The same scenario played as `model` (`--model`), whatever it names.
    #[must_use]
    pub fn played_as(mut self, model: String) -> Self {
        self.model = model;
        self
    }

    /// How many responses the scenario scripts.
    #[must_use]
    pub fn turn_count(&self) -> usize {
        self.turns.len()
    }

    /// The script of the subagent an agent call with `description` runs,
    /// as a scenario of its own (same model); `None` when none is scripted.
    #[must_use]
    pub fn agent(&self, description: &str) -> Option<Scenario> {
        let (_, turns) = self.agents.iter().find(|(d, _)| d == description)?;
        Some(Scenario {
            origin: format!("{} [agent {description:?}]", self.origin),
            model: self.model.clone(),
            turns: turns.clone(),
            agents: self.agents.clone(),
        })
    }
}

/// The checks serde cannot express, on one list of turns (`label` names
/// the list in errors: empty for the scenario's own, `agent "x": ` for a
/// subagent's).
fn check_turns(
    turns: &mut [Turn],
    label: &str,
    locate: &dyn Fn(Option<Range<usize>>, &str) -> ScenarioError,
) -> Result<(), ScenarioError> {
    for (index, turn) in turns.iter_mut().enumerate() {
        let number = index + 1;
        for call in &mut turn.tool_call {
            let Some(json) = call.input_json.take() else {
                continue;
            };
            let parsed = serde_json::from_str::<Value>(json.get_ref());
            match parsed {
                Ok(Value::Object(map)) if call.input.is_empty() => call.input = map,
                Ok(Value::Object(_)) => {
                    return Err(locate(
                        Some(json.span()),
                        &format!("{label}turn {number}: a tool_call has both input and input_json"),
                    ));
                }
                Ok(_) => {
                    return Err(locate(
                        Some(json.span()),
                        &format!("{label}turn {number}: input_json is not a JSON object"),
                    ));
                }
                Err(e) => {
                    return Err(locate(
                        Some(json.span()),
                        &format!("{label}turn {number}: input_json is not JSON: {e}"),
                    ));
                }
            }
        }
    }
    for (index, turn) in turns.iter().enumerate() {
        let number = index + 1;
        if let Some(cut) = turn
            .tool_call
            .iter()
            .filter_map(|c| c.cut.as_ref())
            .find(|cut| *cut.get_ref())
            && turn.stop != Some(ModelStop::MaxTokens)
        {
            return Err(locate(
                Some(cut.span()),
                &format!("{label}turn {number}: a cut tool_call needs stop = \"max_tokens\""),
            ));
        }
        if let Some(chunk) = &turn.chunk_chars
            && *chunk.get_ref() == 0
        {
            return Err(locate(
                Some(chunk.span()),
                &format!("{label}turn {number}: chunk_chars must be at least 1"),
            ));
        }
        for call in &turn.tool_call {
            if call.name.get_ref().trim().is_empty() {
                return Err(locate(
                    Some(call.name.span()),
                    &format!("{label}turn {number}: tool_call name is empty"),
                ));
            }
        }
        if let Some(kind) = &turn.error_kind
            && (turn.error.is_none()
                || !matches!(kind.get_ref().as_str(), "context_length" | "failed"))
        {
            return Err(locate(
                Some(kind.span()),
                &format!(
                    "turn {number}: error_kind is `context_length` or `failed`, with an `error`"
                ),
            ));
        }
        if let Some(error) = &turn.error
            && (turn.text.is_some() || turn.thinking.is_some() || !turn.tool_call.is_empty())
        {
            return Err(locate(
                Some(error.span()),
                &format!(
                    "turn {number}: a turn with `error` cannot also script text, thinking or tool_call"
                ),
            ));
        }
    }
    Ok(())
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "scenario {} ({} turns)", self.origin, self.turns.len())
    }
}

/// The 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// Folds a message onto one line, so an error is always a single line.
fn one_line(message: &str) -> String {
    let parts: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scenario_written_as_json_is_told_scenarios_are_toml() {
        let err = Scenario::parse(r#"{"turn": [{"text": "hi"}]}"#, "s.json")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("scenario s.json: scenarios are TOML ([[turn]] tables"),
            "{err}"
        );
        // A TOML mistake still names its line.
        let err = Scenario::parse(
            "[[turn]]
text = \n",
            "s.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("scenario s.toml:2:"), "{err}");
    }

    #[test]
    fn a_subagent_s_script_is_a_scenario_of_its_own_and_checked_like_one() {
        let text = "model = \"m\"\n[[turn]]\ntext = \"parent\"\n\
                    [[agent]]\ndescription = \"look\"\n[[agent.turn]]\ntext = \"child\"\n";
        let scenario = Scenario::parse(text, "s.toml").unwrap();
        let child = scenario.agent("look").unwrap();
        assert_eq!(child.turn_count(), 1);
        assert_eq!(child.turns[0].text.as_deref(), Some("child"));
        assert_eq!(child.model(), "m");
        assert!(scenario.agent("other").is_none());
        let bad = "[[turn]]\ntext = \"p\"\n[[agent]]\ndescription = \"look\"\n\
                   [[agent.turn]]\nchunk_chars = 0\n";
        let err = Scenario::parse(bad, "s.toml").unwrap_err().to_string();
        assert!(err.contains("agent \"look\": turn 1: chunk_chars"), "{err}");
        let empty = "[[turn]]\ntext = \"p\"\n[[agent]]\ndescription = \"look\"\n";
        let err = Scenario::parse(empty, "s.toml").unwrap_err().to_string();
        assert!(err.contains("no [[agent.turn]]"), "{err}");
    }

    #[test]
    fn line_column_counts_from_one_in_characters() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 6), (2, 1));
        assert_eq!(line_column(text, text.find('=').unwrap()), (1, 3));
        let second_eq = text.rfind('=').unwrap();
        assert_eq!(line_column(text, second_eq), (2, 4));
        assert_eq!(line_column(text, 999), (3, 1));
    }

    #[test]
    fn a_written_file_reads_back_as_the_same_file() {
        let full = Turn {
            text: Some("a\u{7f}b\n\"c\"".into()),
            thinking: Some("t".into()),
            chunk_chars: Some(unplaced(3)),
            delay_ms: 5,
            stop: Some(ModelStop::ToolUse),
            usage: Some(UsageSpec {
                input_tokens: Some(1),
                output_tokens: None,
                cache_read_tokens: Some(2),
                cache_write_tokens: None,
            }),
            expect: Expect {
                tools_include: Some(vec!["read".into()]),
                tool_result_ok: Some(true),
                ..Expect::default()
            },
            tool_call: vec![
                ToolCallSpec::with_input(
                    "toolu_1".into(),
                    "write".into(),
                    &serde_json::json!({"path": "a", "o": {"k": [1, 2]}}),
                ),
                ToolCallSpec::with_input(
                    "toolu_2".into(),
                    "write".into(),
                    &serde_json::json!({"path": null}),
                ),
            ],
            ..Turn::default()
        };
        let file = ScenarioFile {
            model: Some("m".into()),
            turn: vec![full, Turn::default(), Turn::failed("boom".into(), true)],
            agent: Vec::new(),
        };
        let text = file.to_toml().unwrap();
        let back: ScenarioFile = toml::from_str(&text).unwrap();
        assert_eq!(back, file, "{text}");
        let scenario = Scenario::parse(&text, "written").unwrap();
        assert_eq!(scenario.turn_count(), 3);
        let input = &scenario.turns[0].tool_call[1].input;
        assert_eq!(input["path"], Value::Null, "input_json read back");
        assert!(!text.contains("delay_ms = 0") && !text.contains("[turn.expect]\n\n"));
    }

    #[test]
    fn messages_fold_onto_one_line() {
        assert_eq!(one_line("first\n  second\n\n"), "first; second");
    }
}
