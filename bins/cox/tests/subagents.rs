//! Subagents from outside: the `agent` tool runs a child session with its
//! own rollout, `sessions` row (parent_id set) and ledger rows; several
//! calls of one message run at once; the child is never wider than its
//! parent; costs roll up; definitions narrow tools; nesting stops at the
//! configured depth; an interrupt of the parent stops the child's commands.
//! The children's models are the scenarios' `[[agent]]` scripts.

mod common;

use std::time::{Duration, Instant};

use common::{Env, lines, stderr};
use serde_json::Value;

/// The subagent events of a stream-json run, by child session id.
fn children(out: &[Value]) -> std::collections::BTreeMap<String, Vec<Value>> {
    let mut by_child: std::collections::BTreeMap<String, Vec<Value>> = Default::default();
    for line in out.iter().filter(|l| l["type"] == "subagent") {
        by_child
            .entry(line["session_id"].as_str().unwrap().to_owned())
            .or_default()
            .push(line["event"].clone());
    }
    by_child
}

fn sessions_json(env: &Env, id: Option<&str>) -> Value {
    let mut cmd = env.cox();
    cmd.arg("sessions");
    if let Some(id) = id {
        cmd.arg(id);
    }
    let out = cmd.arg("--json").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn agent_calls_of_one_message_run_at_once_each_a_session_of_its_own() {
    let env = Env::new();
    let out = env.run(
        "subagents",
        &[
            "--permission-mode",
            "bypassPermissions",
            "--output-format",
            "stream-json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen = lines(&out);
    let result = seen.last().unwrap();
    assert_eq!(result["result"], "Both subagents answered.", "{result}");
    let parent = result["session_id"].as_str().unwrap().to_owned();

    // Each child said its whole life, tagged with its id and its call.
    let by_child = children(&seen);
    assert_eq!(by_child.len(), 2, "{by_child:?}");
    for events in by_child.values() {
        assert_eq!(events[0]["type"], "session_started");
        assert_eq!(events.last().unwrap()["type"], "turn_done");
        assert_eq!(events.last().unwrap()["stop"], "end_turn");
    }
    // The parent read both answers, in call order.
    let done: Vec<&Value> = seen
        .iter()
        .filter(|l| l["type"] == "tool_call_done")
        .collect();
    assert!(
        done[0]["result"]["visible"]
            .as_str()
            .unwrap()
            .starts_with("b.flag appeared.")
    );
    assert!(
        done[1]["result"]["visible"]
            .as_str()
            .unwrap()
            .starts_with("Created b.flag.")
    );

    // Three sessions; the children name their parent.
    let rows = sessions_json(&env, None);
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let kids: Vec<&Value> = rows.iter().filter(|r| r["parent_id"] == parent).collect();
    assert_eq!(kids.len(), 2, "{rows:?}");
    for kid in &kids {
        assert!(by_child.contains_key(kid["id"].as_str().unwrap()));
    }

    // The parent's rollout points at each child; each child's holds its
    // own events.
    assert_eq!(env.rollouts().len(), 3);
    let rollout = |id: &str| {
        std::fs::read_to_string(env.home.path().join(format!("sessions/{id}.jsonl"))).unwrap()
    };
    let pointers: Vec<Value> = rollout(&parent)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "subagent")
        .collect();
    assert_eq!(pointers.len(), 2, "only the children's starts");
    assert!(
        pointers
            .iter()
            .all(|p| p["event"]["type"] == "session_started")
    );
    for child in by_child.keys() {
        assert!(rollout(child).contains("\"turn_done\""));
    }
}

#[test]
fn a_child_runs_in_its_parents_mode_and_its_cost_rolls_up() {
    // Headless, default mode: the child's write is refused, as the
    // parent's would be.
    let env = Env::new();
    let out = env.run("subagent_write", &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!env.work.path().join("notes.txt").exists());

    // A config asking for architect mode does not stop the child (it runs
    // on the code tier in the parent's permission mode).
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[core]\nmode = \"architect\"\n",
    )
    .unwrap();
    let out = env.run(
        "subagent_write",
        &["--mode", "editor", "--permission-mode", "acceptEdits"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        env.work.path().join("notes.txt").exists(),
        "the child wrote"
    );

    // A rule that denies the parent denies the child.
    let env = Env::new();
    let out = env.run(
        "subagent_write",
        &[
            "--permission-mode",
            "acceptEdits",
            "--deny",
            "Write(notes.txt)",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !env.work.path().join("notes.txt").exists(),
        "the deny rule held"
    );

    // acceptEdits: the child may write.
    let env = Env::new();
    let out = env.run(
        "subagent_write",
        &[
            "--permission-mode",
            "acceptEdits",
            "--output-format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.work.path().join("notes.txt")).unwrap(),
        "from the subagent\n"
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let total = result["total_cost_usd"].as_f64().unwrap();
    assert!((total - 0.018).abs() < 1e-9, "the run's cost: {total}");
    let id = result["session_id"].as_str().unwrap();
    let detail = sessions_json(&env, Some(id));
    let own = detail["cost_usd"].as_f64().unwrap();
    assert!((own - 0.006).abs() < 1e-9, "the parent's own rows: {own}");
    let with = detail["cost_with_subagents_usd"].as_f64().unwrap();
    assert!((with - 0.018).abs() < 1e-9, "with its subagent: {with}");
    let child = &detail["subagents"][0];
    assert!((child["cost_usd"].as_f64().unwrap() - 0.012).abs() < 1e-9);
    let text = env.cox().args(["sessions", id]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("$0.0060 ($0.0180 with its 1 subagent(s))"),
        "{text}"
    );
    let list = env.cox().arg("sessions").output().unwrap();
    assert!(String::from_utf8_lossy(&list.stdout).contains("↳ Write notes.txt."));
}

#[test]
fn a_definition_narrows_the_child_s_tools_and_a_missing_one_is_named() {
    let env = Env::new();
    let agents = env.work.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reader.md"),
        "---\nname: reader\ndescription: Reads only\ntools: Read, Grep\n---\nYou only read.\n",
    )
    .unwrap();
    // A broken definition is a warning naming it; the session goes on.
    std::fs::write(agents.join("broken.md"), "---\nname: broken\n").unwrap();
    let scenario = env.work.path().join("typed.toml");
    std::fs::write(
        &scenario,
        std::fs::read_to_string(common::scenario("subagent_write"))
            .unwrap()
            .replace(
                "input = { description = \"write it\", prompt = \"Write notes.txt.\" }",
                "input = { description = \"write it\", prompt = \"Write notes.txt.\", subagent_type = \"reader\" }",
            ),
    )
    .unwrap();
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "go", "--permission-mode", "acceptEdits"])
        .args(["--output-format", "stream-json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("broken.md:1:"), "{}", stderr(&out));
    let seen = lines(&out);
    let by_child = children(&seen);
    let events = by_child.values().next().unwrap();
    let tools: Vec<&str> = events[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"read") && tools.contains(&"grep"),
        "{tools:?}"
    );
    assert!(
        !tools.contains(&"write") && !tools.contains(&"bash"),
        "{tools:?}"
    );
    assert!(!env.work.path().join("notes.txt").exists(), "no write tool");

    // An unknown type is a result naming the ones there are.
    std::fs::write(
        &scenario,
        std::fs::read_to_string(&scenario)
            .unwrap()
            .replace("subagent_type = \"reader\"", "subagent_type = \"writer\""),
    )
    .unwrap();
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "go", "--output-format", "stream-json"])
        .output()
        .unwrap();
    let done = lines(&out)
        .into_iter()
        .find(|l| l["type"] == "tool_call_done")
        .unwrap();
    let visible = done["result"]["visible"].as_str().unwrap();
    assert!(
        visible.contains("no agent named `writer` (known: reader)"),
        "{visible}"
    );
}

#[test]
fn nesting_stops_at_the_configured_depth() {
    let tools_of = |env: &Env| {
        let out = env.run(
            "subagent_write",
            &[
                "--permission-mode",
                "acceptEdits",
                "--output-format",
                "stream-json",
            ],
        );
        let seen = lines(&out);
        let parent: Vec<String> = seen[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_owned())
            .collect();
        let child = children(&seen)
            .values()
            .next()
            .map(|events| events[0]["tools"].clone());
        (parent, child)
    };
    // By default a child (depth 1) may start agents of its own.
    let env = Env::new();
    let (parent, child) = tools_of(&env);
    assert!(parent.contains(&"agent".to_owned()));
    assert!(child.unwrap().as_array().unwrap().contains(&"agent".into()));

    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[agents]\nmax_depth = 1\n",
    )
    .unwrap();
    let (parent, child) = tools_of(&env);
    assert!(parent.contains(&"agent".to_owned()));
    assert!(!child.unwrap().as_array().unwrap().contains(&"agent".into()));

    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[agents]\nmax_depth = 0\n",
    )
    .unwrap();
    let (parent, child) = tools_of(&env);
    assert!(!parent.contains(&"agent".to_owned()), "{parent:?}");
    assert!(child.is_none());

    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[agents]\nparallel = 0\n",
    )
    .unwrap();
    let out = env.run("subagent_write", &[]);
    common::assert_one_line_error(&out, "[agents] parallel must be 1 or more");
}

