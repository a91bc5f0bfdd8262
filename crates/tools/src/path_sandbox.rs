//! The path sandbox: which paths a tool may touch.
//!
//! A path is resolved physically before it is judged: every symlink in every component is
//! followed (`read_link`, like `realpath`) and `..` is applied to the physical directory it
//! names. Components that do not exist yet are appended lexically, so a file that does not
//! exist is judged by its nearest existing parent. The resolved path must lie inside an allowed
//! root and outside every blocked path. Writes then re-check at the moment of writing by
//! walking the directories with no-follow opens (see [`ybs_fsguard::guarded`]).

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::protected::{CONFIG_NAMES, CREDENTIAL_PATHS, FileId, ids_of, read_only_paths};

/// The longest path, in bytes, the sandbox accepts (Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// How many symlinks one resolution may follow before it is refused (Linux `MAXSYMLINKS`).
const MAX_SYMLINK_HOPS: usize = 40;

/// Why the sandbox refused a path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// The path is empty.
    #[error("the path is empty; give a file or directory path relative to the working directory")]
    Empty,
    /// The path contains a NUL byte.
    #[error("path `{path}` contains a NUL byte; paths must not contain NUL")]
    NulByte {
        /// The path as given (NUL shown escaped).
        path: String,
    },
    /// The path is longer than [`MAX_PATH_BYTES`].
    #[error("path is too long ({len} bytes; the limit is {MAX_PATH_BYTES}); use a shorter path")]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// `~` was used but the home directory is unknown.
    #[error("cannot expand `~` in `{path}`: the home directory is unknown; use an explicit path")]
    NoHome {
        /// The path as given.
        path: String,
    },
    /// The path resolves outside every allowed root.
    #[error(
        "access denied: `{path}` resolves to `{resolved}`, which is outside the allowed directories ({roots}); use a path inside them"
    )]
    OutsideSandbox {
        /// The path as given.
        path: String,
        /// Where it resolves to.
        resolved: String,
        /// The allowed roots, comma separated.
        roots: String,
    },
    /// The path resolves into a blocked path.
    #[error(
        "access denied: `{path}` resolves to `{resolved}`, which is inside the blocked path `{blocked}`"
    )]
    Blocked {
        /// The path as given.
        path: String,
        /// Where it resolves to.
        resolved: String,
        /// The blocked path it falls in.
        blocked: String,
    },
    /// The path cannot be resolved (a symlink loop, a file used as a directory, ...).
    #[error("cannot resolve `{path}`: {message}")]
    Unresolvable {
        /// The path as given.
        path: String,
        /// Why.
        message: String,
    },
    /// The path lies in a read-only part of a root (`.git`, `.ybs`).
    #[error(
        "access denied: `{path}` resolves to `{resolved}`, which is inside `{protected}`, read-only for the tools (git runs hooks and config from there with your full rights); change it yourself outside ybs"
    )]
    ReadOnly {
        /// The path as given.
        path: String,
        /// Where it resolves to.
        resolved: String,
        /// The read-only path it falls in.
        protected: String,
    },
    /// An allowed root given at construction is unusable.
    #[error(
        "allowed directory `{root}` cannot be used: {message}; create it or fix the configuration"
    )]
    BadRoot {
        /// The root as configured.
        root: String,
        /// Why.
        message: String,
    },
}

/// Allowed roots, blocked paths and read-only paths, all resolved physically at
/// construction; the blocked and read-only ones that exist are also remembered by identity.
#[derive(Debug, Clone)]
pub struct PathSandbox {
    roots: Vec<PathBuf>,
    blocked: Vec<PathBuf>,
    read_only: Vec<PathBuf>,
    blocked_ids: Vec<FileId>,
    read_only_ids: Vec<FileId>,
    kept: Vec<PathBuf>,
    blocked_at_start: Vec<(PathBuf, FileId)>,
    home: Option<PathBuf>,
}

impl PathSandbox {
    /// A sandbox with the home directory taken from `$HOME`. Relative roots and blocked paths
    /// are taken relative to the current directory; `~` is expanded in both.
    pub fn new<R, B>(roots: R, blocked: B) -> Result<Self, SandboxError>
    where
        R: IntoIterator,
        R::Item: AsRef<str>,
        B: IntoIterator,
        B::Item: AsRef<str>,
    {
        Self::with_home(roots, blocked, std::env::var_os("HOME").map(PathBuf::from))
    }

