//! The ledger's costs on a real file: booking one usage row (alone, and as
//! part of a `rollout_append` of a usage event, rollout line included),
//! which must stay well under a millisecond, and `by_month()` over 100,000
//! rows, which must stay well under 200 ms.

use std::hint::black_box;

use cox_protocol::catalog::{Catalog, ModelInfo, Prices};
use cox_protocol::provider::{Effort, Tier};
use cox_protocol::store::{SessionMeta, SessionState};
use cox_protocol::types::{Event, Usage};
use cox_protocol::{SessionId, Store};
use cox_store::{CoxHome, CoxStore, Db, SessionRow, UsageRow};
use criterion::{Criterion, criterion_group, criterion_main};

const ROWS: u64 = 100_000;

fn session(id: &str) -> SessionRow {
    SessionRow {
        id: id.to_owned(),
        created_at: "2026-01-01T00:00:00.000Z".to_owned(),
        updated_at: "2026-01-01T00:00:00.000Z".to_owned(),
        cwd: "/work/bench".to_owned(),
        project_slug: "bench".to_owned(),
        title: None,
        parent_id: None,
        rollout_path: format!("/work/home/sessions/{id}.jsonl"),
        turns: 0,
        cost_usd: 0.0,
        state: SessionState::Open,
        provider: Some("anthropic".to_owned()),
        model: Some("claude-sonnet-5".to_owned()),
        forked: false,
    }
}

fn usage(session_id: &str, i: u64) -> UsageRow {
    let month = i % 12 + 1;
    let day = i % 28 + 1;
    UsageRow {
        id: 0,
        session_id: session_id.to_owned(),
        turn: u32::try_from(i % 40).unwrap_or(0),
        job: "main".to_owned(),
        tier: "code".to_owned(),
        provider: "anthropic".to_owned(),
        model: "claude-sonnet-5".to_owned(),
        effort: Some("high".to_owned()),
        input_tokens: 2_000 + i % 500,
        output_tokens: 300 + i % 200,
        cache_read_tokens: 40_000,
        cache_write_tokens: 1_000,
        context_tokens: 43_000 + i % 500,
        estimated: false,
        cost_usd: 0.02,
        latency_ms: 2_500,
        created_at: format!("2026-{month:02}-{day:02}T12:00:00.000Z"),
    }
}

fn insert_usage(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(&dir.path().join("cox.db")).unwrap();
    let id = SessionId::generate().to_string();
    db.start_session(&session(&id)).unwrap();
    let row = usage(&id, 7);
    c.bench_function("insert_usage", |b| {
        b.iter(|| black_box(db.insert_usage(black_box(&row)).unwrap()));
    });
}

fn append_usage_event(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let home = CoxHome::at(dir.path().join("home"));
    home.prepare().unwrap();
    let catalog = Catalog::new(vec![ModelInfo {
        id: "claude-sonnet-5".to_owned(),
        provider: "anthropic".to_owned(),
        context_window: 200_000,
        max_output: 64_000,
        prices: Some(Prices {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            web_search: 0.0,
        }),
        prices_as_of: None,
        efforts: vec![],
        web_search: false,
    }]);
    let store = CoxStore::open(&home, catalog).unwrap();
    let id = SessionId::generate();
    store
        .session_started(&SessionMeta {
            id,
            cwd: "/work/bench".to_owned(),
            provider: "anthropic".to_owned(),
            model: "claude-sonnet-5".to_owned(),
            created_at: "2026-01-01T00:00:00.000Z".to_owned(),
            parent_id: None,
            resumed: false,
        })
        .unwrap();
    let event = Event::Usage {
        provider: "anthropic".to_owned(),
        model: "claude-sonnet-5".to_owned(),
        tier: Tier::Code,
        job: Default::default(),
        effort: Some(Effort::High),
        usage: Usage {
            input_tokens: 2_000,
            output_tokens: 300,
            cache_read_tokens: 40_000,
            cache_write_tokens: 1_000,
            web_searches: 0,
        },
    };
    c.bench_function("rollout_append(usage)", |b| {
        b.iter(|| store.rollout_append(id, black_box(&event)).unwrap());
    });
}

fn by_month(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(&dir.path().join("cox.db")).unwrap();
    let sessions: Vec<String> = (0..20)
        .map(|_| {
            let id = SessionId::generate().to_string();
            db.start_session(&session(&id)).unwrap();
            id
        })
        .collect();
    for i in 0..ROWS {
        let owner = &sessions[usize::try_from(i % 20).unwrap_or(0)];
        db.insert_usage(&usage(owner, i)).unwrap();
    }
    let months = db.by_month().unwrap();
    assert_eq!(months.len(), 12);
    assert_eq!(months.iter().map(|m| m.totals.calls).sum::<u64>(), ROWS);
    let mut group = c.benchmark_group("by_month");
    group.sample_size(20);
    group.bench_function("100k rows", |b| {
        b.iter(|| black_box(db.by_month().unwrap()));
    });
    group.finish();
}

criterion_group!(benches, insert_usage, append_usage_event, by_month);
criterion_main!(benches);
