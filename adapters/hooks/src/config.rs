//! Hooks as settings files write them, read into [`HookDef`]s.
//!
//! Claude Code's shape, in its settings files, a plugin's
//! `hooks/hooks.json` and cox's `[hooks]` table alike:
//!
//! ```json
//! {"hooks": {"PreToolUse": [
//!   {"matcher": "Bash|Write",
//!    "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}
//! ]}}
//! ```
//!
//! Reading never fails as a whole: a file that does not parse, an unknown
//! event, an entry without a command, a matcher that does not compile or a
//! hook of a kind cox does not run (`"type": "prompt"`) is one warning
//! naming the file and line, and everything else in the file still loads.
//!
//! Each hook gets a name, `<scope>:<event>:<n>` (`project:PreToolUse:1`),
//! counted per scope and event in the order read: what `cox ext list`
//! shows and `cox ext trust` takes. Its identity for trust is
//! [`HookDef::fingerprint`]: where it is written, its event, its matcher
//! and its command, so a changed command is a new hook.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cox_protocol::hook::HookEvent;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::matcher::Matcher;

/// The most hooks one file may define; a file with more is not a
/// settings file anyone reviews, and every hook is shown to be trusted.
pub const HOOKS_PER_FILE_MAX: usize = 200;

/// How long a hook may run when its entry gives no `timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Whose files a hook comes from, which decides whether it runs before a
/// person trusts it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// The person's own files (`~/.claude/settings.json`, cox's config):
    /// trusted as written.
    User,
    /// The project's `.claude/settings.json`, `.claude/settings.local.json`
    /// or `.cox/config.toml`: runs only once trusted.
    Project,
    /// A plugin, by name: runs only once trusted.
    Plugin(String),
}

impl Scope {
    /// The first part of its hooks' names.
    #[must_use]
    pub fn label(&self) -> &str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Plugin(name) => name,
        }
    }

    /// Whether its hooks run without a person's trust.
    #[must_use]
    pub fn trusted_as_written(&self) -> bool {
        matches!(self, Scope::User)
    }
}

/// Where a hook is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub scope: Scope,
    pub file: PathBuf,
    /// The line (from 1) of its command, as near as can be told.
    pub line: usize,
}

/// One configured hook.
#[derive(Clone, Debug)]
pub struct HookDef {
    /// `<scope>:<event>:<n>`.
    pub name: String,
    pub event: HookEvent,
    /// As written (`None` when absent).
    pub matcher_text: Option<String>,
    pub matcher: Matcher,
    /// Run with `bash -c` (or `sh -c` where there is no bash).
    pub command: String,
    pub timeout: Duration,
    pub origin: Origin,
    /// Set for the hook's process on top of cox's environment (a plugin's
    /// `CLAUDE_PLUGIN_ROOT`).
    pub env: Vec<(String, String)>,
    /// The scripts its command names, as they were when read (see
    /// [`crate::pins`]); empty for the person's own hooks.
    pub pins: Vec<crate::pins::Pin>,
}

impl HookDef {
    /// What a person trusts: a hash of where the hook is written, its
    /// event, its matcher, its command, and the scripts it names as they
    /// are.
    #[must_use]
    pub fn fingerprint(&self) -> String {
        let mut hash = Sha256::new();
        let pins: Vec<String> = self
            .pins
            .iter()
            .map(|p| {
                format!(
                    "{}={}",
                    p.path.display(),
                    p.hash.as_deref().unwrap_or("absent")
                )
            })
            .collect();
        for part in [
            self.origin.file.display().to_string().as_str(),
            self.event.as_str(),
            self.matcher_text.as_deref().unwrap_or(""),
            self.command.as_str(),
            pins.join("\n").as_str(),
        ] {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part.as_bytes());
        }
        hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Gathers hooks from several sources, in order, with their warnings.
#[derive(Debug, Default)]
pub struct Loader {
    defs: Vec<HookDef>,
    warnings: Vec<String>,
    /// Where a source said `"disableAllHooks": true`, and whose it is.
    disabled: Vec<(Scope, String)>,
}

impl Loader {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Says what was wrong with a source read elsewhere.
    pub fn warn(&mut self, warning: String) {
        self.warnings.push(warning);
    }

