//! [`OsSandbox`]: every command confined by the OS, or not run.
//!
//! The mechanism is the probe's ([`crate::probe`]): bubblewrap with the
//! seccomp helper inside, or, without bwrap, the helper alone applying
//! Landlock and seccomp and supervising the command's tree. Invariants:
//! - `danger-full-access`, or a request a person approved unconfined, runs
//!   as [`crate::ProcessSandbox`] would; nothing else ever does;
//! - when no mechanism works, the answer is [`SandboxError::Unavailable`]
//!   naming what is missing, and nothing runs;
//! - what a mechanism cannot enforce is narrowed, never widened, and said in
//!   the call's notes: Landlock keeps no `.git` read-only inside a writable
//!   root (said once per session), and has no namespace to hold the domain
//!   proxy, so `allowed_domains` becomes no network there;
//! - with a [`CommandHost`], a command whose launch can be handed over is
//!   started by the host, launched exactly as it would be here (see
//!   [`crate::host`]).

use std::ffi::OsString;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use cox_protocol::CancelToken;
use cox_protocol::provider::BoxFuture;
use cox_protocol::sandbox::{Confinement, ExecOutput, ExecRequest, Sandbox, SandboxError};
use cox_protocol::types::SandboxMode;

use crate::helper::{HelperSpec, LandlockSpec, PROXY_SOCKET_INSIDE};
use crate::host::{CommandHost, Handoff};
use crate::policy::{Network, SandboxPolicy};
use crate::probe::{Mechanism, probe};
use crate::proxy::Proxy;
use crate::{Launch, run};

/// Confines every command as `policy` says.
#[derive(Debug)]
pub struct OsSandbox {
    policy: SandboxPolicy,
    /// The mechanism, when not the probe's (benchmarks compare them).
    forced: Option<Mechanism>,
    /// Whether the Landlock limits were already said this session.
    told_limits: AtomicBool,
    /// Where commands start instead of here, when they can.
    host: Host,
    /// This sandbox's number, for its entries in [`RUNNING`].
    id: u64,
}

/// For each confined command still running (or dropped before it ended: a
/// background shell killed with the session), in every sandbox of this
/// process (a session's background shells have one of their own): the
/// sandbox, the command, and the guarded instruction files that did not
/// exist when it started. What it makes there is moved aside when it ends,
/// or when its sandbox goes; what the file tools write is taken off
/// ([`Sandbox::wrote`], told to whichever sandbox the tool has).
static RUNNING: std::sync::Mutex<Vec<(u64, u64, Vec<std::path::PathBuf>)>> =
    std::sync::Mutex::new(Vec::new());

/// Numbers for sandboxes and commands.
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn running() -> std::sync::MutexGuard<'static, Vec<(u64, u64, Vec<std::path::PathBuf>)>> {
    RUNNING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The host commands are handed to, if any.
#[derive(Clone, Default)]
struct Host(Option<Arc<dyn CommandHost>>);

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Host(set)"
        } else {
            "Host(none)"
        })
    }
}

