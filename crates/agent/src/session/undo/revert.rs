//! Undoing the last turn: its files back as they were before it (files it created removed),
//! its `[ybs]` commit dropped when it made one, its messages dropped from the conversation
//! and from the session file it was saved in ([`super::session`]). Refuses when the user
//! committed on top of that commit (that history is theirs); when git fails otherwise, the
//! files are still restored from the journal and the commit is left. Asks first when a file
//! changed since the turn, and then keeps a copy of the user's version.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use ybs_core::{Message, Role};

use super::record::read_now;
use super::session::{SessionPlan, plan};
use super::store::write_atomic;
use super::{Journal, TurnRecord};

/// Why nothing was undone. Nothing on disk changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UndoError {
    /// No turn is left to undo.
    #[error("nothing to undo: no turn of this session changed anything that is still recorded")]
    Nothing,
    /// The turn's commit is not `HEAD` any more.
    #[error(
        "cannot undo: the turn was committed as {commit}, but HEAD is now {head} (commits were \
         made on top of it); revert it with git yourself"
    )]
    CommittedOnTop {
        /// The turn's commit (short).
        commit: String,
        /// `HEAD` now (short).
        head: String,
    },
    /// The user answered no to undoing over their changes.
    #[error("undo cancelled: {0} changed since that turn and was left as it is")]
    Declined(String),
    /// git failed.
    #[error("cannot undo: git {command} failed: {stderr}")]
    Git {
        /// The command.
        command: String,
        /// What git said.
        stderr: String,
    },
    /// A file could not be put back.
    #[error("cannot undo: {0}")]
    Io(String),
}

/// What an undo did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UndoOutcome {
    /// Files put back as they were.
    pub restored: Vec<PathBuf>,
    /// Files the turn had created, removed.
    pub removed: Vec<PathBuf>,
    /// Copies kept of files the user had changed since the turn: (file, copy).
    pub kept: Vec<(PathBuf, PathBuf)>,
    /// Files undo could not put back, and why (no copy was kept of them: too large, not a
    /// regular file).
    pub unrestorable: Vec<(PathBuf, String)>,
    /// The `[ybs]` commit dropped, if any.
    pub uncommitted: Option<String>,
    /// Whether that commit was the repository's first (its branch was deleted, as before
    /// the first commit).
    pub uncommitted_first: bool,
    /// The `[ybs]` commit git did not let undo drop, and why; the files were restored all
    /// the same.
    pub commit_left: Option<(String, String)>,
    /// Whether the turn ran shell commands (not undone).
    pub ran_shell: bool,
    /// Whether the turn's messages were dropped from the conversation.
    pub dropped_messages: bool,
    /// Whether the turn was in a conversation `/clear` forgot since.
    pub cleared: bool,
    /// Whether the turn started the session file of the conversation it is in (which
    /// [`undo_last`] leaves to its caller).
    pub started_session: bool,
    /// What became of the session file the turn was saved in.
    pub session: Option<SessionChange>,
}

