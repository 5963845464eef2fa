//! A differential oracle: the split checked against real bash. Each line
//! (a fixed-seed sample from `common/gen.rs` and a hand-written list of
//! adversarial ones) is run by `bash --norc --noprofile -c LINE` with a
//! `PATH` of only stub programs (each appends its name to `$LOG` and exits
//! 0) and symlinks to the wrappers the generator uses, in a fresh temp
//! directory, with an empty environment, stdin from /dev/null, and a kill
//! of its process group after 3 s. Every stub that ran must be among the
//! program names the split reports (`linegen::reported`), unless the split
//! marks the line [`cox_bash::Opacity::DynamicCommand`] (fewer than 10 %
//! of the sample may be), and among the names the generator put in command
//! position (which checks the generator). The stub `find` runs the real
//! `find` after logging, so `find -exec` runs its command; nothing else on
//! `PATH` can change a file outside the temp directory. Skipped, passing,
//! only when there is no `bash`.

#[path = "common/gen.rs"]
mod linegen;

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// How many generated lines are run.
const SAMPLE: u64 = 300;
/// The seed of the first generated line; line `i` uses `SEED + i`.
const SEED: u64 = 0x0c0c_5eed_0000;
/// A line still running after this is killed (and fails).
const KILL_AFTER: Duration = Duration::from_secs(3);
/// How long background jobs of a line get to run after bash exits.
const GRACE: Duration = Duration::from_millis(100);

/// The programs the lines may run besides the stubs.
const TOOLS: [&str; 13] = [
    "bash", "sh", "nohup", "timeout", "env", "nice", "stdbuf", "xargs", "find", "echo", "true",
    "false", "sleep",
];

/// Adversarial lines and exactly the stubs bash runs from each.
const HANDWRITTEN: &[(&str, &[&str])] = &[
    ("echo | nohup 2>/dev/null rm -rf x", &["rm"]),
    ("true && find . 2>/dev/null -delete", &["find"]),
    ("nohup 0</dev/null rm y", &["rm"]),
    ("nohup <<EOF rm y\nx\nEOF", &["rm"]),
    ("make <<EOF -f /tmp/evil.mk\nall:\n\ttrue\nEOF", &["make"]),
    ("git -C . push", &["git"]),
    ("a=rm; $a x", &["rm"]),
    ("$'\\x72m' x", &["rm"]),
    ("{rm,x}", &["rm"]),
    ("r$()m x", &["rm"]),
    ("timeout 2>/dev/null 5 rm x", &["rm"]),
    ("nice -n 2>/dev/null 1 rm x", &["rm"]),
    ("env 2>/dev/null A=1 rm x", &["rm"]),
    ("xargs <<<x 2>&1 rm", &["rm"]),
    ("2>/dev/null A=1 rm x", &["rm"]),
    ("3<&0 rm x 2>&- <<<w", &["rm"]),
    ("command 2>/dev/null rm x", &["rm"]),
    ("builtin command rm x", &["rm"]),
    ("( exec -a x rm y )", &["rm"]),
    ("time -p rm x", &["rm"]),
    ("! rm x", &["rm"]),
    ("stdbuf -o0 nice nohup timeout 5 rm x", &["rm"]),
    ("xargs -0 rm </dev/null", &["rm"]),
    ("\\rm x; r\"\"m y; 'rm' z; \"rm\" w", &["rm"]),
    ("${u:-rm} x", &["rm"]),
    (
        "find . -maxdepth 0 -exec 2>/dev/null rm {} \\;",
        &["find", "rm"],
    ),
    ("find . -maxdepth 0 -exec p1 {} +", &["find", "p1"]),
    ("cat <<EOF | rm x\nbody\nEOF", &["cat", "rm"]),
    ("p1 <<EOF && p2\n$(p3 x)\nEOF", &["p1", "p2", "p3"]),
    ("p1 <<'EOF'\n$(p3 x)\nEOF", &["p1"]),
    ("p1 <<-EOF\n\t`p3`\n\tEOF", &["p1", "p3"]),
    ("sh -c 'p1; sh -c '\\''p2 x'\\'''", &["p1", "p2"]),
    ("bash -c \"eval \\\"p1 x\\\"\"", &["p1"]),
    ("echo 'p1 x' | sh", &["p1"]),
    ("bash <<<'p2 y'", &["p2"]),
    ("sh <<'EOF'\np4 x\nEOF", &["p4"]),
    ("f() { p1; }; f", &["p1"]),
    ("function g { p2 x; }\ng y", &["p2"]),
    ("rm x |& tee y", &["rm", "tee"]),
    ("case x in x) rm y;; esac", &["rm"]),
    ("if false; then :; elif true; then rm x; fi", &["rm"]),
    ("for i in 1; do rm x; done", &["rm"]),
    ("while ! p1; do :; done", &["p1"]),
    ("until p2; do :; done", &["p2"]),
    ("echo $(rm x) `p1`", &["p1", "rm"]),
    (
        "A=1 nohup 2>/dev/null p1 <<EOF x\nbody\nEOF\np2",
        &["p1", "p2"],
    ),
    ("xargs -n 1 <<<'a b' p5", &["p5"]),
    ("env -u A p3", &["p3"]),
    ("nice -5 p4", &["p4"]),
    ("timeout -k 1 5 p5", &["p5"]),
    ("p1 &\np2", &["p1", "p2"]),
    ("{ p1; } 2>/dev/null <<EOF\nx\nEOF", &["p1"]),
    ("python3 <<EOF\nprint(1)\nEOF", &["python3"]),
    ("head -n1 </dev/null | curl -s x", &["curl", "head"]),
];

