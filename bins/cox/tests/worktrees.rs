//! `--worktree` from outside, with real git: where the worktree goes and
//! what branch it is on, its lock, the main checkout read but never
//! written (file tools and the sandbox), another owner's lock refused, a
//! second live session warned, the model told where the others work,
//! resume in the worktree, and `cox sessions` marking worktree sessions.
//! The repository's origin is a bare repository on disk (no network).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{Env, git, lines, scenario, stderr};

/// `<work>/code/repo`, one commit on `main`, and (with `origin`) a bare
/// origin it was pushed to; answers the repository's folder.
fn repo(env: &Env, origin: bool) -> PathBuf {
    let repo = common::git_repo(env, "from main\n");
    if origin {
        let bare = env.work.path().join("origin.git");
        git(env.work.path(), &["init", "-q", "--bare", "origin.git"]);
        git(&repo, &["remote", "add", "origin", bare.to_str().unwrap()]);
        git(&repo, &["push", "-q", "origin", "main"]);
        git(&repo, &["remote", "set-head", "origin", "main"]);
    }
    repo
}

fn run_in(env: &Env, dir: &Path, scenario_name: &str, extra: &[&str]) -> Output {
    env.cox()
        .current_dir(dir)
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario(scenario_name))
        .args(["run", "-p", "do the task"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_worktree_is_made_next_to_the_repository_on_a_fresh_branch_and_locked() {
    let env = Env::new();
    let repo = repo(&env, true);
    let out = run_in(
        &env,
        &repo,
        "hello",
        &["--worktree", "T42", "--permission-mode", "acceptEdits"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let worktree = repo.parent().unwrap().join("_worktrees/repo-t42");
    assert_eq!(
        std::fs::read_to_string(worktree.join("hello.txt")).unwrap(),
        "hi\n",
        "the session worked in the worktree"
    );
    assert!(
        !repo.join("hello.txt").exists(),
        "the main checkout is untouched"
    );
    assert!(
        stderr(&out).contains("from origin/main"),
        "{}",
        stderr(&out)
    );
    // Branch t42 (lower-cased), cut from origin/main, with no upstream.
    assert_eq!(git(&worktree, &["branch", "--show-current"]), "t42");
    assert_eq!(
        git(&worktree, &["rev-parse", "HEAD"]),
        git(&repo, &["rev-parse", "origin/main"])
    );
    let upstream = Command::new("git")
        .arg("-C")
        .arg(&worktree)
        .args(["rev-parse", "--abbrev-ref", "t42@{upstream}"])
        .output()
        .unwrap();
    assert!(!upstream.status.success(), "no upstream");
    // Locked, the reason naming cox, the pid, the name and the day.
    let list = git(&repo, &["worktree", "list", "--porcelain"]);
    let lock = list
        .lines()
        .find_map(|l| l.strip_prefix("locked "))
        .unwrap();
    assert!(lock.starts_with("cox / pid "), "{lock}");
    assert!(lock.contains(" | t42 | 20"), "{lock}");

    // A second session reuses it (the first's process is gone).
    let again = run_in(
        &env,
        &repo,
        "hello",
        &["--worktree", "t42", "--permission-mode", "acceptEdits"],
    );
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(
        !stderr(&again).contains("already working"),
        "a gone process's presence is not live: {}",
        stderr(&again)
    );
    // `cox sessions` marks both as worktree sessions.
    let list = env.cox().arg("sessions").output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert_eq!(list.matches("⧉ ").count(), 2, "{list}");
}

#[test]
fn the_main_checkout_is_read_and_never_written() {
    let env = Env::new();
    let repo = repo(&env, false);
    std::fs::create_dir(repo.join("docs")).unwrap();
    let docs = repo.join("docs");
    let out = run_in(
        &env,
        &repo,
        "worktree_escape",
        &[
            "--worktree",
            "esc",
            "--add-dir",
            docs.to_str().unwrap(),
            "--permission-mode",
            "bypassPermissions",
            "--output-format",
            "stream-json",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        stderr(&out),
        String::from_utf8_lossy(&out.stdout)
    );
    // Without a remote the branch comes from the local main, and it is said.
    assert!(
        stderr(&out).contains("no remote `origin`: branch cut from the local `main`"),
        "{}",
        stderr(&out)
    );
    let done: Vec<serde_json::Value> = lines(&out)
        .into_iter()
        .filter(|l| l["type"] == "tool_call_done")
        .collect();
    assert!(done[0]["result"]["ok"].as_bool().unwrap(), "the read works");
    assert!(
        done[1]["result"]["visible"]
            .as_str()
            .unwrap()
            .contains("reads but never writes"),
        "{}",
        done[1]
    );
    assert!(!repo.join("escaped.txt").exists());
    assert!(
        !repo.join("escaped-too.txt").exists(),
        "the sandbox refused it"
    );
    // A root given inside the main checkout is read-only too.
    assert!(
        done[3]["result"]["visible"]
            .as_str()
            .unwrap()
            .contains("reads but never writes"),
        "{}",
        done[3]
    );
    assert!(!docs.join("escaped.txt").exists());
}

#[test]
fn the_nearest_worktrees_folder_wins_then_wt_root() {
    let env = Env::new();
    let repo = repo(&env, false);
    // An ancestor above the repository's parent already holds one.
    let shared = env.work.path().join("_worktrees");
    std::fs::create_dir(&shared).unwrap();
    let out = run_in(
        &env,
        &repo,
        "hello",
        &["--worktree", "a1", "--permission-mode", "acceptEdits"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(shared.join("repo-a1").is_dir());
    std::fs::remove_dir_all(&shared).unwrap();
    git(&repo, &["worktree", "prune"]);

    let elsewhere = tempfile::tempdir().unwrap();
    let out = env
        .cox()
        .current_dir(&repo)
        .env("WT_ROOT", elsewhere.path())
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario("hello"))
        .args(["run", "-p", "x", "--worktree", "a2"])
        .args(["--permission-mode", "acceptEdits"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(elsewhere.path().join("repo-a2").is_dir());
    // Worktrees go outside the repository: a WT_ROOT inside it is refused.
    let inside = env
        .cox()
        .current_dir(&repo)
        .env("WT_ROOT", repo.join("wt"))
        .args(["run", "-p", "x", "--worktree", "in"])
        .output()
        .unwrap();
    common::assert_one_line_error(&inside, "is inside the repository");
    assert!(!repo.join("wt").exists());
    let _ = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["worktree", "remove", "--force", "--force"])
        .arg(elsewhere.path().join("repo-a2"))
        .output();
}

#[test]
fn another_owner_s_worktree_is_never_taken_and_bad_names_are_refused() {
    let env = Env::new();
    let repo = repo(&env, false);
    let theirs = repo.parent().unwrap().join("_worktrees/repo-t9");
    git(
        &repo,
        &[
            "worktree",
            "add",
            "--lock",
            "--reason",
            "Cursor / grok | t9",
            "-b",
            "t9",
            theirs.to_str().unwrap(),
        ],
    );
    let out = run_in(&env, &repo, "hello", &["--worktree", "t9"]);
    common::assert_one_line_error(&out, "is locked by someone else (Cursor / grok | t9)");
    let list = git(&repo, &["worktree", "list", "--porcelain"]);
    assert!(list.contains("locked Cursor / grok | t9"), "the lock stays");

    // A worktree someone made without a lock is not cox's either.
    let free = repo.parent().unwrap().join("_worktrees/repo-free");
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "free",
            free.to_str().unwrap(),
        ],
    );
    let out = run_in(&env, &repo, "hello", &["--worktree", "free"]);
    common::assert_one_line_error(&out, "is not locked, so it is not cox's");
    let relative = env
        .cox()
        .current_dir(&repo)
        .env("WT_ROOT", "wt")
        .args(["run", "-p", "x", "--worktree", "rel"])
        .output()
        .unwrap();
    common::assert_one_line_error(&relative, "WT_ROOT=wt: an absolute path is needed");

    // A folder in the worktree's place that is no worktree is left alone.
    let squatter = repo.parent().unwrap().join("_worktrees/repo-plain");
    std::fs::create_dir_all(&squatter).unwrap();
    std::fs::write(squatter.join("keep.txt"), "mine\n").unwrap();
    let out = run_in(&env, &repo, "hello", &["--worktree", "plain"]);
    common::assert_one_line_error(&out, "exists and is not a worktree of");
    assert!(squatter.join("keep.txt").exists());

    let out = run_in(&env, &repo, "hello", &["--worktree", "../up"]);
    common::assert_one_line_error(&out, "a worktree name is letters, digits");
    let outside = tempfile::tempdir().unwrap();
    let out = run_in(&env, outside.path(), "hello", &["--worktree", "x"]);
    common::assert_one_line_error(&out, "--worktree needs a git repository");
}

#[test]
fn a_second_live_session_in_the_worktree_is_warned_and_every_session_is_told() {
    let env = Env::new();
    let repo = repo(&env, false);
    let mut first = env
        .cox()
        .current_dir(&repo)
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario("slow"))
        .args(["run", "-p", "talk slowly", "--worktree", "t42"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the first session is on record.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let out = env.cox().args(["sessions", "--json"]).output().unwrap();
        if String::from_utf8_lossy(&out.stdout).contains("\"worktree\"") {
            break;
        }
        assert!(Instant::now() < deadline, "the first session never showed");
        std::thread::sleep(Duration::from_millis(50));
    }
    let second = run_in(&env, &repo, "worktree_told", &["--worktree", "t42"]);
    let _ = first.kill();
    let _ = first.wait();
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let said = stderr(&second);
    let pid = first.id();
    assert!(
        said.contains(&format!("(pid {pid}) is already working in worktree ")),
        "{said}"
    );
    assert!(said.contains("cox: warning: session "), "{said}");
}

#[test]
fn a_worktree_session_resumes_in_its_worktree_or_says_where_it_went() {
    let env = Env::new();
    let repo = repo(&env, false);
    let out = run_in(
        &env,
        &repo,
        "hello",
        &[
            "--worktree",
            "r1",
            "--output-format",
            "json",
            "--permission-mode",
            "acceptEdits",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = result["session_id"].as_str().unwrap().to_owned();
    let worktree = repo.parent().unwrap().join("_worktrees/repo-r1");
    // Resumed from the main checkout, it goes on in the worktree, whose
    // main checkout is still read-only.
    let resumed = run_in(
        &env,
        &repo,
        "worktree_escape",
        &["--resume", &id, "--permission-mode", "bypassPermissions"],
    );
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert!(!repo.join("escaped.txt").exists());
    git(&repo, &["worktree", "unlock", worktree.to_str().unwrap()]);
    git(
        &repo,
        &["worktree", "remove", "--force", worktree.to_str().unwrap()],
    );
    let gone = run_in(&env, &repo, "hello", &["--resume", &id]);
    common::assert_one_line_error(&gone, "git worktree list");
    assert!(stderr(&gone).contains(&format!("cox --worktree <name> --resume {id}")));
}

#[test]
fn a_subagent_may_work_in_a_worktree_of_its_own_which_outlives_it() {
    let env = Env::new();
    let repo = repo(&env, false);
    let out = run_in(
        &env,
        &repo,
        "subagent_isolated",
        &[
            "--permission-mode",
            "bypassPermissions",
            "--output-format",
            "stream-json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let worktree = repo
        .parent()
        .unwrap()
        .join("_worktrees/repo-task-toolu_1_1");
    assert_eq!(
        std::fs::read_to_string(worktree.join("iso.txt")).unwrap(),
        "isolated\n"
    );
    assert!(!repo.join("iso.txt").exists());
    assert_eq!(
        git(&worktree, &["branch", "--show-current"]),
        "task-toolu_1_1"
    );
    let done = lines(&out)
        .into_iter()
        .find(|l| l["type"] == "tool_call_done")
        .unwrap();
    let visible = done["result"]["visible"].as_str().unwrap();
    assert!(
        visible.ends_with(&format!(
            "[worktree {}, branch task-toolu_1_1]",
            worktree.canonicalize().unwrap().display()
        )),
        "{visible}"
    );

    // It makes a branch and a folder: plan mode refuses it.
    let env = Env::new();
    let repo = self::repo(&env, false);
    let out = run_in(
        &env,
        &repo,
        "subagent_isolated",
        &[
            "--permission-mode",
            "plan",
            "--output-format",
            "stream-json",
        ],
    );
    let done = lines(&out)
        .into_iter()
        .find(|l| l["type"] == "tool_call_done")
        .unwrap();
    assert_eq!(done["result"]["denied"], true, "{done}");
    assert!(!repo.parent().unwrap().join("_worktrees").exists());
}

#[test]
fn a_nested_isolated_subagent_gets_a_worktree_of_its_own() {
    let env = Env::new();
    let repo = repo(&env, false);
    let out = run_in(
        &env,
        &repo,
        "subagent_nested_isolated",
        &["--permission-mode", "bypassPermissions"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let root = repo.parent().unwrap().join("_worktrees");
    let outer = root.join("repo-task-toolu_1_1");
    let inner = root.join("repo-task-toolu_1_1-2");
    assert!(outer.join("outer.txt").is_file());
    assert!(inner.join("inner.txt").is_file());
    assert!(
        !outer.join("inner.txt").exists(),
        "the two shared a worktree"
    );
    assert!(!inner.join("outer.txt").exists());
}

#[test]
fn a_hook_judges_a_worktree_subagent_s_call_where_it_writes() {
    let env = Env::new();
    let repo = repo(&env, false);
    let seen = env.work.path().join("seen.jsonl");
    env.claude_settings(
        &serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Write",
        "hooks": [{"type": "command",
            "command": format!("cat >> {}; echo >> {}", seen.display(), seen.display())}]}]}}),
    );
    let out = run_in(
        &env,
        &repo,
        "subagent_isolated",
        &["--permission-mode", "bypassPermissions"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let worktree = repo
        .parent()
        .unwrap()
        .join("_worktrees/repo-task-toolu_1_1")
        .canonicalize()
        .unwrap();
    let text = std::fs::read_to_string(&seen).unwrap();
    let call: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    // The hook is shown the file the child writes, in its worktree, not
    // a file of the same name in the main checkout.
    assert_eq!(
        call["tool_input"]["file_path"],
        worktree.join("iso.txt").display().to_string(),
        "{call}"
    );
    assert_eq!(call["cwd"], worktree.display().to_string(), "{call}");
    assert_eq!(call["agent_type"], "general-purpose");
}

#[test]
fn a_subagent_in_its_own_worktree_keeps_its_parent_s_project_rules() {
    let env = Env::new();
    let repo = repo(&env, false);
    // Not committed: the worktree's checkout does not have it.
    std::fs::create_dir(repo.join(".cox")).unwrap();
    std::fs::write(
        repo.join(".cox/config.toml"),
        "[permissions]\ndeny = [\"Write(./iso.txt)\"]\n",
    )
    .unwrap();
    let out = run_in(
        &env,
        &repo,
        "subagent_isolated",
        &[
            "--permission-mode",
            "bypassPermissions",
            "--output-format",
            "stream-json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let worktree = repo
        .parent()
        .unwrap()
        .join("_worktrees/repo-task-toolu_1_1");
    assert!(worktree.is_dir());
    assert!(
        !worktree.join("iso.txt").exists(),
        "the parent's deny rule held in the child's worktree"
    );
}

#[test]
fn a_relative_deny_rule_holds_in_the_main_checkout_too() {
    let env = Env::new();
    let repo = repo(&env, false);
    std::fs::write(repo.join(".env"), "SECRET=1\n").unwrap();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[permissions]\ndeny = [\"Read(.env)\"]\n",
    )
    .unwrap();
    let out = run_in(
        &env,
        &repo,
        "worktree_env",
        &["--worktree", "env", "--output-format", "stream-json"],
    );
    // A run with a denial exits 2.
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let done = lines(&out)
        .into_iter()
        .find(|l| l["type"] == "tool_call_done")
        .unwrap();
    assert_eq!(done["result"]["denied"], true, "{done}");
    assert!(!done.to_string().contains("SECRET"), "{done}");
}

#[test]
fn a_worktree_inside_its_repository_is_worked_in_as_a_folder() {
    let env = Env::new();
    let repo = repo(&env, false);
    let inner = repo.join(".worktrees/x");
    git(
        &repo,
        &["worktree", "add", "-q", "-b", "x", inner.to_str().unwrap()],
    );
    let scenario = env.work.path().join("made.toml");
    std::fs::write(
        &scenario,
        "[[turn]]\n[[turn.tool_call]]\nname = \"bash\"\ninput = { command = \"echo ok > made.txt\" }\n[[turn]]\ntext = \"made\"\n",
    )
    .unwrap();
    let out = env
        .cox()
        .current_dir(&inner)
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "x", "--permission-mode", "bypassPermissions"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(inner.join("made.txt")).unwrap(),
        "ok\n",
        "commands write the worktree they run in"
    );
}
