//! The scenario file: what a scripted model says, turn by turn.
//!
//! A scenario is written by a person who is debugging a test, so every
//! mistake must point at a line: unknown keys are refused (`deny_unknown_fields`
//! on every table), and every error is one line of the form
//! `scenario <file>:<line>:<column>: <what is wrong>`. Checks serde cannot
//! express (an empty tool name, a zero chunk size, an error turn that also
//! scripts a response) are done after parsing, with the offending key's span.
//!
//! Once parsed, a scenario is immutable plain data; replaying it is the
//! provider's job.

use std::fmt;
use std::ops::Range;
use std::path::Path;

use cox_protocol::provider::ModelStop;
use serde::Deserialize;
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
}

/// One scripted response: what one provider call streams.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Turn {
    pub text: Option<String>,
    pub thinking: Option<String>,
    pub chunk_chars: Option<Spanned<usize>>,
    #[serde(default)]
    pub delay_ms: u64,
    pub stop: Option<ModelStop>,
    pub usage: Option<UsageSpec>,
    pub error: Option<Spanned<String>>,
    /// `context_length` makes `error` the over-the-window kind.
    pub error_kind: Option<Spanned<String>>,
    #[serde(default)]
    pub tool_call: Vec<ToolCallSpec>,
    #[serde(default)]
    pub expect: Expect,
}

/// Token counts a turn reports; any count left out is estimated.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UsageSpec {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cache_read_tokens: Option<u64>,
    pub cache_write_tokens: Option<u64>,
}

/// One tool call a turn makes.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolCallSpec {
    pub name: Spanned<String>,
    #[serde(default)]
    pub input: Map<String, Value>,
    /// The input as a JSON object in a string, for input TOML cannot hold
    /// (a `null`); cassettes write it. Not together with `input`.
    pub input_json: Option<Spanned<String>>,
    pub id: Option<String>,
    /// The output limit cut this call off: it streams as cut (its input
    /// never whole), and the turn must stop with `max_tokens`.
    pub cut: Option<Spanned<bool>>,
}

/// The file as serde sees it, before the checks serde cannot express.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    model: Option<String>,
    #[serde(default)]
    turn: Vec<Turn>,
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
        let file: File = toml::from_str(text).map_err(|e| locate(e.span(), e.message()))?;
        if file.turn.is_empty() {
            return Err(locate(
                None,
                "no [[turn]]: a scenario scripts at least one response",
            ));
        }
        let mut file = file;
        for (index, turn) in file.turn.iter_mut().enumerate() {
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
                            &format!("turn {number}: a tool_call has both input and input_json"),
                        ));
                    }
                    Ok(_) => {
                        return Err(locate(
                            Some(json.span()),
                            &format!("turn {number}: input_json is not a JSON object"),
                        ));
                    }
                    Err(e) => {
                        return Err(locate(
                            Some(json.span()),
                            &format!("turn {number}: input_json is not JSON: {e}"),
                        ));
                    }
                }
            }
        }
        for (index, turn) in file.turn.iter().enumerate() {
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
                    &format!("turn {number}: a cut tool_call needs stop = \"max_tokens\""),
                ));
            }
            if let Some(chunk) = &turn.chunk_chars
                && *chunk.get_ref() == 0
            {
                return Err(locate(
                    Some(chunk.span()),
                    &format!("turn {number}: chunk_chars must be at least 1"),
                ));
            }
            for call in &turn.tool_call {
                if call.name.get_ref().trim().is_empty() {
                    return Err(locate(
                        Some(call.name.span()),
                        &format!("turn {number}: tool_call name is empty"),
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
        Ok(Scenario {
            origin: origin.to_owned(),
            model: file.model.unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
            turns: file.turn,
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
    fn messages_fold_onto_one_line() {
        assert_eq!(one_line("first\n  second\n\n"), "first; second");
    }
}
