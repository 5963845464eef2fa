//! The streaming HTTP call every wire format shares: send, check, decode
//! server-sent events, retry.
//!
//! A [`Wire`] knows one provider's event format; a [`Dialect`] names the
//! provider and the variables a user sets for it, so every failure is one
//! line that says what to fix. The stream is built from owned state, so it
//! outlives the provider reference, and it ends promptly (without `Done`)
//! when the turn's cancellation token fires.
//!
//! Faults that are worth another try: a connection that cannot be made,
//! 429, 5xx and 529; and, once the response has begun, a body that breaks,
//! ends before the response is complete, goes silent for longer than
//! [`RetryPolicy::idle_timeout_ms`], or stops being the wire format, and an
//! in-stream error the provider marks as transient (overloaded). The wait
//! doubles from [`RetryPolicy::base_delay_ms`] with ±20 % jitter, or is what
//! the server's `retry-after` asks (capped at a minute). Each wait is a
//! `StreamEvent::Retrying`; when the broken attempt had already streamed part
//! of an answer it says `discarded`, and the session voids that part. After
//! the last attempt the error says how many there were. Tokens a broken
//! attempt had already reported are sent as `Usage` (after the retry
//! notice, or before the final error), so every call made is booked.
//!
//! Faults that are not: 401/403 (the key), 404 (the model or the URL), any
//! other 4xx, and a 2xx that is not an event stream (the URL points at
//! something else). Each is one line naming the provider, the status and
//! the variable or flag to check.
//!
//! The client is picked by the base URL ([`Client::for_base_url`]). An
//! `http://` URL (a local server, a gateway on loopback) gets a client that
//! trusts no certificate authority at all, so the system's roots are never
//! read; it cannot open an `https://` connection, and a redirect to one is
//! refused in one line. An `https://` URL gets the one TLS client of the
//! process, verifying certificates against the platform's roots: they are
//! loaded once, on a thread of their own started when the provider is
//! made, so that the work overlaps the assembly of the session; the first
//! request waits for it only if it is not done yet.

use std::collections::VecDeque;
use std::sync::{Once, OnceLock};
use std::time::Duration;

use cox_protocol::CancelToken;
use cox_protocol::provider::{ProviderError, StreamEvent};
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};

use crate::sse::{SseDecoder, SseEvent};

/// How often and how patiently a call is tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The first wait; each next one doubles.
    pub base_delay_ms: u64,
    /// A response that sends nothing for this long is given up on (and
    /// tried again). Anthropic pings every few seconds; a local server
    /// computing a long prompt may be silent for a while before its first
    /// token, hence the generous default.
    pub idle_timeout_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay_ms: 1_000,
            idle_timeout_ms: 300_000,
        }
    }
}

/// One provider's stream format: SSE events in, provider-neutral events out.
/// A fresh value decodes each attempt.
pub trait Wire: Default + Send + 'static {
    /// Folds one event in; returns what it became.
    ///
    /// # Errors
    /// An in-stream error event, or data that is not the format. A
    /// transient in-stream error is [`ProviderError::Retryable`].
    fn push(&mut self, event: &SseEvent) -> Result<Vec<StreamEvent>, ProviderError>;

    /// Whether the response is complete.
    fn is_done(&self) -> bool;

    /// The body ended. A format whose end marker is optional completes the
    /// response here; otherwise the response was cut.
    ///
    /// # Errors
    /// The response was not complete.
    fn end(&mut self) -> Result<Vec<StreamEvent>, ProviderError>;

    /// Tokens the response reported before it broke, not yet sent as a
    /// `Usage` event (Anthropic's `message_start` counts the prompt before
    /// any text streams). A failed attempt's usage is booked too.
    fn unreported_usage(&self) -> Option<cox_protocol::types::Usage> {
        None
    }
}

/// Who is being talked to, for error lines and for classifying a failed
/// response.
#[derive(Debug)]
pub struct Dialect {
    /// `anthropic`, `openai`.
    pub name: &'static str,
    /// The variable that holds the key.
    pub key_var: &'static str,
    /// The variable that holds the base URL.
    pub base_var: &'static str,
    /// The provider's message for a failed response's body, and whether it
    /// says the prompt was too long: `(message, context_length)`.
    pub error_body: fn(&str) -> Option<(String, bool)>,
}

type Item = Result<StreamEvent, ProviderError>;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The redirects a plain-HTTP client follows at most.
const MAX_REDIRECTS: usize = 10;

