//! `cox-bench mock`: a loopback model server for timing whole agents on
//! the same turn.
//!
//! It speaks just enough of two wire formats for a headless "create
//! hello.txt" turn:
//!
//! - Anthropic Messages, `POST /v1/messages` (cox, Claude Code), streamed
//!   or not, and `POST /v1/messages/count_tokens`;
//! - OpenAI Responses, `POST /v1/responses` (Codex), streamed.
//!
//! Every conversation gets the same two answers. A request that offers a
//! tool able to write files and carries no tool result yet is answered with
//! one call that writes `DIR/hello.txt` containing `hi\n`; the tool is
//! chosen from the tools the client sent (cox's `write`, Claude Code's
//! `Write`, Codex's `apply_patch` or its shell). A request that carries a
//! tool result is answered with a short text, after checking that the file
//! was written (then it is removed, so the next run starts from an empty
//! folder). Anything else (a title, a quota probe) gets a one-word text.
//!
//! HTTP/1.1 with keep-alive, chunked responses, one thread per connection,
//! and `TCP_NODELAY` on every socket: without it a keep-alive client's
//! delayed ACK holds each streamed response back by about 40 ms.
//!
//! The first line on stdout is `listening on http://127.0.0.1:PORT`. With
//! `--log FILE` every request appends one JSON line saying what was asked
//! and what was answered; `verified` counts the writes that landed, and
//! `GET /mock/stats` answers `{"requests": N, "verified": N}`. With
//! `--dump DIR` every request body is also saved as `DIR/NNN.body`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// What every connection shares.
struct Mock {
    dir: PathBuf,
    dump: Option<PathBuf>,
    requests: AtomicU64,
    log: Option<Mutex<std::fs::File>>,
    ids: AtomicU64,
    verified: AtomicU64,
}

/// `cox-bench mock [--port N] [--dir DIR] [--log FILE]`.
/// What `cox-bench mock` takes.
#[derive(clap::Args, Debug)]
pub struct MockArgs {
    /// The port to listen on (0: any free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Where the answered write lands and is checked [default: the current folder].
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Append one JSON line per request to this file.
    #[arg(long)]
    log: Option<PathBuf>,
    /// Save every request body in this folder as NNN.body.
    #[arg(long)]
    dump: Option<PathBuf>,
}

pub fn run(args: MockArgs) -> Result<(), String> {
    let MockArgs {
        port,
        dir,
        log,
        dump,
    } = args;
    let dir = match dir {
        Some(dir) => dir,
        None => std::env::current_dir().map_err(|e| e.to_string())?,
    };
    let log = match log {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            Some(Mutex::new(file))
        }
        None => None,
    };
    let dir = dir
        .canonicalize()
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let listener = TcpListener::bind(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    println!("listening on http://{addr}");
    let _ = std::io::stdout().flush();
    let mock = Arc::new(Mock {
        dir,
        dump,
        requests: AtomicU64::new(0),
        log,
        ids: AtomicU64::new(1),
        verified: AtomicU64::new(0),
    });
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let mock = Arc::clone(&mock);
        std::thread::spawn(move || {
            let _ = serve(stream, &mock);
        });
    }
    Ok(())
}

/// One HTTP request.
struct HttpRequest {
    method: String,
    path: String,
    close: bool,
    body: Vec<u8>,
}

/// Serves one connection until the client closes it.
fn serve(stream: TcpStream, mock: &Mock) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    while let Some(request) = read_request(&mut reader)? {
        let close = request.close;
        let reply = answer(&request, mock);
        reply.write_to(&mut writer)?;
        if close {
            break;
        }
    }
    Ok(())
}

fn read_request(reader: &mut BufReader<TcpStream>) -> std::io::Result<Option<HttpRequest>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut length = 0usize;
    let mut chunked = false;
    let mut close = false;
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.parse().unwrap_or(0),
            "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
            "connection" => close = value.eq_ignore_ascii_case("close"),
            _ => {}
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or("0"), 16)
                .unwrap_or(0);
            if size == 0 {
                // Trailers, then the blank line.
                loop {
                    line.clear();
                    if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
                        break;
                    }
                }
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..])?;
            line.clear();
            reader.read_line(&mut line)?;
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    }
    Ok(Some(HttpRequest {
        method,
        path,
        close,
        body,
    }))
}

