//! The node kinds and fields of tree-sitter-bash the walk cares about.
//!
//! `Node::kind()` turns the grammar's C string into a `&str` each time
//! (a `strlen` and a UTF-8 check), and looking a field up by name scans
//! the field names; on a 100-byte line that was a fifth of the walk. So
//! the grammar's symbol ids are mapped to a small enum once per process,
//! and children are read with one cursor together with their field ids.
//! Every id with a given name maps to the same [`Kind`], so aliased
//! symbols are covered.

use std::num::NonZeroU16;
use std::sync::OnceLock;

use tree_sitter::{Language, Node, TreeCursor};

/// A node kind the walk tells apart; all others are [`Kind::Other`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Command,
    CommandName,
    List,
    RedirectedStatement,
    VariableAssignment,
    Declaration,
    Unset,
    CommandSubstitution,
    ProcessSubstitution,
    FileRedirect,
    TestCommand,
    ForStatement,
    CStyleFor,
    Comment,
    Word,
    Number,
    RawString,
    AnsiCString,
    String,
    StringContent,
    Concatenation,
    BraceExpression,
    ExtglobPattern,
    NegatedCommand,
    Pipeline,
    HerestringRedirect,
    HeredocRedirect,
    HeredocStart,
    HeredocBody,
    ArithmeticExpansion,
    /// The anonymous `` ` `` token that opens a backtick substitution.
    Backtick,
    Other,
}

/// A field the walk reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    Name,
    Argument,
    Destination,
    Body,
    Variable,
    Value,
    Redirect,
    Other,
}

struct Table {
    kinds: Vec<Kind>,
    fields: Vec<(Option<NonZeroU16>, Field)>,
}

fn named_kind(name: &str) -> Kind {
    match name {
        "command" => Kind::Command,
        "command_name" => Kind::CommandName,
        "list" => Kind::List,
        "redirected_statement" => Kind::RedirectedStatement,
        "variable_assignment" => Kind::VariableAssignment,
        "declaration_command" => Kind::Declaration,
        "unset_command" => Kind::Unset,
        "command_substitution" => Kind::CommandSubstitution,
        "process_substitution" => Kind::ProcessSubstitution,
        "file_redirect" => Kind::FileRedirect,
        "test_command" => Kind::TestCommand,
        "for_statement" => Kind::ForStatement,
        "c_style_for_statement" => Kind::CStyleFor,
        "comment" => Kind::Comment,
        "word" => Kind::Word,
        "number" => Kind::Number,
        "raw_string" => Kind::RawString,
        "ansi_c_string" => Kind::AnsiCString,
        "string" => Kind::String,
        "string_content" => Kind::StringContent,
        "concatenation" => Kind::Concatenation,
        "brace_expression" => Kind::BraceExpression,
        "extglob_pattern" => Kind::ExtglobPattern,
        "negated_command" => Kind::NegatedCommand,
        "pipeline" => Kind::Pipeline,
        "herestring_redirect" => Kind::HerestringRedirect,
        "heredoc_redirect" => Kind::HeredocRedirect,
        "heredoc_start" => Kind::HeredocStart,
        "heredoc_body" => Kind::HeredocBody,
        "arithmetic_expansion" => Kind::ArithmeticExpansion,
        _ => Kind::Other,
    }
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let language: Language = tree_sitter_bash::LANGUAGE.into();
        let kinds = (0..language.node_kind_count())
            .map(|id| {
                let Ok(id) = u16::try_from(id) else {
                    return Kind::Other;
                };
                let name = language.node_kind_for_id(id).unwrap_or_default();
                if language.node_kind_is_named(id) {
                    named_kind(name)
                } else if name == "`" {
                    Kind::Backtick
                } else {
                    Kind::Other
                }
            })
            .collect();
        let fields = [
            ("name", Field::Name),
            ("argument", Field::Argument),
            ("destination", Field::Destination),
            ("body", Field::Body),
            ("variable", Field::Variable),
            ("value", Field::Value),
            ("redirect", Field::Redirect),
        ]
        .into_iter()
        .map(|(name, field)| (language.field_id_for_name(name), field))
        .collect();
        Table { kinds, fields }
    })
}

/// The kind of a node.
pub(crate) fn kind(node: Node<'_>) -> Kind {
    table()
        .kinds
        .get(usize::from(node.kind_id()))
        .copied()
        .unwrap_or(Kind::Other)
}

fn field_of(id: Option<NonZeroU16>) -> Field {
    let Some(id) = id else {
        return Field::Other;
    };
    table()
        .fields
        .iter()
        .find(|(known, _)| *known == Some(id))
        .map_or(Field::Other, |(_, field)| *field)
}

/// The first child of `node` in `field`.
pub(crate) fn field_child<'t>(node: Node<'t>, field: Field) -> Option<Node<'t>> {
    let (id, _) = table().fields.iter().find(|(_, f)| *f == field)?;
    node.child_by_field_id((*id)?.get())
}

/// The children of a node with their fields, read with one cursor. It owns
/// its cursor, so the walk can call itself while iterating.
pub(crate) struct Children<'t> {
    cursor: TreeCursor<'t>,
    state: State,
}

enum State {
    Start,
    Going,
    Done,
}

/// The children of `node`, in order.
pub(crate) fn children(node: Node<'_>) -> Children<'_> {
    Children {
        cursor: node.walk(),
        state: State::Start,
    }
}

impl<'t> Iterator for Children<'t> {
    type Item = (Node<'t>, Field);

    fn next(&mut self) -> Option<Self::Item> {
        let moved = match self.state {
            State::Start => self.cursor.goto_first_child(),
            State::Going => self.cursor.goto_next_sibling(),
            State::Done => false,
        };
        if !moved {
            self.state = State::Done;
            return None;
        }
        self.state = State::Going;
        Some((self.cursor.node(), field_of(self.cursor.field_id())))
    }
}
