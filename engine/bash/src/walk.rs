//! The walk over tree-sitter-bash's syntax tree.
//!
//! Every node is visited (up to [`MAX_TREE_DEPTH`] levels), so a command
//! nested in any construct is found; the few kinds that matter get their
//! own handling: simple commands (handed to the wrappers), assignments,
//! declarations, substitutions, redirects and test commands. Everything
//! else, loops, conditionals, lists, pipelines, subshells, function
//! definitions, heredocs, is walked child by child.
//!
//! A plain line skips the tree (see `fast`); its words go to the same
//! wrapper code. The walk notes where the tree found substitutions, so the
//! scan after it (see `scan`) can find those the tree missed, and what the
//! command being judged reads on its standard input (a here-string, a
//! heredoc body, a literal `echo` piped in), so a shell reading it can be
//! parsed again.
//!
//! The walk collects into a [`Sink`], which a nested shell string (`sh -c`,
//! `eval`) shares with the line it came from: its commands are appended and
//! the first opacity reason wins.

use tree_sitter::Node;

use crate::git;
use crate::paths::{self, PathArg};
use crate::redirects::{Tail, is_redirect};
use crate::risk::classify;
use crate::rules::{echoed, evaluating_test, is_locale, may_matter};
use crate::scan::assigned_name;
use crate::sink::Sink;
use crate::source::walk_source;
use crate::syntax::{Field, Kind, children, field_child, kind};
use crate::words::{Word, basename, collapse_whitespace, node_text};
use crate::{Command, MAX_TREE_DEPTH, Opacity};

/// One walk over one source text.
pub(crate) struct Walk<'a> {
    pub sink: &'a mut Sink,
    pub src: &'a str,
    pub shell_depth: usize,
    /// Where the tree found `$(`, backticks, `<(`/`>(` (their first byte).
    pub seen: Vec<usize>,
    /// Where the tree found `$((…))` or `$[…]`.
    pub arithmetic: Vec<usize>,
    /// The text of subtrees not walked for being too deep; the line is
    /// opaque, and the scan does not look into them either.
    pub unwalked: Vec<std::ops::Range<usize>>,
    /// Words that tree-sitter started with a newline (`ls` newline `\rm`
    /// parses as `ls \rm`); each one the walk splits off is removed, and
    /// any left over make the line a parse error.
    pub glued: std::collections::HashSet<usize>,
    /// What the command being judged reads on its standard input, when it
    /// is known text: a here-string, a heredoc body, or `echo`'s words
    /// piped in. A shell reading it runs it.
    pub stdin: Option<String>,
    /// The program of the command before this one in a pipeline, when
    /// the command being judged reads its output.
    pub piped_from: Option<String>,
    /// Words redirected pipelines or lists left for their last simple
    /// commands, by those commands' node ids (see [`Walk::redirected`]).
    pub(crate) tails: Vec<(usize, Tail)>,
}

/// A simple command's words as they are read, in groups split where bash
/// ends a command (an unescaped newline tree-sitter did not see).
#[derive(Default)]
pub(crate) struct Words {
    groups: Vec<Vec<Word>>,
    current: Vec<Word>,
    /// Where the last word read ends.
    last_end: Option<usize>,
}

impl Words {
    /// Adds a word that starts at `start` and ends at `end` in `src`.
    pub(crate) fn add(&mut self, src: &str, word: Word, start: usize, end: usize) {
        let gap = self.last_end.and_then(|last| src.get(last..start));
        self.last_end = Some(end);
        match gap {
            Some(gap) if ends_a_command(gap) && !self.current.is_empty() => {
                self.groups.push(std::mem::take(&mut self.current));
            }
            Some(gap) if is_continuations(gap) => {
                if let Some(last) = self.current.last_mut() {
                    last.join(word);
                    return;
                }
            }
            _ => {}
        }
        self.current.push(word);
    }

    /// The last word read and where it ends.
    pub(crate) fn last(&self) -> Option<(&Word, usize)> {
        Some((self.current.last()?, self.last_end?))
    }

    /// Forgets the last word read.
    pub(crate) fn pop(&mut self) {
        self.current.pop();
    }

    pub(crate) fn finish(mut self) -> Vec<Vec<Word>> {
        self.groups.push(self.current);
        self.groups
    }
}

