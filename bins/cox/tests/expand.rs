//! `cox expand` reads archived tool outputs back, as the real binary does
//! it: the outputs are put through a `CoxStore` on the test's `COX_HOME`
//! (as the core archives them), then printed whole or by line range, byte
//! for byte, without the record being changed.

mod common;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::{Output, Stdio};

use common::{Env, assert_one_line_error, stderr};
use cox_protocol::archive::ArchiveMeta;
use cox_protocol::catalog::Catalog;
use cox_protocol::{Archive, CallId, SessionId};
use cox_store::{CoxHome, CoxStore, FileArchive};
use pretty_assertions::assert_eq;

/// What `seq 1 n` prints.
fn seq(n: u32) -> Vec<u8> {
    (1..=n).map(|i| format!("{i}\n")).collect::<String>().into()
}

/// Lines `from..=to` of `seq`'s output.
fn seq_lines(from: u32, to: u32) -> Vec<u8> {
    (from..=to)
        .map(|i| format!("{i}\n"))
        .collect::<String>()
        .into()
}

/// Archives each output in the test's home, as a run would; the store is
/// closed again before any `cox` reads the home.
fn archive<const N: usize>(env: &Env, outputs: [&[u8]; N]) -> [String; N] {
    let home = CoxHome::at(env.home.path());
    home.prepare().unwrap();
    let store = CoxStore::open(&home, Catalog::default()).unwrap();
    let meta = ArchiveMeta {
        session: SessionId::generate(),
        call: Some(CallId::from("toolu_1")),
    };
    outputs.map(|bytes| store.put(&meta, bytes).unwrap())
}

fn expand(env: &Env, args: &[&str]) -> Output {
    env.cox().arg("expand").args(args).output().unwrap()
}

/// The stdout of a run that must have succeeded quietly.
fn ok(out: &Output) -> Vec<u8> {
    assert_eq!(stderr(out), "", "nothing on stderr");
    assert_eq!(out.status.code(), Some(0));
    out.stdout.clone()
}

/// Every file under `dir` with its bytes, but SQLite's `cox.db-shm`: an
/// index of the WAL in shared memory that the first process to open the
/// database rebuilds, holding nothing of the record.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let name = path.strip_prefix(dir).unwrap().display().to_string();
                if !name.ends_with("-shm") {
                    files.insert(name, std::fs::read(&path).unwrap());
                }
            }
        }
    }
    files
}

#[test]
fn a_big_output_comes_back_whole_and_byte_identical() {
    let env = Env::new();
    let big = seq(200_000);
    assert_eq!(big.len(), 1_288_895);
    let [id] = archive(&env, [&big]);
    assert!(
        env.home.path().join("archive").join(&id).is_file(),
        "kept as a file"
    );
    assert!(ok(&expand(&env, &[&id])) == big, "not byte-identical");
    // As the marker spells it, and in lower case.
    assert!(ok(&expand(&env, &[&format!("#{id}")])) == big);
    assert!(ok(&expand(&env, &[&id.to_lowercase()])) == big);
}

#[test]
fn a_line_range_prints_exactly_those_lines() {
    let env = Env::new();
    let [id] = archive(&env, [&seq(200_000)]);
    let lines = |range: &str| ok(&expand(&env, &[&id, "--lines", range]));
    assert_eq!(lines("60-90"), seq_lines(60, 90));
    assert_eq!(lines("60"), b"60\n");
    assert_eq!(lines("199999-"), b"199999\n200000\n");
    assert_eq!(lines("1-200000"), seq(200_000));
    assert_eq!(lines("3–5"), b"3\n4\n5\n", "the marker's en dash");
}

#[test]
fn a_small_output_kept_inline_comes_back_too() {
    let env = Env::new();
    // Not UTF-8, and no newline at the end: printed as it is all the same.
    let small: &[u8] = b"caf\xe9\r\nsecond line, unterminated";
    let [id] = archive(&env, [small]);
    let archive_dir: Vec<_> = std::fs::read_dir(env.home.path().join("archive"))
        .unwrap()
        .collect();
    assert_eq!(archive_dir.len(), 0, "kept in cox.db, not as a file");
    assert!(ok(&expand(&env, &[&id])) == small);
    assert_eq!(
        ok(&expand(&env, &[&id, "--lines", "2"])),
        b"second line, unterminated"
    );
    assert!(ok(&expand(&env, &[&id, "--lines", "1-"])) == small);
}

