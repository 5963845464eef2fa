//! The OS sandbox from outside: `cox sandbox -- CMD` and `cox run`, with
//! real bubblewrap, Landlock and seccomp, as root and as an unprivileged
//! user (uid 65534 through `setpriv`). HOME and COX_HOME are temporary.
//!
//! A test that needs what this machine lacks (bwrap, Landlock, setpriv)
//! says so and skips.

mod common;

use common::text;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// Who runs cox: root (these machines' default) or nobody.
#[derive(Clone, Copy, Debug, PartialEq)]
enum As {
    Root,
    Nobody,
}

const BOTH: [As; 2] = [As::Root, As::Nobody];

/// A fake home with a key, a COX_HOME, a git work folder, and a folder
/// outside every root (not under /tmp, which the sandbox makes private).
struct Lab {
    home: TempDir,
    cox_home: TempDir,
    work: TempDir,
    outside: TempDir,
    /// A PATH without bwrap, for the fallbacks.
    no_bwrap: TempDir,
}

fn open_to_all(path: &Path) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).unwrap();
}

impl Lab {
    fn new() -> Self {
        let lab = Self {
            home: tempfile::tempdir().unwrap(),
            cox_home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
            outside: tempfile::tempdir_in("/var/tmp").unwrap(),
            no_bwrap: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir(lab.home.path().join(".ssh")).unwrap();
        std::fs::write(lab.home.path().join(".ssh/id_ed25519"), "PRIVATE KEY\n").unwrap();
        std::fs::create_dir(lab.work.path().join(".git")).unwrap();
        std::fs::write(lab.work.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        for dir in [
            lab.home.path().to_path_buf(),
            lab.home.path().join(".ssh"),
            lab.cox_home.path().to_path_buf(),
            lab.work.path().to_path_buf(),
            lab.work.path().join(".git"),
            lab.outside.path().to_path_buf(),
        ] {
            open_to_all(&dir);
        }
        open_to_all(&lab.home.path().join(".ssh/id_ed25519"));
        for tool in [
            "bash", "cat", "echo", "ls", "sleep", "setsid", "touch", "true", "umount", "mount",
            "head", "sed", "id", "grep", "cut", "sort", "env", "python3", "chmod", "ln",
        ] {
            if let Some(found) = which(tool) {
                std::os::unix::fs::symlink(found, lab.no_bwrap.path().join(tool)).unwrap();
            }
        }
        lab
    }

    fn cox(&self, who: As) -> Command {
        self.cox_at(who, Path::new(env!("CARGO_BIN_EXE_cox")))
    }

    /// [`Lab::cox`] with another copy of the binary.
    fn cox_at(&self, who: As, cox: &Path) -> Command {
        let mut cmd = match who {
            As::Root => Command::new(cox),
            As::Nobody => {
                let mut c = Command::new("/usr/bin/setpriv");
                c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                    .arg(cox);
                c
            }
        };
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("COX_") {
                cmd.env_remove(key);
            }
        }
        cmd.env("HOME", self.home.path())
            .env("COX_HOME", self.cox_home.path())
            .current_dir(self.work.path());
        cmd
    }

    /// `cox sandbox [--mode M] -- bash -c SCRIPT`.
    fn sandbox(&self, who: As, mode: Option<&str>, script: &str) -> Output {
        let mut cmd = self.cox(who);
        cmd.arg("sandbox");
        if let Some(mode) = mode {
            cmd.args(["--mode", mode]);
        }
        cmd.args(["--", "bash", "-c", script]).output().unwrap()
    }

    fn config(&self, text: &str) {
        let path = self.cox_home.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        open_to_all(&path);
    }

    /// `cox sandbox -- bash -c SCRIPT` with `home` as `$HOME` and a
    /// writable root (as when cox runs in it).
    fn in_home(&self, who: As, home: &Path, script: &str) -> Output {
        self.cox(who)
            .env("HOME", home)
            .args(["sandbox", "--add-dir"])
            .arg(home)
            .args(["--", "bash", "-c", script])
            .output()
            .unwrap()
    }

    fn key(&self) -> PathBuf {
        self.home.path().join(".ssh/id_ed25519")
    }
}

fn which(tool: &str) -> Option<PathBuf> {
    ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
        .iter()
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.exists())
}

/// Whether this machine can run the test at all, saying why not.
fn can_run(who: As) -> bool {
    if which("bwrap").is_none() {
        eprintln!("skipped: bwrap is not installed (apt install bubblewrap)");
        return false;
    }
    if who == As::Nobody {
        // SAFETY: geteuid has no preconditions.
        #[allow(unsafe_code)]
        let root = unsafe { libc::geteuid() } == 0;
        if !root || which("setpriv").is_none() {
            eprintln!("skipped: running as another user needs root and setpriv");
            return false;
        }
        let cox = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_cox"))
            .arg("--version")
            .output();
        if !cox.is_ok_and(|o| o.status.success()) {
            eprintln!("skipped: uid 65534 cannot run the cox binary from this build folder");
            return false;
        }
    }
    true
}

#[test]
fn writes_land_inside_and_nowhere_else() {
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        let outside = lab.outside.path().join("escaped");
        let script = format!(
            "echo ok > inside.txt; echo x > {out}; echo x > .git/config; echo x > \"$COX_HOME/x\"; \
             echo x > /etc/cox-test",
            out = outside.display()
        );
        let out = lab.sandbox(who, None, &script);
        let all = text(&out);
        assert_eq!(
            std::fs::read_to_string(lab.work.path().join("inside.txt")).unwrap(),
            "ok\n",
            "{who:?}: {all}"
        );
        assert!(!outside.exists(), "{who:?}: {all}");
        assert!(
            !lab.work.path().join(".git/config").exists(),
            "{who:?}: {all}"
        );
        assert!(!lab.cox_home.path().join("x").exists(), "{who:?}: {all}");
        assert!(!Path::new("/etc/cox-test").exists(), "{who:?}: {all}");
        assert!(all.contains("Read-only file system"), "{who:?}: {all}");
        // read-only mode: not even the workspace.
        let out = lab.sandbox(who, Some("read-only"), "echo x > ro.txt");
        assert!(
            !lab.work.path().join("ro.txt").exists(),
            "{who:?}: {}",
            text(&out)
        );
        assert_ne!(out.status.code(), Some(0));
    }
}

#[test]
fn the_secret_folders_are_unreadable_in_every_mode_but_danger() {
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        let key = lab.key();
        let home = lab.home.path().display().to_string();
        for mode in ["read-only", "workspace-write"] {
            for spelling in [
                key.display().to_string(),
                "~/.ssh/id_ed25519".to_owned(),
                format!("{home}/./.ssh/../.ssh/id_ed25519"),
                format!("/proc/self/root{}", key.display()),
            ] {
                let script = format!("cat {spelling}");
                let out = lab.sandbox(who, Some(mode), &script);
                assert!(
                    !String::from_utf8_lossy(&out.stdout).contains("PRIVATE KEY"),
                    "{who:?} {mode} {spelling}: {}",
                    text(&out)
                );
            }
        }
        let out = lab.sandbox(
            who,
            Some("danger-full-access"),
            &format!("cat {}", key.display()),
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("PRIVATE KEY"),
            "danger-full-access reads as the user does: {}",
            text(&out)
        );
    }
}

#[test]
fn a_read_deny_rule_hides_its_folder_too() {
    if !can_run(As::Root) {
        return;
    }
    let lab = Lab::new();
    let private = lab.outside.path().join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::write(private.join("notes"), "CONFIDENTIAL\n").unwrap();
    lab.config(&format!(
        "[permissions]\ndeny = [\"Read(/{}/**)\"]\n",
        private.display()
    ));
    let out = lab.sandbox(
        As::Root,
        None,
        &format!("cat {}/notes; ls {}", private.display(), private.display()),
    );
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("CONFIDENTIAL"),
        "{}",
        text(&out)
    );
}