impl Walk<'_> {
    /// Walks a shell string found in this source: a new parse, one level
    /// deeper, into the same sink.
    pub(crate) fn nested(&mut self, script: &str, tree_depth: usize) {
        walk_source(self.sink, script, self.shell_depth + 1, tree_depth);
    }

    /// A walk over `src` into `sink`.
    pub(crate) fn new<'s>(sink: &'s mut Sink, src: &'s str, shell_depth: usize) -> Walk<'s> {
        Walk {
            sink,
            src,
            shell_depth,
            seen: Vec::new(),
            arithmetic: Vec::new(),
            unwalked: Vec::new(),
            glued: std::collections::HashSet::new(),
            stdin: None,
            piped_from: None,
            tails: Vec::new(),
        }
    }

    /// Lists a command from its words (wrappers already stripped). Its
    /// text is its words' values joined by single spaces: quotes removed
    /// from plain literals (`rm '-rf' y` reads `rm -rf y`), a word with an
    /// expansion as written, an empty literal left out.
    pub(crate) fn push(&mut self, words: &[Word]) {
        let Some((name, _)) = words.split_first() else {
            return;
        };
        // git's global options (`git -C . push`, `git --no-pager log`) are
        // left out of the text rules match, so `Bash(git push:*)` sees the
        // subcommand; `-c` and `--exec-path=` make the line opaque (see
        // `inline`). Past an option git does not have, nothing is left out:
        // git refuses such a line and runs no subcommand.
        let skip = if name.lit().map(basename) == Some("git") {
            let args: Vec<Option<&str>> = words[1..].iter().map(Word::lit).collect();
            git::subcommand_index(&args).unwrap_or(0)
        } else {
            0
        };
        let mut text = String::new();
        for (i, word) in words.iter().enumerate() {
            if (1..=skip).contains(&i) {
                continue;
            }
            let value = match word.lit() {
                Some(value) if i == 0 && (value.is_empty() || name.pattern) => word.raw.as_str(),
                Some(value) => value,
                None => word.raw.as_str(),
            };
            if value.is_empty() {
                continue;
            }
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(value);
        }
        if text.is_empty() {
            return;
        }
        // After a `--`, no argument is an option.
        let dynamic = words
            .iter()
            .skip(1)
            .take_while(|w| w.lit() != Some("--"))
            .any(Word::may_become_option);
        self.sink.unfollowed.extend(program_options(words));
        let mut named = paths::of_command(words, &self.sink.vars);
        if std::mem::take(&mut self.sink.from_input) {
            // `xargs cat`: what it reads comes from its standard input.
            named.push(PathArg::from_input());
        }
        self.sink.paths.extend(named);
        if matches!(name.lit().map(basename), Some("cd" | "pushd" | "popd")) {
            self.sink.dirs.push(cd_target(words));
        }
        let words: Vec<String> = words.iter().map(|w| w.value().to_owned()).collect();
        let risk = classify(&words, dynamic);
        self.sink.commands.push(Command { text, words, risk });
    }

    pub(crate) fn node(&mut self, node: Node<'_>, depth: usize) {
        if depth > MAX_TREE_DEPTH {
            self.sink.opaque(Opacity::TooDeep);
            self.unwalked.push(node.byte_range());
            return;
        }
        if node.is_missing() {
            self.sink.opaque(Opacity::ParseError);
            return;
        }
        match kind(node) {
            Kind::Command => self.command(node, None, depth),
            Kind::List => self.list(node, depth),
            Kind::Pipeline => self.pipeline(node, depth),
            Kind::RedirectedStatement => self.redirected(node, depth),
            Kind::VariableAssignment => self.assignment(node, depth, true),
            Kind::Declaration | Kind::Unset => self.declaration(node, depth),
            Kind::CommandSubstitution => {
                let backticks = node.child(0).is_some_and(|c| kind(c) == Kind::Backtick);
                // tree-sitter can run two backtick substitutions into one
                // (`` `a x` `b y` ``): an unescaped backtick inside means
                // the tree is wrong. The scan then parses each one itself,
                // and the whole line is scanned for names.
                let text = node_text(node, self.src);
                let merged = backticks
                    && text
                        .get(1..text.len().saturating_sub(1))
                        .is_some_and(has_unescaped_backtick);
                if merged {
                    self.sink.opaque(Opacity::ParseError);
                } else {
                    self.seen.push(node.start_byte());
                }
                self.sink.opaque(if backticks {
                    Opacity::Backticks
                } else {
                    Opacity::CommandSubstitution
                });
                self.children(node, depth);
            }
            Kind::ProcessSubstitution => {
                self.seen.push(node.start_byte());
                self.sink.opaque(Opacity::ProcessSubstitution);
                self.children(node, depth);
            }
            Kind::ArithmeticExpansion => {
                self.arithmetic.push(node.start_byte());
                self.children(node, depth);
            }
            Kind::FileRedirect => self.redirect(node, depth),
            Kind::TestCommand => self.test_command(node, depth),
            Kind::ForStatement => {
                if let Some(variable) = field_child(node, Field::Variable) {
                    let name = node_text(variable, self.src);
                    if may_matter(name) {
                        self.sink.opaque(Opacity::Assignment(name.to_owned()));
                    }
                    let mut values = 0;
                    for (child, field) in children(node) {
                        if field == Field::Value {
                            // A glob is kept as written: a path may be one.
                            let word = Word::from_node(child, self.src);
                            self.sink.vars.assign(name, word.lit());
                            values += 1;
                        }
                    }
                    if values == 0 {
                        // `for x; do` loops over the arguments.
                        self.sink.vars.assign(name, None);
                    }
                }
                // The loop variable holds data unless every value is a
                // plain literal without a glob or an array subscript.
                let data = children(node).any(|(child, field)| {
                    field == Field::Value && {
                        let word = Word::from_node(child, self.src);
                        word.pattern || word.lit().is_none_or(|v| v.contains(['[', '$', '`']))
                    }
                });
                self.sink.data_vars |= data || field_child(node, Field::Value).is_none();
                self.children(node, depth);
            }
            Kind::CStyleFor => {
                // `for ((i = 0; …))`: judged like `read`'s targets.
                for (child, _) in children(node) {
                    if kind(child) == Kind::VariableAssignment {
                        self.assignment(child, depth + 1, false);
                    } else {
                        self.node(child, depth + 1);
                    }
                }
            }
            Kind::Comment => {}
            // `<< EOF; rm`: bash ends the delimiter at the `;`, tree-sitter
            // keeps it in, and files `rm` as an argument. A delimiter with
            // an unquoted operator in it means the tree is wrong.
            Kind::HeredocStart => {
                let text = node_text(node, self.src);
                let unquoted = !text.starts_with(['\'', '"']);
                if unquoted && text.contains([';', '&', '|', '(', ')', '<', '>']) {
                    self.sink.opaque(Opacity::ParseError);
                }
            }
            _ => self.children(node, depth),
        }
    }

    pub(crate) fn children(&mut self, node: Node<'_>, depth: usize) {
        for (child, _) in children(node) {
            self.node(child, depth + 1);
        }
    }

    /// `a && b || c` nests to the left, one level per operator; the chain
    /// is walked without descending once per operator, so a long chain
    /// does not run into [`MAX_TREE_DEPTH`].
    fn list(&mut self, node: Node<'_>, depth: usize) {
        let mut parts = Vec::new();
        let mut head = node;
        loop {
            let mut items: Vec<Node<'_>> = children(head).map(|(child, _)| child).collect();
            match items.first() {
                Some(first) if kind(*first) == Kind::List => {
                    head = *first;
                    items.remove(0);
                    parts.push(items);
                }
                _ => {
                    parts.push(items);
                    break;
                }
            }
        }
        for child in parts.into_iter().rev().flatten() {
            self.node(child, depth + 1);
        }
    }

    /// A pipeline: what a literal `echo` or `printf` writes is the next
    /// command's standard input (`echo 'rm x' | sh`).
    fn pipeline(&mut self, node: Node<'_>, depth: usize) {
        // What reaches this pipeline (tree-sitter nests `a | b && c` as a
        // pipeline holding a list) is its first command's input.
        let mut feed = self.stdin.take();
        let mut producer: Option<String> = self.piped_from.take();
        for (child, _) in children(node) {
            if !child.is_named() {
                // `|`, `|&`.
                self.node(child, depth + 1);
            } else if let Some(command) = simple_or_negated(child) {
                self.stdin = feed.take();
                self.piped_from = producer.take();
                if command.id() == child.id() {
                    self.command(child, None, depth + 1);
                } else {
                    self.node(child, depth + 1);
                }
                self.stdin = None;
                self.piped_from = None;
                let words: Vec<Word> = children(command)
                    .filter(|(_, field)| matches!(field, Field::Name | Field::Argument))
                    .map(|(word, _)| Word::from_node(word, self.src))
                    .collect();
                feed = echoed(&words);
                producer = words
                    .first()
                    .and_then(Word::lit)
                    .map(|n| basename(n).to_owned());
            } else {
                self.stdin = feed.take();
                self.node(child, depth + 1);
                self.stdin = None;
            }
        }
    }

    /// A simple command: leading assignments, name, arguments, redirects.
    /// `tail` holds what follows it in a redirected statement: words
    /// tree-sitter filed under a redirect, and where the first redirect
    /// starts (see [`Walk::redirected`]). The command's standard input, if
    /// known, is in `self.stdin`.
    ///
    /// A digit string or `{name}` glued to the redirect after it (`0</x`,
    /// `{fd}>x`) is that redirect's descriptor, not a word, although
    /// tree-sitter may file it as an argument; `{name}` assigns the
    /// descriptor's number to the variable. Words tree-sitter filed under
    /// a redirect inside the command are put back where they stand.
    ///
    /// tree-sitter-bash sometimes files the first word of the next line as
    /// an argument (`a | b | c` newline `d && e` parses `c d` as one
    /// command, and `ls` newline `\rm x` parses `ls \rm x`). Bash ends a
    /// simple command at an unescaped newline, so the words are split there
    /// again. Two words with only line continuations between them (`r\`
    /// newline `m`) are one word to bash, and are joined.
    pub(crate) fn command(&mut self, node: Node<'_>, tail: Option<Tail>, depth: usize) {
        let tail = match tail {
            Some(tail) => tail,
            None => match self.tails.iter().position(|(owner, _)| *owner == node.id()) {
                Some(at) => std::mem::take(&mut self.tails[at].1),
                None => Tail::default(),
            },
        };
        let piped = self.stdin.take();
        // A heredoc or here-string of the statement wins over a pipe.
        let piped = tail.stdin.clone().or(piped);
        let mut words = Words::default();
        let mut rest = Vec::new();
        let mut herestring: Option<(usize, String)> = None;
        for (child, field) in children(node) {
            if matches!(field, Field::Name | Field::Argument) {
                let (word, start) = self.word_at(child);
                words.add(self.src, word, start, child.end_byte());
            } else if kind(child) == Kind::VariableAssignment {
                let name = field_child(child, Field::Name)
                    .map(|n| node_text(n, self.src))
                    .unwrap_or_default();
                if !is_locale(name) {
                    self.sink.opaque(Opacity::Assignment(name.to_owned()));
                    // `GIT_EXTERNAL_DIFF=rm git diff`, `PAGER='rm x' …`.
                    if let Some(value) = field_child(child, Field::Value) {
                        let value = Word::from_node(value, self.src).loose;
                        self.sink.unfollowed.push(value);
                    }
                }
                if matches!(name, "PS0" | "PS1" | "PS2" | "PS4" | "PROMPT_COMMAND") {
                    self.sink.dynamic = true;
                }
            } else {
                if is_redirect(child) {
                    self.descriptor(&mut words, child.start_byte());
                }
                match kind(child) {
                    Kind::HerestringRedirect => {
                        let script = child
                            .named_child(0)
                            .map(|w| Word::from_node(w, self.src).loose);
                        // Several: bash reads the last; all are parsed.
                        herestring = match (herestring.take(), script) {
                            (Some((at, before)), Some(s)) => Some((at, format!("{before}\n{s}"))),
                            (before, None) => before,
                            (None, Some(s)) => Some((words.groups.len(), s)),
                        };
                    }
                    Kind::FileRedirect | Kind::HeredocRedirect => {
                        for (word, start, end) in self.redirect_words(child) {
                            words.add(self.src, word, start, end);
                        }
                    }
                    _ => {}
                }
            }
            rest.push(child);
        }
        if let Some(at) = tail.redirect {
            self.descriptor(&mut words, at);
        }
        for (word, start, end) in tail.words {
            words.add(self.src, word, start, end);
        }
        let mut groups = words.finish();
        // Assignments tree-sitter filed under a redirect
        // (`0</dev/null B='x y' head`) are still assignments to bash: they
        // come before the command's name.
        for group in &mut groups {
            let leading = group
                .iter()
                .take_while(|w| assignment_name(&w.raw).is_some())
                .count();
            for word in group.drain(..leading) {
                let name = assignment_name(&word.raw).unwrap_or_default();
                if !is_locale(name) {
                    self.sink.opaque(Opacity::Assignment(name.to_owned()));
                    self.sink.unfollowed.push(word.loose.clone());
                }
            }
        }
        let depth = depth + 1;
        for (i, words) in groups.iter().enumerate() {
            // With several (a here-string and a heredoc), bash reads the
            // last; both are parsed, which can only find more.
            self.stdin = match &herestring {
                Some((at, script)) if *at == i => Some(match (&piped, i) {
                    (Some(other), 0) => format!("{script}\n{other}"),
                    _ => script.clone(),
                }),
                _ if i == 0 => piped.clone(),
                _ => None,
            };
            self.judge(words, depth);
        }
        self.stdin = None;
        // Substitutions inside the words, assignment values and redirects.
        for child in rest {
            if kind(child) == Kind::VariableAssignment {
                if let Some(value) = field_child(child, Field::Value) {
                    self.node(value, depth + 1);
                }
            } else {
                self.node(child, depth);
            }
        }
    }

    /// A word node as a [`Word`] and where the word really starts: a word
    /// tree-sitter began with blanks (`ls` newline `\rm`) starts after
    /// them, and counts as handled (see `glued`).
    fn word_at(&mut self, node: Node<'_>) -> (Word, usize) {
        let text = node_text(node, self.src);
        let lead = text.len() - text.trim_start_matches([' ', '\t', '\n']).len();
        if lead > 0 {
            self.glued.remove(&node.start_byte());
        }
        (Word::from_node(node, self.src), node.start_byte() + lead)
    }

    /// An assignment standing alone (`FOO=1`, `strict`: always opaque unless
    /// it is a locale one) or in an arithmetic `for` (judged by
    /// [`may_matter`]).
    fn assignment(&mut self, node: Node<'_>, depth: usize, strict: bool) {
        let name = field_child(node, Field::Name)
            .map(|n| node_text(n, self.src))
            .unwrap_or_default();
        let opaque = if strict {
            !is_locale(name)
        } else {
            may_matter(name)
        };
        if opaque {
            self.sink.opaque(Opacity::Assignment(name.to_owned()));
        }
        // Prompt strings are expanded again (`PS4` under `set -x`), and
        // their command substitutions run.
        if matches!(
            name,
            "PS0" | "PS1" | "PS2" | "PS3" | "PS4" | "PROMPT_COMMAND"
        ) {
            self.sink.dynamic = true;
        }
        if let Some(value) = field_child(node, Field::Value) {
            let word = Word::from_node(value, self.src);
            if !is_locale(name) {
                // A value may name a program something runs
                // (`GIT_EXTERNAL_DIFF=rm`): deny rules see its words.
                self.sink.unfollowed.push(word.loose.clone());
            }
            self.sink.vars.assign(name, word.lit());
            self.node(value, depth + 1);
        } else {
            self.sink.vars.assign(name, Some(""));
        }
    }

    /// `export`, `declare`, `typeset`, `local`, `readonly`, `unset`: listed,
    /// and the line is opaque. Words after a newline tree-sitter glued on
    /// (`export A` newline `\rm x`) are a command of their own.
    fn declaration(&mut self, node: Node<'_>, depth: usize) {
        let keyword = node
            .child(0)
            .map(|k| node_text(k, self.src))
            .unwrap_or_default();
        self.sink.opaque(Opacity::Export(keyword.to_owned()));
        let mut groups: Vec<Vec<Word>> = vec![Vec::new()];
        let mut last_end: Option<usize> = None;
        for (child, _) in children(node) {
            let (word, start) = self.word_at(child);
            let gap = last_end.and_then(|end| self.src.get(end..start));
            last_end = Some(child.end_byte());
            if gap.is_some_and(ends_a_command) {
                groups.push(Vec::new());
            }
            if let Some(group) = groups.last_mut() {
                group.push(word);
            }
        }
        let mut groups = groups.into_iter();
        self.push(&groups.next().unwrap_or_default());
        for words in groups {
            self.judge(&words, depth + 1);
        }
        for (child, _) in children(node) {
            if kind(child) == Kind::VariableAssignment {
                let name = field_child(child, Field::Name)
                    .map(|n| node_text(n, self.src))
                    .unwrap_or_default();
                let value = field_child(child, Field::Value);
                let word = value.map(|v| Word::from_node(v, self.src));
                self.sink
                    .vars
                    .assign(name, word.as_ref().map_or(Some(""), Word::lit));
                if let Some(value) = value {
                    self.node(value, depth + 2);
                }
            } else {
                self.node(child, depth + 1);
            }
        }
    }

    /// `[ … ]` and `[[ … ]]`: listed as written, ReadOnly by `risk`. An
    /// arithmetic comparison or `-v` in `[[ … ]]` evaluates its operands.
    fn test_command(&mut self, node: Node<'_>, depth: usize) {
        let text = collapse_whitespace(node_text(node, self.src));
        if !text.is_empty() {
            let words: Vec<String> = text.split(' ').map(str::to_owned).collect();
            let evaluates = words.iter().any(|w| evaluating_test(w));
            self.sink.evaluates |= evaluates;
            // `[[ 1 -eq PATH=0 ]]` assigns: `-eq` evaluates its operands.
            if evaluates && let Some(name) = words.iter().find_map(|w| assigned_name(w)) {
                self.sink.opaque(Opacity::Assignment(name));
            }
            let risk = classify(&words, false);
            self.sink.commands.push(Command { text, words, risk });
        }
        self.children(node, depth);
    }
}

