//! Option tables for the wrappers and runners, and their parser.
//!
//! Options are parsed GNU style: clusters of short flags (`-lc`), a short
//! option's value attached or in the next word (`-n10`, `-n 10`), long
//! options with `=value` or the next word, `--` ending options. An option
//! not in a table, or a word with an expansion where an option could be, is
//! reported, so the walk does not trust where the command starts (see
//! [`crate::Opacity::UnknownOption`]). Long options must be written in
//! full: GNU's unique abbreviations (`--sig`) count as unknown.

use crate::words::Word;

/// The options a wrapper takes.
#[derive(Default)]
pub(crate) struct Spec {
    /// Short flags without a value.
    pub flags: &'static str,
    /// Short options that take a value (attached or the next word).
    pub values: &'static str,
    /// Short options whose value, if any, is attached (`xargs -i{}`).
    pub attached: &'static str,
    /// Long options without a value (`--name=value` is accepted too).
    pub long_flags: &'static [&'static str],
    /// Long options that take a value.
    pub long_values: &'static [&'static str],
    /// `-10` is an option (nice).
    pub numeric: bool,
}

impl Spec {
    /// No options at all; the base for tables written with `..`.
    pub(crate) const NONE: Spec = Spec {
        flags: "",
        values: "",
        attached: "",
        long_flags: &[],
        long_values: &[],
        numeric: false,
    };
}

/// The outcome of parsing a wrapper's options.
pub(crate) struct Parsed {
    /// Index of the first operand.
    pub end: usize,
    /// The short option letters and long option names seen.
    pub seen: Vec<String>,
    /// The first option not understood, as written. Parsing went on as if
    /// it were a flag without a value (the best guess).
    pub unknown: Option<String>,
}

impl Parsed {
    pub(crate) fn saw(&self, option: &str) -> bool {
        self.seen.iter().any(|s| s == option)
    }
}

/// Parses options from `words[1..]`. A word with an expansion where an
/// option could be ends the options and is reported as unknown.
pub(crate) fn parse_options(words: &[Word], spec: &Spec) -> Parsed {
    let mut parsed = Parsed {
        end: words.len(),
        seen: Vec::new(),
        unknown: None,
    };
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let Some(arg) = word.lit() else {
            parsed.unknown.get_or_insert_with(|| word.raw.clone());
            break;
        };
        if arg == "--" {
            i += 1;
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        i += 1;
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            if spec.long_values.contains(&name) {
                if !inline {
                    i += 1;
                }
            } else if !spec.long_flags.contains(&name) {
                parsed.unknown.get_or_insert_with(|| arg.to_owned());
            }
            parsed.seen.push(name.to_owned());
            continue;
        }
        let cluster = &arg[1..];
        if spec.numeric && cluster.bytes().all(|b| b.is_ascii_digit()) {
            parsed.seen.push(cluster.to_owned());
            continue;
        }
        for (at, letter) in cluster.char_indices() {
            parsed.seen.push(letter.to_string());
            let rest = &cluster[at + letter.len_utf8()..];
            if spec.values.contains(letter) {
                if rest.is_empty() {
                    i += 1;
                }
                break;
            }
            if spec.attached.contains(letter) {
                break;
            }
            if !spec.flags.contains(letter) {
                parsed.unknown.get_or_insert_with(|| arg.to_owned());
            }
        }
    }
    parsed.end = i.min(words.len());
    parsed
}

pub(crate) const TIMEOUT: Spec = Spec {
    flags: "v",
    values: "sk",
    attached: "",
    long_flags: &["preserve-status", "foreground", "verbose"],
    long_values: &["signal", "kill-after"],
    numeric: false,
};

pub(crate) const TIME: Spec = Spec {
    flags: "pvqa",
    values: "fo",
    attached: "",
    long_flags: &["portability", "verbose", "quiet", "append"],
    long_values: &["format", "output"],
    numeric: false,
};

pub(crate) const NICE: Spec = Spec {
    flags: "",
    values: "n",
    attached: "",
    long_flags: &[],
    long_values: &["adjustment"],
    numeric: true,
};

pub(crate) const STDBUF: Spec = Spec {
    flags: "",
    values: "ioe",
    attached: "",
    long_flags: &[],
    long_values: &["input", "output", "error"],
    numeric: false,
};

pub(crate) const COMMAND: Spec = Spec {
    flags: "pvV",
    values: "",
    attached: "",
    long_flags: &[],
    long_values: &[],
    numeric: false,
};

pub(crate) const EXEC: Spec = Spec {
    flags: "cl",
    values: "a",
    attached: "",
    long_flags: &[],
    long_values: &[],
    numeric: false,
};

pub(crate) const ENV: Spec = Spec {
    flags: "i0v",
    values: "uC",
    attached: "",
    long_flags: &[
        "ignore-environment",
        "null",
        "debug",
        "default-signal",
        "ignore-signal",
        "block-signal",
        "list-signal-handling",
    ],
    long_values: &["unset", "chdir"],
    numeric: false,
};

pub(crate) const XARGS: Spec = Spec {
    flags: "0rtpxo",
    values: "adEILnPs",
    attached: "eil",
    long_flags: &[
        "null",
        "no-run-if-empty",
        "verbose",
        "interactive",
        "exit",
        "open-tty",
        "eof",
        "replace",
        "max-lines",
    ],
    long_values: &[
        "arg-file",
        "delimiter",
        "max-args",
        "max-procs",
        "max-chars",
        "process-slot-var",
    ],
    numeric: false,
};

pub(crate) const SUDO: Spec = Spec {
    flags: "AbBEHikKlnNPSsv",
    values: "CDghpRrTtUu",
    attached: "",
    long_flags: &[
        "askpass",
        "background",
        "bell",
        "preserve-env",
        "set-home",
        "login",
        "remove-timestamp",
        "reset-timestamp",
        "list",
        "non-interactive",
        "preserve-groups",
        "stdin",
        "shell",
        "validate",
    ],
    long_values: &[
        "close-from",
        "chdir",
        "group",
        "host",
        "prompt",
        "chroot",
        "role",
        "type",
        "command-timeout",
        "other-user",
        "user",
    ],
    numeric: false,
};

pub(crate) const DOAS: Spec = Spec {
    flags: "nsL",
    values: "uC",
    attached: "",
    long_flags: &[],
    long_values: &[],
    numeric: false,
};
