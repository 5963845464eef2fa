//! The paths a command names, for path rules (`Read(…)`, `Edit(…)`).
//!
//! A deny rule such as `Read(~/.ssh/**)` must hold for `cat ~/.ssh/id_rsa`
//! as it does for the read tool. For each command this module lists the
//! words that name files it reads or writes:
//!
//! * programs that read their operands (`cat head tail less grep rg sed
//!   awk base64 xxd od strings diff jq …`), skipping a pattern or script
//!   given as the first operand (`grep PATTERN FILE`, `sed SCRIPT FILE`)
//!   and the values of options that take one (`head -n 5`);
//! * programs that write: the targets of `tee`, `touch`, `mkdir`, `rm`,
//!   `sed -i`, the last operand of `cp`, `mv`, `ln`, `install`, `rsync`,
//!   `scp`, every operand of `mv` (its sources disappear), `dd of=`, and
//!   the archives of `tar c`/`zip`;
//! * readers that walk folders (`grep -r`, `rg`, `find`, `cp -r`, `tar c`,
//!   `zip -r`, `du`): their paths are marked recursive, with `.` when they
//!   name none;
//! * for any other program, every argument that looks like a path (it
//!   starts with `/`, `~`, `./` or `../`, or holds a `/`), and the value
//!   of a `--name=PATH` option, counted as read.
//!
//! Redirect targets are added by the walk (`<` reads, `>` writes). A word
//! built from an expansion is listed as not known, except `$HOME` and
//! `${HOME}` at its start, which are written as `~`; an unquoted glob is
//! marked so the tool can expand it. Listing a word that is not a path
//! (`echo a/b`) only makes a rule stricter.

use crate::resolve::{Vars, literal_words};
use crate::words::{Word, basename};

/// Whether a command reads or writes a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// A path a command names, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathArg {
    /// The path: quotes removed, `$HOME`/`${HOME}` written as `~`.
    pub text: String,
    pub access: Access,
    /// The command walks the folder (`grep -r`, `find`, `cp -r`).
    pub recursive: bool,
    /// It follows links while walking (`grep -R`, `find -L`, `rg -L`,
    /// `diff -r`), so what links inside point at is read too.
    pub follows: bool,
    /// The text is what the command gets: no expansion cox cannot follow.
    pub known: bool,
    /// An unquoted `*`, `?` or `[` the shell expands.
    pub glob: bool,
    /// Named by `ln` itself (the link it makes, or its target).
    pub by_ln: bool,
}

impl PathArg {
    fn from_word(word: &Word, access: Access, recursive: bool) -> Option<PathArg> {
        let (text, known) = match word.lit() {
            Some(value) => (value.to_owned(), true),
            None => match home_prefixed(&word.raw) {
                Some(text) => (text, true),
                None => (word.raw.clone(), false),
            },
        };
        if text.is_empty() || text == "-" || is_harmless_device(&text) {
            return None;
        }
        Some(PathArg {
            text,
            access,
            recursive,
            follows: false,
            known,
            glob: word.pattern,
            by_ln: false,
        })
    }

    /// What a command gets from `xargs`: only known when it runs.
    pub(crate) fn from_input() -> PathArg {
        PathArg {
            text: "(the words xargs reads)".to_owned(),
            access: Access::Read,
            recursive: false,
            follows: false,
            known: false,
            glob: false,
            by_ln: false,
        }
    }

    /// The working folder, walked following links: what `find . | xargs
    /// cat` may read.
    pub(crate) fn walked_here() -> PathArg {
        PathArg {
            follows: true,
            ..PathArg::here(true)
        }
    }

    /// A redirect's target.
    pub(crate) fn redirect(word: &Word, access: Access) -> Option<PathArg> {
        PathArg::from_word(word, access, false)
    }

    /// A path cox adds itself (the `.` a recursive reader walks by default).
    fn here(recursive: bool) -> PathArg {
        PathArg {
            text: ".".to_owned(),
            access: Access::Read,
            recursive,
            follows: false,
            known: true,
            glob: false,
            by_ln: false,
        }
    }
}

