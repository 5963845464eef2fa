//! The home layout, rollouts and the archive, on a real (temporary) disk.

use std::fs;
use std::io::Write;

use cox_protocol::store::SessionMeta;
use cox_protocol::types::{Event, NoticeLevel, StopReason, Usage};
use cox_protocol::{Archive, SessionId, Store};
use cox_store::{CoxHome, FileArchive, HomeError, JsonlStore, RolloutError, read_rollout};

fn prepared() -> (tempfile::TempDir, CoxHome) {
    let dir = tempfile::tempdir().unwrap();
    let home = CoxHome::at(dir.path().join("home"));
    home.prepare().unwrap();
    (dir, home)
}

fn meta(id: SessionId, resumed: bool) -> SessionMeta {
    SessionMeta {
        id,
        cwd: "/work".into(),
        provider: "scripted".into(),
        model: "scripted".into(),
        created_at: "2026-01-01T00:00:00Z".into(),
        parent_id: None,
        resumed,
    }
}

fn some_events() -> Vec<Event> {
    vec![
        Event::TurnStarted {
            turn: 1,
            text: "line one\nline two \"quoted\"".into(),
        },
        Event::TextDelta {
            text: "Created ".into(),
        },
        Event::TextDelta {
            text: "hello.txt.".into(),
        },
        Event::Usage {
            provider: "scripted".into(),
            model: "scripted".into(),
            tier: cox_protocol::provider::Tier::Code,
            job: Default::default(),
            effort: None,
            usage: Usage {
                input_tokens: 10,
                output_tokens: 5,
                ..Usage::default()
            },
        },
        Event::Notice {
            level: NoticeLevel::Warn,
            text: "ünïcode ✓".into(),
        },
        Event::TurnDone {
            stop: StopReason::EndTurn,
        },
    ]
}

#[test]
fn prepare_creates_the_layout_and_is_repeatable() {
    let (_dir, home) = prepared();
    for dir in [home.sessions_dir(), home.archive_dir(), home.logs_dir()] {
        assert!(dir.is_dir(), "{}", dir.display());
    }
    home.prepare().unwrap();
    let left: Vec<_> = fs::read_dir(home.root())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 3, "the probe file is removed: {left:?}");
}

#[test]
fn a_home_under_a_regular_file_is_a_one_line_error() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let root = file.path().join("home");
    let error = CoxHome::at(&root).prepare().unwrap_err();
    assert!(matches!(error, HomeError::NotWritable { .. }));
    let shown = error.to_string();
    assert!(
        shown.starts_with(&format!("COX_HOME {} is not writable: ", root.display())),
        "{shown}"
    );
    assert!(shown.contains("os error"), "{shown}");
    assert!(!shown.contains('\n'), "{shown}");
}

#[test]
fn a_rollout_is_appended_line_by_line_and_read_back() {
    let (_dir, home) = prepared();
    let store = JsonlStore::new(home.clone());
    let id = SessionId::generate();
    store.session_started(&meta(id, false)).unwrap();
    let events = some_events();
    for (i, event) in events.iter().enumerate() {
        store.rollout_append(id, event).unwrap();
        // On disk (in the OS) as soon as the call returns: no buffering.
        let text = fs::read_to_string(home.rollout_path(id)).unwrap();
        assert_eq!(text.lines().count(), i + 1);
        assert!(text.ends_with('\n'));
    }
    store.turn_finished(id, 1).unwrap();

    let text = fs::read_to_string(home.rollout_path(id)).unwrap();
    let first = text.lines().next().unwrap();
    assert_eq!(first, serde_json::to_string(&events[0]).unwrap());

    let rollout = read_rollout(&home.rollout_path(id)).unwrap();
    assert_eq!(rollout.events, events);
    assert!(!rollout.truncated_tail);
}

