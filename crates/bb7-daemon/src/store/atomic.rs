//! Atomic file writes: a temporary file in the target's directory, fsynced, then renamed over
//! the target, so a reader (or a crash) sees the old content or the new, never half of it.
//! New files get `0666` less the umask (`0644` usually), existing ones keep their mode. Writes
//! below `.bb7/` go through [`write_in`] / [`write_json_in`], which never follow a link; the
//! plain forms are for per-user files whose directory the user owns.

use std::path::Path;

use serde::Serialize;

use crate::store::error::{Error, Result};
use ybs_fsguard::confined::Confined;

/// Writes `bytes` to `path` atomically, creating missing parent directories. Only the file
/// name itself is not followed (a link there is replaced); its directory is trusted.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    write_in(&Confined::new(dir), path, bytes)
}

/// Writes `value` as pretty JSON to `path` atomically.
pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    write(path, &encode(path, value)?)
}

/// Writes `bytes` to `path` beneath `fs`'s anchor, atomically and without following links.
pub fn write_in(fs: &Confined, path: &Path, bytes: &[u8]) -> Result<()> {
    fs.write(path, bytes).map_err(Error::io("write", path))
}

/// Writes `value` as pretty JSON beneath `fs`'s anchor.
pub fn write_json_in<T: Serialize + ?Sized>(fs: &Confined, path: &Path, value: &T) -> Result<()> {
    write_in(fs, path, &encode(path, value)?)
}

/// Writes `value` as pretty JSON beneath `fs`'s anchor atomically, the file fsynced but not
/// its directory (see [`Confined::write_unsynced_dir`]).
pub fn write_json_unsynced_dir_in<T: Serialize + ?Sized>(
    fs: &Confined,
    path: &Path,
    value: &T,
) -> Result<()> {
    fs.write_unsynced_dir(path, &encode(path, value)?)
        .map_err(Error::io("write", path))
}

/// Writes `value` as pretty JSON beneath `fs`'s anchor atomically but without `fsync`, for a
/// file its reader rebuilds when it is missing or does not parse (see
/// [`Confined::write_rebuildable`]).
pub fn write_rebuildable_json_in<T: Serialize + ?Sized>(
    fs: &Confined,
    path: &Path,
    value: &T,
) -> Result<()> {
    fs.write_rebuildable(path, &encode(path, value)?)
        .map_err(Error::io("write", path))
}

fn encode<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<Vec<u8>> {
    let mut text = serde_json::to_vec_pretty(value)
        .map_err(|err| Error::Invalid(format!("cannot encode {}: {err}", path.display())))?;
    text.push(b'\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn replaces_whole_content_and_creates_parents() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/c.txt");
        write(&path, b"first version, long").unwrap();
        write(&path, b"second").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary files are left behind");
    }
}
