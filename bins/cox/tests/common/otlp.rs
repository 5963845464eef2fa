//! A loopback OTLP/HTTP collector for the tests of export: it takes the
//! exporter's protobuf requests (keep-alive, TCP_NODELAY), answers as told,
//! and decodes what it kept with the published OTLP messages.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;

/// How the collector answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// 200 with an empty success.
    Ok,
    /// 500, every time.
    Fail,
    /// Reads the request and never answers.
    Never,
}

/// One request the collector took.
#[derive(Clone, Debug)]
pub struct Request {
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

pub struct Collector {
    /// The base URL (`http://127.0.0.1:PORT`).
    pub url: String,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Collector {
    pub fn start(answer: Answer) -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&requests);
        thread::spawn(move || {
            for socket in listener.incoming() {
                let Ok(socket) = socket else { return };
                let kept = Arc::clone(&kept);
                thread::spawn(move || serve(socket, answer, &kept));
            }
        });
        Collector { url, requests }
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// Every trace request, decoded.
    pub fn traces(&self) -> Vec<ExportTraceServiceRequest> {
        self.requests()
            .iter()
            .filter(|r| r.path == "/v1/traces")
            .map(|r| ExportTraceServiceRequest::decode(r.body.as_slice()).unwrap())
            .collect()
    }

    /// Every span, in the order they came.
    pub fn spans(&self) -> Vec<Span> {
        self.traces()
            .into_iter()
            .flat_map(|t| t.resource_spans)
            .flat_map(|r| r.scope_spans)
            .flat_map(|s| s.spans)
            .collect()
    }

    /// Every log record, in the order they came.
    pub fn logs(&self) -> Vec<LogRecord> {
        self.requests()
            .iter()
            .filter(|r| r.path == "/v1/logs")
            .map(|r| ExportLogsServiceRequest::decode(r.body.as_slice()).unwrap())
            .flat_map(|l| l.resource_logs)
            .flat_map(|r| r.scope_logs)
            .flat_map(|s| s.log_records)
            .collect()
    }
}

fn serve(socket: TcpStream, answer: Answer, kept: &Mutex<Vec<Request>>) {
    socket.set_nodelay(true).unwrap();
    let mut reader = BufReader::new(socket);
    loop {
        let mut first = String::new();
        if reader.read_line(&mut first).unwrap_or(0) == 0 {
            return;
        }
        let path = first.split(' ').nth(1).unwrap_or_default().to_owned();
        let mut headers = Vec::new();
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                let (name, value) = (name.trim().to_ascii_lowercase(), value.trim().to_owned());
                if name == "content-length" {
                    length = value.parse().unwrap();
                }
                headers.push((name, value));
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        kept.lock().unwrap().push(Request {
            path,
            headers,
            body,
        });
        let head = match answer {
            Answer::Ok => {
                "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n"
            }
            Answer::Fail => "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n",
            Answer::Never => {
                thread::sleep(Duration::from_secs(60));
                return;
            }
        };
        if reader.get_mut().write_all(head.as_bytes()).is_err() {
            return;
        }
    }
}

/// The value of `key` among `attributes`.
pub fn attr<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a any_value::Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v: &AnyValue| v.value.as_ref())
}

/// The string `key` holds, if it is one.
pub fn attr_str<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    match attr(attributes, key) {
        Some(any_value::Value::StringValue(s)) => Some(s),
        _ => None,
    }
}
