//! The passages of a page that best match a prompt, so a `prompt` has an
//! effect without a model call.
//!
//! A passage is a paragraph of the markdown (text between blank lines), a
//! heading joined to the paragraph under it. A passage scores by how many
//! of the prompt's words it holds (case-insensitive, a word matching
//! another it begins, such as `install` and `installation`, when the
//! shorter has four letters or more), then by how often it holds them.
//! Common words of a question ("how", "the") do not count. Pure and
//! linear in the page.

/// The most passages shown.
const MAX_PASSAGES: usize = 5;

/// The most bytes of one passage shown.
const MAX_PASSAGE_BYTES: usize = 1200;

/// How often one word counts in one passage, at most.
const MAX_COUNT: usize = 5;

/// Words a prompt is made of that say nothing of what is looked for.
const STOP_WORDS: [&str; 50] = [
    "a", "about", "all", "an", "and", "any", "are", "as", "at", "be", "by", "can", "do", "does",
    "find", "for", "from", "get", "give", "how", "i", "in", "into", "is", "it", "its", "me", "my",
    "of", "on", "or", "page", "say", "says", "show", "tell", "that", "the", "there", "this", "to",
    "was", "what", "when", "where", "which", "who", "why", "with", "you",
];

/// The passages of `markdown` that best match `prompt`, best first, their
/// bytes at most `budget` together; empty when none holds a word of it.
/// The most distinct words of a prompt the passages are scored by.
const MAX_TERMS: usize = 32;

pub(crate) fn best(markdown: &str, prompt: &str, budget: usize) -> Vec<String> {
    let mut terms: Vec<String> = words(prompt)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .collect();
    terms.sort();
    terms.dedup();
    // Each page word is compared with each term: a prompt of thousands of
    // words must not make the page's size a product.
    terms.truncate(MAX_TERMS);
    if terms.is_empty() {
        return Vec::new();
    }
    let passages = split(markdown);
    let mut scored: Vec<(usize, usize, usize)> = passages
        .iter()
        .enumerate()
        .filter_map(|(index, passage)| {
            let mut counts = vec![0usize; terms.len()];
            for word in words(passage) {
                for (term, count) in terms.iter().zip(counts.iter_mut()) {
                    if matches(term, &word) {
                        *count += 1;
                    }
                }
            }
            let distinct = counts.iter().filter(|&&c| c > 0).count();
            let total = counts.iter().map(|&c| c.min(MAX_COUNT)).sum();
            (distinct > 0).then_some((distinct, total, index))
        })
        .collect();
    // Most words, then most matches, then the earliest.
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    let mut shown = Vec::new();
    let mut used = 0;
    for (_, _, index) in scored.into_iter().take(MAX_PASSAGES) {
        let passage = clip(passages[index], MAX_PASSAGE_BYTES.min(budget - used));
        if passage.is_empty() {
            break;
        }
        used += passage.len();
        shown.push(passage);
        if used >= budget {
            break;
        }
    }
    shown
}

/// The passages of `markdown`, in order.
fn split(markdown: &str) -> Vec<&str> {
    let mut passages: Vec<&str> = Vec::new();
    let mut start: Option<usize> = None;
    let mut heading_open = false;
    let mut at = 0;
    for line in markdown.split_inclusive('\n') {
        let blank = line.trim().is_empty();
        match (blank, start) {
            (false, None) => {
                start = Some(at);
                heading_open = line.trim_start().starts_with('#');
            }
            (true, Some(from)) if !heading_open => {
                passages.push(markdown[from..at].trim());
                start = None;
            }
            (false, Some(_)) => heading_open = heading_open && line.trim_start().starts_with('#'),
            _ => {}
        }
        at += line.len();
    }
    if let Some(from) = start {
        passages.push(markdown[from..].trim());
    }
    passages.retain(|p| !p.is_empty());
    passages
}

/// The lower-cased words of `text`.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// Whether the prompt's `term` matches a page's `word`.
fn matches(term: &str, word: &str) -> bool {
    let (short, long) = if term.len() <= word.len() {
        (term, word)
    } else {
        (word, term)
    };
    short == long || (short.chars().count() >= 4 && long.starts_with(short))
}

/// `text` within `max` bytes, cut at a character with `…` when longer.
fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if end == 0 {
        return String::new();
    }
    format!("{}…", &text[..end])
}