/// Whether the text between two words of a command holds a newline that is
/// not a line continuation.
fn ends_a_command(gap: &str) -> bool {
    gap.match_indices('\n')
        .any(|(at, _)| !gap[..at].ends_with('\\'))
}

/// Whether the text between two words is nothing but line continuations,
/// so that bash reads the two as one word (`r\` newline `m` is `rm`).
fn is_continuations(gap: &str) -> bool {
    !gap.is_empty() && gap.split("\\\n").all(str::is_empty)
}

/// A shell variable name.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A simple command, or the one a `!` negates.
fn simple_or_negated(node: Node<'_>) -> Option<Node<'_>> {
    match kind(node) {
        Kind::Command => Some(node),
        Kind::NegatedCommand => node.named_child(0).filter(|c| kind(*c) == Kind::Command),
        _ => None,
    }
}

/// Where `cd`/`pushd DIR` moves: its operand; `~` for a bare `cd`; `None`
/// when only known at run time (`cd "$d"`, `cd -`, `popd`, `pushd +1`).
fn cd_target(words: &[Word]) -> Option<String> {
    let program = words.first().and_then(Word::lit).map(basename)?;
    let operand = words
        .iter()
        .skip(1)
        .find(|w| !w.lit().is_some_and(|v| v.starts_with('-') && v.len() > 1));
    match (program, operand) {
        ("cd", None) => Some("~".to_owned()),
        ("cd" | "pushd", Some(word)) => word
            .lit()
            .filter(|v| *v != "-" && !word.pattern && !v.starts_with('+'))
            .map(str::to_owned),
        _ => None,
    }
}

/// The variable a word assigns when it stands before a command's name:
/// `NAME=…` or `NAME+=…`.
fn assignment_name(raw: &str) -> Option<&str> {
    let end = raw.find('=')?;
    let name = raw[..end].strip_suffix('+').unwrap_or(&raw[..end]);
    is_identifier(name).then_some(name)
}

/// Whether text holds a backtick without a backslash before it.
fn has_unescaped_backtick(text: &str) -> bool {
    let mut escaped = false;
    for c in text.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '`' if !escaped => return true,
            _ => escaped = false,
        }
    }
    false
}

