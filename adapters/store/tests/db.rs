//! `cox.db` on a real SQLite file in a temporary folder: the schema and its
//! version, refusing files it must not touch, the session and usage rows,
//! several writers, the summaries, and full-text memory.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cox_protocol::store::{SessionState, Spend};
use cox_store::{
    CacheDay, Db, DbError, ModelTotals, PeriodTotals, SCHEMA_VERSION, SessionRow, TierJobTotals,
    Totals, UsageRow,
};
use pretty_assertions::assert_eq;

fn fresh() -> (tempfile::TempDir, PathBuf, Db) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cox.db");
    let db = Db::open(&path).unwrap();
    (dir, path, db)
}

fn session(id: &str, created_at: &str, cwd: &str) -> SessionRow {
    SessionRow {
        id: id.to_owned(),
        created_at: created_at.to_owned(),
        updated_at: created_at.to_owned(),
        cwd: cwd.to_owned(),
        project_slug: cox_store::project_slug(cwd),
        title: None,
        parent_id: None,
        rollout_path: format!("/h/sessions/{id}.jsonl"),
        turns: 0,
        cost_usd: 0.0,
        state: SessionState::Open,
        provider: Some("anthropic".to_owned()),
        model: Some("claude-sonnet-5".to_owned()),
        forked: false,
    }
}

struct Call<'a> {
    session: &'a str,
    turn: u32,
    tier: &'a str,
    job: &'a str,
    model: &'a str,
    effort: Option<&'a str>,
    tokens: [u64; 4],
    cost: f64,
    at: &'a str,
}

impl Call<'_> {
    fn row(&self) -> UsageRow {
        let [input, output, cache_read, cache_write] = self.tokens;
        UsageRow {
            id: 0,
            session_id: self.session.to_owned(),
            turn: self.turn,
            job: self.job.to_owned(),
            tier: self.tier.to_owned(),
            provider: "anthropic".to_owned(),
            model: self.model.to_owned(),
            effort: self.effort.map(str::to_owned),
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: cache_read,
            cache_write_tokens: cache_write,
            context_tokens: input + cache_read + cache_write,
            estimated: false,
            cost_usd: self.cost,
            latency_ms: 1_000,
            created_at: self.at.to_owned(),
        }
    }
}

fn call<'a>(session: &'a str, cost: f64, at: &'a str) -> Call<'a> {
    Call {
        session,
        turn: 1,
        tier: "code",
        job: "main",
        model: "claude-sonnet-5",
        effort: Some("high"),
        tokens: [100, 10, 0, 0],
        cost,
        at,
    }
}

const A: &str = "01KAAAAAAAAAAAAAAAAAAAAAAA";
const B: &str = "01KBBBBBBBBBBBBBBBBBBBBBBB";
const B2: &str = "01KBBBBBBBBBBBBBBBBBBBBBBC";