#[test]
fn mounts_cannot_be_undone_from_inside() {
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        let out = lab.sandbox(
            who,
            None,
            "umount /tmp; umount -l /; mount -o remount,rw /; touch /usr/cox-test; echo done",
        );
        let all = text(&out);
        assert!(all.contains("done"), "{all}");
        assert!(!Path::new("/usr/cox-test").exists(), "{who:?}: {all}");
    }
}

/// A script that tries a same-value write to each host setting a root
/// command could reach, printing `WROTE <file>` for each that took; the
/// value written is the one already there, so a hole changes nothing.
const HOST_SETTINGS_PROBE: &str = r#"
for f in /proc/sys/kernel/printk_ratelimit /proc/sys/kernel/core_pattern /proc/sys/vm/swappiness \
         /proc/sys/net/ipv4/ip_forward /proc/irq/default_smp_affinity /proc/sysrq-trigger \
         /sys/kernel/uevent_helper /sys/kernel/mm/transparent_hugepage/enabled; do
  [ -e "$f" ] || continue
  v=$(cat "$f" 2>/dev/null | head -c 200) || continue
  if [ "$f" = /proc/sysrq-trigger ]; then v=; fi
  if [ "$f" = /sys/kernel/mm/transparent_hugepage/enabled ]; then v=$(sed 's/.*\[\(.*\)\].*/\1/' "$f"); fi
  if printf '%s\n' "$v" 2>/dev/null > "$f"; then echo "WROTE $f"; else echo "refused $f"; fi
done
echo "uid $(id -u)"
"#;

#[test]
fn host_kernel_settings_cannot_be_written_as_root_or_not() {
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        let before = std::fs::read_to_string("/proc/sys/kernel/printk_ratelimit").unwrap();
        let out = lab.sandbox(who, None, HOST_SETTINGS_PROBE);
        let all = text(&out);
        assert!(!all.contains("WROTE"), "{who:?}: {all}");
        assert!(
            all.contains("refused /proc/sys/kernel/printk_ratelimit"),
            "{who:?}: {all}"
        );
        assert!(
            all.contains("refused /proc/sys/vm/swappiness"),
            "{who:?}: {all}"
        );
        assert_eq!(
            std::fs::read_to_string("/proc/sys/kernel/printk_ratelimit").unwrap(),
            before
        );
        // A confined process still sees its own processes through /proc.
        let out = lab.sandbox(
            who,
            None,
            "cat /proc/self/status | grep -c ^Pid; ls /proc/1/",
        );
        assert!(out.status.success(), "{who:?}: {}", text(&out));
        // Without bwrap, Landlock keeps them out of reach too.
        if crate_landlock_abi() > 0 {
            let out = lab
                .cox(who)
                .env("PATH", lab.no_bwrap.path())
                .args(["sandbox", "--", "bash", "-c", HOST_SETTINGS_PROBE])
                .output()
                .unwrap();
            let all = text(&out);
            assert!(all.contains("Landlock"), "{who:?}: {all}");
            assert!(!all.contains("WROTE"), "{who:?}: {all}");
            assert!(
                all.contains("refused /proc/sys/vm/swappiness"),
                "{who:?}: {all}"
            );
        }
    }
}

/// Started by root, a command is root only inside its own user namespace:
/// outside it is uid 65534, which owns no host setting and no host
/// process, while the workspace, root's home, `/tmp` and `/dev/shm` still
/// work as they did, and what it writes is owned by root on disk.
#[test]
fn root_started_commands_run_as_an_unprivileged_uid_outside() {
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        let script = "while read -r a b c; do echo \"map $a $b $c\"; done < /proc/self/uid_map; \
            echo \"uid $(id -u)\"; echo x > made.txt && echo wrote; \
            touch /tmp/t && echo tmp-ok; mkdir /dev/shm/q && echo shm-ok; \
            mkdir sub && cd sub && git init -q && git status --short >/dev/null && echo git-ok";
        let out = lab.sandbox(who, None, script);
        let all = text(&out);
        for said in ["wrote", "tmp-ok", "shm-ok"] {
            assert!(all.contains(said), "{who:?}: {said}: {all}");
        }
        if which("git").is_some() {
            assert!(all.contains("git-ok"), "{who:?}: {all}");
        }
        let made = std::fs::metadata(lab.work.path().join("made.txt")).unwrap();
        match who {
            As::Root => {
                assert!(all.contains("map 0 65534 1"), "{all}");
                assert!(all.contains("uid 0"), "{all}");
                assert_eq!(made.uid(), 0, "written as root on disk");
                // Root's own home (mode 0700 here) stays readable: the
                // toolchains live there in a container.
                let root_home = Path::new("/root");
                if root_home.is_dir() {
                    let out = lab.sandbox(who, None, "ls /root >/dev/null && echo root-home-ok");
                    assert!(text(&out).contains("root-home-ok"), "{}", text(&out));
                }
            }
            As::Nobody => {
                assert!(all.contains("uid 65534"), "{all}");
                assert_eq!(made.uid(), 65534);
            }
        }
    }
}

#[test]
fn settings_folders_stay_read_only_whether_or_not_they_exist() {
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        let w = lab.work.path();
        std::fs::write(w.join("AGENTS.md"), "be kind\n").unwrap();
        open_to_all(&w.join("AGENTS.md"));
        // A workspace that is no repository yet: no `.git` either.
        std::fs::remove_dir_all(w.join(".git")).unwrap();
        let out = lab.sandbox(
            who,
            None,
            "mkdir -p .claude/commands; echo '{}' > .claude/settings.json; \
             mkdir -p .cox/skills; echo x > .cox/config.toml; rm -rf .claude .cox; \
             mv .claude moved; ln -s elsewhere .claude; \
             mkdir .git/hooks; echo x > .git/HEAD; git init -q 2>&1; \
             echo evil > AGENTS.md; echo '{}' > .mcp.json; echo ok > done.txt",
        );
        let all = text(&out);
        assert_eq!(
            std::fs::read_to_string(w.join("done.txt")).unwrap(),
            "ok\n",
            "{who:?}: {all}"
        );
        for folder in [".claude", ".cox", ".git"] {
            let entries: Vec<_> = std::fs::read_dir(w.join(folder))
                .unwrap_or_else(|e| panic!("{who:?} {folder}: {e}: {all}"))
                .collect();
            assert!(
                entries.is_empty(),
                "{who:?}: {folder} holds {entries:?}: {all}"
            );
        }
        assert!(!w.join("moved").exists(), "{who:?}: {all}");
        assert_eq!(
            std::fs::read_to_string(w.join("AGENTS.md")).unwrap(),
            "be kind\n"
        );
        assert!(all.contains("Read-only file system"), "{who:?}: {all}");
        // The empty folders are invisible to git, and git still works.
        let git = Command::new("git")
            .args(["status", "--porcelain"])
            .current_dir(w)
            .output()
            .unwrap();
        assert!(!String::from_utf8_lossy(&git.stdout).contains(".claude"));
        // Inside a repository, a subfolder gets no `.git`: git's search
        // for the repository must not stop there.
        let sub = lab.outside.path().join("repo/sub");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir(lab.outside.path().join("repo/.git")).unwrap();
        open_to_all(&sub);
        let out = lab
            .cox(who)
            .current_dir(&sub)
            .args(["sandbox", "--", "bash", "-c", "echo x > .claude/x; true"])
            .output()
            .unwrap();
        assert!(!sub.join(".git").exists(), "{who:?}: {}", text(&out));
        assert!(sub.join(".claude").is_dir(), "{who:?}: {}", text(&out));
        assert!(!sub.join(".claude/x").exists(), "{who:?}: {}", text(&out));
        // read-only mode makes nothing.
        let ro = Lab::new();
        std::fs::remove_dir_all(ro.work.path().join(".git")).unwrap();
        let out = ro.sandbox(who, Some("read-only"), "true");
        assert!(out.status.success(), "{}", text(&out));
        assert!(!ro.work.path().join(".claude").exists());
    }
}

