//! Why a line is opaque: redirects, assignments, declarations, dynamic
//! names, parse errors, and what the permission engine receives.

mod common;

use common::{clear, opaque, opaque_with, texts};
use cox_bash::{Opacity, Split, line_risk, segments, split, split_tree_sitter};
use cox_protocol::types::{Risk, Segments};

#[test]
fn redirects() {
    opaque_with("ls > out.txt", Opacity::Redirect("out.txt".into()), &["ls"]);
    for line in [
        "ls >> o", "ls &> o", "ls &>> o", "ls >| o", "ls 1> o", "ls 2> o", "ls >& o",
    ] {
        assert_eq!(opaque(line), Some(Opacity::Redirect("o".into())), "{line}");
    }
    opaque_with(
        "echo hi > \"$f\"",
        Opacity::Redirect("\"$f\"".into()),
        &["echo hi"],
    );
    clear("ls 2>&1", &["ls"]);
    clear("ls >&2", &["ls"]);
    clear("ls 2>&-", &["ls"]);
    clear("ls > /dev/null 2>&1", &["ls"]);
    clear("ls 2>/dev/null", &["ls"]);
    clear("ls &>/dev/null", &["ls"]);
    clear("cat < in.txt", &["cat"]);
    clear("cat <<< hi", &["cat"]);
    clear("cat <<EOF\nhi\nEOF", &["cat"]);
    opaque_with(
        "cat <<EOF > out\nhi\nEOF",
        Opacity::Redirect("out".into()),
        &["cat"],
    );
    opaque_with("exec 3> log", Opacity::Redirect("log".into()), &["exec"]);
    clear("echo >/dev/null hi", &["echo hi"]);
    opaque_with(
        "{ a; b; } > out",
        Opacity::Redirect("out".into()),
        &["a", "b"],
    );
}

#[test]
fn assignments_and_declarations() {
    opaque_with(
        "PATH=/x git status",
        Opacity::Assignment("PATH".into()),
        &["git status"],
    );
    opaque_with("FOO=1", Opacity::Assignment("FOO".into()), &[]);
    opaque_with("a=1 b=2", Opacity::Assignment("a".into()), &[]);
    for (line, builtin) in [
        ("export A=1", "export"),
        ("declare -x A=1", "declare"),
        ("typeset A", "typeset"),
        ("local a=1", "local"),
        ("readonly A", "readonly"),
        ("unset A", "unset"),
    ] {
        opaque_with(line, Opacity::Export(builtin.into()), &[line]);
    }
    opaque_with(
        "read PATH",
        Opacity::Assignment("PATH".into()),
        &["read PATH"],
    );
    clear("read -r line", &["read -r line"]);
    opaque_with(
        "for PATH in /x; do git status; done",
        Opacity::Assignment("PATH".into()),
        &["git status"],
    );
    clear("for ((i = 0; i < 3; i++)); do echo $i; done", &["echo $i"]);
    opaque_with(
        "printf -v IFS x",
        Opacity::Assignment("IFS".into()),
        &["printf -v IFS x"],
    );
    opaque_with(
        "alias ls='rm -rf'",
        Opacity::Rebinding("alias".into()),
        &["alias ls=rm -rf"],
    );
    opaque_with(
        "hash -p /bin/rm ls",
        Opacity::Rebinding("hash -p".into()),
        &["hash -p /bin/rm ls"],
    );
}

#[test]
fn locale_assignments_are_stripped_and_not_opaque() {
    for var in [
        "LC_ALL",
        "LC_MESSAGES",
        "LANG",
        "LANGUAGE",
        "TZ",
        "NO_COLOR",
    ] {
        let line = format!("{var}=C git status");
        clear(&line, &["git status"]);
        assert_eq!(line_risk(&split(&line)), Risk::ReadOnly, "{line}");
    }
    clear("LANG=C LC_ALL=C   sort  a", &["sort a"]);
    opaque_with(
        "LANG=C FOO=1 ls",
        Opacity::Assignment("FOO".into()),
        &["ls"],
    );
    // Not locale variables, though they look close.
    assert!(opaque("LC_=x ls").is_some());
    assert!(opaque("LANGX=x ls").is_some());
    assert!(opaque("lc_all=x ls").is_some());
}

