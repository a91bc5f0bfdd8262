//! `/undo` and `/diff` at the REPL: the last turn's changes shown whole, or taken back with
//! its messages, the session file saved again without them.

use std::io::{self, IsTerminal, Write};
use std::path::Path;

use super::slash::SlashCommand;
use crate::render::style::{Painter, Role};
use crate::render::undo_view as view;
use ybs_agent::Agent;
use ybs_agent::config::Config;
use ybs_agent::session::undo::revert::{UndoError, session_changed_elsewhere, undo_last};

/// Runs `/undo` or `/diff`, the session being saved in `session_file`; the question before
/// undoing over the user's changes is read from stdin.
pub fn run(
    command: &SlashCommand,
    agent: &mut Agent,
    (config, session_file): (&Config, Option<&Path>),
    out: &mut dyn Write,
) {
    let painter = Painter {
        color: crate::render::use_color(config.ui.color, io::stdout().is_terminal()),
    };
    let base = agent.tool_context.working_dir.clone();
    let lines = match command {
        SlashCommand::Diff => view::last_turn_diff(&mut agent.journal, &base, painter),
        _ => {
            let mut ask = |names: &str| view::ask_undo_anyway(names, out);
            undo(agent, (&base, session_file), painter, &mut ask)
        }
    };
    for line in lines {
        let _ = writeln!(out, "{line}");
    }
}

/// `/undo`: undoes the last turn of `agent`; `confirm` is asked before going over changes
/// made since. The session file `session_file` is saved again so that it holds the
/// conversation without the turn. Returns the lines to show.
fn undo(
    agent: &mut Agent,
    (base, session_file): (&Path, Option<&Path>),
    painter: Painter,
    confirm: &mut dyn FnMut(&str) -> bool,
) -> Vec<String> {
    let outcome = match undo_last(&mut agent.journal, &mut agent.conversation, confirm) {
        Ok(outcome) => outcome,
        Err(error @ UndoError::Nothing) => {
            // A resumed session's earlier turns were another run's: the project's journal has them.
            return vec![
                error.to_string(),
                "(turns of earlier runs, a resumed session's too: `ybs undo --list`, `ybs undo`)"
                    .to_owned(),
            ];
        }
        Err(error) => return vec![painter.paint(Role::Failure, &format!("error: {error}"))],
    };
    let mut lines = view::report(&outcome, base);
    if outcome.cleared {
        // Its session is not the one in memory: undo took the turn out of that file.
        lines.push("the turn was in the conversation before /clear".to_owned());
        lines.extend(view::session_lines(&outcome));
        if let Some(warning) = view::session_warning(&outcome) {
            lines.push(painter.paint(Role::Warning, &format!("warning: {warning}")));
        }
    } else {
        let (warning, saved) = match session_file {
            Some(path) => {
                let (warning, saved) = resave(agent, path, outcome.started_session);
                (warning, Some(saved))
            }
            None => (None, None),
        };
        if let Some(warning) = warning {
            lines.push(painter.paint(Role::Warning, &format!("warning: {warning}")));
        }
        lines.push(match (outcome.dropped_messages, &saved) {
            (true, Some(Ok(()))) => {
                "the turn was dropped from the conversation and from its saved session".to_owned()
            }
            (true, _) => "the turn was dropped from the conversation".to_owned(),
            (false, _) => {
                "the turn's messages were compacted and stay in the conversation".to_owned()
            }
        });
        if let Some(Err(error)) = saved {
            lines.push(painter.paint(Role::Failure, &format!("error: {error}")));
        }
    }
    if outcome.ran_shell {
        lines.push(painter.paint(Role::Warning, &format!("warning: {}", view::SHELL_WARNING)));
    }
    lines
}

/// Saves the conversation to the session file `path` after an undo, or removes the file
/// when the undone turn started it and nothing is left. A version changed elsewhere since
/// is kept in a copy first (the returned warning says where).
fn resave(agent: &mut Agent, path: &Path, started: bool) -> (Option<String>, Result<(), String>) {
    let now = std::fs::read(path).ok();
    let warning = (!agent.journal.session_is_ours(path, now.as_deref()))
        .then(|| session_changed_elsewhere(&agent.journal, path));
    let result = if agent.conversation.is_empty() && started {
        match std::fs::remove_file(path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(format!(
                "cannot remove the session {}: {error}",
                path.display()
            )),
            _ => Ok(()),
        }
    } else {
        ybs_agent::session::save(path, &agent.conversation).map_err(|error| error.to_string())
    };
    agent.journal.wrote_session(path);
    (warning, result)
}
