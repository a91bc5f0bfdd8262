//! The primitives the rest of the crate is built from, each relative to a directory that is
//! already open: opening a name without following a link, telling what a name is, reading an
//! open file up to a cap, and replacing a file atomically. This is the only module that calls
//! `openat` and `renameat`; the others decide *which* directory to start from and how to
//! report a refusal.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// A directory to list or walk: never a link.
pub(crate) const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// A directory only passed through (a walk from `/` crosses directories it may not list).
pub(crate) const PASS_DIR_FLAGS: OFlags = OFlags::PATH
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// A file to read: never a link, never a controlling terminal, and without blocking, so that
/// opening a FIFO returns at once and `fstat` can refuse it before anything is read.
pub(crate) const READ_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC)
    .union(OFlags::NOCTTY)
    .union(OFlags::NONBLOCK);

/// A file that must not exist yet (a temporary file, a file written once).
pub(crate) const CREATE_NEW_FLAGS: OFlags = OFlags::WRONLY
    .union(OFlags::CREATE)
    .union(OFlags::EXCL)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Opens the directory `name` in `dir` for listing, without following a link (`"."` reopens
/// `dir` itself, e.g. to list a directory reached as a path-only descriptor).
pub fn open_dir_at(dir: impl AsFd, name: &OsStr) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(dir, name, DIR_FLAGS, Mode::empty())
}

/// Like [`open_dir_at`], making the directory (`mode`, less the umask) when it is missing.
pub(crate) fn open_or_make_dir_at(
    dir: impl AsFd,
    name: &OsStr,
    flags: OFlags,
    mode: u32,
) -> rustix::io::Result<OwnedFd> {
    let dir = dir.as_fd();
    match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Err(rustix::io::Errno::NOENT) => {
            match rustix::fs::mkdirat(dir, name, Mode::from_bits_truncate(mode)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(errno) => return Err(errno),
            }
            rustix::fs::openat(dir, name, flags, Mode::empty())
        }
        opened => opened,
    }
}

/// Opens the file `name` in `dir` for reading (see [`READ_FLAGS`]); what it is has still to
/// be checked with `fstat`.
pub(crate) fn open_read_at(dir: impl AsFd, name: &OsStr) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(dir, name, READ_FLAGS, Mode::empty())
}

/// Opens (creating it with `mode` less the umask) the file `name` in `dir` for reading and
/// writing without following a link, for lock files; it must be a regular file.
pub(crate) fn open_rw_at(dir: impl AsFd, name: &OsStr, mode: u32) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::from_bits_truncate(mode),
    )
}

/// Creates the file `name` in `dir`, which must not exist (no link followed), with `mode`
/// less the umask.
pub(crate) fn create_new_at(dir: impl AsFd, name: &OsStr, mode: u32) -> rustix::io::Result<File> {
    rustix::fs::openat(dir, name, CREATE_NEW_FLAGS, Mode::from_bits_truncate(mode)).map(File::from)
}

/// Renames `from_name` in `from_dir` to `to_name` in `to_dir` (neither name is followed).
pub(crate) fn rename_at(
    from_dir: impl AsFd,
    from_name: &OsStr,
    to_dir: impl AsFd,
    to_name: &OsStr,
) -> rustix::io::Result<()> {
    rustix::fs::renameat(from_dir, from_name, to_dir, to_name)
}

/// Whether the entry `name` in `dir` is a symbolic link (what an open refused with `ELOOP`
/// or `ENOTDIR` usually met).
pub(crate) fn is_link_at(dir: impl AsFd, name: &OsStr) -> bool {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Symlink)
}

/// What an entry is, without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

impl Kind {
    /// The kind of a file type.
    pub fn of(file_type: FileType) -> Kind {
        match file_type {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Dir,
            FileType::Symlink => Kind::Symlink,
            _ => Kind::Other,
        }
    }
}

/// A file type as a person names it in an error ("a FIFO").
pub(crate) fn kind_name(kind: FileType) -> &'static str {
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

/// The identity of a file: its device and inode, stable across renames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
}

impl FileId {
    /// The identity of what `path` names (symlinks followed), if it exists.
    pub fn of(path: &Path) -> Option<FileId> {
        std::fs::metadata(path).ok().map(|m| FileId::from_meta(&m))
    }

    /// The identity of `path` itself (a symlink is not followed), if it exists.
    pub fn of_no_follow(path: &Path) -> Option<FileId> {
        std::fs::symlink_metadata(path)
            .ok()
            .map(|m| FileId::from_meta(&m))
    }

    /// The identity in `meta`.
    pub fn from_meta(meta: &std::fs::Metadata) -> FileId {
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }

