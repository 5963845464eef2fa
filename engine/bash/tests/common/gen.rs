//! A deterministic generator of bash lines with their own ground truth, for
//! the differential oracle (`tests/oracle.rs`, which runs the lines with
//! real bash and stub programs) and the fuzz target `bash_split` (which
//! draws the generator's choices from the fuzz input).
//!
//! [`from_seed`] draws the choices from a small xorshift generator,
//! [`from_bytes`] from a byte string, one byte a choice and the first
//! option once the bytes run out, so any input gives a valid, bounded line.
//! Each line comes with [`Generated::names`]: every stub name (of
//! [`STUBS`]) the generator placed in command position, in live code or
//! dead (`while false; do rm x; done`), so a superset of what bash can run
//! from the line and exactly what a static split should list.
//!
//! The grammar mixes lists, pipelines, subshells, groups, substitutions,
//! `if`/`for`/`while`/`until`/`case`, functions defined then called,
//! wrappers (`nohup`, `timeout 5`, `env`, `nice`, `stdbuf`, `xargs`,
//! `command`, `builtin`, `exec` in a subshell, `time`, `!`), shell strings
//! nested a few levels (`sh -c`, `bash -c`, `eval`, a script on a shell's
//! standard input), redirects anywhere in a command (heredocs with their
//! bodies on the following lines), leading assignments, quoted and escaped
//! names, brace expansion, variables and `find -exec`. Every line ends
//! quickly: loops are bounded (`for i in 1 2`, `while false`, `until
//! true`, a stub's exit status 0, `while :; do …; break; done`), nothing
//! reads a terminal, and no word names a program outside [`STUBS`], the
//! wrappers above and builtins, nor sets `PATH`, so run with only stubs and
//! those wrappers on `PATH` a line can never run a real destructive program.
//! Inside `sh` strings (dash on Debian) only POSIX syntax is generated.
#![allow(dead_code)]

use std::collections::BTreeSet;

use cox_bash::{Opacity, Split};

/// The stub programs a line may run.
pub const STUBS: [&str; 14] = [
    "rm", "git", "curl", "make", "p1", "p2", "p3", "p4", "p5", "cat", "head", "find", "python3",
    "tee",
];

/// A line and the stub names it placed in command position.
#[derive(Clone, Debug)]
pub struct Generated {
    pub line: String,
    pub names: BTreeSet<String>,
}

/// A line from a seed: the same seed always gives the same line.
pub fn from_seed(seed: u64) -> Generated {
    Gen::new(Source::Rng(splitmix(seed) | 1)).line()
}

/// A line whose every choice is read from `bytes` (the first option once
/// they run out).
pub fn from_bytes(bytes: &[u8]) -> Generated {
    Gen::new(Source::Bytes(bytes)).line()
}

/// The program names a split reports: the last path component of each
/// command's first word, and the names of its rough word scan.
pub fn reported(split: &Split) -> BTreeSet<String> {
    split
        .commands
        .iter()
        .filter_map(|c| c.words.first())
        .map(|w| w.rsplit('/').next().unwrap_or(w).to_owned())
        .chain(split.scan.iter().cloned())
        .collect()
}

/// A line whose command name is only known when it runs (the split's
/// first reason is [`Opacity::DynamicCommand`]): the split cannot be asked
/// to name what it runs.
pub fn exempt(split: &Split) -> bool {
    matches!(split.opaque, Some(Opacity::DynamicCommand(_)))
}

fn splitmix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Where the choices come from.
enum Source<'a> {
    /// xorshift64 state, never zero.
    Rng(u64),
    /// The bytes not read yet.
    Bytes(&'a [u8]),
}

