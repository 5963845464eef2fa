//! The schema of `cox.db`, as the ordered list of steps that build it.
//!
//! Step `n` (counting from 1) turns a version `n - 1` database into a
//! version `n` one; `PRAGMA user_version` holds the number of steps applied.
//! A released step is never edited, only followed by a new one, because
//! databases written by older builds exist on users' disks and will be
//! brought forward by replaying exactly the steps they lack.

/// Every migration step, oldest first; the schema version this build
/// writes is `STEPS.len()`.
pub(super) const STEPS: &[&str] = &[V1, V2, V3, V4, V5, V6, V7, V8, V9];

/// Version 1: sessions, the usage ledger, the archive index, checkpoints
/// and project memory.
///
/// Beyond the columns the CLI reads, the indexes serve the queries in
/// `db.rs` and `report.rs`: `usage(session_id)` for per-session reads
/// (its implicit rowid suffix also gives "the session's last call"),
/// `usage(created_at, cost_usd)` so a month's spend is read from the index
/// alone, and `sessions(cwd, created_at)` for "the latest session here".
const V1: &str = "
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    cwd TEXT NOT NULL,
    project_slug TEXT NOT NULL,
    title TEXT,
    parent_id TEXT,
    rollout_path TEXT NOT NULL,
    turns INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    state TEXT NOT NULL CHECK (state IN ('open', 'closed', 'error')),
    provider TEXT,
    model TEXT
);
CREATE INDEX sessions_by_created_at ON sessions (created_at);
CREATE INDEX sessions_by_cwd ON sessions (cwd, created_at);

CREATE TABLE usage (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    turn INTEGER NOT NULL,
    job TEXT NOT NULL,
    tier TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    effort TEXT,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    context_tokens INTEGER NOT NULL,
    estimated INTEGER NOT NULL CHECK (estimated IN (0, 1)),
    cost_usd REAL NOT NULL,
    latency_ms INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX usage_by_session ON usage (session_id);
CREATE INDEX usage_by_created_at ON usage (created_at, cost_usd);

CREATE TABLE archive (
    id TEXT PRIMARY KEY,
    session_id TEXT,
    call_id TEXT,
    bytes INTEGER NOT NULL,
    lines INTEGER NOT NULL,
    path TEXT,
    inline BLOB,
    created_at TEXT NOT NULL
);

CREATE TABLE checkpoints (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    turn INTEGER NOT NULL,
    call_id TEXT,
    kind TEXT NOT NULL CHECK (kind IN ('marker', 'pre', 'created', 'deleted')),
    path TEXT,
    archive_id TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX checkpoints_by_session ON checkpoints (session_id, turn);

CREATE VIRTUAL TABLE memory USING fts5 (project, text, created_at UNINDEXED);
";

/// Version 2: what a checkpoint row needs to restore a file and to notice
/// that someone changed it since: the file's mode before the call (with
/// its type bits: a symlink's pre-image is its target), whether the bytes
/// were kept (not past the size limit), the file's state after the call
/// (`post`: a SHA-256 of its bytes, `-` when it was gone, NULL while not
/// known), and a marker's prompt.
const V2: &str = "
ALTER TABLE checkpoints ADD COLUMN mode INTEGER;
ALTER TABLE checkpoints ADD COLUMN kept INTEGER NOT NULL DEFAULT 1 CHECK (kept IN (0, 1));
ALTER TABLE checkpoints ADD COLUMN post TEXT;
ALTER TABLE checkpoints ADD COLUMN prompt TEXT;
CREATE INDEX checkpoints_by_created_at ON checkpoints (created_at);
";

/// Version 3: the MCP tool definitions a person trusted, per server: the
/// hash of the tool's name, description and input schema (canonical), and
/// the definition itself, to show what changed when the server's differs.
const V3: &str = "
CREATE TABLE mcp_trust (
    server TEXT NOT NULL,
    tool TEXT NOT NULL,
    hash TEXT NOT NULL,
    definition TEXT NOT NULL,
    trusted_at TEXT NOT NULL,
    PRIMARY KEY (server, tool)
);
";

/// Version 4: trust is kept per server identity (`scope`: a hash of where
/// the server is defined, the project for a project's, and its whole
/// configuration), so a project's server that takes the name of one you
/// trusted, or the same server started another way, is not trusted with
/// it. A row with an empty `tool` records that a project's server may be
/// started at all. Rows of version 3 had no scope: they are dropped (user
/// servers are recorded again when they next connect).
const V4: &str = "
DROP TABLE mcp_trust;
CREATE TABLE mcp_trust (
    server TEXT NOT NULL,
    scope TEXT NOT NULL,
    tool TEXT NOT NULL,
    hash TEXT NOT NULL,
    definition TEXT NOT NULL,
    trusted_at TEXT NOT NULL,
    PRIMARY KEY (server, scope, tool)
);
";

/// Version 5: the extensions of a project (or a plugin) a person trusted to
/// run: `scope` names whose they are (the project's folder, or the plugin
/// and where it lives), `kind` what they are (`hook`), `hash` what exactly
/// was trusted (for a hook: where it is written, its event, its matcher
/// and its command), so a changed command is pending again.
const V5: &str = "
CREATE TABLE ext_trust (
    scope TEXT NOT NULL,
    kind TEXT NOT NULL,
    hash TEXT NOT NULL,
    label TEXT NOT NULL,
    trusted_at TEXT NOT NULL,
    PRIMARY KEY (scope, kind, hash)
);
";

/// Version 6: where each session works and which process runs it: the
/// project (its main checkout, or its folder outside a repository), its
/// folder, its worktree when it works in one. A row is written when a
/// session starts (again when it is resumed) and kept: a row whose process
/// is gone is a session that is not live, and its worktree still marks it.
const V6: &str = "
CREATE TABLE presence (
    session_id TEXT PRIMARY KEY,
    pid INTEGER NOT NULL,
    project TEXT NOT NULL,
    cwd TEXT NOT NULL,
    worktree TEXT,
    branch TEXT,
    started_at TEXT NOT NULL
);
CREATE INDEX presence_project ON presence (project);
";

/// Version 7: when each session's process started (clock ticks since boot,
/// as `/proc` says), so a pid the system reused for another process is not
/// taken for the session's.
const V7: &str = "
ALTER TABLE presence ADD COLUMN pid_start INTEGER NOT NULL DEFAULT 0;
";

/// Version 8: sessions by their parent, for the spend of a session's whole
/// tree (a subagent's calls count in its parent's budget), read before
/// every model call of a session with a budget.
const V8: &str = "
CREATE INDEX sessions_by_parent ON sessions (parent_id) WHERE parent_id IS NOT NULL;
";

/// Version 9: a session forked from another (`--fork-session`) names it as
/// its parent, as a subagent does, and is marked: its spend is its own (a
/// budget does not reach across a fork), and lists say "forked from".
const V9: &str = "
ALTER TABLE sessions ADD COLUMN forked INTEGER NOT NULL DEFAULT 0;
";
