//! The whole screen's state: session events and keys in, submissions out.
//!
//! [`App`] never awaits and never touches the terminal, so a test drives it
//! key by key and checks what it would send and draw. Keys go first to
//! whatever has the focus: an open overlay, then a pending approval, then
//! the global keys (Ctrl+C, Esc, Shift+Tab, paging), then the composer.
//!
//! Approvals inline: `y` allows once, `s` allows for the session, `n` denies
//! (Enter right away, or type a reason first), `e` edits the call's input as
//! JSON and sends it to be decided again. While an approval waits,
//! PgUp/PgDn and the wheel (and Up/Down, Home/End while no answer is being
//! typed) scroll what the call would do, so a long diff is read whole
//! before it is answered. Esc interrupts a running turn (the
//! partial answer stays); Esc Esc on an empty composer (or `/rewind`)
//! opens the list of earlier turns to rewind to, the code, the
//! conversation or both, asking before it overwrites files changed outside
//! cox; Ctrl+C clears the composer, or interrupts a turn, and
//! quits when pressed twice.

use std::cell::Cell;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

use cox_protocol::CallId;
use cox_protocol::checkpoint::RewindWhat;
use cox_protocol::provider::Tier;
use cox_protocol::types::{Decision, Event, NoticeLevel, PermissionMode, SlashCommand, Submission};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use serde_json::Value;

use crate::composer::{Composer, ComposerAction};
use crate::preview::Read;
use crate::slash::{self, Command};
use crate::transcript::{Entry, Transcript};

/// Two presses closer than this count as a double press.
const DOUBLE: Duration = Duration::from_millis(600);
/// Ctrl+C twice within this quits.
const QUIT_WINDOW: Duration = Duration::from_secs(2);
/// Keys typed within this of an approval prompt appearing were typed for
/// something else: they do not answer it.
const APPROVAL_GUARD: Duration = Duration::from_millis(300);

/// What the app asks its runner to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Send this to the session.
    Submit(Submission),
    /// End the session and leave.
    Quit,
    /// End this session and start a fresh one (`/clear`).
    NewSession,
    /// End this session and pick up another (`/resume <id>`).
    Resume(String),
    /// Log in to MCP server `name` (`/mcp login <name>`); once logged in,
    /// this session is picked up again, its servers connected anew.
    McpLogin(String),
    /// Trust MCP server `name` as it is configured now (`/mcp trust
    /// <name>`); once trusted, this session is picked up again.
    McpTrust(String),
    /// Pick this session up again, its servers connected anew (`/mcp
    /// retry`).
    McpRetry,
}

/// A panel over the transcript.
#[derive(Clone, Debug, PartialEq)]
pub enum Overlay {
    /// Lines of text under a title (`/help`, `/permissions`, `/cost`).
    Text { title: String, lines: Vec<String> },
    /// Earlier turns, newest first, each with its prompt and the count of
    /// files it changed: Enter rewinds the code and the conversation, `c`
    /// the code, `v` the conversation, `e` puts the prompt back in the
    /// composer.
    Rewind {
        prompts: Vec<(u32, String, usize)>,
        selected: usize,
    },
    /// A rewind found files changed outside cox: `y` overwrites them.
    RewindConflict {
        to_turn: u32,
        what: RewindWhat,
        files: Vec<String>,
    },
    /// Recent sessions; Enter picks one up.
    Sessions {
        items: Vec<(String, String)>,
        selected: usize,
    },
    /// Architect mode's first prompt waits for the person to agree to the
    /// think tier's price: `y` sends it, `n` (or Esc) goes back to editor
    /// mode with the prompt in the composer.
    ThinkConsent { prompt: String, terms: String },
    /// `/quit` in a clean worktree: `y` removes it (its branch stays), `n`
    /// (or Esc) keeps it; both leave.
    RemoveWorktree { path: String, branch: String },
    /// An MCP server's form, asked while its call runs.
    Form(Box<crate::form::Form>),
    /// The session's MCP servers (`/mcp`): each with its state and why;
    /// `t` trusts the selected one, `l` logs in to it, `r` connects every
    /// server anew.
    Mcp {
        servers: Vec<McpState>,
        selected: usize,
    },
}

/// One MCP server as `/mcp` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpState {
    pub name: String,
    /// `connected`, `failed`, `pending` (a project's server not trusted
    /// yet), `needs-auth` (an HTTP server that needs a login), or
    /// `connecting`.
    pub status: String,
    /// Why it is not connected, or what it serves.
    pub detail: String,
}

/// The session's MCP servers, as they stand now (late ones join).
pub trait McpServers: Send + Sync + std::fmt::Debug {
    fn states(&self) -> Vec<McpState>;
}

/// What a key typed during an approval is for.
#[derive(Debug)]
pub enum Answering {
    /// `n`: the reason for the denial (may stay empty).
    Reason(Composer),
    /// `e`: the call's input, as JSON.
    Edit(Composer),
}

/// Facts the runner knows and the status line shows.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub branch: Option<String>,
    /// The sandbox mode, as the status line shows it ("sandboxed" for
    /// workspace-write, "read-only", "no sandbox").
    pub sandbox: String,
    /// The main model's context window.
    pub window: Option<u64>,
    /// USD per million tokens: input, output, cache read, cache write.
    pub prices: Option<cox_protocol::catalog::Prices>,
    /// The permission rules in effect and where each came from.
    pub permissions: Vec<String>,
    /// The mode the config asked for (`/mode editor` goes back to it).
    pub base_mode: PermissionMode,
    /// A resumed session's events so far: drawn before anything new, and
    /// its prompts are the composer's history.
    pub past: Vec<Event>,
    /// Recent sessions for `/resume`'s list: id and a description.
    pub recent: Vec<(String, String)>,
    /// Prices and window of every model cox knows, for a `/model` switch.
    pub models: Vec<(String, Option<cox_protocol::catalog::Prices>, u64)>,
    /// `[tui] status_line.command`: its first line is the status line.
    pub status_line: Option<String>,
    /// The project's notes, for `/memory`.
    pub notes: Option<std::sync::Arc<dyn Notes>>,
    /// What sees every event of the session besides the screen (its
    /// spans in the log).
    pub watcher: Option<std::sync::Arc<std::sync::Mutex<dyn Watcher>>>,
    /// The tier main turns start on (`Think` in architect mode).
    pub tier: Tier,
    /// The think tier's model and its prices, shown before a person agrees
    /// to them.
    pub think: Option<(String, Option<cox_protocol::catalog::Prices>)>,
    /// The worktree the session works in (`cox --worktree`), if any.
    pub worktree: Option<std::sync::Arc<dyn Worktree>>,
    /// The session's background shells (`/shells`).
    pub shells: Option<std::sync::Arc<dyn BackgroundShells>>,
    /// The session's folder, where `@path` completes.
    pub cwd: Option<std::path::PathBuf>,
    /// The session's MCP servers, for `/mcp`.
    pub mcp: Option<std::sync::Arc<dyn McpServers>>,
    /// A prompt to send as the session starts (`cox "task"`).
    pub first_prompt: Option<String>,
}

