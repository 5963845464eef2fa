//! Decisions on the second red-team round's lines, through the real split
//! (the bash tool's own `cox_bash::split`), in every mode where a class
//! broke a promise. Each test is named after its class or deliverable.

use std::path::Path;

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

fn engine(allow: &[&str], ask: &[&str], deny: &[&str]) -> Engine {
    let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect();
    let config = PermissionsConfig {
        allow: own(allow),
        ask: own(ask),
        deny: own(deny),
        mode: None,
    };
    Engine::compile(&config, Some(Path::new("/home/alice")), Path::new("/repo")).unwrap()
}

/// A bash call classified as the bash tool classifies it.
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

fn decide(engine: &Engine, line: &str, mode: PermissionMode) -> Outcome {
    engine.decide(
        &bash(line),
        mode,
        ApprovalPolicy::OnRequest,
        SandboxMode::WorkspaceWrite,
        &[],
    )
}

/// Denied in every mode, plan included.
#[track_caller]
fn denied_everywhere(engine: &Engine, line: &str) {
    for mode in MODES.into_iter().chain([PermissionMode::Plan]) {
        let got = decide(engine, line, mode);
        assert!(
            matches!(got, Outcome::Deny { .. }),
            "{mode:?}: {} for {}",
            got.reason(),
            short(line)
        );
    }
}

fn short(line: &str) -> String {
    if line.len() > 120 {
        format!("{}… ({} bytes)", &line[..120], line.len())
    } else {
        line.to_owned()
    }
}

#[test]
fn class3_lines_past_a_limit_meet_every_deny_rule_they_name() {
    let rm = engine(&[], &[], &["Bash(rm:*)"]);
    let budget = format!("{}eval rm x", "eval :; ".repeat(300));
    let padded = format!("ls # {}\nrm y", "x".repeat(20_000));
    let wrappers = format!("{}rm x", "nohup ".repeat(40));
    let deep = format!("{}rm x{}", "$(".repeat(300), ")".repeat(300));
    let heredocs = format!("{}\nrm x", "cat <<E\nE\n".repeat(150));
    let strings = format!("{}rm x", "eval ".repeat(12));
    for line in [budget, padded, wrappers, deep, heredocs, strings] {
        denied_everywhere(&rm, &line);
    }
}

#[test]
fn class3_ask_rules_apply_past_a_limit_too() {
    let ask = engine(&[], &["Bash(git push:*)"], &[]);
    let line = format!("{}eval git push", "eval :; ".repeat(300));
    let got = decide(&ask, &line, PermissionMode::Auto);
    assert!(matches!(got, Outcome::Ask { .. }), "{}", got.reason());
}

#[test]
fn class3_a_line_past_a_limit_is_never_read_only() {
    let none = engine(&[], &[], &[]);
    let line = format!("ls # {}", "x".repeat(20_000));
    for mode in [PermissionMode::Default, PermissionMode::Plan] {
        let got = decide(&none, &line, mode);
        assert!(!matches!(got, Outcome::Allow { .. }), "{mode:?}");
    }
}

#[test]
fn deliver4_a_deny_rule_named_inside_inline_code_applies() {
    let rm = engine(&[], &[], &["Bash(rm:*)"]);
    for line in [
        r#"python3 -c 'import os; os.system("rm -rf x")'"#,
        "perl -e 'system q(rm -rf x)'",
        "node -e 'require(\"child_process\").execSync(\"rm -rf x\")'",
        "ruby -e '`rm -rf x`'",
        "awk 'BEGIN { system(\"rm -rf x\") }'",
        "git -c alias.x='!rm -rf y' x",
        "vim -c '!rm -rf x' -c q",
        "vim '+!rm -rf x'",
        "tar --to-command='rm x' -xf a.tar",
    ] {
        denied_everywhere(&rm, line);
    }
    // Code that names no denied program is only opaque.
    let got = decide(&rm, "python3 -c 'print(1)'", PermissionMode::Default);
    assert!(matches!(got, Outcome::Ask { .. }), "{}", got.reason());
}

#[test]
fn deliver3_a_dynamic_command_word_asks_in_bypass_and_auto_under_a_shell_deny() {
    let rm = engine(&[], &[], &["Bash(rm:*)"]);
    for line in ["$(echo rm) x", "\"$CMD\" x", "$(printf r)m x"] {
        for mode in [PermissionMode::Auto, PermissionMode::BypassPermissions] {
            let got = decide(&rm, line, mode);
            assert!(
                matches!(got, Outcome::Ask { .. }),
                "{line} {mode:?}: {}",
                got.reason()
            );
        }
    }
    // With no deny rule for the shell, the modes run it as before.
    let other = engine(&[], &[], &["Read(secrets/**)"]);
    let got = decide(&other, "$(echo rm) x", PermissionMode::BypassPermissions);
    assert!(matches!(got, Outcome::Allow { .. }), "{}", got.reason());
}

