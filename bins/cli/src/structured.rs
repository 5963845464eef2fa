//! Structured output: a final answer that is JSON valid against a schema
//! (`--json-schema SCHEMA`, Claude Code's; `--output-schema FILE`, Codex's).
//!
//! The model is told the schema in its system prompt and asked to answer
//! with the JSON alone. The answer is read as JSON (a fenced block, or the
//! outermost object or array in the text, is taken too) and validated; one
//! that does not validate is sent back once with what is wrong, and a
//! second failure is an error result, never an unchecked value.

use anyhow::{Result, anyhow};
use serde_json::Value;

/// A compiled schema and the text the model is told.
pub struct Schema {
    validator: jsonschema::Validator,
    text: String,
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schema").field("text", &self.text).finish()
    }
}

impl Schema {
    /// The schema in `text`; `origin` names where it came from, for errors.
    ///
    /// # Errors
    /// Not JSON, or not a schema: one line naming `origin`.
    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| anyhow!("{origin}: the schema is not JSON: {e}"))?;
        let validator = jsonschema::validator_for(&value)
            .map_err(|e| anyhow!("{origin}: not a JSON schema cox can check against: {e}"))?;
        Ok(Self {
            validator,
            text: value.to_string(),
        })
    }

    /// Whether `schema` is this one (the SDK's `initialize` repeats it).
    #[must_use]
    pub fn same_as(&self, schema: &Value) -> bool {
        serde_json::from_str::<Value>(&self.text).is_ok_and(|mine| mine == *schema)
    }

    /// What the model is told of the schema.
    #[must_use]
    pub fn instruction(&self) -> String {
        format!(
            "Your final answer must be one JSON value, and nothing else, that validates against \
             this JSON schema:\n{}",
            self.text
        )
    }

    /// The answer's JSON when it validates; else what is wrong, for the
    /// model to fix.
    ///
    /// # Errors
    /// No JSON in the answer, or JSON that does not validate.
    pub fn check(&self, answer: &str) -> Result<Value, String> {
        let value = json_in(answer).ok_or_else(|| "the answer holds no JSON value".to_owned())?;
        let problems: Vec<String> = self
            .validator
            .iter_errors(&value)
            .take(5)
            .map(|e| format!("{} (at {})", e, e.instance_path()))
            .collect();
        if problems.is_empty() {
            Ok(value)
        } else {
            Err(problems.join("; "))
        }
    }

    /// The schema `--json-schema` or `--output-schema` gives, if any.
    ///
    /// # Errors
    /// The file cannot be read, or the schema does not parse.
    pub fn from_flags(sdk: &crate::args::SdkFlags) -> Result<Option<Self>> {
        match (&sdk.json_schema, &sdk.output_schema) {
            (Some(text), _) => Self::parse(text, "--json-schema").map(Some),
            (None, Some(file)) => {
                let origin = format!("--output-schema {}", file.display());
                let text = std::fs::read_to_string(file)
                    .map_err(|e| anyhow!("{origin}: cannot read it: {e}"))?;
                Self::parse(&text, &origin).map(Some)
            }
            (None, None) => Ok(None),
        }
    }

    /// The prompt that asks for the answer again.
    #[must_use]
    pub fn again(why: &str) -> String {
        format!(
            "Your answer did not validate against the JSON schema: {why}. Answer again with only \
             the corrected JSON value."
        )
    }
}

/// The JSON value `text` is, or holds: the whole text, a fenced block, or
/// the outermost object or array in it.
fn json_in(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if let Ok(value) = serde_json::from_str(trimmed) {
        return Some(value);
    }
    if let Some(start) = trimmed.find("```") {
        let rest = &trimmed[start + 3..];
        let body = rest.split_once('\n').map_or(rest, |(_, b)| b);
        if let Some(end) = body.find("```")
            && let Ok(value) = serde_json::from_str(body[..end].trim())
        {
            return Some(value);
        }
    }
    for (open, close) in [('{', '}'), ('[', ']')] {
        if let (Some(a), Some(b)) = (trimmed.find(open), trimmed.rfind(close))
            && a < b
            && let Ok(value) = serde_json::from_str(&trimmed[a..=b])
        {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Schema {
        Schema::parse(
            r#"{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}"#,
            "--json-schema",
        )
        .unwrap()
    }

    #[test]
    fn answers_are_read_as_json_and_validated() {
        let s = schema();
        assert_eq!(s.check(r#"{"count": 3}"#).unwrap()["count"], 3);
        assert_eq!(
            s.check("Here it is:\n```json\n{\"count\": 4}\n```")
                .unwrap()["count"],
            4
        );
        assert_eq!(
            s.check(r#"The answer is {"count": 5}."#).unwrap()["count"],
            5
        );
        let wrong = s.check(r#"{"count": "three"}"#).unwrap_err();
        assert!(wrong.contains("integer"), "{wrong}");
        assert!(s.check("three").unwrap_err().contains("no JSON"));
    }

    #[test]
    fn a_bad_schema_is_one_line_naming_where_it_came_from() {
        let err = Schema::parse("{nope", "--json-schema")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--json-schema: the schema is not JSON"),
            "{err}"
        );
        let err = Schema::parse(r#"{"type": 12}"#, "--output-schema s.json")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--output-schema s.json: not a JSON schema"),
            "{err}"
        );
    }
}
