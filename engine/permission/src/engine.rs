//! The decision for one call: allow, ask, or deny, and which step said so.
//!
//! The order never changes:
//!
//! 1. deny rules (any rule that matches: for a shell line, any of its
//!    commands, loosely, so a moved flag does not slip past);
//! 2. `CloudAgent` calls: plan mode denies, and they ask in every other mode
//!    unless the user's own config (or command line) allows that exact
//!    repository; a file tool's write to a protected path
//!    ([`crate::protected`]: `.cox`, `.claude`, `.mcp.json`, instruction
//!    files) likewise, unless the user's own allow rule names the path;
//! 3. modes: bypass allows, plan denies every call that is not read-only;
//! 4. ask rules (any match, as for deny) — an ask rule beats an allow rule
//!    that matches the same call, as in Claude Code;
//! 5. allow rules (for a shell line: a bare or exact whole-line rule, or
//!    every command covered by some allow rule, and never an opaque line);
//! 6. session grants (the same coverage, rules and grants together);
//! 7. the risk default (read-only runs; edits run in acceptEdits and auto;
//!    commands run in auto);
//! 8. the approval policy: with nobody to ask, an ask becomes a deny.
//!
//! Adding a deny rule can only turn an outcome into a deny (step 1 runs
//! first and nothing after it can allow what it denied). The engine never
//! fails open: a shell call that arrives without its split is split here.

use std::path::Path;

use cox_protocol::config::PermissionsConfig;
use cox_protocol::types::{
    ApprovalPolicy, PathAccess, PermissionMode, Risk, SandboxMode, Segments, ShellPath, ToolCall,
};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::grant::Grant;
use crate::rule::{Origin, Rule, RuleError, collapse, normalise_tool, path_patterns};

/// What the engine decided, with a sentence saying which step decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Allow { reason: String },
    Ask { reason: String },
    Deny { reason: String },
}

impl Outcome {
    /// The sentence that says why.
    #[must_use]
    pub fn reason(&self) -> &str {
        match self {
            Outcome::Allow { reason } | Outcome::Ask { reason } | Outcome::Deny { reason } => {
                reason
            }
        }
    }

    /// `allow`, `ask` or `deny`.
    #[must_use]
    pub fn verdict(&self) -> &'static str {
        match self {
            Outcome::Allow { .. } => "allow",
            Outcome::Ask { .. } => "ask",
            Outcome::Deny { .. } => "deny",
        }
    }
}

/// A rule list that failed to compile, with where the rule came from.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{source} (in `{list}` of the {origin})")]
pub struct CompileError {
    pub origin: Origin,
    /// `allow`, `ask` or `deny`.
    pub list: &'static str,
    #[source]
    pub source: RuleError,
}

/// One source of rules: a config layer and where it came from.
#[derive(Clone, Debug)]
pub struct Layer<'a> {
    pub origin: Origin,
    pub config: &'a PermissionsConfig,
}

/// A rule list with its path rules also in one combined glob set, so a
/// file call is checked against all of them in one pass.
#[derive(Debug, Default)]
struct List {
    rules: Vec<Rule>,
    paths: GlobSet,
    /// For each pattern of `paths`, the index of its rule.
    path_rule: Vec<usize>,
}

impl List {
    fn new(rules: Vec<Rule>) -> Self {
        let mut builder = GlobSetBuilder::new();
        let mut path_rule = Vec::new();
        for (index, rule) in rules.iter().enumerate() {
            for pattern in path_patterns(rule).into_iter().flatten() {
                if let Ok(glob) = GlobBuilder::new(pattern).literal_separator(true).build() {
                    builder.add(glob);
                    path_rule.push(index);
                }
            }
        }
        let paths = builder.build().unwrap_or_else(|_| GlobSet::empty());
        Self {
            rules,
            paths,
            path_rule,
        }
    }

    /// The first rule that matches a non-shell call.
    fn find_subject(&self, call: &ToolCall) -> Option<&Rule> {
        if !self.path_rule.is_empty() && self.paths.is_match(&call.subject) {
            for hit in self.paths.matches(&call.subject) {
                let rule = &self.rules[self.path_rule[hit]];
                if rule.names_tool(&call.name) {
                    return Some(rule);
                }
            }
        }
        self.rules.iter().find(|r| {
            r.names_tool(&call.name)
                && path_patterns(r).is_none()
                && r.matches_subject(&call.subject)
        })
    }

    /// The first rule that hits a shell line: bare, the whole line, or any
    /// one of its commands (loosely).
    fn hit_shell(&self, call: &ToolCall, split: &Segments) -> Option<&Rule> {
        if self.rules.is_empty() {
            return None;
        }
        let line = collapse(&call.subject);
        self.rules
            .iter()
            .filter(|r| r.names_tool(&call.name))
            .find(|r| {
                r.covers_command(&line)
                    || split.commands.iter().any(|c| r.hits_command(c))
                    || r.hits_scan(&split.scan)
            })
    }

