//! `cox sessions` and `cox stats` read back what `cox run` recorded: the
//! ledger has one row per model call, priced from the shipped catalog, and
//! the reports print it as a person and as a program would want it, without
//! ever changing the record.
//!
//! Reports that a person reads are compared with `tests/golden/*.txt` after
//! [`normalise`] has replaced what differs between runs (ids, times, the
//! temporary folders, durations, latencies). Set `COX_BLESS=1` to rewrite
//! them, then review the change.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{Env, assert_one_line_error, lines, stderr};
use cox_store::Db;
use pretty_assertions::assert_eq;
use regex::Regex;
use serde_json::Value;

/// Runs `cox` with these arguments in the test's home.
fn cox(env: &Env, args: &[&str]) -> Output {
    env.cox().args(args).output().unwrap()
}

/// The stdout of a run that must have succeeded quietly.
fn ok(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(out));
    assert_eq!(stderr(out), "", "nothing on stderr");
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// Runs a scenario headless and returns its session id.
fn session(env: &Env, scenario: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "--output-format",
        "json",
        "--permission-mode",
        "acceptEdits",
    ];
    args.extend(extra);
    let out = env.run(scenario, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    lines(&out)[0]["session_id"].as_str().unwrap().to_owned()
}

/// The resumed turn of [`priced_then_unpriced`]: one call on the
/// `scripted` model, which the catalog does not price, with its usage
/// scripted so that the ledger holds the same numbers on every machine.
const UNPRICED: &str = "# one call on an unpriced model\n\
[[turn]]\n\
text = \"Done.\"\n\
usage = { input_tokens = 400, output_tokens = 5 }\n";

/// `priced.toml` at effort high (turn 1: three calls on claude-sonnet-5),
/// then the same session resumed with [`UNPRICED`] and no effort (turn 2).
fn priced_then_unpriced(env: &Env) -> String {
    let id = session(env, "priced", &["--effort", "high"]);
    let scenario = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    std::fs::write(scenario.path(), UNPRICED).unwrap();
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario.path())
        .args(["run", "-p", "anything else?", "--resume", &id])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    id
}

/// Replaces what changes from run to run, keeping the rest byte for byte.
fn normalise(env: &Env, text: &str) -> String {
    let mut text = text.to_owned();
    for (dir, name) in [(env.home.path(), "<HOME>"), (env.work.path(), "<WORK>")] {
        if let Ok(real) = dir.canonicalize() {
            text = text.replace(&real.display().to_string(), name);
        }
        text = text.replace(&dir.display().to_string(), name);
    }
    // Times become placeholders of the same width, so tables stay aligned.
    for (pattern, placeholder) in [
        (r"\b[0-9A-HJKMNP-TV-Z]{26}\b", "<ID>"),
        (
            r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z",
            "YYYY-MM-DDTHH:MM:SS.mmmZ",
        ),
        (r"\b\d{4}-\d{2}-\d{2}\b", "YYYY-MM-DD"),
        (r"\b\d{4}-\d{2}\b", "YYYY-MM"),
    ] {
        text = Regex::new(pattern)
            .unwrap()
            .replace_all(&text, placeholder)
            .into_owned();
    }
    let duration = Regex::new(r"(?m)^duration  .*$").unwrap();
    text = duration
        .replace_all(&text, "duration  <DURATION>")
        .into_owned();
    latencies(&text)
}

