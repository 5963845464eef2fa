//! How fast the engine decides: a simple read, and a five-command shell
//! line against a realistic rule set (the built-in denies plus a dozen
//! user rules). Run: `cargo bench -p cox-permission --bench decide`.

use std::hint::black_box;
use std::path::Path;

use cox_permission::Engine;
use cox_protocol::CallId;
use cox_protocol::config::PermissionsConfig;
use cox_protocol::types::{ApprovalPolicy, PermissionMode, Risk, SandboxMode, ToolCall};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;

fn engine() -> Engine {
    let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect();
    let config = PermissionsConfig {
        allow: own(&[
            "Bash(git status:*)",
            "Bash(git diff:*)",
            "Bash(git log:*)",
            "Bash(cargo test:*)",
            "Bash(cargo build:*)",
            "Bash(ls:*)",
            "Bash(grep:*)",
            "Read(~/notes/**)",
        ]),
        ask: own(&[
            "Bash(git push:*)",
            "Bash(git commit:*)",
            "Bash(npm publish:*)",
        ]),
        deny: own(&[
            "Bash(rm -rf:*)",
            "Bash(curl:*)",
            "Read(**/.env)",
            "Edit(**/.env)",
        ]),
        mode: None,
    };
    Engine::compile(&config, Some(Path::new("/home/alice")), Path::new("/repo")).unwrap()
}

fn bench(c: &mut Criterion) {
    let engine = engine();
    let read = ToolCall {
        id: CallId::from("r"),
        name: "read".into(),
        input: json!({"path": "/repo/src/lib.rs"}),
        risk: Risk::ReadOnly,
        subject: "/repo/src/lib.rs".into(),
        segments: None,
        writes: Vec::new(),
    };
    let commands = [
        "git status --short",
        "git diff --stat",
        "cargo build -p cox-core",
        "cargo test -p cox-core",
        "grep -rn TODO src",
    ];
    let line = commands.join(" && ");
    let bash = ToolCall {
        id: CallId::from("b"),
        name: "bash".into(),
        input: json!({"command": line}),
        risk: Risk::Exec,
        // As the bash tool attaches it: commands, and the paths they name.
        segments: Some(cox_bash::segments(&cox_bash::split(&line))),
        subject: line,
        writes: Vec::new(),
    };
    let mut group = c.benchmark_group("decide");
    group.throughput(Throughput::Elements(1));
    for (name, call) in [("read", &read), ("bash_five_commands", &bash)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                black_box(engine.decide(
                    black_box(call),
                    PermissionMode::Default,
                    ApprovalPolicy::OnRequest,
                    SandboxMode::WorkspaceWrite,
                    &[],
                ))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
