//! OpenAI-compatible Chat Completions: OpenAI itself and the local servers
//! that speak its API (llama.cpp, vLLM, Ollama, LM Studio).
//!
//! - [`request`]: the body, stable bytes first, so automatic prefix caching
//!   hits;
//! - [`stream`]: `chat.completion.chunk`s folded into provider-neutral
//!   events.
//!
//! The base URL includes the version (`https://api.openai.com/v1`,
//! `http://localhost:11434/v1`), as `OPENAI_BASE_URL` does for OpenAI's own
//! tools. A key is optional: local servers usually take none, and then no
//! `Authorization` header is sent.

pub mod request;
pub mod stream;

use cox_protocol::provider::{ProviderError, Request, StreamEvent};
use cox_protocol::{CancelToken, Provider};
use futures::Stream;

use crate::http::{self, Client, Dialect, RetryPolicy};
use request::LimitField;
use stream::ChunkStream;

/// The default endpoint.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// How OpenAI-compatible servers are named in error lines.
pub static DIALECT: Dialect = Dialect {
    name: "openai",
    key_var: "OPENAI_API_KEY",
    base_var: "OPENAI_BASE_URL",
    error_body,
};

/// `{"error":{"message":…}}`, or Ollama's `{"error":"…"}`.
fn error_body(text: &str) -> Option<(String, bool)> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let error = value.get("error")?;
    Some(stream::describe(error))
}

/// A Chat Completions endpoint.
#[derive(Clone, Debug)]
pub struct OpenAiProvider {
    client: Client,
    base_url: String,
    api_key: Option<String>,
    model: String,
    retry: RetryPolicy,
    limit: LimitField,
    /// Ask a search model to search the web (`web_search_options`).
    web_search: bool,
}

impl OpenAiProvider {
    /// A provider for `model` at `base_url` (with its `/v1`); `api_key` may
    /// be `None` for a local server.
    ///
    /// # Errors
    /// The HTTP client cannot be built.
    pub fn new(base_url: &str, api_key: Option<&str>, model: &str) -> Result<Self, ProviderError> {
        let base_url = base_url.trim_end_matches('/').to_owned();
        // OpenAI's own API wants `max_completion_tokens`; the servers that
        // imitate it know `max_tokens` (some know only that).
        let limit = if base_url.contains("api.openai.com") {
            LimitField::MaxCompletionTokens
        } else {
            LimitField::MaxTokens
        };
        Ok(Self {
            client: Client::for_base_url("openai", &base_url)?,
            base_url,
            api_key: api_key.map(str::to_owned),
            model: model.to_owned(),
            retry: RetryPolicy::default(),
            limit,
            web_search: false,
        })
    }

    /// The same provider asking its search model to search the web, in
    /// every request that offers tools (a turn's, never a title's).
    #[must_use]
    pub fn with_web_search(mut self, on: bool) -> Self {
        self.web_search = on;
        self
    }

    /// The same provider with another retry policy.
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        "openai"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn stream(
        &self,
        request: Request,
        cancel: CancelToken,
    ) -> impl Stream<Item = Result<StreamEvent, ProviderError>> + Send + 'static {
        let url = format!("{}/chat/completions", self.base_url);
        let mut post = self
            .client
            .post(url)
            .header("accept", "text/event-stream")
            .header("content-type", "application/json")
            .body(if self.web_search {
                request::body_bytes_searching(&request, self.limit)
            } else {
                request::body_bytes(&request, self.limit)
            });
        if let Some(key) = &self.api_key {
            post = post.secret_header("authorization", &format!("Bearer {key}"));
        }
        http::stream::<ChunkStream>(post, cancel, self.retry, &DIALECT)
    }
}
