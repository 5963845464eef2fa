//! The `Hook` trait: user programs that may veto or rewrite what happens.
//!
//! Hooks are untrusted and optional: a hook that fails is a warning and an
//! absence, never a failed turn. The core calls them at fixed points.

use serde_json::Value;

use crate::provider::BoxFuture;

/// Where in a turn a hook runs: only the points the core calls. The other
/// lifecycle points (after a tool, at the end of a turn, …) come with the
/// hooks adapter that runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HookPoint {
    /// Before a user's text reaches the model; may block or rewrite it.
    UserPromptSubmit,
    /// Before a tool call runs (after the permission engine allowed it).
    PreToolUse,
}

/// What a hook decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookVerdict {
    Continue,
    /// Stop this prompt or call, with a reason for the person and the model.
    Block {
        reason: String,
    },
    /// Replace the user's prompt (only at `UserPromptSubmit`).
    Rewrite {
        text: String,
    },
    /// The hook itself failed; the core warns and goes on.
    Failed {
        message: String,
    },
}

/// A user program called at fixed points of a turn.
pub trait Hook: Send + Sync {
    fn name(&self) -> &str;
    fn run<'a>(&'a self, point: HookPoint, payload: &'a Value) -> BoxFuture<'a, HookVerdict>;
}
