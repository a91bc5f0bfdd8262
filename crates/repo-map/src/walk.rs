//! The project's files: the walk of ybs's `list_files` tool (ignore files honoured, `.git`
//! skipped, symlinks not followed, a directory whose ignore file is a device or a FIFO not
//! entered), a cheap fingerprint of it, and reading the files, also
//! without following a link: a file or directory swapped for a link to a secret outside the
//! project after the walk is not read.

use std::collections::hash_map::DefaultHasher;
use std::ffi::OsStr;
use std::hash::{Hash, Hasher};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::Mutex;
use std::time::SystemTime;

use ignore::{WalkBuilder, WalkState};
use ybs_fsguard::{Capped, ignore_files};

use crate::lang::Lang;
use crate::source::SourceFile;

/// Files larger than this are listed by name only, never read.
pub const MAX_FILE_BYTES: u64 = 512 * 1024;

/// A file found by [`scan`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileMeta {
    /// The path relative to the root, with `/` separators.
    pub path: String,
    /// The size in bytes.
    pub size: u64,
    /// The modification time, when the file system has one.
    pub modified: Option<SystemTime>,
}

/// The regular files under `root`, sorted by path: `.gitignore`, `.ignore` and
/// `.git/info/exclude` are honoured (also outside a git repository), hidden files are kept,
/// `.git` is skipped and symbolic links are not followed, as in the `list_files` tool.
/// `skip` leaves out more (a sandbox's blocked paths): it gets absolute paths, and a skipped
/// directory is not entered.
pub fn scan<F>(root: &Path, skip: F) -> Vec<FileMeta>
where
    F: Fn(&Path) -> bool + Send + Sync + 'static,
{
    let found = Mutex::new(Vec::new());
    // An ignore file that never ends (a link to a device, a FIFO) would hang the walk.
    if ignore_files::unsafe_ignore_file_above(root).is_some() {
        return Vec::new();
    }
    WalkBuilder::new(root)
        .hidden(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            entry.file_name() != ".git"
                && !skip(entry.path())
                && (!entry.file_type().is_some_and(|t| t.is_dir())
                    || ignore_files::ignore_files_safe(entry.path()))
        })
        .build_parallel()
        .run(|| {
            let found = &found;
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                let Ok(relative) = entry.path().strip_prefix(root) else {
                    return WalkState::Continue;
                };
                let Some(path) = slash_path(relative) else {
                    return WalkState::Continue;
                };
                let metadata = entry.metadata().ok();
                let meta = FileMeta {
                    path,
                    size: metadata.as_ref().map_or(0, |m| m.len()),
                    modified: metadata.and_then(|m| m.modified().ok()),
                };
                if let Ok(mut found) = found.lock() {
                    found.push(meta);
                }
                WalkState::Continue
            })
        });
    let mut files = found.into_inner().unwrap_or_default();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

/// `relative` with `/` separators; `None` for a name that is not UTF-8.
fn slash_path(relative: &Path) -> Option<String> {
    let parts: Option<Vec<&str>> = relative.iter().map(|part| part.to_str()).collect();
    Some(parts?.join("/"))
}

/// A hash of the paths, sizes and modification times of `files`: it changes when a file is
/// added, removed, resized or touched, and costs no read.
pub fn fingerprint(files: &[FileMeta]) -> u64 {
    let mut hasher = DefaultHasher::new();
    files.hash(&mut hasher);
    hasher.finish()
}

/// Reads the files of `files` under `root` whose language this crate parses. Any other file,
/// and one that is too large, not UTF-8 (binary), unreadable or reached through a symbolic
/// link (anywhere below `root`), keeps `content: None` and is listed by name only.
pub fn read(root: &Path, files: &[FileMeta]) -> Vec<SourceFile> {
    let root_fd = rustix::fs::open(root, DIR_FLAGS, rustix::fs::Mode::empty()).ok();
    crate::parallel::map(
        files,
        || (),
        |(), meta| SourceFile {
            path: meta.path.clone(),
            content: (meta.size <= MAX_FILE_BYTES && Lang::of(&meta.path).is_some())
                .then(|| read_beneath(root_fd.as_ref()?, &meta.path))
                .flatten()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .filter(|text| !text.contains('\0')),
        },
    )
}

const DIR_FLAGS: rustix::fs::OFlags = rustix::fs::OFlags::RDONLY
    .union(rustix::fs::OFlags::DIRECTORY)
    .union(rustix::fs::OFlags::CLOEXEC);

