//! Regressions from a security review: lines that hid a command from deny
//! rules, or were rated ReadOnly while running something. One test per
//! class of finding; every line of the finding is asserted.

mod common;

use std::time::{Duration, Instant};

use common::texts;
use cox_bash::{MAX_LINE, Opacity, line_risk, split};
use cox_protocol::types::Risk;

/// The line lists `command` as one of its commands (and both paths agree).
#[track_caller]
fn lists(line: &str, command: &str) {
    let got = texts(line);
    assert!(
        got.iter().any(|t| t == command),
        "{line:?} should list {command:?}, lists {got:?}"
    );
}

/// The line is opaque, so no prefix rule or grant allows it, and at least
/// Exec.
#[track_caller]
fn opaque(line: &str) {
    let got = split(line);
    assert!(got.opaque.is_some(), "{line:?} should be opaque: {got:?}");
    assert!(line_risk(&got) >= Risk::Exec, "{line:?}");
}

/// The line is opaque for this reason.
#[track_caller]
fn opaque_for(line: &str, reason: Opacity) {
    opaque(line);
    assert_eq!(split(line).opaque, Some(reason), "{line:?}");
}

/// The line is not opaque.
#[track_caller]
fn clear(line: &str) {
    let got = split(line);
    assert_eq!(got.opaque, None, "{line:?} should not be opaque");
}

#[track_caller]
fn risk(line: &str) -> Risk {
    line_risk(&split(line))
}

/// A1: a newline then a word starting with a backslash was glued to the
/// previous command (`ls \rm -rf y`).
#[test]
fn a1_newline_before_a_backslash_word_ends_the_command() {
    for line in [
        "ls\n\\rm -rf y",
        "ls\n\n\\rm -rf y",
        "ls #c\n\\rm -rf y",
        "(ls\n\\rm -rf y)",
        "echo $(ls\n\\rm -rf y)",
        "ls && echo\n\\rm -rf y",
        "ls | cat\n\\rm -rf y",
        "ls &&\n\\rm -rf y",
        "ls |\n\\rm -rf y",
        "export A\n\\rm -rf y",
    ] {
        lists(line, "rm -rf y");
        assert_eq!(risk(line), Risk::Destructive, "{line:?}");
    }
    // `\r` is opaque (A2), but the command is still split off.
    lists("ls\r\n\\rm -rf y", "rm -rf y");
    opaque("ls\r\n\\rm -rf y");
    // No longer glued, and nothing else to hide: not opaque.
    clear("ls\n\\rm -rf y");
    assert_eq!(texts("ls\n\\rm -rf y"), ["ls", "rm -rf y"]);
}

/// A2: `\r`, `\v`, `\f` before `#` started a comment for tree-sitter, not
/// for bash.
#[test]
fn a2_control_characters_are_opaque_and_words_to_the_parser() {
    for line in [
        "ls \r# x; rm -rf y",
        "ls \x0b# x; rm -rf y",
        "ls \x0c# x; rm -rf y",
        "ls\r\n",
        "git status\r\nrm -rf y",
    ] {
        opaque_for(line, Opacity::ControlCharacter);
        if line.contains("rm") {
            lists(line, "rm -rf y");
        }
    }
}

/// A3: backticks in an unquoted heredoc body were not seen.
#[test]
fn a3_backticks_in_heredoc_bodies() {
    for line in [
        "cat <<EOF\n`rm -rf y`\nEOF",
        "cat <<-EOF\n\t`rm -rf y`\n\tEOF",
        "cat << E\n`rm -rf y`\nE",
        "cat <<EOF\n${x:-`rm -rf y`}\nEOF",
    ] {
        opaque_for(line, Opacity::Backticks);
        lists(line, "rm -rf y");
        assert_eq!(risk(line), Risk::Destructive, "{line:?}");
    }
}

/// A4: a backtick or single-quoted `$( )` inside `${…}` in double quotes.
#[test]
fn a4_substitutions_inside_parameter_expansions() {
    opaque_for("echo \"${x-`rm -rf y`}\"", Opacity::Backticks);
    lists("echo \"${x-`rm -rf y`}\"", "rm -rf y");
    opaque_for("echo \"${x:-'$(rm -rf y)'}\"", Opacity::CommandSubstitution);
    lists("echo \"${x:-'$(rm -rf y)'}\"", "rm -rf y");
}

