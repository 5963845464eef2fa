//! The tables and keys a config file may use, and the one-line refusal of
//! any other.
//!
//! A misspelt name (`[permision]`, `[budgets]`, `[core] modle`, a top-level
//! `model =`) must not be read as "not set": the user would believe a
//! setting took effect when it did not. So before serde reads a file, its
//! names are checked against [`ROOT`], and the first name (by position)
//! that is not there is an error naming its line and the nearest known name.
//!
//! Invariant: every name in [`ROOT`] takes effect in `cox run` (read from
//! the user's config; a project config's share is `load_permissions`'s
//! business). A test holds the schema to the fields of the structs serde
//! fills, so the two cannot drift apart.

use toml::de::{DeTable, DeValue};

/// What a table of the config may hold.
#[derive(Debug)]
pub(super) enum Shape {
    /// A value cox reads; its type is serde's to check.
    Value,
    /// A table of fixed keys.
    Table(&'static [(&'static str, Shape)]),
    /// A table of entries of one shape: `[tiers.<name>]` from a list of
    /// names, `[models."<id>"]` named freely (`names` is `None`).
    Entries {
        /// What one entry is, for the error ("unknown tier").
        noun: &'static str,
        names: Option<&'static [&'static str]>,
        /// The entry named in a suggestion from elsewhere.
        example: &'static str,
        entry: &'static Shape,
    },
    /// A table whose entries another reader checks, warning per entry
    /// and going on (`[hooks]`: Claude Code's shape, read by the hooks'
    /// loader).
    Open,
}

use Shape::{Table, Value};

const TIER: Shape = Table(&[("provider", Value), ("model", Value), ("effort", Value)]);

const PROVIDER: Shape = Table(&[
    ("base_url", Value),
    ("api_key_env", Value),
    ("max_attempts", Value),
    ("retry_base_ms", Value),
    ("idle_timeout_ms", Value),
]);

const PRICES: Shape = Table(&[
    ("input", Value),
    ("output", Value),
    ("cache_read", Value),
    ("cache_write", Value),
    ("web_search", Value),
]);

/// `id` is left out: the table's key is the id.
const MODEL: Shape = Table(&[
    ("provider", Value),
    ("context_window", Value),
    ("max_output", Value),
    ("prices", PRICES),
    ("prices_as_of", Value),
    ("efforts", Value),
    ("web_search", Value),
]);

/// `[mcp_servers.<name>]`: Claude Code's fields, and cox's own.
const MCP_SERVER: Shape = Table(&[
    ("type", Value),
    ("command", Value),
    ("args", Value),
    ("env", Value),
    ("cwd", Value),
    ("url", Value),
    ("headers", Value),
    ("sandbox", Value),
    ("network", Value),
    (
        "oauth",
        Table(&[
            ("client_id", Value),
            ("client_secret", Value),
            ("grant", Value),
            ("private_key", Value),
            ("signing_algorithm", Value),
            ("idp_issuer", Value),
            ("idp_token_endpoint", Value),
            ("idp_client_id", Value),
            ("idp_client_secret", Value),
            ("id_token", Value),
            ("callback_port", Value),
        ]),
    ),
]);

/// Every name this version reads, and the ones a later one will.
pub(super) const ROOT: Shape = Table(&[
    (
        "permissions",
        Table(&[
            ("allow", Value),
            ("ask", Value),
            ("deny", Value),
            ("mode", Value),
        ]),
    ),
    (
        "core",
        Table(&[("mode", Value), ("effort", Value), ("log_level", Value)]),
    ),
    (
        "tiers",
        Shape::Entries {
            noun: "tier",
            names: Some(&["cheap", "code", "think"]),
            example: "code",
            entry: &TIER,
        },
    ),
    (
        "providers",
        Shape::Entries {
            noun: "provider",
            names: Some(&["anthropic", "openai"]),
            example: "anthropic",
            entry: &PROVIDER,
        },
    ),
    (
        "models",
        Shape::Entries {
            noun: "model",
            names: None,
            example: "\"<id>\"",
            entry: &MODEL,
        },
    ),
    (
        "budget",
        Table(&[("session_usd", Value), ("monthly_usd", Value)]),
    ),
    (
        "context",
        Table(&[
            ("dedup_window_turns", Value),
            ("microcompact_after_turns", Value),
            ("compact_at", Value),
            ("keep_turns", Value),
            ("max_tools", Value),
        ]),
    ),
    (
        "mcp_servers",
        Shape::Entries {
            noun: "MCP server",
            names: None,
            example: "<name>",
            entry: &MCP_SERVER,
        },
    ),
    // Claude Code's shape (`[[hooks.<Event>]]` entries); its entries are
    // checked by the hooks' own reader, which warns and goes on.
    ("hooks", Shape::Open),
    (
        "sandbox",
        Table(&[
            ("mode", Value),
            ("network", Value),
            ("writable_roots", Value),
            ("allowed_domains", Value),
            ("env", Value),
            ("allow_unix_sockets", Value),
        ]),
    ),
    (
        "telemetry",
        Table(&[("otel", Value), ("endpoint", Value), ("log_days", Value)]),
    ),
    (
        "agents",
        Table(&[("max_depth", Value), ("parallel", Value)]),
    ),
    (
        "tools",
        Table(&[("web_fetch", Value), ("web_search", Value)]),
    ),
    (
        "tui",
        Table(&[("status_line", Table(&[("command", Value)]))]),
    ),
]);

/// A name the config may not use: where it is and what to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Refusal {
    /// Byte offset of the name in the file.
    pub at: usize,
    pub message: String,
}

