//! Observability at the edge: the session's events as spans and log
//! records ([`spans`]), written to the local JSON log ([`log`]) and, in a
//! binary built with an exporter, sent over OTLP. Nothing here reaches into
//! the session: it only watches the event stream a surface already receives.

pub mod export;
pub mod log;
pub use cox_protocol::telemetry as record;
pub mod spans;

use std::sync::OnceLock;

use std::sync::Arc;

use cox_protocol::catalog::Catalog;
use cox_protocol::telemetry::{Export, LogRecord, Sink, SpanRecord};
use cox_protocol::types::Event;

use log::{Current, TraceLog};
use spans::Spans;

/// The variable that lets spans carry prompts, answers, tool arguments and
/// results (OpenTelemetry's name for it).
pub const CAPTURE_VAR: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

/// The span this process's diagnostics belong to now: one session runs in
/// a process at a time, so one is enough.
#[must_use]
pub fn current() -> Current {
    static CURRENT: OnceLock<Current> = OnceLock::new();
    CURRENT.get_or_init(Current::default).clone()
}

/// Whether content is captured: the variable is `true` (any case).
#[must_use]
pub fn capture_from_env() -> bool {
    std::env::var(CAPTURE_VAR).is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// What a surface feeds its events to: the spans of the session, written
/// to the JSON log, and the process's current span kept up to date. The
/// run's spans end when it is dropped.
pub struct Watch {
    spans: Spans<Tee>,
    /// The process's current span, kept by the session a person started
    /// (a subagent's watch leaves it alone).
    current: Option<Current>,
}

impl Watch {
    /// A watch pricing calls with `catalog`.
    #[must_use]
    pub fn new(catalog: Catalog) -> Watch {
        Watch {
            spans: spans(catalog),
            current: Some(current()),
        }
    }

    /// A subagent's watch: its session span names `parent`
    /// (`cox.session.parent_id`), and the process's current span stays its
    /// parent's.
    #[must_use]
    pub fn subagent(catalog: Catalog, parent: String) -> Watch {
        Watch {
            spans: spans(catalog).with_parent_session(Some(parent)),
            current: None,
        }
    }

    /// Takes one event.
    pub fn event(&mut self, event: &Event) {
        self.spans.event(event);
        if let Some(current) = &self.current {
            *current
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = self.spans.current();
        }
    }
}

/// A session's spans, to the log and the exporter.
fn spans(catalog: Catalog) -> Spans<Tee> {
    Spans::new(
        Tee {
            log: TraceLog,
            export: export::active(),
        },
        catalog,
        capture_from_env(),
    )
}

/// The log, and the exporter when one runs.
struct Tee {
    log: TraceLog,
    export: Option<Arc<dyn Export>>,
}

impl Sink for Tee {
    fn span(&mut self, span: SpanRecord) {
        if let Some(export) = &self.export {
            export.span(span.clone());
        }
        self.log.span(span);
    }

    fn log(&mut self, record: LogRecord) {
        if let Some(export) = &self.export {
            export.log(record.clone());
        }
        self.log.log(record);
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.spans.finish();
        if let Some(current) = &self.current {
            *current
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        }
    }
}
