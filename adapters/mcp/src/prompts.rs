//! The servers' prompts and resources, as a prompt names them.
//!
//! - A prompt that starts with `/mcp__<server>__<prompt>` is that server's
//!   prompt: the words after it fill the prompt's arguments in order (the
//!   last one takes the rest of the line; `"…"` keeps spaces in one), and
//!   the messages the server answers are what the model sees.
//! - `@<server>:<uri>` anywhere else in a prompt attaches that resource:
//!   the prompt is kept as typed and each resource's text follows it in a
//!   `<resource>` block (a binary one as its type and size; a text past
//!   [`ATTACH_MAX`] cut there, with a notice).
//!
//! Invariants: only servers that connected are asked; an `@name:` whose
//! name is no connected server stays as typed (an address, a time), said
//! in a notice when it names a configured server or looks like a URI; a
//! prompt or resource that cannot be had refuses the turn with a line that
//! says why, never a half-expanded prompt; every request is bounded.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use cox_protocol::mcp::{Expanded, Expander};
use cox_protocol::provider::BoxFuture;
use cox_protocol::types::SlashCommand;
use serde_json::Value;

use crate::Server;

/// The most of one resource's text a prompt takes.
pub const ATTACH_MAX: usize = 100_000;

/// The most of all resources' text one prompt takes.
pub const TOTAL_MAX: usize = 200_000;

/// The most resources one prompt attaches.
pub const MENTIONS_MAX: usize = 20;

/// The longest a prompt or resource may take to arrive.
const FETCH_MAX: Duration = Duration::from_secs(60);

/// What one connected server offers a prompt.
#[derive(Clone)]
pub(crate) struct Offer {
    pub server: Arc<Server>,
    pub prompts: Vec<rmcp::model::Prompt>,
    pub resources: bool,
}

/// The offers and the commands they make, and the servers connected:
/// swapped whole when a server connects or changes its prompts.
struct Book {
    offers: Vec<Offer>,
    commands: Vec<(SlashCommand, usize, usize)>,
    /// The servers that connected (with or without prompts and resources).
    connected: BTreeSet<String>,
}

impl Book {
    fn new(offers: Vec<Offer>, connected: BTreeSet<String>) -> Self {
        let mut commands = Vec::new();
        for (at, offer) in offers.iter().enumerate() {
            for (index, prompt) in offer.prompts.iter().enumerate() {
                let name = cox_protocol::mcp::tool_name(&offer.server.name, &prompt.name);
                let description = prompt
                    .description
                    .clone()
                    .or_else(|| prompt.title.clone())
                    .filter(|d| !d.trim().is_empty())
                    .unwrap_or_else(|| {
                        format!(
                            "prompt {} of MCP server '{}'",
                            prompt.name, offer.server.name
                        )
                    });
                let description = description.lines().next().unwrap_or_default().to_owned();
                commands.push((
                    SlashCommand {
                        name,
                        description,
                        hint: hint(prompt),
                    },
                    at,
                    index,
                ));
            }
        }
        Self {
            offers,
            commands,
            connected,
        }
    }

    fn offer(&self, server: &str) -> Option<&Offer> {
        self.offers.iter().find(|o| o.server.name == server)
    }
}

/// The connected servers' prompts and resources: servers join it as they
/// connect.
pub struct McpExpander {
    book: std::sync::RwLock<Arc<Book>>,
    /// Every server configured, connected or not.
    configured: BTreeSet<String>,
}

impl McpExpander {
    /// An expander for `configured` servers, none connected yet.
    pub(crate) fn new(configured: BTreeSet<String>) -> Self {
        Self {
            book: std::sync::RwLock::new(Arc::new(Book::new(Vec::new(), BTreeSet::new()))),
            configured,
        }
    }

