//! Regression tests for the second red-team round: seven classes of lines
//! whose commands, words or risk the split got wrong. Each test is named
//! after its class; the property tests generate the class's lines.

mod common;

use common::texts;
use cox_bash::{Opacity, line_risk, split};
use cox_protocol::types::Risk;
use proptest::prelude::*;

/// The line lists `command` among its commands.
#[track_caller]
fn lists(line: &str, command: &str) {
    let got = texts(line);
    assert!(
        got.iter().any(|c| c == command),
        "{line:?} should list {command:?}, got {got:?}"
    );
}

#[test]
fn class1_a_redirect_in_the_middle_keeps_the_words_after_it() {
    lists("echo | nohup 2>/dev/null rm -rf x", "rm -rf x");
    lists("true && find . 2>/dev/null -delete", "find . -delete");
    assert_eq!(
        line_risk(&split("true && find . 2>/dev/null -delete")),
        Risk::Destructive
    );
    lists("a | b | nohup >/dev/null rm y", "rm y");
    lists("a; b && c || nohup 2>&1 rm y z", "rm y z");
    lists("nohup >/dev/null 2>&1 rm y z", "rm y z");
    lists("x=1 nohup 2>/dev/null rm y >/dev/null z", "rm y z");
    lists("echo $(nohup 2>/dev/null rm q)", "rm q");
    lists("(nohup 2>/dev/null rm q)", "rm q");
    lists("sh -c 'echo | nohup 2>/dev/null rm q'", "rm q");
    assert_eq!(texts("rm 2>/dev/null -rf x"), ["rm -rf x"]);
    assert_eq!(texts("git 2>/dev/null push --force"), ["git push --force"]);
}

#[test]
fn class1_words_after_a_redirect_of_a_compound_command_are_a_parse_error() {
    let got = split("a && (b) >/dev/null rm c");
    assert_eq!(got.opaque, Some(Opacity::ParseError));
    let listed: Vec<&str> = got.commands.iter().map(|c| c.text.as_str()).collect();
    assert!(listed.contains(&"rm c"), "{listed:?}");
}

#[test]
fn class2_descriptors_closes_and_heredocs_before_the_words() {
    assert_eq!(texts("nohup 0</dev/null rm y"), ["rm y"]);
    assert_eq!(texts("nohup 3<&0 rm y"), ["rm y"]);
    assert_eq!(texts("nohup 2>&- rm y"), ["rm y"]);
    assert_eq!(texts("nohup <&- rm y"), ["rm y"]);
    assert_eq!(texts("rm y 2>&-"), ["rm y"]);
    assert_eq!(texts("nohup 2>&0 rm y"), ["rm y"]);
    assert_eq!(texts("nohup <<<x rm y"), ["rm y"]);
    assert_eq!(texts("nohup <<EOF rm y\nbody\nEOF"), ["rm y"]);
    assert_eq!(texts("nohup <<-EOF rm y\n\tbody\n\tEOF"), ["rm y"]);
    assert_eq!(texts("nohup <<'EOF' rm y\nbody\nEOF"), ["rm y"]);
    assert_eq!(
        texts("make <<EOF -f /tmp/evil.mk\nx\nEOF"),
        ["make -f /tmp/evil.mk"]
    );
    // A digit string with a blank before the redirect is a word.
    assert_eq!(texts("echo 0 </dev/null"), ["echo 0"]);
    assert_eq!(texts("echo a0</dev/null"), ["echo a0"]);
}

#[test]
fn class2_a_named_descriptor_assigns_its_variable() {
    let got = split("nohup {fd}>/dev/null rm y");
    assert_eq!(got.opaque, Some(Opacity::Assignment("fd".into())));
    assert_eq!(got.commands[0].text, "rm y");
    // tree-sitter cannot parse it first on a line: a parse error, opaque.
    let got = split("{PATH}>/dev/null git status");
    assert!(got.opaque.is_some());
    let got = split("true && {PATH}>/dev/null git status");
    assert!(got.opaque.is_some());
}

#[test]
fn class2_an_allow_rule_for_make_does_not_cover_make_with_heredoc_options() {
    let got = split("make <<EOF -f /tmp/evil.mk\nx\nEOF");
    assert_eq!(got.commands.len(), 1);
    assert_ne!(got.commands[0].text, "make");
}

/// A redirect of the shapes tree-sitter files apart from bash.
fn redirect() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "2>/dev/null",
        ">/dev/null",
        "2>&1",
        "2>&-",
        "<&-",
        "0</dev/null",
        "3<&0",
        "</dev/null",
        "<<<x",
        "&>/dev/null",
        ">>/dev/null",
    ])
}

fn word() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["x", "-rf", "y", "--force", "push", "a.txt", "-delete"])
}

fn context() -> impl Strategy<Value = (&'static str, &'static str)> {
    prop::sample::select(vec![
        ("", ""),
        ("echo | ", ""),
        ("true && ", ""),
        ("false || ", ""),
        ("a; ", ""),
        ("a | b | ", ""),
        ("(", ")"),
        ("{ ", "; }"),
        ("echo $(", ")"),
        ("if true; then ", "; fi"),
        ("for i in 1; do ", "; done"),
        ("sh -c '", "'"),
        ("nohup ", ""),
        ("timeout 5 ", ""),
    ])
}

proptest! {
    /// Wherever redirects stand among a command's words, and whatever the
    /// command sits in, its words are listed in order without them.
    #[test]
    fn class1_and_2_redirects_never_drop_or_misread_words(
        name in prop::sample::select(vec!["rm", "find", "git", "make", "curl"]),
        args in prop::collection::vec(word(), 0..4),
        redirects in prop::collection::vec((redirect(), 0usize..5), 1..3),
        (before, after) in context(),
    ) {
        let mut items: Vec<&str> = vec![name];
        items.extend(args.iter().copied());
        for (redirect, at) in &redirects {
            let at = (*at).min(items.len());
            // Before the name too: `2>/dev/null rm x` is `rm x`.
            items.insert(at, redirect);
        }
        let line = format!("{before}{}{after}", items.join(" "));
        let mut expected = vec![name];
        expected.extend(args.iter().copied());
        let expected = expected.join(" ");
        let got = split(&line);
        let listed: Vec<&str> = got.commands.iter().map(|c| c.text.as_str()).collect();
        prop_assert!(listed.contains(&expected.as_str()), "{line:?} lists {listed:?}, not {expected:?}");
    }
}
