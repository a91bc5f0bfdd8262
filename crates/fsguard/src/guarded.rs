//! File access that re-checks at the moment of access, for paths a [`Guard`] (the tools'
//! path sandbox) allowed.
//!
//! A path that passed the guard's checks is opened by walking from its allowed root one
//! directory at a time with `O_NOFOLLOW`: if a component was swapped for a symlink after the
//! check, the open fails instead of following it, and each directory and the file are checked
//! by identity against what the guard blocks. Writes go to a temp file in the same directory
//! (opened with `O_EXCL | O_NOFOLLOW`), are fsynced and renamed over the target, which
//! replaces a swapped-in symlink instead of writing through it.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode};

use crate::at::{self, DIR_FLAGS, DirSync, FileId, NewMode, ReplaceError};

/// What a guarded access may reach: the roots paths are walked from, and the files and
/// directories that stay out of reach whatever name they are reached by.
pub trait Guard {
    /// The allowed root that `resolved` (an absolute physical path) lies in.
    fn root_of(&self, resolved: &Path) -> Option<&Path>;
    /// Whether the file or directory `id` is blocked (never read nor written).
    fn is_blocked_id(&self, id: FileId) -> bool;
    /// Whether the file or directory `id` is read-only (never written below).
    fn is_read_only_id(&self, id: FileId) -> bool;
    /// Whether `resolved` may be written, by the guard's rules on paths; `shown` is the path
    /// as the caller gave it, for the message.
    fn check_write(&self, shown: &str, resolved: &Path) -> Result<(), Refusal>;
}

/// Why a [`Guard`] refused a path, in words for the one who asked.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

/// The most bytes read into memory for one file.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Why a checked file operation failed.
#[derive(Debug, thiserror::Error)]
pub enum SafeFsError {
    /// The path is not inside a root (it was not resolved by the sandbox).
    #[error("`{0}` is not inside an allowed directory")]
    NotInRoot(String),
    /// A symlink was found where a real directory or file was checked.
    #[error(
        "`{0}` changed into a symbolic link after it was checked; refusing to follow it (try again)"
    )]
    SymlinkRace(String),
    /// The file has more than one hard link, so its contents may belong to a file outside
    /// the sandbox.
    #[error(
        "`{path}` has {links} hard links; files with more than one link are refused because a hard link can point outside the sandbox"
    )]
    HardLinked {
        /// The path.
        path: String,
        /// Its link count.
        links: u64,
    },
    /// The path names something that is not a regular file.
    #[error("`{0}` is not a regular file")]
    NotAFile(String),
    /// The path is a directory where a file was expected.
    #[error("`{0}` is a directory, not a file")]
    IsADirectory(String),
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("`{path}` is too large ({size} bytes; the limit is {MAX_FILE_BYTES})")]
    TooLarge {
        /// The path.
        path: String,
        /// Its size.
        size: u64,
    },
    /// The guard refused the path (a blocked or read-only path, possibly under another name).
    #[error("{0}")]
    Refused(String),
    /// The file does not exist.
    #[error("`{0}` does not exist")]
    NotFound(String),
    /// Another I/O error.
    #[error("`{path}`: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        source: io::Error,
    },
}

/// Reads a whole regular file that the sandbox allowed, refusing symlinks swapped in after
/// the check and files with more than one hard link.
pub fn read(sandbox: &dyn Guard, resolved: &Path) -> Result<Vec<u8>, SafeFsError> {
    Reader::new(sandbox).read(resolved)
}

/// Reads many files below the same roots (a search), keeping each root directory open.
pub struct Reader<'a> {
    sandbox: &'a dyn Guard,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    roots: Vec<(PathBuf, OwnedFd)>,
    /// The directory of the last file read, as the walk from its root opened and checked it:
    /// the files of one directory (which a search reads one after another) are opened
    /// relative to it, one `openat` each, instead of walking from the root again. The
    /// descriptor holds the directory itself, so a rename or a swap of its path afterwards
    /// cannot redirect the opens through it.
    last_parent: Option<(PathBuf, OwnedFd)>,
}

impl<'a> Reader<'a> {
    /// A reader for paths the guard allowed.
    pub fn new(sandbox: &'a dyn Guard) -> Self {
        Reader {
            sandbox,
            roots: Vec::new(),
            last_parent: None,
        }
    }

