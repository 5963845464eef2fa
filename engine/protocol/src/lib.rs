//! The vocabulary every part of cox speaks.
//!
//! A [`types::Submission`] goes into the core, a sequence of [`types::Event`]s
//! comes out, and every surface (the TUI, `cox run`, the rollout on disk, the
//! tests) renders that same sequence. This crate holds those two enums, the
//! values they carry, the provider-neutral request the core sends a model, and
//! the traits through which the core reaches the outside world:
//! [`Provider`], [`Tool`], [`Store`], [`Archive`], [`Sandbox`], [`Hooks`] and
//! [`Checkpoints`],
//! with the typed errors they fail with ([`error`] says how those are said
//! and printed).
//!
//! Invariants kept here:
//! - the JSON shape of every enum is `{"type": "snake_case_name", …}` and is
//!   part of the public contract (stream-json and the rollout print it);
//! - nothing in this crate touches the filesystem, a process or the network.

pub mod archive;
pub mod cancel;
pub mod catalog;
pub mod checkpoint;
pub mod config;
pub mod error;
pub mod hook;
pub mod ids;
pub mod mcp;
pub mod memory;
pub mod provider;
pub mod sandbox;
pub mod store;
pub mod telemetry;
pub mod tool;
pub mod types;

pub use archive::Archive;
pub use cancel::CancelToken;
pub use checkpoint::Checkpoints;
pub use hook::Hooks;
pub use ids::{CallId, SessionId};
pub use provider::Provider;
pub use sandbox::Sandbox;
pub use store::Store;
pub use tool::Tool;