/// What goes back: a whole JSON body or a stream of SSE events.
enum Reply {
    /// A status and no body (`HEAD /`, a connectivity probe).
    Empty(u16),
    Json(u16, Value),
    Events(Vec<(String, Value)>),
}

impl Reply {
    fn write_to(&self, out: &mut TcpStream) -> std::io::Result<()> {
        match self {
            Reply::Empty(status) => {
                write!(out, "HTTP/1.1 {status} OK\r\ncontent-length: 0\r\n\r\n")?;
                out.flush()
            }
            Reply::Json(status, value) => {
                let body = value.to_string();
                let reason = if *status == 200 { "OK" } else { "Not Found" };
                write!(
                    out,
                    "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                )?;
                out.flush()
            }
            Reply::Events(events) => {
                out.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n",
                )?;
                // One chunk per event, as a real server streams them.
                for (name, data) in events {
                    let event = format!("event: {name}\ndata: {data}\n\n");
                    write!(out, "{:x}\r\n{event}\r\n", event.len())?;
                }
                out.write_all(b"0\r\n\r\n")?;
                out.flush()
            }
        }
    }
}

/// What the model does with one request.
#[derive(Debug)]
enum Move {
    /// Call `tool` with `input` (a JSON object, or the raw text of a
    /// freeform tool).
    Call {
        tool: String,
        input: Value,
        freeform: bool,
    },
    /// Say `text` and end the turn.
    Say(&'static str),
}

const FINAL_TEXT: &str = "Created hello.txt.";

fn answer(request: &HttpRequest, mock: &Mock) -> Reply {
    let n = mock.requests.fetch_add(1, Ordering::Relaxed) + 1;
    if let Some(dump) = &mock.dump {
        let _ = std::fs::write(dump.join(format!("{n:03}.body")), &request.body);
    }
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let path = request.path.split('?').next().unwrap_or_default();
    let (kind, reply, summary) = match (request.method.as_str(), path) {
        ("POST", "/v1/messages/count_tokens") => (
            "count_tokens",
            Reply::Json(200, json!({"input_tokens": 100})),
            Value::Null,
        ),
        ("POST", "/v1/messages") => {
            let step = anthropic_move(&body, mock);
            let summary = summarize(&body, &step);
            let reply = if body["stream"].as_bool() == Some(true) {
                Reply::Events(anthropic_events(&body, &step, mock))
            } else {
                Reply::Json(200, anthropic_message(&body, &step, mock))
            };
            ("messages", reply, summary)
        }
        ("POST", "/v1/responses" | "/responses") => {
            let step = responses_move(&body, mock);
            let summary = summarize(&body, &step);
            (
                "responses",
                Reply::Events(responses_events(&step, mock)),
                summary,
            )
        }
        ("HEAD" | "GET", "/") => ("probe", Reply::Empty(200), Value::Null),
        ("GET", "/mock/stats") => (
            "stats",
            Reply::Json(
                200,
                json!({
                    "requests": n,
                    "verified": mock.verified.load(Ordering::Relaxed),
                }),
            ),
            Value::Null,
        ),
        ("GET", "/v1/models" | "/models") => (
            "models",
            Reply::Json(200, json!({"object": "list", "data": [], "models": []})),
            Value::Null,
        ),
        _ => (
            "unknown",
            Reply::Json(
                404,
                json!({"type": "error", "error": {"type": "not_found_error", "message": format!("the mock does not serve {} {}", request.method, request.path)}}),
            ),
            Value::Null,
        ),
    };
    if let Some(log) = &mock.log {
        let line = json!({
            "n": n,
            "method": request.method,
            "path": request.path,
            "kind": kind,
            "bytes": request.body.len(),
            "answer": summary,
            "verified": mock.verified.load(Ordering::Relaxed),
        });
        if let Ok(mut file) = log.lock() {
            let _ = writeln!(file, "{line}");
        }
    }
    reply
}

fn summarize(body: &Value, step: &Move) -> Value {
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(tool_name).collect())
        .unwrap_or_default();
    json!({
        "model": body["model"],
        "stream": body["stream"],
        "tools": tools,
        "move": format!("{step:?}"),
    })
}

