//! Risk per command and per line: the vetted read-only set, the clearly
//! destructive commands, Exec for the rest, and opacity lifting a line to
//! at least Exec.

use cox_bash::{line_risk, split};
use cox_protocol::types::Risk;

/// The risk of a line's first command (the runner, for `find -exec` and
/// `sudo`).
#[track_caller]
fn risk(line: &str) -> Risk {
    let got = split(line);
    assert!(!got.commands.is_empty(), "{line:?} lists no command");
    got.commands[0].risk
}

#[track_caller]
fn all(expected: Risk, lines: &[&str]) {
    for line in lines {
        assert_eq!(risk(line), expected, "{line:?}");
    }
}

#[test]
fn read_only_set() {
    all(
        Risk::ReadOnly,
        &[
            "ls -la",
            "cat a b",
            "head -n 5 f",
            "tail -f log",
            "wc -l f",
            "grep -rn x .",
            "egrep x f",
            "fgrep x f",
            "rg -n foo src",
            "find . -name '*.rs'",
            "pwd",
            "echo hi",
            "printf '%s\\n' x",
            "which git",
            "type ls",
            "file x",
            "stat x",
            "du -sh .",
            "df -h",
            "tree -L 2",
            "sort -n f",
            "uniq -c f",
            "cut -d: -f1 f",
            "tr a-z A-Z",
            "diff a b",
            "cmp a b",
            "basename a/b",
            "dirname a/b",
            "realpath x",
            "readlink -f x",
            "date +%s",
            "whoami",
            "id -u",
            "uname -a",
            "env",
            "printenv HOME",
            "true",
            "false",
            ":",
            "test -f x",
            "[ -f x ]",
            "[[ -d x ]]",
            "jq .a f.json",
            "command -v git",
            "cd src",
            "/bin/ls",
            "sed -n '5p' f",
            "sed -n -e '1,10p' f",
            "sed -n '$p' f",
            "sed 3q f",
        ],
    );
}

#[test]
fn read_only_commands_with_writing_options_are_exec() {
    all(
        Risk::Exec,
        &[
            "find . -exec grep x {} \\;",
            "rg --pre ./x foo",
            "file -C -m magic",
            "tree -o out",
            "sort -o out f",
            "sort --output=out f",
            "uniq in out",
            "date -s 2020-01-01",
            "env -i",
            "jq -i . f",
            "sed -i s/a/b/ f",
            "sed 's/a/b/w out' f",
            "sed -n 'e rm x' f",
            "sed -f script f",
            "sed -n s/a/b/p f",
            "find . -fprint out",
        ],
    );
}

#[test]
fn git_read_only_subcommands() {
    all(
        Risk::ReadOnly,
        &[
            "git status",
            "git status --short",
            "git log --oneline -5",
            "git diff HEAD~1",
            "git show HEAD:x",
            "git branch",
            "git branch -a",
            "git branch -r -v",
            "git branch --list 'feat*'",
            "git remote -v",
            "git remote",
            "git rev-parse HEAD",
            "git ls-files",
            "git blame x",
            "git describe --tags",
            "git tag",
            "git tag -l",
            "git --no-pager log",
            "git stash list",
            "git config --get user.name",
            "git grep foo",
        ],
    );
}

#[test]
fn git_writing_is_exec() {
    all(
        Risk::Exec,
        &[
            "git commit -m x",
            "git push",
            "git pull",
            "git fetch",
            "git checkout main",
            "git restore --staged .",
            "git branch new",
            "git branch -d old",
            "git tag v1",
            "git remote add o url",
            "git diff --output=x",
            "git log --output x",
            "git diff --ext-diff",
            "git -c core.pager=x log",
            "git stash",
            "git config user.name x",
            "git",
            "git --frob status",
            "git -C sub status",
        ],
    );
}