    /// The offers now (one snapshot per use: a change mid-use waits).
    fn book(&self) -> Arc<Book> {
        Arc::clone(
            &self
                .book
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// `server` connected, offering `prompts` (and resources, or not).
    pub(crate) fn connected(
        &self,
        server: &Arc<Server>,
        prompts: Vec<rmcp::model::Prompt>,
        resources: bool,
    ) {
        self.replace_prompts(server, prompts, resources);
    }

    /// `server` offers `prompts` now (it said they changed); its resources
    /// as at connect. The names of its prompts are returned.
    pub(crate) fn replace_prompts(
        &self,
        server: &Arc<Server>,
        prompts: Vec<rmcp::model::Prompt>,
        resources: bool,
    ) -> Vec<String> {
        let mut book = self
            .book
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut offers = book.offers.clone();
        offers.retain(|o| o.server.name != server.name);
        let mut connected = book.connected.clone();
        connected.insert(server.name.clone());
        let names = prompts
            .iter()
            .map(|p| cox_protocol::mcp::tool_name(&server.name, &p.name))
            .collect();
        if !prompts.is_empty() || resources {
            offers.push(Offer {
                server: Arc::clone(server),
                prompts,
                resources,
            });
        }
        *book = Arc::new(Book::new(offers, connected));
        names
    }

    async fn prompt(&self, word: &str, rest: &str) -> Result<Expanded, String> {
        let book = self.book();
        let Some((command, at, index)) = book.commands.iter().find(|(c, ..)| c.name == word) else {
            return Err(unknown_prompt(&book, word));
        };
        let offer = &book.offers[*at];
        let prompt = &offer.prompts[*index];
        let arguments = arguments(prompt, rest).map_err(|why| {
            let usage = if command.hint.is_empty() {
                String::new()
            } else {
                format!(" (usage: /{} {})", command.name, command.hint)
            };
            format!("/{}: {why}{usage}", command.name)
        })?;
        let mut params = rmcp::model::GetPromptRequestParams::new(prompt.name.clone());
        if !arguments.is_empty() {
            params.arguments = Some(arguments);
        }
        let name = &offer.server.name;
        let answer = tokio::time::timeout(
            bound(&offer.server),
            offer.server.service.peer().get_prompt(params),
        )
        .await
        .map_err(|_| format!("MCP server '{name}' did not answer /{word} in time"))?
        .map_err(|e| {
            format!(
                "MCP server '{name}' failed on prompt {}: {e}{}",
                prompt.name,
                offer.server.last_words()
            )
        })?;
        let value = serde_json::to_value(&answer).unwrap_or(Value::Null);
        let mut text = messages(&value);
        if text.trim().is_empty() {
            return Err(format!(
                "MCP server '{name}' answered prompt {} with nothing to send",
                prompt.name
            ));
        }
        let mut notices = Vec::new();
        if text.len() > TOTAL_MAX {
            let cut = floor_char_boundary(&text, TOTAL_MAX);
            notices.push(format!(
                "/{word} is {} bytes; the first {cut} are sent",
                text.len()
            ));
            text.truncate(cut);
            text.push_str("\n[cut]");
        }
        Ok(Expanded {
            text,
            notices,
            ..Expanded::default()
        })
    }

    async fn attach(&self, text: &str) -> Result<Option<Expanded>, String> {
        let book = self.book();
        let mut notices = Vec::new();
        let mut wanted: Vec<(&Offer, &str)> = Vec::new();
        for (server, uri) in mentions(text) {
            let seen = wanted
                .iter()
                .any(|(o, u)| o.server.name == server && *u == uri);
            match book.offer(server) {
                Some(_) if seen => {}
                Some(offer) if offer.resources => wanted.push((offer, uri)),
                Some(_) => {
                    return Err(format!(
                        "@{server}:{uri}: MCP server '{server}' offers no resources"
                    ));
                }
                None if book.connected.contains(server) => {
                    return Err(format!(
                        "@{server}:{uri}: MCP server '{server}' offers no resources"
                    ));
                }
                None if self.configured.contains(server) => notices.push(format!(
                    "@{server}:{uri} was sent as typed: MCP server '{server}' is not connected"
                )),
                None if uri.contains("://") => notices.push(format!(
                    "@{server}:{uri} was sent as typed: no MCP server is called '{server}'"
                )),
                None => {}
            }
        }
        let mut seen = BTreeSet::new();
        notices.retain(|n| seen.insert(n.clone()));
        if wanted.len() > MENTIONS_MAX {
            notices.push(format!(
                "{} resources were named; the first {MENTIONS_MAX} are attached",
                wanted.len()
            ));
            wanted.truncate(MENTIONS_MAX);
        }
        if wanted.is_empty() {
            return Ok((!notices.is_empty()).then(|| Expanded {
                model: None,
                allowed_tools: Vec::new(),
                command_file: None,
                images: Vec::new(),
                text: text.to_owned(),
                notices,
            }));
        }
        let reads = wanted.iter().map(|(offer, uri)| read(offer, uri));
        let mut out = text.trim_end().to_owned();
        let mut attached = 0;
        for ((offer, uri), read) in wanted.iter().zip(futures::future::join_all(reads).await) {
            let contents = read?;
            let name = &offer.server.name;
            if contents.is_empty() {
                return Err(format!("@{name}:{uri}: the server sent no contents"));
            }
            for (part_uri, mime, body) in contents {
                let room = ATTACH_MAX.min(TOTAL_MAX.saturating_sub(attached));
                let body = match body {
                    Body::Text(text) if text.len() > room => {
                        let cut = floor_char_boundary(&text, room);
                        notices.push(format!(
                            "@{name}:{part_uri} is {} bytes; the first {cut} are attached",
                            text.len()
                        ));
                        format!("{}\n[cut: {} more bytes]", &text[..cut], text.len() - cut)
                    }
                    Body::Text(text) => text,
                    Body::Binary(bytes) => format!("[binary, {bytes} bytes: not attached]"),
                };
                attached += body.len();
                let mime = mime
                    .map(|m| format!(" mimeType=\"{m}\""))
                    .unwrap_or_default();
                out.push_str(&format!(
                    "\n\n<resource server=\"{name}\" uri=\"{part_uri}\"{mime}>\n{}\n</resource>",
                    body.trim_end_matches('\n')
                ));
            }
        }
        Ok(Some(Expanded {
            text: out,
            notices,
            ..Expanded::default()
        }))
    }
}

impl Expander for McpExpander {
    fn commands(&self) -> Vec<SlashCommand> {
        self.book()
            .commands
            .iter()
            .map(|(c, ..)| c.clone())
            .collect()
    }

    fn expand<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Option<Expanded>, String>> {
        Box::pin(async move {
            let typed = text.trim_start();
            if typed.starts_with("/mcp__") {
                let (word, rest) = typed[1..]
                    .split_once(char::is_whitespace)
                    .unwrap_or((&typed[1..], ""));
                return self.prompt(word, rest.trim()).await.map(Some);
            }
            self.attach(text).await
        })
    }
}

/// Why `word` names no prompt of `book`.
fn unknown_prompt(book: &Book, word: &str) -> String {
    let server = word
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .map_or("", |(server, _)| server);
    let Some(offer) = book.offer(server) else {
        return format!("/{word}: no connected MCP server is called '{server}'");
    };
    if offer.prompts.is_empty() {
        return format!("/{word}: MCP server '{server}' offers no prompts");
    }
    let names: Vec<&str> = book
        .commands
        .iter()
        .filter(|(_, at, _)| book.offers[*at].server.name == server)
        .map(|(c, ..)| c.name.as_str())
        .collect();
    format!(
        "/{word}: MCP server '{server}' has no such prompt; it has /{}",
        names.join(", /")
    )
}

/// The bound of one prompt or resource request.
fn bound(server: &Server) -> Duration {
    server.call_timeout.min(FETCH_MAX)
}

/// A resource's body.
enum Body {
    Text(String),
    /// A blob: its size in bytes.
    Binary(usize),
}

/// Reads `uri` from `offer`'s server: each part's URI, type and body.
async fn read(offer: &Offer, uri: &str) -> Result<Vec<(String, Option<String>, Body)>, String> {
    let name = &offer.server.name;
    let params = rmcp::model::ReadResourceRequestParams::new(uri);
    let answer = tokio::time::timeout(
        bound(&offer.server),
        offer.server.service.peer().read_resource(params),
    )
    .await
    .map_err(|_| format!("@{name}:{uri}: the server did not answer in time"))?
    .map_err(|e| format!("@{name}:{uri}: {e}{}", offer.server.last_words()))?;
    let value = serde_json::to_value(&answer).unwrap_or(Value::Null);
    let contents = value
        .get("contents")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    Ok(contents
        .iter()
        .map(|part| {
            let get = |key: &str| part.get(key).and_then(Value::as_str);
            let body = match (get("text"), get("blob")) {
                (Some(text), _) => Body::Text(text.to_owned()),
                (None, Some(blob)) => Body::Binary(blob.len() / 4 * 3),
                (None, None) => Body::Text(String::new()),
            };
            (
                get("uri").unwrap_or(uri).to_owned(),
                get("mimeType").map(str::to_owned),
                body,
            )
        })
        .collect())
}

/// `<a> <b> [c]` for a prompt's arguments.
fn hint(prompt: &rmcp::model::Prompt) -> String {
    prompt
        .arguments
        .iter()
        .flatten()
        .map(|a| {
            if a.required == Some(true) {
                format!("<{}>", a.name)
            } else {
                format!("[{}]", a.name)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words of `rest` as `prompt`'s arguments, in order.
fn arguments(
    prompt: &rmcp::model::Prompt,
    rest: &str,
) -> Result<serde_json::Map<String, Value>, String> {
    let wanted = prompt.arguments.as_deref().unwrap_or_default();
    let mut words = words(rest, wanted.len())?;
    if wanted.is_empty() && !words.is_empty() {
        return Err("it takes no arguments".into());
    }
    let mut map = serde_json::Map::new();
    for (argument, word) in wanted.iter().zip(words.drain(..)) {
        map.insert(argument.name.clone(), Value::String(word));
    }
    let missing: Vec<String> = wanted
        .iter()
        .filter(|a| a.required == Some(true) && !map.contains_key(&a.name))
        .map(|a| format!("<{}>", a.name))
        .collect();
    if !missing.is_empty() {
        return Err(format!("missing {}", missing.join(" ")));
    }
    Ok(map)
}

/// `text` split into at most `most` words (`"…"` keeps spaces in one; the
/// last takes the rest of the line as typed).
fn words(text: &str, most: usize) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        if out.len() + 1 == most {
            let last = rest.strip_prefix('"').and_then(|r| r.strip_suffix('"'));
            out.push(last.unwrap_or(rest).to_owned());
            break;
        }
        if let Some(quoted) = rest.strip_prefix('"') {
            let Some((word, after)) = quoted.split_once('"') else {
                return Err("a \" is not closed".into());
            };
            out.push(word.to_owned());
            rest = after.trim_start();
        } else {
            let (word, after) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            out.push(word.to_owned());
            rest = after.trim_start();
        }
    }
    Ok(out)
}

/// A `prompts/get` answer's messages as one text: each message's content
/// as [`crate::render`] reads it, an assistant's marked as such.
fn messages(value: &Value) -> String {
    let mut parts = Vec::new();
    for message in value
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let text = message
            .get("content")
            .map(crate::render::block_text)
            .unwrap_or_default();
        match message.get("role").and_then(Value::as_str) {
            Some("assistant") => parts.push(format!("[assistant]\n{text}")),
            _ => parts.push(text),
        }
    }
    parts.join("\n\n")
}

/// Every `@<server>:<uri>` of `text`: a word that starts with `@`, a
/// server name, `:` and something after it, trailing punctuation left out.
fn mentions(text: &str) -> Vec<(&str, &str)> {
    text.split_whitespace()
        .map(|word| word.trim_start_matches(['`', '"', '\'', '(', '<', '[']))
        .filter_map(|word| word.strip_prefix('@'))
        .filter_map(|word| word.split_once(':'))
        .filter(|(server, _)| cox_protocol::mcp::valid_server_name(server).is_none())
        .map(|(server, uri)| (server, trim_trailing(uri)))
        .filter(|(_, uri)| !uri.is_empty())
        .collect()
}

/// `uri` without the punctuation a sentence puts after it (a `)` only
/// when it closes nothing in the URI).
fn trim_trailing(mut uri: &str) -> &str {
    loop {
        let before = uri;
        uri = uri.trim_end_matches(['.', ',', ';', ':', '!', '?', '"', '\'', '`', ']', '>', '*']);
        if uri.ends_with(')') && uri.matches('(').count() < uri.matches(')').count() {
            uri = &uri[..uri.len() - 1];
        }
        if uri == before {
            return uri;
        }
    }
}

fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(arguments: &[(&str, bool)]) -> rmcp::model::Prompt {
        let mut prompt = rmcp::model::Prompt::new("p", Some("d"), None);
        prompt.arguments = Some(
            arguments
                .iter()
                .map(|(name, required)| {
                    let mut a = rmcp::model::PromptArgument::new(*name);
                    a.required = Some(*required);
                    a
                })
                .collect(),
        );
        prompt
    }

    #[test]
    fn mentions_are_server_words_with_a_uri_and_no_trailing_punctuation() {
        assert_eq!(
            mentions("see @docs:file:///a/b.md, then @git-hub:repo://x/(y). mail@host:1 @:x @a:"),
            vec![("docs", "file:///a/b.md"), ("git-hub", "repo://x/(y)")]
        );
        assert_eq!(mentions("(@s:test://1)"), vec![("s", "test://1")]);
        assert_eq!(
            mentions("`@s:test://2` and \"@s:test://3\", [@s:test://4]"),
            vec![("s", "test://2"), ("s", "test://3"), ("s", "test://4")]
        );
        assert_eq!(mentions("@s:test://1)"), vec![("s", "test://1")]);
        assert_eq!(
            mentions("@bad__name:x://1 @ok:x://2?"),
            vec![("ok", "x://2")]
        );
    }

    #[test]
    fn words_fill_the_arguments_in_order_and_the_last_takes_the_rest() {
        let p = prompt(&[("path", true), ("style", false)]);
        let map = arguments(&p, "src/a.rs  be very brief").unwrap();
        assert_eq!(map["path"], "src/a.rs");
        assert_eq!(map["style"], "be very brief");
        let map = arguments(&p, "\"my file.rs\" \"terse\"").unwrap();
        assert_eq!(map["path"], "my file.rs");
        assert_eq!(map["style"], "terse");
        assert_eq!(arguments(&p, "").unwrap_err(), "missing <path>");
        assert_eq!(arguments(&p, "\"open").unwrap_err(), "a \" is not closed");
        let none = prompt(&[]);
        assert_eq!(arguments(&none, "x").unwrap_err(), "it takes no arguments");
        assert!(arguments(&none, "  ").unwrap().is_empty());
        assert_eq!(hint(&p), "<path> [style]");
    }

    #[test]
    fn messages_read_as_one_text_with_the_assistant_marked() {
        let value = serde_json::json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "Review this."}},
            {"role": "assistant", "content": {"type": "text", "text": "Sure."}},
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "t://a", "text": "body"}}}
        ]});
        assert_eq!(
            messages(&value),
            "Review this.\n\n[assistant]\nSure.\n\n[resource t://a]\nbody"
        );
    }
}