    /// A Claude Code settings file (its `hooks`, and `disableAllHooks`);
    /// a missing file is no hooks.
    pub fn settings_file(&mut self, path: &Path, scope: &Scope, env: &[(String, String)]) {
        let text = match read_settings(path) {
            Ok(Some(text)) => text,
            Ok(None) => return,
            Err(why) => {
                self.warnings
                    .push(format!("{}: {why}; its hooks are left out", path.display()));
                return;
            }
        };
        self.settings_text(&text, path, scope, env);
    }

    /// Settings given as text (`--settings '{…}'`, or a file already
    /// read); `path` names where they came from.
    pub fn settings_text(
        &mut self,
        text: &str,
        path: &Path,
        scope: &Scope,
        env: &[(String, String)],
    ) {
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(err) => {
                self.warnings.push(format!(
                    "{}:{}: not valid JSON ({}); its hooks are left out",
                    path.display(),
                    err.line().max(1),
                    err.to_string().split(" at line").next().unwrap_or_default()
                ));
                return;
            }
        };
        let Value::Object(object) = &value else {
            self.warnings.push(format!(
                "{}:1: settings must be a JSON object; its hooks are left out",
                path.display()
            ));
            return;
        };
        match object.get("disableAllHooks") {
            Some(Value::Bool(true)) => self.disabled.push((
                scope.clone(),
                format!("{} (disableAllHooks)", path.display()),
            )),
            None | Some(Value::Bool(false)) => {}
            Some(_) => self.warnings.push(format!(
                "{}:{}: disableAllHooks must be true or false; ignored",
                path.display(),
                line_of(text, "\"disableAllHooks\"")
            )),
        }
        if let Some(hooks) = object.get("hooks") {
            self.hooks_value(hooks, text, path, scope, env);
        }
    }

    /// The value of a `hooks` table: `{"<Event>": [{matcher, hooks}]}`.
    /// `text` is the file it came from (for the lines).
    pub fn hooks_value(
        &mut self,
        hooks: &Value,
        text: &str,
        path: &Path,
        scope: &Scope,
        env: &[(String, String)],
    ) {
        let mut cursor = Cursor::new(text);
        let Value::Object(events) = hooks else {
            self.warnings.push(format!(
                "{}:{}: `hooks` must be an object of events; its hooks are left out",
                path.display(),
                cursor.line(&["hooks"])
            ));
            return;
        };
        cursor.line(&["\"hooks\"", "hooks"]);
        // Each event is looked for from the start of the table: a table
        // read from TOML lists its events in another order than the file.
        let start = cursor.at;
        for (name, groups) in events {
            cursor.at = start;
            let line = cursor.line(&[&format!("\"{name}\""), &format!("hooks.{name}"), name]);
            let at = |_: &str| format!("{}:{line}", path.display());
            let Some(event) = HookEvent::parse(name) else {
                let near = nearest_event(name)
                    .map(|e| format!(", did you mean {e}?"))
                    .unwrap_or_else(|| {
                        format!(
                            " (events: {})",
                            HookEvent::ALL.map(HookEvent::as_str).join(", ")
                        )
                    });
                self.warnings.push(format!(
                    "{}: unknown hook event `{name}`{near}; its hooks are left out",
                    at(&format!("\"{name}\""))
                ));
                continue;
            };
            let Value::Array(groups) = groups else {
                self.warnings.push(format!(
                    "{}: {name} must be a list of {{matcher, hooks}} entries; left out",
                    at(name)
                ));
                continue;
            };
            for group in groups {
                self.group(event, group, &mut cursor, path, scope, env);
            }
        }
    }

