//! What the tests of hooks and extensions share: files written where a
//! test wants them, scenarios of the scripted model, and `cox run` in
//! stream-json over one.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use super::Env;

/// Writes `text` at `path`, its folders made.
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Writes `value` as JSON at `path` (a settings file, a manifest).
pub fn write_json(path: &Path, value: &Value) {
    write(path, &serde_json::to_string_pretty(value).unwrap());
}

/// A scenario file of the scripted model in `dir`, a new one each call.
pub fn scenario(dir: &Path, text: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let path = dir.join(format!(
        "scenario-{}.toml",
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, text).unwrap();
    path
}

/// `cox run -p PROMPT --output-format stream-json` over the scenario at
/// `path`.
pub fn run(env: &Env, path: &Path, prompt: &str, extra: &[&str]) -> Output {
    env.cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", path)
        .args(["run", "-p", prompt, "--output-format", "stream-json"])
        .args(extra)
        .output()
        .unwrap()
}
