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
//! wrapper code.
//!
//! The walk collects into a [`Sink`], which a nested shell string (`sh -c`,
//! `eval`) shares with the line it came from: its commands are appended and
//! the first opacity reason wins.

use tree_sitter::Node;

use crate::fast;
use crate::parse::parse;
use crate::risk::classify;
use crate::syntax::{Field, Kind, children, field_child, kind};
use crate::words::{Word, collapse_whitespace, node_text};
use crate::{Command, MAX_SHELL_DEPTH, MAX_TREE_DEPTH, Opacity};

/// What a walk has found so far.
#[derive(Debug, Default)]
pub(crate) struct Sink {
    pub commands: Vec<Command>,
    pub opaque: Option<Opacity>,
    /// Parse every line with tree-sitter, even a plain one (to check the
    /// fast path against it).
    pub tree_sitter_only: bool,
}

impl Sink {
    /// Records a reason the line is opaque; the first one is kept.
    pub(crate) fn opaque(&mut self, reason: Opacity) {
        if self.opaque.is_none() {
            self.opaque = Some(reason);
        }
    }
}

/// Parses `src` and walks it into `sink`. `shell_depth` counts the shell
/// strings this source is nested in; `tree_depth` the tree levels above it.
pub(crate) fn walk_source(sink: &mut Sink, src: &str, shell_depth: usize, tree_depth: usize) {
    if shell_depth > MAX_SHELL_DEPTH {
        sink.opaque(Opacity::TooDeep);
        return;
    }
    if let Some(commands) = (!sink.tree_sitter_only).then(|| fast::plain(src)).flatten() {
        let mut walk = Walk {
            sink,
            src,
            shell_depth,
        };
        for words in &commands {
            walk.judge(words, tree_depth + 1);
        }
        return;
    }
    let tree = match parse(src) {
        Ok(tree) => tree,
        Err(reason) => {
            sink.opaque(reason);
            return;
        }
    };
    if tree.root_node().has_error() || skips_text(tree.root_node(), src) {
        // Reported before anything found inside the damaged tree.
        sink.opaque(Opacity::ParseError);
    }
    let mut walk = Walk {
        sink,
        src,
        shell_depth,
    };
    walk.node(tree.root_node(), tree_depth);
}

/// One walk over one source text.
pub(crate) struct Walk<'a> {
    pub sink: &'a mut Sink,
    src: &'a str,
    shell_depth: usize,
}