    /// One `{matcher, hooks: [...]}` entry of `event`.
    fn group(
        &mut self,
        event: HookEvent,
        group: &Value,
        cursor: &mut Cursor<'_>,
        path: &Path,
        scope: &Scope,
        env: &[(String, String)],
    ) {
        let file = path.display();
        let Value::Object(group) = group else {
            self.warnings.push(format!(
                "{file}:{}: an entry of {event} must be an object with `hooks`; left out",
                cursor.here()
            ));
            return;
        };
        // The entry starts at its first key; its hooks at theirs (found
        // now, so an entry left out still moves the cursor past them).
        let line = first_key_line(cursor, group);
        let hook_lines: Vec<usize> = match group.get("hooks") {
            Some(Value::Array(hooks)) => hooks
                .iter()
                .map(|hook| match hook {
                    Value::Object(hook) => first_key_line(cursor, hook),
                    _ => cursor.here(),
                })
                .collect(),
            _ => Vec::new(),
        };
        if let Some(key) = group
            .keys()
            .find(|k| !matches!(k.as_str(), "matcher" | "hooks"))
        {
            self.warnings.push(format!(
                "{file}:{line}: unknown key `{key}` in an entry of {event} (known: matcher, \
                 hooks); the key is ignored"
            ));
        }
        let matcher_text = match group.get("matcher") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(text.clone()),
            Some(_) => {
                self.warnings.push(format!(
                    "{file}:{line}: the matcher of an entry of {event} must be a string; left out"
                ));
                return;
            }
        };
        let matcher = match Matcher::parse(matcher_text.as_deref()) {
            Ok(matcher) => matcher,
            Err(why) => {
                self.warnings.push(format!(
                    "{file}:{line}: {why}; the entry of {event} is left out"
                ));
                return;
            }
        };
        if !takes_matcher(event) && !matches!(matcher, Matcher::All) {
            self.warnings.push(format!(
                "{file}:{line}: {event} takes no matcher; its hooks run for every {event}"
            ));
        }
        let Some(Value::Array(hooks)) = group.get("hooks") else {
            self.warnings.push(format!(
                "{file}:{line}: an entry of {event} needs a `hooks` list; left out"
            ));
            return;
        };
        for (hook, line) in hooks.iter().zip(hook_lines) {
            if let Some(def) = self.hook(event, &matcher_text, &matcher, hook, line, path, scope) {
                let from_here = self.defs.iter().filter(|d| d.origin.file == path).count();
                if from_here >= HOOKS_PER_FILE_MAX {
                    self.warnings.push(format!(
                        "{file}:{line}: more than {HOOKS_PER_FILE_MAX} hooks in one file; the \
                         rest are left out"
                    ));
                    return;
                }
                let mut def = def;
                def.env = env.to_vec();
                self.defs.push(def);
            }
        }
    }

    /// One `{type, command, timeout}`.
    #[allow(clippy::too_many_arguments)]
    fn hook(
        &mut self,
        event: HookEvent,
        matcher_text: &Option<String>,
        matcher: &Matcher,
        hook: &Value,
        line: usize,
        path: &Path,
        scope: &Scope,
    ) -> Option<HookDef> {
        let file = path.display();
        let Value::Object(hook) = hook else {
            self.warnings.push(format!(
                "{file}:{line}: a hook of {event} must be an object with `command`; left out"
            ));
            return None;
        };
        match hook.get("type") {
            Some(Value::String(kind)) if kind == "command" => {}
            None => {}
            Some(Value::String(kind)) => {
                self.warnings.push(format!(
                    "{file}:{line}: hooks of type `{kind}` are not run by cox (only `command`); \
                     left out"
                ));
                return None;
            }
            Some(_) => {
                self.warnings.push(format!(
                    "{file}:{line}: a hook's type must be the string \"command\"; left out"
                ));
                return None;
            }
        }
        let command = match hook.get("command") {
            Some(Value::String(command)) if !command.trim().is_empty() => command.clone(),
            _ => {
                self.warnings.push(format!(
                    "{file}:{line}: a hook of {event} has no command; left out"
                ));
                return None;
            }
        };
        if let Some(key) = hook
            .keys()
            .find(|k| !matches!(k.as_str(), "type" | "command" | "timeout"))
        {
            self.warnings.push(format!(
                "{file}:{line}: unknown key `{key}` in a hook of {event} (known: type, command, \
                 timeout); the key is ignored"
            ));
        }
        let timeout = match hook.get("timeout") {
            None | Some(Value::Null) => DEFAULT_TIMEOUT,
            Some(value) => match value.as_f64().filter(|s| s.is_finite() && *s > 0.0) {
                Some(seconds) => Duration::from_secs_f64(seconds.min(86_400.0)),
                None => {
                    self.warnings.push(format!(
                        "{file}:{line}: a hook's timeout must be a number of seconds above 0; \
                         {}s is used",
                        DEFAULT_TIMEOUT.as_secs()
                    ));
                    DEFAULT_TIMEOUT
                }
            },
        };
        Some(HookDef {
            name: String::new(),
            event,
            matcher_text: matcher_text.clone(),
            matcher: matcher.clone(),
            command,
            timeout,
            origin: Origin {
                scope: scope.clone(),
                file: path.to_path_buf(),
                line,
            },
            env: Vec::new(),
            pins: Vec::new(),
        })
    }

    /// The hooks read, each named, and the warnings. `disableAllHooks` in
    /// the person's own settings turns every hook off; in a project's or a
    /// plugin's, only that scope's own (a repository must not be able to
    /// switch off the person's guard hooks).
    #[must_use]
    pub fn finish(self) -> Loaded {
        let mut counts: BTreeMap<(String, HookEvent), usize> = BTreeMap::new();
        let mut defs = self.defs;
        for def in &mut defs {
            let n = counts
                .entry((def.origin.scope.label().to_owned(), def.event))
                .or_default();
            *n += 1;
            def.name = format!("{}:{}:{n}", def.origin.scope.label(), def.event);
        }
        let mut warnings = self.warnings;
        let all_off = self
            .disabled
            .iter()
            .find(|(scope, _)| *scope == Scope::User);
        if let Some((_, place)) = all_off {
            if !defs.is_empty() {
                warnings.push(format!("every hook is off: {place}"));
            }
            defs.clear();
        }
        for (scope, place) in &self.disabled {
            let before = defs.len();
            defs.retain(|d| d.origin.scope != *scope);
            if defs.len() < before {
                warnings.push(format!("the {} hooks are off: {place}", scope.label()));
            }
        }
        Loaded { defs, warnings }
    }
}

