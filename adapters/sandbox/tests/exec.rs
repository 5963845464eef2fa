//! Behaviour of `ProcessSandbox` as the core relies on it: output capture,
//! exit status, and that every way a call can end leaves no process of the
//! command's group alive.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cox_protocol::CancelToken;
use cox_protocol::sandbox::{ExecOutput, ExecRequest, Sandbox, SandboxError};
use cox_sandbox::ProcessSandbox;

fn request(command: &str, cwd: &Path, timeout: Duration) -> ExecRequest {
    ExecRequest {
        command: command.into(),
        cwd: cwd.to_path_buf(),
        timeout,
        env: Vec::new(),
        unconfined: false,
        call_id: None,
    }
}

/// Runs a command and returns its result and the chunks `on_output` saw.
async fn exec(
    req: ExecRequest,
    cancel: CancelToken,
) -> (Result<ExecOutput, SandboxError>, Vec<u8>) {
    let seen = Mutex::new(Vec::new());
    let on_output = |chunk: &[u8]| seen.lock().unwrap().extend_from_slice(chunk);
    let result = ProcessSandbox::new().exec(req, cancel, &on_output).await;
    (result, seen.into_inner().unwrap())
}

/// Waits (up to 5 s) until `file` holds a pid, and returns it.
async fn read_pid(file: &Path) -> u32 {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(file)
            && text.ends_with('\n')
        {
            return text.trim().parse().expect("a pid");
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "no pid written to {}",
            file.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// True when `pid` is gone or a zombie, polling for up to 3 s.
async fn pid_is_dead(pid: u32) -> bool {
    let start = Instant::now();
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        let dead = match stat {
            Err(_) => true,
            // The state letter follows the `)` that closes the command name.
            Ok(stat) => stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next())
                .is_some_and(|state| state == 'Z' || state == 'X'),
        };
        if dead {
            return true;
        }
        if start.elapsed() > Duration::from_secs(3) {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn pid_file(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("pid")
}

#[tokio::test]
async fn captures_both_streams_in_arrival_order_and_reports_each_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = "echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three";
    let (result, seen) = exec(
        request(cmd, dir.path(), Duration::from_secs(10)),
        CancelToken::new(),
    )
    .await;
    let out = result.unwrap();
    assert_eq!(
        String::from_utf8(out.output.clone()).unwrap(),
        "one\ntwo\nthree\n"
    );
    assert_eq!(seen, out.output);
    assert_eq!(
        (out.exit_code, out.signal, out.timed_out, out.cancelled),
        (Some(0), None, false, false)
    );
}

#[tokio::test]
async fn interleaved_writes_keep_their_exact_order() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = "for i in $(seq 1 200); do echo out$i; echo err$i >&2; done";
    let (result, _) = exec(
        request(cmd, dir.path(), Duration::from_secs(10)),
        CancelToken::new(),
    )
    .await;
    let expected: String = (1..=200).map(|i| format!("out{i}\nerr{i}\n")).collect();
    assert_eq!(String::from_utf8(result.unwrap().output).unwrap(), expected);
}

#[tokio::test]
async fn reports_the_exit_code_and_the_killing_signal() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = exec(
        request("exit 3", dir.path(), Duration::from_secs(10)),
        CancelToken::new(),
    )
    .await;
    let out = result.unwrap();
    assert_eq!((out.exit_code, out.signal), (Some(3), None));

    let (result, _) = exec(
        request("kill -TERM $$", dir.path(), Duration::from_secs(10)),
        CancelToken::new(),
    )
    .await;
    let out = result.unwrap();
    assert_eq!(
        (out.exit_code, out.signal),
        (None, Some(15)),
        "15 is SIGTERM"
    );
}

#[tokio::test]
async fn the_leader_is_reaped_not_left_a_zombie() {
    let dir = tempfile::tempdir().unwrap();
    let file = pid_file(&dir);
    let cmd = format!("echo $$ > {}", file.display());
    let (result, _) = exec(
        request(&cmd, dir.path(), Duration::from_secs(10)),
        CancelToken::new(),
    )
    .await;
    assert_eq!(result.unwrap().exit_code, Some(0));
    // bash is our own child: unreaped, it would still show as a zombie.
    let leader = read_pid(&file).await;
    assert!(
        !Path::new(&format!("/proc/{leader}")).exists(),
        "bash {leader} was not reaped"
    );
}

#[tokio::test]
async fn runs_in_cwd_with_extra_env_and_stdin_from_dev_null() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let mut req = request(
        "echo \"$COX_TEST_VAR\"; pwd; cat",
        &cwd,
        Duration::from_secs(10),
    );
    req.env.push(("COX_TEST_VAR".into(), "hello".into()));
    let (result, _) = exec(req, CancelToken::new()).await;
    let out = result.unwrap();
    assert_eq!(
        String::from_utf8(out.output).unwrap(),
        format!("hello\n{}\n", cwd.display())
    );
    assert_eq!(out.exit_code, Some(0));
}

