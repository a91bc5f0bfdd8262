//! Reads and writes of files by absolute path, for ybs's own access to files the model could
//! have touched (undo's copies and restores, previews before a confirmation): every path is
//! absolute and physical (resolved when it was checked) and is walked from `/` one component
//! at a time with `O_NOFOLLOW`, so
//! a directory or file that was swapped for a symbolic link since is refused, never followed.
//! Only regular files are read, opened without blocking (a FIFO or a device is refused, not
//! waited on) and never beyond a limit the caller gives. Writes go to a new temp file in the
//! same directory renamed over the target, which replaces a link instead of writing through it.

use std::ffi::OsStr;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode};

use crate::at::{self, DirSync, NewMode, PASS_DIR_FLAGS, ReplaceError, kind_name};

/// Why a file was not read or written.
#[derive(Debug, thiserror::Error)]
pub enum NoFollowError {
    /// The path is relative, or has `..` in it.
    #[error("`{0}` is not an absolute physical path")]
    NotPhysical(PathBuf),
    /// A component of the path is a symbolic link now.
    #[error("`{0}` is reached through a symbolic link now; refusing to follow it")]
    Link(PathBuf),
    /// The path names something that is not a regular file (a FIFO, a socket, a device, a
    /// directory).
    #[error("`{path}` is not a regular file (it is {kind})")]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// The file is larger than the caller's limit.
    #[error("`{path}` is too large ({size} bytes; the limit is {limit})")]
    TooLarge {
        /// The path.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The path leads, once its links are resolved, out of the directory it was to be read
    /// from.
    #[error("`{path}` leads to `{resolved}`, outside `{within}`; refusing to read it")]
    Outside {
        /// The path.
        path: PathBuf,
        /// Where its links lead.
        resolved: PathBuf,
        /// The directory it had to stay in.
        within: PathBuf,
    },
    /// Another I/O error.
    #[error("`{path}`: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

/// A regular file's content and permission bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Regular {
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Its permission bits (`0o7777` at most).
    pub mode: u32,
}

/// Reads the regular file `path` (at most `limit` bytes); `None` when it does not exist.
pub fn read(path: &Path, limit: u64) -> Result<Option<Regular>, NoFollowError> {
    let Some((parent, name)) = walk_parent(path, false)? else {
        return Ok(None);
    };
    let fd = match at::open_read_at(&parent, name) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(errno) => return Err(open_error(&parent, name, path, errno)),
    };
    let stat = rustix::fs::fstat(&fd).map_err(|e| io_error(path, e.into()))?;
    let kind = FileType::from_raw_mode(stat.st_mode);
    if kind != FileType::RegularFile {
        return Err(NoFollowError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_name(kind),
        });
    }
    let size = at::size_of(&stat);
    if size > limit {
        return Err(NoFollowError::TooLarge {
            path: path.to_path_buf(),
            size,
            limit,
        });
    }
    let mut bytes = Vec::new();
    at::read_capped(&fd, size, limit, &mut bytes).map_err(|e| io_error(path, e))?;
    let grown = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if grown > limit {
        // It grew past the limit after the `fstat`.
        return Err(NoFollowError::TooLarge {
            path: path.to_path_buf(),
            size: grown,
            limit,
        });
    }
    Ok(Some(Regular {
        bytes,
        mode: at::mode_of(&stat),
    }))
}

/// Where `path` leads once every link in it is resolved, if that lies inside the directory
/// `within` (itself resolved first): a file of a project that a link inside the project
/// names is fine, one that leads out of it is refused. `None` when `path` does not exist.
/// Read the answer with [`read`], which follows no link, so a link swapped in between is
/// refused rather than followed.
pub fn resolve_within(within: &Path, path: &Path) -> Result<Option<PathBuf>, NoFollowError> {
    let within = std::fs::canonicalize(within).map_err(|e| io_error(within, e))?;
    let resolved = match std::fs::canonicalize(path) {
        Ok(resolved) => resolved,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io_error(path, error)),
    };
    if !resolved.starts_with(&within) {
        return Err(NoFollowError::Outside {
            path: path.to_path_buf(),
            resolved,
            within,
        });
    }
    Ok(Some(resolved))
}

/// What is at `path` now, without following a link: `None` when nothing is.
pub fn kind(path: &Path) -> Result<Option<&'static str>, NoFollowError> {
    let Some((parent, name)) = walk_parent(path, false)? else {
        return Ok(None);
    };
    match rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => Ok(Some(kind_name(FileType::from_raw_mode(stat.st_mode)))),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(errno) => Err(io_error(path, errno.into())),
    }
}

