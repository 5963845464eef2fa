//! `CoxStore` fed the events a session produces, on a real home in a
//! temporary folder: the rollout as before, plus the rows in `cox.db`; and
//! what it fails with when SQLite or the file system refuses, its cause kept.

use std::error::Error;
use std::fs;
use std::io;
use std::time::Duration;

use cox_protocol::catalog::{Catalog, ModelInfo, Prices};
use cox_protocol::error::chain_line;
use cox_protocol::provider::{Effort, Tier};
use cox_protocol::store::{SessionMeta, SessionState, StoreError};
use cox_protocol::types::{Event, StopReason, ToolResult, Usage};
use cox_protocol::{SessionId, Store};
use cox_store::{CoxHome, CoxStore, DbError, read_rollout};

const PRICED: &str = "claude-sonnet-5";

fn catalog() -> Catalog {
    Catalog::new(vec![ModelInfo {
        id: PRICED.into(),
        provider: "anthropic".into(),
        context_window: 200_000,
        max_output: 64_000,
        prices: Some(Prices {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            web_search: 0.0,
        }),
        prices_as_of: Some("2026-11".into()),
        efforts: vec![Effort::Low, Effort::High],
        web_search: false,
    }])
}

fn prepared() -> (tempfile::TempDir, CoxHome) {
    let dir = tempfile::tempdir().unwrap();
    let home = CoxHome::at(dir.path().join("home"));
    home.prepare().unwrap();
    (dir, home)
}

fn meta(id: SessionId, resumed: bool) -> SessionMeta {
    SessionMeta {
        id,
        cwd: "/work/My Project".into(),
        provider: "anthropic".into(),
        model: PRICED.into(),
        created_at: "2026-11-30T05:36:27.123Z".into(),
        parent_id: None,
        resumed,
    }
}

fn turn(turn: u32) -> Event {
    Event::TurnStarted {
        turn,
        text: format!("turn {turn}"),
    }
}

