//! What a stdio server's command needs from the sandbox to start the way
//! people write it: `npx -y PKG`, `uvx PKG`, `pipx run PKG`, `bunx PKG`,
//! or a script anywhere they can read.
//!
//! - A package launcher fetches the package into its cache on the first
//!   run: that cache (made when missing) is writable for the server, and
//!   nothing else of the home is.
//! - The sandbox's `/tmp` is private; a program or an argument that names
//!   an existing path under `/tmp` has that path's top folder there
//!   (`/tmp/x` for `/tmp/x/node_modules/.bin/server`), read-only, so the
//!   script and the modules beside it are found.
//!
//! The network is the entry's `network` (on unless it says false): a
//! launcher reaches its registry, a server its API; the file system stays
//! confined either way.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The caches `program` (a launcher, by its file name) writes under
/// `home`; empty for any other program.
#[must_use]
pub fn caches(program: &Path, home: &Path) -> Vec<PathBuf> {
    let name = program
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let under = |parts: &[&str]| parts.iter().map(|p| home.join(p)).collect();
    match name {
        "npx" | "npm" | "pnpm" | "pnpx" => under(&[".npm", ".cache/pnpm", ".local/share/pnpm"]),
        "uvx" | "uv" => under(&[".cache/uv", ".local/share/uv"]),
        "pipx" => under(&[".local/pipx", ".local/share/pipx", ".cache/pipx"]),
        "bunx" | "bun" => under(&[".bun/install/cache"]),
        _ => Vec::new(),
    }
}

/// The top folders under `/tmp` of the paths `argv` names that exist.
#[must_use]
pub fn visible_in_tmp(argv: &[OsString]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for arg in argv {
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
/// `network`, the launcher's caches under `home` (each made if missing),
/// and its paths under `/tmp`.
#[must_use]
pub fn reach(argv: &[OsString], home: Option<&Path>, network: bool) -> cox_sandbox::ServerReach {
    let writable = match (argv.first(), home) {
        (Some(program), Some(home)) => caches(Path::new(program), home)
            .into_iter()
            .filter(|dir| std::fs::create_dir_all(dir).is_ok())
            .collect(),
        _ => Vec::new(),
    };
    cox_sandbox::ServerReach {
        network,
        writable,
        visible: visible_in_tmp(argv),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_launcher_has_its_caches_and_other_programs_none() {
        let home = Path::new("/home/a");
        assert_eq!(
            caches(Path::new("/usr/bin/npx"), home),
            [
                home.join(".npm"),
                home.join(".cache/pnpm"),
                home.join(".local/share/pnpm")
            ]
        );
        assert!(caches(Path::new("uvx"), home).contains(&home.join(".cache/uv")));
        assert!(caches(Path::new("pipx"), home).contains(&home.join(".local/pipx")));
        assert!(caches(Path::new("node"), home).is_empty());
        assert!(caches(Path::new("/tmp/npx-lookalike/server"), home).is_empty());
    }

    #[test]
    fn only_existing_paths_under_tmp_are_made_visible_by_their_top_folder() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let script = dir.path().join("node_modules/.bin/server");
        std::fs::create_dir_all(script.parent().unwrap_or(dir.path()))
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&script, "").unwrap_or_else(|e| panic!("{e}"));
        let argv: Vec<OsString> = vec![
            "node".into(),
            script.clone().into(),
            "/tmp/does-not-exist-cox/x".into(),
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
        } else {
            assert!(seen.is_empty());
        }
    }
}
