//! `cox-bench acp [RUNS] [DELTAS]`: what the editor surface costs, on the
//! release `cox` beside this binary (build both with `--release`).
//!
//! - start: `cox acp` spawned, `initialize` written, until its answer is
//!   read (RUNS times);
//! - deltas: one scripted turn streaming DELTAS one-character text deltas,
//!   from the prompt written to its answer read (every update read on the
//!   way), against the same turn with one delta; and the same pair through
//!   `cox run --output-format stream-json` (whole runs). The difference of
//!   the two per-delta costs is what ACP adds to an event.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::{ms, tempdir};

/// The release `cox` beside this binary.
pub(crate) fn release_cox() -> Result<PathBuf, String> {
    cox()
}

fn cox() -> Result<PathBuf, String> {
    let cox = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .with_file_name("cox");
    if cox.exists() {
        Ok(cox)
    } else {
        Err(format!(
            "{} is not built: cargo build --release -p cox -p cox-bench",
            cox.display()
        ))
    }
}

fn command(cox: &Path, home: &Path, scenario: &Path) -> Command {
    let mut command = Command::new(cox);
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("COX_HOME", home)
        .env("HOME", home)
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario);
    command
}

/// One `cox acp` run: the time to the `initialize` answer, and the time
/// from the prompt to its answer.
fn acp_once(
    cox: &Path,
    home: &Path,
    work: &Path,
    scenario: &Path,
) -> Result<(Duration, Duration), String> {
    let started = Instant::now();
    let mut child = command(cox, home, scenario)
        .arg("acp")
        .current_dir(work)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", cox.display()))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    let mut send = |line: String| -> Result<(), String> {
        stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush())
            .map_err(|e| e.to_string())
    };
    let mut answer_to = |id: u32| -> Result<serde_json::Value, String> {
        loop {
            let line = lines
                .next()
                .ok_or("cox acp ended early")?
                .map_err(|e| e.to_string())?;
            // An update is read, not parsed: the client's cost is not cox's.
            if line.contains(r#""method":"session/update""#) {
                continue;
            }
            let value: serde_json::Value =
                serde_json::from_str(&line).map_err(|e| e.to_string())?;
            if value["id"] == id && value.get("method").is_none() {
                return Ok(value);
            }
        }
    };
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#.into(),
    )?;
    answer_to(1)?;
    let start = started.elapsed();
    let cwd = serde_json::to_string(&work.display().to_string()).map_err(|e| e.to_string())?;
    send(format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":{cwd},"mcpServers":[]}}}}"#
    ))?;
    let session = answer_to(2)?["result"]["sessionId"].clone();
    let prompt_at = Instant::now();
    send(format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{{"sessionId":{session},"prompt":[{{"type":"text","text":"talk"}}]}}}}"#
    ))?;
    let answer = answer_to(3)?;
    let turn = prompt_at.elapsed();
    if answer["result"]["stopReason"] != "end_turn" {
        return Err(format!("the turn did not end: {answer}"));
    }
    drop(stdin);
    let _ = child.wait();
    Ok((start, turn))
}

/// One `cox run --output-format stream-json` of `scenario`, whole.
fn run_once(cox: &Path, home: &Path, work: &Path, scenario: &Path) -> Result<Duration, String> {
    let started = Instant::now();
    let status = command(cox, home, scenario)
        .args(["run", "-p", "talk", "--output-format", "stream-json"])
        .current_dir(work)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("cox run exited {status}"));
    }
    Ok(started.elapsed())
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

pub(crate) fn run(runs: usize, deltas: usize) -> Result<(), String> {
    let runs = runs.max(3);
    let deltas = deltas.max(2);
    let cox = cox()?;
    let home = tempdir::Dir::new("acp-home").map_err(|e| e.to_string())?;
    let work = tempdir::Dir::new("acp-work").map_err(|e| e.to_string())?;
    let scenario = |n: usize, name: &str| -> Result<PathBuf, String> {
        let path = work.0.join(name);
        let text = "x".repeat(n);
        std::fs::write(
            &path,
            format!("[[turn]]\nchunk_chars = 1\ntext = \"{text}\"\n"),
        )
        .map_err(|e| e.to_string())?;
        Ok(path)
    };
    let (one, many) = (scenario(1, "one.toml")?, scenario(deltas, "many.toml")?);
    // Warm the page cache and cox.db.
    acp_once(&cox, &home.0, &work.0, &one)?;
    run_once(&cox, &home.0, &work.0, &one)?;
    let (mut starts, mut acp_one, mut acp_many, mut run_one, mut run_many) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let (start, turn) = acp_once(&cox, &home.0, &work.0, &one)?;
        starts.push(start);
        acp_one.push(turn);
        acp_many.push(acp_once(&cox, &home.0, &work.0, &many)?.1);
        run_one.push(run_once(&cox, &home.0, &work.0, &one)?);
        run_many.push(run_once(&cox, &home.0, &work.0, &many)?);
    }
    let mut sorted = starts.clone();
    sorted.sort();
    println!(
        "cox acp, spawn to the initialize answer ({runs} runs): min {:.2} ms, median {:.2} ms",
        ms(sorted[0]),
        ms(median(starts))
    );
    let per = |many: Duration, one: Duration| {
        many.saturating_sub(one).as_secs_f64() * 1e6 / (deltas - 1) as f64
    };
    let (a1, an, r1, rn) = (
        median(acp_one),
        median(acp_many),
        median(run_one),
        median(run_many),
    );
    let (acp_per, run_per) = (per(an, a1), per(rn, r1));
    println!(
        "a turn of {deltas} deltas over ACP (prompt to answer): {:.1} ms (1 delta: {:.2} ms), {acp_per:.2} µs a delta",
        ms(an),
        ms(a1)
    );
    println!(
        "the same through cox run stream-json (whole runs): {:.1} ms (1 delta: {:.2} ms), {run_per:.2} µs a delta",
        ms(rn),
        ms(r1)
    );
    println!("ACP over stream-json: {:+.2} µs a delta", acp_per - run_per);
    Ok(())
}
