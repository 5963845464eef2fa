//! Calls that write several files (`apply_patch`, whose `writes` names
//! every path its patch adds, updates, deletes or moves to): each path is
//! decided as an `edit` of that path would be, and the strictest answer
//! wins. Adversarial: the denied path is never the first one.

use std::path::Path;

use cox_permission::{Engine, Grant, Outcome};
use cox_protocol::CallId;
use cox_protocol::config::PermissionsConfig;
use cox_protocol::types::{ApprovalPolicy, PermissionMode, Risk, SandboxMode, ToolCall};
use serde_json::json;

const HOME: &str = "/home/alice";
const CWD: &str = "/repo";

const MODES: [PermissionMode; 5] = [
    PermissionMode::Default,
    PermissionMode::AcceptEdits,
    PermissionMode::Auto,
    PermissionMode::Plan,
    PermissionMode::BypassPermissions,
];

fn engine(allow: &[&str], ask: &[&str], deny: &[&str]) -> Engine {
    let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect();
    let config = PermissionsConfig {
        allow: own(allow),
        ask: own(ask),
        deny: own(deny),
        mode: None,
    };
    Engine::compile(&config, Some(Path::new(HOME)), Path::new(CWD)).unwrap()
}

/// An `apply_patch` call as the tool classifies it: the first path is the
/// subject, every path is in `writes`.
fn patch(paths: &[&str]) -> ToolCall {
    ToolCall {
        id: CallId::from("p"),
        name: "apply_patch".into(),
        input: json!({"patch": "…"}),
        risk: Risk::Write,
        subject: paths[0].into(),
        segments: None,
        writes: paths.iter().map(|p| (*p).to_owned()).collect(),
    }
}

fn edit(path: &str) -> ToolCall {
    ToolCall {
        id: CallId::from("e"),
        name: "edit".into(),
        input: json!({"path": path}),
        risk: Risk::Write,
        subject: path.into(),
        segments: None,
        writes: vec![path.into()],
    }
}

fn decide_with(
    e: &Engine,
    call: &ToolCall,
    mode: PermissionMode,
    policy: ApprovalPolicy,
    grants: &[Grant],
) -> Outcome {
    e.decide(call, mode, policy, SandboxMode::WorkspaceWrite, grants)
}

fn decide(e: &Engine, call: &ToolCall, mode: PermissionMode) -> Outcome {
    decide_with(e, call, mode, ApprovalPolicy::OnRequest, &[])
}

#[test]
fn a_patch_whose_second_path_is_denied_is_denied_in_every_mode() {
    let e = engine(&["Edit"], &[], &["Edit(secret/**)"]);
    let call = patch(&[
        "/repo/src/lib.rs",
        "/repo/secret/key.txt",
        "/repo/README.md",
    ]);
    for mode in MODES {
        let got = decide(&e, &call, mode);
        if mode == PermissionMode::Plan {
            assert_eq!(got.verdict(), "deny");
            continue;
        }
        assert_eq!(
            got,
            Outcome::Deny {
                reason: "denied by rule Edit(secret/**) (user config config): the call writes \
                         /repo/secret/key.txt"
                    .into()
            },
            "{mode}"
        );
    }
}

#[test]
fn a_move_into_a_denied_path_is_denied() {
    let e = engine(&[], &[], &["Edit(/repo/vendor/**)"]);
    // Update src/a.rs, Move to: vendor/a.rs.
    let call = patch(&["/repo/src/a.rs", "/repo/vendor/a.rs"]);
    let got = decide(&e, &call, PermissionMode::AcceptEdits);
    assert!(
        matches!(&got, Outcome::Deny { reason } if reason.ends_with("writes /repo/vendor/a.rs")),
        "{got:?}"
    );
    // The built-in secret folders hold for every path too.
    let call = patch(&[
        "/repo/a.rs",
        "/repo/b.rs",
        "/home/alice/.ssh/authorized_keys",
    ]);
    assert_eq!(
        decide(&e, &call, PermissionMode::BypassPermissions).verdict(),
        "deny"
    );
}

