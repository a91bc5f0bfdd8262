//! Which project files git does not vouch for: an `@include` of one of them is sent only with
//! the user's consent (`allow_includes`), since a repository's shipped instructions could
//! otherwise send the user's `.env` or `.git/config` with every message.
//!
//! A file needs consent when it lies in a `.git` directory (in any case), when the project is
//! in a git work tree and the file is not in its index (untracked, ignored ones included), or,
//! outside a work tree, when a `.gitignore` between the project root and the file ignores it.
//! Git is never run (a repository's config could make it run a program): the index is read
//! directly (versions 2 to 4, SHA-1 or SHA-256 object names). An index that cannot be read
//! tracks nothing, so everything in that work tree needs consent.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Why an included file needs the user's consent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unvouched {
    /// It lies in a `.git` directory.
    GitDir,
    /// Git ignores it.
    Ignored,
    /// The work tree's index does not hold it.
    Untracked,
}

impl Unvouched {
    /// How the error names it: `is inside .git`, `is ignored by git`, `is not tracked by git`.
    pub fn describe(self) -> &'static str {
        match self {
            Unvouched::GitDir => "is inside .git",
            Unvouched::Ignored => "is ignored by git",
            Unvouched::Untracked => "is not tracked by git",
        }
    }
}

/// What git says about a project's files, read once per expansion.
pub struct Tracked {
    /// The work tree holding the project, with the paths its index holds (relative, `/`).
    tree: Option<(PathBuf, HashSet<Vec<u8>>)>,
    /// The ignore rules from the project root down (used outside a work tree).
    root: PathBuf,
}

impl Tracked {
    /// Reads what git knows about the project at `root` (canonical).
    pub fn new(root: &Path) -> Tracked {
        let tree = work_tree(root).map(|(top, git_dir)| {
            let paths = read_index(&git_dir.join("index"), hash_len(&git_dir)).unwrap_or_default();
            (top, paths)
        });
        Tracked {
            tree,
            root: root.to_path_buf(),
        }
    }

    /// Whether `real` (canonical, inside the project) needs consent, and why.
    pub fn check(&self, real: &Path) -> Option<Unvouched> {
        let relative = real.strip_prefix(&self.root).unwrap_or(real);
        let in_git_dir = relative.components().any(|part| {
            part.as_os_str()
                .to_string_lossy()
                .eq_ignore_ascii_case(".git")
        });
        if in_git_dir {
            return Some(Unvouched::GitDir);
        }
        match &self.tree {
            Some((top, paths)) => {
                let inside = real.strip_prefix(top).ok()?;
                let key = inside.to_string_lossy().replace('\\', "/").into_bytes();
                if paths.contains(&key) {
                    None
                } else if ignored(top, inside) {
                    Some(Unvouched::Ignored)
                } else {
                    Some(Unvouched::Untracked)
                }
            }
            None => ignored(&self.root, relative).then_some(Unvouched::Ignored),
        }
    }
}

/// Whether the `.gitignore` files from `top` down to `relative`'s directory ignore it. One
/// that is not a small regular file (a link to `/dev/zero`, a FIFO) is not read, and the
/// file counts as ignored: it then needs the user's consent.
fn ignored(top: &Path, relative: &Path) -> bool {
    let mut builder = ignore::gitignore::GitignoreBuilder::new(top);
    let mut dir = top.to_path_buf();
    let mut add = |dir: &Path| {
        let file = dir.join(".gitignore");
        if ybs_fsguard::ignore_files::readable_ignore_file(&file) {
            let _ = builder.add(file);
            true
        } else {
            false
        }
    };
    if !add(&dir) {
        return true;
    }
    let parent = relative.parent().unwrap_or(Path::new(""));
    for part in parent.components() {
        dir.push(part);
        if !add(&dir) {
            return true;
        }
    }
    builder.build().is_ok_and(|rules| {
        rules
            .matched_path_or_any_parents(top.join(relative), false)
            .is_ignore()
    })
}