    /// Whether a rule of this list is about the shell at all.
    fn names_shell(&self, tool: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.names_tool(tool))
    }

    /// The first path rule for `tool` (`read`, or `write` for Edit and
    /// Write rules) that matches an absolute path.
    fn find_path(&self, tool: &str, path: &str) -> Option<&Rule> {
        if self.path_rule.is_empty() {
            return None;
        }
        self.paths
            .matches(path)
            .into_iter()
            .map(|hit| &self.rules[self.path_rule[hit]])
            .find(|rule| rule.names_tool(tool))
    }

    /// The first Read rule whose paths lie inside `folder` (which a
    /// command walks), with no glob before that point.
    fn inside(&self, folder: &str) -> Option<&Rule> {
        let folder = folder.trim_end_matches('/');
        self.rules.iter().find(|rule| {
            rule.names_tool("read")
                && path_patterns(rule).is_some_and(|[pattern, _]| {
                    let literal = pattern
                        .find(['*', '?', '[', '{'])
                        .map_or(pattern.as_str(), |at| &pattern[..at]);
                    literal
                        .strip_prefix(folder)
                        .is_some_and(|rest| rest.starts_with('/') || folder.is_empty())
                })
        })
    }

    /// The first rule that strictly covers one command.
    fn cover_command(&self, tool: &str, command: &str) -> Option<&Rule> {
        self.rules
            .iter()
            .find(|r| r.names_tool(tool) && r.covers_command(command))
    }
}

/// The compiled permission rules of one session.
#[derive(Debug, Default)]
pub struct Engine {
    allow: List,
    ask: List,
    deny: List,
    /// Project allow rules that were dropped, for `/permissions` and `check`.
    ignored: Vec<Rule>,
    /// Where `~` and relative paths a shell line names point, for a path
    /// the bash tool did not resolve.
    home: Option<std::path::PathBuf>,
    cwd: std::path::PathBuf,
    /// For each deny rule, whether the OS sandbox enforces it on a
    /// confined command (see [`Engine::enforce_in_sandbox`]); `None` when
    /// no sandbox enforces anything.
    enforced: Option<Vec<bool>>,
    /// Where protected names that are links lead (`.claude ->
    /// config/claude`): writes there are protected too.
    protected_targets: Vec<String>,
}

/// The folders and files that hold credentials: no call reads or edits
/// them, and the sandbox hides them from every confined command.
pub const SECRET_PATHS: [&str; 23] = [
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.kube/config",
    "~/.netrc",
    "~/.claude.json",
    "~/.claude/.credentials.json",
    "~/.codex/auth.json",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.config/gh/hosts.yml",
    "~/.docker/config.json",
    "~/.config/containers/auth.json",
    "~/.npmrc",
    "~/.pypirc",
    "~/.gem/credentials",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.vault-token",
    "~/.1password",
];

impl Engine {
    /// Compiles one trusted config (plus cox's built-in deny rules).
    ///
    /// # Errors
    /// A rule that does not parse.
    pub fn compile(
        config: &PermissionsConfig,
        home: Option<&Path>,
        cwd: &Path,
    ) -> Result<Engine, CompileError> {
        let origin = Origin::User(std::path::PathBuf::from("config"));
        Self::compile_layers(&[Layer { origin, config }], home, cwd)
    }

