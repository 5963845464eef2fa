//! The real binary's terminal UI, driven through tmux with the scripted
//! provider: type a prompt, see what the write would put in the file,
//! approve it with `y`, see the file written and the answer; see an edit's
//! diff at the file's own line numbers before approving it; start a long command and interrupt it with Esc;
//! quit with Ctrl+C twice and find the transcript in the scrollback.
//! Skipped (with a message) where tmux is not installed; CI installs it.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{Env, scenario};

/// A tmux server of the test's own.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(env: &Env, args: &str) -> Option<Tmux> {
        Self::start_with(env, "", args)
    }

    /// `cox ARGS` with the variables of `vars` (`K=V …`) set.
    fn start_with(env: &Env, vars: &str, args: &str) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!("tmux is not installed: skipping the terminal UI test");
            return None;
        }
        let socket = format!("cox-test-{}-{}", std::process::id(), rand_suffix());
        let cox = env!("CARGO_BIN_EXE_cox");
        let command = format!(
            // No session bus: a login never reaches the runner's keyring.
            "cd {} && COX_HOME={home} HOME={home} XDG_RUNTIME_DIR={home} {vars} \
             env -u DBUS_SESSION_BUS_ADDRESS {cox} {args}; echo EXITED $?; sleep 30",
            env.work.path().display(),
            home = env.home.path().display()
        );
        let status = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "new-session",
                "-d",
                "-x",
                "100",
                "-y",
                "30",
                &command,
            ])
            .env_remove("TMUX")
            .status()
            .unwrap();
        assert!(status.success());
        Some(Tmux { socket })
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-S", "-200"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        Command::new("tmux")
            .args(["-L", &self.socket, "send-keys"])
            .args(keys)
            .status()
            .unwrap();
    }

    fn wait_for(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "`{needle}` never showed; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

fn args(scenario_name: &str, extra: &str) -> String {
    format!(
        "--provider scripted --scenario {} {extra}",
        scenario(scenario_name).display()
    )
}

#[test]
fn type_approve_see_the_file_then_quit() {
    let env = Env::new();
    let Some(tmux) = Tmux::start(&env, &args("hello", "")) else {
        return;
    };
    tmux.wait_for("/ commands");
    tmux.keys(&["create hello.txt containing hi", "Enter"]);
    let asked = tmux.wait_for("y allow once");
    // What the write would put in the file shows before any key.
    assert!(asked.contains("hello.txt (new, 1 line)"), "{asked}");
    assert!(asked.contains("1 +hi"), "{asked}");
    assert!(!env.work.path().join("hello.txt").exists());
    // Keys typed as the prompt appears are not answers; wait past that.
    std::thread::sleep(Duration::from_millis(400));
    tmux.keys(&["y"]);
    tmux.wait_for("Created hello.txt.");
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("EXITED 0");
    // The transcript lands in the scrollback once the screen is restored.
    assert!(
        screen.contains("> create hello.txt containing hi"),
        "{screen}"
    );
    assert!(screen.contains("[write "), "{screen}");
}

#[test]
fn an_edit_s_approval_shows_its_diff_at_the_file_s_line_numbers() {
    let env = Env::new();
    std::fs::write(env.work.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    let Some(tmux) = Tmux::start(&env, &args("read_then_edit", "")) else {
        return;
    };
    tmux.wait_for("/ commands");
    tmux.keys(&["change beta to gamma", "Enter"]);
    let asked = tmux.wait_for("y allow once");
    for line in ["1  alpha", "2 -beta", "2 +gamma"] {
        assert!(asked.contains(line), "`{line}` is not on screen:\n{asked}");
    }
    std::thread::sleep(Duration::from_millis(400));
    tmux.keys(&["y"]);
    tmux.wait_for("Changed beta to gamma.");
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("notes.txt")).unwrap(),
        "alpha\ngamma\n"
    );
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED 0");
}

