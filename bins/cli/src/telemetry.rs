//! Observability at the edge: the session's events as spans and log
//! records ([`spans`]), written to the local JSON log ([`log`]) and, in a
//! binary built with an exporter, sent over OTLP. Nothing here reaches into
//! the session: it only watches the event stream a surface already receives.

pub mod log;
pub mod spans;
