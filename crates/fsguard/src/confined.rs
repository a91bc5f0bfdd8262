//! File I/O confined beneath a trusted directory (the project root for `.bb7/`, the global
//! chats directory for `~/.bb7/chats`): every path is opened by walking from the anchor one
//! component at a time with `O_NOFOLLOW`, so a symlink anywhere below the anchor (planted by a
//! cloned repository or swapped in mid-operation) makes the operation fail instead of being
//! followed. Reads accept regular files only (a FIFO or device would block or leak). Writes
//! go to a temporary file beside the target (`O_EXCL | O_NOFOLLOW`, mode `0666` less the
//! umask), fsynced and renamed over it, so readers and crashes see old or new content.
//!
//! bb7 keeps its whole store under `.bb7/` and `~/.bb7/` this way.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

pub use crate::at::Kind;
use crate::at::{self, Capped, DIR_FLAGS, DirSync, NewMode, NotRead, ReplaceError, open_dir_at};

/// Prefix of the temporary files a confined write leaves while it runs (bb7 never lists them
/// as a chat's outputs).
pub const TEMP_PREFIX: &str = ".bb7-tmp-";

/// Why a confined operation refused a path (carried inside an [`io::Error`]).
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// A symlink where a directory or file was expected.
    #[error("{0} is a symbolic link; refusing to follow it (it could lead anywhere)")]
    Symlink(PathBuf),
    /// A FIFO, socket or device where a regular file was expected.
    #[error("{0} is not a regular file")]
    NotRegular(PathBuf),
    /// The path is not below the anchor.
    #[error("{0} is outside {1}")]
    Outside(PathBuf, PathBuf),
}

/// The [`Refused`] reason inside an error from this module, if it is one.
pub fn refusal(err: &io::Error) -> Option<&Refused> {
    err.get_ref()
        .and_then(|inner| inner.downcast_ref::<Refused>())
}

fn refuse(reason: Refused) -> io::Error {
    io::Error::other(reason)
}

/// The most bytes [`Confined::read`] and [`Confined::read_to_string`] read: a whole file is
/// held in memory, so a file planted at gigabytes (or a sparse one) is refused instead.
/// Callers that know a smaller bound name it with [`Confined::read_capped`].
pub const WHOLE_FILE_CAP: u64 = 256 * 1024 * 1024;

fn too_large(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("{} is larger than {WHOLE_FILE_CAP} bytes", path.display()),
    )
}

/// Operations beneath `anchor`. Paths are absolute and must start with the anchor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confined {
    anchor: PathBuf,
}

impl Confined {
    /// Confinement beneath `anchor` (trusted: it is opened following links).
    pub fn new(anchor: impl Into<PathBuf>) -> Confined {
        Confined {
            anchor: anchor.into(),
        }
    }

    /// The anchor.
    pub fn anchor(&self) -> &Path {
        &self.anchor
    }

