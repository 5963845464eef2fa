//! `cox-bench telemetry [ROUNDS] [RUNS]`: what observability costs the
//! real `cox` binary (the one beside this one; build both with
//! `--release`).
//!
//! One headless session of ROUNDS provider rounds (a `read` each, then a
//! text answer) through the scripted provider, RUNS times (after one
//! warm-up run) in each of four settings, interleaved so noise lands on all:
//! - off: the JSON log only;
//! - on: OTLP export to a loopback collector that answers at once
//!   (TCP_NODELAY), whose requests and bytes are counted;
//! - down: export to a port nothing listens on;
//! - silent: export to a collector that takes the requests and never
//!   answers (the exit's bounded flush is the whole difference).
//!
//! Printed: wall time (min, median) and peak RSS per setting, and the
//! median's change from `off`.
//!
//! Then, in this process, a session of 20 user turns (a `read`, a `bash`
//! call and a text answer each) through the real session, its events fed
//! to the spans of `cox_cli::telemetry::Watch`, RUNS times with export off
//! and on (to the loopback collector), interleaved: the session's wall time
//! with the exit's flush included.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::{Bench, ms, tempdir, wait_with_rusage};

/// Counts of what a collector took.
#[derive(Default)]
struct Taken {
    requests: AtomicU64,
    bytes: AtomicU64,
}

/// A loopback OTLP/HTTP collector: answers 200 at once, or never.
fn collector(answer: bool) -> Result<(String, Arc<Taken>), String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let url = format!(
        "http://{}",
        listener.local_addr().map_err(|e| e.to_string())?
    );
    let taken = Arc::new(Taken::default());
    let counts = Arc::clone(&taken);
    std::thread::spawn(move || {
        for socket in listener.incoming().flatten() {
            let counts = Arc::clone(&counts);
            std::thread::spawn(move || serve(socket, answer, &counts));
        }
    });
    Ok((url, taken))
}

fn serve(socket: TcpStream, answer: bool, taken: &Taken) {
    let _ = socket.set_nodelay(true);
    let mut reader = BufReader::new(socket);
    loop {
        // The request line, then the headers up to the blank line.
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        taken.requests.fetch_add(1, Ordering::Relaxed);
        taken.bytes.fetch_add(length as u64, Ordering::Relaxed);
        if !answer {
            std::thread::sleep(Duration::from_secs(120));
            return;
        }
        let ok =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if reader.get_mut().write_all(ok.as_bytes()).is_err() {
            return;
        }
    }
}

/// A scenario of `rounds` provider rounds: reads, then a text answer.
fn scenario(rounds: usize) -> String {
    let mut text = String::new();
    for _ in 1..rounds {
        text.push_str(
            "[[turn]]\n[[turn.tool_call]]\nname = \"read\"\ninput = { path = \"a.txt\" }\n\n",
        );
    }
    text.push_str("[[turn]]\ntext = \"Read it.\"\n");
    text
}

struct Setting {
    name: &'static str,
    /// The collector's URL, or none for export off.
    url: Option<String>,
    home: tempdir::Dir,
    walls: Vec<Duration>,
    peak_kb: i64,
}

fn run_once(cox: &Path, setting: &mut Setting, work: &Path, scenario: &Path) -> Result<(), String> {
    let mut command = Command::new(cox);
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("COX_HOME", &setting.home.0)
        .env("HOME", &setting.home.0)
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario)
        .current_dir(work)
        .args([
            "run",
            "-p",
            "read a.txt",
            "--permission-mode",
            "acceptEdits",
        ])
        .stdout(std::process::Stdio::null());
    if let Some(url) = &setting.url {
        command
            .env("COX_TELEMETRY_OTEL", "true")
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", url);
    }
    let started = Instant::now();
    let child = command
        .spawn()
        .map_err(|e| format!("{}: {e}", cox.display()))?;
    let (code, peak_kb) = wait_with_rusage(child.id())?;
    let wall = started.elapsed();
    if code != 0 {
        return Err(format!("{}: cox exited {code}", setting.name));
    }
    setting.walls.push(wall);
    setting.peak_kb = setting.peak_kb.max(peak_kb);
    Ok(())
}

