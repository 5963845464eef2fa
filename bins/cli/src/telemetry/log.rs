//! The local JSON log's two writers: [`JsonLayer`], the tracing layer
//! that writes every diagnostic as one JSON line naming the span it came
//! in (the translator's current turn or session), and [`TraceLog`], the
//! [`Sink`] that hands finished spans and their log records to it.
//!
//! Invariants:
//! - one JSON object per line, always; a line that cannot be written is
//!   dropped, never a failed run;
//! - the span lines and records go through tracing (target `cox::trace`),
//!   so the filter of `core.log_level` and `COX_LOG` applies to them as to
//!   everything else;
//! - ids are written in OpenTelemetry's hex (32 and 16 digits), so a line
//!   can be found by the trace id a backend shows.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value as Json, json};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::Context;

use super::spans::{LogRecord, Severity, Sink, SpanId, SpanRecord, TraceId, Value};

/// The target of span lines and records.
pub const TARGET: &str = "cox::trace";

/// The span diagnostics belong to now, as the translator last said.
pub type Current = Arc<Mutex<Option<(TraceId, SpanId)>>>;

/// A trace id as OpenTelemetry writes it.
#[must_use]
pub fn trace_hex(id: TraceId) -> String {
    format!("{id:032x}")
}

/// A span id as OpenTelemetry writes it.
#[must_use]
pub fn span_hex(id: SpanId) -> String {
    format!("{id:016x}")
}

/// Writes each tracing event as one JSON line to `out`.
pub struct JsonLayer<W: Write + Send + 'static> {
    out: Mutex<W>,
    current: Current,
}

impl<W: Write + Send + 'static> JsonLayer<W> {
    #[must_use]
    pub fn new(out: W, current: Current) -> Self {
        JsonLayer {
            out: Mutex::new(out),
            current,
        }
    }

    fn write(&self, line: &str) {
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = out
            .write_all(line.as_bytes())
            .and_then(|()| out.write_all(b"\n"));
    }
}

/// The fields of an event, as JSON.
#[derive(Default)]
struct Fields(Map<String, Json>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_owned(), format!("{value:?}").into());
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_owned(), value.into());
    }
}

impl<S, W> tracing_subscriber::Layer<S> for JsonLayer<W>
where
    S: tracing::Subscriber,
    W: Write + Send + 'static,
{
    fn on_event(&self, event: &tracing::Event<'_>, _cx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let meta = event.metadata();
        if meta.target() == TARGET
            && let Some(Json::String(line)) = fields.0.get("line")
        {
            self.write(line);
            return;
        }
        let mut line = Map::new();
        line.insert("timestamp".into(), crate::env::now_rfc3339().into());
        line.insert("level".into(), meta.level().as_str().into());
        line.insert("target".into(), meta.target().into());
        line.insert("fields".into(), Json::Object(fields.0));
        let current = *self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((trace, span)) = current {
            line.insert("trace_id".into(), trace_hex(trace).into());
            line.insert("span_id".into(), span_hex(span).into());
        }
        self.write(&Json::Object(line).to_string());
        if !exporters_own(meta.target())
            && let Some(export) = super::export::active()
        {
            export.log(diagnostic(event, current));
        }
    }
}

/// Whether `target` is the exporter's own machinery (OpenTelemetry and the
/// HTTP stack under it), whose lines stay in the file: sending them would
/// feed the exporter its own noise.
fn exporters_own(target: &str) -> bool {
    ["opentelemetry", "hyper", "h2", "reqwest", "rustls", "tower"]
        .iter()
        .any(|own| target.starts_with(own))
}

/// A diagnostic as a log record for the exporter: its message as the body,
/// its other fields as attributes, in the span open when it came.
fn diagnostic(event: &tracing::Event<'_>, context: Option<(TraceId, SpanId)>) -> LogRecord {
    #[derive(Default)]
    struct Attributes {
        message: Option<String>,
        attrs: Vec<(&'static str, Value)>,
    }
    impl Visit for Attributes {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            self.record_str(field, &format!("{value:?}"));
        }
        fn record_str(&mut self, field: &Field, value: &str) {
            if field.name() == "message" {
                self.message = Some(value.to_owned());
            } else {
                self.attrs
                    .push((field.name(), Value::Str(value.to_owned())));
            }
        }
        fn record_i64(&mut self, field: &Field, value: i64) {
            self.attrs.push((field.name(), Value::Int(value)));
        }
        fn record_u64(&mut self, field: &Field, value: u64) {
            self.attrs.push((field.name(), value.into()));
        }
        fn record_f64(&mut self, field: &Field, value: f64) {
            self.attrs.push((field.name(), Value::Float(value)));
        }
        fn record_bool(&mut self, field: &Field, value: bool) {
            self.attrs.push((field.name(), Value::Bool(value)));
        }
    }
    let meta = event.metadata();
    let mut fields = Attributes::default();
    event.record(&mut fields);
    fields
        .attrs
        .push(("cox.log.target", Value::Str(meta.target().to_owned())));
    let severity = match *meta.level() {
        tracing::Level::ERROR => Severity::Error,
        tracing::Level::WARN => Severity::Warn,
        tracing::Level::INFO => Severity::Info,
        _ => Severity::Debug,
    };
    LogRecord {
        context,
        at: std::time::SystemTime::now(),
        severity,
        body: fields
            .message
            .map_or(std::borrow::Cow::Borrowed(meta.name()), Into::into),
        attrs: fields.attrs,
    }
}