    /// The components of `path` below the anchor.
    fn parts<'a>(&self, path: &'a Path) -> io::Result<Vec<&'a OsStr>> {
        let outside = || refuse(Refused::Outside(path.to_owned(), self.anchor.clone()));
        let rest = path.strip_prefix(&self.anchor).map_err(|_| outside())?;
        rest.components()
            .map(|component| match component {
                Component::Normal(part) => Ok(part),
                _ => Err(outside()),
            })
            .collect()
    }

    fn open_anchor(&self, create: bool) -> io::Result<OwnedFd> {
        if create {
            std::fs::create_dir_all(&self.anchor)?;
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Ok(rustix::fs::open(&self.anchor, flags, Mode::empty())?)
    }

    /// Opens the directory made of `parts` below the anchor without following links,
    /// creating missing directories when `create`.
    fn walk(&self, parts: &[&OsStr], create: bool) -> io::Result<OwnedFd> {
        let mut dir = self.open_anchor(create)?;
        // On Linux one `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` does the whole walk;
        // any failure (old kernel, seccomp, a missing directory to create, a link to report
        // precisely) falls back to the walk below, which decides.
        #[cfg(target_os = "linux")]
        if !parts.is_empty() {
            use rustix::fs::ResolveFlags;
            let relative: PathBuf = parts.iter().collect();
            if let Ok(fd) = rustix::fs::openat2(
                &dir,
                &relative,
                DIR_FLAGS,
                Mode::empty(),
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
            ) {
                return Ok(fd);
            }
        }
        for (depth, part) in parts.iter().enumerate() {
            let here = || {
                let mut shown = self.anchor.clone();
                shown.extend(&parts[..=depth]);
                shown
            };
            let opened = if create {
                at::open_or_make_dir_at(&dir, part, DIR_FLAGS, 0o777)
            } else {
                open_dir_at(&dir, part)
            };
            dir = opened.map_err(|err| classify(&dir, part, here(), err))?;
        }
        Ok(dir)
    }

    /// The open parent directory of `path` and its last component.
    fn parent<'a>(&self, path: &'a Path, create: bool) -> io::Result<(OwnedFd, &'a OsStr)> {
        let parts = self.parts(path)?;
        let Some((name, dirs)) = parts.split_last() else {
            return Err(refuse(Refused::Outside(
                path.to_owned(),
                self.anchor.clone(),
            )));
        };
        Ok((self.walk(dirs, create)?, name))
    }

    /// Opens the directory `path` (the anchor itself included) without following links.
    pub fn open_dir(&self, path: &Path, create: bool) -> io::Result<OwnedFd> {
        let parts = self.parts(path)?;
        self.walk(&parts, create)
    }

    /// What `path` is (`None` when it does not exist). A link in a parent is an error.
    pub fn kind(&self, path: &Path) -> io::Result<Option<Kind>> {
        let parts = self.parts(path)?;
        let Some((name, dirs)) = parts.split_last() else {
            return Ok(Some(Kind::Dir));
        };
        let dir = match self.walk(dirs, false) {
            Ok(dir) => dir,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(err),
        };
        match rustix::fs::statat(&dir, *name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(Kind::of(FileType::from_raw_mode(stat.st_mode)))),
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    /// The device and inode of `path` (not followed), to tell whether a name still refers to
    /// a file held open.
    pub fn identity(&self, path: &Path) -> io::Result<(u64, u64)> {
        let (dir, name) = self.parent(path, false)?;
        let stat = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
        #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
        Ok((stat.st_dev as u64, stat.st_ino as u64))
    }

    /// Whether `path` is a regular file (no link followed; errors count as no).
    pub fn is_file(&self, path: &Path) -> bool {
        matches!(self.kind(path), Ok(Some(Kind::File)))
    }

    /// Whether `path` is a directory (no link followed; errors count as no).
    pub fn is_dir(&self, path: &Path) -> bool {
        matches!(self.kind(path), Ok(Some(Kind::Dir)))
    }

    /// Opens the file `path` for reading, not following a link and without blocking.
    fn open_file(&self, path: &Path) -> io::Result<OwnedFd> {
        let (dir, name) = self.parent(path, false)?;
        at::open_read_at(&dir, name).map_err(|err| classify(&dir, name, path.to_owned(), err))
    }

    /// The whole content of a regular file of at most [`WHOLE_FILE_CAP`] bytes; a larger
    /// one is an error (`FileTooLarge`), read no further than the cap.
    pub fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let read = self.read_capped(path, WHOLE_FILE_CAP)?;
        if read.truncated {
            return Err(too_large(path));
        }
        Ok(read.bytes)
    }

    /// At most `limit` bytes of a regular file and whether it held more (the rest is not
    /// read, so a huge file costs no memory).
    pub fn read_at_most(&self, path: &Path, limit: u64) -> io::Result<(Vec<u8>, bool)> {
        let Capped { bytes, truncated } = self.read_capped(path, limit)?;
        Ok((bytes, truncated))
    }

    /// At most `cap` bytes of a regular file, saying whether it held more; a FIFO or a device
    /// is refused by its type before anything is read.
    pub fn read_capped(&self, path: &Path, cap: u64) -> io::Result<Capped> {
        let fd = self.open_file(path)?;
        at::read_regular(&fd, cap).map_err(|error| match error {
            NotRead::NotRegular(FileType::Directory) => io::ErrorKind::IsADirectory.into(),
            NotRead::NotRegular(_) => refuse(Refused::NotRegular(path.to_owned())),
            NotRead::Io(error) => error,
        })
    }

    /// The whole content of a regular UTF-8 file of at most [`WHOLE_FILE_CAP`] bytes.
    pub fn read_to_string(&self, path: &Path) -> io::Result<String> {
        self.read_capped(path, WHOLE_FILE_CAP)?
            .into_text(WHOLE_FILE_CAP)
            .map_err(|error| match error.kind() {
                io::ErrorKind::FileTooLarge => too_large(path),
                _ => error,
            })
    }

    /// Writes `bytes` to `path` atomically, creating missing directories. A new file gets
    /// `0666` less the umask; an existing one keeps its permission bits.
    pub fn write(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.replace(path, bytes, NewMode::KeepOr(None), true, true)
    }

    /// Writes `bytes` to `path` atomically with one `fsync`, the temporary file's before the
    /// rename, and none of the directory after it: a power loss never leaves the file torn
    /// or empty, but one in the seconds after the write may bring back its previous content
    /// (or no file, for a new one) until the file system's next journal commit carries the
    /// rename. For the chats' `chat.json` outside a send's commit (which fsyncs its
    /// directories itself, see `commit.rs`), and for context snapshots, which the
    /// `chat.json` renamed after them makes reachable: a journaling file system (ext4, XFS)
    /// commits the two renames in that order; elsewhere a power loss may leave an entry
    /// whose snapshot is missing, never one that is torn.
    pub fn write_unsynced_dir(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.replace(path, bytes, NewMode::KeepOr(None), true, false)
    }

    /// [`write_unsynced_dir`](Confined::write_unsynced_dir) giving the file exactly the
    /// permission bits `mode`, whatever the file it replaces had: a copy of a private file
    /// (`0600`) stays private.
    pub fn write_unsynced_dir_with_mode(
        &self,
        path: &Path,
        bytes: &[u8],
        mode: u32,
    ) -> io::Result<()> {
        self.replace(path, bytes, NewMode::Exact(mode), true, false)
    }

    /// Writes `bytes` to `path` atomically as [`write`](Confined::write) does, without the
    /// two `fsync`s: for files that are rebuilt from others when missing or unreadable (the
    /// chats index). A crash of the process still leaves the old content or the new; a power
    /// loss may leave either, or an empty or partial file, which its reader rebuilds.
    pub fn write_rebuildable(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.replace(path, bytes, NewMode::KeepOr(None), false, false)
    }

    /// The atomic write: `sync_file` fsyncs the temporary file before the rename, `sync_dir`
    /// the directory after it.
    fn replace(
        &self,
        path: &Path,
        bytes: &[u8],
        mode: NewMode,
        sync_file: bool,
        sync_dir: bool,
    ) -> io::Result<()> {
        let (dir, name) = self.parent(path, true)?;
        let dir_sync = if sync_dir {
            DirSync::Required
        } else {
            DirSync::Skip
        };
        let temp = temp_name();
        at::replace_at(&dir, name, bytes, mode, &temp, sync_file, dir_sync).map_err(|error| {
            match error {
                ReplaceError::Directory => io::ErrorKind::IsADirectory.into(),
                ReplaceError::Io(error) => error,
            }
        })
    }

    /// Writes `bytes` to a file that must not exist yet (no rename; fsynced).
    pub fn write_new(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let (dir, name) = self.parent(path, true)?;
        let mut file = at::create_new_at(&dir, name, 0o666)?;
        file.write_all(bytes)?;
        file.sync_all()
    }

    /// Opens (creating it, `0666` less the umask) a file for reading and writing, for locks.
    pub fn open_rw(&self, path: &Path) -> io::Result<File> {
        let (dir, name) = self.parent(path, false)?;
        let fd = at::open_rw_at(&dir, name, 0o666)
            .map_err(|err| classify(&dir, name, path.to_owned(), err))?;
        let stat = rustix::fs::fstat(&fd)?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(refuse(Refused::NotRegular(path.to_owned())));
        }
        Ok(File::from(fd))
    }

    /// Creates the directory `path`, failing with `AlreadyExists` when it is there; missing
    /// parents are created.
    pub fn create_dir(&self, path: &Path) -> io::Result<()> {
        let (dir, name) = self.parent(path, true)?;
        rustix::fs::mkdirat(&dir, name, Mode::from_bits_truncate(0o777))?;
        Ok(())
    }

    /// Creates `path` and its missing parents.
    pub fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.open_dir(path, true).map(drop)
    }

    /// Removes a file (or symlink: the link itself, never its target).
    pub fn remove_file(&self, path: &Path) -> io::Result<()> {
        let (dir, name) = self.parent(path, false)?;
        rustix::fs::unlinkat(&dir, name, AtFlags::empty())?;
        Ok(())
    }

    /// Removes an empty directory.
    pub fn remove_dir(&self, path: &Path) -> io::Result<()> {
        let (dir, name) = self.parent(path, false)?;
        rustix::fs::unlinkat(&dir, name, AtFlags::REMOVEDIR)?;
        Ok(())
    }

    /// Removes `path` and everything below it; links are removed, never followed.
    pub fn remove_all(&self, path: &Path) -> io::Result<()> {
        let (dir, name) = self.parent(path, false)?;
        remove_entry(&dir, name)
    }

    /// Renames `from` to `to` (both below the anchor), creating `to`'s parents.
    pub fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let (from_dir, from_name) = self.parent(from, false)?;
        let (to_dir, to_name) = self.parent(to, true)?;
        at::rename_at(&from_dir, from_name, &to_dir, to_name)?;
        rustix::fs::fsync(&to_dir)?;
        Ok(())
    }

    /// Renames `from` (below this anchor) to `to` (below `other`'s anchor), creating `to`'s
    /// parents; neither path may pass through a link. `to` must not exist (a directory there
    /// is never replaced). Across file systems this fails with `CrossesDevices`.
    pub fn rename_into(&self, from: &Path, other: &Confined, to: &Path) -> io::Result<()> {
        let (from_dir, from_name) = self.parent(from, false)?;
        let (to_dir, to_name) = other.parent(to, true)?;
        match rustix::fs::statat(&to_dir, to_name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(_) => return Err(io::Error::from(io::ErrorKind::AlreadyExists)),
            Err(rustix::io::Errno::NOENT) => {}
            Err(err) => return Err(err.into()),
        }
        at::rename_at(&from_dir, from_name, &to_dir, to_name)?;
        rustix::fs::fsync(&to_dir)?;
        rustix::fs::fsync(&from_dir)?;
        Ok(())
    }

    /// The entries of the directory `path`, sorted by name, with what each is.
    pub fn list(&self, path: &Path) -> io::Result<Vec<(String, Kind)>> {
        let dir = self.open_dir(path, false)?;
        list_fd(&dir)
    }

    /// Every regular file below `path` (relative, `/`-separated, sorted), skipping the
    /// daemon's temporary files. Links and special files are reported in `odd` instead.
    pub fn walk_files(&self, path: &Path, odd: &mut Vec<String>) -> io::Result<Vec<String>> {
        let dir = match self.open_dir(path, false) {
            Ok(dir) => dir,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(err),
        };
        let mut found = Vec::new();
        let mut pending = vec![(dir, String::new())];
        while let Some((dir, prefix)) = pending.pop() {
            for (name, kind) in list_fd(&dir)? {
                let relative = format!("{prefix}{name}");
                match kind {
                    Kind::File if is_temp_name(&name) => {}
                    Kind::File => found.push(relative),
                    Kind::Dir => {
                        let child = open_dir_at(&dir, OsStr::new(&name))?;
                        pending.push((child, format!("{relative}/")));
                    }
                    Kind::Symlink | Kind::Other => odd.push(relative),
                }
            }
        }
        found.sort();
        Ok(found)
    }
}