impl Source<'_> {
    /// A number below `n` (0 when `n` is 0 or 1, or the bytes ran out).
    fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        match self {
            Source::Rng(s) => {
                *s ^= *s << 13;
                *s ^= *s >> 7;
                *s ^= *s << 17;
                // The high bits are the better ones.
                ((*s >> 32) % n as u64) as usize
            }
            Source::Bytes(bytes) => match bytes.split_first() {
                Some((first, rest)) => {
                    *bytes = rest;
                    usize::from(*first) % n
                }
                None => 0,
            },
        }
    }
}

/// What may be generated where.
#[derive(Clone, Copy)]
struct Ctx {
    /// Compound commands that may still nest.
    depth: u8,
    /// Shell strings that may still nest.
    strings: u8,
    /// Inside `sh` (dash): POSIX syntax only.
    posix: bool,
    /// A newline may separate commands (not inside `$( )`).
    newline: bool,
    /// A heredoc may start here (its body goes after the next newline).
    heredoc: bool,
    /// Inside backticks: plain simple commands only, no backslashes.
    simple: bool,
}

impl Ctx {
    fn nested(self) -> Ctx {
        Ctx {
            depth: self.depth.saturating_sub(1),
            ..self
        }
    }

    /// Inside `$( )` or `<( )`: no newlines, so no heredocs.
    fn substitution(self) -> Ctx {
        Ctx {
            depth: self.depth.saturating_sub(1),
            newline: false,
            heredoc: false,
            ..self
        }
    }
}

/// A line (the whole line, or a shell string in it) being written.
#[derive(Default)]
struct LineState {
    /// Assignments the line's variable command names need, written first.
    prelude: String,
    /// Heredoc bodies (with their terminators) waiting for a newline.
    heredocs: Vec<String>,
}

struct Gen<'a> {
    src: Source<'a>,
    names: BTreeSet<String>,
    /// For fresh function and variable names.
    ids: usize,
    lines: Vec<LineState>,
}

