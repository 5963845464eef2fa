//! MCP logins from outside: an HTTP server that wants OAuth (the Python
//! SDK's resource and authorization servers, `tests/mcp/py-auth-server.py`),
//! `cox mcp login|logout`, refresh, and the doctor's rows. Each test has its
//! own COX_HOME and HOME.

mod common;

use common::mcp::*;
use common::{Env, text};
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
#[test]
fn an_http_server_that_wants_a_login_gets_oauth_with_refresh() {
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
