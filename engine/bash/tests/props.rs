//! Properties: a line built from known commands and separators splits back
//! into those commands; wrappers never hide a command; the split never
//! panics and never lists an empty command, on any input.

use cox_bash::{line_risk, segments, split, split_tree_sitter};
use proptest::prelude::*;

/// A simple command from a small alphabet: known command words and safe
/// literal arguments, written with single spaces.
fn simple_command() -> impl Strategy<Value = Vec<&'static str>> {
    let name = prop::sample::select(vec![
        "ls", "cat", "echo", "grep", "git", "cargo", "rm", "mkdir", "head", "wc", "cd", "pip",
        "make", "touch",
    ]);
    let arg = prop::sample::select(vec![
        "x", "-l", "src", "a.txt", "--flag", "42", "foo/bar", "-rf", "status", "'q s'", "\"d q\"",
        "a=b", "-n", "%",
    ]);
    (name, prop::collection::vec(arg, 0..4)).prop_map(|(name, args)| {
        let mut words = vec![name];
        words.extend(args);
        words
    })
}

/// The text a command of [`simple_command`] words is listed as: quotes
/// removed from its (plain literal) words.
fn text_of(words: &[&str]) -> String {
    let unquoted: Vec<String> = words.iter().map(|w| w.replace(['\'', '"'], "")).collect();
    unquoted.join(" ")
}

fn separator() -> impl Strategy<Value = String> {
    let op = prop::sample::select(vec![";", "&&", "||", "|", "&", "\n", "|&"]);
    let pad = prop::sample::select(vec!["", " ", "  ", "\t"]);
    (pad.clone(), op, pad).prop_map(|(a, op, b)| format!("{a}{op}{b}"))
}

/// Wrappers that are stripped without a trace.
fn wrapper() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "nohup",
        "timeout 5",
        "timeout -s KILL 10s",
        "nice",
        "nice -n 3",
        "time",
        "time -p",
        "stdbuf -oL",
        "command",
        "builtin",
        "noglob",
        "env",
        "env LANG=C",
        "xargs",
        "exec",
    ])
}

/// Strings rich in the characters and words that steer the walk.
fn shellish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            "$(",
            ")",
            "`",
            "'",
            "\"",
            "\\",
            ";",
            "&&",
            "||",
            "|",
            "&",
            "<(",
            ">(",
            ">",
            ">>",
            "2>&1",
            "<<EOF\n",
            "EOF\n",
            "<<-'X'\n",
            "X\n",
            "{",
            "}",
            "(",
            "((",
            "))",
            "[[",
            "]]",
            "sh -c ",
            "bash -lc ",
            "eval ",
            "nohup ",
            "timeout 5 ",
            "xargs -0 ",
            "sudo ",
            "env ",
            "find . -exec ",
            "\\;",
            "for i in a; do ",
            "done",
            "if ",
            "then ",
            "fi",
            "case x in ",
            "a) ",
            ";;",
            "esac",
            "=",
            "FOO=1 ",
            "LANG=C ",
            "export ",
            "\0",
            " ",
            "\n",
            "\t",
            "$",
            "${",
            "$'",
            "#",
            "*",
            "?",
            "~",
            "!",
            "function f ",
            "trap ",
        ])
        .prop_map(str::to_owned),
        "[a-z]{1,4}",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..48).prop_map(|pieces| pieces.concat())
}

/// Lines near the edge of what the fast path for plain lines accepts.
fn plainish() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "ls",
        "git",
        "status",
        "-n",
        "20",
        "--flag=x",
        "a.b",
        "~/x",
        "%1",
        "^a",
        "@b",
        "+c",
        ":d",
        ",e",
        "''",
        "'a  b'",
        "\"c  d\"",
        "x'y'z\"w\"",
        "-",
        "--",
        "0",
        "time",
        "nohup",
        "timeout",
        "5",
        "sh",
        "-c",
        "'rm x'",
        "eval",
        "xargs",
        "-0",
        "rm",
        "-rf",
        "sudo",
        "find",
        "-exec",
        "\\;",
        "env",
        "A=1",
        "LANG=C",
        "if",
        "then",
        "fi",
        "in",
        "done",
        "export",
        "=",
        "a=b",
        "{",
        "}",
        "!",
        "#",
        "$x",
        "*",
        "\"$y\"",
        "'",
        "\"",
        "command",
        "-v",
        "read",
        "PATH",
        " ",
        " ",
        " ",
        "  ",
        "\t",
        ";",
        "&&",
        "||",
        "|",
        "&",
        "\n",
        " ; ",
        " && ",
        " | ",
        "|&",
        ";;",
        "\\\n",
        "é",
        "2>&1",
        ">/dev/null",
    ]);
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

