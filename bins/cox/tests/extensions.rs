//! Custom commands, skills, plugins and project memory through the real
//! binary, and `cox ext list` naming every one with where it came from.

mod common;

use common::ext::{run, scenario, write};
use common::{Env, lines, stderr};
use serde_json::Value;

fn ext_list(env: &Env, extra: &[&str]) -> Value {
    let out = env
        .cox()
        .args(["ext", "list", "--json"])
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_command_with_arguments_expands_headless_with_its_model_and_tools() {
    let env = Env::new();
    write(
        &env.work.path().join(".claude/commands/fix-issue.md"),
        "---\ndescription: Fix an issue\nargument-hint: <number> [area]\n---\n\
         Fix issue #$1 in the $2 area. Everything said: $ARGUMENTS\n",
    );
    let path = scenario(
        env.home.path(),
        "[[turn]]\ntext = \"on it\"\n[turn.expect]\nuser_text_contains = \
         \"Fix issue #42 in the parser area. Everything said: 42 parser\"\n",
    );
    let out = run(&env, &path, "/fix-issue 42 parser", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let commands = lines(&out)
        .into_iter()
        .find(|l| l["type"] == "commands")
        .expect("a commands event");
    assert_eq!(commands["commands"][0]["name"], "fix-issue");
    assert_eq!(commands["commands"][0]["hint"], "<number> [area]");

    // The person's own command may allow tools for its turn (a write that
    // would be denied headless runs) and choose its model.
    let env = Env::new();
    write(
        &env.home.path().join("commands/scaffold.md"),
        "---\nallowed-tools: Write(hello.txt), Bash(git status:*)\nmodel: claude-haiku-4-5\n---\n\
         Create hello.txt.\n",
    );
    write(
        &env.home.path().join("commands/odd.md"),
        "---\nmodel: no-such-model\n---\nHi.\n",
    );
    let path = scenario(
        env.home.path(),
        "[[turn]]\n[[turn.tool_call]]\nname = \"write\"\ninput = { path = \"hello.txt\", content = \"hi\\n\" }\n\n\
         [[turn]]\ntext = \"Done.\"\n",
    );
    let out = run(&env, &path, "/scaffold", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(env.work.path().join("hello.txt").exists());
    let served: Vec<String> = lines(&out)
        .into_iter()
        .filter(|l| l["type"] == "usage")
        .map(|l| l["model"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(served, ["claude-haiku-4-5", "claude-haiku-4-5"]);
    assert!(
        stderr(&out).contains("odd.md:2: model `no-such-model` is neither"),
        "{}",
        stderr(&out)
    );

    // A repository's command may not: said when it loads, and the write is
    // refused as without it.
    let env = Env::new();
    write(
        &env.work.path().join(".claude/commands/scaffold.md"),
        "---\nallowed-tools: Write\nmodel: no-such-model\n---\nCreate hello.txt.\n",
    );
    let path = scenario(
        env.home.path(),
        "[[turn]]\n[[turn.tool_call]]\nname = \"write\"\ninput = { path = \"hello.txt\", content = \"hi\\n\" }\n\n\
         [[turn]]\ntext = \"Done.\"\n",
    );
    let out = run(&env, &path, "/scaffold", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!env.work.path().join("hello.txt").exists());
    let err = stderr(&out);
    assert!(
        err.contains("scaffold.md:2: allowed-tools of a project command are not honoured"),
        "{err}"
    );
    assert!(
        err.contains("scaffold.md:3: the model of a project command is not honoured"),
        "{err}"
    );
}

#[test]
fn a_skill_loads_through_its_tool_and_as_a_slash_command() {
    let env = Env::new();
    write(
        &env.work.path().join(".claude/skills/release/SKILL.md"),
        "---\nname: release\ndescription: Cut a release\n---\nBump the version, tag, push.\n",
    );
    write(
        &env.work
            .path()
            .join(".claude/skills/release/scripts/bump.sh"),
        "#!/bin/sh\n",
    );
    let path = scenario(
        env.home.path(),
        r#"
[[turn]]
[turn.expect]
request_contains = ["load the skill with the `skill` tool", "`release`: Cut a release"]
[[turn.tool_call]]
name = "skill"
input = { skill = "release", args = "1.2.0" }

[[turn]]
text = "Released."
[turn.expect]
tool_result_contains = "Bump the version, tag, push."
"#,
    );
    let out = run(&env, &path, "release 1.2.0", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let done = lines(&out)
        .into_iter()
        .find(|l| l["type"] == "tool_call_done")
        .unwrap();
    let text = done["result"]["visible"].as_str().unwrap();
    assert!(
        text.contains("ARGUMENTS: 1.2.0") && text.contains("- scripts/bump.sh"),
        "{text}"
    );

    let path = scenario(
        env.home.path(),
        "[[turn]]\ntext = \"ok\"\n[turn.expect]\nuser_text_contains = \"Bump the version, tag, push.\"\n",
    );
    let out = run(&env, &path, "/release 1.2.0", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_plugin_folder_brings_its_commands_skills_hooks_and_servers() {
    let env = Env::new();
    let plugin = env.home.path().join("fmt-plugin");
    write(
        &plugin.join(".claude-plugin/plugin.json"),
        r#"{"name": "fmt", "version": "0.3.0", "description": "Formatting"}"#,
    );
    write(
        &plugin.join("commands/check.md"),
        "---\ndescription: Check the format\n---\nCheck $ARGUMENTS.\n",
    );
    write(
        &plugin.join("agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews diffs\ntools: Read, Grep\n---\nReview.\n",
    );
    write(
        &plugin.join("skills/style/SKILL.md"),
        "---\nname: style\ndescription: The house style\n---\nTabs.\n",
    );
    // Inside the workspace: a plugin's hooks run in the sandbox.
    let marker = env.work.path().join("plugin-hook-ran");
    write(
        &plugin.join("hooks/hooks.json"),
        &format!(
            r#"{{"hooks": {{"UserPromptSubmit": [{{"hooks": [{{"type": "command", "command": "echo $CLAUDE_PLUGIN_ROOT >> {}"}}]}}]}}}}"#,
            marker.display()
        ),
    );
    write(
        &plugin.join(".mcp.json"),
        r#"{"mcpServers": {"lint": {"command": "${CLAUDE_PLUGIN_ROOT}/lint-server"}}}"#,
    );
    let flag = ["--plugin-dir", plugin.to_str().unwrap()];
    let report = ext_list(&env, &flag);
    assert_eq!(report["plugins"][0]["name"], "fmt", "{report}");
    assert_eq!(report["commands"][0]["name"], "/fmt:check", "{report}");
    assert_eq!(report["skills"][0]["name"], "fmt:style", "{report}");
    assert_eq!(report["agents"][0]["name"], "fmt:reviewer", "{report}");
    assert!(
        report["agents"][0]["state"]
            .as_str()
            .unwrap()
            .contains("available to the agent tool"),
        "{report}"
    );
    assert_eq!(
        report["hooks"][0]["name"], "fmt:UserPromptSubmit:1",
        "{report}"
    );
    assert_eq!(report["hooks"][0]["state"], "pending", "{report}");
    assert_eq!(
        report["mcp_servers"][0]["name"], "plugin_fmt_lint",
        "{report}"
    );
    assert_eq!(report["mcp_servers"][0]["origin"], "plugin", "{report}");
    assert!(
        report["mcp_servers"][0]["state"]
            .as_str()
            .unwrap()
            .starts_with("pending: cox mcp trust plugin_fmt_lint"),
        "{report}"
    );

    // The command expands; the plugin's hook waits for trust, then runs with
    // CLAUDE_PLUGIN_ROOT set.
    let path = scenario(
        env.home.path(),
        "[[turn]]\ntext = \"ok\"\n[turn.expect]\nuser_text_contains = \"Check src/.\"\n",
    );
    let out = run(
        &env,
        &path,
        "/fmt:check src/",
        &[&flag[..], &["--no-mcp"]].concat(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!marker.exists());
    let trusted = env
        .cox()
        .args(["ext", "trust", "fmt"])
        .args(flag)
        .output()
        .unwrap();
    assert_eq!(trusted.status.code(), Some(0), "{}", stderr(&trusted));
    let out = run(
        &env,
        &path,
        "/fmt:check src/",
        &[&flag[..], &["--no-mcp"]].concat(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let root = std::fs::canonicalize(&plugin).unwrap();
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap().trim(),
        root.display().to_string()
    );
}

#[test]
fn memory_kept_in_one_session_reaches_the_next_of_the_same_project() {
    let env = Env::new();
    std::fs::create_dir(env.work.path().join(".git")).unwrap();
    let path = scenario(
        env.home.path(),
        r#"
[[turn]]
[[turn.tool_call]]
name = "memory"
input = { action = "add", text = "integration tests need REDIS_URL=redis://127.0.0.1:6379" }

[[turn]]
text = "Noted."
[turn.expect]
tool_result_contains = "kept note"
"#,
    );
    // Adding a note is a write: it runs in acceptEdits mode, not in plan.
    let out = run(
        &env,
        &path,
        "remember how the tests run",
        &["--permission-mode", "plan"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = run(
        &env,
        &path,
        "remember how the tests run",
        &["--permission-mode", "acceptEdits"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // The next session of the project is told the note when a prompt bears
    // on it, in the volatile block, and not when it does not.
    let path = scenario(
        env.home.path(),
        "[[turn]]\ntext = \"ok\"\n[turn.expect]\nrequest_contains = [\"Project memory\", \"REDIS_URL=redis://127.0.0.1:6379\"]\n",
    );
    let out = run(&env, &path, "why do the integration tests fail?", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let path = scenario(
        env.home.path(),
        "[[turn]]\ntext = \"ok\"\n[turn.expect]\nrequest_lacks = [\"Project memory\"]\n",
    );
    let out = run(&env, &path, "rename the button label", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // Another project does not see it.
    let other = tempfile::tempdir().unwrap();
    let path = scenario(
        env.home.path(),
        "[[turn]]\ntext = \"ok\"\n[turn.expect]\nrequest_lacks = [\"REDIS_URL\"]\n",
    );
    let out = run(
        &env,
        &path,
        "why do the integration tests fail?",
        &["--cwd", other.path().to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn ext_list_names_every_source_and_bad_files_are_warnings() {
    let env = Env::new();
    write(&env.work.path().join("AGENTS.md"), "Use tabs.\n");
    write(
        &env.work.path().join(".claude/commands/ok.md"),
        "---\ndescription: Fine\n---\nDo it.\n",
    );
    write(
        &env.work.path().join(".claude/commands/broken.md"),
        "---\ndescription: never closed\nDo it.\n",
    );
    write(
        &env.work.path().join(".claude/commands/odd.md"),
        "---\ndescription: Odd\ncontext: fork\n---\n!`git status`\n",
    );
    write(
        &env.home
            .path()
            .join("plugins/bad/.claude-plugin/plugin.json"),
        "{\n  \"name\": ,\n}",
    );
    write(
        &env.work.path().join(".claude/settings.json"),
        "{\"hooks\": [}",
    );
    let report = ext_list(&env, &[]);
    assert_eq!(
        report["instruction_files"][0]["name"], "AGENTS.md",
        "{report}"
    );
    let names: Vec<&str> = report["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["/odd", "/ok"], "{report}");
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("broken.md:1: the frontmatter is not closed"),
        "{warnings}"
    );
    assert!(
        warnings.contains("odd.md:3: `context` is not read by cox"),
        "{warnings}"
    );
    assert!(warnings.contains("which cox does not run"), "{warnings}");
    assert!(
        warnings.contains("plugin.json:2: not valid JSON"),
        "{warnings}"
    );
    assert!(
        warnings.contains("settings.json:1: not valid JSON"),
        "{warnings}"
    );
    // The table says the same.
    let out = env.cox().args(["ext", "list"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("commands (2)") && text.contains("warnings ("),
        "{text}"
    );
}