#[test]
fn destructive() {
    all(
        Risk::Destructive,
        &[
            "rm -r x",
            "rm -R x",
            "rm -f x",
            "rm -rf x",
            "rm -fr x",
            "rm --recursive x",
            "rm --force x",
            "/bin/rm -rf x",
            "dd if=/dev/zero of=x",
            "mkfs.ext4 /dev/sda1",
            "mkfs /dev/sda",
            "shred x",
            "wipefs -a /dev/sda",
            "chmod -R 777 .",
            "chown -R me .",
            "chgrp -R g .",
            "git push --force",
            "git push -f",
            "git push origin +main",
            "git push --force-with-lease",
            "git push origin :old",
            "git push --delete origin old",
            "git push --mirror",
            "git reset --hard",
            "git clean -fd",
            "git clean -f",
            "git branch -D x",
            "git stash drop",
            "git stash clear",
            "find . -delete",
            // The third red-team round's should tier: auto mode asks.
            "git checkout -- .",
            "git checkout .",
            "git checkout -f main",
            "git checkout HEAD -- src/a.rs",
            "git restore src/a.rs",
            "git restore --staged --worktree x",
            "git switch --discard-changes main",
            "truncate -s 0 f",
            "rsync -a --delete src/ dst/",
            "rsync -a --del src/ dst/",
            "rsync --remove-source-files a b",
            "find . -name '*.o' -exec rm {} +",
            "find . -execdir /bin/rm -f {} \\;",
            "python3 -c 'import shutil; shutil.rmtree(\"src\")'",
            "node -e 'require(\"fs\").rmSync(\"src\", {recursive: true})'",
            "perl -e 'unlink(\"a\")'",
            "sudo -l",
        ],
    );
}

#[test]
fn everything_else_is_exec() {
    all(
        Risk::Exec,
        &[
            "rm x",
            "rm -i x",
            "rm -- -rf",
            "rmdir x",
            "chmod 644 x",
            "chmod -r x",
            "mv a b",
            "cp a b",
            "touch x",
            "mkdir -p x",
            "cargo test",
            "npm install",
            "make",
            "python x.py",
            "kill -9 1",
            "curl https://example.com",
            "ssh host",
            "bash script.sh",
            "./run.sh",
            "read -r line",
        ],
    );
}

#[test]
fn runners_rate_the_runner_and_what_it_runs() {
    let got = split("sudo ls");
    let risks: Vec<Risk> = got.commands.iter().map(|c| c.risk).collect();
    assert_eq!(risks, [Risk::Destructive, Risk::ReadOnly]);
    assert_eq!(line_risk(&got), Risk::Destructive);

    let got = split("xargs -0 rm -rf");
    let risks: Vec<Risk> = got.commands.iter().map(|c| c.risk).collect();
    assert_eq!(risks, [Risk::Exec, Risk::Destructive]);
}

#[test]
fn wrapped_commands_keep_their_own_risk() {
    assert_eq!(risk("nohup ls"), Risk::ReadOnly);
    assert_eq!(risk("timeout 5 rm -rf x"), Risk::Destructive);
    assert_eq!(risk("LC_ALL=C sort f"), Risk::ReadOnly);
}

#[test]
fn line_risk_is_the_highest_and_opaque_is_at_least_exec() {
    assert_eq!(line_risk(&split("")), Risk::ReadOnly);
    assert_eq!(line_risk(&split("ls && cat x | wc -l")), Risk::ReadOnly);
    assert_eq!(line_risk(&split("ls; cargo build")), Risk::Exec);
    assert_eq!(line_risk(&split("ls; rm -rf x")), Risk::Destructive);
    // A command substitution hides no command (the walk lists the ones
    // inside it): the line is as risky as its commands, and still opaque
    // (no prefix rule vouches for it).
    for (line, risk) in [
        ("echo $(ls)", Risk::ReadOnly),
        ("echo `ls`", Risk::ReadOnly),
        ("echo $(rm -rf x)", Risk::Destructive),
        ("git $(echo push --force)", Risk::Exec),
        ("find . $(echo -delete)", Risk::Exec),
        // An output redirect writes a file.
        ("ls > out", Risk::Write),
        (
            "for i in $(seq 0 9); do echo x > d/f$i.txt; done",
            Risk::Write,
        ),
    ] {
        assert!(split(line).opaque.is_some(), "{line:?}");
        assert_eq!(line_risk(&split(line)), risk, "{line:?}");
    }
    // Other opaque lines may hide a command: never below Exec.
    for line in [
        "echo $(ls) > out; eval ls",
        "FOO=1 ls",
        "FOO=1",
        "export A=1",
        "unset A",
        "eval ls",
        "sh -c ls",
        "cat <(ls)",
        "ls &&",
    ] {
        assert!(split(line).opaque.is_some(), "{line:?}");
        assert_eq!(line_risk(&split(line)), Risk::Exec, "{line:?}");
    }
    assert_eq!(line_risk(&split("sh -c 'rm -rf x'")), Risk::Destructive);
}
