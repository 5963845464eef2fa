//! Observability at the edge: the session's events as spans and log
//! records ([`spans`]), for the local JSON log and, in a binary built with
//! an exporter, OTLP. Nothing here reaches into the session: it only
//! watches the event stream a surface already receives.

pub mod spans;
