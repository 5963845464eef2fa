//! Helpers shared by the tests of the real `cox` binary: a temporary
//! COX_HOME and work folder per test, and readers for its output.

#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use tempfile::TempDir;

pub fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/scenarios")
        .join(format!("{name}.toml"))
}

pub struct Env {
    pub home: TempDir,
    pub work: TempDir,
}

impl Env {
    pub fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
        }
    }

    pub fn cox(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cox"));
        for (key, _) in std::env::vars_os() {
            let key_text = key.to_string_lossy();
            if ["COX_", "ANTHROPIC_", "OPENAI_"]
                .iter()
                .any(|p| key_text.starts_with(p))
            {
                cmd.env_remove(key);
            }
        }
        cmd.env("COX_HOME", self.home.path())
            .current_dir(self.work.path());
        cmd
    }

    pub fn run(&self, scenario_name: &str, extra: &[&str]) -> Output {
        self.cox()
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", scenario(scenario_name))
            .args(["run", "-p", "do the task"])
            .args(extra)
            .output()
            .unwrap()
    }

    /// `slow.toml` in stream-json, stdout piped: 32 words, 200 ms apart.
    pub fn spawn_slow(&self) -> std::process::Child {
        self.cox()
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", scenario("slow"))
            .args(["run", "-p", "talk slowly", "--output-format", "stream-json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    pub fn rollouts(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.home.path().join("sessions"))
            .map(|dir| dir.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default()
    }
}

pub fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A failure before the session: exactly one line on stderr, exit 1.
pub fn assert_one_line_error(out: &Output, needle: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    assert!(err.starts_with("cox: error: "), "{err}");
    assert!(err.contains(needle), "{err:?} should mention {needle:?}");
    assert!(!err.contains("panicked"), "{err}");
}