/// A5: arithmetic and name evaluation run `$( )` in array subscripts,
/// even single-quoted.
#[test]
fn a5_arithmetic_evaluation_of_subscripts() {
    for line in [
        "echo $(( 'a[$(rm -rf y)]' ))",
        "echo $[ 'a[$(rm -rf y)]' ]",
        "(( 'a[$(rm -rf y)]' ))",
        "[[ 'a[$(rm -rf y)]' -gt 0 ]]",
        "[[ -v 'a[$(rm -rf y)]' ]]",
        "test -v 'a[$(rm -rf y)]'",
        "echo ${a['$(rm -rf y)']}",
        "printf -v 'a[$(rm -rf y)]' x",
        "for x in 'a[$(rm -rf y)]'; do git log -n $((x)); done",
        "for x in '$(rm -rf y)'; do echo ${x@P}; done",
        "for x in 'a[$(rm -rf y)]'; do echo ${!x}; done",
        "for x in 'a[$(rm -rf y)]'; do [[ $x -eq 1 ]]; done",
        "let 'a[$(rm -rf y)]'",
        "read 'a[$(rm -rf y)]' <<< 1",
        "mapfile 'a[$(rm -rf y)]' < f",
        "wait -p 'a[$(rm -rf y)]'",
    ] {
        opaque(line);
        lists(line, "rm -rf y");
    }
    // A variable set from data and evaluated, with no `$(` in the line.
    for line in [
        "read x <<< $'a[\\x24(rm -rf y)]'; echo $((x))",
        "for f in *; do echo $((f)); done",
        "while read -r v; do echo ${!v}; done < f",
        "read -r v; echo \"${v@P}\"",
        "read -r v; [[ $v -eq 1 ]]",
        "read -r v; test -v \"$v\"",
        "read -r v; let v+1",
        "read -r i; echo ${a[i]}",
    ] {
        opaque_for(line, Opacity::Arithmetic);
    }
    // Literal values, or nothing evaluated: not opaque.
    clear("for i in 1 2 3; do echo $((i*2)); done");
    clear("while read -r line; do echo \"${line:2}\"; done < f");
    clear("while read -r line; do printf '%s\\n' \"$line\"; done < f");
    clear("echo $((1 + 2))");
}

/// A6: long-option abbreviations and options that write or run a program
/// kept read-only commands ReadOnly.
#[test]
fn a6_read_only_commands_with_unlisted_options_are_exec() {
    for line in [
        "sort --compress-prog=/tmp/evil -S 100K big",
        "sort --compress-program=/tmp/evil big",
        "git grep --open-files-in-p='touch X' b",
        "git grep --open-files-in-pager='touch X' b",
        "git grep -Ovim x",
        "sort --o=/tmp/x in",
        "sort -o /tmp/x in",
        "date --se=2020-01-01",
        "date -s 2020-01-01",
        "rg --hostname-bin=/tmp/evil x",
        "rg --pre=/tmp/evil x",
        "rg --pre-glob='*' --pre x y",
        "rg -z x",
        "git -C sub status",
        "git -c core.fsmonitor=x status",
        "git --git-dir=x log",
        "git --work-tree=x status",
        "git --exec-path=/tmp log",
        "git diff --output=x",
        "git log --output x",
        "git diff --ext-diff",
        "git show --textconv HEAD",
        "git log --show-signature",
        "git log --onel",
        "find . -fprint out",
        "find . -fls out",
        "file -C -m magic",
        "file -z x.gz",
        "tree -o out",
        "diff -l a b",
        "ls --hyperlink=always",
        "ls --al",
        "grep --colour-x=y x",
        "cat --show",
        "printf -v x y",
        // An argument an expansion or a glob could turn into an option.
        "rg foo *",
        "sort $opt f",
        "git log $x",
        "find \"$d\" -name x",
    ] {
        assert_eq!(risk(line), Risk::Exec, "{line:?}");
    }
    for line in [
        "ls --color=auto --all -la",
        "grep -rn --include='*.rs' --exclude-dir=target foo .",
        "rg --glob '*.rs' --type rust -n foo",
        "git log --oneline --stat --format=%H --since=2.weeks -5",
        "git show --name-only HEAD",
        "git diff --name-status --no-color",
        "git status --short --branch",
        "git --no-pager log --graph --decorate",
        "git grep -o foo",
        "git branch --list 'feat*'",
        "sort -n -k2 --reverse f",
        "du -sh --max-depth=1 .",
        "wc -l src/*.rs",
        "ls *.rs",
        "cat \"$f\"",
        "git diff -- \"$f\"",
        "date +%s",
    ] {
        assert_eq!(risk(line), Risk::ReadOnly, "{line:?}");
    }
}