/// Writes `bytes` to `path` with the permission bits `mode`, atomically, creating missing
/// parent directories. A link at `path` itself is replaced, not written through; a directory
/// there is refused.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), NoFollowError> {
    let Some((parent, name)) = walk_parent(path, true)? else {
        return Err(io_error(path, io::ErrorKind::NotFound.into()));
    };
    write_atomic_at(&parent, name, bytes, mode).map_err(|e| match e {
        AtError::Directory => NoFollowError::NotRegular {
            path: path.to_path_buf(),
            kind: "a directory",
        },
        AtError::Io(source) => io_error(path, source),
    })
}

/// Why [`write_atomic_at`] failed.
#[derive(Debug, thiserror::Error)]
pub enum AtError {
    /// The name is a directory.
    #[error("it is a directory")]
    Directory,
    /// Another I/O error.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Writes `bytes` as `name` in the open directory `dir`: a new temp file (`O_EXCL`, no
/// follow) fsynced and renamed over `name`, with the permission bits `mode`.
pub fn write_atomic_at(
    dir: &OwnedFd,
    name: &OsStr,
    bytes: &[u8],
    mode: u32,
) -> Result<(), AtError> {
    let temp = at::temp_name_beside(name);
    at::replace_at(
        dir,
        name,
        bytes,
        NewMode::Exact(mode),
        &temp,
        true,
        // A directory opened with `O_PATH` cannot be synced.
        DirSync::BestEffort,
    )
    .map_err(|error| match error {
        ReplaceError::Directory => AtError::Directory,
        ReplaceError::Io(error) => AtError::Io(error),
    })
}

/// Removes the file (or link) `path`; `false` when it did not exist. A directory is refused.
pub fn remove_file(path: &Path) -> Result<bool, NoFollowError> {
    let Some((parent, name)) = walk_parent(path, false)? else {
        return Ok(false);
    };
    match rustix::fs::unlinkat(&parent, name, AtFlags::empty()) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::NOENT) => Ok(false),
        Err(rustix::io::Errno::ISDIR) => Err(NoFollowError::NotRegular {
            path: path.to_path_buf(),
            kind: "a directory",
        }),
        Err(errno) => Err(io_error(path, errno.into())),
    }
}

/// Opens the directory `path` without following any link on the way.
pub fn open_dir(path: &Path) -> Result<Option<OwnedFd>, NoFollowError> {
    let mut dir = root()?;
    for part in parts(path)? {
        match step(&dir, part, path, false)? {
            Some(next) => dir = next,
            None => return Ok(None),
        }
    }
    Ok(Some(dir))
}

/// The directory holding `path`, opened by a no-follow walk from `/`, and the final name;
/// `None` when a directory on the way does not exist (and `create` is off).
fn walk_parent(path: &Path, create: bool) -> Result<Option<(OwnedFd, &OsStr)>, NoFollowError> {
    let parts = parts(path)?;
    let Some((name, dirs)) = parts.split_last() else {
        return Err(NoFollowError::NotPhysical(path.to_path_buf()));
    };
    let mut dir = root()?;
    for part in dirs {
        match step(&dir, part, path, create)? {
            Some(next) => dir = next,
            None => return Ok(None),
        }
    }
    Ok(Some((dir, name)))
}

fn root() -> Result<OwnedFd, NoFollowError> {
    rustix::fs::open("/", PASS_DIR_FLAGS, Mode::empty())
        .map_err(|e| io_error(Path::new("/"), e.into()))
}

/// The names of an absolute path, refusing `..` (a physical path has none).
fn parts(path: &Path) -> Result<Vec<&OsStr>, NoFollowError> {
    if !path.is_absolute() {
        return Err(NoFollowError::NotPhysical(path.to_path_buf()));
    }
    let mut names = Vec::new();
    for component in path.components() {
        match component {
            Component::RootDir | Component::CurDir => {}
            Component::Normal(name) => names.push(name),
            Component::ParentDir | Component::Prefix(_) => {
                return Err(NoFollowError::NotPhysical(path.to_path_buf()));
            }
        }
    }
    Ok(names)
}

/// Opens the directory `name` in `dir` without following a link; `None` when it does not
/// exist (it is made first, `0o755`, with `create`).
fn step(
    dir: &OwnedFd,
    name: &OsStr,
    path: &Path,
    create: bool,
) -> Result<Option<OwnedFd>, NoFollowError> {
    let opened = if create {
        at::open_or_make_dir_at(dir, name, PASS_DIR_FLAGS, 0o755)
    } else {
        rustix::fs::openat(dir, name, PASS_DIR_FLAGS, Mode::empty())
    };
    match opened {
        Ok(fd) => Ok(Some(fd)),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(errno) => Err(open_error(dir, name, path, errno)),
    }
}

