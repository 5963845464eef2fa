//! cox's own system prompt.
//!
//! It is versioned and carries no date, cwd or other volatile fact: those go
//! in the volatile block at the end of the system prompt, so these bytes stay
//! identical across calls, sessions and days and the provider's prompt cache
//! keeps hitting. Change the text only with a new version number.

/// The version of [`SYSTEM_PROMPT`]; bump it with every change of the text.
pub const SYSTEM_PROMPT_VERSION: u32 = 1;

/// The system prompt every main turn starts with.
pub const SYSTEM_PROMPT: &str = "\
You are cox (system prompt v1), a coding agent working in the user's repository \
from a terminal. Do the task you are given with the tools you have: read before you \
edit, keep changes small and in the style of the code around them, and run the \
project's own checks when they exist. Paths are relative to the working directory \
and must stay inside the workspace. A tool call may be refused by the user's \
permission rules; when that happens, read the reason and find another way or \
explain what you need. Be brief: say what you did and what is left, without \
repeating file contents back.";

/// The notes of project memory a turn's volatile block carries, as a
/// section of it; empty without notes.
#[must_use]
pub fn memory_section(notes: &[cox_protocol::memory::Note]) -> String {
    if notes.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nProject memory (notes kept across sessions that bear on this request; the memory \
         tool adds, lists and forgets them):\n",
    );
    for note in notes {
        let text: String = note.text.split_whitespace().collect::<Vec<_>>().join(" ");
        let text: String = text.chars().take(NOTE_SHOWN).collect();
        out.push_str(&format!("- [{}] {text}\n", note.id));
    }
    out
}

/// The most of one note the volatile block shows, in characters.
const NOTE_SHOWN: usize = 500;

/// The volatile block: facts that change between calls. Never cached.
#[must_use]
pub fn volatile_block(date: &str, cwd: &str, branch: Option<&str>) -> String {
    let mut out = format!("Date: {date}\nWorking directory: {cwd}\n");
    if let Some(branch) = branch {
        out.push_str("Git branch: ");
        out.push_str(branch);
        out.push('\n');
    }
    out
}