/// B1: a backslash-newline inside a word joins it (`r\` newline `m`).
#[test]
fn b1_line_continuations_inside_words() {
    lists("r\\\nm -f y", "rm -f y");
    opaque_for("r\\\nm -f y", Opacity::LineContinuation);
    lists("rm -r\\\nf y", "rm -rf y");
    assert_eq!(risk("rm -r\\\nf y"), Risk::Destructive);
    // Continuations between words still just separate them.
    clear("cargo test \\\n  --all");
    assert_eq!(texts("cargo test \\\n  --all"), ["cargo test --all"]);
    assert_eq!(texts("ls -la\\\n  | wc -l"), ["ls -la", "wc -l"]);
    // Joined operators are opaque.
    opaque("ls &\\\n& rm y");
}

/// B2: `time`, `!` and `coproc NAME` before a compound command hid its
/// body.
#[test]
fn b2_keywords_before_compound_commands() {
    for line in [
        "time while rm y; do break; done",
        "time for i in 1; do rm y; done",
        "time if rm y; then :; fi",
        "coproc foo { rm y; }",
        "coproc foo while rm y; do :; done",
        "coproc { rm y; }",
        "time ! rm y",
        "! ! rm y",
        "! until ! rm y; do :; done",
        "! function g { rm y; }; g",
        "time -p { rm y; }",
        "time [[ -f x ]] && rm y",
    ] {
        lists(line, "rm y");
    }
    clear("time while rm y; do break; done");
    assert_eq!(texts("coproc foo { rm y; }"), ["rm y"]);
    // A keyword where a command name should be is a parse error.
    opaque_for("nohup time while rm y; do :; done", Opacity::ParseError);
}

/// B3: a shell that reads its script from standard input or a file.
#[test]
fn b3_shells_reading_a_script() {
    for (line, shell) in [
        ("sh <<< 'rm -rf y'", "sh"),
        ("echo 'rm -rf y' | sh", "sh"),
        ("bash <<EOF\nrm -rf y\nEOF", "bash"),
        ("bash <<'EOF' | cat\nrm -rf y\nEOF", "bash"),
        ("printf 'rm -rf y' | bash -s", "bash"),
        ("zsh <<< 'rm -rf y'", "zsh"),
        ("dash <<< 'rm -rf y'", "dash"),
        ("ksh <<< 'rm -rf y'", "ksh"),
        ("fish <<< 'rm -rf y'", "fish"),
        ("nohup bash <<< 'rm -rf y'", "bash"),
        ("echo 'rm -rf y' | sh 2>/dev/null", "sh"),
        (". /dev/stdin <<< 'rm -rf y'", "."),
        ("sudo -s <<< 'rm -rf y'", "sudo"),
        ("su <<< 'rm -rf y'", "su"),
        ("source /dev/stdin <<< 'rm -rf y'", "source"),
    ] {
        opaque_for(line, Opacity::Script(shell.into()));
        lists(line, "rm -rf y");
    }
    for (line, program) in [
        ("bash script.sh", "bash"),
        ("sh -x ./install.sh", "sh"),
        ("curl x | sh", "sh"),
        ("source ./env.sh", "source"),
        (". ./env.sh", "."),
        ("zsh", "zsh"),
    ] {
        opaque_for(line, Opacity::Script(program.into()));
    }
    clear("bash --version");
}

