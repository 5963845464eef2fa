//! The binaries pass typed errors on with `?` and keep their chain; the
//! line they print is still the one line it was when the errors were
//! flattened to text.

use std::fs;

use anyhow::Context;
use cox_store::{CoxHome, Db, DbError};

/// A `cox.db` that is not a database, opened: SQLite's refusal under a
/// `DbError`, as `cox sessions` or `cox stats` would meet it.
fn damaged() -> (tempfile::TempDir, DbError) {
    let dir = tempfile::tempdir().unwrap();
    let home = CoxHome::at(dir.path());
    fs::write(home.db_path(), b"a note, not a database").unwrap();
    let error = Db::open_for_reading(&home.db_path()).unwrap_err();
    (dir, error)
}

#[test]
fn the_chain_is_kept_and_said_once() {
    let (_dir, db) = damaged();
    let line = db.to_string();
    let error = anyhow::Error::from(db);

    let causes: Vec<String> = error.chain().map(ToString::to_string).collect();
    assert!(error.is::<DbError>(), "{causes:?}");
    // SQLite's own error, and what it says the code means, under it.
    assert!(causes.len() >= 2, "{causes:?}");
    assert!(line.ends_with(&causes[1]), "{causes:?}");
    // `{:#}` shows the whole chain, and so says SQLite's words twice.
    let plain = format!("{error:#}");
    assert!(plain.starts_with(&format!("{line}: ")), "{plain}");
    // The line printed says each thing once: exactly the message.
    assert_eq!(cox_cli::error_chain(&error), line);
}

#[test]
fn context_above_a_typed_error_reads_as_before() {
    let (_dir, db) = damaged();
    let line = db.to_string();
    let error = Err::<(), _>(db)
        .context("cannot list the sessions")
        .unwrap_err();
    assert_eq!(
        cox_cli::error_chain(&error),
        format!("cannot list the sessions: {line}")
    );
}