    /// The identity in a `rustix` stat.
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    pub fn from_stat(stat: &rustix::fs::Stat) -> FileId {
        FileId {
            dev: stat.st_dev as u64,
            ino: stat.st_ino as u64,
        }
    }
}

/// The size `fstat` gave.
#[allow(clippy::unnecessary_cast)]
pub(crate) fn size_of(stat: &rustix::fs::Stat) -> u64 {
    stat.st_size as u64
}

/// The permission bits `fstat` gave (`0o7777` at most).
#[allow(clippy::unnecessary_cast)]
pub(crate) fn mode_of(stat: &rustix::fs::Stat) -> u32 {
    (stat.st_mode as u32) & 0o7777
}

/// Reads the open file `fd` into `bytes` (appended), at most `cap` bytes and one more, so the
/// caller learns that there was more without holding it: one `read` asking for one byte more
/// than `size_hint` (the size `fstat` said), more only when the file turns out longer or a
/// read stops short of it. A device that never ends (`/dev/zero`) costs `cap + 1` bytes.
pub(crate) fn read_capped(
    fd: impl AsFd,
    size_hint: u64,
    cap: u64,
    bytes: &mut Vec<u8>,
) -> io::Result<()> {
    let start = bytes.len();
    let limit = usize::try_from(cap.saturating_add(1)).unwrap_or(usize::MAX);
    let size = usize::try_from(size_hint).unwrap_or(limit);
    bytes.reserve(size.saturating_add(1).min(limit));
    while bytes.len() - start < limit {
        let read = bytes.len() - start;
        if bytes.len() == bytes.capacity() {
            bytes.reserve(read.clamp(8 * 1024, limit - read));
        }
        let asked = bytes.capacity() - bytes.len();
        let got = match rustix::io::read(fd.as_fd(), rustix::buffer::spare_capacity(bytes)) {
            Ok(got) => got,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        };
        if got == 0 || (got < asked && bytes.len() - start >= size) {
            break;
        }
    }
    bytes.truncate(start.saturating_add(limit));
    Ok(())
}

/// What a capped read found: at most the cap's bytes, and whether the file held more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped {
    /// The bytes read (never more than the cap).
    pub bytes: Vec<u8>,
    /// The file held more than the cap; the rest was not read.
    pub truncated: bool,
}

impl Capped {
    /// The whole file as text: an error when it held more than the cap (`cap`, to say so)
    /// or is not UTF-8, for a reader that must not act on part of a file.
    pub fn into_text(self, cap: u64) -> io::Result<String> {
        if self.truncated {
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                format!("it is larger than {cap} bytes"),
            ));
        }
        String::from_utf8(self.bytes).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            )
        })
    }
}

/// Reads the regular file `fd` (just opened with [`READ_FLAGS`]) up to `cap` bytes; a FIFO,
/// a device, a socket or a directory is refused by its type before anything is read.
/// `Err(Ok(kind))` names what it was instead of a regular file.
pub(crate) fn read_regular(fd: &OwnedFd, cap: u64) -> Result<Capped, NotRead> {
    let stat = rustix::fs::fstat(fd).map_err(|e| NotRead::Io(e.into()))?;
    let kind = FileType::from_raw_mode(stat.st_mode);
    if kind != FileType::RegularFile {
        return Err(NotRead::NotRegular(kind));
    }
    let mut bytes = Vec::new();
    read_capped(fd, size_of(&stat), cap, &mut bytes).map_err(NotRead::Io)?;
    let truncated = bytes.len() as u64 > cap;
    bytes.truncate(usize::try_from(cap).unwrap_or(usize::MAX));
    Ok(Capped { bytes, truncated })
}

/// Why [`read_regular`] read nothing.
#[derive(Debug)]
pub(crate) enum NotRead {
    /// It is not a regular file.
    NotRegular(FileType),
    /// The `fstat` or a `read` failed.
    Io(io::Error),
}

/// Reads the regular file `names` (a path split into single components: no separator, no
/// `.` or `..`) below the open directory `dir`, one no-follow open per name, up to `cap`
/// bytes. A link anywhere on the way, a missing file, a FIFO, a device or a directory is an
/// error; nothing blocks.
pub fn read_beneath(dir: impl AsFd, names: &[&OsStr], cap: u64) -> io::Result<Capped> {
    let Some((name, dirs)) = names.split_last() else {
        return Err(io::ErrorKind::InvalidInput.into());
    };
    let mut held: Option<OwnedFd> = None;
    for part in dirs {
        check_name(part)?;
        let at = held.as_ref().map_or(dir.as_fd(), |fd| fd.as_fd());
        held = Some(open_dir_at(at, part)?);
    }
    check_name(name)?;
    let at = held.as_ref().map_or(dir.as_fd(), |fd| fd.as_fd());
    let fd = open_read_at(at, name)?;
    read_regular(&fd, cap).map_err(|error| match error {
        NotRead::NotRegular(kind) => io::Error::other(format!("it is {}", kind_name(kind))),
        NotRead::Io(error) => error,
    })
}

