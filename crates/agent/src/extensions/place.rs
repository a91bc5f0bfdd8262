//! Where extensions are looked for: the user's folders, then the project's.

use std::path::PathBuf;

use crate::config::ConfigLocations;

/// The folders under a home or project directory where extensions are looked for, the first
/// one's winning over a later one's of the same name.
const FOLDERS: [&str; 3] = [".ybs", ".claude", ".agents"];

/// One folder searched.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    /// The folder (`~/.ybs/skills`, `PROJECT/.claude/skills`).
    pub dir: PathBuf,
    /// Below which no link is followed: the project directory for a project's, the folder
    /// itself for the user's.
    pub anchor: PathBuf,
    /// Whether the project supplies it.
    pub project: bool,
}

/// The folders of `kind` (`skills`), the user's first so that a project cannot shadow one
/// of the user's own.
pub(super) fn places(locations: &ConfigLocations, kind: &str) -> Vec<Place> {
    let mut places = Vec::new();
    if let Some(home) = &locations.home {
        for folder in FOLDERS {
            let dir = home.join(folder).join(kind);
            places.push(Place {
                anchor: dir.clone(),
                dir,
                project: false,
            });
        }
    }
    for folder in FOLDERS {
        let dir = locations.cwd.join(folder).join(kind);
        // A project in the home directory has the user's own folders.
        if places.iter().any(|place| place.dir == dir) {
            continue;
        }
        places.push(Place {
            dir,
            anchor: locations.cwd.clone(),
            project: true,
        });
    }
    places
}

/// Whether `name` can name an extension: letters, digits, `-`, `_`, `.`, `:`, at most 64.
pub(crate) fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && (name.chars()).all(|ch| ch.is_ascii_alphanumeric() || "-_.:".contains(ch))
}
