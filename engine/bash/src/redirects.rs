//! Redirects as bash reads them, for the walk.
//!
//! tree-sitter-bash files the words after a redirect as extra targets
//! (`nohup 2>/dev/null rm x`), as arguments of a heredoc (`<<EOF rm x`),
//! or hangs a redirect on a whole pipeline or list (`echo | nohup
//! 2>/dev/null rm x`). This module gives those words back to the simple
//! command they belong to, reads descriptor numbers and `{name}` glued to a
//! redirect (`0</x`, `{fd}>x`) as descriptors, and notes each redirect's
//! target as a path read or written and, when it writes a file, as a
//! reason the line is opaque.

use tree_sitter::Node;

use crate::paths::{Access, PathArg};
use crate::rules::redirect_opacity;
use crate::syntax::{Field, Kind, children, field_child, kind};
use crate::walk::{Walk, Words, is_identifier};
use crate::words::{Word, node_text};
use crate::{MAX_TREE_DEPTH, Opacity};

/// Two inputs fed to one command, as one text to judge (each on lines of
/// its own).
fn joined(before: Option<String>, more: Option<String>) -> Option<String> {
    match (before, more) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
    }
}

/// What follows a simple command in a redirected statement.
#[derive(Default)]
pub(crate) struct Tail {
    /// Words tree-sitter filed under the statement's redirects, with where
    /// they start and end.
    pub(crate) words: Vec<(Word, usize, usize)>,
    /// Where the statement's first redirect starts.
    pub(crate) redirect: Option<usize>,
    /// What a here-string or heredoc of the statement feeds the command.
    pub(crate) stdin: Option<String>,
}