impl OsSandbox {
    #[must_use]
    pub fn new(policy: SandboxPolicy) -> Self {
        Self {
            policy,
            forced: None,
            told_limits: AtomicBool::new(false),
            host: Host::default(),
            id: NEXT.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// A sandbox on `mechanism` whatever the probe found, to measure one
    /// against another. Fails closed like the probe's: `Unavailable` runs
    /// nothing.
    #[must_use]
    pub fn with_mechanism(policy: SandboxPolicy, mechanism: Mechanism) -> Self {
        let mut sandbox = Self::new(policy);
        sandbox.forced = Some(mechanism);
        sandbox
    }

    /// This sandbox, handing the commands it can to `host` (see
    /// [`crate::host`]).
    #[must_use]
    pub fn with_host(mut self, host: Arc<dyn CommandHost>) -> Self {
        self.host = Host(Some(host));
        self
    }

    /// Runs `launch` at the host when there is one and the launch can be
    /// handed over, else here.
    async fn start(
        &self,
        launch: Launch,
        request: ExecRequest,
        cancel: CancelToken,
        on_output: &(dyn Fn(&[u8]) + Send + Sync),
    ) -> Result<ExecOutput, SandboxError> {
        let handoff = self
            .host
            .0
            .as_ref()
            .and_then(|host| Some((host, Handoff::of(&launch, &request, &self.policy.env)?)));
        let Some((host, handoff)) = handoff else {
            return run(launch, &self.policy.env, request, cancel, on_output).await;
        };
        let out = host.run(handoff, cancel).await?;
        let head = out.output.len().min(crate::KEEP_EACH_END);
        if head > 0 {
            on_output(&out.output[..head]);
        }
        Ok(out)
    }

    fn mechanism(&self) -> &Mechanism {
        self.forced.as_ref().unwrap_or(&probe().mechanism)
    }

    /// The policy commands run under.
    #[must_use]
    pub fn policy(&self) -> &SandboxPolicy {
        &self.policy
    }

    /// The program and arguments one confined command runs as, with the
    /// notes to add to its result, or why it cannot be confined.
    fn launch(
        &self,
        line: &str,
        cwd: &std::path::Path,
        proxy: Option<&Proxy>,
    ) -> Result<(Launch, Vec<String>), SandboxError> {
        let current = self.policy.with_present_files();
        let policy = current.as_ref().unwrap_or(&self.policy);
        let command = Launch::shell_words(line);
        match self.mechanism() {
            Mechanism::Unavailable { why } => Err(SandboxError::Unavailable { why: why.clone() }),
            Mechanism::Bubblewrap { bwrap } => {
                policy
                    .prepare()
                    .map_err(|why| SandboxError::Unavailable { why })?;
                let (pinned, read_only, hidden) = crate::bwrap::helper_mounts(policy);
                let spec = HelperSpec {
                    network_off: policy.network == Network::Off,
                    proxy_socket: proxy.map(|_| PROXY_SOCKET_INSIDE.into()),
                    landlock: None,
                    lifeline: None,
                    unix_off: false,
                    pinned,
                    read_only,
                    hidden,
                    host_root: crate::bwrap::delegates_mounts(),
                };
                let spec = serde_json::to_string(&spec).unwrap_or_default();
                let args =
                    crate::bwrap::args(policy, cwd, &spec, proxy.map(Proxy::socket), &command);
                Ok((
                    Launch {
                        program: bwrap.into(),
                        args,
                        lifeline: None,
                    },
                    Vec::new(),
                ))
            }
            Mechanism::Landlock { abi } => {
                let mut notes = Vec::new();
                if !self.told_limits.swap(true, Ordering::Relaxed) {
                    notes.push(format!(
                        "the sandbox runs on Landlock (ABI {abi}) because bubblewrap is missing: \
                         .git, .cox, .claude and $COX_HOME inside a writable root are not protected, /tmp is shared, \
                         Unix sockets are refused (none can be hidden), and allowed_domains means no network; \
                         install bubblewrap for the full sandbox"
                    ));
                }
                let (read, write) =
                    std::io::pipe().map_err(|source| SandboxError::Pipe { source })?;
                let (read, write) = (
                    std::os::fd::OwnedFd::from(read),
                    std::os::fd::OwnedFd::from(write),
                );
                let spec = HelperSpec {
                    network_off: policy.network != Network::On,
                    proxy_socket: None,
                    landlock: Some(LandlockSpec {
                        writable: if policy.writes_roots() {
                            policy.writable_roots.clone()
                        } else {
                            Vec::new()
                        },
                        hidden: policy.hidden.clone(),
                    }),
                    lifeline: Some(std::os::fd::AsRawFd::as_raw_fd(&read)),
                    unix_off: true,
                    pinned: Vec::new(),
                    read_only: Vec::new(),
                    hidden: Vec::new(),
                    host_root: false,
                };
                let spec = serde_json::to_string(&spec).unwrap_or_default();
                let mut args: Vec<OsString> =
                    vec![crate::helper::HELPER_ARG.into(), spec.into(), "--".into()];
                args.extend(command);
                Ok((
                    Launch {
                        program: policy.helper.clone().into(),
                        args,
                        lifeline: Some((read, write)),
                    },
                    notes,
                ))
            }
        }
    }
}

/// How to start a long-lived process (an MCP server): the program, its
/// arguments and the variables to set on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerLaunch {
    pub program: OsString,
    pub args: Vec<OsString>,
    /// The environment the process starts from, in place of cox's own:
    /// cox's variables less its credentials ([`crate::EnvFilter`]).
    pub base: Vec<(OsString, OsString)>,
    /// Set on the process started, on top of `base`; empty when the
    /// sandbox sets them inside instead (bubblewrap's `--setenv`), so none
    /// of them (a `LD_PRELOAD`) reaches the sandbox's own program.
    pub env: Vec<(String, String)>,
}

impl ServerLaunch {
    /// `program` run as it is, from what `filter` lets through of cox's
    /// environment, with `env` on top.
    #[must_use]
    pub fn unconfined(
        program: &[OsString],
        env: &[(String, String)],
        filter: &crate::EnvFilter,
    ) -> Option<Self> {
        let (first, rest) = program.split_first()?;
        Some(Self {
            program: first.clone(),
            args: rest.to_vec(),
            base: filter.child_env(),
            env: env.to_vec(),
        })
    }
}

/// What a long-lived process launched in the sandbox reaches beyond what
/// a command does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerReach {
    /// The network, whole (a server gets no domain proxy: on or off).
    pub network: bool,
    /// Folders it may write besides the workspace (a package launcher's
    /// cache); each must exist.
    pub writable: Vec<std::path::PathBuf>,
    /// Paths under `/tmp` it reads (its script), bound read-only.
    pub visible: Vec<std::path::PathBuf>,
}