/// What every split must satisfy, whatever the input.
fn check_invariants(line: &str) {
    let got = split(line);
    assert_eq!(
        got,
        split_tree_sitter(line),
        "the fast path disagrees on {line:?}"
    );
    for command in &got.commands {
        assert!(!command.text.is_empty(), "empty command text from {line:?}");
        assert!(!command.words.is_empty(), "no words for {:?}", command.text);
        assert!(line_risk(&got) >= command.risk);
    }
    // An opaque line is at least as risky as its first reason makes it (a
    // reason that may hide a command: Exec; a redirect: Write).
    if let Some(reason) = &got.opaque {
        let floor = reason.floor();
        assert!(line_risk(&got) >= floor, "{line:?}: {reason:?}");
        assert!(got.floor >= floor, "{line:?}: {reason:?}");
    }
    let segs = segments(&got);
    assert_eq!(segs.commands.len(), got.commands.len());
    assert_eq!(segs.opaque.is_some(), got.opaque.is_some());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn joined_commands_split_back(
        first in simple_command(),
        rest in prop::collection::vec((separator(), simple_command()), 0..8),
    ) {
        let mut line = first.join(" ");
        let mut expected = vec![text_of(&first)];
        for (sep, command) in &rest {
            line.push_str(sep);
            line.push_str(&command.join(" "));
            expected.push(text_of(command));
        }
        let got = split(&line);
        prop_assert_eq!(got.opaque, None, "{:?}", line);
        let texts: Vec<String> = got.commands.iter().map(|c| c.text.clone()).collect();
        prop_assert_eq!(texts, expected, "{:?}", line);
    }

    #[test]
    fn wrappers_never_hide_a_command(
        locale in prop::sample::select(vec!["", "LC_ALL=C", "LANG=C TZ=UTC"]),
        wrappers in prop::collection::vec(wrapper(), 0..5),
        command in simple_command(),
    ) {
        // A locale assignment only counts before the first word.
        let mut line = format!("{locale} {}", wrappers.join(" "));
        line.push(' ');
        line.push_str(&command.join(" "));
        let got = split(&line);
        prop_assert_eq!(got.opaque, None, "{:?}", line);
        let texts: Vec<String> = got.commands.iter().map(|c| c.text.clone()).collect();
        prop_assert_eq!(texts, vec![text_of(&command)], "{:?}", line);
    }

    #[test]
    fn an_assignment_never_hides_a_command(command in simple_command()) {
        let line = format!("FOO=1 {}", command.join(" "));
        let got = split(&line);
        prop_assert!(got.opaque.is_some());
        let texts: Vec<String> = got.commands.iter().map(|c| c.text.clone()).collect();
        prop_assert_eq!(texts, vec![text_of(&command)]);
    }

    #[test]
    fn fast_path_agrees_with_tree_sitter(line in plainish()) {
        prop_assert_eq!(split(&line), split_tree_sitter(&line), "{:?}", line);
    }

    #[test]
    fn never_panics_on_any_string(line in any::<String>()) {
        check_invariants(&line);
    }

    #[test]
    fn never_panics_on_shell_metacharacters(line in shellish()) {
        check_invariants(&line);
    }
}

#[test]
fn long_and_odd_lines() {
    let long = "ls -la && ".repeat(1_600) + "true";
    let got = split(&long);
    assert_eq!(got.commands.len(), 1_601);
    assert_eq!(got.opaque, None);
    // Past the size cap: one command, the whole line, opaque.
    let longer = "ls -la && ".repeat(10_000) + "true";
    let got = split(&longer);
    assert_eq!(got.commands.len(), 1);
    assert_eq!(got.opaque, Some(cox_bash::Opacity::TooLarge));
    check_invariants(&"\0".repeat(100_000));
    check_invariants(&"$(".repeat(50_000));
    check_invariants(&"'".repeat(100_001));
    check_invariants(&"a\u{0}b; c\u{7f}d; é日本 | 🦀".repeat(3_000));
    check_invariants(&"eval ".repeat(20_000));
    check_invariants(&"sh -c \"".repeat(10_000));
}
