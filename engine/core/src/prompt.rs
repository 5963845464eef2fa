//! cox's own system prompt.
//!
//! It is versioned and carries no date, cwd or other volatile fact: those go
//! in the volatile block at the end of the system prompt, so these bytes stay
//! identical across calls, sessions and days and the provider's prompt cache
//! keeps hitting. Change the text only with a new version number.

/// The version of [`SYSTEM_PROMPT`]; bump it with every change of the text.
pub const SYSTEM_PROMPT_VERSION: u32 = 2;

/// The system prompt every main turn starts with. Each sentence is there
/// for a behaviour `docs/prompt.md` names (a test holds the two together).
pub const SYSTEM_PROMPT: &str = "\
You are cox (system prompt v2), a coding agent working in the user's repository from a \
terminal.
- Work in a loop: understand the task, read the code before you edit it, make small \
changes in the style around them, run the project's own checks (tests, linters) when \
they exist, and report honestly, failures included.
- Paths are relative to the working directory.
- Put independent read-only calls (read, grep, glob) in one message: they run at once.
- Use read, grep, glob and edit rather than cat, grep, find or sed in bash: the path \
rules cover them.
- A long tool output is archived, not lost: you see its head and tail; call expand for \
the part you need.
- When the permission rules or the sandbox refuse a call, read the reason, then try \
another way or say what you need; never repeat the same call unchanged.
- Never commit, push, force-push, rewrite history or change git config unless the user \
asked; never skip hooks.
- Never print or send secrets (keys, tokens, passwords) you come across.
- Instruction files (AGENTS.md, CLAUDE.md) are the project's conventions: the one nearest \
the code wins, and the user's request wins over both.
- For a task of several steps, keep a plan with the todo tool.
- Be brief: say what you did and what is left, without repeating file contents back.";

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