/// The HTTP client of one provider.
#[derive(Clone, Debug)]
pub struct Client {
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    /// Plain HTTP only: no root certificates, so none are read.
    Plain(reqwest::Client),
    /// The process's TLS client ([`tls_client`]), built on first need.
    Tls,
}

/// The process's TLS client, or why it could not be built.
static TLS: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();

/// Whether the background load of the TLS client has been started.
static TLS_STARTED: Once = Once::new();

/// The TLS client, built here if no one has yet (waiting for the thread
/// that is building it, if one is).
fn tls_client() -> &'static Result<reqwest::Client, String> {
    TLS.get_or_init(|| {
        reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|e| reqwest_cause(&e))
    })
}

/// Whether a client for `base_url` may need to verify a certificate: the
/// URL is `https://`, or a proxy that plain-HTTP requests go through is.
fn needs_roots(base_url: &str, proxy_var: impl Fn(&str) -> Option<String>) -> bool {
    let https = |url: &str| {
        url.trim()
            .get(..8)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
    };
    https(base_url)
        || ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]
            .iter()
            .filter_map(|name| proxy_var(name))
            .any(|proxy| https(&proxy))
}

impl Client {
    /// The client for a provider at `base_url`. For `https://` this starts
    /// loading the platform's root certificates on a background thread
    /// (once per process) and returns at once; for `http://` it builds a
    /// client that holds no roots.
    ///
    /// # Errors
    /// The plain-HTTP client cannot be built.
    pub fn for_base_url(name: &str, base_url: &str) -> Result<Client, ProviderError> {
        if needs_roots(base_url, |name| std::env::var(name).ok()) {
            TLS_STARTED.call_once(|| {
                // If no thread can be started, the first request builds it.
                let _ = std::thread::Builder::new()
                    .name("cox-tls-roots".into())
                    .spawn(|| {
                        let _ = tls_client();
                    });
            });
            return Ok(Client { kind: Kind::Tls });
        }
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            if attempt.url().scheme() != "http" {
                let to = attempt.url().to_string();
                attempt.error(format!(
                    "the server redirected to {to}; set the base URL to the address it names"
                ))
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else {
                attempt.follow()
            }
        });
        reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            // No roots: an `https://` peer can never be trusted by this client.
            .tls_certs_only(std::iter::empty())
            .redirect(redirects)
            .build()
            .map(|client| Client {
                kind: Kind::Plain(client),
            })
            .map_err(|e| ProviderError::Client {
                provider: name.to_owned(),
                source: std::sync::Arc::new(e),
            })
    }

    /// Whether this client speaks TLS (the base URL is `https://`).
    #[must_use]
    pub fn is_tls(&self) -> bool {
        matches!(self.kind, Kind::Tls)
    }

    /// A `POST` to `url`, to be given headers and a body.
    #[must_use]
    pub fn post(&self, url: String) -> Post {
        Post {
            client: self.clone(),
            url,
            headers: reqwest::header::HeaderMap::new(),
            body: Vec::new(),
            invalid: None,
        }
    }

    /// The reqwest client, once there is one.
    async fn ready(&self, dialect: &Dialect) -> Result<reqwest::Client, ProviderError> {
        let built = match &self.kind {
            Kind::Plain(client) => return Ok(client.clone()),
            Kind::Tls => match TLS.get() {
                Some(built) => built.clone(),
                // Still loading: wait off the runtime's thread.
                None => tokio::task::spawn_blocking(|| tls_client().clone())
                    .await
                    .unwrap_or_else(|e| Err(e.to_string())),
            },
        };
        built.map_err(|cause| {
            ProviderError::Failed(format!(
                "{}: cannot build the HTTPS client: {cause} (the system's root certificates, \
                 or SSL_CERT_FILE / SSL_CERT_DIR when set)",
                dialect.name
            ))
        })
    }
}

/// One request as a provider builds it.
#[derive(Debug)]
pub struct Post {
    client: Client,
    url: String,
    headers: reqwest::header::HeaderMap,
    body: Vec<u8>,
    /// The first header that could not be a header value.
    invalid: Option<&'static str>,
}

impl Post {
    /// Adds a header.
    #[must_use]
    pub fn header(self, name: &'static str, value: &str) -> Self {
        self.add(name, value, false)
    }

    /// Adds a header that holds a secret (kept out of debug output).
    #[must_use]
    pub fn secret_header(self, name: &'static str, value: &str) -> Self {
        self.add(name, value, true)
    }