#[tokio::test]
async fn a_missing_cwd_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let req = request("true", &dir.path().join("nope"), Duration::from_secs(10));
    let (result, _) = exec(req, CancelToken::new()).await;
    let error = result.unwrap_err();
    let SandboxError::Spawn {
        program,
        cwd,
        source,
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!((program.as_str(), cwd), ("bash", &dir.path().join("nope")));
    assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
    // The message says the cause, which is kept as the source as well.
    assert_eq!(
        error.to_string(),
        format!(
            "could not run the command: bash in {}: {source}",
            dir.path().join("nope").display()
        )
    );
    assert!(std::error::Error::source(&error).is_some_and(|e| e.is::<std::io::Error>()));
}

#[tokio::test]
async fn timeout_kills_the_whole_group_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let file = pid_file(&dir);
    let cmd = format!(
        "echo started; sleep 30 & echo $! > {}; wait",
        file.display()
    );
    let start = Instant::now();
    let (result, _) = exec(
        request(&cmd, dir.path(), Duration::from_millis(800)),
        CancelToken::new(),
    )
    .await;
    let out = result.unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "took {:?}",
        start.elapsed()
    );
    assert!(out.timed_out && !out.cancelled);
    assert_eq!((out.exit_code, out.signal), (None, Some(9)));
    assert_eq!(out.output, b"started\n");
    assert!(
        pid_is_dead(read_pid(&file).await).await,
        "the background sleep survived the timeout"
    );
}

#[tokio::test]
async fn cancellation_kills_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let file = pid_file(&dir);
    let cmd = format!("sleep 30 & echo $! > {}; wait", file.display());
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    let pid_path = file.clone();
    tokio::spawn(async move {
        read_pid(&pid_path).await;
        trigger.cancel();
    });
    let start = Instant::now();
    let (result, _) = exec(request(&cmd, dir.path(), Duration::from_secs(60)), cancel).await;
    let out = result.unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "took {:?}",
        start.elapsed()
    );
    assert!(out.cancelled && !out.timed_out);
    assert!(
        pid_is_dead(read_pid(&file).await).await,
        "the background sleep survived cancellation"
    );
}

#[tokio::test]
async fn dropping_the_future_kills_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let file = pid_file(&dir);
    let cmd = format!("sleep 30 & echo $! > {}; wait", file.display());
    let sandbox = ProcessSandbox::new();
    let on_output = |_: &[u8]| {};
    let fut = sandbox.exec(
        request(&cmd, dir.path(), Duration::from_secs(60)),
        CancelToken::new(),
        &on_output,
    );
    tokio::select! {
        _ = fut => panic!("the command finished on its own"),
        pid = read_pid(&file) => {
            // `fut` is dropped here, mid-run.
            assert!(pid_is_dead(pid).await, "the background sleep survived the drop");
        }
    }
}

#[tokio::test]
async fn a_background_job_holding_the_pipes_does_not_block_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let file = pid_file(&dir);
    let cmd = format!("sleep 100 & echo $! > {}; echo done", file.display());
    let start = Instant::now();
    let (result, _) = exec(
        request(&cmd, dir.path(), Duration::from_secs(60)),
        CancelToken::new(),
    )
    .await;
    let out = result.unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "took {:?}",
        start.elapsed()
    );
    assert_eq!(out.output, b"done\n");
    assert_eq!(out.exit_code, Some(0));
    assert!(!out.timed_out && !out.cancelled);
    assert!(
        pid_is_dead(read_pid(&file).await).await,
        "the background sleep outlived its command"
    );
}

#[tokio::test]
async fn a_process_that_left_the_group_cannot_hang_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let file = pid_file(&dir);
    // `setsid` puts the sleep in a new session, out of reach of killpg, while
    // it keeps our stdout open; only the drain grace bounds the call.
    let cmd = format!("setsid sleep 5 & echo $! > {}; echo done", file.display());
    let start = Instant::now();
    let (result, _) = exec(
        request(&cmd, dir.path(), Duration::from_secs(60)),
        CancelToken::new(),
    )
    .await;
    let out = result.unwrap();
    let took = start.elapsed();
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert_eq!(out.output, b"done\n");
    assert_eq!(out.exit_code, Some(0));
    // Tidy up the escapee ourselves.
    let _ = std::process::Command::new("kill")
        .arg(read_pid(&file).await.to_string())
        .status();
}
