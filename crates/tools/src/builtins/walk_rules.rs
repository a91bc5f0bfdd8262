//! The ignore rules of the confined walk ([`super::walk`]): each directory's `.ignore`,
//! `.gitignore` and `.git/info/exclude`, and those of the directories above where the walk
//! starts, matched as the `ignore` crate's walker matches them with the tools' settings
//! (hidden files shown, no global gitignore, git rules applied without a repository).
//!
//! For an entry, the innermost `.ignore` rule that matches it decides; if none does, the
//! innermost `.gitignore` rule; then the innermost `info/exclude` rule. The files are read
//! relative to the directory the walk opened, without following a symlink in their place.

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rustix::fs::{Mode, OFlags};

/// The rules of one directory with rules, linked to those of the nearest directory above it
/// with rules.
pub(crate) struct Rules {
    parent: Option<Arc<Rules>>,
    place: Place,
    ignore: Gitignore,
    git_ignore: Gitignore,
    git_exclude: Gitignore,
}

/// Where the directory of some rules is, relative to the walk's base: how an entry's path
/// below the base becomes its path below that directory.
enum Place {
    /// At or below the base: drop this many leading bytes (the directory's own path below the
    /// base and a separator).
    Below(usize),
    /// Above the base: put these bytes (the base's path below the directory and a separator)
    /// in front.
    Above(Vec<u8>),
}

/// Which ignore files a directory's listing showed.
#[derive(Default, Clone, Copy)]
pub(crate) struct Found {
    /// `.ignore`.
    pub ignore: bool,
    /// `.gitignore`.
    pub git_ignore: bool,
    /// `.git` (whose `info/exclude` is read).
    pub git: bool,
}

impl Found {
    /// Notes `name` if it is one of the ignore files.
    pub fn note(&mut self, name: &[u8]) {
        match name {
            b".ignore" => self.ignore = true,
            b".gitignore" => self.git_ignore = true,
            b".git" => self.git = true,
            _ => {}
        }
    }

    fn any(self) -> bool {
        self.ignore || self.git_ignore || self.git
    }
}

/// The rules of the directories above `base` (an absolute path), innermost first, as the
/// `ignore` crate reads them for a walk starting at `base`.
pub(crate) fn above(base: &Path) -> Option<Arc<Rules>> {
    let mut chain: Option<Arc<Rules>> = None;
    let ancestors: Vec<&Path> = base.ancestors().skip(1).collect();
    for dir in ancestors.into_iter().rev() {
        let Ok(fd) = rustix::fs::open(dir, DIR_FLAGS, Mode::empty()) else {
            continue;
        };
        let found = Found {
            ignore: true,
            git_ignore: true,
            git: true,
        };
        let below = base
            .strip_prefix(dir)
            .unwrap_or(base)
            .as_os_str()
            .as_bytes();
        let mut prefix = below.to_vec();
        prefix.push(b'/');
        chain = child(chain, fd.as_fd(), dir, Place::Above(prefix), found);
    }
    chain
}

/// The rules for a walked directory `dir` (open at `fd`), whose path below the base is
/// `relative` (empty for the base), given the rules above it and which ignore files its
/// listing showed.
pub(crate) fn below(
    parent: Option<Arc<Rules>>,
    fd: BorrowedFd<'_>,
    dir: &Path,
    relative: &[u8],
    found: Found,
) -> Option<Arc<Rules>> {
    if !found.any() {
        return parent;
    }
    let skip = if relative.is_empty() {
        0
    } else {
        relative.len() + 1
    };
    child(parent, fd, dir, Place::Below(skip), found)
}

fn child(
    parent: Option<Arc<Rules>>,
    fd: BorrowedFd<'_>,
    dir: &Path,
    place: Place,
    found: Found,
) -> Option<Arc<Rules>> {
    let read = |wanted: bool, path: &[&str]| {
        if wanted {
            matcher(fd, dir, path)
        } else {
            Gitignore::empty()
        }
    };
    let rules = Rules {
        ignore: read(found.ignore, &[".ignore"]),
        git_ignore: read(found.git_ignore, &[".gitignore"]),
        git_exclude: read(found.git, &[".git", "info", "exclude"]),
        parent,
        place,
    };
    if rules.ignore.is_empty() && rules.git_ignore.is_empty() && rules.git_exclude.is_empty() {
        return rules.parent;
    }
    Some(Arc::new(rules))
}

/// Whether the rules ignore the entry at `relative` (its path below the walk's base).
/// `scratch` is a buffer for the paths matched against rules above the base.
pub(crate) fn ignores(
    rules: Option<&Arc<Rules>>,
    relative: &[u8],
    is_dir: bool,
    scratch: &mut Vec<u8>,
) -> bool {
    let (mut ignore, mut git_ignore, mut git_exclude) = (
        ignore::Match::None,
        ignore::Match::None,
        ignore::Match::None,
    );
    let mut node = rules;
    while let Some(rules) = node {
        let path = match &rules.place {
            Place::Below(skip) => relative.get(*skip..).unwrap_or_default(),
            Place::Above(prefix) => {
                scratch.clear();
                scratch.extend_from_slice(prefix);
                scratch.extend_from_slice(relative);
                scratch.as_slice()
            }
        };
        let path = Path::new(OsStr::from_bytes(path));
        if ignore.is_none() {
            ignore = rules.ignore.matched(path, is_dir);
        }
        if git_ignore.is_none() {
            git_ignore = rules.git_ignore.matched(path, is_dir);
        }
        if git_exclude.is_none() {
            git_exclude = rules.git_exclude.matched(path, is_dir);
        }
        node = rules.parent.as_ref();
    }
    ignore.or(git_ignore).or(git_exclude).is_ignore()
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

/// The rules of the file at `path` (names below `dir`, opened without following links), as
/// a gitignore rooted at `root`; empty when there is no such file.
fn matcher(dir: BorrowedFd<'_>, root: &Path, path: &[&str]) -> Gitignore {
    let names: Vec<&OsStr> = path.iter().map(OsStr::new).collect();
    // What does not fit under the cap is left out, as the `ignore` crate's own read of an
    // ignore file would never get that far without the guard's check of its size.
    let Ok(ybs_fsguard::Capped { bytes, .. }) = ybs_fsguard::read_beneath(
        dir,
        &names,
        ybs_fsguard::ignore_files::MAX_IGNORE_FILE_BYTES,
    ) else {
        return Gitignore::empty();
    };
    let mut builder = GitignoreBuilder::new(root);
    // Line by line as `BufRead::lines` gives them (which the `ignore` crate reads with): the
    // first line not valid UTF-8 ends the file; a leading byte order mark is dropped.
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(line) = std::str::from_utf8(line) else {
            break;
        };
        let line = if i == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        // A line that is not a valid pattern is left out, as the `ignore` crate leaves it.
        let _ = builder.add_line(None, line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}
