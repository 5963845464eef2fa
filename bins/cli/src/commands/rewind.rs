//! `cox rewind <session>`: the headless rewind.
//!
//! `--list` prints the session's turns newest first, each with the files it
//! changed (`T7 · 3 files · "add the cache column"`), from the checkpoint
//! rows alone. `--to N` with `--code`, `--conversation` or `--both`
//! resumes the session and sends it one `Rewind`, so the rewind is the
//! core's (its own turn number, its own checkpoints, the `rewound` marker
//! in the rollout) exactly as in the TUI. Files changed outside cox since
//! the session last wrote them stop a rewind of the code, and are named,
//! unless `--force` is given. No model is called, so no key is needed.
//!
//! Exit codes: 0 done, 1 not done (bad arguments, an unknown session or
//! turn, a conflict, a failure), each with one line on stderr.

use anyhow::{Result, anyhow, bail};
use cox_protocol::Checkpoints as _;
use cox_protocol::checkpoint::{FileChange, RewindWhat};
use cox_protocol::types::{Event, NoticeLevel, Submission};

use crate::one_line;
use crate::report::Record;
use crate::session::{build_session, prepare};

/// The flags of `cox rewind`.
#[derive(clap::Args, Debug)]
pub struct RewindArgs {
    /// The session (an id or a unique prefix of one).
    #[arg(value_name = "SESSION")]
    pub session: String,
    /// List the turns, newest first, with the files each changed.
    #[arg(long, conflicts_with = "to")]
    pub list: bool,
    /// Undo this turn and every later one.
    #[arg(long, value_name = "TURN")]
    pub to: Option<u32>,
    /// Restore the files as they were before the turn.
    #[arg(long)]
    pub code: bool,
    /// Cut the conversation before the turn.
    #[arg(long)]
    pub conversation: bool,
    /// Both the files and the conversation.
    #[arg(long)]
    pub both: bool,
    /// Overwrite files changed outside cox since the session wrote them.
    #[arg(long)]
    pub force: bool,
}

/// Runs `cox rewind`; returns the exit code.
pub fn run(args: &RewindArgs) -> i32 {
    match rewind(args) {
        Ok(text) => {
            print!("{text}");
            0
        }
        Err(err) => {
            eprintln!("cox: error: {}", one_line(&err));
            1
        }
    }
}

fn rewind(args: &RewindArgs) -> Result<String> {
    let record = Record::open()?;
    let row = record.session(&args.session)?;
    if args.list {
        return list(&record, &row);
    }
    let Some(to_turn) = args.to else {
        bail!(
            "say what to do: cox rewind {} --list, or --to TURN with --code, --conversation or --both",
            args.session
        );
    };
    let what = match (args.code, args.conversation, args.both) {
        (true, false, false) => RewindWhat::Code,
        (false, true, false) => RewindWhat::Conversation,
        (false, false, true) | (true, true, false) => RewindWhat::Both,
        (false, false, false) => bail!("--to {to_turn} needs --code, --conversation or --both"),
        _ => bail!("--both already means --code and --conversation"),
    };
    // Parsed as `cox run` would be, so the variables it reads (the
    // provider, the model) apply here too.
    let run_args = {
        use clap::Parser as _;
        // No MCP server: a rewind calls no tool.
        let argv = ["cox", "--resume", &row.id, "--cwd", &row.cwd, "--no-mcp"];
        crate::args::HeadlessCli::try_parse_from(argv)
            .map_err(|e| anyhow!("{e}"))?
            .into_run()
            .map_err(|e| anyhow!(e))?
    };
    // A rewind calls no model: the session resumes over one that names the
    // session's own provider and model and answers any call with an error,
    // so no key is needed.
    let no_model = NoModel {
        name: row.provider.clone().unwrap_or_else(|| "none".to_owned()),
        model: row.model.clone().unwrap_or_else(|| "none".to_owned()),
    };
    let prepared = prepare(&run_args, |_| Ok(no_model), crate::session::Consent::Flag)?;
    let (session, _) = build_session(
        prepared,
        None,
        cox_protocol::types::ApprovalPolicy::Never,
        crate::session::Editor::default(),
    )?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow!("cannot start the async runtime: {e}"))?;
    let submissions = futures::stream::iter([
        Submission::Rewind {
            to_turn,
            what,
            force: args.force,
        },
        Submission::Shutdown,
    ]);
    let mut said = String::new();
    let mut failed: Option<String> = None;
    runtime.block_on(session.run(submissions, |event| match event {
        Event::Rewound {
            to_turn,
            turn,
            what,
            files,
            unkept,
        } => {
            said.push_str(&format!("rewound {} to before turn {to_turn} (as turn {turn})\n", match what {
                RewindWhat::Code => "the code",
                RewindWhat::Conversation => "the conversation",
                RewindWhat::Both => "the code and the conversation",
            }));
            for file in files {
                let how = match file.change {
                    FileChange::Created => "removed",
                    FileChange::Deleted => "restored",
                    FileChange::Pre => "restored",
                };
                said.push_str(&format!("  {how} {}\n", file.path));
            }
            for path in unkept {
                said.push_str(&format!("  left as it is (too large to have been kept): {path}\n"));
            }
        }
        Event::RewindConflict { files, .. } => {
            failed = Some(format!(
                "not rewound: changed since cox last wrote them: {}; run again with --force to overwrite them",
                files.join(", ")
            ));
        }
        Event::Notice {
            level: NoticeLevel::Error,
            text,
        } if failed.is_none() => failed = Some(text.clone()),
        _ => {}
    }))?;
    match failed {
        Some(why) => Err(anyhow!(why)),
        None => Ok(said),
    }
}

/// The provider a rewind runs over (see [`rewind`]).
struct NoModel {
    name: String,
    model: String,
}

impl cox_protocol::Provider for NoModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn stream(
        &self,
        _request: cox_protocol::provider::Request,
        _cancel: cox_protocol::CancelToken,
    ) -> impl futures::Stream<
        Item = Result<cox_protocol::provider::StreamEvent, cox_protocol::provider::ProviderError>,
    > + Send
    + 'static {
        futures::stream::once(std::future::ready(Err(
            cox_protocol::provider::ProviderError::Failed("a rewind calls no model".to_owned()),
        )))
    }
}

fn list(record: &Record, row: &cox_store::SessionRow) -> Result<String> {
    let store = cox_checkpoints::GitCheckpoints::open(&record.home, &[row.cwd.clone().into()])
        .map_err(|e| anyhow!("{e}"))?;
    let id: cox_protocol::SessionId = row
        .id
        .parse()
        .map_err(|_| anyhow!("session id {} is not valid", row.id))?;
    let turns = futures::executor::block_on(store.list(id)).map_err(|e| anyhow!("{e}"))?;
    if turns.is_empty() {
        return Ok(format!("session {} has no turns to rewind\n", row.id));
    }
    let mut out = String::new();
    for turn in turns {
        let files = match turn.files.len() {
            1 => "1 file".to_owned(),
            n => format!("{n} files"),
        };
        out.push_str(&format!("T{} · {files} · {:?}\n", turn.turn, turn.prompt));
        for file in &turn.files {
            let note = if turn.unkept.contains(file) {
                " (too large: not kept)"
            } else {
                ""
            };
            out.push_str(&format!("    {file}{note}\n"));
        }
    }
    Ok(out)
}
