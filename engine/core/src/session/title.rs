//! The session's title, written once, after the first prompt.
//!
//! When the provider's cheap tier has a model of its own
//! ([`Provider::has_cheap_tier`]), a short call asks it for a few words
//! about the first prompt. The call starts as soon as the prompt has passed
//! the `UserPromptSubmit` hooks (so a prompt a hook blocked is never sent
//! anywhere) and runs alongside the turn, which it never holds up: at the
//! turn's end it is waited for only within a grace. Otherwise (one model, a scripted replay, a
//! `[budget]` cap already reached, a subagent's session) no call is made and the title is the
//! prompt's first line.
//!
//! The title is said at the end of the first turn, before the turn is
//! booked and its `TurnDone` (so a headless run still ends with it): one
//! [`Event::SessionTitled`], preceded by the call's `usage` (job `title`, so
//! the ledger books it and the session's cost includes it). A call that is
//! not done by then is given the driver's grace ([`Grace`], none by
//! default), then cancelled, and the title is the first line; an
//! interrupted first turn does not wait at all. A call that fails is not
//! reported: the first line stands.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;

use cox_protocol::provider::BoxFuture;
use cox_protocol::types::{Event, Job};
use cox_protocol::{CancelToken, Provider};
use futures::{FutureExt, StreamExt};

use super::Fixed;
use super::compaction::{SideReply, side_request};
use crate::world::World;

/// What the cheap model is asked.
pub const TITLE_PROMPT: &str = "Write a title for the coding session that starts with the user's message below: a few words (at most eight) saying what the user wants, plain text, no quotes, no final full stop. Reply with the title alone.";

/// The most characters a title keeps (an ellipsis marks a cut).
pub const TITLE_CHARS: usize = 72;

/// How much of the prompt the title call is sent.
const PROMPT_CHARS: usize = 4_000;

/// A title is a few words; this leaves room for a model that adds some.
const MAX_TOKENS: u32 = 40;

/// How long a title call still running at the end of the first turn may
/// take: the driver's timer (the core reads no clock), called at most once,
/// when the turn's own work is done.
pub type Grace = Arc<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

/// What the title call came to.
#[derive(Default)]
struct Written {
    title: Option<String>,
    /// The call's `usage` events, to book before the title.
    usage: Vec<Event>,
}

/// A title on its way: the call (or nothing to wait for) and the first
/// line to fall back on.
pub(super) struct Pending {
    fallback: Option<String>,
    cancel: CancelToken,
    call: BoxFuture<'static, Written>,
    written: Option<Written>,
}

impl Pending {
    /// Starts the title of a session whose first prompt is `prompt`.
    pub(super) async fn begin<W: World>(fixed: &Fixed<W>, prompt: &str) -> Self {
        let cancel = CancelToken::new();
        let provider = fixed.world.provider();
        // A subagent's title is its prompt's first line: no call is spent.
        let asks = provider.has_cheap_tier()
            && fixed.config.parent.is_none()
            && fixed.over_budget(|_, _| {}).await.is_none()
            && !prompt.trim().is_empty();
        let call: BoxFuture<'static, Written> = if asks {
            Box::pin(call(provider, prompt, cancel.clone()))
        } else {
            Box::pin(std::future::ready(Written::default()))
        };
        Self {
            fallback: first_line(prompt),
            cancel,
            call,
            written: None,
        }
    }

    /// Runs `body` to its end, moving the call on meanwhile.
    pub(super) async fn alongside<T>(&mut self, body: impl Future<Output = T>) -> T {
        let mut body = pin!(body);
        while self.written.is_none() {
            tokio::select! {
                biased;
                value = &mut body => return value,
                written = &mut self.call => self.written = Some(written),
            }
        }
        body.await
    }

    /// The events that record the title, once the call is done or `grace`
    /// is over: the call's usage, then the title it wrote, or the first
    /// line. A call still running is cancelled.
    pub(super) async fn finish(mut self, grace: Option<&Grace>) -> Vec<Event> {
        if self.written.is_none() {
            self.written = (&mut self.call).now_or_never();
        }
        if let Some(grace) = grace
            && self.written.is_none()
        {
            let wait = grace();
            tokio::select! {
                biased;
                written = &mut self.call => self.written = Some(written),
                () = wait => {}
            }
        }
        self.cancel.cancel();
        let Written { title, mut usage } = self.written.unwrap_or_default();
        if let Some(title) = title.or(self.fallback) {
            usage.push(Event::SessionTitled { title });
        }
        usage
    }
}

