//! Code given inline to an interpreter, and options that run a program.
//!
//! * Interpreters with code on the command line (`python -c`, `perl -e`,
//!   `ruby -e`, `node -e/-p`, `php -r`, `lua -e`, `Rscript -e`, `julia
//!   -e`, `osascript -e`, `pwsh -c`, `deno eval`, `bun -e`), or reading it
//!   from standard input (`python3 <<EOF`, `echo … | perl`, `tclsh`):
//!   opaque ([`Opacity::InlineCode`]); they are Exec by `risk`.
//! * `vim` and its kin given an Ex command (`-c`, `--cmd`, `+CMD`) or a
//!   script of them (`-S`, `-s`): opaque the same way.
//! * `awk` whose program calls `system(` or pipes (`|`), and `sed` whose
//!   script has an `e` command or an `s///e` flag: opaque the same way.
//! * `tar --to-command`, `--use-compress-program`/`-I`, `--info-script`/
//!   `-F`, `--checkpoint-action` (and abbreviations): opaque
//!   ([`Opacity::Runner`]).
//! * `git -c`, `--config-env` and `--exec-path` (a pager, an editor, a
//!   hook path or any program could be set): opaque. `git rebase -x CMD`,
//!   `git submodule foreach CMD`, `git filter-branch --*-filter CMD` and
//!   `git difftool -x CMD` run a shell string, parsed again; `git bisect
//!   run CMD` lists the command.

use crate::Opacity;
use crate::sed;
use crate::words::Word;
use crate::wrappers::{Step, joined};

/// Looks at a command for inline code or an option that runs a program.
pub(crate) fn step(program: &str, words: &[Word]) -> Step {
    let inline = || Step::Opaque(Opacity::InlineCode(program.to_owned()));
    let family = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let found = match family {
        "git" => return git(words),
        "tar" | "gtar" | "bsdtar" => return tar(words),
        "sed" | "gsed" => sed::executes(words),
        "awk" | "gawk" | "mawk" | "nawk" => awk(words),
        "python" | "pypy" => PYTHON.reads_code(words),
        "perl" => PERL.reads_code(words),
        "ruby" | "jruby" => RUBY.reads_code(words),
        "node" | "nodejs" => NODE.reads_code(words),
        "php" => PHP.reads_code(words),
        "lua" | "luajit" => LUA.reads_code(words),
        "tclsh" | "wish" => Interpreter::default().reads_code(words),
        "Rscript" | "R" | "julia" | "osascript" | "elixir" => {
            words.iter().skip(1).any(|w| w.lit() == Some("-e"))
        }
        "bun" => words
            .iter()
            .skip(1)
            .any(|w| matches!(w.lit(), Some("-e" | "-p" | "--eval" | "--print"))),
        // `-c CMD`, `--cmd CMD`, `+CMD` run an Ex command (`:!rm x`, or
        // `system()`); `-S FILE` and `-s FILE` run a script of them.
        "vim" | "vi" | "nvim" | "gvim" | "ex" | "view" | "rvim" | "vimdiff" => {
            words.iter().skip(1).any(|w| {
                let arg = w.value();
                matches!(arg, "-c" | "--cmd" | "-S" | "-s") || arg.starts_with('+')
            })
        }
        "deno" => matches!(
            words.get(1).and_then(Word::lit),
            Some("eval" | "repl") | None
        ),
        "pwsh" | "powershell" => words.iter().skip(1).any(|w| {
            let arg = w.value().to_ascii_lowercase();
            matches!(
                arg.as_str(),
                "-c" | "-command" | "-encodedcommand" | "-ec" | "-e" | "/c"
            )
        }),
        _ => false,
    };
    if found { inline() } else { Step::Plain }
}

