//! Finding the session `--resume <id>` or `--continue` names, and reading
//! it back.
//!
//! Sessions are found by their rollouts (`sessions/<id>.jsonl`), the record
//! that is always there: an id may be given whole or as a unique prefix, and
//! `--continue` takes the newest session whose `session_started` names this
//! working folder (ULIDs sort by time). The rollout is read back with the
//! store's reader, which tolerates exactly a last line cut short by a
//! crash; the core rebuilds the history from the events.

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use cox_core::Resumed;
use cox_protocol::types::Event;
use cox_store::CoxHome;

/// Which session to pick up.
#[derive(Clone, Debug)]
pub enum Pick {
    /// `--resume <id or prefix>`.
    Id(String),
    /// `--continue`: the newest session of this folder.
    Latest,
}

/// A session read back, ready to go on.
#[derive(Debug)]
pub struct Found {
    pub resumed: Resumed,
    pub rollout: PathBuf,
    /// Things to tell the person (a cut-short last line or turn).
    pub warnings: Vec<String>,
    /// The rollout's events, for a surface that shows the conversation so
    /// far.
    pub events: Vec<Event>,
}

/// Finds and reads the session `pick` names.
///
/// # Errors
/// No such session (or several for a prefix), an unreadable or damaged
/// rollout, a rollout from a newer cox: one line naming the id or file.
/// Whether `id` (or a prefix of one) names a session recorded under this
/// process's `COX_HOME`.
#[must_use]
pub fn known(id: &str) -> bool {
    CoxHome::resolve(None).is_ok_and(|home| by_id(&home, id).is_ok())
}

pub fn find(home: &CoxHome, pick: &Pick, cwd: &Path) -> Result<Found> {
    let rollout = match pick {
        Pick::Id(id) => by_id(home, id)?,
        Pick::Latest => latest_in(home, cwd)?,
    };
    let read = cox_store::read_rollout(&rollout)?;
    let mut warnings = Vec::new();
    if read.truncated_tail {
        warnings.push(format!(
            "rollout {}: the last line was cut short (the process died while writing it); \
             resuming from the line before",
            rollout.display()
        ));
    }
    for line in &read.cut_lines {
        warnings.push(format!(
            "rollout {}:{line}: a line cut short by an earlier crash is skipped",
            rollout.display()
        ));
    }
    let resumed = cox_core::rebuild(&read.events)
        .map_err(|e| anyhow!("rollout {}: {e}", rollout.display()))?;
    if resumed.unfinished_turn {
        warnings.push(format!(
            "session {}: turn {} did not finish; its partial answer is kept and calls that had \
             not finished are answered as not run",
            resumed.session_id,
            resumed.turns()
        ));
    }
    Ok(Found {
        resumed,
        rollout,
        warnings,
        events: read.events,
    })
}

fn rollouts(home: &CoxHome) -> Result<Vec<(String, PathBuf)>> {
    let dir = home.sessions_dir();
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => bail!("{}: cannot list sessions: {e}", dir.display()),
    };
    let mut found: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let path = e.path();
            let id = path
                .file_name()?
                .to_str()?
                .strip_suffix(".jsonl")?
                .to_owned();
            Some((id, path))
        })
        .collect();
    found.sort();
    Ok(found)
}

fn by_id(home: &CoxHome, id: &str) -> Result<PathBuf> {
    // The SDKs spell ids as UUIDs: the same id, whole.
    let wanted = match cox_protocol::SessionId::from_either(id) {
        Some(whole) if id.contains('-') => whole.to_string(),
        _ => id.trim().to_ascii_uppercase(),
    };
    if wanted.is_empty() {
        bail!("--resume needs a session id (see `cox sessions`)");
    }
    let matching: Vec<(String, PathBuf)> = rollouts(home)?
        .into_iter()
        .filter(|(id, _)| id.starts_with(&wanted))
        .collect();
    match matching.as_slice() {
        [] => bail!(
            "no session {id} under {}: `cox sessions` lists them",
            home.sessions_dir().display()
        ),
        [(_, path)] => Ok(path.clone()),
        several => bail!(
            "{id} matches {} sessions ({}): give more of the id",
            several.len(),
            several
                .iter()
                .take(4)
                .map(|(id, _)| id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn latest_in(home: &CoxHome, cwd: &Path) -> Result<PathBuf> {
    let cwd_text = cwd.display().to_string();
    let mut unreadable = Vec::new();
    for (_, path) in rollouts(home)?.into_iter().rev() {
        match started_in(&path) {
            Ok(Some(started)) if started == cwd_text => return Ok(path),
            Ok(_) => {}
            Err(why) => unreadable.push(format!("{}: {why}", path.display())),
        }
    }
    // A session of this folder may be among those that cannot be read:
    // said, not taken for "none".
    if let Some(first) = unreadable.first() {
        bail!(
            "no readable earlier session in {cwd_text} to continue; {} rollout(s) could not be \
             read ({first}): `cox sessions` lists the sessions, cox --resume ID picks one",
            unreadable.len()
        );
    }
    bail!("no earlier session in {cwd_text} to continue: start one with cox run -p \"…\"")
}

/// The working folder of the rollout's first event (`None`: it starts
/// with another event), or why the rollout cannot be read.
fn started_in(path: &Path) -> std::result::Result<Option<String>, String> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut line = String::new();
    std::io::BufReader::new(file)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    match serde_json::from_str::<Event>(&line) {
        Ok(Event::SessionStarted { cwd, .. }) => Ok(Some(cwd)),
        Ok(_) => Ok(None),
        Err(e) => Err(format!("its first line is not a cox event: {e}")),
    }
}
