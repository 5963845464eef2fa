//! The path rules a running search gets from the session: an ask rule the
//! person answered for a call's subject opens what the search finds there,
//! an ask rule nobody answered closes it, and bypass mode skips ask rules
//! (never deny rules). Through the real session, tools and engine.

use cox_protocol::config::PermissionsConfig;
use cox_protocol::types::{ApprovalPolicy, Decision, Event, PermissionMode, Submission};
use cox_tests::{Options, Run, run};

fn options(mode: PermissionMode, deny: &[&str]) -> Options {
    let approve = Box::new(|events: &[Event]| match events.last() {
        Some(Event::ApprovalRequired { call_id, .. }) => Some(Submission::Approve {
            call_id: call_id.clone(),
            decision: Decision::Allow,
        }),
        _ => None,
    });
    Options {
        mode,
        approval: ApprovalPolicy::OnRequest,
        trigger: Some(approve),
        files: vec![
            ("private/key.txt".into(), "TOKEN=hunter2\n".into()),
            ("public.txt".into(), "hunter2 is public\n".into()),
        ],
        permissions: Some(PermissionsConfig {
            ask: vec!["Read(private)".into()],
            deny: deny.iter().map(|s| (*s).to_owned()).collect(),
            ..PermissionsConfig::default()
        }),
        ..Options::default()
    }
}

/// (asked, result text) of each call, in order.
fn calls(run: &Run) -> Vec<(bool, String)> {
    let asked: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ApprovalRequired { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    run.events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallDone { call_id, result } => {
                Some((asked.contains(call_id), result.visible.clone()))
            }
            _ => None,
        })
        .collect()
}

const SKIPPED: &str = "[1 path skipped: permission rules deny reading them]";

#[test]
fn an_answered_ask_opens_the_search_and_an_unanswered_one_skips() {
    let run = run("ask_grep", options(PermissionMode::Default, &[]));
    assert_eq!(
        calls(&run),
        [
            (true, "private/key.txt:1:TOKEN=hunter2\n".to_owned()),
            (
                false,
                format!("public.txt:1:hunter2 is public\n{SKIPPED}\n")
            ),
        ]
    );
}

#[test]
fn bypass_mode_skips_ask_rules_but_not_deny_rules() {
    let bypassed = run("ask_grep", options(PermissionMode::BypassPermissions, &[]));
    assert_eq!(
        calls(&bypassed),
        [
            (false, "private/key.txt:1:TOKEN=hunter2\n".to_owned()),
            (
                false,
                "private/key.txt:1:TOKEN=hunter2\npublic.txt:1:hunter2 is public\n".to_owned()
            ),
        ]
    );
    let denied = run(
        "ask_grep",
        options(PermissionMode::BypassPermissions, &["Read(private/*.txt)"]),
    );
    let calls = calls(&denied);
    assert!(!calls[0].1.contains("TOKEN"), "{calls:?}");
    assert_eq!(
        calls[1].1,
        format!("public.txt:1:hunter2 is public\n{SKIPPED}\n")
    );
}