#[test]
fn model_switches_to_a_tier_s_model_and_refuses_an_unknown_one() {
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[tiers.think]\nmodel = \"local-thinker\"\n",
    )
    .unwrap();
    let Some(tmux) = Tmux::start(&env, &args("hello", "")) else {
        return;
    };
    tmux.wait_for("/ commands");
    tmux.keys(&["/model no-such-model", "Enter"]);
    tmux.wait_for("not switched");
    tmux.keys(&["Escape"]);
    // Keys right after Esc would read as Alt+key to the terminal.
    std::thread::sleep(Duration::from_millis(300));
    tmux.keys(&["/model local-thinker", "Enter"]);
    // The status line names the model main turns now run on.
    let screen = tmux.wait_for("local-thinker (code)");
    assert!(
        !screen.contains("not switched: `local-thinker`"),
        "{screen}"
    );
}

#[test]
fn esc_interrupts_a_long_command() {
    let env = Env::new();
    let Some(tmux) = Tmux::start(
        &env,
        &args("interrupt_tool", "--permission-mode bypassPermissions"),
    ) else {
        return;
    };
    tmux.wait_for("/ commands");
    tmux.keys(&["run the long thing", "Enter"]);
    // The command's own output line (its text is on screen earlier, in the
    // call's subject).
    tmux.wait_for("│ started");
    let began = Instant::now();
    tmux.keys(&["Escape"]);
    tmux.wait_for("interrupted");
    assert!(began.elapsed() < Duration::from_secs(5));
    // The sandbox gives the command its own pid namespace, so the pid it
    // wrote is not the host's: look for a sleep still working in the
    // session's folder instead.
    let work = env.work.path().canonicalize().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while let Some(pid) = common::sleep_31_in(&work) {
        assert!(
            Instant::now() < deadline,
            "process {pid} in the work folder outlived Esc: {}",
            describe(&pid)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED 0");
}

#[test]
fn resume_picks_an_earlier_session_and_shows_it() {
    let env = Env::new();
    let out = env.run("hello", &["--permission-mode", "acceptEdits"]);
    assert_eq!(out.status.code(), Some(0));
    let Some(tmux) = Tmux::start(&env, &args("hello", "")) else {
        return;
    };
    tmux.wait_for("/ commands");
    tmux.keys(&["/resume", "Enter"]);
    let list = tmux.wait_for("Enter to pick up");
    // The list leads with the session's title: its prompt's first line.
    assert!(list.contains("do the task · "), "{list}");
    tmux.keys(&["Enter"]);
    // Wait for the answer: the title alone is on the list already.
    let screen = tmux.wait_for("Created hello.txt.");
    assert!(screen.contains("do the task"), "{screen}");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED 0");
}

#[test]
fn without_a_terminal_the_ui_says_so_in_one_line() {
    let env = Env::new();
    let out = env
        .cox()
        .args(["--provider", "scripted", "--scenario"])
        .arg(scenario("hello"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    common::assert_one_line_error(&out, "the terminal UI needs a terminal");
    assert!(env.rollouts().is_empty());
}

/// Another process holds `cox.db`'s write lock for 2 s while a turn runs:
/// the usage row waits for it, but the screen keeps answering keys (each key
/// typed shows within a bound far under the lock's 2 s; the longest is
/// printed), and once the lock is gone the turn ends and no row is lost.
#[test]
fn a_locked_cox_db_does_not_freeze_the_screen_and_loses_no_row() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("python3 is not installed: skipping the locked cox.db test");
        return;
    }
    let env = Env::new();
    let Some(tmux) = Tmux::start(&env, &args("locked_db", "")) else {
        return;
    };
    tmux.wait_for("/ commands");
    let db = env.home.path().join("cox.db");
    assert!(db.exists(), "the session started its record");
    let mut locker = Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys, time\n\
             c = sqlite3.connect(sys.argv[1], isolation_level=None)\n\
             c.execute('BEGIN IMMEDIATE')\n\
             print('locked', flush=True)\n\
             time.sleep(2)\n\
             c.execute('COMMIT')\n",
        ])
        .arg(&db)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(locker.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "locked");
    let locked_at = Instant::now();
    tmux.keys(&["say something", "Enter"]);
    // While the lock is held, type and time how long each key takes to show.
    let mut longest = Duration::ZERO;
    let mut typed = String::new();
    for key in ["q", "w", "e", "r", "t", "y"] {
        if locked_at.elapsed() > Duration::from_millis(1700) {
            break;
        }
        typed.push_str(key);
        let sent = Instant::now();
        tmux.keys(&[key]);
        loop {
            if tmux.screen().contains(&typed) {
                break;
            }
            assert!(
                sent.elapsed() < Duration::from_secs(5),
                "`{typed}` never showed"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        longest = longest.max(sent.elapsed());
    }
    let during = locked_at.elapsed();
    assert!(
        typed.len() >= 3,
        "only {} keys could be typed while the lock was held: the longest took {longest:?}",
        typed.len()
    );
    eprintln!("longest key-to-screen time while cox.db was locked: {longest:?}");
    assert!(
        longest < Duration::from_millis(700),
        "a key took {longest:?} to show while cox.db was locked ({during:?} in)"
    );
    assert!(locker.wait().unwrap().success());
    tmux.wait_for("Answered while the database was locked.");
    tmux.keys(&["C-u"]);
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED 0");
    // Every usage event of the rollout has its row.
    let sessions: Vec<_> = std::fs::read_dir(env.home.path().join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(sessions.len(), 1);
    let rollout = std::fs::read_to_string(&sessions[0]).unwrap();
    let usage_events = rollout
        .lines()
        .filter(|l| l.contains("\"type\":\"usage\""))
        .count();
    assert!(usage_events >= 1, "{rollout}");
    let rows = Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys\n\
             c = sqlite3.connect(sys.argv[1])\n\
             print(c.execute('SELECT count(*) FROM usage').fetchone()[0])\n",
        ])
        .arg(&db)
        .output()
        .unwrap();
    let rows: usize = String::from_utf8_lossy(&rows.stdout)
        .trim()
        .parse()
        .unwrap();
    assert_eq!(rows, usage_events, "one ledger row per usage event");
}

fn describe(pid: &str) -> String {
    let mut out = String::new();
    let mut pid = pid.to_owned();
    for _ in 0..6 {
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let ppid = status
            .lines()
            .find_map(|l| l.strip_prefix("PPid:"))
            .unwrap_or("0")
            .trim()
            .to_owned();
        out.push_str(&format!("{pid}: {:?}\n", String::from_utf8_lossy(&cmd)));
        if ppid == "0" {
            break;
        }
        pid = ppid;
    }
    out
}

/// `/mcp login` in the terminal UI: the URL is drawn in the transcript and
/// the browser opened; once the redirect brings the token, the session is
/// picked up again and the server's tools join it.
#[test]
fn mcp_login_runs_in_the_ui_and_the_tools_join() {
    let Some(python) = common::mcp::sdk_python() else {
        return;
    };
    let env = Env::new();
    let log = env.home.path().join("auth.log");
    let port = common::mcp::free_port();
    let mut server = common::mcp::python_server(
        &python,
        "py-auth-server.py",
        &[port.to_string().as_ref(), log.as_os_str(), "3600".as_ref()],
        port,
    );
    std::fs::write(
        env.home.path().join("config.toml"),
        format!("[mcp_servers.auth]\ntype = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
    )
    .unwrap();
    let browser = env.home.path().join("browser.py");
    std::fs::write(
        &browser,
        "import sys, urllib.request\nurllib.request.urlopen(sys.argv[1]).read()\n",
    )
    .unwrap();
    let scenario = env.home.path().join("scenario.toml");
    std::fs::write(
        &scenario,
        "[[turn]]\n[[turn.tool_call]]\nname = \"mcp__auth__whoami\"\ninput = {}\n\
         [[turn]]\ntext = \"the server knows me\"\n",
    )
    .unwrap();
    let vars = format!(
        "BROWSER='{} {}' MCP_TIMEOUT=20000",
        python.display(),
        browser.display()
    );
    let args = format!(
        "--provider scripted --scenario {} --permission-mode bypassPermissions",
        scenario.display()
    );
    let Some(tmux) = Tmux::start_with(&env, &vars, &args) else {
        let _ = server.kill();
        let _ = server.wait();
        return;
    };
    tmux.wait_for("run cox mcp login auth");
    tmux.keys(&["/mcp login auth", "Enter"]);
    let screen = tmux.wait_for("logged in to MCP server 'auth'");
    assert!(
        screen.contains("to log in to MCP server 'auth', open: http://127.0.0.1:"),
        "the URL is drawn: {screen}"
    );
    // Picked up again: a turn can call the server's tool now.
    std::thread::sleep(Duration::from_millis(500));
    tmux.keys(&["ask the server", "Enter"]);
    tmux.wait_for("the server knows me");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("EXITED 0");
    assert!(screen.contains("[mcp__auth__whoami"), "{screen}");
    let calls = common::mcp::auth_events(&log)
        .into_iter()
        .filter(|e| e["event"] == "call")
        .count();
    assert_eq!(calls, 1, "the tool reached the server with the token");
    let _ = server.kill();
    let _ = server.wait();
}

/// `[tui] status_line`: the command's first line is the status line, fed
/// the session as JSON; a failing one leaves the built-in line with one
/// warning.
#[test]
fn a_status_line_command_draws_the_status_line() {
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[tui]\nstatus_line = { command = \"python3 -c 'import json,sys; j=json.load(sys.stdin); \
         print(\\\"MINE \\\" + j[\\\"model\\\"][\\\"id\\\"] + \\\" \\\" + j[\\\"permission_mode\\\"])'\" }\n",
    )
    .unwrap();
    let Some(tmux) = Tmux::start(&env, &args("hello", "")) else {
        return;
    };
    // Once the session has started, the line is given its model.
    let screen = tmux.wait_for("MINE scripted default");
    assert!(
        !screen.contains(" tok"),
        "it replaces the built-in line: {screen}"
    );
    // It follows the session: Shift+Tab changes the mode it is given.
    tmux.keys(&["BTab"]);
    tmux.wait_for("MINE scripted acceptEdits");
    drop(tmux);

    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[tui]\nstatus_line = { command = \"exit 4\" }\n",
    )
    .unwrap();
    let Some(tmux) = Tmux::start(&env, &args("hello", "")) else {
        return;
    };
    let screen = tmux.wait_for("the status line command failed (it exited with exit status: 4)");
    assert!(screen.contains(" tok"), "the built-in line stays: {screen}");
}

/// A project's hooks: the UI asks once before the session starts; `y`
/// trusts them as they are (the next start does not ask) and they run for
/// this session already.
#[test]
fn a_projects_hooks_are_asked_about_once_before_the_session() {
    let env = Env::new();
    // A first launch: COX_HOME does not exist yet when the question is
    // answered.
    std::fs::remove_dir_all(env.home.path()).unwrap();
    // Inside the workspace: a project's hooks run in the sandbox.
    let marker = env.work.path().join("started");
    std::fs::create_dir_all(env.work.path().join(".claude")).unwrap();
    std::fs::write(
        env.work.path().join(".claude/settings.json"),
        format!(
            r#"{{"permissions": {{"allow": ["Bash(make:*)"]}}, "hooks": {{"SessionStart": [{{"hooks": [{{"type": "command", "command": "echo yes >> {}"}}]}}]}}}}"#,
            marker.display()
        ),
    )
    .unwrap();
    let Some(tmux) = Tmux::start(&env, &args("hello", "")) else {
        return;
    };
    let screen = tmux.wait_for("Trust this folder's hooks and rules?");
    assert!(screen.contains("project:SessionStart:1"), "{screen}");
    assert!(screen.contains("allow rule Bash(make:*)"), "{screen}");
    assert!(screen.contains("inside the session's sandbox"), "{screen}");
    assert!(screen.contains("sandbox (they"), "{screen}");
    assert!(!marker.exists(), "a hook ran before it was trusted");
    tmux.keys(&["y"]);
    tmux.wait_for("trusted 1 hook(s) and 1 allow rule(s) of this folder");
    tmux.wait_for("/ commands");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !marker.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "yes\n");
    drop(tmux);
    // Trusted: the next start goes straight to the session.
    let Some(tmux) = Tmux::start(&env, &args("hello", "")) else {
        return;
    };
    let screen = tmux.wait_for("/ commands");
    assert!(!screen.contains("Trust this folder's"), "{screen}");
}

/// `core.mode = architect` from the config alone: the UI starts (where
/// `cox run` refuses) and asks the think tier's price before the first
/// prompt goes.
#[test]
fn architect_from_the_config_alone_asks_before_its_first_prompt() {
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[core]\nmode = \"architect\"\n",
    )
    .unwrap();
    let refused = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario("hello"))
        .args(["run", "-p", "x"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("pass --mode architect"));
    let Some(tmux) = Tmux::start(&env, &args("hello", "")) else {
        return;
    };
    tmux.wait_for("architect");
    tmux.keys(&["plan the cache", "Enter"]);
    tmux.wait_for("Architect mode runs main turns on the think tier");
    tmux.keys(&["n"]);
    let screen = tmux.wait_for("back in editor mode");
    assert!(
        screen.contains("plan the cache"),
        "the prompt waits: {screen}"
    );
}

