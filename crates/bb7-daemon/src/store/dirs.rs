//! Directory helpers: moving a directory tree, across file systems if need be.

use std::path::Path;

use crate::protocol::error::{Error, Result};

/// Moves a directory, across file systems if need be.
pub fn move_dir(from: &Path, to: &Path) -> Result<()> {
    if std::fs::rename(from, to).is_ok() {
        return Ok(());
    }
    copy_dir(from, to)?;
    std::fs::remove_dir_all(from).map_err(Error::io("remove", from))
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).map_err(Error::io("create directory", to))?;
    for entry in std::fs::read_dir(from)
        .map_err(Error::io("list", from))?
        .flatten()
    {
        let target = to.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(Error::io("inspect", entry.path()))?;
        if kind.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).map_err(Error::io("copy", entry.path()))?;
        }
    }
    Ok(())
}
