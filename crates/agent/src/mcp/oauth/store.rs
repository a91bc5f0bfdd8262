//! The tokens of MCP servers reached over HTTP, one file per server URL under ybs's data
//! directory (`$XDG_DATA_HOME/ybs/mcp-tokens/`), mode 0600, written atomically. The file is
//! named after a digest of the URL and holds the URL: a token is only ever sent to the URL
//! it was issued for, whatever name a configuration gives the server.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use ybs_fsguard::{Links, Permissions};

/// The most a token file may hold.
const FILE_CAP: u64 = 64 * 1024;

/// What a login left for one server URL.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredToken {
    /// The MCP server's URL the token is for.
    pub url: String,
    /// The client ybs registered with the authorization server.
    pub client_id: String,
    /// Where tokens are refreshed.
    pub token_endpoint: String,
    /// The bearer token.
    pub access_token: String,
    /// The token that gets a new one.
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the epoch.
    #[serde(default)]
    pub expires_at: Option<u64>,
}

impl std::fmt::Debug for StoredToken {
    // Tokens are never shown, not even in a debug print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredToken")
            .field("url", &self.url)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl StoredToken {
    /// Whether the access token has expired (a minute early, so a call does not race it).
    pub fn expired(&self) -> bool {
        self.expires_at
            .is_some_and(|at| at <= now().saturating_add(60))
    }
}

/// Seconds since the epoch.
pub(super) fn now() -> u64 {
    (SystemTime::now().duration_since(UNIX_EPOCH)).map_or(0, |elapsed| elapsed.as_secs())
}

/// The directory of the token files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenStore {
    dir: PathBuf,
}

impl TokenStore {
    /// The store under `data_home` (`$XDG_DATA_HOME`, else `~/.local/share`).
    pub fn new(data_home: &Path) -> Self {
        TokenStore {
            dir: data_home.join("ybs").join("mcp-tokens"),
        }
    }

    /// The store of this process's data directory; `None` without a home.
    pub fn of_process() -> Option<Self> {
        let data_home = match std::env::var_os("XDG_DATA_HOME").map(PathBuf::from) {
            Some(dir) if dir.is_absolute() => dir,
            _ => PathBuf::from(std::env::var_os("HOME")?).join(".local/share"),
        };
        Some(Self::new(&data_home))
    }

    /// The file of `url`'s token.
    pub fn path(&self, url: &str) -> PathBuf {
        let digest = Sha256::digest(url.as_bytes());
        let name: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
        self.dir.join(format!("{name}.json"))
    }

    /// The token of `url`, if one was stored for exactly this URL.
    pub fn load(&self, url: &str) -> Option<StoredToken> {
        let read = ybs_fsguard::read_file(&self.path(url), FILE_CAP, Links::Refuse).ok()?;
        let token: StoredToken = serde_json::from_slice(&read.bytes).ok()?;
        (token.url == url).then_some(token)
    }

    /// Stores `token` for its URL, readable by the user only.
    pub fn save(&self, token: &StoredToken) -> io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let bytes = serde_json::to_vec_pretty(token).map_err(io::Error::other)?;
        ybs_fsguard::write_atomic(&self.path(&token.url), &bytes, Permissions::Exact(0o600))
    }

    /// Removes `url`'s token; whether there was one.
    pub fn remove(&self, url: &str) -> io::Result<bool> {
        match std::fs::remove_file(self.path(url)) {
            Ok(()) => Ok(true),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(error) => Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn token(url: &str) -> StoredToken {
        StoredToken {
            url: url.into(),
            client_id: "c".into(),
            token_endpoint: "http://as/token".into(),
            access_token: "secret-access".into(),
            refresh_token: None,
            expires_at: None,
        }
    }

    #[test]
    fn a_token_is_kept_for_its_url_only_and_readable_by_the_user_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = TokenStore::new(dir.path());
        store.save(&token("http://a/mcp")).unwrap();
        let path = store.path("http://a/mcp");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(store.load("http://a/mcp").is_some());
        assert!(store.load("http://b/mcp").is_none());
        assert!(!format!("{:?}", token("x")).contains("secret"));
        assert!(store.remove("http://a/mcp").unwrap());
        assert!(!store.remove("http://a/mcp").unwrap());
    }
}