impl ServerReach {
    /// The network on or off, and nothing more.
    #[must_use]
    pub fn network(on: bool) -> ServerReach {
        ServerReach {
            network: on,
            ..ServerReach::default()
        }
    }
}

impl OsSandbox {
    /// How a long-lived process (an MCP server speaking on its stdin and
    /// stdout) starts, confined as this sandbox confines commands, with
    /// `env` set inside, and what `reach` adds: the network, folders it
    /// writes, paths under `/tmp` it reads. `danger-full-access` runs it as
    /// it is.
    ///
    /// # Errors
    /// No mechanism confines here, or only Landlock does: a server is not a
    /// command with an end the helper could supervise, so it is refused
    /// rather than confined less.
    pub fn server_launch(
        &self,
        program: &[OsString],
        cwd: &std::path::Path,
        env: &[(String, String)],
        reach: &ServerReach,
    ) -> Result<ServerLaunch, SandboxError> {
        let network = reach.network;
        let Some(unconfined) = ServerLaunch::unconfined(program, env, &self.policy.env) else {
            return Err(SandboxError::Unavailable {
                why: "no program to run".into(),
            });
        };
        if self.policy.mode == SandboxMode::DangerFullAccess {
            return Ok(unconfined);
        }
        match self.mechanism() {
            Mechanism::Unavailable { why } => Err(SandboxError::Unavailable { why: why.clone() }),
            Mechanism::Landlock { .. } => Err(SandboxError::Unavailable {
                why: "MCP servers are confined only with bubblewrap, which is missing".into(),
            }),
            Mechanism::Bubblewrap { bwrap } => {
                self.policy
                    .prepare()
                    .map_err(|why| SandboxError::Unavailable { why })?;
                let mut policy = self.policy.clone();
                policy.network = if network { Network::On } else { Network::Off };
                for dir in reach.writable.iter().filter(|d| d.is_dir()) {
                    if !policy.writable_roots.contains(dir) {
                        policy.writable_roots.push(dir.clone());
                    }
                }
                policy.visible.extend(reach.visible.iter().cloned());
                let (pinned, read_only, hidden) = crate::bwrap::helper_mounts(&policy);
                let spec = HelperSpec {
                    network_off: !network,
                    proxy_socket: None,
                    landlock: None,
                    lifeline: None,
                    unix_off: false,
                    pinned,
                    read_only,
                    hidden,
                    host_root: crate::bwrap::delegates_mounts(),
                };
                let spec = serde_json::to_string(&spec).unwrap_or_default();
                let mut args: Vec<OsString> = Vec::with_capacity(env.len() * 3 + 64);
                for (key, value) in env {
                    args.extend(["--setenv".into(), key.into(), value.into()]);
                }
                args.extend(crate::bwrap::args(&policy, cwd, &spec, None, program));
                Ok(ServerLaunch {
                    program: bwrap.into(),
                    args,
                    base: unconfined.base,
                    env: Vec::new(),
                })
            }
        }
    }
}

