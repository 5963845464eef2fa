//! The Anthropic Messages provider.
//!
//! Built in layers, each testable on its own bytes:
//! - [`sse`]: server-sent events framing, fed arbitrary chunks;
//! - [`stream`]: Anthropic's stream events (`message_start`,
//!   `content_block_*`, `message_delta`, `ping`, `error`) folded into the
//!   provider-neutral [`cox_protocol::provider::StreamEvent`]s.
//!
//! - [`request`]: the request body, stable bytes first, with the three
//!   prompt-cache breakpoints.
//!
//! The HTTP client joins these in the same crate.

pub mod request;
pub mod sse;
pub mod stream;
