//! One module per subcommand of `cox`.
//!
//! Each holds its clap arguments (`…Args`, flattened into the binary's
//! command enum) and a `run` that does the command and returns its exit
//! code, printing an error as one line. `run` is the exception: its flags
//! are the session flags of [`crate::args::RunArgs`], also taken before
//! the subcommand, and [`run::execute`] takes the binary's provider
//! builder. `cox record` is the binary's own: it re-parses the command
//! after `--` as `run` with `--record`.
//!
//! The commands that only read the record (`sessions`, `stats`, `expand`)
//! open it with `crate::report` and never create `COX_HOME`.

pub mod checkpoints;
pub mod config;
pub mod doctor;
pub mod expand;
pub mod ext;
pub mod mcp;
pub mod permissions;
pub mod rewind;
pub mod run;
pub mod sandbox;
pub mod sessions;
pub mod stats;