/// How an interpreter's command line gives it code.
#[derive(Default)]
struct Interpreter {
    /// Option letters whose value is code (`-c`, `-e`).
    inline: &'static str,
    /// Option letters that name what runs instead of a script operand
    /// (`python -m`, `php -f`).
    script: &'static str,
    /// Option letters that take the rest of their word or the next word.
    values: &'static str,
    /// Option letters that take the rest of their word only (`perl -i`).
    attached: &'static str,
    /// Option letters that take the digits right after them only (`perl
    /// -l`, so `-lane` is `-l -a -n -e`).
    digits: &'static str,
    /// Long options whose value is code.
    long_inline: &'static [&'static str],
    /// Long options that take the next word.
    long_values: &'static [&'static str],
}

const PYTHON: Interpreter = Interpreter {
    inline: "c",
    script: "m",
    values: "WXQ",
    attached: "",
    digits: "",
    long_inline: &[],
    long_values: &[],
};

const PERL: Interpreter = Interpreter {
    inline: "eE",
    script: "",
    values: "",
    attached: "MmIxiCFdDV",
    digits: "l0",
    long_inline: &[],
    long_values: &[],
};

const RUBY: Interpreter = Interpreter {
    inline: "e",
    script: "",
    values: "IrCEFT",
    attached: "x0Kl",
    digits: "",
    long_inline: &[],
    long_values: &[],
};

const NODE: Interpreter = Interpreter {
    inline: "ep",
    script: "",
    values: "rC",
    attached: "",
    digits: "",
    long_inline: &["eval", "print"],
    long_values: &[
        "require",
        "import",
        "loader",
        "experimental-loader",
        "conditions",
        "input-type",
    ],
};

const PHP: Interpreter = Interpreter {
    inline: "rRBE",
    script: "fF",
    values: "cdzt",
    attached: "",
    digits: "",
    long_inline: &[],
    long_values: &[],
};

const LUA: Interpreter = Interpreter {
    inline: "e",
    script: "",
    values: "l",
    attached: "",
    digits: "",
    long_inline: &[],
    long_values: &[],
};

impl Interpreter {
    /// Whether the command line gives code: an inline option, or no script
    /// at all, so the interpreter reads its standard input (`-` too).
    /// `--version`/`--help` alone run nothing.
    fn reads_code(&self, words: &[Word]) -> bool {
        if words.len() == 2
            && matches!(
                words[1].lit(),
                Some("-V" | "-v" | "--version" | "-version" | "-h" | "--help")
            )
        {
            return false;
        }
        let mut i = 1;
        while let Some(word) = words.get(i) {
            let Some(arg) = word.lit() else {
                // An expansion: an option or the script, not known.
                return true;
            };
            if arg == "--" {
                return words.get(i + 1).is_none();
            }
            if arg == "-" {
                return true;
            }
            if !arg.starts_with('-') {
                return false;
            }
            i += 1;
            if let Some(long) = arg.strip_prefix("--") {
                let (name, inline_value) = match long.split_once('=') {
                    Some((name, _)) => (name, true),
                    None => (long, false),
                };
                if self.long_inline.contains(&name) {
                    return true;
                }
                if self.long_values.contains(&name) && !inline_value {
                    i += 1;
                }
                continue;
            }
            let mut letters = arg.char_indices().skip(1).peekable();
            while let Some((at, letter)) = letters.next() {
                if self.digits.contains(letter) {
                    while letters.next_if(|(_, c)| c.is_ascii_digit()).is_some() {}
                    continue;
                }
                if self.inline.contains(letter) {
                    return true;
                }
                if self.script.contains(letter) {
                    return false;
                }
                if self.attached.contains(letter) {
                    break;
                }
                if self.values.contains(letter) {
                    if at + letter.len_utf8() == arg.len() {
                        i += 1;
                    }
                    break;
                }
            }
        }
        true
    }
}