#[test]
fn interrupting_the_parent_stops_the_child_s_commands() {
    let env = Env::new();
    let mut child = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", common::scenario("subagent_sleep"))
        .args(["run", "-p", "go", "--permission-mode", "bypassPermissions"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let work = env.work.path().canonicalize().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while common::sleep_31_in(&work).is_none() {
        assert!(Instant::now() < deadline, "the subagent's sleep never ran");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SIGINT: cox run interrupts its turn, and so its subagent's.
    let pid = i32::try_from(child.id()).unwrap();
    std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert_ne!(status.code(), Some(0));
    let deadline = Instant::now() + Duration::from_secs(5);
    while let Some(pid) = common::sleep_31_in(&work) {
        assert!(
            Instant::now() < deadline,
            "process {pid} outlived the interrupt"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_subagent_runs_its_parent_s_hooks_and_ends_with_subagent_stop() {
    // A subagent starts with SubagentStart (never SessionStart), is
    // prompted by the model (no UserPromptSubmit) and ends without a
    // SessionEnd of its own, as in Claude Code.
    let env = Env::new();
    let log = env.work.path().join("hooks.log");
    let append = |what: &str| {
        serde_json::json!([{"hooks": [{"type": "command",
            "command": format!("echo {what} >> {}", log.display())}]}])
    };
    let settings = serde_json::json!({"hooks": {
        "SessionStart": append("session-start"),
        "UserPromptSubmit": append("prompt"),
        "SubagentStart": append("subagent-start"),
        "Stop": append("stop"),
        "SubagentStop": append("subagent-stop"),
        "SessionEnd": append("session-end"),
        "PreToolUse": [{"matcher": "write", "hooks": [{"type": "command",
            "command": format!("echo pre-write >> {}", log.display())}]}],
    }});
    env.claude_settings(&settings);
    let out = env.run("subagent_write", &["--permission-mode", "acceptEdits"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ran = std::fs::read_to_string(&log).unwrap();
    // The child's write ran the PreToolUse hook; its turn's end is a
    // SubagentStop, the parent's a Stop.
    assert_eq!(
        ran, "session-start\nprompt\nsubagent-start\npre-write\nsubagent-stop\nstop\nsession-end\n",
        "{ran}"
    );
}

#[test]
fn a_subagent_s_hooks_are_told_its_id_and_type_and_matched_on_the_type() {
    let env = Env::new();
    let seen = env.work.path().join("seen.jsonl");
    let dump = serde_json::json!([{"hooks": [{"type": "command",
        "command": format!("cat >> {}; echo >> {}", seen.display(), seen.display())}]}]);
    let settings = serde_json::json!({"hooks": {
        "PreToolUse": dump.clone(),
        "SubagentStop": dump,
        "SubagentStart": [
            {"matcher": "general-purpose", "hooks": [{"type": "command",
                "command": format!("cat >> {}; echo >> {}", seen.display(), seen.display())}]},
            {"matcher": "code-reviewer", "hooks": [{"type": "command",
                "command": format!("echo wrong-type >> {}", seen.display())}]},
        ],
    }});
    env.claude_settings(&settings);
    let out = env.run(
        "subagent_write",
        &[
            "--permission-mode",
            "acceptEdits",
            "--output-format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = std::fs::read_to_string(&seen).unwrap();
    assert!(!text.contains("wrong-type"), "{text}");
    let seen: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let events: Vec<&str> = seen
        .iter()
        .map(|s| s["hook_event_name"].as_str().unwrap())
        .collect();
    // The parent's agent call, then the child's start, its write and its
    // end.
    assert_eq!(
        events,
        ["PreToolUse", "SubagentStart", "PreToolUse", "SubagentStop"],
        "{text}"
    );
    assert!(seen[0].get("agent_id").is_none(), "the parent is no agent");
    let child = &seen[2];
    assert_eq!(child["agent_type"], "general-purpose");
    assert_eq!(seen[1]["agent_type"], "general-purpose");
    let id = child["agent_id"].as_str().unwrap();
    assert_eq!(seen[1]["agent_id"], id);
    let parent = result["session_id"].as_str().unwrap();
    assert_ne!(id, parent);
    // As in Claude Code, the session is the one at the top; the
    // subagent's own transcript is named where it stops.
    for payload in &seen {
        assert_eq!(payload["session_id"], parent, "{payload}");
        let transcript = payload["transcript_path"].as_str().unwrap();
        assert!(
            transcript.ends_with(&format!("{parent}.jsonl")),
            "{payload}"
        );
    }
    assert_eq!(child["tool_name"], "Write");
    let own = seen[3]["agent_transcript_path"].as_str().unwrap();
    assert!(own.ends_with(&format!("{id}.jsonl")), "{}", seen[3]);
    assert!(std::path::Path::new(own).is_file(), "{own}");
    assert!(seen[2].get("agent_transcript_path").is_none());
}

#[test]
fn a_subagent_s_spans_are_a_trace_naming_its_parent() {
    let env = Env::new();
    let out = env.run(
        "subagent_write",
        &[
            "--permission-mode",
            "acceptEdits",
            "--output-format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let parent = result["session_id"].as_str().unwrap();
    let spans: Vec<Value> = env
        .log()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["target"] == "cox::trace" && l["span"] == "invoke_agent cox")
        .collect();
    assert_eq!(
        spans.len(),
        2,
        "the parent's session span and the child's: {}",
        env.log()
    );
    let child = spans
        .iter()
        .find(|s| s["attributes"]["cox.session.parent_id"] == parent)
        .expect("the child's span names its parent");
    assert_ne!(child["attributes"]["cox.session.id"], parent);
    let own = spans
        .iter()
        .find(|s| s["attributes"]["cox.session.id"] == parent)
        .unwrap();
    assert_ne!(own["trace_id"], child["trace_id"], "a trace of its own");
}

#[test]
fn at_most_parallel_subagents_run_at_once() {
    // With one slot, "wait for b" runs alone and never sees the file the
    // second child would write: its command gives up (after 10 s).
    let env = Env::new();
    std::fs::write(
        env.home.path().join("config.toml"),
        "[agents]\nparallel = 1\n",
    )
    .unwrap();
    let out = env.run(
        "subagents",
        &[
            "--permission-mode",
            "bypassPermissions",
            "--output-format",
            "stream-json",
        ],
    );
    let seen = lines(&out);
    let waited = seen
        .iter()
        .filter(|l| l["type"] == "subagent" && l["event"]["type"] == "tool_call_done")
        .find(|l| l["call_id"] == "toolu_1_1")
        .unwrap();
    assert!(
        waited["event"]["result"]["visible"]
            .as_str()
            .unwrap()
            .contains("never"),
        "{waited}"
    );
}

#[test]
fn a_subagent_s_prompt_is_never_expanded_as_a_person_s_slash_command() {
    let env = Env::new();
    let commands = env.home.path().join(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("boom.md"),
        "---\nallowed-tools: Bash(rm:*)\n---\nEXPANDED $ARGUMENTS\n",
    )
    .unwrap();
    let out = env.run("subagent_slash", &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["result"], "Sent.", "{result}");
}

#[test]
fn a_recording_session_says_it_cannot_record_a_subagent() {
    let env = Env::new();
    let cassette = env.work.path().join("cassette.toml");
    let out = env.run(
        "subagent_write",
        &[
            "--record",
            cassette.to_str().unwrap(),
            "--output-format",
            "stream-json",
        ],
    );
    let done = lines(&out)
        .into_iter()
        .find(|l| l["type"] == "tool_call_done")
        .unwrap();
    let visible = done["result"]["visible"].as_str().unwrap();
    assert!(
        visible.contains("records a cassette (--record)"),
        "{visible}"
    );
    assert!(children(&lines(&out)).is_empty(), "no child ran");
}

#[test]
fn one_budget_covers_the_parent_and_its_subagents() {
    // $0.018 unbounded; capped at $0.01 the run stops before a call that
    // would pass it, whichever session would make it.
    let env = Env::new();
    let out = env.run(
        "subagent_write",
        &[
            "--permission-mode",
            "acceptEdits",
            "--output-format",
            "json",
            "--max-budget-usd",
            "0.01",
        ],
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["stop"], "budget", "{result}");
    let total = result["total_cost_usd"].as_f64().unwrap();
    assert!(total <= 0.01 + 1e-9, "the run spent {total}");
}
