//! A workspace in a temporary folder, with a sibling folder outside it, and
//! a way to run any tool there against the real process sandbox and a real
//! permission engine (the default rules, with a home folder in the same
//! temporary folder, never the real one, unless a test gives its own).

#![allow(dead_code)] // each test binary uses part of this

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cox_permission::Engine;
use cox_protocol::config::PermissionsConfig;
use cox_protocol::tool::{OutputSink, PathRules, Tool, ToolContext, Workspace};
use cox_protocol::types::ToolResult;
use cox_protocol::{CallId, CancelToken};
use cox_sandbox::ProcessSandbox;
use serde_json::Value;

pub struct Fixture {
    _tmp: tempfile::TempDir,
    /// The workspace root (canonical); also the cwd.
    pub root: PathBuf,
    /// A folder beside the root, outside the workspace.
    pub outside: PathBuf,
    pub ws: Workspace,
    /// The permission rules every call runs under.
    pub rules: Arc<dyn PathRules>,
}

impl Fixture {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("ws");
        let outside = base.join("outside");
        std::fs::create_dir(&root).unwrap();
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
        let ws = Workspace::single(root.clone());
        let home = base.join("home");
        let rules = Arc::new(
            Engine::compile(&PermissionsConfig::default(), Some(&home), &root)
                .expect("the default rules compile"),
        );
        Self {
            _tmp: tmp,
            root,
            outside,
            ws,
            rules,
        }
    }

    /// The same workspace under the rules of `config`, with `home` for `~/`
    /// and the workspace cwd for relative paths.
    pub fn with_rules(mut self, config: &PermissionsConfig, home: &Path) -> Self {
        let engine = Engine::compile(config, Some(home), &self.ws.cwd).expect("the rules compile");
        self.rules = Arc::new(engine);
        self
    }

    /// The same workspace under other path rules (an engine's view of one
    /// call, say).
    pub fn with_path_rules(mut self, rules: Arc<dyn PathRules>) -> Self {
        self.rules = rules;
        self
    }

    /// The same workspace with its cwd moved to `rel` under the root.
    pub fn with_cwd(mut self, rel: &str) -> Self {
        self.ws.cwd = self.at(rel);
        self
    }

    /// A path under the root.
    pub fn at(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Writes a file under the root, creating its folders.
    pub fn file(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.at(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        path
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.at(rel)).unwrap()
    }

    /// Makes `rel` (under the root) a symbolic link to `target`.
    pub fn link(&self, rel: &str, target: &Path) {
        std::os::unix::fs::symlink(target, self.at(rel)).unwrap();
    }

    pub async fn run(&self, tool: &dyn Tool, input: Value) -> ToolResult {
        self.run_with(
            tool,
            input,
            CancelToken::new(),
            OutputSink::discard(CallId::from("t")),
        )
        .await
    }

    pub async fn run_with(
        &self,
        tool: &dyn Tool,
        input: Value,
        cancel: CancelToken,
        output: OutputSink,
    ) -> ToolResult {
        let call_id = CallId::from("t");
        let sandbox = ProcessSandbox::new();
        let cx = ToolContext {
            call_id: &call_id,
            workspace: &self.ws,
            cancel,
            sandbox: &sandbox,
            output,
            rules: Arc::clone(&self.rules),
            unconfined: false,
            files: None,
            permission_mode: cox_protocol::types::PermissionMode::Default,
            nested: cox_protocol::tool::Nested::none(),
            decided: &[],
        };
        tool.run(input, cx).await
    }

    /// Runs with a token that is already cancelled.
    pub async fn run_cancelled(&self, tool: &dyn Tool, input: Value) -> ToolResult {
        let cancel = CancelToken::new();
        cancel.cancel();
        self.run_with(tool, input, cancel, OutputSink::discard(CallId::from("t")))
            .await
    }
}

/// Asserts a failed result whose text contains every one of `parts`.
#[track_caller]
pub fn assert_error(result: &ToolResult, parts: &[&str]) {
    assert!(!result.ok, "expected a failure, got {result:?}");
    for part in parts {
        assert!(
            result.visible.contains(part),
            "{:?} does not contain {part:?}",
            result.visible
        );
    }
}