/// An awk program that runs commands: `system(…)`, or a pipe to or from
/// one (`print | "sh"`, `"cmd" | getline`). A program from a file (`-f`)
/// is not seen.
fn awk(words: &[Word]) -> bool {
    let mut programs: Vec<&str> = Vec::new();
    let mut from_file = false;
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
        let value = |i: &mut usize, attached: &'_ str| -> Option<usize> {
            if attached.is_empty() {
                *i += 1;
                Some(*i - 1)
            } else {
                None
            }
        };
        if let Some(long) = arg.strip_prefix("--") {
            let (name, attached) = long.split_once('=').unwrap_or((long, ""));
            match name {
                "source" => match value(&mut i, attached) {
                    Some(at) => programs.extend(words.get(at).map(|w| w.loose.as_str())),
                    None => programs.push(attached),
                },
                "file" | "exec" | "include" | "load" => {
                    from_file |= name != "include" && name != "load";
                    let _ = value(&mut i, attached);
                }
                "assign" | "field-separator" => {
                    let _ = value(&mut i, attached);
                }
                _ => {}
            }
            continue;
        }
        let letter = arg[1..].chars().next().unwrap_or('-');
        let attached = &arg[1 + letter.len_utf8()..];
        match letter {
            'e' => match value(&mut i, attached) {
                Some(at) => programs.extend(words.get(at).map(|w| w.loose.as_str())),
                None => programs.push(attached),
            },
            'f' | 'E' => {
                from_file = true;
                let _ = value(&mut i, attached);
            }
            'F' | 'v' | 'i' | 'l' | 'W' => {
                let _ = value(&mut i, attached);
            }
            _ => {}
        }
    }
    if programs.is_empty() && !from_file {
        programs.extend(words.get(i).map(|w| w.loose.as_str()));
    }
    programs
        .iter()
        .any(|p| p.contains("system") || p.contains('|'))
}

/// tar options that run a program.
fn tar(words: &[Word]) -> Step {
    const RUNS: &[&str] = &[
        "to-command",
        "use-compress-program",
        "info-script",
        "new-volume-script",
        "checkpoint-action",
        "rsh-command",
        "rmt-command",
    ];
    let runs = words.iter().skip(1).enumerate().any(|(i, word)| {
        let arg = word.value();
        if let Some(long) = arg.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or_default();
            return name.len() >= 2 && RUNS.iter().any(|full| full.starts_with(name));
        }
        // `-I PROG` and `-F SCRIPT`, in a cluster or tar's old-style first
        // word (`tar xIf …`).
        let cluster = arg.strip_prefix('-').or((i == 0).then_some(arg));
        cluster.is_some_and(|c| c.contains(['I', 'F']))
    });
    if runs {
        Step::Opaque(Opacity::Runner("tar".to_owned()))
    } else {
        Step::Plain
    }
}

