//! OTLP export from the real binary to a loopback collector: the span
//! tree of one session, the attribute types, the logs in their spans, the
//! standard variables, content capture, and a collector that is down, slow
//! or failing (never a failed turn, a bounded exit, the loss counted).

mod common;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use common::otlp::{Answer, Collector, attr, attr_str};
use common::{Env, assert_one_line_error, stderr};
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use serde_json::Value;

/// `hello` (write, then a final answer) exporting to `url`.
fn run_hello(env: &Env, url: &str, vars: &[(&str, &str)]) -> std::process::Output {
    run_hello_with(env, url, vars, &[])
}

/// [`run_hello`] with more arguments.
fn run_hello_with(
    env: &Env,
    url: &str,
    vars: &[(&str, &str)],
    extra: &[&str],
) -> std::process::Output {
    let mut cox = env.cox();
    cox.env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", common::scenario("hello"))
        .env("COX_TELEMETRY_OTEL", "true")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", url);
    for var in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
        "OTEL_SERVICE_NAME",
        "OTEL_RESOURCE_ATTRIBUTES",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
        "OTEL_SDK_DISABLED",
        "OTEL_TRACES_EXPORTER",
        "OTEL_LOGS_EXPORTER",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
    ] {
        cox.env_remove(var);
    }
    for (key, value) in vars {
        cox.env(key, value);
    }
    cox.args([
        "run",
        "-p",
        "do the task",
        "--permission-mode",
        "acceptEdits",
    ])
    .args(extra)
    .output()
    .unwrap()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_session_is_one_trace_of_its_turn_rounds_and_tool_call() {
    let collector = Collector::start(Answer::Ok);
    let env = Env::new();
    let out = run_hello(
        &env,
        &collector.url,
        &[
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "x-team=blue,authorization=Bearer t0k",
            ),
            ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "export says nothing when all is well");

    let spans = collector.spans();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        [
            "chat",
            "chat",
            "execute_tool",
            "invoke_agent cox",
            "invoke_agent cox.turn"
        ]
    );
    // One trace, and every parent is a span of it: no orphan.
    let trace = &spans[0].trace_id;
    assert_eq!(trace.len(), 16);
    assert!(spans.iter().all(|s| &s.trace_id == trace));
    let ids: HashSet<&[u8]> = spans.iter().map(|s| s.span_id.as_slice()).collect();
    let by_name = |name: &str| spans.iter().find(|s| s.name == name).unwrap();
    let session = by_name("invoke_agent cox");
    let turn = by_name("invoke_agent cox.turn");
    assert!(session.parent_span_id.is_empty());
    assert_eq!(turn.parent_span_id, session.span_id);
    for span in spans
        .iter()
        .filter(|s| s.name == "chat" || s.name == "execute_tool")
    {
        assert_eq!(span.parent_span_id, turn.span_id, "{}", span.name);
        assert!(ids.contains(span.parent_span_id.as_slice()));
        assert!(span.start_time_unix_nano <= span.end_time_unix_nano);
    }

    // Attributes keep their types.
    let chats: Vec<_> = spans.iter().filter(|s| s.name == "chat").collect();
    let first = chats
        .iter()
        .find(|s| attr(&s.attributes, "cox.provider.call.ordinal") == Some(&Any::IntValue(1)))
        .expect("the first round");
    assert_eq!(first.kind, SpanKind::Client as i32);
    assert!(matches!(
        attr(&first.attributes, "gen_ai.usage.input_tokens"),
        Some(Any::IntValue(_))
    ));
    assert!(matches!(
        attr(&first.attributes, "cox.cost.usd"),
        Some(Any::DoubleValue(_))
    ));
    assert!(matches!(
        attr(&first.attributes, "cox.usage.estimated"),
        Some(Any::BoolValue(_))
    ));
    match attr(&first.attributes, "gen_ai.response.finish_reasons") {
        Some(Any::ArrayValue(array)) => {
            assert_eq!(
                array.values[0].value,
                Some(Any::StringValue("tool_use".into()))
            );
        }
        other => panic!("finish_reasons: {other:?}"),
    }
    let tool = by_name("execute_tool");
    assert_eq!(
        attr_str(&tool.attributes, "gen_ai.tool.name"),
        Some("write")
    );
    assert_eq!(
        attr(&tool.attributes, "cox.tool.success"),
        Some(&Any::BoolValue(true))
    );
    assert!(matches!(
        attr(&tool.attributes, "cox.tool.output_bytes"),
        Some(Any::IntValue(n)) if *n > 0
    ));
    assert_eq!(
        attr_str(&turn.attributes, "cox.turn.stop_reason"),
        Some("end_turn")
    );
    assert_eq!(
        attr_str(&session.attributes, "gen_ai.operation.name"),
        Some("invoke_agent")
    );

    // The resource: cox by default, plus what the variable adds.
    let request = &collector.traces()[0];
    let resource = request.resource_spans[0].resource.as_ref().unwrap();
    assert_eq!(attr_str(&resource.attributes, "service.name"), Some("cox"));
    assert_eq!(
        attr_str(&resource.attributes, "deployment.environment"),
        Some("test")
    );
    // The headers of the variable went with every request.
    for request in collector.requests() {
        let header = |name: &str| {
            request
                .headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(header("x-team"), Some("blue"), "{}", request.path);
        assert_eq!(header("authorization"), Some("Bearer t0k"));
        assert_eq!(header("content-type"), Some("application/x-protobuf"));
    }

    // Logs name their spans: the tool's record its execute_tool span, the
    // diagnostics of the turn the turn.
    let logs = collector.logs();
    assert!(!logs.is_empty());
    assert!(logs.iter().all(|l| l.time_unix_nano > 0));
    let in_trace: Vec<_> = logs.iter().filter(|l| !l.trace_id.is_empty()).collect();
    assert!(in_trace.iter().all(|l| &l.trace_id == trace));
    assert!(in_trace.iter().all(|l| ids.contains(l.span_id.as_slice())));
    let body = |l: &opentelemetry_proto::tonic::logs::v1::LogRecord| match l
        .body
        .as_ref()
        .and_then(|b| b.value.as_ref())
    {
        Some(Any::StringValue(s)) => s.clone(),
        _ => String::new(),
    };
    // The translator's record of the call is in the tool's span; the
    // driver's diagnostics of the same call in the turn's.
    let in_span = |text: &str, span: &[u8]| {
        logs.iter()
            .any(|l| body(l) == text && l.span_id.as_slice() == span)
    };
    assert!(in_span("tool done", &tool.span_id));
    assert!(in_span("tool call", &turn.span_id));
    assert!(in_span("tool done", &turn.span_id));

    // The local log names the same trace.
    let log = env.log();
    assert!(log.contains(&hex(trace)), "{log}");
    assert!(log.contains("everything reached the collector"), "{log}");
}