    /// Compiles several layers. Allow rules from a project config are not
    /// trusted: they are dropped (see [`Engine::ignored`]); its deny and ask
    /// rules apply.
    ///
    /// # Errors
    /// A rule that does not parse, naming its layer and list.
    pub fn compile_layers(
        layers: &[Layer<'_>],
        home: Option<&Path>,
        cwd: &Path,
    ) -> Result<Engine, CompileError> {
        Self::compile_layers_at(layers, home, cwd, &[])
    }

    /// [`Engine::compile_layers`] where a relative path in a deny or an
    /// ask rule also covers the same path under each folder of `also` (a
    /// worktree session's main checkout, a subagent's parent's folder): a
    /// rule the project wrote about `.env` holds in every checkout the
    /// session reaches. Allow rules stay anchored at `cwd` alone, so the
    /// extra anchors only ever narrow.
    ///
    /// # Errors
    /// As [`Engine::compile_layers`].
    pub fn compile_layers_at(
        layers: &[Layer<'_>],
        home: Option<&Path>,
        cwd: &Path,
        also: &[std::path::PathBuf],
    ) -> Result<Engine, CompileError> {
        let (mut allow, mut ask, mut deny, mut ignored) = (vec![], vec![], vec![], vec![]);
        if home.is_some() {
            for folder in SECRET_PATHS {
                for tool in ["Read", "Edit"] {
                    let text = format!("{tool}({folder})");
                    if let Ok(rule) = Rule::parse(&text, Origin::BuiltIn, home, cwd) {
                        deny.push(rule);
                    }
                }
            }
        }
        for layer in layers {
            let parse = |list: &'static str, text: &String| {
                Rule::parse(text, layer.origin.clone(), home, cwd).map_err(|source| CompileError {
                    origin: layer.origin.clone(),
                    list,
                    source,
                })
            };
            // The rule anchored at each extra folder, when that moves it
            // (a relative path); an error was already said at `cwd`.
            let elsewhere = |rule: &Rule, text: &String| -> Vec<Rule> {
                also.iter()
                    .filter_map(|anchor| Rule::parse(text, layer.origin.clone(), home, anchor).ok())
                    .filter(|moved| moved.anchored_paths() != rule.anchored_paths())
                    .collect()
            };
            for text in &layer.config.deny {
                let rule = parse("deny", text)?;
                deny.extend(elsewhere(&rule, text));
                deny.push(rule);
            }
            for text in &layer.config.ask {
                let rule = parse("ask", text)?;
                ask.extend(elsewhere(&rule, text));
                ask.push(rule);
            }
            for text in &layer.config.allow {
                let rule = parse("allow", text)?;
                if matches!(layer.origin, Origin::Project(_)) {
                    ignored.push(rule);
                } else {
                    allow.push(rule);
                }
            }
        }
        Ok(Engine {
            allow: List::new(allow),
            ask: List::new(ask),
            deny: List::new(deny),
            ignored,
            home: home.map(Path::to_path_buf),
            cwd: cwd.to_path_buf(),
            enforced: None,
            protected_targets: Vec::new(),
        })
    }

    /// Tells the engine which deny rules the OS sandbox enforces itself on
    /// every confined command (a `Read` rule on a hidden path, an `Edit`
    /// rule on a read-only one). A shell line with a path only known when
    /// it runs then runs confined, instead of asking, when every deny rule
    /// that could apply to that path is enforced; it still asks when one is
    /// not, or when the line does not run confined (`danger-full-access`,
    /// or a call that asks to leave the sandbox). Call it once the sandbox
    /// policy is built, and only when a sandbox mechanism works here.
    pub fn enforce_in_sandbox(&mut self, enforced: impl Fn(&Rule) -> bool) {
        self.enforced = Some(self.deny.rules.iter().map(enforced).collect());
    }

    /// Treats writes to `targets` (absolute, where protected names that are
    /// links lead) as writes to the protected names themselves.
    pub fn protect_targets(&mut self, targets: Vec<String>) {
        self.protected_targets = targets;
    }

    /// The first deny rule that applies to paths accessed as `access` and
    /// that the sandbox does not enforce (all of them when it enforces
    /// none).
    fn unenforced(&self, access: PathAccess) -> Option<&Rule> {
        let applies = |rule: &Rule| rule.path_access() == Some(access);
        match &self.enforced {
            None => self.deny.rules.iter().find(|r| applies(r)),
            Some(flags) => self
                .deny
                .rules
                .iter()
                .zip(flags)
                .find(|(r, enforced)| applies(r) && !**enforced)
                .map(|(r, _)| r),
        }
    }

    /// This engine with `rules` allowed too, from `origin` (a command's
    /// `allowed-tools`, for the turn it starts). A project's allow rules are
    /// never taken, here as anywhere.
    ///
    /// # Errors
    /// A rule that does not parse, naming where it came from.
    pub fn with_allowed(&self, rules: &[String], origin: &Origin) -> Result<Engine, CompileError> {
        let mut allow = self.allow.rules.clone();
        let mut ignored = self.ignored.clone();
        for text in rules {
            let rule = Rule::parse(text, origin.clone(), self.home.as_deref(), &self.cwd).map_err(
                |source| CompileError {
                    origin: origin.clone(),
                    list: "allow",
                    source,
                },
            )?;
            if matches!(origin, Origin::Project(_)) {
                ignored.push(rule);
            } else {
                allow.push(rule);
            }
        }
        Ok(Engine {
            allow: List::new(allow),
            ask: List::new(self.ask.rules.clone()),
            deny: List::new(self.deny.rules.clone()),
            ignored,
            home: self.home.clone(),
            cwd: self.cwd.clone(),
            enforced: self.enforced.clone(),
            protected_targets: self.protected_targets.clone(),
        })
    }

    /// Project allow rules that were dropped because projects cannot allow.
    #[must_use]
    pub fn ignored(&self) -> &[Rule] {
        &self.ignored
    }

    /// Whether the rules alone let every call of `tool` run without asking:
    /// an allow rule names the whole tool (`WebSearch`, no parentheses)
    /// and no deny or ask rule names it at all. For what cox cannot decide
    /// call by call (a provider's own web search runs inside a model
    /// call): any deny or ask rule naming the tool, whatever its
    /// parentheses, keeps it off.
    ///
    /// # Errors
    /// Why not, naming the rule (or its absence).
    pub fn allows_whole_tool(&self, tool: &str) -> Result<(), String> {
        for (list, rules) in [("deny", &self.deny.rules), ("ask", &self.ask.rules)] {
            if let Some(rule) = rules.iter().find(|r| r.names_tool(tool)) {
                return Err(format!(
                    "{list} rule {} ({}) names it, and its calls cannot be asked about one by one",
                    rule.text, rule.origin
                ));
            }
        }
        match self
            .allow
            .rules
            .iter()
            .find(|r| r.names_tool(tool) && matches!(r.spec, crate::rule::Spec::Any))
        {
            Some(_) => Ok(()),
            None => Err("no allow rule names the whole tool".to_owned()),
        }
    }

    /// Every rule in effect: (list, rule), deny first.
    pub fn rules(&self) -> impl Iterator<Item = (&'static str, &Rule)> {
        let deny = self.deny.rules.iter().map(|r| ("deny", r));
        let ask = self.ask.rules.iter().map(|r| ("ask", r));
        let allow = self.allow.rules.iter().map(|r| ("allow", r));
        deny.chain(ask).chain(allow)
    }

    /// Decides one call.
    ///
    /// ```
    /// use std::path::Path;
    /// use cox_permission::{Engine, Outcome};
    /// use cox_protocol::{CallId, config::PermissionsConfig, types::*};
    /// use serde_json::json;
    ///
    /// let home = Path::new("/home/alice");
    /// let engine = Engine::compile(&PermissionsConfig::default(), Some(home), Path::new("/repo"))
    ///     .expect("default rules compile");
    /// let ssh = ToolCall {
    ///     id: CallId::new(), name: "read".into(),
    ///     input: json!({"path": "/home/alice/.ssh/id_ed25519"}),
    ///     risk: Risk::ReadOnly, subject: "/home/alice/.ssh/id_ed25519".into(),
    ///     segments: None, // only `bash` fills it
    ///     writes: Vec::new(),
    /// };
    /// // The default config denies this, despite the ReadOnly risk:
    /// assert!(matches!(
    ///     engine.decide(&ssh, PermissionMode::Default, ApprovalPolicy::OnRequest, SandboxMode::WorkspaceWrite, &[]),
    ///     Outcome::Deny { .. }
    /// ));
    /// ```
    ///
    /// A call that writes several files (`ToolCall::writes`, as
    /// `apply_patch` has) is decided path by path, each as its own call on
    /// that path, and the strictest answer wins: any deny denies, naming
    /// the path; else any ask asks; else it is allowed.
    #[must_use]
    pub fn decide(
        &self,
        call: &ToolCall,
        mode: PermissionMode,
        policy: ApprovalPolicy,
        sandbox: SandboxMode,
        grants: &[Grant],
    ) -> Outcome {
        let Some(paths) = paths_apart(call) else {
            return self.decide_one(call, mode, policy, sandbox, grants);
        };
        let outcomes: Vec<(&String, Outcome)> = paths
            .into_iter()
            .map(|path| {
                let one = on_path(call, path);
                (path, self.decide_one(&one, mode, policy, sandbox, grants))
            })
            .collect();
        let strictest = |verdict: &str| -> Option<String> {
            let (path, first) = outcomes.iter().find(|(_, o)| o.verdict() == verdict)?;
            // One reason for every path (a mode, say) needs no path named.
            let same = outcomes.iter().all(|(_, o)| o == first);
            Some(if same {
                first.reason().to_owned()
            } else {
                format!("{}: the call writes {path}", first.reason())
            })
        };
        if let Some(reason) = strictest("deny") {
            return Outcome::Deny { reason };
        }
        if let Some(reason) = strictest("ask") {
            return Outcome::Ask { reason };
        }
        match strictest("allow") {
            Some(reason) => Outcome::Allow { reason },
            // `paths_apart` never yields an empty list.
            None => ask(policy, "the call names no path to decide".into()),
        }
    }

    /// [`Engine::decide`] for a call on one subject.
    fn decide_one(
        &self,
        call: &ToolCall,
        mode: PermissionMode,
        policy: ApprovalPolicy,
        sandbox: SandboxMode,
        grants: &[Grant],
    ) -> Outcome {
        let shell = is_shell(call);
        let fallback;
        let split = match (&call.segments, shell) {
            (Some(split), true) => Some(split),
            (None, true) => {
                // Not split by the tool: split here, so deny rules still see
                // every command (slower, never looser).
                let mut split = cox_bash::segments(&cox_bash::split(&call.subject));
                // Without the tool, the working folder stands for the
                // workspace.
                let cwd = normalise(&self.cwd.to_string_lossy());
                for path in &mut split.paths {
                    if let Some(absolute) = self.absolute(path) {
                        path.outside = !(absolute == cwd
                            || absolute.starts_with(&format!("{}/", cwd.trim_end_matches('/'))));
                    }
                }
                fallback = split;
                Some(&fallback)
            }
            _ => None,
        };
        fn hit<'l>(list: &'l List, call: &ToolCall, split: Option<&Segments>) -> Option<&'l Rule> {
            match split {
                Some(split) => list.hit_shell(call, split),
                None => list.find_subject(call),
            }
        }