/// The terminal UI's session writes its spans to the log and, with export
/// on, sends them when it quits.
#[test]
fn a_terminal_session_logs_and_exports_its_spans() {
    let collector = common::otlp::Collector::start(common::otlp::Answer::Ok);
    let env = Env::new();
    let vars = format!(
        "COX_TELEMETRY_OTEL=true OTEL_EXPORTER_OTLP_ENDPOINT={}",
        collector.url
    );
    let Some(tmux) = Tmux::start_with(&env, &vars, &args("hello", "--permission-mode acceptEdits"))
    else {
        return;
    };
    tmux.wait_for("/ commands");
    tmux.keys(&["create hello.txt", "Enter"]);
    tmux.wait_for("Created hello.txt.");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("EXITED 0");
    let log = env.log();
    let spans: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l.get("span").is_some())
        .collect();
    let names: Vec<&str> = spans.iter().map(|s| s["span"].as_str().unwrap()).collect();
    assert!(names.contains(&"invoke_agent cox.turn"), "{log}");
    assert_eq!(names.last(), Some(&"invoke_agent cox"), "{log}");
    let exported: Vec<String> = collector.spans().into_iter().map(|s| s.name).collect();
    assert_eq!(exported.len(), spans.len(), "{exported:?}");
    assert!(exported.iter().any(|n| n == "execute_tool"), "{exported:?}");
}

