//! ybs writing the project's `.ybs.json` for the user (a rule saved with "always, project", a
//! rule removed with `/permissions N`): what the user saves from ybs is their own choice, so
//! the trust the file had carries over to it as it is after the edit. Only a file with
//! nothing waiting for trust before the edit is trusted after it: a file that held a setting
//! the user never trusted (the repository's, or an edit made since) still needs trust, and so
//! does any later change to the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::load::{FlagOverrides, LoadedConfig, load};
use super::paths::ConfigLocations;
use super::trust::{Trust, TrustStore};

/// What is needed to judge the project's file as a start of ybs would: the configuration's
/// places, the environment and flags of this run, and the trust record's place.
#[derive(Debug, Clone)]
pub struct OwnEdits {
    /// Where the configuration files are.
    pub locations: ConfigLocations,
    /// The `YBS_*` variables of this run.
    pub env: BTreeMap<String, String>,
    /// The command line's overrides of this run.
    pub flags: FlagOverrides,
    /// Where the trust record is kept (none: nothing is recorded).
    pub data_home: Option<PathBuf>,
}

/// What became of the trust of the file after ybs edited it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustAfterEdit {
    /// The file needs no trust as it is now, or its new settings were recorded as trusted.
    Kept,
    /// The file held settings the user had not trusted before the edit; it still waits for
    /// trust (`ybs trust`, or the question at start).
    StillUntrusted,
    /// Recording the trust failed (the message says why); the file waits for trust.
    NotRecorded(String),
}

impl OwnEdits {
    /// Runs `edit` (which writes the project file `path`) and carries the file's trust over
    /// to what the edit made of it.
    pub fn edit<T, E>(
        &self,
        path: &Path,
        edit: impl FnOnce() -> Result<T, E>,
    ) -> Result<(T, TrustAfterEdit), E> {
        let store = TrustStore::open(self.data_home.as_deref());
        // Trusted as recorded, never what `--trust-project` trusts for one run only.
        let recorded = Trust {
            everything: false,
            store: store.clone(),
        };
        let settled_before = self
            .judge(&recorded)
            .is_some_and(|loaded| waiting(&loaded, path).is_none());
        let made = edit()?;
        if !settled_before {
            return Ok((made, TrustAfterEdit::StillUntrusted));
        }
        let after = match self.judge(&Trust::default()) {
            Some(loaded) => waiting(&loaded, path),
            None => {
                let why = "the configuration cannot be read after the edit".to_owned();
                return Ok((made, TrustAfterEdit::NotRecorded(why)));
            }
        };
        let Some(digest) = after else {
            return Ok((made, TrustAfterEdit::Kept));
        };
        let mut store = store;
        Ok(match store.trust(path, &digest) {
            Ok(()) => (made, TrustAfterEdit::Kept),
            Err(error) => (made, TrustAfterEdit::NotRecorded(error.to_string())),
        })
    }

    /// The configuration as a start of ybs with `trust` would load it; `None` when it cannot
    /// be loaded (a file that does not parse).
    fn judge(&self, trust: &Trust) -> Option<LoadedConfig> {
        load(&self.locations, &self.env, &self.flags, trust).ok()
    }
}

/// The digest of `path`'s settings that wait for trust in `loaded`, if they do.
fn waiting(loaded: &LoadedConfig, path: &Path) -> Option<String> {
    (loaded.untrusted.iter())
        .find(|file| file.path == path)
        .map(|file| file.digest.clone())
}
