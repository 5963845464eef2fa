//! OTLP export, as far as this crate knows it: whether the user asked for
//! it (`[telemetry] otel`, `COX_TELEMETRY_OTEL`), the exporter a binary
//! built with one provides ([`provide`]), the one running now
//! ([`active`]), and its bounded end at exit ([`finish`]).
//!
//! Invariants:
//! - export asked for in a binary without an exporter is an error at
//!   startup naming the `otel` feature, never a silent no-op;
//! - an exporter that cannot start (a bad variable) is one warning, and the
//!   session runs on without it: export never costs a turn;
//! - [`finish`] waits at most [`FLUSH_BUDGET`], and whatever did not reach
//!   the collector is counted in the log.

use std::sync::{Arc, OnceLock, PoisonError, RwLock};
use std::time::Duration;

use anyhow::{Result, bail};
use cox_protocol::telemetry::{Delivery, Export};

/// The variable that turns export on (or off) for one run.
pub const OTEL_VAR: &str = "COX_TELEMETRY_OTEL";

/// The longest [`finish`] waits for the collector at exit.
pub const FLUSH_BUDGET: Duration = Duration::from_millis(1800);

/// Where the exporter sends, whole URLs (see [`endpoints`]). Headers,
/// the timeout and the resource come from the standard variables, which the
/// exporter reads itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    pub traces: String,
    pub logs: String,
}

/// The collector's default base URL (OTLP/HTTP).
pub const DEFAULT_BASE: &str = "http://localhost:4318";

/// Where traces and logs go: a per-signal variable
/// (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `…_LOGS_ENDPOINT`) as it is;
/// else the base URL of `[telemetry] endpoint`, else of
/// `OTEL_EXPORTER_OTLP_ENDPOINT`, else [`DEFAULT_BASE`], with `/v1/traces`
/// and `/v1/logs` appended. Empty variables count as unset.
#[must_use]
pub fn endpoints(configured: Option<&str>, var: impl Fn(&str) -> Option<String>) -> Settings {
    let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    let base = configured
        .map(str::to_owned)
        .or_else(|| var("OTEL_EXPORTER_OTLP_ENDPOINT"))
        .unwrap_or_else(|| DEFAULT_BASE.to_owned());
    let base = base.trim().trim_end_matches('/');
    Settings {
        traces: var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .unwrap_or_else(|| format!("{base}/v1/traces")),
        logs: var("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT").unwrap_or_else(|| format!("{base}/v1/logs")),
    }
}

/// What starts an exporter: set by a binary built with one.
pub type Starter = fn(&Settings) -> Result<Arc<dyn Export>, String>;

static STARTER: OnceLock<Starter> = OnceLock::new();
static ACTIVE: RwLock<Option<Arc<dyn Export>>> = RwLock::new(None);

/// Makes `starter` the way this process exports (once; later calls are
/// no-ops).
pub fn provide(starter: Starter) {
    let _ = STARTER.set(starter);
}

/// Whether this binary can export at all.
#[must_use]
pub fn available() -> bool {
    STARTER.get().is_some()
}

/// The exporter running now, if any.
#[must_use]
pub fn active() -> Option<Arc<dyn Export>> {
    ACTIVE
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// Whether export is asked for: `COX_TELEMETRY_OTEL` when set, else the
/// config's `otel`.
///
/// # Errors
/// The variable is neither true nor false: one line naming it.
pub fn wanted(configured: Option<bool>) -> Result<bool> {
    wanted_from(&|name| std::env::var(name).ok(), configured)
}

/// [`wanted`] with the variables of `var`.
///
/// # Errors
/// As [`wanted`].
pub fn wanted_from(var: &dyn Fn(&str) -> Option<String>, configured: Option<bool>) -> Result<bool> {
    match var(OTEL_VAR) {
        Some(text) => parse_switch(&text)
            .ok_or_else(|| anyhow::anyhow!("{OTEL_VAR}={text}: expected true or false")),
        None => Ok(configured.unwrap_or(false)),
    }
}

fn parse_switch(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Some(true),
        "false" | "0" | "no" | "off" | "" => Some(false),
        _ => None,
    }
}

/// Starts export when `on`: the exporter this binary provides, sending
/// where [`endpoints`] says for the config's `endpoint`. A bad `OTEL_EXPORTER_OTLP_HEADERS` entry, or an exporter that
/// cannot start, is a warning on stderr and in the log.
///
/// # Errors
/// Export is asked for and this binary was built without an exporter.
pub fn start(on: bool, endpoint: Option<&str>) -> Result<()> {
    if !on {
        return Ok(());
    }
    let var = |name: &str| std::env::var(name).ok();
    start_with(signals(&var)?, endpoint, &var)
}

