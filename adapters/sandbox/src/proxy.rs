//! The domain proxy: the only way out of a sandbox with `allowed_domains`.
//!
//! One proxy runs per confined command, on a Unix socket that bwrap binds
//! into the command's namespace (which has no route out); the helper relays
//! a loopback port to it and points `HTTP_PROXY`/`HTTPS_PROXY` there. It
//! speaks the two forms HTTP clients use through a proxy: `CONNECT
//! host:port` (HTTPS, and any TLS tunnel) and a request with an absolute
//! `http://` URL. The host a client names is checked against the policy
//! before anything is resolved or connected; a refused one gets a `403`
//! whose body says why, and is recorded for the call's result.
//!
//! Invariants: a host is admitted only by a pattern that matches it and no
//! `WebFetch(domain:…)` deny; an address literal is admitted only when a
//! pattern spells it; a request the proxy cannot parse is refused.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};

use crate::policy::SandboxPolicy;

/// The largest request head the proxy reads.
const MAX_HEAD: usize = 64 * 1024;

/// A running proxy; it stops, and its socket is removed, when dropped.
pub struct Proxy {
    dir: PathBuf,
    socket: PathBuf,
    refused: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Starts a proxy for `policy` on a fresh socket in a private folder.
    ///
    /// # Errors
    /// The folder or the socket could not be made.
    pub fn start(policy: &SandboxPolicy) -> std::io::Result<Self> {
        let dir = private_dir()?;
        let socket = dir.join("proxy.sock");
        let listener = UnixListener::bind(&socket)?;
        let refused = Arc::new(Mutex::new(Vec::new()));
        let policy = Arc::new(policy.clone());
        let task = tokio::spawn({
            let refused = Arc::clone(&refused);
            async move {
                while let Ok((client, _)) = listener.accept().await {
                    let policy = Arc::clone(&policy);
                    let refused = Arc::clone(&refused);
                    tokio::spawn(async move {
                        let _ = serve(client, &policy, &refused).await;
                    });
                }
            }
        });
        Ok(Self {
            dir,
            socket,
            refused,
            task,
        })
    }

    /// The socket to bind into the sandbox.
    #[must_use]
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The hosts refused so far (`host:port`, once each).
    #[must_use]
    pub fn refused(&self) -> Vec<String> {
        self.refused.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.socket);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// A folder only this user can enter, for the socket.
fn private_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    let pid = std::process::id();
    for n in 0..1000u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!("cox-proxy-{pid}-{nanos:x}-{n}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free name for the proxy's folder"))
}

/// The request a client sent: where to, and how to forward it.
#[derive(Debug, PartialEq, Eq)]
struct Target {
    host: String,
    port: u16,
    /// `None` for CONNECT; else the head rewritten in origin form.
    forward: Option<Vec<u8>>,
}

async fn serve(
    mut client: UnixStream,
    policy: &SandboxPolicy,
    refused: &Mutex<Vec<String>>,
) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(4096);
    let head_end = loop {
        if let Some(end) = find_head_end(&buf) {
            break end;
        }
        if buf.len() >= MAX_HEAD {
            return reply(
                &mut client,
                "400 Bad Request",
                "the request head is too large",
            )
            .await;
        }
        let mut chunk = [0u8; 4096];
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let (head, rest) = buf.split_at(head_end);
    let target = match parse_head(head) {
        Ok(target) => target,
        Err(why) => return reply(&mut client, "400 Bad Request", &why).await,
    };
    if !policy.admits_host(&target.host) {
        let what = format!("{}:{}", target.host, target.port);
        if let Ok(mut list) = refused.lock()
            && !list.contains(&what)
        {
            list.push(what.clone());
        }
        let why = format!(
            "cox sandbox: the connection to {what} was refused: {} is not in [sandbox] allowed_domains",
            target.host
        );
        return reply(&mut client, "403 Forbidden", &why).await;
    }
    let mut upstream = match TcpStream::connect((target.host.as_str(), target.port)).await {
        Ok(s) => s,
        Err(e) => {
            let why = format!(
                "cox sandbox: cannot reach {}:{}: {e}",
                target.host, target.port
            );
            return reply(&mut client, "502 Bad Gateway", &why).await;
        }
    };
    let _ = upstream.set_nodelay(true);
    match &target.forward {
        None => {
            client
                .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                .await?;
        }
        Some(head) => upstream.write_all(head).await?,
    }
    upstream.write_all(rest).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

async fn reply(client: &mut UnixStream, status: &str, body: &str) -> std::io::Result<()> {
    let body = format!("{body}\n");
    let text = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(text.as_bytes()).await?;
    client.shutdown().await
}

fn find_head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// Reads the request line and headers of a proxy request.
fn parse_head(head: &[u8]) -> Result<Target, String> {
    let text = std::str::from_utf8(head).map_err(|_| "the request head is not text".to_owned())?;
    let mut lines = text.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("`{first}` is not a request line"));
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = split_host_port(target, None)?;
        return Ok(Target {
            host,
            port,
            forward: None,
        });
    }
    let Some(after) = target.strip_prefix("http://") else {
        return Err(format!(
            "`{target}` is not an absolute http:// URL (use CONNECT for https)"
        ));
    };
    let (authority, path) = after.find('/').map_or((after, "/"), |i| after.split_at(i));
    let (host, port) = split_host_port(authority, Some(80))?;
    let mut out = format!("{method} {path} {version}\r\n");
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or_default().trim();
        if ["proxy-connection", "proxy-authorization", "connection"]
            .iter()
            .any(|n| name.eq_ignore_ascii_case(n))
        {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("Connection: close\r\n\r\n");
    Ok(Target {
        host,
        port,
        forward: Some(out.into_bytes()),
    })
}

/// `host:port`, `[v6]:port`, or a host alone when a default port applies.
fn split_host_port(authority: &str, default: Option<u16>) -> Result<(String, u16), String> {
    let bad = || format!("`{authority}` is not host:port");
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(bad)?;
        (host, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(p) => p.parse().map_err(|_| bad())?,
        None => default.ok_or_else(bad)?,
    };
    if host.is_empty() {
        return Err(bad());
    }
    Ok((host.to_owned(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_and_absolute_requests_parse() {
        let t = parse_head(b"CONNECT api.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.forward),
            ("api.example.com", 443, None)
        );
        let t = parse_head(
            b"GET http://example.com:8080/a?b HTTP/1.1\r\nHost: example.com\r\nProxy-Connection: keep-alive\r\n\r\n",
        )
        .unwrap();
        assert_eq!((t.host.as_str(), t.port), ("example.com", 8080));
        let forward = String::from_utf8(t.forward.unwrap()).unwrap();
        assert_eq!(
            forward,
            "GET /a?b HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"
        );
        let t = parse_head(b"CONNECT [::1]:443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(t.host, "::1");
    }

    #[test]
    fn requests_the_proxy_cannot_read_are_refused() {
        for bad in [
            &b"GET /relative HTTP/1.1\r\n\r\n"[..],
            b"CONNECT example.com HTTP/1.1\r\n\r\n",
            b"CONNECT :443 HTTP/1.1\r\n\r\n",
            b"GARBAGE\r\n\r\n",
            b"GET https://example.com/ HTTP/1.1\r\n\r\n",
        ] {
            assert!(parse_head(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