/// A word as the words bash makes of it when cox can tell: brace groups
/// expanded (`{~,x}/.ssh` is `~/.ssh x/.ssh`), `$HOME`-like and assigned
/// variables resolved; otherwise the word itself.
fn expand_word(word: &Word, vars: &Vars) -> Vec<Word> {
    if word.lit().is_some() && !word.raw.contains('{') {
        return vec![word.clone()];
    }
    let raw = home_variables(&word.raw);
    match literal_words(&raw, vars) {
        Some(values) if !values.is_empty() => values
            .into_iter()
            .map(|v| {
                // An unquoted expansion is globbed too.
                let glob =
                    v.contains(['*', '?', '[']) && (word.pattern || !word.raw.starts_with('"'));
                Word {
                    pattern: glob,
                    ..Word::plain(&v)
                }
            })
            .collect(),
        _ => vec![word.clone()],
    }
}

/// `$HOME`, `${HOME}`, `${HOME%/}`, `${HOME:-…}`, `~+` and `$PWD` written
/// as cox resolves them: `~` and `.` (a later `cd` is the tool's job).
fn home_variables(raw: &str) -> String {
    let mut out = raw.to_owned();
    for (from, to) in [
        ("${HOME%/}", "~"),
        ("${HOME}", "~"),
        ("$HOME", "~"),
        ("${PWD}", "."),
        ("$PWD", "."),
        ("~+", "."),
    ] {
        out = out.replace(from, to);
    }
    // `${HOME:-x}`, `${HOME-x}`: HOME is set.
    while let Some(at) = out.find("${HOME:-").or_else(|| out.find("${HOME-")) {
        let Some(end) = out[at..].find('}') else {
            break;
        };
        out.replace_range(at..at + end + 1, "~");
    }
    out
}

/// Device files that hold nothing a rule protects.
pub(crate) fn is_harmless_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/stdin" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
    ) || path.strip_prefix("/dev/fd/").is_some_and(is_number)
        || path.strip_prefix("/proc/self/fd/").is_some_and(is_number)
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `$HOME/x`, `${HOME}/x`, `"$HOME"/x`, `"${HOME}/x"` as `~/x`, when the
/// rest is a plain literal.
fn home_prefixed(raw: &str) -> Option<String> {
    let unquoted = raw.replace('"', "");
    let rest = unquoted
        .strip_prefix("${HOME}")
        .or_else(|| unquoted.strip_prefix("$HOME"))?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    if rest.contains(['$', '`', '\'', '\\', '*', '?', '[']) {
        return None;
    }
    Some(format!("~{rest}"))
}

/// How a program treats its operands.
#[derive(Clone, Copy)]
enum Shape {
    /// Every operand is read.
    Reads,
    /// The first operand is a pattern unless `-e`/`-f` gave one.
    PatternFirst,
    /// The first operand is a script unless `-e`/`-f` gave one (`sed`,
    /// `awk`); `sed -i` writes its files.
    ScriptFirst,
    /// `find`: the operands before the first expression.
    Find,
    /// All operands but the last are read, the last written (`cp`).
    Copy,
    /// Every operand is written (`mv`'s sources disappear).
    Move,
    /// Every operand is written.
    Writes,
    /// The first operand is a mode or owner, the rest written.
    Modes,
    /// The first operand is read, a second one written (`uniq`, `xxd`).
    ReadThenWrite,
    /// The first operand is a filter, the rest read (`jq`).
    FilterFirst,
    /// `dd if=… of=…`.
    Dd,
    /// `tar`.
    Tar,
    /// `zip ARCHIVE FILES`.
    Zip,
    /// No operand names a file (`date +%F`); only option values may.
    Options,
}

