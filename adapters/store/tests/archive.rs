//! `CoxStore` as the archive of tool outputs, on a real home in a temporary
//! folder: small outputs inline in `cox.db`, large ones as files, every one
//! indexed, and all of them read back byte for byte, by this handle or by
//! another one on the same home (another process); an output that cannot
//! be read back is an error that keeps its cause.

use std::error::Error;
use std::fs;
use std::io;
use std::path::PathBuf;

use cox_protocol::archive::{ArchiveError, ArchiveMeta};
use cox_protocol::catalog::Catalog;
use cox_protocol::{Archive, CallId, SessionId};
use cox_store::{ArchiveReader, ArchiveRow, CoxHome, CoxStore, Db, FileArchive, INLINE_MAX, Kept};
use pretty_assertions::assert_eq;

fn prepared() -> (tempfile::TempDir, CoxHome) {
    let dir = tempfile::tempdir().unwrap();
    let home = CoxHome::at(dir.path().join("home"));
    home.prepare().unwrap();
    (dir, home)
}

fn open(home: &CoxHome) -> CoxStore {
    CoxStore::open(home, Catalog::default()).unwrap()
}

fn meta(call: Option<&str>) -> ArchiveMeta {
    ArchiveMeta {
        session: SessionId::generate(),
        call: call.map(CallId::from),
    }
}

/// Every byte value, in an order that is not text, `len` bytes long.
fn binary(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 256) as u8).collect()
}

/// What `seq 1 n` prints.
fn seq(n: u32) -> Vec<u8> {
    (1..=n).map(|i| format!("{i}\n")).collect::<String>().into()
}

fn files_in(dir: PathBuf) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn row(store: &CoxStore, id: &str) -> ArchiveRow {
    store.db().archive_entry(id).unwrap().expect("an index row")
}

#[test]
fn small_outputs_are_kept_inline_in_their_row() {
    let (_dir, home) = prepared();
    let store = open(&home);
    let meta = meta(Some("toolu_1"));
    let cases: [(&[u8], u64); 5] = [
        (b"", 0),
        (b"one line, no newline", 1),
        (b"a\nb\n", 2),
        (b"a\nb", 2),
        (b"\n\n\n", 3),
    ];
    for (bytes, lines) in cases {
        let id = store.put(&meta, bytes).unwrap();
        assert_eq!(store.get(&id).unwrap(), bytes);
        let row = row(&store, &id);
        assert_eq!(
            (row.bytes, row.lines, row.kept),
            (bytes.len() as u64, lines, Kept::Inline(bytes.to_vec())),
            "{bytes:?}"
        );
        assert_eq!(row.session_id, Some(meta.session.to_string()));
        assert_eq!(row.call_id.as_deref(), Some("toolu_1"));
        assert!(
            cox_store::clock::millis_of(&row.created_at).is_some(),
            "{}",
            row.created_at
        );
    }
    let limit = binary(INLINE_MAX);
    let id = store.put(&meta, &limit).unwrap();
    assert_eq!(store.get(&id).unwrap(), limit, "exactly 16 KiB, not text");
    assert_eq!(row(&store, &id).kept, Kept::Inline(limit));
    assert_eq!(files_in(home.archive_dir()), Vec::<String>::new());
}

#[test]
fn outputs_over_16_kib_become_files_with_an_index_row() {
    let (_dir, home) = prepared();
    let store = open(&home);
    let just_over = binary(INLINE_MAX + 1);
    let big = seq(200_000);
    assert_eq!(big.len(), 1_288_895);
    let mut ids = Vec::new();
    for (bytes, lines) in [(&just_over, 65), (&big, 200_000)] {
        let id = store.put(&meta(None), bytes).unwrap();
        assert_eq!(&store.get(&id).unwrap(), bytes);
        let row = row(&store, &id);
        assert_eq!(row.kept, Kept::File(home.archive_dir().join(&id)));
        assert_eq!((row.bytes, row.lines), (bytes.len() as u64, lines));
        assert_eq!(row.call_id, None);
        assert_eq!(fs::read(home.archive_dir().join(&id)).unwrap(), *bytes);
        ids.push(id);
    }
    ids.sort();
    assert_eq!(
        files_in(home.archive_dir()),
        ids,
        "one file each, no temporaries"
    );
}

