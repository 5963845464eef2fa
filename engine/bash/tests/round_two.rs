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

#[test]
fn class4_git_global_options_are_left_out_of_the_text() {
    for (line, text) in [
        ("git -C . push", "git push"),
        ("git --no-pager push origin", "git push origin"),
        ("git -P push", "git push"),
        ("git -p log", "git log"),
        ("git --git-dir=.git --work-tree=. push", "git push"),
        ("git --git-dir .git --work-tree . push -f", "git push -f"),
        (
            "git --namespace=x --bare --literal-pathspecs push",
            "git push",
        ),
        ("git -C \"$d\" push", "git push"),
        (
            "git --no-optional-locks --no-lazy-fetch status",
            "git status",
        ),
        ("/usr/bin/git -C sub push", "/usr/bin/git push"),
    ] {
        assert_eq!(split(line).commands[0].text, text, "{line}");
    }
    // `-c` and `--exec-path=` keep the line opaque: they set what runs.
    for line in ["git -c core.pager=x log", "git --exec-path=/tmp log"] {
        let got = split(line);
        assert!(got.opaque.is_some(), "{line}");
        assert_eq!(got.commands[0].text, "git log", "{line}");
    }
    // An option git does not have: git refuses the line, nothing is left out.
    assert_eq!(split("git --frob push").commands[0].text, "git --frob push");
    assert_eq!(
        line_risk(&split("git -C . --no-pager push --force")),
        Risk::Destructive
    );
    assert_eq!(
        line_risk(&split("git --git-dir=x push --force")),
        Risk::Destructive
    );
}

#[test]
fn class5_read_only_git_config_is_only_a_read() {
    for line in [
        "git config core.fsmonitor 'CMD; false' --get",
        "git config core.fsmonitor CMD --get-all",
        "git config core.fsmonitor CMD -l",
        "git config core.fsmonitor CMD --list",
        "git config --get",
        "git config --list core.x",
        "git config --get a b c",
        "git config --get core.x --add y",
        "git config set core.x y",
        "git config get core.x y",
        "git help -w config",
        "git help config",
    ] {
        assert_eq!(line_risk(&split(line)), Risk::Exec, "{line}");
    }
    for line in [
        "git config --get core.editor",
        "git config --get-all remote.origin.url",
        "git config --get core.x pattern",
        "git config --global --get-regexp alias",
        "git config --list",
        "git config -l --show-origin",
        "git config get core.editor",
        "git config get --all remote.origin.fetch",
        "git config list --global",
    ] {
        assert_eq!(line_risk(&split(line)), Risk::ReadOnly, "{line}");
    }
}

#[test]
fn class5_read_only_programs_with_writing_or_running_options_are_not_read_only() {
    for line in [
        "true && find . 2>/dev/null -delete",
        "find . -fprint out",
        "find . 2>/dev/null -exec rm {} +",
        "find . -ok rm {} ;",
        "rg --pre ./x y",
        "rg -z x",
        "sort -o out in",
        "sort --output=out in",
        "sort --compress-program=x in",
        "git log --output=x",
        "git diff --output=x",
        "git grep -O x",
        "git grep --open-files-in-pager=x y",
        "sed -i s/a/b/ f",
        "sed -n 'w out' f",
        "sed -n 'p;w out' f",
        "tee out",
        "date -s 1",
        "date --set=1",
        "tree -o out",
        "uniq in out",
        "printf -v PATH x",
        "printf -vPATH x",
        "file -C -m x",
    ] {
        assert!(line_risk(&split(line)) > Risk::ReadOnly, "{line}");
    }
}

#[test]
fn class6_assignments_in_every_form_make_the_line_opaque() {
    for (line, name) in [
        ("printf -v PATH x; git status", "PATH"),
        ("printf -vPATH x; git status", "PATH"),
        ("read PATH; git status", "PATH"),
        ("read -r -a PATH; git status", "PATH"),
        ("mapfile PATH </dev/null; git status", "PATH"),
        ("readarray -t IFS <f; git status", "IFS"),
        ("getopts a PATH; git status", "PATH"),
        ("echo $((PATH=0)); git status", "PATH"),
        (": $((PATH+=1)); git status", "PATH"),
        ("(( IFS=1 )); git status", "IFS"),
        ("let PATH=0; git status", "PATH"),
        ("let 'PATH=0'; git status", "PATH"),
        (": ${PATH:=/tmp}; git status", "PATH"),
        ("echo ${a[PATH=0]}; git status", "PATH"),
        ("[[ 1 -eq PATH=1 ]]; git status", "PATH"),
        ("wait -p PATH; git status", "PATH"),
    ] {
        let got = split(line);
        assert_eq!(got.opaque, Some(Opacity::Assignment(name.into())), "{line}");
        assert!(line_risk(&got) >= Risk::Exec, "{line}");
    }
    for line in [
        "declare -n r=PATH; r=/tmp; git status",
        "export -f f; git status",
        "source x.sh; git status",
        ". ./x; git status",
    ] {
        let got = split(line);
        assert!(got.opaque.is_some(), "{line}");
        assert!(line_risk(&got) >= Risk::Exec, "{line}");
    }
    // Everyday loops over lower-case names stay clear.
    for line in [
        "while read -r line; do echo \"$line\"; done <f",
        "for f in a b; do wc -l \"$f\"; done",
        ": $((i=0))",
    ] {
        assert_eq!(split(line).opaque, None, "{line}");
    }
}