/// The shape of `program`, its short options that take a value, and
/// whether it walks folders always (`rg`, `find`, `du`).
fn shape(program: &str) -> Option<(Shape, &'static str, bool)> {
    // The short options listed take a value. An option missing here only
    // makes its value count as a path too (stricter); one listed wrongly
    // would hide a path, so only options known to take one are listed.
    Some(match program {
        "cat" | "tac" | "wc" | "comm" | "rev" | "md5sum" | "sha1sum" | "sha224sum"
        | "sha256sum" | "sha384sum" | "sha512sum" | "b2sum" | "cksum" | "sum" | "cmp"
        | "readlink" | "realpath" | "zcat" | "bzcat" | "xzcat" | "zless" | "zmore" | "lz4cat"
        | "zstdcat" | "source" | "." | "shellcheck" | "gunzip" | "unxz" | "bunzip2" | "zipinfo"
        | "expand" | "unexpand" | "more" | "most" | "yq" | "csplit" | "sdiff" | "diff3" => {
            (Shape::Reads, "", false)
        }
        "head" | "tail" => (Shape::Reads, "ncs", false),
        "cut" => (Shape::Reads, "bcdf", false),
        "sort" => (Shape::Reads, "kotST", false),
        "od" => (Shape::Reads, "AjNSstw", false),
        "base32" | "base64" | "basenc" | "fold" => (Shape::Reads, "w", false),
        "nl" => (Shape::Reads, "bdfhilnpsvw", false),
        "diff" => (Shape::Reads, "CUIxXFLSW", false),
        "file" => (Shape::Reads, "fFmeP", false),
        "stat" => (Shape::Reads, "c", false),
        "ls" => (Shape::Reads, "ITw", false),
        "tree" => (Shape::Reads, "LIPo", false),
        "column" => (Shape::Reads, "cstoNR", false),
        "strings" => (Shape::Reads, "ntTe", false),
        "fmt" => (Shape::Reads, "wpg", false),
        "pr" => (Shape::Reads, "hlwWoNs", false),
        "paste" => (Shape::Reads, "d", false),
        "join" => (Shape::Reads, "12jote", false),
        "split" => (Shape::Reads, "abln", false),
        "less" => (Shape::Reads, "bhjkoOpPtTxyz", false),
        "iconv" => (Shape::Reads, "fto", false),
        "hexdump" => (Shape::Reads, "enfs", false),
        "bat" => (Shape::Reads, "lmHrL", false),
        "du" => (Shape::Reads, "dBXt", true),
        "grep" | "egrep" | "fgrep" | "zgrep" | "ack" | "ag" => {
            (Shape::PatternFirst, "efmABCdD", false)
        }
        "rg" => (Shape::PatternFirst, "efmABCgtTjMEr", true),
        "sed" | "gsed" => (Shape::ScriptFirst, "efl", false),
        "awk" | "gawk" | "mawk" | "nawk" => (Shape::ScriptFirst, "fvF", false),
        "find" => (Shape::Find, "", true),
        "cp" | "ln" => (Shape::Copy, "tS", false),
        "install" => (Shape::Copy, "tSmog", false),
        "rsync" => (Shape::Copy, "eT", false),
        "scp" => (Shape::Copy, "cFiJlmoPS", false),
        "mv" => (Shape::Move, "tS", false),
        "touch" => (Shape::Writes, "dtr", false),
        "mkdir" => (Shape::Writes, "m", false),
        "truncate" => (Shape::Writes, "sr", false),
        "shred" => (Shape::Writes, "ns", false),
        "tee" | "rmdir" | "rm" | "unlink" | "mkfifo" | "mknod" => (Shape::Writes, "", false),
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => (Shape::Modes, "", false),
        "uniq" => (Shape::ReadThenWrite, "fsw", false),
        "xxd" => (Shape::ReadThenWrite, "cglos", false),
        "jq" | "gojq" => (Shape::FilterFirst, "fL", false),
        "dd" => (Shape::Dd, "", false),
        "tar" | "gtar" | "bsdtar" => (Shape::Tar, "fCbTX", false),
        "zip" => (Shape::Zip, "bnt", false),
        "date" => (Shape::Options, "dfrs", false),
        _ => return None,
    })
}