fn names(db_path: &Path, kind: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(db_path).unwrap();
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = ?1 ORDER BY name")
        .unwrap();
    stmt.query_map([kind], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn assert_one_line_naming(error: &DbError, path: &Path) {
    let shown = error.to_string();
    assert!(
        shown.starts_with(&format!("cox.db at {}: ", path.display())),
        "{shown}"
    );
    assert!(!shown.contains('\n'), "{shown}");
}

#[test]
fn migrations_create_every_table() {
    let (_dir, path, db) = fresh();
    assert_eq!(db.schema_version().unwrap(), i64::from(SCHEMA_VERSION));
    assert_eq!(SCHEMA_VERSION, 9);
    let tables = names(&path, "table");
    for table in [
        "archive",
        "checkpoints",
        "ext_trust",
        "mcp_trust",
        "memory",
        "presence",
        "sessions",
        "usage",
    ] {
        assert!(tables.iter().any(|t| t == table), "{table} in {tables:?}");
    }
    let indexes = names(&path, "index");
    for index in [
        "usage_by_session",
        "usage_by_created_at",
        "sessions_by_parent",
    ] {
        assert!(indexes.iter().any(|i| i == index), "{index} in {indexes:?}");
    }
    assert_eq!(db.integrity_check().unwrap(), "ok");
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn
        .pragma_query_value(None, "journal_mode", |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn reopening_is_idempotent() {
    let (_dir, path, db) = fresh();
    db.start_session(&session(A, "2026-11-01T00:00:00.000Z", "/w/a"))
        .unwrap();
    db.insert_usage(&call(A, 0.5, "2026-11-01T00:00:01.000Z").row())
        .unwrap();
    drop(db);
    let tables = names(&path, "table");
    for _ in 0..2 {
        let again = Db::open(&path).unwrap();
        assert_eq!(again.schema_version().unwrap(), i64::from(SCHEMA_VERSION));
        assert_eq!(again.sessions().unwrap().len(), 1);
        assert_eq!(again.usage_of(A).unwrap().len(), 1);
    }
    assert_eq!(names(&path, "table"), tables);
}

#[test]
fn a_database_from_a_newer_cox_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cox.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE future (x); PRAGMA user_version = 99;")
            .unwrap();
    }
    let before = fs::read(&path).unwrap();
    let error = Db::open(&path).unwrap_err();
    assert!(
        matches!(error, DbError::TooNew { found: 99, supported, .. } if supported == SCHEMA_VERSION),
        "{error:?}"
    );
    assert_one_line_naming(&error, &path);
    assert_eq!(
        error.to_string(),
        format!(
            "cox.db at {}: schema version 99 was written by a newer cox; \
             this cox supports schema version {SCHEMA_VERSION} and has not changed the file",
            path.display()
        )
    );
    assert_eq!(fs::read(&path).unwrap(), before, "byte-identical");
}

#[test]
fn a_file_that_is_not_a_database_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cox.db");
    let garbage: Vec<u8> = (0..8_192u32).map(|i| (i * 7 % 251) as u8).collect();
    fs::write(&path, &garbage).unwrap();
    let error = Db::open(&path).unwrap_err();
    assert!(matches!(error, DbError::Sqlite { .. }), "{error:?}");
    assert_one_line_naming(&error, &path);
    assert_eq!(
        error.to_string(),
        format!(
            "cox.db at {}: cannot read the schema version: file is not a database",
            path.display()
        )
    );
    assert_eq!(fs::read(&path).unwrap(), garbage, "byte-identical");
    let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "no journal or WAL was created beside it");
}

#[test]
fn a_database_with_a_damaged_schema_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cox.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE t (x TEXT); CREATE INDEX t_x ON t (x);")
            .unwrap();
    }
    // Keep the 100-byte header, scribble over the rest of the first page,
    // where the schema's own table lives.
    let mut bytes = fs::read(&path).unwrap();
    for (i, b) in bytes[100..1_024].iter_mut().enumerate() {
        *b = (i * 31 % 256) as u8;
    }
    fs::write(&path, &bytes).unwrap();
    let error = Db::open(&path).unwrap_err();
    assert_one_line_naming(&error, &path);
    assert!(error.to_string().contains("malformed"), "{error}");
    assert_eq!(fs::read(&path).unwrap(), bytes, "byte-identical");
}