/// Every hook read, and what was wrong with the rest.
#[derive(Debug, Default)]
pub struct Loaded {
    pub defs: Vec<HookDef>,
    /// What was wrong, and what `disableAllHooks` turned off.
    pub warnings: Vec<String>,
}

/// The most of a settings file that is read, in bytes.
pub const SETTINGS_MAX: u64 = 1 << 20;

/// A settings file's text; `None` when there is none.
fn read_settings(path: &Path) -> Result<Option<String>, String> {
    read_small(path, SETTINGS_MAX)
}

/// A small text file a repository or a plugin wrote: `Ok(None)` when there
/// is none. Only a regular file (a link to one is fine) of at most `max`
/// bytes is read, so a file linked to `/dev/zero` or a fifo cannot hold
/// a session's start; `Err` says why it is not read.
///
/// # Errors
/// It is not a regular file, is larger than `max`, cannot be read or is
/// not UTF-8.
pub fn read_small(path: &Path, max: u64) -> Result<Option<String>, String> {
    use std::io::Read;
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("cannot read: {err}")),
    };
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    if meta.len() > max {
        return Err(format!("larger than {} KiB", max / 1024));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(max).read_to_end(&mut bytes))
        .map_err(|err| format!("cannot read: {err}"))?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| "not UTF-8 text".to_owned())
}

