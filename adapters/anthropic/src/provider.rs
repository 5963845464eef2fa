//! The provider itself: one streaming `POST /v1/messages` per model call.
//!
//! The stream is built from owned state, so it outlives the provider
//! reference, and it ends promptly (without `Done`) when the turn's
//! cancellation token fires. A response that is not a 2xx is read whole and
//! turned into one error line naming the status and Anthropic's message.
//! Retries and backoff wrap this call (the fault-handling layer), so a
//! single attempt stays simple.

use std::collections::VecDeque;

use cox_protocol::provider::{ProviderError, Request, StreamEvent};
use cox_protocol::{CancelToken, Provider};
use futures::{Stream, StreamExt};

use crate::request::body;
use crate::sse::SseDecoder;
use crate::stream::{MessageStream, classify_error};

/// The API version header cox speaks.
pub const API_VERSION: &str = "2023-06-01";

/// The default endpoint.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// Anthropic Messages over HTTPS (or plain HTTP on loopback, for tests and
/// local gateways).
#[derive(Clone, Debug)]
pub struct AnthropicProvider {
    client: reqwest::Client,
    base_url: String,
    api_key: String,
    model: String,
}

impl AnthropicProvider {
    /// A provider for `model` at `base_url` (no trailing `/v1`).
    ///
    /// # Errors
    /// The HTTP client cannot be built (no TLS roots, for instance).
    pub fn new(base_url: &str, api_key: &str, model: &str) -> Result<Self, ProviderError> {
        let client = reqwest::Client::builder().build().map_err(|e| {
            ProviderError::Failed(format!("anthropic: cannot build the HTTP client: {e}"))
        })?;
        Ok(Self {
            client,
            base_url: base_url.trim_end_matches('/').to_owned(),
            api_key: api_key.to_owned(),
            model: model.to_owned(),
        })
    }
}

/// Where the stream is.
enum State {
    Start {
        request: reqwest::RequestBuilder,
        cancel: CancelToken,
    },
    Reading(Box<Reading>),
    Finished,
}

struct Reading {
    bytes: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    sse: SseDecoder,
    message: MessageStream,
    ready: VecDeque<StreamEvent>,
    cancel: CancelToken,
}

type Item = Result<StreamEvent, ProviderError>;

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
    ) -> impl Stream<Item = Item> + Send + 'static {
        let http = self
            .client
            .post(format!("{}/v1/messages", self.base_url))
            .header("x-api-key", &self.api_key)
            .header("anthropic-version", API_VERSION)
            .header("accept", "text/event-stream")
            .json(&body(&request));
        futures::stream::unfold(
            State::Start {
                request: http,
                cancel,
            },
            step,
        )
    }
}

async fn step(state: State) -> Option<(Item, State)> {
    let mut reading = match state {
        State::Finished => return None,
        State::Start { request, cancel } => {
            let response = tokio::select! {
                () = cancel.cancelled() => return None,
                response = request.send() => response,
            };
            match open(response).await {
                Ok(bytes) => Box::new(Reading {
                    bytes,
                    sse: SseDecoder::new(),
                    message: MessageStream::new(),
                    ready: VecDeque::new(),
                    cancel,
                }),
                Err(err) => return Some((Err(err), State::Finished)),
            }
        }
        State::Reading(reading) => reading,
    };
    loop {
        if let Some(event) = reading.ready.pop_front() {
            return Some((Ok(event), State::Reading(reading)));
        }
        if reading.message.is_done() {
            return None;
        }
        let chunk = tokio::select! {
            () = reading.cancel.cancelled() => return None,
            chunk = reading.bytes.next() => chunk,
        };
        match chunk {
            Some(Ok(bytes)) => {
                for event in reading.sse.push(&bytes) {
                    match reading.message.push(&event) {
                        Ok(events) => reading.ready.extend(events),
                        Err(err) => return Some((Err(err), State::Finished)),
                    }
                }
            }
            Some(Err(err)) => {
                let err = ProviderError::Failed(format!("anthropic: the stream broke: {err}"));
                return Some((Err(err), State::Finished));
            }
            None => {
                let err = ProviderError::Failed(
                    "anthropic: the stream ended before message_stop".to_owned(),
                );
                return Some((Err(err), State::Finished));
            }
        }
    }
}

/// Checks the status; a failure becomes one line naming it.
async fn open(
    response: reqwest::Result<reqwest::Response>,
) -> Result<futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>, ProviderError> {
    let response = response
        .map_err(|e| ProviderError::Failed(format!("anthropic: cannot reach the API: {e}")))?;
    let status = response.status();
    if status.is_success() {
        return Ok(response.bytes_stream().boxed());
    }
    let text = response.text().await.unwrap_or_default();
    let parsed: Option<(String, String)> = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| {
            let error = &v["error"];
            Some((
                error["type"].as_str()?.to_owned(),
                error["message"].as_str()?.to_owned(),
            ))
        });
    Err(match parsed {
        Some((kind, message)) => match classify_error(&kind, &message) {
            ProviderError::Failed(line) => {
                ProviderError::Failed(format!("{line} (HTTP {})", status.as_u16()))
            }
            other => other,
        },
        None => ProviderError::Failed(format!(
            "anthropic: HTTP {}: {}",
            status.as_u16(),
            text.chars().take(200).collect::<String>()
        )),
    })
}
