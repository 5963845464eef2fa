//! The subagents a session ran, as their events ([`Event::Subagent`])
//! tell: one row each for `/agents` (state, turns, what it cost) with every
//! event it said, so its transcript can be opened. Its tool calls also show
//! in the main transcript, under the call that runs it (see
//! [`crate::transcript`]); its text stays here.
//!
//! Invariant: a row is keyed by the child's session id; events of a child
//! never seen starting still make a row (a resumed view may begin late).

use cox_protocol::CallId;
use cox_protocol::catalog::{self, Catalog};
use cox_protocol::types::{Event, StopReason, Usage};

use crate::sanitize::sanitize;

/// How a subagent stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentState {
    Running,
    Done(StopReason),
}

/// One subagent.
#[derive(Clone, Debug)]
pub struct AgentRow {
    pub session_id: String,
    /// The parent's `agent` call that runs it.
    pub call_id: CallId,
    /// The call's `description`, sanitized.
    pub description: String,
    pub state: AgentState,
    pub turns: u32,
    pub usage: Usage,
    /// What its model calls cost, priced by the catalog (0 unpriced).
    pub cost_usd: f64,
    /// Its worktree, when it works in one.
    pub worktree: Option<String>,
    /// Everything it said, for its transcript.
    pub events: Vec<Event>,
}

/// Every subagent of the session, in the order they started.
#[derive(Clone, Debug, Default)]
pub struct Agents {
    pub rows: Vec<AgentRow>,
}

impl Agents {
    /// Folds one child event in; `description` names the call (from its
    /// input), `catalog` prices its usage.
    pub fn apply(
        &mut self,
        (call_id, session_id, description): (&CallId, &str, &str),
        event: &Event,
        catalog: &Catalog,
    ) {
        let at = match self.rows.iter().position(|r| r.session_id == session_id) {
            Some(at) => at,
            None => {
                self.rows.push(AgentRow {
                    session_id: session_id.to_owned(),
                    call_id: call_id.clone(),
                    description: sanitize(description).into_owned(),
                    state: AgentState::Running,
                    turns: 0,
                    usage: Usage::default(),
                    cost_usd: 0.0,
                    worktree: None,
                    events: Vec::new(),
                });
                self.rows.len() - 1
            }
        };
        let row = &mut self.rows[at];
        match event {
            Event::SessionStarted { cwd, .. } => {
                row.worktree = cwd
                    .contains("/_worktrees/")
                    .then(|| sanitize(cwd).into_owned());
            }
            Event::TurnStarted { turn, .. } => {
                row.turns = *turn;
                row.state = AgentState::Running;
            }
            Event::Usage { model, usage, .. } => {
                row.usage.add(usage);
                row.cost_usd += catalog::cost(catalog.get(model), usage).usd;
            }
            Event::TurnDone { stop } => row.state = AgentState::Done(*stop),
            _ => {}
        }
        row.events.push(event.clone());
    }

    /// What every subagent cost, added up.
    #[must_use]
    pub fn cost_usd(&self) -> f64 {
        self.rows.iter().map(|r| r.cost_usd).sum()
    }

    /// Every subagent's usage, added up.
    #[must_use]
    pub fn usage(&self) -> Usage {
        let mut total = Usage::default();
        for row in &self.rows {
            total.add(&row.usage);
        }
        total
    }

    /// One line per subagent, for `/agents`.
    #[must_use]
    pub fn lines(&self) -> Vec<String> {
        if self.rows.is_empty() {
            return vec!["no subagent has run in this session".into()];
        }
        self.rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let state = match r.state {
                    AgentState::Running => "running".to_owned(),
                    AgentState::Done(stop) => stop.as_str().to_owned(),
                };
                let place = r
                    .worktree
                    .as_deref()
                    .and_then(|w| w.rsplit('/').next())
                    .map(|w| format!(" · ⧉ {w}"))
                    .unwrap_or_default();
                format!(
                    "{}. {} · {state} · {} turn(s) · ${:.4}{place}",
                    i + 1,
                    r.description,
                    r.turns,
                    r.cost_usd
                )
            })
            .collect()
    }

    /// The transcript of subagent `n` (1-based), as plain lines: its
    /// prompts, its text, its tool calls and their ends.
    #[must_use]
    pub fn transcript(&self, n: usize) -> Option<(String, Vec<String>)> {
        let row = self.rows.get(n.checked_sub(1)?)?;
        let mut lines: Vec<String> = Vec::new();
        let mut text = String::new();
        let flush = |text: &mut String, lines: &mut Vec<String>| {
            if !text.is_empty() {
                lines.extend(text.lines().map(str::to_owned));
                text.clear();
            }
        };
        for event in &row.events {
            match event {
                Event::TurnStarted { text: asked, .. } => {
                    flush(&mut text, &mut lines);
                    lines.push(format!("› {}", sanitize(asked)));
                }
                Event::TextDelta { text: t } => text.push_str(&sanitize(t)),
                Event::ToolCallRequested { call } => {
                    flush(&mut text, &mut lines);
                    lines.push(format!(
                        "⏺ {} {}",
                        sanitize(&call.name),
                        sanitize(&call.subject)
                    ));
                }
                Event::ToolCallDone { result, .. } => {
                    let first = result.visible.lines().next().unwrap_or_default();
                    lines.push(format!("  ⎿ {}", sanitize(first)));
                }
                Event::TurnDone { stop } => {
                    flush(&mut text, &mut lines);
                    lines.push(format!("[{}]", stop.as_str()));
                }
                _ => {}
            }
        }
        flush(&mut text, &mut lines);
        Some((format!("agent {}: {}", n, row.description), lines))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_follows_its_child_and_prices_its_calls() {
        let mut agents = Agents::default();
        let call: CallId = "a1".into();
        let key = (&call, "01CHILD", "look around\u{1b}[2J");
        let catalog = Catalog::default();
        agents.apply(
            key,
            &Event::TurnStarted {
                turn: 1,
                text: "go".into(),
            },
            &catalog,
        );
        agents.apply(
            key,
            &Event::TextDelta {
                text: "found it".into(),
            },
            &catalog,
        );
        assert_eq!(agents.rows[0].state, AgentState::Running);
        agents.apply(
            key,
            &Event::TurnDone {
                stop: StopReason::EndTurn,
            },
            &catalog,
        );
        assert_eq!(agents.rows.len(), 1);
        let row = &agents.rows[0];
        assert_eq!(row.state, AgentState::Done(StopReason::EndTurn));
        assert_eq!(row.turns, 1);
        assert!(!row.description.contains('\u{1b}'), "sanitized");
        assert!(agents.lines()[0].contains("end_turn · 1 turn(s)"));
        let (title, lines) = agents.transcript(1).unwrap();
        assert!(title.starts_with("agent 1: look around"));
        assert_eq!(lines, ["› go", "found it", "[end_turn]"]);
        assert!(agents.transcript(2).is_none());
    }
}