/// Starts export of `signals` (as [`signals`] resolved them), with the
/// endpoint and headers of `var`'s variables.
///
/// # Errors
/// As [`start`].
pub fn start_with(
    signals: Signals,
    endpoint: Option<&str>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<()> {
    if !signals.traces && !signals.logs {
        tracing::info!("telemetry: OpenTelemetry's variables turn every signal off");
        return Ok(());
    }
    let Some(starter) = STARTER.get() else {
        bail!(
            "telemetry: OTLP export is on ([telemetry] otel or {OTEL_VAR}) but this binary was \
             built without the `otel` cargo feature (cox-headless never has it): use `cox`, or \
             turn export off"
        );
    };
    for warning in header_warnings(var("OTEL_EXPORTER_OTLP_HEADERS").as_deref()) {
        warn(&warning);
    }
    match starter(&endpoints(endpoint, var)) {
        Ok(export) => {
            let export: Arc<dyn Export> = if signals.traces && signals.logs {
                export
            } else {
                Arc::new(Only {
                    inner: export,
                    signals,
                })
            };
            *ACTIVE.write().unwrap_or_else(PoisonError::into_inner) = Some(export);
        }
        Err(why) => cannot_start(&why),
    }
    Ok(())
}

/// Which signals OpenTelemetry's own variables leave on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signals {
    pub traces: bool,
    pub logs: bool,
}

