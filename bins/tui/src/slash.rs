//! Slash commands: what the composer's text means when it starts with `/`,
//! and what to offer while one is being typed.
//!
//! The set is closed, so it is one table ([`COMMANDS`]) that parsing,
//! completion and help all read: a command cannot be parsed without being
//! listed, or listed without help. Parsing is pure and never fails
//! silently: text that is a command is [`Command`], text that looks like one
//! but is not is a one-line error naming the command and the choices (with
//! a suggestion from a small edit distance), and text that is not a command
//! at all is `None`, to be sent to the model as a prompt.
//!
//! Not a command: text that does not begin with `/` (so a leading space
//! sends `/…` literally) and text whose first word has another `/` in it (a
//! path such as `/etc/hosts is wrong`). Command names and the mode are case
//! insensitive; `/exit` is another name for `/quit`.

/// The mode `/mode` switches to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeArg {
    /// Plan permissions, main turns on the think tier.
    Architect,
    /// The configured permissions, main turns on the code tier.
    Editor,
}

impl ModeArg {
    /// The name the user types.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Architect => "architect",
            Self::Editor => "editor",
        }
    }
}

/// A parsed slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/mode architect|editor`.
    Mode(ModeArg),
    /// `/compact [focus]`: compact now, the summary focused on the text.
    Compact(Option<String>),
    /// `/model [name]`: show the model, or switch to `name`.
    Model(Option<String>),
    /// `/permissions`: the rules and the permission mode in force.
    Permissions,
    /// `/cost`: this session's tokens and cost.
    Cost,
    /// `/agents [n]`: the subagents this session ran, or the transcript
    /// of the `n`th.
    Agents(Option<String>),
    /// `/memory [list | add <text> | forget <id>]`: the project's notes.
    Memory(Option<String>),
    /// `/shells [kill <id>]`: the background shells, or stop one.
    Shells(Option<String>),
    /// `/resume [id]`: pick a recorded session (list them without an id).
    Resume(Option<String>),
    /// `/rewind` (or `/undo`): pick a turn to undo.
    Rewind,
    /// `/clear`: start a new conversation.
    Clear,
    /// `/mcp`: the session's MCP servers, each with its state, to trust,
    /// retry or log in to.
    Mcp,
    /// `/mcp login <server>`: log in to an HTTP MCP server, then pick
    /// this session up again with its tools.
    McpLogin(String),
    /// `/mcp trust <server>`: trust a project's server as it is
    /// configured now, then pick this session up again with it.
    McpTrust(String),
    /// `/mcp retry`: pick this session up again, its servers connected
    /// anew.
    McpRetry,
    /// `/help`: the commands and keys.
    Help,
    /// `/quit` or `/exit`.
    Quit,
}

/// What a command takes after its name, and how it becomes a [`Command`].
#[derive(Debug)]
enum Arg {
    /// Nothing: the command is this one.
    Nothing(Command),
    /// One of [`MODES`], required.
    Mode,
    /// Free text, optional (it may span lines).
    Text(fn(Option<String>) -> Command),
    /// `login <server>`.
    Mcp,
    /// One word, optional; `what` names it in errors.
    Word {
        what: &'static str,
        make: fn(Option<String>) -> Command,
    },
}

#[derive(Debug)]
struct Spec {
    name: &'static str,
    usage: &'static str,
    help: &'static str,
    arg: Arg,
}

/// Every command, in the order help and completion list them.
const COMMANDS: &[Spec] = &[
    Spec {
        name: "/mode",
        usage: "/mode architect|editor",
        help: "plan on the think tier (architect) or edit on the code tier (editor)",
        arg: Arg::Mode,
    },
    Spec {
        name: "/compact",
        usage: "/compact [focus]",
        help: "summarise the conversation now, keeping what the focus names",
        arg: Arg::Text(Command::Compact),
    },
    Spec {
        name: "/model",
        usage: "/model [name]",
        help: "show the model, or switch to another",
        arg: Arg::Word {
            what: "a model name",
            make: Command::Model,
        },
    },
    Spec {
        name: "/permissions",
        usage: "/permissions",
        help: "show the permission mode and rules in force",
        arg: Arg::Nothing(Command::Permissions),
    },
    Spec {
        name: "/memory",
        usage: "/memory [list | add <text> | forget <id>]",
        help: "the project's notes, kept across sessions (the relevant ones reach each turn)",
        arg: Arg::Text(Command::Memory),
    },
    Spec {
        name: "/cost",
        usage: "/cost",
        help: "show this session's tokens and cost",
        arg: Arg::Nothing(Command::Cost),
    },
    Spec {
        name: "/agents",
        usage: "/agents [n]",
        help: "list the subagents this session ran (state, turns, cost); with n, read its transcript",
        arg: Arg::Word {
            what: "an agent's number",
            make: Command::Agents,
        },
    },
    Spec {
        name: "/shells",
        usage: "/shells [kill <id>]",
        help: "list the background shells the model started; kill one",
        arg: Arg::Text(Command::Shells),
    },
    Spec {
        name: "/resume",
        usage: "/resume [id]",
        help: "resume a recorded session (without an id, list them)",
        arg: Arg::Word {
            what: "a session id",
            make: Command::Resume,
        },
    },
    Spec {
        name: "/rewind",
        usage: "/rewind",
        help: "undo turns: the code, the conversation or both (also /undo, Esc Esc)",
        arg: Arg::Nothing(Command::Rewind),
    },
    Spec {
        name: "/clear",
        usage: "/clear",
        help: "start a new conversation",
        arg: Arg::Nothing(Command::Clear),
    },
    Spec {
        name: "/mcp",
        usage: "/mcp [login <server> | trust <server> | retry]",
        help: "the MCP servers: trust, retry or log in to one; its tools join this session",
        arg: Arg::Mcp,
    },
    Spec {
        name: "/help",
        usage: "/help",
        help: "list the commands and keys",
        arg: Arg::Nothing(Command::Help),
    },
    Spec {
        name: "/quit",
        usage: "/quit",
        help: "leave cox (also /exit)",
        arg: Arg::Nothing(Command::Quit),
    },
];