/// The session's background shells, as `/shells` shows and stops them.
pub trait BackgroundShells: Send + Sync + std::fmt::Debug {
    /// One line per shell, oldest first.
    fn lines(&self) -> Vec<String>;
    /// Stops shell `id`: what to tell the person, or why not.
    fn stop(&self, id: &str) -> Result<String, String>;
}

/// The worktree a session works in, as the status line and `/quit` need
/// it.
pub trait Worktree: Send + Sync + std::fmt::Debug {
    /// Its branch.
    fn branch(&self) -> String;
    /// Its folder, as the person reads it.
    fn path(&self) -> String;
    /// Lines added and removed since its branch's commit.
    fn stat(&self) -> Option<(u64, u64)>;
    /// Whether this session holds it (cox made or took it for this
    /// session): only then may `/quit` offer to remove it.
    fn held(&self) -> bool;
    /// Whether it has changes.
    ///
    /// # Errors
    /// One line saying why it cannot tell.
    fn dirty(&self) -> Result<bool, String>;
    /// Removes it (its branch stays).
    ///
    /// # Errors
    /// One line saying why not.
    fn remove(&self) -> Result<(), String>;
}

/// What is told every event of a session, as it comes.
pub trait Watcher: Send + std::fmt::Debug {
    fn event(&mut self, event: &Event);
}

/// What `/memory` reaches: the project's notes, kept across sessions
/// (their recall into each turn is the session's business).
pub trait Notes: Send + Sync + std::fmt::Debug {
    /// Keeps a note; the line saying so.
    ///
    /// # Errors
    /// One line saying why not.
    fn add(&self, text: &str) -> Result<String, String>;
    /// Every note, one line each.
    ///
    /// # Errors
    /// One line saying why not.
    fn list(&self) -> Result<String, String>;
    /// Forgets note `id`.
    ///
    /// # Errors
    /// One line saying why not (no such note).
    fn forget(&self, id: i64) -> Result<String, String>;
}

/// The state of the screen.
#[derive(Debug)]
pub struct App {
    pub transcript: Transcript,
    pub composer: Composer,
    pub facts: Facts,
    pub permission_mode: PermissionMode,
    pub tier: Tier,
    /// The person agreed to the think tier's price for this architect
    /// stretch (asked again after editor mode).
    pub think_agreed: bool,
    /// Lines scrolled up from the bottom of the transcript.
    pub scroll: usize,
    pub overlay: Option<Overlay>,
    pub answering: Option<Answering>,
    /// Lines the worktree's changes add and remove, as of the last turn.
    pub worktree_stat: Option<(u64, u64)>,
    /// A one-line message for the person (a bad edit, a hint).
    pub flash: Option<String>,
    esc_at: Option<Instant>,
    ctrl_c_at: Option<Instant>,
    pub quit: bool,
    /// Prompts sent while a turn runs: they go when it ends (and are
    /// dropped when the person quits first).
    pub queued: VecDeque<String>,
    /// When the pending approval appeared.
    approval_since: Option<Instant>,
    /// The most the transcript can scroll, as the last frame measured it.
    pub max_scroll: Cell<usize>,
    /// A `/compact` is running between turns.
    pub compacting: bool,
    /// Lines of the pending approval's preview scrolled past.
    pub preview_scroll: usize,
    /// How far the preview can scroll, as the last frame measured it.
    pub preview_max: Cell<usize>,
    /// How many of the preview's lines the last frame showed (a page).
    pub preview_page: Cell<usize>,
    /// The rewind sent last and not yet done: its turn, prompt and what.
    rewinding: Option<(u32, String, RewindWhat)>,
    /// The session's own commands (the MCP servers' prompts).
    pub commands: Vec<SlashCommand>,
    /// The status line's command printed this last (sanitised); the
    /// built-in line shows while it is `None`.
    pub custom_status: Option<String>,
}

impl App {
    /// A screen for a session that has not started.
    #[must_use]
    pub fn new(mut facts: Facts, mut history: Vec<String>) -> Self {
        let past = std::mem::take(&mut facts.past);
        let first = facts.first_prompt.take();
        let worktree_stat = facts.worktree.as_ref().and_then(|w| w.stat());
        let mut transcript = Transcript::new();
        transcript.catalog = catalog_of(&facts.models);
        for event in &past {
            transcript.apply(event);
            if let Event::TurnStarted { text, .. } = event {
                history.push(text.clone());
            }
        }
        // What the rollout left mid-turn is not running now.
        transcript.busy = false;
        transcript.pending = None;
        transcript.pending_via = None;
        let tier = facts.tier;
        Self {
            transcript,
            composer: Composer::with_history(history),
            permission_mode: facts.base_mode,
            facts,
            tier,
            think_agreed: false,
            scroll: 0,
            overlay: None,
            answering: None,
            worktree_stat,
            flash: None,
            esc_at: None,
            ctrl_c_at: None,
            quit: false,
            // Sent once the session is ready (`ready`).
            queued: first.into_iter().collect(),
            rewinding: None,
            approval_since: None,
            max_scroll: Cell::new(usize::MAX),
            compacting: false,
            preview_scroll: 0,
            preview_max: Cell::new(usize::MAX),
            preview_page: Cell::new(1),
            commands: Vec::new(),
            custom_status: None,
        }
    }

    /// What is ready to go now: the next queued prompt, once the turn
    /// before it has ended.
    pub fn ready(&mut self) -> Vec<Action> {
        if self.transcript.busy || self.transcript.pending.is_some() {
            return Vec::new();
        }
        match self.queued.pop_front() {
            Some(text) => {
                self.transcript.busy = true;
                vec![Action::Submit(Submission::UserTurn {
                    text,
                    images: Vec::new(),
                })]
            }
            None => Vec::new(),
        }
    }

