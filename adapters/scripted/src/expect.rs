//! Checks a scripted turn makes on the request it answers.
//!
//! A scenario replays blindly unless it says what it expects to have been
//! sent; these checks turn "the core sent the wrong thing" into a failure that
//! names the turn, the expectation and what was actually there, instead of a
//! golden log that silently drifts. Checks run in a fixed order and the first
//! one that fails is reported, so a failure message is stable.

use cox_protocol::provider::{ContentBlock, Request, Role};
use serde::{Deserialize, Serialize};

/// How much of the actual text a failure message quotes.
const QUOTE_LIMIT: usize = 200;

/// The `[turn.expect]` table. Every check is optional.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The last message's tool results, joined by newlines, contain this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_result_contains: Option<String>,
    /// The last user message that has text (tool results travel in user
    /// messages too, and are skipped), its text blocks joined by newlines,
    /// contains this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_text_contains: Option<String>,
    /// The last message holds tool results and each has `is_error == !this`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_result_ok: Option<bool>,
    /// Each of these names is among the request's tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools_include: Option<Vec<String>>,
    /// The request, serialised as JSON, contains each of these strings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_contains: Option<Vec<String>>,
    /// The request, serialised as JSON, contains none of these strings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_lacks: Option<Vec<String>>,
}

impl Expect {
    /// No check is set: the table is left out of a written file.
    #[must_use]
    pub fn is_unset(&self) -> bool {
        let Self {
            tool_result_contains,
            user_text_contains,
            tool_result_ok,
            tools_include,
            request_contains,
            request_lacks,
        } = self;
        tool_result_contains.is_none()
            && user_text_contains.is_none()
            && tool_result_ok.is_none()
            && tools_include.is_none()
            && request_contains.is_none()
            && request_lacks.is_none()
    }

    /// The first expectation `request` does not meet, as one line (without
    /// the scenario and turn, which the caller prefixes).
    pub(crate) fn check(&self, request: &Request) -> Result<(), String> {
        let last = request.messages.last();
        let results: Vec<(&str, bool)> = last
            .map(|m| {
                m.content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::ToolResult {
                            content, is_error, ..
                        } => Some((content.as_str(), *is_error)),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();

        if let Some(needle) = &self.tool_result_contains {
            let joined: Vec<&str> = results.iter().map(|(c, _)| *c).collect();
            let joined = joined.join("\n");
            if results.is_empty() {
                return Err(format!(
                    "expected tool_result_contains {needle:?}, but the last message has no tool results"
                ));
            }
            if !joined.contains(needle.as_str()) {
                return Err(format!(
                    "expected tool_result_contains {needle:?}, but the tool results were {}",
                    quote(&joined)
                ));
            }
        }

        if let Some(needle) = &self.user_text_contains {
            let Some(text) = last_user_text(request) else {
                return Err(format!(
                    "expected user_text_contains {needle:?}, but the request has no user text"
                ));
            };
            if !text.contains(needle.as_str()) {
                return Err(format!(
                    "expected user_text_contains {needle:?}, but the last user text was {}",
                    quote(&text)
                ));
            }
        }

        if let Some(ok) = self.tool_result_ok {
            if results.is_empty() {
                return Err(format!(
                    "expected tool_result_ok = {ok}, but the last message has no tool results"
                ));
            }
            if let Some((content, is_error)) = results.iter().find(|(_, is_error)| *is_error == ok)
            {
                return Err(format!(
                    "expected tool_result_ok = {ok}, but a tool result has is_error = {is_error}: {}",
                    quote(content)
                ));
            }
        }

        if self.request_contains.is_some() || self.request_lacks.is_some() {
            let json = serde_json::to_string(request).unwrap_or_default();
            for needle in self.request_contains.iter().flatten() {
                if !json.contains(needle.as_str()) {
                    return Err(format!(
                        "expected request_contains {needle:?}, but the request ({} bytes) does not",
                        json.len()
                    ));
                }
            }
            for needle in self.request_lacks.iter().flatten() {
                if let Some(at) = json.find(needle.as_str()) {
                    let start = json[..at]
                        .char_indices()
                        .rev()
                        .nth(60)
                        .map_or(0, |(i, _)| i);
                    return Err(format!(
                        "expected request_lacks {needle:?}, but the request has it: …{}",
                        quote(&json[start..])
                    ));
                }
            }
        }

        if let Some(names) = &self.tools_include {
            let missing: Vec<&str> = names
                .iter()
                .filter(|n| !request.tools.iter().any(|t| &t.name == *n))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                let offered: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
                return Err(format!(
                    "expected tools_include {names:?}, but the request lacks {missing:?} (it offers {offered:?})"
                ));
            }
        }
        Ok(())
    }
}

/// The text blocks of the last user message that has any, joined by
/// newlines: what the person last said, even after rounds of tool results.
fn last_user_text(request: &Request) -> Option<String> {
    request
        .messages
        .iter()
        .rev()
        .filter(|m| m.role == Role::User)
        .find_map(|m| {
            let texts: Vec<&str> = m
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        })
}

/// `text` as a one-line quoted string, cut to about [`QUOTE_LIMIT`] chars.
pub(crate) fn quote(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(QUOTE_LIMIT).collect();
    if chars.next().is_some() {
        format!("{head:?}…")
    } else {
        format!("{head:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_one_line_and_cut() {
        assert_eq!(quote("a\nb"), "\"a\\nb\"");
        let long = "x".repeat(500);
        let quoted = quote(&long);
        assert!(quoted.ends_with("\"…"), "{quoted}");
        assert_eq!(quoted.chars().filter(|c| *c == 'x').count(), QUOTE_LIMIT);
    }
}