#[test]
fn a_rollout_is_created_once() {
    let (_dir, home) = prepared();
    let store = JsonlStore::new(home.clone());
    let id = SessionId::generate();
    store.session_started(&meta(id, false)).unwrap();
    store
        .rollout_append(
            id,
            &Event::TextDelta {
                text: "kept".into(),
            },
        )
        .unwrap();
    let error = JsonlStore::new(home.clone())
        .session_started(&meta(id, false))
        .unwrap_err();
    assert!(error.to_string().contains("already exists"), "{error}");
    assert!(
        error.to_string().contains(&format!("{id}.jsonl")),
        "{error}"
    );
    assert_eq!(
        read_rollout(&home.rollout_path(id)).unwrap().events.len(),
        1,
        "nothing was rewritten"
    );
}

#[test]
fn a_resumed_session_reopens_its_rollout_and_never_creates_one() {
    let (_dir, home) = prepared();
    let id = SessionId::generate();
    let first = JsonlStore::new(home.clone());
    first.session_started(&meta(id, false)).unwrap();
    first
        .rollout_append(id, &Event::TextDelta { text: "a".into() })
        .unwrap();
    drop(first);
    let resumed = JsonlStore::new(home.clone());
    resumed.session_started(&meta(id, true)).unwrap();
    resumed
        .rollout_append(id, &Event::TextDelta { text: "b".into() })
        .unwrap();
    assert_eq!(
        read_rollout(&home.rollout_path(id)).unwrap().events,
        [
            Event::TextDelta { text: "a".into() },
            Event::TextDelta { text: "b".into() }
        ]
    );

    let unknown = SessionId::generate();
    let error = resumed.session_started(&meta(unknown, true)).unwrap_err();
    assert!(
        error.to_string().starts_with("cannot reopen rollout "),
        "{error}"
    );
    assert!(error.to_string().contains(&unknown.to_string()), "{error}");
    assert!(!home.rollout_path(unknown).exists());
}

#[test]
fn a_later_store_appends_to_an_existing_rollout_but_never_creates_one() {
    let (_dir, home) = prepared();
    let id = SessionId::generate();
    {
        let store = JsonlStore::new(home.clone());
        store.session_started(&meta(id, false)).unwrap();
        store
            .rollout_append(
                id,
                &Event::TextDelta {
                    text: "first".into(),
                },
            )
            .unwrap();
    }
    let resumed = JsonlStore::new(home.clone());
    resumed
        .rollout_append(
            id,
            &Event::TextDelta {
                text: "second".into(),
            },
        )
        .unwrap();
    assert_eq!(
        read_rollout(&home.rollout_path(id)).unwrap().events.len(),
        2
    );

    let never_started = SessionId::generate();
    let error = resumed
        .rollout_append(never_started, &Event::TextDelta { text: "x".into() })
        .unwrap_err();
    assert!(
        error.to_string().contains(&never_started.to_string()),
        "{error}"
    );
    assert!(!home.rollout_path(never_started).exists());
}

#[test]
fn a_cut_short_last_line_is_tolerated_and_reported() {
    let (_dir, home) = prepared();
    let store = JsonlStore::new(home.clone());
    let id = SessionId::generate();
    store.session_started(&meta(id, false)).unwrap();
    let events = some_events();
    for event in &events {
        store.rollout_append(id, event).unwrap();
    }
    let path = home.rollout_path(id);
    // What a writer killed in the middle of a line leaves behind.
    let partial = serde_json::to_string(&Event::TextDelta {
        text: "cut ✓ here".into(),
    })
    .unwrap();
    let mut cut = partial.into_bytes();
    cut.truncate(cut.len() - 7);
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(&cut)
        .unwrap();

    let rollout = read_rollout(&path).unwrap();
    assert_eq!(rollout.events, events);
    assert!(rollout.truncated_tail);
}

#[test]
fn a_whole_last_event_without_its_newline_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    fs::write(
        &path,
        "{\"type\":\"text_delta\",\"text\":\"a\"}\n{\"type\":\"text_delta\",\"text\":\"b\"}",
    )
    .unwrap();
    let rollout = read_rollout(&path).unwrap();
    assert_eq!(rollout.events.len(), 2);
    assert!(!rollout.truncated_tail);
}

