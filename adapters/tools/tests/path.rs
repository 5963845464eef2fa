//! `confine` and every tool's `classify`: what a path resolves to, what is
//! refused, and the subject the permission engine will match.

mod common;

use common::Fixture;
use cox_protocol::Tool;
use cox_protocol::tool::Workspace;
use cox_protocol::types::Risk;
use cox_tools::path::{PathError, confine, confine_write};
use cox_tools::{BashTool, EditTool, GlobTool, GrepTool, ReadTool, WriteTool};
use serde_json::json;

#[test]
fn relative_paths_resolve_against_cwd_and_need_not_exist() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.at("sub")).unwrap();
    let ws = Workspace {
        cwd: fx.at("sub"),
        roots: vec![fx.root.clone()],
        read_only: Vec::new(),
    };
    assert_eq!(confine(&ws, "a.txt"), Ok(fx.at("sub/a.txt")));
    assert_eq!(
        confine(&ws, "new/deeper/b.txt"),
        Ok(fx.at("sub/new/deeper/b.txt"))
    );
    assert_eq!(confine(&ws, "./x/../c.txt"), Ok(fx.at("sub/c.txt")));
    assert_eq!(confine(&ws, ".."), Ok(fx.root.clone()));
    assert_eq!(confine(&ws, "../d.txt"), Ok(fx.at("d.txt")));
}

#[test]
fn dot_dot_escapes_are_refused_with_a_message_naming_path_and_roots() {
    let fx = Fixture::new();
    let err = confine(&fx.ws, "../x").unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "path ../x is outside the workspace (roots: {}); use a path inside it",
            fx.root.display()
        )
    );
    assert!(matches!(
        confine(&fx.ws, "a/../../outside/secret.txt"),
        Err(PathError::Outside { .. })
    ));
    assert!(confine(&fx.ws, "../../../../../../etc/passwd").is_err());
}

#[test]
fn absolute_paths_are_accepted_inside_a_root_and_refused_outside() {
    let fx = Fixture::new();
    let inside = fx.at("a.txt");
    assert_eq!(confine(&fx.ws, inside.to_str().unwrap()), Ok(inside));
    assert!(confine(&fx.ws, "/etc/passwd").is_err());
    assert!(confine(&fx.ws, fx.outside.join("secret.txt").to_str().unwrap()).is_err());
    // A root's name as a prefix of a sibling is not inside it.
    let sibling = format!("{}-other/x", fx.root.display());
    assert!(confine(&fx.ws, &sibling).is_err());
}

#[test]
fn a_second_root_is_inside_the_workspace_too() {
    let fx = Fixture::new();
    let ws = Workspace {
        cwd: fx.root.clone(),
        roots: vec![fx.root.clone(), fx.outside.clone()],
        read_only: Vec::new(),
    };
    assert_eq!(
        confine(&ws, "../outside/secret.txt"),
        Ok(fx.outside.join("secret.txt"))
    );
}

#[test]
fn a_read_only_root_is_read_and_never_written() {
    let fx = Fixture::new();
    let ws = Workspace {
        cwd: fx.root.clone(),
        roots: vec![fx.root.clone(), fx.outside.clone()],
        read_only: vec![fx.outside.clone()],
    };
    let main = fx.outside.join("secret.txt");
    assert_eq!(confine(&ws, main.to_str().unwrap()), Ok(main.clone()));
    let refused = confine_write(&ws, main.to_str().unwrap()).unwrap_err();
    assert!(matches!(refused, PathError::ReadOnlyRoot { .. }));
    assert!(
        refused.to_string().contains("reads but never writes"),
        "{refused}"
    );
    assert_eq!(confine_write(&ws, "new.txt"), Ok(fx.at("new.txt")));
}

#[test]
fn tilde_is_an_ordinary_name() {
    let fx = Fixture::new();
    assert_eq!(confine(&fx.ws, "~/notes.txt"), Ok(fx.at("~/notes.txt")));
    assert_eq!(confine(&fx.ws, "~"), Ok(fx.at("~")));
}