/// Programs whose arguments are never files they open.
fn names_no_files(program: &str) -> bool {
    matches!(
        program,
        "echo"
            | "printf"
            | "basename"
            | "dirname"
            | "which"
            | "type"
            | "command"
            | "seq"
            | "sleep"
            | "expr"
            | "test"
            | "["
            | "[["
            | "true"
            | "false"
            | ":"
            | "kill"
            | "id"
            | "whoami"
            | "uname"
            | "export"
            | "unset"
            | "alias"
            | "hash"
            | "cd"
            | "pushd"
            | "popd"
    )
}

/// The long options of `program` that take a value, as a separate word
/// too (`--target-directory DIR`); GNU's abbreviations (`--target DIR`)
/// are read as the option they start.
fn long_values(program: &str) -> &'static [&'static str] {
    match program {
        "cp" | "mv" | "ln" | "install" => &["target-directory", "suffix"],
        "date" => &["date", "file", "reference", "set"],
        "touch" => &["date", "reference"],
        "truncate" => &["reference", "size"],
        "chmod" | "chown" | "chgrp" => &["reference"],
        _ => &[],
    }
}

/// Options whose value is always a file, whatever it looks like.
const FILE_OPTIONS: [&str; 6] = ["o", "output", "file", "f", "reference", "target-directory"];

