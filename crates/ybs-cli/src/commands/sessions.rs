//! `ybs sessions`: this project's saved sessions, newest first, with when each was saved, its
//! size and its first request.

use std::io::{self, Write};

use crate::render::inert;
use ybs_agent::host::Host;
use ybs_agent::session;

/// Prints the list; says where it looked when there is none.
pub fn run(host: &Host, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<u8> {
    let Some(data) = &host.data_home else {
        writeln!(
            err,
            "ybs: error: sessions are kept under XDG_DATA_HOME or HOME, and neither is set"
        )?;
        return Ok(1);
    };
    let cwd = &host.locations.cwd;
    let dir = session::sessions_dir(data, cwd);
    let found = session::list::sessions(&dir);
    if found.is_empty() {
        writeln!(
            err,
            "no saved session for {} (sessions are kept in {})",
            inert(&cwd.display().to_string()),
            inert(&dir.display().to_string())
        )?;
        return Ok(0);
    }
    for (line, info) in session::list::lines(&found).iter().zip(&found) {
        writeln!(out, "{}", inert(line))?;
        writeln!(out, "     {}", inert(&info.path.display().to_string()))?;
    }
    writeln!(
        out,
        "`ybs --continue` goes on with the newest, `ybs --resume=FILE` with another"
    )?;
    Ok(0)
}
