//! What the model is sent, kept small without losing anything.
//!
//! Every tool output is archived whole before the model sees it (the
//! archive is reached through the `Archive` trait); this module decides
//! what the model sees instead, and is pure:
//! - [`view`]: an output over [`BIG_OUTPUT`] becomes its first and last
//!   lines around a marker naming the archive id and the lines left out;
//! - [`Seen`]: an identical read-only call whose output has not changed
//!   within the dedup window is answered `unchanged since #<id>`;
//! - [`microcompact`]: results older than a few turns are sent as a pointer
//!   to their archived output (the history itself keeps them); [`Sent`]
//!   keeps each message's final form, so a long session's request copies
//!   pointers to shared messages rather than the messages;
//! - [`Compaction`]: after a summary, the messages of the summarised turns
//!   are skipped and the summary leads the first kept message.
//!
//! The history is never rewritten by any of these: each works on the copy
//! a request is built from, so the rollout, a resume and the next request
//! all agree.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use cox_protocol::CallId;
use cox_protocol::provider::{ContentBlock, Message, Role};
use cox_protocol::types::ServerStep;

/// Outputs larger than this are shown to the model as head and tail.
pub const BIG_OUTPUT: usize = 16 * 1024;

/// The most of a big output's head (and, separately, tail) the model sees.
const VIEW_SIDE_BYTES: usize = 1536;
/// The most lines on each side.
const VIEW_SIDE_LINES: usize = 40;