#[test]
fn links_are_resolved_before_the_check() {
    let fx = Fixture::new();
    // A link to a file outside, as for reading an existing file.
    fx.link("leak.txt", &fx.outside.join("secret.txt"));
    assert!(matches!(
        confine(&fx.ws, "leak.txt"),
        Err(PathError::Outside { .. })
    ));
    // A link to a folder outside, as for writing a new file under it.
    fx.link("out", &fx.outside);
    assert!(confine(&fx.ws, "out/new.txt").is_err());
    assert!(confine(&fx.ws, "out/deeper/new.txt").is_err());
    // A dangling link whose target would be created outside.
    fx.link("dangling", &fx.outside.join("not-yet.txt"));
    assert!(confine(&fx.ws, "dangling").is_err());
    // Links that stay inside resolve to their targets.
    fx.file("real/file.txt", "x");
    fx.link("alias", &fx.at("real"));
    assert_eq!(
        confine(&fx.ws, "alias/file.txt"),
        Ok(fx.at("real/file.txt"))
    );
    assert_eq!(confine(&fx.ws, "alias/new.txt"), Ok(fx.at("real/new.txt")));
    fx.link("pending", std::path::Path::new("real/later.txt"));
    assert_eq!(confine(&fx.ws, "pending"), Ok(fx.at("real/later.txt")));
}

#[test]
fn looping_links_and_empty_paths_are_refused() {
    let fx = Fixture::new();
    fx.link("a", &fx.at("b"));
    fx.link("b", &fx.at("a"));
    let err = confine(&fx.ws, "a/x").unwrap_err();
    assert!(matches!(err, PathError::LinkLoop { .. }), "{err:?}");
    assert!(err.to_string().contains("a/x"));
    assert!(matches!(confine(&fx.ws, ""), Err(PathError::Empty { .. })));
}

#[test]
fn tools_classify_risk_and_subject() {
    let fx = Fixture::new();
    let root = fx.root.display().to_string();
    let a_txt = fx.at("a.txt").display().to_string();
    let cases: Vec<(&dyn Tool, serde_json::Value, Risk, String)> = vec![
        (
            &ReadTool,
            json!({"path": "a.txt"}),
            Risk::ReadOnly,
            a_txt.clone(),
        ),
        (
            &ReadTool,
            json!({"path": "../x"}),
            Risk::ReadOnly,
            "../x".into(),
        ),
        (
            &ReadTool,
            json!({"nonsense": true}),
            Risk::ReadOnly,
            "read".into(),
        ),
        (
            &WriteTool,
            json!({"path": "a.txt", "content": ""}),
            Risk::Write,
            a_txt.clone(),
        ),
        (
            &WriteTool,
            json!({"path": "/etc/passwd"}),
            Risk::Write,
            "/etc/passwd".into(),
        ),
        (
            &EditTool,
            json!({"path": "./b/../a.txt"}),
            Risk::Write,
            a_txt,
        ),
        (
            &GlobTool,
            json!({"pattern": "**/*.rs"}),
            Risk::ReadOnly,
            root.clone(),
        ),
        (
            &GlobTool,
            json!({"pattern": "*", "path": "src"}),
            Risk::ReadOnly,
            format!("{root}/src"),
        ),
        (&GrepTool, json!({"pattern": "x"}), Risk::ReadOnly, root),
        (
            &GrepTool,
            json!({"pattern": "x", "path": "../.."}),
            Risk::ReadOnly,
            "../..".into(),
        ),
        (
            &BashTool,
            json!({"command": "ls -la | wc -l && rm x"}),
            Risk::Exec,
            "ls -la | wc -l && rm x".into(),
        ),
        (&BashTool, json!(42), Risk::Exec, "bash".into()),
    ];
    for (tool, input, risk, subject) in cases {
        let classified = tool.classify(&input, &fx.ws);
        assert_eq!(classified.risk, risk, "{} {input}", tool.name());
        assert_eq!(classified.subject, subject, "{} {input}", tool.name());
        let is_bash = tool.name() == "bash";
        assert_eq!(classified.segments.is_some(), is_bash, "only bash splits");
    }
    let line = BashTool.classify(&json!({"command": "ls -la | wc -l && rm x"}), &fx.ws);
    let split = line.segments.expect("bash splits its line");
    assert_eq!(split.commands, ["ls -la", "wc -l", "rm x"]);
    assert_eq!(split.opaque, None);
    let read_only = BashTool.classify(&json!({"command": "ls -la | wc -l"}), &fx.ws);
    assert_eq!(read_only.risk, Risk::ReadOnly, "every command is read-only");
    let opaque = BashTool.classify(&json!(42), &fx.ws);
    assert!(
        opaque.segments.and_then(|s| s.opaque).is_some(),
        "no command: opaque"
    );
}