impl Walk<'_> {
    /// Walks a shell string found in this source: a new parse, one level
    /// deeper, into the same sink.
    pub(crate) fn nested(&mut self, script: &str, tree_depth: usize) {
        walk_source(self.sink, script, self.shell_depth + 1, tree_depth);
    }

    /// Lists a command from its words (wrappers already stripped).
    pub(crate) fn push(&mut self, words: &[Word]) {
        let Some((name, args)) = words.split_first() else {
            return;
        };
        let head = match name.lit() {
            Some(value) if !value.is_empty() && !name.pattern => value,
            _ => name.raw.as_str(),
        };
        let mut text = head.to_owned();
        for arg in args {
            if arg.raw.is_empty() {
                continue;
            }
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&arg.raw);
        }
        if text.is_empty() {
            return;
        }
        let words: Vec<String> = words.iter().map(|w| w.value().to_owned()).collect();
        let risk = classify(&words);
        self.sink.commands.push(Command { text, words, risk });
    }

    fn node(&mut self, node: Node<'_>, depth: usize) {
        if depth > MAX_TREE_DEPTH {
            self.sink.opaque(Opacity::TooDeep);
            return;
        }
        if node.is_missing() {
            self.sink.opaque(Opacity::ParseError);
            return;
        }
        match kind(node) {
            Kind::Command => self.command(node, Vec::new(), depth),
            Kind::List => self.list(node, depth),
            Kind::RedirectedStatement => self.redirected(node, depth),
            Kind::VariableAssignment => self.assignment(node, depth, true),
            Kind::Declaration | Kind::Unset => self.declaration(node, depth),
            Kind::CommandSubstitution => {
                let backticks = node.child(0).is_some_and(|c| kind(c) == Kind::Backtick);
                self.sink.opaque(if backticks {
                    Opacity::Backticks
                } else {
                    Opacity::CommandSubstitution
                });
                self.children(node, depth);
            }
            Kind::ProcessSubstitution => {
                self.sink.opaque(Opacity::ProcessSubstitution);
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
                }
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
            _ => self.children(node, depth),
        }
    }

    fn children(&mut self, node: Node<'_>, depth: usize) {
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

    /// A simple command: leading assignments, name, arguments, redirects.
    /// `extra` holds words tree-sitter filed as redirect targets.
    ///
    /// tree-sitter-bash sometimes files the first word of the next line as
    /// an argument (`a | b | c` newline `d && e` parses `c d` as one
    /// command). Bash ends a simple command at an unescaped newline, so the
    /// words are split there again.
    fn command(&mut self, node: Node<'_>, extra: Vec<Word>, depth: usize) {
        let mut groups: Vec<Vec<Word>> = Vec::new();
        let mut words = Vec::new();
        let mut last_end: Option<usize> = None;
        let mut rest = Vec::new();
        for (child, field) in children(node) {
            if matches!(field, Field::Name | Field::Argument) {
                let gap = last_end.and_then(|end| self.src.get(end..child.start_byte()));
                if gap.is_some_and(ends_a_command) && !words.is_empty() {
                    groups.push(std::mem::take(&mut words));
                }
                last_end = Some(child.end_byte());
                words.push(Word::from_node(child, self.src));
            } else if kind(child) == Kind::VariableAssignment {
                let name = field_child(child, Field::Name)
                    .map(|n| node_text(n, self.src))
                    .unwrap_or_default();
                if !is_locale(name) {
                    self.sink.opaque(Opacity::Assignment(name.to_owned()));
                }
            }
            rest.push(child);
        }
        words.extend(extra);
        groups.push(words);
        let depth = depth + 1;
        for words in &groups {
            self.judge(words, depth);
        }
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

    /// A statement with redirects after it. Extra targets tree-sitter files
    /// under a redirect (`echo >/dev/null hi`: `hi`) are the command's
    /// arguments in bash, so they go back to the command.
    fn redirected(&mut self, node: Node<'_>, depth: usize) {
        let mut extra = Vec::new();
        for (child, _) in children(node) {
            if kind(child) == Kind::FileRedirect {
                let targets = children(child).filter(|(_, field)| *field == Field::Destination);
                extra.extend(targets.skip(1).map(|(t, _)| Word::from_node(t, self.src)));
            }
        }
        for (child, field) in children(node) {
            if field == Field::Body && kind(child) == Kind::Command {
                self.command(child, std::mem::take(&mut extra), depth + 1);
            } else {
                self.node(child, depth + 1);
            }
        }
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
        if let Some(value) = field_child(node, Field::Value) {
            self.node(value, depth + 1);
        }
    }

    /// `export`, `declare`, `typeset`, `local`, `readonly`, `unset`: listed,
    /// and the line is opaque.
    fn declaration(&mut self, node: Node<'_>, depth: usize) {
        let keyword = node
            .child(0)
            .map(|k| node_text(k, self.src))
            .unwrap_or_default();
        self.sink.opaque(Opacity::Export(keyword.to_owned()));
        let words: Vec<Word> = children(node)
            .map(|(c, _)| Word::from_node(c, self.src))
            .collect();
        self.push(&words);
        for (child, _) in children(node) {
            if kind(child) == Kind::VariableAssignment {
                if let Some(value) = field_child(child, Field::Value) {
                    self.node(value, depth + 2);
                }
            } else {
                self.node(child, depth + 1);
            }
        }
    }

    /// A redirect: an output redirect to a file makes the line opaque.
    fn redirect(&mut self, node: Node<'_>, depth: usize) {
        let mut operator = "";
        let mut target = None;
        for (child, field) in children(node) {
            if field == Field::Destination && target.is_none() {
                target = Some(Word::from_node(child, self.src));
            } else if !child.is_named() && operator.is_empty() {
                operator = node_text(child, self.src);
            }
        }
        if let Some(reason) = redirect_opacity(operator, target) {
            self.sink.opaque(reason);
        }
        self.children(node, depth);
    }

    /// `[ … ]` and `[[ … ]]`: listed as written, ReadOnly by `risk`.
    fn test_command(&mut self, node: Node<'_>, depth: usize) {
        let text = collapse_whitespace(node_text(node, self.src));
        if !text.is_empty() {
            let words: Vec<String> = text.split(' ').map(str::to_owned).collect();
            let risk = classify(&words);
            self.sink.commands.push(Command { text, words, risk });
        }
        self.children(node, depth);
    }
}

/// Why a redirect with this operator and target makes a line opaque, if it
/// does. Input redirects, fd duplications and closes, and writes to
/// `/dev/null`, `/dev/stdout` or `/dev/stderr` are fine.
fn redirect_opacity(operator: &str, target: Option<Word>) -> Option<Opacity> {
    if !operator.contains('>') {
        return None;
    }
    // `>&-` closes a descriptor; a write without a target is a parse error.
    let target = target?;
    let value = target.lit();
    let is_fd = |v: &str| v == "-" || (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
    let duplicates = matches!(operator, ">&" | "<&") && value.is_some_and(is_fd);
    let harmless = matches!(value, Some("/dev/null" | "/dev/stdout" | "/dev/stderr"));
    (!duplicates && !harmless).then_some(Opacity::Redirect(target.raw))
}

/// A locale or display variable: assigning it before a command cannot
/// change which program runs or what it may touch.
pub(crate) fn is_locale(name: &str) -> bool {
    matches!(name, "LANG" | "LANGUAGE" | "TZ" | "NO_COLOR" | "LC_ALL")
        || name.strip_prefix("LC_").is_some_and(|rest| {
            !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
        })
}

/// Whether a variable set by a loop or a builtin such as `read` could
/// change what later commands do. The variables that steer the shell and
/// programs (`PATH`, `IFS`, `LD_PRELOAD`, `BASH_ENV`, `HOME` …) are all
/// upper case, so a name with a lower-case letter (`f`, `line`) is taken as
/// a plain local; any other name, except a locale one, makes the line
/// opaque. A statement assignment (`x=1`) is stricter: it is always opaque.
pub(crate) fn may_matter(name: &str) -> bool {
    !is_locale(name) && !name.bytes().any(|b| b.is_ascii_lowercase())
}

/// Whether the text between two words of a command holds a newline that is
/// not a line continuation.
fn ends_a_command(gap: &str) -> bool {
    gap.match_indices('\n')
        .any(|(at, _)| !gap[..at].ends_with('\\'))
}

/// Whether tree-sitter left text out of the tree: some bytes between two
/// tokens that are not blanks or line continuations. It does so for a
/// leading `-` (`- A=1` parses as just `A=1`), where bash would run a
/// command named `-`; a line the tree does not cover is a parse error.
fn skips_text(root: Node<'_>, src: &str) -> bool {
    let mut covered = 0;
    let mut cursor = root.walk();
    loop {
        if !cursor.goto_first_child() {
            let leaf = cursor.node();
            let gap = src.get(covered..leaf.start_byte()).unwrap_or_default();
            if !is_blank(gap) {
                return true;
            }
            covered = covered.max(leaf.end_byte());
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    let tail = src.get(covered..).unwrap_or_default();
                    return !is_blank(tail);
                }
            }
        }
    }
}

/// Blanks as tree-sitter-bash skips them: white space, and a backslash
/// before a newline, space, tab, vertical tab or form feed.
fn is_blank(gap: &str) -> bool {
    let mut bytes = gap.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {}
            b'\\' => match bytes.next() {
                Some(b'\n' | b' ' | b'\t' | 0x0b | 0x0c) => {}
                Some(b'\r') if bytes.next() == Some(b'\n') => {}
                _ => return false,
            },
            _ => return false,
        }
    }
    true
}
