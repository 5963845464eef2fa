//! cox-bench's arguments: a bad one is refused, never silently replaced by
//! a default.

use std::process::Command;

fn bench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cox-bench"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_bad_count_is_refused() {
    let out = bench(&["turns", "many"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("invalid value 'many'"), "{err}");
}

#[test]
fn exec_runs_the_command_after_the_dashes() {
    let out = bench(&["exec", "2", "--", "true"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("runs: 2,"), "{text}");
    assert_eq!(bench(&["exec", "2"]).status.code(), Some(1), "no command");
    assert_eq!(bench(&["frobnicate"]).status.code(), Some(1));
}