fn tool_name(tool: &Value) -> Option<&str> {
    tool["name"]
        .as_str()
        .or_else(|| tool["function"]["name"].as_str())
}

/// The file every first answer writes.
fn hello_path(mock: &Mock) -> String {
    mock.dir.join("hello.txt").display().to_string()
}

/// The tool result came back: the file must be there; remove it for the
/// next run.
fn check_written(mock: &Mock) {
    let path = mock.dir.join("hello.txt");
    if std::fs::read(&path).is_ok_and(|bytes| bytes.starts_with(b"hi")) {
        mock.verified.fetch_add(1, Ordering::Relaxed);
        let _ = std::fs::remove_file(&path);
    }
}

/// Anthropic: a tool result in the last user message ends the turn; a
/// write tool on offer gets called; anything else is a side request.
fn anthropic_move(body: &Value, mock: &Mock) -> Move {
    let last_has_result = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_array())
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_result"));
    if last_has_result {
        check_written(mock);
        return Move::Say(FINAL_TEXT);
    }
    let tools = body["tools"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let write = tools.iter().find(|t| {
        t["name"]
            .as_str()
            .is_some_and(|n| n.eq_ignore_ascii_case("write"))
    });
    match write {
        Some(tool) => {
            let props = &tool["input_schema"]["properties"];
            let key = if props.get("file_path").is_some() {
                "file_path"
            } else {
                "path"
            };
            Move::Call {
                tool: tool["name"].as_str().unwrap_or("write").to_owned(),
                input: json!({ key: hello_path(mock), "content": "hi\n" }),
                freeform: false,
            }
        }
        None => Move::Say("Hello."),
    }
}

fn usage_in() -> Value {
    json!({"input_tokens": 100, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})
}

fn anthropic_events(body: &Value, step: &Move, mock: &Mock) -> Vec<(String, Value)> {
    let id = mock.ids.fetch_add(1, Ordering::Relaxed);
    let model = body["model"].as_str().unwrap_or("claude-sonnet-5");
    let mut events = vec![(
        "message_start".to_owned(),
        json!({"type": "message_start", "message": {
            "id": format!("msg_mock{id}"), "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": usage_in()}}),
    )];
    let stop = match step {
        Move::Call { tool, input, .. } => {
            events.push((
                "content_block_start".into(),
                json!({"type": "content_block_start", "index": 0, "content_block": {
                    "type": "tool_use", "id": format!("toolu_mock{id}"), "name": tool, "input": {}}}),
            ));
            events.push((
                "content_block_delta".into(),
                json!({"type": "content_block_delta", "index": 0, "delta": {
                    "type": "input_json_delta", "partial_json": input.to_string()}}),
            ));
            "tool_use"
        }
        Move::Say(text) => {
            events.push((
                "content_block_start".into(),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ));
            events.push((
                "content_block_delta".into(),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
            ));
            "end_turn"
        }
    };
    events.push((
        "content_block_stop".into(),
        json!({"type": "content_block_stop", "index": 0}),
    ));
    events.push((
        "message_delta".into(),
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": 10}}),
    ));
    events.push(("message_stop".into(), json!({"type": "message_stop"})));
    events
}

