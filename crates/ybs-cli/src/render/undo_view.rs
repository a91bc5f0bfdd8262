//! The turn's changes as the user sees them: the one-line summary per file after a turn,
//! `/diff` (the whole diff of the last turn) and `/undo`'s report.

use std::path::Path;

use super::diff_view::{self, shown_path};
use super::style::{Painter, Role};
use ybs_agent::session::undo::revert::{SessionChange, UndoOutcome};
use ybs_agent::session::undo::{FileRecord, Journal, TurnRecord};

fn text(bytes: Option<&Vec<u8>>) -> Option<String> {
    bytes.map(|bytes| String::from_utf8_lossy(bytes).into_owned())
}

fn changed(turn: &TurnRecord) -> impl Iterator<Item = &FileRecord> {
    turn.files.iter().filter(|file| file.before != file.after)
}

/// `+12 -3 src/main.rs`, one line per file the turn changed.
pub fn summary(turn: &TurnRecord, base: &Path, painter: Painter) -> Vec<String> {
    changed(turn)
        .map(|file| {
            let (before, after) = (text(file.before.as_ref()), text(file.after.as_ref()));
            diff_view::summary_line(
                &shown_path(&file.path, base),
                before.as_deref(),
                after.as_deref(),
                painter,
            )
        })
        .collect()
}

/// `/diff`: every change of the last turn, unfolded.
pub fn last_turn_diff(journal: &mut Journal, base: &Path, painter: Painter) -> Vec<String> {
    journal.finish_open_turn();
    let Some(turn) = journal.last() else {
        return vec!["no turn of this session has changed files yet".to_owned()];
    };
    let mut lines = Vec::new();
    for file in changed(turn) {
        let path = shown_path(&file.path, base);
        let (before, after) = (text(file.before.as_ref()), text(file.after.as_ref()));
        match (before, after) {
            (Some(before), Some(after)) => {
                lines.extend(diff_view::diff_lines(&path, &before, &after, painter));
            }
            (None, Some(after)) => {
                lines.push(painter.paint(Role::Bold, &format!("  new file {path}")));
                lines.extend(
                    diff_view::diff_lines(&path, "", &after, painter)
                        .into_iter()
                        .skip(1),
                );
            }
            (Some(before), None) => {
                lines.push(painter.paint(Role::Bold, &format!("  deleted {path}")));
                lines.extend(
                    diff_view::diff_lines(&path, &before, "", painter)
                        .into_iter()
                        .skip(1),
                );
            }
            (None, None) => {}
        }
    }
    if lines.is_empty() {
        lines.push("the last turn changed no files".to_owned());
    }
    if turn.ran_shell {
        lines.push(painter.paint(
            Role::Warning,
            "the turn also ran shell commands; what they changed is not shown",
        ));
    }
    lines
}

/// Said when an undone turn ran shell commands.
pub const SHELL_WARNING: &str = "the turn ran shell commands; what they changed cannot be undone";

/// What an undo did to the files and the commit, one line each.
pub fn report(outcome: &UndoOutcome, base: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    for path in &outcome.restored {
        lines.push(format!("restored {}", shown_path(path, base)));
    }
    for path in &outcome.removed {
        lines.push(format!(
            "removed {} (the turn created it)",
            shown_path(path, base)
        ));
    }
    for (path, why) in &outcome.unrestorable {
        lines.push(format!(
            "cannot restore {}: undo kept no copy of it ({why}); it is left as it is",
            shown_path(path, base)
        ));
    }
    for (path, copy) in &outcome.kept {
        lines.push(format!(
            "your version of {} is kept in {}",
            shown_path(path, base),
            crate::render::inert(&copy.display().to_string())
        ));
    }
    match (&outcome.uncommitted, &outcome.commit_left) {
        (Some(commit), _) if outcome.uncommitted_first => lines.push(format!(
            "dropped the commit {commit}, the repository's first (its branch is unborn again; \
             the commit stays in the reflog)"
        )),
        (Some(commit), _) => lines.push(format!(
            "dropped the commit {commit} (git reset --soft; it stays in the reflog)"
        )),
        (None, Some((commit, why))) => lines.push(format!(
            "the commit {commit} stays ({}); the files are restored in the work tree",
            crate::render::inert(why)
        )),
        (None, None) => {}
    }
    if outcome.restored.is_empty() && outcome.removed.is_empty() {
        lines.push("the turn changed no files".to_owned());
    }
    lines
}

/// What an undo did to the turn's session file, for `ybs undo` (the REPL saves its own).
pub fn session_lines(outcome: &UndoOutcome) -> Vec<String> {
    let mut lines = Vec::new();
    match &outcome.session {
        Some(SessionChange::Restored(path)) => {
            lines.push(format!(
                "took the turn out of the session {}",
                crate::render::inert(&path.display().to_string())
            ));
        }
        Some(SessionChange::Removed(path)) => {
            lines.push(format!(
                "removed the session {} (the turn started it)",
                crate::render::inert(&path.display().to_string())
            ));
        }
        Some(SessionChange::Dropped { path, later, copy }) => {
            let stay = if *later == 1 { "stays" } else { "stay" };
            lines.push(format!(
                "took the turn out of the session {}; the {} saved after it {stay}",
                crate::render::inert(&path.display().to_string()),
                ybs_tools::summary::counted(*later as u64, "turn", "turns")
            ));
            if let Some(copy) = copy {
                lines.push(format!(
                    "the session as it was is kept in {}",
                    crate::render::inert(&copy.display().to_string())
                ));
            }
        }
        Some(SessionChange::Left { .. }) | None => {}
    }
    lines
}

/// Said when undo left the turn's session file alone.
pub fn session_warning(outcome: &UndoOutcome) -> Option<String> {
    match &outcome.session {
        Some(SessionChange::Left { path, reason }) => Some(format!(
            "the session {} was left as it is: {reason}; resuming it still gives the model the \
             undone turn",
            crate::render::inert(&path.display().to_string())
        )),
        _ => None,
    }
}

/// Asks on `out` whether to undo over `names`, changed since the turn, and reads the answer
/// from stdin: yes only for `y` or `yes`.
pub fn ask_undo_anyway(names: &str, out: &mut dyn std::io::Write) -> bool {
    use std::io::BufRead;
    let _ = write!(
        out,
        "{names} changed since that turn. Undo anyway (your version is kept in a copy)? [y/N]: "
    );
    let _ = out.flush();
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}