    fn add(mut self, name: &'static str, value: &str, secret: bool) -> Self {
        match reqwest::header::HeaderValue::from_str(value) {
            Ok(mut value) => {
                value.set_sensitive(secret);
                self.headers.insert(name, value);
            }
            Err(_) => {
                self.invalid.get_or_insert(name);
            }
        }
        self
    }

    /// Sets the body.
    #[must_use]
    pub fn body(mut self, body: Vec<u8>) -> Self {
        self.body = body;
        self
    }

    /// The URL it goes to.
    #[must_use]
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The request, or the one line saying why there is none.
    fn build(self, dialect: &Dialect) -> Result<(Client, reqwest::Request, String), ProviderError> {
        let name = dialect.name;
        if let Some(header) = self.invalid {
            // The value is not repeated: it may be a key.
            return Err(ProviderError::Failed(format!(
                "{name}: the {header} header cannot be sent (a line break or another control \
                 character in it?); check {}",
                dialect.key_var
            )));
        }
        let url = reqwest::Url::parse(&self.url).map_err(|e| {
            ProviderError::Failed(format!(
                "{name}: {} is not a URL ({e}); check {}",
                self.url, dialect.base_var
            ))
        })?;
        let mut request = reqwest::Request::new(reqwest::Method::POST, url);
        *request.headers_mut() = self.headers;
        *request.body_mut() = Some(self.body.into());
        Ok((self.client, request, self.url))
    }
}

/// Where the stream is.
enum State<W> {
    /// The request could not even be built.
    Broken(ProviderError),
    Start(Box<Attempt>),
    /// Between two attempts.
    Waiting {
        delay_ms: u64,
        next: Box<Attempt>,
    },
    Reading(Box<Reading<W>>),
    /// The usage of an attempt that broke has gone out; this comes next.
    Then(Box<(Item, State<W>)>),
    Finished,
}

/// What every attempt needs.
struct Attempt {
    client: Client,
    request: reqwest::Request,
    url: String,
    cancel: CancelToken,
    retry: RetryPolicy,
    dialect: &'static Dialect,
    attempt: u32,
}

struct Reading<W> {
    bytes: BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    sse: SseDecoder,
    wire: W,
    ready: VecDeque<StreamEvent>,
    /// Part of an answer went out: a retry must say it is discarded.
    streamed: bool,
    /// What is needed to try again; `None` once cloning failed.
    again: Option<Attempt>,
    cancel: CancelToken,
    idle: Duration,
    dialect: &'static Dialect,
    attempt: u32,
}

/// Streams one response of wire format `W` for `post`, the whole HTTP
/// request (URL, headers, body).
pub fn stream<W: Wire>(
    post: Post,
    cancel: CancelToken,
    retry: RetryPolicy,
    dialect: &'static Dialect,
) -> impl Stream<Item = Item> + Send + 'static {
    let start = match post.build(dialect) {
        Ok((client, request, url)) => State::<W>::Start(Box::new(Attempt {
            client,
            request,
            url,
            cancel,
            retry,
            dialect,
            attempt: 1,
        })),
        Err(err) => State::Broken(err),
    };
    futures::stream::unfold(start, step::<W>)
}