#[test]
fn content_is_exported_only_after_the_opt_in() {
    let content = [
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    ];
    let keys = |collector: &Collector| -> HashSet<String> {
        collector
            .spans()
            .iter()
            .flat_map(|s| s.attributes.iter().map(|a| a.key.clone()))
            .collect()
    };
    let off = Collector::start(Answer::Ok);
    let out = run_hello(&Env::new(), &off.url, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen = keys(&off);
    assert!(seen.contains("gen_ai.tool.name"));
    for key in content {
        assert!(!seen.contains(key), "{key} without the opt-in");
    }

    let on = Collector::start(Answer::Ok);
    let out = run_hello(
        &Env::new(),
        &on.url,
        &[("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen = keys(&on);
    for key in content {
        assert!(seen.contains(key), "{key} after the opt-in");
    }
    let tool = on
        .spans()
        .into_iter()
        .find(|s| s.name == "execute_tool")
        .unwrap();
    let arguments: Value =
        serde_json::from_str(attr_str(&tool.attributes, "gen_ai.tool.call.arguments").unwrap())
            .unwrap();
    assert_eq!(arguments["path"], "hello.txt");
}

#[test]
fn the_config_endpoint_wins_over_the_variable() {
    let collector = Collector::start(Answer::Ok);
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        format!("[telemetry]\nendpoint = \"{}/\"\n", collector.url),
    )
    .unwrap();
    // The variable points at nothing; the config at the collector.
    let out = run_hello(
        &env,
        "http://127.0.0.1:9",
        &[("OTEL_SERVICE_NAME", "cox-smoke")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let paths: HashSet<String> = collector.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        HashSet::from(["/v1/traces".to_owned(), "/v1/logs".to_owned()])
    );
    let request = &collector.traces()[0];
    let resource = request.resource_spans[0].resource.as_ref().unwrap();
    assert_eq!(
        attr_str(&resource.attributes, "service.name"),
        Some("cox-smoke")
    );
}

/// A collector that is down, never answers or fails: the turn is the same,
/// the exit waits a bounded time, and the log counts what was lost.
#[test]
fn a_collector_that_is_down_slow_or_failing_costs_no_turn() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let never = Collector::start(Answer::Never);
    let fail = Collector::start(Answer::Fail);
    for (what, url) in [
        ("down", closed.as_str()),
        ("never answering", never.url.as_str()),
        ("failing", fail.url.as_str()),
    ] {
        let env = Env::new();
        let started = Instant::now();
        let out = run_hello(&env, url, &[]);
        let took = started.elapsed();
        assert_eq!(out.status.code(), Some(0), "{what}: {}", stderr(&out));
        assert_eq!(
            std::fs::read_to_string(env.work.path().join("hello.txt")).unwrap(),
            "hi\n"
        );
        // The exporter's own timeout is 10 s; the exit waits far less.
        assert!(took < Duration::from_secs(6), "{what}: {took:?}");
        let log = env.log();
        let lost = log
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|l| l["fields"]["message"] == "telemetry: not everything reached the collector")
            .unwrap_or_else(|| panic!("{what}: {log}"));
        assert!(
            lost["fields"]["spans_lost"].as_u64().unwrap() >= 5,
            "{lost}"
        );
        assert_eq!(lost["fields"]["spans"], 5, "{lost}");
    }
}

#[test]
fn a_failed_span_carries_its_error_type_and_status() {
    let collector = Collector::start(Answer::Ok);
    let env = Env::new();
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", common::scenario("denied"))
        .env("COX_TELEMETRY_OTEL", "true")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url)
        .args(["run", "-p", "do the task"])
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "{}", stderr(&out));
    let spans = collector.spans();
    let tool = spans
        .iter()
        .find(|s| s.name == "execute_tool")
        .expect("a tool span");
    assert_eq!(attr_str(&tool.attributes, "error.type"), Some("denied"));
    assert_eq!(
        tool.status.as_ref().map(|s| s.code),
        Some(StatusCode::Error as i32)
    );
}

