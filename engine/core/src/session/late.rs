//! Tools that join a session after it was made: those awaited as its run
//! starts ([`LateSource`], an MCP client's servers connecting), and those
//! that join later ([`super::Session::with_tool_updates`]: a server that
//! connected late, or changed its tools), each as the next turn starts.
//!
//! Invariants: the tool set is swapped whole between turns, so a turn's
//! rounds and calls all see the set it started with; a name prefix said
//! unavailable (a server that did not connect) is available again once
//! tools of that prefix join.

use std::sync::Arc;

use cox_protocol::mcp::Expander;
use cox_protocol::tool::Tool;
use cox_protocol::types::{Event, NoticeLevel, Submission};
use futures::Stream;

use super::{Driver, Fixed, Session};
use crate::tool_set::ToolSet;
use crate::world::World;

/// Tools that join the session as its run starts (an MCP client's, whose
/// servers connect meanwhile), and the notices about those that could not.
#[derive(Default)]
pub struct LateTools {
    pub tools: Vec<Arc<dyn Tool>>,
    /// One line each, emitted as warnings once the session has started.
    pub notices: Vec<String>,
    /// The servers' prompts and resources, which prompts may name.
    pub expander: Option<Arc<dyn Expander>>,
    /// The whole system prompt, when the client set it as the session
    /// started (the Agent SDK's `initialize`): it replaces the configured
    /// one before the first request, so every request has the same.
    pub system_prompt: Option<String>,
    /// The session's title, when the client named it: said once the
    /// session has started, and no title job runs.
    pub title: Option<String>,
    /// Tool name prefixes whose tools are not there, and why (an MCP
    /// server that did not connect: `mcp__<server>__` and what it said): a
    /// call to one is told why, not only that the tool is unknown.
    pub unavailable: Vec<(String, String)>,
    /// For an update ([`Session::with_tool_updates`]): the prefix whose
    /// tools these replace (a server that changed its tools), all of them
    /// leaving first.
    pub replacing: Option<String>,
    /// For an update: the expanders' commands changed (a server changed
    /// its prompts), with the line that says how; the commands are said
    /// again.
    pub commands_changed: Option<String>,
}

/// Where late tools come from: awaited once, before the first request.
pub type LateSource = cox_protocol::provider::BoxFuture<'static, LateTools>;

impl<W: World> Fixed<W> {
    /// The tools offered now.
    pub(crate) fn tools(&self) -> Arc<ToolSet> {
        Arc::clone(
            &self
                .tools
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// `late` joins the tools (those of prefix `replacing` leave first):
    /// the set is built again with every tool joined so far.
    pub(super) fn join(&self, late: Vec<Arc<dyn Tool>>, replacing: Option<&str>) {
        let mut joined = self
            .joined
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(prefix) = replacing {
            joined.retain(|t| !t.name().starts_with(prefix));
        }
        joined.extend(late);
        let mut tools = self.base_tools.clone();
        tools.extend(joined.iter().cloned());
        let max_tools = usize::try_from(self.config.context.max_tools).unwrap_or(usize::MAX);
        *self
            .tools
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            Arc::new(ToolSet::new(tools, max_tools));
    }

    /// Why a call to `name` finds no tool, when its prefix is one that is
    /// not there (an MCP server that did not connect).
    pub(crate) fn unavailable(&self, name: &str) -> Option<(String, String)> {
        self.unavailable
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .find(|(prefix, _)| name.starts_with(prefix.as_str()))
            .cloned()
    }

    /// These prefixes are not there (more of them), and those of `joined`
    /// tools are there again.
    pub(super) fn set_unavailable(&self, missing: Vec<(String, String)>) {
        let mut unavailable = self
            .unavailable
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        unavailable.retain(|(prefix, _)| !missing.iter().any(|(p, _)| p == prefix));
        unavailable.extend(missing);
    }

    /// The prefixes of `names` are there again (their tools joined).
    fn available_again(&self, names: &[String]) {
        self.unavailable
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|(prefix, _)| !names.iter().any(|n| n.starts_with(prefix.as_str())));
    }

    /// Updates that came while the session's late tools were awaited (a
    /// server that changed its tools as it connected) join as they are,
    /// before anything was sent: nothing is said of them but their
    /// notices, which are returned.
    pub(super) fn absorb_waiting(&self) -> Vec<String> {
        let mut notices = Vec::new();
        for update in self.waiting_updates() {
            notices.extend(update.notices);
            if !update.unavailable.is_empty() {
                self.set_unavailable(update.unavailable);
            }
            let names: Vec<String> = update.tools.iter().map(|t| t.name().to_owned()).collect();
            self.available_again(&names);
            self.join(update.tools, update.replacing.as_deref());
        }
        notices
    }

    /// The updates waiting, taken (none when there is no channel).
    fn waiting_updates(&self) -> Vec<LateTools> {
        let mut out = Vec::new();
        let mut updates = self
            .updates
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(rx) = updates.as_mut() {
            while let Ok(update) = rx.try_recv() {
                out.push(update);
            }
        }
        out
    }
}

impl<W: World> Session<W> {
    /// Adds the tools `source` gives once it resolves: awaited as the run
    /// starts, so the first request (and the `session_started` event) has
    /// them; its notices are said as warnings. Several sources are awaited
    /// together, their tools and notices joined (the first expander kept).
    #[must_use]
    pub fn with_late_tools(mut self, source: LateSource) -> Self {
        self.fixed.late = Some(match self.fixed.late.take() {
            None => source,
            Some(first) => Box::pin(async move {
                let (mut joined, second) = futures::join!(first, source);
                joined.tools.extend(second.tools);
                joined.notices.extend(second.notices);
                joined.expander = joined.expander.or(second.expander);
                joined.system_prompt = joined.system_prompt.or(second.system_prompt);
                joined.title = joined.title.or(second.title);
                joined.unavailable.extend(second.unavailable);
                joined
            }),
        });
        self
    }

