//! The pure core of cox: one session as a state machine.
//!
//! [`session::Session`] takes [`Submission`](cox_protocol::types::Submission)s
//! and emits [`Event`](cox_protocol::types::Event)s. Everything outside
//! (the model, files, shells, the record on disk) is reached through the
//! traits of `cox-protocol`, chosen by the binary at compile time. A turn's
//! phases are types ([`turn`]), so an illegal order does not compile.
//!
//! Invariants this crate keeps (and its tests hold):
//! - the events of one turn come in order, and nothing follows its `TurnDone`;
//! - all tool results of one assistant message go back in one user message,
//!   in the order the model asked for the calls, even when they ran at once;
//! - one cancellation token per turn reaches the provider and every tool;
//! - no filesystem, process or network call is made from this crate.

pub mod context;
pub mod history;
pub mod own_tools;
pub mod permission;
pub mod prompt;
pub mod redact;
pub mod resume;
pub mod sanitize;
pub mod session;
pub mod subagent_ids;
pub mod tool_set;
pub mod turn;
pub mod world;

pub use history::History;
pub use resume::{ResumeError, Resumed, rebuild};
pub use session::{LateSource, LateTools, Session, SessionConfig, SessionEnd};
pub use world::{Adapters, World};