    /// A sandbox with an explicit home directory for `~` expansion. The credential files of
    /// [`CREDENTIAL_PATHS`](crate::protected::CREDENTIAL_PATHS) in that home are blocked too,
    /// and each root's `.git` and `.ybs` are read-only.
    pub fn with_home<R, B>(
        roots: R,
        blocked: B,
        home: Option<PathBuf>,
    ) -> Result<Self, SandboxError>
    where
        R: IntoIterator,
        R::Item: AsRef<str>,
        B: IntoIterator,
        B::Item: AsRef<str>,
    {
        let cwd = std::env::current_dir().map_err(|e| SandboxError::BadRoot {
            root: ".".into(),
            message: format!("the current directory is unknown ({e})"),
        })?;
        let mut sandbox = PathSandbox {
            roots: Vec::new(),
            blocked: Vec::new(),
            read_only: Vec::new(),
            blocked_ids: Vec::new(),
            read_only_ids: Vec::new(),
            kept: Vec::new(),
            blocked_at_start: Vec::new(),
            home,
        };
        for root in roots {
            let root = root.as_ref();
            let expanded = sandbox.expand(root)?;
            let canonical =
                std::fs::canonicalize(cwd.join(&expanded)).map_err(|e| SandboxError::BadRoot {
                    root: root.to_string(),
                    message: e.to_string(),
                })?;
            if !canonical.is_dir() {
                return Err(SandboxError::BadRoot {
                    root: root.to_string(),
                    message: "it is not a directory".into(),
                });
            }
            sandbox.roots.push(canonical);
        }
        for blocked in blocked {
            let blocked = blocked.as_ref();
            let expanded = cwd.join(sandbox.expand(blocked)?);
            let lexical = normalize_lexically(&expanded);
            let physical = resolve_physical(&expanded).map_err(|e| SandboxError::Unresolvable {
                path: blocked.to_string(),
                message: e.to_string(),
            })?;
            if lexical != physical {
                sandbox.blocked.push(lexical);
            }
            sandbox.blocked.push(physical);
        }
        if let Some(home) = sandbox.home.clone() {
            for name in CREDENTIAL_PATHS {
                if let Ok(physical) = resolve_physical(&cwd.join(&home).join(name)) {
                    if !sandbox.blocked.contains(&physical) {
                        sandbox.blocked.push(physical);
                    }
                }
            }
        }
        for root in &sandbox.roots {
            for path in read_only_paths(root) {
                if !sandbox.read_only.contains(&path) {
                    sandbox.read_only.push(path);
                }
            }
            sandbox
                .kept
                .extend(CONFIG_NAMES.iter().map(|name| root.join(name)));
        }
        sandbox.blocked_ids = ids_of(&sandbox.blocked);
        sandbox.read_only_ids = ids_of(&sandbox.read_only);
        // Only directories inside a root can be moved by the model (by renaming a parent);
        // files and paths outside are rewritten by their programs and stay hidden by name.
        sandbox.blocked_at_start = (sandbox.blocked.iter())
            .filter(|p| sandbox.root_of(p).is_some_and(|r| r != p.as_path()))
            .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
            .filter_map(|p| Some((p.clone(), FileId::of_no_follow(p)?)))
            .collect();
        Ok(sandbox)
    }

    /// The allowed roots, resolved.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The blocked paths, resolved.
    pub fn blocked(&self) -> &[PathBuf] {
        &self.blocked
    }

    /// The paths that tools and commands may read but not change: each root's `.git` (with
    /// a worktree's git directories), `.ybs`, `.ybs.json` and what [`Self::protect`] added.
    pub fn read_only(&self) -> &[PathBuf] {
        &self.read_only
    }

    /// The read-only paths that commands may not create either (ybs's configuration, the
    /// chat file being answered, external tools' programs): [`crate::shell`] removes what a
    /// command created under these names.
    pub fn kept_from_commands(&self) -> &[PathBuf] {
        &self.kept
    }