#[test]
fn ids_are_ulids_read_in_either_case() {
    let (_dir, home) = prepared();
    let store = open(&home);
    let small = store.put(&meta(None), b"small\n").unwrap();
    let big = store.put(&meta(None), &seq(10_000)).unwrap();
    for id in [&small, &big] {
        assert!(ulid::Ulid::from_string(id).is_ok(), "{id}");
        assert_eq!(id.to_uppercase(), *id, "stored canonically");
    }
    assert_eq!(store.get(&small.to_lowercase()).unwrap(), b"small\n");
    assert_eq!(store.get(&big.to_lowercase()).unwrap(), seq(10_000));
}

#[test]
fn unknown_and_malformed_ids_are_one_line_errors() {
    let (_dir, home) = prepared();
    fs::write(home.root().join("x"), b"secret").unwrap();
    let store = open(&home);
    store.put(&meta(None), b"something").unwrap();
    let unknown = ulid::Ulid::generate().to_string();
    assert_eq!(
        store.get(&unknown).unwrap_err().to_string(),
        format!("no archived output with id `{unknown}`")
    );
    for id in [
        "",
        "../x",
        "/etc/passwd",
        "01J0000000000000000000000A/../../x",
        "a\nb",
    ] {
        let error = store.get(id).unwrap_err().to_string();
        assert_eq!(
            error,
            format!("archive id `{}` is not a valid id", id.escape_debug())
        );
        assert!(!error.contains('\n'), "{error}");
    }
}

#[test]
fn a_row_whose_file_is_gone_is_an_error_naming_the_path() {
    let (_dir, home) = prepared();
    let store = open(&home);
    let id = store.put(&meta(None), &seq(10_000)).unwrap();
    let path = home.archive_dir().join(&id);
    fs::remove_file(&path).unwrap();
    let error = store.get(&id).unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "archived output `{id}` is indexed at {}, but the file is missing",
            path.display()
        )
    );
}

#[test]
fn a_file_cut_short_after_the_fact_is_not_passed_off_as_the_output() {
    let (_dir, home) = prepared();
    let store = open(&home);
    let id = store.put(&meta(None), &seq(10_000)).unwrap();
    let path = home.archive_dir().join(&id);
    fs::write(&path, b"1\n2\n").unwrap();
    let error = store.get(&id).unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "archived output `{id}` at {} has 4 bytes where 48894 were archived",
            path.display()
        )
    );
}