pub(crate) fn run(rounds: usize, runs: usize) -> Result<(), String> {
    let rounds = rounds.max(2);
    let runs = runs.max(3);
    let cox: PathBuf = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .with_file_name("cox");
    if !cox.exists() {
        return Err(format!(
            "{} is not built: cargo build --release -p cox -p cox-bench",
            cox.display()
        ));
    }
    let work = tempdir::Dir::new("telemetry-work").map_err(|e| e.to_string())?;
    std::fs::write(work.0.join("a.txt"), "fn main() {}\n".repeat(40)).map_err(|e| e.to_string())?;
    let scenario_path = work.0.join("scenario.toml");
    std::fs::write(&scenario_path, scenario(rounds)).map_err(|e| e.to_string())?;
    let (on_url, on_taken) = collector(true)?;
    let (silent_url, _) = collector(false)?;
    let down_url = {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        format!(
            "http://{}",
            listener.local_addr().map_err(|e| e.to_string())?
        )
    };
    let mut settings = Vec::new();
    for (name, url) in [
        ("off", None),
        ("on", Some(on_url)),
        ("down", Some(down_url)),
        ("silent", Some(silent_url)),
    ] {
        settings.push(Setting {
            name,
            url,
            home: tempdir::Dir::new("telemetry-home").map_err(|e| e.to_string())?,
            walls: Vec::with_capacity(runs),
            peak_kb: 0,
        });
    }
    for setting in &mut settings {
        run_once(&cox, setting, &work.0, &scenario_path)?;
        setting.walls.clear();
    }
    let warmup_requests = on_taken.requests.load(Ordering::Relaxed);
    let warmup_bytes = on_taken.bytes.load(Ordering::Relaxed);
    for _ in 0..runs {
        for setting in &mut settings {
            run_once(&cox, setting, &work.0, &scenario_path)?;
        }
    }
    println!(
        "a headless session of {rounds} provider rounds ({} reads, then text), {runs} runs each:",
        rounds - 1
    );
    let mut off_median = None;
    for setting in &mut settings {
        setting.walls.sort();
        let median = setting.walls[setting.walls.len() / 2];
        let change = off_median.map_or(String::new(), |off: Duration| {
            format!(
                ", {:+.1} % over off",
                (median.as_secs_f64() / off.as_secs_f64() - 1.0) * 100.0
            )
        });
        if setting.name == "off" {
            off_median = Some(median);
        }
        println!(
            "  export {:<6}: wall min {:.2} ms, median {:.2} ms{change}; peak RSS {:.1} MB",
            setting.name,
            ms(setting.walls[0]),
            ms(median),
            setting.peak_kb as f64 / 1024.0
        );
    }
    let requests = on_taken.requests.load(Ordering::Relaxed) - warmup_requests;
    let bytes = on_taken.bytes.load(Ordering::Relaxed) - warmup_bytes;
    println!(
        "  the collector took {:.1} requests and {:.1} KB per session",
        requests as f64 / runs as f64,
        bytes as f64 / runs as f64 / 1024.0
    );
    let on_url = settings[1].url.clone().unwrap_or_default();
    twenty_turns(&on_url, runs)
}

/// The exporter `cox` links, for the in-process session.
fn start_otlp(
    settings: &cox_cli::telemetry::export::Settings,
) -> Result<Arc<dyn cox_protocol::telemetry::Export>, String> {
    Ok(Arc::new(cox_telemetry::Otlp::start(
        &settings.traces,
        &settings.logs,
        |why| eprintln!("cox-bench: the exporter did not start: {why}"),
    )))
}

/// 20 user turns in this process, export off and on (see the module doc).
fn twenty_turns(url: &str, runs: usize) -> Result<(), String> {
    use cox_cli::telemetry::{Watch, export};
    use std::fmt::Write as _;
    const TURNS: usize = 20;
    let usage = "{ input_tokens = 2000, output_tokens = 40 }";
    let mut toml = String::new();
    for turn in 1..=TURNS {
        let _ = writeln!(
            toml,
            "[[turn]]\nusage = {usage}\n[[turn.tool_call]]\nname = \"read\"\ninput = {{ path = \"notes.txt\" }}\n\
             [[turn]]\nusage = {usage}\n[[turn.tool_call]]\nname = \"bash\"\ninput = {{ command = \"echo turn {turn}\" }}\n\
             [[turn]]\nusage = {usage}\ntext = \"Turn {turn} done.\""
        );
    }
    export::provide(start_otlp);
    let (mut off, mut on) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for round in 0..=runs {
        for exporting in [false, true] {
            let scenario = cox_scripted::Scenario::parse(&toml, "telemetry bench")
                .map_err(|e| e.to_string())?;
            let bench = Bench::new()?;
            std::fs::write(
                bench.cwd.join("notes.txt"),
                "a note worth reading\n".repeat(50),
            )
            .map_err(|e| e.to_string())?;
            let started = Instant::now();
            export::start(exporting, Some(url)).map_err(|e| e.to_string())?;
            let mut watch = Watch::new(cox_protocol::catalog::Catalog::default());
            bench.run(scenario, TURNS, |event| watch.event(event))?;
            drop(watch);
            let delivery = export::finish();
            let wall = started.elapsed();
            if exporting && delivery.is_none_or(|d| d.lost() != (0, 0)) {
                return Err(format!(
                    "the collector did not take everything: {delivery:?}"
                ));
            }
            // The first round warms up.
            if round > 0 {
                if exporting { &mut on } else { &mut off }.push(wall);
            }
        }
    }
    off.sort();
    on.sort();
    let (off_median, on_median) = (off[off.len() / 2], on[on.len() / 2]);
    println!(
        "a session of {TURNS} user turns (read, bash, text each) in this process, {runs} runs each:"
    );
    println!(
        "  export off: wall min {:.2} ms, median {:.2} ms",
        ms(off[0]),
        ms(off_median)
    );
    println!(
        "  export on : wall min {:.2} ms, median {:.2} ms, {:+.1} % over off (the flush at the end included)",
        ms(on[0]),
        ms(on_median),
        (on_median.as_secs_f64() / off_median.as_secs_f64() - 1.0) * 100.0
    );
    Ok(())
}