    /// Like [`read`]: the whole file, refusing symlinks below the root, hard-linked files,
    /// non-regular files and files over [`MAX_FILE_BYTES`].
    pub fn read(&mut self, resolved: &Path) -> Result<Vec<u8>, SafeFsError> {
        let mut bytes = Vec::new();
        self.read_into(resolved, &mut bytes)?;
        Ok(bytes)
    }

    /// Like [`Reader::read`], into `bytes` (cleared first), so that a search reuses one
    /// buffer for all its files. One `fstat` serves both the identity check and the checks
    /// of type, links and size; the file is read with one `read` of its size and one byte
    /// more, and a read that stops short at or past that size is taken as the end of the
    /// file (no second `read` to see end-of-file).
    pub fn read_into(&mut self, resolved: &Path, bytes: &mut Vec<u8>) -> Result<(), SafeFsError> {
        bytes.clear();
        let (fd, stat) = self.open(resolved)?;
        read_checked(&fd, &stat, &|| resolved.display().to_string(), bytes)
    }

    /// Opens a file for reading without following any symlink below its root: the
    /// directories are walked one by one from the open root with no-follow opens, and each
    /// one, and the file, is checked by identity against the blocked set. A directory swapped
    /// or renamed between the path check and the open is then caught by what it is.
    fn open(&mut self, resolved: &Path) -> Result<(OwnedFd, rustix::fs::Stat), SafeFsError> {
        let shown = || resolved.display().to_string();
        if let Some(fd) = self.open_in_last_parent(resolved) {
            return self.checked(fd.map_err(|e| errno_error(e, &shown())), resolved);
        }
        let root = self
            .sandbox
            .root_of(resolved)
            .ok_or_else(|| SafeFsError::NotInRoot(shown()))?;
        let index = match self.roots.iter().position(|(r, _)| r == root) {
            Some(index) => index,
            None => {
                let fd = rustix::fs::open(root, DIR_FLAGS, Mode::empty())
                    .map_err(|e| errno_error(e, &shown()))?;
                self.roots.push((root.to_path_buf(), fd));
                self.roots.len() - 1
            }
        };
        let walk = Walk {
            sandbox: self.sandbox,
            resolved,
            create: false,
            write: false,
        };
        let (parent, name) = walk.parent(&self.roots[index].1, root)?;
        let fd = at::open_read_at(&parent, name);
        self.last_parent = resolved.parent().map(|dir| (dir.to_path_buf(), parent));
        let fd = fd.map_err(|e| errno_error(e, &shown()));
        self.checked(fd, resolved)
    }

    /// The open of a file in the directory of the file read last, by comparing bytes only:
    /// `None` unless `resolved` is that directory, a separator and one name.
    fn open_in_last_parent(&self, resolved: &Path) -> Option<rustix::io::Result<OwnedFd>> {
        use std::os::unix::ffi::OsStrExt;
        let (dir, fd) = self.last_parent.as_ref()?;
        let rest = resolved
            .as_os_str()
            .as_bytes()
            .strip_prefix(dir.as_os_str().as_bytes())?;
        let name = match rest {
            [b'/', name @ ..] => name,
            _ => return None,
        };
        if name.is_empty() || name == b"." || name == b".." || name.contains(&b'/') {
            return None;
        }
        Some(at::open_read_at(fd, OsStr::from_bytes(name)))
    }

    /// The opened file with its status, refused when its identity is blocked.
    fn checked(
        &self,
        fd: Result<OwnedFd, SafeFsError>,
        resolved: &Path,
    ) -> Result<(OwnedFd, rustix::fs::Stat), SafeFsError> {
        let fd = fd?;
        let stat = rustix::fs::fstat(&fd)
            .map_err(|e| io_error(e.into(), &resolved.display().to_string()))?;
        let walk = Walk {
            sandbox: self.sandbox,
            resolved,
            create: false,
            write: false,
        };
        walk.check_id(FileId::from_stat(&stat))?;
        Ok((fd, stat))
    }
}

