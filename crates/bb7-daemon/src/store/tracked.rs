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

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::store::git_index::read_index;

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
    /// Its name says it holds secrets (`.env`, a key, credentials), whatever git says: a
    /// tracked `.env` the user filled in is still the user's.
    SecretName,
}

impl Unvouched {
    /// How the error names it: `is inside .git`, `is ignored by git`, `is not tracked by git`,
    /// `is named like a secret`.
    pub fn describe(self) -> &'static str {
        match self {
            Unvouched::GitDir => "is inside .git",
            Unvouched::Ignored => "is ignored by git",
            Unvouched::Untracked => "is not tracked by git",
            Unvouched::SecretName => "is named like a file of secrets",
        }
    }
}

/// Whether a file's name says it holds secrets: `.env` and its variants (`.env.local`,
/// `.envrc`), private keys and certificates (`*.pem`, `*.key`, `id_*`, `*.p12`, `*.pfx`),
/// and credential stores (`credentials*`, `.netrc`, `.git-credentials`, `.pgpass`). Such a
/// file is sent only with the user's consent, tracked or not.
pub fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.starts_with(".env")
        || name.starts_with("id_")
        || name.starts_with("credentials")
        || [".netrc", ".git-credentials", ".pgpass"].contains(&name.as_str())
        || [".pem", ".key", ".p12", ".pfx"]
            .iter()
            .any(|suffix| name.ends_with(suffix))
}

/// What git says about a project's files, read once per request.
pub struct Tracked {
    /// The work tree holding the project, with the paths its index holds (relative, `/`;
    /// empty when the index cannot be read, so nothing is vouched for).
    tree: Option<(PathBuf, HashSet<Vec<u8>>)>,
    /// The ignore rules from the project root down (used outside a work tree).
    root: PathBuf,
    /// The ignore rules that apply in a directory (relative to where they start), built once
    /// per directory and request: a project's large `.gitignore` files are not parsed again
    /// for every include. `None` when an ignore file there could not be read.
    matchers: HashMap<PathBuf, Option<Gitignore>>,
}

impl Tracked {
    /// Reads what git knows about the project at `root` (canonical).
    pub fn new(root: &Path) -> Tracked {
        let tree = work_tree(root).map(|(top, git_dir)| {
            let paths = match git_dir {
                Some(git_dir) => {
                    read_index(&git_dir.join("index"), hash_len(&git_dir)).unwrap_or_default()
                }
                None => HashSet::new(),
            };
            (top, paths)
        });
        Tracked {
            tree,
            root: root.to_path_buf(),
            matchers: HashMap::new(),
        }
    }

    /// Whether `real` (canonical, inside the project) needs consent, and why.
    pub fn check(&mut self, real: &Path) -> Option<Unvouched> {
        let relative = real.strip_prefix(&self.root).unwrap_or(real);
        let in_git_dir = relative.components().any(|part| {
            part.as_os_str()
                .to_string_lossy()
                .eq_ignore_ascii_case(".git")
        });
        if in_git_dir {
            return Some(Unvouched::GitDir);
        }
        let git_says = match &self.tree {
            Some((top, paths)) => {
                let top = top.clone();
                let inside = real.strip_prefix(&top).ok()?.to_path_buf();
                let key = inside.to_string_lossy().replace('\\', "/").into_bytes();
                if paths.contains(&key) {
                    None
                } else if self.ignored(&top, &inside) {
                    Some(Unvouched::Ignored)
                } else {
                    Some(Unvouched::Untracked)
                }
            }
            None => {
                let (root, relative) = (self.root.clone(), relative.to_path_buf());
                self.ignored(&root, &relative).then_some(Unvouched::Ignored)
            }
        };
        let secret = real
            .file_name()
            .is_some_and(|name| is_secret_name(&name.to_string_lossy()));
        git_says.or(secret.then_some(Unvouched::SecretName))
    }

    /// Whether the `.gitignore` files from `top` down to `relative`'s directory ignore it.
    /// One that is not a small regular file (a link to `/dev/zero`, a FIFO) is not read, and
    /// the file counts as ignored: it then needs the user's consent.
    fn ignored(&mut self, top: &Path, relative: &Path) -> bool {
        let parent = relative.parent().unwrap_or(Path::new("")).to_path_buf();
        let matcher = self
            .matchers
            .entry(top.join(&parent))
            .or_insert_with(|| build_matcher(top, &parent));
        match matcher {
            Some(rules) => rules
                .matched_path_or_any_parents(top.join(relative), false)
                .is_ignore(),
            None => true,
        }
    }
}

/// The ignore rules of `top` and each directory down to `top/parent`; `None` when one of
/// their `.gitignore` files cannot be read safely.
fn build_matcher(top: &Path, parent: &Path) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(top);
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
        return None;
    }
    for part in parent.components() {
        dir.push(part);
        if !add(&dir) {
            return None;
        }
    }
    builder.build().ok()
}

