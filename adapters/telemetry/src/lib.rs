//! OTLP/HTTP export (protobuf) of the spans and log records an edge makes
//! of a session ([`cox_protocol::telemetry`]), through `opentelemetry-otlp`.
//!
//! The spans arrive finished, with the ids, times, parents and links cox
//! chose, so they go straight to a batch span processor as `SpanData`; no
//! tracer makes ids of its own. Records go through a logger provider with
//! their trace context set. Both processors export on their own threads
//! with the blocking HTTP client: taking a span never waits on the network.
//! The exporters themselves are built on a thread of their own (the HTTP
//! client's TLS roots take milliseconds to load), and what comes before
//! they are ready waits in a queue: starting export costs a session
//! nothing.
//!
//! Invariants:
//! - headers, the timeout, the service name and the resource attributes
//!   come from the standard `OTEL_*` variables, read by the SDK;
//! - every batch is counted as sent or failed, so what never reached the
//!   collector can be said at exit ([`Delivery`]);
//! - [`Otlp::shutdown`] returns within the time it is given, whatever the
//!   collector does.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant, SystemTime};

use cox_protocol::telemetry::{Delivery, Export, LogRecord, Severity, SpanRecord, Value};
use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, LoggerProvider as _};
use opentelemetry::trace::{
    Link, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue};
use opentelemetry_otlp::{
    LogExporter, RetryPolicy, SpanExporter, WithExportConfig as _, WithHttpConfig as _,
};
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

/// The built exporters: a batch span processor and a logger provider.
struct Pipes {
    spans: Arc<BatchSpanProcessor>,
    logs: SdkLoggerProvider,
    logger: SdkLogger,
    scope: InstrumentationScope,
}

/// A retry or two for a collector that stumbles, short enough that one
/// that is down costs the exit a fraction of its flush budget.
fn retry_policy() -> RetryPolicy {
    RetryPolicy::recommended()
        .with_max_retries(2)
        .with_initial_delay(Duration::from_millis(100))
        .with_max_delay(Duration::from_millis(400))
        .with_max_jitter(Duration::from_millis(50))
}

/// The HTTP client's timeout: the longest of `OTEL_EXPORTER_OTLP_TIMEOUT`
/// and its per-signal variants (milliseconds), 10 s when none is set. The
/// exporter still bounds each signal's export (retries included) by its
/// own variable.
fn client_timeout() -> Duration {
    [
        "OTEL_EXPORTER_OTLP_TIMEOUT",
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
        "OTEL_EXPORTER_OTLP_LOGS_TIMEOUT",
    ]
    .iter()
    .filter_map(|name| std::env::var(name).ok()?.trim().parse::<u64>().ok())
    .max()
    .map_or(Duration::from_secs(10), Duration::from_millis)
}

/// Where a span or record is while the exporters are being built.
enum Stage {
    Building(Vec<Item>),
    Running(Arc<Pipes>),
    /// The exporters could not be built: everything is counted as lost.
    Failed,
}

enum Item {
    Span(SpanRecord),
    Log(LogRecord),
}

/// An OTLP exporter of traces and logs.
pub struct Otlp {
    stage: Arc<Mutex<Stage>>,
    /// Says when the build is over (the sender drops).
    built: Mutex<Option<mpsc::Receiver<()>>>,
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
    /// URLs). The exporters are built on a thread of their own; when they
    /// cannot be (a URL or a variable that is not one), `warn` is told why
    /// in one line, and what was handed over is counted as lost.
    #[must_use]
    pub fn start(traces: &str, logs: &str, warn: impl FnOnce(String) + Send + 'static) -> Otlp {
        let stage = Arc::new(Mutex::new(Stage::Building(Vec::new())));
        let span_counts = Arc::new(Counts::default());
        let log_counts = Arc::new(Counts::default());
        let (done, built) = mpsc::channel();
        let (traces, logs) = (traces.to_owned(), logs.to_owned());
        let (target, counts) = (
            Arc::clone(&stage),
            (Arc::clone(&span_counts), Arc::clone(&log_counts)),
        );
        let spawned = std::thread::Builder::new()
            .name("cox-otlp-start".into())
            .spawn(move || {
                // Nothing that may log runs under the lock: a diagnostic
                // comes back here as a record.
                match Pipes::build(&traces, &logs, counts) {
                    Ok(pipes) => {
                        let pipes = Arc::new(pipes);
                        loop {
                            let items = {
                                let mut stage =
                                    target.lock().unwrap_or_else(PoisonError::into_inner);
                                match &mut *stage {
                                    Stage::Building(items) if items.is_empty() => {
                                        *stage = Stage::Running(Arc::clone(&pipes));
                                        break;
                                    }
                                    Stage::Building(items) => std::mem::take(items),
                                    Stage::Running(_) | Stage::Failed => break,
                                }
                            };
                            for item in items {
                                pipes.take(item);
                            }
                        }
                    }
                    Err(why) => {
                        *target.lock().unwrap_or_else(PoisonError::into_inner) = Stage::Failed;
                        warn(why);
                    }
                }
                drop(done);
            });
        if spawned.is_err() {
            *stage.lock().unwrap_or_else(PoisonError::into_inner) = Stage::Failed;
        }
        Otlp {
            stage,
            built: Mutex::new(Some(built)),
            span_counts,
            log_counts,
        }
    }

