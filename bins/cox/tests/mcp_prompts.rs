//! MCP prompts and resources from outside, against the reference server
//! (`@modelcontextprotocol/server-everything` over stdio, installed by
//! `.ci/run`): a server's prompts are offered as `/mcp__<server>__<prompt>`
//! commands and expand into what the model is sent; `@<server>:<uri>`
//! attaches a resource; what cannot be had refuses the turn before any
//! model call. Each test has its own COX_HOME and HOME.

mod common;

use std::path::Path;
use std::process::Output;

use common::mcp::*;
use common::{Env, lines, text};
use serde_json::Value;

/// One headless turn on `prompt`; the scenario answers "done".
fn ask(env: &Env, config: &Path, prompt: &str) -> Output {
    let scenario = write(
        &env.home.path().join("scenario.toml"),
        "[[turn]]\ntext = \"done\"\n",
    );
    cox(env)
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", prompt, "--output-format", "stream-json"])
        .args(["--mcp-config", &config.display().to_string()])
        .output()
        .unwrap()
}

/// The prompt the turn started with: what the model was sent.
fn sent(out: &Output) -> String {
    lines(out)
        .into_iter()
        .find(|e| e["type"] == "turn_started")
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .unwrap_or_else(|| panic!("no turn started:\n{}", text(out)))
}

fn model_calls(out: &Output) -> usize {
    lines(out)
        .into_iter()
        .filter(|e| e["type"] == "usage")
        .count()
}

#[test]
fn a_servers_prompts_are_commands_that_expand_into_the_prompt() {
    let env = Env::new();
    let Some(config) = everything_config(&env) else {
        return;
    };
    let out = ask(
        &env,
        &config,
        "/mcp__every__args-prompt Paris Île-de-France",
    );
    assert!(out.status.success(), "{}", text(&out));
    let commands: Vec<Value> = lines(&out)
        .into_iter()
        .find(|e| e["type"] == "commands")
        .map(|e| e["commands"].as_array().unwrap().clone())
        .unwrap_or_else(|| panic!("no commands event:\n{}", text(&out)));
    let args = commands
        .iter()
        .find(|c| c["name"] == "mcp__every__args-prompt")
        .unwrap_or_else(|| panic!("{commands:?}"));
    assert_eq!(args["hint"], "<city> [state]");
    assert!(
        args["description"]
            .as_str()
            .unwrap()
            .contains("two arguments")
    );
    assert!(
        commands
            .iter()
            .any(|c| c["name"] == "mcp__every__simple-prompt" && c.get("hint").is_none()),
        "a prompt without arguments has no hint: {commands:?}"
    );
    // The last argument takes the rest of the line.
    assert_eq!(sent(&out), "What's weather in Paris, Île-de-France?");
    assert_eq!(model_calls(&out), 1);

    let out = ask(&env, &config, "/mcp__every__simple-prompt");
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(sent(&out), "This is a simple prompt without arguments.");
}

#[test]
fn a_prompt_that_cannot_be_had_refuses_the_turn_before_the_model() {
    let env = Env::new();
    let Some(config) = everything_config(&env) else {
        return;
    };
    let cases = [
        (
            "/mcp__every__args-prompt",
            "/mcp__every__args-prompt: missing <city> (usage: /mcp__every__args-prompt <city> [state])",
        ),
        (
            "/mcp__every__simple-prompt extra words",
            "/mcp__every__simple-prompt: it takes no arguments",
        ),
        (
            "/mcp__every__no-such",
            "/mcp__every__no-such: MCP server 'every' has no such prompt; it has /mcp__every__",
        ),
        (
            "/mcp__elsewhere__x",
            "/mcp__elsewhere__x: no connected MCP server is called 'elsewhere'",
        ),
    ];
    for (prompt, why) in cases {
        let out = ask(&env, &config, prompt);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{prompt}: refused: {}",
            text(&out)
        );
        let errors: Vec<String> = lines(&out)
            .into_iter()
            .filter(|e| e["type"] == "notice" && e["level"] == "error")
            .map(|e| e["text"].as_str().unwrap().to_owned())
            .collect();
        assert!(
            errors.iter().any(|e| e.starts_with(why)),
            "{prompt}: {errors:?}"
        );
        assert_eq!(model_calls(&out), 0, "{prompt}: the model was not asked");
        // The turn is recorded as typed.
        assert_eq!(sent(&out), prompt);
    }
}

#[test]
fn a_mention_attaches_the_resource_and_unknown_ones_stay_as_typed() {
    let env = Env::new();
    let Some(config) = everything_config(&env) else {
        return;
    };
    let prompt = "summarise @every:demo://resource/dynamic/text/7. and mail me@example:com";
    let out = ask(&env, &config, prompt);
    assert!(out.status.success(), "{}", text(&out));
    let model_saw = sent(&out);
    let (typed, attached) = model_saw.split_once("\n\n").unwrap();
    assert_eq!(typed, prompt, "the prompt is kept as typed");
    assert!(
        attached.starts_with(
            "<resource server=\"every\" uri=\"demo://resource/dynamic/text/7\" \
             mimeType=\"text/plain\">\nResource 7: This is a plaintext resource"
        ),
        "{attached}"
    );
    assert!(attached.ends_with("\n</resource>"), "{attached}");

    // A binary resource is named, not pasted.
    let out = ask(
        &env,
        &config,
        "look at @every:demo://resource/dynamic/blob/2",
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(sent(&out).contains("[binary, "), "{}", sent(&out));

    // A server that is not configured: sent as typed, with a warning.
    let out = ask(&env, &config, "read @nowhere:demo://x");
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(sent(&out), "read @nowhere:demo://x");
    assert!(
        notices(&out)
            .iter()
            .any(|n| n.contains("no MCP server is called 'nowhere'")),
        "{:?}",
        notices(&out)
    );

    // A resource the server does not have refuses the turn.
    let out = ask(&env, &config, "read @every:demo://resource/nothing/here");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(model_calls(&out), 0);
    assert!(
        notices(&out)
            .iter()
            .any(|n| n.starts_with("@every:demo://resource/nothing/here: ")),
        "{:?}",
        notices(&out)
    );
}
