//! Undo: the pre-image of every file a tool writes, kept per turn, and `/undo` putting the
//! files of the last turn back as they were. The pre-images are kept in memory and, when
//! the session has a state directory, written under it before the tool runs, so a crash in
//! the middle of a turn loses nothing; they stay there after the session ([`store`]) so
//! that `ybs undo` can take back an `exec`, `ask` or REPL run later. With
//! `git.auto_commit`, the turn's `[ybs]` commit is dropped too ([`revert`]), and the turn is
//! taken out of the session file it was saved in ([`session`]). How a turn's changes and an
//! undo are shown is the front end's affair.

mod record;
pub mod revert;
pub mod session;
pub mod store;

use std::path::{Path, PathBuf};

pub use record::{FileRecord, TurnRecord};
use store::Images;
pub use store::RunInfo;

/// The undo journal of a session. Its turns on disk outlive it, for `ybs undo`; an undo
/// removes the turn it took back.
#[derive(Debug, Default)]
pub struct Journal {
    /// The run's directory under ybs's state directory, if it has one.
    dir: Option<PathBuf>,
    /// What the run is, written with each turn.
    info: RunInfo,
    /// Finished turns, oldest first.
    turns: Vec<TurnRecord>,
    /// The turn in progress.
    current: Option<TurnRecord>,
    /// Files written before the next turn starts that belong to it (`ask`'s chat file).
    pending: Vec<FileRecord>,
    /// How many turns were started (names the directories).
    started: usize,
    /// The last failure to keep a pre-image on disk (the memory copy is still there).
    pub disk_error: Option<String>,
    /// The session file this run last wrote and what it wrote in it.
    last_session: Option<(PathBuf, Option<Vec<u8>>)>,
}

impl Journal {
    /// A journal that writes its turns under the run directory `dir` as well as keeping them
    /// in memory.
    pub fn persistent(dir: PathBuf, info: RunInfo) -> Self {
        let mut journal = Journal::default();
        journal.dir = Some(dir);
        journal.info = info;
        journal
    }

    /// Where undo keeps copies of the user's versions, if the journal is on disk.
    pub fn kept_dir(&self) -> Option<PathBuf> {
        self.dir.as_deref().map(store::kept_dir)
    }

    /// A turn starts; its user message, `request`, is at `start` in the conversation.
    pub fn begin_turn(&mut self, start: usize, request: &str) {
        self.finish_open_turn();
        self.started += 1;
        let dir = (self.dir.as_ref()).map(|dir| dir.join(format!("turn-{:04}", self.started)));
        let turn = TurnRecord {
            start,
            request: request.to_owned(),
            files: std::mem::take(&mut self.pending),
            ran_shell: false,
            session: None,
            cleared: false,
            commit: None,
            finished: false,
            ended_ms: 0,
            dir,
        };
        if !turn.files.is_empty() {
            self.save(&turn, Images::All);
        }
        self.current = Some(turn);
    }

    /// `file` (taken before it was written, outside any tool) belongs to the next turn.
    pub fn before_next_turn(&mut self, file: FileRecord) {
        self.pending.push(file);
    }

    /// A tool is about to write `path`: keeps its content unless this turn already did.
    pub fn before_write(&mut self, path: &Path) {
        let Some(mut turn) = self.current.take() else {
            return;
        };
        if !turn.files.iter().any(|file| file.path == path) {
            turn.files.push(FileRecord::now(path));
            self.save(&turn, Images::All);
        }
        self.current = Some(turn);
    }

    /// The turn in progress ran a shell command.
    pub fn ran_shell(&mut self) {
        if let Some(mut turn) = self.current.take() {
            if !turn.ran_shell {
                turn.ran_shell = true;
                self.save(&turn, Images::None);
            }
            self.current = Some(turn);
        }
    }

    /// The turn ended: records what its files are now and files it away.
    pub fn end_turn(&mut self) -> Option<&TurnRecord> {
        let mut turn = self.current.take()?;
        for file in &mut turn.files {
            file.after = record::read_now(&file.path).ok().flatten();
        }
        turn.finished = true;
        turn.ended_ms = store::now_ms();
        self.save(&turn, Images::All);
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
        if let Some(mut turn) = self.turns.pop() {
            turn.commit = Some((id, root));
            self.save(&turn, Images::None);
            self.turns.push(turn);
        }
    }

    /// The last turn's files were written again after it ended (`ask` appends the reply to
    /// its chat file): records what they are now.
    pub fn refresh_last(&mut self) {
        if let Some(mut turn) = self.turns.pop() {
            for file in &mut turn.files {
                file.after = record::read_now(&file.path).ok().flatten();
            }
            self.save(&turn, Images::All);
            self.turns.push(turn);
        }
    }

    /// The last turn was saved in its session file: `before` is that file as it was just
    /// before the save; what it is now is recorded as its state after the turn.
    pub fn saved_session(&mut self, mut before: FileRecord) {
        let after = std::fs::read(&before.path).ok();
        self.last_session = Some((before.path.clone(), after.clone()));
        if let Some(mut turn) = self.turns.pop() {
            before.after = after;
            turn.session = Some(before);
            self.save(&turn, Images::Session);
            self.turns.push(turn);
        }
    }

    /// This run wrote its session file `path` (after every turn, and again after `/undo`).
    pub fn wrote_session(&mut self, path: &Path) {
        self.last_session = Some((path.to_path_buf(), std::fs::read(path).ok()));
    }

