//! Configuration values the core needs to make decisions.
//!
//! These are plain data: reading files and variables is the binaries' job.
//! Mode names follow Claude Code's spelling (`acceptEdits`,
//! `bypassPermissions`) so its users can keep theirs; kebab-case and short
//! aliases are accepted too.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How permissive the session is about calls no rule decides.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PermissionMode {
    /// Read-only calls run; everything else asks.
    #[default]
    #[serde(rename = "default")]
    Default,
    /// File edits in the workspace run without asking; commands still ask.
    #[serde(rename = "acceptEdits", alias = "accept-edits", alias = "accept_edits")]
    AcceptEdits,
    /// Edits and commands run without asking; destructive calls still ask.
    #[serde(rename = "auto")]
    Auto,
    /// Every call that is not read-only is denied without asking.
    #[serde(rename = "plan")]
    Plan,
    /// Everything runs without asking (deny rules still apply).
    #[serde(
        rename = "bypassPermissions",
        alias = "bypass",
        alias = "bypass-permissions"
    )]
    BypassPermissions,
}

impl PermissionMode {
    /// Every mode, in the order Shift+Tab cycles them.
    pub const ALL: [PermissionMode; 5] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Auto,
        PermissionMode::Plan,
        PermissionMode::BypassPermissions,
    ];

    /// How much runs without asking: plan least, bypassPermissions most.
    /// Each mode lets through all that the narrower ones do.
    fn width(self) -> u8 {
        match self {
            PermissionMode::Plan => 0,
            PermissionMode::Default => 1,
            PermissionMode::AcceptEdits => 2,
            PermissionMode::Auto => 3,
            PermissionMode::BypassPermissions => 4,
        }
    }

    /// The narrower of the two.
    #[must_use]
    pub fn narrower(self, other: PermissionMode) -> PermissionMode {
        if other.width() < self.width() {
            other
        } else {
            self
        }
    }

    /// The canonical name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Auto => "auto",
            PermissionMode::Plan => "plan",
            PermissionMode::BypassPermissions => "bypassPermissions",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A permission mode name that is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown permission mode `{0}` (expected default, acceptEdits, auto, plan or bypassPermissions)"
)]
pub struct UnknownMode(pub String);

impl FromStr for PermissionMode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "default" => PermissionMode::Default,
            "acceptEdits" | "accept-edits" | "accept_edits" => PermissionMode::AcceptEdits,
            "auto" => PermissionMode::Auto,
            "plan" => PermissionMode::Plan,
            "bypassPermissions" | "bypass-permissions" | "bypass" => {
                PermissionMode::BypassPermissions
            }
            other => return Err(UnknownMode(other.to_owned())),
        })
    }
}

/// What happens when a call would ask.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalPolicy {
    /// Ask a person (the TUI, an editor): emit `ApprovalRequired` and wait.
    #[default]
    OnRequest,
    /// Nobody is there to ask: the call is denied, with the reason in its
    /// result so the model can try another way. The headless default.
    Never,
}

/// How far shell commands may reach.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    ReadOnly,
    #[default]
    WorkspaceWrite,
    DangerFullAccess,
}

/// The `[permissions]` table: rule lists and the mode.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PermissionsConfig {
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub deny: Vec<String>,
    pub mode: Option<PermissionMode>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_narrower_mode_lets_through_less() {
        use PermissionMode::{AcceptEdits, Auto, BypassPermissions, Default, Plan};
        assert_eq!(BypassPermissions.narrower(Default), Default);
        assert_eq!(Default.narrower(BypassPermissions), Default);
        assert_eq!(AcceptEdits.narrower(Plan), Plan);
        assert_eq!(Auto.narrower(AcceptEdits), AcceptEdits);
        for mode in PermissionMode::ALL {
            assert_eq!(mode.narrower(mode), mode);
            assert_eq!(mode.narrower(Plan), Plan);
            assert_eq!(mode.narrower(BypassPermissions), mode);
        }
    }

    #[test]
    fn modes_parse_from_claude_code_and_kebab_names() {
        assert_eq!("acceptEdits".parse(), Ok(PermissionMode::AcceptEdits));
        assert_eq!("accept-edits".parse(), Ok(PermissionMode::AcceptEdits));
        assert_eq!(
            "bypassPermissions".parse(),
            Ok(PermissionMode::BypassPermissions)
        );
        assert!(
            "yolo"
                .parse::<PermissionMode>()
                .unwrap_err()
                .to_string()
                .contains("`yolo`")
        );
        for mode in PermissionMode::ALL {
            assert_eq!(mode.as_str().parse(), Ok(mode));
            let json = serde_json::to_string(&mode).unwrap();
            assert_eq!(json, format!("\"{}\"", mode.as_str()));
        }
    }
}

/// The `[budget]` table: spending caps in US dollars. A turn stops (with
/// `TurnDone { budget }`) before a model call that would cross a cap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetConfig {
    /// The most one session may spend.
    pub session_usd: Option<f64>,
    /// The most all sessions together may spend in a calendar month (UTC).
    pub monthly_usd: Option<f64>,
}

/// The `[context]` table: how cox keeps what it sends the model small.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContextConfig {
    /// An identical read-only call whose output has not changed within
    /// this many turns is answered `unchanged since #<id>`.
    pub dedup_window_turns: u32,
    /// Tool results older than this many turns are sent as a pointer to
    /// their archived output.
    pub microcompact_after_turns: u32,
    /// Compact after a turn whose last call used this share of the
    /// model's context window.
    pub compact_at: f64,
    /// Compaction keeps this many recent turns verbatim.
    pub keep_turns: u32,
    /// Past this many tools, the schemas of MCP tools are not sent until the
    /// model finds them with `tool_search`.
    pub max_tools: u32,
}

impl Default for ContextConfig {
    fn default() -> Self {
        Self {
            dedup_window_turns: 8,
            microcompact_after_turns: 6,
            compact_at: 0.75,
            keep_turns: 2,
            max_tools: 40,
        }
    }
}