/// Variables that hand over a credential, as a container or CI runner has
/// them, beside an ordinary one.
const CREDENTIAL_VARS: [(&str, &str); 6] = [
    ("ANTHROPIC_API_KEY", "sk-ant-test"),
    ("OPENAI_API_KEY", "sk-test"),
    ("GITHUB_TOKEN", "ghp_test"),
    ("AWS_SECRET_ACCESS_KEY", "aws-test"),
    ("MY_LLM", "custom-key"),
    ("KEEP_ME", "plain"),
];

#[test]
fn no_credential_reaches_a_command_unless_the_config_names_it() {
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        lab.config("[providers.openai]\napi_key_env = \"MY_LLM\"\n");
        let env = |lab: &Lab| {
            let mut cmd = lab.cox(who);
            cmd.envs(CREDENTIAL_VARS).args([
                "sandbox",
                "--",
                "bash",
                "-c",
                "env | cut -d= -f1 | sort",
            ]);
            text(&cmd.output().unwrap())
        };
        let seen = env(&lab);
        assert!(seen.lines().any(|l| l == "KEEP_ME"), "{who:?}: {seen}");
        for (name, _) in &CREDENTIAL_VARS[..5] {
            assert!(!seen.lines().any(|l| l == *name), "{who:?} {name}: {seen}");
        }
        lab.config(
            "[providers.openai]\napi_key_env = \"MY_LLM\"\n[sandbox]\nenv = [\"GITHUB_TOKEN\", \"AWS_*\"]\n",
        );
        let seen = env(&lab);
        for name in ["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "KEEP_ME"] {
            assert!(seen.lines().any(|l| l == name), "{who:?} {name}: {seen}");
        }
        assert!(!seen.lines().any(|l| l == "ANTHROPIC_API_KEY"), "{seen}");
        // A bad name is refused with the file and line.
        lab.config("[sandbox]\nenv = [\"NOT A NAME\"]\n");
        let out = lab.sandbox(who, None, "true");
        assert!(
            text(&out).contains("config.toml:2: [sandbox] env"),
            "{}",
            text(&out)
        );
    }
}

#[test]
fn credential_files_and_agent_sockets_are_out_of_reach() {
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        let home = lab.home.path();
        let files = [
            ".git-credentials",
            ".claude.json",
            ".config/gh/hosts.yml",
            ".docker/config.json",
            ".cargo/credentials.toml",
        ];
        for rel in files {
            let path = home.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "CONFIDENTIAL\n").unwrap();
            open_to_all(&path);
            open_to_all(path.parent().unwrap());
        }
        // A login token cox keeps in its own home.
        std::fs::create_dir_all(lab.cox_home.path().join("mcp-auth")).unwrap();
        std::fs::write(
            lab.cox_home.path().join("mcp-auth/srv.json"),
            "CONFIDENTIAL\n",
        )
        .unwrap();
        open_to_all(&lab.cox_home.path().join("mcp-auth"));
        open_to_all(&lab.cox_home.path().join("mcp-auth/srv.json"));
        // An ssh agent listening outside the workspace (not under /tmp,
        // which the sandbox makes private anyway).
        let socket = lab.outside.path().join("agent.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        open_to_all(&socket);
        listener.set_nonblocking(true).unwrap();
        let script = format!(
            "for f in {files} $COX_HOME/mcp-auth/srv.json; do cat $f; done; \
             python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"{sock}\"); print(\"CONNECTED\")'; \
             echo \"agent=${{SSH_AUTH_SOCK:-none}}\"",
            files = files.map(|f| format!("~/{f}")).join(" "),
            sock = socket.display(),
        );
        let run = |lab: &Lab| {
            text(
                &lab.cox(who)
                    .env("SSH_AUTH_SOCK", &socket)
                    .args(["sandbox", "--", "bash", "-c", &script])
                    .output()
                    .unwrap(),
            )
        };
        let all = run(&lab);
        assert!(!all.contains("CONFIDENTIAL"), "{who:?}: {all}");
        assert!(!all.contains("CONNECTED"), "{who:?}: {all}");
        assert!(all.contains("agent=none"), "{who:?}: {all}");
        // Let through by name, the socket and its variable are there.
        lab.config(&format!(
            "[sandbox]\nallow_unix_sockets = [\"{}\"]\n",
            socket.display()
        ));
        let all = run(&lab);
        assert!(all.contains("CONNECTED"), "{who:?}: {all}");
        assert!(
            all.contains(&format!("agent={}", socket.display())),
            "{who:?}: {all}"
        );
        assert!(!all.contains("CONFIDENTIAL"), "{who:?}: {all}");
        drop(listener);
    }
}

/// `cox run` of one bash call `line` as root, in `mode`, headless.
fn run_line(lab: &Lab, line: &str, extra: &[&str]) -> Output {
    let scenario = lab.home.path().join("line.toml");
    std::fs::write(
        &scenario,
        format!(
            "[[turn]]\n[[turn.tool_call]]\nname = \"bash\"\ninput = {{ command = {} }}\n\n[[turn]]\ntext = \"done\"\n",
            serde_json::to_string(line).unwrap()
        ),
    )
    .unwrap();
    lab.cox(As::Root)
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "go", "--output-format", "stream-json"])
        .args(extra)
        .output()
        .unwrap()
}

