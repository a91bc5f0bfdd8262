//! A ybs session without a terminal, for the front ends that serve other programs (`acp`,
//! `mcp-server`): the agent built for a project directory exactly as the terminal builds it
//! (configuration, instructions, repository map, MCP servers, sandbox), its session file
//! (saved after every turn, as the terminal does), and a thread of its own that runs the
//! turns, since a turn blocks in its tools and answers confirmations synchronously.

mod worker;

use std::io::Write;
use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;
use ybs_core::Message;

use crate::agent::confirm::ConfirmMode;
use crate::agent::{Agent, TurnReport, Ui};
use crate::cli::Cli;
use crate::config::Config;
use crate::mcp::McpServerSpec;
use crate::session;
use crate::startup::exit::Failed;
use crate::startup::host::Host;
use crate::startup::{load, turn};
pub use worker::{Job, Worker};

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

/// One session: the agent, its configuration and where it is saved.
pub struct Headless {
    /// The agent.
    pub agent: Agent,
    /// The effective configuration.
    pub config: Config,
    /// The surroundings, with the project directory.
    pub host: Host,
    /// The session file written after each turn (`None` without a data directory).
    pub session_file: Option<PathBuf>,
    runtime: tokio::runtime::Runtime,
}

impl Headless {
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
        let failed = |Failed(message)| message;
        let loaded = load::load(&cli, &host, log).map_err(failed)?;
        let mut agent = load::build_agent(
            (&loaded.config, &loaded),
            &host,
            (command, confirm),
            cli.options.dry_run,
            log,
        )
        .map_err(failed)?;
        let config = loaded.config;
        if !mcp.is_empty() {
            let failures =
                crate::agent::setup::add_mcp_tools(mcp, &mut agent.registry, &mut agent.policy);
            load::warn_mcp(&failures, log);
        }
        if let Some(path) = &resume {
            // The same path sandbox as the tools and the terminal's `--resume`.
            let access = session::access(agent.tool_context.sandbox.clone());
            agent.conversation = session::load(path, &host.locations.cwd, access)
                .map_err(|error| error.to_string())?;
        }
        let session_file = turn::session_file(&host, resume.as_deref());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| format!("cannot start the async runtime: {error}"))?;
        Ok(Headless {
            agent,
            config,
            host,
            session_file,
            runtime,
        })
    }

    /// The session's id: its file's name without `.chat`.
    pub fn id(&self) -> Option<String> {
        let stem = self.session_file.as_deref()?.file_stem()?;
        Some(stem.to_string_lossy().into_owned())
    }

    /// The project directory.
    pub fn cwd(&self) -> &Path {
        &self.host.locations.cwd
    }

    /// Runs one turn, then does what the terminal does after one: says what changed (to
    /// `log`), saves the session and auto-commits when configured.
    pub fn turn(
        &mut self,
        message: Message,
        ui: &mut dyn Ui,
        cancel: &CancellationToken,
        log: &mut dyn Write,
    ) -> Result<TurnReport, String> {
        let baseline = turn::git_baseline(&self.config, self.cwd(), log);
        let request = message.text_content();
        let result = (self.runtime).block_on(self.agent.turn_message(message, ui, cancel));
        let report = result.map_err(|error| load::describe(&error, &self.config))?;
        turn::after_turn(
            &mut self.agent,
            &report,
            &request,
            &self.config,
            self.session_file.as_deref(),
            baseline.as_ref(),
            log,
        );
        Ok(report)
    }
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

/// `host` with `cwd` as the project directory; `cwd` must be an absolute path of an existing
/// directory.
pub fn host_at(host: &Host, cwd: &Path) -> Result<Host, String> {
    if !cwd.is_absolute() {
        return Err(format!(
            "the working directory `{}` is not an absolute path",
            cwd.display()
        ));
    }
    let resolved = cwd
        .canonicalize()
        .map_err(|error| format!("the working directory `{}`: {error}", cwd.display()))?;
    if !resolved.is_dir() {
        return Err(format!(
            "the working directory `{}` is not a directory",
            cwd.display()
        ));
    }
    let mut host = host.clone();
    host.locations.cwd = resolved;
    Ok(host)
}

/// The file of the saved session `id` of project `host` (its sessions directory); `id` is a
/// file name without `.chat`, nothing that could name another directory.
pub fn saved_session(host: &Host, id: &str) -> Result<PathBuf, String> {
    let plain = !id.is_empty()
        && !id.starts_with('.')
        && (id.chars()).all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !plain {
        return Err(format!("`{id}` is not a ybs session id"));
    }
    let data =
        (host.data_home.as_deref()).ok_or("sessions need HOME or XDG_DATA_HOME to be found")?;
    let path = session::sessions_dir(data, &host.locations.cwd).join(format!("{id}.chat"));
    if !path.is_file() {
        return Err(format!(
            "no saved session `{id}` for {}",
            host.locations.cwd.display()
        ));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::BTreeMap;

    use super::*;
    use crate::config::ConfigLocations;

    fn host(root: &Path) -> Host {
        Host {
            locations: ConfigLocations {
                system_file: root.join("etc/config.json"),
                home: Some(root.join("home")),
                xdg_config_home: None,
                cwd: root.to_path_buf(),
            },
            env: BTreeMap::new(),
            data_home: Some(root.join("data")),
        }
    }

    #[test]
    fn the_project_must_be_an_absolute_existing_directory() {
        let dir = tempfile::tempdir().unwrap();
        let base = host(dir.path());
        assert!(host_at(&base, Path::new("relative")).is_err());
        assert!(host_at(&base, &dir.path().join("missing")).is_err());
        let project = dir.path().join("p");
        std::fs::create_dir(&project).unwrap();
        let moved = host_at(&base, &project).unwrap();
        assert_eq!(moved.locations.cwd, project.canonicalize().unwrap());
    }

    #[test]
    fn a_session_id_names_a_file_of_the_project_only() {
        let dir = tempfile::tempdir().unwrap();
        let base = host(dir.path());
        for bad in ["", "../x", "a/b", ".hidden", "x y"] {
            assert!(saved_session(&base, bad).is_err(), "{bad}");
        }
        let err = saved_session(&base, "session-1").unwrap_err();
        assert!(err.starts_with("no saved session `session-1`"), "{err}");
        let sessions = session::sessions_dir(&dir.path().join("data"), dir.path());
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::write(sessions.join("session-1.chat"), "").unwrap();
        assert_eq!(
            saved_session(&base, "session-1").unwrap(),
            sessions.join("session-1.chat")
        );
    }
}