#[test]
fn export_asked_of_a_build_without_it_is_refused_naming_the_feature() {
    let headless = std::path::Path::new(env!("CARGO_BIN_EXE_cox")).with_file_name("cox-headless");
    if !headless.exists() {
        eprintln!("skipped: cox-headless is not built beside cox");
        return;
    }
    let env = Env::new();
    let out = std::process::Command::new(headless)
        .env("COX_HOME", env.home.path())
        .env("HOME", env.home.path())
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", common::scenario("hello"))
        .env("COX_TELEMETRY_OTEL", "true")
        .current_dir(env.work.path())
        .args(["-p", "do the task"])
        .output()
        .unwrap();
    assert_one_line_error(&out, "built without the `otel` cargo feature");
    assert!(!env.work.path().join("hello.txt").exists());
}

#[test]
fn a_bad_telemetry_setting_is_refused_with_its_line() {
    for (text, needle) in [
        (
            "[telemetry]\notel = true\nendpoint = \"localhost:4318\"\n",
            ":3: [telemetry] endpoint `localhost:4318`: expected an http:// or https:// URL",
        ),
        (
            "[telemetry]\nlog_days = 0\n",
            ":2: [telemetry] log_days must be 1 or more",
        ),
        (
            "[telemetry]\notell = true\n",
            ":2: unknown key `otell` in `[telemetry]`",
        ),
    ] {
        let env = Env::new();
        let config = env.home.path().join("config.toml");
        std::fs::write(&config, text).unwrap();
        let out = env.run("hello", &[]);
        assert_one_line_error(&out, &format!("{}{needle}", config.display()));
    }
    let env = Env::new();
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", common::scenario("hello"))
        .env("COX_TELEMETRY_OTEL", "perhaps")
        .args(["run", "-p", "x"])
        .output()
        .unwrap();
    assert_one_line_error(&out, "COX_TELEMETRY_OTEL=perhaps: expected true or false");
}

