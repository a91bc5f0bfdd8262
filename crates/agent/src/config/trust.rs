//! Trust: the record of the project settings and chat directives the user agreed to, kept
//! outside every project in `$XDG_DATA_HOME/ybs/trust.json` (default `~/.local/share`). Each
//! entry is a file's real path and the digest of what was trusted in it, so a file that
//! changes what it asks for is asked about again.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The trust record, as read at start.
#[derive(Debug, Clone, Default)]
pub struct TrustStore {
    /// Where it is kept; `None` without a data directory (nothing is remembered then).
    path: Option<PathBuf>,
    /// Real path of a file -> digest of its trusted settings.
    files: BTreeMap<String, String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct OnDisk {
    version: u32,
    files: BTreeMap<String, String>,
}

/// What a run trusts: what the user recorded, and everything when `--trust-project` is given.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    /// `--trust-project`: trust this project's settings and chat files for this run.
    pub everything: bool,
    /// What the user trusted before.
    pub store: TrustStore,
}

impl Trust {
    /// Trust in exactly what the user was shown, for this run only: each file's settings
    /// with the digest they had then. A file that changed since is not covered.
    pub fn exactly<'a>(shown: impl IntoIterator<Item = (&'a Path, &'a str)>) -> Trust {
        let files = (shown.into_iter())
            .map(|(file, digest)| (key(file), digest.to_owned()))
            .collect();
        Trust {
            everything: false,
            store: TrustStore { path: None, files },
        }
    }

    /// Whether the settings of `file` whose digest is `digest` are trusted.
    pub fn allows(&self, file: &Path, digest: &str) -> bool {
        self.everything || self.store.allows(file, digest)
    }
}

impl TrustStore {
    /// The file of the trust record under `data_home`.
    pub fn file(data_home: &Path) -> PathBuf {
        data_home.join("ybs").join("trust.json")
    }

    /// Reads the record under `data_home`; a missing or unreadable one trusts nothing.
    pub fn open(data_home: Option<&Path>) -> TrustStore {
        let Some(data_home) = data_home else {
            return TrustStore::default();
        };
        let path = TrustStore::file(data_home);
        let files = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str::<OnDisk>(&text).ok())
            .map(|disk| disk.files)
            .unwrap_or_default();
        TrustStore {
            path: Some(path),
            files,
        }
    }

    /// Whether nothing is recorded, and nothing can be (no data directory).
    pub fn is_empty(&self) -> bool {
        self.path.is_none() && self.files.is_empty()
    }

    /// Whether `file` was trusted with the digest `digest`.
    pub fn allows(&self, file: &Path, digest: &str) -> bool {
        self.files
            .get(&key(file))
            .is_some_and(|kept| kept == digest)
    }

    /// Trusts `digest` for `file` in memory only.
    #[cfg(test)]
    pub fn allow_for_tests(&mut self, file: &Path, digest: &str) {
        self.files.insert(key(file), digest.to_owned());
    }

    /// Records that `file`'s settings with `digest` are trusted, and saves the record (read
    /// again first, so what another ybs saved meanwhile is kept).
    pub fn trust(&mut self, file: &Path, digest: &str) -> io::Result<()> {
        let Some(path) = self.path.clone() else {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "no data directory to keep the trust record in (set HOME or XDG_DATA_HOME)",
            ));
        };
        let mut latest = TrustStore::open(path.parent().and_then(Path::parent));
        latest.files.insert(key(file), digest.to_owned());
        let disk = OnDisk {
            version: 1,
            files: latest.files.clone(),
        };
        let text = serde_json::to_string_pretty(&disk).map_err(io::Error::other)?;
        write_private(&path, text.as_bytes())?;
        self.files = latest.files;
        Ok(())
    }
}

/// The record's key for `file`: its real path (links and `..` resolved).
fn key(file: &Path) -> String {
    std::fs::canonicalize(file)
        .unwrap_or_else(|_| file.to_owned())
        .to_string_lossy()
        .into_owned()
}

/// The digest of `what` (the settings or directives shown to the user), as `sha256:HEX`.
pub fn digest(what: &str) -> String {
    let hash = Sha256::digest(what.as_bytes());
    let hex: String = hash.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256:{hex}")
}

/// Writes `bytes` to `path` atomically (a synced temp file renamed over it), readable by the
/// user only; the directory is created when missing.
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    ybs_fsguard::write_atomic(path, bytes, ybs_fsguard::Permissions::Exact(0o600))
}