#[test]
fn finish_turn_recomputes_the_session_cost_from_its_usage() {
    let (_dir, _path, db) = fresh();
    db.start_session(&session(A, "2026-11-01T00:00:00.000Z", "/w/a"))
        .unwrap();
    db.start_session(&session(B, "2026-11-01T00:00:00.000Z", "/w/b"))
        .unwrap();
    db.insert_usage(&call(A, 0.25, "2026-11-01T00:00:01.000Z").row())
        .unwrap();
    db.insert_usage(&call(A, 0.5, "2026-11-01T00:00:02.000Z").row())
        .unwrap();
    db.insert_usage(&call(B, 4.0, "2026-11-01T00:00:03.000Z").row())
        .unwrap();
    db.finish_turn(A, 1, "2026-11-01T00:00:04.000Z").unwrap();
    let a = db.session(A).unwrap().unwrap();
    assert_eq!(a.turns, 1);
    assert_eq!(a.cost_usd, 0.75);
    assert_eq!(a.updated_at, "2026-11-01T00:00:04.000Z");
    assert_eq!(a.created_at, "2026-11-01T00:00:00.000Z");

    db.set_state(A, SessionState::Closed, "2026-11-01T00:00:05.000Z")
        .unwrap();
    let a = db.session(A).unwrap().unwrap();
    assert_eq!(a.state, SessionState::Closed);
    assert_eq!(a.updated_at, "2026-11-01T00:00:05.000Z");

    let unknown = db
        .finish_turn("01KZZZZZZZZZZZZZZZZZZZZZZZ", 1, "2026-11-01T00:00:04.000Z")
        .unwrap_err();
    assert!(
        matches!(unknown, DbError::UnknownSession { .. }),
        "{unknown:?}"
    );
}

#[test]
fn a_resumed_start_keeps_created_at_turns_and_cost() {
    let (_dir, _path, db) = fresh();
    let first = session(A, "2026-11-01T00:00:00.000Z", "/w/a");
    db.start_session(&first).unwrap();
    db.insert_usage(&call(A, 1.5, "2026-11-01T00:00:01.000Z").row())
        .unwrap();
    db.finish_turn(A, 3, "2026-11-01T00:10:00.000Z").unwrap();
    db.set_state(A, SessionState::Closed, "2026-11-01T00:10:00.000Z")
        .unwrap();

    let again = db.start_session(&first).unwrap_err();
    assert!(again.to_string().contains(A), "{again}");

    let mut resumed = session(A, "2026-11-02T09:00:00.000Z", "/w/a");
    resumed.updated_at = "2026-11-02T09:00:00.000Z".to_owned();
    db.resume_session(&resumed).unwrap();
    let row = db.session(A).unwrap().unwrap();
    assert_eq!(
        row,
        SessionRow {
            updated_at: "2026-11-02T09:00:00.000Z".to_owned(),
            turns: 3,
            cost_usd: 1.5,
            ..first
        }
    );

    // A session older than the database gets its row on resume.
    let old = session(B, "2026-10-01T00:00:00.000Z", "/w/b");
    db.resume_session(&old).unwrap();
    assert_eq!(db.session(B).unwrap().unwrap(), old);
}

#[test]
fn spend_sums_the_session_the_month_and_the_last_call() {
    let (_dir, _path, db) = fresh();
    db.start_session(&session(A, "2026-10-31T23:00:00.000Z", "/w/a"))
        .unwrap();
    db.start_session(&session(B, "2026-11-01T00:00:00.000Z", "/w/b"))
        .unwrap();
    for (who, cost, at) in [
        (A, 1.0, "2026-10-31T23:59:59.999Z"),
        (A, 2.0, "2026-11-01T00:00:00.000Z"),
        (B, 4.0, "2026-11-15T12:00:00.000Z"),
        (A, 0.5, "2026-11-30T23:59:59.999Z"),
        (B, 8.0, "2026-12-01T00:00:00.000Z"),
    ] {
        db.insert_usage(&call(who, cost, at).row()).unwrap();
    }
    assert_eq!(
        db.spend(A, "2026-11").unwrap(),
        Spend {
            session_usd: 3.5,
            month_usd: 6.5,
            last_call_usd: 0.5,
        }
    );
    assert_eq!(
        db.spend(B, "2026-10").unwrap(),
        Spend {
            session_usd: 12.0,
            month_usd: 1.0,
            last_call_usd: 8.0,
        }
    );
    assert_eq!(
        db.spend("01KZZZZZZZZZZZZZZZZZZZZZZZ", "2027-01").unwrap(),
        Spend::default()
    );
}

