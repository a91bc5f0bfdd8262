//! Atomic file writes: a temporary file in the target's directory, fsynced, then renamed over
//! the target, so a reader (or a crash) sees the old content or the new, never half of it.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};

/// Writes `bytes` to `path` atomically, creating missing parent directories.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(Error::io("create directory", dir))?;
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .map_err(Error::io("create a temporary file in", dir))?;
    file.write_all(bytes).map_err(Error::io("write", path))?;
    file.as_file().sync_all().map_err(Error::io("sync", path))?;
    file.persist(path).map_err(|err| Error::Io {
        what: "replace",
        path: path.to_path_buf(),
        source: err.error,
    })?;
    Ok(())
}

/// Writes `value` as pretty JSON to `path` atomically.
pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    let mut text = serde_json::to_vec_pretty(value)
        .map_err(|err| Error::Invalid(format!("cannot encode {}: {err}", path.display())))?;
    text.push(b'\n');
    write(path, &text)
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