#[test]
fn class1_and_2_rules_see_the_words_after_redirects() {
    let rm = engine(&[], &[], &["Bash(rm:*)"]);
    for line in [
        "echo | nohup 2>/dev/null rm -rf x",
        "nohup 0</dev/null rm y",
        "nohup <<EOF rm y\nbody\nEOF",
        "nohup 2>&- rm y",
    ] {
        denied_everywhere(&rm, line);
    }
    let none = engine(&[], &[], &[]);
    for mode in [PermissionMode::Default, PermissionMode::Plan] {
        let got = decide(&none, "true && find . 2>/dev/null -delete", mode);
        assert!(!matches!(got, Outcome::Allow { .. }), "{mode:?}");
    }
    let make = engine(&["Bash(make)"], &[], &[]);
    let got = decide(
        &make,
        "make <<EOF -f /tmp/evil.mk\nx\nEOF",
        PermissionMode::Default,
    );
    assert!(matches!(got, Outcome::Ask { .. }), "{}", got.reason());
}

#[test]
fn class4_git_global_options_do_not_hide_the_subcommand() {
    let push = engine(&[], &[], &["Bash(git push:*)"]);
    for line in [
        "git -C . push",
        "git --no-pager push",
        "git -P push",
        "git --git-dir=.git push origin",
        "git -C . push --force",
        "cd x && git --work-tree . --git-dir .git push",
    ] {
        denied_everywhere(&push, line);
    }
    let force = engine(&[], &[], &["Bash(git push --force:*)"]);
    denied_everywhere(&force, "git -C . push --force");
    denied_everywhere(&force, "git --no-pager push origin main --force");
}

#[test]
fn class5_writing_git_config_runs_nothing_unasked_even_in_plan_mode() {
    let none = engine(&[], &[], &[]);
    let line = "git config core.fsmonitor 'CMD; false' --get && git status";
    for mode in [PermissionMode::Default, PermissionMode::Plan] {
        let got = decide(&none, line, mode);
        assert!(
            !matches!(got, Outcome::Allow { .. }),
            "{mode:?}: {}",
            got.reason()
        );
    }
}

#[test]
fn class6_assignments_are_never_allowed_by_a_prefix_rule() {
    let allow = engine(
        &[
            "Bash(git status:*)",
            "Bash(printf:*)",
            "Bash(read:*)",
            "Bash(echo:*)",
            "Bash(:*)",
            "Bash(let:*)",
            "Bash(mapfile:*)",
        ],
        &[],
        &[],
    );
    for line in [
        "printf -v PATH x; git status",
        "printf -vPATH x; git status",
        "read PATH; git status",
        "mapfile PATH; git status",
        "echo $((PATH=0)); git status",
        ": ${PATH:=/tmp}; git status",
        "let PATH=0; git status",
    ] {
        for mode in [PermissionMode::Default, PermissionMode::Plan] {
            let got = decide(&allow, line, mode);
            assert!(
                !matches!(got, Outcome::Allow { .. }),
                "{line} {mode:?}: {}",
                got.reason()
            );
        }
    }
}

#[test]
fn deliver3_resolved_names_meet_deny_rules() {
    let rm = engine(&[], &[], &["Bash(rm:*)"]);
    for line in [
        "$'\\x72m' -rf x",
        "{rm,-rf} x",
        "r$()m -rf x",
        "rm${IFS}-rf${IFS}x",
        "a=rm; $a -rf x",
        "\"${a:-rm}\" -rf x",
        "if t; then a=ls; else a=rm; fi; $a x",
    ] {
        denied_everywhere(&rm, line);
    }
}

#[test]
fn class7_the_engine_judges_paths_of_a_line_it_splits_itself() {
    // Without the tool's resolution (no segments), the engine normalises
    // the paths lexically from its home and working folder.
    let none = engine(&[], &[], &[]);
    let call = |line: &str| ToolCall {
        segments: None,
        ..bash(line)
    };
    for line in [
        "cat ~/.ssh/id_rsa",
        "cat /home/alice/.ssh/../.ssh/id_rsa",
        "cat ../home/alice/.aws/credentials",
        "echo x >> ~/.ssh/authorized_keys",
    ] {
        for mode in MODES {
            let got = none.decide(
                &call(line),
                mode,
                ApprovalPolicy::OnRequest,
                SandboxMode::WorkspaceWrite,
                &[],
            );
            assert!(
                matches!(got, Outcome::Deny { .. }),
                "{line} {mode:?}: {}",
                got.reason()
            );
        }
    }
    let got = none.decide(
        &call("cat /etc/hostname"),
        PermissionMode::Default,
        ApprovalPolicy::OnRequest,
        SandboxMode::WorkspaceWrite,
        &[],
    );
    assert!(matches!(got, Outcome::Ask { .. }), "{}", got.reason());
    let got = none.decide(
        &call("cat src/main.rs"),
        PermissionMode::Default,
        ApprovalPolicy::OnRequest,
        SandboxMode::WorkspaceWrite,
        &[],
    );
    assert!(matches!(got, Outcome::Allow { .. }), "{}", got.reason());
}

