//! The terminal's side of a session without a terminal ([`ybs_agent::headless`]), for the
//! front ends that serve other programs (`acp`, `mcp-server`): opening one with the command
//! line's options, and the process's stdout and stderr set up for a protocol.

use std::io::Write;
use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;
use ybs_agent::config::Config;
use ybs_agent::confirm::ConfirmMode;
use ybs_agent::headless;
use ybs_agent::host::Host;
use ybs_agent::mcp::McpServerSpec;
use ybs_agent::session::undo::TurnRecord;
use ybs_agent::{TurnReport, Ui};
use ybs_core::Message;

use crate::cli::Cli;
use crate::startup::exit::Failed;
use crate::startup::load;
pub use ybs_agent::headless::{Headless, Job, Worker, host_at, saved_session};

/// What a session is opened with.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// The command line `ybs acp`/`ybs mcp-server` ran with (model, provider, config file).
    pub cli: Cli,
    /// The process's surroundings, with the project as the working directory.
    pub host: Host,
    /// How confirmations are settled.
    pub confirm: ConfirmMode,
    /// A saved session to continue (its file).
    pub resume: Option<PathBuf>,
    /// MCP servers the client asked for, besides the configured ones.
    pub mcp: Vec<McpServerSpec>,
    /// The run's name in the undo journal (`acp`, `mcp-server`).
    pub command: &'static str,
}

/// Loads the configuration of the project and builds its agent; warnings go to `log`.
pub fn open(options: OpenOptions, log: &mut dyn Write) -> Result<Headless, String> {
    let OpenOptions {
        cli,
        host,
        confirm,
        resume,
        mcp,
        command,
    } = options;
    let mut loaded = load::load(&cli, &host, log).map_err(|Failed(message)| message)?;
    let chooser = crate::startup::model::Chooser::from_sources(
        *loaded.sources.of("llm.model") != ybs_agent::config::Source::Default,
    );
    if let Some(error) = crate::startup::model::settle(&mut loaded.config, chooser, &host.env) {
        let warning = crate::startup::model::unanswered(&loaded.config, &error);
        let _ = writeln!(
            log,
            "ybs: warning: {}",
            crate::render::inert_lines(&warning)
        );
    }
    let (session, report) = Headless::open(headless::OpenOptions {
        loaded,
        host,
        confirm,
        dry_run: cli.options.dry_run,
        resume,
        mcp,
        command,
        changes: Some(changes),
    })
    .map_err(|error| error.to_string())?;
    load::warn_setup(&report, log);
    Ok(session)
}

/// Runs one turn of `session` ([`Headless::turn`]); a failure in the user's words.
pub fn turn(
    session: &mut Headless,
    message: Message,
    ui: &mut dyn Ui,
    cancel: &CancellationToken,
    log: &mut dyn Write,
) -> Result<TurnReport, String> {
    let result = session.turn(message, ui, cancel, log);
    result.map_err(|error| load::describe(&error, &session.config))
}

/// The files a turn changed, as the terminal says them after a turn.
fn changes(turn: &TurnRecord, base: &Path, config: &Config) -> Vec<String> {
    crate::startup::turn::turn_changes(turn, base, config)
}

/// A writer to stderr for ybs's own lines from any thread. `std::io::stderr()` would wait for
/// the lock the `ybs` binary holds on it for its whole run; this writes to a copy of the file
/// descriptor instead (nowhere if it cannot be copied).
pub fn log() -> Box<dyn Write + Send> {
    use std::os::fd::AsFd;
    match std::io::stderr().as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(std::fs::File::from(fd)),
        Err(_) => Box::new(std::io::sink()),
    }
}

/// A copy of stdout for a protocol; stdout itself then goes to stderr, so that nothing but
/// the protocol reaches the client whatever else prints.
pub fn protocol_stdout() -> std::io::Result<std::fs::File> {
    use std::os::fd::AsFd;
    let stdout = std::io::stdout();
    let mut locked = stdout.lock();
    locked.flush()?;
    let copy = std::fs::File::from(locked.as_fd().try_clone_to_owned()?);
    rustix::stdio::dup2_stdout(std::io::stderr().as_fd())?;
    Ok(copy)
}

/// `cli` with its `--config` file made absolute against where ybs was started, so that it
/// still names the same file in a session whose project is elsewhere.
pub fn cli_at(mut cli: Cli, host: &Host) -> Cli {
    if let Some(config) = cli.options.config.take() {
        cli.options.config = Some(host.locations.cwd.join(config));
    }
    cli
}
