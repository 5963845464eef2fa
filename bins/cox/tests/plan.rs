//! The model's plan (the `todo` tool): said as a `plan` event in
//! stream-json, kept in the rollout, rebuilt on resume and carried into
//! every turn's volatile block; a bad plan is an error the model reads.

mod common;

use common::{Env, lines, scenario, stderr};
use serde_json::Value;

#[test]
fn a_plan_is_an_event_and_a_resumed_session_s_model_is_reminded_of_it() {
    let env = Env::new();
    let out = env.run("plan", &["--output-format", "stream-json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen = lines(&out);
    let plan = seen.iter().find(|l| l["type"] == "plan").unwrap();
    let steps: Vec<(&str, &str)> = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["content"].as_str().unwrap(),
                s["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            ("Read the grammar", "completed"),
            ("Write the parser", "in_progress"),
            ("Run the tests", "pending")
        ]
    );
    let id = seen.last().unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let rollout = std::fs::read_to_string(&env.rollouts()[0]).unwrap();
    assert!(rollout.contains("\"type\":\"plan\""), "kept in the rollout");

    // Resumed, the plan is in the conversation the request carries, not
    // repeated in the system prompt (the scenario checks both).
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario("plan_resumed"))
        .args([
            "run",
            "--resume",
            &id,
            "-p",
            "go on",
            "--output-format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["result"], "Still on the parser.");
}

#[test]
fn a_bad_plan_is_an_error_the_model_reads() {
    let env = Env::new();
    let scenario = env.work.path().join("bad.toml");
    std::fs::write(
        &scenario,
        "[[turn]]\n[[turn.tool_call]]\nname = \"todo\"\ninput = { todos = [{ content = \"x\", status = \"doing\" }] }\n[[turn]]\ntext = \"ok\"\n[turn.expect]\ntool_result_contains = \"status `doing` is not pending, in_progress or completed\"\n",
    )
    .unwrap();
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "plan", "--output-format", "stream-json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !lines(&out).iter().any(|l| l["type"] == "plan"),
        "no plan said"
    );
}
