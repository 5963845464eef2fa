//! The session's events as ACP `session/update`s: text and thinking as
//! chunks, a tool call as `tool_call` then `tool_call_update`s (an edit's
//! or a write's with its diff), the slash commands, the mode, the model's
//! plan, and after each provider call the context used and the session's
//! cost so far; a warning as a marked paragraph of the agent's message.
//! An approval the session waits for and the end of a
//! turn are said apart ([`Out::Ask`], [`Out::Done`]): the server answers
//! them, they are not updates.
//!
//! Invariant: a `tool_call_update` only follows the `tool_call` of its id;
//! an event the client has no place for becomes nothing.

use std::collections::HashMap;

use agent_client_protocol::v1::schema as acp;
use cox_protocol::catalog::{self, Catalog};
use cox_protocol::types::{Event, NoticeLevel, StopReason, ToolCall};

/// What one event becomes.
#[derive(Debug)]
pub enum Out {
    Update(acp::SessionUpdate),
    /// The session waits for a decision on this call.
    Ask {
        call_id: String,
        call: acp::ToolCallUpdate,
        reason: String,
    },
    /// The turn ended; with the last error said in it, if any.
    Done(StopReason, Option<String>),
    /// An MCP server asks the person for input: a form for the client.
    Elicit {
        id: String,
        server: String,
        message: String,
        schema: serde_json::Value,
    },
}

/// The translator; it remembers the calls it has announced and what the
/// session has spent.
#[derive(Debug, Default)]
pub struct Updates {
    calls: HashMap<String, ToolCall>,
    catalog: Catalog,
    spent_usd: f64,
    /// The last error said in the running turn.
    error: Option<String>,
    /// The editor's terminal each call's command ran in.
    terminals: crate::terminal::Terminals,
}

/// The kind of tool a client draws for `name`.
#[must_use]
pub fn kind(name: &str) -> acp::ToolKind {
    match name {
        "read" | "expand" => acp::ToolKind::Read,
        "edit" | "write" | "apply_patch" | "notebook_edit" => acp::ToolKind::Edit,
        "grep" | "glob" | "tool_search" => acp::ToolKind::Search,
        "bash" => acp::ToolKind::Execute,
        "web_fetch" => acp::ToolKind::Fetch,
        _ => acp::ToolKind::Other,
    }
}

/// ACP's stop reason for the end of a turn.
#[must_use]
pub fn stop_reason(stop: StopReason) -> acp::StopReason {
    match stop {
        StopReason::EndTurn | StopReason::Denied | StopReason::Error | StopReason::Budget => {
            acp::StopReason::EndTurn
        }
        StopReason::Interrupted => acp::StopReason::Cancelled,
        StopReason::MaxTurns => acp::StopReason::MaxTurnRequests,
        StopReason::MaxTokens => acp::StopReason::MaxTokens,
    }
}

