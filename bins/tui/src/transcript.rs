//! The conversation as the session's events build it.
//!
//! Every event is folded in as it comes; nothing here draws or awaits.
//! Everything a model or a tool wrote is sanitized once, on the way in, so
//! no escape sequence or bidi override is ever stored, let alone drawn.
//! A tool call's streamed output keeps only its last lines (the archive has
//! the rest), so a command printing megabytes costs a few KiB here.
//!
//! A tool entry is keyed by its turn and its call id, and only a call still
//! waiting for its result is looked up by id: a server that numbers every
//! call `call_0`, round after round, or a resumed session whose new turns
//! reuse an id, adds entries and never overwrites an earlier one. A
//! `ToolCallRequested` for a call of this turn that has no result yet is a
//! person's edit of it, and replaces its input.
//!
//! A subagent's tool calls are entries too, marked with the child's session
//! (`via`) and drawn under the call that runs it; they are looked up within
//! that child only, so a child reusing its parent's call ids never touches
//! the parent's entries. Everything else a child says goes to [`Agents`].

use cox_protocol::CallId;
use cox_protocol::hook::{HookEvent, HookOutcome};
use cox_protocol::types::{Event, NoticeLevel, StopReason, ToolCall, ToolResult, Usage};

use crate::agents::Agents;
use crate::preview::{self, Preview, Read};
use crate::sanitize::sanitize;

/// The most streamed output kept per call, from its end.
const OUTPUT_TAIL: usize = 4 * 1024;

/// One thing on screen.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    /// What the person asked.
    User { turn: u32, text: String },
    /// The model's answer, growing while it streams.
    Assistant { text: String },
    /// The model's reasoning, where the provider shows it.
    Thinking { text: String },
    /// A tool call: requested, maybe waiting for approval, maybe done.
    Tool(Box<ToolEntry>),
    /// Something a person should know.
    Notice { level: NoticeLevel, text: String },
    /// The earlier turns were summarised.
    Compacted { dropped: usize, summary: String },
    /// A turn that did not simply end (interrupted, denied, an error…).
    Stopped { stop: StopReason },
    /// A hook ran: one line, with what it said.
    Hook {
        hook: String,
        event: HookEvent,
        outcome: HookOutcome,
        duration_ms: u64,
        /// Its reason or warning, and the first line of what it printed
        /// (unless it suppressed that), sanitised.
        said: Option<String>,
    },
}

/// A tool call and what became of it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolEntry {
    /// The turn it belongs to, counted by this transcript (a resumed
    /// session's turns included), so it never matches a later turn's call
    /// with the same id.
    pub turn: u32,
    pub call: ToolCall,
    /// The last lines of what it printed while running.
    pub output: String,
    pub result: Option<ToolResult>,
    /// Waiting for a person, with the engine's reason.
    pub approval: Option<String>,
    /// What a write, an edit or a patch does (see [`preview`]).
    pub preview: Option<Preview>,
    /// The subagent session that made the call; `None`: this session.
    pub via: Option<String>,
}

/// The conversation so far, and the facts the status line shows.
#[derive(Clone, Debug, Default)]
pub struct Transcript {
    pub entries: Vec<Entry>,
    pub model: String,
    pub provider: String,
    pub cwd: String,
    pub session: String,
    /// Every call's usage added up.
    pub usage: Usage,
    /// What the last call used of the window (input + cache).
    pub last_context: u64,
    pub turns: u32,
    /// A turn is running.
    pub busy: bool,
    /// The call waiting for an answer, if any.
    pub pending: Option<CallId>,
    /// The subagent whose call `pending` is; `None`: this session's.
    pub pending_via: Option<String>,
    /// Asks that came while another was shown (subagents running side by
    /// side ask at once): each is shown when the one before is answered.
    waiting: std::collections::VecDeque<(CallId, Option<String>)>,
    /// The subagents this session ran.
    pub agents: Agents,
    /// Prices for the subagents' calls.
    pub catalog: cox_protocol::catalog::Catalog,
    /// The model's plan (its `todo` tool), as it last said it.
    pub plan: Vec<cox_protocol::types::PlanStep>,
    /// Where the model call in progress began in `entries`.
    reply_start: usize,
    /// Turns seen, this transcript's own count: the key of a tool entry.
    seq: u32,
    /// The files each turn changed (from its checkpoints).
    changed: std::collections::BTreeMap<u32, std::collections::BTreeSet<String>>,
    /// Turns a rewind took out of the conversation.
    cut: std::collections::BTreeSet<u32>,
}

