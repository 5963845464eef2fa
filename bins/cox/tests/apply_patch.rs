//! `apply_patch` through the real binary and the scripted provider: a patch
//! whose hunk does not apply writes nothing and tells the model which hunk,
//! the corrected one adds, updates, deletes and moves; a patch with one
//! denied path is refused whole. HOME and COX_HOME are temporary folders.

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

use common::{Env, lines, stderr};
use serde_json::Value;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Every file under `root` (relative path → bytes).
fn files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn run(env: &Env, home: &Path, scenario: &str, extra: &[&str]) -> Output {
    env.cox()
        .env("HOME", home)
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", common::scenario(scenario))
        .args(["run", "-p", "patch it", "--output-format", "stream-json"])
        .args(["--permission-mode", "acceptEdits"])
        .args(extra)
        .output()
        .unwrap()
}

/// The results of the tool calls, in order.
fn results(out: &Output) -> Vec<Value> {
    lines(out)
        .into_iter()
        .filter(|l| l["type"] == "tool_call_done")
        .map(|l| l["result"].clone())
        .collect()
}

#[test]
fn a_failed_patch_writes_nothing_and_the_corrected_one_applies() {
    let env = Env::new();
    let home = tempfile::tempdir().unwrap();
    let work = env.work.path();
    write(
        &work.join("src/lib.rs"),
        "fn a() {\n    1\n}\n\nfn b() {\n    1\n}\n",
    );
    write(&work.join("old.txt"), "bye\n");
    write(&work.join("run.sh"), "#!/bin/sh\necho one\n");
    std::fs::set_permissions(work.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = files(work);

    let out = run(&env, home.path(), "apply_patch", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = results(&out);
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0]["ok"], false);
    assert_eq!(
        results[0]["visible"],
        "hunk 2 of src/lib.rs does not apply: no line matches \"    let x = 1;\" after line 5; \
         nothing was written"
    );
    assert_eq!(results[1]["ok"], true, "{}", results[1]);

    let after = files(work);
    let mut want = before;
    want.insert("docs/new.txt".into(), b"line one\nline two\n".to_vec());
    want.insert(
        "src/lib.rs".into(),
        b"fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n".to_vec(),
    );
    want.remove("old.txt");
    want.remove("run.sh");
    want.insert("bin/run.sh".into(), b"#!/bin/sh\necho two\n".to_vec());
    assert_eq!(after, want);
    let mode = std::fs::metadata(work.join("bin/run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755, "a move keeps the mode");

    // The call the model made names every path it writes.
    let requested: Vec<Value> = lines(&out)
        .into_iter()
        .filter(|l| l["type"] == "tool_call_requested")
        .collect();
    let root = work.canonicalize().unwrap();
    let at = |rel: &str| root.join(rel).display().to_string();
    assert_eq!(
        requested[1]["call"]["writes"],
        serde_json::json!([
            at("docs/new.txt"),
            at("src/lib.rs"),
            at("old.txt"),
            at("run.sh"),
            at("bin/run.sh")
        ])
    );
}

#[test]
fn a_patch_with_one_denied_path_is_refused_whole() {
    let env = Env::new();
    let home = tempfile::tempdir().unwrap();
    let out = run(
        &env,
        home.path(),
        "apply_patch_denied",
        &["--deny", "Edit(secret/**)"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let results = results(&out);
    assert_eq!(results[0]["denied"], true, "{results:?}");
    let secret = env
        .work
        .path()
        .canonicalize()
        .unwrap()
        .join("secret/key.txt");
    let visible = results[0]["visible"].as_str().unwrap();
    assert!(
        visible.contains(&format!("the call writes {}", secret.display())),
        "{visible}"
    );
    assert!(files(env.work.path()).is_empty(), "nothing was written");
}