#[test]
fn a_file_that_cannot_be_read_is_an_error_keeping_the_io_error() {
    let (_dir, home) = prepared();
    let store = open(&home);
    let id = store.put(&meta(None), &seq(10_000)).unwrap();
    // A folder where the output's file was: reading fails, and not with
    // "not found".
    let path = home.archive_dir().join(&id);
    fs::remove_file(&path).unwrap();
    fs::create_dir(&path).unwrap();
    let error = store.get(&id).unwrap_err();

    let ArchiveError::Read {
        id: named,
        path: at,
        source,
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!((named, at), (&id, &path));
    assert_eq!(
        error.to_string(),
        format!(
            "cannot read archived output `{id}` ({}): {source}",
            path.display()
        )
    );
    assert!(error.source().is_some_and(|e| e.is::<io::Error>()));
    assert_eq!(cox_protocol::error::chain_line(&error), error.to_string());
}

#[test]
fn what_one_handle_puts_another_reads_at_once() {
    let (_dir, home) = prepared();
    let writer = open(&home);
    let small = writer.put(&meta(None), b"inline\n").unwrap();
    let big = writer.put(&meta(None), &seq(200_000)).unwrap();
    // A second store on the same home, as another `cox` process has.
    let other = open(&home);
    assert_eq!(other.get(&small).unwrap(), b"inline\n");
    assert_eq!(other.get(&big).unwrap(), seq(200_000));
    // And a reader that must not write, as `cox expand` has.
    let db = Db::open_for_reading(&home.db_path()).unwrap();
    let reader = ArchiveReader::new(&home, Some(&db));
    assert_eq!(reader.get(&small).unwrap(), b"inline\n");
    assert_eq!(reader.get(&big).unwrap(), seq(200_000));
}

#[test]
fn files_archived_before_the_index_are_still_found() {
    let (_dir, home) = prepared();
    let old = FileArchive::new(&home)
        .put(&meta(None), b"from before\n")
        .unwrap();
    let store = open(&home);
    assert_eq!(store.db().archive_entry(&old).unwrap(), None);
    assert_eq!(store.get(&old).unwrap(), b"from before\n");
    assert_eq!(
        ArchiveReader::new(&home, None).get(&old).unwrap(),
        b"from before\n",
        "a home without cox.db"
    );
    // The file archive still reads its own files, and the store's.
    let big = store.put(&meta(None), &seq(5_000)).unwrap();
    assert_eq!(FileArchive::new(&home).get(&big).unwrap(), seq(5_000));
}

#[test]
fn a_moved_home_still_finds_its_files() {
    let (dir, home) = prepared();
    let id = {
        let store = open(&home);
        store.put(&meta(None), &seq(10_000)).unwrap()
    };
    let moved = CoxHome::at(dir.path().join("moved"));
    fs::rename(home.root(), moved.root()).unwrap();
    assert_eq!(open(&moved).get(&id).unwrap(), seq(10_000));
}

/// The shortest start of `id` that `other` does not share.
fn unique_start<'a>(id: &'a str, other: &str) -> &'a str {
    let common = id
        .chars()
        .zip(other.chars())
        .take_while(|(a, b)| a == b)
        .count();
    &id[..=common]
}

#[test]
fn a_unique_prefix_names_an_output_indexed_or_kept_as_a_file() {
    let (_dir, home) = prepared();
    let old = FileArchive::new(&home)
        .put(&meta(None), b"from before\n")
        .unwrap();
    let store = open(&home);
    let inline = store.put(&meta(None), b"inline\n").unwrap();
    let big = store.put(&meta(None), &seq(5_000)).unwrap();
    let reader = ArchiveReader::new(&home, Some(store.db()));
    for (id, others) in [
        (&old, [&inline, &big]),
        (&inline, [&old, &big]),
        (&big, [&old, &inline]),
    ] {
        let start = [unique_start(id, others[0]), unique_start(id, others[1])]
            .into_iter()
            .max_by_key(|s| s.len())
            .unwrap();
        assert_eq!(&reader.resolve(start).unwrap(), id, "{start}");
        assert_eq!(&reader.resolve(&start.to_lowercase()).unwrap(), id);
        assert_eq!(&reader.resolve(id).unwrap(), id, "a whole id is itself");
    }
    // Without the database only the files are there to find.
    let files = ArchiveReader::new(&home, None);
    assert_eq!(files.resolve(unique_start(&old, &big)).unwrap(), old);

    // All three start with the same few characters (the time they were made).
    let shared = &old[..2];
    let error = reader.resolve(shared).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!(
            "`{shared}` matches more than one archived output: "
        )),
        "{error}"
    );
    for id in [&old, &inline, &big] {
        assert!(error.contains(id.as_str()), "{error} lists {id}");
    }
    let error = reader.resolve("7ZZZZ").unwrap_err().to_string();
    assert_eq!(error, "no archived output has an id starting with `7ZZZZ`");
    let error = reader.resolve("01../etc").unwrap_err().to_string();
    assert!(
        error.contains("not a valid id, nor the start of one"),
        "{error}"
    );
    let error = reader.resolve("").unwrap_err().to_string();
    assert!(error.contains("not a valid id"), "{error}");
}
