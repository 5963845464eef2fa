//! The sandbox rows of `cox doctor`: the mechanism the probe found, the
//! host settings a confined command could reach (probed from inside, with
//! the uid commands have inside and outside), Landlock's ABI, user
//! namespaces and the proxy.

use super::*;

/// The sandbox a session here would use: the mechanism the probe found,
/// Landlock's ABI, user namespaces, the proxy, and `true` run through it
/// exactly as a tool call would run.
pub(super) fn sandbox(home: Option<&CoxHome>) -> Vec<Row> {
    use cox_protocol::sandbox::Confinement;
    use cox_sandbox::probe::{Mechanism, probe};
    let found = probe();
    let ms = found.took.as_secs_f64() * 1000.0;
    let landlock = if found.landlock_abi > 0 {
        Row::new(
            Status::Ok,
            "landlock",
            format!("ABI {}", found.landlock_abi),
        )
    } else {
        Row::new(
            Status::Warn,
            "landlock",
            "not offered by this kernel (or COX_SANDBOX_LANDLOCK=off)",
        )
    };
    let userns = match (&found.bwrap, &found.bwrap_failure) {
        (Some(bwrap), None) => Row::new(
            Status::Ok,
            "user namespaces",
            format!("work ({} starts; probe {ms:.1} ms)", bwrap.display()),
        ),
        (Some(bwrap), Some(why)) => Row::new(
            Status::Warn,
            "user namespaces",
            format!("{} cannot start: {why}", bwrap.display()),
        ),
        (None, _) => Row::new(
            Status::Warn,
            "user namespaces",
            "not tried: bwrap is not on PATH (apt install bubblewrap)",
        ),
    };
    let cwd = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .unwrap_or_else(|_| std::env::temp_dir());
    let settings = home
        .and_then(|home| {
            load_permissions(
                &home.root().join("config.toml"),
                crate::env::home_dir().as_deref(),
                &cwd,
                &PermissionFlags::default(),
                crate::config::trust::Trust::Db(&home.db_path()),
            )
            .ok()
        })
        .map(|p| (p.sandbox, p.engine));
    // A config that does not load has its own row; the defaults are shown.
    let Some((settings, engine)) = settings.or_else(|| {
        let built_in =
            cox_permission::Engine::compile_layers(&[], crate::env::home_dir().as_deref(), &cwd);
        built_in
            .ok()
            .map(|e| (crate::config::SandboxSettings::default(), e))
    }) else {
        return vec![Row::new(
            Status::Fail,
            "sandbox",
            "cannot compile the built-in rules",
        )];
    };
    let mut policy = crate::sandbox::policy(
        &settings,
        None,
        &cox_protocol::tool::Workspace::single(cwd.clone()),
        crate::env::home_dir().as_deref(),
        home.map_or_else(|| std::path::Path::new("/nonexistent"), |h| h.root()),
        &engine,
    );
    // The probes write nothing: no mount point is made in the folder doctor
    // runs in.
    policy.protected.clear();
    let proxy = match &policy.network {
        cox_sandbox::Network::Domains(list) => Row::new(
            Status::Ok,
            "sandbox proxy",
            format!(
                "admits {} (and their subdomains){}",
                list.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                if matches!(found.mechanism, Mechanism::Bubblewrap { .. }) {
                    ""
                } else {
                    "; without bwrap it cannot run, so commands get no network"
                }
            ),
        ),
        cox_sandbox::Network::On => Row::new(
            Status::Ok,
            "sandbox proxy",
            "not used: [sandbox] network = true",
        ),
        cox_sandbox::Network::Off => Row::new(
            Status::Ok,
            "sandbox proxy",
            "not used: no [sandbox] allowed_domains, commands get no network",
        ),
    };
    let sandbox = cox_sandbox::OsSandbox::new(policy);
    let confinement = sandbox.confinement();
    let kind = crate::sandbox::describe(sandbox.policy(), &confinement);
    let (main, host) = if let Confinement::Unavailable { .. } = confinement {
        let main = Row::new(
            Status::Fail,
            "sandbox",
            format!("{kind}; every command will ask to run unsandboxed (denied headless)"),
        );
        (main, None)
    } else if let Confinement::Off = confinement {
        (run_true(&sandbox, &cwd, &kind), None)
    } else {
        (
            run_true(&sandbox, &cwd, &kind),
            Some(host_settings(&sandbox, &cwd)),
        )
    };
    let mut rows = vec![main];
    rows.extend(host);
    rows.extend([landlock, userns, proxy]);
    rows
}