    /// Tools that join after the session started: each [`LateTools`]
    /// sent on `updates` joins as the next turn starts (its notices said
    /// then, and that the tool block changed), so a server that connects
    /// late is there for the next prompt, and no prompt waits for it.
    #[must_use]
    pub fn with_tool_updates(
        self,
        updates: futures::channel::mpsc::UnboundedReceiver<LateTools>,
    ) -> Self {
        *self
            .fixed
            .updates
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(updates);
        self
    }
}

impl<W, I, F> Driver<'_, W, I, F>
where
    W: World,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    /// Tools that joined since the last turn (a server that connected
    /// late) join now, each update's notices said, and that the tool block
    /// changed. Before this run's first request there is no cache to
    /// lose: a server that changed its tools while connecting is said
    /// nothing about, and tools that joined are said without the cache.
    pub(super) fn join_waiting(&mut self) {
        let sent = self.state.resumed || self.state.last_context > 0;
        for update in self.fixed.waiting_updates() {
            for notice in &update.notices {
                self.out.notice(NoticeLevel::Warn, notice.clone());
            }
            if !update.unavailable.is_empty() {
                self.fixed.set_unavailable(update.unavailable);
            }
            if let Some(said) = update.commands_changed {
                let commands = self
                    .fixed
                    .expanders
                    .iter()
                    .flat_map(|e| e.commands())
                    .collect();
                self.out.emit(Event::Commands { commands });
                self.out.notice(NoticeLevel::Info, said);
            }
            if update.tools.is_empty() && update.replacing.is_none() {
                continue;
            }
            let names: Vec<String> = update.tools.iter().map(|t| t.name().to_owned()).collect();
            self.fixed.available_again(&names);
            self.fixed.join(update.tools, update.replacing.as_deref());
            let what = match &update.replacing {
                Some(_) if !sent => continue,
                Some(prefix) => format!(
                    "MCP server '{}' changed its tools (now {}: {})",
                    prefix
                        .strip_prefix("mcp__")
                        .unwrap_or(prefix)
                        .trim_end_matches('_'),
                    names.len(),
                    names.join(", ")
                ),
                None => format!("{} tool(s) joined: {}", names.len(), names.join(", ")),
            };
            let text = if sent {
                format!("{what}; the tool block changed, so the prompt cache starts again once")
            } else {
                what
            };
            self.out.notice(NoticeLevel::Info, text);
        }
    }
}