/// Option names that give a program or command to run.
const RUNS: &[&str] = &[
    "command",
    "program",
    "cmd",
    "exec",
    "pager",
    "shell",
    "editor",
    "hook",
    "filter",
    "proxy",
    "eval",
    "rsync-path",
    "upload-pack",
    "receive-pack",
    "rsh",
    "interpreter",
];

/// The values of options that name a program or a command to run, for any
/// command (`sort --compress-program=rm`, `ssh -o ProxyCommand='rm x'`,
/// `man --pager rm`): deny rules see their words.
fn program_options(words: &[Word]) -> Vec<String> {
    let mut out = Vec::new();
    let runs = |name: &str| {
        let name = name.trim_start_matches('-').to_ascii_lowercase();
        !name.is_empty() && RUNS.iter().any(|r| name.contains(r))
    };
    for (i, word) in words.iter().enumerate().skip(1) {
        let value = word.loose.as_str();
        let next = || words.get(i + 1).map(|w| w.loose.clone());
        if let Some((name, v)) = value.split_once('=')
            && (name.starts_with('-')
                || words.get(i.wrapping_sub(1)).and_then(Word::lit) == Some("-o"))
            && runs(name)
        {
            out.push(v.to_owned());
        } else if value.starts_with("--") && runs(value) {
            out.extend(next());
        } else if let Some(rest) = value.strip_prefix("-o").filter(|r| r.contains('='))
            && runs(rest.split('=').next().unwrap_or_default())
        {
            out.push(
                rest.split_once('=')
                    .map(|(_, v)| v.to_owned())
                    .unwrap_or_default(),
            );
        }
    }
    out
}
