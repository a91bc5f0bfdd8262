//! What a turn did, as undo keeps it: each file it wrote with its content before and after,
//! whether it ran shell commands, its session file and its commit.
//!
//! Files are read as [`ybs_fsguard::physical`] reads them: by a walk from `/` that follows no
//! link, regular files only, at most [`MAX_UNDO_BYTES`]. A file that cannot be read so is
//! recorded as one undo cannot put back, with the reason.

use std::path::{Path, PathBuf};

use ybs_fsguard::NoFollowError;

/// The largest file undo keeps a copy of; a larger one cannot be put back by undo.
pub const MAX_UNDO_BYTES: u64 = 16 * 1024 * 1024;

/// One file a turn wrote: what it was before the turn's first write, and after the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRecord {
    /// The file (absolute).
    pub path: PathBuf,
    /// Its content before the turn; `None` when the turn created it.
    pub before: Option<Vec<u8>>,
    /// Its permission bits before the turn.
    pub mode: Option<u32>,
    /// Its content when the turn ended; `None` when it did not exist then.
    pub after: Option<Vec<u8>>,
    /// Why undo cannot put it back (too large, not a regular file, reached through a link),
    /// when it cannot.
    pub unrestorable: Option<String>,
}

impl FileRecord {
    /// The file `path` as it is now, before a write.
    /// `path` is made physical first (its directory's links resolved, now, before the
    /// model acts on it); the tools' paths already are.
    pub fn now(path: &Path) -> FileRecord {
        let path = physical(path);
        let (before, mode, unrestorable) = match ybs_fsguard::physical::read(&path, MAX_UNDO_BYTES)
        {
            Ok(Some(file)) => (Some(file.bytes), Some(file.mode), None),
            Ok(None) => (None, None, None),
            Err(error) => (None, None, Some(error.to_string())),
        };
        FileRecord {
            path,
            before,
            mode,
            after: None,
            unrestorable,
        }
    }
}

/// The content of the file `path` now, read as undo reads it; `None` when it does not exist.
pub fn read_now(path: &Path) -> Result<Option<Vec<u8>>, NoFollowError> {
    Ok(ybs_fsguard::physical::read(path, MAX_UNDO_BYTES)?.map(|file| file.bytes))
}

/// `path` with the links of its directory resolved (unchanged when that does not exist).
pub(crate) fn physical(path: &Path) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => parent
            .canonicalize()
            .map_or_else(|_| path.to_path_buf(), |parent| parent.join(name)),
        _ => path.to_path_buf(),
    }
}

/// What one turn did that can (or cannot) be undone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnRecord {
    /// Index in the conversation of the turn's user message.
    pub start: usize,
    /// The text of that message (compaction may have moved or summarized it since).
    pub request: String,
    /// The files it wrote, edited, created or deleted, in the order first touched.
    pub files: Vec<FileRecord>,
    /// Whether it ran shell commands (whose effects cannot be undone).
    pub ran_shell: bool,
    /// The session file (`exec`, the REPL) as it was before and after the turn was saved in
    /// it; not one of the turn's files (it does not make a turn worth keeping).
    pub session: Option<FileRecord>,
    /// Whether `/clear` forgot the conversation the turn was in since: undoing it leaves
    /// the conversation in memory alone.
    pub cleared: bool,
    /// The `[ybs]` commit of the turn and the work tree it is in, with `git.auto_commit`.
    pub commit: Option<(String, PathBuf)>,
    /// Whether it ended (`after` is known); a turn read back after a crash may not have.
    pub finished: bool,
    /// When it ended, in milliseconds since the epoch.
    pub ended_ms: u64,
    /// Where its pre-images are kept on disk.
    pub(super) dir: Option<PathBuf>,
}

impl TurnRecord {
    /// Whether the turn changed any file.
    pub fn changed_files(&self) -> bool {
        self.files.iter().any(|file| file.before != file.after)
    }
}