/// Reads the file `name` in the directory `dir` (which a walk opened and checked) into
/// `bytes` as [`Reader::read_into`] reads a path: opened without following a symlink,
/// refused when its identity is blocked, when it is not a regular file, has more than one
/// hard link or is over [`MAX_FILE_BYTES`]. `shown` names it in errors.
pub fn read_at(
    sandbox: &dyn Guard,
    dir: BorrowedFd<'_>,
    name: &OsStr,
    shown: &dyn Fn() -> String,
    bytes: &mut Vec<u8>,
) -> Result<(), SafeFsError> {
    bytes.clear();
    let fd = at::open_read_at(dir, name).map_err(|e| errno_error(e, &shown()))?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| io_error(e.into(), &shown()))?;
    if sandbox.is_blocked_id(FileId::from_stat(&stat)) {
        return Err(SafeFsError::Refused(format!(
            "access denied: `{}` is a blocked path that was renamed or linked; blocked paths are recognised by identity",
            shown()
        )));
    }
    read_checked(&fd, &stat, shown, bytes)
}

/// Checks what `stat` says of the open file `fd` (a regular file, one link, not too large)
/// and reads it into `bytes`.
fn read_checked(
    fd: &OwnedFd,
    stat: &rustix::fs::Stat,
    shown: &dyn Fn() -> String,
    bytes: &mut Vec<u8>,
) -> Result<(), SafeFsError> {
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => {}
        FileType::Directory => return Err(SafeFsError::IsADirectory(shown())),
        _ => return Err(SafeFsError::NotAFile(shown())),
    }
    #[allow(clippy::unnecessary_cast)]
    let links = stat.st_nlink as u64;
    if links > 1 {
        return Err(SafeFsError::HardLinked {
            path: shown(),
            links,
        });
    }
    let size = at::size_of(stat);
    if size > MAX_FILE_BYTES {
        return Err(SafeFsError::TooLarge {
            path: shown(),
            size,
        });
    }
    at::read_capped(fd, size, MAX_FILE_BYTES, bytes).map_err(|e| io_error(e, &shown()))
}

/// Writes `bytes` to a file the guard allowed, atomically, creating missing parent
/// directories. An existing file keeps its permission bits.
pub fn write_atomic(sandbox: &dyn Guard, resolved: &Path, bytes: &[u8]) -> Result<(), SafeFsError> {
    let shown = resolved.display().to_string();
    sandbox
        .check_write(&shown, resolved)
        .map_err(|e| SafeFsError::Refused(e.to_string()))?;
    let walk = Walk {
        sandbox,
        resolved,
        create: true,
        write: true,
    };
    let root = sandbox
        .root_of(resolved)
        .ok_or_else(|| SafeFsError::NotInRoot(shown.clone()))?;
    let root_fd =
        rustix::fs::open(root, DIR_FLAGS, Mode::empty()).map_err(|e| errno_error(e, &shown))?;
    let (parent, name) = walk.parent(&root_fd, root)?;
    if let Ok(stat) = rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW) {
        walk.check_id(FileId::from_stat(&stat))?;
    }
    let temp = at::temp_name_beside(name);
    at::replace_at(
        &parent,
        name,
        bytes,
        NewMode::KeepOr(Some(0o644)),
        &temp,
        true,
        DirSync::Required,
    )
    .map_err(|error| match error {
        ReplaceError::Directory => SafeFsError::IsADirectory(shown),
        ReplaceError::Io(error) => io_error(error, &shown),
    })
}

/// A walk from a root to the directory holding `resolved`, one no-follow open at a time,
/// checking each directory's identity.
struct Walk<'a> {
    sandbox: &'a dyn Guard,
    resolved: &'a Path,
    /// Create missing directories on the way.
    create: bool,
    /// The walk is for a write: read-only directories (`.git`, `.ybs`) are refused too.
    write: bool,
}

impl<'a> Walk<'a> {
    fn shown(&self) -> String {
        self.resolved.display().to_string()
    }

    /// Refuses an identity that was blocked (or, for a write, read-only) at start.
    fn check_id(&self, id: FileId) -> Result<(), SafeFsError> {
        if self.sandbox.is_blocked_id(id) {
            return Err(SafeFsError::Refused(format!(
                "access denied: `{}` is (or is inside) a blocked path that was renamed or swapped; blocked paths are recognised by identity",
                self.shown()
            )));
        }
        if self.write && self.sandbox.is_read_only_id(id) {
            return Err(SafeFsError::Refused(format!(
                "access denied: `{}` is inside a read-only directory (`.git` or `.ybs`) reached under another name",
                self.shown()
            )));
        }
        Ok(())
    }

    fn check_fd(&self, fd: &OwnedFd) -> Result<(), SafeFsError> {
        let stat = rustix::fs::fstat(fd).map_err(|e| io_error(e.into(), &self.shown()))?;
        self.check_id(FileId::from_stat(&stat))
    }