#[test]
fn a_session_s_spend_is_its_whole_tree_s_subagents_included() {
    let (_dir, _path, db) = fresh();
    let child = "01KCCCCCCCCCCCCCCCCCCCCCCC";
    let grandchild = "01KDDDDDDDDDDDDDDDDDDDDDDD";
    db.start_session(&session(A, "2026-11-01T00:00:00.000Z", "/w"))
        .unwrap();
    db.start_session(&SessionRow {
        parent_id: Some(A.into()),
        ..session(child, "2026-11-01T00:00:01.000Z", "/w")
    })
    .unwrap();
    db.start_session(&SessionRow {
        parent_id: Some(child.into()),
        ..session(grandchild, "2026-11-01T00:00:02.000Z", "/w")
    })
    .unwrap();
    db.start_session(&session(B, "2026-11-01T00:00:03.000Z", "/w"))
        .unwrap();
    for (who, cost) in [(A, 1.0), (child, 2.0), (grandchild, 4.0), (B, 8.0)] {
        db.insert_usage(&call(who, cost, "2026-11-02T00:00:00.000Z").row())
            .unwrap();
    }
    // Whoever asks, the tree it belongs to; its own last call.
    for (who, last) in [(A, 1.0), (child, 2.0), (grandchild, 4.0)] {
        let spend = db.spend(who, "2026-11").unwrap();
        assert_eq!(spend.session_usd, 7.0, "{who}");
        assert_eq!(spend.last_call_usd, last, "{who}");
    }
    assert_eq!(db.spend(B, "2026-11").unwrap().session_usd, 8.0);
}

#[test]
fn a_fork_spends_on_its_own_and_its_subagents_stay_in_its_tree() {
    let (_dir, _path, db) = fresh();
    let fork = "01KEEEEEEEEEEEEEEEEEEEEEEE";
    let forks_child = "01KFFFFFFFFFFFFFFFFFFFFFFF";
    db.start_session(&session(A, "2026-11-01T00:00:00.000Z", "/w"))
        .unwrap();
    db.start_session(&SessionRow {
        parent_id: Some(A.into()),
        forked: true,
        ..session(fork, "2026-11-01T00:00:01.000Z", "/w")
    })
    .unwrap();
    db.start_session(&SessionRow {
        parent_id: Some(fork.into()),
        ..session(forks_child, "2026-11-01T00:00:02.000Z", "/w")
    })
    .unwrap();
    for (who, cost) in [(A, 1.0), (fork, 2.0), (forks_child, 4.0)] {
        db.insert_usage(&call(who, cost, "2026-11-02T00:00:00.000Z").row())
            .unwrap();
    }
    assert_eq!(db.spend(A, "2026-11").unwrap().session_usd, 1.0);
    for who in [fork, forks_child] {
        assert_eq!(db.spend(who, "2026-11").unwrap().session_usd, 6.0, "{who}");
    }
    let row = db.session(fork).unwrap().unwrap();
    assert!(row.forked);
    assert_eq!(row.parent_id.as_deref(), Some(A));
    // A resume of the fork keeps what it is.
    db.resume_session(&session(fork, "2026-11-01T00:00:01.000Z", "/w"))
        .unwrap();
    assert!(db.session(fork).unwrap().unwrap().forked);
}