/// The work tree above `root` (inclusive) and its git directory: the nearest `.git`, a
/// directory or a `gitdir: <path>` file (worktrees, submodules).
fn work_tree(root: &Path) -> Option<(PathBuf, PathBuf)> {
    for dir in root.ancestors() {
        let dot_git = dir.join(".git");
        let Ok(meta) = dot_git.symlink_metadata() else {
            continue;
        };
        if meta.is_dir() {
            return Some((dir.to_path_buf(), dot_git));
        }
        if meta.is_file() {
            let text = read_git_text(&dot_git)?;
            let target = text.strip_prefix("gitdir:")?.trim();
            return Some((dir.to_path_buf(), dir.join(target)));
        }
        return None;
    }
    None
}

/// 32 for a SHA-256 repository (`extensions.objectFormat = sha256` in its config, or in the
/// common directory's for a worktree), else 20.
fn hash_len(git_dir: &Path) -> usize {
    let mut dirs = vec![git_dir.to_path_buf()];
    if let Some(common) = read_git_text(&git_dir.join("commondir")) {
        dirs.push(git_dir.join(common.trim()));
    }
    let sha256 = dirs.iter().any(|dir| {
        read_git_text(&dir.join("config")).is_some_and(|config| {
            config.lines().any(|line| {
                let line = line.trim().to_ascii_lowercase();
                line.starts_with("objectformat") && line.ends_with("sha256")
            })
        })
    });
    if sha256 { 32 } else { 20 }
}

/// The paths of a git index file (`DIRC`, versions 2 to 4); `None` when it cannot be read.
fn read_index(path: &Path, hash_len: usize) -> Option<HashSet<Vec<u8>>> {
    let data = read_git_file(path, MAX_INDEX_BYTES)?;
    parse_index(&data, hash_len)
}

/// The largest git index read (a very large repository's is a few hundred megabytes).
const MAX_INDEX_BYTES: u64 = 1024 * 1024 * 1024;

/// The largest small git file read (`.git` as a file, `commondir`, `config`).
const MAX_GIT_TEXT_BYTES: u64 = 1024 * 1024;

/// A file of the git directory, whole, if it is a regular file of at most `cap` bytes: a
/// repository unpacked from an archive can carry any `.git`, and a FIFO or a link to
/// `/dev/zero` there must neither hang nor fill the daemon.
fn read_git_file(path: &Path, cap: u64) -> Option<Vec<u8>> {
    let read = ybs_fsguard::read_file(path, cap, ybs_fsguard::Links::Follow).ok()?;
    (!read.truncated).then_some(read.bytes)
}

/// [`read_git_file`] of a small text file.
fn read_git_text(path: &Path) -> Option<String> {
    String::from_utf8(read_git_file(path, MAX_GIT_TEXT_BYTES)?).ok()
}