fn usage(model: &str, effort: Option<Effort>, tokens: [u64; 4]) -> Event {
    let [input, output, cache_read, cache_write] = tokens;
    Event::Usage {
        provider: "anthropic".into(),
        model: model.into(),
        tier: Tier::Code,
        job: Default::default(),
        effort,
        usage: Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: cache_read,
            cache_write_tokens: cache_write,
            web_searches: 0,
        },
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn usage_rows_follow_turns_prices_and_unknown_models() {
    let (_dir, home) = prepared();
    let store = CoxStore::open(&home, catalog()).unwrap();
    let id = SessionId::generate();
    store.session_started(&meta(id, false)).unwrap();
    let events = [
        turn(1),
        Event::TextDelta { text: "hi".into() },
        usage(
            PRICED,
            Some(Effort::High),
            [1_000_000, 100_000, 2_000_000, 0],
        ),
        usage("local-llama", None, [500, 50, 0, 0]),
        Event::TurnDone {
            stop: StopReason::EndTurn,
        },
        turn(2),
        usage(PRICED, Some(Effort::Low), [1_000, 0, 0, 1_000_000]),
    ];
    let db = store.db();
    let sid = id.to_string();
    for (i, event) in events.iter().enumerate() {
        store.rollout_append(id, event).unwrap();
        let booked = db.usage_of(&sid).unwrap().len();
        let expected = events[..=i]
            .iter()
            .filter(|e| matches!(e, Event::Usage { .. }))
            .count();
        assert_eq!(booked, expected, "booked before rollout_append returned");
    }

    let rows = db.usage_of(&sid).unwrap();
    assert_eq!(
        rows.iter().map(|r| r.turn).collect::<Vec<_>>(),
        [1, 1, 2],
        "each call is booked against the last turn started"
    );
    assert!(close(rows[0].cost_usd, 3.0 + 1.5 + 0.6), "{rows:?}");
    assert!(close(rows[2].cost_usd, 0.003 + 3.75), "{rows:?}");
    assert_eq!(rows[1].cost_usd, 0.0);
    assert_eq!(
        rows.iter().map(|r| r.estimated).collect::<Vec<_>>(),
        [false, true, false]
    );
    assert_eq!(
        rows.iter().map(|r| r.effort.as_deref()).collect::<Vec<_>>(),
        [Some("high"), None, Some("low")]
    );
    assert_eq!(rows[0].context_tokens, 3_000_000);
    assert_eq!(rows[2].context_tokens, 1_001_000);
    for row in &rows {
        assert_eq!((row.job.as_str(), row.tier.as_str()), ("main", "code"));
        assert_eq!(row.provider, "anthropic");
        assert_eq!(row.created_at.len(), 24, "{}", row.created_at);
        assert!(row.created_at.ends_with('Z'), "{}", row.created_at);
    }
    assert_eq!(rows[1].model, "local-llama");

    assert_eq!(read_rollout(&home.rollout_path(id)).unwrap().events, events);
}

#[test]
fn latency_runs_from_the_call_start_to_its_usage() {
    let (_dir, home) = prepared();
    let store = CoxStore::open(&home, catalog()).unwrap();
    let id = SessionId::generate();
    store.session_started(&meta(id, false)).unwrap();
    store.rollout_append(id, &turn(1)).unwrap();
    std::thread::sleep(Duration::from_millis(60));
    // Streamed parts of the answer do not restart the call's clock.
    store
        .rollout_append(id, &Event::TextDelta { text: "a".into() })
        .unwrap();
    store
        .rollout_append(id, &usage(PRICED, None, [1, 1, 0, 0]))
        .unwrap();
    // A finished tool call does: the next call begins after it.
    store
        .rollout_append(
            id,
            &Event::ToolCallDone {
                call_id: "c1".into(),
                result: ToolResult::ok("done"),
            },
        )
        .unwrap();
    store
        .rollout_append(id, &usage(PRICED, None, [1, 1, 0, 0]))
        .unwrap();
    let rows = store.db().usage_of(&id.to_string()).unwrap();
    assert!(rows[0].latency_ms >= 60, "{}", rows[0].latency_ms);
    assert!(rows[1].latency_ms < 60, "{}", rows[1].latency_ms);
}

#[test]
fn turns_and_the_end_update_the_session_row() {
    let (_dir, home) = prepared();
    let store = CoxStore::open(&home, catalog()).unwrap();
    let id = SessionId::generate();
    store.session_started(&meta(id, false)).unwrap();
    let sid = id.to_string();
    let row = store.db().session(&sid).unwrap().unwrap();
    assert_eq!(row.state, SessionState::Open);
    assert_eq!(row.created_at, "2026-11-30T05:36:27.123Z");
    assert_eq!(row.project_slug, "my-project");
    assert_eq!(row.cwd, "/work/My Project");
    assert_eq!(row.provider.as_deref(), Some("anthropic"));
    assert_eq!(row.model.as_deref(), Some(PRICED));
    assert_eq!(
        row.rollout_path,
        home.rollout_path(id).display().to_string()
    );

    store.rollout_append(id, &turn(1)).unwrap();
    store
        .rollout_append(id, &usage(PRICED, None, [1_000_000, 0, 0, 0]))
        .unwrap();
    store.turn_finished(id, 1).unwrap();
    let row = store.db().session(&sid).unwrap().unwrap();
    assert_eq!(row.turns, 1);
    assert!(close(row.cost_usd, 3.0), "{}", row.cost_usd);

    store.session_ended(id, SessionState::Closed).unwrap();
    let row = store.db().session(&sid).unwrap().unwrap();
    assert_eq!(row.state, SessionState::Closed);
    assert!(row.updated_at > row.created_at, "{row:?}");
}

#[test]
fn the_title_event_names_the_session_and_its_call_is_booked_as_job_title() {
    let (_dir, home) = prepared();
    let store = CoxStore::open(&home, catalog()).unwrap();
    let id = SessionId::generate();
    store.session_started(&meta(id, false)).unwrap();
    store.rollout_append(id, &turn(1)).unwrap();
    store
        .rollout_append(id, &usage(PRICED, None, [1_000, 10, 0, 0]))
        .unwrap();
    store
        .rollout_append(
            id,
            &Event::TurnDone {
                stop: StopReason::EndTurn,
            },
        )
        .unwrap();
    let Event::Usage { usage: spent, .. } = usage(PRICED, None, [40, 5, 0, 0]) else {
        unreachable!()
    };
    let title_call = Event::Usage {
        provider: "anthropic".into(),
        model: PRICED.into(),
        tier: Tier::Cheap,
        job: cox_protocol::types::Job::Title,
        effort: None,
        usage: spent,
    };
    store.rollout_append(id, &title_call).unwrap();
    let titled = Event::SessionTitled {
        title: "Fix the login form".into(),
    };
    store.rollout_append(id, &titled).unwrap();
    store.session_ended(id, SessionState::Closed).unwrap();

    let sid = id.to_string();
    let row = store.db().session(&sid).unwrap().unwrap();
    assert_eq!(row.title.as_deref(), Some("Fix the login form"));
    let jobs: Vec<(String, String, u32)> = store
        .db()
        .usage_of(&sid)
        .unwrap()
        .into_iter()
        .map(|r| (r.job, r.tier, r.turn))
        .collect();
    assert_eq!(
        jobs,
        [
            ("main".into(), "code".into(), 1),
            ("title".into(), "cheap".into(), 1)
        ]
    );
    let events = read_rollout(&home.rollout_path(id)).unwrap().events;
    assert_eq!(events.last(), Some(&titled), "the rollout has it too");

    // A resume keeps the title the first run wrote.
    store.session_started(&meta(id, true)).unwrap();
    let row = store.db().session(&sid).unwrap().unwrap();
    assert_eq!(row.title.as_deref(), Some("Fix the login form"));
}

#[test]
fn spend_reports_the_session_the_month_and_the_last_call() {
    let (_dir, home) = prepared();
    let store = CoxStore::open(&home, catalog()).unwrap();
    let (one, two) = (SessionId::generate(), SessionId::generate());
    for id in [one, two] {
        store.session_started(&meta(id, false)).unwrap();
        store.rollout_append(id, &turn(1)).unwrap();
    }
    store
        .rollout_append(one, &usage(PRICED, None, [1_000_000, 0, 0, 0]))
        .unwrap();
    store
        .rollout_append(one, &usage(PRICED, None, [0, 100_000, 0, 0]))
        .unwrap();
    store
        .rollout_append(two, &usage(PRICED, None, [0, 1_000_000, 0, 0]))
        .unwrap();
    let spend = store.spend(one).unwrap();
    assert!(close(spend.session_usd, 4.5), "{spend:?}");
    assert!(close(spend.month_usd, 19.5), "{spend:?}");
    assert!(close(spend.last_call_usd, 1.5), "{spend:?}");
}

#[test]
fn a_resumed_session_appends_to_its_rollout_and_reopens_its_row() {
    let (_dir, home) = prepared();
    let id = SessionId::generate();
    {
        let store = CoxStore::open(&home, catalog()).unwrap();
        store.session_started(&meta(id, false)).unwrap();
        store.rollout_append(id, &turn(1)).unwrap();
        store
            .rollout_append(id, &usage(PRICED, None, [1_000_000, 0, 0, 0]))
            .unwrap();
        store.turn_finished(id, 1).unwrap();
        store.session_ended(id, SessionState::Closed).unwrap();
    }
    let store = CoxStore::open(&home, catalog()).unwrap();
    let fresh_again = store.session_started(&meta(id, false)).unwrap_err();
    assert!(
        fresh_again.to_string().contains("already exists"),
        "{fresh_again}"
    );

    let mut later = meta(id, true);
    later.created_at = "2026-12-01T00:00:00.000Z".into();
    store.session_started(&later).unwrap();
    store.rollout_append(id, &turn(2)).unwrap();
    store
        .rollout_append(id, &usage(PRICED, None, [0, 0, 0, 0]))
        .unwrap();
    assert_eq!(
        read_rollout(&home.rollout_path(id)).unwrap().events.len(),
        4
    );
    let row = store.db().session(&id.to_string()).unwrap().unwrap();
    assert_eq!(row.state, SessionState::Open);
    assert_eq!(row.turns, 1);
    assert_eq!(row.created_at, "2026-11-30T05:36:27.123Z");
    assert!(close(row.cost_usd, 3.0));
    let turns: Vec<_> = store
        .db()
        .usage_of(&id.to_string())
        .unwrap()
        .iter()
        .map(|r| r.turn)
        .collect();
    assert_eq!(turns, [1, 2]);

    let missing = SessionId::generate();
    let error = store.session_started(&meta(missing, true)).unwrap_err();
    assert!(error.to_string().contains(&missing.to_string()), "{error}");
    assert!(!home.rollout_path(missing).exists());
}

#[test]
fn a_damaged_database_stops_the_store_from_opening() {
    let (_dir, home) = prepared();
    fs::write(home.db_path(), b"this is not sqlite at all, but a note").unwrap();
    let error = CoxStore::open(&home, catalog()).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!("cox.db at {}: ", home.db_path().display())),
        "{error}"
    );
    assert!(!error.contains('\n'), "{error}");
    assert_eq!(
        fs::read(home.db_path()).unwrap(),
        b"this is not sqlite at all, but a note"
    );
}