/// Latencies are wall time: the last column of the per-call table (kept at
/// its width), the `latency_ms` field of its CSV.
fn latencies(text: &str) -> String {
    let trailing = Regex::new(r"(\s+\d+)$").unwrap();
    let mut csv_column = None;
    let mut in_table = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let mut line = line.to_owned();
        if line.ends_with("LATENCY MS") {
            in_table = true;
        } else if line.is_empty() {
            in_table = false;
        } else if in_table {
            line = trailing
                .replace(&line, |caps: &regex::Captures<'_>| {
                    format!("{:>width$}", "<ms>", width = caps[1].len())
                })
                .into_owned();
        }
        if let Some(column) = line.split(',').position(|f| f == "latency_ms") {
            csv_column = Some(column);
        } else if let Some(column) = csv_column {
            let mut fields: Vec<&str> = line.split(',').collect();
            if let Some(field) = fields.get_mut(column) {
                *field = "<ms>";
            }
            line = fields.join(",");
        }
        out.push(line);
    }
    out.join("\n") + "\n"
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Compares with `tests/golden/<name>.txt`, or writes it under `COX_BLESS`.
fn assert_golden(name: &str, actual: &str) {
    let path = golden_dir().join(format!("{name}.txt"));
    if std::env::var_os("COX_BLESS").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with COX_BLESS=1 to create it, then review it",
            path.display()
        )
    });
    assert_eq!(expected, actual, "golden {}", path.display());
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if !path.to_string_lossy().ends_with("-shm") {
                // Not SQLite's `cox.db-shm`: an index of the WAL in shared
                // memory that the first process to open the database
                // rebuilds, holding nothing of the record.
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

fn ledger(env: &Env) -> Db {
    Db::open_for_reading(&env.home.path().join("cox.db")).unwrap()
}

#[test]
fn a_scripted_session_books_one_estimated_row_per_model_call() {
    let env = Env::new();
    let id = session(&env, "hello", &[]);
    let calls = ledger(&env).usage_of(&id).unwrap();
    assert_eq!(calls.len(), 2, "hello.toml makes two model calls");
    for call in &calls {
        assert_eq!(call.turn, 1);
        assert_eq!(
            (call.job.as_str(), call.tier.as_str()),
            ("main", "code"),
            "{call:?}"
        );
        assert_eq!(
            (call.provider.as_str(), call.model.as_str()),
            ("scripted", "scripted")
        );
        assert_eq!(call.effort, None);
        assert!(call.estimated, "the scripted model has no price");
        assert_eq!(call.cost_usd, 0.0);
        assert_eq!(call.context_tokens, call.input_tokens);
    }
    assert!(calls[0].input_tokens > 0, "estimated usage is counted");
}

#[test]
fn a_priced_session_is_costed_from_the_catalog_turn_by_turn() {
    let env = Env::new();
    let id = priced_then_unpriced(&env);
    let db = ledger(&env);
    let calls = db.usage_of(&id).unwrap();
    let turns: Vec<u32> = calls.iter().map(|c| c.turn).collect();
    assert_eq!(turns, [1, 1, 1, 2]);
    let priced: Vec<(f64, bool)> = calls.iter().map(|c| (c.cost_usd, c.estimated)).collect();
    let expected = [0.008_55, 0.001_8, 0.002_205, 0.0];
    for ((cost, estimated), want) in priced.iter().zip(expected) {
        assert!((cost - want).abs() < 1e-12, "{priced:?}");
        assert_eq!(*estimated, want == 0.0, "{priced:?}");
    }
    assert_eq!(calls[0].effort.as_deref(), Some("high"));
    assert_eq!(calls[3].effort, None);
    assert_eq!(calls[2].context_tokens, 350 + 2_000 + 100);
    let row = db.session(&id).unwrap().unwrap();
    assert_eq!(row.turns, 2);
    assert!((row.cost_usd - 0.012_555).abs() < 1e-12, "{}", row.cost_usd);
}

#[test]
fn stats_of_a_session_golden() {
    let env = Env::new();
    let id = priced_then_unpriced(&env);
    let text = ok(&cox(&env, &["stats", "--session", &id]));
    assert_golden("stats_session", &normalise(&env, &text));
    let csv = ok(&cox(&env, &["stats", "--session", &id[..12], "--csv"]));
    assert_golden("stats_session_csv", &normalise(&env, &csv));
}

#[test]
fn one_session_golden() {
    let env = Env::new();
    let id = priced_then_unpriced(&env);
    let text = ok(&cox(&env, &["sessions", &id.to_lowercase()[..10]]));
    assert_golden("sessions_one", &normalise(&env, &text));
}

#[test]
fn the_ledger_by_month_day_and_cache_golden() {
    let env = Env::new();
    priced_then_unpriced(&env);
    let month = ok(&cox(&env, &["stats"]));
    assert_eq!(
        month,
        ok(&cox(&env, &["stats", "--month"])),
        "--month is the default"
    );
    let mut all = normalise(&env, &month);
    for flags in [
        &["--day"][..],
        &["--day", "--csv"],
        &["--cache"],
        &["--cache", "--csv"],
    ] {
        let mut args = vec!["stats"];
        args.extend(flags);
        all.push_str(&format!("\n$ cox {}\n", args.join(" ")));
        all.push_str(&normalise(&env, &ok(&cox(&env, &args))));
    }
    assert_golden("stats_ledger", &all);
}

#[test]
fn the_day_and_cache_figures_add_up() {
    let env = Env::new();
    priced_then_unpriced(&env);
    let csv = ok(&cox(&env, &["stats", "--day", "--csv"]));
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(
        rows[0],
        "day,calls,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,cost_usd"
    );
    assert_eq!(rows.len(), 2, "{csv}");
    let fields: Vec<&str> = rows[1].split(',').collect();
    assert_eq!(fields[1], "4", "four model calls");
    assert_eq!(&fields[2..], ["2250", "137", "3000", "1100", "0.012555"]);

    let cache = ok(&cox(&env, &["stats", "--cache", "--csv"]));
    let sonnet = cache
        .lines()
        .find(|l| l.contains(",claude-sonnet-5,"))
        .unwrap_or_else(|| panic!("{cache}"));
    // 3000 read of 1850 + 3000 + 1100 prompt tokens.
    assert!(sonnet.ends_with(",3000,1100,1850,0.5042"), "{sonnet}");
    let scripted = cache.lines().find(|l| l.contains(",scripted,")).unwrap();
    assert_eq!(scripted, format!("{},scripted,0,0,400,0.0000", fields[0]));
}

#[test]
fn sessions_are_listed_newest_first_as_text_and_json() {
    let env = Env::new();
    let first = session(&env, "hello", &[]);
    let second = priced_then_unpriced(&env);

    let text = ok(&cox(&env, &["sessions"]));
    let rows: Vec<&str> = text.lines().collect();
    let header: Vec<&str> = rows[0].split_whitespace().collect();
    assert_eq!(header, ["ID", "TITLE", "CWD", "AGE", "TURNS", "COST"]);
    assert_eq!(rows.len(), 3, "{text}");
    let age = Regex::new(r"^\d+[smhd]$").unwrap();
    for (row, (id, turns, cost)) in rows[1..]
        .iter()
        .zip([(&second, "2", "$0.0126"), (&first, "1", "$0.0000")])
    {
        // The title is the first line of the first prompt (the scripted
        // provider asks no model for one).
        let rest = row
            .strip_prefix(id.as_str())
            .unwrap_or_else(|| panic!("{text}"));
        let rest = rest.trim_start().strip_prefix("do the task ");
        let cells: Vec<&str> = rest
            .unwrap_or_else(|| panic!("{row}"))
            .split_whitespace()
            .collect();
        assert!(age.is_match(cells[1]), "{row}");
        assert_eq!(&cells[2..], [turns, cost], "{row}");
    }

    let json: Value = serde_json::from_str(&ok(&cox(&env, &["sessions", "--json"]))).unwrap();
    let list = json.as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["id"], second.as_str());
    assert_eq!(list[1]["id"], first.as_str());
    let keys: Vec<&str> = list[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "id",
            "title",
            "cwd",
            "project_slug",
            "parent_id",
            "created_at",
            "updated_at",
            "turns",
            "cost_usd",
            "state"
        ]
    );
    assert_eq!(list[0]["turns"], 2);
    assert_eq!(list[0]["cost_usd"], 0.012_555);
    assert_eq!(list[0]["state"], "closed");
    assert_eq!(list[1]["title"], "do the task");
}

