//! `ybs undo`: takes back the newest recorded `exec`, `ask` or REPL turn of the project (found
//! from a subdirectory too), with `/undo`'s guarantees; `--list` shows what is recorded.

use std::io::{self, IsTerminal, Write};
use std::path::Path;

use crate::render::diff_view::shown_path;
use crate::render::undo_view as view;
use crate::startup::exit::Failed;
use ybs_agent::host::Host;
use ybs_agent::session::undo::revert::{UndoError, revert_turn};
use ybs_agent::session::undo::store::{self, StoredTurn};

/// Runs `ybs undo [--yes] [--list]`.
pub fn run(
    host: &Host,
    yes: bool,
    list: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Failed> {
    let data = (host.data_home.as_deref()).ok_or_else(|| {
        Failed("ybs undo needs HOME or XDG_DATA_HOME to find what ybs recorded".into())
    })?;
    let cwd = &host.locations.cwd;
    let root = store::project_root(data, cwd);
    let turns = store::load(&store::project_dir(data, cwd)).map_err(|e| Failed(e.to_string()))?;
    if list {
        if turns.is_empty() {
            let _ = writeln!(out, "no recorded turn to undo for {}", root.display());
        }
        for (number, turn) in turns.iter().rev().enumerate() {
            let _ = writeln!(out, "{}", describe(number + 1, turn, &root));
        }
        return Ok(0);
    }
    let Some(newest) = turns.last() else {
        return Err(Failed(format!(
            "nothing to undo: no recorded exec, ask or REPL turn is left for {} (ybs keeps \
             the last {} runs of a project)",
            root.display(),
            store::KEEP_RUNS
        )));
    };
    let record = newest.record().map_err(|e| Failed(e.to_string()))?;
    let kept = store::kept_dir(newest.dir.parent().unwrap_or(&newest.dir));
    let interactive = io::stdin().is_terminal();
    let _ = writeln!(
        out,
        "undoing {} \"{}\" of {}",
        newest.command(),
        crate::render::inert(&ybs_agent::project::git::summary_line(newest.request())),
        when(newest.ended_ms())
    );
    let mut confirm = |names: &str| {
        if yes {
            return true;
        }
        interactive && view::ask_undo_anyway(names, err)
    };
    let outcome = match revert_turn(&record, Some(&kept), &mut confirm) {
        Ok(outcome) => outcome,
        Err(UndoError::Declined(names)) if !interactive && !yes => {
            return Err(Failed(format!(
                "cannot undo: {names} changed since that turn; nothing was changed. Run `ybs \
                 undo --yes` to undo anyway (your version is then kept in a copy)"
            )));
        }
        Err(error) => return Err(Failed(error.to_string())),
    };
    store::remove_turn(&newest.dir);
    // Paths as the project names them, wherever in it ybs undo runs.
    let lines = view::report(&outcome, &root);
    for line in lines.iter().chain(&view::session_lines(&outcome)) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(warning) = view::session_warning(&outcome) {
        let _ = writeln!(
            err,
            "ybs: warning: {}",
            crate::render::inert_lines(&warning.to_string())
        );
    }
    if outcome.ran_shell {
        let _ = writeln!(err, "ybs: warning: {}", view::SHELL_WARNING);
    }
    let left = turns.len() - 1;
    if left > 0 {
        let _ = writeln!(
            out,
            "{} recorded; `ybs undo` again takes back the one before",
            ybs_tools::summary::counted(left as u64, "earlier turn", "earlier turns")
        );
    }
    Ok(0)
}

/// One line of `--list`: number, time, command, request, files.
fn describe(number: usize, turn: &StoredTurn, cwd: &Path) -> String {
    let files: Vec<String> = turn
        .changed_files()
        .map(|path| shown_path(path, cwd))
        .collect();
    let mut line = format!(
        "{number:>2}  {}  {:4}  \"{}\"  {}",
        when(turn.ended_ms()),
        turn.command(),
        crate::render::inert(&ybs_agent::project::git::summary_line(turn.request())),
        if files.is_empty() {
            "no files".to_owned()
        } else {
            files.join(", ")
        }
    );
    if turn.ran_shell() {
        line.push_str(" (+ shell commands)");
    }
    line
}

/// `2026-11-23 23:40:12 UTC`.
fn when(ms: u64) -> String {
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let (year, month, day) = ybs_agent::prompt::env_block::civil_date(days);
    let time = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        time / 3600,
        time / 60 % 60,
        time % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_shown_in_utc() {
        assert_eq!(when(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(when(1_795_995_612_345), "2026-11-29 23:40:12 UTC");
    }
}