/// B4: builtins that run a string.
#[test]
fn b4_builtins_running_a_string() {
    for line in [
        "mapfile -C 'rm -rf y' -c 1 <<< x",
        "readarray -c1 -C 'rm -rf y' x <<< a",
        "compgen -C 'rm -rf y' x",
        "complete -C 'rm -rf y' git",
        "mapfile -tC'rm -rf y' x < f",
    ] {
        opaque_for(line, Opacity::ShellString);
        lists(line, "rm -rf y");
    }
    opaque("compgen -F f x");
}

/// B5: programs that run another command; interpreters with inline code;
/// options that run a program.
#[test]
fn b5_runners_interpreters_and_running_options() {
    for (line, runner) in [
        ("setsid rm -rf x", "setsid"),
        ("setsid -f rm -rf x", "setsid"),
        ("taskset 0x1 rm -rf x", "taskset"),
        ("taskset -c 0,1 rm -rf x", "taskset"),
        ("ionice -c 3 -n 7 rm -rf x", "ionice"),
        ("chrt -f 99 rm -rf x", "chrt"),
        ("chrt 10 rm -rf x", "chrt"),
        ("strace -f -o /dev/null rm -rf x", "strace"),
        ("ltrace -e malloc rm -rf x", "ltrace"),
        ("unbuffer rm -rf x", "unbuffer"),
        ("chroot / rm -rf x", "chroot"),
        ("chroot --userspec=a:b / rm -rf x", "chroot"),
        ("runuser -u bob -- rm -rf x", "runuser"),
        ("pkexec rm -rf x", "pkexec"),
        ("pkexec --user bob rm -rf x", "pkexec"),
        ("systemd-run --user -p X=1 rm -rf x", "systemd-run"),
        ("busybox rm -rf x", "busybox"),
        ("nsenter -t 1 -m rm -rf x", "nsenter"),
        ("unshare -r rm -rf x", "unshare"),
        ("npx rm -rf x", "npx"),
        ("npx -y rm -rf x", "npx"),
        ("pnpx rm -rf x", "pnpx"),
        ("bunx rm -rf x", "bunx"),
        ("uvx --from foo rm -rf x", "uvx"),
        ("uv run rm -rf x", "uv run"),
        ("uv run --with x rm -rf x", "uv run"),
        ("npm exec -- rm -rf x", "npm exec"),
        ("flock /tmp/l rm -rf x", "flock"),
        ("flock -w 5 /tmp/l rm -rf x", "flock"),
        ("sg wheel -c 'rm -rf x'", "sg"),
        ("sg wheel 'rm -rf x'", "sg"),
        ("watch -n 1 'rm -rf x'", "watch"),
        ("watch rm -rf x", "watch"),
        ("flock /tmp/l -c 'rm -rf x'", "flock"),
        ("parallel ::: 'rm -rf x'", "parallel"),
        ("npx -c 'rm -rf x'", "npx"),
    ] {
        opaque_for(line, Opacity::Runner(runner.into()));
        lists(line, "rm -rf x");
        assert_eq!(risk(line), Risk::Destructive, "{line:?}");
    }
    opaque_for(
        "parallel 'rm -rf {}' ::: x",
        Opacity::Runner("parallel".into()),
    );
    lists("parallel 'rm -rf {}' ::: x", "rm -rf {}");
    // Without a command: opaque too.
    opaque_for("setsid", Opacity::Runner("setsid".into()));
    opaque_for("chroot /srv", Opacity::Runner("chroot".into()));
    // `env -S`, `script -c`, `at` and `batch`.
    opaque_for("env -S 'rm -rf x'", Opacity::ShellString);
    lists("env -S 'rm -rf x'", "rm -rf x");
    opaque_for("script -qc 'rm -rf x' /dev/null", Opacity::ShellString);
    lists("script -qc 'rm -rf x' /dev/null", "rm -rf x");
    for line in [
        "echo 'rm -rf x' | at now",
        "at now <<< 'rm -rf x'",
        "batch <<< 'rm -rf x'",
    ] {
        opaque(line);
        lists(line, "rm -rf x");
    }
    // Interpreters with inline code: opaque and Exec.
    for (line, program) in [
        ("awk '{system(\"rm -rf x\")}' f", "awk"),
        ("gawk 'BEGIN { print | \"sh\" }'", "gawk"),
        ("awk -e 'BEGIN{system(\"x\")}'", "awk"),
        ("perl -e 'unlink \"x\"'", "perl"),
        ("perl -E 'say 1'", "perl"),
        ("perl -pi -e 's/a/b/' f", "perl"),
        ("perl -lane 'print' f", "perl"),
        ("python -c 'import os'", "python"),
        ("python3 -c 'import os'", "python3"),
        ("python3.12 -Bc 'x'", "python3.12"),
        ("python3 <<EOF\nimport os\nEOF", "python3"),
        ("echo 'import os' | python3 -", "python3"),
        ("ruby -e 'x'", "ruby"),
        ("node -e 'x'", "node"),
        ("node -p '1'", "node"),
        ("node --eval 'x'", "node"),
        ("bun -e 'x'", "bun"),
        ("php -r 'x'", "php"),
        ("lua -e 'x'", "lua"),
        ("tclsh <<< 'exec rm x'", "tclsh"),
        ("sed 's/.*/rm -rf x/e' f", "sed"),
        ("sed -n '1e rm -rf x' f", "sed"),
        ("sed --expression='s/a/b/e' f", "sed"),
        ("sed --expr='e rm x' f", "sed"),
    ] {
        opaque_for(line, Opacity::InlineCode(program.into()));
        assert!(risk(line) >= Risk::Exec, "{line:?}");
    }
    for line in [
        "awk '{print $1}' f",
        "python3 -m pytest",
        "perl x.pl",
        "node x.js",
    ] {
        clear(line);
    }
    assert_eq!(risk("sed 's/a/b/w out' f"), Risk::Exec);
    clear("sed -n 's/a/b/p' f");
    // git options and subcommands that run a program.
    opaque_for("git -c core.pager=x log", Opacity::Runner("git -c".into()));
    opaque_for(
        "git --exec-path=/tmp log",
        Opacity::Runner("git --exec-path".into()),
    );
    opaque_for("git rebase -x 'rm -rf x' main", Opacity::ShellString);
    lists("git rebase -x 'rm -rf x' main", "rm -rf x");
    lists("git submodule foreach 'rm -rf x'", "rm -rf x");
    lists("git bisect run rm -rf x", "rm -rf x");
    // tar options that run a program.
    for line in [
        "tar --to-command=sh -xf a.tar",
        "tar --use-compress-program=x -xf a",
        "tar --to-c=sh -xf a",
        "tar --checkpoint-action=exec=x -cf a .",
        "tar -I zstd -xf a",
        "tar -xIzstd -f a",
        "tar xIf zstd a",
        "tar -F ./next.sh -cf a .",
    ] {
        opaque_for(line, Opacity::Runner("tar".into()));
    }
    clear("tar -xzf a.tgz");
}