/// The file a file tool works on, with the line it starts at.
fn location(call: &ToolCall) -> Option<acp::ToolCallLocation> {
    if !matches!(kind(&call.name), acp::ToolKind::Read | acp::ToolKind::Edit)
        || call.subject.is_empty()
    {
        return None;
    }
    let location = acp::ToolCallLocation::new(std::path::PathBuf::from(&call.subject));
    let line = call
        .input
        .get("offset")
        .and_then(serde_json::Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    Some(match line {
        Some(line) => location.line(line),
        None => location,
    })
}

fn title(call: &ToolCall) -> String {
    if call.subject.is_empty() {
        call.name.clone()
    } else {
        format!("{} {}", call.name, call.subject)
    }
}

fn text(text: &str) -> acp::ContentChunk {
    acp::ContentChunk::new(text.to_owned().into())
}

/// What a finished edit or write changed, as a diff the editor shows.
fn diff(call: &ToolCall) -> Option<acp::Diff> {
    let input = |key: &str| call.input.get(key).and_then(serde_json::Value::as_str);
    let path = std::path::PathBuf::from(&call.subject);
    match call.name.as_str() {
        "write" => Some(acp::Diff::new(path, input("content")?.to_owned())),
        "edit" => Some(
            acp::Diff::new(path, input("new_string")?.to_owned())
                .old_text(input("old_string")?.to_owned()),
        ),
        _ => None,
    }
}

impl Updates {
    /// A translator pricing calls with `catalog`.
    #[must_use]
    pub fn new(catalog: Catalog) -> Updates {
        Updates {
            catalog,
            ..Updates::default()
        }
    }

    /// This translator, keeping in a command's card the editor's terminal
    /// it ran in (as `terminals` says, by call id).
    #[must_use]
    pub fn with_terminals(mut self, terminals: crate::terminal::Terminals) -> Updates {
        self.terminals = terminals;
        self
    }

    /// What `event` becomes, in order.
    pub fn event(&mut self, event: &Event) -> Vec<Out> {
        let update = |u| vec![Out::Update(u)];
        match event {
            Event::TextDelta { text: t } => update(acp::SessionUpdate::AgentMessageChunk(text(t))),
            Event::ThinkingDelta { text: t } => {
                update(acp::SessionUpdate::AgentThoughtChunk(text(t)))
            }
            Event::ToolCallRequested { call } => {
                let mut announced = acp::ToolCall::new(call.id.as_str().to_owned(), title(call))
                    .kind(kind(&call.name))
                    .status(acp::ToolCallStatus::Pending)
                    .raw_input(call.input.clone());
                if let Some(location) = location(call) {
                    announced = announced.locations(vec![location]);
                }
                self.calls.insert(call.id.as_str().to_owned(), call.clone());
                update(acp::SessionUpdate::ToolCall(announced))
            }
            Event::Elicitation {
                id,
                server,
                message,
                schema,
            } => vec![Out::Elicit {
                id: id.clone(),
                server: server.clone(),
                message: message.clone(),
                schema: schema.clone(),
            }],
            Event::ApprovalRequired { call_id, reason } => {
                let Some(call) = self.calls.get(call_id.as_str()) else {
                    return Vec::new();
                };
                let fields = acp::ToolCallUpdateFields::new()
                    .title(title(call))
                    .kind(kind(&call.name))
                    .raw_input(call.input.clone());
                vec![Out::Ask {
                    call_id: call_id.as_str().to_owned(),
                    call: acp::ToolCallUpdate::new(call_id.as_str().to_owned(), fields),
                    reason: reason.clone(),
                }]
            }
            Event::ToolCallOutput { call_id, .. } => {
                if !self.calls.contains_key(call_id.as_str()) {
                    return Vec::new();
                }
                let fields =
                    acp::ToolCallUpdateFields::new().status(acp::ToolCallStatus::InProgress);
                update(acp::SessionUpdate::ToolCallUpdate(
                    acp::ToolCallUpdate::new(call_id.as_str().to_owned(), fields),
                ))
            }
            Event::ToolCallDone { call_id, result } => {
                let Some(call) = self.calls.remove(call_id.as_str()) else {
                    return Vec::new();
                };
                let status = if result.ok {
                    acp::ToolCallStatus::Completed
                } else {
                    acp::ToolCallStatus::Failed
                };
                let mut content: Vec<acp::ToolCallContent> = Vec::new();
                if result.ok
                    && let Some(diff) = diff(&call)
                {
                    content.push(diff.into());
                }
                let terminal = crate::lock(&self.terminals).remove(call_id.as_str());
                // A command's card keeps its terminal, which already shows
                // the output; the text is added when the call failed (its
                // status line and any hint).
                let with_text = terminal.is_none() || !result.ok;
                if let Some(terminal) = terminal {
                    content.push(acp::ToolCallContent::Terminal(acp::Terminal::new(terminal)));
                }
                if with_text {
                    content.push(result.visible.clone().into());
                }
                let fields = acp::ToolCallUpdateFields::new()
                    .status(status)
                    .content(content);
                update(acp::SessionUpdate::ToolCallUpdate(
                    acp::ToolCallUpdate::new(call_id.as_str().to_owned(), fields),
                ))
            }
            Event::Commands { commands } => {
                let commands = commands
                    .iter()
                    .map(|c| {
                        let command =
                            acp::AvailableCommand::new(c.name.clone(), c.description.clone());
                        if c.hint.is_empty() {
                            command
                        } else {
                            command.input(acp::AvailableCommandInput::Unstructured(
                                acp::UnstructuredCommandInput::new(c.hint.clone()),
                            ))
                        }
                    })
                    .collect();
                update(acp::SessionUpdate::AvailableCommandsUpdate(
                    acp::AvailableCommandsUpdate::new(commands),
                ))
            }
            Event::ModeChanged {
                permission_mode, ..
            } => update(acp::SessionUpdate::CurrentModeUpdate(
                acp::CurrentModeUpdate::new(permission_mode.as_str().to_owned()),
            )),
            Event::Usage { model, usage, .. } => {
                let row = self.catalog.get(model);
                self.spent_usd += catalog::cost(row, usage).usd;
                let Some(window) = row.map(|r| r.context_window).filter(|w| *w > 0) else {
                    return Vec::new();
                };
                let used = usage.input_tokens
                    + usage.cache_read_tokens
                    + usage.cache_write_tokens
                    + usage.output_tokens;
                update(acp::SessionUpdate::UsageUpdate(
                    acp::UsageUpdate::new(used, window).cost(acp::Cost::new(self.spent_usd, "USD")),
                ))
            }
            Event::Notice {
                level: NoticeLevel::Error,
                text,
            } => {
                self.error = Some(text.clone());
                Vec::new()
            }
            // A warning the person should see (an MCP server that did not
            // start, one still connecting, a setting ignored): a paragraph
            // of the agent's own, marked, apart from the model's text.
            Event::Notice {
                level: NoticeLevel::Warn,
                text: said,
            } => update(acp::SessionUpdate::AgentMessageChunk(text(&format!(
                "\n\n⚠ {said}\n\n"
            )))),
            Event::TurnStarted { .. } => {
                self.error = None;
                Vec::new()
            }
            Event::TurnDone { stop } => vec![Out::Done(*stop, self.error.take())],
            Event::Subagent { event, .. } => self.child(event),
            Event::Plan { steps } => {
                use cox_protocol::types::StepStatus;
                let entries = steps
                    .iter()
                    .map(|step| {
                        let status = match step.status {
                            StepStatus::Pending => acp::PlanEntryStatus::Pending,
                            StepStatus::InProgress => acp::PlanEntryStatus::InProgress,
                            StepStatus::Completed => acp::PlanEntryStatus::Completed,
                        };
                        acp::PlanEntry::new(
                            step.content.clone(),
                            acp::PlanEntryPriority::Medium,
                            status,
                        )
                    })
                    .collect();
                update(acp::SessionUpdate::Plan(acp::Plan::new(entries)))
            }
            _ => Vec::new(),
        }
    }

    /// An event of a subagent: its tool calls as calls of their own (the
    /// core already made their ids `<child>/<id>`, unique here), its asks
    /// as asks (answered with that id, which the core passes down), its
    /// calls' cost in the session's; its text and its turn's end stay its
    /// own. Its own subagents' events likewise.
    fn child(&mut self, event: &Event) -> Vec<Out> {
        match event {
            Event::ToolCallRequested { .. }
            | Event::ApprovalRequired { .. }
            | Event::ToolCallOutput { .. }
            | Event::ToolCallDone { .. } => self.event(event),
            Event::Usage { model, usage, .. } => {
                self.spent_usd += catalog::cost(self.catalog.get(model), usage).usd;
                Vec::new()
            }
            Event::Subagent { event, .. } => self.child(event),
            _ => Vec::new(),
        }
    }

    /// An earlier run's events as the updates that show the conversation
    /// again (`session/load`): the person's prompts as user chunks, then
    /// what [`Updates::event`] makes of the rest, turn ends left out.
    pub fn replay(&mut self, events: &[Event]) -> Vec<acp::SessionUpdate> {
        let mut out = Vec::new();
        for event in events {
            if let Event::TurnStarted { text: t, .. } = event {
                out.push(acp::SessionUpdate::UserMessageChunk(text(t)));
                continue;
            }
            for item in self.event(event) {
                if let Out::Update(update) = item {
                    out.push(update);
                }
            }
        }
        // A call an earlier run left without a result has none to come.
        self.calls.clear();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cox_protocol::types::{Risk, ToolResult};
    use serde_json::json;

    fn write_call() -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: "write".into(),
            input: json!({"path": "hello.txt", "content": "hi\n"}),
            risk: Risk::Write,
            subject: "/w/hello.txt".into(),
            segments: None,
            writes: Vec::new(),
        }
    }

    fn wire(out: &[Out]) -> Vec<serde_json::Value> {
        out.iter()
            .map(|o| match o {
                Out::Update(u) => serde_json::to_value(u).unwrap(),
                Out::Ask { call, .. } => json!({"ask": serde_json::to_value(call).unwrap()}),
                Out::Done(stop, _) => json!({"done": stop.as_str()}),
                Out::Elicit { id, .. } => json!({"elicit": id}),
            })
            .collect()
    }

    #[test]
    fn a_tool_call_is_announced_then_updated_with_its_kind_and_place() {
        let mut updates = Updates::default();
        let announced = wire(&updates.event(&Event::ToolCallRequested { call: write_call() }));
        assert_eq!(announced[0]["sessionUpdate"], "tool_call");
        assert_eq!(announced[0]["toolCallId"], "c1");
        assert_eq!(announced[0]["kind"], "edit");
        assert_eq!(announced[0]["title"], "write /w/hello.txt");
        assert_eq!(announced[0]["locations"][0]["path"], "/w/hello.txt");
        assert_eq!(announced[0]["rawInput"]["path"], "hello.txt");
        let asked = wire(&updates.event(&Event::ApprovalRequired {
            call_id: "c1".into(),
            reason: "writes a file".into(),
        }));
        assert_eq!(asked[0]["ask"]["toolCallId"], "c1");
        let done = wire(&updates.event(&Event::ToolCallDone {
            call_id: "c1".into(),
            result: ToolResult::ok("wrote 3 bytes"),
        }));
        assert_eq!(done[0]["sessionUpdate"], "tool_call_update");
        assert_eq!(done[0]["status"], "completed");
        assert_eq!(done[0]["content"][0]["type"], "diff");
        assert_eq!(done[0]["content"][0]["path"], "/w/hello.txt");
        assert_eq!(done[0]["content"][0]["newText"], "hi\n");
        assert_eq!(done[0]["content"][1]["content"]["text"], "wrote 3 bytes");
        // A result for a call never announced says nothing.
        assert!(
            updates
                .event(&Event::ToolCallDone {
                    call_id: "c9".into(),
                    result: ToolResult::ok("x"),
                })
                .is_empty()
        );
    }

    #[test]
    fn a_command_that_ran_in_the_editors_terminal_keeps_it_in_its_card() {
        let terminals = crate::terminal::Terminals::default();
        let mut updates = Updates::default().with_terminals(terminals.clone());
        let bash = |id: &str| ToolCall {
            id: id.into(),
            name: "bash".into(),
            input: json!({"command": "make"}),
            risk: Risk::Exec,
            subject: "make".into(),
            segments: None,
            writes: Vec::new(),
        };
        for (id, result) in [
            ("ok", ToolResult::ok("built")),
            ("bad", ToolResult::error("[exit code 2]")),
        ] {
            updates.event(&Event::ToolCallRequested { call: bash(id) });
            crate::lock(&terminals).insert(id.into(), acp::TerminalId::new(format!("t-{id}")));
            let done = wire(&updates.event(&Event::ToolCallDone {
                call_id: id.into(),
                result,
            }));
            let content = done[0]["content"].as_array().unwrap();
            assert_eq!(content[0]["type"], "terminal");
            assert_eq!(content[0]["terminalId"], format!("t-{id}"));
            if id == "ok" {
                assert_eq!(
                    content.len(),
                    1,
                    "the terminal shows the output: {content:?}"
                );
            } else {
                assert_eq!(content[1]["content"]["text"], "[exit code 2]");
            }
        }
        assert!(
            crate::lock(&terminals).is_empty(),
            "each call's entry is let go"
        );
    }

    #[test]
    fn usage_says_the_context_used_and_the_cost_so_far() {
        let row = cox_protocol::catalog::ModelInfo {
            id: "m".into(),
            provider: "p".into(),
            context_window: 200_000,
            max_output: 64_000,
            prices: Some(cox_protocol::catalog::Prices {
                input: 3.0,
                output: 15.0,
                cache_read: 0.3,
                cache_write: 3.75,
                web_search: 0.0,
            }),
            prices_as_of: None,
            efforts: Vec::new(),
            web_search: false,
        };
        let mut updates = Updates::new(Catalog::new(vec![row]));
        let usage = |model: &str| Event::Usage {
            provider: "p".into(),
            model: model.into(),
            tier: cox_protocol::provider::Tier::Code,
            job: Default::default(),
            effort: None,
            usage: cox_protocol::types::Usage {
                input_tokens: 1_000_000,
                output_tokens: 1000,
                ..Default::default()
            },
        };
        let first = wire(&updates.event(&usage("m")));
        assert_eq!(first[0]["sessionUpdate"], "usage_update");
        assert_eq!(first[0]["used"], 1_001_000);
        assert_eq!(first[0]["size"], 200_000);
        assert_eq!(first[0]["cost"]["currency"], "USD");
        let second = wire(&updates.event(&usage("m")));
        let (a, b) = (
            first[0]["cost"]["amount"].as_f64().unwrap(),
            second[0]["cost"]["amount"].as_f64().unwrap(),
        );
        assert!((a - 3.015).abs() < 1e-9, "{a}");
        assert!((b - 2.0 * a).abs() < 1e-9, "the session's total: {b}");
        // A model without a row has no window to say.
        assert!(updates.event(&usage("unknown")).is_empty());
    }

    #[test]
    fn text_thinking_and_the_turn_s_end() {
        let mut updates = Updates::default();
        let out = wire(&updates.event(&Event::TextDelta { text: "hi".into() }));
        assert_eq!(out[0]["sessionUpdate"], "agent_message_chunk");
        assert_eq!(out[0]["content"]["text"], "hi");
        let out = wire(&updates.event(&Event::ThinkingDelta { text: "hm".into() }));
        assert_eq!(out[0]["sessionUpdate"], "agent_thought_chunk");
        assert!(matches!(
            updates.event(&Event::TurnDone {
                stop: StopReason::Interrupted
            })[..],
            [Out::Done(StopReason::Interrupted, None)]
        ));
        assert_eq!(
            serde_json::to_value(stop_reason(StopReason::Interrupted)).unwrap(),
            "cancelled"
        );
    }

    #[test]
    fn a_replay_shows_the_prompts_and_drops_calls_left_open() {
        let mut updates = Updates::default();
        let shown = updates.replay(&[
            Event::TurnStarted {
                turn: 1,
                text: "make it".into(),
            },
            Event::TextDelta { text: "ok".into() },
            Event::ToolCallRequested { call: write_call() },
            Event::TurnDone {
                stop: StopReason::EndTurn,
            },
        ]);
        let kinds: Vec<String> = shown
            .iter()
            .map(|u| {
                serde_json::to_value(u).unwrap()["sessionUpdate"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(
            kinds,
            ["user_message_chunk", "agent_message_chunk", "tool_call"]
        );
        assert!(
            updates
                .event(&Event::ToolCallDone {
                    call_id: "c1".into(),
                    result: ToolResult::ok("late"),
                })
                .is_empty()
        );
    }
}
