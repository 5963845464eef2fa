//! The form an MCP server asks the person to fill in while a call runs
//! (elicitation): one row per field of the server's schema (text, whole
//! and decimal numbers, yes/no, a choice of one, a choice of several),
//! filled in place, checked, and sent as the values the schema names.
//!
//! Keys: ↑/↓ (or Tab/Shift+Tab) move between fields; typing fills a text
//! or number field; Space flips a yes/no, and in a choice of several
//! ticks the option under the cursor; ←/→ pick the option of a choice;
//! Enter sends the form (when every required field is filled and each
//! value fits its field); Esc declines the request.
//!
//! Invariants: what is typed goes only into the answer (never the
//! transcript); a field whose schema this form cannot show is left out,
//! and a form whose required field is such a one can only be declined;
//! every text drawn from the server is sanitised.

use cox_protocol::types::ElicitAnswer;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use serde_json::{Map, Value};

use crate::sanitize::sanitize;

/// What a field holds.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// Free text, with the format the server named (`email`, `uri`, `date`).
    Text {
        format: Option<String>,
    },
    Integer {
        min: Option<i64>,
        max: Option<i64>,
    },
    Number {
        min: Option<f64>,
        max: Option<f64>,
    },
    /// Yes or no.
    Boolean {
        on: bool,
    },
    /// One of `options` (value, label); `at` is the one chosen.
    Choice {
        options: Vec<(String, String)>,
        at: usize,
    },
    /// Any of `options`, between `min` and `max` of them; `cursor` is the
    /// option Space ticks.
    Multi {
        options: Vec<(String, String, bool)>,
        cursor: usize,
        min: usize,
        max: usize,
    },
}

/// One field of the form.
#[derive(Debug, Clone, PartialEq)]
struct Field {
    name: String,
    label: String,
    description: String,
    required: bool,
    kind: Kind,
    /// What is typed in a text or number field.
    typed: String,
}

/// A server's form being filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    pub id: String,
    server: String,
    message: String,
    fields: Vec<Field>,
    at: usize,
    /// Why the form was not sent, after Enter.
    error: Option<String>,
    /// Required fields this form cannot show: it can only be declined.
    unshown: Vec<String>,
}

/// What a key did to the form.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// Still being filled in.
    Open,
    /// Answered: the form closes.
    Answered(ElicitAnswer),
}

impl Form {
    /// The form for `schema` (a flat JSON Schema object), asked by
    /// `server` with `message`.
    #[must_use]
    pub fn new(id: &str, server: &str, message: &str, schema: &Value) -> Self {
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = Vec::new();
        let mut unshown = Vec::new();
        if let Some(properties) = schema["properties"].as_object() {
            for (name, property) in properties {
                let is_required = required.contains(&name.as_str());
                match field(name, property, is_required) {
                    Some(field) => fields.push(field),
                    None if is_required => unshown.push(name.clone()),
                    None => {}
                }
            }
        }
        // Required fields first, each group as the server ordered it.
        fields.sort_by_key(|f| !f.required);
        Self {
            id: id.to_owned(),
            server: sanitize(server).into_owned(),
            message: sanitize(message).into_owned(),
            fields,
            at: 0,
            error: None,
            unshown,
        }
    }

    /// Handles one key.
    pub fn key(&mut self, key: KeyEvent) -> Outcome {
        let count = self.fields.len();
        match key.code {
            KeyCode::Esc => return Outcome::Answered(ElicitAnswer::Decline),
            KeyCode::Enter => {
                return match self.content() {
                    Ok(content) => Outcome::Answered(ElicitAnswer::Accept { content }),
                    Err(why) => {
                        self.error = Some(why);
                        Outcome::Open
                    }
                };
            }
            KeyCode::Down | KeyCode::Tab if count > 0 => self.at = (self.at + 1) % count,
            KeyCode::Up | KeyCode::BackTab if count > 0 => self.at = (self.at + count - 1) % count,
            code => {
                if let Some(field) = self.fields.get_mut(self.at) {
                    edit(field, code, key.modifiers);
                }
            }
        }
        self.error = None;
        Outcome::Open
    }

    /// The values to send, or why not yet.
    fn content(&self) -> Result<Map<String, Value>, String> {
        if !self.unshown.is_empty() {
            return Err(format!(
                "this form cannot show field(s) {}: Esc declines",
                self.unshown.join(", ")
            ));
        }
        let mut content = Map::new();
        for field in &self.fields {
            if let Some(value) = value(field)? {
                content.insert(field.name.clone(), value);
            } else if field.required {
                return Err(format!("{} is required", field.label));
            }
        }
        Ok(content)
    }