/// Other names, and the command they stand for.
const ALIASES: &[(&str, &str)] = &[("/exit", "/quit"), ("/undo", "/rewind")];

/// The choices of `/mode`, with their help.
const MODES: &[(&str, &str)] = &[
    (
        "architect",
        "plan permissions, main turns on the think tier",
    ),
    ("editor", "your permissions, main turns on the code tier"),
];

/// Reads `input` as a slash command: `None` when it is not one (see the
/// module doc), `Some(Err(line))` when it names an unknown command or gives
/// a bad argument.
pub fn parse(input: &str) -> Option<Result<Command, String>> {
    let rest = input.trim_end().strip_prefix('/')?;
    let (word, arg) = split_word(rest);
    if word.contains('/') {
        return None;
    }
    if word.is_empty() {
        return Some(Err(format!("type a command after /: {}", names())));
    }
    let typed = format!("/{}", word.to_lowercase());
    let Some(spec) = lookup(&typed) else {
        return Some(Err(unknown(&typed)));
    };
    Some(parse_arg(spec, arg))
}

/// What to offer for `prefix`, the text typed so far: the commands whose
/// name starts with it (`/co` → `/compact`, `/cost`) as `(name, help)`,
/// or, after a command and a space, its argument's choices (`/mode ` →
/// `architect`, `editor`). Empty when there is nothing to offer (free text
/// and model names are not known here).
pub fn complete(prefix: &str) -> Vec<(&'static str, &'static str)> {
    let Some(rest) = prefix.strip_prefix('/') else {
        return Vec::new();
    };
    match rest.split_once(char::is_whitespace) {
        None if rest.contains('/') => Vec::new(),
        None => {
            let typed = format!("/{}", rest.to_lowercase());
            COMMANDS
                .iter()
                .filter(|spec| spec.name.starts_with(&typed))
                .map(|spec| (spec.name, spec.help))
                .collect()
        }
        Some((word, arg)) => {
            let typed = format!("/{}", word.to_lowercase());
            let arg = arg.trim_start().to_lowercase();
            match lookup(&typed) {
                Some(Spec { arg: Arg::Mode, .. }) if !arg.contains(char::is_whitespace) => MODES
                    .iter()
                    .filter(|(mode, _)| mode.starts_with(&arg))
                    .copied()
                    .collect(),
                _ => Vec::new(),
            }
        }
    }
}

/// Every command as `(usage, one line of help)`, e.g.
/// `("/compact [focus]", "summarise …")`, in a stable order.
pub fn help() -> Vec<(&'static str, &'static str)> {
    COMMANDS
        .iter()
        .map(|spec| (spec.usage, spec.help))
        .collect()
}

/// The model `/model NAME` may switch to: one of `known` (the catalog's
/// rows, the models of the user's config, the one in use), matched with
/// its case ignored and returned as `known` spells it. Otherwise a one-line
/// refusal, with the nearest names when some are near.
pub fn known_model<'a>(name: &str, known: &[&'a str]) -> Result<&'a str, String> {
    if let Some(found) = known.iter().find(|k| **k == name) {
        return Ok(found);
    }
    let lower = name.to_lowercase();
    let folded: Vec<&str> = known
        .iter()
        .copied()
        .filter(|k| k.to_lowercase() == lower)
        .collect();
    if let [one] = folded.as_slice() {
        return Ok(one);
    }
    let near = suggest(&lower, known.iter().copied());
    let mut line = format!("unknown model {name}: neither in the catalog nor in your config");
    if !near.is_empty() {
        line.push_str(&format!("; did you mean {}?", or_list(&near)));
    }
    Err(line)
}