/// What the model sees of `output`, archived as `id`: the output itself
/// when it is small, else its first and last lines around a marker like
/// `[… 84 KiB archived; expand #01J… lines 3–8210]`.
#[must_use]
pub fn view(output: &str, id: &str) -> String {
    if output.len() <= BIG_OUTPUT {
        return output.to_owned();
    }
    let lines: Vec<&str> = output.split_inclusive('\n').collect();
    let take = |iter: &mut dyn Iterator<Item = &&str>| {
        let mut bytes = 0;
        let mut count = 0;
        for line in iter {
            if count == VIEW_SIDE_LINES || bytes + line.len() > VIEW_SIDE_BYTES {
                break;
            }
            bytes += line.len();
            count += 1;
        }
        count
    };
    let head = take(&mut lines.iter());
    let tail = take(&mut lines.iter().rev()).min(lines.len() - head);
    let omitted_from = head + 1;
    let omitted_to = lines.len() - tail;
    let omitted: usize = lines[head..lines.len() - tail]
        .iter()
        .map(|l| l.len())
        .sum();
    let mut out = String::with_capacity(2 * VIEW_SIDE_BYTES + 96);
    for line in &lines[..head] {
        out.push_str(line);
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if head == 0 {
        // One enormous line: show its start and end instead.
        let start = floor_char(output, VIEW_SIDE_BYTES);
        let end = ceil_char(output, output.len() - VIEW_SIDE_BYTES);
        out.push_str(&output[..start]);
        out.push_str(&format!(
            "\n[… {} archived; expand #{id} for the whole output]\n",
            size(end - start)
        ));
        out.push_str(&output[end..]);
        return out;
    }
    out.push_str(&format!(
        "[… {} archived; expand #{id} lines {omitted_from}–{omitted_to}]\n",
        size(omitted)
    ));
    for line in &lines[lines.len() - tail..] {
        out.push_str(line);
    }
    out
}

fn floor_char(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_char(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// A byte count as people read it: `84 KiB`, `1.2 MiB`, `512 B`.
#[must_use]
pub fn size(bytes: usize) -> String {
    if bytes >= 1024 * 1024 {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    } else if bytes >= 1024 {
        format!("{} KiB", bytes.div_ceil(1024))
    } else {
        format!("{bytes} B")
    }
}

/// The text a call repeated within the dedup window gets.
#[must_use]
pub fn unchanged(id: &str) -> String {
    format!("unchanged since #{id}")
}

/// Recent read-only calls and their outputs, for dedup.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    calls: HashMap<(String, String), Sighting>,
}

#[derive(Clone, Debug)]
struct Sighting {
    turn: u32,
    archive: String,
    hash: u64,
}

impl Seen {
    /// The archive id and turn of an identical call (`name` and `input`)
    /// made within `window` turns before `turn` whose output hashed the
    /// same, if any. Either way, this sighting is remembered.
    pub fn check(
        &mut self,
        name: &str,
        input: &str,
        output: &str,
        turn: u32,
        window: u32,
        archive: &str,
    ) -> Option<(String, u32)> {
        let hash = hash_of(output);
        let key = (name.to_owned(), input.to_owned());
        let earlier = self.calls.get(&key).and_then(|seen| {
            (turn.saturating_sub(seen.turn) < window && seen.hash == hash)
                .then(|| (seen.archive.clone(), seen.turn))
        });
        if earlier.is_none() {
            self.calls.insert(
                key,
                Sighting {
                    turn,
                    archive: archive.to_owned(),
                    hash,
                },
            );
        }
        earlier
    }
}

fn hash_of(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// What is known about one tool result, for microcompaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultMeta {
    /// The turn it came back in.
    pub turn: u32,
    /// Its archived output.
    pub archive: Option<String>,
    /// `read /repo/src/main.rs`: the tool and its subject.
    pub what: String,
}

/// What the model is sent in place of one message: its results older than
/// `after` turns (before `turn`) as pointers to their archived output, the
/// call that made it, and how to expand it. Results without an archive,
/// and ones already shorter than their pointer, stay as they are. `None`
/// when nothing changes; the flag says whether the form is final (every
/// result in it is old: it will never change again).
#[must_use]
pub fn microcompact(
    message: &Message,
    meta: &HashMap<CallId, ResultMeta>,
    turn: u32,
    after: u32,
) -> (Option<Message>, bool) {
    if message.role != Role::User {
        // A person's edit may still change an assistant's call: never final.
        return (None, false);
    }
    let mut changed: Option<Message> = None;
    let mut last = true;
    // Whether the images that follow are an old result's: those go (the
    // result's text still names each), as they cost the most to resend.
    let mut old = false;
    let mut dropped = Vec::new();
    for (i, block) in message.content.iter().enumerate() {
        if let ContentBlock::Image(_) = block {
            if old {
                dropped.push(i);
            }
            continue;
        }
        let ContentBlock::ToolResult {
            tool_use_id,
            content,
            ..
        } = block
        else {
            old = false;
            continue;
        };
        let Some(info) = meta.get(tool_use_id) else {
            old = false;
            continue;
        };
        old = turn.saturating_sub(info.turn) >= after;
        if !old {
            last = false;
            continue;
        }
        let Some(id) = &info.archive else { continue };
        let pointer = format!(
            "[{}: output from turn {} archived as #{id}; expand #{id} to read it again]",
            info.what, info.turn
        );
        if pointer.len() < content.len() {
            let copy = changed.get_or_insert_with(|| message.clone());
            if let ContentBlock::ToolResult { content, .. } = &mut copy.content[i] {
                *content = pointer;
            }
        }
    }
    if !dropped.is_empty() {
        let copy = changed.get_or_insert_with(|| message.clone());
        for i in dropped.into_iter().rev() {
            copy.content.remove(i);
        }
    }
    (changed, last)
}

/// The most images one request carries: past it providers shrink or refuse
/// them.
pub const REQUEST_IMAGES_MAX: usize = 20;

/// The most base64 bytes of images one request carries (providers refuse a
/// body past 32 MB).
pub const REQUEST_IMAGE_BYTES_MAX: usize = 20 * 1024 * 1024;

/// `messages` with only the newest images that fit one request
/// ([`REQUEST_IMAGES_MAX`], [`REQUEST_IMAGE_BYTES_MAX`]): older ones are
/// left out (their results' lines still name them), so a long turn of
/// screenshots never grows a request the provider refuses. The same list
/// when all fit, which is the common case: nothing is copied.
#[must_use]
pub fn image_budget(messages: Arc<Vec<Arc<Message>>>) -> Arc<Vec<Arc<Message>>> {
    let mut count = 0;
    let mut bytes = 0;
    let mut cut: Option<(usize, usize)> = None;
    'scan: for (m, message) in messages.iter().enumerate().rev() {
        for (b, block) in message.content.iter().enumerate().rev() {
            if let ContentBlock::Image(image) = block {
                count += 1;
                bytes += image.data.len();
                if count > REQUEST_IMAGES_MAX || bytes > REQUEST_IMAGE_BYTES_MAX {
                    cut = Some((m, b));
                    break 'scan;
                }
            }
        }
    }
    let Some((m_cut, b_cut)) = cut else {
        return messages;
    };
    let mut out = messages.as_ref().clone();
    for (m, message) in out.iter_mut().enumerate().take(m_cut + 1) {
        if !message
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::Image(_)))
        {
            continue;
        }
        let mut copy = Message::clone(message);
        let mut index = 0;
        copy.content.retain(|block| {
            let keep = !matches!(block, ContentBlock::Image(_)) || (m == m_cut && index > b_cut);
            index += 1;
            keep
        });
        *message = Arc::new(copy);
    }
    Arc::new(out)
}

