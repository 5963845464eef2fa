//! The protocol's stdin: lines read on a thread of its own and handed to
//! the transport, each made valid UTF-8 (a byte that is not becomes U+FFFD)
//! so that one bad byte is one bad message — answered as JSON-RPC says —
//! and not the end of the connection.
//!
//! Invariant: the transport sees stdin's lines in order, then its end.

use std::io::BufRead;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use futures::channel::mpsc;

/// The reader end, given to the transport.
pub struct Lines {
    receiver: mpsc::UnboundedReceiver<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
}

/// Starts the reading thread.
///
/// # Errors
/// The thread cannot be started.
pub fn start() -> std::io::Result<Lines> {
    let (sender, receiver) = mpsc::unbounded::<Vec<u8>>();
    std::thread::Builder::new()
        .name("cox-acp-stdin".into())
        .spawn(move || {
            let stdin = std::io::stdin();
            let mut input = stdin.lock();
            let mut line = Vec::new();
            loop {
                line.clear();
                match input.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                let text = match String::from_utf8(std::mem::take(&mut line)) {
                    Ok(text) => text,
                    Err(bad) => String::from_utf8_lossy(bad.as_bytes()).into_owned(),
                };
                if sender.unbounded_send(text.into_bytes()).is_err() {
                    return;
                }
            }
        })?;
    Ok(Lines {
        receiver,
        current: Vec::new(),
        at: 0,
    })
}

impl futures::io::AsyncRead for Lines {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<std::io::Result<usize>> {
        while self.at >= self.current.len() {
            match Pin::new(&mut self.receiver).poll_next(cx) {
                Poll::Ready(Some(line)) => {
                    self.current = line;
                    self.at = 0;
                }
                Poll::Ready(None) => return Poll::Ready(Ok(0)),
                Poll::Pending => return Poll::Pending,
            }
        }
        let n = buf.len().min(self.current.len() - self.at);
        let at = self.at;
        buf[..n].copy_from_slice(&self.current[at..at + n]);
        self.at += n;
        Poll::Ready(Ok(n))
    }
}
