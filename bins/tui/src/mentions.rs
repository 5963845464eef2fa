//! Completing `@path` in the composer: the files and folders under the
//! session's folder whose names start with what is typed after the `@`.
//!
//! Only names are read (one folder listing per Tab or redraw of the
//! popup), never contents; hidden entries are offered only once a `.` is
//! typed; at most [`MAX`] are offered, folders marked with a `/`.

use std::path::Path;

/// The most completions offered at once.
pub const MAX: usize = 20;

/// The `@word` the text ends with (after its last whitespace), if any.
#[must_use]
pub fn last_mention(text: &str) -> Option<&str> {
    let word = text.rsplit(char::is_whitespace).next()?;
    word.strip_prefix('@')
}

/// Completions of the mention `typed` (without its `@`) under `cwd`: each
/// as `@path` (a folder's ending in `/`) and "file" or "folder".
#[must_use]
pub fn complete(typed: &str, cwd: &Path) -> Vec<(String, String)> {
    let (dir, prefix) = match typed.rfind('/') {
        Some(at) => (&typed[..=at], &typed[at + 1..]),
        None => ("", typed),
    };
    let Ok(entries) = std::fs::read_dir(cwd.join(dir)) else {
        return Vec::new();
    };
    let mut found: Vec<(String, String)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.starts_with(prefix) || (name.starts_with('.') && !prefix.starts_with('.')) {
                return None;
            }
            let folder = entry.file_type().is_ok_and(|t| t.is_dir());
            Some(if folder {
                (format!("@{dir}{name}/"), "folder".to_owned())
            } else {
                (format!("@{dir}{name}"), "file".to_owned())
            })
        })
        .collect();
    found.sort();
    found.truncate(MAX);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_word_is_the_mention() {
        assert_eq!(last_mention("look at @src/ma"), Some("src/ma"));
        assert_eq!(last_mention("look at @src/main.rs now"), None);
        assert_eq!(last_mention("@"), Some(""));
    }

    #[test]
    fn files_and_folders_under_the_typed_folder_complete() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/bin")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "").unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
        std::fs::write(dir.path().join(".env"), "").unwrap();
        assert_eq!(
            complete("src/", dir.path()),
            [
                ("@src/bin/".to_owned(), "folder".to_owned()),
                ("@src/lib.rs".to_owned(), "file".to_owned()),
                ("@src/main.rs".to_owned(), "file".to_owned()),
            ]
        );
        assert_eq!(complete("src/m", dir.path()).len(), 1);
        assert_eq!(
            complete("", dir.path()),
            [("@src/".to_owned(), "folder".to_owned())]
        );
        assert_eq!(
            complete(".e", dir.path()).len(),
            1,
            "hidden once a dot is typed"
        );
        assert!(complete("nowhere/", dir.path()).is_empty());
    }
}