/// Whether a matcher chooses among calls of `event`.
#[must_use]
pub fn takes_matcher(event: HookEvent) -> bool {
    event.is_tool_event()
        || matches!(
            event,
            HookEvent::SessionStart
                | HookEvent::SubagentStart
                | HookEvent::SubagentStop
                | HookEvent::SessionEnd
                | HookEvent::PreCompact
                | HookEvent::Notification
        )
}

/// The event a misspelt name most likely meant.
fn nearest_event(name: &str) -> Option<&'static str> {
    let lower = name.to_lowercase();
    HookEvent::ALL
        .iter()
        .map(|e| e.as_str())
        .find(|e| e.to_lowercase() == lower || distance(&e.to_lowercase(), &lower) <= 2)
}

/// Levenshtein distance, for the suggestion.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

/// The line (from 1) where `needle` first appears in `text`; 1 when it
/// does not.
#[must_use]
pub fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle).map_or(1, |at| {
        text[..at].bytes().filter(|b| *b == b'\n').count() + 1
    })
}

/// The line of whichever of `object`'s keys the text writes first, from
/// the cursor on (a table read from TOML may list its keys in another
/// order than the file).
fn first_key_line(cursor: &mut Cursor<'_>, object: &Map<String, Value>) -> usize {
    let quoted: Vec<String> = object.keys().map(|k| format!("\"{k}\"")).collect();
    let bare: Vec<&str> = object.keys().map(String::as_str).collect();
    let quoted: Vec<&str> = quoted.iter().map(String::as_str).collect();
    match cursor.earliest(&quoted) {
        Some(line) => line,
        None => cursor.earliest(&bare).unwrap_or_else(|| cursor.here()),
    }
}

/// Lines of a file read in order: each needle is looked for from where
/// the last one was found, so entries read in the order the file writes
/// them (JSON objects keep their order) get their own lines, not the first
/// line that happens to hold the same text.
struct Cursor<'t> {
    text: &'t str,
    at: usize,
    /// Where each line after the first starts, to tell a line in
    /// logarithmic time (a file of many hooks is read in linear time).
    starts: Vec<usize>,
}

/// How far ahead a needle is looked for: an entry is small, and a needle
/// the file never writes must not cost a scan of the rest each time.
const LOOK_AHEAD: usize = 16 * 1024;

impl<'t> Cursor<'t> {
    fn new(text: &'t str) -> Self {
        let starts = text
            .bytes()
            .enumerate()
            .filter(|(_, b)| *b == b'\n')
            .map(|(at, _)| at + 1)
            .collect();
        Self {
            text,
            at: 0,
            starts,
        }
    }

    /// The text from here to the look-ahead's end (at a character).
    fn ahead(&self) -> &'t str {
        let mut end = (self.at + LOOK_AHEAD).min(self.text.len());
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        &self.text[self.at..end]
    }

    /// The line of the first of `needles` found from here (moving past
    /// it), or of here when none is.
    fn line(&mut self, needles: &[&str]) -> usize {
        let rest = self.ahead();
        if let Some(found) = needles.iter().find_map(|n| rest.find(n)) {
            self.at += found;
            let line = self.here();
            self.step();
            return line;
        }
        self.here()
    }

    /// The line of whichever of `needles` comes first from here (moving
    /// past it); `None` when none does.
    fn earliest(&mut self, needles: &[&str]) -> Option<usize> {
        let rest = self.ahead();
        let found = needles.iter().filter_map(|n| rest.find(n)).min()?;
        self.at += found;
        let line = self.here();
        self.step();
        Some(line)
    }

    /// Moves past the character here (whole: never into a UTF-8 sequence).
    fn step(&mut self) {
        self.at += self.text[self.at..]
            .chars()
            .next()
            .map_or(0, char::len_utf8);
    }

    /// The line of here.
    fn here(&self) -> usize {
        self.starts.partition_point(|start| *start <= self.at) + 1
    }
}

/// A `hooks` object of JSON built from another format's table (cox's
/// TOML): the same value, for [`Loader::hooks_value`].
#[must_use]
pub fn object(map: Map<String, Value>) -> Value {
    Value::Object(map)
}

#[cfg(test)]
mod tests;