/// The paths one command (wrappers already stripped) names.
pub(crate) fn of_command(words: &[Word], vars: &Vars) -> Vec<PathArg> {
    let Some((name, args)) = words.split_first() else {
        return Vec::new();
    };
    let program = name.lit().map(basename).unwrap_or_default();
    if names_no_files(program) {
        return Vec::new();
    }
    // Brace expansion, and words cox can work out (`d=~/.ssh; cat $d/k`,
    // `${HOME:-x}`), before anything else.
    let expanded: Vec<Word> = args.iter().flat_map(|w| expand_word(w, vars)).collect();
    let args = expanded.as_slice();
    let Some((shape, values, always_recursive)) = shape(program) else {
        return generic(args);
    };
    let parsed = Parsed::read(args, values, long_values(program));
    let recursive = always_recursive || parsed.recursive();
    let read = |w: &Word| PathArg::from_word(w, Access::Read, recursive);
    let write = |w: &Word| PathArg::from_word(w, Access::Write, false);
    let operands = &parsed.operands;
    let mut out: Vec<PathArg> = Vec::new();
    match shape {
        Shape::Reads => out.extend(operands.iter().filter_map(|w| read(w))),
        Shape::PatternFirst => {
            let skip = usize::from(!parsed.has_any(&["e", "f", "regexp", "file"]));
            out.extend(operands.iter().skip(skip).filter_map(|w| read(w)));
            out.extend(parsed.values_of(&["f", "file"]).filter_map(&read));
            if recursive && operands.len() <= skip {
                out.push(PathArg::here(true));
            }
        }
        Shape::ScriptFirst => {
            let given = parsed.has_any(&["e", "f", "expression", "file"]);
            let skip = usize::from(!given);
            let in_place = program.ends_with("sed") && parsed.has_any(&["i", "in-place"]);
            for word in operands.iter().skip(skip) {
                out.extend(read(word));
                if in_place {
                    out.extend(write(word));
                }
            }
            out.extend(parsed.values_of(&["f", "file"]).filter_map(&read));
        }
        Shape::Find => {
            let starts = args
                .iter()
                .take_while(|w| {
                    !w.lit()
                        .is_some_and(|v| v.starts_with('-') || matches!(v, "(" | "!" | ","))
                })
                .filter_map(&read)
                .collect::<Vec<_>>();
            if starts.is_empty() {
                out.push(PathArg::here(true));
            }
            out.extend(starts);
        }
        Shape::Copy => {
            let target = parsed.values_of(&["t", "target-directory"]).next();
            let (sources, last) = match target {
                Some(target) => (&operands[..], Some(target)),
                None => match operands.split_last() {
                    Some((last, sources)) => (sources, Some(*last)),
                    None => (&operands[..], None),
                },
            };
            let recursive = recursive || program == "rsync" || program == "scp";
            out.extend(
                sources
                    .iter()
                    .filter_map(|w| PathArg::from_word(w, Access::Read, recursive)),
            );
            if let Some(target) = last.filter(|t| remote_or(t, write).is_some()) {
                out.extend(write(target));
                out.extend(into_folder(target, sources));
            }
        }
        Shape::Move => {
            out.extend(operands.iter().filter_map(|w| write(w)));
            match parsed.values_of(&["t", "target-directory"]).next() {
                Some(target) => {
                    out.extend(write(target));
                    out.extend(into_folder(target, operands));
                }
                None => {
                    if let Some((last, sources)) = operands.split_last() {
                        out.extend(into_folder(last, sources));
                    }
                }
            }
        }
        Shape::Options => {}
        Shape::Writes => out.extend(operands.iter().filter_map(|w| write(w))),
        Shape::Modes => out.extend(operands.iter().skip(1).filter_map(|w| write(w))),
        Shape::ReadThenWrite => {
            out.extend(operands.first().and_then(|w| read(w)));
            out.extend(operands.get(1).and_then(|w| write(w)));
        }
        Shape::FilterFirst => {
            let skip = usize::from(!parsed.has_any(&["f", "from-file"]));
            out.extend(operands.iter().skip(skip).filter_map(|w| read(w)));
            out.extend(
                parsed
                    .values_of(&["f", "from-file", "rawfile", "slurpfile"])
                    .filter_map(&read),
            );
        }
        Shape::Dd => {
            for word in args {
                let Some(value) = word.lit() else { continue };
                if let Some(path) = value.strip_prefix("if=") {
                    out.extend(PathArg::from_word(&Word::plain(path), Access::Read, false));
                } else if let Some(path) = value.strip_prefix("of=") {
                    out.extend(PathArg::from_word(&Word::plain(path), Access::Write, false));
                }
            }
        }
        Shape::Tar => out.extend(tar(args, &parsed)),
        Shape::Zip => {
            out.extend(operands.first().and_then(|w| write(w)));
            out.extend(operands.iter().skip(1).filter_map(|w| read(w)));
        }
    }
    // Option values that name files for any program: `--file=x`, `-o x`.
    let attached = parsed.attached.iter().map(|(o, w)| (o, w));
    for (option, word) in parsed.valued.iter().map(|(o, w)| (o, *w)).chain(attached) {
        let access = if matches!(option.as_str(), "o" | "output" | "target-directory")
            || (option == "t" && matches!(shape, Shape::Copy | Shape::Move))
        {
            Access::Write
        } else {
            Access::Read
        };
        if looks_like_path(word)
            || FILE_OPTIONS.contains(&option.as_str())
            || (program == "date" && option == "r")
            || (matches!(program, "touch" | "truncate") && option == "r")
        {
            out.extend(PathArg::from_word(word, access, false));
        }
    }
    let follows = match program {
        "grep" | "egrep" | "fgrep" | "zgrep" => parsed.has_any(&["R", "dereference-recursive"]),
        "rg" => parsed.has_any(&["L", "follow"]),
        "find" => args
            .iter()
            .any(|w| matches!(w.lit(), Some("-L" | "-H" | "-follow"))),
        "cp" | "rsync" | "scp" | "install" => {
            parsed.has_any(&["L", "dereference", "copy-links", "copy-unsafe-links"])
        }
        "diff" => !parsed.has_any(&["no-dereference"]),
        "du" | "ls" | "tree" | "tar" | "zip" => parsed.has_any(&["L", "h", "l", "dereference"]),
        _ => false,
    };
    for path in &mut out {
        path.follows = path.recursive && follows;
        path.by_ln = program == "ln";
    }
    let mut unique: Vec<PathArg> = Vec::with_capacity(out.len());
    for path in out {
        if !unique.contains(&path) {
            unique.push(path);
        }
    }
    unique
}