fn be32(data: &[u8], at: usize) -> Option<u32> {
    let bytes = data.get(at..at + 4)?;
    Some(u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

/// Git's offset varint (index version 4's prefix length).
fn varint(data: &[u8], at: &mut usize) -> Option<usize> {
    let mut byte = *data.get(*at)?;
    *at += 1;
    let mut value = usize::from(byte & 0x7f);
    while byte & 0x80 != 0 {
        byte = *data.get(*at)?;
        *at += 1;
        value = value.checked_add(1)?.checked_mul(128)? + usize::from(byte & 0x7f);
    }
    Some(value)
}

fn parse_index(data: &[u8], hash_len: usize) -> Option<HashSet<Vec<u8>>> {
    if data.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(data, 4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = usize::try_from(be32(data, 8)?).ok()?;
    let mut paths = HashSet::with_capacity(count.min(1 << 20));
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        // ctime, mtime (8 each), dev, ino, mode, uid, gid, size (4 each), the object name.
        let flags_at = start + 40 + hash_len;
        let flags = u16::from_be_bytes([*data.get(flags_at)?, *data.get(flags_at + 1)?]);
        let mut name_at = flags_at + 2;
        if version >= 3 && flags & 0x4000 != 0 {
            name_at += 2;
        }
        let name = if version == 4 {
            let mut cursor = name_at;
            let strip = varint(data, &mut cursor)?;
            let end = cursor + data.get(cursor..)?.iter().position(|&b| b == 0)?;
            let keep = previous.len().checked_sub(strip)?;
            let mut name = previous[..keep].to_vec();
            name.extend_from_slice(&data[cursor..end]);
            at = end + 1;
            name
        } else {
            let end = name_at + data.get(name_at..)?.iter().position(|&b| b == 0)?;
            // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
            at = start + ((end - start + 8) & !7);
            data[name_at..end].to_vec()
        };
        previous.clone_from(&name);
        paths.insert(name);
    }
    Some(paths)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A version 2 (or 3) index of `names`, SHA-1.
    fn index_v2(names: &[&str]) -> Vec<u8> {
        let mut data = b"DIRC".to_vec();
        data.extend(2u32.to_be_bytes());
        data.extend((names.len() as u32).to_be_bytes());
        for name in names {
            let start = data.len();
            data.extend([0u8; 40 + 20]);
            data.extend((name.len() as u16).to_be_bytes());
            data.extend(name.as_bytes());
            let len = data.len() - start;
            data.extend(vec![0u8; ((len + 8) & !7) - len]);
        }
        data
    }

    #[test]
    fn reads_version_2_and_4_indexes() {
        let paths =
            parse_index(&index_v2(&["a.txt", "src/lib.rs", "src/long-name.rs"]), 20).unwrap();
        assert_eq!(paths.len(), 3);
        assert!(paths.contains(b"src/lib.rs".as_slice()));
        // Version 4: the second name keeps 4 bytes of the first ("src/") and adds "b.rs".
        let mut data = b"DIRC".to_vec();
        data.extend(4u32.to_be_bytes());
        data.extend(2u32.to_be_bytes());
        for (strip, suffix) in [(0u8, "src/a.rs"), (4, "b.rs")] {
            data.extend([0u8; 40 + 20]);
            data.extend([0u8, 8]);
            data.push(strip);
            data.extend(suffix.as_bytes());
            data.push(0);
        }
        let paths = parse_index(&data, 20).unwrap();
        assert!(paths.contains(b"src/a.rs".as_slice()) && paths.contains(b"src/b.rs".as_slice()));
        assert!(parse_index(b"DIRX", 20).is_none());
        assert!(parse_index(&index_v2(&["a"])[..30], 20).is_none());
    }

    #[test]
    fn git_dirs_ignored_and_untracked_files_need_consent() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(
            root.join(".git/index"),
            index_v2(&["notes.md", ".gitignore"]),
        )
        .unwrap();
        std::fs::write(root.join(".gitignore"), ".env\n").unwrap();
        for name in ["notes.md", ".env", "draft.md"] {
            std::fs::write(root.join(name), "x").unwrap();
        }
        let tracked = Tracked::new(&root);
        assert_eq!(tracked.check(&root.join("notes.md")), None);
        assert_eq!(tracked.check(&root.join(".env")), Some(Unvouched::Ignored));
        assert_eq!(
            tracked.check(&root.join("draft.md")),
            Some(Unvouched::Untracked)
        );
        assert_eq!(
            tracked.check(&root.join(".git/config")),
            Some(Unvouched::GitDir)
        );
        assert_eq!(
            tracked.check(&root.join("sub/.GIT/x")),
            Some(Unvouched::GitDir)
        );
        // Outside a work tree only ignore files speak.
        let plain = tempfile::tempdir().unwrap();
        let plain = plain.path().canonicalize().unwrap();
        std::fs::write(plain.join(".gitignore"), "secret*\n").unwrap();
        let tracked = Tracked::new(&plain);
        assert_eq!(tracked.check(&plain.join("notes.md")), None);
        assert_eq!(
            tracked.check(&plain.join("secret.txt")),
            Some(Unvouched::Ignored)
        );
        // A `.gitignore` linked to an endless device is not read: what it might ignore
        // needs consent.
        std::fs::create_dir(plain.join("sub")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", plain.join("sub/.gitignore")).unwrap();
        assert_eq!(
            tracked.check(&plain.join("sub/notes.md")),
            Some(Unvouched::Ignored)
        );
    }

    #[test]
    fn a_git_index_or_config_that_is_a_fifo_or_dev_zero_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join(".git/index")).unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            root.join(".git/config"),
            rustix::fs::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        std::fs::write(root.join("notes.md"), "x").unwrap();
        let start = std::time::Instant::now();
        assert_eq!(hash_len(&root.join(".git")), 20);
        assert!(read_index(&root.join(".git/index"), 20).is_none());
        // Without an index nothing is vouched for: the file needs consent.
        assert_eq!(
            Tracked::new(&root).check(&root.join("notes.md")),
            Some(Unvouched::Untracked)
        );
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }
}
