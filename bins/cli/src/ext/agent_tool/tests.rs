//! The subagent tool's decisions, tested without a session.

use super::*;

#[test]
fn claude_code_tool_names_map_to_cox_s_and_others_are_refused() {
    let written = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        tool_names(&written(&[
            "Read",
            "Grep",
            "bash",
            "MultiEdit",
            "Edit",
            "mcp__fs__read"
        ]))
        .unwrap(),
        [
            "read",
            "grep",
            "bash",
            "edit",
            "mcp__fs__read",
            "bash_output",
            "kill_shell"
        ]
    );
    assert_eq!(
        tool_names(&written(&[
            "WebFetch",
            "WebSearch",
            "NotebookEdit",
            "TodoWrite"
        ]))
        .unwrap(),
        ["web_fetch", "web_search", "notebook_edit", "todo"]
    );
    assert_eq!(tool_names(&written(&["Teleport"])).unwrap_err(), "Teleport");
}

#[test]
fn a_worktree_name_is_held_by_one_running_subagent_at_a_time() {
    let first = Claimed::new("task-claim-test".into());
    let second = Claimed::new("task-claim-test".into());
    let third = Claimed::new("task-claim-test".into());
    assert_eq!(first.0, "task-claim-test");
    assert_eq!(second.0, "task-claim-test-2");
    assert_eq!(third.0, "task-claim-test-3");
    drop(second);
    assert_eq!(
        Claimed::new("task-claim-test".into()).0,
        "task-claim-test-2"
    );
    drop(first);
    assert_eq!(Claimed::new("task-claim-test".into()).0, "task-claim-test");
}

/// A session builder for tests that start no child.
fn no_children() -> Spawn {
    Arc::new(|_, _, _, _| Err("this test starts no child".into()))
}

#[test]
fn a_child_runs_in_its_parent_s_mode_and_never_wider() {
    let recipe = Recipe {
        args: RunArgs {
            dangerously_skip_permissions: true,
            resume: Some("01OLD".into()),
            ..RunArgs::default()
        },
        cwd: "/w".into(),
        settings_from: "/w".into(),
        parent: SessionId::generate(),
        top: SessionId::generate(),
        depth: 0,
        approval: ApprovalPolicy::OnRequest,
        max_turns: None,
        config: AgentsConfig::default(),
        files: None,
        hooks: SurfaceHooks::default(),
        spawn: no_children(),
    };
    let input = Input {
        description: "look".into(),
        prompt: "go".into(),
        subagent_type: None,
        isolation: None,
    };
    let (args, lineage) = child_of(&recipe, &input, None, PermissionMode::Plan).unwrap();
    assert!(!args.dangerously_skip_permissions);
    assert!(matches!(
        args.permission_mode,
        Some(Given::Flag(PermissionMode::Plan))
    ));
    assert!(args.resume.is_none());
    assert_eq!(lineage.depth, 1);
    assert_eq!(lineage.parent, Some(recipe.parent));
    assert_eq!(lineage.top, Some(recipe.top));
    assert_eq!(lineage.agent_type.as_deref(), Some("general-purpose"));
    assert_eq!(lineage.script.as_deref(), Some("look"));
}

#[test]
fn nesting_ends_at_the_configured_depth() {
    let recipe = |depth, max_depth| Recipe {
        args: RunArgs::default(),
        cwd: "/w".into(),
        settings_from: "/w".into(),
        parent: SessionId::generate(),
        top: SessionId::generate(),
        depth,
        approval: ApprovalPolicy::Never,
        max_turns: None,
        config: AgentsConfig {
            max_depth,
            parallel: None,
        },
        files: None,
        hooks: SurfaceHooks::default(),
        spawn: no_children(),
    };
    assert!(AgentTool::for_session(recipe(1, None), Vec::new).is_some());
    assert!(AgentTool::for_session(recipe(2, None), Vec::new).is_none());
    assert!(AgentTool::for_session(recipe(0, Some(0)), Vec::new).is_none());
}
