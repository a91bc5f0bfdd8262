//! ybs's own reads and writes of files the model could have touched (undo's copies and
//! restores, previews before a confirmation): every path is absolute and physical (resolved
//! when it was checked) and is walked from `/` one component at a time with `O_NOFOLLOW`, so
//! a directory or file that was swapped for a symbolic link since is refused, never followed.
//! Only regular files are read, opened without blocking (a FIFO or a device is refused, not
//! waited on) and never beyond a limit the caller gives. Writes go to a new temp file in the
//! same directory renamed over the target, which replaces a link instead of writing through it.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

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
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
    let fd = match rustix::fs::openat(&parent, name, flags | OFlags::CLOEXEC, Mode::empty()) {
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
    #[allow(clippy::unnecessary_cast)]
    let size = stat.st_size as u64;
    if size > limit {
        return Err(NoFollowError::TooLarge {
            path: path.to_path_buf(),
            size,
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    File::from(fd)
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(path, e))?;
    let grown = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if grown > limit {
        return Err(NoFollowError::TooLarge {
            path: path.to_path_buf(),
            size: grown,
            limit,
        });
    }
    #[allow(clippy::unnecessary_cast)]
    let mode = (stat.st_mode as u32) & 0o7777;
    Ok(Some(Regular { bytes, mode }))
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
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Directory => {
            return Err(AtError::Directory);
        }
        _ => {}
    }
    let mode = Mode::from_bits_truncate(mode & 0o7777);
    let temp = temp_name(name);
    let fd = rustix::fs::openat(
        dir,
        temp.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_bits_truncate(0o600),
    )
    .map_err(io::Error::from)?;
    let result = (|| -> io::Result<()> {
        let mut file = File::from(fd);
        file.write_all(bytes)?;
        file.sync_all()?;
        rustix::fs::fchmod(&file, mode)?;
        rustix::fs::renameat(dir, temp.as_str(), dir, name)?;
        Ok(())
    })();
    if let Err(error) = result {
        let _ = rustix::fs::unlinkat(dir, temp.as_str(), AtFlags::empty());
        return Err(error.into());
    }
    // Best effort: a directory opened with `O_PATH` cannot be synced.
    let _ = rustix::fs::fsync(dir);
    Ok(())
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
    rustix::fs::open("/", DIR_FLAGS, Mode::empty()).map_err(|e| io_error(Path::new("/"), e.into()))
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
    match rustix::fs::openat(dir, name, DIR_FLAGS, Mode::empty()) {
        Ok(fd) => Ok(Some(fd)),
        Err(rustix::io::Errno::NOENT) if create => {
            match rustix::fs::mkdirat(dir, name, Mode::from_bits_truncate(0o755)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(errno) => return Err(io_error(path, errno.into())),
            }
            step(dir, name, path, false)
        }
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(errno) => Err(open_error(dir, name, path, errno)),
    }
}

/// An open error, naming a link when that is what is there (`O_NOFOLLOW` gives `ELOOP`,
/// or `ENOTDIR` with `O_DIRECTORY`).
fn open_error(dir: &OwnedFd, name: &OsStr, path: &Path, errno: rustix::io::Errno) -> NoFollowError {
    let is_link = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Symlink);
    if is_link {
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

const DIR_FLAGS: OFlags = OFlags::PATH
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

fn kind_name(kind: FileType) -> &'static str {
    match kind {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "of an unknown kind",
    }
}

fn temp_name(name: &OsStr) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let stem: String = name.to_string_lossy().chars().take(100).collect();
    format!(".{stem}.ybs-{}-{n}.tmp", std::process::id())
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
