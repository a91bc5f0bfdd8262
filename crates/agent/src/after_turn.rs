//! Before and after a turn, whatever the front end: the git baseline for `git.auto_commit`
//! before it, and after it the save of the session and the commit. What happened is
//! returned as [`AfterTurn`] notes, for the front end to show as it shows things.

use std::path::Path;

use crate::config::Config;
use crate::project::git::{Baseline, CommitOutcome, Git, GitError, Skip, summary_line};
use crate::session::undo::FileRecord;
use crate::session::undo::revert::session_changed_elsewhere;
use crate::{Agent, TurnReport, session};

/// What saving and committing a turn did, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterTurn {
    /// Something went wrong or looks wrong; the turn's work is kept.
    Warning(String),
    /// The turn's files were committed as `id`.
    Committed {
        /// The commit's id.
        id: String,
        /// How many files it holds.
        files: usize,
    },
    /// Not committed: the index had staged changes before the turn.
    StagedBefore,
}

/// The work tree state before a turn, when `git.auto_commit` is on; `Err` is a warning.
pub fn git_baseline(config: &Config, cwd: &Path) -> Result<Option<Baseline>, GitError> {
    if !config.git.auto_commit {
        return Ok(None);
    }
    Git::default().baseline(cwd)
}

/// After a turn: saves the session to `session_file` and, with a `baseline`, commits the
/// files the turn changed; `request` is the user's message (the commit's summary).
pub fn after_turn(
    agent: &mut Agent,
    report: &TurnReport,
    request: &str,
    config: &Config,
    session_file: Option<&Path>,
    baseline: Option<&Baseline>,
) -> Vec<AfterTurn> {
    let mut notes = Vec::new();
    if let Some(path) = session_file {
        // What the session was before this save is what undoing the turn puts back.
        let before = FileRecord::now(path);
        if !agent
            .journal
            .session_is_ours(path, before.before.as_deref())
        {
            let warning = session_changed_elsewhere(&agent.journal, path);
            notes.push(AfterTurn::Warning(warning.to_string()));
        }
        match session::save(path, &agent.conversation) {
            Ok(()) => agent.journal.saved_session(before),
            Err(error) => notes.push(AfterTurn::Warning(error.to_string())),
        }
        if let Some(error) = agent.journal.disk_error.take() {
            notes.push(AfterTurn::Warning(error.to_string()));
        }
    }
    let Some(baseline) = baseline else {
        return notes;
    };
    if report.changed.is_empty() {
        return notes;
    }
    let prefix = &config.git.commit_message_prefix;
    match Git::default().commit_turn(baseline, &report.changed, prefix, &summary_line(request)) {
        Ok(CommitOutcome::Committed { id, files }) => {
            notes.push(AfterTurn::Committed {
                id: id.clone(),
                files: files.len(),
            });
            agent.journal.set_commit(id, baseline.root.clone());
            if let Some(error) = agent.journal.disk_error.take() {
                notes.push(AfterTurn::Warning(error.to_string()));
            }
        }
        Ok(CommitOutcome::Skipped(Skip::StagedBefore)) => notes.push(AfterTurn::StagedBefore),
        Ok(CommitOutcome::Skipped(Skip::NothingChanged)) => {}
        Err(error) => notes.push(AfterTurn::Warning(error.to_string())),
    }
    notes
}
