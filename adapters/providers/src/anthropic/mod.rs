//! Anthropic Messages: one streaming `POST /v1/messages` per model call.
//!
//! - [`request`]: the body, stable bytes first, with the three prompt-cache
//!   breakpoints;
//! - [`stream`]: Anthropic's stream events folded into provider-neutral
//!   ones.
//!
//! The HTTP call, its retries and its error lines are [`crate::http`]'s.

pub mod request;
pub mod stream;

use cox_protocol::provider::{ProviderError, Request, StreamEvent};
use cox_protocol::{CancelToken, Provider};
use futures::Stream;

use crate::http::{self, Client, Dialect, RetryPolicy};
use stream::MessageStream;

/// The API version header cox speaks.
pub const API_VERSION: &str = "2023-06-01";

/// The default endpoint.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// How Anthropic is named in error lines, and how its error bodies read.
pub static DIALECT: Dialect = Dialect {
    name: "anthropic",
    key_var: "ANTHROPIC_API_KEY",
    base_var: "ANTHROPIC_BASE_URL",
    error_body,
};

/// `{"type":"error","error":{"type":…,"message":…}}` → the message, and
/// whether it says the prompt is over the window.
fn error_body(text: &str) -> Option<(String, bool)> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let error = &value["error"];
    let kind = error["type"].as_str()?;
    let message = crate::fault::one_line(error["message"].as_str()?);
    let too_long = stream::is_context_length(kind, &message);
    if !crate::fault::present(kind) {
        return Some((message, too_long));
    }
    Some((format!("{kind}: {message}"), too_long))
}

/// Anthropic Messages over HTTPS (or plain HTTP on loopback, for tests and
/// local gateways).
#[derive(Clone, Debug)]
pub struct AnthropicProvider {
    client: Client,
    base_url: String,
    api_key: String,
    model: String,
    retry: RetryPolicy,
    /// Offer the server's web search with the tools.
    web_search: bool,
}

impl AnthropicProvider {
    /// A provider for `model` at `base_url` (no trailing `/v1`).
    ///
    /// For an `https://` URL the TLS roots load in the background (see
    /// [`crate::http`]); an `http://` one reads none.
    ///
    /// # Errors
    /// The HTTP client cannot be built.
    pub fn new(base_url: &str, api_key: &str, model: &str) -> Result<Self, ProviderError> {
        Ok(Self {
            client: Client::for_base_url("anthropic", base_url)?,
            base_url: base_url.trim_end_matches('/').to_owned(),
            api_key: api_key.to_owned(),
            model: model.to_owned(),
            retry: RetryPolicy::default(),
            web_search: false,
        })
    }

    /// The same provider with another retry policy.
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The same provider offering the server's web search (`web_search`
    /// server tool) in every request that offers tools.
    #[must_use]
    pub fn with_web_search(mut self, on: bool) -> Self {
        self.web_search = on;
        self
    }
}

impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn stream(
        &self,
        request: Request,
        cancel: CancelToken,
    ) -> impl Stream<Item = Result<StreamEvent, ProviderError>> + Send + 'static {
        let url = format!("{}/v1/messages", self.base_url);
        let post = self
            .client
            .post(url)
            .secret_header("x-api-key", &self.api_key)
            .header("anthropic-version", API_VERSION)
            .header("accept", "text/event-stream")
            .header("content-type", "application/json")
            .body(if self.web_search {
                request::body_bytes_searching(&request)
            } else {
                request::body_bytes(&request)
            });
        http::stream::<MessageStream>(post, cancel, self.retry, &DIALECT)
    }
}
