//! The terminal UI of cox.
//!
//! One more surface over the session: it renders the same `Event` stream as
//! every other surface and turns keys into `Submission`s. It holds no logic
//! of its own beyond display and input:
//! - [`sanitize`]: what a model or a tool wrote is stripped of terminal
//!   escapes and bidi overrides before it reaches the screen;
//! - [`markdown`]: assistant text as styled lines, fenced code included;
//! - [`diff`]: an edit, a write or a patch as coloured diff lines;
//! - [`preview`]: what a write or an edit does to its file, with the
//!   file's own line numbers, or what a patch does, file by file;
//! - [`composer`]: the multi-line prompt editor with history and search;
//! - [`slash`]: slash commands and their completion;
//! - [`transcript`]: the conversation as the events built it;
//! - [`app`]: the whole screen's state, events and keys in, submissions out;
//! - [`view`]: drawing the state (pure: a `Buffer` in tests);
//! - [`run`]: the terminal, the event loop and the session together;
//! - [`trust`]: the question a project's hooks get before they may run;
//! - [`form`]: the form an MCP server asks the person to fill in.
//!
//! Invariants: nothing but [`view`] (and [`trust`]'s one question) draws,
//! nothing but [`run`] and [`trust`] touch the terminal, and [`app`] never awaits: it is a state machine a test can
//! drive key by key.

pub mod agents;
pub mod app;
pub mod composer;
pub mod diff;
pub mod form;
pub mod markdown;
pub mod mentions;
pub mod preview;
pub mod run;
pub use cox_core::sanitize;
pub mod shells;
pub mod slash;
pub mod status_line;
pub mod transcript;
pub mod trust;
pub mod view;
