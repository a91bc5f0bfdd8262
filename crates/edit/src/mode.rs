//! `diff_mode`: which `edit_file` schema the model gets.

use std::fmt;
use std::str::FromStr;

/// The `diff_mode` setting of `~/.config/bb7/config.json`. The edit tool is always named
/// `edit_file`; only its schema changes (and `Off` leaves only `write_file`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DiffMode {
    /// `search_replace_multi` (the default): `{edits: [{path, file_id, old_string,
    /// new_string, replace_all?}]}`, applied in order, possibly over several files.
    #[default]
    SearchReplaceMulti,
    /// `search_replace`: `{path, file_id, old_string, new_string, replace_all?}`.
    SearchReplace,
    /// `anchored` (experimental): `{path, file_id, changes: [{start, end?, content}]}`.
    Anchored,
    /// `off`: no `edit_file`; full rewrites with `write_file` only.
    Off,
}

impl DiffMode {
    /// Every mode, in the order the config documentation lists them.
    pub const ALL: [DiffMode; 4] = [
        DiffMode::SearchReplaceMulti,
        DiffMode::SearchReplace,
        DiffMode::Anchored,
        DiffMode::Off,
    ];

    /// The config string of this mode.
    pub fn as_str(self) -> &'static str {
        match self {
            DiffMode::SearchReplaceMulti => "search_replace_multi",
            DiffMode::SearchReplace => "search_replace",
            DiffMode::Anchored => "anchored",
            DiffMode::Off => "off",
        }
    }
}

impl fmt::Display for DiffMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `diff_mode` config value that is not one of the four modes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffModeError {
    /// The value found in the config.
    pub value: String,
}

impl fmt::Display for DiffModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid diff_mode {:?} in ~/.config/bb7/config.json: use one of \
             \"search_replace_multi\" (default), \"search_replace\", \"anchored\" or \"off\"",
            self.value
        )
    }
}

impl std::error::Error for DiffModeError {}

impl FromStr for DiffMode {
    type Err = DiffModeError;

    /// Parses the exact config string (case-sensitive, no surrounding spaces).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DiffMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| DiffModeError {
                value: s.to_owned(),
            })
    }
}