impl<'a> Gen<'a> {
    fn new(src: Source<'a>) -> Gen<'a> {
        Gen {
            src,
            names: BTreeSet::new(),
            ids: 0,
            lines: Vec::new(),
        }
    }

    fn line(mut self) -> Generated {
        let depth = 1 + self.pick(&[4, 4, 1]) as u8;
        let ctx = Ctx {
            depth,
            strings: 2,
            posix: false,
            newline: true,
            heredoc: true,
            simple: false,
        };
        let line = self.sub_line(ctx);
        Generated {
            line,
            names: self.names,
        }
    }

    fn below(&mut self, n: usize) -> usize {
        self.src.below(n)
    }

    /// An index into `weights`, drawn by weight (0 on exhausted bytes).
    fn pick(&mut self, weights: &[usize]) -> usize {
        let total: usize = weights.iter().sum();
        let mut r = self.below(total);
        for (i, w) in weights.iter().enumerate() {
            if r < *w {
                return i;
            }
            r -= w;
        }
        0
    }

    /// True `k` times in `n` (false on exhausted bytes).
    fn chance(&mut self, k: usize, n: usize) -> bool {
        self.below(n) >= n - k
    }

    fn one<'s>(&mut self, options: &[&'s str]) -> &'s str {
        options[self.below(options.len())]
    }

    fn fresh(&mut self) -> usize {
        self.ids += 1;
        self.ids
    }

    fn state(&mut self) -> &mut LineState {
        self.lines.last_mut().expect("inside a line")
    }

    /// A list as a line of its own: its prelude, then the list, then the
    /// bodies of heredocs still waiting for a newline.
    fn sub_line(&mut self, ctx: Ctx) -> String {
        self.lines.push(LineState::default());
        let mut body = String::new();
        self.list(&mut body, ctx);
        let state = self.lines.pop().expect("pushed above");
        if !state.heredocs.is_empty() {
            body.push('\n');
            for heredoc in state.heredocs {
                body.push_str(&heredoc);
            }
        }
        state.prelude + &body
    }

    /// A newline token, followed by the heredoc bodies it ends.
    fn newline(&mut self, out: &mut String) {
        out.push('\n');
        for heredoc in std::mem::take(&mut self.state().heredocs) {
            out.push_str(&heredoc);
        }
    }

    fn list(&mut self, out: &mut String, ctx: Ctx) {
        let n = 1 + self.pick(&[8, 4, 1]);
        for i in 0..n {
            if i > 0 {
                self.separator(out, ctx);
            }
            self.item(out, ctx);
        }
    }

    fn separator(&mut self, out: &mut String, ctx: Ctx) {
        let nl = usize::from(ctx.newline);
        match self.pick(&[4, 3, 2, 1, 3 * nl, nl]) {
            0 => out.push_str("; "),
            1 => out.push_str(" && "),
            2 => out.push_str(" || "),
            3 => out.push_str(" & "),
            4 => self.newline(out),
            _ => {
                out.push_str(" &&");
                self.newline(out);
            }
        }
    }

    /// A list followed by what ends it before a keyword (`}`, `fi`, …).
    fn terminated(&mut self, out: &mut String, ctx: Ctx) {
        self.list(out, ctx);
        match self.pick(&[6, 3 * usize::from(ctx.newline), 1]) {
            0 => out.push_str("; "),
            1 => self.newline(out),
            _ => out.push_str(" & "),
        }
    }

    fn item(&mut self, out: &mut String, ctx: Ctx) {
        if ctx.depth > 0 && !ctx.simple && self.chance(1, 12) {
            self.function(out, ctx);
        } else {
            self.pipeline(out, ctx);
        }
    }

    fn pipeline(&mut self, out: &mut String, ctx: Ctx) {
        let bash = usize::from(!ctx.posix && !ctx.simple);
        match self.pick(&[16, 2 * bash, 1, bash]) {
            1 => out.push_str("time "),
            2 => out.push_str("! "),
            3 => out.push_str("time -p "),
            _ => {}
        }
        let n = 1 + self.pick(&[8, 3, 1]);
        for i in 0..n {
            if i > 0 {
                match self.pick(&[6, 2 * bash, usize::from(ctx.newline)]) {
                    1 => out.push_str(" |& "),
                    2 => {
                        out.push_str(" |");
                        self.newline(out);
                    }
                    _ => out.push_str(" | "),
                }
            }
            self.command(out, ctx);
        }
    }

    fn command(&mut self, out: &mut String, ctx: Ctx) {
        if ctx.simple {
            return self.simple(out, ctx);
        }
        let compound = usize::from(ctx.depth > 0);
        let strings = usize::from(ctx.strings > 0);
        let weights = [
            16,
            2 * compound,
            2 * compound,
            2 * compound,
            compound,
            compound,
            compound,
            compound,
            compound,
            1,
            3 * strings,
            strings,
        ];
        let inner = ctx.nested();
        match self.pick(&weights) {
            0 => self.simple(out, ctx),
            1 => {
                out.push_str("( ");
                self.list(out, inner);
                out.push_str(" )");
                self.compound_redirect(out, ctx);
            }
            2 => {
                out.push_str("{ ");
                self.terminated(out, inner);
                out.push('}');
                self.compound_redirect(out, ctx);
            }
            3 => self.if_(out, ctx),
            4 => {
                if !ctx.posix && self.chance(1, 3) {
                    out.push_str("for ((i = 0; i < 2; i++)); do ");
                } else {
                    out.push_str("for i in 1 2; do ");
                }
                self.terminated(out, inner);
                out.push_str("done");
                self.compound_redirect(out, ctx);
            }
            5 => self.while_(out, ctx),
            6 => {
                match self.below(2) {
                    0 => out.push_str("until true; do "),
                    _ => {
                        let stub = self.stub();
                        out.push_str(&format!("until {stub}; do "));
                    }
                }
                self.terminated(out, inner);
                out.push_str("done");
                self.compound_redirect(out, ctx);
            }
            7 => self.case(out, ctx),
            8 => {
                let mut words = vec!["exec".to_owned()];
                if !ctx.posix && self.chance(1, 3) {
                    words.extend(["-a".to_owned(), "x".to_owned()]);
                }
                self.wrapped(&mut words, ctx);
                out.push_str("( ");
                self.finish(out, words, ctx);
                out.push_str(" )");
            }
            9 => self.find(out, ctx),
            10 => self.shell_string(out, ctx),
            _ => self.shell_stdin(out, ctx),
        }
    }

    /// Sometimes a redirect after a compound command.
    fn compound_redirect(&mut self, out: &mut String, ctx: Ctx) {
        if self.chance(1, 4) {
            out.push(' ');
            let (redirect, body) = self.redirect(ctx);
            out.push_str(&redirect);
            if let Some(body) = body {
                self.state().heredocs.push(body);
            }
        }
    }

    fn if_(&mut self, out: &mut String, ctx: Ctx) {
        let inner = ctx.nested();
        out.push_str("if ");
        self.terminated(out, inner);
        out.push_str("then ");
        self.terminated(out, inner);
        if self.chance(1, 3) {
            out.push_str("elif ");
            self.terminated(out, inner);
            out.push_str("then ");
            self.terminated(out, inner);
        }
        if self.chance(1, 2) {
            out.push_str("else ");
            self.terminated(out, inner);
        }
        out.push_str("fi");
        self.compound_redirect(out, ctx);
    }

    fn while_(&mut self, out: &mut String, ctx: Ctx) {
        let inner = ctx.nested();
        let forever = match self.below(3) {
            0 => {
                out.push_str("while false; do ");
                false
            }
            1 => {
                let stub = self.stub();
                out.push_str(&format!("while ! {stub}; do "));
                false
            }
            _ => {
                out.push_str("while :; do ");
                true
            }
        };
        self.terminated(out, inner);
        if forever {
            out.push_str("break; ");
        }
        out.push_str("done");
        self.compound_redirect(out, ctx);
    }

    fn case(&mut self, out: &mut String, ctx: Ctx) {
        let inner = ctx.nested();
        out.push_str("case x in ");
        let arms = 1 + self.below(3);
        for arm in 0..arms {
            let pattern = self.one(&["x)", "(x)", "y|x)", "*)", "z)"]);
            out.push_str(pattern);
            out.push(' ');
            self.list(out, inner);
            let last = arm + 1 == arms;
            let bash = usize::from(!ctx.posix && !last);
            match self.pick(&[6, 2 * usize::from(ctx.newline), bash, bash]) {
                1 => {
                    out.push_str(";;");
                    self.newline(out);
                }
                2 => out.push_str(";& "),
                3 => out.push_str(";;& "),
                _ => out.push_str(";; "),
            }
        }
        out.push_str("esac");
        self.compound_redirect(out, ctx);
    }

    /// A function definition, then a call of it.
    fn function(&mut self, out: &mut String, ctx: Ctx) {
        let inner = ctx.nested();
        let name = format!("f{}", self.fresh());
        match self.pick(&[3, usize::from(!ctx.posix), 1]) {
            1 => {
                out.push_str(&format!("function {name} {{ "));
                self.terminated(out, inner);
                out.push('}');
            }
            2 => {
                out.push_str(&format!("{name}() ( "));
                self.list(out, inner);
                out.push_str(" )");
            }
            _ => {
                out.push_str(&format!("{name}() {{ "));
                self.terminated(out, inner);
                out.push('}');
            }
        }
        if ctx.newline && self.chance(1, 3) {
            self.newline(out);
        } else {
            out.push_str("; ");
        }
        let mut words = vec![name];
        for _ in 0..self.pick(&[3, 2, 1]) {
            let arg = self.arg(ctx);
            words.push(arg);
        }
        self.finish(out, words, ctx);
    }

    fn simple(&mut self, out: &mut String, ctx: Ctx) {
        let mut words = Vec::new();
        if !ctx.simple && self.chance(1, 6) {
            let assignment = self.one(&["A=1", "B='x y'", "LC_ALL=C", "A=1 B=2"]);
            // One word per assignment: `B='x y'` is one word however it is
            // spaced inside.
            if assignment == "A=1 B=2" {
                words.extend(["A=1".to_owned(), "B=2".to_owned()]);
            } else {
                words.push(assignment.to_owned());
            }
        }
        if !ctx.simple {
            match self.pick(&[20, 2, usize::from(!ctx.posix)]) {
                1 => words.push("command".to_owned()),
                2 => words.extend(["builtin".to_owned(), "command".to_owned()]),
                _ => {}
            }
        }
        self.wrapped(&mut words, ctx);
        self.finish(out, words, ctx);
    }

    /// Programs that run the command after them, a name, its arguments.
    fn wrapped(&mut self, words: &mut Vec<String>, ctx: Ctx) {
        self.wrappers(words);
        let name = self.name(ctx);
        words.push(name);
        for _ in 0..self.pick(&[5, 4, 1]) {
            let arg = self.arg(ctx);
            words.push(arg);
        }
    }

    fn wrappers(&mut self, words: &mut Vec<String>) {
        for _ in 0..self.pick(&[12, 4, 1]) {
            let wrapper = self.one(&[
                "nohup",
                "timeout 5",
                "env",
                "env A=1",
                "nice -n 1",
                "nice",
                "stdbuf -o0",
                "xargs",
                "xargs -0",
                "timeout -k 1 5",
                "nice -5",
                "stdbuf -oL -eL",
                "env -u A",
                "xargs -n 1",
            ]);
            words.extend(wrapper.split(' ').map(str::to_owned));
        }
    }

    /// The words with redirects put anywhere among them, joined.
    fn finish(&mut self, out: &mut String, words: Vec<String>, ctx: Ctx) {
        let words = words.into_iter().map(|w| (w, None)).collect();
        self.finish_with(out, words, ctx);
    }

    /// [`Gen::finish`] for words some of which are heredoc operators with
    /// their bodies: the bodies wait for the newline in the order their
    /// operators are written.
    fn finish_with(
        &mut self,
        out: &mut String,
        mut words: Vec<(String, Option<String>)>,
        ctx: Ctx,
    ) {
        for _ in 0..self.pick(&[10, 4, 1]) {
            let at = self.below(words.len() + 1);
            let redirect = self.redirect(ctx);
            words.insert(at, redirect);
        }
        let mut text = Vec::with_capacity(words.len());
        for (word, body) in words {
            text.push(word);
            if let Some(body) = body {
                self.state().heredocs.push(body);
            }
        }
        out.push_str(&text.join(" "));
    }

    /// A stub name, recorded, as a plain word.
    fn stub(&mut self) -> &'static str {
        let stub = STUBS[self.below(STUBS.len())];
        self.names.insert(stub.to_owned());
        stub
    }

    /// A stub name in command position, recorded, written in one of many
    /// ways bash reads as that name.
    fn name(&mut self, ctx: Ctx) -> String {
        let stub = self.stub();
        let (first, rest) = stub.split_at(1);
        let full = usize::from(!ctx.simple);
        let bash = usize::from(!ctx.simple && !ctx.posix);
        let weights = [
            120,
            10,
            10,
            8 * full,
            8 * full,
            4 * full,
            4 * full,
            3 * bash,
            2 * bash,
            2 * full,
            2 * full,
            2 * full,
        ];
        match self.pick(&weights) {
            1 => format!("'{stub}'"),
            2 => format!("\"{stub}\""),
            3 => format!("\\{stub}"),
            4 => format!("{first}\"\"{rest}"),
            5 => format!("{first}''{rest}"),
            6 => format!("\"{first}\"{rest}"),
            7 => format!("$'\\x{:02x}{rest}'", first.as_bytes()[0]),
            8 => format!("{{{stub},x}}"),
            9 => {
                let var = format!("a{}", self.fresh());
                let prelude = format!("{var}={stub}; ");
                self.state().prelude.push_str(&prelude);
                format!("${var}")
            }
            10 => format!("${{u{}:-{stub}}}", self.fresh()),
            11 => format!("{first}$(){rest}"),
            _ => stub.to_owned(),
        }
    }

    fn arg(&mut self, ctx: Ctx) -> String {
        let subst = usize::from(ctx.depth > 0 && !ctx.simple);
        let bash = subst * usize::from(!ctx.posix);
        match self.pick(&[12, 2 * subst, subst, bash, subst]) {
            1 => {
                let mut s = String::from("$( ");
                self.list(&mut s, ctx.substitution());
                s.push_str(" )");
                s
            }
            2 => {
                let mut s = String::from("`");
                let inner = Ctx {
                    simple: true,
                    ..ctx.substitution()
                };
                self.simple(&mut s, inner);
                s.push('`');
                s
            }
            3 => {
                let mut s = String::from("<( ");
                self.list(&mut s, ctx.substitution());
                s.push_str(" )");
                s
            }
            4 => {
                let mut s = String::from("\"$( ");
                self.list(&mut s, ctx.substitution());
                s.push_str(" )\"");
                s
            }
            _ => self
                .one(&[
                    "x", "-rf", "y", "'a b'", "\"q\"", "--flag", ".", "-C", "1", "a=b",
                ])
                .to_owned(),
        }
    }

    /// A redirect, and its body if it is a heredoc.
    fn redirect(&mut self, ctx: Ctx) -> (String, Option<String>) {
        let bash = usize::from(!ctx.posix);
        let weights = [
            4,
            3,
            1,
            1,
            2,
            1,
            bash,
            bash,
            1,
            1,
            bash,
            4 * usize::from(ctx.heredoc),
        ];
        let redirect = match self.pick(&weights) {
            1 => ">/dev/null",
            2 => "0</dev/null",
            3 => "3<&0",
            4 => "2>&1",
            5 => "2>&-",
            6 => "<<<word",
            7 => "<<< 'a b'",
            8 => ">&2",
            9 => ">>/dev/null",
            10 => "&>/dev/null",
            11 => {
                let (operator, body) = self.heredoc(ctx);
                return (operator.to_owned(), Some(body));
            }
            _ => "2>/dev/null",
        };
        (redirect.to_owned(), None)
    }

    /// A heredoc operator and its body (with its terminator line).
    fn heredoc(&mut self, ctx: Ctx) -> (&'static str, String) {
        let (operator, expands, tabs, terminator) = match self.below(5) {
            0 => ("<<EOF", true, false, "EOF"),
            1 => ("<<-EOF", true, true, "EOF"),
            2 => ("<<'EOF'", false, false, "EOF"),
            3 => ("<<\"END\"", false, false, "END"),
            _ => ("<< EOF", true, false, "EOF"),
        };
        let mut body = String::new();
        for _ in 0..1 + self.below(2) {
            if tabs {
                body.push('\t');
            }
            if expands && !ctx.simple && self.chance(1, 4) {
                // Bash runs a substitution in an unquoted heredoc body.
                let stub = self.stub();
                if self.chance(1, 2) {
                    body.push_str(&format!("$({stub} x)"));
                } else {
                    body.push_str(&format!("a `{stub}` b"));
                }
            } else {
                body.push_str(self.one(&["x", "hello world", "a 'b' c"]));
            }
            body.push('\n');
        }
        if tabs {
            body.push('\t');
        }
        body.push_str(terminator);
        body.push('\n');
        (operator, body)
    }

    fn find(&mut self, out: &mut String, ctx: Ctx) {
        self.names.insert("find".to_owned());
        let mut words = Vec::new();
        if !ctx.simple && self.chance(1, 4) {
            self.wrappers(&mut words);
        }
        words.extend(["find".to_owned(), ".".to_owned()]);
        if self.chance(2, 3) {
            // The same in the empty directory a line runs in.
            words.extend(["-maxdepth".to_owned(), "0".to_owned()]);
        }
        let action = self.one(&["-exec", "-execdir"]);
        words.push(action.to_owned());
        let name = self.name(ctx);
        words.push(name);
        if self.chance(1, 3) {
            words.push("x".to_owned());
        }
        if self.chance(1, 3) {
            words.extend(["{}".to_owned(), "+".to_owned()]);
        } else {
            words.extend(["{}".to_owned(), "\\;".to_owned()]);
        }
        self.finish(out, words, ctx);
    }

    /// The context of a shell string's code.
    fn string_ctx(ctx: Ctx, posix: bool, heredoc: bool) -> Ctx {
        Ctx {
            depth: ctx.depth.saturating_sub(1).min(2),
            strings: ctx.strings - 1,
            posix,
            newline: true,
            heredoc,
            simple: false,
        }
    }

    fn quote(&mut self, code: &str) -> String {
        if self.chance(1, 2) {
            let mut s = String::from("\"");
            for c in code.chars() {
                if matches!(c, '\\' | '"' | '$' | '`') {
                    s.push('\\');
                }
                s.push(c);
            }
            s.push('"');
            s
        } else {
            format!("'{}'", code.replace('\'', r"'\''"))
        }
    }

    /// `sh -c '…'`, `bash -c "…"`, `eval '…'` and the like.
    fn shell_string(&mut self, out: &mut String, ctx: Ctx) {
        let bash = usize::from(!ctx.posix);
        let kind = self.pick(&[3, 3, 2, bash, 1, 1]);
        let posix = match kind {
            0 | 4 => true,
            1 | 5 => false,
            _ => ctx.posix,
        };
        let code = self.sub_line(Self::string_ctx(ctx, posix, true));
        let quoted = self.quote(&code);
        let mut words = Vec::new();
        if kind != 2 && kind != 3 && self.chance(1, 4) {
            self.wrappers(&mut words);
        }
        match kind {
            0 => words.extend(["sh".to_owned(), "-c".to_owned(), quoted]),
            1 => words.extend(["bash".to_owned(), "-c".to_owned(), quoted]),
            2 => words.extend(["eval".to_owned(), quoted]),
            3 => words.extend(["builtin".to_owned(), "eval".to_owned(), quoted]),
            4 => words.extend(["sh", "-e", "-c"].map(str::to_owned).into_iter().chain([
                quoted,
                "sh".to_owned(),
                "x".to_owned(),
            ])),
            _ => words.extend(["bash".to_owned(), "-ec".to_owned(), quoted]),
        }
        self.finish(out, words, ctx);
    }

    /// A script given to a shell on its standard input, as known text.
    fn shell_stdin(&mut self, out: &mut String, ctx: Ctx) {
        let bash = usize::from(!ctx.posix);
        let heredoc = usize::from(ctx.heredoc);
        if bash + heredoc == 0 {
            return self.shell_string(out, ctx);
        }
        let kind = self.pick(&[heredoc, heredoc, bash, bash, bash]);
        let shell = if matches!(kind, 0 | 4) { "sh" } else { "bash" };
        let code = self.sub_line(Self::string_ctx(ctx, shell == "sh", false));
        match kind {
            0 | 1 => {
                let words = vec![
                    (shell.to_owned(), None),
                    ("<<'EOF'".to_owned(), Some(format!("{code}\nEOF\n"))),
                ];
                self.finish_with(out, words, ctx);
            }
            2 => {
                let quoted = format!("'{}'", code.replace('\'', r"'\''"));
                let words = vec!["bash".to_owned(), format!("<<<{quoted}")];
                self.finish(out, words, ctx);
            }
            _ => {
                let quoted = self.quote(&code);
                out.push_str(&format!("echo {quoted} | {shell}"));
            }
        }
    }
}
