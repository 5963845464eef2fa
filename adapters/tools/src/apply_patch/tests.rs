//! The commit step's own failure path: a plan that cannot be staged leaves
//! no temporary file and no folder behind. (The whole tool, through its
//! public `run`, is tested in `tests/apply_patch.rs`.)

use super::*;

#[test]
fn a_file_that_cannot_be_staged_undoes_every_staged_one_and_its_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    fs::write(root.join("a.txt"), "old\n").unwrap();
    // `blocker` is a file, so `blocker/x` cannot get its folder.
    fs::write(root.join("blocker"), "b\n").unwrap();
    let present = |raw: &str| State::Present {
        bytes: b"new\n".to_vec(),
        mode: None,
        raw: raw.into(),
    };
    let mut plan = Plan::default();
    plan.files.insert(root.join("a.txt"), present("a.txt"));
    plan.files
        .insert(root.join("aa/deep/new.txt"), present("aa/deep/new.txt"));
    plan.files
        .insert(root.join("blocker/x"), present("blocker/x"));
    let err = commit(&plan).unwrap_err();
    assert!(
        err.starts_with("could not write blocker/x: ") && err.ends_with("; nothing was written"),
        "{err}"
    );
    let mut left: Vec<String> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["a.txt", "blocker"]);
    assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "old\n");
}