    /// Whether the session file `path`, `now` on disk, is what this run last wrote in it
    /// (`true` before its first write): not when `ybs undo` or an editor changed it since.
    pub fn session_is_ours(&self, path: &Path, now: Option<&[u8]>) -> bool {
        match &self.last_session {
            Some((written, bytes)) if written == path => bytes.as_deref() == now,
            _ => true,
        }
    }

    /// Writes `turn` to disk; a failure is kept for the user to see.
    fn save(&mut self, turn: &TurnRecord, images: Images) {
        if let Err(error) = store::save_turn(turn, &self.info, images) {
            let dir = turn.dir.as_deref().unwrap_or(Path::new("?"));
            self.disk_error = Some(format!(
                "cannot keep the undo record of this turn in {}: {error}",
                dir.display()
            ));
        }
    }

    /// Removes the last finished turn (after it was undone) and its files on disk.
    pub fn pop(&mut self) -> Option<TurnRecord> {
        let turn = self.turns.pop()?;
        if let Some(dir) = &turn.dir {
            store::remove_turn(dir);
        }
        Some(turn)
    }

    /// `/clear` forgot the conversation: the turns stay undoable (their files, commits and
    /// session files), but their messages are no longer in the conversation.
    pub fn clear(&mut self) {
        self.finish_open_turn();
        for turn in &mut self.turns {
            turn.cleared = true;
        }
    }

    /// Every finished turn, oldest first.
    pub fn turns(&self) -> &[TurnRecord] {
        &self.turns
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        // A turn cut short by an error is kept as far as it went, for `ybs undo`.
        self.finish_open_turn();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    use super::store::{KEEP_RUNS, load, new_run_dir, remove_turn};
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_first_write_of_a_turn_keeps_the_pre_image_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "one").unwrap();
        let state = dir.path().join("state");
        let mut journal = Journal::persistent(state.clone(), RunInfo::default());
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
        std::fs::write(&file, "four").unwrap();
        journal.end_turn();
        assert!(state.join("turn-0002/0.before").exists());
        // A turn whose write changed nothing is not kept on disk.
        journal.begin_turn(4, "c");
        journal.before_write(&file);
        assert!(state.join("turn-0003/turn.json").exists());
        journal.end_turn();
        assert!(!state.join("turn-0003").exists());
        drop(journal);
        // What was not undone stays for `ybs undo`.
        assert!(state.join("turn-0002/turn.json").exists());
    }

    #[test]
    fn a_finished_turn_is_read_back_as_it_was_recorded_and_privately() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        fs::write(&file, "one").unwrap();
        let project = dir.path().join("data/ybs/undo/p");
        let info = RunInfo {
            command: "exec".into(),
        };
        let mut journal = Journal::persistent(new_run_dir(&project), info);
        journal.begin_turn(0, "change it");
        journal.before_write(&file);
        fs::write(&file, "two").unwrap();
        journal.before_write(&dir.path().join("new.txt"));
        journal.ran_shell();
        journal.end_turn();
        let session = dir.path().join("s.chat");
        fs::write(&session, "user:\n\nbefore\n").unwrap();
        let before = FileRecord::now(&session);
        fs::write(&session, "user:\n\nbefore\n\nuser:\n\nchange it\n").unwrap();
        journal.saved_session(before);
        let recorded = journal.last().unwrap().clone();
        assert!(recorded.session.is_some());
        drop(journal);
        let turns = load(&project).unwrap();
        assert_eq!(turns.len(), 1);
        assert_eq!(turns[0].command(), "exec");
        assert!(turns[0].ran_shell());
        let read = turns[0].record().unwrap();
        assert_eq!(read, recorded);
        assert_eq!(read.files[0].before.as_deref(), Some(&b"one"[..]));
        assert_eq!(read.files[0].after.as_deref(), Some(&b"two"[..]));
        assert_eq!(mode(&turns[0].dir), 0o700);
        assert_eq!(mode(turns[0].dir.parent().unwrap()), 0o700);
        for name in [
            "turn.json",
            "0.before",
            "0.after",
            "session.before",
            "session.after",
        ] {
            assert_eq!(mode(&turns[0].dir.join(name)), 0o600, "{name}");
        }
        remove_turn(&turns[0].dir);
        assert!(load(&project).unwrap().is_empty());
        assert!(fs::read_dir(&project).unwrap().next().is_none());
    }

    #[test]
    fn a_turn_that_changed_nothing_leaves_nothing_and_old_runs_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        let mut journal =
            Journal::persistent(project.join("000000000000001-1"), RunInfo::default());
        journal.begin_turn(0, "just talk");
        journal.end_turn();
        drop(journal);
        assert!(!project.exists());
        fs::create_dir_all(project.join("kept")).unwrap();
        for run in 0..KEEP_RUNS + 3 {
            let mut journal =
                Journal::persistent(project.join(format!("{run:015}-1")), RunInfo::default());
            journal.begin_turn(0, &format!("run {run}"));
            journal.ran_shell();
            journal.end_turn();
        }
        let turns = load(&project).unwrap();
        assert_eq!(turns.len(), KEEP_RUNS);
        assert_eq!(turns[0].request(), "run 3");
        assert!(project.join("kept").is_dir());
        // A long session's run, older than the others, is not pruned by its own next turn.
        let mut journal =
            Journal::persistent(project.join("000000000000000-9"), RunInfo::default());
        journal.begin_turn(0, "long session");
        journal.ran_shell();
        journal.end_turn();
        let turns = load(&project).unwrap();
        assert_eq!(turns.len(), KEEP_RUNS);
        assert_eq!(turns[0].request(), "run 4");
        assert_eq!(turns[KEEP_RUNS - 1].request(), "long session");
    }
}
