//! Deciding whether a tool call runs, asks, or is refused.
//!
//! The order of the steps is fixed: modes that settle everything (plan,
//! bypass), then session grants, then the call's risk, then the approval
//! policy turns an "ask" into a refusal when nobody is there to answer.
//! Rule lists (`allow`/`ask`/`deny`) slot in before the modes; until they
//! exist, an empty rule set is the same as none.
//!
//! Every [`Outcome`] carries a sentence a person (and the model) can read
//! saying which step decided.

use cox_protocol::types::{ApprovalPolicy, PermissionMode, Risk, SandboxMode, ToolCall};

/// What the engine decided for one call.
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
}

/// A "yes for this session" a person gave: the tool and its exact subject.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Grant {
    pub tool: String,
    pub subject: String,
}

impl Grant {
    /// The grant that covers calls like `call`.
    #[must_use]
    pub fn for_call(call: &ToolCall) -> Self {
        Self {
            tool: call.name.clone(),
            subject: call.subject.clone(),
        }
    }

    fn covers(&self, call: &ToolCall) -> bool {
        self.tool == call.name && self.subject == call.subject
    }
}

/// The permission engine.
#[derive(Clone, Debug, Default)]
pub struct Engine {}

impl Engine {
    /// An engine with no rules.
    #[must_use]
    pub fn new() -> Self {
        Self {}
    }

    /// Decides one call.
    #[must_use]
    pub fn decide(
        &self,
        call: &ToolCall,
        mode: PermissionMode,
        policy: ApprovalPolicy,
        _sandbox: SandboxMode,
        grants: &[Grant],
    ) -> Outcome {
        let read_only = call.risk == Risk::ReadOnly;
        match mode {
            PermissionMode::BypassPermissions => {
                return Outcome::Allow {
                    reason: "bypassPermissions mode allows every call".into(),
                };
            }
            PermissionMode::Plan if !read_only => {
                return Outcome::Deny {
                    reason: format!(
                        "plan mode refuses {} calls; describe the change instead of making it",
                        call.risk.as_str()
                    ),
                };
            }
            _ => {}
        }
        if grants.iter().any(|g| g.covers(call)) {
            return Outcome::Allow {
                reason: "allowed for this session by the user".into(),
            };
        }
        let ask = match (call.risk, mode) {
            (Risk::ReadOnly, _) => {
                return Outcome::Allow {
                    reason: "read-only calls run without asking".into(),
                };
            }
            (Risk::Write, PermissionMode::AcceptEdits | PermissionMode::Auto) => {
                return Outcome::Allow {
                    reason: format!("{mode} mode allows file edits"),
                };
            }
            (Risk::Exec, PermissionMode::Auto) => {
                return Outcome::Allow {
                    reason: "auto mode allows commands".into(),
                };
            }
            (risk, mode) => format!("{} calls ask in {mode} mode", risk.as_str()),
        };
        match policy {
            ApprovalPolicy::OnRequest => Outcome::Ask { reason: ask },
            ApprovalPolicy::Never => Outcome::Deny {
                reason: format!(
                    "{ask}, and this session cannot ask (approval policy: never); \
                     the call was not run"
                ),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cox_protocol::CallId;
    use serde_json::json;

    fn call(risk: Risk) -> ToolCall {
        ToolCall {
            id: CallId::from("c"),
            name: "bash".into(),
            input: json!({}),
            risk,
            subject: "make".into(),
            segments: None,
        }
    }

    fn decide(risk: Risk, mode: PermissionMode, policy: ApprovalPolicy) -> Outcome {
        Engine::new().decide(&call(risk), mode, policy, SandboxMode::WorkspaceWrite, &[])
    }

    #[test]
    fn read_only_runs_and_the_rest_asks_by_default() {
        use ApprovalPolicy::OnRequest;
        assert!(matches!(
            decide(Risk::ReadOnly, PermissionMode::Default, OnRequest),
            Outcome::Allow { .. }
        ));
        for risk in [Risk::Write, Risk::Exec, Risk::Destructive] {
            assert!(matches!(
                decide(risk, PermissionMode::Default, OnRequest),
                Outcome::Ask { .. }
            ));
        }
    }

    #[test]
    fn never_turns_an_ask_into_a_deny_with_the_reason() {
        let out = decide(Risk::Write, PermissionMode::Default, ApprovalPolicy::Never);
        assert!(matches!(out, Outcome::Deny { .. }));
        assert!(
            out.reason().contains("approval policy: never"),
            "{}",
            out.reason()
        );
    }

    #[test]
    fn modes_widen_and_narrow_as_documented() {
        use ApprovalPolicy::OnRequest;
        use PermissionMode::*;
        assert!(matches!(
            decide(Risk::Write, AcceptEdits, OnRequest),
            Outcome::Allow { .. }
        ));
        assert!(matches!(
            decide(Risk::Exec, AcceptEdits, OnRequest),
            Outcome::Ask { .. }
        ));
        assert!(matches!(
            decide(Risk::Exec, Auto, OnRequest),
            Outcome::Allow { .. }
        ));
        assert!(matches!(
            decide(Risk::Destructive, Auto, OnRequest),
            Outcome::Ask { .. }
        ));
        assert!(matches!(
            decide(Risk::Write, Plan, OnRequest),
            Outcome::Deny { .. }
        ));
        assert!(matches!(
            decide(Risk::ReadOnly, Plan, OnRequest),
            Outcome::Allow { .. }
        ));
        assert!(matches!(
            decide(Risk::Destructive, BypassPermissions, ApprovalPolicy::Never),
            Outcome::Allow { .. }
        ));
    }

    #[test]
    fn a_session_grant_allows_the_same_subject_only() {
        let granted = Grant::for_call(&call(Risk::Exec));
        let engine = Engine::new();
        let mode = PermissionMode::Default;
        let (policy, sandbox) = (ApprovalPolicy::OnRequest, SandboxMode::WorkspaceWrite);
        let grants = std::slice::from_ref(&granted);
        assert!(matches!(
            engine.decide(&call(Risk::Exec), mode, policy, sandbox, grants),
            Outcome::Allow { .. }
        ));
        let mut other = call(Risk::Exec);
        other.subject = "make install".into();
        assert!(matches!(
            engine.decide(&other, mode, policy, sandbox, grants),
            Outcome::Ask { .. }
        ));
    }
}