#[test]
fn an_output_archived_before_the_index_is_found_by_its_file() {
    let env = Env::new();
    let home = CoxHome::at(env.home.path());
    home.prepare().unwrap();
    let meta = ArchiveMeta {
        session: SessionId::generate(),
        call: None,
    };
    let id = FileArchive::new(&home)
        .put(&meta, b"old\noutput\n")
        .unwrap();
    assert!(!home.db_path().exists());
    assert_eq!(ok(&expand(&env, &[&id, "--lines", "2"])), b"output\n");
    assert!(!home.db_path().exists(), "reading created no cox.db");
}

#[test]
fn bad_ids_and_ranges_are_one_line_errors() {
    let env = Env::new();
    let [big, small] = archive(&env, [&seq(8_210), b"one\n"]);
    let unknown = fresh_id();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec![&unknown],
            format!("no archived output with id `{unknown}`"),
        ),
        (
            vec!["../cox.db"],
            "archive id `../cox.db` is not a valid id, nor the start of one".into(),
        ),
        (
            vec![&big, "--lines", "9000-9010"],
            format!("#{big} has 8210 lines; --lines 9000-9010 is past the end"),
        ),
        (
            vec![&big, "--lines", "8200-8300"],
            format!("#{big} has 8210 lines; --lines 8200-8300 is past the end"),
        ),
        (
            vec![&small, "--lines", "2-"],
            format!("#{small} has 1 line; --lines 2- is past the end"),
        ),
        (
            vec![&big, "--lines", "90-60"],
            "--lines 90-60 ends before it starts".into(),
        ),
        (
            vec![&big, "--lines", "0-3"],
            "--lines 0-3: line numbers start at 1".into(),
        ),
        (
            vec![&big, "--lines", "sixty"],
            "--lines sixty is not a line range: write A-B (60-90), A- (to the end) \
             or A (one line)"
                .into(),
        ),
    ];
    for (args, message) in cases {
        let out = expand(&env, &args);
        assert_one_line_error(&out, &message);
        assert_eq!(stderr(&out), format!("cox: error: {message}\n"), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
}

#[test]
fn reading_leaves_the_record_as_it_was() {
    let env = Env::new();
    let ids = archive(&env, [&seq(100_000), b"small\n"]);
    let before = snapshot(env.home.path());
    for id in &ids {
        ok(&expand(&env, &[id]));
        ok(&expand(&env, &[id, "--lines", "1"]));
    }
    assert_one_line_error(&expand(&env, &[&fresh_id()]), "no archived output");
    assert!(snapshot(env.home.path()) == before, "the home changed");

    let empty = Env::new();
    assert_one_line_error(&expand(&empty, &[&ids[0]]), "no archived output");
    assert_eq!(snapshot(empty.home.path()), BTreeMap::new());
}

#[test]
fn a_reader_that_goes_away_ends_it_quietly() {
    let env = Env::new();
    let [id] = archive(&env, [&seq(200_000)]);
    let mut child = env
        .cox()
        .args(["expand", &id])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0; 6];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    assert_eq!(&head, b"1\n2\n3\n");
    // stdout is closed here, as `| head` closes it.
    let out = child.wait_with_output().unwrap();
    assert_eq!(stderr(&out), "");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_unique_prefix_is_enough_and_an_ambiguous_one_is_refused() {
    let env = Env::new();
    let home_dir = tempfile::tempdir().unwrap();
    let [first, second] = archive(&env, [b"first\n", b"second\n"]);
    let common = first
        .chars()
        .zip(second.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let expand = |args: &[&str]| {
        env.cox()
            .env("HOME", home_dir.path())
            .arg("expand")
            .args(args)
            .output()
            .unwrap()
    };
    // The shortest start of each that the other does not share, pasted as
    // the marker spells it or in lower case.
    let start = &first[..=common];
    assert_eq!(ok(&expand(&[start])), b"first\n");
    let marked = format!("#{}", second[..=common].to_lowercase());
    assert_eq!(ok(&expand(&[&marked, "--lines", "1"])), b"second\n");

    let shared = &first[..common];
    let out = expand(&[shared]);
    // Listed in id order; two ids made in the same millisecond need not
    // be in the order they were made.
    let (low, high) = if first < second {
        (&first, &second)
    } else {
        (&second, &first)
    };
    assert_one_line_error(
        &out,
        &format!("`{shared}` matches more than one archived output: {low}, {high}"),
    );
    assert!(out.stdout.is_empty());
    assert_one_line_error(
        &expand(&["7ZZZ"]),
        "no archived output has an id starting with `7ZZZ`",
    );
}

/// A well-formed id that nothing was archived under.
fn fresh_id() -> String {
    SessionId::generate().to_string()
}