async fn step<W: Wire>(state: State<W>) -> Option<(Item, State<W>)> {
    let mut reading = match state {
        State::Finished => return None,
        State::Broken(err) => return Some((Err(err), State::Finished)),
        State::Then(next) => return Some(*next),
        State::Waiting { delay_ms, next } => {
            let sleep = tokio::time::sleep(Duration::from_millis(delay_ms));
            tokio::select! {
                () = next.cancel.cancelled() => return None,
                () = sleep => {}
            }
            return Box::pin(step(State::Start(next))).await;
        }
        State::Start(attempt) => {
            let again = attempt.clone_for_retry();
            let Attempt {
                client,
                request,
                url,
                cancel,
                retry,
                dialect,
                attempt,
            } = *attempt;
            let opened = tokio::select! {
                () = cancel.cancelled() => return None,
                opened = open(&client, request, &url, dialect) => opened,
            };
            match opened {
                Ok(bytes) => Box::new(Reading {
                    bytes,
                    sse: SseDecoder::new(),
                    wire: W::default(),
                    ready: VecDeque::new(),
                    streamed: false,
                    again,
                    cancel,
                    idle: Duration::from_millis(retry.idle_timeout_ms),
                    dialect,
                    attempt,
                }),
                Err(err) => return Some(fail(err, again, false, attempt)),
            }
        }
        State::Reading(reading) => reading,
    };
    loop {
        if let Some(event) = reading.ready.pop_front() {
            if matches!(
                event,
                StreamEvent::TextDelta(_)
                    | StreamEvent::ThinkingDelta(_)
                    | StreamEvent::ToolUse { .. }
                    | StreamEvent::ToolUseCut { .. }
            ) {
                reading.streamed = true;
            }
            return Some((Ok(event), State::Reading(reading)));
        }
        if reading.wire.is_done() {
            return None;
        }
        let name = reading.dialect.name;
        let chunk = tokio::select! {
            () = reading.cancel.cancelled() => return None,
            chunk = tokio::time::timeout(reading.idle, reading.bytes.next()) => chunk,
        };
        let broken = match chunk {
            Ok(Some(Ok(bytes))) => {
                let mut broken = None;
                for event in reading.sse.push(&bytes) {
                    match reading.wire.push(&event) {
                        Ok(events) => reading.ready.extend(events),
                        Err(err) => {
                            broken = Some(err);
                            break;
                        }
                    }
                }
                match broken {
                    None => continue,
                    Some(err) => err,
                }
            }
            Ok(Some(Err(err))) => ProviderError::Retryable {
                message: format!("{name}: the stream broke: {}", reqwest_cause(&err)),
                retry_after_ms: None,
            },
            Ok(None) => match reading.wire.end() {
                Ok(events) => {
                    reading.ready.extend(events);
                    if reading.ready.is_empty() && !reading.wire.is_done() {
                        ProviderError::Retryable {
                            message: format!("{name}: the stream ended before the response did"),
                            retry_after_ms: None,
                        }
                    } else {
                        continue;
                    }
                }
                Err(err) => err,
            },
            Err(_) => ProviderError::Retryable {
                message: format!(
                    "{name}: the stream sent nothing for {} s",
                    reading.idle.as_secs_f64()
                ),
                retry_after_ms: None,
            },
        };
        let again = reading.again.take();
        let failed = fail(broken, again, reading.streamed, reading.attempt);
        let Some(usage) = reading.wire.unreported_usage() else {
            return Some(failed);
        };
        // Booked either way. After a retry notice, so a reader rebuilding
        // the history has already voided the broken part; before a final
        // error, which ends the stream.
        let usage = Ok(StreamEvent::Usage(usage));
        return Some(match failed {
            (Ok(retry), next) => (Ok(retry), State::Then(Box::new((usage, next)))),
            (Err(err), next) => (usage, State::Then(Box::new((Err(err), next)))),
        });
    }
}

impl Attempt {
    fn clone_for_retry(&self) -> Option<Attempt> {
        if self.attempt >= self.retry.max_attempts {
            return None;
        }
        Some(Attempt {
            client: self.client.clone(),
            request: self.request.try_clone()?,
            url: self.url.clone(),
            cancel: self.cancel.clone(),
            retry: self.retry,
            dialect: self.dialect,
            attempt: self.attempt + 1,
        })
    }
}

/// A failed attempt: try again when the error allows and attempts are
/// left, else end the stream with the error.
fn fail<W>(
    err: ProviderError,
    again: Option<Attempt>,
    streamed: bool,
    attempt: u32,
) -> (Item, State<W>) {
    match (err, again) {
        (
            ProviderError::Retryable {
                message,
                retry_after_ms,
            },
            Some(next),
        ) => {
            let delay_ms = retry_after_ms.map_or_else(
                || backoff(next.retry.base_delay_ms, next.attempt - 1),
                |ms| ms.min(60_000),
            );
            let notice = StreamEvent::Retrying {
                attempt: next.attempt,
                of: next.retry.max_attempts,
                delay_ms,
                reason: message,
                discarded: streamed,
            };
            (
                Ok(notice),
                State::Waiting {
                    delay_ms,
                    next: Box::new(next),
                },
            )
        }
        (ProviderError::Retryable { message, .. }, None) => {
            let tried = if attempt > 1 {
                format!(" (after {attempt} attempts)")
            } else {
                String::new()
            };
            let err = ProviderError::Failed(format!("{message}{tried}"));
            (Err(err), State::Finished)
        }
        (err, _) => (Err(err), State::Finished),
    }
}