impl Transcript {
    /// An empty transcript.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Folds one event in.
    pub fn apply(&mut self, event: &Event) {
        self.fold(event);
        // After these, whatever comes next belongs to a new model call.
        if matches!(
            event,
            Event::SessionStarted { .. }
                | Event::TurnStarted { .. }
                | Event::Usage { .. }
                | Event::ToolCallDone { .. }
                | Event::TurnDone { .. }
                | Event::Compacted { .. }
        ) {
            self.reply_start = self.entries.len();
        }
    }

    fn fold(&mut self, event: &Event) {
        match event {
            Event::SessionStarted {
                session_id,
                cwd,
                model,
                provider,
                ..
            } => {
                self.session = session_id.to_string();
                self.cwd = sanitize(cwd).into_owned();
                self.model = sanitize(model).into_owned();
                self.provider = sanitize(provider).into_owned();
            }
            Event::TurnStarted { turn, text } => {
                self.turns = *turn;
                self.seq += 1;
                self.busy = true;
                self.entries.push(Entry::User {
                    turn: *turn,
                    text: text.clone(),
                });
            }
            Event::TextDelta { text } => {
                let text = sanitize(text);
                match self.entries.last_mut() {
                    Some(Entry::Assistant { text: so_far }) => so_far.push_str(&text),
                    _ => self.entries.push(Entry::Assistant {
                        text: text.into_owned(),
                    }),
                }
            }
            Event::ThinkingDelta { text } => {
                let text = sanitize(text);
                match self.entries.last_mut() {
                    Some(Entry::Thinking { text: so_far }) => so_far.push_str(&text),
                    _ => self.entries.push(Entry::Thinking {
                        text: text.into_owned(),
                    }),
                }
            }
            Event::ToolCallRequested { .. }
            | Event::ApprovalRequired { .. }
            | Event::ToolCallOutput { .. }
            | Event::ToolCallDone { .. } => self.fold_call(None, event),
            Event::Subagent {
                call_id,
                session_id,
                event,
            } => self.fold_child(call_id, &session_id.to_string(), event),
            Event::Plan { steps } => {
                self.plan = steps
                    .iter()
                    .map(|s| cox_protocol::types::PlanStep {
                        content: sanitize(&s.content).into_owned(),
                        status: s.status,
                    })
                    .collect();
            }
            Event::Usage { usage, .. } => {
                self.usage.add(usage);
                self.last_context =
                    usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
            }
            Event::Retry {
                attempt,
                of,
                delay_ms,
                reason,
                discarded,
            } => {
                if *discarded {
                    // The partial answer is void: drop all it streamed
                    // (text, thinking, announced calls).
                    self.entries
                        .truncate(self.reply_start.min(self.entries.len()));
                    self.pending = None;
                    self.pending_via = None;
                    self.waiting.clear();
                }
                self.entries.push(Entry::Notice {
                    level: NoticeLevel::Warn,
                    text: format!(
                        "{}; trying again in {:.1} s (attempt {attempt} of {of})",
                        sanitize(reason),
                        *delay_ms as f64 / 1000.0
                    ),
                });
            }
            Event::Notice { level, text } => self.entries.push(Entry::Notice {
                level: *level,
                text: sanitize(text).into_owned(),
            }),
            Event::Elicitation {
                server, message, ..
            } => self.entries.push(Entry::Notice {
                level: NoticeLevel::Info,
                text: format!(
                    "MCP server '{}' asks: {}",
                    sanitize(server),
                    sanitize(message)
                ),
            }),
            Event::Elicited { action, .. } => self.entries.push(Entry::Notice {
                level: NoticeLevel::Info,
                text: match action.as_str() {
                    "accept" => "you sent the form".to_owned(),
                    "decline" => "you declined the request".to_owned(),
                    _ => "the request was cancelled".to_owned(),
                },
            }),
            Event::ServerTool { block } => self.entries.push(Entry::Notice {
                level: NoticeLevel::Info,
                text: match &block.step {
                    cox_protocol::types::ServerStep::Searched { query, .. } => {
                        format!("searched the web: {}", sanitize(query))
                    }
                    cox_protocol::types::ServerStep::Found {
                        error: Some(error), ..
                    } => format!("the web search failed: {}", sanitize(error)),
                    cox_protocol::types::ServerStep::Found { results, .. } => format!(
                        "found {} page(s): {}",
                        results.len(),
                        results
                            .iter()
                            .take(5)
                            .map(|s| sanitize(&s.url).into_owned())
                            .collect::<Vec<_>>()
                            .join(" · ")
                    ),
                },
            }),
            Event::Citations { sources } => self.entries.push(Entry::Notice {
                level: NoticeLevel::Info,
                text: format!(
                    "sources: {}",
                    sources
                        .iter()
                        .map(|s| match s.title.is_empty() {
                            true => sanitize(&s.url).into_owned(),
                            false => format!("{} ({})", sanitize(&s.title), sanitize(&s.url)),
                        })
                        .collect::<Vec<_>>()
                        .join(" · ")
                ),
            }),
            // The person's own command (`! cmd`), shown as a bash card.
            Event::UserShell { command, result } => {
                let mut result = result.clone();
                result.visible = sanitize(&result.visible).into_owned();
                self.entries.push(Entry::Tool(Box::new(ToolEntry {
                    turn: self.seq,
                    call: cox_protocol::types::ToolCall {
                        id: CallId::from("user-shell"),
                        name: "bash".to_owned(),
                        input: serde_json::json!({ "command": command }),
                        risk: cox_protocol::types::Risk::Exec,
                        subject: sanitize(command).into_owned(),
                        segments: None,
                        writes: Vec::new(),
                    },
                    output: String::new(),
                    result: Some(result),
                    approval: None,
                    preview: None,
                    via: None,
                })));
            }
            Event::Attached { images } => self.entries.push(Entry::Notice {
                level: NoticeLevel::Info,
                text: match images.len() {
                    1 => "1 image sent with the prompt".to_owned(),
                    n => format!("{n} images sent with the prompt"),
                },
            }),
            Event::Compacted {
                summary, dropped, ..
            } => self.entries.push(Entry::Compacted {
                dropped: dropped.len(),
                summary: sanitize(summary).into_owned(),
            }),
            Event::ModeChanged { .. } | Event::SessionTitled { .. } | Event::Commands { .. } => {}
            Event::HookRan {
                hook,
                event,
                duration_ms,
                outcome,
                message,
                output,
                ..
            } => {
                let said = message
                    .as_deref()
                    .or(output.as_deref())
                    .and_then(|text| text.lines().find(|l| !l.trim().is_empty()))
                    .map(|line| sanitize(line).into_owned());
                self.entries.push(Entry::Hook {
                    hook: sanitize(hook).into_owned(),
                    event: *event,
                    outcome: *outcome,
                    duration_ms: *duration_ms,
                    said,
                });
            }
            Event::Checkpoint { turn, files, .. } => {
                let changed = self.changed.entry(*turn).or_default();
                changed.extend(files.iter().map(|f| f.path.clone()));
            }
            Event::Rewound {
                to_turn,
                turn,
                what,
                files,
                unkept,
            } => {
                self.turns = *turn;
                if what.conversation() {
                    self.cut.extend(*to_turn..*turn);
                }
                let mut text = match (what.code(), what.conversation()) {
                    (true, true) => {
                        format!("rewound the code and the conversation to before T{to_turn}")
                    }
                    (true, false) => format!("rewound the code to before T{to_turn}"),
                    _ => format!("rewound the conversation to before T{to_turn}"),
                };
                if what.code() {
                    text.push_str(&format!(": {} file(s) restored", files.len()));
                }
                for path in unkept {
                    text.push_str(&format!(
                        "; {} was too large to keep and is as it was",
                        sanitize(path)
                    ));
                }
                self.entries.push(Entry::Notice {
                    level: NoticeLevel::Info,
                    text,
                });
            }
            Event::RewindConflict { to_turn, files } => {
                let names: Vec<String> = files.iter().map(|f| sanitize(f).into_owned()).collect();
                self.entries.push(Entry::Notice {
                    level: NoticeLevel::Warn,
                    text: format!(
                        "not rewound to before T{to_turn}: changed since cox wrote them: {}",
                        names.join(", ")
                    ),
                });
            }
            Event::TurnDone { stop } => {
                self.busy = false;
                self.pending = None;
                self.pending_via = None;
                self.waiting.clear();
                if *stop != StopReason::EndTurn {
                    self.entries.push(Entry::Stopped { stop: *stop });
                }
            }
        }
    }