    /// A line of the runner's own in the transcript (a login's URL, its
    /// outcome), as a session's notice is drawn.
    pub fn note(&mut self, level: NoticeLevel, text: &str) {
        self.on_event(&Event::Notice {
            level,
            text: text.to_owned(),
        });
    }

    /// The session on screen, as it started.
    #[must_use]
    pub fn session_id(&self) -> &str {
        &self.transcript.session
    }

    /// What the status line's command is given on stdin: Claude Code's
    /// fields (`session_id`, `cwd`, `model`, `workspace`, `version`,
    /// `cost`) and cox's own (`context`, `permission_mode`, `mode`,
    /// `branch`).
    #[must_use]
    pub fn status_input(&self) -> serde_json::Value {
        let t = &self.transcript;
        serde_json::json!({
            "hook_event_name": "Status",
            "session_id": t.session,
            "cwd": t.cwd,
            "model": {"id": t.model, "display_name": t.model},
            "workspace": {"current_dir": t.cwd, "project_dir": t.cwd},
            "version": env!("CARGO_PKG_VERSION"),
            "cost": {"total_cost_usd": self.cost()},
            "context": {"used_percentage": self.context_percent()},
            "permission_mode": self.permission_mode.to_string(),
            "mode": if self.tier == Tier::Think { "architect" } else { "editor" },
            "branch": self.facts.branch,
        })
    }

    /// Folds a session event in.
    pub fn on_event(&mut self, event: &Event) {
        match event {
            Event::SessionStarted {
                permission_mode, ..
            } => self.permission_mode = *permission_mode,
            Event::ModeChanged {
                permission_mode,
                tier,
                model,
            } => {
                self.permission_mode = *permission_mode;
                if *tier != Tier::Think {
                    self.think_agreed = false;
                }
                self.tier = *tier;
                if let Some(model) = model {
                    self.transcript.model.clone_from(model);
                    let row = self.facts.models.iter().find(|(id, ..)| id == model);
                    self.facts.prices = row.and_then(|(_, prices, _)| *prices);
                    self.facts.window = row.map(|(.., window)| *window);
                }
            }
            Event::TurnDone { .. } => {
                self.answering = None;
                self.worktree_stat = self.facts.worktree.as_ref().and_then(|w| w.stat());
            }
            Event::Commands { commands } => self.commands.clone_from(commands),
            Event::Elicitation {
                id,
                server,
                message,
                schema,
            } => {
                self.overlay = Some(Overlay::Form(Box::new(crate::form::Form::new(
                    id, server, message, schema,
                ))));
            }
            // Answered elsewhere, or cancelled as its call ended.
            Event::Elicited { id, .. } => {
                if matches!(&self.overlay, Some(Overlay::Form(form)) if form.id == *id) {
                    self.overlay = None;
                }
            }
            Event::RewindConflict { to_turn, files } => {
                let what = self
                    .rewinding
                    .as_ref()
                    .map_or(RewindWhat::Code, |(_, _, what)| *what);
                if what.conversation() {
                    // Nothing was rewound: the prompt put back goes away.
                    self.composer.set_text("");
                }
                self.overlay = Some(Overlay::RewindConflict {
                    to_turn: *to_turn,
                    what,
                    files: files.clone(),
                });
            }
            Event::Rewound { .. } => self.rewinding = None,
            Event::Compacted { .. } | Event::Notice { .. } | Event::TurnStarted { .. } => {
                self.compacting = false;
            }
            _ => {}
        }
        let shown = (
            self.transcript.pending.clone(),
            self.transcript.pending_via.clone(),
        );
        self.transcript.apply(event);
        self.on_new_ask(&shown);
    }

    /// A prompt that just appeared (the session's own ask, a subagent's,
    /// or one that waited behind another) starts its guard afresh.
    fn on_new_ask(&mut self, before: &(Option<CallId>, Option<String>)) {
        let now = (&self.transcript.pending, &self.transcript.pending_via);
        if now.0.is_some() && (now.0, now.1) != (&before.0, &before.1) {
            self.approval_since = Some(Instant::now());
            self.preview_scroll = 0;
        }
    }

    /// Pasted text goes where typing would.
    pub fn on_paste(&mut self, text: &str) {
        match &mut self.answering {
            Some(Answering::Reason(c) | Answering::Edit(c)) => c.insert_str(text),
            None => self.composer.insert_str(text),
        }
    }

    /// What the runner found at the path a write or an edit names, read as
    /// the call was requested: what its preview compares against.
    pub fn on_file(&mut self, call_id: &CallId, read: &Read) {
        self.transcript.see_file(call_id, read);
    }

    /// The mouse wheel scrolls the transcript, or the preview of a call
    /// waiting for approval.
    pub fn on_mouse(&mut self, mouse: MouseEvent) {
        if self.transcript.pending.is_some() {
            match mouse.kind {
                MouseEventKind::ScrollUp => self.scroll_preview(-3),
                MouseEventKind::ScrollDown => self.scroll_preview(3),
                _ => {}
            }
            return;
        }
        match mouse.kind {
            MouseEventKind::ScrollUp => {
                self.scroll = self.scroll.saturating_add(3).min(self.max_scroll.get());
            }
            MouseEventKind::ScrollDown => self.scroll_down(3),
            _ => {}
        }
    }

    /// Scrolls `lines` toward the end, from where the transcript is
    /// really scrolled (the last frame may have found less to scroll than
    /// was asked for).
    fn scroll_down(&mut self, lines: usize) {
        self.scroll = self.scroll.min(self.max_scroll.get()).saturating_sub(lines);
    }

