//! Scenario files: every mistake is one line naming the file and the place.

use std::path::{Path, PathBuf};

use cox_scripted::{Scenario, ScenarioError};

/// Parses `text` as `tests/x.toml`, expecting an error; returns its line.
fn error_of(text: &str) -> String {
    let error = Scenario::parse(text, "tests/x.toml").expect_err("the scenario should not parse");
    let shown = error.to_string();
    assert!(
        !shown.contains('\n'),
        "the error must be one line: {shown:?}"
    );
    shown
}

#[test]
fn an_unknown_key_names_file_line_and_column() {
    let text = "\
model = \"m\"

[[turn]]
text = \"ok\"

[[turn]]
txt = \"typo\"
";
    let shown = error_of(text);
    assert!(
        shown.starts_with("scenario tests/x.toml:7:1: unknown field `txt`, expected one of"),
        "{shown}"
    );
    assert!(shown.contains("`text`"), "{shown}");
}

#[test]
fn unknown_keys_are_refused_in_nested_tables_too() {
    let in_call = "[[turn]]\n[[turn.tool_call]]\nname = \"read\"\nargs = {}\n";
    assert!(error_of(in_call).starts_with("scenario tests/x.toml:4:1: unknown field `args`"));
    let in_expect = "[[turn]]\ntext = \"a\"\n[turn.expect]\ntool_result = \"x\"\n";
    assert!(
        error_of(in_expect).starts_with("scenario tests/x.toml:4:1: unknown field `tool_result`")
    );
    let in_usage = "[[turn]]\nusage = { input_tokens = 1, output = 2 }\n";
    assert!(
        error_of(in_usage).starts_with("scenario tests/x.toml:2:"),
        "{}",
        error_of(in_usage)
    );
    assert!(error_of(in_usage).contains("unknown field `output`"));
    let at_top = "modle = \"m\"\n[[turn]]\n";
    assert!(error_of(at_top).starts_with("scenario tests/x.toml:1:1: unknown field `modle`"));
}

#[test]
fn a_wrong_type_names_its_line() {
    let shown = error_of("[[turn]]\ntext = \"a\"\ndelay_ms = \"fast\"\n");
    assert!(shown.starts_with("scenario tests/x.toml:3:"), "{shown}");
    assert!(shown.contains("invalid type"), "{shown}");

    let stop = error_of("[[turn]]\nstop = \"later\"\n");
    assert!(stop.starts_with("scenario tests/x.toml:2:"), "{stop}");
    assert!(stop.contains("later"), "{stop}");
}

#[test]
fn bad_toml_syntax_names_its_line() {
    let shown = error_of("[[turn]]\ntext = \"ok\"\n\n[[turn]\ntext = \"b\"\n");
    assert!(shown.starts_with("scenario tests/x.toml:4:"), "{shown}");

    let unterminated = error_of("[[turn]]\ntext = \"never closed\n");
    assert!(
        unterminated.starts_with("scenario tests/x.toml:2:"),
        "{unterminated}"
    );
}

#[test]
fn an_empty_tool_name_names_its_line() {
    let text = "[[turn]]\n[[turn.tool_call]]\nname = \"read\"\n[[turn.tool_call]]\nname = \" \"\n";
    let shown = error_of(text);
    assert_eq!(
        shown,
        "scenario tests/x.toml:5:8: turn 1: tool_call name is empty"
    );
}

#[test]
fn a_missing_tool_name_is_an_error() {
    let shown = error_of("[[turn]]\n[[turn.tool_call]]\ninput = { a = 1 }\n");
    assert!(shown.starts_with("scenario tests/x.toml:"), "{shown}");
    assert!(shown.contains("missing field `name`"), "{shown}");
}

#[test]
fn a_scenario_without_turns_is_an_error() {
    assert_eq!(
        error_of("model = \"m\"\n"),
        "scenario tests/x.toml: no [[turn]]: a scenario scripts at least one response"
    );
    assert!(error_of("").contains("no [[turn]]"));
}