    /// What the runner found at the path the call `id` names, read as the
    /// call was requested: its preview is worked out again from it.
    pub fn see_file(&mut self, id: &CallId, read: &Read) {
        let via = self.pending_via.clone();
        if let Some(entry) = self.tool_in(via.as_deref(), id) {
            entry.preview = preview::preview(&entry.call, Some(read));
        }
    }

    /// The call `id` of this turn, made by `via` (`None`: this session),
    /// that has no result yet.
    fn open(&self, via: Option<&str>, id: &CallId) -> Option<usize> {
        let seq = self.seq;
        self.entries.iter().rposition(|e| {
            matches!(e, Entry::Tool(t) if t.turn == seq && t.call.id == *id
                && t.result.is_none() && t.via.as_deref() == via)
        })
    }

    fn tool_in(&mut self, via: Option<&str>, id: &CallId) -> Option<&mut ToolEntry> {
        let at = self.open(via, id)?;
        match &mut self.entries[at] {
            Entry::Tool(t) => Some(t.as_mut()),
            _ => None,
        }
    }

    /// A call was requested (or re-requested with a person's edit).
    fn requested(&mut self, via: Option<&str>, call: ToolCall, preview: Option<Preview>) {
        // A person's edit re-requests the same call: replace it.
        if let Some(entry) = self.tool_in(via, &call.id) {
            entry.call = call;
            entry.approval = None;
            entry.preview = preview;
        } else {
            self.entries.push(Entry::Tool(Box::new(ToolEntry {
                turn: self.seq,
                call,
                output: String::new(),
                result: None,
                approval: None,
                preview,
                via: via.map(str::to_owned),
            })));
        }
    }

