//! The terminal, the event loop and the session, together.
//!
//! One single-threaded runtime drives the session and the screen side by
//! side: the session's events reach the [`App`] through a channel, keys
//! become submissions through another. Redraws are coalesced: an event or a
//! key only marks the screen dirty, and a dirty screen is drawn at most once
//! per frame (16 ms); an idle screen sets no timer at all, so an idle TUI
//! does not wake up.
//!
//! The terminal is put in raw mode on the alternate screen with bracketed
//! paste and mouse reporting, and restored on every way out, a panic
//! included (ratatui's panic hook). After it is restored the transcript is
//! printed as plain text, so it lands in the terminal's scrollback.
//!
//! A `/mcp login` runs beside the session: the URL to open is drawn in
//! the transcript (the caller's `login` also opens a browser), and once
//! the browser's redirect brings the token the session is picked up again,
//! so the server's tools join it. `/mcp trust` (a project's server not
//! trusted yet) runs the same way, and `/mcp retry` picks the session up
//! again at once (when no turn runs), its servers connected anew.
//!
//! The one file read: when the session asks for a write or an edit, the file
//! it names is read right there, in the session's event callback, before
//! the session can go on to run the call, so its preview compares against
//! the file the call will find (see [`crate::preview`]).

use std::io;
use std::pin::pin;
use std::time::{Duration, Instant};

use cox_core::{Session, World};
use cox_protocol::CallId;
use cox_protocol::types::{Event, NoticeLevel, Submission};
use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    Event as Input, EventStream, KeyEventKind, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use futures::channel::mpsc;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use ratatui::DefaultTerminal;

use crate::app::{Action, App, Facts};
use crate::preview::{self, MAX_READ, Read};
pub use crate::trust::TrustQuestion;

/// The longest a dirty screen waits to be drawn.
const FRAME: Duration = Duration::from_millis(16);

/// How a session run ended.
enum Ended {
    Quit,
    NewSession,
    Resume(String),
    /// A login went through: the session is picked up again, its servers
    /// connected anew, the login's lines (`said`, the last one flashed)
    /// drawn again after its past, and what the person was typing (`draft`)
    /// and had queued kept.
    Reconnect {
        id: String,
        said: Vec<String>,
        draft: String,
        queued: std::collections::VecDeque<String>,
    },
}

/// Logs in to an MCP server: given its name and where to send the lines
/// the person must see (the URL to open; the caller also opens a browser
/// on it), it answers what to say once logged in, or why the login
/// failed.
pub type Login =
    dyn Fn(String, mpsc::UnboundedSender<String>) -> BoxFuture<'static, Result<String, String>>;

/// What `/mcp` does to a server besides the session: log in to it, or
/// trust it as it is configured now (a project's server); each answers
/// what to say once done, and the session is then picked up again.
pub struct McpFlows<'a> {
    pub login: &'a Login,
    pub trust: &'a Login,
}

/// What `make` is asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    /// The session the command line named (new, `--resume`, `--continue`).
    First,
    /// A fresh session (`/clear`).
    Fresh,
    /// Session `id`, picked up (`/resume <id>`).
    Resume(String),
}