/// One path component: not empty, no separator, not `.` or `..`.
pub(crate) fn check_name(name: &OsStr) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes == b"." || bytes == b".." || bytes.contains(&b'/') {
        return Err(io::ErrorKind::InvalidInput.into());
    }
    Ok(())
}

/// The permission bits of a file an atomic write creates.
#[derive(Debug, Clone, Copy)]
pub(crate) enum NewMode {
    /// Exactly these bits, whatever was there.
    Exact(u32),
    /// The bits of the regular file being replaced; for a new file these bits exactly, or,
    /// with `None`, `0o666` less the umask.
    KeepOr(Option<u32>),
}

/// Whether an atomic write syncs the directory after the rename.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DirSync {
    /// Sync it; a failure fails the write.
    Required,
    /// Try: a directory reached as a path-only descriptor cannot be synced.
    BestEffort,
    /// Leave it to the file system's next commit.
    Skip,
}

/// Why [`replace_at`] failed.
#[derive(Debug)]
pub(crate) enum ReplaceError {
    /// The name is a directory.
    Directory,
    /// Another I/O error.
    Io(io::Error),
}

impl From<rustix::io::Errno> for ReplaceError {
    fn from(errno: rustix::io::Errno) -> Self {
        ReplaceError::Io(errno.into())
    }
}

impl From<io::Error> for ReplaceError {
    fn from(error: io::Error) -> Self {
        ReplaceError::Io(error)
    }
}

/// Replaces `name` in `dir` with `bytes` atomically: a new temporary file `temp` beside it
/// (created exclusively, no link followed), written, given its mode, fsynced when
/// `sync_file`, and renamed over `name`, so a reader or a crash sees the old content or the
/// new, and a link at `name` is replaced rather than written through. A directory at `name`
/// is refused. The temporary file is removed when anything fails.
pub(crate) fn replace_at(
    dir: &OwnedFd,
    name: &OsStr,
    bytes: &[u8],
    mode: NewMode,
    temp: &OsStr,
    sync_file: bool,
    sync_dir: DirSync,
) -> Result<(), ReplaceError> {
    let existing = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
            FileType::Directory => return Err(ReplaceError::Directory),
            FileType::RegularFile => Some(mode_of(&stat)),
            _ => None,
        },
        Err(rustix::io::Errno::NOENT) => None,
        Err(errno) => return Err(errno.into()),
    };
    let exact = match mode {
        NewMode::Exact(bits) => Some(bits),
        NewMode::KeepOr(default) => existing.or(default),
    };
    // Private until its bits are set, when they are set; else as a new file would be.
    let file = create_new_at(dir, temp, if exact.is_some() { 0o600 } else { 0o666 })?;
    let written = (|| -> io::Result<()> {
        let mut file = file;
        file.write_all(bytes)?;
        // Set after creation: the umask may have narrowed the bits given to `open`.
        if let Some(bits) = exact {
            rustix::fs::fchmod(&file, Mode::from_bits_truncate(bits & 0o7777))?;
        }
        if sync_file {
            file.sync_all()?;
        }
        rename_at(dir, temp, dir, name)?;
        Ok(())
    })();
    if let Err(error) = written {
        let _ = rustix::fs::unlinkat(dir, temp, AtFlags::empty());
        return Err(error.into());
    }
    match sync_dir {
        DirSync::Required => rustix::fs::fsync(dir).map_err(ReplaceError::from),
        DirSync::BestEffort => {
            let _ = rustix::fs::fsync(dir);
            Ok(())
        }
        DirSync::Skip => Ok(()),
    }
}

/// A fresh name for a temporary file beside `name`: hidden, naming the file it will become,
/// the process and a counter, so that no two writers pick the same one.
pub(crate) fn temp_name_beside(name: &OsStr) -> OsString {
    let stem: String = name.to_string_lossy().chars().take(100).collect();
    OsString::from(format!(".{stem}.ybs-{}.tmp", unique_suffix()))
}

/// The process id, a counter and the clock's nanoseconds, for temporary names.
pub(crate) fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{}-{n}-{nanos}", std::process::id())
}
