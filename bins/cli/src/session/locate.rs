//! Where a session works: the folder (`--cwd`, a resumed session's, a
//! worktree made or reopened by `--worktree`), the main checkout a linked
//! worktree reads, the folder its project settings are read in, and, once
//! the plan is known, the workspace roots (`--add-dir`, Claude Code's
//! `additionalDirectories`).
//!
//! Invariants: every folder is canonical and exists, or the session does
//! not start (with the flag or the file and line that named it); a
//! worktree's main checkout, and any root inside it, is read-only.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use cox_protocol::tool::Workspace;
use cox_store::CoxHome;

use crate::args::RunArgs;
use crate::plan::Plan;
use crate::{env, resume};

/// Where a session works, before its settings are read.
pub(super) struct Place {
    /// The session's folder, canonical.
    pub(super) cwd: PathBuf,
    /// The folder its project settings are read in (a subagent's: its
    /// parent's).
    pub(super) settings_from: PathBuf,
    /// Other checkouts the project's deny and ask rules hold in too.
    pub(super) also: Vec<PathBuf>,
    /// A linked worktree's main checkout, read and never written.
    pub(super) main_checkout: Option<PathBuf>,
    /// The session `--resume` or `--continue` picks up.
    pub(super) found: Option<resume::Found>,
    /// What opening a worktree had to say.
    notes: Vec<String>,
    /// `--add-dir`, each canonical.
    add_dirs: Vec<PathBuf>,
}

/// Finds where a session with `args` works, for `lineage`.
///
/// # Errors
/// A folder that cannot be opened, a session to resume that is not there,
/// a worktree that cannot be made.
pub(super) fn locate(
    args: &RunArgs,
    home: &CoxHome,
    lineage: &crate::ext::agent_tool::Lineage,
) -> Result<Place> {
    let pick = match (&args.resume, args.continue_) {
        (Some(id), _) => Some(resume::Pick::Id(id.clone())),
        (None, true) => Some(resume::Pick::Latest),
        (None, false) => None,
    };
    let here = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    let found = match &pick {
        Some(pick) => {
            let at = std::fs::canonicalize(&here).unwrap_or_else(|_| here.clone());
            Some(resume::find(home, pick, &at)?)
        }
        None => None,
    };
    // A resumed session runs where it ran, unless --cwd says otherwise.
    // `--worktree`: the session works there, whatever it resumes.
    let worktree = match &args.worktree {
        Some(name) => {
            let at = std::fs::canonicalize(&here).unwrap_or_else(|_| here.clone());
            Some(crate::worktree::open(
                &at,
                name,
                std::process::id(),
                &env::now_rfc3339()[..10],
            )?)
        }
        None => None,
    };
    let cwd = match (&found, &args.cwd, &worktree) {
        (_, _, Some(worktree)) => worktree.path.clone(),
        (Some(found), None, None) => PathBuf::from(&found.resumed.cwd),
        _ => here,
    };
    let cwd = std::fs::canonicalize(&cwd).with_context(|| match (&found, &args.cwd) {
        (Some(found), None) if found.resumed.cwd.contains("/_worktrees/") => format!(
            "session {id} worked in the worktree {}, which is gone: see `git worktree list`, \
             or run `cox --worktree <name> --resume {id}` to make it again",
            cwd.display(),
            id = found.resumed.session_id,
        ),
        (Some(found), None) => format!(
            "session {} ran in {}, which cannot be opened now: pass --cwd to resume it elsewhere",
            found.resumed.session_id,
            cwd.display()
        ),
        _ => format!("--cwd {}: cannot open the folder", cwd.display()),
    })?;
    if !cwd.is_dir() {
        bail!("--cwd {}: not a folder", cwd.display());
    }
    // A worktree session (this one, or one resumed in its worktree) reads
    // its main checkout as a second root, and never writes it.
    let main_checkout = match &worktree {
        Some(worktree) => Some(worktree.main.clone()),
        // Any linked worktree, made by cox or not: its main checkout is
        // read, never written.
        None => crate::worktree::linked(&cwd),
    }
    // A worktree inside its main checkout (`<repo>/.worktrees/x`) works as
    // a folder of it: the checkout is no second root there.
    .filter(|main| !cwd.starts_with(main));
    let mut add_dirs = Vec::new();
    for dir in &args.add_dir {
        let root = std::fs::canonicalize(dir)
            .with_context(|| format!("--add-dir {}: cannot open the folder", dir.display()))?;
        if !root.is_dir() {
            bail!("--add-dir {}: not a folder", dir.display());
        }
        add_dirs.push(root);
    }
    // Where the project's settings are read: a subagent's are its
    // parent's, even in a worktree of its own (whose checkout may lack the
    // parent's uncommitted rules and trusted hooks).
    let settings_from = lineage.settings_from.clone().unwrap_or_else(|| cwd.clone());
    // A project's deny and ask rules about relative paths hold in every
    // checkout the session reaches: its parent's folder, its main checkout.
    let also: Vec<PathBuf> = [Some(settings_from.clone()), main_checkout.clone()]
        .into_iter()
        .flatten()
        .filter(|anchor| *anchor != cwd)
        .collect();
    Ok(Place {
        cwd,
        settings_from,
        also,
        main_checkout,
        found,
        notes: worktree.map(|w| w.notes).unwrap_or_default(),
        add_dirs,
    })
}

impl Place {
    /// Says what opening the worktree and reading the resumed session had
    /// to say (on stderr, and in the log).
    pub(super) fn say(&self) {
        for note in &self.notes {
            eprintln!("cox: {note}");
            tracing::info!(%note, "worktree");
        }
        if let Some(found) = &self.found {
            for warning in &found.warnings {
                eprintln!("cox: warning: {warning}");
                tracing::warn!(%warning, "resume");
            }
            tracing::info!(
                session = %found.resumed.session_id,
                rollout = %found.rollout.display(),
                turns = found.resumed.turns(),
                "resume"
            );
        }
    }

    /// The workspace: the folder, the main checkout, `--add-dir` and the
    /// plan's `additionalDirectories` (each of which must be a folder).
    ///
    /// # Errors
    /// An `additionalDirectories` entry that is no folder: its file and line.
    pub(super) fn workspace(&self, plan: &Plan) -> Result<Workspace> {
        let mut roots = vec![self.cwd.clone()];
        roots.extend(self.main_checkout.clone());
        for root in &self.add_dirs {
            if !roots.contains(root) {
                roots.push(root.clone());
            }
        }
        for (written, line) in &plan.additional_dirs {
            let root = std::fs::canonicalize(written)
                .ok()
                .filter(|p| p.is_dir())
                .ok_or_else(|| anyhow::anyhow!("{line}"))?;
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
        // The main checkout is read-only, and so is any other root inside
        // it (`--add-dir <main>/docs`): only the working folder is written.
        let read_only = match &self.main_checkout {
            Some(main) => roots
                .iter()
                .filter(|root| **root != self.cwd && root.starts_with(main))
                .cloned()
                .collect(),
            None => Vec::new(),
        };
        Ok(Workspace {
            cwd: self.cwd.clone(),
            roots,
            read_only,
        })
    }
}
