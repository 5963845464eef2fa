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
//! - [`provider`]: one streaming HTTP call per model call, cancellable.
//!
//! Retries with backoff, the tier router and cassettes wrap this provider.

pub mod provider;
pub mod request;
pub mod sse;
pub mod stream;

pub use provider::AnthropicProvider;