/// A temp directory with the stubs and tools, removed when dropped.
struct Sandbox {
    root: PathBuf,
    stubs: PathBuf,
    tools: PathBuf,
    bash: PathBuf,
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

/// What running a line did.
struct Run {
    executed: BTreeSet<String>,
    timed_out: bool,
    stderr: String,
}

/// One line to check.
struct Case {
    line: String,
    /// The generator's names, or the hand-written exact set.
    truth: BTreeSet<String>,
    handwritten: bool,
}

fn executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A program on the test's own `PATH`.
fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| executable(p))
}

fn sandbox(bash: PathBuf) -> Sandbox {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let root = std::env::temp_dir().join(format!("cox-oracle-{}-{nanos}", std::process::id()));
    let stubs = root.join("stubs");
    let tools = root.join("tools");
    fs::create_dir_all(&stubs).expect("stub dir");
    fs::create_dir_all(&tools).expect("tools dir");
    let sandbox = Sandbox {
        root,
        stubs,
        tools,
        bash,
    };
    for tool in TOOLS {
        if let Some(real) = find_program(tool) {
            std::os::unix::fs::symlink(real, sandbox.tools.join(tool)).expect("tool symlink");
        }
    }
    let real_find = sandbox.tools.join("find");
    let tools_path = real_find.to_str().expect("a UTF-8 temp dir");
    assert!(!tools_path.contains('\''), "a quote in {tools_path}");
    for stub in linegen::STUBS {
        let mut script = String::from("#!/bin/sh\necho \"${0##*/}\" >>\"$LOG\"\n");
        if stub == "find" && real_find.exists() {
            script.push_str(&format!("exec '{tools_path}' \"$@\"\n"));
        } else {
            script.push_str("exit 0\n");
        }
        let path = sandbox.stubs.join(stub);
        fs::write(&path, script).expect("stub");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    sandbox
}

/// Whether the line may leave processes running after bash exits: a `&`
/// that is not part of `&&`, `>&`, `<&`, `&>` or `|&`, or a process
/// substitution.
fn may_leave_processes(line: &str) -> bool {
    let b = line.as_bytes();
    let lone_amp = (0..b.len()).any(|i| {
        b[i] == b'&'
            && !(i > 0 && matches!(b[i - 1], b'&' | b'>' | b'<' | b'|'))
            && !(i + 1 < b.len() && matches!(b[i + 1], b'&' | b'>'))
    });
    lone_amp || line.contains("<(") || line.contains(">(")
}

fn kill_group(bash: &Path, pgid: u32) {
    let _ = Command::new(bash)
        .args([
            "--norc",
            "--noprofile",
            "-c",
            "kill -KILL -- -\"$1\" 2>/dev/null",
            "kill",
        ])
        .arg(pgid.to_string())
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn run(sandbox: &Sandbox, index: usize, line: &str) -> Run {
    let dir = sandbox.root.join(format!("run{index}"));
    let cwd = dir.join("cwd");
    let home = dir.join("home");
    fs::create_dir_all(&cwd).expect("cwd");
    fs::create_dir_all(&home).expect("home");
    let log = dir.join("log");
    let err = dir.join("stderr");
    let path = std::env::join_paths([&sandbox.stubs, &sandbox.tools]).expect("PATH");
    let mut child = Command::new(&sandbox.bash)
        .args(["--norc", "--noprofile", "-c", line])
        .env_clear()
        .env("PATH", path)
        .env("HOME", &home)
        .env("COX_HOME", &home)
        .env("LOG", &log)
        .current_dir(&cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(&err).expect("stderr file"))
        .process_group(0)
        .spawn()
        .expect("spawn bash");
    let started = Instant::now();
    let mut timed_out = false;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < KILL_AFTER => thread::sleep(Duration::from_millis(2)),
            _ => {
                timed_out = true;
                kill_group(&sandbox.bash, child.id());
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
        }
    }
    if !timed_out && may_leave_processes(line) {
        thread::sleep(GRACE);
    }
    kill_group(&sandbox.bash, child.id());
    let executed = fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    let stderr = fs::read_to_string(&err).unwrap_or_default();
    let _ = fs::remove_dir_all(&dir);
    Run {
        executed,
        timed_out,
        stderr,
    }
}

fn cases() -> Vec<Case> {
    let mut cases: Vec<Case> = (0..SAMPLE)
        .map(|i| {
            let generated = linegen::from_seed(SEED + i);
            Case {
                line: generated.line,
                truth: generated.names,
                handwritten: false,
            }
        })
        .collect();
    cases.extend(HANDWRITTEN.iter().map(|(line, names)| Case {
        line: (*line).to_owned(),
        truth: names.iter().map(|n| (*n).to_owned()).collect(),
        handwritten: true,
    }));
    cases
}

/// Runs every case on two threads.
fn run_all(sandbox: &Sandbox, cases: &[Case]) -> Vec<Run> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Run>>> = Mutex::new((0..cases.len()).map(|_| None).collect());
    thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { break };
                    let result = run(sandbox, i, &case.line);
                    results.lock().expect("results")[i] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .expect("results")
        .into_iter()
        .map(|r| r.expect("every case ran"))
        .collect()
}

