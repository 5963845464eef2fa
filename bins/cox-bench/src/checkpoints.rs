//! `cox-bench checkpoints [FILES]`: what keeping pre-images costs, on a
//! generated git repository of FILES files (100 folders, 1-4 KB each,
//! committed): a cold snapshot (a new private repository, the user's
//! objects as alternates), a new session's first (a full look, the private
//! index warm), a watched one (nothing changed), the extra time a
//! file-tool call pays (one file's pre-image, row and post), the extra
//! time a shell call pays there (two snapshots, the diff, one changed
//! file kept; then with another file changed since the last call), and
//! the rewind of a turn that wrote 100 files. Each timed
//! step runs through `GitCheckpoints`, the adapter sessions use.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use cox_checkpoints::GitCheckpoints;
use cox_protocol::checkpoint::{Checkpoints, Scope};
use cox_protocol::{CallId, SessionId};
use cox_store::CoxHome;

use crate::{ms, tempdir};

fn git(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("git")
        .args(["-c", "user.email=b@example.com", "-c", "user.name=b"])
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Waits for one of the store's futures (it works inline without a runtime).
fn block<T>(
    future: cox_protocol::provider::BoxFuture<
        '_,
        Result<T, cox_protocol::checkpoint::CheckpointError>,
    >,
) -> Result<T, String> {
    futures::executor::block_on(future).map_err(|e| e.to_string())
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

pub(crate) fn run(files: usize) -> Result<(), String> {
    let scratch = tempdir::Dir::new("checkpoints").map_err(|e| e.to_string())?;
    let work = scratch.0.join("work");
    let home = CoxHome::at(scratch.0.join("home"));
    home.prepare().map_err(|e| e.to_string())?;
    for i in 0..files {
        let dir = work.join(format!("d{:02}", i % 100));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let body = format!("// file {i}\n").repeat(64 + (i % 200) * 2);
        std::fs::write(dir.join(format!("f{i}.rs")), body).map_err(|e| e.to_string())?;
    }
    git(&work, &["init", "-q", "."])?;
    git(&work, &["add", "."])?;
    git(&work, &["commit", "-qm", "generated"])?;
    println!("repository: {files} files, committed");

    let session = SessionId::generate();
    let db = cox_store::Db::open(&home.db_path()).map_err(|e| e.to_string())?;
    db.start_session(&cox_store::SessionRow {
        id: session.to_string(),
        created_at: "2026-12-01T00:00:00.000Z".into(),
        updated_at: "2026-12-01T00:00:00.000Z".into(),
        cwd: work.display().to_string(),
        project_slug: "work".into(),
        title: None,
        parent_id: None,
        rollout_path: "/dev/null".into(),
        turns: 0,
        cost_usd: 0.0,
        state: cox_protocol::store::SessionState::Open,
        provider: None,
        model: None,
        forked: false,
    })
    .map_err(|e| e.to_string())?;

    let store =
        GitCheckpoints::open(&home, std::slice::from_ref(&work)).map_err(|e| e.to_string())?;
    if let Some(why) = store.without_snapshots() {
        return Err(format!("no snapshots: {why}"));
    }
    block(store.turn_started(session, 1, "bench"))?;

    // Cold: the first snapshot fills the private index.
    let call = CallId::from("cold");
    let start = Instant::now();
    block(store.before(session, 1, &call, Scope::Workspace))?;
    let cold = start.elapsed();
    block(store.after(session, 1, &call))?;
    println!("cold snapshot (new private repository): {:.1} ms", ms(cold));

    // A new session on the same workspace: the private index is warm, the
    // watcher starts, and the look is a full one.
    let mut fresh = Vec::new();
    for i in 0..5 {
        let again =
            GitCheckpoints::open(&home, std::slice::from_ref(&work)).map_err(|e| e.to_string())?;
        let call = CallId::from(format!("fresh{i}"));
        let start = Instant::now();
        block(again.before(session, 1, &call, Scope::Workspace))?;
        fresh.push(start.elapsed());
        block(again.after(session, 1, &call))?;
    }
    println!(
        "warm full snapshot (a new session's first; the watcher starts): median {:.1} ms",
        ms(median(fresh))
    );

    let mut warm = Vec::new();
    for i in 0..20 {
        let call = CallId::from(format!("warm{i}"));
        let start = Instant::now();
        block(store.before(session, 1, &call, Scope::Workspace))?;
        warm.push(start.elapsed());
        block(store.after(session, 1, &call))?;
    }
    println!(
        "warm snapshot, watched (nothing changed): median {:.1} ms, min {:.1} ms",
        ms(median(warm.clone())),
        ms(warm.iter().min().copied().unwrap_or_default())
    );

    // A file tool: the pre-image of one file, its row, then its post.
    let target = work.join("d07/f7.rs");
    let paths = [target.display().to_string()];
    let mut file_calls = Vec::new();
    for i in 0..50 {
        let call = CallId::from(format!("edit{i}"));
        let start = Instant::now();
        block(store.before(session, 2, &call, Scope::Files(&paths)))?;
        let kept = start.elapsed();
        std::fs::write(&target, format!("// edit {i}\n")).map_err(|e| e.to_string())?;
        let start = Instant::now();
        block(store.after(session, 2, &call))?;
        file_calls.push(kept + start.elapsed());
    }
    println!(
        "file-tool call, checkpoint added: median {:.2} ms",
        ms(median(file_calls))
    );

    // A shell call that changes one file: both snapshots and the diff.
    let mut shell_calls = Vec::new();
    let (mut befores, mut afters) = (Vec::new(), Vec::new());
    for i in 0..20 {
        let call = CallId::from(format!("bash{i}"));
        let start = Instant::now();
        block(store.before(session, 3, &call, Scope::Workspace))?;
        let kept = start.elapsed();
        std::fs::write(work.join("d11/f11.rs"), format!("// bash {i}\n"))
            .map_err(|e| e.to_string())?;
        let start = Instant::now();
        let files = block(store.after(session, 3, &call))?;
        befores.push(kept);
        afters.push(start.elapsed());
        shell_calls.push(kept + start.elapsed());
        if files.len() != 1 {
            return Err(format!(
                "the shell call should change one file, not {}",
                files.len()
            ));
        }
    }
    println!(
        "shell call, checkpoint added: median {:.1} ms (before {:.1} ms, after {:.1} ms)",
        ms(median(shell_calls)),
        ms(median(befores)),
        ms(median(afters))
    );

    // The same, when another file changed between two shell calls (an
    // edit of the model's, or the user's): `before` takes it in first.
    let (mut busy, mut busy_before) = (Vec::new(), Vec::new());
    for i in 0..20 {
        std::fs::write(work.join("d13/f13.rs"), format!("// between {i}\n"))
            .map_err(|e| e.to_string())?;
        let call = CallId::from(format!("busy{i}"));
        let start = Instant::now();
        block(store.before(session, 3, &call, Scope::Workspace))?;
        let kept = start.elapsed();
        std::fs::write(work.join("d11/f11.rs"), format!("// busy {i}\n"))
            .map_err(|e| e.to_string())?;
        let start = Instant::now();
        block(store.after(session, 3, &call))?;
        busy_before.push(kept);
        busy.push(kept + start.elapsed());
    }
    println!(
        "shell call after another file changed: median {:.1} ms (before {:.1} ms)",
        ms(median(busy)),
        ms(median(busy_before))
    );

    // A turn that wrote 100 files, then its rewind.
    block(store.turn_started(session, 4, "a hundred writes"))?;
    for i in 0..100 {
        let path = work.join(format!(
            "d{:02}/f{}.rs",
            (i * 7) % 100,
            (i * 7) % 100 + 100 * (i % 3)
        ));
        let paths = [path.display().to_string()];
        let call = CallId::from(format!("w{i}"));
        block(store.before(session, 4, &call, Scope::Files(&paths)))?;
        std::fs::write(&path, format!("// rewritten {i}\n")).map_err(|e| e.to_string())?;
        block(store.after(session, 4, &call))?;
    }
    let start = Instant::now();
    let report = block(store.rewind(session, 4, 5, false))?;
    let took = start.elapsed();
    println!(
        "rewind of a turn that wrote {} files: {:.1} ms ({} conflicts)",
        report.restored.len(),
        ms(took),
        report.conflicts.len()
    );
    Ok(())
}
