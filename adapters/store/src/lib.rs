//! The on-disk record of cox, under one home folder (`COX_HOME`).
//!
//! Three things live there: the layout itself ([`CoxHome`]), each session's
//! append-only event log ([`JsonlStore`], read back with [`read_rollout`]),
//! and the archive of full tool outputs ([`FileArchive`]). The core reaches
//! them only through the `Store` and `Archive` traits of `cox-protocol`, so
//! this crate is the only place that knows file names and formats.
//!
//! Invariants: nothing already written is ever rewritten; every error is one
//! line naming the path (or id) it is about.

mod archive;
mod home;
mod rollout;

pub use archive::FileArchive;
pub use home::{CoxHome, HomeError};
pub use rollout::{JsonlStore, Rollout, RolloutError, read_rollout};