/// The work tree above `root` (inclusive) and its git directory: the nearest `.git`, a
/// directory or a `gitdir: <path>` file (worktrees, submodules). A `.git` that is a link,
/// or a file that names no git directory, still marks a work tree (git itself follows the
/// link): its git directory is then not read, so nothing in it is vouched for.
fn work_tree(root: &Path) -> Option<(PathBuf, Option<PathBuf>)> {
    for dir in root.ancestors() {
        let dot_git = dir.join(".git");
        let Ok(meta) = dot_git.symlink_metadata() else {
            continue;
        };
        if meta.is_dir() {
            return Some((dir.to_path_buf(), Some(dot_git)));
        }
        let target = meta
            .is_file()
            .then(|| read_git_text(&dot_git))
            .flatten()
            .and_then(|text| Some(dir.join(text.strip_prefix("gitdir:")?.trim())));
        return Some((dir.to_path_buf(), target));
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

/// The largest small git file read (`.git` as a file, `commondir`, `config`).
const MAX_GIT_TEXT_BYTES: u64 = 1024 * 1024;

/// A small text file of the git directory, whole, if it is a regular file of at most
/// [`MAX_GIT_TEXT_BYTES`]: a repository unpacked from an archive can carry any `.git`, and a
/// FIFO or a link to `/dev/zero` there must neither hang nor fill the daemon.
fn read_git_text(path: &Path) -> Option<String> {
    let read = ybs_fsguard::read_file(path, MAX_GIT_TEXT_BYTES, ybs_fsguard::Links::Follow).ok()?;
    if read.truncated {
        return None;
    }
    String::from_utf8(read.bytes).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::store::git_index::tests::index_v2;

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
        let mut tracked = Tracked::new(&root);
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
        let mut tracked = Tracked::new(&plain);
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

    #[test]
    fn files_named_like_secrets_need_consent_even_when_tracked() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let names = [
            ".env",
            ".env.local",
            "keys/id_ed25519",
            "tls/server.PEM",
            "notes.md",
        ];
        std::fs::write(root.join(".git/index"), index_v2(&names)).unwrap();
        let mut tracked = Tracked::new(&root);
        for name in &names[..4] {
            assert_eq!(
                tracked.check(&root.join(name)),
                Some(Unvouched::SecretName),
                "{name}"
            );
        }
        assert_eq!(tracked.check(&root.join("notes.md")), None);
        // Outside any work tree, with no `.gitignore` naming it.
        let plain = tempfile::tempdir().unwrap();
        let plain = plain.path().canonicalize().unwrap();
        let mut tracked = Tracked::new(&plain);
        assert_eq!(
            tracked.check(&plain.join(".env")),
            Some(Unvouched::SecretName)
        );
        assert_eq!(
            tracked.check(&plain.join(".aws/credentials")),
            Some(Unvouched::SecretName)
        );
        assert!(!is_secret_name("environment.md") && !is_secret_name("keyboard.rs"));
    }

    #[test]
    fn a_git_link_or_an_unreadable_gitdir_vouches_for_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let real_git = root.join("elsewhere");
        std::fs::create_dir_all(&real_git).unwrap();
        std::fs::write(real_git.join("index"), index_v2(&["notes.md"])).unwrap();
        let project = root.join("project");
        std::fs::create_dir(&project).unwrap();
        std::os::unix::fs::symlink(&real_git, project.join(".git")).unwrap();
        std::fs::write(project.join("notes.md"), "x").unwrap();
        // The project is a work tree (git follows the link), not "outside git".
        assert_eq!(
            Tracked::new(&project).check(&project.join("notes.md")),
            Some(Unvouched::Untracked)
        );
        // A `gitdir:` file whose target's index is a FIFO: refused without blocking.
        let linked = root.join("linked");
        std::fs::create_dir(&linked).unwrap();
        let target = root.join("target-git");
        std::fs::create_dir(&target).unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            target.join("index"),
            rustix::fs::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        std::fs::write(
            linked.join(".git"),
            format!("gitdir: {}\n", target.display()),
        )
        .unwrap();
        assert_eq!(
            Tracked::new(&linked).check(&linked.join("notes.md")),
            Some(Unvouched::Untracked)
        );
    }

    #[test]
    fn ignore_rules_are_built_once_per_directory_and_request() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let patterns: String = (0..2000).map(|n| format!("pattern-{n}-*\n")).collect();
        for sub in ["", "a", "a/b"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
            std::fs::write(root.join(sub).join(".gitignore"), &patterns).unwrap();
        }
        let mut tracked = Tracked::new(&root);
        for n in 0..200 {
            let name = format!("a/b/note-{n}.md");
            assert_eq!(tracked.check(&root.join(&name)), None);
        }
        assert_eq!(
            tracked.check(&root.join("a/b/pattern-1999-x")),
            Some(Unvouched::Ignored)
        );
        assert_eq!(tracked.matchers.len(), 1, "one matcher for a/b");
    }
}