    fn asked(&mut self, via: Option<&str>, call_id: &CallId, reason: &str) {
        let reason = sanitize(reason).into_owned();
        if let Some(entry) = self.tool_in(via, call_id) {
            entry.approval = Some(reason);
        }
        let same = self.pending.as_ref() == Some(call_id) && self.pending_via.as_deref() == via;
        if self.pending.is_some() && !same {
            self.waiting
                .push_back((call_id.clone(), via.map(str::to_owned)));
            return;
        }
        self.pending = Some(call_id.clone());
        self.pending_via = via.map(str::to_owned);
    }

    /// The shown ask was answered: the next one still waiting, if any,
    /// is shown.
    pub fn next_ask(&mut self) {
        self.pending = None;
        self.pending_via = None;
        while let Some((call_id, via)) = self.waiting.pop_front() {
            let open = self.open(via.as_deref(), &call_id).is_some_and(
                |at| matches!(&self.entries[at], Entry::Tool(t) if t.approval.is_some()),
            );
            if open {
                self.pending = Some(call_id);
                self.pending_via = via;
                return;
            }
        }
    }

    fn printed(&mut self, via: Option<&str>, call_id: &CallId, chunk: &str) {
        let chunk = sanitize(chunk).into_owned();
        if let Some(entry) = self.tool_in(via, call_id) {
            entry.output.push_str(&chunk);
            if entry.output.len() > 2 * OUTPUT_TAIL {
                let mut cut = entry.output.len() - OUTPUT_TAIL;
                while !entry.output.is_char_boundary(cut) {
                    cut += 1;
                }
                entry.output.drain(..cut);
            }
        }
    }

