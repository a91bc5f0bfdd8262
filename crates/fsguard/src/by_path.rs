//! A program's own files by path (configuration, state, sessions, a file the user named):
//! the directory is trusted (links in it are followed; a write creates it when missing). A
//! read takes regular files only, without blocking and up to a cap; a write is atomic and
//! does not follow the file's own name, so a link planted there is replaced, never written
//! through. Access below a directory someone else shaped goes through
//! [`Confined`](crate::Confined) or [`physical`](crate::physical) instead.

use std::io;
use std::path::Path;

use rustix::fs::{Mode, OFlags};

use crate::at::{self, Capped, DirSync, NewMode, NotRead, ReplaceError};
use crate::confined::Refused;

/// Whether a read by path follows a link at the file's own name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Follow it (the user's own dotfiles are often links).
    Follow,
    /// Refuse it: the file's name is in a tree someone else may have shaped.
    Refuse,
}

/// At most `cap` bytes of the regular file `path`, saying whether it held more. A FIFO, a
/// socket or a device is refused by its type without blocking, as a directory is (with
/// `ErrorKind::IsADirectory`); with [`Links::Refuse`] a link at `path` is refused too.
pub fn read_file(path: &Path, cap: u64, links: Links) -> io::Result<Capped> {
    let flags = match links {
        Links::Follow => at::READ_FLAGS.difference(OFlags::NOFOLLOW),
        Links::Refuse => at::READ_FLAGS,
    };
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::LOOP) if links == Links::Refuse => {
            return Err(io::Error::other(Refused::Symlink(path.to_owned())));
        }
        Err(errno) => return Err(errno.into()),
    };
    at::read_regular(&fd, cap).map_err(|error| match error {
        NotRead::NotRegular(rustix::fs::FileType::Directory) => io::ErrorKind::IsADirectory.into(),
        NotRead::NotRegular(_) => io::Error::other(Refused::NotRegular(path.to_owned())),
        NotRead::Io(error) => error,
    })
}

/// The permission bits an atomic write gives the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permissions {
    /// Exactly these bits (`0o600` for a file only its user may read).
    Exact(u32),
    /// The bits of the regular file replaced; a new file gets these bits.
    KeepOr(u32),
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, written, given its bits,
/// fsynced, renamed over `path`, and the directory fsynced. A reader or a crash sees the old
/// content or the new; a directory at `path` is refused.
pub fn write_atomic(path: &Path, bytes: &[u8], permissions: Permissions) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    let parent = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let dir = rustix::fs::open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mode = match permissions {
        Permissions::Exact(bits) => NewMode::Exact(bits),
        Permissions::KeepOr(bits) => NewMode::KeepOr(Some(bits)),
    };
    let temp = at::temp_name_beside(name);
    at::replace_at(&dir, name, bytes, mode, &temp, true, DirSync::Required).map_err(|error| {
        match error {
            ReplaceError::Directory => io::ErrorKind::IsADirectory.into(),
            ReplaceError::Io(error) => error,
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::os::unix::fs::{PermissionsExt, symlink};

    use super::*;

    #[test]
    fn writes_private_files_and_replaces_a_link_instead_of_writing_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, "keep").unwrap();
        let path = dir.path().join("state/trust.json");
        write_atomic(&path, b"one", Permissions::Exact(0o600)).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&path), 0o600);
        std::fs::remove_file(&path).unwrap();
        symlink(&outside, &path).unwrap();
        write_atomic(&path, b"two", Permissions::KeepOr(0o600)).unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&path, b"three", Permissions::KeepOr(0o600)).unwrap();
        assert_eq!(mode(&path), 0o640);
        let leftovers = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .filter(|entry| {
                let name = entry.as_ref().unwrap().file_name();
                name.to_string_lossy().ends_with(".tmp")
            })
            .count();
        assert_eq!(leftovers, 0);
        assert!(write_atomic(dir.path(), b"x", Permissions::Exact(0o600)).is_err());
    }
}