#[test]
fn one_session_as_json_has_its_tokens_per_model_and_effort() {
    let env = Env::new();
    let id = priced_then_unpriced(&env);
    let out = ok(&cox(&env, &["sessions", &id[..14], "--json"]));
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["id"], id.as_str());
    assert_eq!(json["turns"], 2);
    assert_eq!(json["model"], "claude-sonnet-5");
    assert!(json["duration_ms"].as_u64().is_some(), "{json}");
    assert!(
        json["rollout_path"]
            .as_str()
            .unwrap()
            .ends_with(&format!("sessions/{id}.jsonl"))
    );
    let usage = json["usage"].as_array().unwrap();
    let sonnet = serde_json::json!({
        "provider": "scripted", "model": "claude-sonnet-5", "effort": "high",
        "calls": 3, "input_tokens": 1850, "output_tokens": 132,
        "cache_read_tokens": 3000, "cache_write_tokens": 1100,
        "cost_usd": 0.012_555, "estimated": false,
    });
    assert_eq!(usage[0], sonnet);
    assert_eq!(usage[1]["model"], "scripted");
    assert_eq!(usage[1]["effort"], Value::Null);
    assert_eq!(usage[1]["estimated"], true);
}

#[test]
fn grep_finds_rollout_lines_newest_session_first() {
    let env = Env::new();
    let older = session(&env, "hello", &[]);
    let newer = session(&env, "hello", &[]);
    let text = ok(&cox(&env, &["sessions", "--grep", "wrote 3 bytes"]));
    let hits: Vec<&str> = text.lines().collect();
    assert_eq!(hits.len(), 2, "{text}");
    let shape =
        Regex::new(r"^([0-9A-Z]{26}):(\d+): tool_call_done wrote 3 bytes to hello\.txt$").unwrap();
    let ids: Vec<String> = hits
        .iter()
        .map(|hit| {
            let caps = shape
                .captures(hit)
                .unwrap_or_else(|| panic!("{hit:?} has the shape <id>:<line>: <type> <excerpt>"));
            assert_eq!(&caps[2], "5", "the tool result is line 5 of the rollout");
            caps[1].to_owned()
        })
        .collect();
    assert_eq!(ids, [newer.clone(), older.clone()]);

    let only = ok(&cox(&env, &["sessions", &older, "--grep", "wrote 3 bytes"]));
    assert_eq!(only.lines().count(), 1);
    assert!(only.starts_with(&older), "{only}");

    let json: Value = serde_json::from_str(&ok(&cox(
        &env,
        &["sessions", "--grep", "hello.txt", "--json"],
    )))
    .unwrap();
    let first = &json.as_array().unwrap()[0];
    assert_eq!(first["session_id"], newer.as_str());
    assert_eq!(first["type"], "tool_call_requested");
    assert_eq!(first["excerpt"], "hello.txt");
    assert!(first["line"].as_u64().is_some());

    // As grep: nothing matched is exit 1, said on stderr, stdout empty.
    let none = cox(&env, &["sessions", "--grep", "no such text anywhere"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(none.stdout.is_empty());
    assert_eq!(
        stderr(&none),
        "cox: no session mentions `no such text anywhere`\n"
    );
    let none = cox(&env, &["sessions", "--grep", "no such text", "--json"]);
    assert_eq!(none.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&none.stdout), "[]\n");
}

#[test]
fn an_unknown_or_ambiguous_id_is_one_line_and_exit_1() {
    let env = Env::new();
    let a = session(&env, "hello", &[]);
    let b = session(&env, "hello", &[]);
    let unknown = "01ZZZZZZZZZZZZZZZZZZZZZZZZ";
    for args in [
        &["sessions", unknown][..],
        &["sessions", unknown, "--json"],
        &["stats", "--session", unknown],
        &["stats", "--session", unknown, "--day"],
    ] {
        let out = cox(&env, args);
        assert_one_line_error(&out, &format!("no session `{unknown}`"));
        assert_eq!(out.stdout, b"", "{args:?}");
    }
    let shared: String = a
        .chars()
        .zip(b.chars())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect();
    let out = cox(&env, &["stats", "--session", &shared]);
    assert_one_line_error(&out, "matches more than one session");
    assert!(stderr(&out).contains(&a) && stderr(&out).contains(&b));
}

#[test]
fn with_no_record_yet_listing_says_so_and_naming_fails() {
    let env = Env::new();
    for args in [
        &["sessions"][..],
        &["stats"],
        &["stats", "--cache", "--csv"],
    ] {
        let text = ok(&cox(&env, args));
        assert!(text.starts_with("no record yet: "), "{args:?}: {text}");
        assert_eq!(text.lines().count(), 1);
    }
    assert_eq!(ok(&cox(&env, &["sessions", "--json"])), "[]\n");
    for args in [&["sessions", "01ABC"][..], &["stats", "--session", "01ABC"]] {
        assert_one_line_error(&cox(&env, args), "no record yet");
    }
    let missing = env.home.path().join("not-yet");
    let out = env
        .cox()
        .env("COX_HOME", &missing)
        .args(["sessions"])
        .output()
        .unwrap();
    assert!(ok(&out).starts_with("no record yet: "));
    assert!(!missing.exists(), "a missing home is not created");
    assert!(snapshot(env.home.path()).is_empty(), "nothing was created");
}

#[test]
fn an_empty_ledger_is_one_line_and_exit_0() {
    let env = Env::new();
    drop(Db::open(&env.home.path().join("cox.db")).unwrap());
    for (args, says) in [
        (&["stats"][..], "no usage recorded yet"),
        (&["stats", "--day", "--csv"], "no usage recorded yet"),
        (&["stats", "--cache"], "no usage recorded yet"),
        (&["sessions"], "no sessions recorded"),
    ] {
        let text = ok(&cox(&env, args));
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.starts_with(says), "{args:?}: {text}");
    }
    assert_eq!(ok(&cox(&env, &["sessions", "--json"])), "[]\n");
}

