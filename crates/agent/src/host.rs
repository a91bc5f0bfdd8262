//! What ybs reads from its surroundings: where configuration lives, the environment
//! variables it honours and where it keeps its data.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use crate::config::{self, ConfigLocations};
use crate::setup::Surroundings;

/// What ybs reads from its surroundings: where configuration lives and the environment
/// variables it honours. Tests build one by hand to isolate themselves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// Configuration file locations.
    pub locations: ConfigLocations,
    /// `YBS_*` and `NO_COLOR`.
    pub env: BTreeMap<String, String>,
    /// Where sessions are kept: `$XDG_DATA_HOME`, else `~/.local/share`.
    pub data_home: Option<PathBuf>,
}

impl Host {
    /// This process's home, `XDG_CONFIG_HOME`, working directory and variables.
    pub fn from_process() -> io::Result<Host> {
        let locations = ConfigLocations::from_process()?;
        let data_home = match std::env::var_os("XDG_DATA_HOME").map(PathBuf::from) {
            Some(xdg) if xdg.is_absolute() => Some(xdg),
            _ => locations
                .home
                .as_ref()
                .map(|home| home.join(".local/share")),
        };
        Ok(Host {
            locations,
            env: config::process_env(),
            data_home,
        })
    }
}

impl Host {
    /// The project directory, home and variables an agent is built with.
    pub fn surroundings(&self) -> Surroundings {
        Surroundings {
            cwd: self.locations.cwd.clone(),
            home: self.locations.home.clone(),
            env: self.env.clone(),
        }
    }

    /// The session file to write: the resumed one, or a new one for this directory (`None`
    /// without a data directory).
    pub fn session_file(&self, resume: Option<&Path>) -> Option<PathBuf> {
        if let Some(path) = resume {
            return Some(path.to_owned());
        }
        let data = self.data_home.as_ref()?;
        let dir = crate::session::sessions_dir(data, &self.locations.cwd);
        Some(crate::session::new_session_path(&dir))
    }
}
