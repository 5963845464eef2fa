//! What a stdio server's command needs from the sandbox to start the way
//! people write it: `npx -y PKG`, `uvx PKG`, `pipx run PKG`, `bunx PKG`,
//! or a script anywhere they can read.
//!
//! - A package launcher fetches the package into a cache on the first run.
//!   It gets a cache of cox's own, `~/.cache/cox-mcp/<launcher>`, made
//!   when missing, writable, and named to it by its variable
//!   (`npm_config_cache`, `UV_CACHE_DIR`, `PIPX_HOME`,
//!   `BUN_INSTALL_CACHE_DIR`): never the person's own cache, which a
//!   server could otherwise fill with a package that the person's next
//!   `npx` outside cox would run unconfined. Nothing else of the home is
//!   writable.
//! - The sandbox's `/tmp` is private; a program, or its script (the first
//!   argument that is not a flag), that is under `/tmp` has its top folder
//!   there (`/tmp/x` for `/tmp/x/node_modules/.bin/server`), read-only, so
//!   the script and the modules beside it are found. Nothing else of
//!   `/tmp` is.
//!
//! The network is the entry's `network` (on unless it says false): a
//! launcher reaches its registry, a server its API; the file system stays
//! confined either way.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The cache `program` (a launcher, by its file name) gets under `home`,
/// with the variables that point it there; `None` for any other program.
#[must_use]
pub fn cache(program: &Path, home: &Path) -> Option<(PathBuf, Vec<(String, String)>)> {
    let name = program
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let (launcher, vars): (&str, &[&str]) = match name {
        "npx" | "npm" => ("npm", &["npm_config_cache"]),
        "pnpm" | "pnpx" => ("pnpm", &["npm_config_store_dir", "npm_config_cache"]),
        "uvx" | "uv" => ("uv", &["UV_CACHE_DIR"]),
        "pipx" => ("pipx", &["PIPX_HOME"]),
        "bunx" | "bun" => ("bun", &["BUN_INSTALL_CACHE_DIR"]),
        _ => return None,
    };
    let dir = home.join(".cache/cox-mcp").join(launcher);
    let text = dir.display().to_string();
    let mut set: Vec<(String, String)> = vars
        .iter()
        .map(|var| ((*var).to_owned(), text.clone()))
        .collect();
    if launcher == "uv" {
        // A Python uv downloads for the tool goes beside its cache.
        set.push((
            "UV_PYTHON_INSTALL_DIR".to_owned(),
            dir.join("python").display().to_string(),
        ));
    }
    Some((dir, set))
}

/// The top folders under `/tmp` of the program and its script (the
/// first argument that is not a flag) where they exist there. Only those
/// two: a data path the command also names under `/tmp` (a Kerberos
/// ticket cache, another tool's socket) stays out of the server's sight,
/// as the rest of `/tmp` does.
#[must_use]
pub fn visible_in_tmp(argv: &[OsString]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let script = argv
        .iter()
        .skip(1)
        .find(|a| !a.to_string_lossy().starts_with('-'));
    for arg in argv.first().into_iter().chain(script) {
        let path = Path::new(arg);
        let Ok(rest) = path.strip_prefix("/tmp") else {
            continue;
        };
        let Some(top) = rest.components().next() else {
            continue;
        };
        let top = Path::new("/tmp").join(top);
        if path.exists() && !out.contains(&top) {
            out.push(top);
        }
    }
    out
}

/// What the server `argv` reaches in the sandbox: the network when
/// `network`, its launcher's cache under `home` (made if missing), and its
/// paths under `/tmp`; with the variables that name the cache, for those
/// `env` (the entry's own) does not set.
#[must_use]
pub fn reach(
    argv: &[OsString],
    home: Option<&Path>,
    network: bool,
    env: &[(String, String)],
) -> (cox_sandbox::ServerReach, Vec<(String, String)>) {
    let mut writable = Vec::new();
    let mut vars = Vec::new();
    if let (Some(program), Some(home)) = (argv.first(), home)
        && let Some((dir, set)) = cache(Path::new(program), home)
        && std::fs::create_dir_all(&dir).is_ok()
    {
        writable.push(dir);
        vars.extend(
            set.into_iter()
                .filter(|(name, _)| !env.iter().any(|(n, _)| n == name)),
        );
    }
    let reach = cox_sandbox::ServerReach {
        network,
        writable,
        visible: visible_in_tmp(argv),
    };
    (reach, vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_launcher_has_a_cache_of_coxs_own_and_other_programs_none() {
        let home = Path::new("/home/a");
        let (dir, vars) = cache(Path::new("/usr/bin/npx"), home).unwrap_or_default();
        assert_eq!(dir, home.join(".cache/cox-mcp/npm"));
        assert_eq!(
            vars,
            [(
                "npm_config_cache".to_owned(),
                "/home/a/.cache/cox-mcp/npm".to_owned()
            )]
        );
        let (dir, vars) = cache(Path::new("uvx"), home).unwrap_or_default();
        assert_eq!(dir, home.join(".cache/cox-mcp/uv"));
        assert!(vars.iter().any(|(n, _)| n == "UV_CACHE_DIR"));
        assert!(cache(Path::new("pipx"), home).is_some());
        assert!(cache(Path::new("node"), home).is_none());
        assert!(cache(Path::new("/tmp/npx-lookalike/server"), home).is_none());
    }

    #[test]
    fn the_entrys_own_variable_wins_over_the_cache() {
        let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let argv: Vec<OsString> = vec!["npx".into(), "-y".into(), "pkg".into()];
        let own = [("npm_config_cache".to_owned(), "/elsewhere".to_owned())];
        let (reach, vars) = reach(&argv, Some(home.path()), true, &own);
        assert_eq!(reach.writable, [home.path().join(".cache/cox-mcp/npm")]);
        assert!(reach.writable[0].is_dir());
        assert!(vars.is_empty(), "{vars:?}");
        let (_, vars) = reach_default(&argv, home.path());
        assert_eq!(vars[0].0, "npm_config_cache");
    }

    fn reach_default(
        argv: &[OsString],
        home: &Path,
    ) -> (cox_sandbox::ServerReach, Vec<(String, String)>) {
        reach(argv, Some(home), true, &[])
    }

    #[test]
    fn only_the_program_and_its_script_under_tmp_are_made_visible() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let script = dir.path().join("node_modules/.bin/server");
        std::fs::create_dir_all(script.parent().unwrap_or(dir.path()))
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&script, "").unwrap_or_else(|e| panic!("{e}"));
        // A data path after the script (a folder to serve, a ticket cache)
        // stays out of sight.
        let data = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let argv: Vec<OsString> = vec![
            "node".into(),
            "--no-warnings".into(),
            script.clone().into(),
            data.path().into(),
            "/tmp".into(),
            "--flag".into(),
        ];
        let seen = visible_in_tmp(&argv);
        if dir.path().starts_with("/tmp") {
            let top = dir
                .path()
                .ancestors()
                .find(|a| a.parent() == Some(Path::new("/tmp")))
                .map(Path::to_path_buf);
            assert_eq!(seen, top.into_iter().collect::<Vec<_>>());
            assert!(!seen.iter().any(|p| data.path().starts_with(p)));
        } else {
            assert!(seen.is_empty());
        }
    }
}
