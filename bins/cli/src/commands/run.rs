//! `cox run`: one headless task from the command line to an exit code.
//!
//! Every binary that offers `run` calls [`execute`] with its own way of
//! building a provider, so each picks its adapters at compile time while the
//! flags, the output formats and the exit codes stay the same everywhere.
//!
//! Order of work: check the arguments, then `crate::session::prepare`
//! (`COX_HOME`, the log, the provider), read the prompt (stdin last, so a
//! bad flag never waits on a pipe), then run one session of one turn on a
//! single-threaded runtime. Anything that fails before the session starts
//! is one line on stderr and exit 1; once it starts, failures are events
//! and the exit code says how the turn ended.

pub mod prompt;

use std::io::Write;
use std::time::Instant;

use anyhow::Result;
use cox_protocol::Provider;
use cox_protocol::types::Submission;

use crate::args::{self, OutputFormat, RunArgs};
use crate::one_line;
use crate::output;
use crate::providers::ProviderChoice;
use crate::session::{Prepared, build_session, prepare};

/// Runs `cox run` and returns the process exit code. Errors before the
/// session starts are printed as one line.
pub fn execute<P, M>(args: RunArgs, make_provider: M) -> i32
where
    P: Provider,
    M: FnOnce(&ProviderChoice) -> Result<P>,
{
    // Every file the session is set up from is read once, here or below.
    let _reads = crate::config::once::scope();
    if args.sdk.streaming() {
        return crate::sdk::execute(args, |args, approval| {
            let prepared = prepare(args, make_provider, crate::session::Consent::Flag)?;
            let catalog = prepared.catalog.clone();
            let (session, facts) = build_session(
                prepared,
                args.max_turns,
                approval,
                crate::session::Editor::default(),
            )?;
            Ok((session, facts, catalog))
        });
    }
    let stream_json = args.output_format == Some(OutputFormat::StreamJson);
    // Claude Code's frames for a script (`-p … --output-format stream-json
    // --verbose`): the Agent SDK's writer, with this one prompt.
    if stream_json && args.verbose {
        let prompt = prompt::check(args.prompt.as_deref())
            .and_then(|()| prompt::images(&args.image))
            .and_then(|images| Ok((prompt::resolve(args.prompt.as_deref())?, images)));
        return match prompt {
            Ok(prompt) => crate::sdk::execute_one(args, prompt, |args, approval| {
                let prepared = prepare(args, make_provider, crate::session::Consent::Flag)?;
                let catalog = prepared.catalog.clone();
                let (session, facts) = build_session(
                    prepared,
                    args.max_turns,
                    approval,
                    crate::session::Editor::default(),
                )?;
                Ok((session, facts, catalog))
            }),
            Err(err) => {
                eprintln!("cox: error: {}", one_line(&err));
                1
            }
        };
    }
    let started = Instant::now();
    let refused = args
        .sdk
        .refusal(stream_json)
        .or_else(|| crate::sdk::sdk_server_refusal(&args.mcp_config));
    if let Some(line) = refused {
        eprintln!("cox: error: {line}");
        return 1;
    }
    let schema = match crate::structured::Schema::from_flags(&args.sdk) {
        Ok(schema) => schema,
        Err(err) => {
            eprintln!("cox: error: {}", one_line(&err));
            return 1;
        }
    };
    let mut args = args;
    if let Some(schema) = &schema {
        // The model is told the schema after everything else it is told.
        args.append_system_prompt = Some(
            [args.append_system_prompt.take(), Some(schema.instruction())]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("\n\n"),
        );
    }
    // Every check first, stdin last: a bad flag never waits on a pipe.
    let prepared = prompt::check(args.prompt.as_deref())
        .and_then(|()| prompt::images(&args.image))
        .and_then(|images| {
            Ok((
                prepare(&args, make_provider, crate::session::Consent::Flag)?,
                images,
            ))
        })
        .and_then(|(prepared, images)| {
            Ok((prepared, prompt::resolve(args.prompt.as_deref())?, images))
        });
    match prepared {
        Ok((prepared, prompt, images)) => {
            run_session(prepared, &args, (prompt, images), schema.as_ref(), started)
        }
        Err(err) => {
            eprintln!("cox: error: {}", one_line(&err));
            1
        }
    }
}