/// Every message of `error`'s chain, as a plain `{:#}` would join them.
fn every_message(error: &(dyn Error + 'static)) -> Vec<String> {
    let mut messages = vec![error.to_string()];
    let mut at = error;
    while let Some(cause) = at.source() {
        messages.push(cause.to_string());
        at = cause;
    }
    messages
}

#[test]
fn a_row_sqlite_refuses_keeps_the_database_error_and_sqlites_under_it() {
    let (_dir, home) = prepared();
    let store = CoxStore::open(&home, catalog()).unwrap();
    let id = SessionId::generate();
    store.session_started(&meta(id, false)).unwrap();
    // Without its rollout a second start gets past the file to the row,
    // which is there already: the INSERT fails in SQLite itself.
    fs::remove_file(home.rollout_path(id)).unwrap();
    let error = store.session_started(&meta(id, false)).unwrap_err();

    let shown = error.to_string();
    assert_eq!(
        shown,
        format!(
            "cox.db at {}: cannot record session {id}: UNIQUE constraint failed: sessions.id",
            home.db_path().display()
        )
    );
    assert!(matches!(error, StoreError::Ledger { .. }), "{error:?}");
    let db = error
        .source()
        .and_then(|e| e.downcast_ref::<DbError>())
        .expect("the database error is the source");
    assert!(matches!(db, DbError::Sqlite { .. }), "{db:?}");
    let sqlite = db
        .source()
        .and_then(|e| e.downcast_ref::<rusqlite::Error>())
        .expect("SQLite's error is under it");
    assert_eq!(
        sqlite.sqlite_error_code(),
        Some(rusqlite::ErrorCode::ConstraintViolation)
    );
    // The chain is all there (a plain `{:#}` would say SQLite's words
    // twice); printed once, it is the line the store always gave.
    assert!(every_message(&error).len() >= 3);
    assert_eq!(chain_line(&error), shown);
}

#[test]
fn a_missing_rollout_keeps_the_io_error() {
    let (_dir, home) = prepared();
    let store = CoxStore::open(&home, catalog()).unwrap();
    let id = SessionId::generate();
    let error = store.session_started(&meta(id, true)).unwrap_err();

    let StoreError::ReopenRollout { path, session, .. } = &error else {
        panic!("{error:?}");
    };
    assert_eq!((path, *session), (&home.rollout_path(id), id));
    let io = error
        .source()
        .and_then(|e| e.downcast_ref::<io::Error>())
        .expect("the I/O error is the source");
    assert_eq!(io.kind(), io::ErrorKind::NotFound);
    let shown = error.to_string();
    assert_eq!(
        shown,
        format!(
            "cannot reopen rollout {} to resume session {id}: {io}",
            home.rollout_path(id).display()
        )
    );
    assert_eq!(every_message(&error), [shown.clone(), io.to_string()]);
    assert_eq!(chain_line(&error), shown);
}