#[test]
fn in_a_worktree_the_status_line_says_so_and_quit_offers_to_remove_a_clean_one() {
    let env = Env::new();
    let repo = common::git_repo(&env, "a\n");
    let worktree = repo.parent().unwrap().join("_worktrees/repo-t1");
    let flags = format!("--cwd {} --worktree T1", repo.display());
    let Some(tmux) = Tmux::start(&env, &args("hello", &flags)) else {
        return;
    };
    let screen = tmux.wait_for("⧉ t1");
    assert!(screen.contains("⎇ t1"), "{screen}");
    tmux.keys(&["/quit", "Enter"]);
    tmux.wait_for("y remove the worktree");
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("EXITED 0");
    assert!(screen.contains("removed; branch t1 stays"), "{screen}");
    assert!(!worktree.exists(), "the clean worktree is gone");
    let branches = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["branch", "--list", "t1"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&branches.stdout).contains("t1"),
        "the branch stays"
    );

    // With a change, /quit keeps it and says so.
    let Some(tmux) = Tmux::start(&env, &args("hello", &flags)) else {
        return;
    };
    tmux.wait_for("/ commands");
    tmux.keys(&["create hello.txt containing hi", "Enter"]);
    tmux.wait_for("y allow once");
    std::thread::sleep(Duration::from_millis(400));
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("Created hello.txt.");
    let screen = if screen.contains("+1 −0") {
        screen
    } else {
        tmux.wait_for("+1 −0")
    };
    assert!(screen.contains("⧉ t1"), "{screen}");
    tmux.keys(&["/quit", "Enter"]);
    let screen = tmux.wait_for("EXITED 0");
    assert!(
        screen.contains("kept: it has changes (branch t1)"),
        "{screen}"
    );
    assert!(worktree.join("hello.txt").exists());
}

