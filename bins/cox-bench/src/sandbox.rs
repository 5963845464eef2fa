//! `cox-bench sandbox N`: what confining a command costs. `true` runs N
//! times unconfined, under bubblewrap and under the Landlock helper (each
//! that this machine has), and under bubblewrap with 10 and 100 deny rules
//! enforced as mounts (half `Edit` rules as read-only binds, half `Read`
//! rules as hidden paths), in interleaved rounds; the probe's own time is
//! printed once.

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
    let helper = cox_sandbox::helper::program();
    println!("helper: {}", helper.display());
    let mut policy =
        cox_sandbox::SandboxPolicy::new(cox_protocol::types::SandboxMode::WorkspaceWrite, helper);
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
        for (name, rules) in [
            ("bwrap, 10 deny rules as mounts", 10),
            ("bwrap, 100 deny rules as mounts", 100),
        ] {
            let mut with_rules = policy.clone();
            for i in 0..rules {
                let path = work.0.join(format!("rule-{rules}-{i}"));
                std::fs::create_dir_all(&path).map_err(|e| e.to_string())?;
                if i % 2 == 0 {
                    with_rules.add_read_only(&path);
                } else {
                    with_rules.add_hidden(&path);
                }
            }
            runs.push((
                name,
                cox_sandbox::OsSandbox::with_mechanism(
                    with_rules,
                    Mechanism::Bubblewrap {
                        bwrap: bwrap.clone(),
                    },
                ),
            ));
        }
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
    // Rounds interleave the mechanisms, so a burst of noise from the
    // machine lands on all of them alike instead of on one.
    let mut walls: Vec<Vec<Duration>> = vec![Vec::with_capacity(n); runs.len()];
    for _ in 0..n {
        for ((name, sandbox), walls) in runs.iter().zip(&mut walls) {
            let request = ExecRequest {
                command: "true".into(),
                cwd: work.0.clone(),
                timeout: Duration::from_secs(10),
                env: Vec::new(),
                unconfined: false,
                call_id: None,
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
    }
    let mut base = None;
    for ((name, _), walls) in runs.iter().zip(&mut walls) {
        walls.sort();
        let median = walls[n / 2];
        let over = base.map_or(String::new(), |(b, b_min): (Duration, Duration)| {
            format!(
                ", overhead {:.2} ms (median), {:.2} ms (min)",
                ms(median.saturating_sub(b)),
                ms(walls[0].saturating_sub(b_min))
            )
        });
        println!(
            "{name}: {n} runs of `true`, min {:.2} ms, median {:.2} ms{over}",
            ms(walls[0]),
            ms(median)
        );
        base.get_or_insert((median, walls[0]));
    }
    Ok(())
}