    /// Makes `path` read-only for the tools and commands, whether or not it exists yet, like
    /// `.ybs.json`: for the chat file being answered and the programs of external tools.
    /// A path outside every root is read-only anyway and is left alone.
    pub fn protect(&mut self, path: &Path) {
        let Ok(resolved) = resolve_physical(path) else {
            return;
        };
        if self.root_of(&resolved).is_none() || self.read_only.contains(&resolved) {
            return;
        }
        self.read_only.push(resolved.clone());
        self.kept.push(resolved);
        self.read_only_ids = ids_of(&self.read_only);
    }

    /// Whether `id` is the identity a blocked path had when the sandbox was built.
    pub fn is_blocked_id(&self, id: FileId) -> bool {
        self.blocked_ids.binary_search(&id).is_ok()
    }

    /// Whether some blocked path ends in `name` (compared as bytes): a cheap first test, for
    /// an entry whose directory already passed, before [`is_blocked`](Self::is_blocked)
    /// compares paths component by component.
    pub fn may_block_name(&self, name: &std::ffi::OsStr) -> bool {
        use std::os::unix::ffi::OsStrExt;
        self.blocked
            .iter()
            .any(|b| b.as_os_str().as_bytes().ends_with(name.as_bytes()))
    }

    /// Whether some blocked path had inode `ino` (on any device) when the sandbox was built:
    /// a cheap first test before [`is_blocked_id`](Self::is_blocked_id) needs a `stat`.
    pub fn may_be_blocked_ino(&self, ino: u64) -> bool {
        self.blocked_ids.iter().any(|id| id.ino == ino)
    }

    /// Whether `id` is the identity a read-only path had when the sandbox was built.
    pub fn is_read_only_id(&self, id: FileId) -> bool {
        self.read_only_ids.binary_search(&id).is_ok()
    }

    /// A blocked directory inside a root that no longer names what it named when the sandbox
    /// was built (it was moved, replaced or removed), if any: then hiding it by name would
    /// hide the wrong thing.
    pub fn moved_blocked(&self) -> Option<&Path> {
        self.blocked_at_start
            .iter()
            .find(|(path, id)| FileId::of_no_follow(path) != Some(*id))
            .map(|(path, _)| path.as_path())
    }

    /// Checks that a resolved path may be written: allowed by [`check`](Self::check) and
    /// outside every read-only path.
    pub fn check_write(&self, original: &str, resolved: &Path) -> Result<(), SandboxError> {
        self.check(original, resolved)?;
        if let Some(protected) = self.read_only.iter().find(|p| resolved.starts_with(p)) {
            return Err(SandboxError::ReadOnly {
                path: original.to_string(),
                resolved: resolved.display().to_string(),
                protected: protected.display().to_string(),
            });
        }
        Ok(())
    }

    /// The home directory used for `~`.
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// Resolves `path` (relative paths against `base`) and checks it: the physical path if it
    /// is allowed, or why not.
    pub fn resolve(&self, base: &Path, path: &str) -> Result<PathBuf, SandboxError> {
        if path.is_empty() {
            return Err(SandboxError::Empty);
        }
        if path.contains('\0') {
            return Err(SandboxError::NulByte {
                path: path.replace('\0', "\\0"),
            });
        }
        if path.len() > MAX_PATH_BYTES {
            return Err(SandboxError::TooLong { len: path.len() });
        }
        let expanded = self.expand(path)?;
        let absolute = base.join(expanded);
        if absolute.as_os_str().len() > MAX_PATH_BYTES {
            return Err(SandboxError::TooLong {
                len: absolute.as_os_str().len(),
            });
        }
        let resolved = resolve_physical(&absolute).map_err(|e| SandboxError::Unresolvable {
            path: path.to_string(),
            message: e.to_string(),
        })?;
        self.check(path, &resolved)?;
        Ok(resolved)
    }