#[test]
fn subagents_fold_under_their_call_and_agents_lists_and_opens_them() {
    let env = Env::new();
    let Some(tmux) = Tmux::start(
        &env,
        &args("subagents", "--permission-mode bypassPermissions"),
    ) else {
        return;
    };
    tmux.wait_for("/ commands");
    tmux.keys(&["delegate", "Enter"]);
    let screen = tmux.wait_for("Both subagents answered.");
    // Each child's command is a line under its agent call.
    assert!(screen.contains("agent wait for b"), "{screen}");
    assert!(screen.contains("bash touch b.flag"), "{screen}");
    tmux.keys(&["/agents", "Enter"]);
    let screen = tmux.wait_for("agents · Esc");
    // The children are numbered in the order they started, which varies.
    let number = |description: &str| {
        let row = screen
            .lines()
            .find(|l| l.contains(&format!(". {description} · end_turn · 1 turn(s)")))
            .unwrap_or_else(|| panic!("no row for {description}: {screen}"));
        let start = row.find(|c: char| c.is_ascii_digit()).unwrap();
        row[start..].split('.').next().unwrap().to_owned()
    };
    let _ = number("wait for b");
    let writer = number("write b");
    tmux.keys(&["Escape"]);
    // Keys right after Esc would read as Alt+key to the terminal.
    std::thread::sleep(Duration::from_millis(300));
    tmux.keys(&[&format!("/agents {writer}"), "Enter"]);
    let screen = tmux.wait_for(&format!("agent {writer}: write b"));
    assert!(screen.contains("› Create b.flag."), "{screen}");
    assert!(screen.contains("Created b.flag."), "{screen}");
}