/// The conversation as requests carry it after microcompaction, kept from
/// request to request: the messages whose form can no longer change stay
/// as they are, and only the rest (the last few turns) is redone, so a
/// long session's request costs what changed, not its length.
#[derive(Clone, Debug, Default)]
pub struct Sent {
    view: Arc<Vec<Arc<Message>>>,
    /// `view[..settled]` is final.
    settled: usize,
}

impl Sent {
    /// The messages of `history` as sent at `turn`, results older than
    /// `after` turns as pointers (`after` 0: as they are). The list is
    /// shared with the request; it is copied only if a request still holds
    /// the last one when the next is built.
    pub fn view(
        &mut self,
        history: &[Arc<Message>],
        meta: &HashMap<CallId, ResultMeta>,
        turn: u32,
        after: u32,
    ) -> Arc<Vec<Arc<Message>>> {
        let settled = self.settled.min(history.len());
        let view = Arc::make_mut(&mut self.view);
        view.truncate(settled);
        let mut still_final = true;
        for (index, message) in history.iter().enumerate().skip(settled) {
            let (changed, last) = if after == 0 {
                (None, message.role == Role::User)
            } else {
                microcompact(message, meta, turn, after)
            };
            // An assistant's message is final once something follows it:
            // its calls are answered, so no edit can change it any more.
            let last = last || (message.role == Role::Assistant && index + 1 < history.len());
            view.push(changed.map_or_else(|| Arc::clone(message), Arc::new));
            still_final &= last;
            if still_final {
                self.settled = index + 1;
            }
        }
        Arc::clone(&self.view)
    }
}

/// A summary standing in for the turns before `until`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compaction {
    /// The index, in the history, of the first message still sent.
    pub until: usize,
    pub summary: String,
}

impl Compaction {
    /// The messages a request carries: the summary leads the first kept
    /// message (a prompt, so the roles still alternate).
    #[must_use]
    pub fn apply(&self, history: &[Arc<Message>]) -> Vec<Arc<Message>> {
        let mut kept = history[self.until.min(history.len())..].to_vec();
        let lead = ContentBlock::Text {
            text: format!(
                "[Summary of the earlier conversation, which was compacted]\n{}",
                self.summary
            ),
        };
        match kept.first_mut() {
            Some(first) if first.role == Role::User => Arc::make_mut(first).content.insert(0, lead),
            _ => kept.insert(
                0,
                Arc::new(Message {
                    role: Role::User,
                    content: vec![lead],
                }),
            ),
        }
        kept
    }
}

/// The instructions of the cheap-tier call that writes a summary.
pub const SUMMARY_PROMPT: &str = "You summarise a coding session between a user and an AI coding agent so the agent can go on without the full transcript. Keep: the user's goals and constraints, decisions made and why, files read or changed (with paths), commands run and their outcomes, errors still open, and what was about to happen next. Drop: pleasantries, repeated output, anything superseded. Write plain prose and short lists, under 600 words.";

