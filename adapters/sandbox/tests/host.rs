//! `OsSandbox` with a `CommandHost`: what is handed over is the launch the
//! sandbox built, confinement included, and a launch that needs this
//! process (Landlock's lifeline) or that cannot be confined is never
//! handed over. The host here records what it is given and answers a fixed
//! output; the real host (an editor's terminal over ACP) is tested from
//! outside in `bins/cox/tests/acp_sdk.rs`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cox_protocol::CancelToken;
use cox_protocol::provider::BoxFuture;
use cox_protocol::sandbox::{ExecOutput, ExecRequest, Sandbox, SandboxError};
use cox_protocol::types::SandboxMode;
use cox_sandbox::probe::Mechanism;
use cox_sandbox::{CommandHost, Handoff, OsSandbox, SandboxPolicy};

#[derive(Default)]
struct Recording(Mutex<Vec<Handoff>>);

impl CommandHost for Recording {
    fn run(
        &self,
        handoff: Handoff,
        _cancel: CancelToken,
    ) -> BoxFuture<'_, Result<ExecOutput, SandboxError>> {
        self.0.lock().unwrap().push(handoff);
        Box::pin(async {
            Ok(ExecOutput {
                output: b"from the host\n".to_vec(),
                exit_code: Some(0),
                ..ExecOutput::default()
            })
        })
    }
}

fn policy(mode: SandboxMode) -> SandboxPolicy {
    let mut policy = SandboxPolicy::new(mode, PathBuf::from("/nonexistent/cox-helper"));
    policy.add_writable_root(&std::env::temp_dir());
    policy
}

fn request(unconfined: bool) -> ExecRequest {
    ExecRequest {
        command: "echo hi".into(),
        cwd: std::env::temp_dir(),
        timeout: Duration::from_secs(5),
        env: vec![("A".into(), "1".into())],
        unconfined,
        call_id: Some("call-7".into()),
    }
}

/// Runs `request` in `sandbox` handing commands to a recording host;
/// answers what the host was given, the result, and what `on_output` saw.
fn exec(
    sandbox: OsSandbox,
    request: ExecRequest,
) -> (Vec<Handoff>, Result<ExecOutput, SandboxError>, Vec<u8>) {
    let host = Arc::new(Recording::default());
    let sandbox = sandbox.with_host(host.clone());
    let seen = Mutex::new(Vec::new());
    let on_output = |chunk: &[u8]| seen.lock().unwrap().extend_from_slice(chunk);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(sandbox.exec(request, CancelToken::new(), &on_output));
    let given = host.0.lock().unwrap().clone();
    (given, result, seen.into_inner().unwrap())
}

#[test]
fn a_confined_command_is_handed_over_inside_bubblewrap() {
    let sandbox = OsSandbox::with_mechanism(
        policy(SandboxMode::WorkspaceWrite),
        Mechanism::Bubblewrap {
            bwrap: "/usr/bin/bwrap".into(),
        },
    );
    let (given, result, seen) = exec(sandbox, request(false));
    assert_eq!(given.len(), 1);
    let handoff = &given[0];
    // `env -i` with cox's filtered variables and the request's, then the
    // launch: the host's own environment reaches nothing.
    assert_eq!(handoff.program, "env");
    assert_eq!(handoff.args[0], "-i");
    let bwrap = handoff
        .args
        .iter()
        .position(|a| a == "/usr/bin/bwrap")
        .unwrap();
    let vars = &handoff.args[1..bwrap];
    assert!(vars.iter().all(|v| v.contains('=')), "{vars:?}");
    assert!(vars.iter().any(|v| v == "A=1"), "{vars:?}");
    assert!(
        vars.iter().any(|v| v.starts_with("PATH=")),
        "cox's own variables: {vars:?}"
    );
    assert!(handoff.args.iter().any(|a| a == "--unshare-pid"));
    assert!(handoff.args.iter().any(|a| a == "/nonexistent/cox-helper"));
    assert_eq!(
        handoff.args[handoff.args.len() - 3..],
        ["bash", "-c", "echo hi"]
    );
    assert!(handoff.env.is_empty());
    assert_eq!(handoff.call_id.as_deref(), Some("call-7"));
    assert_eq!(result.unwrap().output, b"from the host\n");
    assert_eq!(seen, b"from the host\n", "the output reaches the stream");
}

#[test]
fn an_unconfined_command_is_handed_over_as_bash_alone() {
    for (mode, unconfined) in [
        (SandboxMode::DangerFullAccess, false),
        (SandboxMode::WorkspaceWrite, true),
    ] {
        let sandbox = OsSandbox::with_mechanism(
            policy(mode),
            Mechanism::Bubblewrap {
                bwrap: "/usr/bin/bwrap".into(),
            },
        );
        let (given, _, _) = exec(sandbox, request(unconfined));
        assert_eq!(given.len(), 1);
        assert_eq!(given[0].program, "env");
        let args = &given[0].args;
        assert_eq!(args[args.len() - 3..], ["bash", "-c", "echo hi"]);
        assert!(!args.iter().any(|a| a.contains("bwrap")), "{args:?}");
    }
}

#[test]
fn what_cannot_be_handed_over_confined_is_not_handed_over() {
    let landlock = OsSandbox::with_mechanism(
        policy(SandboxMode::WorkspaceWrite),
        Mechanism::Landlock { abi: 3 },
    );
    let (given, _, _) = exec(landlock, request(false));
    assert!(
        given.is_empty(),
        "Landlock's lifeline stays in cox: {given:?}"
    );
    let nothing = OsSandbox::with_mechanism(
        policy(SandboxMode::WorkspaceWrite),
        Mechanism::Unavailable {
            why: "no bwrap".into(),
        },
    );
    let (given, result, _) = exec(nothing, request(false));
    assert!(given.is_empty());
    assert!(matches!(result, Err(SandboxError::Unavailable { .. })));
}
