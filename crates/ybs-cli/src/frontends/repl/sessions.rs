//! The REPL's session commands: `/resume` lists this project's saved sessions and continues
//! the one picked, `/fork` goes on in a new session that starts as a copy of this one.

use std::io::Write;
use std::path::PathBuf;

use crate::render::inert;
use ybs_agent::Agent;
use ybs_agent::host::Host;
use ybs_agent::session;

/// Where the REPL keeps its conversation.
pub struct Current<'a> {
    /// The agent whose conversation is replaced.
    pub agent: &'a mut Agent,
    /// The session file the next turn is saved in.
    pub file: &'a mut Option<PathBuf>,
}

/// `/resume [N]`: without `N`, lists the sessions and asks for a number with `ask`; then
/// loads the session picked. Errors are messages for the user.
pub fn resume(
    host: &Host,
    current: Current<'_>,
    number: Option<usize>,
    ask: &mut dyn FnMut(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<(), String> {
    let data =
        (host.data_home.as_ref()).ok_or("/resume needs HOME or XDG_DATA_HOME to find sessions")?;
    let cwd = &host.locations.cwd;
    let dir = session::sessions_dir(data, cwd);
    // The session being written is not one to pick.
    let found: Vec<_> = session::list::sessions(&dir)
        .into_iter()
        .filter(|info| Some(&info.path) != current.file.as_ref())
        .collect();
    if found.is_empty() {
        return Err(format!(
            "no other saved session for {} (sessions are kept in {})",
            inert(&cwd.display().to_string()),
            inert(&dir.display().to_string())
        ));
    }
    let number = match number {
        Some(number) => number,
        None => {
            for line in session::list::lines(&found) {
                let _ = writeln!(out, "{}", inert(&line));
            }
            let answer = ask("resume which (number, Enter: none)? ").unwrap_or_default();
            if answer.trim().is_empty() {
                return Ok(());
            }
            answer
                .trim()
                .parse::<usize>()
                .map_err(|_| format!("`{}` is not a number from the list", answer.trim()))?
        }
    };
    let picked = (number.checked_sub(1))
        .and_then(|index| found.get(index))
        .ok_or_else(|| format!("there is no session {number}"))?;
    // The same path sandbox as the tools and `--resume`.
    let access = session::access(current.agent.tool_context.sandbox.clone());
    let conversation =
        session::load(&picked.path, cwd, access).map_err(|error| error.to_string())?;
    current.agent.clear();
    current.agent.conversation = conversation;
    current.agent.restore_todos();
    *current.file = Some(picked.path.clone());
    let _ = writeln!(
        out,
        "{}",
        crate::startup::turn::resumed_line(&picked.path, &current.agent.conversation)
    );
    for line in crate::startup::turn::restored_todos(current.agent) {
        let _ = writeln!(out, "{line}");
    }
    Ok(())
}

/// `/fork`: the conversation so far saved in a new session file, which later turns go to;
/// the session it came from stays as it is.
pub fn fork(host: &Host, current: Current<'_>, out: &mut dyn Write) -> Result<(), String> {
    let data =
        (host.data_home.as_ref()).ok_or("/fork needs HOME or XDG_DATA_HOME to keep sessions")?;
    let dir = session::sessions_dir(data, &host.locations.cwd);
    let path = session::new_session_path(&dir);
    session::save(&path, &current.agent.conversation).map_err(|error| error.to_string())?;
    // What the next turn's save finds there is ours.
    current.agent.journal.wrote_session(&path);
    let from = current
        .file
        .replace(path.clone())
        .filter(|from| from.exists());
    let from = from.map_or_else(
        || "this session".to_owned(),
        |from| inert(&from.display().to_string()).into_owned(),
    );
    let _ = writeln!(
        out,
        "forked {from} into {} ({}); later turns are saved there",
        inert(&path.display().to_string()),
        ybs_tools::summary::counted(
            current.agent.conversation.len() as u64,
            "message",
            "messages"
        )
    );
    Ok(())
}