/// The host's kernel settings a confined command could reach, probed from
/// inside: which uid the command runs as, and whether any of them is
/// writable there (`test -w` asks the kernel, read-only mounts included).
fn host_settings(sandbox: &cox_sandbox::OsSandbox, cwd: &std::path::Path) -> Row {
    const NAME: &str = "host settings";
    // Opening for appending changes nothing, and asks the kernel (and
    // Landlock, which `test -w` does not) whether a write would pass.
    const PROBE: &str = "id -u; while read -r k v; do [ \"$k\" = CapEff: ] && echo \"caps $v\"; \
        done < /proc/self/status; while read -r a b c; do echo \"map $a $b $c\"; \
        done < /proc/self/uid_map; for f in /proc/sys/kernel/core_pattern \
        /proc/sys/kernel/printk_ratelimit /proc/sys/vm/swappiness /proc/sysrq-trigger \
        /proc/irq/default_smp_affinity /sys/kernel/uevent_helper \
        /sys/kernel/mm/transparent_hugepage/enabled; do \
        [ -e \"$f\" ] && ( exec 3>>\"$f\" ) 2>/dev/null && echo \"writable $f\"; done; true";
    let out = match run_confined(sandbox, cwd, PROBE) {
        Ok(out) => out,
        Err(why) => return Row::new(Status::Fail, NAME, format!("cannot probe: {why}")),
    };
    let text = String::from_utf8_lossy(&out.output);
    let uid = text.lines().next().unwrap_or("?").trim().to_owned();
    let writable: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("writable "))
        .collect();
    let caps = text
        .lines()
        .find_map(|l| l.strip_prefix("caps "))
        .map(str::trim)
        .unwrap_or("?");
    let no_caps = caps.trim_start_matches('0').is_empty();
    let held = if no_caps {
        "with no capabilities".to_owned()
    } else {
        format!("holding capabilities {caps}")
    };
    // Run by another user, bubblewrap nests namespaces, and the map names
    // an id of the outer one; the command is that user outside anyway.
    let me = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").map(|m| m.uid())
    };
    let outside = match me {
        Ok(0) => outside_uid(&text, &uid),
        Ok(me) => Some(me.to_string()),
        Err(_) => None,
    };
    let who = match outside.as_deref() {
        Some("0") => format!(
            "commands run as uid {uid} inside and root outside, {held} (this kernel or a file \
             system of the sandbox refused an idmapped mount, so they keep root's uid)"
        ),
        Some(out) if out == uid => format!("commands run as uid {uid} inside and outside, {held}"),
        Some(out) => format!("commands run as uid {uid} inside, uid {out} outside, {held}"),
        None => format!("commands run as uid {uid} inside, {held}"),
    };
    let status = if outside.as_deref() == Some("0") {
        Status::Warn
    } else {
        Status::Ok
    };
    if writable.is_empty() && no_caps {
        Row::new(
            status,
            NAME,
            format!(
                "out of reach: /proc/sys, /sys and /proc's other settings are read-only; {who}"
            ),
        )
    } else {
        Row::new(
            Status::Fail,
            NAME,
            format!(
                "{} writable from a confined command; {who}",
                writable.join(", ")
            ),
        )
    }
}

/// The host uid that `uid` stands for, from the `map IN OUT COUNT` lines
/// of the probe (`/proc/self/uid_map` inside).
pub(super) fn outside_uid(probe: &str, uid: &str) -> Option<String> {
    let uid: u64 = uid.parse().ok()?;
    probe.lines().find_map(|line| {
        let mut words = line.strip_prefix("map ")?.split_whitespace();
        let mut next = || words.next()?.parse::<u64>().ok();
        let (inside, out, count) = (next()?, next()?, next()?);
        (inside..inside.saturating_add(count))
            .contains(&uid)
            .then(|| (out + (uid - inside)).to_string())
    })
}

/// Runs `line` through `sandbox` as a tool call would, for a probe.
fn run_confined(
    sandbox: &cox_sandbox::OsSandbox,
    cwd: &std::path::Path,
    line: &str,
) -> Result<cox_protocol::sandbox::ExecOutput, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| format!("cannot start the async runtime: {err}"))?;
    let request = ExecRequest {
        command: line.to_owned(),
        cwd: cwd.to_path_buf(),
        timeout: Duration::from_secs(10),
        env: Vec::new(),
        unconfined: false,
        call_id: None,
    };
    runtime
        .block_on(sandbox.exec(request, cox_protocol::CancelToken::new(), &|_| {}))
        .map_err(|err| err.to_string())
}

/// Runs `true` through `sandbox` and says how that went.
fn run_true(sandbox: &cox_sandbox::OsSandbox, cwd: &std::path::Path, kind: &str) -> Row {
    const NAME: &str = "sandbox";
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            return Row::new(
                Status::Fail,
                NAME,
                format!("cannot start the async runtime: {err}"),
            );
        }
    };
    let request = ExecRequest {
        command: "true".to_owned(),
        cwd: cwd.to_path_buf(),
        timeout: Duration::from_secs(10),
        env: Vec::new(),
        unconfined: false,
        call_id: None,
    };
    let started = std::time::Instant::now();
    let ran = runtime.block_on(sandbox.exec(request, cox_protocol::CancelToken::new(), &|_| {}));
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    match ran {
        Ok(out) if out.exit_code == Some(0) => Row::new(
            Status::Ok,
            NAME,
            format!("{kind}: `true` ran confined in {ms:.1} ms"),
        ),
        Ok(out) => Row::new(
            Status::Fail,
            NAME,
            format!(
                "{kind}: `true` ended with {}: {}",
                out.exit_code.map_or_else(
                    || format!("signal {}", out.signal.unwrap_or_default()),
                    |c| format!("exit code {c}")
                ),
                String::from_utf8_lossy(&out.output).trim()
            ),
        ),
        Err(err) => Row::new(Status::Fail, NAME, format!("{kind}: {err}")),
    }
}
