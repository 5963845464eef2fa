//! Background shells over the real binary with the scripted provider:
//! `bash` with `run_in_background` answers at once, `bash_output` and
//! `kill_shell` read and stop shells (the scenario checks what the model
//! reads), a shell still running when the session ends is killed, and a
//! background shell is confined by the sandbox as a foreground one is.

mod common;

use std::time::Duration;

use common::{Env, stderr};
use serde_json::Value;

fn run_inline(env: &Env, scenario: &str, allow: &str) -> std::process::Output {
    let path = env.work.path().join("inline.toml");
    std::fs::write(&path, scenario).unwrap();
    env.cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &path)
        .args(["run", "-p", "do the task", "--output-format", "json"])
        .args(["--allowedTools", allow])
        .output()
        .unwrap()
}

#[test]
fn a_background_shell_runs_while_the_model_goes_on_and_is_read_and_killed() {
    let env = Env::new();
    let out = env.run(
        "background_shells",
        &["--output-format", "json", "--allowedTools", "Bash"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["result"], "The build ran in the background.");
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("made.txt")).unwrap(),
        "made\n",
        "the shell ran in the workspace"
    );
}

#[test]
fn a_shell_still_running_when_the_session_ends_is_killed() {
    let env = Env::new();
    let out = run_inline(
        &env,
        r#"
[[turn]]
[[turn.tool_call]]
name = "bash"
input = { command = "sleep 1.5; echo late > late.txt", run_in_background = true }

[[turn]]
text = "Started."
"#,
        "Bash",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::thread::sleep(Duration::from_millis(2500));
    assert!(
        !env.work.path().join("late.txt").exists(),
        "the shell outlived the session"
    );
}

#[test]
fn a_background_shell_is_confined_as_a_foreground_one() {
    let env = Env::new();
    // Outside every root, and not under /tmp (which the sandbox makes
    // private).
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    let target = outside.path().join("escaped.txt");
    let out = run_inline(
        &env,
        &format!(
            r#"
[[turn]]
[[turn.tool_call]]
name = "bash"
input = {{ command = "echo x > {target}; echo exit=$?", run_in_background = true }}

[[turn]]
[[turn.tool_call]]
name = "bash"
input = {{ command = "sleep 0.5" }}

[[turn]]
[[turn.tool_call]]
name = "bash_output"
input = {{ id = "bash_1" }}

[[turn]]
text = "Done."
[turn.expect]
tool_result_contains = "exit=1"
"#,
            target = target.display()
        ),
        "Bash",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !target.exists(),
        "a background shell wrote outside the workspace"
    );
}

/// An instruction file a background shell makes where none was, and that
/// is still running when the session ends, is moved aside when the
/// session goes: the next session does not load it.
#[test]
fn an_instruction_file_a_background_shell_plants_does_not_outlive_the_session() {
    if !std::path::Path::new("/usr/bin/bwrap").exists() {
        eprintln!("skipped: bwrap is not installed");
        return;
    }
    let env = Env::new();
    let scenario = "[[turn]]\n[[turn.tool_call]]\nname = \"bash\"\n\
        input = { command = \"echo PLANTED > AGENTS.md; sleep 60\", run_in_background = true }\n\n\
        [[turn]]\n[[turn.tool_call]]\nname = \"bash\"\ninput = { command = \"sleep 0.5\" }\n\n\
        [[turn]]\ntext = \"done\"\n";
    let out = run_inline(&env, scenario, "Bash");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !env.work.path().join("AGENTS.md").exists(),
        "the planted file outlived the session"
    );
    let aside = std::fs::read_dir(env.work.path())
        .unwrap()
        .flatten()
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("AGENTS.md.cox-planted-")
        });
    assert!(aside, "nothing was moved aside");
}

/// An instruction file the file tools write during a session (the person
/// allowed it) is read-only for the commands that follow.
#[test]
fn an_instruction_file_written_during_a_session_is_read_only_for_later_commands() {
    if !std::path::Path::new("/usr/bin/bwrap").exists() {
        eprintln!("skipped: bwrap is not installed");
        return;
    }
    let env = Env::new();
    let scenario = "[[turn]]\n[[turn.tool_call]]\nname = \"write\"\n\
        input = { path = \"CLAUDE.md\", content = \"mine\\n\" }\n\n\
        [[turn]]\n[[turn.tool_call]]\nname = \"bash\"\n\
        input = { command = \"echo injected >> CLAUDE.md || echo refused\" }\n\n\
        [[turn]]\ntext = \"done\"\n[turn.expect]\ntool_result_contains = \"refused\"\n";
    let out = run_inline(&env, scenario, "Edit(CLAUDE.md),Bash");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("CLAUDE.md")).unwrap(),
        "mine\n"
    );
}

/// What the file tools write for the person is theirs: a background shell
/// started before, still running when the session ends, does not have it
/// taken for its own and moved aside.
#[test]
fn a_file_the_file_tools_wrote_is_not_taken_for_a_background_shells() {
    if !std::path::Path::new("/usr/bin/bwrap").exists() {
        eprintln!("skipped: bwrap is not installed");
        return;
    }
    let env = Env::new();
    let scenario = "[[turn]]\n[[turn.tool_call]]\nname = \"bash\"\n\
        input = { command = \"sleep 60\", run_in_background = true }\n\n\
        [[turn]]\n[[turn.tool_call]]\nname = \"write\"\n\
        input = { path = \"CLAUDE.md\", content = \"mine\\n\" }\n\n\
        [[turn]]\ntext = \"done\"\n";
    let out = run_inline(&env, scenario, "Edit(CLAUDE.md),Bash");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("CLAUDE.md")).unwrap(),
        "mine\n"
    );
}
