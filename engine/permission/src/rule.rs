//! Permission rules, in Claude Code's grammar.
//!
//! | rule | matches |
//! |---|---|
//! | `Tool` | every call of the tool |
//! | `Tool(text)` | the exact subject (a command line, a path, a URL) |
//! | `Tool(prefix:*)`, `Tool(prefix *)` | the prefix alone, or followed by whitespace |
//! | `Tool(a*b)` | a `*` elsewhere matches any run of characters |
//! | `WebFetch(domain:host)` | URLs on the host and its subdomains |
//! | `Read(~/x/**)`, `Edit(/abs/*.rs)`, `Read(src/**)` | path globs for file tools |
//! | `mcp__server__tool`, `mcp__server`, `mcp__server__*` | MCP tools |
//! | `CloudAgent(owner/repo)` | one repository, names compared ignoring case |
//!
//! Tool names compare ignoring case and underscores (`Bash` is `bash`,
//! `CloudAgent` is `cloud_agent`); MCP names compare exactly. `Read` rules
//! also cover `glob` and `grep` (they read files), `Edit` rules also cover
//! `write`, as in Claude Code.
//!
//! Path rules: `~/` is the home folder, `/…` and `//…` are absolute, anything
//! else is relative to the working folder. `*` stays within one folder, `**`
//! crosses folders, and a rule naming a folder covers what is inside it.
//! (Claude Code reads `/…` as relative to its settings file; cox reads it as
//! absolute, which is what people write it for.)

use core::net::Ipv6Addr;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::glob::PathGlob;

/// Where a rule came from; project rules are trusted less.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Built into cox (the secret folders it never reads).
    BuiltIn,
    /// The user's own config (`$COX_HOME/config.toml`), with its path.
    User(PathBuf),
    /// A repository's `.cox/config.toml` or Claude Code settings file,
    /// with its path: its allow rules are not taken.
    Project(PathBuf),
    /// The allow rules of a project file that the person trusted as they
    /// are now (`cox ext trust`), with the file's path.
    TrustedProject(PathBuf),
    /// The settings file an administrator installed (Claude Code's
    /// managed settings), with its path.
    Managed(PathBuf),
    /// A command-line flag.
    Flag,
    /// The `allowed-tools` of the person's own slash command (for the turn
    /// it starts), with its file.
    Command(PathBuf),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::BuiltIn => f.write_str("built in"),
            Origin::User(path) => write!(f, "user config {}", path.display()),
            Origin::Project(path) => write!(f, "project config {}", path.display()),
            Origin::TrustedProject(path) => {
                write!(f, "project config {}, trusted", path.display())
            }
            Origin::Managed(path) => write!(f, "managed settings {}", path.display()),
            Origin::Flag => f.write_str("command line"),
            Origin::Command(path) => write!(f, "allowed-tools of command {}", path.display()),
        }
    }
}

/// What a rule's parentheses say.
#[derive(Clone, Debug)]
pub(crate) enum Spec {
    /// No parentheses: every call.
    Any,
    /// The exact subject.
    Exact(String),
    /// `prefix:*`: the prefix alone or followed by whitespace.
    Prefix(String),
    /// A `*` pattern over the whole subject.
    Wildcard(Vec<String>),
    /// `domain:host`.
    Domain(String),
    /// A path glob anchored to an absolute path: the path itself, then what
    /// is inside it (the patterns are kept for the engine's combined set).
    Path(Box<[PathGlob; 2]>, Box<[String; 2]>),
    /// `owner/repo`, lower-cased.
    Repo(String),
}

/// One parsed rule.
#[derive(Clone, Debug)]
pub struct Rule {
    /// The rule as written.
    pub text: String,
    pub origin: Origin,
    /// The tool part, normalised (`bash`, `read`, `cloudagent`, `mcp__srv__x`).
    pub(crate) tool: String,
    pub(crate) spec: Spec,
}

/// A rule that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid permission rule `{rule}`: {reason}")]
pub struct RuleError {
    pub rule: String,
    pub reason: String,
}

