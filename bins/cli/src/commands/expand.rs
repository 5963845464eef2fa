//! `cox expand`: an archived tool output back in full, or the lines of it
//! you ask for.
//!
//! ```text
//! cox expand <id>                 the whole output, byte for byte
//! cox expand <id> --lines 60-90   lines 60 to 90 (1-based, both included)
//! cox expand <id> --lines 60-     line 60 to the end
//! cox expand <id> --lines 60      line 60 alone
//! ```
//!
//! The id is the one in the marker the model was shown in place of the
//! middle of a long output (`[… 84 KiB archived; expand #<id> lines
//! 3–8210]`); a leading `#` and an en dash in the range are accepted so it
//! can be pasted as it is. As with `cox sessions`, any start of an id that
//! no other output's shares will do, in either case; an ambiguous one is an
//! error naming the first few it matches.
//!
//! The bytes go to stdout unchanged (an output need not be UTF-8), and a
//! range is exactly the lines it names or a one-line error, never fewer
//! lines. Nothing is written: the record is opened as `cox sessions` opens
//! it (see [`crate::report::Record`]), and a home with no `cox.db` still
//! finds outputs archived as files. A reader that goes away (`| head`) ends
//! the command quietly.

use std::io::{self, Write as _};

use anyhow::{Result, anyhow, bail};
use clap::Args;
use cox_store::{ArchiveReader, LineRange, LineRangeError};

use crate::report::Record;

/// `cox expand ID [--lines A-B]`.
#[derive(Args, Debug, Clone)]
pub struct ExpandArgs {
    /// The archived output's id, as the marker shows it (`#` optional), or
    /// the start of one that no other output's shares.
    #[arg(value_name = "ID")]
    pub id: String,
    /// Only these lines, 1-based and inclusive: `60-90`, `60-` (to the
    /// end) or `60` (one line).
    #[arg(long, value_name = "A-B")]
    pub lines: Option<String>,
}

/// Runs `cox expand`; returns the exit code (0, or 1 after a one-line
/// error on stderr).
pub fn run(args: &ExpandArgs) -> i32 {
    let result = expand(args).and_then(|bytes| match write_out(&bytes) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        written => written.map_err(|e| anyhow!("cannot write the output: {e}")),
    });
    match result {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("cox: error: {}", crate::one_line(&err));
            1
        }
    }
}

fn write_out(bytes: &[u8]) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    stdout.write_all(bytes)?;
    stdout.flush()
}

/// The bytes to print: the whole output or the lines asked for.
fn expand(args: &ExpandArgs) -> Result<Vec<u8>> {
    let id = args.id.strip_prefix('#').unwrap_or(&args.id);
    let range = args
        .lines
        .as_deref()
        .map(|text| text.parse::<LineRange>().map_err(|e| range_error(text, &e)))
        .transpose()?;
    let record = Record::open()?;
    let reader = ArchiveReader::new(&record.home, record.db.as_ref());
    let id = reader.resolve(id)?;
    let bytes = reader.get(&id)?;
    let Some(range) = range else {
        return Ok(bytes);
    };
    match range.cut(&bytes) {
        Ok(lines) => Ok(lines.to_vec()),
        Err(LineRangeError::PastEnd { lines }) => {
            let unit = if lines == 1 { "line" } else { "lines" };
            bail!("#{id} has {lines} {unit}; --lines {range} is past the end")
        }
        // `parse` has refused every other kind of range already.
        Err(e) => Err(range_error(&range.to_string(), &e)),
    }
}

/// What is wrong with `--lines TEXT`, said once.
fn range_error(text: &str, error: &LineRangeError) -> anyhow::Error {
    let text = text.escape_debug();
    match error {
        LineRangeError::Malformed { .. } => anyhow!(
            "--lines {text} is not a line range: write A-B (60-90), A- (to the end) or A (one line)"
        ),
        LineRangeError::Reversed { .. } => anyhow!("--lines {text} ends before it starts"),
        LineRangeError::Zero | LineRangeError::PastEnd { .. } => anyhow!("--lines {text}: {error}"),
    }
}
