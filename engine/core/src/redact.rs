//! Redaction: the one helper every copy that leaves a session goes through.
//!
//! [`scrub`] replaces five secret shapes with [`REDACTED`]:
//!
//! | shape | matched as |
//! |---|---|
//! | API keys | `sk-` (so also `sk-ant-`, `sk-proj-`) then 16 or more of `[A-Za-z0-9_-]`, the `s` not right after a letter or digit |
//! | bearer tokens | the word `Bearer` (any case, not right after a letter or digit), spaces or tabs, then 8 or more of `[A-Za-z0-9._~+/=-]`; the word and its spacing stay, the token goes |
//! | AWS access key ids | `AKIA` then 16 or more of `[A-Z0-9]` |
//! | GitHub tokens | `ghp_` then 30 or more of `[A-Za-z0-9]` |
//! | PEM blocks | a `-----BEGIN LABEL-----` header (on one line) through the `-----END LABEL-----` with the same label, or to the end of the text when there is none |
//!
//! Each shape takes the longest run its alphabet allows, so no tail of a
//! secret survives. Why a hand-written scanner rather than a regex: this is
//! on the path of every streamed delta, the engine stays small, and text
//! with no secret (nearly all of it) is one pass over its bytes with no
//! allocation: it comes back [`Cow::Borrowed`].
//!
//! Invariants (held by `engine/core/tests/redact.rs`): no substring of the
//! output matches a shape; text without a shape is returned unchanged and
//! borrowed; `scrub(scrub(t)) == scrub(t)`.
//!
//! What is scrubbed where is the caller's business; see `docs/redaction.md`.
//! In the core, [`rollout_copy`] decides which events the rollout receives
//! scrubbed.

use std::borrow::Cow;

use cox_protocol::types::Event;

/// What a secret is replaced with.
pub const REDACTED: &str = "«redacted»";

/// The notice that follows a tool result whose rollout copy was scrubbed.
pub const TOOL_OUTPUT_NOTICE: &str =
    "a tool result held something shaped like a secret; the rollout keeps it as «redacted»";

/// `text` with every secret shape replaced by [`REDACTED`]; borrowed when
/// nothing matched.
///
/// ```
/// use cox_core::redact::scrub;
/// assert_eq!(scrub("key=sk-ant-api03-abcdefghijklmnop"), "key=«redacted»");
/// assert_eq!(scrub("Authorization: Bearer abc.def.ghi"), "Authorization: Bearer «redacted»");
/// assert!(matches!(scrub("task-1234 uses disk-space"), std::borrow::Cow::Borrowed(_)));
/// ```
#[must_use]
pub fn scrub(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    // `text[..copied]` is already in `out` (or replaced in it).
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        // A redaction counts as a word boundary, so a second pass sees the
        // same boundaries the first did (scrub stays idempotent).
        let word_start = i == 0 || !bytes[i - 1].is_ascii_alphanumeric() || i == copied;
        let Some(hit) = secret_at(bytes, i, word_start) else {
            i += 1;
            continue;
        };
        let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
        // Match starts and ends fall on ASCII bytes (or the end), so they
        // are char boundaries.
        out.push_str(&text[copied..i + hit.keep]);
        out.push_str(REDACTED);
        copied = hit.end;
        i = hit.end;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut out) => {
            out.push_str(&text[copied..]);
            Cow::Owned(out)
        }
    }
}

/// A cheap test that never says no when [`scrub`] would change `text`:
/// true when `text` holds the fixed start of a shape (`sk-`, `bearer` in
/// any case, `AKIA`, `ghp_`, `-----BEGIN `).
///
/// Those starts are plain ASCII that JSON never escapes, so this may be run
/// over serialised JSON to learn whether any string in it needs scrubbing,
/// before paying for a walk over its strings.
#[must_use]
pub fn may_hold_secret(text: &[u8]) -> bool {
    (0..text.len()).any(|i| {
        let rest = &text[i..];
        match rest[0] {
            b's' => rest.starts_with(b"sk-"),
            b'A' => rest.starts_with(b"AKIA"),
            b'g' => rest.starts_with(b"ghp_"),
            b'-' => rest.starts_with(PEM_BEGIN),
            b'B' | b'b' => rest.len() >= 6 && rest[..6].eq_ignore_ascii_case(b"bearer"),
            _ => false,
        }
    })
}