/// An open error, naming a link when that is what is there (`O_NOFOLLOW` gives `ELOOP`,
/// or `ENOTDIR` with `O_DIRECTORY`).
fn open_error(dir: &OwnedFd, name: &OsStr, path: &Path, errno: rustix::io::Errno) -> NoFollowError {
    if at::is_link_at(dir, name) {
        NoFollowError::Link(path.to_path_buf())
    } else if errno == rustix::io::Errno::NOTDIR {
        NoFollowError::NotRegular {
            path: path.to_path_buf(),
            kind: "below something that is not a directory",
        }
    } else {
        io_error(path, errno.into())
    }
}

fn io_error(path: &Path, source: io::Error) -> NoFollowError {
    NoFollowError::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn reads_regular_files_and_refuses_links_fifos_and_large_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("d")).unwrap();
        std::fs::write(root.join("d/f"), "hi").unwrap();
        let file = read(&root.join("d/f"), 10).unwrap().unwrap();
        assert_eq!(file.bytes, b"hi");
        assert_eq!(read(&root.join("d/none"), 10).unwrap(), None);
        assert_eq!(read(&root.join("none/f"), 10).unwrap(), None);
        assert!(matches!(
            read(&root.join("d/f"), 1),
            Err(NoFollowError::TooLarge { size: 2, .. })
        ));
        symlink(root.join("d"), root.join("l")).unwrap();
        assert!(matches!(
            read(&root.join("l/f"), 10),
            Err(NoFollowError::Link(_))
        ));
        symlink(root.join("d/f"), root.join("d/g")).unwrap();
        assert!(matches!(
            read(&root.join("d/g"), 10),
            Err(NoFollowError::Link(_))
        ));
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join("d/fifo"),
            FileType::Fifo,
            Mode::from_bits_truncate(0o600),
            0,
        )
        .unwrap();
        assert!(matches!(
            read(&root.join("d/fifo"), 10),
            Err(NoFollowError::NotRegular { kind: "a FIFO", .. })
        ));
        assert!(matches!(
            read(Path::new("relative"), 10),
            Err(NoFollowError::NotPhysical(_))
        ));
    }

    #[test]
    fn resolving_within_a_directory_allows_links_inside_and_refuses_links_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("p/sub")).unwrap();
        std::fs::write(root.join("p/AGENTS.md"), "rules").unwrap();
        std::fs::write(root.join("secret"), "key").unwrap();
        symlink("../AGENTS.md", root.join("p/sub/CLAUDE.md")).unwrap();
        symlink(root.join("secret"), root.join("p/sub/AGENTS.md")).unwrap();
        let project = root.join("p");
        assert_eq!(
            resolve_within(&project, &root.join("p/sub/CLAUDE.md")).unwrap(),
            Some(root.join("p/AGENTS.md"))
        );
        assert!(matches!(
            resolve_within(&project, &root.join("p/sub/AGENTS.md")),
            Err(NoFollowError::Outside { .. })
        ));
        assert_eq!(
            resolve_within(&project, &root.join("p/none")).unwrap(),
            None
        );
    }

    #[test]
    fn writes_and_removals_replace_a_link_instead_of_following_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("outside")).unwrap();
        std::fs::write(root.join("outside/target"), "keep").unwrap();
        std::fs::create_dir(root.join("p")).unwrap();
        symlink(root.join("outside/target"), root.join("p/f")).unwrap();
        write_atomic(&root.join("p/f"), b"new", 0o640).unwrap();
        assert_eq!(std::fs::read(root.join("outside/target")).unwrap(), b"keep");
        assert_eq!(std::fs::read(root.join("p/f")).unwrap(), b"new");
        let mode = std::fs::metadata(root.join("p/f")).unwrap();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
            0o640
        );
        // A directory on the way swapped for a link: refused.
        symlink(root.join("outside"), root.join("q")).unwrap();
        assert!(matches!(
            write_atomic(&root.join("q/x"), b"x", 0o644),
            Err(NoFollowError::Link(_))
        ));
        assert!(matches!(
            remove_file(&root.join("q/target")),
            Err(NoFollowError::Link(_))
        ));
        assert!(root.join("outside/target").exists());
        // Missing directories are made; removal says whether there was something.
        write_atomic(&root.join("a/b/c"), b"x", 0o644).unwrap();
        assert!(remove_file(&root.join("a/b/c")).unwrap());
        assert!(!remove_file(&root.join("a/b/c")).unwrap());
    }
}
