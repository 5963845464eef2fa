//! Builtins that run a string or a script, or set variables from data.

use crate::Opacity;
use crate::rules::evaluating_test;
use crate::sink::Sink;
use crate::words::Word;
use crate::wrappers::Step;

/// Short options of a builtin, read like bash's `getopts`: each letter in
/// `values` takes the rest of its word or the next word. Yields each
/// letter with its value (`None` for a flag), and ends before the first
/// operand. A word with an expansion ends the options too.
fn short_options<'w>(
    words: &'w [Word],
    values: &'static str,
) -> impl Iterator<Item = (char, Option<&'w Word>, Option<String>)> + 'w {
    let mut out = Vec::new();
    let mut i = 1;
    while let Some(arg) = words.get(i).and_then(Word::lit) {
        i += 1;
        if arg == "--" || !arg.starts_with('-') || arg == "-" {
            break;
        }
        for (at, letter) in arg.char_indices().skip(1) {
            if values.contains(letter) {
                let rest = &arg[at + letter.len_utf8()..];
                if rest.is_empty() {
                    out.push((letter, words.get(i), None));
                    i += 1;
                } else {
                    out.push((letter, None, Some(rest.to_owned())));
                }
                break;
            }
            out.push((letter, None, None));
        }
    }
    out.into_iter()
}

/// The value an option was given, as text.
fn value_of(word: Option<&Word>, attached: Option<String>) -> Option<String> {
    attached.or_else(|| word.map(|w| w.loose.clone()))
}

/// `mapfile -C CALLBACK` / `readarray -C …` runs the callback as a command
/// every `-c` lines: it is parsed like a shell string. `None` without `-C`.
pub(crate) fn mapfile(words: &[Word]) -> Option<Step> {
    let callback = short_options(words, "dnOsuCc")
        .find(|(letter, _, _)| *letter == 'C')
        .map(|(_, word, attached)| value_of(word, attached))?;
    Some(Step::Reparse(Opacity::ShellString, callback))
}

/// `compgen`/`complete -C COMMAND` runs the command; `-F FUNCTION` runs a
/// function. The command is parsed like a shell string.
pub(crate) fn completion(program: &str, words: &[Word]) -> Step {
    for (letter, word, attached) in short_options(words, "oAGWFCXPS") {
        match letter {
            'C' => return Step::Reparse(Opacity::ShellString, value_of(word, attached)),
            'F' => return Step::Opaque(Opacity::Runner(format!("{program} -F"))),
            _ => {}
        }
    }
    Step::Plain
}

/// `.`/`source FILE`: the file's commands run in this shell, unseen. A
/// script read from standard input (`. /dev/stdin <<< 'rm x'`) is parsed
/// again when it is known.
pub(crate) fn source(program: &str, words: &[Word]) -> Step {
    let file = words
        .iter()
        .skip(1)
        .find(|w| w.lit() != Some("--"))
        .and_then(Word::lit);
    Step::Script {
        reason: Opacity::Script(program.to_owned()),
        stdin: matches!(file, Some("/dev/stdin" | "/proc/self/fd/0" | "/dev/fd/0")),
    }
}

/// `at TIME`/`batch`: the commands come from standard input (or `-f
/// FILE`) and run later. Listing, removing or showing jobs runs nothing.
pub(crate) fn at(program: &str, words: &[Word]) -> Step {
    let mut from_file = false;
    for (letter, _, _) in short_options(words, "qftM") {
        match letter {
            'l' | 'r' | 'd' | 'c' | 'V' => return Step::Plain,
            'f' => from_file = true,
            _ => {}
        }
    }
    Step::Script {
        reason: Opacity::Script(program.to_owned()),
        stdin: !from_file,
    }
}

/// Notes builtins that set variables from data, or that evaluate a
/// variable's value or a subscript (see `scan`).
pub(crate) fn note_evaluation(sink: &mut Sink, program: &str, words: &[Word]) {
    let args = || words.iter().skip(1);
    let names: Vec<&Word> = match program {
        "read" => {
            sink.data_vars = true;
            operands(words, "adinNptu")
        }
        "mapfile" | "readarray" => {
            sink.data_vars = true;
            operands(words, "dnOsuCc")
        }
        "getopts" => {
            sink.data_vars = true;
            args().skip(1).take(1).collect()
        }
        "printf" => after(words, "-v"),
        "wait" => after(words, "-p"),
        "let" => {
            sink.evaluates = true;
            Vec::new()
        }
        "test" | "[" => {
            if args().any(|w| w.lit().is_some_and(evaluating_test)) {
                sink.evaluates = true;
            }
            [after(words, "-v"), after(words, "-R")].concat()
        }
        _ => return,
    };
    if program == "printf" && !names.is_empty() {
        sink.data_vars = true;
    }
    // What these set is only known at run time.
    if !matches!(program, "test" | "[") {
        for name in &names {
            if let Some(value) = name.lit() {
                let bare = value.strip_prefix("-v").or(value.strip_prefix("-p"));
                sink.vars
                    .assign(bare.filter(|b| !b.is_empty()).unwrap_or(value), None);
            }
        }
    }
    // A name with a subscript, or one built from an expansion: bash
    // evaluates the subscript.
    if names
        .iter()
        .any(|w| w.lit().is_none_or(|v| v.contains('[')))
    {
        sink.evaluates = true;
    }
}

/// The operands of a builtin whose options with values are `values`.
fn operands<'w>(words: &'w [Word], values: &'static str) -> Vec<&'w Word> {
    let mut i = 1;
    while let Some(arg) = words.get(i).and_then(Word::lit) {
        if arg == "--" {
            i += 1;
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        i += 1;
        let takes_next = arg
            .char_indices()
            .skip(1)
            .find(|(_, c)| values.contains(*c))
            .is_some_and(|(at, c)| at + c.len_utf8() == arg.len());
        if takes_next {
            i += 1;
        }
    }
    words.get(i..).unwrap_or_default().iter().collect()
}

/// The word after each `option`, or the option word itself when the name
/// is attached to it (`printf -vNAME`).
fn after<'w>(words: &'w [Word], option: &str) -> Vec<&'w Word> {
    let attached = words.iter().filter(|w| {
        w.lit()
            .and_then(|v| v.strip_prefix(option))
            .is_some_and(|rest| !rest.is_empty())
    });
    words
        .windows(2)
        .filter(|pair| pair[0].lit() == Some(option))
        .map(|pair| &pair[1])
        .chain(attached)
        .collect()
}
