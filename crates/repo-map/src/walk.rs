//! The project's files: the walk of ybs's `list_files` tool (ignore files honoured, `.git`
//! skipped, symlinks not followed), a cheap fingerprint of it, and reading the files.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::Mutex;
use std::time::SystemTime;

use ignore::{WalkBuilder, WalkState};

use crate::SourceFile;
use crate::lang::Lang;

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
    WalkBuilder::new(root)
        .hidden(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| entry.file_name() != ".git" && !skip(entry.path()))
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
/// and one that is too large, not UTF-8 (binary) or unreadable, keeps `content: None` and is
/// listed by name only.
pub fn read(root: &Path, files: &[FileMeta]) -> Vec<SourceFile> {
    crate::parallel::map(
        files,
        || (),
        |(), meta| SourceFile {
            path: meta.path.clone(),
            content: (meta.size <= MAX_FILE_BYTES && Lang::of(&meta.path).is_some())
                .then(|| std::fs::read(root.join(&meta.path)).ok())
                .flatten()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .filter(|text| !text.contains('\0')),
        },
    )
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn project() -> tempfile::TempDir {
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

    #[test]
    fn map_directory_puts_the_mentioned_file_first() {
        let dir = project();
        let counter = ybs_context_budget::CharsPerToken::default();
        let map = crate::map_directory(dir.path(), |_| false, "look at src/util.py", 500, &counter);
        assert_eq!(
            map.text,
            "src/util.py:\n  def f()\n.gitignore\nREADME.md\nsrc/main.rs:\n  fn main()\n"
        );
        assert_eq!((map.files_total, map.files_shown), (4, 4));
        let off = crate::map_directory(dir.path(), |_| false, "", 0, &counter);
        assert!(off.text.is_empty());
    }

    #[test]
    fn a_mapper_reparses_changed_files_and_forgets_removed_ones() {
        let dir = project();
        let counter = ybs_context_budget::CharsPerToken::default();
        let mut mapper = crate::Mapper::new();
        let map = |mapper: &mut crate::Mapper| {
            let files = scan(dir.path(), |_| false);
            mapper.map(dir.path(), &files, &[], 500, &counter).text
        };
        let first = map(&mut mapper);
        let sources = read(dir.path(), &scan(dir.path(), |_| false));
        assert_eq!(first, crate::build(&sources, &[], 500, &counter).text);
        assert_eq!(map(&mut mapper), first);
        fs::write(
            dir.path().join("src/main.rs"),
            "fn main() {}
fn second() {}
",
        )
        .unwrap();
        fs::remove_file(dir.path().join("src/util.py")).unwrap();
        let second = map(&mut mapper);
        assert!(
            second.contains("src/main.rs:\n  fn main()\n  fn second()\n"),
            "{second}"
        );
        assert!(!second.contains("util.py"), "{second}");
        assert_eq!(mapper.known.len(), 3);
    }
}
