//! A directory opened once through [`Confined`] and read relative to its descriptor: for
//! scanning a chats directory (every chat's `chat.json` and `lock`), where walking from the
//! anchor again for each of hundreds of chats would cost several system calls apiece.
//!
//! Nothing is followed: children are opened with `O_NOFOLLOW | O_DIRECTORY`, files with
//! `O_NOFOLLOW` and read only when regular, kinds come from `fstatat(AT_SYMLINK_NOFOLLOW)`, so a
//! link planted (or swapped in) anywhere below makes the entry count as absent, exactly as
//! [`Confined`]'s own operations refuse it.

use std::ffi::OsStr;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode};

use crate::at::{self, Kind, READ_FLAGS, open_dir_at};
use crate::confined::Confined;

/// An open directory below a confinement anchor.
#[derive(Debug)]
pub struct ConfinedDir {
    fd: OwnedFd,
}

impl ConfinedDir {
    /// Opens `path` beneath `fs`'s anchor without following links.
    pub fn open(fs: &Confined, path: &Path) -> io::Result<ConfinedDir> {
        fs.open_dir(path, false).map(|fd| ConfinedDir { fd })
    }

    /// The child directory `name` (a single component), not followed if it is a link.
    pub fn child(&self, name: &str) -> io::Result<ConfinedDir> {
        check_name(name)?;
        let fd = open_dir_at(&self.fd, OsStr::new(name))?;
        Ok(ConfinedDir { fd })
    }

    /// The entries of this directory with what each is, sorted by name (names that are not
    /// UTF-8 are left out). The kind comes from the directory entry itself where the file
    /// system records it, else from `fstatat` without following.
    pub fn list(&self) -> io::Result<Vec<(String, Kind)>> {
        let fd = open_dir_at(&self.fd, OsStr::new("."))?;
        let mut entries = Vec::new();
        for entry in rustix::fs::Dir::read_from(&fd)? {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let Ok(name) = std::str::from_utf8(name) else {
                continue;
            };
            let kind = match entry.file_type() {
                FileType::Unknown => match self.kind(name) {
                    Some(kind) => kind,
                    None => continue,
                },
                file_type => Kind::of(file_type),
            };
            entries.push((name.to_owned(), kind));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(entries)
    }

    /// What the entry `name` is, not followed; `None` when it does not exist (or cannot be
    /// looked at).
    pub fn kind(&self, name: &str) -> Option<Kind> {
        check_name(name).ok()?;
        rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .map(|stat| Kind::of(FileType::from_raw_mode(stat.st_mode)))
    }

    /// At most `limit` bytes of the regular file `name`, as text; `None` when it is missing,
    /// a link, not a regular file or not UTF-8.
    pub fn read_small(&self, name: &str, limit: u64) -> Option<String> {
        check_name(name).ok()?;
        let fd = at::open_read_at(&self.fd, OsStr::new(name)).ok()?;
        read_regular(fd, limit)
    }
}

impl ConfinedDir {
    /// What `dir/name` is (`dir` a child directory, `name` an entry of it), in one system call:
    /// `name` is not followed, `dir` is resolved as the kernel does. For scanning only: `dir`
    /// was a directory in this directory's listing a moment before, and if a link was swapped
    /// in since, all that is learned is whether a regular file is there (whatever is then
    /// read or written goes through [`Confined`], which refuses the link).
    pub fn kind_below(&self, dir: &str, name: &str) -> Option<Kind> {
        check_name(dir).ok()?;
        check_name(name).ok()?;
        rustix::fs::statat(&self.fd, format!("{dir}/{name}"), AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .map(|stat| Kind::of(FileType::from_raw_mode(stat.st_mode)))
    }

    /// [`read_small`](ConfinedDir::read_small) of `dir/name`: one `openat2` that follows no
    /// link and stays beneath this directory where the kernel has it, else the child
    /// directory opened first.
    pub fn read_small_below(&self, dir: &str, name: &str, limit: u64) -> Option<String> {
        check_name(dir).ok()?;
        check_name(name).ok()?;
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::ResolveFlags;
            let resolve =
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            match rustix::fs::openat2(
                &self.fd,
                format!("{dir}/{name}"),
                READ_FLAGS,
                Mode::empty(),
                resolve,
            ) {
                Ok(fd) => return read_regular(fd, limit),
                // Missing, or a link on the way: absent, as the walk below would find.
                Err(
                    rustix::io::Errno::NOENT
                    | rustix::io::Errno::LOOP
                    | rustix::io::Errno::XDEV
                    | rustix::io::Errno::NOTDIR,
                ) => return None,
                // No openat2 (old kernel, seccomp): the walk below decides.
                Err(_) => {}
            }
        }
        self.child(dir).ok()?.read_small(name, limit)
    }
}

/// At most `limit` bytes of the regular file `fd` as text (what did not fit is not read).
fn read_regular(fd: OwnedFd, limit: u64) -> Option<String> {
    let capped = at::read_regular(&fd, limit).ok()?;
    String::from_utf8(capped.bytes).ok()
}

/// One path component: no separator, not `.` or `..`, not empty.
fn check_name(name: &str) -> io::Result<()> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn links_count_as_absent_and_names_stay_single_components() {
        let anchor = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("lock"), "1").unwrap();
        std::fs::create_dir_all(anchor.path().join("chats/a")).unwrap();
        std::fs::write(anchor.path().join("chats/a/lock"), "42").unwrap();
        symlink(outside.path(), anchor.path().join("chats/b")).unwrap();
        symlink(
            outside.path().join("lock"),
            anchor.path().join("chats/a/link"),
        )
        .unwrap();
        let fs = Confined::new(anchor.path());
        let chats = ConfinedDir::open(&fs, &anchor.path().join("chats")).unwrap();
        assert_eq!(
            chats.list().unwrap(),
            vec![("a".to_owned(), Kind::Dir), ("b".to_owned(), Kind::Symlink)]
        );
        assert!(
            chats.child("b").is_err(),
            "a linked directory is not opened"
        );
        assert!(chats.child("..").is_err());
        let a = chats.child("a").unwrap();
        assert_eq!(a.read_small("lock", 64).as_deref(), Some("42"));
        assert_eq!(a.read_small("link", 64), None, "a linked file is not read");
        assert_eq!(a.kind("link"), Some(Kind::Symlink));
        assert_eq!(a.kind("missing"), None);
        assert_eq!(chats.read_small("a", 64), None, "a directory is not read");
        assert_eq!(a.read_small("../a/lock", 64), None);
        assert_eq!(
            chats.read_small_below("a", "lock", 64).as_deref(),
            Some("42")
        );
        assert_eq!(chats.read_small_below("a", "link", 64), None);
        assert_eq!(
            chats.read_small_below("b", "lock", 64),
            None,
            "not through a linked dir"
        );
        assert_eq!(chats.kind_below("a", "lock"), Some(Kind::File));
        assert_eq!(chats.kind_below("a", "link"), Some(Kind::Symlink));
        assert_eq!(chats.kind_below("a", ".."), None);
        // A symlinked chats directory itself is refused by the confined open.
        symlink(anchor.path().join("chats"), anchor.path().join("chats2")).unwrap();
        assert!(ConfinedDir::open(&fs, &anchor.path().join("chats2")).is_err());
    }
}