fn first_lines(text: &str, n: usize) -> String {
    text.lines().take(n).collect::<Vec<_>>().join(" | ")
}

#[test]
fn split_reports_every_program_bash_runs() {
    let Some(bash) = find_program("bash") else {
        println!("oracle skipped: no bash on PATH");
        return;
    };
    let started = Instant::now();
    let sandbox = sandbox(bash);
    let cases = cases();
    let runs = run_all(&sandbox, &cases);

    let mut failures = Vec::new();
    let mut dynamic = 0;
    let mut ran_something = 0;
    for (case, run) in cases.iter().zip(&runs) {
        let got = cox_bash::split(&case.line);
        let reported = linegen::reported(&got);
        let exempt = linegen::exempt(&got);
        if exempt && !case.handwritten {
            dynamic += 1;
        }
        if !run.executed.is_empty() && !case.handwritten {
            ran_something += 1;
        }
        let mut problems = Vec::new();
        if run.timed_out {
            problems.push(format!("still running after {KILL_AFTER:?}"));
        }
        let unreported: BTreeSet<_> = run.executed.difference(&reported).collect();
        if !exempt && !unreported.is_empty() {
            problems.push(format!("the split does not report {unreported:?}"));
        }
        let untold: BTreeSet<_> = run.executed.difference(&case.truth).collect();
        if !untold.is_empty() {
            problems.push(format!(
                "the generator did not place {untold:?} in command position"
            ));
        }
        if case.handwritten && run.executed != case.truth {
            problems.push(format!("expected to run exactly {:?}", case.truth));
        }
        if !problems.is_empty() {
            failures.push(format!(
                "line: {:?}\n  executed: {:?}\n  reported: {:?}\n  opaque:   {:?}\n  {}\n  stderr:   {}",
                case.line,
                run.executed,
                reported,
                got.opaque,
                problems.join("; "),
                first_lines(&run.stderr, 3),
            ));
        }
    }
    println!(
        "oracle: {} lines in {:?}; {dynamic} of {SAMPLE} generated lines exempt (DynamicCommand), \
         {ran_something} ran a stub",
        cases.len(),
        started.elapsed()
    );
    for failure in &failures {
        println!("{failure}\n");
    }
    assert!(
        failures.is_empty(),
        "{} of {} lines failed (printed above)",
        failures.len(),
        cases.len()
    );
    assert!(
        dynamic * 10 < SAMPLE as usize,
        "{dynamic} of {SAMPLE} generated lines are DynamicCommand, 10 % allowed"
    );
    assert!(
        ran_something * 2 > SAMPLE as usize,
        "only {ran_something} of {SAMPLE} generated lines ran a stub: is the harness broken?"
    );
}

/// Prints the generated sample (`cargo test --test oracle -- --ignored
/// --nocapture print_sample`), to look at what the generator writes.
#[test]
#[ignore = "prints the sample only"]
fn print_sample() {
    for i in 0..SAMPLE {
        let generated = linegen::from_seed(SEED + i);
        println!("--- {i} {:?}\n{}", generated.names, generated.line);
    }
}

/// Runs the lines in `$COX_ORACLE_LINES` (separated by the byte 0x1e) and
/// prints what bash ran and what the split reports: `COX_ORACLE_LINES=…
/// cargo test --test oracle -- --ignored --nocapture probe`.
#[test]
#[ignore = "runs the lines of $COX_ORACLE_LINES only"]
fn probe() {
    let (Some(bash), Ok(lines)) = (find_program("bash"), std::env::var("COX_ORACLE_LINES")) else {
        println!("probe: needs bash and $COX_ORACLE_LINES");
        return;
    };
    let sandbox = sandbox(bash);
    for (i, line) in lines.split('\x1e').enumerate() {
        let run = run(&sandbox, i, line);
        let got = cox_bash::split(line);
        println!(
            "{line:?}\n  executed: {:?}\n  reported: {:?}\n  opaque:   {:?}",
            run.executed,
            linegen::reported(&got),
            got.opaque
        );
    }
}