    fn done(&mut self, via: Option<&str>, call_id: &CallId, result: &ToolResult) {
        let mut result = result.clone();
        result.visible = sanitize(&result.visible).into_owned();
        if self.pending.as_ref() == Some(call_id) && self.pending_via.as_deref() == via {
            self.next_ask();
        }
        if let Some(entry) = self.tool_in(via, call_id) {
            entry.approval = None;
            entry.result = Some(result);
        }
    }

    /// An event of the subagent `child`, which call `call_id` runs.
    fn fold_child(&mut self, call_id: &CallId, child: &str, event: &Event) {
        self.fold_descendant(None, call_id, child, event);
    }

    /// An event of `child`, run by call `call_id` of `parent` (`None`:
    /// this session); a grandchild's events go one level down.
    fn fold_descendant(
        &mut self,
        parent: Option<&str>,
        call_id: &CallId,
        child: &str,
        event: &Event,
    ) {
        let description = self
            .open(parent, call_id)
            .and_then(|at| match &self.entries[at] {
                Entry::Tool(t) => t.call.input.get("description")?.as_str().map(str::to_owned),
                _ => None,
            })
            .unwrap_or_default();
        self.agents
            .apply((call_id, child, &description), event, &self.catalog);
        if let Event::Subagent {
            call_id: inner_call,
            session_id,
            event: inner,
        } = event
        {
            let grandchild = session_id.to_string();
            self.fold_descendant(Some(child), inner_call, &grandchild, inner);
            return;
        }
        self.fold_call(Some(child), event);
    }

    /// A tool call's event, made by `via` (`None`: this session); other
    /// events are left alone.
    fn fold_call(&mut self, via: Option<&str>, event: &Event) {
        match event {
            Event::ToolCallRequested { call } => {
                let mut call = call.clone();
                call.subject = sanitize(&call.subject).into_owned();
                call.name = sanitize(&call.name).into_owned();
                // A path in the workspace reads as relative to it (the
                // session's calls carry it whole); a command stays as
                // typed.
                if call.name != "bash"
                    && let Some(inside) = call
                        .subject
                        .strip_prefix(self.cwd.as_str())
                        .and_then(|rest| rest.strip_prefix('/'))
                        .filter(|rest| !rest.is_empty() && !self.cwd.is_empty())
                {
                    call.subject = inside.to_owned();
                }
                let preview = preview::preview(&call, None);
                self.requested(via, call, preview);
            }
            Event::ApprovalRequired { call_id, reason } => self.asked(via, call_id, reason),
            Event::ToolCallOutput { call_id, chunk } => self.printed(via, call_id, chunk),
            Event::ToolCallDone { call_id, result } => self.done(via, call_id, result),
            _ => {}
        }
    }

    /// The call's approval prompt is answered.
    pub fn clear_approval(&mut self, id: &CallId) {
        let via = self.pending_via.clone();
        if let Some(entry) = self.tool_in(via.as_deref(), id) {
            entry.approval = None;
        }
    }