/// The title call on the cheap tier: the prompt and a short instruction,
/// no tools, a few tokens.
fn call<P: Provider>(
    provider: &P,
    prompt: &str,
    cancel: CancelToken,
) -> impl Future<Output = Written> + Send + 'static {
    let request = side_request(
        provider,
        TITLE_PROMPT,
        prompt.chars().take(PROMPT_CHARS).collect(),
        MAX_TOKENS,
    );
    let stream = provider.stream(request, cancel);
    let mut reply = SideReply::new(provider, Job::Title);
    async move {
        let mut stream = pin!(stream);
        let mut usage = Vec::new();
        while let Some(item) = stream.next().await {
            let Ok(event) = item else {
                return Written { title: None, usage };
            };
            match reply.apply(event) {
                // Retries are not said: the title is no turn of the session.
                Ok(Some(event @ Event::Usage { .. })) => usage.push(event),
                Ok(_) => {}
                Err(()) => break,
            }
        }
        Written {
            title: cleaned(&reply.text),
            usage,
        }
    }
}

/// The model's answer as a title: its first line, without the quotes,
/// markup or `Title:` a model may add, nor a final full stop.
fn cleaned(answer: &str) -> Option<String> {
    let line = answer.lines().find(|l| !l.trim().is_empty())?;
    let mut line = line.trim();
    for prefix in ["title:", "Title:", "TITLE:"] {
        line = line.strip_prefix(prefix).unwrap_or(line);
    }
    let line = line
        .trim_matches(|c: char| c.is_whitespace() || "\"'`*#_“”‘’".contains(c))
        .trim_end_matches('.');
    one_line(line)
}

/// The first line of the prompt that holds more than blanks, trimmed and
/// cut to [`TITLE_CHARS`].
#[must_use]
pub fn first_line(prompt: &str) -> Option<String> {
    one_line(prompt.lines().find(|l| !l.trim().is_empty())?)
}

/// `text` on one line: control characters and runs of blanks become one
/// space, and it is cut to [`TITLE_CHARS`] with `…`, between words where
/// it can be.
fn one_line(text: &str) -> Option<String> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() {
        return None;
    }
    let line = words.join(" ");
    if line.chars().count() <= TITLE_CHARS {
        return Some(line);
    }
    // Cut before the word the limit falls in, unless it is the only one.
    let mut cut: String = line.chars().take(TITLE_CHARS - 1).collect();
    let at_word_end = line.chars().nth(TITLE_CHARS - 1) == Some(' ');
    if !at_word_end && let Some(space) = cut.rfind(' ') {
        cut.truncate(space);
    }
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    Some(cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_line_is_trimmed_and_cut() {
        assert_eq!(
            first_line("\n   \n  fix the  login\tform  \nand more").as_deref(),
            Some("fix the login form")
        );
        assert_eq!(first_line(" \n\t"), None);
        let long = "word ".repeat(40);
        let title = first_line(&long).unwrap();
        assert!(title.chars().count() <= TITLE_CHARS, "{title}");
        assert!(title.ends_with(" word…"), "cut between words: {title}");
        let unbroken = "x".repeat(100);
        assert_eq!(first_line(&unbroken).unwrap().chars().count(), TITLE_CHARS);
        let escape = first_line("a\u{1b}[31mred").unwrap();
        assert!(!escape.contains('\u{1b}'), "{escape:?}");
    }

    #[test]
    fn a_model_answer_loses_its_quotes_markup_and_full_stop() {
        for answer in [
            "Fix the login form",
            "\"Fix the login form.\"",
            "**Fix the login form**\n\nIt is about…",
            "Title: Fix the login form",
            "  “Fix the login form”  ",
            "# Fix the login form",
        ] {
            assert_eq!(
                cleaned(answer).as_deref(),
                Some("Fix the login form"),
                "{answer:?}"
            );
        }
        assert_eq!(cleaned("\n \"\" \n"), None);
    }
}