#[test]
fn dynamic_command_names_are_opaque() {
    opaque_with(
        "$SHELL -c 'rm x'",
        Opacity::DynamicCommand("$SHELL".into()),
        &["$SHELL -c rm x"],
    );
    assert_eq!(
        opaque("/bin/r? -rf x"),
        Some(Opacity::DynamicCommand("/bin/r?".into()))
    );
    assert_eq!(
        opaque("\"$(which rm)\" x"),
        Some(Opacity::DynamicCommand("\"$(which rm)\"".into()))
    );
    assert!(opaque("{rm,-rf,x}").is_some());
}

#[test]
fn parse_errors_are_opaque() {
    for line in [
        "ls &&",
        "echo \"unterminated",
        "if true; then",
        "a | | b",
        "(ls",
        "ls )",
    ] {
        assert_eq!(opaque(line), Some(Opacity::ParseError), "{line:?}");
    }
    // What parsed is still listed for deny rules.
    assert!(texts("rm -rf x; if").contains(&"rm -rf x".to_owned()));
}

#[test]
fn segments_carry_texts_and_the_reason() {
    assert_eq!(
        segments(&split("git status && npm test")),
        Segments {
            commands: vec!["git status".into(), "npm test".into()],
            opaque: None,
            ..Default::default()
        }
    );
    assert_eq!(
        segments(&split("echo hi > out.txt; ls")),
        Segments {
            commands: vec!["echo hi".into(), "ls".into()],
            opaque: Some("an output redirect to out.txt".into()),
            paths: vec![cox_protocol::types::ShellPath {
                path: "out.txt".into(),
                access: cox_protocol::types::PathAccess::Write,
                recursive: false,
                unknown: false,
                outside: false,
            }],
            ..Default::default()
        }
    );
}

#[test]
fn opacity_reads_as_a_phrase() {
    let cases = [
        (Opacity::CommandSubstitution, "a command substitution $(…)"),
        (
            Opacity::Backticks,
            "a command substitution in backticks `…`",
        ),
        (Opacity::ProcessSubstitution, "a process substitution <(…)"),
        (Opacity::Eval, "an eval"),
        (Opacity::ShellString, "a shell string (sh -c '…')"),
        (
            Opacity::Redirect("out.txt".into()),
            "an output redirect to out.txt",
        ),
        (Opacity::Assignment("PATH".into()), "an assignment to PATH"),
        (
            Opacity::Export("export".into()),
            "a variable change with export",
        ),
        (Opacity::ParseError, "a parse error"),
        (Opacity::TooDeep, "nesting too deep to follow"),
    ];
    for (reason, phrase) in cases {
        assert_eq!(reason.to_string(), phrase);
    }
}

#[test]
fn first_reason_wins() {
    assert_eq!(
        opaque("echo $(a) > out"),
        Some(Opacity::CommandSubstitution)
    );
    assert_eq!(
        opaque("FOO=1 eval x"),
        Some(Opacity::Assignment("FOO".into()))
    );
    assert_eq!(
        opaque("ls > o; eval x"),
        Some(Opacity::Redirect("o".into()))
    );
}

#[test]
fn empty_split_is_default() {
    assert_eq!(split(""), Split::default());
}

/// tree-sitter-bash drops a leading `-` before an assignment: `- A=1`
/// parsed as the assignment alone, where bash runs a program named `-`.
#[test]
fn regression_text_left_out_of_the_tree_is_a_parse_error() {
    assert_eq!(opaque("- A=1"), Some(Opacity::ParseError));
    assert_eq!(opaque("- PATH=/x git status"), Some(Opacity::ParseError));
    clear("- git status", &["- git status"]);
    assert_eq!(opaque("ls@"), Some(Opacity::ParseError));
}

#[test]
fn lines_bash_cannot_run_or_too_large_to_parse() {
    assert_eq!(opaque("ls\0rm"), Some(Opacity::ParseError));
    let heredocs = "cat <<A\n".repeat(200);
    assert_eq!(opaque(&heredocs), Some(Opacity::TooLarge));
    let chain = "ls -la && ".repeat(1_600) + "true";
    assert_eq!(split(&chain).commands.len(), 1_601);
    assert_eq!(split_tree_sitter(&chain).commands.len(), 1_601);
}
