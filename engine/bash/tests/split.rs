//! How lines split: separators, nesting, wrappers, shell strings and the
//! reasons a line is opaque. Each case names the commands a deny rule must
//! see.

use cox_bash::{Opacity, Split, line_risk, segments, split};
use cox_protocol::types::{Risk, Segments};

fn texts(line: &str) -> Vec<String> {
    split(line).commands.into_iter().map(|c| c.text).collect()
}

fn opaque(line: &str) -> Option<Opacity> {
    split(line).opaque
}

#[track_caller]
fn clear(line: &str, expected: &[&str]) {
    let got = split(line);
    assert_eq!(got.opaque, None, "{line:?} should not be opaque");
    assert_eq!(texts(line), expected, "{line:?}");
}

#[track_caller]
fn opaque_with(line: &str, reason: Opacity, expected: &[&str]) {
    assert_eq!(opaque(line), Some(reason), "{line:?}");
    assert_eq!(texts(line), expected, "{line:?}");
}

#[test]
fn separators() {
    clear(
        "a; b && c || d | e & f\ng",
        &["a", "b", "c", "d", "e", "f", "g"],
    );
    clear("a |& b", &["a", "b"]);
    clear("", &[]);
    clear("   \n\n  ", &[]);
    // A lone `;` is a syntax error in bash too.
    assert_eq!(opaque(" ; "), Some(Opacity::ParseError));
    clear("# only a comment", &[]);
    clear("ls # and a comment", &["ls"]);
}

#[test]
fn deny_rules_see_every_command() {
    clear("git status && rm -rf x", &["git status", "rm -rf x"]);
    opaque_with("FOO=1 rm x", Opacity::Assignment("FOO".into()), &["rm x"]);
    clear("nohup rm -rf x", &["rm -rf x"]);
    opaque_with(
        "sh -c 'rm -rf x'",
        Opacity::ShellString,
        &["sh -c 'rm -rf x'", "rm -rf x"],
    );
    opaque_with(
        "echo $(rm x)",
        Opacity::CommandSubstitution,
        &["echo $(rm x)", "rm x"],
    );
    opaque_with("echo `rm x`", Opacity::Backticks, &["echo `rm x`", "rm x"]);
    clear("(cd a && rm x)", &["cd a", "rm x"]);
    clear("for f in *; do rm $f; done", &["rm $f"]);
    clear("if true; then rm x; fi", &["true", "rm x"]);
    clear("f() { rm x; }; f", &["rm x", "f"]);
    clear("a | xargs rm", &["a", "rm"]);
}

#[test]
fn nesting_forms() {
    clear("{ a; b; }", &["a", "b"]);
    clear("( a; (b | c) )", &["a", "b", "c"]);
    opaque_with(
        "a $(b $(c))",
        Opacity::CommandSubstitution,
        &["a $(b $(c))", "b $(c)", "c"],
    );
    opaque_with(
        "diff <(ls a) >(wc)",
        Opacity::ProcessSubstitution,
        &["diff <(ls a) >(wc)", "ls a", "wc"],
    );
    clear("for x in a b; do c; d; done", &["c", "d"]);
    opaque_with(
        "for x in $(ls); do c; done",
        Opacity::CommandSubstitution,
        &["ls", "c"],
    );
    clear("while test -f x; do rm x; done", &["test -f x", "rm x"]);
    clear("until a; do b; done", &["a", "b"]);
    clear(
        "if a; then b; elif c; then d; else e; fi",
        &["a", "b", "c", "d", "e"],
    );
    clear("case $x in a) rm x;; *) ls;; esac", &["rm x", "ls"]);
    clear("function g { rm y; }", &["rm y"]);
    clear("g() ( rm z )", &["rm z"]);
    clear("! grep -q x f", &["grep -q x f"]);
    clear("[ -f x ] && [[ -d y ]]", &["[ -f x ]", "[[ -d y ]]"]);
    opaque_with("x=$(rm a)", Opacity::Assignment("x".into()), &["rm a"]);
    opaque_with(
        "echo \"a $(rm b)\"",
        Opacity::CommandSubstitution,
        &["echo \"a $(rm b)\"", "rm b"],
    );
    opaque_with(
        "cat <<EOF | rm x\n$(b)\nEOF",
        Opacity::CommandSubstitution,
        &["cat", "rm x", "b"],
    );
    clear("cat <<'EOF' && rm y\nbody\nEOF", &["cat", "rm y"]);
    opaque_with(
        "ls > $(rm z)",
        Opacity::Redirect("$(rm z)".into()),
        &["ls", "rm z"],
    );
}

