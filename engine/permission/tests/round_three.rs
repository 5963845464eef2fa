//! The third red-team round's classes, each line run for real first: real
//! bash and coreutils in a scratch folder show that the line does write
//! into `src/` (or print `.env`), then the engine, through the real split,
//! must not let it run unasked in any mode under the rule it slips past.

use std::path::Path;
use std::process::Command;

use cox_permission::{Engine, Outcome};
use cox_protocol::CallId;
use cox_protocol::config::PermissionsConfig;
use cox_protocol::types::{ApprovalPolicy, PermissionMode, SandboxMode, ToolCall};
use serde_json::json;

const MODES: [PermissionMode; 4] = [
    PermissionMode::Default,
    PermissionMode::AcceptEdits,
    PermissionMode::Auto,
    PermissionMode::BypassPermissions,
];

const SECRET: &str = "hunter2-round-three";

/// A scratch repository: `src/a.rs`, `x.txt`, and `.env` holding the
/// secret.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.rs"), "fn a() {}\n").unwrap();
    std::fs::write(dir.path().join("x.txt"), "x\n").unwrap();
    std::fs::write(dir.path().join(".env"), format!("SECRET={SECRET}\n")).unwrap();
    dir
}

/// Runs `line` with real bash in `dir`; answers what it printed.
fn run_for_real(dir: &Path, line: &str) -> String {
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", line])
        .current_dir(dir)
        .output()
        .unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn engine(dir: &Path, deny: &str) -> Engine {
    let config = PermissionsConfig {
        allow: Vec::new(),
        ask: Vec::new(),
        deny: vec![deny.to_owned()],
        mode: None,
    };
    Engine::compile(&config, Some(Path::new("/home/alice")), dir).unwrap()
}

fn bash(line: &str) -> ToolCall {
    let split = cox_bash::split(line);
    ToolCall {
        id: CallId::from("c"),
        name: "bash".into(),
        input: json!({ "command": line }),
        risk: cox_bash::line_risk(&split),
        subject: line.into(),
        segments: Some(cox_bash::segments(&split)),
        writes: Vec::new(),
    }
}

#[track_caller]
fn never_unasked(engine: &Engine, line: &str) {
    for mode in MODES {
        let got = engine.decide(
            &bash(line),
            mode,
            ApprovalPolicy::OnRequest,
            SandboxMode::WorkspaceWrite,
            &[],
        );
        assert!(
            !matches!(got, Outcome::Allow { .. }),
            "{mode:?} allowed {}: {}",
            short(line),
            got.reason()
        );
    }
}

fn short(line: &str) -> String {
    if line.len() > 100 {
        format!("{}… ({} bytes)", &line[..100], line.len())
    } else {
        line.to_owned()
    }
}

/// Every file under `src/` with its text.
fn src_state(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir.join("src"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), text)
        })
        .collect();
    files.sort();
    files
}

/// Lines that change `src/` when run, past `Edit(src/**)`.
#[test]
fn writes_into_a_denied_folder_by_any_route_are_never_unasked() {
    let padding = format!("# {}", "p".repeat(16_900));
    let lines = [
        // Write targets given through an option.
        "mv -t src x.txt".to_owned(),
        "mv --target-directory=src x.txt".to_owned(),
        "mv --target-directory src x.txt".to_owned(),
        "mv --target src x.txt".to_owned(),
        "cp --target-directory src x.txt".to_owned(),
        "cp --targ=src x.txt".to_owned(),
        "cp -t src x.txt".to_owned(),
        // A link the line makes, followed by a write.
        "ln -s src s && echo pwned | tee s/new.rs".to_owned(),
        "ln -s src s; echo pwned > s/new.rs".to_owned(),
        "ln src/a.rs h && echo pwned > h".to_owned(),
        "ln -t . src/a.rs && echo pwned >> a.rs".to_owned(),
        "ln -sfn src d3 && echo pwned > d3/c.rs".to_owned(),
        // A read-write redirect with an fd number (a parse error).
        "echo pwned 1<>src/b.rs".to_owned(),
        "exec 3<>src/b.rs; echo pwned >&3".to_owned(),
        // Past the split's size limit.
        format!("echo pwned > src/p.rs {padding}"),
    ];
    for line in &lines {
        let dir = scratch();
        let before = src_state(dir.path());
        let said = run_for_real(dir.path(), line);
        assert_ne!(
            src_state(dir.path()),
            before,
            "the line did not change src/ for real, so it proves nothing: {} ({said})",
            short(line)
        );
        never_unasked(&engine(dir.path(), "Edit(src/**)"), line);
    }
}