/// B6: quotes around an argument hid it from deny rules with arguments.
#[test]
fn b6_text_drops_quotes_of_literal_words() {
    for line in [
        "rm '-rf' y",
        "rm \"-rf\" y",
        "rm -'r'f y",
        "rm -rf 'y'",
        "'rm' '-rf' 'y'",
    ] {
        assert_eq!(texts(line), ["rm -rf y"], "{line:?}");
    }
    // Words with an expansion stay as written; empty literals are left out.
    assert_eq!(texts("rm -rf \"$d\""), ["rm -rf \"$d\""]);
    assert_eq!(texts("rm '' -rf y"), ["rm -rf y"]);
    // The fast path (plain lines) gives the same as the tree (checked by
    // `texts`), with or without quotes.
    assert_eq!(
        texts("git commit -m 'a b' && rm '-rf' y"),
        ["git commit -m a b", "rm -rf y"]
    );
}

/// C: lines that were opaque already stay opaque; some now also list the
/// hidden command.
#[test]
fn c_lines_that_stay_opaque() {
    for line in [
        "{rm,} y",
        "echo `echo \\`echo \\\\\\`rm y\\\\\\`\\``",
        "((true) && rm y)",
        "echo `#`;rm y",
        "cat <<E; rm y\nhi\nE",
        "cat <<E''\nE\nrm -rf y\nE\n",
    ] {
        opaque(line);
    }
    lists("echo `echo \\`echo \\\\\\`rm y\\\\\\`\\``", "rm y");
    // ANSI-C quoting is read as bash reads it (issue 11): not opaque.
    assert_eq!(texts("$'\\x72m' y"), ["rm y"]);
    lists("{rm,} y", "rm y");
    lists("((true) && rm y)", "rm y");
    lists("echo `#`;rm y", "rm y");
    lists("cat <<E; rm y\nhi\nE", "rm y");
    lists("cat <<E''\nE\nrm -rf y\nE\n", "rm -rf y");
    // Listed, and not opaque: time is a transparent wrapper.
    assert_eq!(texts("time { rm y; }"), ["rm y"]);
    assert_eq!(texts("command time -o /dev/null rm -rf y"), ["rm -rf y"]);
    opaque_for(
        "command time -o out rm -rf y",
        Opacity::Redirect("out".into()),
    );
    // Seventy nested substitutions.
    let nested = format!("{}rm y{}", "echo $(".repeat(70), ")".repeat(70));
    opaque(&nested);
    lists(&nested, "rm y");
}