/// The kind of tool a rule's name refers to, for parsing its parentheses.
fn is_path_tool(tool: &str) -> bool {
    matches!(
        tool,
        "read" | "edit" | "write" | "glob" | "grep" | "notebookedit" | "multiedit" | "applypatch"
    )
}

/// Lower-cases and drops underscores, except in MCP names. Borrows when
/// there is nothing to change (the built-in tools' names), so deciding a
/// call allocates nothing for it.
pub(crate) fn normalise_tool(name: &str) -> std::borrow::Cow<'_, str> {
    if name.starts_with("mcp__") || !name.chars().any(|c| c == '_' || c.is_uppercase()) {
        std::borrow::Cow::Borrowed(name)
    } else {
        name.chars()
            .filter(|c| *c != '_')
            .flat_map(char::to_lowercase)
            .collect::<String>()
            .into()
    }
}

impl Rule {
    /// For a path rule, whether it covers what shell lines read (`Read`)
    /// or what they write (`Edit`, `Write`…); `None` for any other rule.
    #[must_use]
    pub fn path_access(&self) -> Option<cox_protocol::types::PathAccess> {
        use cox_protocol::types::PathAccess;
        self.anchored_paths()?;
        if self.names_tool("read") {
            Some(PathAccess::Read)
        } else if self.names_tool("write") {
            Some(PathAccess::Write)
        } else {
            None
        }
    }

    /// The absolute pattern a path rule covers (its folder's contents
    /// too), with `~/` and relative paths anchored; `None` for any other
    /// rule.
    #[must_use]
    pub fn path_pattern(&self) -> Option<&str> {
        self.anchored_paths().map(|[path, _]| path.as_str())
    }

    /// The absolute patterns of a path rule; `None` for any other.
    pub(crate) fn anchored_paths(&self) -> Option<&[String; 2]> {
        match &self.spec {
            Spec::Path(_, patterns) => Some(patterns),
            _ => None,
        }
    }

