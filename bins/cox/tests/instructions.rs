//! Instruction files and the skills index reach the model in `system[2]`,
//! and everything before the volatile block stays the same bytes across the
//! calls of a session and across sessions of one repository.

mod common;

use std::path::{Path, PathBuf};

use common::{Env, anthropic_final_text, anthropic_write_call, serve, stderr};
use serde_json::Value;

const SKILL: &str = "---\nname: release\ndescription: Cut a release: bump, tag, changelog.\n---\nSECRET-SKILL-BODY\n";

/// A repository in the work folder: `.git`, an AGENTS.md at the root, a
/// CLAUDE.md in `app/` (the --cwd), a skill; and the user's own AGENTS.md.
fn repository(env: &Env) -> PathBuf {
    let root = env.work.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(
        root.join("AGENTS.md"),
        "Run `make check` before you finish.\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("app")).unwrap();
    std::fs::write(root.join("app/CLAUDE.md"), "In app/, use tabs.\n").unwrap();
    let skill = root.join(".cox/skills/release");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(skill.join("SKILL.md"), SKILL).unwrap();
    std::fs::write(env.home.path().join("AGENTS.md"), "I like short answers.\n").unwrap();
    root.join("app")
}

/// Runs the hello task against an Anthropic server in `cwd`; returns the
/// two request bodies and stderr.
fn hello(env: &Env, cwd: &Path) -> (Vec<String>, String) {
    let (url, server) = serve(vec![
        ("200 OK", anthropic_write_call()),
        ("200 OK", anthropic_final_text()),
    ]);
    let out = env
        .cox()
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("ANTHROPIC_BASE_URL", &url)
        .args(["run", "-p", "create hello.txt containing hi"])
        .args([
            "--output-format",
            "stream-json",
            "--permission-mode",
            "acceptEdits",
        ])
        .arg("--cwd")
        .arg(cwd)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(cwd.join("hello.txt")).unwrap(),
        "hi\n"
    );
    (server.join().unwrap(), stderr(&out))
}

fn system(body: &str) -> Vec<String> {
    let body: Value = serde_json::from_str(body).unwrap();
    body["system"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["text"].as_str().unwrap().to_owned())
        .collect()
}