    /// The form's lines, for an overlay `width` wide.
    #[must_use]
    pub fn lines(&self, width: u16) -> Vec<Line<'static>> {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        let dim = Style::new().add_modifier(Modifier::DIM);
        let mut lines = vec![
            Line::styled(format!("MCP server '{}' asks:", self.server), bold),
            Line::raw(self.message.clone()),
            Line::raw(""),
        ];
        for (i, field) in self.fields.iter().enumerate() {
            let star = if field.required { "*" } else { "" };
            let row = format!(
                "{} {}{star}: {}",
                if i == self.at { "›" } else { " " },
                field.label,
                shown(field, i == self.at)
            );
            let row = crate::view::clip(&row, width.saturating_sub(2));
            lines.push(if i == self.at {
                Line::styled(row, Style::new().add_modifier(Modifier::REVERSED))
            } else {
                Line::raw(row)
            });
            if i == self.at && !field.description.is_empty() {
                lines.push(Line::styled(
                    crate::view::clip(
                        &format!("    {}", field.description),
                        width.saturating_sub(2),
                    ),
                    dim,
                ));
            }
        }
        if !self.unshown.is_empty() {
            lines.push(Line::styled(
                format!(
                    "  this form cannot show required field(s) {}",
                    self.unshown.join(", ")
                ),
                dim,
            ));
        }
        if let Some(error) = &self.error {
            lines.push(Line::raw(""));
            lines.push(Line::styled(format!("✗ {error}"), bold));
        }
        lines
    }

    /// Where the selected field's row is, for the overlay to keep it in
    /// view.
    #[must_use]
    pub fn selected_row(&self) -> usize {
        3 + self.at
    }
}

/// The field for `property`, or `None` when it is not a kind this form
/// shows.
fn field(name: &str, property: &Value, required: bool) -> Option<Field> {
    let text = |key: &str| property[key].as_str().map(|s| sanitize(s).into_owned());
    let default = &property["default"];
    let kind = match property["type"].as_str()? {
        "string" => match options(property) {
            Some(options) => {
                let at = default
                    .as_str()
                    .and_then(|d| options.iter().position(|(v, _)| v == d))
                    .unwrap_or(0);
                Kind::Choice { options, at }
            }
            None => Kind::Text {
                format: text("format"),
            },
        },
        "integer" => Kind::Integer {
            min: property["minimum"].as_i64(),
            max: property["maximum"].as_i64(),
        },
        "number" => Kind::Number {
            min: property["minimum"].as_f64(),
            max: property["maximum"].as_f64(),
        },
        "boolean" => Kind::Boolean {
            on: default.as_bool().unwrap_or(false),
        },
        "array" => {
            let picked: Vec<&str> = default
                .as_array()
                .map(|d| d.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let options = options(&property["items"])?
                .into_iter()
                .map(|(value, label)| {
                    let on = picked.contains(&value.as_str());
                    (value, label, on)
                })
                .collect::<Vec<_>>();
            let count = options.len();
            Kind::Multi {
                options,
                cursor: 0,
                min: property["minItems"]
                    .as_u64()
                    .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX)),
                max: property["maxItems"]
                    .as_u64()
                    .map_or(count, |n| usize::try_from(n).unwrap_or(usize::MAX)),
            }
        }
        _ => return None,
    };
    let typed = match (&kind, default) {
        (Kind::Text { .. }, Value::String(s)) => s.clone(),
        (Kind::Integer { .. } | Kind::Number { .. }, Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    Some(Field {
        name: name.to_owned(),
        label: text("title").unwrap_or_else(|| sanitize(name).into_owned()),
        description: text("description").unwrap_or_default(),
        required,
        kind,
        typed,
    })
}

/// The options of an enum schema (`enum`, with `enumNames` as labels;
/// `oneOf`/`anyOf` of `{const, title}`), as (value, label).
fn options(schema: &Value) -> Option<Vec<(String, String)>> {
    if let Some(values) = schema["enum"].as_array() {
        let names = schema["enumNames"].as_array();
        return Some(
            values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    let value = v.as_str()?.to_owned();
                    let label = names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .unwrap_or(&value);
                    Some((value.clone(), sanitize(label).into_owned()))
                })
                .collect(),
        );
    }
    let listed = schema["oneOf"].as_array().or(schema["anyOf"].as_array())?;
    Some(
        listed
            .iter()
            .filter_map(|o| {
                let value = o["const"].as_str()?.to_owned();
                let label = o["title"].as_str().unwrap_or(&value);
                Some((value.clone(), sanitize(label).into_owned()))
            })
            .collect(),
    )
}