#[test]
fn deliver3_names_known_from_the_text_are_resolved() {
    for (line, text) in [
        ("$'\\x72m' x", "rm x"),
        ("$'\\162\\155' -rf x", "rm -rf x"),
        ("r''m x", "rm x"),
        ("r\"\"m x", "rm x"),
        ("\\r\\m x", "rm x"),
        ("r$()m x", "rm x"),
        ("r$( )m x", "rm x"),
        ("r``m x", "rm x"),
        ("{rm,x} y", "rm x y"),
        ("rm${IFS}-rf${IFS}x", "rm -rf x"),
        ("a=rm; $a x", "rm x"),
        ("a=rm; \"$a\" x", "rm x"),
        ("a=rm; ${a} x", "rm x"),
        ("\"${a:-rm}\" x", "rm x"),
        ("${a-rm} x", "rm x"),
        ("export a=rm; $a x", "rm x"),
        ("for c in ls rm; do $c x; done", "rm x"),
    ] {
        lists(line, text);
    }
    // Several values: each is listed.
    lists("if t; then a=rm; else a=ls; fi; $a x", "rm x");
    lists("if t; then a=rm; else a=ls; fi; $a x", "ls x");
    // Fully static names are not dynamic; a variable keeps the line so.
    assert!(!split("$'\\x72m' x").dynamic);
    assert!(!split("{rm,x} y").dynamic);
    assert!(split("a=rm; $a x").dynamic);
    assert!(split("\"${a:-rm}\" x").dynamic);
}

#[test]
fn deliver3_a_name_that_stays_dynamic_makes_the_line_opaque() {
    for line in [
        "$(echo rm) x",
        "$x y",
        "read c; $c x",
        "c=$(which rm); $c x",
        "`echo rm` x",
        "r* x",
        "$'\\x00' x",
    ] {
        let got = split(line);
        assert!(got.dynamic, "{line}");
        assert!(got.opaque.is_some(), "{line}");
        assert!(line_risk(&got) >= Risk::Exec, "{line}");
    }
}

#[test]
fn oracle_findings_keywords_heredocs_and_negations() {
    // `time` and `!` are keywords: assignments after them are assignments.
    let got = split("time A=1 rm x");
    assert_eq!(got.commands[0].text, "rm x");
    assert_eq!(got.opaque, Some(Opacity::Assignment("A".into())));
    assert_eq!(texts("time LC_ALL=C rm x"), ["rm x"]);
    assert_eq!(split("! A=1 rm x").commands[0].text, "rm x");
    // What a literal echo pipes through `time`/`!` into a shell is parsed.
    lists("time -p echo 'curl x' | bash", "curl x");
    lists("! echo 'curl x' | bash", "curl x");
    // A pipe into a redirected pipeline feeds its first command.
    lists(
        "curl | echo 'p2 x' | bash | nice -5 find 2>/dev/null . && make",
        "p2 x",
    );
    // tree-sitter nests `a | b | c && d` oddly; the echo still feeds bash.
    lists("echo 'exec make' | bash | p1 && p2 $(x) | p3", "make");
    // Two heredocs on one line: the line is scanned whole.
    let got = split("cat <<EOF | sh <<'EOF'\nx\nEOF\nmake; rm\nEOF\n");
    assert!(got.scan.iter().any(|n| n == "rm"), "{:?}", got.scan);
    // Heredoc operators inside quotes are text: the fast path and the
    // tree-sitter walk agree (`texts` checks both).
    let _ = texts("bash -c \"<< EOF sh <<'EOF' << EOF\na\nEOF\np1\nEOF\nx\nEOF\n\"");
    // `<< EOF; rm`: the delimiter ends at the `;`.
    let got = split("make 2>/dev/null << EOF; rm\nx\nEOF\n");
    assert_eq!(got.opaque, Some(Opacity::ParseError));
    assert!(got.scan.iter().any(|n| n == "rm"), "{:?}", got.scan);
    // A here-string and a heredoc: bash reads the last.
    lists("sh <<< 'a b' <<'EOF'\n2>/dev/null rm x\nEOF\n", "rm x");
    // Two backtick substitutions tree-sitter runs into one.
    lists("git `timeout 5 p4` `timeout 5 p3`", "p4");
    lists("git `timeout 5 p4` `timeout 5 p3`", "p3");
    // Assignments after a leading redirect are still assignments.
    let got = split("0</dev/null B='x y' head");
    assert_eq!(got.commands[0].text, "head");
    assert_eq!(got.opaque, Some(Opacity::Assignment("B".into())));
    assert_eq!(texts("2>/dev/null LC_ALL=C rm x"), ["rm x"]);
    // A redirect tree-sitter nests in a heredoc keeps its words too.
    assert_eq!(texts("time <<EOF >&2 rm\nx\nEOF\n"), ["rm"]);
    assert_eq!(texts("nohup <<EOF 2>/dev/null rm y\nx\nEOF"), ["rm y"]);
    // A heredoc for a shell that is not the first command.
    lists("p1 | sh <<'EOF'\ncurl x\nEOF", "curl x");
    lists("p1 && sh <<'EOF'\ncurl x\nEOF", "curl x");
    lists("! sh >&2 <<'EOF' || p5\ncurl x\nEOF", "curl x");
    lists(
        "a 2>&1 | b 2>&1 2>/dev/null | >/dev/null sh <<'EOF' || tee y 2>&-\ncurl x\nEOF",
        "curl x",
    );
}