/// Lines from the red-team probe of this round, grouped by root cause:
/// bash runs `rm` in each, and `Bash(rm:*)` must hold in bypass mode.
#[test]
fn probe_deny_rules_hold_in_bypass_for_every_root_cause() {
    let rm = engine(&[], &[], &["Bash(rm:*)"]);
    let groups: &[(&str, &[&str])] = &[
        (
            "a string evaluated as arithmetic or a prompt",
            &[
                "d='$'; x=\"a[${d}(rm y)]\"; echo $((x))",
                "d='$'; k=\"a[${d}(rm y)]\"; let k",
                "d='$'; k=\"a[${d}(rm y)]\"; (( k ))",
                "d='$'; k=\"a[${d}(rm y)]\"; [[ $k -eq 0 ]]",
                "x='\\044(rm y)'; echo ${x@P}",
                "PS4='\\044(rm y)'; set -x; :",
            ],
        ),
        (
            "a shell reading text with escapes",
            &[
                "printf '\\162m x' | bash",
                "echo -e '\\x72m x' | sh",
                "printf 'r%sm x' '' | sh",
                "printf '%b' 'r\\x6d x' | sh",
                "echo rm z | xargs -I{} sh -c {}",
                "echo 'rm z' > s.sh; . ./s.sh",
            ],
        ),
        (
            "xargs running a wrapper with no command",
            &[
                "echo rm x | xargs env",
                "xargs env <<< 'rm x'",
                "echo rm x | xargs nice",
                "echo rm x | xargs nohup",
                "echo 5 rm x | xargs timeout",
                "echo rm x | xargs env --",
                "echo rm x | xargs xargs",
            ],
        ),
        (
            "a name rebound on the line",
            &[
                "shopt -s expand_aliases\nalias ls=rm\nls x",
                "hash -p /bin/rm ls; ls z",
                "git config alias.p '!rm x'; git p",
                "git -C . config --add alias.p '!rm x'; git p",
            ],
        ),
        (
            "option spellings",
            &[
                "su -mc 'rm x'",
                "su -pc 'rm x'",
                "script -q /dev/null -c 'rm x'",
                "git difftool -yx rm",
            ],
        ),
        (
            "runners",
            &[
                "setpriv rm x",
                "prlimit rm x",
                "linux32 rm x",
                "setarch x86_64 rm x",
                "logsave /dev/null rm x",
                "capsh -- -c 'rm x'",
                "valgrind -q rm x",
                "gdb --args rm x",
                "fakeroot rm x",
                "docker run img rm -rf /",
                "coreutils --coreutils-prog=rm x",
                "tmux new-session -d 'rm x'",
            ],
        ),
        (
            "git options that run a shell command",
            &[
                "git ls-remote --upload-pack='rm x;' .",
                "git ls-remote --upload-pack 'rm x;' .",
                "git fetch --upload-pack='rm x;' .",
                "git clone -u 'rm x;' . dst",
                "git archive --remote=. --exec='rm x;' HEAD",
                "git push --receive-pack='rm x;' . HEAD:refs/heads/z",
            ],
        ),
        (
            "variables that name a program",
            &[
                "GIT_EXTERNAL_DIFF=rm git diff",
                "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='rm x' git status",
            ],
        ),
    ];
    for (cause, lines) in groups {
        for line in *lines {
            let got = decide(&rm, line, PermissionMode::BypassPermissions);
            assert!(
                !matches!(got, Outcome::Allow { .. }),
                "{cause}: {line:?} was allowed: {}",
                got.reason()
            );
        }
    }
}

