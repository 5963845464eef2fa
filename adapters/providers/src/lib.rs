//! The model providers of cox, behind the `Provider` trait.
//!
//! Built in layers, each testable on its own bytes:
//! - [`sse`]: server-sent events framing, fed arbitrary chunks;
//! - [`http`]: the streaming call every wire format shares (status checks,
//!   idle timeout, retries with backoff, one-line errors);
//! - [`anthropic`] and [`openai`]: a wire format each (request body, stream
//!   events folded into provider-neutral ones);
//! - [`fault`]: reading a provider's error the same way for every format
//!   (transient or not, one line);
//! - [`catalog`]: the shipped model rows (window, output limit, prices,
//!   efforts);
//! - [`router`]: the tier router, itself a `Provider`;
//! - [`cassette`]: recording a session's provider exchanges as a scenario
//!   the scripted provider replays.

pub mod anthropic;
pub mod cassette;
pub mod catalog;
pub mod fault;
pub mod http;
pub mod openai;
pub mod router;
pub mod sse;

pub use anthropic::AnthropicProvider;
pub use http::RetryPolicy;
pub use openai::OpenAiProvider;
pub use router::Router;