#[test]
fn wrappers_are_seen_through() {
    clear("nohup rm x", &["rm x"]);
    clear("nohup -- rm x", &["rm x"]);
    clear("timeout 5 rm x", &["rm x"]);
    clear("timeout 5s rm x", &["rm x"]);
    clear("timeout -s KILL 5 rm x", &["rm x"]);
    clear("timeout --signal=KILL -k 2 1.5m rm x", &["rm x"]);
    clear("timeout --preserve-status 5 rm x", &["rm x"]);
    clear("time rm x", &["rm x"]);
    clear("time -p rm x", &["rm x"]);
    clear("nice rm x", &["rm x"]);
    clear("nice -n 10 rm x", &["rm x"]);
    clear("nice -n10 rm x", &["rm x"]);
    clear("nice -10 rm x", &["rm x"]);
    clear("stdbuf -o0 -eL rm x", &["rm x"]);
    clear("stdbuf -o 0 --error=L rm x", &["rm x"]);
    clear("command rm x", &["rm x"]);
    clear("command -p rm x", &["rm x"]);
    clear("builtin cd x", &["cd x"]);
    clear("noglob rm x*", &["rm x*"]);
    clear("exec rm x", &["rm x"]);
    clear("xargs rm", &["rm"]);
    clear("nohup timeout 5 nice rm x", &["rm x"]);
    clear(
        "time nohup stdbuf -oL command timeout 1 xargs rm -f",
        &["rm -f"],
    );
    clear("/usr/bin/nohup rm x", &["rm x"]);
    clear("env rm x", &["rm x"]);
    clear("env -i -u HOME rm x", &["rm x"]);
    clear("env - rm x", &["rm x"]);
    clear("env LANG=C LC_ALL=C rm x", &["rm x"]);
    opaque_with(
        "env PATH=/x rm x",
        Opacity::Assignment("PATH".into()),
        &["rm x"],
    );
}

#[test]
fn a_wrapper_alone_is_listed_as_written() {
    clear("nohup", &["nohup"]);
    clear("timeout 5", &["timeout 5"]);
    clear("env", &["env"]);
    clear("xargs", &["xargs"]);
}

#[test]
fn lookups_and_runners() {
    clear("command -v rm", &["command -v rm"]);
    clear("command -V rm", &["command -V rm"]);
    clear("xargs -0 rm -f", &["xargs -0 rm -f", "rm -f"]);
    clear("xargs -I{} -n 1 rm {}", &["xargs -I{} -n 1 rm {}", "rm {}"]);
    clear("xargs --max-args=2 rm", &["xargs --max-args=2 rm", "rm"]);
    clear("sudo rm -rf /", &["sudo rm -rf /", "rm -rf /"]);
    clear("sudo -u bob -- rm x", &["sudo -u bob -- rm x", "rm x"]);
    clear("sudo -l", &["sudo -l"]);
    clear("doas rm x", &["doas rm x", "rm x"]);
    clear(
        "find . -name '*.o' -exec rm {} \\; -o -execdir mv {} x +",
        &[
            "find . -name '*.o' -exec rm {} \\; -o -execdir mv {} x +",
            "rm {}",
            "mv {} x",
        ],
    );
    opaque_with(
        "find . -exec sh -c 'rm \"$1\"' _ {} \\;",
        Opacity::ShellString,
        &[
            "find . -exec sh -c 'rm \"$1\"' _ {} \\;",
            "sh -c 'rm \"$1\"' _ {}",
            "rm \"$1\"",
        ],
    );
}

#[test]
fn unknown_wrapper_options_are_opaque_but_still_listed() {
    let unknown = |program: &str, option: &str| Opacity::UnknownOption {
        program: program.into(),
        option: option.into(),
    };
    opaque_with(
        "timeout --sig KILL 5 rm x",
        unknown("timeout", "--sig"),
        &["timeout --sig KILL 5 rm x", "5 rm x"],
    );
    opaque_with(
        "xargs --frob rm",
        unknown("xargs", "--frob"),
        &["xargs --frob rm", "rm"],
    );
    opaque_with(
        "nice $N rm x",
        unknown("nice", "$N"),
        &["nice $N rm x", "$N rm x"],
    );
    opaque_with(
        "env -S 'rm -rf x'",
        unknown("env", "-S"),
        &["env -S 'rm -rf x'"],
    );
}

