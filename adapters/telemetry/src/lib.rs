//! OTLP/HTTP export (protobuf) of the spans and log records an edge makes
//! of a session ([`cox_protocol::telemetry`]), through `opentelemetry-otlp`.
//!
//! The spans arrive finished, with the ids, times, parents and links cox
//! chose, so they go straight to a batch span processor as `SpanData`; no
//! tracer makes ids of its own. Records go through a logger provider with
//! their trace context set. Both processors export on their own threads
//! with the blocking HTTP client: taking a span never waits on the network.
//!
//! Invariants:
//! - headers, the timeout, the service name and the resource attributes
//!   come from the standard `OTEL_*` variables, read by the SDK;
//! - every batch is counted as sent or failed, so what never reached the
//!   collector can be said at exit ([`Delivery`]);
//! - [`Otlp::shutdown`] returns within the time it is given, whatever the
//!   collector does.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use cox_protocol::telemetry::{Delivery, Export, LogRecord, Severity, SpanRecord, Value};
use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, LoggerProvider as _};
use opentelemetry::trace::{
    Link, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue};
use opentelemetry_otlp::{LogExporter, SpanExporter, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::logs::{BatchLogProcessor, LogBatch, SdkLogger, SdkLoggerProvider};
use opentelemetry_sdk::trace::{
    BatchSpanProcessor, SpanData, SpanEvents, SpanLinks, SpanProcessor,
};

/// cox's version, on the resource and the instrumentation scope.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Counts of one signal.
#[derive(Debug, Default)]
struct Counts {
    handed: AtomicU64,
    sent: AtomicU64,
    failed_batches: AtomicU64,
}

/// An exporter that counts what it sent and what failed.
#[derive(Debug)]
struct Counted<E> {
    inner: E,
    counts: Arc<Counts>,
}

impl<E> Counted<E> {
    fn settle(&self, n: usize, result: &OTelSdkResult) {
        match result {
            Ok(()) => {
                self.counts.sent.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(_) => {
                self.counts.failed_batches.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

impl<E: opentelemetry_sdk::trace::SpanExporter> opentelemetry_sdk::trace::SpanExporter
    for Counted<E>
{
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let n = batch.len();
        let result = self.inner.export(batch).await;
        self.settle(n, &result);
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

impl<E: opentelemetry_sdk::logs::LogExporter> opentelemetry_sdk::logs::LogExporter for Counted<E> {
    async fn export(&self, batch: LogBatch<'_>) -> OTelSdkResult {
        let n = batch.iter().count();
        let result = self.inner.export(batch).await;
        self.settle(n, &result);
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// A running OTLP exporter of traces and logs.
pub struct Otlp {
    spans: Arc<BatchSpanProcessor>,
    logs: SdkLoggerProvider,
    logger: SdkLogger,
    scope: InstrumentationScope,
    span_counts: Arc<Counts>,
    log_counts: Arc<Counts>,
}

impl std::fmt::Debug for Otlp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Otlp").finish_non_exhaustive()
    }
}

/// The resource of cox's telemetry: the SDK's (with `OTEL_SERVICE_NAME`
/// and `OTEL_RESOURCE_ATTRIBUTES`), named `cox` when neither names the
/// service, with cox's version unless the variables set one.
fn resource() -> Resource {
    let set = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let attributes = set("OTEL_RESOURCE_ATTRIBUTES").unwrap_or_default();
    let names = |key: &str| {
        attributes
            .split(',')
            .any(|pair| pair.split_once('=').is_some_and(|(k, _)| k.trim() == key))
    };
    let mut builder = Resource::builder();
    if set("OTEL_SERVICE_NAME").is_none() && !names("service.name") {
        builder = builder.with_service_name("cox");
    }
    if !names("service.version") {
        builder = builder.with_attribute(KeyValue::new("service.version", VERSION));
    }
    builder.build()
}

impl Otlp {
    /// Starts exporting spans to `traces` and records to `logs` (whole
    /// URLs).
    ///
    /// # Errors
    /// An exporter cannot be built (a URL or a variable that is not one):
    /// the reason, in one line.
    pub fn start(traces: &str, logs: &str) -> Result<Otlp, String> {
        let resource = resource();
        let span_counts = Arc::new(Counts::default());
        let log_counts = Arc::new(Counts::default());
        let span_exporter = SpanExporter::builder()
            .with_http()
            .with_endpoint(traces)
            .build()
            .map_err(|e| format!("traces to {traces}: {e}"))?;
        let log_exporter = LogExporter::builder()
            .with_http()
            .with_endpoint(logs)
            .build()
            .map_err(|e| format!("logs to {logs}: {e}"))?;
        let mut span_exporter = Counted {
            inner: span_exporter,
            counts: Arc::clone(&span_counts),
        };
        opentelemetry_sdk::trace::SpanExporter::set_resource(&mut span_exporter, &resource);
        let spans = BatchSpanProcessor::builder(span_exporter).build();
        let log_exporter = Counted {
            inner: log_exporter,
            counts: Arc::clone(&log_counts),
        };
        let logs = SdkLoggerProvider::builder()
            .with_resource(resource)
            .with_log_processor(BatchLogProcessor::builder(log_exporter).build())
            .build();
        let scope = InstrumentationScope::builder("cox")
            .with_version(VERSION)
            .build();
        let logger = logs.logger_with_scope(scope.clone());
        Ok(Otlp {
            spans: Arc::new(spans),
            logs,
            logger,
            scope,
            span_counts,
            log_counts,
        })
    }
}

fn trace_id(id: u128) -> TraceId {
    TraceId::from_bytes(id.to_be_bytes())
}

fn span_id(id: u64) -> SpanId {
    SpanId::from_bytes(id.to_be_bytes())
}

fn context(trace: u128, span: u64) -> SpanContext {
    SpanContext::new(
        trace_id(trace),
        span_id(span),
        TraceFlags::SAMPLED,
        false,
        TraceState::default(),
    )
}

fn value(value: &Value) -> opentelemetry::Value {
    match value {
        Value::Str(s) => s.clone().into(),
        Value::Int(n) => (*n).into(),
        Value::Float(f) => (*f).into(),
        Value::Bool(b) => (*b).into(),
        Value::Strs(v) => opentelemetry::Value::Array(Array::String(
            v.iter().cloned().map(StringValue::from).collect(),
        )),
    }
}

fn any_value(value: &Value) -> AnyValue {
    match value {
        Value::Str(s) => AnyValue::String(s.clone().into()),
        Value::Int(n) => AnyValue::Int(*n),
        Value::Float(f) => AnyValue::Double(*f),
        Value::Bool(b) => AnyValue::Boolean(*b),
        Value::Strs(v) => AnyValue::ListAny(Box::new(
            v.iter()
                .map(|s| AnyValue::String(s.clone().into()))
                .collect(),
        )),
    }
}

/// A finished span as the SDK exports it.
fn span_data(span: SpanRecord, scope: &InstrumentationScope) -> SpanData {
    let mut attributes: Vec<KeyValue> = span
        .attrs
        .iter()
        .map(|(key, v)| KeyValue::new(*key, value(v)))
        .collect();
    let status = match &span.error {
        Some(kind) => {
            if !span.attrs.iter().any(|(key, _)| *key == "error.type") {
                attributes.push(KeyValue::new("error.type", kind.clone()));
            }
            Status::error(kind.clone())
        }
        None => Status::Unset,
    };
    let mut links = SpanLinks::default();
    links.links = span
        .links
        .iter()
        .map(|(trace, id)| Link::with_context(context(*trace, *id)))
        .collect();
    SpanData {
        span_context: context(span.trace, span.id),
        parent_span_id: span.parent.map_or(SpanId::INVALID, span_id),
        parent_span_is_remote: false,
        // A provider round calls out of the process; the rest is cox's own.
        span_kind: if span.name == "chat" {
            SpanKind::Client
        } else {
            SpanKind::Internal
        },
        name: Cow::Borrowed(span.name),
        start_time: span.start,
        end_time: span.end,
        attributes,
        dropped_attributes_count: 0,
        events: SpanEvents::default(),
        links,
        status,
        instrumentation_scope: scope.clone(),
    }
}

fn severity(severity: Severity) -> (opentelemetry::logs::Severity, &'static str) {
    use opentelemetry::logs::Severity as S;
    match severity {
        Severity::Debug => (S::Debug, "DEBUG"),
        Severity::Info => (S::Info, "INFO"),
        Severity::Warn => (S::Warn, "WARN"),
        Severity::Error => (S::Error, "ERROR"),
    }
}

impl Export for Otlp {
    fn span(&self, span: SpanRecord) {
        self.span_counts.handed.fetch_add(1, Ordering::Relaxed);
        self.spans.on_end(span_data(span, &self.scope));
    }

    fn log(&self, record: LogRecord) {
        self.log_counts.handed.fetch_add(1, Ordering::Relaxed);
        let mut out = self.logger.create_log_record();
        out.set_timestamp(record.at);
        out.set_observed_timestamp(SystemTime::now());
        let (number, text) = severity(record.severity);
        out.set_severity_number(number);
        out.set_severity_text(text);
        out.set_body(AnyValue::String(record.body.into_owned().into()));
        for (key, v) in &record.attrs {
            out.add_attribute(*key, any_value(v));
        }
        if let Some((trace, span)) = record.context {
            out.set_trace_context(trace_id(trace), span_id(span), Some(TraceFlags::SAMPLED));
        }
        self.logger.emit(out);
    }

    fn shutdown(&self, within: Duration) -> Delivery {
        let spans = Arc::clone(&self.spans);
        let logs = self.logs.clone();
        // Both signals flush side by side, each within the whole budget.
        let span_end = std::thread::spawn(move || spans.shutdown_with_timeout(within));
        let log_end = std::thread::spawn(move || logs.shutdown_with_timeout(within));
        let timed_out = |end: std::thread::JoinHandle<OTelSdkResult>| {
            matches!(
                end.join(),
                Ok(Err(opentelemetry_sdk::error::OTelSdkError::Timeout(_))) | Err(_)
            )
        };
        let spans_timed_out = timed_out(span_end);
        let logs_timed_out = timed_out(log_end);
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Delivery {
            spans: load(&self.span_counts.handed),
            spans_sent: load(&self.span_counts.sent),
            span_batches_failed: load(&self.span_counts.failed_batches),
            logs: load(&self.log_counts.handed),
            logs_sent: load(&self.log_counts.sent),
            log_batches_failed: load(&self.log_counts.failed_batches),
            timed_out: spans_timed_out || logs_timed_out,
        }
    }
}