#[test]
fn two_handles_writing_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = Arc::new(dir.path().join("cox.db"));
    // Both handles open (and so migrate) the fresh file at the same time.
    let writers: Vec<_> = [A, B]
        .into_iter()
        .map(|id| {
            let path = Arc::clone(&path);
            std::thread::spawn(move || {
                let db = Db::open(&path).unwrap();
                db.start_session(&session(id, "2026-11-01T00:00:00.000Z", "/w"))
                    .unwrap();
                for i in 0..500 {
                    let at = format!("2026-11-01T00:00:{:02}.{:03}Z", i / 1000, i % 1000);
                    db.insert_usage(&call(id, 0.001, &at).row()).unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("a writer failed");
    }
    let db = Db::open(&path).unwrap();
    assert_eq!(db.usage_of(A).unwrap().len(), 500);
    assert_eq!(db.usage_of(B).unwrap().len(), 500);
    let month = db.by_month().unwrap();
    assert_eq!(month.len(), 1);
    assert_eq!(month[0].totals.calls, 1_000);
    assert_eq!(db.integrity_check().unwrap(), "ok");
}

#[test]
fn sessions_are_listed_newest_first_and_found_by_prefix_or_folder() {
    let (_dir, path, db) = fresh();
    db.start_session(&session(A, "2026-11-01T00:00:00.000Z", "/w/a"))
        .unwrap();
    db.start_session(&session(B, "2026-11-02T00:00:00.000Z", "/w/a"))
        .unwrap();
    db.start_session(&session(B2, "2026-11-03T00:00:00.000Z", "/w/b"))
        .unwrap();
    let ids: Vec<_> = db.sessions().unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(ids, [B2, B, A]);

    assert_eq!(db.session(A).unwrap().unwrap().id, A);
    assert_eq!(db.session("01kaa").unwrap().unwrap().id, A, "any case");
    assert_eq!(db.session(B).unwrap().unwrap().id, B);
    assert!(db.session("01KC").unwrap().is_none());
    let error = db.session("01KB").unwrap_err();
    assert!(
        matches!(&error, DbError::AmbiguousPrefix { matches, more: false, .. } if matches == &[B, B2]),
        "{error:?}"
    );
    assert_one_line_naming(&error, &path);
    assert!(error.to_string().contains(B2), "{error}");

    assert_eq!(db.latest_session_in("/w/a").unwrap().unwrap().id, B);
    assert_eq!(db.latest_session_in("/w/b").unwrap().unwrap().id, B2);
    assert!(db.latest_session_in("/w").unwrap().is_none());
    assert_eq!(db.session(A).unwrap().unwrap().project_slug, "a");
}

#[test]
fn summaries_of_a_known_ledger() {
    let (_dir, _path, db) = fresh();
    db.start_session(&session(A, "2026-10-31T00:00:00.000Z", "/w/a"))
        .unwrap();
    db.start_session(&session(B, "2026-11-01T00:00:00.000Z", "/w/b"))
        .unwrap();
    let calls = [
        Call {
            tokens: [100, 10, 300, 100],
            cost: 1.0,
            ..call(A, 0.0, "2026-10-31T10:00:00.000Z")
        },
        Call {
            turn: 2,
            tokens: [50, 5, 0, 0],
            cost: 2.0,
            effort: None,
            ..call(A, 0.0, "2026-11-01T10:00:00.000Z")
        },
        Call {
            turn: 2,
            tier: "cheap",
            job: "compact",
            model: "claude-haiku-5",
            effort: None,
            tokens: [1_000, 100, 0, 0],
            cost: 0.5,
            ..call(A, 0.0, "2026-11-01T11:00:00.000Z")
        },
        Call {
            tokens: [10, 1, 90, 0],
            cost: 4.0,
            ..call(B, 0.0, "2026-11-01T12:00:00.000Z")
        },
    ];
    for c in &calls {
        db.insert_usage(&c.row()).unwrap();
    }

    let back = db.usage_of(A).unwrap();
    assert_eq!(back.len(), 3);
    assert_eq!(back[0].context_tokens, 500);
    assert_eq!(back[1].effort, None);
    assert!(back.windows(2).all(|w| w[0].id < w[1].id));
    assert_eq!(
        back.iter().map(|r| r.cost_usd).collect::<Vec<_>>(),
        [1.0, 2.0, 0.5]
    );

    let t = |calls, [i, o, r, w]: [u64; 4], cost| Totals {
        calls,
        input_tokens: i,
        output_tokens: o,
        cache_read_tokens: r,
        cache_write_tokens: w,
        cost_usd: cost,
    };
    assert_eq!(
        db.usage_totals_by(A).unwrap(),
        [
            ModelTotals {
                provider: "anthropic".into(),
                model: "claude-haiku-5".into(),
                effort: None,
                totals: t(1, [1_000, 100, 0, 0], 0.5),
            },
            ModelTotals {
                provider: "anthropic".into(),
                model: "claude-sonnet-5".into(),
                effort: None,
                totals: t(1, [50, 5, 0, 0], 2.0),
            },
            ModelTotals {
                provider: "anthropic".into(),
                model: "claude-sonnet-5".into(),
                effort: Some("high".into()),
                totals: t(1, [100, 10, 300, 100], 1.0),
            },
        ]
    );
    let period = |p: &str, totals| PeriodTotals {
        period: p.into(),
        totals,
    };
    assert_eq!(
        db.by_day(None).unwrap(),
        [
            period("2026-10-31", t(1, [100, 10, 300, 100], 1.0)),
            period("2026-11-01", t(3, [1_060, 106, 90, 0], 6.5)),
        ]
    );
    assert_eq!(
        db.by_day(Some(B)).unwrap(),
        [period("2026-11-01", t(1, [10, 1, 90, 0], 4.0))]
    );
    assert_eq!(
        db.by_month().unwrap(),
        [
            period("2026-10", t(1, [100, 10, 300, 100], 1.0)),
            period("2026-11", t(3, [1_060, 106, 90, 0], 6.5)),
        ]
    );
    assert_eq!(
        db.by_tier_job(A).unwrap(),
        [
            TierJobTotals {
                tier: "cheap".into(),
                job: "compact".into(),
                totals: t(1, [1_000, 100, 0, 0], 0.5),
            },
            TierJobTotals {
                tier: "code".into(),
                job: "main".into(),
                totals: t(2, [150, 15, 300, 100], 3.0),
            },
        ]
    );
    let cache = |day: &str, model: &str, [read, write, input]: [u64; 3], hit_rate| CacheDay {
        day: day.into(),
        model: model.into(),
        cache_read_tokens: read,
        cache_write_tokens: write,
        input_tokens: input,
        hit_rate,
    };
    assert_eq!(
        db.cache_by_model_day().unwrap(),
        [
            cache("2026-10-31", "claude-sonnet-5", [300, 100, 100], 0.6),
            cache("2026-11-01", "claude-haiku-5", [0, 0, 1_000], 0.0),
            cache("2026-11-01", "claude-sonnet-5", [90, 0, 60], 0.6),
        ]
    );
}

#[test]
fn a_model_with_no_prompt_tokens_has_a_zero_hit_rate() {
    let (_dir, _path, db) = fresh();
    db.start_session(&session(A, "2026-11-01T00:00:00.000Z", "/w/a"))
        .unwrap();
    db.insert_usage(
        &Call {
            tokens: [0, 7, 0, 0],
            ..call(A, 0.0, "2026-11-01T00:00:00.000Z")
        }
        .row(),
    )
    .unwrap();
    let days = db.cache_by_model_day().unwrap();
    assert_eq!(days.len(), 1);
    assert_eq!(days[0].hit_rate, 0.0);
}

#[test]
fn usage_must_belong_to_a_recorded_session() {
    let (_dir, path, db) = fresh();
    let error = db
        .insert_usage(&call(A, 1.0, "2026-11-01T00:00:00.000Z").row())
        .unwrap_err();
    assert_one_line_naming(&error, &path);
    assert!(error.to_string().contains("FOREIGN KEY"), "{error}");
}

#[test]
fn the_bundled_sqlite_has_fts5_for_memory() {
    let (_dir, path, _db) = fresh();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "INSERT INTO memory (project, text, created_at) VALUES (?1, ?2, ?3)",
        (
            "cox",
            "the tests run with cargo nextest, never the whole workspace",
            "2026-11-01T00:00:00.000Z",
        ),
    )
    .unwrap();
    conn.execute(
        "INSERT INTO memory (project, text, created_at) VALUES ('other', 'unrelated note', '')",
        (),
    )
    .unwrap();
    let found: Vec<String> = conn
        .prepare("SELECT text FROM memory WHERE memory MATCH ?1 ORDER BY rank")
        .unwrap()
        .query_map(["project:cox AND workspace"], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        found,
        ["the tests run with cargo nextest, never the whole workspace"]
    );
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_reader_never_creates_a_missing_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cox.db");
    let error = Db::open_for_reading(&path).unwrap_err();
    assert_one_line_naming(&error, &path);
    assert!(error.to_string().contains("cannot open"), "{error}");
    assert!(files_in(dir.path()).is_empty(), "nothing was created");
}

#[test]
fn a_reader_sees_the_record_and_leaves_the_files_as_they_were() {
    let (dir, path, db) = fresh();
    db.start_session(&session(A, "2026-11-01T00:00:00.000Z", "/w/a"))
        .unwrap();
    db.insert_usage(&call(A, 0.5, "2026-11-01T00:00:01.000Z").row())
        .unwrap();
    drop(db);
    let files = files_in(dir.path());
    let before = fs::read(&path).unwrap();

    let reader = Db::open_for_reading(&path).unwrap();
    assert_eq!(reader.sessions().unwrap().len(), 1);
    assert_eq!(reader.usage_of(A).unwrap().len(), 1);
    let refused = reader
        .start_session(&session(B, "2026-11-02T00:00:00.000Z", "/w/b"))
        .unwrap_err();
    assert!(refused.to_string().contains("readonly"), "{refused}");
    drop(reader);

    assert_eq!(files_in(dir.path()), files, "no -wal or -shm left behind");
    assert_eq!(fs::read(&path).unwrap(), before, "byte-identical");
}

#[test]
fn a_reader_sees_what_a_live_writer_has_committed() {
    let (_dir, path, db) = fresh();
    db.start_session(&session(A, "2026-11-01T00:00:00.000Z", "/w/a"))
        .unwrap();
    let reader = Db::open_for_reading(&path).unwrap();
    db.insert_usage(&call(A, 0.5, "2026-11-01T00:00:01.000Z").row())
        .unwrap();
    assert_eq!(reader.usage_of(A).unwrap().len(), 1);
}

#[test]
fn a_reader_refuses_an_older_schema_rather_than_migrating_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cox.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE before_cox (x);").unwrap();
    }
    let before = fs::read(&path).unwrap();
    let error = Db::open_for_reading(&path).unwrap_err();
    assert!(
        matches!(error, DbError::Outdated { found: 0, supported, .. } if supported == SCHEMA_VERSION),
        "{error:?}"
    );
    assert_one_line_naming(&error, &path);
    assert_eq!(fs::read(&path).unwrap(), before, "byte-identical");
    assert_eq!(names(&path, "table"), ["before_cox"]);

    fs::write(&path, b"not a database at all, not even close to one").unwrap();
    let error = Db::open_for_reading(&path).unwrap_err();
    assert_one_line_naming(&error, &path);
    assert!(error.to_string().contains("not a database"), "{error}");
}

