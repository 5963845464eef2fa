//! The permission engine: whether a tool call runs, asks, or is refused.
//!
//! Rules come in Claude Code's grammar ([`rule`]), in three lists (deny,
//! ask, allow) from layered configs; [`Engine::decide`] applies them in a
//! fixed order, then the session's grants, the call's risk and the approval
//! policy. Shell lines are judged command by command from the split the
//! `bash` tool attaches to the call (`ToolCall::segments`). The same rules
//! answer a running search, path by path, whether it may open what it walks
//! into (`PathRules`, [`CallRules`]).
//!
//! Invariants (each held by tests and property tests):
//! - deny beats everything: adding a deny rule never turns a deny into
//!   anything else;
//! - an allow prefix rule or a grant never allows a shell line with a
//!   command it does not cover, nor an opaque line;
//! - the engine never fails open: what it cannot vouch for asks.

pub mod engine;
mod glob;
pub mod grant;
mod open;
pub mod protected;
pub mod rule;

pub use engine::{CompileError, Engine, Layer, Outcome, SECRET_PATHS};
pub use grant::Grant;
pub use open::CallRules;
pub use rule::{Origin, Rule, RuleError, canonical_host};
