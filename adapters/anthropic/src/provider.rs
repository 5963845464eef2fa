//! The provider itself: one streaming `POST /v1/messages` per model call.
//!
//! The stream is built from owned state, so it outlives the provider
//! reference, and it ends promptly (without `Done`) when the turn's
//! cancellation token fires. A response that is not a 2xx is read whole and
//! turned into one error line naming the status and Anthropic's message.
//!
//! Faults before anything was streamed are tried again: a connection that
//! cannot be made, 429, 5xx and 529. The wait doubles from
//! [`RetryPolicy::base_delay_ms`] with ±20 % jitter, or is what the server's
//! `retry-after` asks (capped at a minute); each wait is announced as a
//! `StreamEvent::Retrying`, which the session shows as a notice. A stream
//! that breaks after it started is not retried (its deltas were shown);
//! after the last attempt the error says how many there were.

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

/// How often and how patiently a call is tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The first wait; each next one doubles.
    pub base_delay_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay_ms: 1_000,
        }
    }
}

/// Anthropic Messages over HTTPS (or plain HTTP on loopback, for tests and
/// local gateways).
#[derive(Clone, Debug)]
pub struct AnthropicProvider {
    client: reqwest::Client,
    base_url: String,
    api_key: String,
    model: String,
    retry: RetryPolicy,
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
            retry: RetryPolicy::default(),
        })
    }

    /// The same provider with another retry policy.
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }
}

/// Where the stream is.
enum State {
    Start {
        request: reqwest::RequestBuilder,
        cancel: CancelToken,
        retry: RetryPolicy,
        attempt: u32,
    },
    /// Between two attempts.
    Waiting {
        delay_ms: u64,
        next: Box<State>,
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
        let start = State::Start {
            request: http,
            cancel,
            retry: self.retry,
            attempt: 1,
        };
        futures::stream::unfold(start, step)
    }
}

async fn step(state: State) -> Option<(Item, State)> {
    let mut reading = match state {
        State::Finished => return None,
        State::Start {
            request,
            cancel,
            retry,
            attempt,
        } => {
            let again = request.try_clone();
            let response = tokio::select! {
                () = cancel.cancelled() => return None,
                response = request.send() => response,
            };
            let opened = tokio::select! {
                () = cancel.cancelled() => return None,
                opened = open(response) => opened,
            };
            match opened {
                Ok(bytes) => Box::new(Reading {
                    bytes,
                    sse: SseDecoder::new(),
                    message: MessageStream::new(),
                    ready: VecDeque::new(),
                    cancel,
                }),
                Err(ProviderError::Retryable {
                    message,
                    retry_after_ms,
                }) => {
                    let Some(request) = again.filter(|_| attempt < retry.max_attempts) else {
                        let tried = if attempt > 1 {
                            format!(" (after {attempt} attempts)")
                        } else {
                            String::new()
                        };
                        let err = ProviderError::Failed(format!("{message}{tried}"));
                        return Some((Err(err), State::Finished));
                    };
                    let delay_ms = retry_after_ms.map_or_else(
                        || backoff(retry.base_delay_ms, attempt),
                        |ms| ms.min(60_000),
                    );
                    let notice = StreamEvent::Retrying {
                        attempt: attempt + 1,
                        of: retry.max_attempts,
                        delay_ms,
                        reason: message,
                    };
                    let next = State::Start {
                        request,
                        cancel,
                        retry,
                        attempt: attempt + 1,
                    };
                    return Some((
                        Ok(notice),
                        State::Waiting {
                            delay_ms,
                            next: Box::new(next),
                        },
                    ));
                }
                Err(err) => return Some((Err(err), State::Finished)),
            }
        }
        State::Waiting { delay_ms, next } => {
            let State::Start { cancel, .. } = &*next else {
                return None;
            };
            let sleep = tokio::time::sleep(std::time::Duration::from_millis(delay_ms));
            tokio::select! {
                () = cancel.cancelled() => return None,
                () = sleep => {}
            }
            return Box::pin(step(*next)).await;
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
    let response = response.map_err(|e| ProviderError::Retryable {
        message: format!("anthropic: cannot reach the API: {e}"),
        retry_after_ms: None,
    })?;
    let status = response.status();
    if status.is_success() {
        return Ok(response.bytes_stream().boxed());
    }
    let retry_after_ms = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|secs| secs.is_finite() && *secs >= 0.0)
        .map(|secs| (secs * 1000.0) as u64);
    let retryable = status.as_u16() == 429 || status.is_server_error();
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
    let err = match parsed {
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
    };
    Err(match err {
        ProviderError::Failed(message) if retryable => ProviderError::Retryable {
            message,
            retry_after_ms,
        },
        other => other,
    })
}

/// The wait before the attempt after `attempt`: doubling from `base`, ±20 %.
fn backoff(base: u64, attempt: u32) -> u64 {
    let nominal = base
        .saturating_mul(1 << attempt.saturating_sub(1).min(16))
        .min(30_000);
    // A cheap spread from the clock, enough to keep clients out of step.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()));
    let permille = (nanos % 401) as i64 - 200;
    let nominal = i64::try_from(nominal).unwrap_or(i64::MAX);
    u64::try_from(nominal + nominal * permille / 1000).unwrap_or(0)
}
