//! The MCP conformance suite (npm `@modelcontextprotocol/conformance`) in
//! client mode, with cox as the client under test: for each of the suite's
//! client scenarios it starts a test server, runs
//! `tests/mcp/conformance-client.sh` (cox configured for that server, a
//! login where the scenario wants one, one headless session calling the
//! scenario's tool) and checks what cox did. `.ci/run` installs the suite
//! and the Node it needs in `COX_TEST_MCP_CONFORMANCE`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::mcp::installed;

/// Scenarios cox does not pass yet, and why. Each must still fail: one
/// that passes is taken off this list. (None now.)
const NOT_YET: &[(&str, &str)] = &[];

fn suite(dir: &Path) -> (PathBuf, PathBuf) {
    (
        dir.join("node_modules/.bin/node"),
        dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"),
    )
}

#[test]
fn the_conformance_suites_client_scenarios_pass() {
    let Some(dir) = installed("COX_TEST_MCP_CONFORMANCE", "the MCP conformance suite") else {
        return;
    };
    let (node, cli) = suite(&dir);
    let listed = Command::new(&node)
        .arg(&cli)
        .args(["list", "--client"])
        .output()
        .unwrap();
    assert!(listed.status.success(), "{listed:?}");
    let scenarios: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("  - "))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    assert!(scenarios.len() >= 20, "{scenarios:?}");
    let wrapper =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/conformance-client.sh");
    let results = tempfile::tempdir().unwrap();
    let mut wrong = Vec::new();
    for scenario in &scenarios {
        let home = tempfile::tempdir().unwrap();
        let out = Command::new(&node)
            .arg(&cli)
            .args(["client", "--scenario", scenario, "--command"])
            .arg(&wrapper)
            .arg("-o")
            .arg(results.path())
            .env("COX", env!("CARGO_BIN_EXE_cox"))
            .env("HOME", home.path())
            .env("COX_HOME", home.path())
            .output()
            .unwrap();
        let passed = out.status.success();
        let expected = !NOT_YET.iter().any(|(name, _)| name == scenario);
        if passed != expected {
            let said = String::from_utf8_lossy(&out.stdout);
            let tail: Vec<&str> = said.lines().rev().take(25).collect();
            wrong.push(format!(
                "{scenario}: {} (expected {})\n{}",
                if passed { "passed" } else { "failed" },
                if expected { "a pass" } else { "a failure" },
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}