    fn take(&self, item: Item) {
        let mut stage = self.stage.lock().unwrap_or_else(PoisonError::into_inner);
        match &mut *stage {
            Stage::Building(items) => items.push(item),
            Stage::Running(pipes) => {
                let pipes = Arc::clone(pipes);
                drop(stage);
                pipes.take(item);
            }
            Stage::Failed => {}
        }
    }
}

impl Pipes {
    /// The exporters, processors and logger, counting into `counts`
    /// (spans, logs).
    fn build(
        traces: &str,
        logs: &str,
        counts: (Arc<Counts>, Arc<Counts>),
    ) -> Result<Pipes, String> {
        let (span_counts, log_counts) = counts;
        let resource = resource();
        // One HTTP client (one runtime thread, one TLS setup) for both
        // signals. Built here, off any async runtime, as it must be.
        let client: Arc<dyn opentelemetry_http::HttpClient> = Arc::new(
            reqwest::blocking::Client::builder()
                .timeout(client_timeout())
                .build()
                .map_err(|e| format!("the HTTP client: {e}"))?,
        );
        let span_exporter = SpanExporter::builder()
            .with_http()
            .with_endpoint(traces)
            .with_shared_http_client(Arc::clone(&client))
            .with_retry_policy(retry_policy())
            .build()
            .map_err(|e| format!("traces to {traces}: {e}"))?;
        let log_exporter = LogExporter::builder()
            .with_http()
            .with_endpoint(logs)
            .with_shared_http_client(client)
            .with_retry_policy(retry_policy())
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
        Ok(Pipes {
            spans: Arc::new(spans),
            logs,
            logger,
            scope,
        })
    }

    fn take(&self, item: Item) {
        match item {
            Item::Span(span) => self.spans.on_end(span_data(span, &self.scope)),
            Item::Log(record) => self.log(record),
        }
    }

    fn log(&self, record: LogRecord) {
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

    /// Flushes and stops both signals side by side, each within `within`;
    /// whether either ran out of time.
    fn shutdown(&self, within: Duration) -> bool {
        let spans = Arc::clone(&self.spans);
        let logs = self.logs.clone();
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
        spans_timed_out || logs_timed_out
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
        self.take(Item::Span(span));
    }

    fn log(&self, record: LogRecord) {
        self.log_counts.handed.fetch_add(1, Ordering::Relaxed);
        self.take(Item::Log(record));
    }

    fn shutdown(&self, within: Duration) -> Delivery {
        let deadline = Instant::now() + within;
        // The build first (it takes milliseconds), within the budget.
        let waited = self
            .built
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .map(|built| built.recv_timeout(within));
        let build_timed_out = matches!(waited, Some(Err(mpsc::RecvTimeoutError::Timeout)));
        let stage = std::mem::replace(
            &mut *self.stage.lock().unwrap_or_else(PoisonError::into_inner),
            Stage::Failed,
        );
        let flush_timed_out = match stage {
            Stage::Running(pipes) => {
                pipes.shutdown(deadline.saturating_duration_since(Instant::now()))
            }
            Stage::Building(_) | Stage::Failed => false,
        };
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Delivery {
            spans: load(&self.span_counts.handed),
            spans_sent: load(&self.span_counts.sent),
            span_batches_failed: load(&self.span_counts.failed_batches),
            logs: load(&self.log_counts.handed),
            logs_sent: load(&self.log_counts.sent),
            log_batches_failed: load(&self.log_counts.failed_batches),
            timed_out: build_timed_out || flush_timed_out,
        }
    }
}