#[test]
fn trusted_extensions_are_kept_per_scope_and_kind() {
    let (_dir, _path, db) = fresh();
    let row = |scope: &str, hash: &str| cox_store::TrustedExtension {
        scope: scope.into(),
        kind: "hook".into(),
        hash: hash.into(),
        label: "project:Stop:1".into(),
        trusted_at: "2026-12-05T00:00:00.000Z".into(),
    };
    db.trust_extensions(&[row("/a", "h1"), row("/a", "h2"), row("/b", "h3")])
        .unwrap();
    // Trusting again is no error and no duplicate.
    db.trust_extensions(&[row("/a", "h1")]).unwrap();
    let mut a = db.trusted_extensions("/a", "hook").unwrap();
    a.sort();
    assert_eq!(a, ["h1", "h2"]);
    assert!(db.trusted_extensions("/a", "plugin").unwrap().is_empty());
    assert_eq!(db.trusted_extensions("/b", "hook").unwrap(), ["h3"]);
}

#[test]
fn notes_are_kept_per_project_and_recalled_by_their_words() {
    let (_dir, _path, db) = fresh();
    let at = "2026-12-05T00:00:00.000Z";
    // A store with no note answers without the index.
    assert!(
        db.memory_search("/repo", "redis tests", 5)
            .unwrap()
            .is_empty()
    );
    let a = db
        .memory_add("/repo", "the tests need a running redis on port 6379", at)
        .unwrap();
    db.memory_add("/repo", "release notes live in CHANGES.md", at)
        .unwrap();
    db.memory_add("/other", "redis is not used here", at)
        .unwrap();
    let found = db
        .memory_search("/repo", "why do the redis tests fail?", 5)
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].id, a);
    // Words that are FTS5 syntax are words.
    assert!(
        db.memory_search("/repo", "NEAR( \"OR", 5)
            .unwrap()
            .is_empty()
    );
    assert_eq!(db.memory_list("/repo").unwrap().len(), 2);
    assert!(db.memory_forget("/repo", a).unwrap());
    assert!(!db.memory_forget("/repo", a).unwrap());
    // Another project's note is not this one's to forget.
    let other = db.memory_list("/other").unwrap()[0].id;
    assert!(!db.memory_forget("/repo", other).unwrap());
    assert_eq!(db.memory_list("/repo").unwrap().len(), 1);
    // Once every note is gone a recall finds none, and a new one at once.
    for project in ["/repo", "/other"] {
        for note in db.memory_list(project).unwrap() {
            assert!(db.memory_forget(project, note.id).unwrap());
        }
    }
    assert!(
        db.memory_search("/repo", "release notes", 5)
            .unwrap()
            .is_empty()
    );
    let b = db
        .memory_add("/repo", "release notes are written by hand", at)
        .unwrap();
    assert_eq!(
        db.memory_search("/repo", "release notes", 5).unwrap()[0].id,
        b
    );
}