    /// Checks an already physical path: inside a root and outside every blocked path.
    pub fn check(&self, original: &str, resolved: &Path) -> Result<(), SandboxError> {
        if let Some(blocked) = self.blocked.iter().find(|b| resolved.starts_with(b)) {
            return Err(SandboxError::Blocked {
                path: original.to_string(),
                resolved: resolved.display().to_string(),
                blocked: blocked.display().to_string(),
            });
        }
        if self.root_of(resolved).is_none() {
            return Err(SandboxError::OutsideSandbox {
                path: original.to_string(),
                resolved: resolved.display().to_string(),
                roots: self
                    .roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        Ok(())
    }

    /// The allowed root a resolved path lies in (the deepest one when roots nest).
    pub fn root_of(&self, resolved: &Path) -> Option<&Path> {
        self.roots
            .iter()
            .filter(|root| resolved.starts_with(root))
            .max_by_key(|root| root.components().count())
            .map(PathBuf::as_path)
    }

    /// Whether a resolved path is blocked.
    pub fn is_blocked(&self, resolved: &Path) -> bool {
        self.blocked.iter().any(|b| resolved.starts_with(b))
    }

    /// Expands a leading `~` or `~/` to the home directory. `~user` is left as written (a
    /// relative name), so it cannot name another user's home.
    fn expand(&self, path: &str) -> Result<PathBuf, SandboxError> {
        if path == "~" || path.starts_with("~/") {
            let home = self.home.as_ref().ok_or_else(|| SandboxError::NoHome {
                path: path.to_string(),
            })?;
            let rest = path.trim_start_matches('~').trim_start_matches('/');
            Ok(if rest.is_empty() {
                home.clone()
            } else {
                home.join(rest)
            })
        } else {
            Ok(PathBuf::from(path))
        }
    }
}

/// The file tools open what the sandbox allowed through `ybs_fsguard::guarded`, which walks
/// from the sandbox's roots and re-checks identities at the moment of access.
impl ybs_fsguard::Guard for PathSandbox {
    fn root_of(&self, resolved: &Path) -> Option<&Path> {
        PathSandbox::root_of(self, resolved)
    }

    fn is_blocked_id(&self, id: FileId) -> bool {
        PathSandbox::is_blocked_id(self, id)
    }

    fn is_read_only_id(&self, id: FileId) -> bool {
        PathSandbox::is_read_only_id(self, id)
    }

    fn check_write(&self, shown: &str, resolved: &Path) -> Result<(), ybs_fsguard::Refusal> {
        PathSandbox::check_write(self, shown, resolved)
            .map_err(|error| ybs_fsguard::Refusal(error.to_string()))
    }
}

/// Applies `.` and `..` without looking at the file system.
pub(crate) fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Resolves an absolute path physically: follows every symlink (dangling ones too, so a
/// link to a file that does not exist yet is judged by where it points), applies `..` to the
/// physical parent, and appends components that do not exist yet lexically.
pub(crate) fn resolve_physical(path: &Path) -> io::Result<PathBuf> {
    let mut pending: VecDeque<OsString> = path_components(path);
    let mut out = PathBuf::from("/");
    let mut hops = 0usize;
    let mut exists = true;
    while let Some(name) = pending.pop_front() {
        if name == OsStr::new(".") {
            continue;
        }
        if name == OsStr::new("..") {
            out.pop();
            continue;
        }
        let candidate = out.join(&name);
        if !exists {
            out = candidate;
            continue;
        }
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                hops += 1;
                if hops > MAX_SYMLINK_HOPS {
                    return Err(io::Error::other(
                        "too many levels of symbolic links (a symlink loop?)",
                    ));
                }
                let target = std::fs::read_link(&candidate)?;
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                for component in path_components(&target).into_iter().rev() {
                    pending.push_front(component);
                }
            }
            Ok(_) => out = candidate,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                exists = false;
                out = candidate;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// The components of a path as names, with `.` and `..` kept as names.
fn path_components(path: &Path) -> VecDeque<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::CurDir => Some(OsString::from(".")),
            Component::RootDir | Component::Prefix(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn resolves_nonexistent_tail_lexically() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let got = resolve_physical(&root.join("a/b/../c")).unwrap();
        assert_eq!(got, root.join("a/c"));
    }

    #[test]
    fn follows_dangling_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::os::unix::fs::symlink("/nonexistent-target/x", root.join("link")).unwrap();
        let got = resolve_physical(&root.join("link")).unwrap();
        assert_eq!(got, PathBuf::from("/nonexistent-target/x"));
    }

    #[test]
    fn tilde_user_is_not_expanded() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let sandbox = PathSandbox::with_home(
            [root.to_str().unwrap()],
            Vec::<String>::new(),
            Some("/home/nobody".into()),
        )
        .unwrap();
        let got = sandbox.resolve(&root, "~root/x").unwrap();
        assert_eq!(got, root.join("~root/x"));
    }
}
