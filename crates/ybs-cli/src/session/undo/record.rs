//! What a turn did, as undo keeps it: each file it wrote with its content before and after,
//! whether it ran shell commands, its session file and its commit.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

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
}

impl FileRecord {
    /// The file `path` as it is now, before a write.
    pub fn now(path: &Path) -> FileRecord {
        FileRecord {
            path: path.to_path_buf(),
            before: std::fs::read(path).ok(),
            mode: (std::fs::metadata(path).ok()).map(|meta| meta.permissions().mode() & 0o7777),
            after: None,
        }
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