    /// The call waiting for approval.
    #[must_use]
    pub fn pending_call(&self) -> Option<&ToolEntry> {
        let at = self.open(self.pending_via.as_deref(), self.pending.as_ref()?)?;
        match &self.entries[at] {
            Entry::Tool(t) => Some(t.as_ref()),
            _ => None,
        }
    }

    /// The prompts of this session still in its conversation, oldest
    /// first (for `/rewind`'s list).
    #[must_use]
    pub fn prompts(&self) -> Vec<(u32, &str)> {
        self.entries
            .iter()
            .filter_map(|e| match e {
                Entry::User { turn, text } if !self.cut.contains(turn) => {
                    Some((*turn, text.as_str()))
                }
                _ => None,
            })
            .collect()
    }

    /// How many files turn `turn` changed, as its checkpoints said.
    #[must_use]
    pub fn files_of(&self, turn: u32) -> usize {
        self.changed
            .get(&turn)
            .map_or(0, std::collections::BTreeSet::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cox_protocol::types::Risk;
    use serde_json::json;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "bash".into(),
            input: json!({"command": "ls"}),
            risk: Risk::Exec,
            subject: "ls\u{1b}[2J".into(),
            segments: None,
            writes: Vec::new(),
        }
    }

    #[test]
    fn deltas_join_and_escapes_never_get_in() {
        let mut t = Transcript::new();
        t.apply(&Event::TurnStarted {
            turn: 1,
            text: "hi".into(),
        });
        t.apply(&Event::TextDelta {
            text: "Hel\u{1b}[31m".into(),
        });
        t.apply(&Event::TextDelta { text: "lo".into() });
        assert_eq!(
            t.entries[1],
            Entry::Assistant {
                text: "Hello".into()
            }
        );
        t.apply(&Event::ToolCallRequested { call: call("c1") });
        let Entry::Tool(entry) = &t.entries[2] else {
            panic!()
        };
        assert_eq!(entry.call.subject, "ls");
    }

    #[test]
    fn a_subagent_s_calls_fold_under_its_call_and_never_touch_the_parent_s() {
        let mut t = Transcript::new();
        t.apply(&Event::TurnStarted {
            turn: 1,
            text: "go".into(),
        });
        let mut agent = call("c1");
        agent.name = "agent".into();
        agent.input = serde_json::json!({"description": "look around", "prompt": "p"});
        t.apply(&Event::ToolCallRequested { call: agent });
        let child = cox_protocol::SessionId::generate();
        let from_child = |event: Event| Event::Subagent {
            call_id: "c1".into(),
            session_id: child,
            event: Box::new(event),
        };
        // The child's call has the same id as the parent's running one.
        t.apply(&from_child(Event::ToolCallRequested { call: call("c1") }));
        t.apply(&from_child(Event::ApprovalRequired {
            call_id: "c1".into(),
            reason: "runs a command".into(),
        }));
        assert_eq!(t.pending.as_ref().map(CallId::as_str), Some("c1"));
        let waiting = t.pending_call().unwrap();
        assert_eq!(waiting.via.as_deref(), Some(child.to_string().as_str()));
        assert_eq!(waiting.call.name, "bash");
        t.apply(&from_child(Event::ToolCallDone {
            call_id: "c1".into(),
            result: ToolResult::ok("listed"),
        }));
        assert!(t.pending.is_none());
        // The parent's own call is still running, its result to come.
        let parent = t
            .entries
            .iter()
            .find_map(|e| match e {
                Entry::Tool(tool) if tool.via.is_none() => Some(tool),
                _ => None,
            })
            .unwrap();
        assert!(parent.result.is_none());
        t.apply(&from_child(Event::TurnDone {
            stop: StopReason::EndTurn,
        }));
        assert_eq!(t.agents.rows.len(), 1);
        assert_eq!(t.agents.rows[0].description, "look around");
        assert!(t.busy, "the child's turn end is not the parent's");
    }

