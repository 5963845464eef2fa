//! Small rules the walk and the wrappers share: which redirects and
//! variables matter, and what a pipeline's `echo` feeds the next command.

use crate::Opacity;
use crate::words::Word;

/// What `echo` or `printf` with literal words writes, roughly: the next
/// command in a pipeline reads it.
pub(crate) fn echoed(words: &[Word]) -> Option<String> {
    // Through the keywords `time [-p]` and `!`.
    let lead = words
        .iter()
        .take_while(|w| matches!(w.lit(), Some("time" | "-p" | "!")))
        .count();
    let (name, args) = words.get(lead..)?.split_first()?;
    let program = name.lit()?;
    if !matches!(program, "echo" | "printf") {
        return None;
    }
    // Escapes and formats change what is written (`printf '\162m x'` is
    // `rm x`): such text is not known.
    let escapes = args.iter().any(|w| w.value().contains('\\'));
    let interprets = program == "printf"
        || args
            .iter()
            .any(|w| w.lit().is_some_and(|v| v.starts_with("-e") || v == "-ne"));
    if (escapes && interprets)
        || (program == "printf" && args.iter().any(|w| w.value().contains('%')))
    {
        return None;
    }
    let values: Option<Vec<&str>> = args
        .iter()
        .map(Word::lit)
        .filter(|v| !matches!(v, Some("-n" | "-e" | "-E" | "--")))
        .collect();
    Some(values?.join(" "))
}

/// A `test` or `[[` operator that evaluates its operands as arithmetic or
/// as a variable name with a subscript.
pub(crate) fn evaluating_test(word: &str) -> bool {
    matches!(
        word,
        "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" | "-v" | "-R"
    )
}

/// Why a redirect with this operator and target makes a line opaque, if it
/// does. Input redirects, fd duplications and closes, and writes to
/// `/dev/null`, `/dev/stdout` or `/dev/stderr` are fine.
pub(crate) fn redirect_opacity(operator: &str, target: Option<Word>) -> Option<Opacity> {
    if !operator.contains('>') {
        return None;
    }
    // `>&-` closes a descriptor; a write without a target is a parse error.
    let target = target?;
    let value = target.lit();
    let is_fd = |v: &str| v == "-" || (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
    let duplicates = matches!(operator, ">&" | "<&") && value.is_some_and(is_fd);
    let harmless = matches!(value, Some("/dev/null" | "/dev/stdout" | "/dev/stderr"));
    (!duplicates && !harmless).then_some(Opacity::Redirect(target.raw))
}

/// A locale or display variable: assigning it before a command cannot
/// change which program runs or what it may touch.
pub(crate) fn is_locale(name: &str) -> bool {
    matches!(name, "LANG" | "LANGUAGE" | "TZ" | "NO_COLOR" | "LC_ALL")
        || name.strip_prefix("LC_").is_some_and(|rest| {
            !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
        })
}

/// Whether a variable set by a loop or a builtin such as `read` could
/// change what later commands do. The variables that steer the shell and
/// programs (`PATH`, `IFS`, `LD_PRELOAD`, `BASH_ENV`, `HOME` …) are all
/// upper case, so a name with a lower-case letter (`f`, `line`) is taken as
/// a plain local; any other name, except a locale one, makes the line
/// opaque. A statement assignment (`x=1`) is stricter: it is always opaque.
pub(crate) fn may_matter(name: &str) -> bool {
    !is_locale(name) && !name.bytes().any(|b| b.is_ascii_lowercase())
}