/// The first tool result's text.
fn result_text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "tool_call_done")
        .map(|v| {
            v["result"]["visible"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .unwrap_or_default()
}

/// A line whose paths are only known when it runs runs confined, under
/// every deny rule the sandbox enforces itself (built-in secrets, a plain
/// `Read` rule hidden, a plain `Edit` rule read-only); a rule the sandbox
/// cannot express (a pattern) makes it ask, headless refused.
#[test]
fn the_sandbox_enforces_the_deny_rules_a_line_cannot_be_checked_against() {
    if !can_run(As::Root) {
        return;
    }
    let lab = Lab::new();
    let w = lab.work.path();
    std::fs::create_dir(w.join("d")).unwrap();
    std::fs::create_dir(w.join("secrets")).unwrap();
    std::fs::write(w.join("secrets/key"), "KEEP\n").unwrap();
    std::fs::write(w.join(".env"), "SECRET=hunter2\n").unwrap();
    lab.config("[permissions]\ndeny = [\"Read(./.env)\", \"Edit(./secrets/**)\"]\n");
    let the_loop = "for i in $(seq 0 99); do echo x > d/f$i.txt; done";
    for mode in ["bypassPermissions", "acceptEdits", "auto"] {
        let _ = std::fs::remove_dir_all(w.join("d"));
        std::fs::create_dir(w.join("d")).unwrap();
        let out = run_line(&lab, the_loop, &["--permission-mode", mode]);
        assert_eq!(out.status.code(), Some(0), "{mode}: {}", text(&out));
        assert_eq!(
            std::fs::read_dir(w.join("d")).unwrap().count(),
            100,
            "{mode}"
        );
    }
    // Run-time paths into what the rules cover: the line runs, and the
    // sandbox refuses what the rules deny.
    let out = run_line(
        &lab,
        "cat $(ls -a | grep env); d=$(ls | grep sec); echo pwned > $d/key; echo pwned > $d/new; echo done",
        &["--permission-mode", "bypassPermissions"],
    );
    let said = result_text(&out);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(said.contains("done"), "{said}");
    assert!(!said.contains("hunter2"), "{said}");
    assert_eq!(
        std::fs::read_to_string(w.join("secrets/key")).unwrap(),
        "KEEP\n"
    );
    assert!(!w.join("secrets/new").exists(), "{said}");
    // A written path is still refused by the engine itself.
    let out = run_line(
        &lab,
        "cat .env",
        &["--permission-mode", "bypassPermissions"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    // A rule the sandbox cannot express: the loop asks, headless refused,
    // and the reason names the rule.
    lab.config("[permissions]\ndeny = [\"Edit(**/*.lock)\"]\n");
    let out = run_line(&lab, the_loop, &["--permission-mode", "bypassPermissions"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let said = result_text(&out);
    assert!(
        said.contains("Edit(**/*.lock)") && said.contains("cannot enforce"),
        "{said}"
    );
    // Unconfined (danger-full-access) nothing enforces the rules: it asks.
    lab.config("");
    let out = run_line(
        &lab,
        the_loop,
        &[
            "--permission-mode",
            "bypassPermissions",
            "--sandbox",
            "danger-full-access",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        result_text(&out).contains("does not run in the sandbox"),
        "{}",
        text(&out)
    );
}

/// Under either mechanism: no capability is left (as root under Landlock
/// an exec would otherwise grant them all back), no set-ID program can be
/// made, and no descriptor cox inherited reaches the command.
#[test]
fn no_capability_no_set_id_program_and_no_inherited_descriptor() {
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        let secret = lab.outside.path().join("held-open.txt");
        std::fs::write(&secret, "CONFIDENTIAL\n").unwrap();
        open_to_all(&secret);
        let script = "while read -r k v; do [ \"$k\" = CapEff: ] && echo \"caps=$v\"; done < /proc/self/status; \
             cat /bin/true > t; chmod 4755 t 2>&1; chmod g+s t 2>&1; ls -l t; cat <&7; echo end";
        for no_bwrap in [false, true] {
            if no_bwrap && crate_landlock_abi() == 0 {
                continue;
            }
            let file = std::fs::File::open(&secret).unwrap();
            let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
            let mut cmd = lab.cox(who);
            if no_bwrap {
                cmd.env("PATH", lab.no_bwrap.path());
            }
            // The descriptor is open in cox as 7, as an editor might leave it.
            #[allow(unsafe_code)]
            // SAFETY: dup2 onto a free descriptor number in the child.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
                    if libc::dup2(fd, 7) == -1 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            let out = cmd
                .args(["sandbox", "--", "bash", "-c", script])
                .output()
                .unwrap();
            let all = text(&out);
            let tag = format!("{who:?} landlock={no_bwrap}");
            assert!(all.contains("caps=0000000000000000"), "{tag}: {all}");
            assert!(all.contains("Operation not permitted"), "{tag}: {all}");
            let mode = all
                .lines()
                .find(|l| l.ends_with(" t"))
                .unwrap_or_else(|| panic!("{tag}: {all}"));
            assert!(
                !mode[..10].contains(['s', 'S']),
                "{tag}: a set-ID bit: {all}"
            );
            assert!(!all.contains("CONFIDENTIAL"), "{tag}: {all}");
            assert!(all.contains("end"), "{tag}: {all}");
            drop(file);
        }
    }
}

/// Under Landlock, which cannot hide a file a link leads to once it is
/// granted: links and second names made by an earlier command do not
/// reach a hidden file, and no Unix socket (an agent, a multiplexer) can be
/// reached through the shared /tmp.
#[test]
fn landlock_keeps_links_to_hidden_files_and_unix_sockets_out_of_reach() {
    if crate_landlock_abi() == 0 {
        eprintln!("skipped: this kernel offers no Landlock");
        return;
    }
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        std::fs::write(lab.work.path().join(".env"), "SECRET=hunter2\n").unwrap();
        open_to_all(&lab.work.path().join(".env"));
        lab.config("[permissions]\ndeny = [\"Read(./.env)\"]\n");
        let socket = lab.outside.path().join("mux.sock");
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        open_to_all(&socket);
        listener.set_nonblocking(true).unwrap();
        let sandboxed = |script: &str| {
            text(
                &lab.cox(who)
                    .env("PATH", lab.no_bwrap.path())
                    .args(["sandbox", "--", "bash", "-c", script])
                    .output()
                    .unwrap(),
            )
        };
        let key = lab.key();
        sandboxed(&format!(
            "ln -s {} keylink; ln -s {} sshlink; ln .env env-again",
            key.display(),
            key.parent().unwrap().display()
        ));
        let all = sandboxed(&format!(
            "cat keylink sshlink/id_ed25519 env-again .env; \
             /usr/bin/python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"{}\"); print(\"CONNECTED\")' 2>&1; echo end",
            socket.display()
        ));
        assert!(all.contains("end"), "{who:?}: {all}");
        assert!(!all.contains("PRIVATE KEY"), "{who:?}: {all}");
        assert!(!all.contains("hunter2"), "{who:?}: {all}");
        assert!(!all.contains("CONNECTED"), "{who:?}: {all}");
        drop(listener);
    }
}

/// A protected name that is a link (`.claude -> claude-real`, `AGENTS.md ->
/// CLAUDE.md`) cannot be mounted on; a command that replaces it finds it
/// put back when it ends, with what it made moved aside and said.
#[test]
fn a_protected_link_a_command_replaces_is_put_back() {
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        let w = lab.work.path();
        std::fs::create_dir(w.join("claude-real")).unwrap();
        std::fs::write(w.join("CLAUDE.md"), "be kind\n").unwrap();
        std::os::unix::fs::symlink("claude-real", w.join(".claude")).unwrap();
        std::os::unix::fs::symlink("CLAUDE.md", w.join("AGENTS.md")).unwrap();
        for path in ["claude-real", "CLAUDE.md"] {
            open_to_all(&w.join(path));
        }
        let out = lab.sandbox(
            who,
            None,
            "rm .claude && mkdir .claude && echo '{}' > .claude/settings.json; \
             rm AGENTS.md && echo EVIL > AGENTS.md; echo x > claude-real/x; echo done",
        );
        let all = text(&out);
        assert!(all.contains("done"), "{who:?}: {all}");
        assert_eq!(
            std::fs::read_link(w.join(".claude")).unwrap(),
            Path::new("claude-real"),
            "{who:?}: {all}"
        );
        assert_eq!(
            std::fs::read_link(w.join("AGENTS.md")).unwrap(),
            Path::new("CLAUDE.md")
        );
        assert_eq!(
            std::fs::read_to_string(w.join("AGENTS.md")).unwrap(),
            "be kind\n"
        );
        assert!(
            !w.join("claude-real/x").exists(),
            "the target is read-only: {all}"
        );
        assert!(all.contains("put the link back"), "{who:?}: {all}");
        let aside: Vec<String> = std::fs::read_dir(w)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".cox-planted-"))
            .collect();
        assert_eq!(aside.len(), 2, "{who:?}: {aside:?} {all}");
    }
}

/// A checked-out submodule's `.git` file (which git follows, and whose
/// configuration it obeys, at the person's next `git status`) stays as it
/// is.
#[test]
fn a_submodules_git_file_cannot_be_repointed() {
    if !can_run(As::Root) {
        return;
    }
    let lab = Lab::new();
    let w = lab.work.path();
    let git = |dir: &Path, args: &[&str]| {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "protocol.file.allow=always",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out));
    };
    let sub = lab.outside.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    git(&sub, &["init", "-q"]);
    git(&sub, &["commit", "-q", "--allow-empty", "-m", "s"]);
    std::fs::remove_dir_all(w.join(".git")).unwrap();
    git(w, &["init", "-q"]);
    git(
        w,
        &["submodule", "add", "-q", &sub.display().to_string(), "lib"],
    );
    let before = std::fs::read_to_string(w.join("lib/.git")).unwrap();
    let out = lab.sandbox(
        As::Root,
        None,
        "printf 'gitdir: ../.evil\\n' > lib/.git; echo done",
    );
    assert!(
        text(&out).contains("Read-only file system"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(w.join("lib/.git")).unwrap(), before);
}

/// A read-only or hidden path inside the workspace cannot be carried
/// away by renaming a folder above it (and a fresh one written in its
/// place): the folders on the way are mount points, which do not move.
#[test]
fn renaming_a_folder_above_a_covered_path_does_not_uncover_it() {
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        let w = lab.work.path();
        std::fs::create_dir_all(w.join("conf/deep")).unwrap();
        std::fs::write(w.join("conf/deep/prod.yaml"), "keep\n").unwrap();
        std::fs::create_dir(w.join("sub")).unwrap();
        std::fs::write(w.join("sub/secret"), "CONFIDENTIAL\n").unwrap();
        for p in [
            "conf",
            "conf/deep",
            "conf/deep/prod.yaml",
            "sub",
            "sub/secret",
        ] {
            open_to_all(&w.join(p));
        }
        lab.config(
            "[permissions]\ndeny = [\"Edit(./conf/deep/prod.yaml)\", \"Read(./sub/secret)\"]\n",
        );
        let out = lab.sandbox(
            who,
            None,
            "mv conf conf_old 2>&1; mv conf/deep conf/d2 2>&1; mv sub x 2>&1; cat x/secret sub/secret; \
             echo evil > conf/deep/prod.yaml; echo made > conf/new.txt; echo done",
        );
        let all = text(&out);
        assert!(all.contains("done"), "{who:?}: {all}");
        assert!(all.contains("Device or resource busy"), "{who:?}: {all}");
        assert!(!all.contains("CONFIDENTIAL"), "{who:?}: {all}");
        assert_eq!(
            std::fs::read_to_string(w.join("conf/deep/prod.yaml")).unwrap(),
            "keep\n"
        );
        assert!(
            w.join("conf/new.txt").exists(),
            "{who:?}: the folders stay writable: {all}"
        );
        assert!(
            !w.join("conf_old").exists() && !w.join("x").exists(),
            "{who:?}: {all}"
        );
    }
}