    /// Opens the directory containing `resolved`, starting at `root_fd` (the open `root`),
    /// and returns it with the final name.
    fn parent(&self, root_fd: &OwnedFd, root: &Path) -> Result<(OwnedFd, &'a OsStr), SafeFsError> {
        let shown = self.shown();
        let relative = self
            .resolved
            .strip_prefix(root)
            .map_err(|_| SafeFsError::NotInRoot(shown.clone()))?;
        let name = relative
            .file_name()
            .ok_or_else(|| SafeFsError::IsADirectory(shown.clone()))?;
        let mut dir = rustix::io::dup(root_fd).map_err(|e| io_error(e.into(), &shown))?;
        let Some(parent) = relative.parent() else {
            return Ok((dir, name));
        };
        for component in parent.components() {
            let Component::Normal(part) = component else {
                return Err(SafeFsError::NotInRoot(shown));
            };
            let opened = if self.create {
                at::open_or_make_dir_at(&dir, part, DIR_FLAGS, 0o755)
            } else {
                at::open_dir_at(&dir, part)
            };
            let next = match opened {
                Ok(fd) => fd,
                Err(e @ (rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR)) => {
                    // `O_DIRECTORY | O_NOFOLLOW` on a symlink fails with ELOOP or ENOTDIR.
                    return Err(if at::is_link_at(&dir, part) {
                        SafeFsError::SymlinkRace(shown)
                    } else {
                        errno_error(e, &shown)
                    });
                }
                Err(e) => return Err(errno_error(e, &shown)),
            };
            self.check_fd(&next)?;
            dir = next;
        }
        Ok((dir, name))
    }
}

/// Whether `resolved` may be written in place by an editor that holds it open (a front
/// end's client) instead of by [`write_atomic`]: the same checks first
/// (the sandbox's write rules, no symlink below the root, blocked and read-only paths by
/// identity), then `Ok(true)` when its directory exists and it is absent or a regular file
/// with one link. `Ok(false)` for the rest (a missing directory, a symlink or a hard-linked
/// file in its place): [`write_atomic`] handles those safely.
pub fn editor_may_write(sandbox: &dyn Guard, resolved: &Path) -> Result<bool, SafeFsError> {
    let shown = resolved.display().to_string();
    sandbox
        .check_write(&shown, resolved)
        .map_err(|e| SafeFsError::Refused(e.to_string()))?;
    let walk = Walk {
        sandbox,
        resolved,
        create: false,
        write: true,
    };
    let root = sandbox
        .root_of(resolved)
        .ok_or_else(|| SafeFsError::NotInRoot(shown.clone()))?;
    let root_fd =
        rustix::fs::open(root, DIR_FLAGS, Mode::empty()).map_err(|e| errno_error(e, &shown))?;
    let (parent, name) = match walk.parent(&root_fd, root) {
        Ok(found) => found,
        Err(SafeFsError::NotFound(_)) => return Ok(false),
        Err(error) => return Err(error),
    };
    match rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => {
            walk.check_id(FileId::from_stat(&stat))?;
            #[allow(clippy::unnecessary_cast)]
            let links = stat.st_nlink as u64;
            match FileType::from_raw_mode(stat.st_mode) {
                FileType::Directory => Err(SafeFsError::IsADirectory(shown)),
                FileType::RegularFile => Ok(links == 1),
                _ => Ok(false),
            }
        }
        Err(rustix::io::Errno::NOENT) => Ok(true),
        Err(e) => Err(io_error(e.into(), &shown)),
    }
}

/// Maps an open error, naming the symlink race for `ELOOP` (what `O_NOFOLLOW` returns for a
/// symlink).
fn errno_error(errno: rustix::io::Errno, shown: &str) -> SafeFsError {
    match errno {
        rustix::io::Errno::LOOP => SafeFsError::SymlinkRace(shown.to_string()),
        rustix::io::Errno::NOENT => SafeFsError::NotFound(shown.to_string()),
        rustix::io::Errno::ISDIR => SafeFsError::IsADirectory(shown.to_string()),
        other => io_error(other.into(), shown),
    }
}

fn io_error(source: io::Error, shown: &str) -> SafeFsError {
    SafeFsError::Io {
        path: shown.to_string(),
        source,
    }
}
