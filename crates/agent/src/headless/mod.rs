//! A ybs session without a terminal, for the programs that drive the agent (the `acp` and
//! `mcp-server` front ends, or a library user): the agent built for a project directory
//! exactly as the terminal builds it (configuration, instructions, repository map, MCP
//! servers, sandbox), its session file (saved after every turn, as the terminal does), and a
//! thread of its own that runs the turns ([`Worker`]), since a turn blocks in its tools and
//! answers confirmations synchronously.

mod worker;

use std::io::Write;
use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;
use ybs_core::Message;

use crate::after_turn::{self, AfterTurn};
use crate::config::{Config, LoadedConfig};
use crate::confirm::ConfirmMode;
use crate::host::Host;
use crate::mcp::McpServerSpec;
use crate::session::undo::TurnRecord;
use crate::setup::SetupError;
use crate::{Agent, AgentBuilder, AgentError, SetupReport, TurnReport, Ui, session};
pub use worker::{Job, Worker, WorkerError};

/// How the front end words the files a turn changed (`+12 -3 src/main.rs`), given the
/// turn, the directory paths are shown relative to, and the configuration.
pub type ChangeSummary = fn(&TurnRecord, &Path, &Config) -> Vec<String>;

/// What a session is opened with.
pub struct OpenOptions {
    /// The project's configuration, loaded for `host`.
    pub loaded: LoadedConfig,
    /// The process's surroundings, with the project as the working directory.
    pub host: Host,
    /// How confirmations are settled.
    pub confirm: ConfirmMode,
    /// Show tool calls, execute none.
    pub dry_run: bool,
    /// A saved session to continue (its file).
    pub resume: Option<PathBuf>,
    /// MCP servers the client asked for, besides the configured ones.
    pub mcp: Vec<McpServerSpec>,
    /// The run's name in the undo journal (`acp`, `mcp-server`).
    pub command: &'static str,
    /// How the files a turn changed are said in the log (`None`: not said).
    pub changes: Option<ChangeSummary>,
}

/// Why a session could not be opened or found.
#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    /// The agent could not be built.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The session to continue could not be read.
    #[error(transparent)]
    Resume(#[from] session::SessionError),
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The project directory is unusable.
    #[error("the working directory `{}`{why}", path.display())]
    Project {
        /// The directory as given.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The id names no file of the project's sessions.
    #[error("`{0}` is not a ybs session id")]
    BadId(String),
    /// Sessions cannot be found without a data directory.
    #[error("sessions need HOME or XDG_DATA_HOME to be found")]
    NoDataHome,
    /// No saved session has that id.
    #[error("no saved session `{id}` for {}", project.display())]
    NoSession {
        /// The id asked for.
        id: String,
        /// The project.
        project: PathBuf,
    },
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
    changes: Option<ChangeSummary>,
    runtime: tokio::runtime::Runtime,
}

impl Headless {
    /// Builds the agent of the project, with what building it had to report.
    pub fn open(options: OpenOptions) -> Result<(Headless, SetupReport), HeadlessError> {
        let OpenOptions {
            loaded,
            host,
            confirm,
            dry_run,
            resume,
            mcp,
            command,
            changes,
        } = options;
        let (mut agent, report) =
            AgentBuilder::loaded(&loaded, &host.locations, host.surroundings())
                .confirm(confirm)
                .dry_run(dry_run)
                .session(&host.locations, host.data_home.clone(), command)
                .mcp(mcp)
                .build()?;
        if let Some(path) = &resume {
            // The same path sandbox as the tools and the terminal's `--resume`.
            let access = session::access(agent.tool_context.sandbox.clone());
            agent.conversation = session::load(path, &host.locations.cwd, access)?;
        }
        let session_file = host.session_file(resume.as_deref());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(HeadlessError::Runtime)?;
        let headless = Headless {
            agent,
            config: loaded.config,
            host,
            session_file,
            changes,
            runtime,
        };
        Ok((headless, report))
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
    ) -> Result<TurnReport, AgentError> {
        let baseline = match after_turn::git_baseline(&self.config, self.cwd()) {
            Ok(baseline) => baseline,
            Err(error) => {
                warn(log, &error.to_string());
                None
            }
        };
        let request = message.text_content();
        let result = (self.runtime).block_on(self.agent.turn_message(message, ui, cancel));
        let report = result?;
        if let (Some(changes), Some(turn)) = (self.changes, self.agent.journal.last()) {
            for line in changes(turn, &self.agent.tool_context.working_dir, &self.config) {
                let _ = writeln!(log, "{line}");
            }
        }
        let notes = after_turn::after_turn(
            &mut self.agent,
            &report,
            &request,
            &self.config,
            self.session_file.as_deref(),
            baseline.as_ref(),
        );
        for note in notes {
            match note {
                AfterTurn::Warning(warning) => warn(log, &warning),
                AfterTurn::Committed { id, files } => {
                    let short: String = id.chars().take(8).collect();
                    let files = ybs_tools::summary::counted(files as u64, "file", "files");
                    let _ = writeln!(log, "ybs: committed {files} as {short}");
                }
                AfterTurn::StagedBefore => {
                    let _ = writeln!(
                        log,
                        "ybs: not committed: the index had staged changes before the turn"
                    );
                }
            }
        }
        Ok(report)
    }
}

/// A warning line in the log, its text made inert.
fn warn(log: &mut dyn Write, text: &str) {
    let _ = writeln!(log, "ybs: warning: {}", crate::inert::inert_lines(text));
}

/// `host` with `cwd` as the project directory; `cwd` must be an absolute path of an existing
/// directory.
pub fn host_at(host: &Host, cwd: &Path) -> Result<Host, HeadlessError> {
    let bad = |why: String| HeadlessError::Project {
        path: cwd.to_owned(),
        why,
    };
    if !cwd.is_absolute() {
        return Err(bad(" is not an absolute path".into()));
    }
    let resolved = cwd
        .canonicalize()
        .map_err(|error| bad(format!(": {error}")))?;
    if !resolved.is_dir() {
        return Err(bad(" is not a directory".into()));
    }
    let mut host = host.clone();
    host.locations.cwd = resolved;
    Ok(host)
}

/// The file of the saved session `id` of project `host` (its sessions directory); `id` is a
/// file name without `.chat`, nothing that could name another directory.
pub fn saved_session(host: &Host, id: &str) -> Result<PathBuf, HeadlessError> {
    let plain = !id.is_empty()
        && !id.starts_with('.')
        && (id.chars()).all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !plain {
        return Err(HeadlessError::BadId(id.to_owned()));
    }
    let data = (host.data_home.as_deref()).ok_or(HeadlessError::NoDataHome)?;
    let path = session::sessions_dir(data, &host.locations.cwd).join(format!("{id}.chat"));
    if !path.is_file() {
        return Err(HeadlessError::NoSession {
            id: id.to_owned(),
            project: host.locations.cwd.clone(),
        });
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
        let err = saved_session(&base, "session-1").unwrap_err().to_string();
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
