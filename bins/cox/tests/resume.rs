//! `cox run --resume <id>` and `--continue`: the history is rebuilt from the
//! rollout and the model sees it whole, the turn count goes on, a process
//! killed mid-turn loses nothing it wrote, and damaged or foreign rollouts
//! are one-line errors that leave the file as it was.

mod common;

use std::time::Duration;

use common::{Env, anthropic_final_text, anthropic_write_call, lines, serve, stderr};
use serde_json::Value;

fn session_id(out: &std::process::Output) -> String {
    lines(out)[0]["session_id"].as_str().unwrap().to_owned()
}

/// The hello task against a loopback Anthropic server, then the same
/// session resumed with a second prompt; returns the second run's output
/// and the request bodies the server saw.
fn hello_then(env: &Env, resume_args: &[&str]) -> (std::process::Output, Vec<String>) {
    let (url, server) = serve(vec![
        ("200 OK", anthropic_write_call()),
        ("200 OK", anthropic_final_text()),
        ("200 OK", anthropic_final_text()),
    ]);
    let first = env
        .cox()
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", &url)
        .args(["run", "-p", "create hello.txt containing hi"])
        .args([
            "--output-format",
            "stream-json",
            "--permission-mode",
            "acceptEdits",
        ])
        .output()
        .unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let id = session_id(&first);
    let args: Vec<String> = resume_args.iter().map(|a| a.replace("{id}", &id)).collect();
    let second = env
        .cox()
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", &url)
        .args([
            "run",
            "-p",
            "and now say bye",
            "--output-format",
            "stream-json",
        ])
        .args(&args)
        .output()
        .unwrap();
    (second, server.join().unwrap())
}