impl Drop for OsSandbox {
    /// The session is over: a protected link a background shell or a
    /// server replaced since the last command is put back, so the next
    /// session does not load what was planted.
    fn drop(&mut self) {
        let _ = self.policy.restore_links();
        // What a command that never ended (a background shell killed with
        // the session) made where an instruction file was not is moved
        // aside, so the next session does not load it.
        let left: Vec<Vec<std::path::PathBuf>> = {
            let mut all = running();
            let mine = all
                .iter()
                .filter(|(owner, ..)| *owner == self.id)
                .map(|(.., absent)| absent.clone())
                .collect();
            all.retain(|(owner, ..)| *owner != self.id);
            mine
        };
        for absent in left {
            let _ = self.policy.remove_made(&absent);
        }
    }
}

impl Sandbox for OsSandbox {
    fn name(&self) -> &str {
        "os"
    }

    fn wrote(&self, path: &std::path::Path) {
        for (.., absent) in running().iter_mut() {
            absent.retain(|p| p != path);
        }
    }

    fn confinement(&self) -> Confinement {
        if self.policy.mode == SandboxMode::DangerFullAccess {
            return Confinement::Off;
        }
        match self.mechanism() {
            Mechanism::Bubblewrap { .. } => Confinement::Confined {
                mechanism: "bubblewrap".into(),
            },
            Mechanism::Landlock { abi } => Confinement::Confined {
                mechanism: format!("landlock (ABI {abi})"),
            },
            Mechanism::Unavailable { why } => Confinement::Unavailable { why: why.clone() },
        }
    }

    fn exec<'a>(
        &'a self,
        request: ExecRequest,
        cancel: CancelToken,
        on_output: &'a (dyn Fn(&[u8]) + Send + Sync),
    ) -> BoxFuture<'a, Result<ExecOutput, SandboxError>> {
        Box::pin(async move {
            if request.unconfined || self.policy.mode == SandboxMode::DangerFullAccess {
                return self
                    .start(Launch::shell(&request.command), request, cancel, on_output)
                    .await;
            }
            // A link replaced since the last command ended (by a background
            // shell, a hook, a server) is put back before this one starts.
            let earlier = self.policy.restore_links();
            let absent = self.policy.absent_files();
            let ticket = NEXT.fetch_add(1, Ordering::Relaxed);
            running().push((self.id, ticket, absent.clone()));
            let bwrap = matches!(self.mechanism(), Mechanism::Bubblewrap { .. });
            let proxy = match &self.policy.network {
                Network::Domains(_) if bwrap => Some(Proxy::start(&self.policy).map_err(
                    |source| SandboxError::Spawn {
                        program: "the sandbox's domain proxy".into(),
                        cwd: request.cwd.clone(),
                        source,
                    },
                )?),
                _ => None,
            };
            let (launch, mut notes) =
                self.launch(&request.command, &request.cwd, proxy.as_ref())?;
            let mut out = self.start(launch, request, cancel, on_output).await?;
            // A protected name that is a link cannot be mounted on: if the
            // command replaced it, it is put back now, before anything
            // reads it.
            notes.splice(0..0, earlier);
            notes.extend(self.policy.restore_links());
            // Taken off first: what the file tools wrote meanwhile is off
            // the list, and is not moved.
            let absent = {
                let mut all = running();
                let mine = all
                    .iter()
                    .find(|(_, t, _)| *t == ticket)
                    .map_or_else(Vec::new, |(.., absent)| absent.clone());
                all.retain(|(_, t, _)| *t != ticket);
                mine
            };
            notes.extend(self.policy.remove_made(&absent));
            if let Some(proxy) = &proxy {
                notes.extend(proxy.refused().into_iter().map(|host| {
                    format!("the sandbox refused a connection to {host}: not in [sandbox] allowed_domains")
                }));
            }
            out.notes = notes;
            Ok(out)
        })
    }
}