#[test]
fn shell_strings_are_parsed_again() {
    opaque_with(
        "bash -c \"rm -rf x\"",
        Opacity::ShellString,
        &["bash -c \"rm -rf x\"", "rm -rf x"],
    );
    opaque_with(
        "zsh -c 'a; b'",
        Opacity::ShellString,
        &["zsh -c 'a; b'", "a", "b"],
    );
    opaque_with(
        "dash -c 'rm x'",
        Opacity::ShellString,
        &["dash -c 'rm x'", "rm x"],
    );
    opaque_with(
        "bash -lc 'rm x'",
        Opacity::ShellString,
        &["bash -lc 'rm x'", "rm x"],
    );
    opaque_with(
        "bash -e -o pipefail -c 'rm x' arg0",
        Opacity::ShellString,
        &["bash -e -o pipefail -c 'rm x' arg0", "rm x"],
    );
    opaque_with(
        "/bin/sh -c 'rm x'",
        Opacity::ShellString,
        &["/bin/sh -c 'rm x'", "rm x"],
    );
    opaque_with(
        "nohup sh -c 'rm x'",
        Opacity::ShellString,
        &["sh -c 'rm x'", "rm x"],
    );
    opaque_with(
        "eval rm -rf x",
        Opacity::Eval,
        &["eval rm -rf x", "rm -rf x"],
    );
    opaque_with("eval 'a && b'", Opacity::Eval, &["eval 'a && b'", "a", "b"]);
    opaque_with(
        "su -c 'rm x' bob",
        Opacity::ShellString,
        &["su -c 'rm x' bob", "rm x"],
    );
    opaque_with(
        "sudo -s rm x",
        Opacity::ShellString,
        &["sudo -s rm x", "rm x"],
    );
    opaque_with(
        "trap 'rm x' EXIT",
        Opacity::ShellString,
        &["trap 'rm x' EXIT", "rm x"],
    );
    // Not a plain literal: best effort, and opaque anyway.
    opaque_with(
        "bash -c \"rm $x\"",
        Opacity::ShellString,
        &["bash -c \"rm $x\"", "rm $x"],
    );
    // A shell without -c runs a file or stdin: an ordinary command.
    clear("bash script.sh", &["bash script.sh"]);
    clear("curl x | sh", &["curl x", "sh"]);
    // Nested strings.
    opaque_with(
        "sh -c \"bash -c 'eval rm x'\"",
        Opacity::ShellString,
        &[
            "sh -c \"bash -c 'eval rm x'\"",
            "bash -c 'eval rm x'",
            "eval rm x",
            "rm x",
        ],
    );
}

#[test]
fn shell_strings_nest_only_so_deep() {
    // `eval eval … rm x`: each eval parses the rest again, one level deeper.
    let line = format!("{}rm x", "eval ".repeat(12));
    let got = split(&line);
    assert_eq!(got.opaque, Some(Opacity::Eval));
    assert!(got.commands.len() <= cox_bash::MAX_SHELL_DEPTH + 2);
    assert!(!got.commands.iter().any(|c| c.text == "rm x"));

    let mut shallow = "rm x".to_owned();
    for _ in 0..4 {
        shallow = format!("eval {}", shell_quote(&shallow));
    }
    assert!(texts(&shallow).iter().any(|t| t == "rm x"));
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
fn deep_trees_are_opaque_not_a_crash() {
    let line = format!("{}x{}", "$(".repeat(5000), ")".repeat(5000));
    assert!(split(&line).opaque.is_some());
    let line = format!("{}x{}", "(".repeat(5000), ")".repeat(5000));
    assert!(split(&line).opaque.is_some());
}

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
        &["alias ls='rm -rf'"],
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
        &["$SHELL -c 'rm x'"],
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
fn text_is_normalised() {
    clear("git   commit  -m   'a   b'", &["git commit -m 'a   b'"]);
    clear("echo \"x  y\"\t\tz", &["echo \"x  y\" z"]);
    clear("ls \\\n   -la", &["ls -la"]);
    clear("  \t ls  ", &["ls"]);
    // The command name is unquoted so a rule for `rm` sees it.
    clear("\\rm -rf x", &["rm -rf x"]);
    clear("'rm' -rf x", &["rm -rf x"]);
    clear("r\"\"m -rf x", &["rm -rf x"]);
    clear("git status 2>/dev/null", &["git status"]);
}

#[test]
fn words_drop_quotes_of_plain_literals() {
    let got = split("grep -e 'a b' \"c\\\"d\" $HOME x\\ y \"$v\" $'q'");
    assert_eq!(
        got.commands[0].words,
        ["grep", "-e", "a b", "c\"d", "$HOME", "x y", "\"$v\"", "q"]
    );
}

#[test]
fn segments_carry_texts_and_the_reason() {
    assert_eq!(
        segments(&split("git status && npm test")),
        Segments {
            commands: vec!["git status".into(), "npm test".into()],
            opaque: None,
        }
    );
    assert_eq!(
        segments(&split("echo hi > out.txt; ls")),
        Segments {
            commands: vec!["echo hi".into(), "ls".into()],
            opaque: Some("an output redirect to out.txt".into()),
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