#[test]
fn two_subagents_asking_at_once_are_asked_one_after_the_other() {
    let env = Env::new();
    let Some(tmux) = Tmux::start(&env, &args("subagent_two_asks", "")) else {
        return;
    };
    tmux.wait_for("/ commands");
    tmux.keys(&["delegate", "Enter"]);
    for _ in 0..2 {
        tmux.wait_for("y allow once");
        std::thread::sleep(Duration::from_millis(400));
        tmux.keys(&["y"]);
        std::thread::sleep(Duration::from_millis(200));
    }
    tmux.wait_for("Both asked.");
    assert!(env.work.path().join("a.txt").exists());
    assert!(env.work.path().join("b.txt").exists());
}

#[test]
fn quit_never_offers_to_remove_a_worktree_this_session_did_not_take() {
    let env = Env::new();
    let repo = common::git_repo(&env, "a\n");
    let theirs = repo.parent().unwrap().join("_worktrees/repo-theirs");
    let made = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args([
            "worktree",
            "add",
            "--lock",
            "--reason",
            "Cursor / grok | x",
            "-b",
            "theirs",
        ])
        .arg(&theirs)
        .status()
        .unwrap();
    assert!(made.success());
    let flags = format!("--cwd {}", theirs.display());
    let Some(tmux) = Tmux::start(&env, &args("hello", &flags)) else {
        return;
    };
    // A linked worktree: its main checkout is read-only, but it is not
    // this session's to remove.
    tmux.wait_for("/ commands");
    tmux.keys(&["/quit", "Enter"]);
    let screen = tmux.wait_for("EXITED 0");
    assert!(!screen.contains("remove the worktree"), "{screen}");
    assert!(theirs.exists());
}

#[test]
fn the_plan_shows_as_a_panel_while_a_step_is_left() {
    let env = Env::new();
    let Some(tmux) = Tmux::start(&env, &args("plan", "")) else {
        return;
    };
    tmux.wait_for("/ commands");
    tmux.keys(&["plan it", "Enter"]);
    let screen = tmux.wait_for("plan · 1/3 done");
    assert!(screen.contains("▶ Write the parser"), "{screen}");
    assert!(screen.contains("· Run the tests"), "{screen}");
}

