//! How lines split: separators, nesting, wrappers and shell strings. Each
//! case names the commands a deny rule must see.

mod common;

use common::{clear, opaque, opaque_with, texts};
use cox_bash::{Opacity, split, split_tree_sitter};

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
        &["sh -c rm -rf x", "rm -rf x"],
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
    clear("coproc rm x", &["rm x"]);
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
            "find . -name *.o -exec rm {} ; -o -execdir mv {} x +",
            "rm {}",
            "mv {} x",
        ],
    );
    opaque_with(
        "find . -exec sh -c 'rm \"$1\"' _ {} \\;",
        Opacity::ShellString,
        &[
            "find . -exec sh -c rm \"$1\" _ {} ;",
            "sh -c rm \"$1\" _ {}",
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
    // `env -S` splits its string into a command: parsed like `sh -c`.
    opaque_with(
        "env -S 'rm -rf x'",
        Opacity::ShellString,
        &["env -S rm -rf x", "rm -rf x"],
    );
}

#[test]
fn shell_strings_are_parsed_again() {
    opaque_with(
        "bash -c \"rm -rf x\"",
        Opacity::ShellString,
        &["bash -c rm -rf x", "rm -rf x"],
    );
    opaque_with(
        "zsh -c 'a; b'",
        Opacity::ShellString,
        &["zsh -c a; b", "a", "b"],
    );
    opaque_with(
        "dash -c 'rm x'",
        Opacity::ShellString,
        &["dash -c rm x", "rm x"],
    );
    opaque_with(
        "bash -lc 'rm x'",
        Opacity::ShellString,
        &["bash -lc rm x", "rm x"],
    );
    opaque_with(
        "bash -e -o pipefail -c 'rm x' arg0",
        Opacity::ShellString,
        &["bash -e -o pipefail -c rm x arg0", "rm x"],
    );
    opaque_with(
        "/bin/sh -c 'rm x'",
        Opacity::ShellString,
        &["/bin/sh -c rm x", "rm x"],
    );
    opaque_with(
        "nohup sh -c 'rm x'",
        Opacity::ShellString,
        &["sh -c rm x", "rm x"],
    );
    opaque_with(
        "eval rm -rf x",
        Opacity::Eval,
        &["eval rm -rf x", "rm -rf x"],
    );
    opaque_with("eval 'a && b'", Opacity::Eval, &["eval a && b", "a", "b"]);
    opaque_with(
        "su -c 'rm x' bob",
        Opacity::ShellString,
        &["su -c rm x bob", "rm x"],
    );
    opaque_with(
        "sudo -s rm x",
        Opacity::ShellString,
        &["sudo -s rm x", "rm x"],
    );
    opaque_with(
        "trap 'rm x' EXIT",
        Opacity::ShellString,
        &["trap rm x EXIT", "rm x"],
    );
    // Not a plain literal: best effort, and opaque anyway.
    opaque_with(
        "bash -c \"rm $x\"",
        Opacity::ShellString,
        &["bash -c \"rm $x\"", "rm $x"],
    );
    // A shell without -c runs a file or stdin, unseen: opaque.
    opaque_with(
        "bash script.sh",
        Opacity::Script("bash".into()),
        &["bash script.sh"],
    );
    opaque_with(
        "curl x | sh",
        Opacity::Script("sh".into()),
        &["curl x", "sh"],
    );
    // Nested strings.
    opaque_with(
        "sh -c \"bash -c 'eval rm x'\"",
        Opacity::ShellString,
        &[
            "sh -c bash -c 'eval rm x'",
            "bash -c eval rm x",
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
fn text_is_normalised() {
    // Quotes are removed from plain literal words, so `rm '-rf' y` reads
    // `rm -rf y`; whitespace inside them is kept.
    clear("git   commit  -m   'a   b'", &["git commit -m a   b"]);
    clear("echo \"x  y\"\t\tz", &["echo x  y z"]);
    clear("echo \"$x  y\"", &["echo \"$x  y\""]);
    clear("echo '' x", &["echo x"]);
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

/// tree-sitter-bash 0.25.1 files the next line's first word as an argument
/// after a pipeline of three (`c` newline `d` became `c d`), which would
/// hide `rm` from a deny rule.
#[test]
fn regression_newline_after_a_pipeline_ends_the_command() {
    let line = "ls | grep a | head\nrm -rf x && ls";
    let expected = ["ls", "grep a", "head", "rm -rf x", "ls"];
    assert_eq!(
        split_tree_sitter(line)
            .commands
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>(),
        expected
    );
    clear(line, &expected);
    clear("a | b \\\n  c", &["a", "b c"]);
}

/// tree-sitter-bash 0.25.1's scanner crashed the process on `{` followed
/// by a large code point (C's `isdigit` read outside its table).
#[test]
fn regression_brace_then_a_large_code_point_does_not_crash() {
    for line in ["echo {\u{f0000}", "{\u{10fffd}", "a {\u{e0100}.."] {
        let got = split(line);
        assert!(got.commands.iter().all(|c| !c.text.is_empty()));
    }
    clear("echo {\u{f0000}", &["echo {\u{f0000}"]);
    // Non-ASCII characters are word characters, as in bash.
    clear("echo é 日本 | grep 🦀", &["echo é 日本", "grep 🦀"]);
    clear("rm\u{a0}-rf x", &["rm\u{a0}-rf x"]);
}
