//! The protocol's stdout: a writer that queues each flushed message for a
//! thread of its own, which writes whatever has queued in one go.
//!
//! tokio's stdout hands every write to its blocking pool; with a message
//! per streamed delta that cost tens of microseconds each. Here a message
//! costs a channel send, and the thread batches what comes while it
//! writes.
//!
//! Invariants: messages reach stdout whole and in the order they were
//! flushed; [`Stdout::finish`] returns once everything queued is written
//! (or stdout is gone).

use std::io::Write;
use std::pin::Pin;
use std::sync::mpsc;
use std::task::{Context, Poll};

/// The writer end, given to the transport.
pub struct Queue {
    pending: Vec<u8>,
    sender: mpsc::Sender<Vec<u8>>,
}

/// The thread writing stdout.
pub struct Stdout {
    thread: std::thread::JoinHandle<()>,
}

/// Starts the writing thread; the queue that feeds it.
///
/// # Errors
/// The thread cannot be started.
pub fn start() -> std::io::Result<(Queue, Stdout)> {
    let (sender, receiver) = mpsc::channel::<Vec<u8>>();
    let thread = std::thread::Builder::new()
        .name("cox-acp-stdout".into())
        .spawn(move || {
            let stdout = std::io::stdout();
            while let Ok(first) = receiver.recv() {
                let mut out = stdout.lock();
                let mut written = out.write_all(&first);
                while let (Ok(()), Ok(more)) = (&written, receiver.try_recv()) {
                    written = out.write_all(&more);
                }
                if written.and_then(|()| out.flush()).is_err() {
                    // Nobody reads any more: what is queued has nowhere to go.
                    return;
                }
            }
        })?;
    Ok((
        Queue {
            pending: Vec::new(),
            sender,
        },
        Stdout { thread },
    ))
}

impl Stdout {
    /// Waits until everything queued is written (the queue must be gone).
    pub fn finish(self) {
        let _ = self.thread.join();
    }
}

fn gone() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed")
}

impl futures::io::AsyncWrite for Queue {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.pending.extend_from_slice(data);
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if self.pending.is_empty() {
            return Poll::Ready(Ok(()));
        }
        let message = std::mem::take(&mut self.pending);
        Poll::Ready(self.sender.send(message).map_err(|_| gone()))
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.poll_flush(cx)
    }
}
