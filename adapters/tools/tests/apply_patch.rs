//! `apply_patch` on real files: each operation, hunks with headers and
//! `*** End of File`, CRLF files, modes, and every way a patch fails, each
//! leaving the workspace byte-identical (contents, modes, no leftovers).
//! Its classification: every path it names, confined.

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{Fixture, assert_error};
use cox_protocol::Tool;
use cox_protocol::types::Risk;
use cox_tools::ApplyPatchTool;
use serde_json::json;

fn patch(body: &str) -> serde_json::Value {
    json!({ "patch": format!("*** Begin Patch\n{body}*** End Patch\n") })
}

/// Every file under `root` with its bytes and mode, folders included.
fn snapshot(root: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let mode = meta.permissions().mode();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, (target.display().to_string().into_bytes(), mode));
            } else if meta.is_dir() {
                stack.push(path);
                out.insert(format!("{rel}/"), (Vec::new(), mode));
            } else {
                out.insert(rel, (std::fs::read(&path).unwrap(), mode));
            }
        }
    }
    out
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[tokio::test]
async fn add_update_delete_and_move_in_one_patch() {
    let fx = Fixture::new();
    fx.file("src/lib.rs", "fn a() {\n    1\n}\n\nfn b() {\n    1\n}\n");
    fx.file("old.txt", "bye\n");
    let script = fx.file("run.sh", "#!/bin/sh\necho one\n");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
    let result = fx
        .run(
            &ApplyPatchTool,
            patch(
                "*** Add File: docs/new.txt\n+line one\n+line two\n\
                 *** Update File: src/lib.rs\n@@ fn b() {\n-    1\n+    2\n\
                 *** Delete File: old.txt\n\
                 *** Update File: run.sh\n*** Move to: bin/run.sh\n-echo one\n+echo two\n\
                 *** End of File\n",
            ),
        )
        .await;
    assert!(result.ok, "{result:?}");
    assert_eq!(
        result.visible,
        "applied: A docs/new.txt, M src/lib.rs, D old.txt, R run.sh -> bin/run.sh"
    );
    assert_eq!(fx.read("docs/new.txt"), "line one\nline two\n");
    assert_eq!(
        fx.read("src/lib.rs"),
        "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n"
    );
    assert!(!fx.at("old.txt").exists());
    assert!(!fx.at("run.sh").exists());
    assert_eq!(fx.read("bin/run.sh"), "#!/bin/sh\necho two\n");
    assert_eq!(mode(&fx.at("bin/run.sh")), 0o750, "a move keeps the mode");
    // No temporary file is left anywhere.
    let names: Vec<String> = snapshot(&fx.root).into_keys().collect();
    assert!(names.iter().all(|n| !n.contains("cox-patch")), "{names:?}");
}

#[tokio::test]
async fn an_update_keeps_the_mode_the_line_ends_and_the_missing_final_newline() {
    let fx = Fixture::new();
    let path = fx.file("win.txt", "one\r\ntwo\r\nthree");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let result = fx
        .run(
            &ApplyPatchTool,
            patch("*** Update File: win.txt\n one\n-two\n+2\n+2b\n three\n"),
        )
        .await;
    assert!(result.ok, "{result:?}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"one\r\n2\r\n2b\r\nthree".to_vec()
    );
    assert_eq!(mode(&path), 0o755);
}

#[tokio::test]
async fn hunks_match_in_order_tolerating_whitespace_and_the_input_alias_works() {
    let fx = Fixture::new();
    fx.file("a.py", "def f():  \n\treturn 1\n\ndef g():\n\treturn 1\n");
    let text = "*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    return 1\n+\treturn 10\n\
                @@ def g():\n-\treturn 1\n+\treturn 20\n*** End Patch";
    let result = fx.run(&ApplyPatchTool, json!({ "input": text })).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(
        fx.read("a.py"),
        "def f():  \n\treturn 10\n\ndef g():\n\treturn 20\n"
    );
}

/// A workspace with a few files, and a check that a failed patch left it
/// exactly as it was.
struct Untouched {
    fx: Fixture,
    before: BTreeMap<String, (Vec<u8>, u32)>,
}

impl Untouched {
    fn new() -> Untouched {
        let fx = Fixture::new();
        fx.file("a.txt", "alpha\nbeta\n");
        fx.file("src/lib.rs", "fn main() {\n    let y = 2;\n}\n");
        fx.file("c.txt", "gamma\n");
        fx.file("taken.txt", "taken\n");
        let before = snapshot(&fx.root);
        Untouched { fx, before }
    }

    /// The same workspace, with what it holds now as the state to keep.
    fn rebase(self) -> Untouched {
        Untouched {
            before: snapshot(&self.fx.root),
            fx: self.fx,
        }
    }

    #[track_caller]
    fn assert_same(&self) {
        assert_eq!(
            snapshot(&self.fx.root),
            self.before,
            "the workspace changed"
        );
    }

    async fn fails(&self, body: &str, parts: &[&str]) {
        let result = self.fx.run(&ApplyPatchTool, patch(body)).await;
        assert_error(&result, parts);
        assert!(
            result.visible.ends_with("nothing was written"),
            "{result:?}"
        );
        self.assert_same();
    }
}