/// `tar`: in create mode (`c`, also `r`/`u`) the archive is written and
/// the files read (recursively); otherwise the archive is read and the
/// files written under `-C DIR` (or `.`).
fn tar(args: &[Word], parsed: &Parsed<'_>) -> Vec<PathArg> {
    let mode = args
        .first()
        .and_then(Word::lit)
        .map(|m| m.trim_start_matches('-'))
        .unwrap_or_default();
    let creates = mode.contains(['c', 'r', 'u'])
        || parsed.has_any(&["c", "create", "append", "update", "r", "u"]);
    let mut out = Vec::new();
    // `tar czf ARCHIVE …`: a mode without a dash is the first operand, and
    // its `f` takes the next one.
    let dashless = args
        .first()
        .and_then(Word::lit)
        .is_some_and(|m| !m.starts_with('-'));
    let bundled = dashless && mode.contains('f');
    let archive = parsed
        .values_of(&["f", "file"])
        .next()
        .or_else(|| bundled.then(|| parsed.operands.get(1).copied()).flatten());
    let skip = usize::from(dashless) + usize::from(bundled);
    let operands = parsed.operands.iter().skip(skip);
    if creates {
        out.extend(archive.and_then(|w| PathArg::from_word(w, Access::Write, false)));
        out.extend(operands.filter_map(|w| PathArg::from_word(w, Access::Read, true)));
    } else {
        out.extend(archive.and_then(|w| PathArg::from_word(w, Access::Read, false)));
        let dir = parsed.values_of(&["C", "directory"]).next();
        match dir {
            Some(dir) => out.extend(PathArg::from_word(dir, Access::Write, true)),
            None => out.push(PathArg {
                access: Access::Write,
                ..PathArg::here(true)
            }),
        }
    }
    out
}

/// What `cp`/`mv` write when their target is a folder (it may be: only
/// the file system knows): `TARGET/NAME` for each source.
fn into_folder(target: &Word, sources: &[&Word]) -> Vec<PathArg> {
    let Some(folder) = target.lit() else {
        return Vec::new();
    };
    sources
        .iter()
        .filter_map(|source| {
            let name = basename(source.lit()?.trim_end_matches('/'));
            let path = format!("{}/{name}", folder.trim_end_matches('/'));
            (!name.is_empty())
                .then(|| PathArg::from_word(&Word::plain(&path), Access::Write, false))?
        })
        .collect()
}

/// A target that names another host (`host:path`, `user@host:path`) is
/// not a local path.
fn remote_or(word: &Word, local: impl Fn(&Word) -> Option<PathArg>) -> Option<PathArg> {
    let value = word.value();
    let remote = value
        .split_once(':')
        .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'));
    if remote { None } else { local(word) }
}

/// For a program this module does not know: every argument that looks
/// like a path, and `--name=PATH` values, as reads.
fn generic(args: &[Word]) -> Vec<PathArg> {
    let mut out = Vec::new();
    for word in args {
        // curl's `-d @FILE`, `-F name=@FILE`.
        if let Some(value) = word.lit()
            && let Some((_, file)) = value
                .split_once('@')
                .filter(|(before, _)| before.is_empty() || before.ends_with('='))
        {
            out.extend(PathArg::from_word(&Word::plain(file), Access::Read, false));
            continue;
        }
        if let Some((_, value)) = word
            .lit()
            .filter(|v| v.starts_with("--"))
            .and_then(|v| v.split_once('='))
        {
            let value = Word::plain(value);
            if looks_like_path(&value) {
                out.extend(PathArg::from_word(&value, Access::Read, false));
            }
            continue;
        }
        if looks_like_path(word) {
            out.extend(PathArg::from_word(word, Access::Read, false));
        }
    }
    out
}

/// Whether a word looks like a path rather than a plain name or an option.
fn looks_like_path(word: &Word) -> bool {
    let value = word.lit().unwrap_or(&word.raw);
    let raw = &word.raw;
    (value.starts_with('/')
        || value.starts_with('~')
        || value.starts_with("./")
        || value.starts_with("../")
        || (value.contains('/')
            && !value.starts_with('-')
            && !value.contains("://")
            // A shell string (`sh -c 'cat a/b'`) is parsed on its own.
            && !value.contains(char::is_whitespace)))
        || raw.starts_with("$HOME")
        || raw.starts_with("${HOME}")
        || raw.starts_with("\"$HOME")
        || raw.starts_with("\"${HOME}")
}

