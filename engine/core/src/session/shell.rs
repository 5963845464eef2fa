//! `! command`: the person runs a shell command between turns, and its
//! output joins the conversation with the next prompt.
//!
//! The command is the person's own, so nothing asks: it is decided as a
//! call in `bypassPermissions` with no one to ask, which leaves exactly the
//! deny rules (and a line whose commands cannot be checked against one,
//! which is refused rather than run). It runs through the session's `bash`
//! tool, so the OS sandbox confines it as it confines the model's commands
//! and its output is bounded the same way. An `Interrupt` while it runs
//! kills it. The outcome is one `UserShell` event: the rollout keeps it (a
//! resume folds it back in) and the history holds it until the next prompt.

use cox_protocol::tool::{Nested, OutputSink, ToolContext};
use cox_protocol::types::{
    ApprovalPolicy, Event, NoticeLevel, PermissionMode, Submission, ToolResult,
};
use cox_protocol::{CallId, CancelToken};
use futures::Stream;
use serde_json::json;

use super::{Driver, MidTurn};
use crate::permission::Outcome;
use crate::tool_set::Entry;
use crate::world::World;

impl<W, I, F> Driver<'_, W, I, F>
where
    W: World,
    I: Stream<Item = Submission> + Unpin,
    F: FnMut(&Event),
{
    /// Runs the person's `command` and says how it went.
    pub(super) async fn user_shell(&mut self, command: String) {
        let fixed = self.fixed;
        let tools = fixed.tools();
        let Some(Entry::Tool(bash)) = tools.get("bash") else {
            self.out.notice(
                NoticeLevel::Error,
                "this session has no bash tool: the command was not run".to_owned(),
            );
            return;
        };
        self.state.user_shells += 1;
        let id = CallId(format!("user-shell-{}", self.state.user_shells));
        let input = json!({ "command": command });
        let call = fixed.tools().classify(
            id.clone(),
            "bash".to_owned(),
            input.clone(),
            &fixed.config.workspace,
        );
        let engine =
            std::sync::Arc::clone(self.state.turn_engine.as_ref().unwrap_or(&fixed.engine));
        let outcome = engine.decide(
            &call,
            PermissionMode::BypassPermissions,
            ApprovalPolicy::Never,
            fixed.config.sandbox_mode,
            &[],
        );
        let result = match outcome {
            Outcome::Allow { .. } => {
                let cancel = CancelToken::new();
                let cx = ToolContext {
                    call_id: &id,
                    workspace: &fixed.config.workspace,
                    cancel: cancel.clone(),
                    sandbox: fixed.world.sandbox(),
                    output: OutputSink::discard(id.clone()),
                    rules: std::sync::Arc::clone(&engine) as _,
                    unconfined: false,
                    files: fixed.files.as_deref(),
                    permission_mode: PermissionMode::Default,
                    nested: Nested::none(),
                    decided: &[],
                };
                let mut run = std::pin::pin!(bash.run(input, cx));
                loop {
                    tokio::select! {
                        biased;
                        sub = self.inbox.next_live() => {
                            if let MidTurn::Interrupt = self.mid_turn(sub, None) {
                                cancel.cancel();
                            }
                        }
                        result = &mut run => break result,
                    }
                }
            }
            Outcome::Deny { reason } | Outcome::Ask { reason } => {
                ToolResult::denied(format!("not run: {reason}"))
            }
        };
        self.out.emit(Event::UserShell { command, result });
    }
}

/// What the model reads of a command the person ran: the command, then
/// its output, at most [`SHOWN`] characters of it (its head and tail).
#[must_use]
pub(crate) fn context_text(command: &str, result: &ToolResult) -> String {
    let visible = &result.visible;
    let shown = if visible.chars().count() <= SHOWN {
        visible.clone()
    } else {
        let head: String = visible.chars().take(SHOWN / 2).collect();
        let tail: String = {
            let mut t: Vec<char> = visible.chars().rev().take(SHOWN / 2).collect();
            t.reverse();
            t.into_iter().collect()
        };
        format!("{head}\n[… the middle of the output is not shown …]\n{tail}")
    };
    let how = if result.denied {
        "was refused"
    } else if result.ok {
        "ran"
    } else {
        "failed"
    };
    format!("[the user ran a shell command, which {how}]\n$ {command}\n{shown}")
}

/// The most characters of a command's output the model is shown.
const SHOWN: usize = 20_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_names_the_command_and_bounds_its_output() {
        let text = context_text("ls", &ToolResult::ok("a\nb\n"));
        assert_eq!(
            text,
            "[the user ran a shell command, which ran]\n$ ls\na\nb\n"
        );
        let long = ToolResult::error("x".repeat(50_000));
        let text = context_text("yes x", &long);
        assert!(text.starts_with("[the user ran a shell command, which failed]"));
        assert!(text.contains("the middle of the output is not shown"));
        assert!(text.chars().count() < SHOWN + 200);
        let refused = context_text("rm -rf /", &ToolResult::denied("not run: deny rule"));
        assert!(refused.contains("which was refused"));
    }
}
