//! Checkpoints and rewind from outside, with real git: a session's edits,
//! writes and shell commands, then `cox rewind`, and the bytes, modes and
//! symlinks that come back; the user's own repository is byte-identical
//! before and after everything.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{Env, lines, text};

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// The bytes of the user's repository a checkpoint must never change.
fn git_state(work: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    for rel in ["index", "config", "HEAD", "packed-refs"] {
        let path = work.join(".git").join(rel);
        if let Ok(bytes) = std::fs::read(&path) {
            files.push((path, bytes));
        }
    }
    let mut stack = vec![work.join(".git/refs")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

fn scenario(env: &Env, name: &str, text: &str) -> PathBuf {
    let path = env.home.path().join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// `cox run` of the scripted `scenario`, in bypass mode, unconfined (the
/// sandbox has tests of its own), printing stream-json.
fn run_cmd(env: &Env, scenario: &Path) -> Command {
    let mut cmd = env.cox();
    cmd.env("HOME", env.home.path())
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario)
        .args([
            "run",
            "-p",
            "do the task",
            "--permission-mode",
            "bypassPermissions",
        ])
        .args([
            "--sandbox",
            "danger-full-access",
            "--output-format",
            "stream-json",
        ]);
    cmd
}

fn run(env: &Env, scenario: &Path, extra: &[&str]) -> Output {
    run_cmd(env, scenario).args(extra).output().unwrap()
}

/// Starts `cox run` of `scenario`, kills it with SIGKILL once `ready`
/// holds (failing with `what` after 20 s), and returns its session's id.
fn kill_when(env: &Env, scenario: &Path, what: &str, ready: impl Fn(&Env) -> bool) -> String {
    let mut child = run_cmd(env, scenario)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !ready(env) {
        assert!(std::time::Instant::now() < deadline, "{what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let rollout = &env.rollouts()[0];
    rollout.file_stem().unwrap().to_string_lossy().into_owned()
}

fn session_of(out: &Output) -> String {
    let events = lines(out);
    events[0]["session_id"].as_str().unwrap().to_owned()
}

fn rewind(env: &Env, scenario: &Path, args: &[&str]) -> Output {
    env.cox()
        .env("HOME", env.home.path())
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario)
        .arg("rewind")
        .args(args)
        .output()
        .unwrap()
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

const BIG: usize = 9 * 1024 * 1024;

/// A repository with text, binary, executable, symlinked and large files,
/// one change staged and not committed.
fn repo(env: &Env) {
    let w = env.work.path();
    std::fs::create_dir_all(w.join("src/empty")).unwrap();
    std::fs::create_dir(w.join("keep")).unwrap();
    std::fs::set_permissions(w.join("keep"), PermissionsExt::from_mode(0o700)).unwrap();
    std::fs::write(w.join("src/lib.rs"), "pub fn a() {}\n").unwrap();
    std::fs::write(w.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(w.join("bin.dat"), [0u8, 1, 2, 255, 0, 10]).unwrap();
    std::fs::write(w.join("script.sh"), "echo hi\n").unwrap();
    std::fs::set_permissions(w.join("script.sh"), PermissionsExt::from_mode(0o644)).unwrap();
    std::fs::write(w.join("big.bin"), vec![b'x'; BIG]).unwrap();
    std::os::unix::fs::symlink("src/lib.rs", w.join("link")).unwrap();
    std::fs::write(w.join(".gitignore"), "target/\n").unwrap();
    git(w, &["init", "-q", "."]);
    git(w, &["add", "."]);
    git(w, &["commit", "-qm", "init"]);
    std::fs::write(w.join("staged.txt"), "staged\n").unwrap();
    git(w, &["add", "staged.txt"]);
}

const TWO_TURNS: &str = r#"
[[turn]]
[[turn.tool_call]]
name = "edit"
input = { path = "src/lib.rs", old_string = "pub fn a() {}", new_string = "pub fn b() {}" }
[[turn.tool_call]]
name = "write"
input = { path = "src/new.rs", content = "// new\n" }
[[turn]]
text = "turn one done"
"#;

const SHELL_TURN: &str = r#"
[[turn]]
[[turn.tool_call]]
name = "bash"
input = { command = "rm -rf src && mv script.sh run.sh && chmod +x run.sh && ln -sfn elsewhere link && head -c 300 /dev/urandom > blob.bin && printf y >> big.bin && mkdir -p target && echo junk > target/out && rmdir keep && mkdir -p made/deep" }
[[turn]]
text = "turn two done"
"#;

#[test]
fn a_rewind_restores_bytes_modes_and_links_and_the_users_git_is_untouched() {
    let env = Env::new();
    repo(&env);
    let w = env.work.path();
    let before = git_state(w);
    let one = scenario(&env, "one", TWO_TURNS);
    let out = run(&env, &one, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let id = session_of(&out);
    let checkpoints: Vec<_> = lines(&out)
        .into_iter()
        .filter(|e| e["type"] == "checkpoint")
        .collect();
    assert_eq!(checkpoints.len(), 2, "{}", text(&out));
    assert_eq!(checkpoints[1]["files"][0]["change"], "created");
    assert_eq!(git_state(w), before, "the first turn left .git as it was");

    let two = scenario(&env, "two", SHELL_TURN);
    let out = run(&env, &two, &["--resume", &id]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!w.join("src").exists());
    assert_eq!(git_state(w), before, "the shell turn left .git as it was");
    let shell = lines(&out)
        .into_iter()
        .find(|e| e["type"] == "checkpoint")
        .unwrap();
    let named: Vec<&str> = shell["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(
        !named.iter().any(|p| p.contains("target/")),
        ".gitignore keeps target/ out: {named:?}"
    );

    let list = rewind(&env, &one, &[&id, "--list"]);
    assert!(list.status.success(), "{}", text(&list));
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(listed.starts_with("T2 · "), "{listed}");
    assert!(
        listed.contains("T1 · 2 files · \"do the task\""),
        "{listed}"
    );
    assert!(listed.contains("big.bin (too large: not kept)"), "{listed}");

    let back = rewind(&env, &one, &[&id, "--to", "1", "--code"]);
    assert!(back.status.success(), "{}", text(&back));
    let said = String::from_utf8_lossy(&back.stdout);
    assert!(said.contains("too large"), "{said}");
    assert_eq!(
        std::fs::read_to_string(w.join("src/lib.rs")).unwrap(),
        "pub fn a() {}\n"
    );
    assert_eq!(
        std::fs::read_to_string(w.join("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert!(!w.join("src/new.rs").exists(), "a created file is removed");
    assert_eq!(
        std::fs::read(w.join("bin.dat")).unwrap(),
        [0u8, 1, 2, 255, 0, 10]
    );
    assert_eq!(
        std::fs::read_to_string(w.join("script.sh")).unwrap(),
        "echo hi\n"
    );
    assert_eq!(mode(&w.join("script.sh")), 0o644);
    assert!(!w.join("run.sh").exists());
    assert!(!w.join("blob.bin").exists());
    assert_eq!(
        std::fs::read_link(w.join("link")).unwrap(),
        PathBuf::from("src/lib.rs")
    );
    assert!(w.join("src/empty").is_dir(), "an empty folder comes back");
    assert_eq!(mode(&w.join("keep")) & 0o777, 0o700, "with its mode");
    assert!(!w.join("made").exists(), "a folder the shell made is gone");
    assert_eq!(
        std::fs::metadata(w.join("big.bin")).unwrap().len() as usize,
        BIG + 1,
        "a file past 8 MiB is left as it is"
    );
    assert_eq!(git_state(w), before, "the rewind left .git as it was");

    // The rewind was turn 3; undoing it brings the shell turn's work back.
    let again = rewind(&env, &one, &[&id, "--to", "3", "--code"]);
    assert!(again.status.success(), "{}", text(&again));
    assert!(!w.join("src").join("lib.rs").exists());
    assert!(!w.join("keep").exists() && w.join("made/deep").is_dir());
    assert_eq!(mode(&w.join("run.sh")), 0o755);
    assert_eq!(
        std::fs::read_link(w.join("link")).unwrap(),
        PathBuf::from("elsewhere")
    );
    assert_eq!(git_state(w), before);
}

#[test]
fn a_file_the_user_changed_since_is_named_and_only_forced_over() {
    let env = Env::new();
    repo(&env);
    let w = env.work.path();
    let one = scenario(&env, "one", TWO_TURNS);
    let out = run(&env, &one, &[]);
    let id = session_of(&out);
    std::fs::write(w.join("src/new.rs"), "// mine now\n").unwrap();

    let refused = rewind(&env, &one, &[&id, "--to", "1", "--code"]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("src/new.rs") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(
        std::fs::read_to_string(w.join("src/lib.rs")).unwrap(),
        "pub fn b() {}\n",
        "nothing is restored while a conflict stands"
    );

    let forced = rewind(&env, &one, &[&id, "--to", "1", "--code", "--force"]);
    assert!(forced.status.success(), "{}", text(&forced));
    assert!(!w.join("src/new.rs").exists());
    assert_eq!(
        std::fs::read_to_string(w.join("src/lib.rs")).unwrap(),
        "pub fn a() {}\n"
    );
}

#[test]
fn a_workspace_that_is_not_a_repository_is_checkpointed_too() {
    let env = Env::new();
    let w = env.work.path();
    std::fs::write(w.join("notes.txt"), "keep me\n").unwrap();
    let s = scenario(
        &env,
        "s",
        r#"
[[turn]]
[[turn.tool_call]]
name = "bash"
input = { command = "rm notes.txt && echo other > other.txt" }
[[turn]]
text = "done"
"#,
    );
    let out = run(&env, &s, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!w.join("notes.txt").exists());
    let id = session_of(&out);
    let back = rewind(&env, &s, &[&id, "--to", "1", "--code"]);
    assert!(back.status.success(), "{}", text(&back));
    assert_eq!(
        std::fs::read_to_string(w.join("notes.txt")).unwrap(),
        "keep me\n"
    );
    assert!(!w.join("other.txt").exists());
    assert!(
        !w.join(".git").exists(),
        "no repository appears in the workspace"
    );
}

#[test]
fn without_git_file_tools_are_still_kept_and_shells_warn_once() {
    let env = Env::new();
    let w = env.work.path();
    std::fs::write(w.join("a.txt"), "first\n").unwrap();
    let bin = env.home.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for tool in ["bash", "sh", "true", "echo", "cat"] {
        for dir in ["/usr/bin", "/bin"] {
            let found = Path::new(dir).join(tool);
            if found.exists() {
                let _ = std::os::unix::fs::symlink(&found, bin.join(tool));
                break;
            }
        }
    }
    let s = scenario(
        &env,
        "s",
        r#"
[[turn]]
[[turn.tool_call]]
name = "write"
input = { path = "a.txt", content = "second\n" }
[[turn]]
[[turn.tool_call]]
name = "bash"
input = { command = "echo one > one.txt" }
[[turn]]
[[turn.tool_call]]
name = "bash"
input = { command = "echo two > two.txt" }
[[turn]]
text = "done"
"#,
    );
    let out = run_cmd(&env, &s).env("PATH", &bin).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let warnings: Vec<String> = lines(&out)
        .into_iter()
        .filter(|e| {
            e["type"] == "notice" && e["text"].as_str().unwrap().contains("git is not on PATH")
        })
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(warnings.len(), 1, "{}", text(&out));
    let id = session_of(&out);
    let back = env
        .cox()
        .env("HOME", env.home.path())
        .env("PATH", &bin)
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &s)
        .args(["rewind", &id, "--to", "1", "--code"])
        .output()
        .unwrap();
    assert!(back.status.success(), "{}", text(&back));
    assert_eq!(std::fs::read_to_string(w.join("a.txt")).unwrap(), "first\n");
}

#[test]
fn a_conversation_rewind_holds_across_a_resume_and_numbers_go_on() {
    let env = Env::new();
    let first = scenario(&env, "first", "[[turn]]\ntext = \"noted\"\n");
    let out = env
        .cox()
        .env("HOME", env.home.path())
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &first)
        .args([
            "run",
            "-p",
            "remember ALPHA-7",
            "--output-format",
            "stream-json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let id = session_of(&out);
    let cut = rewind(&env, &first, &[&id, "--to", "1", "--conversation"]);
    assert!(cut.status.success(), "{}", text(&cut));

    let next = scenario(
        &env,
        "next",
        "[[turn]]\ntext = \"fresh\"\n[turn.expect]\nrequest_lacks = [\"ALPHA-7\"]\n",
    );
    let out = env
        .cox()
        .env("HOME", env.home.path())
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &next)
        .args([
            "run",
            "-p",
            "what now",
            "--resume",
            &id,
            "--output-format",
            "stream-json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let started = lines(&out)
        .into_iter()
        .find(|e| e["type"] == "turn_started")
        .unwrap();
    assert_eq!(started["turn"], 3, "turn 2 was the rewind: {}", text(&out));
}

#[test]
fn a_rewind_to_a_turn_that_never_was_is_one_line() {
    let env = Env::new();
    let first = scenario(&env, "first", "[[turn]]\ntext = \"ok\"\n");
    let out = run(&env, &first, &[]);
    let id = session_of(&out);
    let bad = rewind(&env, &first, &[&id, "--to", "5", "--code"]);
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("cannot rewind to turn 5: the session has only turn 1"),
        "{err}"
    );
    let none = rewind(&env, &first, &[&id, "--to", "1"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&none.stderr).contains("--code, --conversation or --both"));
}

#[test]
fn a_killed_session_keeps_its_pre_images_and_prune_spares_it() {
    let env = Env::new();
    let w = env.work.path();
    std::fs::write(w.join("a.txt"), "before\n").unwrap();
    let s = scenario(
        &env,
        "s",
        r#"
[[turn]]
[[turn.tool_call]]
name = "write"
input = { path = "a.txt", content = "after\n" }
[[turn]]
[[turn.tool_call]]
name = "bash"
input = { command = "sleep 30 > /dev/null" }
[[turn]]
text = "done"
"#,
    );
    let id = kill_when(&env, &s, "the bash call never started", |env| {
        env.rollouts()
            .first()
            .is_some_and(|path| std::fs::read_to_string(path).is_ok_and(|t| t.contains("sleep 30")))
    });
    assert_eq!(std::fs::read_to_string(w.join("a.txt")).unwrap(), "after\n");

    let prune = env
        .cox()
        .env("HOME", env.home.path())
        .args(["checkpoints", "prune", "--older-than", "0m"])
        .output()
        .unwrap();
    assert!(prune.status.success(), "{}", text(&prune));
    assert!(
        String::from_utf8_lossy(&prune.stdout).starts_with("removed 0 checkpoint rows"),
        "an open session keeps its checkpoints: {}",
        text(&prune)
    );
    let back = rewind(&env, &s, &[&id, "--to", "1", "--code"]);
    assert!(back.status.success(), "{}", text(&back));
    assert_eq!(
        std::fs::read_to_string(w.join("a.txt")).unwrap(),
        "before\n"
    );

    // Closed now (the rewind ran it to its end): pruning takes its rows.
    let prune = env
        .cox()
        .env("HOME", env.home.path())
        .args(["checkpoints", "prune", "--older-than", "0m"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&prune.stdout);
    assert!(!said.starts_with("removed 0 "), "{said}");
    let list = rewind(&env, &s, &[&id, "--list"]);
    assert!(
        String::from_utf8_lossy(&list.stdout).contains("no turns to rewind"),
        "{}",
        text(&list)
    );
}

#[test]
fn a_broken_snapshot_repository_is_one_warning_and_the_calls_run() {
    let env = Env::new();
    repo(&env);
    let w = env.work.path();
    let before = git_state(w);
    let first = scenario(&env, "first", SHELL_TURN);
    let out = run(&env, &first, &[]);
    assert!(out.status.success(), "{}", text(&out));
    // Break the private repository the first session made.
    let dir = env.home.path().join("checkpoints");
    let repo_dir = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    std::fs::write(repo_dir.join("index"), b"not an index").unwrap();
    std::fs::write(repo_dir.join("HEAD"), b"garbage").unwrap();
    let two = scenario(
        &env,
        "two",
        r#"
[[turn]]
[[turn.tool_call]]
name = "bash"
input = { command = "echo one > one.txt" }
[[turn]]
[[turn.tool_call]]
name = "bash"
input = { command = "echo two > two.txt" }
[[turn]]
text = "done"
"#,
    );
    let out = run(&env, &two, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(w.join("one.txt").exists() && w.join("two.txt").exists());
    assert_eq!(incomplete(&out), 1, "{}", text(&out));
    assert_eq!(git_state(w), before, "the user's repository is untouched");
}

#[test]
fn a_shell_command_cut_short_by_kill_still_has_its_changes_kept() {
    let env = Env::new();
    repo(&env);
    let w = env.work.path();
    let s = scenario(
        &env,
        "s",
        r#"
[[turn]]
[[turn.tool_call]]
name = "bash"
input = { command = "echo made > made.txt && rm src/main.rs && sleep 5" }
[[turn]]
text = "done"
"#,
    );
    let id = kill_when(&env, &s, "the command never ran", |_| {
        !w.join("src/main.rs").exists()
    });
    let back = rewind(&env, &s, &[&id, "--to", "1", "--code"]);
    assert!(back.status.success(), "{}", text(&back));
    assert_eq!(
        std::fs::read_to_string(w.join("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert!(!w.join("made.txt").exists(), "{}", text(&back));
}

#[test]
fn a_shell_call_is_snapshotted_in_every_root() {
    let env = Env::new();
    let w = env.work.path();
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("lib.txt"), "shared\n").unwrap();
    std::fs::write(w.join("main.txt"), "main\n").unwrap();
    let extra = other.path().canonicalize().unwrap();
    let s = scenario(
        &env,
        "s",
        &format!(
            "[[turn]]\n[[turn.tool_call]]\nname = \"bash\"\ninput = {{ command = \"rm {0}/lib.txt && rm main.txt\" }}\n[[turn]]\ntext = \"done\"\n",
            extra.display()
        ),
    );
    let out = run(&env, &s, &["--add-dir", &extra.display().to_string()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!extra.join("lib.txt").exists());
    let id = session_of(&out);
    let back = rewind(&env, &s, &[&id, "--to", "1", "--code"]);
    assert!(back.status.success(), "{}", text(&back));
    assert_eq!(
        std::fs::read_to_string(extra.join("lib.txt")).unwrap(),
        "shared\n"
    );
    assert_eq!(
        std::fs::read_to_string(w.join("main.txt")).unwrap(),
        "main\n"
    );
}

#[test]
fn a_compacted_turn_can_still_be_rewound() {
    let env = Env::new();
    let w = env.work.path();
    std::fs::write(w.join("a.txt"), "original\n").unwrap();
    let turn = |name: &str, body: &str| {
        scenario(&env, name, &format!("model = \"claude-sonnet-5\"\n{body}"))
    };
    let one = turn(
        "one",
        "[[turn]]\n[[turn.tool_call]]\nname = \"write\"\ninput = { path = \"a.txt\", content = \"changed\\n\" }\n[[turn]]\ntext = \"done one\"\nusage = { input_tokens = 1000, output_tokens = 3 }\n",
    );
    let two = turn(
        "two",
        "[[turn]]\ntext = \"done two\"\nusage = { input_tokens = 2000, output_tokens = 3 }\n",
    );
    // The third turn fills 80 % of the window: the session compacts after it.
    let three = turn(
        "three",
        "[[turn]]\ntext = \"done three\"\nusage = { input_tokens = 160000, output_tokens = 3 }\n[[turn]]\ntext = \"SUMMARY-OF-ONE\"\nusage = { input_tokens = 500, output_tokens = 10 }\n",
    );
    let go = |scenario: &Path, prompt: &str, resume: Option<&str>| {
        let mut cmd = env.cox();
        cmd.env("HOME", env.home.path())
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", scenario)
            .args([
                "run",
                "-p",
                prompt,
                "--permission-mode",
                "bypassPermissions",
            ])
            .args(["--output-format", "stream-json"]);
        if let Some(id) = resume {
            cmd.args(["--resume", id]);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", text(&out));
        out
    };
    let out = go(&one, "prompt one", None);
    let id = session_of(&out);
    go(&two, "prompt two", Some(&id));
    let out = go(&three, "prompt three", Some(&id));
    assert!(
        lines(&out).iter().any(|e| e["type"] == "compacted"),
        "{}",
        text(&out)
    );
    let back = rewind(&env, &one, &[&id, "--to", "1", "--both"]);
    assert!(back.status.success(), "{}", text(&back));
    assert_eq!(
        std::fs::read_to_string(w.join("a.txt")).unwrap(),
        "original\n"
    );
    let next = turn(
        "next",
        "[[turn]]\ntext = \"fresh\"\n[turn.expect]\nrequest_lacks = [\"SUMMARY-OF-ONE\", \"prompt one\", \"prompt three\"]\n",
    );
    go(&next, "prompt four", Some(&id));
}

#[test]
fn a_rewind_needs_no_model_and_keeps_the_sessions_provider() {
    let env = Env::new();
    let w = env.work.path();
    std::fs::write(w.join("a.txt"), "before\n").unwrap();
    let s = scenario(
        &env,
        "s",
        "[[turn]]\n[[turn.tool_call]]\nname = \"write\"\ninput = { path = \"a.txt\", content = \"after\\n\" }\n[[turn]]\ntext = \"done\"\n",
    );
    let out = run(&env, &s, &[]);
    let id = session_of(&out);
    // No COX_PROVIDER, no scenario, no key.
    let back = env
        .cox()
        .env("HOME", env.home.path())
        .args(["rewind", &id, "--to", "1", "--both"])
        .output()
        .unwrap();
    assert!(back.status.success(), "{}", text(&back));
    assert_eq!(
        std::fs::read_to_string(w.join("a.txt")).unwrap(),
        "before\n"
    );
    let rollout = std::fs::read_to_string(&env.rollouts()[0]).unwrap();
    let last_start = rollout
        .lines()
        .rfind(|l| l.contains("\"type\":\"session_started\""))
        .unwrap();
    assert!(
        last_start.contains("\"provider\":\"scripted\""),
        "{last_start}"
    );
}

/// Shell calls after the first are told what changed by the watcher, not
/// by a full look; it sees what a command inside the OS sandbox (bwrap)
/// writes, removes and makes, down to an empty folder, and a file made and
/// removed within one call is not named.
#[test]
fn the_watcher_sees_what_sandboxed_shells_change_between_snapshots() {
    if !std::path::Path::new("/usr/bin/bwrap").exists() {
        eprintln!("skipped: no bwrap (the sandbox's own tests say why)");
        return;
    }
    let env = Env::new();
    let w = env.work.path();
    std::fs::create_dir_all(w.join("src")).unwrap();
    std::fs::write(w.join("src/a.txt"), "a\n").unwrap();
    std::fs::write(w.join("src/b.txt"), "b\n").unwrap();
    std::fs::write(w.join("notes.txt"), "one\n").unwrap();
    let bash = |command: &str| {
        format!("[[turn.tool_call]]\nname = \"bash\"\ninput = {{ command = {command:?} }}\n")
    };
    let s = scenario(
        &env,
        "s",
        &format!(
            "[[turn]]\n{}{}{}[[turn]]\ntext = \"done\"\n",
            bash("true"),
            bash(
                "echo changed > src/a.txt && rm src/b.txt && mkdir -p new/empty && echo t > tmp && rm tmp"
            ),
            bash("echo two >> notes.txt"),
        ),
    );
    let out = env
        .cox()
        .env("HOME", env.home.path())
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &s)
        .args(["run", "-p", "do the task", "--permission-mode"])
        .args(["bypassPermissions", "--sandbox", "workspace-write"])
        .args(["--output-format", "stream-json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let kept: Vec<Vec<(String, String)>> = lines(&out)
        .into_iter()
        .filter(|e| e["type"] == "checkpoint")
        .map(|e| {
            let root = w.display().to_string();
            e["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    let path = f["path"].as_str().unwrap();
                    let path = path.strip_prefix(&root).unwrap_or(path);
                    (path.to_owned(), f["change"].as_str().unwrap().to_owned())
                })
                .collect()
        })
        .collect();
    let pair = |p: &str, c: &str| (p.to_owned(), c.to_owned());
    assert_eq!(kept.len(), 2, "`true` changes nothing: {kept:?}");
    let mut second = kept[0].clone();
    second.sort();
    assert_eq!(
        second,
        vec![
            pair("/new/", "created"),
            pair("/src/a.txt", "pre"),
            pair("/src/b.txt", "deleted"),
        ],
        "the temporary file never seen is not named; the folder inside new/ \
         is made again with it"
    );
    assert_eq!(kept[1], vec![pair("/notes.txt", "pre")]);

    let id = session_of(&out);
    let back = rewind(&env, &s, &[&id, "--to", "1", "--code"]);
    assert!(back.status.success(), "{}", text(&back));
    assert_eq!(std::fs::read_to_string(w.join("src/a.txt")).unwrap(), "a\n");
    assert_eq!(std::fs::read_to_string(w.join("src/b.txt")).unwrap(), "b\n");
    assert_eq!(
        std::fs::read_to_string(w.join("notes.txt")).unwrap(),
        "one\n"
    );
    assert!(!w.join("new").exists(), "the folders it made are gone");
}

/// The private repository a first session on `env`'s workspace made.
fn private_repo(env: &Env) -> PathBuf {
    std::fs::read_dir(env.home.path().join("checkpoints"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path()
}

fn incomplete(out: &Output) -> usize {
    lines(out)
        .into_iter()
        .filter(|e| {
            e["type"] == "notice"
                && e["text"]
                    .as_str()
                    .unwrap_or_default()
                    .starts_with("checkpoints are incomplete")
        })
        .count()
}

fn named_in_checkpoints(out: &Output) -> Vec<String> {
    lines(out)
        .into_iter()
        .filter(|e| e["type"] == "checkpoint")
        .flat_map(|e| {
            e["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["path"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn shell(command: &str) -> String {
    format!(
        "[[turn]]\n[[turn.tool_call]]\nname = \"bash\"\ninput = {{ command = {command:?} }}\n[[turn]]\ntext = \"done\"\n"
    )
}

/// Two sessions in one workspace share its private index: a session whose
/// git finds the other's lock on it waits for it, and a lock left by a git
/// that was killed long ago is cleared; neither is a failed checkpoint.
#[test]
fn another_sessions_index_lock_is_waited_for_and_a_stale_one_cleared() {
    let env = Env::new();
    let w = env.work.path();
    let first = scenario(&env, "first", &shell("echo one > one.txt"));
    assert!(run(&env, &first, &[]).status.success());
    let lock = private_repo(&env).join("index.lock");

    std::fs::write(&lock, b"").unwrap();
    let held = lock.clone();
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(600));
        std::fs::remove_file(held).unwrap();
    });
    let second = scenario(&env, "second", &shell("echo two > two.txt"));
    let out = run(&env, &second, &[]);
    release.join().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(incomplete(&out), 0, "{}", text(&out));
    assert!(
        named_in_checkpoints(&out)
            .iter()
            .any(|p| p.ends_with("two.txt")),
        "{}",
        text(&out)
    );

    let stale = std::fs::File::create(&lock).unwrap();
    let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    stale.set_modified(long_ago).unwrap();
    drop(stale);
    let third = scenario(&env, "third", &shell("echo three > three.txt"));
    let out = run(&env, &third, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(incomplete(&out), 0, "{}", text(&out));
    assert!(!lock.exists(), "the stale lock is gone");
    assert!(w.join("three.txt").exists());
    assert!(
        named_in_checkpoints(&out)
            .iter()
            .any(|p| p.ends_with("three.txt"))
    );
}

/// A full disk under the archive: the write still happens, the session
/// says once that its checkpoints are incomplete and why. The archive is
/// a 4 KiB tmpfs, filled, mounted in a user and mount namespace of the
/// test's own (nothing outside it sees the mount).
#[test]
fn a_full_disk_is_one_warning_and_the_write_still_happens() {
    let probe = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "true"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: no user namespaces here for a private mount");
        return;
    }
    let env = Env::new();
    let w = env.work.path();
    std::fs::write(w.join("a.txt"), "old\n").unwrap();
    std::fs::write(w.join("b.txt"), "old\n").unwrap();
    let archive = env.home.path().join("archive");
    std::fs::create_dir_all(&archive).unwrap();
    let s = scenario(
        &env,
        "s",
        r#"
[[turn]]
[[turn.tool_call]]
name = "write"
input = { path = "a.txt", content = "new\n" }
[[turn.tool_call]]
name = "write"
input = { path = "b.txt", content = "new\n" }
[[turn]]
text = "done"
"#,
    );
    let base = run_cmd(&env, &s);
    let mut cmd = Command::new("unshare");
    cmd.args(["--user", "--map-root-user", "--mount", "sh", "-c"])
        .arg(
            "mount -t tmpfs -o size=4k tmpfs \"$1\" && \
             (head -c 8192 /dev/zero > \"$1/fill\" 2>/dev/null; true) && \
             shift && exec \"$@\"",
        )
        .arg("sh")
        .arg(&archive)
        .arg(base.get_program())
        .args(base.get_args());
    for (key, value) in base.get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    if let Some(dir) = base.get_current_dir() {
        cmd.current_dir(dir);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(w.join("a.txt")).unwrap(), "new\n");
    assert_eq!(std::fs::read_to_string(w.join("b.txt")).unwrap(), "new\n");
    assert_eq!(incomplete(&out), 1, "{}", text(&out));
    let said = lines(&out)
        .into_iter()
        .find(|e| e["type"] == "notice")
        .unwrap();
    assert!(
        said["text"].as_str().unwrap().contains("space"),
        "the notice says why: {said}"
    );
}

/// A file that cannot be written back (immutable, which stops root too)
/// stops a rewind before anything is written, with one line naming it.
#[test]
fn a_read_only_file_stops_a_rewind_before_it_writes() {
    let env = Env::new();
    repo(&env);
    let w = env.work.path();
    let one = scenario(&env, "one", TWO_TURNS);
    let out = run(&env, &one, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let id = session_of(&out);
    let lib = w.join("src/lib.rs");
    let chattr = |flag: &str| {
        Command::new("chattr")
            .arg(flag)
            .arg(&lib)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !chattr("+i") {
        eprintln!("skipped: chattr +i needs root and a filesystem that has it");
        return;
    }
    let refused = rewind(&env, &one, &[&id, "--to", "1", "--code"]);
    assert!(chattr("-i"), "the test cleans up");
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("src/lib.rs") && err.contains("nothing was restored"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(w.join("src/new.rs").exists(), "nothing was written");
    let back = rewind(&env, &one, &[&id, "--to", "1", "--code"]);
    assert!(back.status.success(), "{}", text(&back));
    assert!(!w.join("src/new.rs").exists());
}