/// Runs the TUI until the person quits. `make` builds a session and the
/// facts for its status line; it is called again after `/clear`,
/// `/resume`, a `/mcp login` or `/mcp trust` (which `flows` run) and a
/// `/mcp retry`. With a `question`
/// (a project's hooks wait for trust), it is asked first, and the session
/// is built after the answer. Returns the exit code.
pub fn run<W, M>(mut make: M, flows: &McpFlows<'_>, question: Option<TrustQuestion>) -> i32
where
    W: World,
    M: FnMut(Start) -> Result<(Session<W>, Facts), String>,
{
    // Without a question the session is built first, so its own errors (an
    // unknown --resume id) are said even where there is no terminal.
    let built = match question {
        Some(_) => None,
        None => match make(Start::First) {
            Ok(made) => Some(made),
            Err(err) => {
                eprintln!("cox: error: {err}");
                return 1;
            }
        },
    };
    {
        use std::io::IsTerminal;
        if !io::stdin().is_terminal() || !io::stdout().is_terminal() {
            eprintln!(
                "cox: error: the terminal UI needs a terminal (stdin or stdout is not one); \
                 run a task headless with `cox run -p \"…\"`"
            );
            return 1;
        }
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("cox: error: cannot start the async runtime: {err}");
            return 1;
        }
    };
    let mut terminal = match ratatui::try_init() {
        Ok(terminal) => terminal,
        Err(err) => {
            eprintln!("cox: error: cannot open the terminal UI: {err}");
            return 1;
        }
    };
    // ratatui's hook restores raw mode and the screen; undo our modes too.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = execute!(
            io::stdout(),
            PopKeyboardEnhancementFlags,
            DisableBracketedPaste,
            DisableMouseCapture
        );
        previous(info);
    }));
    let _ = execute!(io::stdout(), EnableBracketedPaste, EnableMouseCapture);
    // Where the terminal can tell Shift+Enter from Enter, ask it to.
    let enhanced = crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false);
    if enhanced {
        let _ = execute!(
            io::stdout(),
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        );
    }
    let restore = || {
        if enhanced {
            let _ = execute!(io::stdout(), PopKeyboardEnhancementFlags);
        }
        let _ = execute!(io::stdout(), DisableBracketedPaste, DisableMouseCapture);
        ratatui::restore();
    };
    let mut answer: Option<(NoticeLevel, String)> = None;
    if let Some(question) = question {
        let count = crate::trust::counted(&question.hooks);
        answer = Some(match crate::trust::ask(&mut terminal, &question) {
            Ok(true) => match (question.trust)() {
                Ok(()) => (
                    NoticeLevel::Info,
                    format!("trusted {count} of this folder; they take effect from now on"),
                ),
                Err(err) => (NoticeLevel::Error, err),
            },
            Ok(false) => (
                NoticeLevel::Warn,
                format!(
                    "{count} of this folder are not trusted and take no effect; \
                     `cox ext trust` trusts them"
                ),
            ),
            Err(err) => {
                restore();
                eprintln!("cox: error: the terminal failed: {err}");
                return 1;
            }
        });
    }
    let (session, facts) = match built {
        Some(made) => made,
        None => match make(Start::First) {
            Ok(made) => {
                // Building it may have printed warnings over the screen.
                let _ = terminal.clear();
                made
            }
            Err(err) => {
                restore();
                eprintln!("cox: error: {err}");
                return 1;
            }
        },
    };
    let mut app = App::new(facts, Vec::new());
    if let Some((level, line)) = &answer {
        app.note(*level, line);
    }
    let mut session = Some(session);
    let mut code = 0;
    while let Some(current) = session.take() {
        let ended = runtime.block_on(drive(current, &mut app, &mut terminal, flows));
        match ended {
            Ok(Ended::Quit) => break,
            Ok(next) => match make(match &next {
                Ended::Resume(id) | Ended::Reconnect { id, .. } => Start::Resume(id.clone()),
                _ => Start::Fresh,
            }) {
                Ok((started, facts)) => {
                    // Building it may have printed warnings over the screen.
                    let _ = terminal.clear();
                    let history = app.composer.history().to_vec();
                    app = App::new(facts, history);
                    if let Ended::Reconnect {
                        said,
                        draft,
                        queued,
                        ..
                    } = next
                    {
                        for line in &said {
                            app.note(NoticeLevel::Info, line);
                        }
                        app.flash = said.last().cloned();
                        app.composer.set_text(&draft);
                        app.queued = queued;
                    }
                    session = Some(started);
                }
                Err(err) => {
                    app.flash = Some(err);
                    code = 1;
                    break;
                }
            },
            Err(err) => {
                app.flash = Some(format!("the terminal failed: {err}"));
                code = 1;
                break;
            }
        }
    }
    restore();
    print!("{}", app.plain_transcript());
    if let Some(flash) = &app.flash
        && code != 0
    {
        eprintln!("cox: error: {flash}");
    }
    code
}

