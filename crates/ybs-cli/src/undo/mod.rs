//! Undo: the pre-image of every file a tool writes, kept per turn, and `/undo` putting the
//! files of the last turn back as they were. The pre-images are kept in memory and, when
//! the session has a state directory, written under it before the tool runs, so a crash in
//! the middle of a turn loses nothing. With `git.auto_commit`, the turn's `[ybs]` commit is
//! dropped too ([`revert`]).

pub mod revert;

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
    /// The `[ybs]` commit of the turn and the work tree it is in, with `git.auto_commit`.
    pub commit: Option<(String, PathBuf)>,
    /// Where its pre-images are kept on disk.
    dir: Option<PathBuf>,
}

impl TurnRecord {
    /// Whether the turn changed any file.
    pub fn changed_files(&self) -> bool {
        self.files.iter().any(|file| file.before != file.after)
    }
}

/// The undo journal of a session. Its pre-images on disk last as long as it does: dropping
/// it removes them (copies of the user's versions kept by an undo stay).
#[derive(Debug, Default)]
pub struct Journal {
    /// The session's directory under ybs's state directory, if it has one.
    dir: Option<PathBuf>,
    /// Finished turns, oldest first.
    turns: Vec<TurnRecord>,
    /// The turn in progress.
    current: Option<TurnRecord>,
    /// How many turns were started (names the directories).
    started: usize,
    /// The last failure to keep a pre-image on disk (the memory copy is still there).
    pub disk_error: Option<String>,
}

impl Journal {
    /// A journal that writes pre-images under `dir` as well as keeping them in memory.
    pub fn persistent(dir: PathBuf) -> Self {
        let mut journal = Journal::default();
        journal.dir = Some(dir);
        journal
    }

    /// The session's state directory, if any.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// A turn starts; its user message, `request`, is at `start` in the conversation.
    pub fn begin_turn(&mut self, start: usize, request: &str) {
        self.finish_open_turn();
        self.started += 1;
        let dir = (self.dir.as_ref()).map(|dir| dir.join(format!("turn-{:04}", self.started)));
        self.current = Some(TurnRecord {
            start,
            request: request.to_owned(),
            files: Vec::new(),
            ran_shell: false,
            commit: None,
            dir,
        });
    }

    /// A tool is about to write `path`: keeps its content unless this turn already did.
    pub fn before_write(&mut self, path: &Path) {
        let Some(turn) = self.current.as_mut() else {
            return;
        };
        if turn.files.iter().any(|file| file.path == path) {
            return;
        }
        let before = std::fs::read(path).ok();
        let mode = (std::fs::metadata(path).ok()).map(|meta| meta.permissions().mode() & 0o7777);
        if let (Some(dir), Some(bytes)) = (&turn.dir, &before) {
            let index = turn.files.len();
            let saved = std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(dir.join(format!("{index}.before")), bytes))
                .and_then(|()| {
                    std::fs::write(
                        dir.join(format!("{index}.path")),
                        path.as_os_str().as_encoded_bytes(),
                    )
                });
            if let Err(error) = saved {
                self.disk_error = Some(format!(
                    "cannot keep the undo copy of {} in {}: {error}",
                    path.display(),
                    dir.display()
                ));
            }
        }
        turn.files.push(FileRecord {
            path: path.to_path_buf(),
            before,
            mode,
            after: None,
        });
    }

    /// The turn in progress ran a shell command.
    pub fn ran_shell(&mut self) {
        if let Some(turn) = self.current.as_mut() {
            turn.ran_shell = true;
        }
    }

    /// The turn ended: records what its files are now and files it away.
    pub fn end_turn(&mut self) -> Option<&TurnRecord> {
        let mut turn = self.current.take()?;
        for file in &mut turn.files {
            file.after = std::fs::read(&file.path).ok();
        }
        self.turns.push(turn);
        self.turns.last()
    }

    /// Files away a turn that never ended (it failed half-way): its writes are undoable too.
    pub fn finish_open_turn(&mut self) {
        if self.current.is_some() {
            self.end_turn();
        }
    }

    /// The last finished turn.
    pub fn last(&self) -> Option<&TurnRecord> {
        self.turns.last()
    }

    /// Records the last turn's `[ybs]` commit in the work tree at `root`.
    pub fn set_commit(&mut self, id: String, root: PathBuf) {
        if let Some(turn) = self.turns.last_mut() {
            turn.commit = Some((id, root));
        }
    }

    /// Removes the last finished turn (after it was undone) and its files on disk.
    pub fn pop(&mut self) -> Option<TurnRecord> {
        let turn = self.turns.pop()?;
        if let Some(dir) = &turn.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
        Some(turn)
    }

    /// Forgets every turn (`/clear`); the files stay as they are.
    pub fn clear(&mut self) {
        while self.pop().is_some() {}
        self.current = None;
    }

    /// Every finished turn, oldest first.
    pub fn turns(&self) -> &[TurnRecord] {
        &self.turns
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        self.clear();
        if let Some(dir) = &self.dir {
            // Only when empty: a `kept/` directory of the user's versions stays.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The directory of a new session's undo journal under ybs's state directory.
pub fn session_dir(data_home: &Path) -> PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis());
    data_home
        .join("ybs")
        .join("undo")
        .join(format!("{stamp}-{}", std::process::id()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_first_write_of_a_turn_keeps_the_pre_image_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "one").unwrap();
        let state = dir.path().join("state");
        let mut journal = Journal::persistent(state.clone());
        journal.begin_turn(0, "a");
        journal.before_write(&file);
        std::fs::write(&file, "two").unwrap();
        journal.before_write(&file);
        std::fs::write(&file, "three").unwrap();
        journal.before_write(&dir.path().join("new.txt"));
        let turn = journal.end_turn().unwrap().clone();
        assert_eq!(turn.files.len(), 2);
        assert_eq!(turn.files[0].before.as_deref(), Some(&b"one"[..]));
        assert_eq!(turn.files[0].after.as_deref(), Some(&b"three"[..]));
        assert_eq!(turn.files[1].before, None);
        assert_eq!(
            std::fs::read(state.join("turn-0001/0.before")).unwrap(),
            b"one"
        );
        assert!(journal.disk_error.is_none());
        journal.pop();
        assert!(!state.join("turn-0001").exists());
        journal.begin_turn(2, "b");
        journal.before_write(&file);
        journal.end_turn();
        assert!(state.join("turn-0002/0.before").exists());
        drop(journal);
        assert!(!state.exists());
    }
}