/// `code` applied to `field`.
fn edit(field: &mut Field, code: KeyCode, modifiers: KeyModifiers) {
    match (&mut field.kind, code) {
        (Kind::Boolean { on }, KeyCode::Char(' ' | 'y' | 'n') | KeyCode::Left | KeyCode::Right) => {
            *on = match code {
                KeyCode::Char('y') => true,
                KeyCode::Char('n') => false,
                _ => !*on,
            };
        }
        (Kind::Choice { options, at }, KeyCode::Right | KeyCode::Char(' ')) => {
            *at = (*at + 1) % options.len().max(1);
        }
        (Kind::Choice { options, at }, KeyCode::Left) => {
            let n = options.len().max(1);
            *at = (*at + n - 1) % n;
        }
        (
            Kind::Multi {
                options, cursor, ..
            },
            KeyCode::Right,
        ) => {
            *cursor = (*cursor + 1) % options.len().max(1);
        }
        (
            Kind::Multi {
                options, cursor, ..
            },
            KeyCode::Left,
        ) => {
            let n = options.len().max(1);
            *cursor = (*cursor + n - 1) % n;
        }
        (
            Kind::Multi {
                options, cursor, ..
            },
            KeyCode::Char(' '),
        ) => {
            if let Some(option) = options.get_mut(*cursor) {
                option.2 = !option.2;
            }
        }
        (Kind::Text { .. } | Kind::Integer { .. } | Kind::Number { .. }, KeyCode::Backspace) => {
            field.typed.pop();
        }
        (Kind::Text { .. } | Kind::Integer { .. } | Kind::Number { .. }, KeyCode::Char(c))
            if !modifiers.contains(KeyModifiers::CONTROL) =>
        {
            field.typed.push(c);
        }
        _ => {}
    }
}

/// `field`'s value to send, `None` when it is left empty, or why it does
/// not fit.
fn value(field: &Field) -> Result<Option<Value>, String> {
    let typed = field.typed.trim();
    let label = &field.label;
    Ok(Some(match &field.kind {
        Kind::Text { .. } if typed.is_empty() => return Ok(None),
        Kind::Text { format } => {
            let fits = match format.as_deref() {
                Some("email") => typed.contains('@') && !typed.contains(char::is_whitespace),
                Some("uri") => typed.contains("://"),
                Some("date") => is_date(typed),
                _ => true,
            };
            if !fits {
                return Err(format!(
                    "{label} must be {}",
                    match format.as_deref() {
                        Some("email") => "an email address",
                        Some("uri") => "a URI (scheme://…)",
                        _ => "a date (YYYY-MM-DD)",
                    }
                ));
            }
            Value::from(typed)
        }
        Kind::Integer { .. } | Kind::Number { .. } if typed.is_empty() => return Ok(None),
        Kind::Integer { min, max } => {
            let n: i64 = typed
                .parse()
                .map_err(|_| format!("{label} must be a whole number"))?;
            if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                return Err(format!("{label} must be within {}", range(*min, *max)));
            }
            Value::from(n)
        }
        Kind::Number { min, max } => {
            let n: f64 = typed
                .parse()
                .ok()
                .filter(|n: &f64| n.is_finite())
                .ok_or_else(|| format!("{label} must be a number"))?;
            if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                return Err(format!("{label} must be within {}", range(*min, *max)));
            }
            Value::from(n)
        }
        Kind::Boolean { on } => Value::from(*on),
        Kind::Choice { options, at } => match options.get(*at) {
            Some((value, _)) => Value::from(value.clone()),
            None => return Ok(None),
        },
        Kind::Multi {
            options, min, max, ..
        } => {
            let picked: Vec<Value> = options
                .iter()
                .filter(|(.., on)| *on)
                .map(|(value, ..)| Value::from(value.clone()))
                .collect();
            if picked.len() < *min || picked.len() > *max {
                return Err(format!("{label}: pick between {min} and {max}"));
            }
            Value::from(picked)
        }
    }))
}

fn range<T: std::fmt::Display>(min: Option<T>, max: Option<T>) -> String {
    match (min, max) {
        (Some(a), Some(b)) => format!("{a}–{b}"),
        (Some(a), None) => format!("{a} or more"),
        (None, Some(b)) => format!("{b} or less"),
        (None, None) => String::new(),
    }
}

fn is_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    parts.len() == 3
        && [4, 2, 2]
            .iter()
            .zip(&parts)
            .all(|(n, p)| p.len() == *n && p.bytes().all(|b| b.is_ascii_digit()))
}

/// How `field`'s value reads in its row.
fn shown(field: &Field, selected: bool) -> String {
    match &field.kind {
        Kind::Text { format } => {
            let hint = match format.as_deref() {
                Some(f) if field.typed.is_empty() => format!("({f})"),
                _ => String::new(),
            };
            let cursor = if selected { "▏" } else { "" };
            format!("{}{cursor}{hint}", sanitize(&field.typed))
        }
        Kind::Integer { .. } | Kind::Number { .. } => {
            let cursor = if selected { "▏" } else { "" };
            format!("{}{cursor}", sanitize(&field.typed))
        }
        Kind::Boolean { on } => if *on { "[x] yes" } else { "[ ] no" }.to_owned(),
        Kind::Choice { options, at } => options
            .iter()
            .enumerate()
            .map(|(i, (_, label))| {
                if i == *at {
                    format!("({label})")
                } else {
                    label.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
        Kind::Multi {
            options, cursor, ..
        } => options
            .iter()
            .enumerate()
            .map(|(i, (_, label, on))| {
                let mark = if *on { "[x]" } else { "[ ]" };
                if selected && i == *cursor {
                    format!("›{mark} {label}")
                } else {
                    format!("{mark} {label}")
                }
            })
            .collect::<Vec<_>>()
            .join("  "),
    }
}

#[cfg(test)]
mod tests;