impl Walk<'_> {
    /// Drops the last word read when it is the descriptor of a redirect
    /// starting at `at`: digits or `{name}` right before it, with nothing
    /// between. `{name}` makes bash assign the new descriptor to `name`.
    pub(crate) fn descriptor(&mut self, words: &mut Words, at: usize) {
        let Some((word, end)) = words.last() else {
            return;
        };
        if end != at {
            return;
        }
        if let Some(fd) = descriptor(word) {
            if let Some(name) = fd {
                self.sink.opaque(Opacity::Assignment(name));
            }
            words.pop();
        }
    }

    /// A statement with redirects after it. Bash reads every word after a
    /// redirect's target as an argument of the command (`nohup 2>/dev/null
    /// rm x` runs `rm x`), but tree-sitter files such words as extra
    /// targets of the redirect (`2>/dev/null rm x`), as arguments of a
    /// heredoc (`<<EOF rm x`), or hangs the redirect on a whole pipeline or
    /// list (`echo | nohup 2>/dev/null rm x`), so they go back to the
    /// simple command they belong to: the body, or the last command of a
    /// pipeline or list body. Words after a redirect of a compound command
    /// (`(a) >x b`) are a syntax error to bash: the line is a parse error
    /// and they are judged as a command of their own. A here-string or
    /// heredoc body is the command's standard input.
    pub(crate) fn redirected(&mut self, node: Node<'_>, depth: usize) {
        let mut extra = Vec::new();
        // What a pipe feeds the statement reaches its body's first
        // command; a heredoc or here-string of the statement, its last.
        let incoming = self.stdin.take();
        let mut stdin = None;
        let mut first_redirect = None;
        for (child, field) in children(node) {
            if field == Field::Body {
                continue;
            }
            first_redirect.get_or_insert(child.start_byte());
            if is_redirect(child)
                && let Some((word, _, end)) = extra.last()
                && *end == child.start_byte()
                && let Some(fd) = descriptor(word)
            {
                if let Some(name) = fd {
                    self.sink.opaque(Opacity::Assignment(name));
                }
                extra.pop();
            }
            match kind(child) {
                Kind::FileRedirect => extra.extend(self.redirect_words(child)),
                // Several of them: bash reads the last, and which one that is
                // depends on an order tree-sitter does not keep (a heredoc's
                // body comes after the line), so every one is read.
                Kind::HerestringRedirect => {
                    let fed = child
                        .named_child(0)
                        .map(|w| Word::from_node(w, self.src).loose);
                    stdin = joined(stdin, fed);
                }
                Kind::HeredocRedirect => {
                    extra.extend(self.redirect_words(child));
                    let fed = children(child)
                        .find(|(c, _)| kind(*c) == Kind::HeredocBody)
                        .map(|(body, _)| node_text(body, self.src).to_owned());
                    stdin = joined(stdin, fed);
                    // tree-sitter files redirects written after a heredoc's
                    // start under the heredoc (`<<EOF <<<'make'`).
                    for (nested, _) in children(child) {
                        if kind(nested) == Kind::HerestringRedirect {
                            let fed = nested
                                .named_child(0)
                                .map(|w| Word::from_node(w, self.src).loose);
                            stdin = joined(stdin, fed);
                        }
                    }
                }
                _ => {}
            }
        }
        let body = field_child(node, Field::Body);
        let owner = body.and_then(last_simple_command);
        let mut orphans = Vec::new();
        if owner.is_none() && !extra.is_empty() {
            self.sink.opaque(Opacity::ParseError);
            orphans = extra.drain(..).map(|(word, _, _)| word).collect();
        }
        let same = matches!((body, owner), (Some(b), Some(o)) if b.id() == o.id());
        let tail = Tail {
            words: extra,
            redirect: first_redirect,
            stdin: if same {
                stdin.take().or(incoming.clone())
            } else {
                stdin.take()
            },
        };
        match (body, owner) {
            (Some(body), Some(_)) if same => {
                self.command(body, Some(tail), depth + 1);
            }
            (Some(body), Some(owner)) => {
                // A stack: a statement nested in this body (`a 2>&1 | b
                // 2>&1 | c <<EOF`) has a tail of its own.
                self.tails.push((owner.id(), tail));
                let height = self.tails.len();
                self.stdin = incoming;
                self.node(body, depth + 1);
                self.stdin = None;
                self.tails.truncate(height - 1);
            }
            (Some(body), None) => {
                self.stdin = incoming;
                self.node(body, depth + 1);
                self.stdin = None;
            }
            (None, _) => {}
        }
        self.judge(&orphans, depth + 1);
        for (child, field) in children(node) {
            if field != Field::Body {
                self.node(child, depth + 1);
            }
        }
    }

    /// The words a redirect node holds that bash reads as arguments of the
    /// command: every target of a file redirect after the first (all of
    /// them after a close, `2>&-`), and the words after a heredoc's
    /// delimiter on its line.
    pub(crate) fn redirect_words(&self, node: Node<'_>) -> Vec<(Word, usize, usize)> {
        let heredoc = kind(node) == Kind::HeredocRedirect;
        if heredoc {
            // After the delimiter: words, and redirects tree-sitter nests
            // here (`<<EOF >&2 rm`) with words of their own.
            let mut out = Vec::new();
            for (child, field) in children(node) {
                if field == Field::Argument {
                    let word = Word::from_node(child, self.src);
                    out.push((word, child.start_byte(), child.end_byte()));
                } else if kind(child) == Kind::FileRedirect {
                    out.extend(self.redirect_words(child));
                }
            }
            return out;
        }
        let closes = children(node)
            .any(|(c, _)| !c.is_named() && matches!(node_text(c, self.src), ">&-" | "<&-"));
        let skip = usize::from(!heredoc && !closes);
        children(node)
            .filter(|(child, field)| {
                if heredoc {
                    *field == Field::Argument
                } else {
                    *field == Field::Destination && child.is_named()
                }
            })
            .skip(skip)
            .map(|(child, _)| {
                let word = Word::from_node(child, self.src);
                (word, child.start_byte(), child.end_byte())
            })
            .collect()
    }

    /// A redirect: an output redirect to a file makes the line opaque.
    pub(crate) fn redirect(&mut self, node: Node<'_>, depth: usize) {
        let mut operator = "";
        let mut target = None;
        for (child, field) in children(node) {
            if field == Field::Destination && target.is_none() {
                target = Some(Word::from_node(child, self.src));
            } else if !child.is_named() && operator.is_empty() {
                operator = node_text(child, self.src);
            }
        }
        if let Some(word) = &target
            && !(matches!(operator, ">&" | "<&") && word.lit().is_some_and(is_fd))
        {
            let access = if operator.contains('>') {
                Access::Write
            } else {
                Access::Read
            };
            self.sink.paths.extend(PathArg::redirect(word, access));
        }
        if let Some(reason) = redirect_opacity(operator, target) {
            self.sink.opaque(reason);
        }
        self.children(node, depth);
    }
}

/// Whether a node is a redirect of a command.
pub(crate) fn is_redirect(node: Node<'_>) -> bool {
    matches!(
        kind(node),
        Kind::FileRedirect | Kind::HerestringRedirect | Kind::HeredocRedirect
    )
}

/// The simple command a redirect after `node` belongs to: `node` itself,
/// or the last command of a pipeline or list; `None` for a compound
/// command (a subshell, a loop, a group).
fn last_simple_command(node: Node<'_>) -> Option<Node<'_>> {
    let mut node = node;
    for _ in 0..MAX_TREE_DEPTH {
        match kind(node) {
            Kind::Command => return Some(node),
            Kind::Pipeline | Kind::List => {
                let count = node.named_child_count();
                node = node.named_child(u32::try_from(count.checked_sub(1)?).ok()?)?;
            }
            Kind::RedirectedStatement => node = field_child(node, Field::Body)?,
            Kind::NegatedCommand => node = node.named_child(0)?,
            _ => return None,
        }
    }
    None
}

/// Whether a word glued to a redirect after it is that redirect's
/// descriptor: `Some(None)` for digits, `Some(Some(name))` for `{name}`.
fn descriptor(word: &Word) -> Option<Option<String>> {
    let value = word.lit()?;
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return Some(None);
    }
    let name = value.strip_prefix('{')?.strip_suffix('}')?;
    (is_identifier(name) && word.raw == value).then(|| Some(name.to_owned()))
}

/// A descriptor number, or `-` (a close), as a duplication's target.
fn is_fd(value: &str) -> bool {
    value == "-" || (!value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()))
}
