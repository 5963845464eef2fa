//! `cox-bench sandbox N`: what confining a command costs. `true` runs N
//! times unconfined, under bubblewrap and under the Landlock helper (each
//! that this machine has), and the probe's own time is printed once.

use std::time::{Duration, Instant};

use crate::{ms, tempdir};

pub(crate) fn overhead(n: usize) -> Result<(), String> {
    use cox_protocol::sandbox::{ExecRequest, Sandbox};
    use cox_sandbox::probe::{Mechanism, probe};
    let found = probe();
    println!(
        "probe (once per process): {:.2} ms -> {:?}",
        ms(found.took),
        found.mechanism
    );
    let work = tempdir::Dir::new("sandbox").map_err(|e| e.to_string())?;
    let mut policy = cox_sandbox::SandboxPolicy::new(
        cox_protocol::types::SandboxMode::WorkspaceWrite,
        std::env::current_exe().map_err(|e| e.to_string())?,
    );
    policy.add_writable_root(&work.0);
    let mut runs: Vec<(&str, cox_sandbox::OsSandbox)> = vec![(
        "unconfined",
        cox_sandbox::OsSandbox::new(cox_sandbox::SandboxPolicy {
            mode: cox_protocol::types::SandboxMode::DangerFullAccess,
            ..policy.clone()
        }),
    )];
    if let Mechanism::Bubblewrap { bwrap } = &found.mechanism {
        runs.push((
            "bwrap + seccomp helper",
            cox_sandbox::OsSandbox::with_mechanism(
                policy.clone(),
                Mechanism::Bubblewrap {
                    bwrap: bwrap.clone(),
                },
            ),
        ));
    }
    if found.landlock_abi > 0 {
        runs.push((
            "landlock + seccomp helper",
            cox_sandbox::OsSandbox::with_mechanism(
                policy.clone(),
                Mechanism::Landlock {
                    abi: found.landlock_abi,
                },
            ),
        ));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let mut base = None;
    for (name, sandbox) in &runs {
        let mut walls = Vec::with_capacity(n);
        for _ in 0..n {
            let request = ExecRequest {
                command: "true".into(),
                cwd: work.0.clone(),
                timeout: Duration::from_secs(10),
                env: Vec::new(),
                unconfined: false,
            };
            let start = Instant::now();
            let out = runtime
                .block_on(sandbox.exec(request, cox_protocol::CancelToken::new(), &|_| {}))
                .map_err(|e| e.to_string())?;
            walls.push(start.elapsed());
            if out.exit_code != Some(0) {
                return Err(format!(
                    "{name}: `true` failed: {}",
                    String::from_utf8_lossy(&out.output)
                ));
            }
        }
        walls.sort();
        let median = walls[n / 2];
        let over = base.map_or(String::new(), |b: Duration| {
            format!(", overhead {:.2} ms", ms(median.saturating_sub(b)))
        });
        println!(
            "{name}: {n} runs of `true`, min {:.2} ms, median {:.2} ms{over}",
            ms(walls[0]),
            ms(median)
        );
        base.get_or_insert(median);
    }
    Ok(())
}