/// Whether `name` is a temporary file of the daemon (or of the `tempfile` crate the daemon
/// once used: `.tmp` and six letters or digits).
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with(TEMP_PREFIX)
        || (name.len() == 10
            && name.starts_with(".tmp")
            && name[4..].chars().all(|c| c.is_ascii_alphanumeric()))
}

/// A fresh temporary file name.
pub fn temp_name() -> OsString {
    OsString::from(format!("{TEMP_PREFIX}{}", at::unique_suffix()))
}

/// The entries of the open directory `dir` with what each is, sorted by name (names that are
/// not UTF-8 are left out).
pub(crate) fn list_fd(dir: &OwnedFd) -> io::Result<Vec<(String, Kind)>> {
    let fd = open_dir_at(dir, OsStr::new("."))?;
    let reader = rustix::fs::Dir::read_from(fd.as_fd())?;
    let mut entries = Vec::new();
    for entry in reader {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let Ok(name) = std::str::from_utf8(name) else {
            continue;
        };
        let kind = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Kind::of(FileType::from_raw_mode(stat.st_mode)),
            Err(rustix::io::Errno::NOENT) => continue,
            Err(err) => return Err(err.into()),
        };
        entries.push((name.to_owned(), kind));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}

fn remove_entry(dir: &OwnedFd, name: &OsStr) -> io::Result<()> {
    match open_dir_at(dir, name) {
        Ok(child) => {
            for (entry, _) in list_fd(&child)? {
                remove_entry(&child, OsStr::new(&entry))?;
            }
            rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?;
        }
        // Not a directory (a file, a link, a FIFO): unlink the entry itself.
        Err(rustix::io::Errno::NOTDIR | rustix::io::Errno::LOOP) => {
            rustix::fs::unlinkat(dir, name, AtFlags::empty())?;
        }
        Err(rustix::io::Errno::NOENT) => {}
        Err(err) => return Err(err.into()),
    }
    Ok(())
}

/// Turns an open failure into a [`Refused::Symlink`] when the entry is a link.
fn classify(dir: &OwnedFd, name: &OsStr, shown: PathBuf, err: rustix::io::Errno) -> io::Error {
    if matches!(err, rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR)
        && at::is_link_at(dir, name)
    {
        return refuse(Refused::Symlink(shown));
    }
    err.into()
}

#[cfg(test)]
#[path = "confined_tests.rs"]
mod tests;
