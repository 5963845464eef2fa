//! MCP logins from outside: an HTTP server that wants OAuth (the Python
//! SDK's resource and authorization servers, `tests/mcp/py-auth-server.py`),
//! `cox mcp login|logout`, refresh, and the doctor's rows. Each test has its
//! own COX_HOME and HOME.

mod common;

use common::mcp::*;
use common::{Env, text};
use std::io::{BufRead as _, Write as _};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// An HTTP server that answers 401 (the Python SDK's resource server and
/// authorization server, `tests/mcp/py-auth-server.py`): a session skips
/// it and says to log in; `cox mcp login` runs discovery, dynamic
/// registration and the code flow with PKCE through a "browser" (a
/// script that follows the redirects to cox's listener on 127.0.0.1);
/// the token file is private; calls carry the token; a token revoked by
/// the server is refreshed on its 401, an expired one before the request;
/// a refused refresh needs a login again; `logout` forgets it, and `cox
/// doctor` says where each login stands.
/// The two tests run one at a time: each starts its own authorization
/// server, and the keyring test its own session bus and keyring daemon;
/// side by side on two cores they starve each other past their deadlines.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn an_http_server_that_wants_a_login_gets_oauth_with_refresh() {
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(python) = sdk_python() else {
        return;
    };
    let env = Env::new();
    let log = env.home.path().join("auth.log");
    let port = free_port();
    let lifetime = 4;
    let mut server = python_server(
        &python,
        "py-auth-server.py",
        &[
            port.to_string().as_ref(),
            log.as_os_str(),
            lifetime.to_string().as_ref(),
        ],
        port,
    );
    write(
        &env.home.path().join("config.toml"),
        &format!("[mcp_servers.auth]\ntype = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
    );
    let browser = write(
        &env.home.path().join("browser.py"),
        "import sys, urllib.request\nurllib.request.urlopen(sys.argv[1]).read()\n",
    );
    let scenario = calls(&env, &[("mcp__auth__whoami", serde_json::json!({}))]);

    // Before a login: skipped, with the way to log in.
    let out = run(&env, &scenario, &[]);
    let said = notices(&out);
    assert!(
        said.iter().any(|n| n.contains("run cox mcp login auth")),
        "{}",
        text(&out)
    );
    assert!(!tools(&out).iter().any(|t| t.starts_with("mcp__auth__")));
    assert!(doctor_row(&env, "mcp auth auth").ends_with("none"));
    let listed = cox(&env).args(["mcp", "list"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("needs login: run cox mcp login auth"),
        "{}",
        text(&listed)
    );

    // The login.
    let out = cox(&env)
        .env(
            "BROWSER",
            format!("{} {}", python.display(), browser.display()),
        )
        .args(["mcp", "login", "auth"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("/authorize?"),
        "the URL is shown: {}",
        text(&out)
    );
    let events = auth_events(&log);
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["register", "authorize", "code"], "{events:?}");
    assert_eq!(events[0]["name"], "cox");
    let redirect = events[0]["redirect"][0].as_str().unwrap();
    assert!(redirect.starts_with("http://127.0.0.1:"), "{redirect}");
    assert_eq!(events[1]["challenge"], true, "PKCE");
    let client = events[0]["client"].as_str().unwrap().to_owned();
    let file = env.home.path().join("mcp-auth/auth.json");
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert!(
        doctor_row(&env, "mcp auth auth").contains("ok (expires in"),
        "{}",
        doctor_row(&env, "mcp auth auth")
    );
    let store = doctor_row(&env, "mcp logins");
    assert!(
        store.contains("a 0600 file per server in") && store.contains("no OS keyring service"),
        "without a keyring service the doctor names the file and why: {store}"
    );

    // Calls carry the token.
    let out = run(&env, &scenario, &[]);
    assert_eq!(
        results(&out),
        [(true, format!("client {client}"))],
        "{}",
        text(&out)
    );

    // The server revokes the access token: its 401 brings one refresh.
    post(port, "/test/revoke-access");
    let out = run(&env, &scenario, &[]);
    assert_eq!(
        results(&out),
        [(true, format!("client {client}"))],
        "{}",
        text(&out)
    );
    let refreshes = |events: &[Value]| events.iter().filter(|e| e["event"] == "refresh").count();
    assert_eq!(refreshes(&auth_events(&log)), 1, "{:?}", auth_events(&log));

    // The token expires: refreshed before the request.
    std::thread::sleep(std::time::Duration::from_secs(lifetime + 1));
    assert!(doctor_row(&env, "mcp auth auth").contains("expired"));
    let out = run(&env, &scenario, &[]);
    assert_eq!(
        results(&out),
        [(true, format!("client {client}"))],
        "{}",
        text(&out)
    );
    assert_eq!(refreshes(&auth_events(&log)), 2, "{:?}", auth_events(&log));

    // The server forgets every token: a login is needed again.
    post(port, "/test/revoke-all");
    let out = run(&env, &scenario, &[]);
    assert!(
        notices(&out)
            .iter()
            .any(|n| n.contains("run cox mcp login auth")),
        "{}",
        text(&out)
    );
    assert!(results(&out).iter().all(|(ok, _)| !ok), "{}", text(&out));

    let out = cox(&env).args(["mcp", "logout", "auth"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(!file.exists());
    assert!(doctor_row(&env, "mcp auth auth").ends_with("none"));
    let _ = server.kill();
    let _ = server.wait();
}

/// A private Secret Service: a session bus of its own and a
/// gnome-keyring-daemon unlocked on it (`.ci/run` installs it); both die
/// with this value.
struct Keyring {
    bus: Child,
    daemon: Child,
    address: String,
}

impl Keyring {
    fn start(dir: &Path) -> Option<Self> {
        if Command::new("gnome-keyring-daemon")
            .arg("--version")
            .output()
            .is_err()
        {
            assert!(
                std::env::var_os("CI").is_none(),
                ".ci/run installs gnome-keyring"
            );
            eprintln!("skipped: gnome-keyring-daemon is not installed");
            return None;
        }
        let mut bus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut address = String::new();
        std::io::BufReader::new(bus.stdout.take().unwrap())
            .read_line(&mut address)
            .unwrap();
        let address = address.trim().to_owned();
        let mut daemon = Self::command(dir, &address, "gnome-keyring-daemon")
            .args(["--unlock", "--components=secrets", "--foreground"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        daemon
            .stdin
            .take()
            .unwrap()
            .write_all(b"test-password")
            .unwrap();
        let keyring = Self {
            bus,
            daemon,
            address,
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !keyring.store_probe(dir) {
            assert!(
                std::time::Instant::now() < deadline,
                "the keyring never answered"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        Some(keyring)
    }

    fn command(dir: &Path, address: &str, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("DBUS_SESSION_BUS_ADDRESS", address)
            .env("HOME", dir)
            .env("XDG_DATA_HOME", dir.join("data"))
            .env("XDG_RUNTIME_DIR", dir);
        cmd
    }

    fn store_probe(&self, dir: &Path) -> bool {
        let mut store = Self::command(dir, &self.address, "secret-tool")
            .args([
                "store",
                "--label=probe",
                "service",
                "probe",
                "username",
                "p",
            ])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        store.stdin.take().unwrap().write_all(b"p").unwrap();
        store.wait().unwrap().success()
    }

    /// The secret kept for `service` and `username`, if any.
    fn lookup(&self, dir: &Path, service: &str, username: &str) -> Option<String> {
        let out = Self::command(dir, &self.address, "secret-tool")
            .args(["lookup", "service", service, "username", username])
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl Drop for Keyring {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
        let _ = self.bus.kill();
        let _ = self.bus.wait();
    }
}

/// Where a keyring service answers, the login is filed there (service
/// `cox`, account `mcp/<name>`), not in a file, and the doctor says so;
/// sessions use it; `logout` deletes it.
#[test]
fn a_login_goes_to_the_os_keyring_where_one_answers() {
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(python) = sdk_python() else {
        return;
    };
    let env = Env::new();
    let Some(keyring) = Keyring::start(env.home.path()) else {
        return;
    };
    let with_bus = |cmd: &mut Command| {
        cmd.env("DBUS_SESSION_BUS_ADDRESS", &keyring.address);
    };
    let log = env.home.path().join("auth.log");
    let port = free_port();
    let mut server = python_server(
        &python,
        "py-auth-server.py",
        &[port.to_string().as_ref(), log.as_os_str(), "3600".as_ref()],
        port,
    );
    write(
        &env.home.path().join("config.toml"),
        &format!("[mcp_servers.kr]\ntype = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
    );
    let browser = write(
        &env.home.path().join("browser.py"),
        "import sys, urllib.request\nurllib.request.urlopen(sys.argv[1]).read()\n",
    );
    let mut login = cox(&env);
    with_bus(&mut login);
    let out = login
        .env(
            "BROWSER",
            format!("{} {}", python.display(), browser.display()),
        )
        .args(["mcp", "login", "kr"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !env.home.path().join("mcp-auth/kr.json").exists(),
        "no file where the keyring keeps it"
    );
    let kept = keyring
        .lookup(env.home.path(), "cox", "mcp/kr")
        .expect("the login is in the keyring");
    let kept: Value = serde_json::from_str(&kept).unwrap();
    assert_eq!(kept["url"], format!("http://127.0.0.1:{port}/mcp"));

    let mut doctor = cox(&env);
    with_bus(&mut doctor);
    let stdout =
        String::from_utf8_lossy(&doctor.arg("doctor").output().unwrap().stdout).into_owned();
    let row = |check: &str| {
        stdout
            .lines()
            .find(|l| l.contains(check))
            .unwrap_or_else(|| panic!("no {check} row in:\n{stdout}"))
            .to_owned()
    };
    assert!(
        row("mcp logins").contains("the OS keyring (service cox, account mcp/<name>)"),
        "{stdout}"
    );
    assert!(row("mcp auth kr").contains("ok (expires in"), "{stdout}");

    // A session finds it there.
    let scenario = calls(&env, &[("mcp__kr__whoami", serde_json::json!({}))]);
    let mut session = cox(&env);
    with_bus(&mut session);
    let out = session
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "use the tools", "--permission-mode"])
        .args(["bypassPermissions", "--output-format", "stream-json"])
        .output()
        .unwrap();
    let client = auth_events(&log)[0]["client"].as_str().unwrap().to_owned();
    assert_eq!(
        results(&out),
        [(true, format!("client {client}"))],
        "{}",
        text(&out)
    );

    let mut logout = cox(&env);
    with_bus(&mut logout);
    let out = logout.args(["mcp", "logout", "kr"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(keyring.lookup(env.home.path(), "cox", "mcp/kr"), None);
    let _ = server.kill();
    let _ = server.wait();
}

/// An authorization server without dynamic registration: the server's
/// entry names the client registered out of band (`oauth.client_id`), and
/// `cox mcp login` logs in as it, registering nothing; calls carry its
/// token.
#[test]
fn a_preregistered_client_logs_in_where_registration_is_off() {
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(python) = sdk_python() else {
        return;
    };
    let env = Env::new();
    let log = env.home.path().join("auth.log");
    let port = free_port();
    let mut server = python_server(
        &python,
        "py-auth-server.py",
        &[
            port.to_string().as_ref(),
            log.as_os_str(),
            "300".as_ref(),
            "cox-by-hand".as_ref(),
        ],
        port,
    );
    write(
        &env.home.path().join("config.toml"),
        &format!(
            "[mcp_servers.corp]\ntype = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n\
             oauth = {{ client_id = \"${{CORP_CLIENT:-cox-by-hand}}\" }}\n"
        ),
    );
    let browser = write(
        &env.home.path().join("browser.py"),
        "import sys, urllib.request\nurllib.request.urlopen(sys.argv[1]).read()\n",
    );
    let out = cox(&env)
        .env(
            "BROWSER",
            format!("{} {}", python.display(), browser.display()),
        )
        .args(["mcp", "login", "corp"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let events = auth_events(&log);
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["authorize", "code"], "no registration: {events:?}");
    assert_eq!(events[0]["client"], "cox-by-hand", "{events:?}");
    let scenario = calls(&env, &[("mcp__corp__whoami", serde_json::json!({}))]);
    let out = run(&env, &scenario, &[]);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(
        results(&out)[0],
        (true, "client cox-by-hand".to_owned()),
        "{}",
        text(&out)
    );
}

/// A confidential client registered out of band (its secret from a
/// variable): its login authenticates at the token endpoint, and so does
/// every refresh after its token expires, so the session goes on without a
/// new login.
#[test]
fn a_confidential_clients_token_is_refreshed_with_its_secret() {
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(python) = sdk_python() else {
        return;
    };
    let env = Env::new();
    let log = env.home.path().join("auth.log");
    let port = free_port();
    let mut server = python_server(
        &python,
        "py-auth-server.py",
        &[
            port.to_string().as_ref(),
            log.as_os_str(),
            "2".as_ref(),
            "corp-app:s3cret".as_ref(),
        ],
        port,
    );
    write(
        &env.home.path().join("config.toml"),
        &format!(
            "[mcp_servers.corp]\ntype = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n\
             oauth = {{ client_id = \"corp-app\", client_secret = \"${{CORP_SECRET}}\" }}\n"
        ),
    );
    let browser = write(
        &env.home.path().join("browser.py"),
        "import sys, urllib.request\nurllib.request.urlopen(sys.argv[1]).read()\n",
    );
    let out = cox(&env)
        .env("CORP_SECRET", "s3cret")
        .env(
            "BROWSER",
            format!("{} {}", python.display(), browser.display()),
        )
        .args(["mcp", "login", "corp"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // Past the token's 2 s.
    std::thread::sleep(std::time::Duration::from_millis(3000));
    let scenario = calls(&env, &[("mcp__corp__whoami", serde_json::json!({}))]);
    let out = cox(&env)
        .env("CORP_SECRET", "s3cret")
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "use the tools", "--permission-mode"])
        .args(["bypassPermissions", "--output-format", "stream-json"])
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(
        results(&out).first().cloned(),
        Some((true, "client corp-app".to_owned())),
        "{}",
        text(&out)
    );
    let kinds: Vec<String> = auth_events(&log)
        .iter()
        .map(|e| e["event"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["authorize", "code", "refresh", "call"], "{kinds:?}");
}