/// A project's MCP server (`.mcp.json`) waits for trust: `/mcp` lists it
/// as pending with what to do; `t` trusts it there, the session is picked
/// up again, and its tools answer the next prompt, without quitting.
#[test]
fn a_pending_project_server_is_trusted_from_mcp_and_joins_the_session() {
    if !std::path::Path::new("/usr/bin/bwrap").exists() {
        eprintln!("skipped: no bwrap");
        return;
    }
    let env = Env::new();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp/fake-server.js")
        .canonicalize()
        .unwrap();
    std::fs::write(
        env.work.path().join(".mcp.json"),
        serde_json::json!({"mcpServers": {"proj": {"command": "node", "args": [script]}}})
            .to_string(),
    )
    .unwrap();
    let scenario = env.home.path().join("scenario.toml");
    std::fs::write(
        &scenario,
        "[[turn]]\n[[turn.tool_call]]\nname = \"mcp__proj__echo\"\ninput = { message = \"trusted now\" }\n\
         [[turn]]\ntext = \"the project server answered\"\n",
    )
    .unwrap();
    let args = format!(
        "--provider scripted --scenario {} --permission-mode bypassPermissions",
        scenario.display()
    );
    let Some(tmux) = Tmux::start_with(&env, "MCP_TIMEOUT=20000", &args) else {
        return;
    };
    tmux.wait_for("/ commands");
    tmux.keys(&["/mcp", "Enter"]);
    let screen = tmux.wait_for("MCP servers");
    assert!(
        screen.contains("proj") && screen.contains("pending"),
        "{screen}"
    );
    assert!(screen.contains("cox mcp trust proj"), "{screen}");
    tmux.keys(&["t"]);
    tmux.wait_for("trusted MCP server 'proj'");
    std::thread::sleep(Duration::from_millis(800));
    tmux.keys(&["/mcp", "Enter"]);
    let screen = tmux.wait_for("connected");
    assert!(screen.contains("2 tool(s)"), "{screen}");
    tmux.keys(&["Escape"]);
    // Keys right after Esc would read as Alt+key to the terminal.
    std::thread::sleep(Duration::from_millis(300));
    tmux.keys(&["ask it", "Enter"]);
    let screen = tmux.wait_for("the project server answered");
    assert!(screen.contains("echo: trusted now"), "{screen}");
}

/// A server asks for input mid-call: the form is drawn over the
/// transcript, filled in with keys, and what was typed reaches the
/// server, whose result says it.
#[test]
fn a_servers_form_is_filled_in_in_the_terminal_ui() {
    let Some(modules) = common::mcp::sandboxed_node_modules() else {
        return;
    };
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        format!(
            "[mcp_servers.every]\ncommand = \"node\"\nargs = [\"{}\", \"stdio\"]\n",
            modules.join(".bin/mcp-server-everything").display()
        ),
    )
    .unwrap();
    let Some(tmux) = Tmux::start_with(
        &env,
        "MCP_TIMEOUT=20000",
        &args("mcp_elicit", "--permission-mode bypassPermissions"),
    ) else {
        return;
    };
    tmux.wait_for("/ commands");
    std::thread::sleep(Duration::from_millis(1500));
    tmux.keys(&["fill it", "Enter"]);
    let screen = tmux.wait_for("Esc decline");
    assert!(screen.contains("MCP server 'every' asks:"), "{screen}");
    tmux.keys(&["Ada Lovelace", "Enter"]);
    let screen = tmux.wait_for("Form done.");
    assert!(screen.contains("you sent the form"), "{screen}");
    assert!(screen.contains("Ada Lovelace"), "{screen}");
}

/// `cox "task"`, as Claude Code takes it: the terminal UI opens with the
/// task sent as its first prompt.
#[test]
fn a_task_on_the_command_line_opens_the_ui_with_it_sent() {
    let env = Env::new();
    let Some(tmux) = Tmux::start(&env, &args("hello", "'create hello.txt containing hi'")) else {
        return;
    };
    let asked = tmux.wait_for("y allow once");
    assert!(asked.contains("create hello.txt containing hi"), "{asked}");
    std::thread::sleep(Duration::from_millis(400));
    tmux.keys(&["y"]);
    tmux.wait_for("Created hello.txt.");
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
}
