//! Before and after a turn: the session file to write (a resumed one, or a new one), the git
//! baseline for `git.auto_commit`, and after the turn what it changed, the save of the
//! session and the commit.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use super::exit::Failed;
use crate::cli::Cli;
use crate::render::use_color;
use ybs_agent::after_turn::AfterTurn;
use ybs_agent::config::Config;
use ybs_agent::host::Host;
use ybs_agent::project::git::Baseline;
use ybs_agent::session;
use ybs_agent::session::undo::TurnRecord;
use ybs_agent::{Agent, TurnReport};

/// After a turn: say what it changed, save the session and auto-commit.
pub fn after_turn(
    agent: &mut Agent,
    report: &TurnReport,
    request: &str,
    config: &Config,
    session_file: Option<&Path>,
    baseline: Option<&Baseline>,
    log: &mut dyn Write,
) {
    for line in changes(agent, config) {
        let _ = writeln!(log, "{line}");
    }
    let notes =
        ybs_agent::after_turn::after_turn(agent, report, request, config, session_file, baseline);
    for note in notes {
        let _ = match note {
            AfterTurn::Warning(warning) => writeln!(
                log,
                "ybs: warning: {}",
                crate::render::inert_lines(&warning)
            ),
            AfterTurn::Committed { id, files } => {
                let short: String = id.chars().take(8).collect();
                let files = ybs_tools::summary::counted(files as u64, "file", "files");
                writeln!(log, "ybs: committed {files} as {short}")
            }
            AfterTurn::StagedBefore => writeln!(
                log,
                "ybs: not committed: the index had staged changes before the turn"
            ),
        };
    }
}

/// `+12 -3 src/main.rs`, one line per file the last turn of `agent` changed.
fn changes(agent: &Agent, config: &Config) -> Vec<String> {
    let Some(turn) = agent.journal.last() else {
        return Vec::new();
    };
    turn_changes(turn, &agent.tool_context.working_dir, config)
}

/// `+12 -3 src/main.rs`, one line per file `turn` changed, paths relative to `base`,
/// coloured when stderr is a terminal that takes colour.
pub fn turn_changes(turn: &TurnRecord, base: &Path, config: &Config) -> Vec<String> {
    let painter = crate::render::style::Painter {
        color: use_color(config.ui.color, io::stderr().is_terminal()),
    };
    crate::render::undo_view::summary(turn, base, painter)
}

/// The work tree state before a turn, when `git.auto_commit` is on.
pub fn git_baseline(config: &Config, cwd: &Path, log: &mut dyn Write) -> Option<Baseline> {
    match ybs_agent::after_turn::git_baseline(config, cwd) {
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

/// The task list the session had, restored with it: the lines to show after
/// [`resumed_line`], none when it had no list.
pub fn restored_todos(agent: &Agent) -> Vec<String> {
    let todos = agent.tool_context.session.todos();
    if todos.is_empty() {
        return Vec::new();
    }
    ybs_agent::todos::lines(&todos)
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
        "resumed {} ({}): {}",
        crate::render::inert_lines(&path.display().to_string()),
        ybs_tools::summary::counted(conversation.len() as u64, "message", "messages"),
        crate::render::inert_lines(&request)
    )
}