    /// Parses `text`. `home` anchors `~/`, `cwd` anchors relative paths.
    pub fn parse(
        text: &str,
        origin: Origin,
        home: Option<&Path>,
        cwd: &Path,
    ) -> Result<Rule, RuleError> {
        let err = |reason: &str| RuleError {
            rule: text.to_owned(),
            reason: reason.to_owned(),
        };
        let trimmed = text.trim();
        let (name, inner) = match trimmed.find('(') {
            None => (trimmed, None),
            Some(open) => {
                let Some(body) = trimmed[open + 1..].strip_suffix(')') else {
                    return Err(err("a `(` needs a closing `)` at the end"));
                };
                (&trimmed[..open], Some(body))
            }
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*')
        {
            return Err(err(
                "the tool name must be letters, digits, `_` and `-` (e.g. Bash, Read, mcp__server__tool)",
            ));
        }
        if name.contains('*') && !(name.starts_with("mcp__") && name.ends_with("__*")) {
            return Err(err(
                "`*` in a tool name is only allowed as mcp__<server>__*",
            ));
        }
        let tool = normalise_tool(name.strip_suffix("__*").unwrap_or(name)).into_owned();
        let spec = match inner {
            None => Spec::Any,
            Some(body) if body.trim().is_empty() => {
                return Err(err(
                    "empty parentheses; write the tool name alone to match every call",
                ));
            }
            Some(_) if tool.starts_with("mcp__") => {
                return Err(err("MCP rules take no parentheses"));
            }
            Some(body) if tool == "cloudagent" => {
                let repo = body.trim();
                let mut parts = repo.split('/');
                let ok = matches!((parts.next(), parts.next(), parts.next()),
                    (Some(o), Some(r), None) if !o.is_empty() && !r.is_empty());
                if !ok {
                    return Err(err("CloudAgent takes owner/repo"));
                }
                Spec::Repo(repo.to_ascii_lowercase())
            }
            Some(body) if tool == "webfetch" => match body.strip_prefix("domain:") {
                Some(host) if !host.trim().is_empty() => {
                    let host = host.trim().trim_start_matches("*.");
                    if !host.is_ascii() {
                        return Err(err(
                            "domain: write the host in its ASCII form (xn--… for a name in \
                             another script), as URLs reach it",
                        ));
                    }
                    let bracketed = host.starts_with('[');
                    if !bracketed && host.contains(':') && host.parse::<Ipv6Addr>().is_err() {
                        return Err(err("domain: write the host alone, without a port"));
                    }
                    Spec::Domain(canonical_host(host))
                }
                Some(_) => return Err(err("domain: needs a host name")),
                None => subject_spec(body),
            },
            Some(body) if is_path_tool(&tool) => path_spec(body, home, cwd).map_err(|r| err(&r))?,
            Some(body) => subject_spec(body),
        };
        Ok(Rule {
            text: trimmed.to_owned(),
            origin,
            tool,
            spec,
        })
    }

    /// True when the rule names this tool (by its call name).
    pub(crate) fn names_tool(&self, call_name: &str) -> bool {
        if self.tool.starts_with("mcp__") {
            let server_rule = self.tool.matches("__").count() == 1;
            return call_name == self.tool
                || (server_rule
                    && call_name
                        .strip_prefix(self.tool.as_str())
                        .is_some_and(|r| r.starts_with("__")));
        }
        let call = normalise_tool(call_name);
        *call == *self.tool
            || (self.tool == "read" && matches!(&*call, "glob" | "grep"))
            || (self.tool == "edit"
                && matches!(
                    &*call,
                    "write" | "multiedit" | "notebookedit" | "applypatch"
                ))
    }

    /// A rule with no parentheses.
    pub(crate) fn is_bare(&self) -> bool {
        matches!(self.spec, Spec::Any)
    }

    /// An exact rule equal to the whole (collapsed) line.
    pub(crate) fn is_exact_line(&self, line: &str) -> bool {
        matches!(&self.spec, Spec::Exact(text) if text == line)
    }

    /// Whether the subject (a path, a URL, a whole line) matches.
    pub(crate) fn matches_subject(&self, subject: &str) -> bool {
        match &self.spec {
            Spec::Any => true,
            Spec::Exact(text) => collapse(subject) == *text,
            Spec::Prefix(prefix) => prefix_match(&collapse(subject), prefix),
            Spec::Wildcard(parts) => wildcard_match(&collapse(subject), parts),
            Spec::Domain(host) => url_host(subject).is_some_and(|h| domain_covers(host, &h)),
            Spec::Path(matchers, _) => matchers.iter().any(|m| m.is_match(subject)),
            Spec::Repo(repo) => subject.trim().eq_ignore_ascii_case(repo),
        }
    }

    /// Whether one shell command matches, strictly: what an allow rule
    /// needs. The command text is already whitespace-collapsed.
    pub(crate) fn covers_command(&self, command: &str) -> bool {
        match &self.spec {
            Spec::Any => true,
            Spec::Exact(text) => command == text,
            Spec::Prefix(prefix) => prefix_match(command, prefix),
            Spec::Wildcard(parts) => wildcard_match(command, parts),
            _ => false,
        }
    }

    /// Whether a shell rule's program is among the names a rough word scan
    /// found (sorted; see `Segments::scan`): a rule whose program is named
    /// anywhere in text the split could not follow applies to the line. A
    /// program written with a `*` matches a name it could start.
    pub(crate) fn hits_scan(&self, scan: &[String]) -> bool {
        if scan.is_empty() {
            return false;
        }
        let first = match &self.spec {
            Spec::Any => return true,
            Spec::Exact(text) | Spec::Prefix(text) => text.as_str(),
            Spec::Wildcard(parts) => match parts.first() {
                Some(head) if !head.contains(' ') => {
                    let start = head.rsplit('/').next().unwrap_or(head);
                    return scan.iter().any(|name| name.starts_with(start));
                }
                Some(head) => head.as_str(),
                None => return true,
            },
            _ => return false,
        };
        let word = first.split(' ').next().unwrap_or(first);
        let program = word.rsplit('/').next().unwrap_or(word);
        scan.binary_search_by(|name| name.as_str().cmp(program))
            .is_ok()
    }

    /// Whether one shell command matches, loosely: what deny and ask rules
    /// use, so that a command cannot slip past them by being written
    /// differently. Beyond the strict match, it also matches when
    /// - the program is named by a path (`/bin/rm`, `./rm`, `~/bin/rm`);
    /// - the rule has flags and they moved (`git push origin main --force`
    ///   against `Bash(git push --force:*)`), were split or reordered
    ///   (`rm -fr`, `rm -r -f` against `Bash(rm -rf:*)`), or another flag
    ///   came first (`git -C . push --force`): the rule's plain words must
    ///   appear in order after the program, and its flags anywhere.
    pub(crate) fn hits_command(&self, command: &str) -> bool {
        if self.covers_command(command) {
            return true;
        }
        let command = program_by_name(command);
        if self.covers_command(&command) {
            return true;
        }
        let rule_words: Vec<&str> = match &self.spec {
            Spec::Exact(text) | Spec::Prefix(text) if text.contains(" -") => {
                text.split(' ').collect()
            }
            _ => return false,
        };
        let (rule_flags, rule_plain): (Vec<&str>, Vec<&str>) = rule_words
            .iter()
            .partition(|w| w.starts_with('-') && w.len() > 1);
        if rule_flags.is_empty() {
            return false;
        }
        let words: Vec<&str> = command.split(' ').collect();
        let plain: Vec<&str> = words
            .iter()
            .copied()
            .filter(|w| !w.starts_with('-'))
            .collect();
        let (Some(program), Some(rule_program)) = (plain.first(), rule_plain.first()) else {
            return false;
        };
        program == rule_program
            && is_subsequence(&rule_plain[1..], &plain[1..])
            && rule_flags.iter().all(|flag| flag_present(flag, &words))
    }
}

/// The command with its program written by name: `/bin/rm -rf x` reads
/// `rm -rf x`.
fn program_by_name(command: &str) -> std::borrow::Cow<'_, str> {
    let (program, rest) = command.split_once(' ').unwrap_or((command, ""));
    match program.rsplit_once('/') {
        Some((_, name)) if !name.is_empty() => {
            if rest.is_empty() {
                name.to_owned().into()
            } else {
                format!("{name} {rest}").into()
            }
        }
        _ => command.into(),
    }
}