#[test]
fn presence_rows_are_kept_per_session_and_read_per_project() {
    let (_dir, _path, db) = fresh();
    let row = |id: &str, pid, worktree: Option<&str>| cox_store::Presence {
        session_id: id.into(),
        pid,
        project: "/repo".into(),
        cwd: worktree.unwrap_or("/repo").into(),
        worktree: worktree.map(str::to_owned),
        branch: worktree.map(|_| "t42".to_owned()),
        started_at: format!("2026-12-05T00:00:0{pid}Z"),
        pid_start: 1234,
    };
    db.record_presence(&row("a", 1, None)).unwrap();
    db.record_presence(&row("b", 2, Some("/_worktrees/repo-t42")))
        .unwrap();
    // A resumed session replaces its row.
    db.record_presence(&row("a", 3, None)).unwrap();
    let rows = db.presence_in("/repo").unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[0].session_id.as_str(), rows[0].pid), ("a", 3));
    assert!(db.presence_in("/other").unwrap().is_empty());
    let in_worktrees = db.worktree_sessions().unwrap();
    assert_eq!(in_worktrees.len(), 1);
    assert_eq!(in_worktrees[0].branch.as_deref(), Some("t42"));
    assert_eq!(in_worktrees[0].pid_start, 1234);
    // An ended session keeps its row, with no process; only the process
    // that ran it ends it.
    db.record_presence(&row("b", std::process::id(), Some("/_worktrees/repo-t42")))
        .unwrap();
    db.record_presence(&row("a", 99_999_999, None)).unwrap();
    db.presence_ended("a").unwrap();
    db.presence_ended("b").unwrap();
    let rows = db.presence_in("/repo").unwrap();
    assert_eq!(rows.iter().find(|r| r.session_id == "b").unwrap().pid, 0);
    assert_eq!(
        rows.iter().find(|r| r.session_id == "a").unwrap().pid,
        99_999_999,
        "resumed by another process: not ended by this one"
    );
}
