//! The user's own credential and config files (Google's service-account keys, AWS's shared
//! credentials and config), read through `fsguard`: regular files only, never more than a
//! cap, so a path that leads to a FIFO or a device fails at once instead of hanging or
//! filling memory. A link at the file's name is followed, as dotfiles often are links.

use std::io;
use std::path::Path;

use ybs_fsguard::{Links, read_file};

/// The most a credentials or config file may hold; real ones are a few KiB.
const CAP: u64 = 1 << 20;

/// The text of the file at `path`; `Ok(None)` when there is none.
pub(crate) fn read_text(path: &Path) -> io::Result<Option<String>> {
    match read_file(path, CAP, Links::Follow) {
        Ok(read) => read.into_text(CAP).map(Some),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_blocking_and_a_missing_file_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("credentials");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let error = read_text(&fifo).unwrap_err();
        assert!(error.to_string().contains("not a regular file"), "{error}");
        assert_eq!(read_text(&dir.path().join("none")).unwrap(), None);
        std::fs::write(dir.path().join("ok"), "[default]\n").unwrap();
        assert_eq!(
            read_text(&dir.path().join("ok")).unwrap().as_deref(),
            Some("[default]\n")
        );
    }
}