/// What undo did to the session file of the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionChange {
    /// Put back as it was before the turn.
    Restored(PathBuf),
    /// Removed: the turn started the session.
    Removed(PathBuf),
    /// Only the turn's messages dropped; the `later` turns saved after it stay, and the
    /// session as it was is kept in `copy`.
    Dropped {
        /// The session file.
        path: PathBuf,
        /// Turns saved after the undone one.
        later: usize,
        /// The copy of the session as it was.
        copy: Option<PathBuf>,
    },
    /// Left as it is, for `reason`: a `--resume` of it still holds the turn.
    Left {
        /// The session file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// Undoes the last turn of `journal` and drops its messages from `conversation`. `confirm`
/// is asked, with the files' names, whether to go on over changes made since the turn.
pub fn undo_last(
    journal: &mut Journal,
    conversation: &mut Vec<Message>,
    confirm: &mut dyn FnMut(&str) -> bool,
) -> Result<UndoOutcome, UndoError> {
    journal.finish_open_turn();
    let mut turn = journal.last().cloned().ok_or(UndoError::Nothing)?;
    // The session of a turn still in the conversation is saved again from it by the caller;
    // only the session of a turn `/clear` forgot is undone here.
    let session = if turn.cleared {
        None
    } else {
        turn.session.take()
    };
    let mut outcome = revert_turn(&turn, journal.kept_dir().as_deref(), confirm)?;
    outcome.started_session = session.is_some_and(|session| session.before.is_none());
    outcome.dropped_messages = drop_messages(conversation, &turn);
    outcome.cleared = turn.cleared;
    journal.pop();
    Ok(outcome)
}

/// Puts the files of `turn` back as they were before it and drops its commit. Copies of the
/// user's versions go to `kept` (next to the files when `None`).
pub fn revert_turn(
    turn: &TurnRecord,
    kept: Option<&Path>,
    confirm: &mut dyn FnMut(&str) -> bool,
) -> Result<UndoOutcome, UndoError> {
    // Commits made on top of the turn's are the user's history: undo does not rewrite it.
    // Any other trouble with git leaves the commit, but the files are still restored from
    // the journal, which needs no git.
    let mut commit_left = None;
    let first_commit = match &turn.commit {
        Some((commit, root)) => match check_head(root, commit) {
            Ok(first) => Some(first),
            Err(refusal @ UndoError::CommittedOnTop { .. }) => return Err(refusal),
            Err(trouble) => {
                commit_left = Some((short(commit), git_trouble(trouble)));
                None
            }
        },
        None => None,
    };
    // A turn that never ended (ybs was killed) has no known end state: any file that is not
    // as it was before counts as changed since.
    // A file that is reached through a link now, or is no longer a regular file, stops the
    // undo before anything changed: undo never follows a link the model planted.
    let mut changed_since: Vec<&Path> = Vec::new();
    for file in turn.files.iter().filter(|file| file.unrestorable.is_none()) {
        let now = read_now(&file.path)
            .map_err(|error| UndoError::Io(format!("{error}; nothing was changed")))?;
        let changed = if turn.finished {
            now != file.after
        } else {
            now != file.before
        };
        if changed {
            changed_since.push(&file.path);
        }
    }
    let mut outcome = UndoOutcome {
        ran_shell: turn.ran_shell,
        commit_left,
        ..UndoOutcome::default()
    };
    let session = (turn.session.as_ref()).map(|record| {
        (
            record,
            plan(record, std::fs::read(&record.path).ok().as_deref()),
        )
    });
    if !changed_since.is_empty() {
        let names: Vec<String> = changed_since
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let names = names.join(", ");
        if !confirm(&names) {
            return Err(UndoError::Declined(names));
        }
        for path in changed_since {
            if let Some(copy) = keep_copy(kept, path)? {
                outcome.kept.push((path.to_path_buf(), copy));
            }
        }
    }
    if let (Some((commit, root)), Some(first_commit)) = (&turn.commit, first_commit) {
        match drop_commit(root, commit, first_commit, turn) {
            Ok(()) => {
                outcome.uncommitted = Some(short(commit));
                outcome.uncommitted_first = first_commit;
            }
            Err(trouble) => outcome.commit_left = Some((short(commit), git_trouble(trouble))),
        }
    }
    for file in turn.files.iter().rev() {
        match &file.unrestorable {
            Some(why) => (outcome.unrestorable).push((file.path.clone(), why.clone())),
            None => restore(file, &mut outcome)?,
        }
    }
    if let Some((record, plan)) = session {
        outcome.session = rewrite_session(&record.path, plan, kept)?;
    }
    Ok(outcome)
}

/// Carries out `plan` on the session file `path`; the session as it was is kept in a copy
/// when later turns stay in it.
fn rewrite_session(
    path: &Path,
    plan: SessionPlan,
    kept: Option<&Path>,
) -> Result<Option<SessionChange>, UndoError> {
    let change = match plan {
        SessionPlan::Unchanged => return Ok(None),
        SessionPlan::Leave(reason) => SessionChange::Left {
            path: path.to_path_buf(),
            reason,
        },
        SessionPlan::Rewrite { bytes: None, .. } => match std::fs::remove_file(path) {
            Ok(()) => SessionChange::Removed(path.to_path_buf()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                return Err(UndoError::Io(format!(
                    "cannot remove the session {}: {error}",
                    path.display()
                )));
            }
        },
        SessionPlan::Rewrite {
            bytes: Some(bytes),
            later,
        } => {
            let copy = if later > 0 {
                keep_copy(kept, path)?
            } else {
                None
            };
            // Sessions are private to the user; keep whatever mode the file has now.
            let mode =
                std::fs::metadata(path).map_or(0o600, |meta| meta.permissions().mode() & 0o7777);
            write_atomic(path, &bytes, mode).map_err(|error| {
                UndoError::Io(format!(
                    "cannot rewrite the session {}: {error}",
                    path.display()
                ))
            })?;
            if later > 0 {
                SessionChange::Dropped {
                    path: path.to_path_buf(),
                    later,
                    copy,
                }
            } else {
                SessionChange::Restored(path.to_path_buf())
            }
        }
    };
    Ok(Some(change))
}

/// Puts one file back.
fn restore(file: &super::FileRecord, outcome: &mut UndoOutcome) -> Result<(), UndoError> {
    let path = &file.path;
    // Walked from `/` without following a link: a directory swapped for a link since the
    // turn is refused, a link at the file itself is replaced or removed, not followed.
    match &file.before {
        None => match ybs_fsguard::physical::remove_file(path) {
            Ok(true) => outcome.removed.push(path.clone()),
            Ok(false) => {}
            Err(error) => return Err(UndoError::Io(format!("cannot remove: {error}"))),
        },
        Some(bytes) => {
            ybs_fsguard::physical::write_atomic(path, bytes, file.mode.unwrap_or(0o644))
                .map_err(|error| UndoError::Io(format!("cannot restore: {error}")))?;
            outcome.restored.push(path.clone());
        }
    }
    Ok(())
}

/// Keeps the user's current version of `path` in `dir` (next to it when `None`) before it is
/// overwritten; returns the copy, `None` when `path` does not exist.
pub fn keep_copy(dir: Option<&Path>, path: &Path) -> Result<Option<PathBuf>, UndoError> {
    // A session file's path may run through the user's own links (a linked data directory);
    // a project file's path is physical already, and undo checked it has no link since.
    let physical = super::record::physical(path);
    let Ok(Some(bytes)) = read_now(&physical) else {
        return Ok(None);
    };
    let name = path.file_name().map_or_else(
        || "file".to_owned(),
        |name| name.to_string_lossy().into_owned(),
    );
    let stamp = super::store::now_ms();
    let failed = |error: std::io::Error| {
        UndoError::Io(format!("cannot keep a copy of {}: {error}", path.display()))
    };
    let copy = match dir {
        Some(dir) => {
            super::store::create_private_dir(dir).map_err(failed)?;
            let copy = dir.join(format!("{stamp}-{name}"));
            super::store::write_private(&copy, &bytes).map_err(failed)?;
            copy
        }
        None => {
            let copy = path.with_file_name(format!("{name}.before-undo-{stamp}"));
            ybs_fsguard::physical::write_atomic(&copy, &bytes, 0o644).map_err(|error| {
                UndoError::Io(format!("cannot keep a copy of {}: {error}", path.display()))
            })?;
            copy
        }
    };
    Ok(Some(copy))
}

/// The session file changed since this run last saved it (`ybs undo` from another terminal,
/// an editor): keeps that version in a copy before a save replaces it; returns the warning.
pub fn session_changed_elsewhere(journal: &Journal, path: &Path) -> String {
    let kept = journal.kept_dir();
    let copy = match keep_copy(kept.as_deref(), path) {
        Ok(Some(copy)) => format!("that version is kept in {}", copy.display()),
        Ok(None) => "it was removed".to_owned(),
        Err(error) => format!("no copy of it could be kept: {error}"),
    };
    format!(
        "the session {} changed since this session saved it (`ybs undo` or an edit \
         elsewhere?); it is saved again from this session's conversation, which still holds \
         any turn undone there; {copy}",
        path.display()
    )
}

/// Drops the turn's messages when the conversation still starts the turn where it did (not
/// after a compaction moved or summarized it, nor after `/clear` forgot it).
fn drop_messages(conversation: &mut Vec<Message>, turn: &TurnRecord) -> bool {
    if turn.cleared {
        return false;
    }
    match conversation.get(turn.start) {
        Some(message) if message.role == Role::User && message.text_content() == turn.request => {
            conversation.truncate(turn.start);
            true
        }
        _ => false,
    }
}

/// Checks that the turn's commit is still `HEAD`; returns whether it is the repository's
/// first (a fresh `git init`'s first turn), which has no parent to go back to.
fn check_head(root: &Path, commit: &str) -> Result<bool, UndoError> {
    let head = git(root, &["rev-parse", "HEAD"])?;
    if head.trim() != commit {
        return Err(UndoError::CommittedOnTop {
            commit: short(commit),
            head: short(head.trim()),
        });
    }
    let has_parent = git(
        root,
        &["rev-parse", "--verify", "--quiet", &format!("{commit}^")],
    )
    .is_ok();
    Ok(!has_parent)
}

/// Moves `HEAD` back to the commit's parent and unstages the turn's files; the work tree is
/// left alone (the files are restored from their pre-images next). The repository's first
/// commit has no parent: its branch is deleted instead, which leaves the repository as
/// `git init` made it (with whatever the user staged since still staged).
fn drop_commit(
    root: &Path,
    commit: &str,
    first_commit: bool,
    turn: &TurnRecord,
) -> Result<(), UndoError> {
    if first_commit {
        // The old value makes git refuse if HEAD moved since it was checked.
        git(root, &["update-ref", "-d", "HEAD", commit])?;
    } else {
        git(root, &["reset", "--quiet", "--soft", &format!("{commit}^")])?;
    }
    let canonical = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut args = vec!["reset".to_owned(), "--quiet".to_owned(), "--".to_owned()];
    args.extend(turn.files.iter().filter_map(|file| {
        let relative = (file.path.strip_prefix(root))
            .or_else(|_| file.path.strip_prefix(&canonical))
            .ok()?;
        Some(relative.to_string_lossy().into_owned())
    }));
    if args.len() > 3 {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        git(root, &args)?;
    }
    Ok(())
}

fn git(root: &Path, args: &[&str]) -> Result<String, UndoError> {
    let output = crate::project::safe_git::git_command(root)
        .and_then(|mut command| command.args(args).output())
        .map_err(|error| UndoError::Git {
            command: args.join(" "),
            stderr: error.to_string(),
        })?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(UndoError::Git {
            command: args.join(" "),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        })
    }
}