/// A command's arguments read like a GNU program's: options (with the
/// values of those that take one) and operands.
struct Parsed<'w> {
    /// Option names seen: letters of short clusters, long names.
    seen: Vec<String>,
    /// Options with their value word.
    valued: Vec<(String, &'w Word)>,
    operands: Vec<&'w Word>,
    /// Values attached to options (`-fFILE`, `--file=F`), as words.
    attached: Vec<(String, Word)>,
}

impl<'w> Parsed<'w> {
    /// Reads `args`; `values` lists the short options that take a value,
    /// `long` the long ones (which may be abbreviated).
    fn read(args: &'w [Word], values: &str, long: &[&str]) -> Parsed<'w> {
        let mut parsed = Parsed {
            seen: Vec::new(),
            valued: Vec::new(),
            operands: Vec::new(),
            attached: Vec::new(),
        };
        let mut i = 0;
        let mut options_done = false;
        while let Some(word) = args.get(i) {
            i += 1;
            let value = word.lit().unwrap_or(&word.raw);
            if options_done || !value.starts_with('-') || value == "-" {
                parsed.operands.push(word);
                continue;
            }
            if value == "--" {
                options_done = true;
                continue;
            }
            if let Some(given) = value.strip_prefix("--") {
                let (name, attached) = match given.split_once('=') {
                    Some((name, v)) => (name, Some(v)),
                    None => (given, None),
                };
                // `--target DIR` is `--target-directory DIR`.
                let name = long
                    .iter()
                    .find(|l| !name.is_empty() && l.starts_with(name))
                    .map_or(name, |l| *l);
                parsed.seen.push(name.to_owned());
                match attached {
                    Some(v) => parsed.attached.push((name.to_owned(), Word::plain(v))),
                    None if long.contains(&name) => {
                        if let Some(next) = args.get(i) {
                            parsed.valued.push((name.to_owned(), next));
                            i += 1;
                        }
                    }
                    None => {}
                }
                continue;
            }
            for (at, letter) in value.char_indices().skip(1) {
                parsed.seen.push(letter.to_string());
                if values.contains(letter) {
                    let rest = &value[at + letter.len_utf8()..];
                    if rest.is_empty() {
                        if let Some(next) = args.get(i) {
                            parsed.valued.push((letter.to_string(), next));
                            i += 1;
                        }
                    } else {
                        parsed
                            .attached
                            .push((letter.to_string(), Word::plain(rest)));
                    }
                    break;
                }
            }
        }
        parsed
    }

    fn has_any(&self, names: &[&str]) -> bool {
        self.seen.iter().any(|s| names.contains(&s.as_str()))
    }

    /// Whether a recursion option was given (`-r`, `-R`, `-a`,
    /// `--recursive`, `-d recurse`).
    fn recursive(&self) -> bool {
        self.has_any(&[
            "r",
            "R",
            "a",
            "recursive",
            "dereference-recursive",
            "archive",
        ]) || self
            .valued
            .iter()
            .any(|(o, w)| o == "d" && w.lit() == Some("recurse"))
    }

    /// The values given to these options, separate or attached.
    fn values_of<'s>(&'s self, names: &'s [&'s str]) -> impl Iterator<Item = &'s Word> + 's {
        let separate = self
            .valued
            .iter()
            .filter(|(o, _)| names.contains(&o.as_str()))
            .map(|(_, w)| *w);
        let attached = self
            .attached
            .iter()
            .filter(|(o, _)| names.contains(&o.as_str()))
            .map(|(_, w)| w);
        separate.chain(attached)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(words: &[&str]) -> Vec<(String, Access, bool)> {
        let words: Vec<Word> = words.iter().map(|w| Word::plain(w)).collect();
        of_command(&words, &Vars::default())
            .into_iter()
            .map(|p| (p.text, p.access, p.recursive))
            .collect()
    }

    use Access::{Read, Write};

    #[test]
    fn readers_and_their_options() {
        assert_eq!(
            paths(&["cat", "~/.ssh/id_rsa"]),
            [("~/.ssh/id_rsa".into(), Read, false)]
        );
        assert_eq!(
            paths(&["head", "-n", "5", "a"]),
            [("a".into(), Read, false)]
        );
        assert_eq!(
            paths(&["grep", "-r", "key", "src"]),
            [("src".into(), Read, true)]
        );
        assert_eq!(paths(&["grep", "-r", "key"]), [(".".into(), Read, true)]);
        assert_eq!(
            paths(&["grep", "-e", "k", "f"]),
            [("f".into(), Read, false)]
        );
        assert_eq!(paths(&["rg", "key"]), [(".".into(), Read, true)]);
        assert_eq!(
            paths(&["sed", "-n", "1p", "f"]),
            [("f".into(), Read, false)]
        );
        assert_eq!(
            paths(&["sed", "-i", "s/a/b/", "f"]),
            [("f".into(), Read, false), ("f".into(), Write, false)]
        );
        assert_eq!(
            paths(&["find", "~/.aws", "-name", "x"]),
            [("~/.aws".into(), Read, true)]
        );
        assert_eq!(paths(&["find", "-name", "x"]), [(".".into(), Read, true)]);
        assert_eq!(
            paths(&["jq", ".a", "f.json"]),
            [("f.json".into(), Read, false)]
        );
    }

    #[test]
    fn writers() {
        assert_eq!(
            paths(&["cp", "-r", "a", "b", "dst"]),
            [
                ("a".into(), Read, true),
                ("b".into(), Read, true),
                ("dst".into(), Write, false),
                ("dst/a".into(), Write, false),
                ("dst/b".into(), Write, false)
            ]
        );
        assert_eq!(paths(&["cp", "a", "host:x"]), [("a".into(), Read, false)]);
        assert_eq!(
            paths(&["mv", "a", "b"]),
            [
                ("a".into(), Write, false),
                ("b".into(), Write, false),
                ("b/a".into(), Write, false)
            ]
        );
        assert_eq!(paths(&["tee", "-a", "log"]), [("log".into(), Write, false)]);
        assert_eq!(paths(&["chmod", "600", "k"]), [("k".into(), Write, false)]);
        assert_eq!(
            paths(&["dd", "if=~/.ssh/k", "of=x"]),
            [("~/.ssh/k".into(), Read, false), ("x".into(), Write, false)]
        );
        assert_eq!(
            paths(&["tar", "czf", "out.tgz", "~/.ssh"]),
            [
                ("out.tgz".into(), Write, false),
                ("~/.ssh".into(), Read, true)
            ]
        );
        assert_eq!(
            paths(&["tar", "-xf", "a.tar", "-C", "dir"]),
            [("a.tar".into(), Read, false), ("dir".into(), Write, true)]
        );
    }

    #[test]
    fn other_programs_by_the_look_of_their_words() {
        assert_eq!(
            paths(&["python3", "x.py", "~/.ssh/id_rsa", "plain"]),
            [("~/.ssh/id_rsa".into(), Read, false)]
        );
        assert_eq!(
            paths(&[
                "curl",
                "-d",
                "@/etc/passwd",
                "--config=/tmp/c",
                "https://x/y"
            ]),
            [
                ("/etc/passwd".into(), Read, false),
                ("/tmp/c".into(), Read, false)
            ]
        );
        assert_eq!(paths(&["echo", "hi"]), []);
    }

    #[test]
    fn home_variables_are_written_as_tilde() {
        assert_eq!(home_prefixed("$HOME/.ssh/k").as_deref(), Some("~/.ssh/k"));
        assert_eq!(home_prefixed("\"${HOME}\"/.ssh").as_deref(), Some("~/.ssh"));
        assert_eq!(home_prefixed("\"$HOME/.aws\"").as_deref(), Some("~/.aws"));
        assert_eq!(home_prefixed("$HOMEX/a"), None);
        assert_eq!(home_prefixed("$HOME/$x"), None);
    }
}