/// Whether `needle` appears in `hay` in order (not necessarily adjacent).
fn is_subsequence(needle: &[&str], hay: &[&str]) -> bool {
    let mut hay = hay.iter();
    needle.iter().all(|n| hay.any(|h| h == n))
}

/// Whether a rule's flag is present among a command's words: a long flag
/// as written (or with `=value`), a short cluster letter by letter across
/// all the command's short flags.
fn flag_present(flag: &str, words: &[&str]) -> bool {
    if flag.starts_with("--") {
        let with_value = format!("{flag}=");
        return words
            .iter()
            .any(|w| *w == flag || w.starts_with(&with_value));
    }
    let letters: String = words
        .iter()
        .filter(|w| w.starts_with('-') && !w.starts_with("--"))
        .flat_map(|w| w.chars().skip(1))
        .collect();
    flag.chars().skip(1).all(|c| letters.contains(c))
}

/// `prefix:*` / `prefix *` / `a*b` / exact, for non-path subjects.
fn subject_spec(body: &str) -> Spec {
    let body = collapse(body);
    if let Some(prefix) = body.strip_suffix(":*").or_else(|| body.strip_suffix(" *"))
        && !prefix.contains('*')
    {
        return Spec::Prefix(prefix.trim_end().to_owned());
    }
    if body.contains('*') {
        return Spec::Wildcard(body.split('*').map(str::to_owned).collect());
    }
    Spec::Exact(body)
}