/// What went wrong with git, without the "cannot undo" of a refusal (the undo went on).
fn git_trouble(error: UndoError) -> String {
    match error {
        UndoError::Git { command, stderr } => format!("git {command} failed: {stderr}"),
        other => other.to_string(),
    }
}

fn short(id: &str) -> String {
    id.chars().take(8).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::fs;

    use super::*;

    fn conversation() -> Vec<Message> {
        vec![
            Message::user("first"),
            Message::assistant("ok"),
            Message::user("second"),
            Message::assistant("done"),
        ]
    }

    #[test]
    fn undo_restores_edits_removes_created_files_and_drops_the_turn() {
        let dir = tempfile::tempdir().unwrap();
        let (edited, created) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
        fs::write(&edited, "before").unwrap();
        fs::set_permissions(&edited, fs::Permissions::from_mode(0o600)).unwrap();
        let mut journal =
            Journal::persistent(dir.path().join("state"), super::super::RunInfo::default());
        journal.begin_turn(2, "second");
        journal.before_write(&edited);
        journal.before_write(&created);
        fs::write(&edited, "after").unwrap();
        fs::write(&created, "new").unwrap();
        journal.ran_shell();
        journal.end_turn();
        let mut messages = conversation();
        let outcome =
            undo_last(&mut journal, &mut messages, &mut |_| panic!("no question")).unwrap();
        assert_eq!(fs::read_to_string(&edited).unwrap(), "before");
        assert_eq!(
            fs::metadata(&edited).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert!(!created.exists());
        assert_eq!(outcome.removed, [created]);
        assert!(outcome.ran_shell && outcome.dropped_messages);
        assert_eq!(messages.len(), 2);
        assert_eq!(
            undo_last(&mut journal, &mut messages, &mut |_| true),
            Err(UndoError::Nothing)
        );
        // A turn that failed half-way (never ended) is undone too.
        let file = dir.path().join("c.txt");
        messages.push(Message::user("third"));
        journal.begin_turn(2, "third");
        journal.before_write(&file);
        fs::write(&file, "half").unwrap();
        let outcome = undo_last(&mut journal, &mut messages, &mut |_| true).unwrap();
        assert_eq!(outcome.removed, vec![file]);
        assert_eq!(messages.len(), 2);
        // A turn whose message was compacted away leaves the conversation alone.
        journal.begin_turn(0, "summarized since");
        journal.end_turn();
        let outcome = undo_last(&mut journal, &mut messages, &mut |_| true).unwrap();
        assert!(!outcome.dropped_messages);
        assert_eq!(messages.len(), 2);
    }

    #[test]
    fn after_clear_the_files_are_still_undone_and_the_new_conversation_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        let mut journal =
            Journal::persistent(dir.path().join("state"), super::super::RunInfo::default());
        journal.begin_turn(0, "first");
        journal.before_write(&file);
        fs::write(&file, "made").unwrap();
        journal.end_turn();
        journal.clear();
        assert!(dir.path().join("state/turn-0001/turn.json").exists());
        // The new conversation happens to start with the same request.
        let mut messages = vec![Message::user("first"), Message::assistant("again")];
        let outcome = undo_last(&mut journal, &mut messages, &mut |_| true).unwrap();
        assert_eq!(outcome.removed, [file]);
        assert!(outcome.cleared && !outcome.dropped_messages);
        assert_eq!(messages.len(), 2);
        assert!(!dir.path().join("state/turn-0001").exists());
    }

    #[test]
    fn changes_made_since_the_turn_are_asked_about_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        fs::write(&file, "before").unwrap();
        let mut journal =
            Journal::persistent(dir.path().join("state"), super::super::RunInfo::default());
        journal.begin_turn(2, "second");
        journal.before_write(&file);
        fs::write(&file, "after").unwrap();
        journal.end_turn();
        fs::write(&file, "mine").unwrap();
        let mut messages = conversation();
        let refused = undo_last(&mut journal, &mut messages, &mut |names| {
            assert!(names.ends_with("a.txt"));
            false
        });
        assert!(matches!(refused, Err(UndoError::Declined(_))));
        assert_eq!(fs::read_to_string(&file).unwrap(), "mine");
        assert_eq!(messages.len(), 4);
        let outcome = undo_last(&mut journal, &mut messages, &mut |_| true).unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "before");
        assert_eq!(fs::read_to_string(&outcome.kept[0].1).unwrap(), "mine");
    }
}