    #[test]
    fn approvals_wait_and_results_land() {
        let mut t = Transcript::new();
        t.apply(&Event::ToolCallRequested { call: call("c1") });
        t.apply(&Event::ApprovalRequired {
            call_id: "c1".into(),
            reason: "exec asks".into(),
        });
        assert_eq!(
            t.pending_call().unwrap().approval.as_deref(),
            Some("exec asks")
        );
        t.apply(&Event::ToolCallDone {
            call_id: "c1".into(),
            result: ToolResult::ok("a\nb"),
        });
        assert!(t.pending.is_none());
    }

    #[test]
    fn streamed_output_keeps_its_tail() {
        let mut t = Transcript::new();
        t.apply(&Event::ToolCallRequested { call: call("c1") });
        for i in 0..10_000 {
            t.apply(&Event::ToolCallOutput {
                call_id: "c1".into(),
                chunk: format!("line {i}\n"),
            });
        }
        let Entry::Tool(entry) = &t.entries[0] else {
            panic!()
        };
        assert!(entry.output.len() <= 2 * OUTPUT_TAIL);
        assert!(entry.output.ends_with("line 9999\n"));
    }

    fn tools(t: &Transcript) -> Vec<(u32, &str, Option<&str>)> {
        t.entries
            .iter()
            .filter_map(|e| match e {
                Entry::Tool(t) => Some((
                    t.turn,
                    t.call.input["command"].as_str().unwrap_or_default(),
                    t.result.as_ref().map(|r| r.visible.as_str()),
                )),
                _ => None,
            })
            .collect()
    }

    fn ran(t: &mut Transcript, id: &str, command: &str, visible: &str) {
        let mut c = call(id);
        c.input = json!({ "command": command });
        t.apply(&Event::ToolCallRequested { call: c });
        t.apply(&Event::ToolCallDone {
            call_id: id.into(),
            result: ToolResult::ok(visible),
        });
    }

    #[test]
    fn a_reused_call_id_never_overwrites_an_earlier_entry() {
        let mut t = Transcript::new();
        for turn in 1..=2 {
            t.apply(&Event::TurnStarted {
                turn,
                text: "go".into(),
            });
            ran(
                &mut t,
                "call_0",
                &format!("echo {turn}"),
                &format!("{turn}"),
            );
        }
        // A server that numbers every call call_0, round after round.
        ran(&mut t, "call_0", "echo again", "again");
        assert_eq!(
            tools(&t),
            [
                (1, "echo 1", Some("1")),
                (2, "echo 2", Some("2")),
                (2, "echo again", Some("again")),
            ]
        );
    }

    #[test]
    fn a_resumed_turn_s_unfinished_call_is_not_taken_over() {
        let mut t = Transcript::new();
        t.apply(&Event::TurnStarted {
            turn: 1,
            text: "go".into(),
        });
        t.apply(&Event::ToolCallRequested {
            call: call("call_0"),
        });
        // The process died here; the session resumed, its turn numbering
        // starting over.
        t.apply(&Event::TurnStarted {
            turn: 1,
            text: "again".into(),
        });
        ran(&mut t, "call_0", "echo new", "new");
        assert_eq!(tools(&t), [(1, "ls", None), (2, "echo new", Some("new"))]);
    }

    #[test]
    fn an_edited_call_replaces_its_input_until_it_has_a_result() {
        let mut t = Transcript::new();
        t.apply(&Event::TurnStarted {
            turn: 1,
            text: "go".into(),
        });
        t.apply(&Event::ToolCallRequested { call: call("c1") });
        t.apply(&Event::ApprovalRequired {
            call_id: "c1".into(),
            reason: "exec asks".into(),
        });
        let mut edited = call("c1");
        edited.input = json!({"command": "ls -a"});
        t.apply(&Event::ToolCallRequested { call: edited });
        assert_eq!(tools(&t), [(1, "ls -a", None)]);
    }
}