/// Hands spans and records to the JSON log, through tracing.
#[derive(Debug, Default)]
pub struct TraceLog;

fn attrs_json(attrs: &[(&'static str, Value)]) -> Json {
    let mut map = Map::new();
    for (key, value) in attrs {
        let value = match value {
            Value::Str(s) => json!(s),
            Value::Int(n) => json!(n),
            Value::Float(f) => json!(f),
            Value::Bool(b) => json!(b),
            Value::Strs(v) => json!(v),
        };
        map.insert((*key).to_owned(), value);
    }
    Json::Object(map)
}

fn rfc3339(at: std::time::SystemTime) -> String {
    let since = at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    crate::env::rfc3339(since.as_secs(), since.subsec_millis())
}

impl Sink for TraceLog {
    fn span(&mut self, span: SpanRecord) {
        let ms = span
            .end
            .duration_since(span.start)
            .unwrap_or_default()
            .as_secs_f64()
            * 1000.0;
        let line = json!({
            "timestamp": rfc3339(span.end),
            "level": if span.error.is_some() { "WARN" } else { "INFO" },
            "target": TARGET,
            "span": span.name,
            "trace_id": trace_hex(span.trace),
            "span_id": span_hex(span.id),
            "parent_span_id": span.parent.map(span_hex),
            "start": rfc3339(span.start),
            "duration_ms": ms,
            "attributes": attrs_json(&span.attrs),
            "error": span.error,
            "links": span.links.iter().map(|(t, s)| json!({"trace_id": trace_hex(*t), "span_id": span_hex(*s)})).collect::<Vec<_>>(),
        })
        .to_string();
        if span.error.is_some() {
            tracing::warn!(target: TARGET, line = %line);
        } else {
            tracing::info!(target: TARGET, line = %line);
        }
    }

    fn log(&mut self, record: LogRecord) {
        let level = match record.severity {
            Severity::Debug => "DEBUG",
            Severity::Info => "INFO",
            Severity::Warn => "WARN",
            Severity::Error => "ERROR",
        };
        let mut line = json!({
            "timestamp": rfc3339(record.at),
            "level": level,
            "target": TARGET,
            "fields": {"message": record.body},
            "attributes": attrs_json(&record.attrs),
        });
        if let Some((trace, span)) = record.context {
            line["trace_id"] = trace_hex(trace).into();
            line["span_id"] = span_hex(span).into();
        }
        let line = line.to_string();
        match record.severity {
            Severity::Debug => tracing::debug!(target: TARGET, line = %line),
            Severity::Info => tracing::info!(target: TARGET, line = %line),
            Severity::Warn => tracing::warn!(target: TARGET, line = %line),
            Severity::Error => tracing::error!(target: TARGET, line = %line),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt;

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn diagnostics_name_the_current_span_and_spans_are_lines_of_their_own() {
        let out = Shared::default();
        let current: Current = Arc::default();
        let subscriber = tracing_subscriber::registry().with(
            JsonLayer::new(out.clone(), Arc::clone(&current))
                .with_filter(tracing_subscriber::EnvFilter::new("info")),
        );
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(server = "fs", "before any span");
            *current.lock().unwrap() = Some((0xabc, 0x12));
            tracing::warn!(n = 3_u64, "inside the turn");
            tracing::debug!("filtered out");
            let mut sink = TraceLog;
            let t = std::time::SystemTime::now();
            sink.span(SpanRecord {
                trace: 0xabc,
                id: 0x34,
                parent: Some(0x12),
                name: "chat",
                start: t,
                end: t + std::time::Duration::from_millis(5),
                attrs: vec![("cox.tool.success", Value::Bool(true))],
                error: None,
                links: Vec::new(),
            });
        });
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<Json> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0]["fields"]["message"], "before any span");
        assert!(lines[0].get("trace_id").is_none());
        assert_eq!(lines[1]["level"], "WARN");
        assert_eq!(lines[1]["fields"]["n"], 3);
        assert_eq!(lines[1]["trace_id"], "00000000000000000000000000000abc");
        assert_eq!(lines[1]["span_id"], "0000000000000012");
        assert_eq!(lines[2]["span"], "chat");
        assert_eq!(lines[2]["parent_span_id"], "0000000000000012");
        assert_eq!(lines[2]["attributes"]["cox.tool.success"], true);
        assert_eq!(lines[2]["duration_ms"], 5.0);
    }
}