/// The body's bytes before the volatile block: the model, the tools, cox's
/// prompt and the instructions, breakpoint 1 included.
fn stable_prefix(body: &str) -> &str {
    let at = body
        .find(r#",{"type":"text","text":"Date: "#)
        .expect("a volatile block");
    &body[..at]
}

fn position(text: &str, needle: &str) -> usize {
    text.find(needle)
        .unwrap_or_else(|| panic!("{needle:?} missing from:\n{text}"))
}

#[test]
fn instruction_files_and_skills_reach_system_2_in_order() {
    let env = Env::new();
    let cwd = repository(&env);
    let (bodies, err) = hello(&env, &cwd);
    assert!(!err.contains("warning"), "{err}");
    let blocks = system(&bodies[0]);
    assert_eq!(
        blocks.len(),
        3,
        "prompt, instructions, volatile: {blocks:?}"
    );
    assert!(blocks[0].starts_with("You are cox"));
    assert!(blocks[2].starts_with("Date: "));
    let text = &blocks[1];
    let order = [
        "## $COX_HOME/AGENTS.md\n\nI like short answers.",
        "## AGENTS.md\n\nRun `make check` before you finish.",
        "## app/CLAUDE.md\n\nIn app/, use tabs.",
        "- `release`: Cut a release: bump, tag, changelog. (`.cox/skills/release/SKILL.md`)",
    ]
    .map(|needle| position(text, needle));
    assert!(order.is_sorted(), "{order:?} in:\n{text}");
    assert!(text.contains("the working directory is `app` inside it"));
    assert!(
        !text.contains("SECRET-SKILL-BODY"),
        "only the index is sent"
    );
    let work = env.work.path().to_string_lossy().into_owned();
    let home = env.home.path().to_string_lossy().into_owned();
    assert!(!text.contains(&work) && !text.contains(&home), "{text}");
}

#[test]
fn the_stable_prefix_is_the_same_bytes_across_calls_and_sessions() {
    let env = Env::new();
    let cwd = repository(&env);
    let (first, _) = hello(&env, &cwd);
    let (second, _) = hello(&env, &cwd);
    let prefix = stable_prefix(&first[0]);
    assert!(
        prefix.contains("\"tools\":"),
        "tools come before the system"
    );
    assert!(prefix.contains("In app/, use tabs."));
    assert_eq!(prefix, stable_prefix(&first[1]), "two calls of one session");
    assert_eq!(prefix, stable_prefix(&second[0]), "two sessions");
    assert_eq!(prefix, stable_prefix(&second[1]));
}

#[test]
fn an_unreadable_agents_md_is_a_warning_and_the_session_still_runs() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let cwd = repository(&env);
    let agents = env.work.path().join("AGENTS.md");
    std::fs::set_permissions(&agents, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads anything: then there is nothing to warn about.
    let unreadable = std::fs::read(&agents).is_err();
    let (bodies, err) = hello(&env, &cwd);
    std::fs::set_permissions(&agents, std::fs::Permissions::from_mode(0o644)).unwrap();
    if !unreadable {
        eprintln!("skipped: running as a user who can read a file with mode 000");
        return;
    }
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(warnings[0].starts_with("cox: warning: "), "{err}");
    let named = std::fs::canonicalize(&agents).unwrap();
    assert!(warnings[0].contains(&*named.to_string_lossy()), "{err}");
    assert!(warnings[0].ends_with("; left out"), "{err}");
    let text = &system(&bodies[0])[1];
    assert!(!text.contains("## AGENTS.md"), "{text}");
    assert!(text.contains("## app/CLAUDE.md"), "{text}");
}

#[test]
fn a_huge_agents_md_is_capped() {
    let env = Env::new();
    let cwd = repository(&env);
    let line = "Always do the thing the careful way.\n";
    let huge = line.repeat(200_000 / line.len());
    std::fs::write(env.work.path().join("AGENTS.md"), &huge).unwrap();
    let (bodies, _) = hello(&env, &cwd);
    let text = &system(&bodies[0])[1];
    let shown = text.matches(line.trim_end()).count();
    assert!(shown * line.len() <= 32 * 1024, "{shown} lines shown");
    assert!(shown * line.len() > 31 * 1024, "{shown} lines shown");
    assert!(text.contains("[cox: cut here: only the first"), "says so");
    assert!(
        text.contains("In app/, use tabs."),
        "later files still come"
    );
    assert!(text.len() < 40 * 1024);
}

/// An AGENTS.md swapped between a plain file and a link out of the
/// repository while sessions start (by a confined command still running)
/// never carries the link's target into a request: the file is opened
/// once, and where it really is asked of the open file.
#[test]
fn an_instruction_file_swapped_with_a_link_never_carries_a_secret_in() {
    let env = Env::new();
    let root = env.work.path().to_path_buf();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let secret = env.home.path().join("id_rsa");
    std::fs::write(&secret, "SECRET-SSH-KEY\n").unwrap();
    let scenario = env.home.path().join("lacks.toml");
    std::fs::write(
        &scenario,
        "[[turn]]\ntext = \"ok\"\n[turn.expect]\nrequest_lacks = [\"SECRET-SSH-KEY\"]\n",
    )
    .unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let racer = {
        let (root, secret, stop) = (root.clone(), secret.clone(), stop.clone());
        std::thread::spawn(move || {
            let (file, link, name) = (root.join("decoy"), root.join("lnk"), root.join("AGENTS.md"));
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::fs::write(&file, "Plain notes.\n");
                let _ = std::fs::rename(&file, &name);
                let _ = std::os::unix::fs::symlink(&secret, &link);
                let _ = std::fs::rename(&link, &name);
            }
        })
    };
    for round in 0..40 {
        let out = env
            .cox()
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", &scenario)
            .args(["run", "-p", "hi"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "round {round}: {}",
            stderr(&out)
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    racer.join().unwrap();
}
