//! Each file read once while a session is set up.
//!
//! Setting a session up asks the same files several times (the models, the
//! log filter, the permissions and the terminal UI all look at
//! `config.toml`; the permissions and the hooks at each Claude Code
//! settings file). Within a [`scope`], the first read of a path keeps its
//! text and every later one gets that same text: what the session is set
//! up from is one snapshot of each file, however many loaders look, and
//! the disk is asked once.
//!
//! Invariants: outside a scope nothing is kept (a long-lived process, the
//! terminal UI or an editor's server, sees a file's changes at its next
//! session); a failed read is not kept (asked again, it fails again or
//! reads what is there now); the scope is per thread, and one thread sets
//! a session up.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

thread_local! {
    static KEPT: RefCell<Option<HashMap<PathBuf, Option<String>>>> = const { RefCell::new(None) };
}

/// While it lives, reads on this thread are kept (see the module doc).
#[must_use = "reads are kept only while the scope lives"]
pub struct Scope {
    /// An enclosing scope was already open: this one leaves it be.
    nested: bool,
}

/// Opens a scope (or joins the one already open on this thread).
pub fn scope() -> Scope {
    KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        let nested = kept.is_some();
        if !nested {
            *kept = Some(HashMap::new());
        }
        Scope { nested }
    })
}

impl Drop for Scope {
    fn drop(&mut self) {
        if !self.nested {
            KEPT.with(|kept| *kept.borrow_mut() = None);
        }
    }
}

/// The text of `path` by `reader` (`Ok(None)`: no such file), asked of the
/// disk once per scope.
///
/// # Errors
/// What `reader` says; not kept.
pub fn read<E>(
    path: &Path,
    reader: impl FnOnce(&Path) -> Result<Option<String>, E>,
) -> Result<Option<String>, E> {
    if let Some(known) = KEPT.with(|kept| {
        kept.borrow()
            .as_ref()
            .and_then(|map| map.get(path).cloned())
    }) {
        return Ok(known);
    }
    let text = reader(path)?;
    KEPT.with(|kept| {
        if let Some(map) = kept.borrow_mut().as_mut() {
            map.insert(path.to_path_buf(), text.clone());
        }
    });
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_scope_keeps_the_first_read_and_nothing_outlives_it() {
        let reads = Cell::new(0);
        let reader = |_: &Path| -> Result<Option<String>, ()> {
            reads.set(reads.get() + 1);
            Ok(Some(format!("read {}", reads.get())))
        };
        let path = Path::new("/x/config.toml");
        {
            let _scope = scope();
            assert_eq!(read(path, reader).unwrap().as_deref(), Some("read 1"));
            {
                let _inner = scope();
                assert_eq!(read(path, reader).unwrap().as_deref(), Some("read 1"));
            }
            // The inner scope left the outer one's reads be.
            assert_eq!(read(path, reader).unwrap().as_deref(), Some("read 1"));
        }
        assert_eq!(read(path, reader).unwrap().as_deref(), Some("read 2"));
        assert_eq!(read(path, reader).unwrap().as_deref(), Some("read 3"));
        assert_eq!(reads.get(), 3);
    }

    #[test]
    fn a_failed_read_is_not_kept() {
        let _scope = scope();
        let path = Path::new("/x/settings.json");
        assert!(read(path, |_| Err::<Option<String>, _>("busy")).is_err());
        assert_eq!(
            read(path, |_| Ok::<_, ()>(Some("now".into())))
                .unwrap()
                .as_deref(),
            Some("now")
        );
    }
}