#[tokio::test]
async fn a_hunk_that_does_not_apply_writes_nothing_and_names_file_and_hunk() {
    let u = Untouched::new();
    u.fails(
        "*** Add File: new.txt\n+x\n*** Update File: a.txt\n-alpha\n+ALPHA\n\
         *** Delete File: c.txt\n\
         *** Update File: src/lib.rs\n@@\n-    let y = 2;\n+    let y = 3;\n@@\n-    let x = 1;\n+    let x = 4;\n",
        &["hunk 2 of src/lib.rs does not apply: no line matches \"    let x = 1;\" after line 2"],
    )
    .await;
}

#[tokio::test]
async fn missing_existing_and_refused_paths_write_nothing() {
    let u = Untouched::new();
    let fine = "*** Update File: a.txt\n-alpha\n+ALPHA\n*** Add File: made/new.txt\n+n\n";
    let cases: [(&str, &str); 8] = [
        (
            "*** Add File: taken.txt\n+x\n",
            "cannot add taken.txt: it already exists; use *** Update File to change it",
        ),
        (
            "*** Update File: nope.txt\n-x\n+y\n",
            "cannot update nope.txt: it does not exist; use *** Add File to create it",
        ),
        (
            "*** Delete File: nope.txt\n",
            "cannot delete nope.txt: it does not exist",
        ),
        (
            "*** Update File: c.txt\n*** Move to: taken.txt\n-gamma\n+g\n",
            "cannot move c.txt to taken.txt: taken.txt already exists",
        ),
        (
            "*** Add File: ../outside/x.txt\n+x\n",
            "path ../outside/x.txt is outside the workspace",
        ),
        (
            "*** Update File: c.txt\n*** Move to: ../outside/c.txt\n-gamma\n+g\n",
            "path ../outside/c.txt is outside the workspace",
        ),
        ("*** Delete File: src\n", "src is a folder, not a file"),
        (
            "*** Add File: d\n+x\n*** Add File: d/e\n+y\n",
            "cannot write d/e: the patch also writes d as a file",
        ),
    ];
    for (bad, want) in cases {
        u.fails(&format!("{fine}{bad}"), &[want]).await;
    }
    // Nor does a patch that does not parse.
    let result =
        u.fx.run(
            &ApplyPatchTool,
            json!({"patch": "*** Begin Patch\n*** Delete File: a.txt\n"}),
        )
        .await;
    assert_error(
        &result,
        &["invalid patch: line 2: the patch must end with `*** End Patch`"],
    );
    u.assert_same();
}

#[tokio::test]
async fn a_link_out_of_the_workspace_and_a_read_only_file_are_refused() {
    let u = Untouched::new();
    u.fx.link("out", &u.fx.outside);
    let linked = u.rebase();
    linked
        .fails(
            "*** Update File: out/secret.txt\n-secret\n+mine\n",
            &["is outside the workspace"],
        )
        .await;
    assert_eq!(
        std::fs::read_to_string(linked.fx.outside.join("secret.txt")).unwrap(),
        "secret\n"
    );
    let path = linked.fx.at("c.txt");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let read_only = linked.rebase();
    read_only
        .fails(
            "*** Update File: c.txt\n-gamma\n+g\n",
            &["cannot update c.txt: it is read-only"],
        )
        .await;
}

#[tokio::test]
async fn a_cancelled_call_writes_nothing() {
    let u = Untouched::new();
    let result =
        u.fx.run_cancelled(&ApplyPatchTool, patch("*** Delete File: a.txt\n"))
            .await;
    assert_error(&result, &["cancelled"]);
    u.assert_same();
}

#[test]
fn classify_names_every_path_confined_and_moves_destinations() {
    let fx = Fixture::new();
    let abs = |rel: &str| fx.at(rel).display().to_string();
    let input = patch(
        "*** Update File: a.txt\n*** Move to: sub/b.txt\n-x\n+y\n*** Add File: ./c.txt\n+c\n\
         *** Delete File: a.txt\n*** Delete File: ../outside/d.txt\n",
    );
    let got = ApplyPatchTool.classify(&input, &fx.ws);
    assert_eq!(got.risk, Risk::Write);
    assert_eq!(got.subject, abs("a.txt"));
    assert_eq!(
        got.writes,
        vec![
            abs("a.txt"),
            abs("sub/b.txt"),
            abs("c.txt"),
            "../outside/d.txt".to_owned(),
        ]
    );
    // The alias key classifies the same.
    let text = input["patch"].clone();
    assert_eq!(
        ApplyPatchTool.classify(&json!({"input": text}), &fx.ws),
        got
    );
    // A patch that does not parse is still a write, on no path.
    for bad in [
        json!({"patch": "*** Update File: a.txt"}),
        json!({}),
        json!(7),
    ] {
        let got = ApplyPatchTool.classify(&bad, &fx.ws);
        assert_eq!(
            (got.risk, got.subject.as_str(), got.writes.len()),
            (Risk::Write, "apply_patch", 0)
        );
    }
}
