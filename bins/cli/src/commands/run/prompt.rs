//! The prompt of a headless run: from `-p`, from stdin, or both.
//!
//! As with Claude Code, `-p -` (or `-p` alone) takes the whole prompt from
//! stdin, and text piped into `-p "…"` is sent after the prompt, so
//! `cat notes.txt | cox run -p "summarise"` works. A terminal on stdin is
//! never read: nobody meant to type the prompt there. A pipe that stays
//! open with nothing in it (a parent that never closes it) is waited on
//! for [`FIRST_BYTE_WAIT`] only, then the run goes on without it, with a
//! warning; once data has started to arrive it is read to the end, however
//! slowly it comes.

use std::io::{IsTerminal, Read};
use std::time::Duration;

use anyhow::{Result, bail};

/// How long stdin may stay silent before the run goes on without it.
pub const FIRST_BYTE_WAIT: Duration = Duration::from_secs(3);

/// What stdin held, if it was read.
enum Piped {
    /// A terminal, or nothing came before the wait ran out.
    Nothing,
    /// Stdin ended (or held this text).
    Text(String),
}

/// The most a prompt may hold, stdin included: far past any model's
/// window, short of what would exhaust memory (`yes | cox -p x`).
pub const MAX_PROMPT_BYTES: u64 = 64 * 1024 * 1024;

/// The images `--image` names, read and brought within the providers'
/// limits, in order.
///
/// # Errors
/// A file that cannot be read or is not a PNG, JPEG, GIF or WebP image,
/// named.
pub fn images(paths: &[std::path::PathBuf]) -> Result<Vec<cox_protocol::types::Image>> {
    paths
        .iter()
        .map(|path| {
            let bytes = std::fs::read(path)
                .map_err(|e| anyhow::anyhow!("--image {}: cannot read it: {e}", path.display()))?;
            let name = path.display().to_string();
            cox_tools::image::prepare(&bytes, &name)
                .map(|prepared| prepared.image)
                .map_err(|why| anyhow::anyhow!("--image {}: {why}", path.display()))
        })
        .collect()
}

/// What can be said of `-p`'s value before anything is read or started.
///
/// # Errors
/// An empty prompt, or a cluster like `-pc` that made a flag the prompt.
pub fn check(flag: Option<&str>) -> Result<()> {
    match flag {
        Some(text) if text != "-" && text.trim().is_empty() => {
            bail!("the prompt is empty: pass the task with -p \"…\"")
        }
        // `-pc` reads as the prompt "c"; Claude Code's -p takes no value,
        // so a person typing it means print and continue.
        Some(letter @ ("c" | "r" | "h" | "V")) => bail!(
            "-p{letter} reads as the prompt \"{letter}\": write -p -{letter} (or -{letter} -p) to combine the flags; a prompt of that one letter is taken for this slip"
        ),
        _ => Ok(()),
    }
}

/// The prompt to send: `flag` is `-p`'s value (`"-"` for stdin), `None`
/// when `-p` was not given.
///
/// # Errors
/// No prompt anywhere, an empty one, stdin that is not UTF-8, or `-p -`
/// with a terminal on stdin.
pub fn resolve(flag: Option<&str>) -> Result<String> {
    let stdin = std::io::stdin();
    let terminal = stdin.is_terminal();
    let from_stdin = |why: &str| -> Result<String> {
        if terminal {
            bail!("{why}, but stdin is a terminal: pipe the prompt in, or pass -p \"…\"");
        }
        match read_piped(FIRST_BYTE_WAIT)? {
            Piped::Text(text) if !text.trim().is_empty() => Ok(text),
            Piped::Text(_) => {
                bail!("{why}, but stdin was empty: pipe the prompt in, or pass -p \"…\"")
            }
            Piped::Nothing => bail!(
                "{why}, but nothing arrived on stdin in {} s: pipe the prompt in, or pass -p \"…\"",
                FIRST_BYTE_WAIT.as_secs()
            ),
        }
    };
    let prompt = match flag {
        Some("-") => from_stdin("-p - reads the prompt from stdin")?,
        Some(text) => {
            check(Some(text))?;
            if terminal {
                text.to_owned()
            } else {
                match read_piped(FIRST_BYTE_WAIT)? {
                    Piped::Text(piped) if !piped.trim().is_empty() => {
                        format!("{text}\n\n{}", piped.trim_end())
                    }
                    Piped::Text(_) => text.to_owned(),
                    Piped::Nothing => {
                        eprintln!(
                            "cox: warning: nothing arrived on stdin in {} s; going on without it \
                             (redirect stdin from /dev/null to skip the wait)",
                            FIRST_BYTE_WAIT.as_secs()
                        );
                        text.to_owned()
                    }
                }
            }
        }
        None => from_stdin("no prompt was given with -p")?,
    };
    Ok(prompt)
}

/// Reads stdin to its end once something arrives, or gives up after
/// `wait` of silence before the first byte. The reading happens on a
/// thread, so a silent pipe costs the wait and nothing more: the thread is
/// left blocked and ends with the process.
fn read_piped(wait: Duration) -> Result<Piped> {
    enum Step {
        Started,
        Done(std::io::Result<Vec<u8>>),
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut bytes = vec![0; 64 * 1024];
        let first = loop {
            match stdin.read(&mut bytes) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                other => break other,
            }
        };
        let done = match first {
            Ok(0) => Ok(Vec::new()),
            Ok(n) => {
                bytes.truncate(n);
                let _ = tx.send(Step::Started);
                // One byte past the cap tells a prompt at the cap from one
                // over it.
                (&mut stdin)
                    .take(MAX_PROMPT_BYTES + 1 - n as u64)
                    .read_to_end(&mut bytes)
                    .map(|_| bytes)
            }
            Err(e) => Err(e),
        };
        let _ = tx.send(Step::Done(done));
    });
    let step = match rx.recv_timeout(wait) {
        Ok(Step::Started) => rx.recv().ok(),
        Ok(done @ Step::Done(_)) => Some(done),
        Err(_) => None,
    };
    let bytes = match step {
        None => {
            return Ok(Piped::Nothing);
        }
        // A closed stdin (`<&-`) reads as empty: Rust's stdin takes EBADF
        // for the end.
        Some(Step::Done(Ok(bytes))) => bytes,
        Some(Step::Done(Err(e))) => bail!("cannot read stdin: {e}"),
        Some(Step::Started) => bail!("cannot read stdin: the reader stopped"),
    };
    if bytes.len() as u64 > MAX_PROMPT_BYTES {
        bail!(
            "stdin holds more than {} MiB: a prompt that size is no use to any model; pass a file's path in the prompt instead",
            MAX_PROMPT_BYTES / (1024 * 1024)
        );
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Piped::Text(text)),
        Err(_) => bail!("stdin is not UTF-8 text: cox sends the piped text to the model as it is"),
    }
}