/// Lines the probe found rated read-only although they write or change a
/// variable: never allowed unasked, in default or plan mode.
#[test]
fn probe_read_only_ratings_that_wrote() {
    let none = engine(&[], &[], &[]);
    for line in [
        "echo hi | uniq - out",
        "uniq -- - out </dev/null",
        "echo $((\"PATH\"=0)); ls",
        "echo ${a[\"PATH\"=0]}",
        "[[ 1 -eq \"PATH\"=1 ]]",
        "(( \"PATH\"=0 ))",
        "coproc PATH { :; }",
        "coproc IFS { :; }",
        "echo rm x | xargs env",
        "cd sub/evil.git && git status",
        "cd sub/evil.git; git diff",
        "cat </dev/\"tcp\"/127.0.0.1/45679",
        "cat </dev/t\\cp/127.0.0.1/45679",
        "cat <$'/dev/\\x74cp/127.0.0.1/45679'",
    ] {
        for mode in [PermissionMode::Default, PermissionMode::Plan] {
            let got = decide(&none, line, mode);
            assert!(
                !matches!(got, Outcome::Allow { .. }),
                "{line:?} {mode:?}: {}",
                got.reason()
            );
        }
    }
    let cat = engine(&["Bash(cat:*)", "Bash(echo:*)", "Bash(p1:*)"], &[], &[]);
    for line in [
        "cat </dev/\"tcp\"/127.0.0.1/45679",
        "cat </dev/t\\cp/127.0.0.1/45679",
        "echo $((\"PATH\"=0))",
        "echo ${a[\"PATH\"=0]}",
        "p1 $((\"LD_PRELOAD\"=0))",
    ] {
        let got = decide(&cat, line, PermissionMode::Default);
        assert!(
            !matches!(got, Outcome::Allow { .. }),
            "{line:?}: {}",
            got.reason()
        );
    }
}

#[test]
fn probe_three_runners_and_options_that_run_a_program() {
    let rm = engine(&[], &[], &["Bash(rm:*)"]);
    for line in [
        "git grep -Orm fn",
        "git grep --open-files-in-pager=rm fn",
        "ssh-agent rm x",
        "perf stat rm x",
        "gdb -batch -ex '!rm x'",
        "gdb -batch -ex 'shell rm x'",
        "zip -T -TT 'rm x' y.zip main.rs",
        "make --eval='all:;rm x'",
        "make -f /dev/stdin <<< $'all:\\n\\trm x'",
        "ssh -o ProxyCommand='rm x' host",
        "ssh -oProxyCommand='rm x' host",
        "scp -S rm x h:y",
        "sort -S 64k --compress-program=rm big.txt",
        "eatmydata rm x",
        "sshpass -p pw rm x",
        "hyperfine 'rm x'",
        "expect -c 'spawn rm x'",
        "emacs --batch --eval '(shell-command \"rm x\")'",
        "rsync -e rm a b:c",
        "rsync --rsync-path=rm a b:c",
        "man -P rm ls",
    ] {
        let got = decide(&rm, line, PermissionMode::BypassPermissions);
        assert!(
            !matches!(got, Outcome::Allow { .. }),
            "{line:?}: {}",
            got.reason()
        );
    }
    for line in [
        "cp /bin/rm ./d && ./d v1",
        "ln -sf /bin/rm d2; ./d2 v2",
        "printf '#!/bin/sh\\nrm v3\\n' > s; chmod +x s; ./s",
    ] {
        let got = decide(&rm, line, PermissionMode::BypassPermissions);
        assert!(
            !matches!(got, Outcome::Allow { .. }),
            "{line:?}: {}",
            got.reason()
        );
    }
}

#[test]
fn adding_a_deny_rule_never_turns_a_deny_into_an_ask() {
    // Plan mode denies a line that writes; a deny rule whose folder the
    // line walks (or a path it cannot resolve) must not turn that into an
    // ask: the "cannot be checked" guard only ever narrows an allow.
    for line in ["grep -r x . && rm y", "cat \"$f\" && rm y", "grep -r x ."] {
        for mode in [
            PermissionMode::Plan,
            PermissionMode::Default,
            PermissionMode::BypassPermissions,
        ] {
            for policy in [ApprovalPolicy::OnRequest, ApprovalPolicy::Never] {
                let before = engine(&[], &[], &[]);
                let after = engine(&[], &[], &["Read(secrets/**)"]);
                let call = bash(line);
                let a = before.decide(&call, mode, policy, SandboxMode::WorkspaceWrite, &[]);
                let b = after.decide(&call, mode, policy, SandboxMode::WorkspaceWrite, &[]);
                if matches!(a, Outcome::Deny { .. }) {
                    assert!(
                        matches!(b, Outcome::Deny { .. }),
                        "{line} {mode:?}: {a:?} then {b:?}"
                    );
                }
                if matches!(b, Outcome::Allow { .. }) {
                    assert!(
                        matches!(a, Outcome::Allow { .. }),
                        "{line} {mode:?}: {a:?} then {b:?}"
                    );
                }
            }
        }
    }
}