fn anthropic_message(body: &Value, step: &Move, mock: &Mock) -> Value {
    let id = mock.ids.fetch_add(1, Ordering::Relaxed);
    let (content, stop) = match step {
        Move::Call { tool, input, .. } => (
            json!([{"type": "tool_use", "id": format!("toolu_mock{id}"), "name": tool, "input": input}]),
            "tool_use",
        ),
        Move::Say(text) => (json!([{"type": "text", "text": text}]), "end_turn"),
    };
    let mut usage = usage_in();
    usage["output_tokens"] = json!(10);
    json!({
        "id": format!("msg_mock{id}"), "type": "message", "role": "assistant",
        "model": body["model"].as_str().unwrap_or("claude-sonnet-5"),
        "content": content, "stop_reason": stop, "stop_sequence": null, "usage": usage,
    })
}

/// OpenAI Responses: a tool output in the input ends the turn; otherwise
/// the file is written with `apply_patch` when offered, else the shell.
fn responses_move(body: &Value, mock: &Mock) -> Move {
    let input = body["input"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let has_output = input.iter().any(|item| {
        item["type"]
            .as_str()
            .is_some_and(|t| t.ends_with("call_output"))
    });
    if has_output {
        check_written(mock);
        return Move::Say(FINAL_TEXT);
    }
    let tools = body["tools"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let find = |name: &str| tools.iter().find(|t| tool_name(t) == Some(name));
    let path = hello_path(mock);
    let patch = format!("*** Begin Patch\n*** Add File: {path}\n+hi\n*** End Patch\n");
    if let Some(tool) = find("apply_patch") {
        let freeform = tool["type"] == "custom";
        return Move::Call {
            tool: "apply_patch".into(),
            input: if freeform {
                Value::String(patch)
            } else {
                json!({ "input": patch })
            },
            freeform,
        };
    }
    let script = format!("printf 'hi\\n' > '{path}'");
    if find("exec_command").is_some() {
        return Move::Call {
            tool: "exec_command".into(),
            input: json!({ "cmd": script }),
            freeform: false,
        };
    }
    if let Some(tool) = find("shell_command").or_else(|| find("shell")) {
        let name = tool_name(tool).unwrap_or("shell").to_owned();
        let command = if tool["parameters"]["properties"]["command"]["type"] == "array" {
            json!(["bash", "-c", script])
        } else {
            json!(script)
        };
        return Move::Call {
            tool: name,
            input: json!({ "command": command, "workdir": mock.dir.display().to_string() }),
            freeform: false,
        };
    }
    Move::Say("Hello.")
}

fn responses_events(step: &Move, mock: &Mock) -> Vec<(String, Value)> {
    let id = mock.ids.fetch_add(1, Ordering::Relaxed);
    let response = format!("resp_mock{id}");
    let item = match step {
        Move::Call {
            tool,
            input,
            freeform: true,
        } => json!({"type": "custom_tool_call", "id": format!("ctc_mock{id}"),
                    "call_id": format!("call_mock{id}"), "name": tool,
                    "input": input.as_str().unwrap_or_default(), "status": "completed"}),
        Move::Call { tool, input, .. } => {
            json!({"type": "function_call", "id": format!("fc_mock{id}"),
                    "call_id": format!("call_mock{id}"), "name": tool,
                    "arguments": input.to_string(), "status": "completed"})
        }
        Move::Say(text) => json!({"type": "message", "id": format!("msg_mock{id}"),
                    "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}),
    };
    let mut events = vec![(
        "response.created".to_owned(),
        json!({"type": "response.created", "response": {"id": response, "status": "in_progress"}}),
    )];
    if let Move::Say(text) = step {
        events.push((
            "response.output_item.added".into(),
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "message", "id": format!("msg_mock{id}"), "role": "assistant",
                            "status": "in_progress", "content": []}}),
        ));
        events.push((
            "response.output_text.delta".into(),
            json!({"type": "response.output_text.delta", "item_id": format!("msg_mock{id}"),
                   "output_index": 0, "content_index": 0, "delta": text}),
        ));
    }
    events.push((
        "response.output_item.done".into(),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
    ));
    events.push((
        "response.completed".into(),
        json!({"type": "response.completed", "response": {"id": response, "status": "completed",
               "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
                         "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
                         "total_tokens": 110}}}),
    ));
    events
}