/// Lines that print or stat `.env`, past `Read(.env)`.
#[test]
fn reads_of_a_denied_file_through_options_or_padding_are_never_unasked() {
    let padding = format!("# {}", "p".repeat(16_900));
    let lines = [
        ("date -f .env".to_owned(), true),
        ("date --file=.env".to_owned(), true),
        ("date --file .env".to_owned(), true),
        ("date -r .env".to_owned(), false),
        ("date --reference=.env +%s".to_owned(), false),
        ("touch -r .env x.txt".to_owned(), false),
        (format!("cat .env {padding}"), true),
        ("cat 0<>.env".to_owned(), true),
    ];
    for (line, prints) in &lines {
        let dir = scratch();
        let said = run_for_real(dir.path(), line);
        if *prints {
            assert!(
                said.contains(SECRET),
                "the line did not print the secret for real: {} ({said})",
                short(line)
            );
        } else {
            assert!(
                !said.contains("No such file"),
                "the line did not reach .env for real: {} ({said})",
                short(line)
            );
        }
        never_unasked(&engine(dir.path(), "Read(.env)"), line);
    }
    // `date` with no file is still read-only and runs unasked.
    let dir = scratch();
    let got = engine(dir.path(), "Read(.env)").decide(
        &bash("date +%F"),
        PermissionMode::Default,
        ApprovalPolicy::OnRequest,
        SandboxMode::WorkspaceWrite,
        &[],
    );
    assert!(matches!(got, Outcome::Allow { .. }), "{}", got.reason());
}

fn allow_engine(dir: &Path, allow: &str) -> Engine {
    let config = PermissionsConfig {
        allow: vec![allow.to_owned()],
        ask: Vec::new(),
        deny: Vec::new(),
        mode: None,
    };
    Engine::compile(&config, Some(Path::new("/home/alice")), dir).unwrap()
}

#[track_caller]
fn asks_in_default_mode(engine: &Engine, line: &str) {
    let got = engine.decide(
        &bash(line),
        PermissionMode::Default,
        ApprovalPolicy::OnRequest,
        SandboxMode::WorkspaceWrite,
        &[],
    );
    assert!(
        matches!(got, Outcome::Ask { .. }),
        "{}: {}",
        short(line),
        got.reason()
    );
}

/// A scratch git repository with one commit and a change to diff.
fn git_scratch() -> tempfile::TempDir {
    let dir = scratch();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "x"]);
    std::fs::write(dir.path().join("src/a.rs"), "fn b() {}\n").unwrap();
    dir
}

/// Under `Bash(git:*)`, git lines that run a program or write a file of
/// their choosing: each really does (a marker file appears), and none is
/// allowed by the prefix rule.
#[test]
fn a_git_prefix_rule_does_not_cover_git_running_programs_or_writing_files() {
    for (line, marker) in [
        ("git config alias.x '!touch pwned' && git x", "pwned"),
        (
            "git config diff.external 'touch pwned;' && git diff",
            "pwned",
        ),
        ("git log --output=written.txt -1", "written.txt"),
        ("git diff --output written.txt", "written.txt"),
    ] {
        let dir = git_scratch();
        let said = run_for_real(dir.path(), line);
        assert!(
            dir.path().join(marker).exists(),
            "the line did not do it for real: {line} ({said})"
        );
        asks_in_default_mode(&allow_engine(dir.path(), "Bash(git:*)"), line);
    }
    // `--ext-diff` runs the driver a repository's config names.
    let dir = git_scratch();
    std::fs::write(dir.path().join(".gitattributes"), "*.rs diff=evil\n").unwrap();
    run_for_real(dir.path(), "git config diff.evil.command 'touch pwned;'");
    let said = run_for_real(dir.path(), "git diff --ext-diff");
    assert!(dir.path().join("pwned").exists(), "{said}");
    asks_in_default_mode(
        &allow_engine(dir.path(), "Bash(git:*)"),
        "git diff --ext-diff",
    );
    // What git only reads still runs under the rule.
    let got = allow_engine(dir.path(), "Bash(git:*)").decide(
        &bash("git config --get core.pager"),
        PermissionMode::Default,
        ApprovalPolicy::OnRequest,
        SandboxMode::WorkspaceWrite,
        &[],
    );
    assert!(matches!(got, Outcome::Allow { .. }), "{}", got.reason());
}