#[test]
fn a_resumed_session_shows_the_model_everything_and_counts_on() {
    let env = Env::new();
    let (out, bodies) = hello_then(&env, &["--resume", "{id}"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    assert_eq!(lines[0]["type"], "system");
    let started = lines.iter().find(|l| l["type"] == "turn_started").unwrap();
    assert_eq!(started["turn"], 2, "the turn count goes on");
    let sent: Value = serde_json::from_str(&bodies[2]).unwrap();
    let messages = sent["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    assert_eq!(
        messages[0]["content"][0]["text"],
        "create hello.txt containing hi"
    );
    assert_eq!(messages[1]["content"][0]["id"], "toolu_w");
    assert_eq!(messages[3]["content"][0]["text"], "Created hello.txt.");
    assert_eq!(messages[4]["content"][0]["text"], "and now say bye");
    // The first request of the resumed run repeats the last one of the
    // first run byte for byte, up to the new turn (markers aside).
    let unmarked = |b: &str| b.replace(",\"cache_control\":{\"type\":\"ephemeral\"}", "");
    let before = unmarked(&bodies[1]);
    let at = before.find("\"messages\":").unwrap();
    assert_eq!(before[..at], unmarked(&bodies[2])[..at]);
    assert_eq!(
        env.rollouts().len(),
        1,
        "one session, one rollout, appended to"
    );
}

#[test]
fn a_forked_session_starts_from_a_copy_and_leaves_the_old_one_alone() {
    let env = Env::new();
    let (out, bodies) = hello_then(&env, &["--resume", "{id}", "--fork-session"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    let fork_id = lines[0]["session_id"].as_str().unwrap().to_owned();
    let rollouts = env.rollouts();
    assert_eq!(rollouts.len(), 2, "the fork has a rollout of its own");
    let old = rollouts
        .iter()
        .find(|p| !p.to_string_lossy().contains(&fork_id))
        .unwrap();
    let old_id = old.file_stem().unwrap().to_string_lossy().into_owned();
    assert_ne!(old_id, fork_id, "a new session id");
    // The model saw the whole old conversation, then the new prompt.
    let sent: Value = serde_json::from_str(&bodies[2]).unwrap();
    assert_eq!(sent["messages"].as_array().unwrap().len(), 5);
    let started = lines.iter().find(|l| l["type"] == "turn_started").unwrap();
    assert_eq!(started["turn"], 2, "the fork counts on from the copy");
    // The old rollout ends with the first run: nothing of the fork's turn.
    let old_text = std::fs::read_to_string(old).unwrap();
    assert!(!old_text.contains("and now say bye"));
    assert!(!old_text.contains(&fork_id));
    // The fork's row names the old session, marked as a fork.
    let shown = env
        .cox()
        .args(["sessions", &fork_id, "--json"])
        .output()
        .unwrap();
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    let detail: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(detail["parent_id"], old_id.as_str());
    assert_eq!(detail["forked"], true);
    // The old session lists no subagent for it.
    let old_shown = env
        .cox()
        .args(["sessions", &old_id, "--json"])
        .output()
        .unwrap();
    let old_detail: Value = serde_json::from_slice(&old_shown.stdout).unwrap();
    assert_eq!(old_detail["subagents"].as_array().unwrap().len(), 0);
    // The fork resumes as itself, with its own turn and the copied ones.
    let fork_text = std::fs::read_to_string(
        rollouts
            .iter()
            .find(|p| p.to_string_lossy().contains(&fork_id))
            .unwrap(),
    )
    .unwrap();
    assert!(fork_text.contains("create hello.txt containing hi"));
    assert!(fork_text.contains("and now say bye"));
    assert!(
        !fork_text.contains(&old_id),
        "every session_started names the fork"
    );
}

#[test]
fn fork_session_alone_is_refused() {
    let env = Env::new();
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "k")
        .args(["run", "-p", "hi", "--fork-session"])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, "--fork-session needs --resume ID or --continue");
}

#[test]
fn continue_picks_the_newest_session_of_this_folder() {
    let env = Env::new();
    let (out, bodies) = hello_then(&env, &["--continue"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sent: Value = serde_json::from_str(&bodies[2]).unwrap();
    assert_eq!(sent["messages"].as_array().unwrap().len(), 5);
}

#[test]
fn an_unknown_session_and_nothing_to_continue_are_one_line() {
    let env = Env::new();
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "k")
        .args(["run", "-p", "hi", "--resume", "01JNOPE"])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, "no session 01JNOPE under");
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "k")
        .args(["run", "-p", "hi", "--continue"])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, "no earlier session in");
    // A rollout that cannot be read may be this folder's: said so, not
    // "no earlier session".
    let first = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", common::scenario("hello"))
        .args(["run", "-p", "create hello.txt containing hi"])
        .args(["--permission-mode", "acceptEdits"])
        .output()
        .unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let rollout = env.rollouts().pop().unwrap();
    std::fs::write(&rollout, "not json\n").unwrap();
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "k")
        .args(["run", "-p", "hi", "--continue"])
        .output()
        .unwrap();
    common::assert_one_line_error(&out, "no readable earlier session in");
    assert!(
        stderr(&out).contains("1 rollout(s) could not be read"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_session_killed_mid_turn_resumes_with_everything_it_wrote() {
    let env = Env::new();
    let mut child = env.spawn_slow();
    // Let a few words stream, then kill without warning.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut seen = 0;
    let mut line = String::new();
    while seen < 4 {
        line.clear();
        std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
        if line.contains("\"text_delta\"") {
            seen += 1;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let rollout = env.rollouts().remove(0);
    let before = std::fs::read_to_string(&rollout).unwrap();
    assert!(before.matches("text_delta").count() >= 4);
    assert!(!before.contains("turn_done"));
    let id = rollout.file_stem().unwrap().to_str().unwrap().to_owned();

    let (url, server) = serve(vec![("200 OK", anthropic_final_text())]);
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", &url)
        .args(["run", "-p", "go on", "--resume", &id])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("turn 1 did not finish"),
        "{}",
        stderr(&out)
    );
    let after = std::fs::read_to_string(&rollout).unwrap();
    assert!(
        after.starts_with(&before),
        "nothing written before the kill is lost"
    );
    let sent: Value = serde_json::from_str(&server.join().unwrap()[0]).unwrap();
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    let partial = messages[1]["content"][0]["text"].as_str().unwrap();
    assert!(partial.starts_with("This answer streams"), "{partial}");
    let _ = Duration::ZERO;
}

fn damaged(env: &Env, edit: impl FnOnce(&str) -> String) -> (std::process::Output, String, String) {
    let out = env.run(
        "hello",
        &[
            "--permission-mode",
            "acceptEdits",
            "--output-format",
            "stream-json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = session_id(&out);
    let rollout = env.rollouts().remove(0);
    let text = edit(&std::fs::read_to_string(&rollout).unwrap());
    std::fs::write(&rollout, &text).unwrap();
    // The provider is unreachable; one attempt is enough to show the
    // rollout was read.
    std::fs::write(
        env.home.path().join("config.toml"),
        "[providers.anthropic]\nmax_attempts = 1\n",
    )
    .unwrap();
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .args(["run", "-p", "again", "--resume", &id])
        .output()
        .unwrap();
    let after = std::fs::read_to_string(&rollout).unwrap();
    (out, text, after)
}

#[test]
fn a_garbage_line_mid_rollout_is_named_and_the_file_kept() {
    let env = Env::new();
    let (out, before, after) = damaged(&env, |text| {
        let mut lines: Vec<&str> = text.lines().collect();
        lines.insert(3, "{\"type\":\"text_del");
        lines.join("\n") + "\n"
    });
    common::assert_one_line_error(&out, ".jsonl:4:");
    assert_eq!(before, after, "nothing is rewritten");
}

#[test]
fn a_rollout_from_a_newer_cox_is_refused() {
    let env = Env::new();
    let (out, before, after) = damaged(&env, |text| {
        text.replacen("\"permission_mode\"", "\"format\":2,\"permission_mode\"", 1)
    });
    common::assert_one_line_error(&out, "written by a newer cox (format 2");
    assert_eq!(before, after);
}

#[test]
fn a_last_line_cut_short_is_tolerated_and_said() {
    let env = Env::new();
    let (out, _, after) = damaged(&env, |text| format!("{text}{{\"type\":\"text_de"));
    // The resumed run reaches the (unreachable) provider: the rollout was
    // read, the cut line reported.
    assert!(
        stderr(&out).contains("the last line was cut short"),
        "{}",
        stderr(&out)
    );
    assert!(after.contains("\"resumed\":true"));
    // The cut line is now inside the file, ended by the resumed run: the
    // next resume reads past it and says so.
    let id = lines(&env.run("hello", &["--output-format", "stream-json"]))[0]["session_id"]
        .as_str()
        .map(str::to_owned);
    assert!(id.is_some());
    let rollout = env
        .rollouts()
        .into_iter()
        .find(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .contains("\"resumed\":true")
        })
        .unwrap();
    let resumed_id = rollout.file_stem().unwrap().to_str().unwrap().to_owned();
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .args(["run", "-p", "once more", "--resume", &resumed_id])
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("a line cut short by an earlier crash is skipped"),
        "{}",
        stderr(&out)
    );
}