/// git's global options that can run a program, and the subcommands that
/// run a command given to them.
fn git(words: &[Word]) -> Step {
    let opaque = |what: &str| Step::Opaque(Opacity::Runner(format!("git {what}")));
    let mut i = 1;
    while let Some(arg) = words.get(i).and_then(Word::lit) {
        if !arg.starts_with('-') {
            break;
        }
        if arg.starts_with("-c")
            || arg.starts_with("--config-env")
            || arg.starts_with("--exec-path")
        {
            return opaque(arg.split('=').next().unwrap_or(arg));
        }
        let takes_value = matches!(
            arg,
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" | "--list-cmds"
        );
        i += if takes_value { 2 } else { 1 };
    }
    let sub = words.get(i).and_then(Word::lit);
    let rest = words.get(i + 1..).unwrap_or_default();
    let shell = |scripts: Vec<String>| {
        if scripts.is_empty() {
            Step::Plain
        } else {
            Step::Reparse(Opacity::ShellString, Some(scripts.join("\n")))
        }
    };
    match sub {
        Some("rebase") => shell(values_of(rest, &["-x", "--exec"])),
        Some("difftool" | "mergetool") => shell(values_of(rest, &["-x", "--extcmd"])),
        Some("filter-branch") => {
            let filters: Vec<&str> = [
                "--env-filter",
                "--tree-filter",
                "--index-filter",
                "--parent-filter",
                "--msg-filter",
                "--commit-filter",
                "--tag-name-filter",
            ]
            .to_vec();
            shell(values_of(rest, &filters))
        }
        Some("submodule") => match rest.iter().position(|w| w.lit() == Some("foreach")) {
            Some(at) => {
                let mut from = i + 2 + at;
                while matches!(
                    words.get(from).and_then(Word::lit),
                    Some("--recursive" | "-q" | "--quiet")
                ) {
                    from += 1;
                }
                shell(vec![joined(words, from)])
            }
            None => Step::Plain,
        },
        Some("bisect") if rest.first().and_then(Word::lit) == Some("run") => {
            Step::OpaqueRunner(Opacity::Runner("git bisect run".to_owned()), i + 2)
        }
        // The program git runs on the other side of a transport, through
        // a shell: `git fetch --upload-pack='rm x;' .`.
        Some("clone") => shell(values_of(rest, &["-u", "--upload-pack"])),
        Some("fetch" | "ls-remote" | "pull" | "fetch-pack" | "remote") => {
            shell(values_of(rest, &["--upload-pack", "--exec"]))
        }
        Some("push" | "send-pack") => shell(values_of(rest, &["--receive-pack", "--exec"])),
        Some("archive") => shell(values_of(rest, &["--exec"])),
        // Setting a key whose value git later runs as a program: this line
        // and every later git command run it.
        Some("config")
            if rest.iter().any(|w| runs_program(w.value())) && {
                let values: Vec<&str> = rest.iter().map(Word::value).collect();
                !crate::git::config_reads_only(&values)
            } =>
        {
            opaque("config")
        }
        // `git grep -O CMD` opens the matches with CMD.
        Some("grep")
            if rest.iter().any(|w| {
                let v = w.value();
                v.starts_with("--open-files-in-pager")
                    || (v.starts_with('-') && !v.starts_with("--") && v.contains('O'))
            }) =>
        {
            shell(values_of(rest, &["-O", "--open-files-in-pager"]))
        }
        // Output options that write a file, and diff drivers (external
        // programs) that a repository's config names.
        _ if rest.iter().any(|w| {
            let v = w.value();
            v.starts_with("--output") || matches!(v, "--ext-diff" | "--textconv")
        }) =>
        {
            opaque(sub.unwrap_or("option"))
        }
        _ => Step::Plain,
    }
}

/// Whether a git config key (as `git config KEY VALUE` names it) holds a
/// program git runs: the pager, the editor, hooks, diff and merge drivers,
/// filters, credential helpers, aliases, the ssh command.
fn runs_program(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let exact = [
        "core.pager",
        "core.editor",
        "core.fsmonitor",
        "core.hookspath",
        "core.sshcommand",
        "core.askpass",
        "diff.external",
        "sequence.editor",
        "gpg.program",
        "credential.helper",
        "include.path",
    ];
    exact.contains(&key.as_str())
        || key.starts_with("alias.")
        || key.starts_with("pager.")
        || key.starts_with("filter.")
        || key.starts_with("includeif.")
        || key.ends_with(".textconv")
        || key.ends_with(".command")
        || key.ends_with(".driver")
        || key.ends_with(".cmd")
        || key.ends_with(".tool")
        || (key.starts_with("gpg.") && key.ends_with(".program"))
}

/// The values of these options, written `-x V`, `-xV`, `--opt V` or
/// `--opt=V`.
fn values_of(args: &[Word], options: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, word) in args.iter().enumerate() {
        let arg = word.value();
        // A short option at the end of a cluster takes the next word
        // (`-yx CMD`).
        let cluster_end = arg.starts_with('-')
            && !arg.starts_with("--")
            && arg.len() > 2
            && options
                .iter()
                .any(|o| o.len() == 2 && !o.starts_with("--") && arg.ends_with(&o[1..]));
        if cluster_end {
            out.extend(args.get(i + 1).map(|w| w.loose.clone()));
            continue;
        }
        for option in options {
            if arg == *option {
                out.extend(args.get(i + 1).map(|w| w.loose.clone()));
            } else if let Some(value) = arg.strip_prefix(option) {
                let value = if option.starts_with("--") {
                    value.strip_prefix('=')
                } else {
                    Some(value)
                };
                out.extend(value.map(str::to_owned));
            }
        }
    }
    out
}