fn path_spec(body: &str, home: Option<&Path>, cwd: &Path) -> Result<Spec, String> {
    let body = body.trim();
    let absolute = if let Some(rest) = body.strip_prefix("~/") {
        let Some(home) = home else {
            return Err("`~/` needs a home folder, and none is known".into());
        };
        format!("{}/{rest}", home.display())
    } else if body == "~" {
        let Some(home) = home else {
            return Err("`~` needs a home folder, and none is known".into());
        };
        home.display().to_string()
    } else if let Some(rest) = body.strip_prefix("//") {
        format!("/{rest}")
    } else if body.starts_with('/') {
        body.to_owned()
    } else {
        let rest = body.strip_prefix("./").unwrap_or(body);
        format!("{}/{rest}", cwd.display())
    };
    let absolute = absolute.trim_end_matches('/').to_owned();
    let absolute = if absolute.is_empty() {
        "/".to_owned()
    } else {
        absolute
    };
    let inside = format!("{}/**", absolute.trim_end_matches('/'));
    let build =
        |pattern: &str| PathGlob::new(pattern).map_err(|e| format!("bad path pattern: {e}"));
    let matchers = [build(&absolute)?, build(&inside)?];
    Ok(Spec::Path(Box::new(matchers), Box::new([absolute, inside])))
}

/// The glob patterns of a path rule, for building a combined set.
pub(crate) fn path_patterns(rule: &Rule) -> Option<&[String; 2]> {
    match &rule.spec {
        Spec::Path(_, patterns) => Some(patterns),
        _ => None,
    }
}

/// Whitespace runs become one space; the ends are trimmed.
pub(crate) fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn prefix_match(command: &str, prefix: &str) -> bool {
    command == prefix
        || command
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with(char::is_whitespace))
}

fn wildcard_match(text: &str, parts: &[String]) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return text.is_empty();
    };
    let Some(mut remaining) = text.strip_prefix(first.as_str()) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return remaining.is_empty();
    };
    for part in middle {
        match remaining.find(part.as_str()) {
            Some(at) => remaining = &remaining[at + part.len()..],
            None => return false,
        }
    }
    remaining.len() >= last.len() && remaining.ends_with(last.as_str())
}

/// The host of a URL, lower-cased, without port or credentials.
/// The host a URL names, lower-cased, without a trailing dot. A `\\`
/// ends the authority as a `/` does (as browsers and the url crate read
/// `http://a.com\\@b.com/`: the host is `a.com`).
pub(crate) fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '\\', '?', '#']).next()?;
    let host_port = authority.rsplit('@').next()?;
    let host = match host_port.strip_prefix('[') {
        // An IPv6 address: up to its closing bracket, colons and all.
        Some(rest) => rest.split(']').next()?,
        None => host_port.split(':').next()?,
    };
    let host = canonical_host(host);
    (!host.is_empty()).then_some(host)
}

/// A host as rules and grants compare it: lower-case, no trailing dot, an
/// IPv6 address without brackets in its shortest form, and an IPv4 address
/// written as IPv6 (`[::ffff:127.0.0.1]`, `[::ffff:7f00:1]`) as the IPv4
/// address it reaches, so a rule on `127.0.0.1` holds for both. Every name
/// of this machine (`localhost` and its subdomains, `127.0.0.0/8`, `::1`,
/// and `0.0.0.0`/`::`, which connect here too) is `127.0.0.1`, so a rule
/// on one holds for all of them.
#[must_use]
pub fn canonical_host(host: &str) -> String {
    let host = host
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.');
    let host = match host.parse::<Ipv6Addr>() {
        Ok(ip) => match ip.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => ip.to_string(),
        },
        Err(_) => host.to_ascii_lowercase(),
    };
    let here = host == "localhost"
        || host.ends_with(".localhost")
        || host == "::1"
        || host == "::"
        || host
            .parse::<core::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback() || ip.is_unspecified());
    if here { "127.0.0.1".to_owned() } else { host }
}

