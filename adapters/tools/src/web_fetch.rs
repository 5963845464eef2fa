//! `web_fetch`: one web page, as text the model reads (HTML as markdown).
//!
//! The call leaves the machine, so it is an `exec` for the permission
//! engine, and its subject is the URL as it will be requested: parsed and
//! written back by the `url` crate (scheme and host lower-cased, a host in
//! punycode, an IPv4 address in any of its spellings written dotted,
//! `\` read as `/`, userinfo kept apart by its `@`), a trailing dot of the
//! host dropped. So the host the engine reads from the subject
//! (`WebFetch(domain:…)` rules) is the host connected to.
//!
//! Invariants of a run:
//! - only `http` and `https` URLs are fetched; any other is refused before
//!   any I/O;
//! - the [`HostGate`] is asked for every host before a connection to it:
//!   the first, and again after every redirect;
//! - a redirect is followed only within the same origin (scheme, host and
//!   port), or from `http` up to `https` on the same host; a redirect
//!   elsewhere is handed back to the model as a result, so its next call
//!   (and the permission engine) decides the new host;
//! - the whole call (connections, redirects, headers, body, conversion)
//!   ends within [`FetchLimits::timeout`], or when the call is cancelled;
//! - at most [`FetchLimits::max_body_bytes`] of a body are read, and the
//!   result says when a page was cut;
//! - only text is returned (HTML, `text/*`, JSON, XML), decoded by the
//!   charset the header or the page names; other content is refused by
//!   its type and size.
//!
//! With a `prompt`, the passages of the page that best match its words
//! come first, then the whole page: a focus without a model call.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use reqwest::{Response, Url};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::common;
use crate::schema::input_schema;

mod content;
mod passages;

const NAME: &str = "web_fetch";

/// What the requests accept: text first.
const ACCEPT_TYPES: &str = "text/html, text/markdown, text/plain, */*;q=0.5";

/// The most bytes of passages a prompt puts before the page.
const PASSAGES_BUDGET: usize = 4096;

/// Asked before each connection with the host about to be connected to (as
/// the URL spells it: lower-case, punycode, an IPv6 address in brackets).
/// `Err(reason)` refuses it; the result reads "web_fetch may not connect to
/// HOST: reason", so the reason says why (e.g. "it is not in [sandbox]
/// allowed_domains").
/// The stack of the thread that converts a page: deep enough for the
/// deepest nesting [`content`] lets through (it falls back to plain text
/// past that).
const CONVERT_STACK: usize = 256 * 1024 * 1024;

pub type HostGate = Arc<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// How far one call may go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchLimits {
    /// The most bytes of a body read; a longer page is cut there.
    pub max_body_bytes: usize,
    /// The whole call, from the first connection to the converted page.
    pub timeout: Duration,
    /// The most redirects followed (within one origin) in one call.
    pub max_redirects: usize,
    /// Whether the proxies the environment names (`HTTPS_PROXY`, ...) are
    /// used; off for tests, which must not depend on them.
    pub system_proxy: bool,
}