#[test]
fn each_path_is_decided_exactly_as_an_edit_of_it() {
    // The third path lies outside the workspace (the tool leaves a path it
    // cannot confine as written).
    let outside = ["/etc/hosts", "../elsewhere/x.txt"];
    let configs = [
        engine(&[], &[], &[]),
        engine(&[], &[], &["Edit(/etc/**)"]),
        engine(&[], &["Edit(/etc/**)"], &[]),
        engine(&["Edit(/repo/**)"], &[], &[]),
        engine(&["Edit"], &["Edit(/etc/**)"], &[]),
        engine(&["ApplyPatch(/repo/**)"], &[], &[]),
    ];
    for e in &configs {
        for third in outside {
            for mode in MODES {
                for policy in [ApprovalPolicy::OnRequest, ApprovalPolicy::Never] {
                    let alone = decide_with(e, &edit(third), mode, policy, &[]).verdict();
                    let inside = ["/repo/a.rs", "/repo/b.rs"]
                        .map(|p| decide_with(e, &patch(&[p]), mode, policy, &[]).verdict());
                    let call = patch(&["/repo/a.rs", "/repo/b.rs", third]);
                    let got = decide_with(e, &call, mode, policy, &[]).verdict();
                    // The strictest of the three single-path answers.
                    let rank = |v: &str| ["allow", "ask", "deny"].iter().position(|r| *r == v);
                    let want = [alone, inside[0], inside[1]]
                        .into_iter()
                        .max_by_key(|v| rank(v))
                        .unwrap();
                    assert_eq!(
                        got,
                        want,
                        "{third} in {mode} ({policy:?}) under {:?}",
                        e.rules()
                            .map(|(l, r)| format!("{l} {}", r.text))
                            .collect::<Vec<_>>()
                    );
                }
            }
        }
    }
    // And the outside path is what the answer names.
    let e = engine(&[], &["Edit(/etc/**)"], &[]);
    let got = decide(
        &e,
        &patch(&["/repo/a.rs", "/repo/b.rs", "/etc/hosts"]),
        PermissionMode::AcceptEdits,
    );
    assert_eq!(
        got,
        Outcome::Ask {
            reason: "rule Edit(/etc/**) (user config config) asks: the call writes /etc/hosts"
                .into()
        }
    );
}

#[test]
fn accept_edits_allows_a_patch_inside_the_workspace_as_it_allows_edit() {
    let e = engine(&[], &[], &[]);
    let call = patch(&["/repo/a.rs", "/repo/new/b.rs", "/repo/old.rs"]);
    for mode in [PermissionMode::AcceptEdits, PermissionMode::Auto] {
        assert_eq!(
            decide(&e, &call, mode),
            decide(&e, &edit("/repo/a.rs"), mode)
        );
        assert_eq!(decide(&e, &call, mode).verdict(), "allow");
    }
    assert_eq!(decide(&e, &call, PermissionMode::Default).verdict(), "ask");
    assert_eq!(decide(&e, &call, PermissionMode::Plan).verdict(), "deny");
    // With nobody to ask, the ask is a deny.
    let never = decide_with(
        &e,
        &call,
        PermissionMode::Default,
        ApprovalPolicy::Never,
        &[],
    );
    assert_eq!(never.verdict(), "deny");
}

#[test]
fn a_patch_that_did_not_parse_is_one_write_on_no_path() {
    let e = engine(&[], &[], &["Edit(/repo/**)"]);
    let mut call = patch(&["apply_patch"]);
    call.writes.clear();
    // Path rules cannot match it; the risk default decides, and the tool
    // refuses the patch when it runs.
    assert_eq!(
        decide(&e, &call, PermissionMode::AcceptEdits).verdict(),
        "allow"
    );
    let bare = engine(&[], &[], &["Edit"]);
    assert_eq!(
        decide(&bare, &call, PermissionMode::AcceptEdits).verdict(),
        "deny"
    );
}

#[test]
fn a_session_grant_covers_the_paths_approved_and_no_other() {
    let e = engine(&[], &[], &[]);
    let approved = patch(&["/repo/a.rs", "/repo/b.rs"]);
    let grants = Grant::for_call(&approved);
    assert_eq!(
        grants,
        [
            Grant::Call {
                tool: "apply_patch".into(),
                subject: "/repo/a.rs".into()
            },
            Grant::Call {
                tool: "apply_patch".into(),
                subject: "/repo/b.rs".into()
            },
        ]
    );
    let go = |call: &ToolCall| {
        decide_with(
            &e,
            call,
            PermissionMode::Default,
            ApprovalPolicy::OnRequest,
            &grants,
        )
        .verdict()
    };
    assert_eq!(go(&approved), "allow");
    assert_eq!(go(&patch(&["/repo/b.rs"])), "allow");
    assert_eq!(go(&patch(&["/repo/b.rs", "/repo/a.rs"])), "allow");
    assert_eq!(go(&patch(&["/repo/a.rs", "/repo/c.rs"])), "ask");
    // A grant is for the tool it was given to, as for edit.
    assert_eq!(go(&edit("/repo/a.rs")), "ask");
    // An edit's grant is unchanged: its tool and its one path.
    assert_eq!(
        Grant::for_call(&edit("/repo/a.rs")),
        [Grant::Call {
            tool: "edit".into(),
            subject: "/repo/a.rs".into()
        }]
    );
}

#[test]
fn explain_lists_each_path_with_its_rule() {
    let e = engine(&["Edit(/repo/src/**)"], &[], &["Edit(secret/**)"]);
    let call = patch(&["/repo/src/a.rs", "/repo/secret/k", "/repo/b.rs"]);
    let got = e.explain(&call);
    assert_eq!(
        got,
        vec![
            (
                "/repo/src/a.rs".to_owned(),
                "allow",
                Some("Edit(/repo/src/**)".to_owned())
            ),
            (
                "/repo/secret/k".to_owned(),
                "deny",
                Some("Edit(secret/**)".to_owned())
            ),
            ("/repo/b.rs".to_owned(), "none", None),
        ]
    );
}
