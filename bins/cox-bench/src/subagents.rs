//! `cox-bench subagents [RUNS] [FILES]`: what subagents and worktrees cost,
//! on the release `cox` beside this binary (build both with `--release`).
//!
//! - start: a headless run whose model makes one `agent` call (the child
//!   answers a word, no tools) against the same run making one call of a
//!   tool that does not exist (an instant error result); the difference of
//!   the medians is what starting a subagent costs;
//! - width: four agent calls in one message against the same four in four
//!   messages, each child answering in about 200 ms (scripted delays);
//! - worktree: on a generated repository of FILES files, `cox run
//!   --worktree` (a new worktree each run) against `cox run` in the
//!   checkout, and `git worktree add` alone.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::{ms, tempdir};

/// The median of `walls`.
fn median(walls: &mut [Duration]) -> Duration {
    walls.sort();
    walls.get(walls.len() / 2).copied().unwrap_or_default()
}

/// One `cox run` of `scenario` in `dir`; its wall time.
fn run_once(
    cox: &Path,
    home: &Path,
    dir: &Path,
    scenario: &Path,
    extra: &[&str],
) -> Result<Duration, String> {
    let started = Instant::now();
    let out = Command::new(cox)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("COX_HOME", home)
        .env("HOME", home)
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario)
        .current_dir(dir)
        .args(["run", "-p", "go", "--permission-mode", "bypassPermissions"])
        .args(extra)
        .output()
        .map_err(|e| e.to_string())?;
    let wall = started.elapsed();
    if !out.status.success() {
        return Err(format!(
            "cox run failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(wall)
}

/// The median of `runs` runs.
fn median_of(
    runs: usize,
    mut once: impl FnMut(usize) -> Result<Duration, String>,
) -> Result<Duration, String> {
    let mut walls = Vec::with_capacity(runs);
    for i in 0..runs {
        walls.push(once(i)?);
    }
    Ok(median(&mut walls))
}

const ONE_AGENT: &str = "
[[turn]]
[[turn.tool_call]]
name = \"agent\"
input = { description = \"a\", prompt = \"say ok\" }
[[turn]]
text = \"done\"
[[agent]]
description = \"a\"
[[agent.turn]]
text = \"ok\"
";

const NO_AGENT: &str = "
[[turn]]
[[turn.tool_call]]
name = \"no_such_tool\"
input = {}
[[turn]]
text = \"done\"
";

/// A child answering four words 50 ms apart: about 200 ms.
fn child(name: &str) -> String {
    format!(
        "[[agent]]\ndescription = \"{name}\"\n[[agent.turn]]\ntext = \"one two three four\"\ndelay_ms = 50\n"
    )
}

fn call(name: &str) -> String {
    format!(
        "[[turn.tool_call]]\nname = \"agent\"\ninput = {{ description = \"{name}\", prompt = \"work\" }}\n"
    )
}

fn git(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "b")
        .env("GIT_AUTHOR_EMAIL", "b@b")
        .env("GIT_COMMITTER_NAME", "b")
        .env("GIT_COMMITTER_EMAIL", "b@b")
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

pub fn run(runs: usize, files: usize) -> Result<(), String> {
    let cox = crate::acp::release_cox()?;
    let runs = runs.max(1);
    let home = tempdir::Dir::new("sub-home").map_err(|e| e.to_string())?;
    let work = tempdir::Dir::new("sub-work").map_err(|e| e.to_string())?;
    let scenarios = tempdir::Dir::new("sub-scenarios").map_err(|e| e.to_string())?;
    let write = |name: &str, text: &str| -> Result<std::path::PathBuf, String> {
        let path = scenarios.0.join(name);
        std::fs::write(&path, text).map_err(|e| e.to_string())?;
        Ok(path)
    };

    // Start.
    let with = write("one.toml", ONE_AGENT)?;
    let without = write("none.toml", NO_AGENT)?;
    // Warm the page cache and cox.db before timing.
    run_once(&cox, &home.0, &work.0, &with, &[])?;
    let agent = median_of(runs, |_| run_once(&cox, &home.0, &work.0, &with, &[]))?;
    let plain = median_of(runs, |_| run_once(&cox, &home.0, &work.0, &without, &[]))?;
    println!(
        "a run with one subagent (a word, no tools): {:.1} ms; with an instant tool call instead: {:.1} ms; starting a subagent costs {:.1} ms ({runs} runs, medians)",
        ms(agent),
        ms(plain),
        ms(agent.saturating_sub(plain))
    );

    // Width.
    let names = ["w1", "w2", "w3", "w4"];
    let children: String = names.iter().map(|n| child(n)).collect();
    let mut parallel = String::from("[[turn]]\n");
    for name in names {
        parallel.push_str(&call(name));
    }
    parallel.push_str("[[turn]]\ntext = \"done\"\n");
    parallel.push_str(&children);
    let mut sequential = String::new();
    for name in names {
        sequential.push_str("[[turn]]\n");
        sequential.push_str(&call(name));
    }
    sequential.push_str("[[turn]]\ntext = \"done\"\n");
    sequential.push_str(&children);
    let parallel = write("parallel.toml", &parallel)?;
    let sequential = write("sequential.toml", &sequential)?;
    let wide = median_of(runs.min(5), |_| {
        run_once(&cox, &home.0, &work.0, &parallel, &[])
    })?;
    let narrow = median_of(runs.min(5), |_| {
        run_once(&cox, &home.0, &work.0, &sequential, &[])
    })?;
    println!(
        "4 subagents of ~200 ms each: in one message {:.0} ms, one after another {:.0} ms",
        ms(wide),
        ms(narrow)
    );

    // Worktree.
    let code = tempdir::Dir::new("sub-repo").map_err(|e| e.to_string())?;
    let repo = code.0.join("repo");
    std::fs::create_dir_all(&repo).map_err(|e| e.to_string())?;
    git(&repo, &["init", "-q", "-b", "main"])?;
    for i in 0..files {
        let dir = repo.join(format!("d{}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        }
        std::fs::write(dir.join(format!("f{i}.txt")), format!("file {i}\n"))
            .map_err(|e| e.to_string())?;
    }
    git(&repo, &["add", "-A"])?;
    git(&repo, &["commit", "-q", "-m", "files"])?;
    let hello = write("hello.toml", "[[turn]]\ntext = \"hi\"\n")?;
    let worktree_runs = runs.min(5);
    let in_checkout = median_of(worktree_runs, |_| {
        run_once(&cox, &home.0, &repo, &hello, &[])
    })?;
    let in_worktree = median_of(worktree_runs, |i| {
        let name = format!("b{i}");
        run_once(&cox, &home.0, &repo, &hello, &["--worktree", &name])
    })?;
    let git_alone = median_of(worktree_runs, |i| {
        let target = code.0.join(format!("_worktrees/plain-{i}"));
        let started = Instant::now();
        git(
            &repo,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                &format!("p{i}"),
                &target.to_string_lossy(),
            ],
        )?;
        Ok(started.elapsed())
    })?;
    println!(
        "worktree in a {files}-file repository: cox run --worktree (new) {:.0} ms, cox run in the checkout {:.0} ms, git worktree add alone {:.0} ms ({worktree_runs} runs, medians)",
        ms(in_worktree),
        ms(in_checkout),
        ms(git_alone)
    );
    Ok(())
}