#[test]
fn a_bad_line_anywhere_else_is_an_error_with_its_number() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    let good = "{\"type\":\"text_delta\",\"text\":\"a\"}";
    let cases = [
        (
            format!("{good}\n{good}\n{{\"type\":\"text_del\n{good}\n"),
            3,
        ),
        (format!("{good}\n{{\"type\":\"no_such_event\"}}\n"), 2),
        (format!("{good}\n\n{good}\n"), 2),
        (format!("{good}\n{good}\n{{\"type\":\"bogus\"}}"), 3),
    ];
    for (text, line) in cases {
        fs::write(&path, &text).unwrap();
        let error = read_rollout(&path).unwrap_err();
        assert!(
            matches!(error, RolloutError::BadLine { line: l, .. } if l == line),
            "{error:?} for {text:?}"
        );
        let shown = error.to_string();
        assert!(
            shown.starts_with(&format!("rollout {}:{line}: ", path.display())),
            "{shown}"
        );
        assert!(!shown.contains('\n'), "{shown}");
    }
    let missing = read_rollout(&dir.path().join("absent.jsonl")).unwrap_err();
    assert!(
        missing.to_string().contains("absent.jsonl: cannot read: "),
        "{missing}"
    );
}

#[test]
fn the_archive_round_trips_bytes_under_fresh_ids() {
    let (_dir, home) = prepared();
    let archive = FileArchive::new(&home);
    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let meta = cox_protocol::archive::ArchiveMeta {
        session: SessionId::generate(),
        call: None,
    };
    let a = archive.put(&meta, &big).unwrap();
    let b = archive.put(&meta, b"").unwrap();
    assert_ne!(a, b);
    assert_eq!(archive.get(&a).unwrap(), big);
    assert_eq!(archive.get(&b).unwrap(), b"");
    assert_eq!(
        archive.get(&a.to_lowercase()).unwrap(),
        big,
        "ULIDs are case-insensitive"
    );
    let names: Vec<_> = fs::read_dir(home.archive_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "no temporary files left: {names:?}");
}

#[test]
fn the_archive_refuses_unknown_and_malformed_ids() {
    let (_dir, home) = prepared();
    fs::write(home.root().join("x"), b"secret").unwrap();
    let archive = FileArchive::new(&home);
    for id in [
        "../x",
        "..",
        "",
        "/etc/passwd",
        "01J0000000000000000000000A/../../x",
    ] {
        let error = archive.get(id).unwrap_err();
        assert!(
            error.to_string().contains("not a valid id"),
            "{id}: {error}"
        );
        assert!(
            error.to_string().contains(&format!("`{id}`")),
            "{id}: {error}"
        );
    }
    let unknown = ulid::Ulid::generate().to_string();
    let error = archive.get(&unknown).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("no archived output with id `{unknown}`")
    );
}

#[test]
fn a_line_cut_by_a_crash_then_resumed_is_skipped_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    let start = |resumed: bool| {
        serde_json::json!({"type": "session_started", "session_id": "01JCXT0000000000000000000A",
            "cwd": "/w", "model": "m", "provider": "p", "tools": [], "permission_mode": "default",
            "at": "2026-11-30T00:00:00.000Z", "resumed": resumed})
        .to_string()
    };
    let text = format!(
        "{}\n{{\"type\":\"turn_started\",\"turn\":1,\"text\":\"hi\"}}\n{{\"type\":\"text_de\n{}\n",
        start(false),
        start(true)
    );
    std::fs::write(&path, &text).unwrap();
    let rollout = read_rollout(&path).unwrap();
    assert_eq!(rollout.cut_lines, vec![3]);
    assert_eq!(rollout.events.len(), 3);
    // Without the resume after it, the same line is damage and is named.
    std::fs::write(
        &path,
        text.replace(
            &start(true),
            "{\"type\":\"turn_done\",\"stop\":\"end_turn\"}",
        ),
    )
    .unwrap();
    let err = read_rollout(&path).unwrap_err().to_string();
    assert!(
        err.ends_with(":3: EOF while parsing a string at line 1 column 16") || err.contains(":3:"),
        "{err}"
    );
    // An event type from a newer cox says so.
    std::fs::write(
        &path,
        format!("{}\n{{\"type\":\"teleported\"}}\n", start(false)),
    )
    .unwrap();
    let err = read_rollout(&path).unwrap_err().to_string();
    assert!(
        err.contains(":2: an event this cox does not know (`teleported`)"),
        "{err}"
    );
}