/// The bytes of the file `relative` (`/` separators) below the open directory `root`, reached
/// one name at a time with no-follow opens, so a link anywhere on the way is not followed:
/// a regular file of at most [`MAX_FILE_BYTES`] only (a FIFO is not waited on).
fn read_beneath(root: &OwnedFd, relative: &str) -> Option<Vec<u8>> {
    let names: Vec<&OsStr> = relative.split('/').map(OsStr::new).collect();
    match ybs_fsguard::read_beneath(root, &names, MAX_FILE_BYTES).ok()? {
        Capped {
            bytes,
            truncated: false,
        } => Some(bytes),
        Capped { .. } => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::fs;

    use super::*;

    /// A small project: sources, an ignored build directory and log, `.git`, a README.
    pub(crate) fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in [
            (".gitignore", "build/\n*.log\n"),
            ("src/main.rs", "fn main() {}\n"),
            ("src/util.py", "def f():\n    pass\n"),
            ("build/out.rs", "fn generated() {}\n"),
            ("debug.log", "noise\n"),
            (".git/config", "[core]\n"),
            ("README.md", "# p\n"),
        ] {
            fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            fs::write(root.join(path), text).unwrap();
        }
        dir
    }

    fn paths(files: &[FileMeta]) -> Vec<&str> {
        files.iter().map(|f| f.path.as_str()).collect()
    }

    #[test]
    fn scan_honours_gitignore_skips_git_and_sorts() {
        let dir = project();
        let files = scan(dir.path(), |_| false);
        assert_eq!(
            paths(&files),
            [".gitignore", "README.md", "src/main.rs", "src/util.py"]
        );
        assert_eq!(files[2].size, 13);
        let blocked = dir.path().join("src");
        let files = scan(dir.path(), move |path| path == blocked);
        assert_eq!(paths(&files), [".gitignore", "README.md"]);
    }

    #[test]
    fn a_directory_whose_ignore_file_is_a_device_is_not_entered() {
        let dir = project();
        let root = dir.path();
        fs::create_dir_all(root.join("trap")).unwrap();
        fs::write(root.join("trap/kept.rs"), "fn hidden() {}\n").unwrap();
        // Read to the end, /dev/zero would never end the walk.
        std::os::unix::fs::symlink("/dev/zero", root.join("trap/.gitignore")).unwrap();
        let files = scan(root, |_| false);
        assert_eq!(
            paths(&files),
            [".gitignore", "README.md", "src/main.rs", "src/util.py"]
        );
        // At the root, nothing is walked.
        std::os::unix::fs::symlink("/dev/zero", root.join(".ignore")).unwrap();
        assert!(scan(root, |_| false).is_empty());
    }

    #[test]
    fn the_fingerprint_changes_when_a_file_is_added_or_resized_and_only_then() {
        let dir = project();
        let first = fingerprint(&scan(dir.path(), |_| false));
        assert_eq!(fingerprint(&scan(dir.path(), |_| false)), first);
        fs::write(dir.path().join("src/new.go"), "package x\n").unwrap();
        let added = fingerprint(&scan(dir.path(), |_| false));
        assert_ne!(added, first);
        fs::write(dir.path().join("src/new.go"), "package x\n\nfunc F() {}\n").unwrap();
        assert_ne!(fingerprint(&scan(dir.path(), |_| false)), added);
        // An ignored file changes nothing.
        fs::write(dir.path().join("other.log"), "more noise\n").unwrap();
        let before = fingerprint(&scan(dir.path(), |_| false));
        fs::write(dir.path().join("build/new.rs"), "fn x() {}\n").unwrap();
        assert_eq!(fingerprint(&scan(dir.path(), |_| false)), before);
    }

    #[test]
    fn read_follows_no_link_put_in_place_of_a_file_or_directory() {
        let dir = project();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.rs"), "fn leaked_secret() {}\n").unwrap();
        fs::create_dir(outside.path().join("d")).unwrap();
        fs::write(
            outside.path().join("d/util.py"),
            "def leaked():\n    pass\n",
        )
        .unwrap();
        let files = scan(dir.path(), |_| false);
        // After the walk, the model swaps a file and a directory for links out.
        fs::remove_file(dir.path().join("src/main.rs")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.rs"),
            dir.path().join("src/main.rs"),
        )
        .unwrap();
        let content = |read: &[SourceFile], path: &str| {
            let file = read.iter().find(|file| file.path == path).unwrap();
            file.content.clone()
        };
        let first = read(dir.path(), &files);
        assert_eq!(content(&first, "src/main.rs"), None);
        assert!(content(&first, "src/util.py").is_some());
        fs::rename(dir.path().join("src"), dir.path().join("old-src")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("d"), dir.path().join("src")).unwrap();
        let second = read(dir.path(), &files);
        assert_eq!(content(&second, "src/util.py"), None);
        // A link found by the walk is not listed at all.
        let files = scan(dir.path(), |_| false);
        assert!(
            files.iter().all(|file| !file.path.starts_with("src")),
            "{files:?}"
        );
    }

    #[test]
    fn read_keeps_the_text_of_parsed_languages_only() {
        let dir = project();
        fs::write(dir.path().join("src/blob.c"), b"int x;\0\x01\x02").unwrap();
        let files = scan(dir.path(), |_| false);
        let read = read(dir.path(), &files);
        let text: Vec<(&str, bool)> = (read.iter())
            .map(|f| (f.path.as_str(), f.content.is_some()))
            .collect();
        assert_eq!(
            text,
            [
                (".gitignore", false),
                ("README.md", false),
                ("src/blob.c", false),
                ("src/main.rs", true),
                ("src/util.py", true),
            ]
        );
    }
}