/// The first refused name of `doc`, by position; `None` when every name is
/// known.
pub(super) fn check(doc: &DeTable<'_>) -> Option<Refusal> {
    let mut found = Vec::new();
    walk(doc, &ROOT, &mut Vec::new(), &mut found);
    found.into_iter().min_by_key(|r| r.at)
}

fn walk<'a>(
    table: &'a DeTable<'_>,
    shape: &'static Shape,
    path: &mut Vec<&'a str>,
    found: &mut Vec<Refusal>,
) {
    for (key, value) in table {
        let name: &str = key.get_ref();
        let is_table = value.get_ref().is_table();
        let at = key.span().start;
        let inner = match shape {
            Table(fields) => match fields.iter().find(|(n, _)| *n == name) {
                Some((_, inner)) => inner,
                None => {
                    found.push(Refusal {
                        at,
                        message: unknown(path, name, is_table, fields),
                    });
                    continue;
                }
            },
            Shape::Entries {
                noun, names, entry, ..
            } => match names {
                Some(names) if !names.contains(&name) => {
                    found.push(Refusal {
                        at,
                        message: unknown_entry(path, name, noun, names),
                    });
                    continue;
                }
                _ => *entry,
            },
            Value | Shape::Open => return,
        };
        if let DeValue::Table(inner_table) = value.get_ref() {
            path.push(name);
            walk(inner_table, inner, path, found);
            path.pop();
        }
    }
}

fn unknown(path: &[&str], name: &str, is_table: bool, fields: &[(&str, Shape)]) -> String {
    let place = match path {
        [] if is_table => String::new(),
        [] => " at the top level".to_owned(),
        _ => format!(" in `[{}]`", dotted(path)),
    };
    let head = if is_table {
        format!("unknown table `[{}]`", dotted_with(path, name))
    } else {
        format!("unknown key `{}`{place}", quote(name))
    };
    // A sibling of the same kind spelt nearly so, then the same name where
    // it does belong.
    let mut ideas = Vec::new();
    if let Some(near) = nearest(
        name,
        fields
            .iter()
            .filter(|(_, s)| is_table_shape(s) == is_table)
            .map(|(n, _)| *n),
    ) {
        // A key of the same table needs no table to be named.
        ideas.push(if is_table {
            spell(path, near, true)
        } else {
            format!("`{}`", quote(near))
        });
    }
    for (at, _) in elsewhere(name, is_table)
        .into_iter()
        .filter(|(at, _)| at.as_slice() != path)
    {
        let idea = spell(&at, name, is_table);
        if !ideas.contains(&idea) {
            ideas.push(idea);
        }
    }
    ideas.truncate(3);
    if !ideas.is_empty() {
        return format!("{head}, did you mean {}?", ideas.join(" or "));
    }
    let known: Vec<String> = fields
        .iter()
        .map(|(n, s)| {
            if is_table_shape(s) && path.is_empty() {
                format!("[{n}]")
            } else {
                (*n).to_owned()
            }
        })
        .collect();
    format!("{head} (known: {})", known.join(", "))
}

fn unknown_entry(path: &[&str], name: &str, noun: &str, names: &[&str]) -> String {
    let head = format!("unknown {noun} `[{}]`", dotted_with(path, name));
    match nearest(name, names.iter().copied()) {
        Some(near) => format!("{head}, did you mean `[{}]`?", dotted_with(path, near)),
        None => format!("{head} (known: {})", names.join(", ")),
    }
}

/// A name as the file writes it: `[tiers.code]` for a table, `[core] mode`
/// for a key, a top-level key bare.
fn spell(path: &[&str], name: &str, is_table: bool) -> String {
    if is_table {
        format!("`[{}]`", dotted_with(path, name))
    } else if path.is_empty() {
        format!("`{}`", quote(name))
    } else {
        format!("`[{}] {}`", dotted(path), quote(name))
    }
}

fn is_table_shape(shape: &Shape) -> bool {
    matches!(shape, Table(_) | Shape::Entries { .. } | Shape::Open)
}

/// Where else in [`ROOT`] a name of this kind is known: the path of its
/// table, an entry's name given by its example.
fn elsewhere(name: &str, is_table: bool) -> Vec<(Vec<&'static str>, &'static Shape)> {
    fn visit(
        shape: &'static Shape,
        path: &mut Vec<&'static str>,
        name: &str,
        is_table: bool,
        out: &mut Vec<(Vec<&'static str>, &'static Shape)>,
    ) {
        match shape {
            Table(fields) => {
                for (n, inner) in *fields {
                    if *n == name && is_table_shape(inner) == is_table {
                        out.push((path.clone(), inner));
                    }
                    path.push(n);
                    visit(inner, path, name, is_table, out);
                    path.pop();
                }
            }
            Shape::Entries { example, entry, .. } => {
                path.push(example);
                visit(entry, path, name, is_table, out);
                path.pop();
            }
            Value | Shape::Open => {}
        }
    }
    let mut out = Vec::new();
    visit(&ROOT, &mut Vec::new(), name, is_table, &mut out);
    out
}

/// The candidate nearest to `name` (case aside), if near enough to be a
/// slip of the keyboard; the first one on a tie.
fn nearest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (distance(name, c), c))
        .filter(|(d, c)| *d <= (name.len().max(c.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Edit distance with adjacent swaps counting one (`modle` → `model`),
/// ignoring case.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

fn dotted(path: &[&str]) -> String {
    path.iter().map(|s| quote(s)).collect::<Vec<_>>().join(".")
}

fn dotted_with(path: &[&str], name: &str) -> String {
    let mut all = path.to_vec();
    all.push(name);
    dotted(&all)
}

/// A key as TOML writes it: bare when it can be, else quoted.
fn quote(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare || key.starts_with('"') {
        key.to_owned()
    } else {
        format!("{key:?}")
    }
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;
