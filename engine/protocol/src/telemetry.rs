//! What an edge makes of a session's events for observability, and where it
//! goes: finished spans, log records, their typed attributes, the [`Sink`]
//! a translator writes to and the [`Export`] port an OTLP exporter fills.
//! Ids are OpenTelemetry's sizes (128-bit trace, 64-bit span), never 0.
//! Plain data: nothing here does I/O.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

/// A trace's id (128 bits, never 0).
pub type TraceId = u128;
/// A span's id (64 bits, never 0).
pub type SpanId = u64;

/// An attribute's value, typed as OpenTelemetry types it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Strs(Vec<String>),
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(s.to_owned())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Str(s)
    }
}
impl From<u64> for Value {
    fn from(n: u64) -> Self {
        Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}
impl From<u32> for Value {
    fn from(n: u32) -> Self {
        Value::Int(i64::from(n))
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}
impl From<f64> for Value {
    fn from(f: f64) -> Self {
        Value::Float(f)
    }
}

/// Attributes, in the order they were set.
pub type Attrs = Vec<(&'static str, Value)>;

/// A finished span.
#[derive(Clone, Debug)]
pub struct SpanRecord {
    pub trace: TraceId,
    pub id: SpanId,
    pub parent: Option<SpanId>,
    pub name: &'static str,
    pub start: SystemTime,
    pub end: SystemTime,
    pub attrs: Attrs,
    /// `error.type` of a failed span (its status is then ERROR).
    pub error: Option<String>,
    /// Spans of other traces this one continues (a resumed session's
    /// earlier run).
    pub links: Vec<(TraceId, SpanId)>,
}

/// How much a log record matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Debug,
    Info,
    Warn,
    Error,
}

/// A log record, in the span it belongs to (none before a session's
/// first span).
#[derive(Clone, Debug)]
pub struct LogRecord {
    pub context: Option<(TraceId, SpanId)>,
    pub at: SystemTime,
    pub severity: Severity,
    pub body: Cow<'static, str>,
    pub attrs: Attrs,
}

/// Where spans and records go.
pub trait Sink {
    fn span(&mut self, span: SpanRecord);
    fn log(&mut self, record: LogRecord);
}

/// An exporter of spans and records to somewhere outside the process
/// (OTLP). Taking a span or a record never blocks on the network: it is
/// queued, and sent in the background.
pub trait Export: Send + Sync {
    fn span(&self, span: SpanRecord);
    fn log(&self, record: LogRecord);
    /// Sends what is queued and stops, waiting at most `within`; says what
    /// reached the other end and what did not.
    fn shutdown(&self, within: Duration) -> Delivery;
}

/// What an exporter delivered over its life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Spans handed to the exporter.
    pub spans: u64,
    /// Spans the collector accepted.
    pub spans_sent: u64,
    /// Batches of spans the collector refused or never answered.
    pub span_batches_failed: u64,
    pub logs: u64,
    pub logs_sent: u64,
    pub log_batches_failed: u64,
    /// The shutdown ran out of time with work still queued.
    pub timed_out: bool,
}

impl Delivery {
    /// Spans and records that did not reach the collector.
    #[must_use]
    pub fn lost(&self) -> (u64, u64) {
        (
            self.spans.saturating_sub(self.spans_sent),
            self.logs.saturating_sub(self.logs_sent),
        )
    }
}

/// A fresh trace id: the 128 bits of a ULID (time and randomness).
#[must_use]
pub fn new_trace_id() -> TraceId {
    crate::SessionId::generate().0.0.max(1)
}

/// A fresh span id: a ULID's random low 64 bits.
#[must_use]
pub fn new_span_id() -> SpanId {
    // Truncation keeps the random part of the ULID.
    #[allow(clippy::cast_possible_truncation)]
    let low = crate::SessionId::generate().0.0 as u64;
    low.max(1)
}