fn parse_arg(spec: &Spec, arg: &str) -> Result<Command, String> {
    let name = spec.name;
    match &spec.arg {
        Arg::Nothing(_) if !arg.is_empty() => Err(format!("{name} takes no argument")),
        Arg::Nothing(command) => Ok(command.clone()),
        Arg::Mode => parse_mode(arg).map(Command::Mode),
        Arg::Mcp => match split_word(arg) {
            ("", "") => Ok(Command::Mcp),
            (word, "") if word.eq_ignore_ascii_case("retry") => Ok(Command::McpRetry),
            (word, server) if !server.is_empty() && !server.contains(char::is_whitespace) => {
                if word.eq_ignore_ascii_case("login") {
                    Ok(Command::McpLogin(server.to_owned()))
                } else if word.eq_ignore_ascii_case("trust") {
                    Ok(Command::McpTrust(server.to_owned()))
                } else {
                    Err(format!("usage: {}", spec.usage))
                }
            }
            _ => Err(format!("usage: {}", spec.usage)),
        },
        Arg::Text(make) => Ok(make(some(arg))),
        Arg::Word { what, .. } if arg.contains(char::is_whitespace) => {
            Err(format!("{name} takes one argument: {what}"))
        }
        Arg::Word { make, .. } => Ok(make(some(arg))),
    }
}

fn parse_mode(arg: &str) -> Result<ModeArg, String> {
    let choices = "architect or editor";
    if arg.is_empty() {
        return Err(format!("/mode needs an argument: {choices}"));
    }
    if arg.contains(char::is_whitespace) {
        return Err(format!("/mode takes one argument: {choices}"));
    }
    match arg.to_lowercase().as_str() {
        "architect" => Ok(ModeArg::Architect),
        "editor" => Ok(ModeArg::Editor),
        other => {
            let near = suggest(other, MODES.iter().map(|(mode, _)| *mode));
            if near.is_empty() {
                Err(format!("unknown mode {arg} for /mode; choose {choices}"))
            } else {
                Err(format!(
                    "unknown mode {arg} for /mode; did you mean {}?",
                    or_list(&near)
                ))
            }
        }
    }
}

fn unknown(typed: &str) -> String {
    let known = COMMANDS
        .iter()
        .map(|spec| spec.name)
        .chain(ALIASES.iter().map(|(alias, _)| *alias));
    let near = suggest(typed, known);
    if near.is_empty() {
        format!("unknown command {typed}; commands: {}", names())
    } else {
        format!("unknown command {typed}; did you mean {}?", or_list(&near))
    }
}

/// The candidates `typed` is a prefix of or, when there are none, those
/// nearest to it, at most two edits away (see [`distance`]).
fn suggest<'a>(typed: &str, candidates: impl Iterator<Item = &'a str> + Clone) -> Vec<&'a str> {
    let prefixed: Vec<&str> = candidates
        .clone()
        .filter(|name| name.starts_with(typed))
        .collect();
    if !prefixed.is_empty() {
        return prefixed;
    }
    let scored: Vec<(usize, &str)> = candidates
        .map(|name| (distance(typed, name), name))
        .collect();
    let Some(best) = scored.iter().map(|(d, _)| *d).min().filter(|d| *d <= 2) else {
        return Vec::new();
    };
    scored
        .into_iter()
        .filter(|(d, _)| *d == best)
        .map(|(_, name)| name)
        .collect()
}

/// An optimal string alignment distance where inserting, deleting or
/// swapping two neighbours costs one and substituting costs two (it is a
/// deletion and an insertion), so a doubled key is nearer than a wrong one:
/// `/modee` is `/mode`, not `/model`.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut rows = vec![vec![0; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    rows[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = if a[i - 1] == b[j - 1] { 0 } else { 2 };
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

/// Whether `word` (without the `/`) is one of cox's own commands or their
/// other names.
pub fn is_builtin(word: &str) -> bool {
    lookup(&format!("/{}", word.to_lowercase())).is_some()
}

fn lookup(typed: &str) -> Option<&'static Spec> {
    let name = ALIASES
        .iter()
        .find(|(alias, _)| *alias == typed)
        .map_or(typed, |(_, name)| *name);
    COMMANDS.iter().find(|spec| spec.name == name)
}

/// The first word of `s` and the rest, trimmed.
fn split_word(s: &str) -> (&str, &str) {
    match s.split_once(char::is_whitespace) {
        Some((word, rest)) => (word, rest.trim()),
        None => (s, ""),
    }
}

fn some(arg: &str) -> Option<String> {
    (!arg.is_empty()).then(|| arg.to_owned())
}

fn names() -> String {
    COMMANDS
        .iter()
        .map(|spec| spec.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests;