/// The copy of `event` the rollout should receive instead of `event`, when
/// it differs: the text of a `TextDelta`, the chunk of a `ToolCallOutput`,
/// the visible result of a `ToolCallDone`, a compaction's summary, the
/// session's title (which `cox sessions` lists) and what a hook said,
/// added or printed (`HookRan`), scrubbed. `None` when the
/// event goes to the rollout as it is (every other kind, and text with no
/// secret), so the common case clones nothing.
#[must_use]
pub fn rollout_copy(event: &Event) -> Option<Event> {
    match event {
        Event::TextDelta { text } => match scrub(text) {
            Cow::Borrowed(_) => None,
            Cow::Owned(text) => Some(Event::TextDelta { text }),
        },
        Event::ToolCallOutput { call_id, chunk } => match scrub(chunk) {
            Cow::Borrowed(_) => None,
            Cow::Owned(chunk) => Some(Event::ToolCallOutput {
                call_id: call_id.clone(),
                chunk,
            }),
        },
        Event::UserShell { command, result } => match scrub(&result.visible) {
            Cow::Borrowed(_) => None,
            Cow::Owned(visible) => {
                let mut result = result.clone();
                result.visible = visible;
                Some(Event::UserShell {
                    command: command.clone(),
                    result,
                })
            }
        },
        Event::ToolCallDone { call_id, result } => match scrub(&result.visible) {
            Cow::Borrowed(_) => None,
            Cow::Owned(visible) => {
                let mut result = result.clone();
                result.visible = visible;
                Some(Event::ToolCallDone {
                    call_id: call_id.clone(),
                    result,
                })
            }
        },
        Event::Compacted {
            summary,
            dropped,
            before_tokens,
            after_tokens,
        } => match scrub(summary) {
            Cow::Borrowed(_) => None,
            Cow::Owned(summary) => Some(Event::Compacted {
                summary,
                dropped: dropped.clone(),
                before_tokens: *before_tokens,
                after_tokens: *after_tokens,
            }),
        },
        Event::SessionTitled { title } => match scrub(title) {
            Cow::Borrowed(_) => None,
            Cow::Owned(title) => Some(Event::SessionTitled { title }),
        },
        // What a hook said or printed may quote a key from its environment.
        Event::HookRan {
            hook,
            event,
            duration_ms,
            outcome,
            message,
            context,
            output,
        } => {
            fn clean(text: &Option<String>) -> Option<Cow<'_, str>> {
                text.as_deref().map(scrub)
            }
            let parts = [clean(message), clean(context), clean(output)];
            if !parts.iter().flatten().any(|c| matches!(c, Cow::Owned(_))) {
                return None;
            }
            let [message, context, output] = parts.map(|c| c.map(Cow::into_owned));
            Some(Event::HookRan {
                hook: hook.clone(),
                event: *event,
                duration_ms: *duration_ms,
                outcome: *outcome,
                message,
                context,
                output,
            })
        }
        _ => None,
    }
}

/// A secret found at some position.
struct Hit {
    /// Bytes of the match kept as they are (the word `Bearer` and its
    /// spacing).
    keep: usize,
    /// Where the match ends (exclusive).
    end: usize,
}

fn secret_at(bytes: &[u8], i: usize, word_start: bool) -> Option<Hit> {
    let rest = &bytes[i..];
    let whole = |prefix: usize, run: usize, min: usize| {
        (run >= min).then_some(Hit {
            keep: 0,
            end: i + prefix + run,
        })
    };
    match rest.first()? {
        b's' if word_start && rest.starts_with(b"sk-") => {
            whole(3, run(&rest[3..], is_key_char), 16)
        }
        b'A' if rest.starts_with(b"AKIA") => whole(4, run(&rest[4..], is_aws_char), 16),
        b'g' if rest.starts_with(b"ghp_") => {
            whole(4, run(&rest[4..], u8::is_ascii_alphanumeric), 30)
        }
        b'B' | b'b'
            if word_start && rest.len() > 6 && rest[..6].eq_ignore_ascii_case(b"bearer") =>
        {
            let space = run(&rest[6..], |b| *b == b' ' || *b == b'\t');
            let token = run(&rest[6 + space..], is_token_char);
            (space > 0 && token >= 8).then_some(Hit {
                keep: 6 + space,
                end: i + 6 + space + token,
            })
        }
        b'-' if rest.starts_with(PEM_BEGIN) => pem_block(bytes, i),
        _ => None,
    }
}

const PEM_BEGIN: &[u8] = b"-----BEGIN ";
const PEM_END: &[u8] = b"-----END ";
const DASHES: &[u8] = b"-----";

/// A PEM block starting at `i` (which starts with [`PEM_BEGIN`]): through
/// its END line with the same label, or to the end of the text.
fn pem_block(bytes: &[u8], i: usize) -> Option<Hit> {
    let label_start = i + PEM_BEGIN.len();
    // The header's closing dashes must be on its line. Another BEGIN on the
    // line stops the search too (it starts with dashes), so scanning stays
    // linear in the text.
    let line = &bytes[label_start..];
    let line = &line[..line.iter().position(|b| *b == b'\n').unwrap_or(line.len())];
    let label_len = find(line, DASHES)?;
    let label = &line[..label_len];
    let mut from = label_start + label_len + DASHES.len();
    let end = loop {
        let Some(at) = find(&bytes[from..], PEM_END) else {
            break bytes.len();
        };
        let after = &bytes[from + at + PEM_END.len()..];
        if after.starts_with(label) && after[label.len()..].starts_with(DASHES) {
            break from + at + PEM_END.len() + label.len() + DASHES.len();
        }
        from += at + PEM_END.len();
    };
    Some(Hit { keep: 0, end })
}

fn run(bytes: &[u8], class: impl Fn(&u8) -> bool) -> usize {
    bytes.iter().take_while(|b| class(b)).count()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn is_key_char(b: &u8) -> bool {
    b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-'
}

fn is_aws_char(b: &u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}

fn is_token_char(b: &u8) -> bool {
    b.is_ascii_alphanumeric() || b"._~+/=-".contains(b)
}
