//! Before and after a turn: the session file to write (a resumed one, or a new one), the git
//! baseline for `git.auto_commit`, and after the turn what it changed, the save of the
//! session and the commit.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use super::exit::Failed;
use super::host::Host;
use crate::agent::{Agent, TurnReport};
use crate::cli::Cli;
use crate::config::Config;
use crate::project::git::{CommitOutcome, Git, summary_line};
use crate::render::use_color;
use crate::session;
use crate::session::undo::revert::session_changed_elsewhere;

/// After a turn: say what it changed, save the session and auto-commit.
pub fn after_turn(
    agent: &mut Agent,
    report: &TurnReport,
    request: &str,
    config: &Config,
    session_file: Option<&Path>,
    baseline: Option<&crate::project::git::Baseline>,
    log: &mut dyn Write,
) {
    if let Some(turn) = agent.journal.last() {
        let painter = crate::render::style::Painter {
            color: use_color(config.ui.color, io::stderr().is_terminal()),
        };
        for line in
            crate::render::undo_view::summary(turn, &agent.tool_context.working_dir, painter)
        {
            let _ = writeln!(log, "{line}");
        }
    }
    if let Some(path) = session_file {
        // What the session was before this save is what undoing the turn puts back.
        let before = crate::session::undo::FileRecord::now(path);
        if !agent
            .journal
            .session_is_ours(path, before.before.as_deref())
        {
            let warning = session_changed_elsewhere(&agent.journal, path);
            let _ = writeln!(
                log,
                "ybs: warning: {}",
                crate::render::inert_lines(&warning.to_string())
            );
        }
        match session::save(path, &agent.conversation) {
            Ok(()) => agent.journal.saved_session(before),
            Err(error) => {
                let _ = writeln!(
                    log,
                    "ybs: warning: {}",
                    crate::render::inert_lines(&error.to_string())
                );
            }
        }
        if let Some(error) = agent.journal.disk_error.take() {
            let _ = writeln!(
                log,
                "ybs: warning: {}",
                crate::render::inert_lines(&error.to_string())
            );
        }
    }
    let Some(baseline) = baseline else { return };
    if report.changed.is_empty() {
        return;
    }
    let prefix = &config.git.commit_message_prefix;
    match Git::default().commit_turn(baseline, &report.changed, prefix, &summary_line(request)) {
        Ok(CommitOutcome::Committed { id, files }) => {
            let short: String = id.chars().take(8).collect();
            let _ = writeln!(log, "ybs: committed {} file(s) as {short}", files.len());
            agent.journal.set_commit(id, baseline.root.clone());
            if let Some(error) = agent.journal.disk_error.take() {
                let _ = writeln!(
                    log,
                    "ybs: warning: {}",
                    crate::render::inert_lines(&error.to_string())
                );
            }
        }
        Ok(CommitOutcome::Skipped(crate::project::git::Skip::StagedBefore)) => {
            let _ = writeln!(
                log,
                "ybs: not committed: the index had staged changes before the turn"
            );
        }
        Ok(CommitOutcome::Skipped(crate::project::git::Skip::NothingChanged)) => {}
        Err(error) => {
            let _ = writeln!(
                log,
                "ybs: warning: {}",
                crate::render::inert_lines(&error.to_string())
            );
        }
    }
}

/// The work tree state before a turn, when `git.auto_commit` is on.
pub fn git_baseline(
    config: &Config,
    cwd: &Path,
    log: &mut dyn Write,
) -> Option<crate::project::git::Baseline> {
    if !config.git.auto_commit {
        return None;
    }
    match Git::default().baseline(cwd) {
        Ok(baseline) => baseline,
        Err(error) => {
            let _ = writeln!(
                log,
                "ybs: warning: {}",
                crate::render::inert_lines(&error.to_string())
            );
            None
        }
    }
}

/// The session file to write: the resumed one, or a new one for this directory.
pub fn session_file(host: &Host, resume: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = resume {
        return Some(path.to_owned());
    }
    let data = host.data_home.as_ref()?;
    let dir = session::sessions_dir(data, &host.locations.cwd);
    Some(session::new_session_path(&dir))
}

/// Which session `--resume [FILE]` (or `--continue`) names, loaded into `agent`.
pub fn resume(cli: &Cli, host: &Host, agent: &mut Agent) -> Result<Option<PathBuf>, Failed> {
    let Some(choice) = &cli.resume_choice() else {
        return Ok(None);
    };
    let cwd = &host.locations.cwd;
    let path = match choice {
        Some(path) => cwd.join(path),
        None => {
            let data = (host.data_home.as_ref()).ok_or_else(|| {
                Failed("--resume needs HOME or XDG_DATA_HOME to find sessions".into())
            })?;
            session::newest(&session::sessions_dir(data, cwd), cwd)
                .map_err(|err| Failed(err.to_string()))?
        }
    };
    // The same path sandbox as the tools and `ask`'s `file:` lines.
    let access = session::access(agent.tool_context.sandbox.clone());
    agent.conversation =
        session::load(&path, cwd, access).map_err(|err| Failed(err.to_string()))?;
    agent.restore_todos();
    Ok(Some(path))
}

/// `resumed PATH (N messages): first request`, the line that says which session
/// `--resume`/`--continue` loaded; the path and the request are made inert.
pub fn resumed_line(path: &Path, conversation: &[ybs_core::Message]) -> String {
    let first = (conversation.iter())
        .find(|message| message.role == ybs_core::Role::User)
        .map(|message| message.text_content())
        .unwrap_or_default();
    let request = session::list::cut_request(session::list::first_line(&first));
    format!(
        "resumed {} ({} messages): {}",
        crate::render::inert_lines(&path.display().to_string()),
        conversation.len(),
        crate::render::inert_lines(&request)
    )
}