/// One session, from start to its end.
async fn drive<W: World>(
    session: Session<W>,
    app: &mut App,
    terminal: &mut DefaultTerminal,
    flows: &McpFlows<'_>,
) -> io::Result<Ended> {
    let (events_tx, mut events) = mpsc::unbounded::<(Event, Option<(CallId, Read)>)>();
    let (subs, subs_rx) = mpsc::unbounded::<Submission>();
    let watcher = app.facts.watcher.clone();
    let mut running = pin!(
        session
            .run(subs_rx, move |event| {
                if let Some(watcher) = &watcher {
                    watcher
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .event(event);
                }
                let _ = events_tx.unbounded_send((event.clone(), look(event)));
            })
            .fuse()
    );
    let mut input = EventStream::new();
    let mut dirty = true;
    let mut next_frame = tokio::time::Instant::now();
    let mut ended: Option<Ended> = None;
    let mut session_done = false;
    // Once the person asked to leave, a session that does not end (a
    // compaction call, a stuck tool) is given this long, then dropped.
    let mut leave_by: Option<tokio::time::Instant> = None;
    // For the launch benchmark: leave as soon as the first frame is up.
    let first_frame_only = std::env::var_os("COX_TUI_EXIT_AFTER_FIRST_FRAME").is_some();
    // A `/mcp login` under way: the server, and the flow (which waits for
    // the browser's redirect); the URLs it asks the person to open.
    let mut logging_in: Option<(String, BoxFuture<'static, Result<String, String>>)> = None;
    // What the login said, to be said again once the session is picked up.
    let mut said: Vec<String> = Vec::new();
    // A login went through: the session is picked up again once no turn
    // runs and no approval waits.
    let mut reconnect = false;
    // The status line's command: what it was last given, when it may run
    // next, the run under way, and whether a failure was said.
    let status_command = app.facts.status_line.clone();
    let mut status_given = String::new();
    let mut status_at = tokio::time::Instant::now();
    let mut status_run: Option<BoxFuture<'static, Result<String, String>>> = None;
    let mut status_warned = false;
    let (lines_tx, mut urls) = mpsc::unbounded::<String>();
    loop {
        if dirty && tokio::time::Instant::now() >= next_frame {
            terminal.draw(|frame| crate::view::draw(frame, app))?;
            dirty = false;
            next_frame = tokio::time::Instant::now() + FRAME;
            if first_frame_only && ended.is_none() {
                let _ = subs.unbounded_send(Submission::Shutdown);
                ended = Some(Ended::Quit);
            }
        }
        if session_done && ended.is_some() {
            break;
        }
        if ended.is_some() && leave_by.is_none() {
            leave_by = Some(tokio::time::Instant::now() + Duration::from_secs(3));
        }
        if leave_by.is_some_and(|at| tokio::time::Instant::now() >= at) {
            break;
        }
        let mut status_due = None;
        if let Some(command) = &status_command
            && status_run.is_none()
        {
            let input = app.status_input().to_string();
            if input != status_given {
                let now = tokio::time::Instant::now();
                if now >= status_at {
                    status_given.clone_from(&input);
                    status_at = now + crate::status_line::EVERY;
                    let command = command.clone();
                    status_run = Some(Box::pin(async move {
                        crate::status_line::run(&command, &input).await
                    }));
                } else {
                    status_due = Some(status_at);
                }
            }
        }
        let wake = match (dirty, leave_by) {
            (true, Some(at)) => Some(next_frame.min(at)),
            (true, None) => Some(next_frame),
            (false, at) => at,
        };
        let wake = [wake, status_due].into_iter().flatten().min();
        let frame_due = async {
            match wake {
                Some(at) => tokio::time::sleep_until(at).await,
                None => futures::future::pending::<()>().await,
            }
        };
        let status_live = status_run.is_some();
        let status_done = async {
            match status_run.as_mut() {
                Some(run) => run.await,
                None => futures::future::pending().await,
            }
        };
        let login_live = logging_in.is_some() && ended.is_none();
        let logged_in = async {
            match logging_in.as_mut() {
                Some((_, flow)) => flow.await,
                None => futures::future::pending().await,
            }
        };
        tokio::select! {
            result = status_done, if status_live => {
                status_run = None;
                match result {
                    Ok(line) => app.custom_status = Some(line),
                    Err(why) => {
                        app.custom_status = None;
                        if !status_warned {
                            status_warned = true;
                            app.note(
                                NoticeLevel::Warn,
                                &format!(
                                    "the status line command failed ({why}); the built-in line is shown"
                                ),
                            );
                        }
                    }
                }
                dirty = true;
            }
            Some(line) = urls.next() => {
                app.note(NoticeLevel::Info, &line);
                said.push(line);
                dirty = true;
            }
            result = logged_in, if login_live => {
                logging_in = None;
                match result {
                    Ok(note) => {
                        let when = if app.transcript.busy {
                            "; connecting it when this turn ends"
                        } else {
                            "; connecting it"
                        };
                        app.note(NoticeLevel::Info, &format!("{note}{when}"));
                        said.push(note);
                        reconnect = true;
                    }
                    Err(why) => {
                        said.clear();
                        app.note(NoticeLevel::Error, &why);
                    }
                }
                dirty = true;
            }
            result = &mut running, if !session_done => {
                session_done = true;
                if let Err(err) = result {
                    app.flash = Some(err.to_string());
                }
                // The session is over: drain what it said, then leave.
                while let Ok(event) = events.try_recv() {
                    fold(app, event);
                }
                ended.get_or_insert(Ended::Quit);
                dirty = true;
            }
            Some(event) = events.next() => {
                fold(app, event);
                // Take everything already waiting before drawing.
                while let Ok(event) = events.try_recv() {
                    fold(app, event);
                }
                dirty = true;
            }
            Some(read) = input.next() => {
                let Ok(read) = read else { continue };
                let actions = match read {
                    Input::Key(key) if key.kind != KeyEventKind::Release => {
                        app.on_key(key, Instant::now())
                    }
                    Input::Paste(text) => {
                        app.on_paste(&text);
                        Vec::new()
                    }
                    Input::Mouse(mouse) => {
                        app.on_mouse(mouse);
                        Vec::new()
                    }
                    _ => Vec::new(),
                };
                for action in actions {
                    match action {
                        Action::Submit(sub) => {
                            let _ = subs.unbounded_send(sub);
                        }
                        Action::Quit => {
                            let _ = subs.unbounded_send(Submission::Interrupt);
                            let _ = subs.unbounded_send(Submission::Shutdown);
                            ended = Some(Ended::Quit);
                        }
                        Action::NewSession => {
                            let _ = subs.unbounded_send(Submission::Interrupt);
                            let _ = subs.unbounded_send(Submission::Shutdown);
                            ended = Some(Ended::NewSession);
                        }
                        Action::Resume(id) => {
                            let _ = subs.unbounded_send(Submission::Interrupt);
                            let _ = subs.unbounded_send(Submission::Shutdown);
                            ended = Some(Ended::Resume(id));
                        }
                        Action::McpLogin(server) => match &logging_in {
                            Some((running, _)) => {
                                app.flash = Some(format!(
                                    "a login to {running} is waiting for the browser"
                                ));
                            }
                            None => {
                                app.note(
                                    NoticeLevel::Info,
                                    &format!("logging in to MCP server '{server}'…"),
                                );
                                let flow = (flows.login)(server.clone(), lines_tx.clone());
                                logging_in = Some((server, flow));
                            }
                        },
                        // Trusting reads and writes cox.db and lists the
                        // server's tools: a flow like a login's, whose end
                        // picks the session up again.
                        Action::McpTrust(server) => match &logging_in {
                            Some((running, _)) => {
                                app.flash = Some(format!(
                                    "MCP server {running} is being logged in to or trusted; try again once it is done"
                                ));
                            }
                            None => {
                                app.note(
                                    NoticeLevel::Info,
                                    &format!("trusting MCP server '{server}'…"),
                                );
                                let flow = (flows.trust)(server.clone(), lines_tx.clone());
                                logging_in = Some((server, flow));
                            }
                        },
                        Action::McpRetry => {
                            let when = if app.transcript.busy {
                                " when this turn ends"
                            } else {
                                ""
                            };
                            app.note(
                                NoticeLevel::Info,
                                &format!("connecting the MCP servers anew{when}"),
                            );
                            reconnect = true;
                        }
                    }
                }
                dirty = true;
            }
            () = frame_due => {}
        }
        if reconnect && ended.is_none() && !app.transcript.busy && app.transcript.pending.is_none()
        {
            reconnect = false;
            let _ = subs.unbounded_send(Submission::Shutdown);
            ended = Some(Ended::Reconnect {
                id: app.session_id().to_owned(),
                said: std::mem::take(&mut said),
                draft: app.composer.text(),
                queued: std::mem::take(&mut app.queued),
            });
            dirty = true;
        }
        if ended.is_none() {
            for action in app.ready() {
                if let Action::Submit(sub) = action {
                    let _ = subs.unbounded_send(sub);
                }
            }
        }
    }
    Ok(ended.unwrap_or(Ended::Quit))
}

/// An event and what [`look`] read for it, into the app.
fn fold(app: &mut App, (event, read): (Event, Option<(CallId, Read)>)) {
    app.on_event(&event);
    if let Some((call_id, read)) = read {
        app.on_file(&call_id, &read);
    }
}

/// For a write or an edit being requested: the file it names, as it is now.
fn look(event: &Event) -> Option<(CallId, Read)> {
    let Event::ToolCallRequested { call } = event else {
        return None;
    };
    if !preview::wants_file(call) {
        return None;
    }
    Some((
        call.id.clone(),
        read_file(std::path::Path::new(&call.subject)),
    ))
}

/// The text of the file at `path` (the call's subject: the confined,
/// absolute path, or what the model wrote when it could not be confined),
/// up to [`MAX_READ`] bytes. Only a regular file is opened, so a FIFO or a
/// device never blocks the session.
fn read_file(path: &std::path::Path) -> Read {
    use std::io::Read as _;
    if !path.is_absolute() {
        return Read::Failed("the path is not in the workspace".into());
    }
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Read::Missing,
        Err(err) => return Read::Failed(err.to_string()),
    };
    if !meta.is_file() {
        return Read::Failed("not a regular file".into());
    }
    if meta.len() > MAX_READ {
        return Read::Failed(format!("larger than {} MiB", MAX_READ >> 20));
    }
    let mut bytes = Vec::new();
    let read =
        std::fs::File::open(path).and_then(|file| file.take(MAX_READ + 1).read_to_end(&mut bytes));
    match read {
        Err(err) => Read::Failed(err.to_string()),
        Ok(n) if n as u64 > MAX_READ => Read::Failed(format!("larger than {} MiB", MAX_READ >> 20)),
        Ok(_) => match String::from_utf8(bytes) {
            Ok(text) => Read::Text(text),
            Err(_) => Read::Failed("not UTF-8 text".into()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_as_text_or_said_why_not() {
        let dir = std::env::temp_dir().join(format!("cox-tui-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = dir.join("a.txt");
        std::fs::write(&text, "alpha\nbeta\n").unwrap();
        let binary = dir.join("b.bin");
        std::fs::write(&binary, [0xff, 0xfe, 0]).unwrap();
        assert_eq!(read_file(&text), Read::Text("alpha\nbeta\n".into()));
        assert_eq!(read_file(&dir.join("none")), Read::Missing);
        assert_eq!(read_file(&binary), Read::Failed("not UTF-8 text".into()));
        assert_eq!(read_file(&dir), Read::Failed("not a regular file".into()));
        assert_eq!(
            read_file(std::path::Path::new("relative.txt")),
            Read::Failed("the path is not in the workspace".into())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
