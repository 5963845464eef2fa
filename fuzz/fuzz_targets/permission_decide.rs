//! The permission engine on arbitrary rules and shell lines: compiling
//! never panics, deciding never panics, and adding a deny rule never turns
//! a deny into anything else.
//!
//! Input: the first line is a shell command line; every further line is a
//! rule, whose first byte picks its list (`a` allow, `k` ask, anything else
//! deny). The last rule is also tried as an extra deny rule.
#![no_main]

use std::path::Path;

use cox_permission::{Engine, Grant};
use cox_protocol::CallId;
use cox_protocol::config::PermissionsConfig;
use cox_protocol::types::{ApprovalPolicy, PermissionMode, Risk, SandboxMode, ToolCall};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut lines = text.lines();
    let Some(line) = lines.next() else { return };
    let mut config = PermissionsConfig::default();
    let mut last = None;
    for rule in lines.take(16) {
        let Some(kind) = rule.chars().next() else { continue };
        let body = rule[kind.len_utf8()..].to_owned();
        last = Some(body.clone());
        match kind {
            'a' => config.allow.push(body),
            'k' => config.ask.push(body),
            _ => config.deny.push(body),
        }
    }
    let (home, cwd) = (Path::new("/home/f"), Path::new("/repo"));
    let Ok(engine) = Engine::compile(&config, Some(home), cwd) else { return };
    let call = ToolCall {
        id: CallId::from("f"),
        name: "bash".into(),
        input: serde_json::json!({"command": line}),
        risk: Risk::Exec,
        subject: line.to_owned(),
        segments: None,
        writes: Vec::new(),
    };
    let grants = Grant::for_call(&call);
    let mut more = config.clone();
    if let Some(extra) = last {
        more.deny.push(extra);
    }
    let Ok(stricter) = Engine::compile(&more, Some(home), cwd) else { return };
    for mode in PermissionMode::ALL {
        for grants in [&[][..], &grants[..]] {
            let before = engine.decide(&call, mode, ApprovalPolicy::OnRequest, SandboxMode::WorkspaceWrite, grants);
            let after = stricter.decide(&call, mode, ApprovalPolicy::OnRequest, SandboxMode::WorkspaceWrite, grants);
            if before.verdict() == "deny" {
                assert_eq!(after.verdict(), "deny", "a deny rule turned a deny into {after:?}");
            }
        }
    }
});