#[test]
fn symlinks_and_proc_paths_do_not_escape() {
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        let out_dir = lab.outside.path();
        let script = format!(
            "ln -s {o} link; echo x > link/via-link; echo x > /proc/self/root{o}/via-root; \
             cd {o} 2>/dev/null; echo x > /proc/self/cwd/via-cwd; echo x > /proc/$$/cwd/via-pid; \
             ls /proc | grep -c '^[0-9]'",
            o = out_dir.display()
        );
        let out = lab.sandbox(who, None, &script);
        for name in ["via-link", "via-root", "via-cwd", "via-pid"] {
            assert!(
                !out_dir.join(name).exists(),
                "{who:?} {name}: {}",
                text(&out)
            );
        }
    }
}

/// A loopback server that answers one line to each connection.
fn server() -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let Ok(mut stream) = stream else { return };
            let _ = stream.set_nodelay(true);
            let mut buf = [0u8; 4096];
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = stream.read(&mut buf);
            let body = "hello from the test server\n";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, handle)
}

#[test]
fn the_network_is_off_unless_the_config_opens_it() {
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        let (port, _server) = server();
        let probe = format!(
            "exec 3<>/dev/tcp/127.0.0.1/{port} && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3"
        );
        let out = lab.sandbox(who, None, &probe);
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("hello from"),
            "{}",
            text(&out)
        );
        assert_ne!(out.status.code(), Some(0));
        // An AF_INET socket is refused by the seccomp filter itself.
        let out = lab.sandbox(
            who,
            None,
            "/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_INET)'",
        );
        assert!(
            text(&out).contains("Operation not permitted"),
            "{}",
            text(&out)
        );
        lab.config("[sandbox]\nnetwork = true\n");
        let out = lab.sandbox(who, None, &probe);
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("hello from"),
            "{}",
            text(&out)
        );
    }
}

#[test]
fn allowed_domains_pass_the_proxy_and_others_are_refused() {
    if which("curl").is_none() {
        eprintln!("skipped: curl is not installed");
        return;
    }
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        let (port, _server) = server();
        lab.config("[sandbox]\nallowed_domains = [\"localhost\"]\n");
        let out = lab.sandbox(who, None, &format!("curl -sS http://localhost:{port}/"));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("hello from"),
            "{who:?}: {}",
            text(&out)
        );
        let out = lab.sandbox(who, None, &format!("curl -sS http://127.0.0.1:{port}/"));
        let all = text(&out);
        assert!(!all.contains("hello from"), "{all}");
        assert!(all.contains("not in [sandbox] allowed_domains"), "{all}");
        assert!(
            all.contains(&format!("refused a connection to 127.0.0.1:{port}")),
            "{all}"
        );
        // HTTPS goes through CONNECT, refused the same way before any TLS.
        let out = lab.sandbox(who, None, "curl -sS https://example.com/");
        assert_ne!(out.status.code(), Some(0), "{}", text(&out));
        assert!(
            text(&out).contains("refused a connection to example.com:443"),
            "{}",
            text(&out)
        );
    }
}