    /// Handles one key; returns what the runner must do.
    pub fn on_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Action> {
        self.flash = None;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return self.ctrl_c(now);
        }
        self.ctrl_c_at = None;
        if self.overlay.is_some() {
            return self.overlay_key(key);
        }
        if self.transcript.pending.is_some() {
            return self.approval_key(key, now);
        }
        match key.code {
            KeyCode::Esc if self.composer.search().is_none() => return self.esc(now),
            KeyCode::BackTab => return self.cycle_mode(),
            KeyCode::PageUp => {
                self.scroll = self.scroll.saturating_add(10).min(self.max_scroll.get());
                return Vec::new();
            }
            KeyCode::PageDown => {
                self.scroll_down(10);
                return Vec::new();
            }
            // With nothing typed, Home and End go to the transcript's start
            // and end (Ctrl+Home and Ctrl+End always do).
            KeyCode::Home
                if key.modifiers.contains(KeyModifiers::CONTROL)
                    || self.composer.text().is_empty() =>
            {
                self.scroll = self.max_scroll.get();
                return Vec::new();
            }
            KeyCode::End
                if key.modifiers.contains(KeyModifiers::CONTROL)
                    || self.composer.text().is_empty() =>
            {
                self.scroll = 0;
                return Vec::new();
            }
            KeyCode::Tab => {
                if let Some((name, _)) = self.completions().into_iter().next() {
                    let text = self.composer.text();
                    // `/mode a` completes the argument, keeping `/mode `;
                    // `@sr` the mention, keeping what comes before it.
                    let keep = match text.rfind(char::is_whitespace) {
                        Some(at) if !name.starts_with('/') => &text[..=at],
                        _ => "",
                    };
                    // A folder goes on being completed.
                    let space = if name.ends_with('/') { "" } else { " " };
                    self.composer.set_text(&format!("{keep}{name}{space}"));
                }
                return Vec::new();
            }
            _ => {}
        }
        self.esc_at = None;
        match self.composer.handle(key) {
            ComposerAction::Submit(text) => self.submit(&text),
            ComposerAction::None | ComposerAction::Changed => Vec::new(),
        }
    }

    /// What the think-tier question says: the model and its prices.
    #[must_use]
    pub fn think_terms(&self) -> String {
        match &self.facts.think {
            Some((model, Some(prices))) => format!(
                "{model}: ${:.2} per million input tokens, ${:.2} per million output tokens",
                prices.input, prices.output
            ),
            Some((model, None)) => format!("{model} (cox knows no price for it)"),
            None => "the think tier's model".to_owned(),
        }
    }

    /// `/memory [list | add <text> | forget <id>]`: the answer as a note in
    /// the transcript (a list in an overlay).
    fn shells(&self, arg: Option<&str>) -> Vec<String> {
        crate::shells::lines(self.facts.shells.as_deref(), arg)
    }

    fn memory(&mut self, arg: Option<&str>) {
        let Some(notes) = self.facts.notes.clone() else {
            self.flash = Some("this session keeps no notes".into());
            return;
        };
        let arg = arg.unwrap_or("list").trim();
        let (word, rest) = arg.split_once(char::is_whitespace).unwrap_or((arg, ""));
        let rest = rest.trim();
        let done = match word {
            "list" if rest.is_empty() => match notes.list() {
                Ok(text) => {
                    self.overlay = Some(Overlay::Text {
                        title: "memory".into(),
                        lines: text
                            .lines()
                            .map(|l| crate::sanitize::sanitize(l).into_owned())
                            .collect(),
                    });
                    return;
                }
                Err(err) => Err(err),
            },
            "add" => notes.add(rest),
            "forget" => match rest.trim_start_matches('[').trim_end_matches(']').parse() {
                Ok(id) => notes.forget(id),
                Err(_) => Err("usage: /memory forget <id> (ids are in /memory list)".into()),
            },
            _ => Err("usage: /memory [list | add <text> | forget <id>]".into()),
        };
        match done {
            Ok(line) => self.note(NoticeLevel::Info, &line),
            Err(err) => self.flash = Some(err),
        }
    }

    /// Slash commands matching what is typed, for the completion popup:
    /// cox's own, then the session's (`/mcp__<server>__<prompt>`).
    #[must_use]
    pub fn completions(&self) -> Vec<(String, String)> {
        let text = self.composer.text();
        if let (Some(typed), Some(cwd)) = (crate::mentions::last_mention(&text), &self.facts.cwd) {
            return crate::mentions::complete(typed, cwd);
        }
        if !text.starts_with('/') || text.contains('\n') {
            return Vec::new();
        }
        let mut out: Vec<(String, String)> = slash::complete(&text)
            .into_iter()
            .map(|(name, help)| (name.to_owned(), help.to_owned()))
            .collect();
        if !text.contains(char::is_whitespace) {
            let typed = text.to_lowercase();
            out.extend(
                self.commands
                    .iter()
                    .filter(|c| format!("/{}", c.name).to_lowercase().starts_with(&typed))
                    .map(|c| {
                        let help = crate::sanitize::sanitize(&c.description).into_owned();
                        (format!("/{}", c.name), help)
                    }),
            );
        }
        out
    }

    /// The session's command `text` starts with (a custom command, a
    /// skill, an MCP server's prompt), or why it names none; `None` when it
    /// names none and does not start with `/mcp__` (cox's own commands win
    /// over the session's of the same name).
    fn session_command(&self, text: &str) -> Option<Result<(), String>> {
        let typed = text.trim_end().strip_prefix('/')?;
        let first = typed.split(char::is_whitespace).next().unwrap_or_default();
        if !first.starts_with("mcp__") {
            let ours = !slash::is_builtin(first) && self.commands.iter().any(|c| c.name == first);
            return ours.then_some(Ok(()));
        }
        let word = text.trim_end().strip_prefix("/mcp__")?;
        let word = word.split(char::is_whitespace).next().unwrap_or_default();
        let name = format!("mcp__{word}");
        if self.commands.iter().any(|c| c.name == name) {
            return Some(Ok(()));
        }
        let near: Vec<String> = self
            .commands
            .iter()
            .filter(|c| {
                let server = c.name.split("__").nth(1).unwrap_or_default();
                name.starts_with(&format!("mcp__{server}__"))
            })
            .map(|c| format!("/{}", c.name))
            .collect();
        Some(Err(match (self.commands.is_empty(), near.is_empty()) {
            (true, _) => format!("/{name}: no MCP server of this session offers prompts"),
            (false, true) => format!(
                "/{name}: no such prompt; the servers offer {}",
                self.commands
                    .iter()
                    .map(|c| format!("/{}", c.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            (false, false) => format!("/{name}: no such prompt; try {}", near.join(", ")),
        }))
    }

    fn ctrl_c(&mut self, now: Instant) -> Vec<Action> {
        let twice = self
            .ctrl_c_at
            .is_some_and(|at| now.duration_since(at) < QUIT_WINDOW);
        if twice {
            self.quit = true;
            return vec![Action::Quit];
        }
        self.ctrl_c_at = Some(now);
        self.overlay = None;
        self.answering = None;
        if self.transcript.busy {
            self.flash = Some("interrupted; Ctrl+C again to quit".into());
            return vec![Action::Submit(Submission::Interrupt)];
        }
        if !self.composer.is_empty() {
            self.composer.clear();
        }
        self.flash = Some("Ctrl+C again to quit".into());
        Vec::new()
    }

    fn esc(&mut self, now: Instant) -> Vec<Action> {
        if self.transcript.busy || self.compacting {
            self.esc_at = None;
            return vec![Action::Submit(Submission::Interrupt)];
        }
        if !self.composer.is_empty() {
            self.esc_at = None;
            return Vec::new();
        }
        let double = self
            .esc_at
            .is_some_and(|at| now.duration_since(at) < DOUBLE);
        self.esc_at = if double { None } else { Some(now) };
        if double {
            self.open_rewind();
        }
        Vec::new()
    }

    /// The rewind list (Esc Esc on an empty composer, `/rewind`).
    fn open_rewind(&mut self) {
        let mut prompts: Vec<(u32, String, usize)> = self
            .transcript
            .prompts()
            .into_iter()
            .map(|(turn, text)| (turn, text.to_owned(), self.transcript.files_of(turn)))
            .collect();
        prompts.reverse();
        if prompts.is_empty() {
            self.flash = Some("no earlier prompts yet".into());
        } else {
            self.overlay = Some(Overlay::Rewind {
                prompts,
                selected: 0,
            });
        }
    }

    /// Sends a rewind, remembering it in case it meets a conflict; a rewind
    /// of the conversation puts its prompt back in the composer.
    fn rewind(&mut self, to_turn: u32, prompt: &str, what: RewindWhat, force: bool) -> Vec<Action> {
        if self.transcript.busy {
            self.flash = Some("a rewind waits for the turn to end".into());
        }
        if what.conversation() && !prompt.is_empty() {
            self.composer.set_text(prompt);
        }
        self.rewinding = Some((to_turn, prompt.to_owned(), what));
        vec![Action::Submit(Submission::Rewind {
            to_turn,
            what,
            force,
        })]
    }

    /// Shift+Tab: default → acceptEdits → plan → default. A session started
    /// in another mode (auto, bypassPermissions) returns to it in the cycle.
    fn cycle_mode(&mut self) -> Vec<Action> {
        let base = self.facts.base_mode;
        let mut cycle = vec![
            PermissionMode::Default,
            PermissionMode::AcceptEdits,
            PermissionMode::Plan,
        ];
        if !cycle.contains(&base) {
            cycle.push(base);
        }
        let at = cycle
            .iter()
            .position(|m| *m == self.permission_mode)
            .unwrap_or(0);
        let next = cycle[(at + 1) % cycle.len()];
        self.permission_mode = next;
        if self.transcript.busy {
            // The calls of this turn not yet decided are decided under it.
            self.flash = Some(format!("{next} now, for the calls still to come"));
        }
        vec![Action::Submit(Submission::SetMode {
            permission_mode: Some(next),
            tier: None,
            model: None,
        })]
    }

    /// `/quit`: a clean worktree asks whether to remove it first; a dirty
    /// one is kept, and said so.
    fn leave(&mut self) -> Vec<Action> {
        if let Some(worktree) = self.facts.worktree.clone().filter(|w| w.held()) {
            match worktree.dirty() {
                Ok(false) => {
                    self.overlay = Some(Overlay::RemoveWorktree {
                        path: worktree.path(),
                        branch: worktree.branch(),
                    });
                    return Vec::new();
                }
                Ok(true) => self.note(
                    NoticeLevel::Info,
                    &format!(
                        "worktree {} kept: it has changes (branch {})",
                        worktree.path(),
                        worktree.branch()
                    ),
                ),
                Err(why) => self.note(
                    NoticeLevel::Warn,
                    &format!("worktree {} kept: {why}", worktree.path()),
                ),
            }
        }
        self.quit = true;
        vec![Action::Quit]
    }

    fn overlay_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if let Some(Overlay::Mcp { servers, selected }) = &mut self.overlay {
            let chosen = servers.get(*selected).cloned();
            match key.code {
                KeyCode::Up => *selected = selected.saturating_sub(1),
                KeyCode::Down => *selected = (*selected + 1).min(servers.len().saturating_sub(1)),
                KeyCode::Esc | KeyCode::Char('q') => self.overlay = None,
                KeyCode::Char('t') => {
                    if let Some(server) = chosen {
                        self.overlay = None;
                        return vec![Action::McpTrust(server.name)];
                    }
                }
                KeyCode::Char('l') => {
                    if let Some(server) = chosen {
                        self.overlay = None;
                        return self.submit(&format!("/mcp login {}", server.name));
                    }
                }
                KeyCode::Char('r') => {
                    self.overlay = None;
                    return vec![Action::McpRetry];
                }
                _ => {}
            }
            return Vec::new();
        }
        if let Some(Overlay::Form(form)) = &mut self.overlay {
            return match form.key(key) {
                crate::form::Outcome::Open => Vec::new(),
                crate::form::Outcome::Answered(answer) => {
                    let id = form.id.clone();
                    self.overlay = None;
                    vec![Action::Submit(Submission::Elicited { id, answer })]
                }
            };
        }
        if let Some(Overlay::RemoveWorktree { path, branch }) = &self.overlay {
            let (path, branch) = (path.clone(), branch.clone());
            let remove = match key.code {
                KeyCode::Char('y' | 'Y') => true,
                KeyCode::Char('n' | 'N') | KeyCode::Esc => false,
                _ => return Vec::new(),
            };
            self.overlay = None;
            let said = match (remove, self.facts.worktree.as_ref().map(|w| w.remove())) {
                (true, Some(Ok(()))) => {
                    format!("worktree {path} removed; branch {branch} stays")
                }
                (true, Some(Err(why))) => format!("worktree {path} kept: {why}"),
                _ => format!("worktree {path} kept (branch {branch})"),
            };
            self.note(NoticeLevel::Info, &said);
            self.quit = true;
            return vec![Action::Quit];
        }
        if let Some(Overlay::ThinkConsent { prompt, .. }) = &self.overlay {
            let prompt = prompt.clone();
            return match key.code {
                KeyCode::Char('y' | 'Y') => {
                    self.overlay = None;
                    self.think_agreed = true;
                    self.submit(&prompt)
                }
                KeyCode::Char('n' | 'N') | KeyCode::Esc => {
                    self.overlay = None;
                    self.composer.set_text(&prompt);
                    self.flash =
                        Some("back in editor mode: the prompt waits in the composer".into());
                    vec![Action::Submit(Submission::SetMode {
                        permission_mode: Some(self.facts.base_mode),
                        tier: Some(Tier::Code),
                        model: None,
                    })]
                }
                _ => Vec::new(),
            };
        }
        match (&mut self.overlay, key.code) {
            (_, KeyCode::Esc | KeyCode::Char('q')) => self.overlay = None,
            (Some(Overlay::Rewind { prompts, selected }), code) => {
                let chosen = prompts.get(*selected).map(|(t, p, _)| (*t, p.clone()));
                let what = match code {
                    KeyCode::Up => {
                        *selected = selected.saturating_sub(1);
                        None
                    }
                    KeyCode::Down => {
                        *selected = (*selected + 1).min(prompts.len().saturating_sub(1));
                        None
                    }
                    KeyCode::Enter | KeyCode::Char('b') => Some(RewindWhat::Both),
                    KeyCode::Char('c') => Some(RewindWhat::Code),
                    KeyCode::Char('v') => Some(RewindWhat::Conversation),
                    KeyCode::Char('e') => {
                        if let Some((_, text)) = &chosen {
                            self.composer.set_text(text);
                            self.flash = Some(
                                "the prompt is back in the composer: edit it and press Enter"
                                    .into(),
                            );
                        }
                        self.overlay = None;
                        None
                    }
                    _ => None,
                };
                if let (Some(what), Some((turn, prompt))) = (what, chosen) {
                    self.overlay = None;
                    return self.rewind(turn, &prompt, what, false);
                }
            }
            (Some(Overlay::RewindConflict { to_turn, what, .. }), KeyCode::Char('y')) => {
                let (turn, what) = (*to_turn, *what);
                self.overlay = None;
                let prompt = self
                    .rewinding
                    .as_ref()
                    .map(|(_, p, _)| p.clone())
                    .unwrap_or_default();
                return self.rewind(turn, &prompt, what, true);
            }
            (Some(Overlay::RewindConflict { .. }), KeyCode::Char('n')) => self.overlay = None,
            (Some(Overlay::Sessions { items, selected }), code) => match code {
                KeyCode::Up => *selected = selected.saturating_sub(1),
                KeyCode::Down => *selected = (*selected + 1).min(items.len().saturating_sub(1)),
                KeyCode::Enter => {
                    let id = items.get(*selected).map(|(id, _)| id.clone());
                    self.overlay = None;
                    if let Some(id) = id {
                        return vec![Action::Resume(id)];
                    }
                }
                _ => {}
            },
            (Some(Overlay::Text { .. }), KeyCode::Enter) => self.overlay = None,
            _ => {}
        }
        Vec::new()
    }

    fn approval_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Action> {
        let Some(pending) = self.transcript.pending_call() else {
            // An approval for a call this screen never saw: nothing to ask;
            // the next waiting one, if any, is shown.
            self.transcript.next_ask();
            self.on_new_ask(&(None, None));
            return Vec::new();
        };
        let call_id = pending.call.id.clone();
        let input = pending.call.input.clone();
        // PgUp/PgDn scroll the preview even while a reason or JSON is
        // typed; the arrows and Home/End only while nothing is.
        let page = self.preview_page.get().max(1);
        let arrows = self.answering.is_none();
        let lines = match key.code {
            KeyCode::PageUp => Some(-(page as isize)),
            KeyCode::PageDown => Some(page as isize),
            KeyCode::Up if arrows => Some(-1),
            KeyCode::Down if arrows => Some(1),
            KeyCode::Home if arrows => Some(isize::MIN),
            KeyCode::End if arrows => Some(isize::MAX),
            _ => None,
        };
        if let Some(lines) = lines {
            self.scroll_preview(lines);
            return Vec::new();
        }
        if let Some(answering) = &mut self.answering {
            if key.code == KeyCode::Esc {
                self.answering = None;
                return Vec::new();
            }
            let (composer, is_edit) = match answering {
                Answering::Reason(c) => (c, false),
                Answering::Edit(c) => (c, true),
            };
            let ComposerAction::Submit(text) = composer.handle(key) else {
                return Vec::new();
            };
            let decision = if is_edit {
                match serde_json::from_str::<Value>(&text) {
                    Ok(input @ Value::Object(_)) => Decision::Edit { input },
                    Ok(_) => {
                        self.flash = Some("the input must be a JSON object".into());
                        composer.set_text(&text);
                        return Vec::new();
                    }
                    Err(err) => {
                        self.flash = Some(format!("not JSON: {err}"));
                        composer.set_text(&text);
                        return Vec::new();
                    }
                }
            } else {
                let reason = text.trim();
                Decision::Deny {
                    reason: (!reason.is_empty()).then(|| reason.to_owned()),
                }
            };
            self.answering = None;
            self.answered();
            return vec![Action::Submit(Submission::Approve { call_id, decision })];
        }
        let typed_ahead = self
            .approval_since
            .is_some_and(|since| now.duration_since(since) < APPROVAL_GUARD);
        if typed_ahead && matches!(key.code, KeyCode::Char(_)) {
            return Vec::new();
        }
        let decision = match key.code {
            KeyCode::Char('y' | 'Y') => Decision::Allow,
            KeyCode::Char('s' | 'S') => Decision::AllowForSession,
            KeyCode::Char('n' | 'N') => {
                self.answering = Some(Answering::Reason(Composer::default()));
                return Vec::new();
            }
            KeyCode::Char('e' | 'E') => {
                let mut editor = Composer::default();
                editor.set_text(&serde_json::to_string_pretty(&input).unwrap_or_default());
                self.answering = Some(Answering::Edit(editor));
                return Vec::new();
            }
            KeyCode::Esc => return vec![Action::Submit(Submission::Interrupt)],
            _ => return Vec::new(),
        };
        self.answered();
        vec![Action::Submit(Submission::Approve { call_id, decision })]
    }

    /// Moves the approval's preview `lines` down (up when negative),
    /// within what the last frame showed can scroll.
    fn scroll_preview(&mut self, lines: isize) {
        let to = self.preview_scroll.saturating_add_signed(lines);
        self.preview_scroll = to.min(self.preview_max.get());
    }

    /// The answer is on its way: the prompt goes (an edit may bring it
    /// back with the next `ApprovalRequired`).
    fn answered(&mut self) {
        if let Some(id) = self.transcript.pending.clone() {
            self.transcript.clear_approval(&id);
        }
        self.approval_since = None;
        self.transcript.next_ask();
        // A waiting ask shown now gets its guard too.
        self.on_new_ask(&(None, None));
    }

    fn submit(&mut self, text: &str) -> Vec<Action> {
        self.scroll = 0;
        // `! cmd`: the person's own command, run by the session (its deny
        // rules, its sandbox); the output joins the next prompt.
        if let Some(command) = text.strip_prefix('!') {
            let command = command.trim();
            if command.is_empty() {
                self.flash = Some("type a shell command after !".into());
                return Vec::new();
            }
            return vec![Action::Submit(Submission::Shell {
                command: command.to_owned(),
            })];
        }
        // A session's command goes to it as typed: the session expands it.
        let parsed = match self.session_command(text) {
            Some(Err(message)) => {
                self.flash = Some(message);
                return Vec::new();
            }
            Some(Ok(())) => None,
            None => slash::parse(text),
        };
        let Some(parsed) = parsed else {
            if self.tier == Tier::Think && !self.think_agreed {
                self.overlay = Some(Overlay::ThinkConsent {
                    prompt: text.to_owned(),
                    terms: self.think_terms(),
                });
                return Vec::new();
            }
            if self.transcript.busy {
                self.queued.push_back(text.to_owned());
                self.flash = Some(format!(
                    "queued ({}): sent when this turn ends",
                    self.queued.len()
                ));
                return Vec::new();
            }
            return vec![Action::Submit(Submission::UserTurn {
                text: text.to_owned(),
                images: Vec::new(),
            })];
        };
        let command = match parsed {
            Ok(command) => command,
            Err(message) => {
                self.flash = Some(message);
                return Vec::new();
            }
        };
        match command {
            Command::Mode(slash::ModeArg::Architect) => {
                vec![Action::Submit(Submission::SetMode {
                    permission_mode: Some(PermissionMode::Plan),
                    tier: Some(Tier::Think),
                    model: None,
                })]
            }
            Command::Mode(slash::ModeArg::Editor) => vec![Action::Submit(Submission::SetMode {
                permission_mode: Some(self.facts.base_mode),
                tier: Some(Tier::Code),
                model: None,
            })],
            Command::Compact(focus) => {
                self.compacting = true;
                vec![Action::Submit(Submission::Compact { focus })]
            }
            Command::Model(Some(model)) => {
                let known: Vec<String> =
                    self.known_models().into_iter().map(str::to_owned).collect();
                let names: Vec<&str> = known.iter().map(String::as_str).collect();
                match slash::known_model(&model, &names) {
                    Ok(model) => vec![Action::Submit(Submission::SetMode {
                        permission_mode: None,
                        tier: None,
                        model: Some(model.to_owned()),
                    })],
                    Err(refusal) => {
                        self.flash = Some(format!("not switched: {refusal}"));
                        let mut lines = vec![refusal, String::new(), "known models:".into()];
                        lines.extend(known.iter().map(|id| format!("  {id}")));
                        lines.extend([
                            String::new(),
                            "another model needs a [models.\"<id>\"] row, or a [tiers] model, in your config"
                                .into(),
                        ]);
                        self.overlay = Some(Overlay::Text {
                            title: "model not switched".into(),
                            lines,
                        });
                        Vec::new()
                    }
                }
            }
            Command::Model(None) => {
                self.flash = Some(format!(
                    "main turns run on {}; /model <name> switches",
                    self.transcript.model
                ));
                Vec::new()
            }
            Command::Permissions => {
                let mut lines = vec![format!("mode: {}", self.permission_mode)];
                lines.extend(self.facts.permissions.iter().cloned());
                self.overlay = Some(Overlay::Text {
                    title: "permissions".into(),
                    lines,
                });
                Vec::new()
            }
            Command::Memory(arg) => {
                self.memory(arg.as_deref());
                Vec::new()
            }
            Command::Shells(arg) => {
                self.overlay = Some(Overlay::Text {
                    title: "shells".into(),
                    lines: self.shells(arg.as_deref()),
                });
                Vec::new()
            }
            Command::Cost => {
                self.overlay = Some(Overlay::Text {
                    title: "cost".into(),
                    lines: self.cost_lines(),
                });
                Vec::new()
            }
            Command::Agents(None) => {
                self.overlay = Some(Overlay::Text {
                    title: "agents".into(),
                    lines: self.transcript.agents.lines(),
                });
                Vec::new()
            }
            Command::Agents(Some(n)) => {
                let shown = n
                    .parse::<usize>()
                    .ok()
                    .and_then(|n| self.transcript.agents.transcript(n));
                self.overlay = Some(match shown {
                    Some((title, lines)) => Overlay::Text { title, lines },
                    None => Overlay::Text {
                        title: "agents".into(),
                        lines: vec![format!(
                            "no subagent {n}: /agents lists them, numbered from 1"
                        )],
                    },
                });
                Vec::new()
            }
            Command::Resume(Some(id)) => vec![Action::Resume(id)],
            Command::Resume(None) => {
                if self.facts.recent.is_empty() {
                    self.flash = Some("no other session to pick up yet".into());
                } else {
                    self.overlay = Some(Overlay::Sessions {
                        items: self.facts.recent.clone(),
                        selected: 0,
                    });
                }
                Vec::new()
            }
            Command::Rewind => {
                self.open_rewind();
                Vec::new()
            }
            Command::McpLogin(server) => {
                if self.transcript.busy {
                    self.flash = Some(format!(
                        "the turn is running: log in to {server} once it ends"
                    ));
                    return Vec::new();
                }
                vec![Action::McpLogin(server)]
            }
            Command::McpTrust(server) => vec![Action::McpTrust(server)],
            Command::McpRetry => vec![Action::McpRetry],
            Command::Mcp => {
                let servers = self
                    .facts
                    .mcp
                    .as_ref()
                    .map(|m| m.states())
                    .unwrap_or_default();
                if servers.is_empty() {
                    self.flash = Some(
                        "this session has no MCP servers (cox mcp add, or .mcp.json, adds one)"
                            .into(),
                    );
                } else {
                    self.overlay = Some(Overlay::Mcp {
                        servers,
                        selected: 0,
                    });
                }
                Vec::new()
            }
            Command::Clear => {
                self.transcript = Transcript::new();
                self.transcript.catalog = catalog_of(&self.facts.models);
                vec![Action::NewSession]
            }
            Command::Help => {
                let mut lines: Vec<String> = slash::help()
                    .into_iter()
                    .map(|(name, help)| format!("{name:<22} {help}"))
                    .collect();
                if !self.commands.is_empty() {
                    lines.push(String::new());
                    lines.push("the MCP servers' prompts:".into());
                    lines.extend(self.commands.iter().map(|c| {
                        let usage = format!("/{} {}", c.name, c.hint);
                        let line = format!("{:<22} {}", usage.trim_end(), c.description);
                        crate::sanitize::sanitize(&line).into_owned()
                    }));
                }
                lines.extend([
                    String::new(),
                    "Enter send · Shift+Enter or Alt+Enter newline · Esc interrupt".into(),
                    "Esc Esc rewind · Shift+Tab permission mode · Ctrl+C twice quit".into(),
                    "PgUp/PgDn or the wheel scroll · Up/Down earlier prompts · Ctrl+R search"
                        .into(),
                    "approvals: y allow · s allow for the session · n deny · e edit".into(),
                    "  PgUp/PgDn, Up/Down, Home/End or the wheel scroll what the call would do"
                        .into(),
                ]);
                self.overlay = Some(Overlay::Text {
                    title: "help".into(),
                    lines,
                });
                Vec::new()
            }
            Command::Quit => self.leave(),
        }
    }

    /// The models `/model` may switch to: the catalog's rows (the
    /// shipped ones and those of the user's config) and the one in use.
    #[must_use]
    pub fn known_models(&self) -> Vec<&str> {
        let mut known: Vec<&str> = self
            .facts
            .models
            .iter()
            .map(|(id, ..)| id.as_str())
            .collect();
        let current = self.transcript.model.as_str();
        if !current.is_empty() && !known.contains(&current) {
            known.push(current);
        }
        known
    }

    /// The session's tokens and what they cost, when the model is priced.
    #[must_use]
    pub fn cost_lines(&self) -> Vec<String> {
        let u = &self.transcript.usage;
        let mut lines = vec![
            format!("input tokens        {}", u.input_tokens),
            format!("output tokens       {}", u.output_tokens),
            format!("cache read tokens   {}", u.cache_read_tokens),
            format!("cache write tokens  {}", u.cache_write_tokens),
        ];
        lines.push(match self.cost() {
            Some(usd) => format!("cost                ${usd:.4}"),
            None => "cost                unknown (the model has no price row)".into(),
        });
        let agents = &self.transcript.agents;
        if !agents.rows.is_empty() {
            let u = agents.usage();
            lines.push(format!(
                "subagents           {} · {} in, {} out · ${:.4} (in the cost above)",
                agents.rows.len(),
                u.input_tokens,
                u.output_tokens,
                agents.cost_usd()
            ));
        }
        lines
    }

    /// What the session has cost so far, its subagents' calls included,
    /// when the model is priced.
    #[must_use]
    pub fn cost(&self) -> Option<f64> {
        let prices = self.facts.prices?;
        let u = &self.transcript.usage;
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1e6;
        Some(
            per(u.input_tokens, prices.input)
                + per(u.output_tokens, prices.output)
                + per(u.cache_read_tokens, prices.cache_read)
                + per(u.cache_write_tokens, prices.cache_write)
                + self.transcript.agents.cost_usd(),
        )
    }

    /// The share of the window the last call used, in percent.
    #[must_use]
    pub fn context_percent(&self) -> Option<u64> {
        let window = self.facts.window.filter(|w| *w > 0)?;
        Some(self.transcript.last_context * 100 / window)
    }

    /// The transcript as plain text, for the terminal's scrollback on exit.
    #[must_use]
    pub fn plain_transcript(&self) -> String {
        let mut out = String::new();
        for entry in &self.transcript.entries {
            match entry {
                Entry::User { text, .. } => out.push_str(&format!("\n> {text}\n")),
                Entry::Assistant { text } => out.push_str(&format!("{text}\n")),
                Entry::Thinking { .. } => {}
                Entry::Tool(tool) => {
                    let status = match &tool.result {
                        Some(r) if r.ok => "done",
                        Some(r) if r.denied => "denied",
                        Some(_) => "failed",
                        None => "not finished",
                    };
                    out.push_str(&format!(
                        "  [{} {}: {status}]\n",
                        tool.call.name, tool.call.subject
                    ));
                }
                Entry::Notice { text, .. } => out.push_str(&format!("  ! {text}\n")),
                Entry::Compacted { dropped, .. } => {
                    out.push_str(&format!("  … {dropped} earlier turns compacted\n"));
                }
                Entry::Stopped { stop } => out.push_str(&format!("  [{}]\n", stop.as_str())),
                Entry::Hook {
                    hook, event, said, ..
                } => {
                    out.push_str(&format!("  hook {hook} ({event})"));
                    if let Some(said) = said {
                        out.push_str(&format!(": {said}"));
                    }
                    out.push('\n');
                }
            }
        }
        // It goes straight to the real terminal: one more pass, whatever
        // the entries hold.
        crate::sanitize::sanitize(&out).into_owned()
    }
}

/// The prices of the configured models, for what subagents' calls cost.
fn catalog_of(
    models: &[(String, Option<cox_protocol::catalog::Prices>, u64)],
) -> cox_protocol::catalog::Catalog {
    cox_protocol::catalog::Catalog::new(
        models
            .iter()
            .map(|(id, prices, window)| cox_protocol::catalog::ModelInfo {
                id: id.clone(),
                provider: String::new(),
                context_window: *window,
                max_output: 0,
                prices: *prices,
                prices_as_of: None,
                efforts: Vec::new(),
                web_search: false,
            })
            .collect(),
    )
}