        // The paths a shell line names, made absolute once.
        let paths: Vec<Resolved<'_>> = split
            .map(|s| s.paths.iter().map(|p| (p, self.absolute(p))).collect())
            .unwrap_or_default();
        // A shell line that walks into what a deny rule covers, or names a
        // path only known when it runs while path deny rules exist, cannot
        // be checked against them: whatever the steps say, it is never
        // allowed unasked (and a deny stays a deny, so adding a deny rule
        // still only narrows).
        let unverifiable = self
            .walks_into(&self.deny, &paths)
            .map(|(rule, folder)| {
                format!(
                    "the line reads everything under {folder}, which holds paths deny rule {} ({}) covers",
                    rule.text, rule.origin
                )
            })
            .or_else(|| {
                // Confined, a path only known at run time meets the OS's
                // enforcement of each rule the sandbox can express.
                let confined = sandbox != SandboxMode::DangerFullAccess
                    && !split.is_some_and(|s| s.unsandboxed);
                self.unknown_path(&paths, confined)
            });
        let steps = || -> Outcome {
            // 1. deny rules (for a shell line, also on the paths it names).
            if let Some(rule) = hit(&self.deny, call, split) {
                return Outcome::Deny {
                    reason: format!("denied by rule {} ({})", rule.text, rule.origin),
                };
            }
            if let Some((rule, path)) = self.path_hit(&self.deny, &paths) {
                return Outcome::Deny {
                    reason: format!(
                        "denied by rule {} ({}): the line names {path}",
                        rule.text, rule.origin
                    ),
                };
            }
            // 2. CloudAgent.
            let cloud = normalise_tool(&call.name) == "cloudagent";
            if cloud {
                if mode == PermissionMode::Plan {
                    return Outcome::Deny {
                        reason: "plan mode refuses to send code to a cloud agent".into(),
                    };
                }
                if let Some(rule) = hit(&self.ask, call, split) {
                    return ask(policy, format!("rule {} ({}) asks", rule.text, rule.origin));
                }
                // Only a repository spelt plainly can be allowed: a name
                // with spaces or other marks around it matches deny and ask
                // rules loosely, and never an allow.
                let plain = plain_repo(&call.subject);
                let exact_user_allow = self.allow.rules.iter().find(|r| {
                    plain
                        && r.names_tool(&call.name)
                        && !r.is_bare()
                        && matches!(r.origin, Origin::User(_) | Origin::Flag)
                        && r.matches_subject(&call.subject)
                });
                return match exact_user_allow {
                    Some(rule) => Outcome::Allow {
                        reason: format!("allowed by rule {} ({})", rule.text, rule.origin),
                    },
                    None => ask(
                        policy,
                        format!(
                            "sending {} to a cloud agent asks in every mode unless your own config \
                             allows CloudAgent({})",
                            call.subject, call.subject
                        ),
                    ),
                };
            }
            // 2b. a write to what the next session runs or obeys.
            if let Some((path, name)) = protected_write(call, &self.protected_targets) {
                return self.protected_step(call, mode, policy, &path, name);
            }
            // A command name only known at run time may be one a deny rule
            // names: where the mode would run the line unasked, it asks.
            let dynamic_under_deny = || {
                split.filter(|s| s.dynamic)?;
                let rule = self.deny.names_shell(&call.name)?;
                Some(format!(
                    "a command name on this line is only known when it runs, so deny rule {} ({}) \
                     cannot be checked against it",
                    rule.text, rule.origin
                ))
            };
            // 3. modes.
            match mode {
                PermissionMode::BypassPermissions if let Some(why) = dynamic_under_deny() => {
                    return ask(policy, why);
                }
                PermissionMode::BypassPermissions => {
                    return Outcome::Allow {
                        reason: "bypassPermissions mode allows every call".into(),
                    };
                }
                PermissionMode::Plan if call.risk != Risk::ReadOnly => {
                    return Outcome::Deny {
                        reason: format!(
                            "plan mode refuses {} calls; describe the change instead of making it",
                            call.risk.as_str()
                        ),
                    };
                }
                _ => {}
            }
            // 4. ask rules; for a shell line also path ask rules, and a folder
            // walked (`grep -r`, `find`) that holds what a path rule covers.
            if let Some(rule) = hit(&self.ask, call, split) {
                return ask(policy, format!("rule {} ({}) asks", rule.text, rule.origin));
            }
            {
                if let Some((rule, path)) = self.path_hit(&self.ask, &paths) {
                    return ask(
                        policy,
                        format!(
                            "rule {} ({}) asks: the line names {path}",
                            rule.text, rule.origin
                        ),
                    );
                }
                if let Some((rule, folder)) = self.walks_into(&self.ask, &paths) {
                    return ask(
                        policy,
                        format!(
                            "the line reads everything under {folder}, which holds paths rule {} ({}) covers",
                            rule.text, rule.origin
                        ),
                    );
                }
            }
            // 5. allow rules; 6. grants.
            match split {
                Some(split) => {
                    if let Some(reason) = self.allow_shell(call, split, &[]) {
                        return Outcome::Allow { reason };
                    }
                    if let Some(reason) = self.allow_shell(call, split, grants) {
                        return Outcome::Allow { reason };
                    }
                }
                None => {
                    if let Some(rule) = self.allow.find_subject(call) {
                        return Outcome::Allow {
                            reason: format!("allowed by rule {} ({})", rule.text, rule.origin),
                        };
                    }
                    if grants.iter().any(|g| g.covers_call(call)) {
                        return Outcome::Allow {
                            reason: "allowed for this session by the user".into(),
                        };
                    }
                }
            }
            // 7. the risk default.
            let writable = sandbox != SandboxMode::ReadOnly;
            let asks = match (call.risk, mode) {
                (Risk::ReadOnly, _) if let Some(why) = self.unvouched_path(&paths) => why,
                (Risk::ReadOnly, _) => {
                    return Outcome::Allow {
                        reason: "read-only calls run without asking".into(),
                    };
                }
                (Risk::Write, PermissionMode::AcceptEdits | PermissionMode::Auto) if writable => {
                    return Outcome::Allow {
                        reason: format!("{mode} mode allows file edits"),
                    };
                }
                (Risk::Exec, PermissionMode::Auto) if let Some(why) = dynamic_under_deny() => why,
                (Risk::Exec, PermissionMode::Auto) if writable => {
                    return Outcome::Allow {
                        reason: "auto mode allows commands".into(),
                    };
                }
                (risk, mode) => format!("{} calls ask in {mode} mode", risk.as_str()),
            };
            // 8. the approval policy.
            ask(policy, asks)
        };
        match (steps(), unverifiable) {
            (Outcome::Allow { .. }, Some(why)) => ask(policy, why),
            (outcome, _) => outcome,
        }
    }

    /// Step 2b: a write to a protected path asks in every mode (plan
    /// refuses it as any write), unless the person's own allow rule spells
    /// the protected `name` and matches the path.
    fn protected_step(
        &self,
        call: &ToolCall,
        mode: PermissionMode,
        policy: ApprovalPolicy,
        path: &str,
        name: &str,
    ) -> Outcome {
        if mode == PermissionMode::Plan {
            return Outcome::Deny {
                reason: format!(
                    "plan mode refuses {} calls; describe the change instead of making it",
                    call.risk.as_str()
                ),
            };
        }
        let own_allow = self.allow.rules.iter().find(|r| {
            r.names_tool(&call.name)
                && !r.is_bare()
                && matches!(r.origin, Origin::User(_) | Origin::Flag)
                && r.text.contains(name)
                && r.matches_subject(&call.subject)
        });
        if let Some(rule) = own_allow {
            return Outcome::Allow {
                reason: format!("allowed by rule {} ({})", rule.text, rule.origin),
            };
        }
        ask(
            policy,
            format!(
                "{path} tells later sessions what to run or believe (settings, hooks, MCP servers, \
                 instructions), so a write to it asks in every mode"
            ),
        )
    }

    /// A shell path as an absolute, lexically normal path; `None` when it
    /// is unknown (or `~user`, which only the tool resolves).
    fn absolute(&self, path: &ShellPath) -> Option<String> {
        if path.unknown {
            return None;
        }
        let raw = path.path.as_str();
        let joined = if raw == "~" || raw.starts_with("~/") {
            format!("{}{}", self.home.as_ref()?.display(), &raw[1..])
        } else if raw.starts_with('~') {
            return None;
        } else if raw.starts_with('/') {
            raw.to_owned()
        } else {
            format!("{}/{raw}", self.cwd.display())
        };
        Some(normalise(&joined))
    }

    /// The first path of a shell line a rule of `list` covers: Read rules
    /// for what it reads, Edit (and Write) rules for what it writes.
    fn path_hit<'l>(
        &'l self,
        list: &'l List,
        paths: &[Resolved<'_>],
    ) -> Option<(&'l Rule, String)> {
        if list.path_rule.is_empty() {
            return None;
        }
        paths.iter().find_map(|(path, absolute)| {
            let absolute = absolute.as_deref()?;
            let tool = match path.access {
                PathAccess::Read => "read",
                PathAccess::Write => "write",
            };
            list.find_path(tool, absolute)
                .map(|rule| (rule, absolute.to_owned()))
        })
    }

    /// A folder the line walks that holds paths a Read rule of `list`
    /// covers.
    fn walks_into<'l>(
        &'l self,
        list: &'l List,
        paths: &[Resolved<'_>],
    ) -> Option<(&'l Rule, String)> {
        paths
            .iter()
            .filter(|(path, _)| path.recursive)
            .find_map(|(_, folder)| {
                let folder = folder.as_deref()?;
                Some((list.inside(folder)?, folder.to_owned()))
            })
    }

    /// Why a path of the line that is only known when it runs cannot be
    /// let through: a path deny rule could cover it, and the sandbox does
    /// not enforce that rule on this call (it is not confined, or the rule
    /// is one the sandbox cannot express).
    fn unknown_path(&self, paths: &[Resolved<'_>], confined: bool) -> Option<String> {
        if self.deny.path_rule.is_empty() {
            return None;
        }
        paths
            .iter()
            .filter(|(_, absolute)| absolute.is_none())
            .find_map(|(path, _)| {
                let rule = if confined && self.enforced.is_some() {
                    self.unenforced(path.access)?
                } else {
                    self.deny
                        .rules
                        .iter()
                        .find(|r| r.path_access() == Some(path.access))?
                };
                let why = if !confined {
                    "the call does not run in the sandbox"
                } else if self.enforced.is_none() {
                    "no sandbox enforces it here"
                } else {
                    "the sandbox cannot enforce that rule (a pattern, or a path that does not exist yet inside a writable folder)"
                };
                Some(format!(
                    "the line names {}, a path only known when it runs, which deny rule {} ({}) could cover, and {why}",
                    path.path, rule.text, rule.origin
                ))
            })
    }

    /// Why a read-only line's paths cannot be auto-allowed: one lies
    /// outside the workspace or is only known when the line runs.
    fn unvouched_path(&self, paths: &[Resolved<'_>]) -> Option<String> {
        paths.iter().find_map(|(path, absolute)| match absolute {
            None => Some(format!(
                "the line reads {}, a path only known when it runs, so it asks",
                path.path
            )),
            Some(absolute) if path.outside => Some(format!(
                "the line reads {absolute}, outside the workspace, so it asks"
            )),
            Some(_) => None,
        })
    }

    /// Allows a shell line through rules (and, when given, grants): a bare
    /// or exact whole-line rule, or every command covered. Never an opaque
    /// line by prefix or grant.
    fn allow_shell(&self, call: &ToolCall, split: &Segments, grants: &[Grant]) -> Option<String> {
        let line = collapse(&call.subject);
        if grants.is_empty() {
            if let Some(rule) = self
                .allow
                .rules
                .iter()
                .find(|r| r.names_tool(&call.name) && (r.is_bare() || r.is_exact_line(&line)))
            {
                return Some(format!("allowed by rule {} ({})", rule.text, rule.origin));
            }
        } else if split.opaque.is_some() {
            return grants
                .iter()
                .any(|g| *g == Grant::Line(line.clone()))
                .then(|| "this exact line was allowed for this session by the user".into());
        }
        if split.opaque.is_some() || split.commands.is_empty() {
            return None;
        }
        let mut by = Vec::new();
        for command in &split.commands {
            if let Some(rule) = self.allow.cover_command(&call.name, command) {
                by.push(rule.text.clone());
            } else if grants
                .iter()
                .any(|g| matches!(g, Grant::Command(c) if c == command))
            {
                by.push("a session grant".into());
            } else {
                return None;
            }
        }
        by.dedup();
        Some(format!("every command is allowed (by {})", by.join(", ")))
    }

    /// For a shell call, each command with what the rules alone say of it
    /// (`deny`, `ask`, `allow`, or `none`) and the rule; for other calls,
    /// the subject alone. For explaining a decision to a person.
    #[must_use]
    pub fn explain(&self, call: &ToolCall) -> Vec<(String, &'static str, Option<String>)> {
        let commands: Vec<String> = match (&call.segments, is_shell(call)) {
            (Some(split), true) => split.commands.clone(),
            _ => paths_apart(call).map_or_else(
                || vec![call.subject.clone()],
                |paths| paths.into_iter().cloned().collect(),
            ),
        };
        commands
            .into_iter()
            .map(|command| {
                // The command alone, as its own one-command call (the input
                // is not needed to match rules, so it is not copied).
                let one = ToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    input: serde_json::Value::Null,
                    risk: call.risk,
                    subject: command.clone(),
                    segments: Some(Segments {
                        commands: vec![command.clone()],
                        opaque: None,
                        ..Default::default()
                    })
                    .filter(|_| is_shell(call)),
                    writes: Vec::new(),
                };
                let found = |list: &List, strict: bool| -> Option<String> {
                    if is_shell(call) && strict {
                        list.cover_command(&call.name, &command)
                            .map(|r| r.text.clone())
                    } else if let Some(split) = &one.segments {
                        list.hit_shell(&one, split).map(|r| r.text.clone())
                    } else {
                        list.find_subject(&one).map(|r| r.text.clone())
                    }
                };
                let (verdict, rule) = if let Some(rule) = found(&self.deny, false) {
                    ("deny", Some(rule))
                } else if let Some(rule) = found(&self.ask, false) {
                    ("ask", Some(rule))
                } else if let Some(rule) = found(&self.allow, true) {
                    ("allow", Some(rule))
                } else {
                    ("none", None)
                };
                (command, verdict, rule)
            })
            .collect()
    }
}