/// OpenTelemetry's own switches: the SDK off sends nothing, an exporter
/// `none` leaves its signal out, and a protocol cox does not speak is
/// refused before the turn, never ignored.
#[test]
fn opentelemetrys_own_switches_take_effect() {
    let collector = Collector::start(Answer::Ok);
    let out = run_hello(
        &Env::new(),
        &collector.url,
        &[("OTEL_SDK_DISABLED", "true")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(collector.requests().is_empty());

    let out = run_hello(
        &Env::new(),
        &collector.url,
        &[("OTEL_TRACES_EXPORTER", "none")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(collector.spans().is_empty());
    assert!(!collector.logs().is_empty(), "the logs still go");

    let collector = Collector::start(Answer::Ok);
    let out = run_hello(
        &Env::new(),
        &collector.url,
        &[("OTEL_LOGS_EXPORTER", "none")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(collector.logs().is_empty());
    assert!(!collector.spans().is_empty(), "the spans still go");

    let out = run_hello(
        &Env::new(),
        &collector.url,
        &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
    );
    assert_one_line_error(
        &out,
        "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: cox sends OTLP over http/protobuf only",
    );
}

#[test]
fn a_header_that_is_not_key_value_is_said_and_the_rest_sent() {
    let collector = Collector::start(Answer::Ok);
    let env = Env::new();
    let out = run_hello(
        &env,
        &collector.url,
        &[("OTEL_EXPORTER_OTLP_HEADERS", "x-team=blue,oops")],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stderr(&out).trim(),
        "cox: warning: OTEL_EXPORTER_OTLP_HEADERS: `oops` is not key=value; it is not sent"
    );
    assert!(
        collector.requests()[0]
            .headers
            .contains(&("x-team".to_owned(), "blue".to_owned()))
    );
}

#[test]
fn a_session_is_found_by_its_id_and_a_resumed_run_links_to_it() {
    let env = Env::new();
    let first = Collector::start(Answer::Ok);
    let out = run_hello(&env, &first.url, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let root = first
        .spans()
        .into_iter()
        .find(|s| s.name == "invoke_agent cox")
        .unwrap();
    let id = attr_str(&root.attributes, "cox.session.id")
        .unwrap()
        .to_owned();
    // The trace id is the session's ULID, as 128 bits.
    let ulid = u128::from_str_radix(&hex(&root.trace_id), 16).unwrap();
    assert_eq!(ulid_text(ulid), id);

    let again = Collector::start(Answer::Ok);
    let out = run_hello_with(&env, &again.url, &[], &["--resume", &id]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let spans = again.spans();
    let session = spans.iter().find(|s| s.name == "invoke_agent cox").unwrap();
    assert_eq!(
        attr_str(&session.attributes, "cox.session.id"),
        Some(id.as_str())
    );
    assert_ne!(
        session.trace_id, root.trace_id,
        "a run is a trace of its own"
    );
    assert_eq!(session.links.len(), 1);
    assert_eq!(session.links[0].trace_id, root.trace_id);
    assert_eq!(session.links[0].span_id, root.span_id);
}

/// A ULID's text (Crockford base 32) from its 128 bits.
fn ulid_text(mut bits: u128) -> String {
    const DIGITS: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let mut text = [0u8; 26];
    for digit in text.iter_mut().rev() {
        *digit = DIGITS[(bits & 31) as usize];
        bits >>= 5;
    }
    String::from_utf8(text.to_vec()).unwrap()
}

#[test]
fn doctor_says_where_export_goes_and_hides_header_values() {
    let env = Env::new();
    let doctor = |vars: &[(&str, &str)]| {
        let mut cox = env.cox();
        for var in ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_SERVICE_NAME"] {
            cox.env_remove(var);
        }
        cox.envs(vars.iter().copied()).arg("doctor");
        let out = cox.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines()
            .find(|l| l.contains("telemetry"))
            .unwrap_or_else(|| panic!("no telemetry row: {text}"))
            .to_owned()
    };
    let off = doctor(&[]);
    assert!(off.contains("OTLP export off"), "{off}");
    assert!(off.contains("kept 14 days"), "{off}");
    let on = doctor(&[
        ("COX_TELEMETRY_OTEL", "true"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://otlp.example:4318"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=s3cret"),
        ("OTEL_SERVICE_NAME", "agents"),
    ]);
    assert!(
        on.contains("traces to https://otlp.example:4318/v1/traces"),
        "{on}"
    );
    assert!(on.contains("service agents"), "{on}");
    assert!(on.contains("headers x-api-key"), "{on}");
    assert!(!on.contains("s3cret"), "{on}");
}

#[test]
fn an_exporter_that_cannot_start_is_one_warning_and_the_turn_runs() {
    let env = Env::new();
    let out = run_hello(
        &env,
        "http://127.0.0.1:9",
        &[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://bad host/v1/traces",
        )],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("cox: warning: telemetry: cannot start the OTLP exporter: traces to http://bad host/v1/traces"),
        "{err}"
    );
    assert!(env.work.path().join("hello.txt").exists());
}

/// A repository cannot choose where a person's traces go.
#[test]
fn a_project_config_cannot_turn_export_on_or_point_it() {
    let collector = Collector::start(Answer::Ok);
    let env = Env::new();
    std::fs::create_dir_all(env.work.path().join(".cox")).unwrap();
    std::fs::write(
        env.work.path().join(".cox/config.toml"),
        format!(
            "[telemetry]\notel = true\nendpoint = \"{}\"\n",
            collector.url
        ),
    )
    .unwrap();
    let out = env.run("hello", &["--permission-mode", "acceptEdits"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ignoring [telemetry] in project config"),
        "{}",
        stderr(&out)
    );
    assert!(collector.requests().is_empty());
}

#[test]
fn config_show_says_where_the_export_switch_came_from() {
    let env = Env::new();
    let out = env
        .cox()
        .env("COX_TELEMETRY_OTEL", "true")
        .args(["config", "show", "--sources"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("telemetry.otel"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("COX_TELEMETRY_OTEL"), "{line}");
    assert!(text.contains("telemetry.log_days"), "{text}");
}

/// `OTEL_EXPORTER_OTLP_TIMEOUT` bounds each export: a collector that never
/// answers fails the batch within it, long before the exit's own budget.
#[test]
fn the_timeout_variable_bounds_an_export() {
    let never = Collector::start(Answer::Never);
    let env = Env::new();
    let started = Instant::now();
    let out = run_hello(&env, &never.url, &[("OTEL_EXPORTER_OTLP_TIMEOUT", "150")]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(took < Duration::from_millis(1500), "{took:?}");
    let log = env.log();
    let lost = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["fields"]["message"] == "telemetry: not everything reached the collector")
        .unwrap_or_else(|| panic!("{log}"));
    assert_eq!(lost["fields"]["timed_out"], false, "{lost}");
    assert!(
        lost["fields"]["span_batches_failed"].as_u64().unwrap() >= 1,
        "{lost}"
    );
}

/// With content captured, what leaves the machine went through the
/// redaction scrub: no secret a tool printed reaches the collector or the
/// log, in spans, records or diagnostics.
#[test]
fn captured_content_is_scrubbed_before_it_leaves() {
    const SECRETS: [&str; 3] = [
        "sk-proj-EXAMPLEexample0123456789",
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_EXAMPLEexampleEXAMPLEexample012345",
    ];
    let collector = Collector::start(Answer::Ok);
    let env = Env::new();
    let fixture = common::scenario("secrets").with_extension("env");
    std::fs::copy(fixture, env.work.path().join("config.env")).unwrap();
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", common::scenario("secrets"))
        .env("COX_TELEMETRY_OTEL", "true")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url)
        .env("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
        .env("COX_LOG", "debug")
        .args(["run", "-p", "what is in config.env?"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = collector.requests();
    assert!(requests.iter().any(|r| r.path == "/v1/traces"));
    let log = env.log();
    for secret in SECRETS {
        for request in &requests {
            assert!(
                !request
                    .body
                    .windows(secret.len())
                    .any(|w| w == secret.as_bytes()),
                "{secret} sent to {}",
                request.path
            );
        }
        assert!(!log.contains(secret), "{secret} in the log");
    }
    let tool = collector
        .spans()
        .into_iter()
        .find(|s| s.name == "execute_tool")
        .unwrap();
    let result = attr_str(&tool.attributes, "gen_ai.tool.call.result").unwrap();
    assert!(result.contains("«redacted»"), "{result}");
}

/// Every attribute of the spec's table, on its span, with its type.
#[test]
fn every_attribute_of_the_table_is_there_with_its_type() {
    #[derive(Clone, Copy, Debug)]
    enum Kind {
        Str,
        Int,
        Float,
        Bool,
        Strs,
    }
    use Kind::{Bool, Float, Int, Str, Strs};
    let table: [(&str, &[(&str, Kind)]); 4] = [
        (
            "invoke_agent cox",
            &[
                ("gen_ai.operation.name", Str),
                ("gen_ai.agent.name", Str),
                ("gen_ai.conversation.id", Str),
                ("cox.session.id", Str),
                ("cox.cwd", Str),
            ],
        ),
        (
            "invoke_agent cox.turn",
            &[
                ("cox.turn.id", Str),
                ("cox.turn", Int),
                ("cox.job", Str),
                ("cox.tier", Str),
                ("cox.turn.stop_reason", Str),
            ],
        ),
        (
            "chat",
            &[
                ("gen_ai.provider.name", Str),
                ("gen_ai.request.model", Str),
                ("gen_ai.response.model", Str),
                ("gen_ai.response.finish_reasons", Strs),
                ("gen_ai.usage.input_tokens", Int),
                ("gen_ai.usage.output_tokens", Int),
                ("cox.usage.cache_read_tokens", Int),
                ("cox.usage.cache_write_tokens", Int),
                ("cox.usage.estimated", Bool),
                ("cox.cost.usd", Float),
                ("cox.provider.call.ordinal", Int),
                ("cox.retry.count", Int),
            ],
        ),
        (
            "execute_tool",
            &[
                ("gen_ai.tool.name", Str),
                ("gen_ai.tool.call.id", Str),
                ("cox.tool.subject", Str),
                ("cox.tool.risk", Str),
                ("cox.tool.duration_ms", Int),
                ("cox.tool.output_bytes", Int),
                ("cox.tool.success", Bool),
                ("cox.archive.id", Str),
            ],
        ),
    ];
    let collector = Collector::start(Answer::Ok);
    let out = run_hello(&Env::new(), &collector.url, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let spans = collector.spans();
    for (name, attributes) in table {
        let of_name: Vec<_> = spans.iter().filter(|s| s.name == name).collect();
        assert!(!of_name.is_empty(), "no {name} span");
        for span in of_name {
            for (key, kind) in attributes {
                let value = attr(&span.attributes, key);
                let fits = match (kind, value) {
                    (Str, Some(Any::StringValue(s))) => !s.is_empty(),
                    (Int, Some(Any::IntValue(_)))
                    | (Float, Some(Any::DoubleValue(_)))
                    | (Bool, Some(Any::BoolValue(_))) => true,
                    (Strs, Some(Any::ArrayValue(a))) => a
                        .values
                        .iter()
                        .all(|v| matches!(v.value, Some(Any::StringValue(_)))),
                    _ => false,
                };
                assert!(fits, "{name}: {key} should be {kind:?}, is {value:?}");
            }
        }
    }
}

/// `[telemetry] log_days` is the log's retention: a file past it goes, one
/// within it stays.
#[test]
fn log_days_sets_how_long_the_log_is_kept() {
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[telemetry]\nlog_days = 2\n",
    )
    .unwrap();
    let logs = env.home.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let day = std::time::Duration::from_secs(86_400);
    for (name, age) in [("cox.log.2026-11-01", 3 * day), ("cox.log.2026-11-02", day)] {
        std::fs::File::create(logs.join(name))
            .unwrap()
            .set_modified(std::time::SystemTime::now() - age)
            .unwrap();
    }
    let out = env.run("hello", &["--permission-mode", "acceptEdits"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !logs.join("cox.log.2026-11-01").exists(),
        "3 days old, kept 2"
    );
    assert!(logs.join("cox.log.2026-11-02").exists(), "1 day old");
}