impl Default for FetchLimits {
    fn default() -> Self {
        Self {
            max_body_bytes: 5 * 1024 * 1024,
            timeout: Duration::from_secs(30),
            max_redirects: 5,
            system_proxy: true,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    url: String,
    /// What you look for; the passages matching it come first
    prompt: Option<String>,
}

/// Fetches a web page as text. Not a built-in: the CLI registers it with
/// the gate its sandbox settings make.
pub struct WebFetchTool {
    gate: HostGate,
    limits: FetchLimits,
    /// Built on first use: a TLS client loads the platform's roots.
    client: OnceCell<Result<reqwest::Client, String>>,
}

impl fmt::Debug for WebFetchTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebFetchTool")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl WebFetchTool {
    /// A tool that asks `gate` before each host it connects to and keeps
    /// within `limits`.
    #[must_use]
    pub fn new(gate: HostGate, limits: FetchLimits) -> Self {
        Self {
            gate,
            limits,
            client: OnceCell::new(),
        }
    }

    async fn client(&self) -> Result<&reqwest::Client, String> {
        let limits = self.limits.clone();
        self.client
            .get_or_init(|| async move {
                tokio::task::spawn_blocking(move || build_client(&limits))
                    .await
                    .unwrap_or_else(|e| Err(e.to_string()))
            })
            .await
            .as_ref()
            .map_err(|e| format!("web_fetch has no HTTP client: {e}"))
    }

    /// Fetches `start`, following the redirects it may, and renders the
    /// page.
    async fn fetch(&self, start: Url, prompt: Option<String>) -> ToolResult {
        let client = match self.client().await {
            Ok(client) => client,
            Err(e) => return ToolResult::error(e),
        };
        let mut url = start;
        let mut seen: Vec<Url> = Vec::new();
        loop {
            let host = url.host_str().unwrap_or_default().to_owned();
            if let Err(reason) = (self.gate)(&host) {
                return ToolResult::error(format!("web_fetch may not connect to {host}: {reason}"));
            }
            seen.push(url.clone());
            let sent = client
                .get(url.clone())
                .header(ACCEPT, ACCEPT_TYPES)
                .send()
                .await;
            let response = match sent {
                Ok(response) => response,
                Err(e) => return ToolResult::error(failure(&url, &e)),
            };
            let location = response
                .headers()
                .get(LOCATION)
                .map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned());
            let (true, Some(location)) = (response.status().is_redirection(), location) else {
                return self.read(response, url, prompt).await;
            };
            let to = match url.join(&location).map_err(|e| e.to_string()) {
                Ok(to) => canonical(to.as_str()),
                Err(e) => Err(e),
            };
            let to = match to {
                Ok(to) => to,
                Err(why) => {
                    return ToolResult::error(format!(
                        "{url} redirects to {location}, which web_fetch cannot fetch: {why}"
                    ));
                }
            };
            if !same_origin(&url, &to) {
                let what = if to.host_str() == url.host_str() {
                    "another scheme or port"
                } else {
                    "a different host"
                };
                return ToolResult::ok(format!(
                    "REDIRECT: {url} redirects to {what}: {to}. Call web_fetch again with that URL if you want it."
                ));
            }
            if seen.contains(&to) {
                let chain: Vec<&str> = seen.iter().map(Url::as_str).collect();
                return ToolResult::error(format!("redirect loop: {} → {to}", chain.join(" → ")));
            }
            if seen.len() > self.limits.max_redirects {
                return ToolResult::error(format!(
                    "{} redirects more than {} times (last to {to})",
                    seen[0], self.limits.max_redirects
                ));
            }
            url = to;
        }
    }

    /// The result for the final `response` from `url`.
    async fn read(&self, mut response: Response, url: Url, prompt: Option<String>) -> ToolResult {
        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|t| String::from_utf8_lossy(t.as_bytes()).into_owned());
        let max = self.limits.max_body_bytes;
        let mut body = Vec::new();
        let mut cut = false;
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    let room = max - body.len();
                    if chunk.len() > room {
                        body.extend_from_slice(&chunk[..room]);
                        cut = true;
                        break;
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) => return ToolResult::error(failure(&url, &e)),
            }
        }
        let page = content::Page {
            url: url.to_string(),
            status: status.to_string(),
            failed: status.is_client_error() || status.is_server_error(),
            content_type,
            body,
            cut,
        };
        // On a thread of its own with a deep stack: the HTML parser and the
        // converter walk the tree recursively, and a page nested thousands
        // deep must not overflow a runtime thread's stack (which would end
        // the process). Detached, so a conversion still running when the
        // call's time is up never holds the process open at exit.
        let (done, answer) = tokio::sync::oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("web_fetch convert".into())
            .stack_size(CONVERT_STACK)
            .spawn(move || {
                let received = page.body.len() as u64;
                let _ = done.send(content::render(&page, prompt.as_deref()).with_bytes(received));
            });
        if let Err(e) = spawned {
            return ToolResult::error(format!("the page could not be converted: {e}"));
        }
        answer.await.unwrap_or_else(|_| {
            ToolResult::error("the page could not be converted: its converter stopped".to_owned())
        })
    }
}