#[test]
fn oracle_findings_the_scan_reads_through_empty_substitutions_and_ansi_c() {
    let padded = |word: &str| format!("{word} x; ((( {}", "(".repeat(10));
    for (line, name) in [
        (padded("p$()ython3"), "python3"),
        (padded("c``url"), "curl"),
        (padded("${u:-tee}"), "tee"),
        (padded("$'\\x72m'"), "rm"),
        (padded("eval \"\\$'\\\\x72m'\""), "rm"),
        (padded(r"echo '$'\''\'\'''\''\x68ead'\'' x'"), "head"),
    ] {
        let got = split(&line);
        assert!(got.scan.iter().any(|n| n == name), "{line}: {:?}", got.scan);
    }
}

/// The paths a line names, as (text, write, recursive, known).
fn named(line: &str) -> Vec<(String, bool, bool, bool)> {
    split(line)
        .paths
        .into_iter()
        .map(|p| {
            (
                p.text,
                p.access == cox_bash::Access::Write,
                p.recursive,
                p.known,
            )
        })
        .collect()
}

#[test]
fn class7_shell_lines_name_their_paths() {
    let read = |t: &str| (t.to_owned(), false, false, true);
    let write = |t: &str| (t.to_owned(), true, false, true);
    assert_eq!(named("cat ~/.ssh/id_rsa"), [read("~/.ssh/id_rsa")]);
    assert_eq!(named("cat $HOME/.ssh/id_rsa"), [read("~/.ssh/id_rsa")]);
    assert_eq!(
        named("cat \"${HOME}/.aws/credentials\""),
        [read("~/.aws/credentials")]
    );
    assert_eq!(named("nohup cat 2>/dev/null ~/.netrc"), [read("~/.netrc")]);
    assert_eq!(named("cat < ~/.netrc"), [read("~/.netrc")]);
    assert_eq!(named("echo hi > out.txt"), [write("out.txt")]);
    assert_eq!(named("echo hi 2>&1 >/dev/null"), []);
    assert_eq!(named("sh -c 'cat ~/.netrc'"), [read("~/.netrc")]);
    assert_eq!(named("echo $(cat ~/.netrc)"), [read("~/.netrc")]);
    assert_eq!(named("grep -r key"), [(".".to_owned(), false, true, true)]);
    let unknown = named("cat \"$f\"");
    assert_eq!(unknown.len(), 1);
    assert!(!unknown[0].3, "an expansion is not known");
    assert_eq!(
        split("cd ~/.ssh && cat id_rsa").dirs,
        [Some("~/.ssh".to_owned())]
    );
    assert_eq!(split("cd \"$d\" && cat x").dirs, [None]);
    assert_eq!(split("cd && cat x").dirs, [Some("~".to_owned())]);
}

#[test]
fn class7_dev_tcp_and_udp_are_network_never_read_only() {
    for line in [
        "cat </dev/tcp/host/80",
        "cat < /dev/udp/host/53",
        "exec 3<>/dev/tcp/host/80",
        "f=/dev/tcp/h/80; cat <$f",
        "sh -c 'cat </dev/tcp/h/80'",
    ] {
        let got = split(line);
        assert!(got.opaque.is_some(), "{line}");
        assert!(line_risk(&got) >= Risk::Exec, "{line}");
    }
    assert_eq!(split("cat </dev/tcp/h/80").opaque, Some(Opacity::Network));
}

proptest! {
    /// Wherever a secret path stands in a reading command (after options,
    /// redirects, wrappers, in a list or a shell string), it is named.
    #[test]
    fn class7_a_secret_path_is_named_wherever_it_stands(
        program in prop::sample::select(vec!["cat", "head -n 2", "tail", "base64", "xxd", "less", "grep -h x", "sed -n 1p", "python3 a.py"]),
        (before, after) in context(),
        redirect in prop::option::of(redirect()),
        spelling in prop::sample::select(vec!["~/.ssh/id_rsa", "$HOME/.ssh/id_rsa", "\"${HOME}\"/.ssh/id_rsa"]),
    ) {
        let redirect = redirect.map(|r| format!(" {r}")).unwrap_or_default();
        let line = format!("{before}{program}{redirect} {spelling}{after}");
        let named = named(&line);
        prop_assert!(
            named.iter().any(|(text, _, _, known)| text == "~/.ssh/id_rsa" && *known),
            "{line:?} names {named:?}"
        );
    }
}
