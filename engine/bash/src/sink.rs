//! What a walk collects: the commands, the first opacity reason, and the
//! notes and budget shared by a line and the sources nested in it.

use crate::{Command, Opacity};

/// What a walk has found so far.
#[derive(Debug)]
pub(crate) struct Sink {
    pub commands: Vec<Command>,
    pub opaque: Option<Opacity>,
    /// Parse every line with tree-sitter, even a plain one (to check the
    /// fast path against it).
    pub tree_sitter_only: bool,
    /// A loop or builtin set a variable from data (`for x in *`, `read x`).
    pub data_vars: bool,
    /// The line evaluates a variable's value as code: arithmetic, `${!x}`,
    /// `${x@P}`, `test -v`, `let` (see `scan`).
    pub evaluates: bool,
    /// What nested sources (shell strings, scripts, hidden substitutions)
    /// may still cost.
    pub budget: Budget,
}

impl Default for Sink {
    fn default() -> Self {
        Sink {
            commands: Vec::new(),
            opaque: None,
            tree_sitter_only: false,
            data_vars: false,
            evaluates: false,
            budget: Budget::for_line(0),
        }
    }
}

/// How much parsing nested sources may still take, so that no line costs
/// more than a few parses of its own length: nested sources are parts of
/// the line, but a damaged line can have the same text parsed again from
/// several places (`eval eval …` listed by the tree and by `fallback`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    /// Bytes.
    pub bytes: usize,
    /// Parses.
    pub walks: usize,
}

impl Budget {
    /// Nested parses of at most 4 times the line's length plus 2 KiB, and
    /// at most 64 of them.
    pub(crate) fn for_line(len: usize) -> Budget {
        Budget {
            bytes: len.saturating_mul(4).saturating_add(2048),
            walks: 64,
        }
    }

    /// Takes a parse of `len` bytes from the budget, if it has room.
    pub(crate) fn take(&mut self, len: usize) -> bool {
        if self.walks == 0 || len > self.bytes {
            return false;
        }
        self.walks -= 1;
        self.bytes -= len;
        true
    }
}

impl Sink {
    /// Records a reason the line is opaque; the first one is kept.
    pub(crate) fn opaque(&mut self, reason: Opacity) {
        if self.opaque.is_none() {
            self.opaque = Some(reason);
        }
    }
}