/// Under `Bash(npm test:*)`, `--prefix` runs another package's test script
/// and `--script-shell` another shell: really so, and never allowed by the
/// prefix rule.
#[test]
fn an_npm_prefix_rule_does_not_cover_another_package_or_shell() {
    let npm_here = Command::new("npm").arg("--version").output().is_ok();
    let dir = scratch();
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(
        other.join("package.json"),
        r#"{"name":"other","version":"1.0.0","scripts":{"test":"touch pwned"}}"#,
    )
    .unwrap();
    let shell = dir.path().join("evil-shell");
    std::fs::write(&shell, "#!/bin/sh\ntouch shell-ran\n").unwrap();
    std::fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        dir.path().join("package.json"),
        r#"{"name":"here","version":"1.0.0","scripts":{"test":"true"}}"#,
    )
    .unwrap();
    let lines = [
        ("npm test --prefix other", "other/pwned"),
        ("npm test --script-shell=./evil-shell", "shell-ran"),
        ("npm test --script-shell ./evil-shell", "shell-ran"),
    ];
    for (line, marker) in lines {
        if npm_here {
            let said = run_for_real(dir.path(), line);
            assert!(
                dir.path().join(marker).exists(),
                "the line did not do it for real: {line} ({said})"
            );
            let _ = std::fs::remove_file(dir.path().join(marker));
        } else {
            eprintln!("npm is not installed: {line} is decided without running it");
        }
        asks_in_default_mode(&allow_engine(dir.path(), "Bash(npm test:*)"), line);
    }
    asks_in_default_mode(
        &allow_engine(dir.path(), "Bash(npm test:*)"),
        "npm test --prefix /",
    );
    let got = allow_engine(dir.path(), "Bash(npm test:*)").decide(
        &bash("npm test"),
        PermissionMode::Default,
        ApprovalPolicy::OnRequest,
        SandboxMode::WorkspaceWrite,
        &[],
    );
    assert!(matches!(got, Outcome::Allow { .. }), "{}", got.reason());
}

/// Auto mode runs commands unasked, but not these, which throw work away:
/// each really deletes or empties something.
#[test]
fn auto_mode_asks_before_lines_that_throw_work_away() {
    for (line, gone) in [
        ("git checkout -- .", "src/a.rs"),
        ("git restore src/a.rs", "src/a.rs"),
        ("truncate -s 0 src/a.rs", "src/a.rs"),
        ("mkdir dst && rsync -a --delete dst/ src/", "src/a.rs"),
        ("find src -name '*.rs' -exec rm {} +", "src/a.rs"),
        (
            "python3 -c 'import shutil; shutil.rmtree(\"src\")'",
            "src/a.rs",
        ),
    ] {
        let dir = git_scratch();
        let before = std::fs::read_to_string(dir.path().join(gone)).unwrap();
        let said = run_for_real(dir.path(), line);
        let after = std::fs::read_to_string(dir.path().join(gone)).unwrap_or_default();
        if line.contains("rsync") && said.contains("not found") {
            eprintln!("rsync is not installed: {line} is decided without running it");
        } else {
            assert_ne!(
                before, after,
                "the line lost nothing for real: {line} ({said})"
            );
        }
        let got = Engine::compile(
            &PermissionsConfig::default(),
            Some(Path::new("/home/alice")),
            dir.path(),
        )
        .unwrap()
        .decide(
            &bash(line),
            PermissionMode::Auto,
            ApprovalPolicy::OnRequest,
            SandboxMode::WorkspaceWrite,
            &[],
        );
        assert!(
            matches!(got, Outcome::Ask { .. }),
            "{line}: {}",
            got.reason()
        );
    }
}