/// The protected path a file tool's call writes, as resolved or as written
/// (see [`crate::protected`]); `None` for a shell line, a read, or a call
/// that names no path.
fn protected_write(call: &ToolCall, targets: &[String]) -> Option<(String, &'static str)> {
    if is_shell(call) || call.risk == Risk::ReadOnly {
        return None;
    }
    let into_target = std::iter::once(&call.subject)
        .chain(&call.writes)
        .any(|path| {
            targets.iter().any(|t| {
                path == t
                    || path
                        .strip_prefix(t.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            })
        });
    if into_target {
        // Named by the link's target: the name is the link's (`.claude`
        // or an instruction file), which an allow rule must spell.
        return Some((call.subject.clone(), "a protected link's target"));
    }
    let raw = ["path", "file_path", "notebook_path"]
        .iter()
        .find_map(|key| call.input.get(*key).and_then(serde_json::Value::as_str));
    std::iter::once(call.subject.as_str())
        .filter(|s| s.starts_with('/'))
        .chain(call.writes.iter().map(String::as_str))
        .chain(raw)
        .find_map(crate::protected::protected_name)
        .map(|name| (call.subject.clone(), name))
}

/// `owner/repo` spelt with GitHub's characters only (letters, digits,
/// `-`, `_`, `.`), nothing around it.
fn plain_repo(subject: &str) -> bool {
    let ok = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    subject
        .split_once('/')
        .is_some_and(|(owner, repo)| ok(owner) && ok(repo))
}

fn is_shell(call: &ToolCall) -> bool {
    normalise_tool(&call.name) == "bash"
}

/// The paths a non-shell call is decided on one by one: its subject and
/// every file it writes, when they are not just the subject. `None` for a
/// call decided whole.
pub(crate) fn paths_apart(call: &ToolCall) -> Option<Vec<&String>> {
    if is_shell(call) || call.writes.iter().all(|w| *w == call.subject) {
        return None;
    }
    let mut paths: Vec<&String> = Vec::with_capacity(call.writes.len() + 1);
    for path in std::iter::once(&call.subject).chain(&call.writes) {
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    Some(paths)
}

/// `call` as a call on `path` alone (the input is not needed to decide).
fn on_path(call: &ToolCall, path: &str) -> ToolCall {
    ToolCall {
        id: call.id.clone(),
        name: call.name.clone(),
        input: serde_json::Value::Null,
        risk: call.risk,
        subject: path.to_owned(),
        segments: None,
        writes: vec![path.to_owned()],
    }
}

fn ask(policy: ApprovalPolicy, why: String) -> Outcome {
    match policy {
        ApprovalPolicy::OnRequest => Outcome::Ask { reason: why },
        ApprovalPolicy::Never => Outcome::Deny {
            reason: format!(
                "{why}, and this session cannot ask (approval policy: never); the call was not run"
            ),
        },
    }
}

/// A path a shell line names, with its absolute form (`None`: unknown).
type Resolved<'a> = (&'a ShellPath, Option<String>);

/// `..`, `.` and repeated `/` removed from an absolute path, as text.
fn normalise(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}