/// D: hostile lines of the size cap split in bounded time, and longer ones
/// are not parsed.
#[test]
fn d_hostile_lines_split_in_bounded_time() {
    let fill = |unit: &str, tail: &str| {
        let n = (MAX_LINE - tail.len()) / unit.len();
        unit.repeat(n) + tail
    };
    let shapes = [
        fill("xargs -0 ", "rm x"),
        fill("sudo ", "rm x"),
        fill("env ", "rm x"),
        fill("setsid ", "rm x"),
        fill("rm x;", ""),
        format!(
            "find .{}",
            fill(" -exec rm {} \\;", "").get(7..).unwrap_or_default()
        ),
        format!(
            "case x in {}esac",
            fill("a) b;; ", "esac").get(15..).unwrap_or_default()
        ),
        format!("{}x{}", "$(".repeat(MAX_LINE / 3), ")".repeat(MAX_LINE / 3)),
        fill("`a`", ""),
        fill("'$(", ""),
        fill("((", ""),
        fill("ls\n\\a", ""),
        fill("a\\\n", ""),
        fill("time while a; do :; done; ", ""),
        fill("! ", "rm x"),
        fill("echo 'rm y' | sh; ", ""),
        fill("echo `#`;rm y ", ""),
        fill("eval ", "rm x"),
        fill("sh -c ", "rm x"),
        fill("watch ", "rm x"),
    ];
    for line in &shapes {
        assert!(line.len() <= MAX_LINE, "{}", line.len());
        let start = Instant::now();
        let got = split(line);
        let took = start.elapsed();
        assert!(
            took < Duration::from_secs(2),
            "{took:?} for {:?}…",
            line.get(..40).unwrap_or(line)
        );
        assert!(got.commands.len() <= 2 * line.len());
    }
    // Wrappers are followed only so far.
    let wrapped = split(&fill("xargs -0 ", "rm x"));
    assert_eq!(wrapped.opaque, Some(Opacity::TooDeep));
    assert!(wrapped.commands.len() <= cox_bash::MAX_WRAPPERS + 2);
    // Past the cap: not parsed, one command, opaque.
    let long = "rm x;".repeat(20_000);
    let start = Instant::now();
    let got = split(&long);
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!(got.opaque, Some(Opacity::TooLarge));
    assert_eq!(got.commands.len(), 1);
    assert_eq!(got.commands[0].text, long);
    assert_eq!(line_risk(&got), Risk::Exec);
}

/// A fuzz finding: a shell fed a heredoc and a here-string reads the last
/// one, which tree-sitter files under the heredoc; every input is judged.
#[test]
fn a_shell_fed_a_heredoc_and_a_here_string_has_both_judged() {
    for line in [
        "bash <<EOF <<<'make'\nx\nEOF\n",
        "bash <<<'make' <<EOF\nx\nEOF\n",
    ] {
        opaque(line);
        lists(line, "make");
        lists(line, "x");
    }
}
