//! `Background` over a real `CoxStore`: writes hand over at once even while
//! another connection holds `cox.db`'s write lock, run in order once it is
//! released, and nothing is lost; a read waits for the writes before it; a
//! write that fails is said by the next call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cox_protocol::archive::ArchiveMeta;
use cox_protocol::catalog::Catalog;
use cox_protocol::provider::Tier;
use cox_protocol::store::{SessionMeta, StoreError};
use cox_protocol::types::{Event, Usage};
use cox_protocol::{Archive, SessionId, Store};
use cox_store::{Background, CoxHome, CoxStore, read_rollout};

fn prepared() -> (tempfile::TempDir, CoxHome) {
    let dir = tempfile::tempdir().unwrap();
    let home = CoxHome::at(dir.path().join("home"));
    home.prepare().unwrap();
    (dir, home)
}

fn meta(id: SessionId) -> SessionMeta {
    SessionMeta {
        id,
        cwd: "/work/p".into(),
        provider: "anthropic".into(),
        model: "m".into(),
        created_at: "2026-12-02T00:00:00.000Z".into(),
        parent_id: None,
        resumed: false,
    }
}

fn usage(n: u64) -> Event {
    Event::Usage {
        provider: "anthropic".into(),
        model: "m".into(),
        tier: Tier::Code,
        job: Default::default(),
        effort: None,
        usage: Usage {
            input_tokens: n,
            output_tokens: 1,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            web_searches: 0,
        },
    }
}

#[test]
fn writes_do_not_wait_for_a_locked_db_and_none_is_lost() {
    let (_dir, home) = prepared();
    let store = Arc::new(CoxStore::open(&home, Catalog::default()).unwrap());
    let record = Background::start(Arc::clone(&store)).unwrap();
    let id = SessionId::generate();
    record.session_started(&meta(id)).unwrap();
    futures::executor::block_on(record.flush()).unwrap();

    // Another process's view: a connection of its own holding the write
    // lock for a while.
    let locker = rusqlite::Connection::open(home.db_path()).unwrap();
    locker.execute_batch("BEGIN IMMEDIATE").unwrap();
    let held = Duration::from_millis(1500);

    let handed = Instant::now();
    for n in 1..=50 {
        record.rollout_append(id, &usage(n)).unwrap();
    }
    let put = record.put_async(
        ArchiveMeta {
            session: id,
            call: None,
        },
        b"kept whole".to_vec(),
    );
    let handing_over = handed.elapsed();
    assert!(
        handing_over < held / 2,
        "handing 50 writes over took {handing_over:?} while cox.db was locked"
    );
    std::thread::sleep(held);
    locker.execute_batch("COMMIT").unwrap();

    let archived = futures::executor::block_on(put).expect("archived once the lock is gone");
    futures::executor::block_on(record.flush()).expect("every write ran");
    let rows = store.db().usage_of(&id.to_string()).unwrap();
    let inputs: Vec<u64> = rows.iter().map(|r| r.input_tokens).collect();
    assert_eq!(inputs, (1..=50).collect::<Vec<_>>(), "every row, in order");
    let rollout = read_rollout(&home.rollout_path(id)).unwrap();
    assert_eq!(rollout.events.len(), 50);
    assert_eq!(record.get(&archived).unwrap(), b"kept whole");
}

#[test]
fn a_spend_read_comes_after_the_writes_before_it() {
    let (_dir, home) = prepared();
    let priced = Catalog::default();
    let store = Arc::new(CoxStore::open(&home, priced).unwrap());
    let record = Background::start(Arc::clone(&store)).unwrap();
    let id = SessionId::generate();
    record.session_started(&meta(id)).unwrap();
    for n in 1..=3 {
        record.rollout_append(id, &usage(n)).unwrap();
    }
    let spend = futures::executor::block_on(record.spend_async(id)).unwrap();
    assert_eq!(
        spend,
        store.spend(id).unwrap(),
        "the same figures, read after"
    );
    assert_eq!(store.db().usage_of(&id.to_string()).unwrap().len(), 3);
}

#[test]
fn a_rollout_line_is_written_at_once_and_its_failure_said_at_once() {
    let (_dir, home) = prepared();
    let store = Arc::new(CoxStore::open(&home, Catalog::default()).unwrap());
    let record = Background::start(Arc::clone(&store)).unwrap();
    let id = SessionId::generate();
    record.session_started(&meta(id)).unwrap();
    // Another connection holds cox.db: the line is on disk all the same,
    // before the writer has booked anything.
    let locker = rusqlite::Connection::open(home.db_path()).unwrap();
    locker.execute_batch("BEGIN IMMEDIATE").unwrap();
    record.rollout_append(id, &usage(7)).unwrap();
    let rollout = read_rollout(&home.rollout_path(id)).unwrap();
    assert_eq!(rollout.events, vec![usage(7)]);
    locker.execute_batch("COMMIT").unwrap();
    futures::executor::block_on(record.flush()).unwrap();

    // A session whose rollout cannot be opened: said by the append itself.
    let other = SessionId::generate();
    std::fs::remove_dir_all(home.sessions_dir()).unwrap();
    std::fs::write(home.sessions_dir(), b"not a folder").unwrap();
    let err = record.rollout_append(other, &usage(1)).unwrap_err();
    assert!(matches!(err, StoreError::OpenRollout { .. }), "{err}");
}

#[test]
fn a_failed_database_write_is_said_by_the_next_call() {
    let (_dir, home) = prepared();
    let store = Arc::new(CoxStore::open(&home, Catalog::default()).unwrap());
    let record = Background::start(Arc::clone(&store)).unwrap();
    let id = SessionId::generate();
    record.session_started(&meta(id)).unwrap();
    futures::executor::block_on(record.flush()).unwrap();
    // The ledger's table is gone (another process broke the file): the
    // row cannot be booked, which the writer finds later.
    let other = rusqlite::Connection::open(home.db_path()).unwrap();
    other.execute_batch("DROP TABLE usage").unwrap();
    record.rollout_append(id, &usage(1)).unwrap();
    let err = futures::executor::block_on(record.flush()).expect_err("the row failed");
    assert!(matches!(err, StoreError::Ledger { .. }), "{err}");
    assert!(
        err.to_string().contains("usage"),
        "the database's own words: {err}"
    );
    assert!(
        futures::executor::block_on(record.flush()).is_ok(),
        "said once"
    );
}

#[test]
fn dropping_the_writer_runs_what_is_queued() {
    let (_dir, home) = prepared();
    let store = Arc::new(CoxStore::open(&home, Catalog::default()).unwrap());
    let id = SessionId::generate();
    {
        let record = Background::start(Arc::clone(&store)).unwrap();
        record.session_started(&meta(id)).unwrap();
        for n in 1..=20 {
            record.rollout_append(id, &usage(n)).unwrap();
        }
    }
    assert_eq!(store.db().usage_of(&id.to_string()).unwrap().len(), 20);
}
