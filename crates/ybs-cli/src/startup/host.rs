//! What ybs reads from its surroundings: where configuration lives, the environment
//! variables it honours and where it keeps its data.

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use crate::config::{self, ConfigLocations};

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