impl Tool for WebFetchTool {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Fetch an http(s) URL as text, HTML as markdown. A redirect to another host is returned for you to fetch.".into(),
            input_schema: input_schema::<Input>(),
        }
    }

    fn classify(&self, input: &Value, _workspace: &Workspace) -> Classified {
        let subject = match common::str_field(input, "url") {
            Some(raw) => canonical(raw).map_or_else(|_| raw.to_owned(), String::from),
            None => NAME.to_owned(),
        };
        Classified {
            risk: Risk::Exec,
            subject,
            segments: None,
            writes: Vec::new(),
        }
    }

    fn run<'a>(&'a self, input: Value, cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let input: Input = match common::parse(NAME, input) {
                Ok(input) => input,
                Err(result) => return result,
            };
            let url = match canonical(&input.url) {
                Ok(url) => url,
                Err(why) => return ToolResult::error(why),
            };
            let shown = url.to_string();
            let limit = self.limits.timeout;
            let work = tokio::time::timeout(limit, self.fetch(url, input.prompt));
            tokio::select! {
                biased;
                () = cx.cancel.cancelled() => common::cancelled(NAME),
                done = work => done.unwrap_or_else(|_| ToolResult::error(format!(
                    "fetching {shown} did not finish in {}", seconds(limit)
                ))),
            }
        })
    }
}

/// An HTML page as the markdown `web_fetch` returns for it (exposed for
/// measuring the conversion alone).
#[must_use]
pub fn html_to_markdown(html: &str) -> String {
    content::markdown(html)
}

/// The URL `raw` names, as it is requested and shown to the permission
/// engine (see the module doc), or why web_fetch does not take it.
pub(crate) fn canonical(raw: &str) -> Result<Url, String> {
    let raw = raw.trim();
    let mut url =
        Url::parse(raw).map_err(|e| format!("{raw} is not a URL web_fetch takes: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "web_fetch takes http and https URLs only; {raw} is a {} URL",
            url.scheme()
        ));
    }
    let host = url.host_str().unwrap_or_default();
    if host.ends_with('.') {
        let bare = host.trim_end_matches('.').to_owned();
        if bare.is_empty() {
            return Err(format!("{raw} names no host"));
        }
        url.set_host(Some(&bare))
            .map_err(|e| format!("{raw} is not a URL web_fetch takes: {e}"))?;
    }
    Ok(url)
}

/// Whether a redirect from `from` to `to` stays where the call was
/// allowed to go: the same scheme, host and port, or `http` up to `https`
/// on the same host's default port.
fn same_origin(from: &Url, to: &Url) -> bool {
    if from.host_str() != to.host_str() {
        return false;
    }
    let upgrade = from.scheme() == "http" && to.scheme() == "https" && to.port().is_none();
    upgrade
        || (from.scheme() == to.scheme()
            && from.port_or_known_default() == to.port_or_known_default())
}

fn build_client(limits: &FetchLimits) -> Result<reqwest::Client, String> {
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("cox/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(limits.timeout);
    if !limits.system_proxy {
        builder = builder.no_proxy();
    }
    builder.build().map_err(|e| causes(&e))
}

/// A failed request, said plainly.
fn failure(url: &Url, e: &reqwest::Error) -> String {
    if e.is_connect() {
        let host = url.host_str().unwrap_or_default();
        let port = url.port_or_known_default().unwrap_or_default();
        // The innermost cause says it: "Connection refused", a name not
        // found.
        let mut cause: &dyn std::error::Error = e;
        while let Some(inner) = cause.source() {
            cause = inner;
        }
        format!("could not connect to {host}:{port} ({url}): {cause}")
    } else if e.is_body() || e.is_decode() {
        format!("the body of {url} could not be read: {}", causes(e))
    } else {
        format!("fetching {url} failed: {}", causes(e))
    }
}

/// The causes of an error, innermost last, each said once; reqwest's own
/// outer line ("error sending request for url …") left out when it has a
/// cause.
fn causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut said: Vec<String> = Vec::new();
    let mut next = e.source();
    if next.is_none() {
        return e.to_string();
    }
    while let Some(cause) = next {
        let text = cause.to_string();
        if !said.iter().any(|s| s.contains(&text)) {
            said.push(text);
        }
        next = cause.source();
    }
    said.join(": ")
}

/// A duration as a person says it: `30 s`, `1.5 s`, `200 ms`.
fn seconds(d: Duration) -> String {
    if d.as_millis() < 1000 {
        format!("{} ms", d.as_millis())
    } else if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests;
