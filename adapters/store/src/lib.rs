//! The on-disk record of cox, under one home folder (`COX_HOME`).
//!
//! Four things live there: the layout itself ([`CoxHome`]), each session's
//! append-only event log ([`JsonlStore`], read back with [`read_rollout`]),
//! the archive of full tool outputs ([`FileArchive`]), and `cox.db`
//! ([`Db`]), the SQLite database of sessions, the usage ledger and the
//! archive's index. The store cox runs with is [`CoxStore`]: the rollout
//! plus the database, priced from the model catalog, and also the archive
//! (small outputs inline in the index, large ones as files; read back
//! without writing through [`ArchiveReader`], cut into lines with
//! [`line_range`]). The core reaches all of this only through the `Store`
//! and `Archive` traits of `cox-protocol`, so this crate is the only place
//! that knows file names, formats and tables. A session writes it through
//! [`Background`], a writer thread with a bounded queue, so the async
//! runtime never waits on SQLite or the disk.
//!
//! Invariants: nothing already written to a rollout or the archive is ever
//! rewritten; the database is only changed through migrations this build
//! knows, and a file it cannot read is refused, never replaced; every error
//! is one line naming the path (or id) it is about.

mod archive;
pub mod clock;
mod db;
mod home;
mod ledger;
mod lines;
mod rollout;
mod writer;

pub use archive::{ArchiveReader, FileArchive, INLINE_MAX};
pub use db::{
    ArchiveRow, CacheDay, CheckpointRow, Db, DbError, Kept, MemoryRow, ModelTotals, PeriodTotals,
    Presence, Pruned, SCHEMA_VERSION, SessionRow, TierJobTotals, Totals, TrustedExtension,
    TrustedTool, UsageRow, project_slug,
};
pub use home::{CoxHome, HomeError};
pub use ledger::CoxStore;
pub use lines::{LineRange, LineRangeError, line_count, line_range};
pub use rollout::{JsonlStore, Rollout, RolloutError, fork_rollout, read_rollout};
pub use writer::{Background, QUEUE};
