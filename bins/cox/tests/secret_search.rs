//! The secret folders stay closed to searches through the real binary: with
//! the workspace being HOME, a `grep` and a `glob` from it never return what
//! is in `~/.ssh`, neither on stdout (stream-json) nor anywhere under
//! `COX_HOME` (rollout, archive, database, log).

mod common;

use std::path::Path;

use common::{Env, lines, stderr};

/// The key file's line; the model's pattern is only its first word.
const KEY_LINE: &str = "canary 5d1e7c0a9b-private-key-body";
const KEY_PART: &str = "5d1e7c0a9b";

/// Every file under `dir`, as bytes.
fn every_file(dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            every_file(&path, out);
        } else {
            out.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
    }
}

#[test]
fn grep_and_glob_from_home_do_not_read_dot_ssh() {
    let env = Env::new();
    let home = env.work.path().canonicalize().unwrap();
    std::fs::create_dir(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), format!("{KEY_LINE}\n")).unwrap();
    std::fs::write(home.join("notes.txt"), "a canary in a public file\n").unwrap();
    let out = env
        .cox()
        .env("HOME", &home)
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", common::scenario("ssh_grep"))
        .args([
            "run",
            "-p",
            "find the canary",
            "--output-format",
            "stream-json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains(KEY_PART),
        "the key reached stdout: {stdout}"
    );
    assert!(!stdout.contains("id_rsa"), "{stdout}");
    assert!(!stderr(&out).contains(KEY_PART));

    let results: Vec<String> = lines(&out)
        .into_iter()
        .filter(|l| l["type"] == "tool_call_done")
        .map(|l| l["result"]["visible"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(results.len(), 2, "{stdout}");
    assert_eq!(
        results[0],
        "notes.txt:1:a canary in a public file\n\
         [1 path skipped: permission rules deny reading them]\n"
    );
    assert_eq!(
        results[1],
        "notes.txt\n[1 path skipped: permission rules deny reading them]"
    );

    assert_eq!(env.rollouts().len(), 1, "one rollout");
    let mut files = Vec::new();
    every_file(env.home.path(), &mut files);
    assert!(files.iter().any(|(name, _)| name.contains("sessions")));
    for (name, bytes) in files {
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(KEY_PART), "the key reached {name}");
    }
}