#[test]
fn a_corrupt_database_is_one_line_and_left_as_it_was() {
    let env = Env::new();
    let path = env.home.path().join("cox.db");
    let garbage: Vec<u8> = (0..4_096u32).map(|i| (i * 13 % 251) as u8).collect();
    std::fs::write(&path, &garbage).unwrap();
    for args in [
        &["sessions"][..],
        &["stats", "--day"],
        &["stats", "--session", "01A"],
    ] {
        let out = cox(&env, args);
        assert_one_line_error(&out, "not a database");
        assert!(stderr(&out).contains(&path.display().to_string()));
    }
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
    assert_eq!(snapshot(env.home.path()).len(), 1, "no journal was left");
}

#[test]
fn reading_the_record_changes_nothing_in_it() {
    let env = Env::new();
    let id = priced_then_unpriced(&env);
    let before = snapshot(env.home.path());
    for args in [
        &["sessions"][..],
        &["sessions", "--json"],
        &["sessions", &id],
        &["sessions", &id, "--json"],
        &["sessions", "--grep", "notes"],
        &["stats"],
        &["stats", "--day", "--csv"],
        &["stats", "--cache"],
        &["stats", "--session", &id],
        &["stats", "--session", &id, "--day"],
    ] {
        ok(&cox(&env, args));
    }
    assert_eq!(snapshot(env.home.path()), before);
}