/// Whether `host` is `domain` or below it.
pub(crate) fn domain_covers(domain: &str, host: &str) -> bool {
    host == domain
        || host
            .strip_suffix(domain)
            .is_some_and(|rest| rest.ends_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_names_with_a_dash_are_rules() {
        let rule = Rule::parse(
            "mcp__my-server__get-sum",
            Origin::Flag,
            None,
            Path::new("/"),
        )
        .unwrap();
        assert!(rule.names_tool("mcp__my-server__get-sum"));
        let server = Rule::parse("mcp__my-server", Origin::Flag, None, Path::new("/")).unwrap();
        assert!(server.names_tool("mcp__my-server__other"));
        assert!(!server.names_tool("mcp__my-server2__other"));
    }

    fn rule(text: &str) -> Rule {
        Rule::parse(
            text,
            Origin::Flag,
            Some(Path::new("/home/a")),
            Path::new("/repo"),
        )
        .unwrap()
    }

    #[test]
    fn prefix_rules_need_a_word_boundary() {
        let r = rule("Bash(git:*)");
        assert!(r.covers_command("git"));
        assert!(r.covers_command("git status"));
        assert!(!r.covers_command("gitk"));
        let r = rule("Bash(npm run *)");
        assert!(r.covers_command("npm run test"));
        assert!(r.covers_command("npm run"));
        assert!(!r.covers_command("npm runx"));
    }

    #[test]
    fn exact_and_wildcard_rules() {
        assert!(rule("Bash(make  install)").covers_command("make install"));
        assert!(!rule("Bash(make install)").covers_command("make install -j"));
        let r = rule("Bash(git * main)");
        assert!(r.covers_command("git push origin main"));
        assert!(!r.covers_command("git push origin dev"));
    }

    #[test]
    fn deny_rules_see_through_paths_split_flags_and_leading_flags() {
        let rm = rule("Bash(rm:*)");
        for command in ["/bin/rm -rf x", "./rm x", "~/bin/rm x", "/usr/bin/rm"] {
            assert!(rm.hits_command(command), "{command}");
            assert!(!rm.covers_command(command), "allow stays strict: {command}");
        }
        let rf = rule("Bash(rm -rf:*)");
        for command in ["rm -fr y", "rm -r -f y", "rm y -rf", "/bin/rm -f -r y"] {
            assert!(rf.hits_command(command), "{command}");
        }
        assert!(!rf.hits_command("rm -r y"), "-f is missing");
        let force = rule("Bash(git push --force:*)");
        assert!(force.hits_command("git -C . push --force"));
        assert!(force.hits_command("git push --force=yes origin"));
        assert!(!force.hits_command("git -C . push"));
    }

    #[test]
    fn deny_rules_see_through_flag_reordering() {
        let r = rule("Bash(git push --force:*)");
        assert!(r.hits_command("git push --force origin"));
        assert!(r.hits_command("git push origin main --force"));
        assert!(
            !r.covers_command("git push origin main --force"),
            "allow stays strict"
        );
        assert!(!r.hits_command("git push origin main"));
    }

    #[test]
    fn path_rules_anchor_home_absolute_and_relative() {
        let ssh = rule("Read(~/.ssh/**)");
        assert!(ssh.matches_subject("/home/a/.ssh/id_ed25519"));
        assert!(ssh.matches_subject("/home/a/.ssh/keys/x"));
        assert!(!ssh.matches_subject("/home/a/.sshx/id"));
        let folder = rule("Read(~/.aws)");
        assert!(
            folder.matches_subject("/home/a/.aws/credentials"),
            "a folder covers its inside"
        );
        let rel = rule("Edit(src/*.rs)");
        assert!(rel.matches_subject("/repo/src/main.rs"));
        assert!(
            !rel.matches_subject("/repo/src/a/b.rs"),
            "* stays in one folder"
        );
        assert!(rule("Edit(//etc/**)").matches_subject("/etc/passwd"));
        assert!(rule("Edit(/etc/**)").matches_subject("/etc/passwd"));
    }

    #[test]
    fn tool_names_and_families() {
        assert!(rule("Read").names_tool("grep"));
        assert!(rule("Edit").names_tool("write"));
        assert!(!rule("Write").names_tool("edit"));
        assert!(rule("Edit").names_tool("apply_patch"));
        assert!(rule("ApplyPatch").names_tool("apply_patch"));
        assert!(!rule("Edit").names_tool("read"));
        assert!(rule("bash").names_tool("bash"));
        assert!(rule("CloudAgent(o/r)").names_tool("cloud_agent"));
        assert!(rule("mcp__gh").names_tool("mcp__gh__create_issue"));
        assert!(rule("mcp__gh__*").names_tool("mcp__gh__create_issue"));
        assert!(!rule("mcp__gh").names_tool("mcp__ghx__a"));
        assert!(rule("mcp__gh__create_issue").names_tool("mcp__gh__create_issue"));
        assert!(!rule("mcp__gh__create_issue").names_tool("mcp__gh__close_issue"));
    }

    #[test]
    fn domains_cover_subdomains_only() {
        let r = rule("WebFetch(domain:example.com)");
        assert!(r.matches_subject("https://example.com/a"));
        assert!(r.matches_subject("https://docs.example.com:8443/a"));
        assert!(!r.matches_subject("https://badexample.com/"));
        assert!(!r.matches_subject("https://example.com.evil.io/"));
        // Spellings that reach the same host are the same host.
        assert!(r.matches_subject("https://EXAMPLE.com./a"));
        assert!(r.matches_subject("https://docs.example.com.:443/"));
        // IPv6 literals, and IPv4 written as IPv6, are the hosts they reach.
        let v4 = rule("WebFetch(domain:127.0.0.1)");
        for url in [
            "http://127.0.0.1:8080/",
            "http://[::ffff:127.0.0.1]:8080/",
            "http://[::ffff:7f00:1]/",
        ] {
            assert!(v4.matches_subject(url), "{url}");
        }
        // Every name of this machine is one host: a rule on one covers all.
        for url in [
            "http://[::1]/",
            "http://localhost:3000/",
            "http://LOCALHOST./",
            "http://api.localhost/",
            "http://127.0.0.2/",
            "http://0.0.0.0:8080/",
            "http://[::]/",
        ] {
            assert!(v4.matches_subject(url), "{url}");
            assert!(
                rule("WebFetch(domain:localhost)").matches_subject(url),
                "{url}"
            );
        }
        assert!(!v4.matches_subject("http://128.0.0.1/"));
        assert!(!v4.matches_subject("http://localhost.evil.io/"));
        let v6 = rule("WebFetch(domain:[::1])");
        assert!(v6.matches_subject("http://[0:0:0:0:0:0:0:1]:3000/"));
        assert!(!v6.matches_subject("http://[::2]/"));
        assert_eq!(
            url_host("http://[fd00:ec2::254]/x").as_deref(),
            Some("fd00:ec2::254")
        );
        // A backslash ends the authority: the host is evil.io, not
        // example.com.
        assert!(!r.matches_subject("http://evil.io\\@example.com/"));
        assert!(r.matches_subject("http://example.com\\@evil.io/"));
    }

    #[test]
    fn bad_rules_say_why() {
        let parse = |t: &str| Rule::parse(t, Origin::Flag, None, Path::new("/r")).unwrap_err();
        assert!(parse("Bash(git:*").reason.contains("closing"));
        assert!(parse("Ba sh").reason.contains("tool name"));
        assert!(parse("Bash()").reason.contains("empty"));
        assert!(parse("CloudAgent(justone)").reason.contains("owner/repo"));
        assert!(parse("Read(~/.ssh/**)").reason.contains("home"));
        assert!(parse("mcp__x(y)").reason.contains("no parentheses"));
        assert!(parse("WebFetch(domain:bücher.de)").reason.contains("ASCII"));
        assert!(
            parse("WebFetch(domain:evil.com:443)")
                .reason
                .contains("port")
        );
        assert!(
            Rule::parse(
                "WebFetch(domain:evil.com.)",
                Origin::Flag,
                None,
                Path::new("/r")
            )
            .unwrap()
            .matches_subject("https://evil.com/")
        );
        assert_eq!(parse("Bash(").rule, "Bash(");
    }
}