#[test]
fn contradictory_turns_are_refused() {
    let both = error_of("[[turn]]\ntext = \"hi\"\nerror = \"overloaded\"\n");
    assert_eq!(
        both,
        "scenario tests/x.toml:3:9: turn 1: a turn with `error` cannot also script text, thinking or tool_call"
    );
    let zero = error_of("[[turn]]\ntext = \"a\"\n[[turn]]\nchunk_chars = 0\n");
    assert_eq!(
        zero,
        "scenario tests/x.toml:4:15: turn 2: chunk_chars must be at least 1"
    );
}

#[test]
fn a_cut_call_needs_the_output_limit_stop() {
    let cut = error_of("[[turn]]\n[[turn.tool_call]]\nname = \"write\"\ncut = true\n");
    assert_eq!(
        cut,
        "scenario tests/x.toml:4:7: turn 1: a cut tool_call needs stop = \"max_tokens\""
    );
    let second = error_of(
        "[[turn]]\n[[turn.tool_call]]\nname = \"read\"\ncut = false\n[[turn.tool_call]]\nname = \"write\"\ncut = true\n",
    );
    assert!(second.contains("a cut tool_call needs stop"), "{second}");
    let fine =
        "[[turn]]\nstop = \"max_tokens\"\n[[turn.tool_call]]\nname = \"write\"\ncut = true\n";
    assert!(Scenario::parse(fine, "tests/x.toml").is_ok());
}

#[test]
fn a_missing_file_names_its_path() {
    let path = Path::new("/nonexistent/cox/scenario.toml");
    let error = Scenario::load(path).expect_err("no such file");
    assert!(matches!(error, ScenarioError::Read { .. }));
    let shown = error.to_string();
    assert!(
        shown.starts_with("scenario /nonexistent/cox/scenario.toml: cannot read: "),
        "{shown}"
    );
    assert!(shown.contains("os error 2"), "{shown}");
}

#[test]
fn a_full_scenario_parses_with_defaults() {
    let text = "[[turn]]\ntext = \"a\"\n[[turn]]\nerror = \"overloaded\"\n";
    let scenario = Scenario::parse(text, "inline").unwrap();
    assert_eq!(scenario.model(), "scripted");
    assert_eq!(scenario.turn_count(), 2);
    assert_eq!(scenario.origin(), "inline");

    let named = Scenario::parse("model = \"scripted-model\"\n[[turn]]\n", "inline").unwrap();
    assert_eq!(named.model(), "scripted-model");
}

#[test]
fn every_bundled_scenario_parses() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/scenarios");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                text.starts_with("# "),
                "{} must start with a comment saying what it scripts",
                path.display()
            );
            if let Err(error) = Scenario::load(&path) {
                panic!("{error}");
            }
            found.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    assert!(
        found.iter().any(|name| name == "hello.toml"),
        "found only {found:?}"
    );
}

#[test]
fn input_json_carries_what_toml_cannot_and_is_checked() {
    let text = "[[turn]]\n[[turn.tool_call]]\nname = \"read\"\ninput_json = '{\"path\": \"a\", \"limit\": null}'\n";
    Scenario::parse(text, "tests/x.toml").expect("a JSON object with a null parses");

    let both = "[[turn]]\n[[turn.tool_call]]\nname = \"read\"\ninput = { path = \"a\" }\ninput_json = '{}'\n";
    let err = error_of(both);
    assert!(err.starts_with("scenario tests/x.toml:5:"), "{err}");
    assert!(err.contains("both input and input_json"), "{err}");

    let array = "[[turn]]\n[[turn.tool_call]]\nname = \"read\"\ninput_json = '[1]'\n";
    assert!(error_of(array).contains("input_json is not a JSON object"));

    let broken = "[[turn]]\n[[turn.tool_call]]\nname = \"read\"\ninput_json = '{nope'\n";
    let err = error_of(broken);
    assert!(
        err.contains("tests/x.toml:4:") && err.contains("input_json is not JSON"),
        "{err}"
    );
}
