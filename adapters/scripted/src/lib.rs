//! A model that replays a TOML scenario, for tests and demos without a network.
//!
//! Every feature of the core is meant to be testable against a script: a
//! [`Scenario`] lists what the model says on each call (text, thinking, tool
//! calls, a stop reason, usage, or a failure) and what it expects the request
//! it answers to contain. [`ScriptedProvider`] plays it back through the same
//! [`cox_protocol::Provider`] trait real models use, so the core cannot tell
//! the difference.
//!
//! The format, with every key (all optional except at least one `[[turn]]`):
//!
//! ```toml
//! model = "scripted-model"          # default "scripted"
//! [[turn]]                          # one response = one provider call
//! text = "Created hello.txt."
//! thinking = "..."
//! chunk_chars = 8                   # delta size; default: a word + its whitespace
//! delay_ms = 0                      # sleep before each streamed event
//! stop = "max_tokens"               # default: tool_use with tool calls, else end_turn
//! usage = { input_tokens = 10, output_tokens = 5 }
//! # error = "overloaded"            # fail the call with this text instead
//! [[turn.tool_call]]
//! name = "write"
//! input = { path = "hello.txt", content = "hi\n" }
//! id = "toolu_1"                    # default "toolu_<turn>_<n>", both 1-based
//! cut = true                        # cut off by the output limit: streamed as
//!                                   # cut, never run; needs stop = "max_tokens"
//! [turn.expect]                     # checked before anything streams
//! tool_result_contains = "wrote 3 bytes"  # in the last message's tool results
//! user_text_contains = "hello"      # in the last user message that has text
//! tool_result_ok = true             # the last message has tool results, none
//!                                   # (or, for false, all) of them errors
//! tools_include = ["read", "write"] # offered in the request's tools
//! [[agent]]                         # a subagent's model, for the agent
//! description = "survey"            # call with this description
//! [[agent.turn]]                    # its responses, as [[turn]]
//! text = "Two modules."
//! ```
//!
//! Usage a turn leaves out is estimated (see [`ScriptedProvider`]).
//!
//! [`ScenarioFile`] is that format as a type, read and written: the parser
//! deserialises it, and cassettes (`cox_providers::cassette`) build one and
//! serialise it, so a recorded session is a scenario by construction.
//!
//! Invariants: parsing refuses unknown keys and reports every error on one
//! line naming the file, line and column; replaying consumes one turn per
//! call and never invents a response the scenario does not script.

mod expect;
mod provider;
mod scenario;

pub use expect::Expect;
pub use provider::ScriptedProvider;
pub use scenario::{
    AgentScript, DEFAULT_MODEL, Scenario, ScenarioError, ScenarioFile, ToolCallSpec, Turn,
    UsageSpec,
};