/// OpenTelemetry's switches, as its SDKs read them: `OTEL_SDK_DISABLED`
/// turns export off whatever else says on; `OTEL_TRACES_EXPORTER` and
/// `OTEL_LOGS_EXPORTER` are `otlp` (the default) or `none`; the protocol
/// variables (`OTEL_EXPORTER_OTLP_PROTOCOL`, and the per-signal ones) may
/// only name `http/protobuf`, the one cox speaks.
///
/// # Errors
/// A value cox cannot honour: one line naming the variable, never ignored.
pub fn signals(var: &dyn Fn(&str) -> Option<String>) -> Result<Signals> {
    let set = |name: &str| {
        var(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    if let Some(text) = set("OTEL_SDK_DISABLED") {
        match parse_switch(&text) {
            Some(true) => {
                return Ok(Signals {
                    traces: false,
                    logs: false,
                });
            }
            Some(false) => {}
            None => bail!("OTEL_SDK_DISABLED={text}: expected true or false"),
        }
    }
    let exporter = |name: &str| -> Result<bool> {
        match set(name).as_deref() {
            None | Some("otlp") => Ok(true),
            Some("none") => Ok(false),
            Some(other) => bail!(
                "{name}={other}: cox exports over OTLP only; set otlp, or none to send nothing"
            ),
        }
    };
    let signals = Signals {
        traces: exporter("OTEL_TRACES_EXPORTER")?,
        logs: exporter("OTEL_LOGS_EXPORTER")?,
    };
    let mut protocols = vec!["OTEL_EXPORTER_OTLP_PROTOCOL"];
    if signals.traces {
        protocols.push("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL");
    }
    if signals.logs {
        protocols.push("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL");
    }
    for name in protocols {
        if let Some(protocol) = set(name)
            && protocol != "http/protobuf"
        {
            bail!(
                "{name}={protocol}: cox sends OTLP over http/protobuf only; unset it or set \
                 http/protobuf"
            );
        }
    }
    Ok(signals)
}

/// An exporter with one of its signals turned off.
struct Only {
    inner: Arc<dyn Export>,
    signals: Signals,
}

impl Export for Only {
    fn span(&self, span: cox_protocol::telemetry::SpanRecord) {
        if self.signals.traces {
            self.inner.span(span);
        }
    }

    fn log(&self, record: cox_protocol::telemetry::LogRecord) {
        if self.signals.logs {
            self.inner.log(record);
        }
    }

    fn shutdown(&self, within: std::time::Duration) -> Delivery {
        self.inner.shutdown(within)
    }
}

/// Says that the exporter could not start, and why (an exporter built in
/// the background says it when it knows).
pub fn cannot_start(why: &str) {
    warn(&format!(
        "telemetry: cannot start the OTLP exporter: {why}; this run exports nothing"
    ));
}

fn warn(text: &str) {
    eprintln!("cox: warning: {text}");
    tracing::warn!(warning = %text, "telemetry");
}

/// One line per entry of `OTEL_EXPORTER_OTLP_HEADERS` that is not
/// `key=value` (the exporter leaves such an entry out).
#[must_use]
pub fn header_warnings(headers: Option<&str>) -> Vec<String> {
    let Some(headers) = headers else {
        return Vec::new();
    };
    headers
        .split(',')
        .filter(|entry| !entry.trim().is_empty())
        .filter(|entry| {
            entry
                .split_once('=')
                .is_none_or(|(key, _)| key.trim().is_empty())
        })
        .map(|entry| {
            format!(
                "OTEL_EXPORTER_OTLP_HEADERS: `{}` is not key=value; it is not sent",
                entry.trim()
            )
        })
        .collect()
}

/// Ends export: sends what is queued, waiting at most [`FLUSH_BUDGET`],
/// and writes what was delivered to the log (a warning when anything was
/// lost). Nothing when export was off.
pub fn finish() -> Option<Delivery> {
    let export = ACTIVE
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .take()?;
    let delivery = export.shutdown(FLUSH_BUDGET);
    let (spans_lost, logs_lost) = delivery.lost();
    if spans_lost > 0 || logs_lost > 0 {
        tracing::warn!(
            spans = delivery.spans,
            spans_lost,
            span_batches_failed = delivery.span_batches_failed,
            logs = delivery.logs,
            logs_lost,
            log_batches_failed = delivery.log_batches_failed,
            timed_out = delivery.timed_out,
            "telemetry: not everything reached the collector"
        );
    } else {
        tracing::info!(
            spans = delivery.spans,
            logs = delivery.logs,
            "telemetry: everything reached the collector"
        );
    }
    Some(delivery)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(set: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + Copy + 'a {
        move |name: &str| {
            set.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn the_switch_reads_the_usual_spellings_and_refuses_the_rest() {
        assert_eq!(parse_switch("TRUE"), Some(true));
        assert_eq!(parse_switch(" 1 "), Some(true));
        assert_eq!(parse_switch("false"), Some(false));
        assert_eq!(parse_switch(""), Some(false));
        assert_eq!(parse_switch("maybe"), None);
    }

    #[test]
    fn the_endpoints_follow_the_variables_and_the_config() {
        let none = endpoints(None, vars(&[]));
        assert_eq!(none.traces, "http://localhost:4318/v1/traces");
        assert_eq!(none.logs, "http://localhost:4318/v1/logs");
        let base = vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "https://otlp.example/otlp/")]);
        assert_eq!(
            endpoints(None, base).traces,
            "https://otlp.example/otlp/v1/traces"
        );
        // The config wins over the base variable.
        let both = endpoints(Some("http://127.0.0.1:9999"), base);
        assert_eq!(both.logs, "http://127.0.0.1:9999/v1/logs");
        // A per-signal variable wins over both, as it is.
        let signal = endpoints(
            Some("http://127.0.0.1:9999"),
            vars(&[
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t.example/x"),
                ("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", ""),
            ]),
        );
        assert_eq!(signal.traces, "http://t.example/x");
        assert_eq!(signal.logs, "http://127.0.0.1:9999/v1/logs");
    }

    #[test]
    fn opentelemetrys_switches_turn_signals_off_or_are_refused() {
        let on = Signals {
            traces: true,
            logs: true,
        };
        let off = Signals {
            traces: false,
            logs: false,
        };
        assert_eq!(signals(&vars(&[])).unwrap(), on);
        assert_eq!(
            signals(&vars(&[("OTEL_SDK_DISABLED", "true")])).unwrap(),
            off
        );
        assert_eq!(
            signals(&vars(&[("OTEL_SDK_DISABLED", "false")])).unwrap(),
            on
        );
        assert_eq!(
            signals(&vars(&[("OTEL_TRACES_EXPORTER", "none")])).unwrap(),
            Signals {
                traces: false,
                logs: true
            }
        );
        assert_eq!(
            signals(&vars(&[
                ("OTEL_LOGS_EXPORTER", "none"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
                ("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "grpc"),
            ]))
            .unwrap(),
            Signals {
                traces: true,
                logs: false
            }
        );
        for (name, value, said) in [
            ("OTEL_SDK_DISABLED", "maybe", "OTEL_SDK_DISABLED=maybe"),
            (
                "OTEL_TRACES_EXPORTER",
                "zipkin",
                "OTEL_TRACES_EXPORTER=zipkin",
            ),
            (
                "OTEL_EXPORTER_OTLP_PROTOCOL",
                "grpc",
                "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
            ),
            (
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
                "http/json",
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json",
            ),
        ] {
            let err = signals(&vars(&[(name, value)])).unwrap_err().to_string();
            assert!(err.starts_with(said), "{err}");
            assert_eq!(err.lines().count(), 1);
        }
    }

    #[test]
    fn a_header_that_is_not_key_value_is_named() {
        assert!(header_warnings(None).is_empty());
        assert!(header_warnings(Some("a=1, b = 2")).is_empty());
        let warnings = header_warnings(Some("a=1,oops,=x"));
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("`oops`"), "{warnings:?}");
        assert!(warnings[1].contains("`=x`"), "{warnings:?}");
    }
}
