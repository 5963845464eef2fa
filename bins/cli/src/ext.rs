//! Extensions a session picks up besides the config: hooks (and whether a
//! person trusted them), plugins, custom commands and skills — what people
//! bring from Claude Code, read from where Claude Code keeps them and from
//! cox's own places.
//!
//! Everything here is read once, before the session starts, and never
//! fails as a whole: a file that does not load is a warning naming it (and
//! its line) and an absence. What came from a repository or a plugin is
//! untrusted: it informs the model, and what would run code (hooks, MCP
//! servers) waits for a person's trust.

pub mod agent_tool;
pub mod agents;
pub mod commands;
pub mod hooks;
pub mod memory;
pub mod plugins;
pub mod skill_tool;