/// The transcript of `messages` as the summariser reads it.
#[must_use]
pub fn transcript(messages: &[Arc<Message>], focus: Option<&str>) -> String {
    let mut out = String::new();
    for message in messages {
        let who = match message.role {
            Role::User => "USER",
            Role::Assistant => "AGENT",
        };
        for block in &message.content {
            match block {
                ContentBlock::Text { text } => {
                    out.push_str(&format!("{who}: {text}\n"));
                }
                ContentBlock::Thinking { .. } => {}
                ContentBlock::ToolUse { name, input, .. } => {
                    out.push_str(&format!("AGENT called {name} {input}\n"));
                }
                ContentBlock::ToolResult { content, .. } => {
                    let short: String = content.chars().take(2_000).collect();
                    out.push_str(&format!("RESULT: {short}\n"));
                }
                ContentBlock::Image(image) => {
                    out.push_str(&format!("RESULT: [an image, {}]\n", image.media_type));
                }
                ContentBlock::Server(block) => match &block.step {
                    ServerStep::Searched { query, .. } => {
                        out.push_str(&format!("AGENT searched the web for {query:?}\n"));
                    }
                    ServerStep::Found { results, .. } => {
                        let urls: Vec<&str> = results.iter().map(|s| s.url.as_str()).collect();
                        out.push_str(&format!("FOUND: {}\n", urls.join(" ")));
                    }
                },
            }
        }
    }
    out.push_str("\nSummarise the session above.");
    if let Some(focus) = focus.filter(|f| !f.trim().is_empty()) {
        out.push_str(&format!(" Focus on: {focus}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(n: usize) -> String {
        (1..=n).map(|i| format!("{i}\n")).collect()
    }

    #[test]
    fn a_big_output_is_head_marker_tail() {
        let output = seq(200_000);
        assert_eq!(output.len(), 1_288_895);
        let shown = view(&output, "01J9");
        assert!(shown.len() <= 4 * 1024, "{} bytes", shown.len());
        assert!(shown.starts_with("1\n2\n"));
        assert!(shown.ends_with("199999\n200000\n"));
        assert!(
            shown.contains("[… 1.2 MiB archived; expand #01J9 lines 41–199960]\n"),
            "{shown}"
        );
        assert_eq!(view("small\n", "x"), "small\n");
    }

    #[test]
    fn one_huge_line_keeps_both_ends() {
        let output = "x".repeat(100_000);
        let shown = view(&output, "id");
        assert!(shown.len() < 4 * 1024);
        assert!(shown.contains("expand #id for the whole output"));
    }

    #[test]
    fn dedup_needs_the_same_call_and_output_within_the_window() {
        let mut seen = Seen::default();
        assert_eq!(seen.check("read", "{a}", "A", 1, 8, "id1"), None);
        assert_eq!(
            seen.check("read", "{a}", "A", 3, 8, "id2"),
            Some(("id1".into(), 1))
        );
        assert_eq!(seen.check("read", "{a}", "B", 4, 8, "id3"), None, "changed");
        assert_eq!(
            seen.check("read", "{a}", "B", 20, 8, "id4"),
            None,
            "too old"
        );
        assert_eq!(seen.check("read", "{b}", "B", 20, 8, "id5"), None);
    }

    #[test]
    fn a_request_carries_the_newest_twenty_images() {
        let image = |n: usize| {
            ContentBlock::Image(cox_protocol::types::Image {
                media_type: "image/png".into(),
                data: format!("IMG{n}"),
            })
        };
        let result = ContentBlock::ToolResult {
            tool_use_id: "c".into(),
            content: "[image]".into(),
            is_error: false,
        };
        let few = Arc::new(vec![Arc::new(Message {
            role: Role::User,
            content: vec![result.clone(), image(0)],
        })]);
        assert!(
            Arc::ptr_eq(&image_budget(few.clone()), &few),
            "nothing copied"
        );
        // Three messages of ten images each: the newest twenty stay.
        let many: Vec<Arc<Message>> = (0..3)
            .map(|m| {
                let mut content = vec![result.clone()];
                content.extend((0..10).map(|i| image(m * 10 + i)));
                Arc::new(Message {
                    role: Role::User,
                    content,
                })
            })
            .collect();
        let kept = image_budget(Arc::new(many));
        let names: Vec<String> = kept
            .iter()
            .flat_map(|m| m.content.iter())
            .filter_map(|b| match b {
                ContentBlock::Image(i) => Some(i.data.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(names.len(), REQUEST_IMAGES_MAX);
        assert_eq!(names[0], "IMG10");
        assert_eq!(kept[0].content.len(), 1, "the oldest result keeps its text");
    }

    #[test]
    fn an_old_results_images_are_not_sent_again() {
        let image = |data: &str| {
            ContentBlock::Image(cox_protocol::types::Image {
                media_type: "image/png".into(),
                data: data.into(),
            })
        };
        let result = |id: &str| ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: "[image: image/png, 3 bytes]".into(),
            is_error: false,
        };
        let message = Message {
            role: Role::User,
            content: vec![
                result("old"),
                image("OLD1"),
                image("OLD2"),
                result("new"),
                image("NEW1"),
            ],
        };
        let meta: HashMap<CallId, ResultMeta> = [("old", 1), ("new", 6)]
            .into_iter()
            .map(|(id, turn)| {
                let what = "shot".into();
                let meta = ResultMeta {
                    turn,
                    archive: None,
                    what,
                };
                (CallId::from(id), meta)
            })
            .collect();
        let (sent, last) = microcompact(&message, &meta, 7, 6);
        assert!(!last);
        let sent = sent.expect("the old images went");
        assert_eq!(
            sent.content,
            vec![result("old"), result("new"), image("NEW1")],
            "the old result's text stays, naming its images"
        );
        // Nothing old: nothing changes.
        let (sent, _) = microcompact(&message, &meta, 2, 6);
        assert!(sent.is_none());
    }

    #[test]
    fn old_results_become_pointers_and_new_ones_stay() {
        let result = |id: &str, text: &str| ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: text.into(),
            is_error: false,
        };
        let message = Message {
            role: Role::User,
            content: vec![
                result("old", &"o".repeat(500)),
                result("new", &"n".repeat(500)),
            ],
        };
        let meta: HashMap<CallId, ResultMeta> = [("old", 1), ("new", 6)]
            .into_iter()
            .map(|(id, turn)| {
                (
                    CallId::from(id),
                    ResultMeta {
                        turn,
                        archive: Some(format!("A{id}")),
                        what: "read a.rs".into(),
                    },
                )
            })
            .collect();
        let (sent, last) = microcompact(&message, &meta, 7, 6);
        assert!(!last, "the new result will come of age later");
        let sent = sent.expect("the old result changed");
        let ContentBlock::ToolResult { content, .. } = &sent.content[0] else {
            panic!()
        };
        assert_eq!(
            content,
            "[read a.rs: output from turn 1 archived as #Aold; expand #Aold to read it again]"
        );
        let ContentBlock::ToolResult { content, .. } = &sent.content[1] else {
            panic!()
        };
        assert_eq!(content.len(), 500);

        // Once both are old the form is final, and kept: a later view is
        // the same message, not a new copy.
        let history = vec![Arc::new(message)];
        let mut kept = Sent::default();
        let first = kept.view(&history, &meta, 20, 6)[0].clone();
        let again = kept.view(&history, &meta, 21, 6)[0].clone();
        assert!(Arc::ptr_eq(&first, &again));
        assert!(!Arc::ptr_eq(&first, &history[0]), "a rewritten copy");
        let (_, last) = microcompact(&history[0], &meta, 20, 6);
        assert!(last);
    }

    #[test]
    fn the_sent_list_redoes_only_what_may_still_change() {
        let call = |n: u32| {
            Arc::new(Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: "c".into(),
                    name: "read".into(),
                    input: serde_json::json!({ "n": n }),
                }],
            })
        };
        let none = HashMap::new();
        let mut history = vec![Arc::new(Message::user_text("p")), call(1)];
        let mut sent = Sent::default();
        let first = sent.view(&history, &none, 1, 0);
        assert_eq!(sent.settled, 1, "the last call may still be edited");
        drop(first);
        // A person edits the call before it runs: the next request has it.
        history[1] = call(2);
        let second = sent.view(&history, &none, 1, 0);
        assert!(Arc::ptr_eq(&second[1], &history[1]));
        history.push(Arc::new(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "c".into(),
                content: "r".into(),
                is_error: false,
            }],
        }));
        let third = sent.view(&history, &none, 1, 0);
        assert_eq!(sent.settled, 3, "answered, so final");
        assert_eq!(third.len(), 3);
        assert_eq!(
            second.len(),
            2,
            "a list a request still holds is not changed under it"
        );
        drop((second, third));
        history.push(Arc::new(Message::user_text("q")));
        let fourth = sent.view(&history, &none, 2, 0);
        assert_eq!(fourth.len(), 4);
        assert!(Arc::ptr_eq(&fourth[0], &history[0]));
    }

    #[test]
    fn a_compaction_leads_the_first_kept_prompt() {
        let history = vec![
            Arc::new(Message::user_text("one")),
            Arc::new(Message {
                role: Role::Assistant,
                content: vec![ContentBlock::Text { text: "1".into() }],
            }),
            Arc::new(Message::user_text("two")),
        ];
        let sent = Compaction {
            until: 2,
            summary: "we did one".into(),
        }
        .apply(&history);
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].content.len(), 2);
        let ContentBlock::Text { text } = &sent[0].content[0] else {
            panic!()
        };
        assert!(text.ends_with("we did one"));
    }
}
