//! The sessions of one ACP connection: opening (`session/new`, `session/load`), prompting,
//! cancelling and switching modes. Each session runs on its own [`Worker`] thread; the
//! connection side only queues work and keeps each turn's cancellation token.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, McpServer, PromptResponse, SessionId, SessionNotification,
    StopReason,
};
use agent_client_protocol::{Client, Error, ErrorCode};
use tokio_util::sync::CancellationToken;
use ybs_core::Message;

use super::ui::AcpUi;
use super::{content, modes, servers};
use crate::agent::Stop;
use crate::agent::confirm::ConfirmMode;
use crate::cli::Cli;
use crate::startup::headless::{self, Headless, OpenOptions, Worker};
use crate::startup::host::Host;

/// A session being served.
struct Live {
    worker: Worker,
    /// The running (or last) turn's token.
    cancel: CancellationToken,
}

/// Everything the connection's handlers share.
pub struct Sessions {
    cli: Cli,
    host: Host,
    client: Mutex<ClientCapabilities>,
    live: Mutex<HashMap<String, Live>>,
    /// Numbers the sessions that cannot be saved (no data directory).
    unsaved: Mutex<u64>,
}

/// What opening a session gave: its id and the modes.
pub struct Opened {
    /// The session id.
    pub id: String,
    /// The project directory.
    pub cwd: PathBuf,
}

/// A failure answered to the client: invalid parameters or an internal error.
pub fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message.into())
}

fn internal(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, message.into())
}

impl Sessions {
    /// No sessions yet; they are built with `cli`'s options in `host`'s surroundings.
    pub fn new(cli: Cli, host: Host) -> Arc<Sessions> {
        Arc::new(Sessions {
            cli: headless::cli_at(cli, &host),
            host,
            client: Mutex::new(ClientCapabilities::default()),
            live: Mutex::new(HashMap::new()),
            unsaved: Mutex::new(0),
        })
    }

    /// Keeps what the client said it can do (`initialize`).
    pub fn set_client(&self, capabilities: ClientCapabilities) {
        *lock(&self.client) = capabilities;
    }

    fn notices(&self) -> bool {
        (lock(&self.client).session.as_ref()).is_some_and(|session| session.notices.is_some())
    }

    /// Opens a session in `cwd` (a saved one when `resume` names it) with the client's MCP
    /// servers; the session starts in ask mode.
    pub async fn open(
        self: &Arc<Self>,
        cwd: &std::path::Path,
        resume: Option<&str>,
        mcp: &[McpServer],
    ) -> Result<(Opened, Vec<Message>), Error> {
        let host = headless::host_at(&self.host, cwd).map_err(invalid)?;
        let resume = match resume {
            Some(id) => Some(headless::saved_session(&host, id).map_err(invalid)?),
            None => None,
        };
        let (mcp, skipped) = servers::specs(mcp, &host.locations.cwd);
        for name in skipped {
            let _ = writeln!(
                headless::log(),
                "ybs: warning: MCP server `{name}` uses SSE, which ybs does not speak; going on \
                 without it"
            );
        }
        let project = host.locations.cwd.clone();
        let options = OpenOptions {
            cli: self.cli.clone(),
            host,
            confirm: ConfirmMode::Ask,
            resume,
            mcp,
            command: "acp",
        };
        let (conversation_tx, conversation_rx) = futures::channel::oneshot::channel();
        let (worker, id) = Worker::start(move || {
            let session = Headless::open(options, &mut headless::log())?;
            let _ = conversation_tx.send(session.agent.conversation.clone());
            Ok(session)
        })
        .await
        .map_err(internal)?;
        let conversation = conversation_rx.await.unwrap_or_default();
        let id = match id {
            Some(id) => id,
            None => {
                let mut count = lock(&self.unsaved);
                *count += 1;
                format!("unsaved-{}-{count}", std::process::id())
            }
        };
        let live = Live {
            worker,
            cancel: CancellationToken::new(),
        };
        lock(&self.live).insert(id.clone(), live);
        Ok((Opened { id, cwd: project }, conversation))
    }

    /// Runs a prompt on session `id`; the answer goes to `respond` when the turn ends.
    pub fn prompt(
        &self,
        id: &SessionId,
        message: Message,
        connection: ConnectionTo<Client>,
        respond: impl FnOnce(Result<PromptResponse, Error>) + Send + 'static,
    ) -> Result<(), Error> {
        let token = CancellationToken::new();
        let worker = {
            let mut live = lock(&self.live);
            let session = (live.get_mut(&*id.0))
                .ok_or_else(|| invalid(format!("no session `{id}` on this connection")))?;
            session.cancel = token.clone();
            session.worker.clone()
        };
        let notices = self.notices();
        let session_id = id.clone();
        worker
            .send(Box::new(move |session: &mut Headless| {
                let mut ui = AcpUi::new(
                    connection,
                    session_id,
                    session.cwd().to_owned(),
                    notices,
                    headless::log(),
                );
                let result = session.turn(message, &mut ui, &token, &mut headless::log());
                match result {
                    Ok(report) => respond(Ok(PromptResponse::new(stop_reason(report.stop)))),
                    Err(message) => respond(Err(internal(message))),
                }
            }))
            .map_err(internal)
    }

    /// Cancels the running turn of session `id`, if any.
    pub fn cancel(&self, id: &SessionId) {
        if let Some(session) = lock(&self.live).get(&*id.0) {
            session.cancel.cancel();
        }
    }

    /// Sets how session `id` settles calls that need approval, from its next call on.
    pub fn set_mode(&self, id: &SessionId, mode: &str) -> Result<(), Error> {
        let mode =
            modes::parse(mode).ok_or_else(|| invalid(format!("ybs has no mode `{mode}`")))?;
        let worker = (lock(&self.live).get(&*id.0))
            .map(|session| session.worker.clone())
            .ok_or_else(|| invalid(format!("no session `{id}` on this connection")))?;
        worker
            .send(Box::new(move |session: &mut Headless| {
                session.agent.settings.confirm = mode;
            }))
            .map_err(internal)
    }
}

/// Sends `conversation` as the updates that show it again.
pub fn replay(
    connection: &ConnectionTo<Client>,
    id: &SessionId,
    conversation: &[Message],
    cwd: &std::path::Path,
) -> Result<(), Error> {
    for update in content::replay(conversation, cwd) {
        connection.send_notification(SessionNotification::new(id.clone(), update))?;
    }
    Ok(())
}

/// Why the turn ended, in ACP's words.
fn stop_reason(stop: Stop) -> StopReason {
    match stop {
        Stop::Finished | Stop::Stuck => StopReason::EndTurn,
        Stop::MaxIterations => StopReason::MaxTurnRequests,
        Stop::Cancelled => StopReason::Cancelled,
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