/// Sends the request and checks the answer's status and type; a failure
/// becomes one line naming it.
async fn open(
    client: &Client,
    request: reqwest::Request,
    url: &str,
    dialect: &'static Dialect,
) -> Result<BoxStream<'static, reqwest::Result<bytes::Bytes>>, ProviderError> {
    let name = dialect.name;
    let client = client.ready(dialect).await?;
    let response = client.execute(request).await.map_err(|e| {
        if e.is_redirect() {
            return ProviderError::Failed(format!(
                "{name}: the request to {url} failed: {}",
                reqwest_cause(&e)
            ));
        }
        let message = if e.is_connect() {
            format!(
                "{name}: cannot reach {url}: {}; check {}",
                reqwest_cause(&e),
                dialect.base_var
            )
        } else {
            format!("{name}: the request to {url} failed: {}", reqwest_cause(&e))
        };
        ProviderError::Retryable {
            message,
            retry_after_ms: None,
        }
    })?;
    let status = response.status();
    if status.is_success() {
        let kind = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("text/event-stream")
            .to_owned();
        if !kind.contains("event-stream") {
            return Err(ProviderError::Failed(format!(
                "{name}: {url} answered with {kind}, not an event stream; check {} points at \
                 the API",
                dialect.base_var
            )));
        }
        return Ok(response.bytes_stream().boxed());
    }
    let code = status.as_u16();
    let retry_after_ms = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|secs| secs.is_finite() && *secs >= 0.0)
        .map(|secs| (secs * 1000.0) as u64);
    let text = response.text().await.unwrap_or_default();
    let (message, too_long) = (dialect.error_body)(&text).unwrap_or_else(|| {
        let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut text: String = text.chars().take(200).collect();
        if text.is_empty() {
            text = status.canonical_reason().unwrap_or("no message").to_owned();
        }
        (text, false)
    });
    // A gateway's body often repeats the status as its code.
    let message = message
        .strip_prefix(&format!("{code}: "))
        .map_or(message.clone(), str::to_owned);
    if too_long {
        return Err(ProviderError::ContextLength(format!(
            "{name}: {message} (HTTP {code})"
        )));
    }
    let hint = match code {
        401 | 403 => format!("; check {}", dialect.key_var),
        404 => format!(
            "; check the model name (--model, [tiers]) and {}",
            dialect.base_var
        ),
        _ => String::new(),
    };
    let line = format!("{name}: {message} (HTTP {code}){hint}");
    if code == 429 || status.is_server_error() {
        Err(ProviderError::Retryable {
            message: line,
            retry_after_ms,
        })
    } else {
        Err(ProviderError::Failed(line))
    }
}

/// The innermost cause of a reqwest error: "connection refused", not the
/// three layers of context around it.
fn reqwest_cause(err: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = err;
    while let Some(next) = source.source() {
        source = next;
    }
    let text = source.to_string();
    if err.is_timeout() {
        format!("timed out ({text})")
    } else {
        text
    }
}

/// The wait before attempt `after + 1`: doubling from `base`, ±20 %.
fn backoff(base: u64, after: u32) -> u64 {
    let nominal = base
        .saturating_mul(1 << after.saturating_sub(1).min(16))
        .min(30_000);
    // A cheap spread from the clock, enough to keep clients out of step.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()));
    let permille = (nanos % 401) as i64 - 200;
    let nominal = i64::try_from(nominal).unwrap_or(i64::MAX);
    u64::try_from(nominal + nominal * permille / 1000).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_an_https_proxy_needs_roots() {
        let none = |_: &str| None;
        assert!(!needs_roots("http://127.0.0.1:8080", none));
        assert!(needs_roots("https://api.anthropic.com", none));
        assert!(needs_roots(" HTTPS://api.anthropic.com", none));
        let https_proxy = |name: &str| (name == "HTTP_PROXY").then(|| "https://proxy:3128".into());
        assert!(needs_roots("http://127.0.0.1:8080", https_proxy));
        let plain_proxy = |name: &str| (name == "http_proxy").then(|| "http://proxy:3128".into());
        assert!(!needs_roots("http://127.0.0.1:8080", plain_proxy));
        // HTTPS_PROXY is for https:// targets only.
        let for_https = |name: &str| (name == "HTTPS_PROXY").then(|| "https://proxy:3128".into());
        assert!(!needs_roots("http://127.0.0.1:8080", for_https));
    }

    #[test]
    fn backoff_doubles_within_the_jitter() {
        for after in 1..5u32 {
            let nominal = 1000u64 << (after - 1);
            let wait = backoff(1000, after);
            assert!(
                wait >= nominal * 8 / 10 && wait <= nominal * 12 / 10,
                "{after}: {wait}"
            );
        }
        assert!(backoff(1000, 30) <= 36_000, "capped");
    }
}