fn run_session<P: Provider>(
    prepared: Prepared<P>,
    args: &RunArgs,
    (prompt, images): (String, Vec<cox_protocol::types::Image>),
    schema: Option<&crate::structured::Schema>,
    started: Instant,
) -> i32 {
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
    let catalog = prepared.catalog.clone();
    let mut watch = crate::telemetry::Watch::new(catalog.clone());
    let approval = args::Approve::policy(args.approve);
    let (session, facts) = match build_session(
        prepared,
        args.max_turns,
        approval,
        crate::session::Editor::default(),
    ) {
        Ok(built) => built,
        Err(err) => {
            eprintln!("cox: error: {}", one_line(&err));
            return 1;
        }
    };
    let id = session.id();
    let stdout = std::io::stdout().lock();
    let terminal = std::io::IsTerminal::is_terminal(&stdout);
    let format = args.output_format.unwrap_or(OutputFormat::Text);
    let mut renderer = output::Renderer::new(stdout, format, started)
        .with_catalog(catalog)
        .with_servers(facts.mcp_servers)
        .verbose(args.verbose)
        .terminal(terminal);
    let outcome = runtime.block_on(async {
        let (interrupt_tx, interrupt_rx) = futures::channel::mpsc::unbounded();
        watch_ctrl_c(interrupt_tx.clone());
        let (turns_tx, turns_rx) = futures::channel::mpsc::unbounded();
        let _ = turns_tx.unbounded_send(Submission::UserTurn {
            text: prompt,
            images,
        });
        let submissions = futures::stream::select(turns_rx, interrupt_rx);
        let mut stop_sent = false;
        let mut asked_again = false;
        session
            .run(submissions, |event| {
                // A diagnostic belongs to the span open when it came.
                log_event(event);
                watch.event(event);
                renderer.event(event);
                // The run is one turn, and for --json-schema its answer's
                // second chance: then it ends.
                if let cox_protocol::types::Event::TurnDone { stop } = event {
                    let next = match schema {
                        Some(schema) if *stop == cox_protocol::types::StopReason::EndTurn => {
                            match schema.check(renderer.answer()) {
                                Ok(value) => {
                                    renderer.structured(Ok(value));
                                    Submission::Shutdown
                                }
                                Err(why) if !asked_again => {
                                    asked_again = true;
                                    Submission::UserTurn {
                                        text: crate::structured::Schema::again(&why),
                                        images: Vec::new(),
                                    }
                                }
                                Err(why) => {
                                    renderer.structured(Err(why));
                                    Submission::Shutdown
                                }
                            }
                        }
                        _ => Submission::Shutdown,
                    };
                    let _ = turns_tx.unbounded_send(next);
                }
                // Nobody reads a closed stdout: stop the turn rather than run
                // tools for no one.
                if renderer.output_closed() && !stop_sent {
                    stop_sent = true;
                    let _ = interrupt_tx.unbounded_send(Submission::Interrupt);
                }
            })
            .await
    });
    if let Err(err) = outcome {
        eprintln!("cox: error: {err}");
        return 1;
    }
    drop(watch);
    let code = renderer.finish();
    let _ = std::io::stderr().flush();
    tracing::info!(session = %id, exit = code, "session end");
    code
}

/// The first Ctrl-C interrupts the turn (exit 4); a second one, for a turn
/// that does not stop, exits at once with 130. The handler is registered
/// before the session starts, so an early Ctrl-C is not lost.
fn watch_ctrl_c(interrupt: futures::channel::mpsc::UnboundedSender<Submission>) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut signals) = signal(SignalKind::interrupt()) else {
        tracing::warn!("Ctrl-C cannot be caught; it will end cox without a result line");
        return;
    };
    tokio::spawn(async move {
        if signals.recv().await.is_some() {
            let _ = interrupt.unbounded_send(Submission::Interrupt);
        }
        if signals.recv().await.is_some() {
            eprintln!("cox: interrupted twice; exiting");
            std::process::exit(130);
        }
    });
}

fn log_event(event: &cox_protocol::types::Event) {
    use cox_protocol::types::Event;
    match event {
        Event::ToolCallRequested { call } => {
            let subject = cox_core::redact::scrub(&call.subject);
            tracing::info!(call = %call.id, tool = %call.name, risk = call.risk.as_str(), subject = %subject, "tool call");
        }
        Event::ToolCallDone { call_id, result } => {
            tracing::info!(call = %call_id, ok = result.ok, denied = result.denied, "tool done");
        }
        Event::Notice { level, text } => {
            let text = cox_core::redact::scrub(text);
            tracing::warn!(?level, %text, "notice");
        }
        Event::TurnDone { stop } => tracing::info!(stop = stop.as_str(), "turn done"),
        _ => {}
    }
}