fn running(tag: &str) -> Vec<String> {
    let out = Command::new("pgrep").args(["-f", tag]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

fn wait_until(what: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if what() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn nothing_outlives_the_command_or_a_killed_cox() {
    for (i, fallback) in [false, true].into_iter().enumerate() {
        let lab = Lab::new();
        if !can_run(As::Root) {
            return;
        }
        let path = if fallback {
            lab.no_bwrap.path().display().to_string()
        } else {
            std::env::var("PATH").unwrap()
        };
        // The command ends: its background jobs go with it.
        let tag = format!("30{i}1");
        let out = lab
            .cox(As::Root)
            .env("PATH", &path)
            .args(["sandbox", "--", "bash", "-c"])
            .arg(format!("sleep {tag}1 & setsid sleep {tag}2 & echo started"))
            .output()
            .unwrap();
        assert!(text(&out).contains("started"), "{}", text(&out));
        assert!(
            wait_until(|| running(&format!("sleep {tag}")).is_empty()),
            "fallback {fallback}: left {:?}",
            running(&format!("sleep {tag}"))
        );
        // cox is killed with SIGKILL mid-command: the command goes too.
        let tag = format!("30{i}2");
        let mut cox = lab
            .cox(As::Root)
            .env("PATH", &path)
            .args(["sandbox", "--", "bash", "-c"])
            .arg(format!("sleep {tag}1 & setsid sleep {tag}2 & sleep {tag}3"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        assert!(wait_until(|| running(&format!("sleep {tag}")).len() >= 3));
        cox.kill().unwrap();
        cox.wait().unwrap();
        assert!(
            wait_until(|| running(&format!("sleep {tag}")).is_empty()),
            "fallback {fallback}: left {:?}",
            running(&format!("sleep {tag}"))
        );
    }
}

#[test]
fn without_bwrap_landlock_confines_and_says_what_it_cannot() {
    if crate_landlock_abi() == 0 {
        eprintln!("skipped: this kernel offers no Landlock");
        return;
    }
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        let outside = lab.outside.path().join("escaped");
        let out = lab
            .cox(who)
            .env("PATH", lab.no_bwrap.path())
            .args(["sandbox", "--", "bash", "-c"])
            .arg(format!(
                "echo ok > inside.txt; echo x > {}; cat {}",
                outside.display(),
                lab.key().display()
            ))
            .output()
            .unwrap();
        let all = text(&out);
        assert!(all.contains("Landlock"), "{all}");
        assert!(
            all.contains(".git"),
            "the notice says .git is not protected: {all}"
        );
        assert!(lab.work.path().join("inside.txt").exists(), "{all}");
        assert!(!outside.exists(), "{all}");
        assert!(!all.contains("PRIVATE KEY"), "{all}");
    }
}

#[allow(unsafe_code)]
fn crate_landlock_abi() -> i64 {
    // SAFETY: the version query of landlock_create_ruleset takes no pointer.
    unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    }
}

#[test]
fn with_nothing_to_confine_it_nothing_runs() {
    let lab = Lab::new();
    let out = lab
        .cox(As::Root)
        .env("PATH", lab.no_bwrap.path())
        .env("COX_SANDBOX_LANDLOCK", "off")
        .args(["sandbox", "--", "bash", "-c", "echo ran > ran.txt"])
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("not run"), "{all}");
    assert!(all.contains("apt install bubblewrap"), "{all}");
    assert!(!lab.work.path().join("ran.txt").exists());
    // A session asks to run unconfined; headless nobody can say yes.
    let out = lab
        .cox(As::Root)
        .env("PATH", lab.no_bwrap.path())
        .env("COX_SANDBOX_LANDLOCK", "off")
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", common::scenario("rm_line"))
        .args([
            "run",
            "-p",
            "go",
            "--output-format",
            "stream-json",
            "--allow",
            "Bash",
        ])
        .output()
        .unwrap();
    let all = text(&out);
    assert!(all.contains("cannot confine commands here"), "{all}");
    assert!(all.contains("this session cannot ask"), "{all}");
}

#[test]
fn unsandboxed_always_asks_and_headless_refuses_it() {
    let lab = Lab::new();
    let run = |extra: &[&str]| {
        lab.cox(As::Root)
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", common::scenario("unsandboxed"))
            .args([
                "run",
                "-p",
                "go",
                "--output-format",
                "stream-json",
                "--allow",
                "Bash(echo:*)",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&["--permission-mode", "bypassPermissions"]);
    let all = text(&out);
    assert!(all.contains("asks to run outside the OS sandbox"), "{all}");
    assert!(all.contains("this session cannot ask"), "{all}");
    assert!(!all.contains("ran-outside\\n"), "{all}");
    // danger-full-access confines nothing, so there is nothing to lift.
    let out = run(&["--sandbox", "danger-full-access"]);
    assert!(text(&out).contains("ran-outside"), "{}", text(&out));
}

#[test]
fn bad_sandbox_settings_name_the_file_and_line() {
    let lab = Lab::new();
    let config = lab.cox_home.path().join("config.toml");
    for (body, line, says) in [
        (
            "[sandbox]\nwritable_roots = [\"/no/such/dir\"]\n",
            2,
            "is not a folder that exists",
        ),
        (
            "[sandbox]\n\nallowed_domains = [\"https://x.com\"]\n",
            3,
            "without a scheme",
        ),
        ("[sandbox]\nmode = \"wide-open\"\n", 2, "unknown variant"),
        (
            "[sandbox]\nnetwork = true\nallowed_domains = [\"x.com\"]\n",
            3,
            "keep one",
        ),
        ("[sandbox]\nnetowrk = true\n", 2, "network"),
        (
            "[sandbox]\nallow_unix_sockets = [\"run/agent.sock\"]\n",
            2,
            "must be an absolute path",
        ),
        (
            "[sandbox]\n\nenv = [\"GH-TOKEN\"]\n",
            3,
            "is not a variable name",
        ),
    ] {
        lab.config(body);
        let out = lab.sandbox(As::Root, None, "echo ran");
        let all = text(&out);
        assert_eq!(out.status.code(), Some(1), "{all}");
        assert!(
            all.contains(&format!("{}:{line}:", config.display())),
            "{body}: {all}"
        );
        assert!(all.contains(says), "{body}: {all}");
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("ran"),
            "{all}"
        );
    }
    let out = lab
        .cox(As::Root)
        .args(["sandbox", "--mode", "open", "--", "true"])
        .output()
        .unwrap();
    assert!(
        text(&out).contains("unknown sandbox mode `open`"),
        "{}",
        text(&out)
    );
}

#[test]
fn doctor_names_the_mechanism_landlock_and_the_proxy() {
    if !can_run(As::Root) {
        return;
    }
    let lab = Lab::new();
    lab.config("[sandbox]\nallowed_domains = [\"example.com\"]\n");
    let out = lab.cox(As::Root).arg("doctor").output().unwrap();
    let all = text(&out);
    assert!(all.contains("workspace-write via bubblewrap"), "{all}");
    assert!(all.contains("`true` ran confined"), "{all}");
    assert!(all.contains("user namespaces  work"), "{all}");
    assert!(
        all.contains("host settings    out of reach: /proc/sys, /sys"),
        "{all}"
    );
    assert!(
        all.contains("commands run as uid 0 inside, uid 65534 outside, with no capabilities"),
        "{all}"
    );
    assert!(all.contains("admits example.com"), "{all}");
    if crate_landlock_abi() > 0 {
        assert!(
            all.contains(&format!("ABI {}", crate_landlock_abi())),
            "{all}"
        );
    }
}

#[test]
fn an_added_dir_is_writable_and_its_git_is_not() {
    if !can_run(As::Root) {
        return;
    }
    let lab = Lab::new();
    let extra = lab.outside.path().join("extra");
    std::fs::create_dir_all(extra.join(".git")).unwrap();
    let script = format!(
        "echo ok > {e}/added.txt; echo x > {e}/.git/config",
        e = extra.display()
    );
    let out = lab
        .cox(As::Root)
        .args(["sandbox", "--add-dir"])
        .arg(&extra)
        .args(["--", "bash", "-c", &script])
        .output()
        .unwrap();
    let all = text(&out);
    assert!(extra.join("added.txt").exists(), "{all}");
    assert!(!extra.join(".git/config").exists(), "{all}");
    // Without --add-dir the same folder is outside.
    let out = lab.sandbox(
        As::Root,
        None,
        &format!("echo ok > {}/again.txt", extra.display()),
    );
    assert!(!extra.join("again.txt").exists(), "{}", text(&out));
}

#[test]
fn a_refused_connection_is_a_notice_and_in_the_result() {
    if which("curl").is_none() || !can_run(As::Root) {
        eprintln!("skipped: needs curl and bwrap");
        return;
    }
    let lab = Lab::new();
    lab.config("[sandbox]\nallowed_domains = [\"localhost\"]\n");
    let out = lab
        .cox(As::Root)
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", common::scenario("proxy_refused"))
        .args(["run", "-p", "go", "--output-format", "stream-json"])
        .args(["--allow", "Bash(curl:*)"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let notice = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "notice");
    let notice = notice.unwrap_or_else(|| panic!("no notice: {}", text(&out)));
    assert!(
        notice
            .to_string()
            .contains("refused a connection to example.com:443"),
        "{notice}"
    );
    assert!(
        stdout.contains("not in [sandbox] allowed_domains"),
        "the model reads it too: {}",
        text(&out)
    );
}

#[test]
fn config_writable_roots_and_mode_take_effect_and_a_project_only_narrows() {
    if !can_run(As::Root) {
        return;
    }
    let lab = Lab::new();
    let extra = lab.outside.path().join("scratch");
    std::fs::create_dir(&extra).unwrap();
    lab.config(&format!(
        "[sandbox]\nwritable_roots = [\"{}\"]\n",
        extra.display()
    ));
    let out = lab.sandbox(
        As::Root,
        None,
        &format!("echo ok > {}/w.txt", extra.display()),
    );
    assert!(extra.join("w.txt").exists(), "{}", text(&out));
    // The user's mode applies; --mode wins over it.
    lab.config("[sandbox]\nmode = \"read-only\"\n");
    lab.sandbox(As::Root, None, "echo x > user-ro.txt");
    assert!(!lab.work.path().join("user-ro.txt").exists());
    lab.sandbox(As::Root, Some("workspace-write"), "echo x > flag-ww.txt");
    assert!(lab.work.path().join("flag-ww.txt").exists());
    // A project narrows to read-only, and cannot open the network.
    lab.config("");
    std::fs::create_dir_all(lab.work.path().join(".cox")).unwrap();
    std::fs::write(
        lab.work.path().join(".cox/config.toml"),
        "[sandbox]\nmode = \"read-only\"\nnetwork = true\n",
    )
    .unwrap();
    let out = lab.sandbox(As::Root, None, "echo x > project-ro.txt");
    assert!(
        !lab.work.path().join("project-ro.txt").exists(),
        "{}",
        text(&out)
    );
    assert!(
        text(&out).contains("ignoring [sandbox] network = true from project config"),
        "{}",
        text(&out)
    );
    // …and a project cannot widen the user's mode.
    std::fs::write(
        lab.work.path().join(".cox/config.toml"),
        "[sandbox]\nmode = \"danger-full-access\"\n",
    )
    .unwrap();
    let out = lab.sandbox(As::Root, None, &format!("cat {}", lab.key().display()));
    assert!(!text(&out).contains("PRIVATE KEY"), "{}", text(&out));
    assert!(
        text(&out).contains("can only narrow the sandbox"),
        "{}",
        text(&out)
    );
    // …nor let a credential or a socket through.
    std::fs::write(
        lab.work.path().join(".cox/config.toml"),
        "[sandbox]\nenv = [\"GITHUB_TOKEN\"]\nallow_unix_sockets = [\"/run/docker.sock\"]\n",
    )
    .unwrap();
    let out = lab
        .cox(As::Root)
        .env("GITHUB_TOKEN", "ghp_test")
        .args([
            "sandbox",
            "--",
            "bash",
            "-c",
            "echo token=${GITHUB_TOKEN:-none}",
        ])
        .output()
        .unwrap();
    let all = text(&out);
    assert!(all.contains("token=none"), "{all}");
    for key in ["env", "allow_unix_sockets"] {
        assert!(
            all.contains(&format!("ignoring [sandbox] {key} from project config")),
            "{all}"
        );
    }
}

#[test]
fn config_show_says_the_sandbox_mode_and_where_it_came_from() {
    let lab = Lab::new();
    let show = |lab: &Lab| {
        let out = lab
            .cox(As::Root)
            .args(["config", "show", "--sources"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let line = |all: &str| {
        all.lines()
            .find(|l| l.starts_with("sandbox.mode"))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        line(&show(&lab)).contains("workspace-write"),
        "{}",
        show(&lab)
    );
    lab.config("[sandbox]\nmode = \"read-only\"\n");
    let shown = line(&show(&lab));
    assert!(
        shown.contains("read-only") && shown.contains("config.toml"),
        "{shown}"
    );
}

/// The command's parent under the Landlock helper is the helper itself,
/// its supervisor; `comm` names which binary that is.
fn helper_name(lab: &Lab, cox: &Path) -> (String, Output) {
    let outside = lab.outside.path().join("escaped");
    let out = lab
        .cox_at(As::Root, cox)
        .env("PATH", lab.no_bwrap.path())
        .args(["sandbox", "--", "bash", "-c"])
        .arg(format!(
            "cat /proc/$PPID/comm; echo ok > inside.txt; echo x > {}",
            outside.display()
        ))
        .output()
        .unwrap();
    assert!(
        lab.work.path().join("inside.txt").exists(),
        "{}",
        text(&out)
    );
    assert!(!outside.exists(), "{}", text(&out));
    let first = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned();
    (first, out)
}

#[test]
fn the_small_helper_runs_when_installed_and_cox_alone_still_confines() {
    if crate_landlock_abi() == 0 || !can_run(As::Root) {
        eprintln!("skipped: this kernel offers no Landlock");
        return;
    }
    let cox = Path::new(env!("CARGO_BIN_EXE_cox"));
    assert!(
        cox.with_file_name("cox-sandbox-exec").is_file(),
        "the build puts the helper beside cox"
    );
    let lab = Lab::new();
    let (name, out) = helper_name(&lab, cox);
    assert_eq!(name, "cox-sandbox-exe", "{}", text(&out));

    // The same binary alone in a folder: it is its own helper.
    let alone = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let lone = alone.path().join("cox");
    if std::fs::hard_link(cox, &lone).is_err() {
        std::fs::copy(cox, &lone).unwrap();
    }
    let lab = Lab::new();
    let (name, out) = helper_name(&lab, &lone);
    assert_eq!(name, "cox", "{}", text(&out));
}

#[test]
fn the_helper_run_by_hand_says_what_it_is() {
    let helper = Path::new(env!("CARGO_BIN_EXE_cox")).with_file_name("cox-sandbox-exec");
    let out = Command::new(&helper).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("internal helper of cox"), "{err}");
    let out = Command::new(&helper)
        .args(["__sandbox-exec", "not json", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(126));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("cox sandbox: the sandbox spec is not valid"),
        "{err}"
    );
}

/// A command cannot make a path it must not reach unreachable to the
/// sandbox's setup in one call, and reach it in the next: a folder whose
/// search bit it took off (`chmod 000`) still gets its secrets hidden (or
/// the launch stops), never skipped.
#[test]
fn a_folder_made_unreadable_in_one_call_does_not_uncover_its_secrets_in_the_next() {
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        // The home is a writable root here (as when cox runs in it), and
        // the command's own: root's (idmapped to the command), or nobody's.
        let home = lab.outside.path().join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY\n").unwrap();
        std::fs::create_dir_all(home.join(".aws")).unwrap();
        std::fs::write(home.join(".aws/credentials"), "AWS SECRET\n").unwrap();
        for path in [
            home.clone(),
            home.join(".ssh"),
            home.join(".ssh/id_ed25519"),
            home.join(".aws"),
            home.join(".aws/credentials"),
        ] {
            open_to_all(&path);
            if who == As::Nobody {
                std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
            }
        }
        let run = |script: &str| lab.in_home(who, &home, script);
        // The secret folders themselves are hidden, read-only: the folder
        // above them is what a command can lock.
        let first = run("chmod 000 \"$HOME\" && echo locked");
        assert!(text(&first).contains("locked"), "{who:?}: {}", text(&first));
        let second =
            run("chmod 755 \"$HOME\"; cat \"$HOME/.ssh/id_ed25519\" \"$HOME/.aws/credentials\"");
        let all = text(&second);
        assert!(!all.contains("PRIVATE KEY"), "{who:?}: {all}");
        assert!(!all.contains("AWS SECRET"), "{who:?}: {all}");
        // Put the modes back for the temporary folder's removal.
        open_to_all(&home);
    }
}

/// A protected file that did not exist when a concurrent confined process
/// started cannot be turned, by swapping it with a link while another
/// command launches, into a read-only bind of a secret: each mount is made
/// through one descriptor of the path it covers.
#[test]
fn swapping_a_protected_name_with_a_link_during_a_launch_shows_no_secret() {
    if !can_run(As::Root) || which("python3").is_none() {
        return;
    }
    let lab = Lab::new();
    let secret = lab.key();
    // The racer runs confined, in the background, for the whole loop.
    let racer = format!(
        r#"
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
os.symlink({secret:?}, "lnk")
end = time.time() + 8
while time.time() < end:
    if not os.path.lexists("AGENTS.md"):
        open("AGENTS.md", "w").write("notes\n")
    libc.renameat2(-100, b"AGENTS.md", -100, b"lnk", 2)
"#,
        secret = secret.display().to_string()
    );
    let mut background = lab
        .cox(As::Root)
        .args(["sandbox", "--", "python3", "-c", &racer])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut launches = 0;
    while started.elapsed() < Duration::from_secs(6) {
        let out = lab.sandbox(As::Root, None, "cat AGENTS.md 2>/dev/null; true");
        assert!(
            !text(&out).contains("PRIVATE KEY"),
            "launch {launches}: {}",
            text(&out)
        );
        launches += 1;
    }
    let _ = background.kill();
    let _ = background.wait();
    assert!(launches > 10, "only {launches} launches");
}

/// An instruction file or `.mcp.json` a confined command makes where none
/// was is moved aside when the command ends, so the next session loads
/// nothing planted; one that existed stays read-only.
#[test]
fn an_instruction_file_a_command_makes_is_moved_aside() {
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        std::fs::write(lab.work.path().join("CLAUDE.md"), "real\n").unwrap();
        let out = lab.sandbox(
            who,
            None,
            "echo planted > AGENTS.md; echo '{}' > .mcp.json; echo x >> CLAUDE.md; ls -a",
        );
        let all = text(&out);
        assert!(all.contains("AGENTS.md"), "the command made it: {all}");
        let names: Vec<String> = std::fs::read_dir(lab.work.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            !names.iter().any(|n| n == "AGENTS.md"),
            "{who:?}: {names:?}"
        );
        assert!(
            !names.iter().any(|n| n == ".mcp.json"),
            "{who:?}: {names:?}"
        );
        assert!(
            names
                .iter()
                .any(|n| n.starts_with("AGENTS.md.cox-planted-")),
            "{who:?}: {names:?}"
        );
        assert_eq!(
            std::fs::read_to_string(lab.work.path().join("CLAUDE.md")).unwrap(),
            "real\n"
        );
        assert!(all.contains("moved it to"), "{who:?}: {all}");
    }
}

/// Claude Code settings' `env` reaches the commands cox starts, credential
/// names included (the person wrote them); a project's does not, and is
/// named in a warning.
#[test]
fn the_persons_settings_env_reaches_commands_and_a_projects_does_not() {
    if !can_run(As::Root) {
        return;
    }
    let lab = Lab::new();
    std::fs::create_dir_all(lab.home.path().join(".claude")).unwrap();
    std::fs::write(
        lab.home.path().join(".claude/settings.json"),
        r#"{"env": {"MY_FLAG": "on", "DEPLOY_TOKEN": "t0k"}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(lab.work.path().join(".claude")).unwrap();
    std::fs::write(
        lab.work.path().join(".claude/settings.json"),
        r#"{"env": {"NODE_OPTIONS": "--require ./evil.js"}}"#,
    )
    .unwrap();
    let out = lab.sandbox(
        As::Root,
        None,
        "echo \"flag=$MY_FLAG token=$DEPLOY_TOKEN node=$NODE_OPTIONS\"",
    );
    let all = text(&out);
    assert!(all.contains("flag=on token=t0k node=\n"), "{all}");
    assert!(all.contains("ignoring `env` (NODE_OPTIONS)"), "{all}");
}

/// What cox keeps of every project is out of a command's reach: the
/// checkpoints (copies of the files, hidden ones included), the archived
/// outputs, the record, the logs and the login tokens; the transcripts,
/// whose path hooks are given, stay readable.
#[test]
fn cox_homes_private_parts_are_hidden() {
    for who in BOTH {
        if !can_run(who) {
            continue;
        }
        let lab = Lab::new();
        let cox_home = lab.outside.path().join("cox-home");
        for dir in ["checkpoints/x", "archive", "logs", "sessions", "mcp-auth"] {
            std::fs::create_dir_all(cox_home.join(dir)).unwrap();
        }
        for file in [
            "checkpoints/x/objects",
            "archive/out",
            "logs/cox.log",
            "cox.db",
            "mcp-auth/token.json",
            "sessions/s.jsonl",
        ] {
            std::fs::write(cox_home.join(file), format!("PRIVATE {file}\n")).unwrap();
        }
        for entry in walk(&cox_home) {
            open_to_all(&entry);
        }
        let out = lab
            .cox(who)
            .env("COX_HOME", &cox_home)
            .args(["sandbox", "--", "bash", "-c"])
            .arg(format!(
                "cd {} && cat checkpoints/x/objects archive/out logs/cox.log cox.db \
                 mcp-auth/token.json sessions/s.jsonl 2>/dev/null",
                cox_home.display()
            ))
            .output()
            .unwrap();
        let all = text(&out);
        assert!(all.contains("PRIVATE sessions/s.jsonl"), "{who:?}: {all}");
        assert_eq!(all.matches("PRIVATE").count(), 1, "{who:?}: {all}");
    }
}

fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.to_path_buf()];
    if let Ok(entries) = std::fs::read_dir(root) {
        for entry in entries.flatten() {
            out.extend(walk(&entry.path()));
        }
    }
    out
}

/// A workspace inside a repository (not at its top) has no `.git` of its
/// own; one a command makes there (`git init` with a configuration that
/// would run for the person's next `git status`) is moved aside.
#[test]
fn a_git_folder_made_in_a_workspace_inside_a_repository_is_moved_aside() {
    if !can_run(As::Root) || which("git").is_none() {
        return;
    }
    let lab = Lab::new();
    let sub = lab.work.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let out = lab
        .cox(As::Root)
        .current_dir(&sub)
        .args(["sandbox", "--", "bash", "-c", "git init -q . && echo made"])
        .output()
        .unwrap();
    assert!(text(&out).contains("made"), "{}", text(&out));
    assert!(!sub.join(".git").exists(), "{}", text(&out));
}

/// A secret that is a link inside a writable home cannot be pointed at a
/// decoy by one command so that the next session hides the decoy instead.
#[test]
fn a_secret_link_in_a_writable_home_cannot_be_retargeted() {
    if !can_run(As::Root) {
        return;
    }
    let lab = Lab::new();
    let home = lab.outside.path().join("home");
    std::fs::create_dir_all(home.join("dotfiles/ssh")).unwrap();
    std::fs::write(home.join("dotfiles/ssh/id_ed25519"), "DOTSSH KEY\n").unwrap();
    std::os::unix::fs::symlink("dotfiles/ssh", home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join("decoy")).unwrap();
    let run = |script: &str| lab.in_home(As::Root, &home, script);
    let first = run("cd ~ && ln -sfn decoy .ssh && readlink .ssh");
    assert!(text(&first).contains("decoy"), "{}", text(&first));
    assert_eq!(
        std::fs::read_link(home.join(".ssh")).unwrap(),
        Path::new("dotfiles/ssh"),
        "the link was put back: {}",
        text(&first)
    );
    let second = run("cat ~/.ssh/id_ed25519 ~/dotfiles/ssh/id_ed25519");
    assert!(!text(&second).contains("DOTSSH KEY"), "{}", text(&second));
}
