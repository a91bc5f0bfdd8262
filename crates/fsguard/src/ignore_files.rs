//! Keeps the walks built on the `ignore` crate (`list_files`, `search_files`, the repository
//! map) from reading an ignore file that never ends. The crate opens `.gitignore`, `.ignore`
//! and `.git/info/exclude` by path, following a link, and reads them to the end: a cloned
//! repository whose `.gitignore` is a link to `/dev/zero`, or a FIFO, would hang the walk and
//! fill memory. A directory whose ignore files are not regular files of a bounded size is therefore not
//! entered ([`ignore_files_safe`]), and a walk whose root or a parent of it has one does not
//! start ([`unsafe_ignore_file_above`]). Checking needs only `stat`, which opens nothing.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// The largest ignore file a walk reads (real ones are a few kilobytes): the repository map
/// does not enter a directory with a larger one, `list_files` reads no more of it.
pub const MAX_IGNORE_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The ignore files the walks have the crate read, relative to a directory.
const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".git/info/exclude"];

/// The first ignore file of `dir` the crate must not read (see [`readable_ignore_file`]).
pub fn unsafe_ignore_file(dir: &Path) -> Option<PathBuf> {
    (IGNORE_FILES.iter())
        .map(|name| dir.join(name))
        .find(|path| !readable_ignore_file(path))
}

/// Whether the ignore file `path` may be read: it is absent, or it is (or links to) a
/// regular file of at most [`MAX_IGNORE_FILE_BYTES`]. A link to a small regular file is fine:
/// its lines are only patterns. A file that cannot be examined (a loop of links, no
/// permission) cannot be opened by the crate either.
pub fn readable_ignore_file(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Ok(meta) => meta.is_file() && meta.len() <= MAX_IGNORE_FILE_BYTES,
        Err(error) => {
            matches!(
                error.kind(),
                ErrorKind::NotFound | ErrorKind::NotADirectory | ErrorKind::PermissionDenied
            ) || error.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
        }
    }
}

/// Whether a walk may enter `dir`: see [`unsafe_ignore_file`].
pub fn ignore_files_safe(dir: &Path) -> bool {
    unsafe_ignore_file(dir).is_none()
}

/// The first unsafe ignore file of `root` or a directory above it (the crate reads the
/// parents' ignore files before the walk starts).
pub fn unsafe_ignore_file_above(root: &Path) -> Option<PathBuf> {
    root.ancestors().find_map(unsafe_ignore_file)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_small_regular_ignore_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert!(ignore_files_safe(root));
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.join("patterns"), "*.log\n").unwrap();
        std::os::unix::fs::symlink(root.join("patterns"), root.join(".ignore")).unwrap();
        assert!(ignore_files_safe(root));

        let device = root.join("device");
        std::fs::create_dir(&device).unwrap();
        std::os::unix::fs::symlink("/dev/zero", device.join(".gitignore")).unwrap();
        assert_eq!(unsafe_ignore_file(&device), Some(device.join(".gitignore")));

        let fifo = root.join("fifo");
        std::fs::create_dir(&fifo).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            fifo.join(".ignore"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert!(!ignore_files_safe(&fifo));

        let big = root.join("big");
        std::fs::create_dir_all(big.join(".git/info")).unwrap();
        let file = std::fs::File::create(big.join(".git/info/exclude")).unwrap();
        file.set_len(MAX_IGNORE_FILE_BYTES + 1).unwrap();
        assert!(!ignore_files_safe(&big));

        let nested = device.join("a/b");
        std::fs::create_dir_all(&nested).unwrap();
        assert_eq!(
            unsafe_ignore_file_above(&nested),
            Some(device.join(".gitignore"))
        );
        assert_eq!(unsafe_ignore_file_above(root), None);
    }
}
