//! Shells and builtins that run a string: `sh -c`, `su -c`, `trap`, and a
//! shell reading a script from a file or its standard input.

use crate::Opacity;
use crate::words::Word;
use crate::wrappers::Step;

/// `sh [options] -c STRING [args]`: the first operand after the options
/// is the string when `-c` was among them. Without `-c` the shell runs a
/// script from a file or its standard input (`bash x.sh`, `sh <<< 'rm
/// x'`, `curl … | sh`): opaque, and a known standard input is parsed
/// again. `--version` and `--help` alone run nothing.
pub(crate) fn shell_string(program: &str, words: &[Word]) -> Step {
    let mut has_c = false;
    let mut from_stdin = false;
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let Some(arg) = word.lit() else {
            // An expansion where an option or the script could be.
            return if has_c {
                Step::Reparse(Opacity::ShellString, Some(word.loose.clone()))
            } else {
                Step::Unknown(word.raw.clone(), words.len())
            };
        };
        if arg == "--" {
            i += 1;
            break;
        }
        let is_option = (arg.starts_with('-') || arg.starts_with('+')) && arg.len() > 1;
        if !is_option {
            break;
        }
        i += 1;
        if let Some(long) = arg.strip_prefix("--") {
            if matches!(long, "rcfile" | "init-file") {
                i += 1;
            }
            if matches!(long, "version" | "help") && words.len() == 2 {
                return Step::Plain;
            }
            continue;
        }
        let cluster = &arg[1..];
        has_c |= cluster.contains('c');
        from_stdin |= cluster.contains('s');
        if cluster.contains('o') || cluster.contains('O') {
            i += 1;
        }
    }
    if has_c {
        return Step::Reparse(Opacity::ShellString, words.get(i).map(|w| w.loose.clone()));
    }
    let operand = words.get(i).and_then(Word::lit);
    Step::Script {
        reason: Opacity::Script(program.to_owned()),
        stdin: from_stdin || matches!(operand, None | Some("-" | "/dev/stdin")),
    }
}

/// `su … -c STRING …` (also `runuser`): a shell string. Without one, su
/// starts a shell, which reads its standard input.
pub(crate) fn su(words: &[Word]) -> Step {
    for (i, word) in words.iter().enumerate().skip(1) {
        let script = match word.lit() {
            Some("-c" | "--command" | "--session-command") => {
                words.get(i + 1).map(|w| w.loose.clone())
            }
            Some(arg) => match arg.strip_prefix("--command=") {
                Some(value) => Some(value.to_owned()),
                None if arg.starts_with("-c") => Some(arg[2..].to_owned()),
                // A cluster ending in `c` (`-mc`, `-lc`): the next word.
                None if arg.starts_with('-') && !arg.starts_with("--") && arg.ends_with('c') => {
                    words.get(i + 1).map(|w| w.loose.clone())
                }
                // `c` inside a cluster takes the rest of it (`-cSTRING`
                // after other letters).
                None if arg.starts_with('-') && !arg.starts_with("--") && arg.contains('c') => {
                    arg.split_once('c').map(|(_, rest)| rest.to_owned())
                }
                None => continue,
            },
            // An expansion: opaque, not followed.
            None => None,
        };
        return Step::Reparse(Opacity::ShellString, script);
    }
    Step::Script {
        reason: Opacity::Script("su".to_owned()),
        stdin: true,
    }
}

/// `trap [--] STRING SIGNAL…`: the string runs later, in this shell.
pub(crate) fn trap(words: &[Word]) -> Step {
    let start = match words.get(1).and_then(Word::lit) {
        Some("--") => 2,
        Some(arg) if arg.starts_with('-') && arg != "-" => return Step::Plain,
        _ => 1,
    };
    if words.len() > start + 1 {
        Step::Reparse(
            Opacity::ShellString,
            words.get(start).map(|w| w.loose.clone()),
        )
    } else {
        Step::Plain
    }
}
