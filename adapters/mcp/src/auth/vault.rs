//! Where a server's login is kept: the OS keyring, as service `cox` and
//! account `mcp/<name>`, when this build has the `keyring` feature and a
//! keyring service answers (the Secret Service over D-Bus on Linux, the
//! Keychain on macOS, the Credential Manager on Windows); otherwise a file
//! per server under `$COX_HOME/mcp-auth` (the folder 0700, the file 0600,
//! written whole through a temporary file).
//!
//! Invariants: which one is used is decided once per process and said by
//! [`describe`] (`cox doctor`); a login saved to the keyring removes the
//! file an earlier one left, and a logout forgets both, so a token never
//! lingers in the place that is not used; a keyring that answers with an
//! error is that error, never a silent fall back to the file.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The keyring service logins are filed under.
const SERVICE: &str = "cox";

/// Whether the OS keyring is used in this process, or why not.
fn keyring() -> Result<(), String> {
    #[cfg(test)]
    {
        Err("unit tests keep logins in files".to_owned())
    }
    #[cfg(all(feature = "keyring", not(test)))]
    {
        match keyring::Entry::store_status() {
            Ok(()) => Ok(()),
            Err(e) => Err(format!("no OS keyring service answers: {e}")),
        }
    }
    #[cfg(all(not(feature = "keyring"), not(test)))]
    {
        Err("this build has no OS keyring support (the keyring feature)".to_owned())
    }
}

/// Where logins are kept, for `cox doctor`.
#[must_use]
pub fn describe(folder: &Path) -> String {
    match keyring() {
        Ok(()) => format!("the OS keyring (service {SERVICE}, account mcp/<name>)"),
        Err(why) => format!("a 0600 file per server in {} ({why})", folder.display()),
    }
}

/// One server's place.
#[derive(Clone, Debug)]
pub struct Vault {
    name: String,
    path: PathBuf,
}

impl Vault {
    pub fn new(folder: &Path, name: &str) -> Self {
        Self {
            name: name.to_owned(),
            path: folder.join(format!("{name}.json")),
        }
    }

    /// The file, where the keyring is not used.
    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where this login is, for error lines.
    pub fn label(&self) -> String {
        match keyring() {
            Ok(()) => format!("the OS keyring's {}/mcp/{}", SERVICE, self.name),
            Err(_) => self.path.display().to_string(),
        }
    }

    /// What is kept, each with where: the keyring's entry first, then the
    /// file (a login made before a keyring was there, or another home's
    /// keyring entry shadowing it); the caller takes the one for its URL.
    pub fn read(&self) -> Result<Vec<(String, String)>, String> {
        let mut out = Vec::new();
        #[cfg(feature = "keyring")]
        if keyring().is_ok() {
            match self.entry()?.get_password() {
                Ok(text) => out.push((self.label(), text)),
                Err(keyring::Error::NoEntry) => {}
                Err(e) => return Err(format!("{}: {e}", self.label())),
            }
        }
        match std::fs::read_to_string(&self.path) {
            Ok(text) => out.push((self.path.display().to_string(), text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("{}: {e}", self.path.display())),
        }
        Ok(out)
    }

    /// Keeps `text`, in the keyring when it is used (the file goes), else
    /// in the file.
    pub fn write(&self, text: &str) -> Result<(), String> {
        #[cfg(feature = "keyring")]
        if keyring().is_ok() {
            self.entry()?
                .set_password(text)
                .map_err(|e| format!("{}: {e}", self.label()))?;
            // The login is kept; a stale file left behind is only read
            // after the keyring's entry, and logout removes it.
            if let Err(why) = self.remove_file() {
                tracing::warn!(%why, "an older login file could not be removed");
            }
            return Ok(());
        }
        self.write_file(text)
    }

    /// Forgets the login wherever it is; whether there was one.
    pub fn forget(&self) -> Result<bool, String> {
        #[allow(unused_mut)]
        let mut had = false;
        #[cfg(feature = "keyring")]
        if keyring().is_ok() {
            match self.entry()?.delete_credential() {
                Ok(()) => had = true,
                Err(keyring::Error::NoEntry) => {}
                Err(e) => return Err(format!("{}: {e}", self.label())),
            }
        }
        Ok(self.remove_file()? || had)
    }

    #[cfg(feature = "keyring")]
    fn entry(&self) -> Result<keyring::Entry, String> {
        keyring::Entry::new(SERVICE, &format!("mcp/{}", self.name))
            .map_err(|e| format!("{}: {e}", self.label()))
    }

    fn remove_file(&self) -> Result<bool, String> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(format!("{}: {e}", self.path.display())),
        }
    }

    /// The file, private, replaced whole.
    pub fn write_file(&self, text: &str) -> Result<(), String> {
        use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        let tmp = self
            .path
            .with_extension(format!("json.{}.tmp", std::process::id()));
        let result = (|| {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp)?;
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        })();
        if let Err(e) = result {
            let _ = std::fs::remove_file(&tmp);
            return Err(format!("{}: {e}", self.path.display()));
        }
        Ok(())
    }
}
