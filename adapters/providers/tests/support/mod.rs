//! A loopback HTTP server that answers each connection with the next
//! scripted answer, byte for byte, and keeps every request it was sent.
//! Bodies go out with chunked transfer encoding in small pieces, so the
//! client sees the network's arbitrary cuts; an answer may also stop early
//! (a cut connection) or stall (an idle stream).

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// How an answer's body ends.
#[derive(Clone, Debug)]
pub enum End {
    /// All of it, then the closing chunk.
    Whole,
    /// The first `n` bytes, then the connection closes.
    CutAt(usize),
    /// The first `n` bytes, then nothing, with the connection open.
    StallAt(usize),
    /// No answer at all: the connection is closed once the request is in.
    Hangup,
}

/// One scripted answer.
#[derive(Clone, Debug)]
pub struct Answer {
    pub status: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
    pub end: End,
    pub piece: usize,
    /// After this many bytes, wait 100 ms: the client reads what came
    /// before as an answer of its own.
    pub pause_at: Option<usize>,
}

impl Answer {
    /// A 200 event stream.
    pub fn sse(body: impl Into<String>) -> Self {
        Self {
            status: "200 OK",
            headers: vec![("content-type", "text/event-stream".into())],
            body: body.into(),
            end: End::Whole,
            piece: 37,
            pause_at: None,
        }
    }

    /// A JSON error answer.
    pub fn error(status: &'static str, body: impl Into<String>) -> Self {
        Self {
            status,
            headers: vec![("content-type", "application/json".into())],
            body: body.into(),
            end: End::Whole,
            piece: 1024,
            pause_at: None,
        }
    }

    pub fn header(mut self, name: &'static str, value: &str) -> Self {
        self.headers.retain(|(n, _)| *n != name);
        self.headers.push((name, value.to_owned()));
        self
    }

    pub fn end(mut self, end: End) -> Self {
        self.end = end;
        self
    }
}

/// One request as received.
#[derive(Clone, Debug)]
pub struct Received {
    /// Request line and headers.
    pub head: String,
    pub body: String,
}

/// The running server.
pub struct Server {
    pub url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Server {
    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// The request bodies so far, as JSON.
    pub fn bodies(&self) -> Vec<serde_json::Value> {
        self.received()
            .iter()
            .map(|r| serde_json::from_str(&r.body).unwrap())
            .collect()
    }
}

/// Starts a server that answers connection `i` with `answers[i]`.
pub async fn serve(answers: Vec<Answer>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let received = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&received);
    tokio::spawn(async move {
        for answer in answers {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 8192];
                let (head, body) = loop {
                    let n = socket.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    request.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&request).into_owned();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap())
                            })
                            .unwrap_or(0);
                        if request.len() >= end + 4 + length {
                            let body = String::from_utf8_lossy(&request[end + 4..end + 4 + length])
                                .into_owned();
                            break (text[..end].to_owned(), body);
                        }
                    }
                };
                log.lock().unwrap().push(Received { head, body });
                if matches!(answer.end, End::Hangup) {
                    drop(socket);
                    return;
                }
                let mut head = format!("HTTP/1.1 {}\r\n", answer.status);
                for (name, value) in &answer.headers {
                    head.push_str(&format!("{name}: {value}\r\n"));
                }
                head.push_str("transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let bytes = answer.body.as_bytes();
                let limit = match answer.end {
                    End::Whole => bytes.len(),
                    End::CutAt(n) | End::StallAt(n) => n.min(bytes.len()),
                    End::Hangup => 0,
                };
                let (head, tail) = bytes[..limit].split_at(answer.pause_at.unwrap_or(0).min(limit));
                let pieces = head.chunks(answer.piece.max(1)).map(|c| (c, false));
                let pieces = pieces.chain(
                    tail.chunks(answer.piece.max(1))
                        .enumerate()
                        .map(|(i, c)| (c, i == 0 && answer.pause_at.is_some())),
                );
                for (chunk, pause) in pieces {
                    if pause {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    let framed =
                        [format!("{:x}\r\n", chunk.len()).as_bytes(), chunk, b"\r\n"].concat();
                    if socket.write_all(&framed).await.is_err() {
                        return;
                    }
                    socket.flush().await.ok();
                }
                match answer.end {
                    End::Whole => {
                        socket.write_all(b"0\r\n\r\n").await.ok();
                    }
                    End::CutAt(_) | End::Hangup => {}
                    End::StallAt(_) => tokio::time::sleep(Duration::from_secs(3600)).await,
                }
                socket.shutdown().await.ok();
            });
        }
    });
    Server { url, received }
}

/// Anthropic's framing: `event: <type>` then the data line.
pub fn anthropic_sse(events: &[&str]) -> String {
    events
        .iter()
        .map(|data| {
            let kind: serde_json::Value = serde_json::from_str(data).unwrap();
            format!(
                "event: {}\ndata: {data}\n\n",
                kind["type"].as_str().unwrap()
            )
        })
        .collect()
}

/// OpenAI's framing: data lines only, then `[DONE]`.
pub fn openai_sse(chunks: &[&str]) -> String {
    let mut out: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

/// A short Anthropic answer: "Hello." and end_turn.
pub fn anthropic_hello() -> String {
    anthropic_sse(&[
        r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-5","usage":{"input_tokens":10,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo."}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}"#,
        r#"{"type":"message_stop"}"#,
    ])
}

/// A short OpenAI answer: "Hello." and stop, with usage.
pub fn openai_hello() -> String {
    openai_sse(&[
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-5.1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-5.1","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}"#,
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-5.1","choices":[{"index":0,"delta":{"content":"lo."},"finish_reason":null}]}"#,
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-5.1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-5.1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}}"#,
    ])
}
