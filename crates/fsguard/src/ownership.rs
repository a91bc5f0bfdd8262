//! Whose a file is. A directory another user owns is not the current user's to take
//! configuration, instructions or a repository from, even when it lies above the current
//! user's own files (a shared, sticky `/tmp`): as git's `safe.directory` check, ownership
//! decides, not the path.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Whether `path` (not following a link at its end) exists and belongs to a user other than
/// the one this process acts as. A path that cannot be examined counts as someone else's.
pub fn owned_by_someone_else(path: &Path) -> bool {
    match path.symlink_metadata() {
        Ok(metadata) => metadata.uid() != rustix::process::geteuid().as_raw(),
        Err(err) => err.kind() != std::io::ErrorKind::NotFound,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn own_files_are_mine_and_missing_ones_nobodys() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!owned_by_someone_else(dir.path()));
        assert!(!owned_by_someone_else(&dir.path().join("missing")));
        if rustix::process::geteuid().is_root() {
            let theirs = dir.path().join("theirs");
            std::fs::create_dir(&theirs).unwrap();
            std::os::unix::fs::lchown(&theirs, Some(65534), Some(65534)).unwrap();
            assert!(owned_by_someone_else(&theirs));
        }
    }
}
